"""Wall time of every congestion-control algorithm on the CS/EE 143 test cases, relative to Reno.

    python bench/bench_algorithms.py [--repeat N]

Each figure is the best of N in-process runs (CPU time of this process, so another program on
the machine disturbs it less than wall time would). Statistics are on, as in a normal run. Issue
target: a paced BBR flow over test case 0's link within 1.5x the time of a Reno flow. This is a
benchmark: it reports figures and asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flows import ALGORITHMS  # noqa: E402
from netsim import load_topology, simulate  # noqa: E402


def best_cpu_s(spec, repeat: int):
    best, results = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        results = simulate(spec)
        best = min(best, time.process_time() - start)
    return best, results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'topology':<14}{'algorithm':<10}{'cpu s':>8}{'vs reno':>9}{'events':>10}{'sim end s':>11}")
    for name in ("test_case_0", "test_case_2"):
        path = ROOT / "topologies" / f"{name}.json"
        times = {}
        for algorithm in ["reno"] + [a for a in ALGORITHMS if a != "reno"]:
            seconds, results = best_cpu_s(load_topology(path, algorithm=algorithm), args.repeat)
            times[algorithm] = seconds
            ratio = seconds / times["reno"]
            print(f"{name:<14}{algorithm:<10}{seconds:>8.3f}{ratio:>9.2f}"
                  f"{results.summary['events']:>10}{results.summary['end_time_s']:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
