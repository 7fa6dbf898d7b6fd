"""Structured fuzzing of both kinds of input file: a valid topology and a valid sweep file, each
with one field replaced by an arbitrary JSON value (huge and tiny numbers, formula-like strings,
lists, objects, null), removed, or joined by an unknown field. Whatever the mutation, loading
gives a spec or exactly one printable line of the loader's error class, a loaded topology runs
(briefly) without an exception, and a sweep file never imports anything it names."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGY = {
    "name": "fuzz", "duration_s": 1, "seed": 3, "units": "si",
    "packet_bytes": {"data": 1000, "ack": 40}, "transport": {"min_rto_s": 0.2},
    "hosts": ["H1", "H2", "H3"], "routers": ["R1"],
    "links": [{"id": "L1", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 2, "buffer_kb": 50},
              {"id": "L2", "ends": ["R1", "H2"], "rate_mbps": 5, "delay_ms": 5, "buffer_kb": 20,
               "loss_rate": 0.01, "rate_schedule": [[0.5, 2]]},
              {"id": "L3", "ends": ["R1", "H3"], "rate_mbps": 5, "delay_ms": 1, "buffer_kb": 20}],
    "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.2, "algorithm": "fast"},
              {"id": "F2", "src": "H3", "dst": "H2", "start_s": 0.1, "algorithm": "cubic"},
              {"id": "C1", "kind": "onoff", "src": "H1", "dst": "H3", "rate_mbps": 1, "on_s": 0.1,
               "off_s": 0.1}],
    "workloads": [{"id": "W", "src": ["H1"], "dst": ["H2", "H3"], "arrivals_per_s": 20,
                   "sizes": "websearch", "stop_s": 0.8}],
    "events": [{"at_s": 0.3, "link": "L3", "action": "down"},
               {"at_s": 0.6, "link": "L3", "action": "up"}],
}
SWEEP = {
    "name": "fuzzsweep", "topology": "lossy_link", "duration_s": 0.5, "interval_s": 0.1,
    "parameters": {"links.L1.delay_ms": [1, 5], "flows.*.algorithm": {"values": ["reno", "cubic"],
                                                                       "labels": ["R", "C"]}},
    "combine": "zip", "seeds": [1, 2], "plugins": ["payload.py"],
    "metrics": ["flows.F1.goodput_mbps", "jain_index", "check.0.F1.rate_mbps.error_pct"],
    "plots": [{"file": "g.png", "x": "links.L1.delay_ms", "y": "flows.F1.goodput_mbps",
               "theory": {"model": "mathis"}}],
}

SCALARS = (st.none() | st.booleans() | st.integers(-10**20, 10**20)
           | st.sampled_from([0, 0.0, -1, 1e-300, 1e-9, 1e6, 1e6 + 1, 1e15, 1e308, 2**63])
           | st.floats(allow_nan=False, allow_infinity=False)
           | st.sampled_from(["", "=1+1", "+A1", "-2", "@SUM(A1)", "\tX", "../x", "a\nb", ".x",
                              "H1", "L1", "F1", "reno", "fast", "payload.py", "/etc/passwd"])
           | st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def paths(value, prefix=()):
    """Every (container path, key) of a JSON document."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix, key
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield prefix, index
            yield from paths(item, prefix + (index,))


def mutate(data, document: dict) -> dict:
    out = copy.deepcopy(document)
    where, key = data.draw(st.sampled_from(list(paths(out))))
    parent = out
    for part in where:
        parent = parent[part]
    action = data.draw(st.sampled_from(["replace", "replace", "replace", "remove", "add"]))
    if action == "replace":
        parent[key] = data.draw(VALUES)
    elif action == "remove":
        del parent[key]
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=8))] = data.draw(VALUES)
    else:
        parent.append(data.draw(VALUES))
    return out


def assert_one_line(exc) -> None:
    message = str(exc)
    assert message and len(message.splitlines()) == 1 and message.isprintable(), repr(message)


@settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", 150)), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_mutated_topology_loads_and_runs_or_is_one_line(data):
    from netsim.run import Run
    from topologies.loader import TopologyError, load_topology
    document = mutate(data, TOPOLOGY)
    try:
        spec = load_topology(document)
    except TopologyError as exc:
        assert_one_line(exc)
        return
    duration_s = min(spec.duration_s or 0.3, 0.3)
    for flow in spec.flows:   # a fast cbr or onoff source is a long run, not an error: the
        if flow.kind != "bulk":                            # first 20 000 of its packets
            gap_s = spec.packet_sizes.data_bytes * 8.0 / flow.rate_bps
            duration_s = min(duration_s, max(20_000 * gap_s, 1e-6))
    try:
        simulation = Run(spec, duration_s=duration_s, interval_s=0.05)
    except ValueError as exc:                          # RunError: one line too
        assert_one_line(exc)
        return
    summary = simulation.execute().summary
    json.loads(json.dumps(summary, allow_nan=False))   # strict JSON (NaN only as null)


@settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", 150)), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_mutated_sweep_file_loads_or_is_one_line_and_never_runs_code(tmp_path_factory, data):
    from netsim.sweep import plan
    from netsim.sweep_file import SweepError, load_sweep
    folder = tmp_path_factory.mktemp("sweep")
    (folder / "payload.py").write_text('open(__file__ + ".RAN", "w").close()\n')
    path = folder / "s.json"
    path.write_text(json.dumps(mutate(data, SWEEP)))
    try:
        sweep = load_sweep(path)
    except SweepError as exc:
        assert_one_line(exc)
    else:
        assert all(len(run.digest) == 64 for run in plan(sweep))
    assert not (folder / "payload.py.RAN").exists()
