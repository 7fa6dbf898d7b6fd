#!/usr/bin/env python3
"""CPU cost of the Linux transport stack against the classic one (issue 21: at most 1.3x).

    python bench/bench_stack.py [TOPOLOGY] [--repeat N] [--algorithm NAME]

Runs the topology (default: test case 2) as written (the classic stack) and with
``"transport": {"stack": "linux"}`` added to its top level, each as a whole ``initializer.py``
process with ``--no-plots``, alternately, `--repeat` times (default 5). Reports per stack the
events, the whole-process CPU time (user + sys of the child, best and median) and CPU per event,
and the ratio linux / classic of the best times. A measurement, not a test: it never fails
because something is slow.

The project's sources are byte-compiled first (compileall): with PYTHONDONTWRITEBYTECODE set
and no __pycache__, every child would otherwise compile some 75 modules again (about 0.06 s),
which on a short run hides part of the difference between the stacks.
"""
from __future__ import annotations

import argparse
import compileall
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("simulator", "components", "flows", "routing", "topologies", "theory", "netsim",
            "plot_tool")


def _child_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(topology: Path, out: Path, algorithm: str | None) -> tuple[float, int]:
    """One whole run in a child process: (CPU seconds, events)."""
    command = [sys.executable, str(ROOT / "initializer.py"), str(topology), "--no-plots",
               "--out", str(out)]
    if algorithm:
        command += ["--algorithm", algorithm]
    before = _child_cpu_s()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    cpu = _child_cpu_s() - before
    summary = json.loads((out / "summary.json").read_text())
    return cpu, int(summary["events"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topology", nargs="?", default=str(ROOT / "topologies" / "test_case_2.json"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--algorithm", default=None)
    args = parser.parse_args(argv)
    for package in PACKAGES:                  # the children then load bytecode, as users do
        compileall.compile_dir(str(ROOT / package), quiet=1)
    source = Path(args.topology)
    data = json.loads(source.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        linux = dict(data)
        linux["transport"] = {**data.get("transport", {}), "stack": "linux"}
        files = {"classic": source, "linux": tmp_dir / source.name}
        files["linux"].write_text(json.dumps(linux))
        cpus: dict[str, list[float]] = {"classic": [], "linux": []}
        events = {}
        for i in range(args.repeat):
            for stack, path in files.items():
                cpu, events[stack] = run_once(path, tmp_dir / f"{stack}-{i}", args.algorithm)
                cpus[stack].append(cpu)
    print(f"{source.name}, {args.repeat} runs each, whole-process CPU (user + sys)")
    for stack, values in cpus.items():
        best = min(values)
        print(f"  {stack:8s} events {events[stack]:9d}  CPU best {best:6.3f} s  median "
              f"{statistics.median(values):6.3f} s  {best / events[stack] * 1e6:5.2f} us/event")
    print(f"  linux / classic (best): {min(cpus['linux']) / min(cpus['classic']):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
