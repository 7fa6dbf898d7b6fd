#!/usr/bin/env python3
"""Whole-command cost at scale: CPU time and peak memory of `initializer.py` runs (bench/README.md).

    python bench/bench_scale.py [--cases NAME ...] [--skip-slow] [--root DIR] [--json FILE]

Each case runs the real command line in a child process (`os.wait4` in a small launcher gives
its CPU time, user + system, and peak RSS: see `LAUNCHER`), so imports, loading, building
routes, the simulation and writing results (and, where asked, figures) are all counted. The
run's event count is read from the summary.json it writes; the simulation's own CPU time from
the phase line the command logs at `-v INFO` (netsim/cli.py `log_cpu_phases`), so that a "sim
us/event" column shows the events' cost next to the whole command's (the target column).
Cases (`--list` prints them):

* test cases 0 and 2, with and without figures; test case 2 also against a bare heapq loop;
* a dumbbell of N sender/receiver pairs (default 256; 32 MB in all, Reno, 10 Mb/s bottleneck)
  sampled every 0.1 s (the default) and every 10 s: statistics must cost about the same;
* one 1 MB flow that starts at t = 1e6 s: nothing happens for a million simulated seconds;
* issue 19's scale targets: k=16 and k=24 fat trees, random router graphs of 1 000 (static and
  Bellman-Ford), 5 000 and 10 000 routers, 10 000 long-lived flows over 100 host pairs, and
  10 000 flows over 10 000 host pairs (with its set-up cost measured apart);
* the fabrics `generate fat-tree` writes by default (ECMP flow hashing, hosts/2 flows of 1 MB):
  a whole k=16 run, and the set-up of k=24.

The topology files are built here with this checkout's topologies/generate.py and written to a
temporary directory, so `--root DIR` can run another checkout's initializer.py (one without the
`generate` subcommand too) on exactly the same files.

A measurement, not a test: it reports figures and never fails because something is slow.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (str(ROOT), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from topologies.generate import Common, dumps, fat_tree, random_graph  # noqa: E402
from topologies.generate import dumbbell as dumbbell_dc  # noqa: E402

DUMBBELL_TOTAL_MB = 32.0
PACKAGES = ("simulator", "components", "flows", "routing", "topologies", "theory", "netsim",
            "plot_tool")
SETUP_DURATION_S = 1e-6       # the set-up run: stopped before any flow has started
BARE_LOOP_EVENTS = 1_000_000
BARE_LOOP_REPEAT = 3
# the simulation's CPU seconds in the phase line of `-v INFO` (netsim/cli.py log_cpu_phases)
PHASE_SIMULATING = re.compile(r"CPU by phase: .*?simulating ([0-9.]+) s")


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


# -- issue 19's scale cases: (topology builder, targets) ------------------------------------------

def fat_tree_case(k: int) -> dict:
    """k-ary fat tree, 1 Gb/s links (the generator's defaults otherwise), hosts/8 random flows
    of 100 kB, static routing."""
    return fat_tree(k, common=Common(flows=k ** 3 // 32, data_mb=0.1, seed=1))


def fabric_case(k: int) -> dict:
    """`generate fat-tree --k K` as a user runs it: the subcommand's defaults, ECMP flow
    hashing and hosts/2 random flows of 1 MB starting at 0."""
    return fat_tree(k, common=Common(ecmp="flow", seed=1, name=f"fabric_k{k}"))


def random_case(routers: int, routing: str = "static") -> dict:
    """Random router graph (mean degree 4, 100 Mb/s, 1 ms, 100 kB links), 20 hosts on random
    routers, 10 random flows of 1 MB."""
    return random_graph(routers, degree=4.0, hosts=20,
                        common=Common(flows=10, data_mb=1.0, routing=routing, seed=1,
                                      name=f"random_{routers}_{routing}"))


def long_lived_case() -> dict:
    """10 000 long-lived flows over 100 pairs of a 1 Gb/s dumbbell (1 Gb/s access links), starts
    spread over 0.1 s, 2 simulated seconds."""
    return dumbbell_dc(100, rate_mbps=1000.0, access_rate_mbps=1000.0,
                       common=Common(flows=10_000, data_mb=None, duration_s=2.0,
                                     start_spread_s=0.1, seed=1, name="long_lived_10000"))


def many_pairs_case() -> dict:
    """10 000 host pairs of a 1 Gb/s dumbbell, one 10 kB flow each, starts spread over 1 s
    (a load of 0.8)."""
    return dumbbell_dc(10_000, rate_mbps=1000.0, access_rate_mbps=1000.0,
                       common=Common(data_mb=0.01, start_spread_s=1.0, seed=1,
                                     name="pairs_10000"))


# name: (label, builder, extra CLI args, targets, slow); targets: us_per_event, peak_mb, cpu_s
SCALE_CASES = {
    "fat-tree-16": ("k=16 fat tree (1 344 nodes, 128 flows)", lambda: fat_tree_case(16), [],
                    {"us_per_event": 3.0, "peak_mb": 200.0}, False),
    "fat-tree-24": ("k=24 fat tree (4 176 nodes, 432 flows)", lambda: fat_tree_case(24), [],
                    {"us_per_event": 3.0, "peak_mb": 400.0}, True),
    "fabric-16": ("generate fat-tree --k 16 (ECMP, 512 flows of 1 MB)", lambda: fabric_case(16),
                  [], {}, True),
    "fabric-24-setup": ("generate fat-tree --k 24, its set-up (stopped at 1 us)",
                        lambda: fabric_case(24), ["--duration", str(SETUP_DURATION_S)], {},
                        False),
    "random-1000": ("random graph 1 000 routers, static", lambda: random_case(1000), [], {},
                    False),
    "random-1000-bf": ("random graph 1 000 routers, Bellman-Ford",
                       lambda: random_case(1000, "bellman-ford"), [], {"vs_static": 2.0}, False),
    "random-5000": ("random graph 5 000 routers, static", lambda: random_case(5000), [],
                    {"us_per_event": 3.0}, False),
    "random-10000": ("random graph 10 000 routers, static", lambda: random_case(10_000), [],
                     {"us_per_event": 3.0}, True),
    "long-lived": ("10 000 long-lived flows, 100 pairs, 2 s", long_lived_case, [],
                   {"us_per_event": 2.5, "peak_mb": 300.0}, False),
    "pairs-10000": ("10 000 flows over 10 000 pairs", many_pairs_case, [],
                    {"peak_mb": 500.0}, True),
    "pairs-10000-setup": ("  its set-up (stopped at 1 us)", many_pairs_case,
                          ["--duration", str(SETUP_DURATION_S)], {"cpu_s": 5.0}, True),
}
CLASSIC_CASES = {"tc0-figures": "test case 0 with figures", "tc0": "test case 0, --no-plots",
                 "tc2-figures": "test case 2 -l L1 L3 with figures",
                 "tc2": "test case 2 -l L1 L3, --no-plots (and the bare loop)",
                 "dumbbell-0.1": "dumbbell of --pairs pairs, 0.1 s sampling",
                 "dumbbell-10": "dumbbell of --pairs pairs, 10 s sampling",
                 "far-future": "one flow starting at 1e6 s"}
SLOW_CLASSIC = ("far-future",)


# The command runs as the child of a small launcher process, which reports its CPU time and peak
# RSS. A child's peak RSS (ru_maxrss) is the high-water mark of its process, which counts the
# memory it had before exec: a copy of (or, with vfork, the very) address space of the process
# that started it. Started from this script, which holds the generated topologies, every small
# run would report this script's size (43 MB for test case 0, whose command peaks at 25 MB).
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(f"{usage.ru_utime!r} {usage.ru_stime!r} {usage.ru_maxrss} "
             f"{os.waitstatus_to_exitcode(status)}")
"""


def run_child(root: Path, args: list, timeout_s: float, python_args: list | None = None) -> dict:
    """Run `root`/initializer.py with `args` (or the interpreter with `python_args`, in `root`)
    through `LAUNCHER`; its CPU seconds (user + system), peak RSS, exit status and the last line
    of its standard error."""
    # standard error goes to a file, not a pipe: at -v INFO a run of 10 000 flows logs more than
    # a pipe holds (one line per completed flow), and the child would block writing to it
    err_file = tempfile.TemporaryFile()
    with tempfile.NamedTemporaryFile(prefix="netsim-bench-usage-", delete=False) as fh:
        usage_path = fh.name
    start = time.perf_counter()
    command = python_args if python_args is not None else [str(root / "initializer.py"), *args]
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, usage_path, sys.executable,
                             *command],
                            stdout=subprocess.DEVNULL, stderr=err_file, cwd=root,
                            start_new_session=True)
    killed = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)       # the launcher and the command
        proc.wait()
        killed = True
    wall_s = time.perf_counter() - start
    err_file.seek(0)
    stderr = err_file.read().decode(errors="replace").strip()
    err_file.close()
    try:
        with open(usage_path, encoding="utf-8") as fh:
            utime, stime, maxrss, exit_status = fh.read().split()
        cpu_s, peak_mb, code = float(utime) + float(stime), int(maxrss) / 1024.0, int(exit_status)
    except (OSError, ValueError):                  # killed before the command ended
        cpu_s, peak_mb, code = float("nan"), float("nan"), -9
    finally:
        os.unlink(usage_path)
    lines = [line for line in stderr.splitlines() if not line.startswith("INFO ")]
    phase = PHASE_SIMULATING.search(stderr)
    return {"cpu_s": cpu_s, "peak_mb": peak_mb, "wall_s": wall_s, "exit": code,
            "killed": killed, "sim_cpu_s": float(phase.group(1)) if phase else None,
            "stderr": f"killed after {timeout_s:g} s" if killed else
                      (lines[-1] if lines else "")}


