#!/usr/bin/env python3
"""Benchmark of the simulation core on the shipped test cases (see bench/README.md).

    python bench/bench_core.py [--repeat N] [--json FILE] [--python EXE ...] [--tracemalloc]

Every measurement runs in a fresh child process, so that each topology's peak RSS is that of one
process, and so that the same measurement can be repeated under another interpreter
(``--python pypy3``). The parent only starts children, collects their figures and prints them.
This is a measurement, not a test: it never fails because something is slow.

A topology whose file asks for Bellman-Ford routing is measured twice, first with its routing
forced to static and then as written, and the report gives the wall-time overhead of dynamic
routing.

This file must stay importable by Python 3.9 (PyPy 7.3): no 3.10+ syntax at run time.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TOPOLOGIES = (ROOT / "topologies" / "test_case_0.json", ROOT / "topologies" / "test_case_2.json")
ALGORITHM = "reno"
BARE_LOOP_EVENTS = 1_000_000
BARE_LOOP_HELD = 64                      # entries kept on the heap (a "hold" model)
CHILD_TIMEOUT_S = 1800

AS_WRITTEN = "-"                         # routing argument of a worker: the file's own protocol

# Targets (CPython 3.11, 2 cores): informative only, never asserted.
TARGETS = {"test_case_0": {"wall_s": 1.0}, "test_case_2": {"wall_s": 5.0, "peak_rss_mb": 200.0}}
# Most that dynamic routing may add to the wall time of the same topology run with static routing.
ROUTING_OVERHEAD_TARGET_PCT = {"test_case_2": 10.0}


def file_protocol(path: str) -> str:
    """The routing protocol a topology file asks for (read by the parent with json alone)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        routing = data.get("routing") or {}
        return str(routing.get("protocol", "static")) if isinstance(routing, dict) else "static"
    except (OSError, ValueError, AttributeError):
        return "static"          # the worker reports the real problem


def variants(path: str) -> list:
    """(path, routing) pairs to measure: a Bellman-Ford file forced to static, then as written."""
    if file_protocol(path) == "static":
        return [(path, AS_WRITTEN)]
    return [(path, "static"), (path, AS_WRITTEN)]


# -- child side: each worker prints one JSON object on stdout -------------------------------------
def worker_info() -> dict:
    from simulator.compiled import compiled_modules
    return {"implementation": platform.python_implementation(),
            "version": platform.python_version(),
            "executable": sys.executable,
            "build": " ".join(platform.python_build()),
            "compiler": platform.python_compiler(),
            "compiled": compiled_modules()}          # tools/compile_core.py (mypyc), if built


def load(path: str, routing: str):
    """The topology of `path`, every flow with ALGORITHM; `routing` other than AS_WRITTEN forces
    that routing protocol (the file is loaded as a dict and its routing block changed)."""
    from topologies import load_topology
    if routing == AS_WRITTEN:
        return load_topology(path, algorithm=ALGORITHM)
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    data["routing"] = dict(data.get("routing") or {}, protocol=routing)
    return load_topology(data, algorithm=ALGORITHM)


def worker_import(path: str, routing: str) -> dict:
    """Import everything a run needs and load the topology, but simulate nothing: the RSS floor."""
    from netsim import simulate  # noqa: F401
    load(path, routing)
    return {}


def worker_sim(path: str, routing: str, repeat: int) -> dict:
    """Load once, simulate `repeat` times; wall time of every simulate() call."""
    from netsim import simulate
    spec = load(path, routing)
    walls, cpus, loops, bare_cpus, figures = [], [], [], [], set()
    summary = None
    deltas = _loop_deltas()
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        results = simulate(spec)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
        # the bare loop right after, in the same process: both see the same machine state
        bare_events, bare_cpu = bare_loop_once(BARE_LOOP_EVENTS, deltas)
        bare_cpus.append(bare_cpu)
        summary = results.summary
        loops.append(summary["wall_time_s"])
        figures.add((summary["events"], summary["packet_hops"], summary["end_time_s"]))
        del results
    routing_info = summary.get("routing") or {}
    return {"name": summary["topology"], "routing": routing_info.get("protocol", "static"),
            "routing_packets": routing_info.get("routing_packets", 0),
            "walls_s": walls, "cpus_s": cpus, "loops_s": loops,
            "bare_cpus_s": bare_cpus, "bare_events": bare_events,
            "end_time_s": summary["end_time_s"], "events": summary["events"],
            "packet_hops": summary["packet_hops"], "stop_reason": summary["stop_reason"],
            "deterministic": len(figures) == 1}


