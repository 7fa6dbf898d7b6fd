"""Cost of the queue disciplines: a 4-flow CUBIC dumbbell (10 Mb/s bottleneck, 1000 KB buffer,
20 s) with drop-tail, CoDel, FQ-CoDel, PIE, RED and step marking at the bottleneck.

    python bench/bench_aqm.py [--repeat N]

Best of N in-process runs, CPU time. Reports CPU seconds, events, packets transmitted at the
bottleneck and the CPU time per bottleneck packet relative to drop-tail (the issue's target:
CoDel and FQ-CoDel within 1.3x drop-tail). A benchmark: it reports figures and asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from netsim import load_topology, simulate  # noqa: E402
from networks import dumbbell  # noqa: E402

QUEUES = {
    "droptail": None,
    "codel": {"discipline": "codel"},
    "fq_codel": {"discipline": "fq_codel"},
    "pie": {"discipline": "pie"},
    "red": {"discipline": "red", "min_kb": 30, "max_kb": 90},
    "step": {"discipline": "step", "k_kb": 30},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'queue':10} {'cpu s':>7} {'events':>9} {'LB pkts':>8} {'us/pkt':>7} {'vs droptail':>11}")
    base = None
    for name, queue in QUEUES.items():
        spec = load_topology(dumbbell(4, algorithm="cubic", duration_s=20,
                                      start_s=[0, 0.1, 0.2, 0.3], access_jitter_ms=1.0,
                                      bottleneck_extra={"queue": queue} if queue else None))
        best, results = float("inf"), None
        for _ in range(args.repeat):
            start = time.process_time()
            results = simulate(spec)
            best = min(best, time.process_time() - start)
        pkts = results.summary["links"]["L"]["directions"]["R1->R2"]["packets_transmitted"]
        per = best / pkts * 1e6
        base = base or per
        print(f"{name:10} {best:7.3f} {results.summary['events']:9d} {pkts:8d} {per:7.2f} "
              f"{per / base:10.2f}x")


if __name__ == "__main__":
    main()