def events_of(out_dir: Path):
    """The event count of the run whose results are in `out_dir` (None if it wrote none)."""
    try:
        with open(out_dir / "summary.json", encoding="utf-8") as fh:
            return int(json.load(fh)["events"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def bare_loop_us_per_event() -> float:
    """CPU microseconds per event of the bare heapq loop (bench/bench_core.py), best of 3."""
    from bench_core import _loop_deltas, bare_loop_once
    deltas = _loop_deltas()
    best = min(bare_loop_once(BARE_LOOP_EVENTS, deltas)[1] for _ in range(BARE_LOOP_REPEAT))
    return best / BARE_LOOP_EVENTS * 1e6


def start_up_cpu_s(root: Path, repeat: int) -> tuple:
    """CPU seconds (best of `repeat`) of the interpreter starting and exiting (``python -c
    pass``: on this machine, with whatever its site-packages run at start-up) and of the same
    importing what every run without figures imports before it reads its topology: the command
    line and the run harness (``python -c "import netsim.cli, netsim.run"``, in `root`; the
    package imports its API lazily, so the command line alone is less): the part of every
    whole-command figure that does not depend on the run."""
    best = []
    for code in ("pass", "import netsim.cli, netsim.run"):
        best.append(min(run_child(root, [], 60.0, ["-c", code])["cpu_s"] for _ in range(repeat)))
    return best[0], best[1]


def cases(tmp: Path, pairs: int, selected: list) -> list:
    """(name, label, CLI args, targets) of the selected cases, their files written to `tmp`."""
    out = []
    tc0, tc2 = "topologies/test_case_0.json", "topologies/test_case_2.json"
    classic = {
        "tc0-figures": ("test_case_0 figures", [tc0]),
        "tc0": ("test_case_0 no figures", [tc0, "--no-plots"]),
        "tc2-figures": ("test_case_2 figures", [tc2, "-l", "L1", "L3"]),
        "tc2": ("test_case_2 no figures", [tc2, "-l", "L1", "L3", "--no-plots"]),
        "dumbbell-0.1": (f"dumbbell {pairs} pairs, 0.1 s", ["@dumbbell", "--no-plots"]),
        "dumbbell-10": (f"dumbbell {pairs} pairs, 10 s", ["@dumbbell", "--no-plots",
                                                          "--interval", "10"]),
        "far-future": ("flow starting at 1e6 s", ["@far_future", "--no-plots"]),
    }
    files: dict = {}
    for index, name in enumerate(selected):
        if name in classic:
            label, args = classic[name]
            targets: dict = {"vs_bare_loop": True} if name == "tc2" else {}
            if args[0].startswith("@"):
                key = args[0][1:]
                if key not in files:
                    files[key] = tmp / f"{key}.json"
                    data = dumbbell(pairs) if key == "dumbbell" else far_future()
                    files[key].write_text(json.dumps(data))
                args = [str(files[key]), *args[1:]]
        else:
            label, build, extra, targets, _slow = SCALE_CASES[name]
            key = name[:-len("-setup")] if name.endswith("-setup") else name
            if key not in files:
                files[key] = tmp / f"{key}.json"
                files[key].write_text(dumps(build()))
            args = [str(files[key]), "--no-plots", *extra]
        out.append((name, label, [*args, "--quiet", "-v", "INFO", "--out", str(tmp / f"out{index}")],
                    targets))
    return out


def judge(row: dict, targets: dict, by_name: dict) -> str:
    """The target column: what is asked, then ok / OVER (informative only)."""
    parts, ok = [], True
    if "us_per_event" in targets:
        parts.append(f"<= {targets['us_per_event']:g} us/ev")
        ok &= row["us_per_event"] is not None and row["us_per_event"] <= targets["us_per_event"]
    if "peak_mb" in targets:
        parts.append(f"<= {targets['peak_mb']:g} MB")
        ok &= row["peak_mb"] <= targets["peak_mb"]
    if "cpu_s" in targets:
        parts.append(f"<= {targets['cpu_s']:g} s")
        ok &= row["cpu_s"] <= targets["cpu_s"]
    if "vs_static" in targets:
        static = by_name.get(row["name"][:-len("-bf")])
        if static and static["cpu_s"]:
            row["vs_static"] = row["cpu_s"] / static["cpu_s"]
            parts.append(f"<= {targets['vs_static']:g}x static: {row['vs_static']:.2f}x")
            ok &= row["vs_static"] <= targets["vs_static"]
        else:
            parts.append(f"<= {targets['vs_static']:g}x static (static run not measured)")
            ok = False
    if "vs_bare_loop" in targets:
        parts.append("unchanged or faster")
        return ", ".join(parts)
    if not parts:
        return ""
    return ", ".join(parts) + ("  ok" if ok and row["exit"] == 0 else "  OVER")


def print_table(rows: list, before: dict | None = None) -> None:
    """The table; with `before` (rows of an earlier --json by case name), its CPU s, the
    speed-up (before CPU / now CPU) and whether the event counts are the same."""
    extra = f" {'before s':>9} {'speed-up':>8} {'events':>7}" if before is not None else ""
    header = (f"{'run':<42} {'events':>10} {'CPU s':>8} {'CPU us/event':>13} "
              f"{'sim us/event':>13} {'peak MB':>8} {'vs bare loop':>13}{extra}  target")
    print(header)
    print("-" * len(header))
    for row in rows:
        events = f"{row['events']:,}" if row["events"] is not None else "-"
        per = f"{row['us_per_event']:.2f}" if row["us_per_event"] is not None else "-"
        sim = f"{row['sim_us_per_event']:.2f}" if row.get("sim_us_per_event") else "-"
        bare = f"{row['vs_bare_loop']:.3f}" if row.get("vs_bare_loop") else ""
        note = f"   (exit {row['exit']}: {row['stderr']})" if row["exit"] else ""
        extra = ""
        if before is not None:
            old = before.get(row["name"])
            if old and old.get("cpu_s") and row["cpu_s"]:
                same = "same" if old.get("events") == row["events"] else "differ"
                extra = f" {old['cpu_s']:>9.2f} {old['cpu_s'] / row['cpu_s']:>7.2f}x {same:>7}"
            else:
                extra = f" {'-':>9} {'-':>8} {'-':>7}"
        print(f"{row['label']:<42} {events:>10} {row['cpu_s']:>8.2f} {per:>13} {sim:>13} "
              f"{row['peak_mb']:>8.1f} {bare:>13}{extra}  {row['target']}{note}", flush=True)


def main(argv=None) -> int:
    known = list(CLASSIC_CASES) + list(SCALE_CASES)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", metavar="NAME", choices=known,
                        help="cases to run, in this order (default: all; --list shows them)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--skip-slow", action="store_true",
                        help="leave out the slow cases: " + ", ".join(
                            list(SLOW_CLASSIC) + [n for n, c in SCALE_CASES.items() if c[4]]))
    parser.add_argument("--pairs", type=int, default=256, help="dumbbell pairs (default 256)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; best CPU reported")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per child")
    parser.add_argument("--root", metavar="DIR", default=str(ROOT),
                        help="checkout whose initializer.py runs (default: this one); the "
                             "topology files always come from this checkout's generators")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--before", metavar="FILE",
                        help="an earlier --json (e.g. bench/results/scale_before.json): add its "
                             "CPU s, the speed-up and whether the event counts are the same")
    args = parser.parse_args(argv)
    if args.list:
        for name in known:
            label = SCALE_CASES[name][0] if name in SCALE_CASES else CLASSIC_CASES[name]
            slow = name in SLOW_CLASSIC or (name in SCALE_CASES and SCALE_CASES[name][4])
            print(f"{name:<20} {label.strip()}{'  (slow)' if slow else ''}")
        return 0
    before = None
    if args.before:
        with open(args.before, encoding="utf-8") as fh:
            before = {row["name"]: row for row in json.load(fh)}
    selected = args.cases or known
    if args.skip_slow:
        selected = [n for n in selected
                    if n not in SLOW_CLASSIC and not (n in SCALE_CASES and SCALE_CASES[n][4])]
    root = Path(args.root).resolve()
    if not (root / "initializer.py").is_file():
        parser.error(f"--root: no initializer.py in {root}")
    # the children load bytecode, as users do: with PYTHONDONTWRITEBYTECODE set and no cache,
    # each child would compile every module it imports again
    for package in PACKAGES:
        compileall.compile_dir(str(root / package), quiet=1)
    commit = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %s"],
                            capture_output=True, text=True).stdout.strip()
    print(f"# {root} at {commit[:100]}")
    print(f"# {platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs; CPU = user + system of the whole command (--no-plots unless "
          f"'figures', -v INFO), peak = its peak RSS; events from its summary.json; sim = the "
          f"simulation alone, from the command's phase line", flush=True)
    rows = []
    by_name: dict = {}
    with tempfile.TemporaryDirectory(prefix="netsim-bench-") as tmp:
        for name, label, cli_args, targets in cases(Path(tmp), args.pairs, selected):
            best = None
            for _ in range(args.repeat):
                result = run_child(root, cli_args, args.timeout)
                out_dir = Path(cli_args[cli_args.index("--out") + 1])
                result["events"] = events_of(out_dir) if result["exit"] == 0 else None
                if targets.get("vs_bare_loop"):
                    result["bare_us_per_event"] = bare_loop_us_per_event()
                if best is None or result["cpu_s"] < best["cpu_s"]:
                    best = result
            best.update(name=name, label=label, args=cli_args)
            best["us_per_event"] = (best["cpu_s"] / best["events"] * 1e6
                                    if best["events"] else None)
            best["sim_us_per_event"] = (best["sim_cpu_s"] / best["events"] * 1e6
                                        if best["events"] and best["sim_cpu_s"] is not None
                                        else None)
            if best.get("bare_us_per_event") and best["us_per_event"]:
                best["vs_bare_loop"] = best["bare_us_per_event"] / best["us_per_event"]
            best["target"] = judge(best, targets, by_name)
            by_name[name] = best
            rows.append(best)
            print(f"# done: {name} ({best['wall_s']:.1f} s wall)", file=sys.stderr, flush=True)
    interpreter_s, imports_s = start_up_cpu_s(root, max(5, args.repeat))
    print()
    print_table(rows, before)
    fig = {k: by_name.get(f"tc{k}-figures", {}).get("cpu_s") for k in (0, 2)}
    bare = {k: by_name.get(f"tc{k}", {}).get("cpu_s") for k in (0, 2)}
    for k in (0, 2):
        if fig[k] and bare[k]:
            print(f"figures cost on test_case_{k}: {fig[k] - bare[k]:.2f} s CPU")
    fine, coarse = by_name.get("dumbbell-0.1"), by_name.get("dumbbell-10")
    if fine and coarse:
        print(f"dumbbell: 0.1 s sampling costs {fine['cpu_s'] / coarse['cpu_s']:.2f}x the CPU of "
              f"10 s sampling (target <= 3x), peak {fine['peak_mb']:.0f} MB (target <= 150 MB)")
    tc2 = by_name.get("tc2")
    if tc2 and tc2.get("vs_bare_loop"):
        print(f"bare heapq loop: {tc2['bare_us_per_event']:.3f} us/event CPU (best of "
              f"{BARE_LOOP_REPEAT} x {BARE_LOOP_EVENTS:,}); 'vs bare loop' = its us/event / the "
              f"run's")
    print(f"start-up in every whole-command figure: the interpreter alone (python -c pass) "
          f"{interpreter_s * 1e3:.0f} ms CPU, with the imports of a run (netsim.cli, "
          f"netsim.run) "
          f"{imports_s * 1e3:.0f} ms (best of {max(5, args.repeat)})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
