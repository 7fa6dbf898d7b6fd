#!/usr/bin/env python3
"""CPU cost of the Linux transport stack against the classic one (issue 21: at most 1.3x).

    python bench/bench_stack.py [TOPOLOGY] [--repeat N] [--algorithm NAME] [--root DIR]

Runs the topology (default: test case 2) as written (the classic stack) and with
``"transport": {"stack": "linux"}`` added to its top level, each as a whole ``initializer.py``
process with ``--no-plots -v INFO``, alternately, `--repeat` times (default 5). Reports per stack
the events and packet-hops (from the run's summary.json), the whole-process CPU time (user + sys
of the child: best and median), the simulation's own CPU (the "simulating" phase the command logs
at INFO: the event loop, without start-up, loading and writing), and the costs normalized by the
work: whole-process and simulation CPU per event and per packet-hop. Then the ratios linux /
classic of each (best against best). The two stacks do not send the same packets (the Linux
stack starts with 10 packets, delays its ACKs, recovers by SACK; BBR v1 may drop and resend more),
so the per-event and per-hop ratios compare the cost of the same work; the whole-process ratio is
what a user pays. A measurement, not a test: it never fails because something is slow.

``--root DIR`` runs another checkout's ``initializer.py`` (working directory DIR) on the same
files, e.g. a baseline worktree to measure a change to the stack.

The project's sources are byte-compiled first (compileall): with PYTHONDONTWRITEBYTECODE set
and no __pycache__, every child would otherwise compile some 75 modules again (about 0.06 s),
which on a short run hides part of the difference between the stacks.
"""
from __future__ import annotations

import argparse
import compileall
import json
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("simulator", "components", "flows", "routing", "topologies", "theory", "netsim",
            "plot_tool")
SIMULATING = re.compile(r"simulating ([0-9.]+) s")


def _child_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(root: Path, topology: Path, out: Path, algorithm: str | None) -> dict:
    """One whole run in a child process: its CPU seconds, simulation CPU, events, packet-hops."""
    command = [sys.executable, str(root / "initializer.py"), str(topology), "--no-plots",
               "-v", "INFO", "--out", str(out)]
    if algorithm:
        command += ["--algorithm", algorithm]
    before = _child_cpu_s()
    done = subprocess.run(command, cwd=root, check=True, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    cpu = _child_cpu_s() - before
    summary = json.loads((out / "summary.json").read_text())
    match = SIMULATING.search(done.stderr)
    return {"cpu": cpu, "sim": float(match.group(1)) if match else float("nan"),
            "events": int(summary["events"]), "hops": int(summary.get("packet_hops") or 0)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topology", nargs="?", default=str(ROOT / "topologies" / "test_case_2.json"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--algorithm", default=None)
    parser.add_argument("--root", default=str(ROOT),
                        help="checkout whose initializer.py runs (default: this one)")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    for package in PACKAGES:                  # the children then load bytecode, as users do
        compileall.compile_dir(str(root / package), quiet=1)
    source = Path(args.topology).resolve()
    data = json.loads(source.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        linux = dict(data)
        linux["transport"] = {**data.get("transport", {}), "stack": "linux"}
        files = {"classic": source, "linux": tmp_dir / source.name}
        files["linux"].write_text(json.dumps(linux))
        runs: dict[str, list[dict]] = {"classic": [], "linux": []}
        for i in range(args.repeat):
            for stack, path in files.items():
                runs[stack].append(run_once(root, path, tmp_dir / f"{stack}-{i}", args.algorithm))
    algorithm = args.algorithm or "as written"
    print(f"{source.name}, algorithm {algorithm}, {args.repeat} runs each, alternately; CPU = "
          f"whole process (user + sys), sim = the simulating phase")
    best = {}
    for stack, values in runs.items():
        cpu = min(run["cpu"] for run in values)
        sim = min(run["sim"] for run in values)
        events, hops = values[-1]["events"], values[-1]["hops"]
        best[stack] = {"cpu": cpu, "sim": sim, "events": events, "hops": hops}
        per_hop = f"{cpu / hops * 1e6:5.2f}" if hops else "    -"
        print(f"  {stack:8s} events {events:9d}  hops {hops:9d}  CPU best {cpu:6.3f} s  median "
              f"{statistics.median(run['cpu'] for run in values):6.3f} s  sim best {sim:6.3f} s  "
              f"{cpu / events * 1e6:5.2f} us/event  {per_hop} us/hop  "
              f"sim {sim / events * 1e6:5.2f} us/event")
    lin, cla = best["linux"], best["classic"]

    def ratio(key: str, per: str | None = None) -> str:
        if per is None:
            return f"{lin[key] / cla[key]:.2f}"
        if not lin[per] or not cla[per]:
            return "-"
        return f"{(lin[key] / lin[per]) / (cla[key] / cla[per]):.2f}"

    print(f"  linux / classic (best): CPU {ratio('cpu')}, per event {ratio('cpu', 'events')}, "
          f"per hop {ratio('cpu', 'hops')}; sim {ratio('sim')}, per event "
          f"{ratio('sim', 'events')}, per hop {ratio('sim', 'hops')}; events "
          f"{lin['events'] / cla['events']:.2f}, hops "
          f"{(lin['hops'] / cla['hops']) if cla['hops'] else float('nan'):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
