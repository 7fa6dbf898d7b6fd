#!/usr/bin/env python3
"""Behavioural identity check: every algorithm on a fixed set of networks, every figure printed.

    python bench/identity.py [--save FILE] [--compare FILE] [--only ALGO ...] [--case NAME ...]

Runs every congestion-control algorithm (tahoe, reno, newreno, cubic, bbr, fast, vegas) on the
CS/EE 143 test cases 0, 1 and 2, the lossy link and the dumbbell presets, and two variants that
exercise the rest of the link model: the dumbbell with jitter, reordering and duplication on its
bottleneck, and test case 1 with a link failure and repair. Per run it prints the events
processed, the simulated end time, and per flow the finish time, retransmissions, timeouts and a
SHA-256 of its window trace (``results.trace("flows", fid, "window_pkts")``, times and values).
It also keeps a hash of every column of the sampled flow and link tables (rates, RTTs, buffer
integrals, drops), compared column by column where both files have it.

``--save FILE`` writes the figures as JSON; ``--compare FILE`` compares this run with a saved one
and exits with status 1 at the first difference it reports (every difference is listed). A
refactoring that must not change behaviour saves before and compares after: every number must be
identical, bit for bit. This is a check, not a benchmark: wall time is not recorded.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from netsim import load_topology, simulate  # noqa: E402

ALGORITHMS = ("tahoe", "reno", "newreno", "cubic", "bbr", "fast", "vegas")
TOPOLOGY_DIR = ROOT / "topologies"


def _file(name: str):
    return lambda: json.loads((TOPOLOGY_DIR / f"{name}.json").read_text())


def _impaired_dumbbell() -> dict:
    """The dumbbell with jitter, reordering, duplication and a little loss on its bottleneck."""
    data = _file("dumbbell")()
    data["name"] = "dumbbell_impaired"
    bottleneck = data["links"][0]
    bottleneck.update({"loss_rate": 0.002, "jitter_ms": 2.0, "reorder_rate": 0.01,
                       "reorder_delay_ms": 3.0, "duplicate_rate": 0.005})
    return data


def _failing_test_case_1() -> dict:
    """Test case 1 with one branch failing for a while (Bellman-Ford reroutes around it)."""
    data = _file("test_case_1")()
    data["name"] = "test_case_1_failure"
    data["events"] = [{"at_s": 3.0, "link": "L1", "action": "down"},
                      {"at_s": 9.0, "link": "L1", "action": "up"}]
    return data


CASES = {
    "test_case_0": _file("test_case_0"),
    "test_case_1": _file("test_case_1"),
    "test_case_2": _file("test_case_2"),
    "lossy_link": _file("lossy_link"),
    "dumbbell": _file("dumbbell"),
    "dumbbell_impaired": _impaired_dumbbell,
    "test_case_1_failure": _failing_test_case_1,
}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _table_hashes(table: dict) -> dict:
    return {name: _digest(column) for name, column in sorted(table.items())}


def run_case(case: str, algorithm: str) -> dict:
    """One run's figures."""
    spec = load_topology(CASES[case](), algorithm=algorithm)
    results = simulate(spec)
    summary = results.summary
    flows = {}
    for fid, flow in sorted(results.network.flows.items()):
        t, window = results.trace("flows", fid, "window_pkts")
        flows[fid] = {"finish_s": flow.finish_s, "retransmissions": flow.retransmissions,
                      "timeouts": flow.timeouts, "packets_sent": flow.packets_sent,
                      "delivered_bytes": flow.delivered_bytes,
                      "window_hash": _digest(t, window)}
    return {"events": summary["events"], "end_time_s": summary["end_time_s"],
            "stop_reason": summary["stop_reason"], "packet_hops": summary["packet_hops"],
            "flows": flows,
            "tables": {"flows": _table_hashes(results.flows), "links": _table_hashes(results.links)}}


def run_all(cases, algorithms, quiet: bool = False) -> dict:
    out = {}
    for case in cases:
        for algorithm in algorithms:
            key = f"{case}/{algorithm}"
            out[key] = run_case(case, algorithm)
            if not quiet:
                print_run(key, out[key])
    return out


def print_run(key: str, r: dict) -> None:
    print(f"{key:<32} events {r['events']:>8}  end {r['end_time_s']!r:>20}  {r['stop_reason']}")
    for fid, f in r["flows"].items():
        print(f"    {fid:<4} finish {f['finish_s']!r:>22}  retx {f['retransmissions']:>5}  "
              f"RTOs {f['timeouts']:>3}  window {f['window_hash']}")


def compare(old: dict, new: dict) -> list:
    """Every difference between two sets of figures, as lines of text."""
    problems = []
    for key in sorted(set(old) | set(new)):
        if key not in old or key not in new:
            problems.append(f"{key}: only in {'the saved' if key in old else 'this'} run")
            continue
        a, b = old[key], new[key]
        for field in ("events", "end_time_s", "stop_reason", "packet_hops"):
            if a[field] != b[field]:
                problems.append(f"{key}: {field} {a[field]!r} -> {b[field]!r}")
        if a["flows"].keys() != b["flows"].keys():
            problems.append(f"{key}: flows {sorted(a['flows'])} -> {sorted(b['flows'])}")
        for fid in sorted(set(a["flows"]) & set(b["flows"])):
            for field, value in a["flows"][fid].items():
                if b["flows"][fid].get(field) != value:
                    problems.append(f"{key} {fid}: {field} {value!r} -> {b['flows'][fid].get(field)!r}")
        for table in ("flows", "links"):
            ta, tb = a["tables"][table], b["tables"][table]
            for column in sorted(set(ta) & set(tb)):
                if ta[column] != tb[column]:
                    problems.append(f"{key}: {table} table column {column} differs")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", metavar="FILE", help="write the figures as JSON to FILE")
    parser.add_argument("--compare", metavar="FILE", help="compare with figures saved earlier")
    parser.add_argument("--only", metavar="ALGO", nargs="+", choices=ALGORITHMS,
                        help="run these algorithms only")
    parser.add_argument("--case", metavar="NAME", nargs="+", choices=sorted(CASES),
                        help="run these cases only")
    parser.add_argument("--quiet", action="store_true", help="print differences only")
    args = parser.parse_args(argv)
    figures = run_all(args.case or list(CASES), args.only or ALGORITHMS, args.quiet)
    if args.save:
        Path(args.save).write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
        print(f"saved {len(figures)} runs to {args.save}")
    if args.compare:
        saved = json.loads(Path(args.compare).read_text())
        if args.only or args.case:
            saved = {k: v for k, v in saved.items() if k in figures}
        problems = compare(saved, figures)
        for line in problems:
            print("DIFF " + line)
        if problems:
            print(f"{len(problems)} differences from {args.compare}")
            return 1
        print(f"identical to {args.compare}: {len(figures)} runs, every figure equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
