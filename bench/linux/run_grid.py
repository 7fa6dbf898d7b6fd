"""Run the real-Linux reference grid on the testbed (bench/linux/testbed.py) and record each run.

    sudo python bench/linux/run_grid.py --out /tmp/linux-runs.jsonl [--reps 3] [--only NAME...]
    sudo python bench/linux/run_grid.py --selfcheck --out /tmp/linux-selfcheck.json

Every run appends one JSON line (the case's configuration, the repetition, the reduced figures of
bench/linux/reduce.py, and the raw iperf3 summary/nstat counters) to ``--out``; runs already in
the file are skipped, so an interrupted grid resumes where it stopped.  Repetitions are the
outer loop, so slow changes of the machine's load spread over all cases.  Then
``python bench/linux/reduce.py /tmp/linux-runs.jsonl --selfcheck /tmp/linux-selfcheck.json``
writes tests/data/linux/reference.json.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reduce import reduce_run
from testbed import Case, Testbed, available_algorithms, cleanup_stale, kernel_info

log = logging.getLogger("bench.linux.run_grid")

RTTS_MS = (20, 50)
BUFFERS_BDP = (0.5, 1, 4)
LOSSES = (0.0, 0.01)
SINGLE_ALGORITHMS = ("reno", "cubic", "bbr")
PAIRS = (  # (algorithms, rtt_ms, buffer_bdp)
    (("cubic", "bbr"), 50, 4),
    (("cubic", "bbr"), 20, 1),
    (("reno", "cubic"), 20, 4),
)
DURATION_S = 20.0
# A run in which the delay line forwarded a frame more than this late is a fault of the testbed
# (the shared machine stalled it), not of Linux TCP: it is not recorded and is run again.
MAX_LATENESS_US = 20000
# Cases off the grid (RTT, buffer and loss rate not in it), recorded separately
# (tests/data/linux/heldout.json) to check the Linux stack on configurations it was not tuned on.
HELDOUT = (  # (algorithms, rtt_ms, buffer_bdp, loss)
    (("reno",), 35, 2, 0.005),
    (("cubic",), 35, 2, 0.005),
    (("bbr",), 35, 2, 0.005),
    (("cubic", "bbr"), 35, 2, 0.0),
)


def grid() -> list[Case]:
    """The reference cases: single flows over RTT x buffer x loss x algorithm, then pairs."""
    cases = []
    for rtt in RTTS_MS:
        for buf in BUFFERS_BDP:
            for loss in LOSSES:
                for alg in SINGLE_ALGORITHMS:
                    name = f"{alg}_rtt{rtt}_buf{buf:g}_loss{loss * 100:g}"
                    cases.append(Case(name, [alg], rtt, 10.0, buf, loss, DURATION_S))
    for algs, rtt, buf in PAIRS:
        name = f"{algs[0]}_vs_{algs[1]}_rtt{rtt}_buf{buf:g}"
        cases.append(Case(name, list(algs), rtt, 10.0, buf, 0.0, DURATION_S))
    return cases


def heldout() -> list[Case]:
    """The held-out cases (HELDOUT)."""
    cases = []
    for algs, rtt, buf, loss in HELDOUT:
        name = "_vs_".join(algs) + f"_rtt{rtt}_buf{buf:g}_loss{loss * 100:g}"
        cases.append(Case(name, list(algs), rtt, 10.0, buf, loss, DURATION_S))
    return cases


def selfcheck(out: Path, reps: int) -> None:
    """The testbed against itself: ping RTT vs configured, UDP rate vs the tbf rate."""
    result: dict[str, object] = {"kernel": kernel_info(), "checks": []}
    for rtt in RTTS_MS:
        for rep in range(reps):
            case = Case(f"selfcheck_rtt{rtt}", ["cubic"], rtt, 10.0, 4, 0.0, 15.0)
            with Testbed(case) as tb:
                pings = tb.ping(30, 0.1)
                udp = tb.udp_rate(20.0, 10.0)
            row = {"rtt_ms": rtt, "rep": rep, "ping_ms_min": min(pings),
                   "ping_ms_median": statistics.median(pings), "ping_ms_max": max(pings),
                   **udp, "delayline": tb.delayline_report}
            log.info("selfcheck %s", row)
            result["checks"].append(row)  # type: ignore[union-attr]
    out.write_text(json.dumps(result, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/linux-runs.jsonl"),
                    help="JSON-lines file of runs (appended)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", nargs="*", help="case names to run (default: the whole grid)")
    ap.add_argument("--selfcheck", action="store_true", help="ping and UDP checks only")
    ap.add_argument("--list", action="store_true", help="print the grid and exit")
    ap.add_argument("--heldout", action="store_true",
                    help="run the held-out cases (HELDOUT) instead of the grid")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    cases = heldout() if args.heldout else grid()
    if args.only:
        cases = [c for c in cases if c.name in set(args.only)]
    if args.list:
        for c in cases:
            print(c.name, c.config())
        return 0
    gone = cleanup_stale()
    if gone:
        log.info("removed stale namespaces %s", gone)
    if args.selfcheck:
        selfcheck(args.out, args.reps)
        return 0
    have = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            r = json.loads(line)
            have.add((r["case"], r["rep"]))
    algs = set(available_algorithms())
    kernel = kernel_info()
    for rep in range(args.reps):
        for case in cases:
            if (case.name, rep) in have:
                continue
            if not set(case.algorithms) <= algs:
                log.warning("%s: kernel lacks %s", case.name, set(case.algorithms) - algs)
                continue
            t0 = time.monotonic()
            try:
                with Testbed(case) as tb:
                    pings = tb.ping(5, 0.1)
                    raw = tb.transfer()
            except (RuntimeError, subprocess.SubprocessError, ValueError, OSError) as exc:
                log.error("%s rep %d failed, left for the next pass: %s", case.name, rep, exc)
                continue
            late = re.search(r"late_max_us (\d+)", tb.delayline_report)
            if late and int(late.group(1)) > MAX_LATENESS_US:
                log.error("%s rep %d: the delay line stalled %s us (machine load); left for the "
                          "next pass", case.name, rep, late.group(1))
                continue
            figures = reduce_run(case.config(), raw)
            row = {"case": case.name, "rep": rep, "config": case.config(),
                   "kernel": kernel["release"], "ping_ms": pings,
                   "delayline": tb.delayline_report, "figures": figures,
                   "iperf3_end": [o["end"].get("sum_received", {}) for o in raw["iperf3"]],
                   "nstat": raw["nstat"]}
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            log.info("%s rep %d (%.0f s): %s", case.name, rep, time.monotonic() - t0,
                     json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
