"""CPU time of the per-run figures (``plot_tool.make_figures``) against the simulation's.

    python bench/bench_figures.py [--repeat N] [--profile]

For test case 0 (every link) and test case 2 (links L1 and L3, as the README's command), in a
fresh child process each: the simulation (``simulate()``, best of N, CPU time), writing the
results, importing ``plot_tool`` (numpy is already imported by the simulator, so this is mostly
matplotlib), the first ``make_figures`` call of the process (it also pays matplotlib's lazy
start-up: font cache, mathtext, first canvas) and the best of N further calls. ``make_figures``
reads the results directory and writes every PNG, as ``initializer.py`` does. Issue 9's target:
the figures of test case 2 cost at most 0.4 x the simulation's CPU. ``--profile`` prints the
cProfile of one warm ``make_figures`` call per topology. Then the whole commands of test case 2
(``initializer.py topologies/test_case_2.json -l L1 L3``, with and without ``--no-plots``) in
child processes, CPU time of the process (``os.wait4``), against the simulation's CPU time: issue
19's target is the command with figures at most 1.5 x the simulation. This is a benchmark: it
reports figures and asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {"test_case_0": None, "test_case_2": ["L1", "L3"]}   # topology -> links of interest
TARGET_RATIO = 0.4
COMMAND_TARGET_RATIO = 1.5

log = logging.getLogger("bench_figures")


def _cpu(fn):
    start = time.process_time()
    value = fn()
    return time.process_time() - start, value


def worker(name: str, repeat: int, profile: bool) -> dict:
    """Measure one topology in this (fresh) process; return the figures as a dict."""
    sys.path.insert(0, str(ROOT))
    from netsim import load_topology, simulate

    spec = load_topology(ROOT / "topologies" / f"{name}.json")
    sim_s = min(_cpu(lambda: simulate(spec))[0] for _ in range(repeat))
    results = simulate(spec)
    out = Path(tempfile.mkdtemp(prefix=f"bench_figures_{name}_"))
    results.write(out)
    import_s, _ = _cpu(lambda: __import__("plot_tool"))
    from plot_tool import make_figures

    links = CASES[name]
    first_s, paths = _cpu(lambda: make_figures(out, out, links=links))
    warm_s = min(_cpu(lambda: make_figures(out, out, links=links))[0] for _ in range(repeat))
    if profile:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(make_figures, out, out, links=links)
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(30)
        sys.stderr.write(text.getvalue())
    return {"topology": name, "sim_cpu_s": sim_s, "import_cpu_s": import_s,
            "first_figures_cpu_s": first_s, "figures_cpu_s": warm_s,
            "figures": [p.name for p in paths], "out_dir": str(out)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:      # stdout carries the JSON only (the simulator's log stays quiet)
        json.dump(worker(args.worker, args.repeat, args.profile), sys.stdout)
        return 0
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)

    log.info("%-13s%9s%11s%11s%10s%9s%13s  %s", "topology", "sim cpu", "import cpu",
             "1st figs", "figs", "figs/sim", "(imp+1st)/sim", "figures")
    for name in CASES:
        command = [sys.executable, __file__, "--worker", name, "--repeat", str(args.repeat)]
        if args.profile:
            command.append("--profile")
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            log.error("%s: measurement failed:\n%s", name, done.stderr)
            return 1
        if args.profile:
            log.info("%s", done.stderr)
        r = json.loads(done.stdout)
        sim = r["sim_cpu_s"]
        log.info("%-13s%9.3f%11.3f%11.3f%10.3f%9.2f%13.2f  %s", name, sim, r["import_cpu_s"],
                 r["first_figures_cpu_s"], r["figures_cpu_s"], r["figures_cpu_s"] / sim,
                 (r["import_cpu_s"] + r["first_figures_cpu_s"]) / sim, " ".join(r["figures"]))
    log.info("cpu in seconds; figs = best warm make_figures call; target: figs/sim <= %.1f "
             "for test_case_2", TARGET_RATIO)
    command_costs(args.repeat, sim)
    return 0


def command_cpu(args: list) -> float:
    """CPU seconds (user + system) of ``initializer.py ARGS`` in a child process."""
    with tempfile.TemporaryDirectory(prefix="bench_figures_cli_") as tmp:
        proc = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), *args, "--quiet",
                                 "--out", str(Path(tmp) / "r")], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"initializer.py {' '.join(args)} failed")
    return usage.ru_utime + usage.ru_stime


def command_costs(repeat: int, sim_s: float) -> None:
    """The default test case 2 command with and without figures, best of `repeat` each
    (interleaved), against the simulation's CPU time `sim_s` (test case 2 is measured last)."""
    tc2 = ["topologies/test_case_2.json", "-l", "L1", "L3"]
    bare, full = [], []
    for _ in range(repeat):
        bare.append(command_cpu([*tc2, "--no-plots"]))
        full.append(command_cpu(tc2))
    log.info("test_case_2 command: %.3f s CPU with figures, %.3f s without; simulation %.3f s; "
             "with figures / simulation = %.2f (target <= %.1f), without = %.2f",
             min(full), min(bare), sim_s, min(full) / sim_s, COMMAND_TARGET_RATIO,
             min(bare) / sim_s)


if __name__ == "__main__":
    sys.exit(main())