def worker_mem(path: str, routing: str) -> dict:
    """One simulate() in this fresh process; the parent reads its peak RSS."""
    from netsim import simulate
    simulate(load(path, routing))
    return {}


def worker_tracemalloc(path: str, routing: str) -> dict:
    """Peak of Python-level allocations during one simulate() (slow; never used for timing)."""
    try:
        import tracemalloc
    except ImportError as exc:
        return {"tracemalloc_peak_mb": None, "note": f"tracemalloc unavailable: {exc}"}
    from netsim import simulate
    spec = load(path, routing)
    tracemalloc.start()
    simulate(spec)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"tracemalloc_peak_mb": peak / 2 ** 20}


def _loop_deltas() -> list:
    """Deterministic, irregular delays in (0, 1): a cheap LCG, computed outside the timed loop."""
    x, deltas = 12345, []
    for _ in range(1024):
        x = (1103515245 * x + 12345) % 2 ** 31
        deltas.append((x + 1) / 2 ** 31)
    return deltas


def bare_loop_once(events: int, deltas: list) -> tuple:
    """One pass of a bare heapq event loop: pop a (time, seq, fn, arg) tuple, call a no-op, push
    one more. The heap holds BARE_LOOP_HELD entries throughout, like a simulator whose every event
    schedules one follow-up. Returns (events processed, CPU seconds)."""
    from heapq import heappop, heappush

    def noop(arg):
        return None

    mask = len(deltas) - 1
    queue = [(deltas[i], i, noop, None) for i in range(BARE_LOOP_HELD)]
    queue.sort()
    seq = BARE_LOOP_HELD
    processed = 0
    start = time.process_time()
    while queue:
        t, _, fn, arg = heappop(queue)
        processed += 1
        fn(arg)
        if seq < events:
            seq += 1
            heappush(queue, (t + deltas[seq & mask], seq, fn, arg))
    return processed, time.process_time() - start


def worker_loop(events: int, repeat: int) -> dict:
    """The bare loop alone, best CPU time of `repeat` passes."""
    deltas = _loop_deltas()
    best, processed = None, 0
    for _ in range(repeat):
        processed, elapsed = bare_loop_once(events, deltas)
        if best is None or elapsed < best:
            best = elapsed
    return {"events": processed, "best_s": best, "events_per_s": processed / best}


def run_worker(argv: list) -> int:
    kind, args = argv[0], argv[1:]
    if kind == "info":
        out = worker_info()
    elif kind == "import":
        out = worker_import(args[0], args[1])
    elif kind == "sim":
        out = worker_sim(args[0], args[1], int(args[2]))
    elif kind == "mem":
        out = worker_mem(args[0], args[1])
    elif kind == "tracemalloc":
        out = worker_tracemalloc(args[0], args[1])
    elif kind == "loop":
        out = worker_loop(int(args[0]), int(args[1]))
    else:
        raise SystemExit(f"unknown worker {kind!r}")
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


# -- parent side ----------------------------------------------------------------------------------
class ChildError(RuntimeError):
    pass


