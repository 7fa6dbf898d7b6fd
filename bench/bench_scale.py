#!/usr/bin/env python3
"""Whole-command cost at scale: CPU time and peak memory of `initializer.py` runs (bench/README.md).

    python bench/bench_scale.py [--pairs 256] [--repeat 1] [--json FILE] [--skip-slow]

Each case runs the real command line in a child process (`os.wait4` gives its CPU time and
peak RSS), so imports, the simulation, writing results and drawing figures are all counted:

* test cases 0 and 2, with and without figures;
* a dumbbell of N sender/receiver pairs (default 256; 32 MB in all, Reno, 10 Mb/s bottleneck)
  sampled every 0.1 s (the default) and every 10 s: statistics must cost about the same;
* one 1 MB flow that starts at t = 1e6 s: nothing happens for a million simulated seconds.

A measurement, not a test: it reports figures and never fails because something is slow.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = str(ROOT / "initializer.py")
DUMBBELL_TOTAL_MB = 32.0


def dumbbell(pairs: int) -> dict:
    """N pairs S_i -> T_i over one 10 Mb/s, 20 ms bottleneck R1-R2 (like topologies/dumbbell.json)."""
    hosts = [f"S{i}" for i in range(1, pairs + 1)] + [f"T{i}" for i in range(1, pairs + 1)]
    links = [{"id": "LB", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 20, "buffer_kb": 55}]
    links += [{"id": f"LS{i}", "ends": [f"S{i}", "R1"], "rate_mbps": 100, "delay_ms": 1,
               "buffer_kb": 200} for i in range(1, pairs + 1)]
    links += [{"id": f"LT{i}", "ends": ["R2", f"T{i}"], "rate_mbps": 100, "delay_ms": 1,
               "buffer_kb": 200} for i in range(1, pairs + 1)]
    flows = [{"id": f"F{i}", "src": f"S{i}", "dst": f"T{i}", "data_mb": DUMBBELL_TOTAL_MB / pairs,
              "start_s": 0, "algorithm": "reno"} for i in range(1, pairs + 1)]
    return {"name": f"dumbbell_{pairs}", "units": "si", "packet_bytes": {"data": 1500, "ack": 40},
            "routing": {"protocol": "static"}, "hosts": hosts, "routers": ["R1", "R2"],
            "links": links, "flows": flows}


def far_future() -> dict:
    return {"name": "far_future", "hosts": ["H1", "H2"],
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 10,
                       "buffer_kb": 64}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1, "start_s": 1e6}]}


def run_child(args: list, timeout_s: float) -> dict:
    """Run the CLI with `args`; its CPU seconds (user + system), peak RSS and exit status."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, CLI] + args, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=ROOT)
    deadline = start + timeout_s
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    stderr = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024.0,
            "wall_s": time.perf_counter() - start, "exit": os.waitstatus_to_exitcode(status),
            "stderr": stderr.splitlines()[-1] if stderr else ""}


def cases(tmp: Path, pairs: int, skip_slow: bool) -> list:
    db = tmp / f"dumbbell_{pairs}.json"
    db.write_text(json.dumps(dumbbell(pairs)))
    future = tmp / "far_future.json"
    future.write_text(json.dumps(far_future()))
    tc0, tc2 = "topologies/test_case_0.json", "topologies/test_case_2.json"
    out = [
        ("test_case_0 figures", [tc0]),
        ("test_case_0 no figures", [tc0, "--no-plots"]),
        ("test_case_2 figures", [tc2, "-l", "L1", "L3"]),
        ("test_case_2 no figures", [tc2, "-l", "L1", "L3", "--no-plots"]),
        (f"dumbbell {pairs} pairs, 0.1 s", [str(db), "--no-plots"]),
        (f"dumbbell {pairs} pairs, 10 s", [str(db), "--no-plots", "--interval", "10"]),
    ]
    if not skip_slow:
        out.append(("flow starting at 1e6 s", [str(future), "--no-plots"]))
    return [(label, args + ["--quiet", "--out", str(tmp / f"out{i}")])
            for i, (label, args) in enumerate(out)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=256, help="dumbbell pairs (default 256)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; best CPU reported")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per child")
    parser.add_argument("--skip-slow", action="store_true", help="leave out the far-future flow")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="netsim-bench-") as tmp:
        for label, cli_args in cases(Path(tmp), args.pairs, args.skip_slow):
            best = None
            for _ in range(args.repeat):
                result = run_child(cli_args, args.timeout)
                if best is None or result["cpu_s"] < best["cpu_s"]:
                    best = result
            best["case"] = label
            rows.append(best)
            print(f"{label:<30} CPU {best['cpu_s']:7.2f} s   peak {best['peak_mb']:7.1f} MB   "
                  f"wall {best['wall_s']:7.2f} s   exit {best['exit']}"
                  + (f"   ({best['stderr']})" if best["exit"] else ""), flush=True)
    by_case = {row["case"]: row for row in rows}
    fig = {k: by_case.get(f"test_case_{k} figures", {}).get("cpu_s") for k in (0, 2)}
    bare = {k: by_case.get(f"test_case_{k} no figures", {}).get("cpu_s") for k in (0, 2)}
    for k in (0, 2):
        if fig[k] and bare[k]:
            print(f"figures cost on test_case_{k}: {fig[k] - bare[k]:.2f} s CPU")
    fine = by_case.get(f"dumbbell {args.pairs} pairs, 0.1 s")
    coarse = by_case.get(f"dumbbell {args.pairs} pairs, 10 s")
    if fine and coarse:
        print(f"dumbbell: 0.1 s sampling costs {fine['cpu_s'] / coarse['cpu_s']:.2f}x the CPU of "
              f"10 s sampling (target <= 3x), peak {fine['peak_mb']:.0f} MB (target <= 150 MB)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
