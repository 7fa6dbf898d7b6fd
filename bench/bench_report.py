#!/usr/bin/env python3
"""Size and draw time of report.html for a long, large run (docs/report.md).

    python bench/bench_report.py [--pairs 50] [--duration 300] [--repeat 3] [--keep DIR]

Runs a dumbbell of N sender/receiver pairs (bulk Reno flows, one starting every 2 s, 10 Mb/s
bottleneck) for the given simulated time at the default 0.1 s sampling, then measures:

* the time to write report.html (`make_report`, in this process) and its size;
* the time headless Chromium takes to draw it, opened from disk with no network: from the
  navigation to the page's "ready" flag (plotly.js and the data inflated, the topology and the
  time series drawn), the median of --repeat loads; and the time of one slider step.

A measurement, not a test: it reports figures and never fails because something is slow
(needs chromium, chromium-driver, selenium and plotly: the test extra).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))


def dumbbell(pairs: int, duration: float) -> dict:
    """bench_scale's dumbbell with endless flows, one starting every 2 s, for `duration` s."""
    from bench_scale import dumbbell as base
    data = base(pairs)
    for i, flow in enumerate(data["flows"]):
        flow["data_mb"] = None
        flow["start_s"] = min(2.0 * i, duration / 2)
    data["duration_s"] = duration
    return data


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=50)
    parser.add_argument("--duration", type=float, default=300.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", metavar="DIR", help="run into DIR (reused when it holds a run)")
    args = parser.parse_args(argv)

    from netsim.cli import main as cli
    from plot_tool.report import make_report
    from test_report_browser import browser, open_report

    tmp = tempfile.TemporaryDirectory()
    out = Path(args.keep) if args.keep else Path(tmp.name) / "run"
    if not (out / "summary.json").is_file():
        topology = Path(tmp.name) / "dumbbell.json"
        topology.write_text(json.dumps(dumbbell(args.pairs, args.duration)))
        start = time.perf_counter()
        assert cli([str(topology), "--out", str(out), "--no-plots", "--quiet"]) == 0
        print(f"simulated {args.duration:g} s, {args.pairs} flows: {time.perf_counter() - start:.1f} s")
    summary = json.loads((out / "summary.json").read_text())
    csv_mb = sum((out / f).stat().st_size for f in ("links.csv", "flows.csv", "hosts.csv")) / 1e6
    print(f"results: {len(summary['links'])} links, {len(summary['flows'])} flows, "
          f"{summary['end_time_s']:.0f} s at {summary['interval_s']} s, CSV {csv_mb:.1f} MB")

    start = time.perf_counter()
    path = make_report(out)
    written = time.perf_counter() - start
    size = path.stat().st_size
    print(f"report.html: {size / 1e6:.2f} MB, written in {written:.2f} s")

    driver = browser()
    try:
        loads = [open_report(driver, path) for _ in range(max(1, args.repeat))]
        step = driver.execute_script("""const t0 = performance.now();
            netsimReport.setFrame(Math.floor(netsimReport.data.frame_t.length / 2));
            return performance.now() - t0;""")
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        driver.quit()
    print(f"draw in headless Chromium: median {statistics.median(loads):.2f} s "
          f"(loads: {', '.join(f'{t:.2f}' for t in loads)}); slider step {step:.0f} ms; "
          f"console errors: {len(errors)}")
    print(json.dumps({"size_bytes": size, "write_s": round(written, 3),
                      "draw_s": round(statistics.median(loads), 3), "step_ms": round(step, 1),
                      "console_errors": len(errors)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