def child(python: str, *args) -> tuple:
    """Run one worker under `python`; (its JSON answer, its peak RSS in MB)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONHASHSEED", "0")
    cmd = [python, str(Path(__file__).resolve()), "--worker", *map(str, args)]
    with tempfile.TemporaryFile() as err_file:
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, env=env,
                                    cwd=str(ROOT))
        except OSError as exc:
            raise ChildError(f"cannot start {python}: {exc}") from None
        watchdog = threading.Timer(CHILD_TIMEOUT_S, proc.kill)
        watchdog.start()
        try:
            out = proc.stdout.read()
            proc.stdout.close()
            # Reap this very child with wait4, which returns its own rusage: ru_maxrss (KiB on
            # Linux) is the peak RSS of that process alone, not a maximum over all children.
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            watchdog.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        err_file.seek(0)
        err = err_file.read()
    rss_mb = usage.ru_maxrss / 1024.0
    if proc.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        last = lines[-1] if lines else "no message"
        hint = ""
        if "ModuleNotFoundError" in last:
            hint = (f" (install the simulator's dependencies for this interpreter, e.g. "
                    f"{python} -m venv /tmp/benchenv && /tmp/benchenv/bin/pip install "
                    f"'numpy<2' 'networkx<3.3', then pass --python /tmp/benchenv/bin/pypy3)")
        raise ChildError(f"{python} worker {args[0]} failed (exit {proc.returncode}): {last}{hint}")
    return json.loads(out.decode().strip().splitlines()[-1]), rss_mb


def measure(python: str, topologies, repeat: int, with_tracemalloc: bool) -> dict:
    """All figures for one interpreter."""
    result = {"python": python, "error": None}
    try:
        info, _ = child(python, "info")
    except ChildError as exc:
        result["error"] = str(exc)
        return result
    result.update(info)
    loop, _ = child(python, "loop", BARE_LOOP_EVENTS, repeat)
    result["bare_loop"] = loop
    rows = []
    for path, routing in (v for p in topologies for v in variants(p)):
        row = {"path": str(path), "forced_routing": None if routing == AS_WRITTEN else routing}
        try:
            sim, _ = child(python, "sim", path, routing, repeat)
            _, peak_mb = child(python, "mem", path, routing)
            _, base_mb = child(python, "import", path, routing)
        except ChildError as exc:
            row["error"] = str(exc)
            rows.append(row)
            continue
        wall = min(sim["walls_s"])
        row.update(sim)
        row.update({
            "wall_s": wall, "first_wall_s": sim["walls_s"][0], "loop_s": min(sim["loops_s"]),
            "events_per_s": sim["events"] / wall, "packet_hops_per_s": sim["packet_hops"] / wall,
            "peak_rss_mb": peak_mb, "import_rss_mb": base_mb,
            "cpu_s": min(sim["cpus_s"]),
            # CPU time of the run vs CPU time of the bare loop measured between its repetitions
            "ratio_to_bare_loop": (sim["events"] / min(sim["cpus_s"]))
                                  / (sim["bare_events"] / min(sim["bare_cpus_s"])),
        })
        if with_tracemalloc:
            tm, _ = child(python, "tracemalloc", path, routing)
            row.update(tm)
        target = TARGETS.get(row["name"], {})
        row["targets"] = target
        row["within_targets"] = all(row[k] <= v for k, v in {"wall_s": target.get("wall_s"),
                                                             "peak_rss_mb": target.get("peak_rss_mb")}.items()
                                    if v is not None)
        rows.append(row)
    result["topologies"] = rows
    result["routing_overhead"] = routing_overheads(rows)
    return result


def routing_overheads(rows: list) -> list:
    """Per topology measured with both static and dynamic routing: the wall-time overhead of the
    dynamic run over the static one, in percent (best wall times)."""
    out = []
    for dynamic in rows:
        if "error" in dynamic or dynamic["routing"] == "static" or dynamic["forced_routing"]:
            continue
        static = next((r for r in rows if r["path"] == dynamic["path"] and "error" not in r
                       and r["forced_routing"] == "static"), None)
        if static is None:
            continue
        pct = (dynamic["wall_s"] / static["wall_s"] - 1.0) * 100.0
        target = ROUTING_OVERHEAD_TARGET_PCT.get(dynamic["name"])
        out.append({"name": dynamic["name"], "routing": dynamic["routing"],
                    "static_wall_s": static["wall_s"], "dynamic_wall_s": dynamic["wall_s"],
                    "overhead_pct": pct, "target_pct": target,
                    "within_target": None if target is None else pct <= target,
                    "extra_events": dynamic["events"] - static["events"],
                    "routing_packets": dynamic.get("routing_packets", 0)})
    return out


def machine() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {"platform": platform.platform(), "cpu": model, "cpu_count": os.cpu_count(),
            "usable_cpus": affinity, "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_report(report: dict) -> None:
    m = report["machine"]
    print(f"machine: {m['platform']}; {m['cpu'] or 'unknown CPU'}; {m['usable_cpus']} usable CPUs")
    print(f"algorithm {report['algorithm']}, statistics on; "
          f"wall = best of {report['repeat']} simulate() calls in one process; "
          f"routing: bf = Bellman-Ford, static* = forced to static")
    for run in report["runs"]:
        print()
        if run["error"]:
            print(f"{run['python']}: {run['error']}")
            continue
        compiled = run.get("compiled") or []
        print(f"{run['implementation']} {run['version']} ({run['executable']}); core "
              + (f"compiled: {', '.join(compiled)}" if compiled else "pure Python"))
        header = ("topology", "routing", "wall s", "1st s", "sim end s", "events", "events/s",
                  "pkt-hops", "hops/s", "peak MB", "base MB", "vs loop", "target")
        widths = (12, 7, 7, 7, 9, 8, 9, 8, 9, 7, 7, 7, 6)
        print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths))))
        for row in run["topologies"]:
            name = row.get("name") or Path(row["path"]).stem
            if "error" in row:
                print(f"{name.ljust(widths[0])}  {row['error']}")
                continue
            cells = (name, routing_label(row), fmt(row["wall_s"], ".3f"),
                     fmt(row["first_wall_s"], ".3f"),
                     fmt(row["end_time_s"], ".3f"), str(row["events"]),
                     fmt(row["events_per_s"], ",.0f"), str(row["packet_hops"]),
                     fmt(row["packet_hops_per_s"], ",.0f"), fmt(row["peak_rss_mb"], ".1f"),
                     fmt(row["import_rss_mb"], ".1f"), fmt(row["ratio_to_bare_loop"], ".3f"),
                     ("ok" if row["within_targets"] else "OVER") if row["targets"] else "-")
            print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))
            if not row["deterministic"]:
                print(f"{'':{widths[0]}}  warning: repeated runs gave different event counts")
            if "tracemalloc_peak_mb" in row:
                tm = row["tracemalloc_peak_mb"]
                print(f"{'':{widths[0]}}  tracemalloc peak (separate run): "
                      f"{fmt(tm, '.1f')} MB {row.get('note', '')}".rstrip())
        for o in run.get("routing_overhead", []):
            verdict = "" if o["target_pct"] is None else \
                f" (target <= {o['target_pct']:g} %: {'ok' if o['within_target'] else 'OVER'})"
            print(f"dynamic routing overhead, {o['name']}: {o['overhead_pct']:+.1f} % wall "
                  f"({o['dynamic_wall_s']:.3f} s {routing_label(o)} vs "
                  f"{o['static_wall_s']:.3f} s static*; {o['extra_events']:+d} events, "
                  f"{o['routing_packets']} routing packets){verdict}")
        loop = run["bare_loop"]
        print(f"bare heapq loop: {loop['events_per_s']:,.0f} events/s "
              f"({loop['events']} events, {BARE_LOOP_HELD} held, best {loop['best_s']:.3f} s)")


def routing_label(row: dict) -> str:
    """Short routing column: "static", "static*" (forced), "bf" (Bellman-Ford), or the name."""
    if row.get("forced_routing"):
        return row["forced_routing"] + "*"
    protocol = row.get("routing", "static")
    return {"bellman-ford": "bf"}.get(protocol, protocol)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        return run_worker(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, metavar="N",
                        help="simulate() calls per topology; the best wall time is reported (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    parser.add_argument("--python", metavar="EXE", action="append",
                        help="interpreter to measure (repeatable; default: this one), "
                             "e.g. --python pypy3; PYTHONPATH is set to the repository")
    parser.add_argument("--topology", metavar="PATH", action="append",
                        help="topology file (repeatable; default: test cases 0 and 2); a "
                             "Bellman-Ford file is also measured with routing forced to static")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also report tracemalloc's peak, from a separate (slow) run")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    topologies = [str(Path(p).resolve()) for p in args.topology] if args.topology else \
        [str(p) for p in TOPOLOGIES]
    report = {"machine": machine(), "algorithm": ALGORITHM, "repeat": args.repeat,
              "bare_loop_events": BARE_LOOP_EVENTS, "targets": TARGETS,
              "routing_overhead_targets_pct": ROUTING_OVERHEAD_TARGET_PCT, "runs": []}
    failed = False
    for python in args.python or [sys.executable]:
        run = measure(python, topologies, args.repeat, args.tracemalloc)
        failed |= bool(run["error"]) or any("error" in r for r in run.get("topologies", []))
        report["runs"].append(run)
    print_report(report)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
            fh.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
