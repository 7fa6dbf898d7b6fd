"""The summary's fast paths (netsim/results.py, netsim/results_dir.py) against the ways they
replace: flows read through their parts against through their properties, counters read by one
getter against their definition, rounding once per value against `_round`, idle directions
copied from a key-sharing template, constant and scalar columns, and summary.json written in
pieces against the whole text."""
from __future__ import annotations

import json
import math
from operator import attrgetter

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from json_layout_reference import reference_text, tricky_scalars  # (the layout by its definition)

import netsim.results as results_module
import netsim.results_dir as results_dir
from flows.sender_view import COUNTERS
from netsim.probes import flow_counters
from netsim.results import IDLE_DIRECTION, _key_sharing, _round, _Rounded
from netsim.results_dir import indented_json_text, write_indented_json
from netsim.run import Run, simulate
from topologies.loader import load_topology

ALGORITHMS = ("reno", "cubic", "bbr", "vegas", "dctcp")


def mixed_network(stack: str | None = None):
    """Two hosts behind a bottleneck, a flow of each of several algorithms (some finishing,
    some not), with ECN on one."""
    flows = [{"id": f"F{i}", "src": "H1", "dst": "H2", "algorithm": algorithm,
              "data_mb": 0.05 if i % 2 else None, "start_s": 0.01 * i,
              **({"ecn": True} if algorithm == "dctcp" else {})}
             for i, algorithm in enumerate(ALGORITHMS)]
    spec = {"hosts": ["H1", "H2"], "routers": ["R1", "R2"], "duration_s": 0.6,
            "links": [{"id": "A", "ends": ["H1", "R1"], "rate_mbps": 100, "delay_ms": 1,
                       "buffer_kb": 200},
                      {"id": "L", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 5,
                       "buffer_kb": 30, "queue": {"discipline": "red", "min_kb": 5, "max_kb": 20,
                                                  "ecn": True}},
                      {"id": "B", "ends": ["R2", "H2"], "rate_mbps": 100, "delay_ms": 1,
                       "buffer_kb": 200}],
            "flows": flows}
    return load_topology(spec, stack=stack)


@pytest.mark.parametrize("stack", [None, "linux"])
def test_flows_read_through_their_parts_as_through_their_properties(stack, monkeypatch):
    spec = mixed_network(stack)
    run = Run(spec)
    results = run.execute()
    end_s = run.sim.now
    fast = results._flow_summaries(run, end_s)
    monkeypatch.setattr(results_module, "Flow", type("NotAFlow", (), {}))   # every flow: generic
    generic = results._flow_summaries(run, end_s)
    assert json.dumps(fast) == json.dumps(generic) and fast == generic
    assert any(entry["completed"] for entry in fast.values())
    assert any(not entry["completed"] for entry in fast.values())


@pytest.mark.parametrize("stack", [None, "linux"])
def test_counters_read_by_one_getter_are_each_at_its_path(stack):
    """`Sender.counters()` (one getter per set of counter paths, flows/sender_view.py) against
    its definition: each counter at its path, 0 for a mechanism the sender does not run."""
    results = simulate(mixed_network(stack))
    moved = False
    for flow in results.network.flows.values():
        sender = flow.sender
        want = {name: attrgetter(path)(sender) if path is not None else 0
                for name, path in zip(COUNTERS, sender.counter_paths())}
        counters = flow_counters(flow)
        assert list(counters.items()) == list(want.items())
        assert counters is not flow_counters(flow)             # each call its own dict
        moved = moved or any(counters.values())
    assert moved


def test_a_sender_with_its_own_counters_is_asked():
    class Sender:
        def counters(self):
            return {"custom": 3}

    class Flow:
        sender = Sender()

    assert flow_counters(Flow()) == {"custom": 3}


@given(st.lists(tricky_scalars.filter(lambda v: isinstance(v, (int, float))), max_size=30))
def test_rounding_once_per_value_is_rounding_each(values):
    rounded = _Rounded()
    for value in values + values:
        got, want = rounded[value], _round(value)
        assert got == want or (math.isnan(got) and math.isnan(want))
        assert math.copysign(1.0, got) == math.copysign(1.0, want) and type(got) is type(want)


def test_an_idle_entry_is_an_ordinary_copy_of_idle_direction():
    template = _key_sharing(IDLE_DIRECTION)
    entry = template.copy()
    assert type(entry) is dict and entry == IDLE_DIRECTION and entry is not template
    assert list(entry) == list(IDLE_DIRECTION)
    assert all(entry[key] is value for key, value in IDLE_DIRECTION.items())
    entry["drops"] = 1                       # changing one changes no other
    entry["new"] = 2
    assert template == IDLE_DIRECTION and template.copy() == IDLE_DIRECTION


same_objects = st.sampled_from([-0.0, 0.0, 0, False, True, 1, 1.0, math.nan, math.inf, "x", None])


@given(same_objects, st.integers(2, 6),
       st.lists(st.tuples(same_objects | tricky_scalars, st.integers(0, 8)), max_size=2))
@example(-0.0, 3, [(0.0, 1)])
@example(0.0, 3, [(-0.0, 2)])
@example(1.0, 2, [(1, 1)])
@example(False, 2, [(0, 1)])
def test_constant_and_nearly_constant_columns_are_written_as_each_value(value, count, odd):
    """A field holding one value (object) in every record, and the same with a few others
    (equal or not: 0 among 0.0, -0.0 among 0.0, 1 among 1.0) at given places."""
    column = [value] * count
    for other, place in odd:
        column.insert(min(place, len(column)), other)
    summary = {"flows": {f"F{i}": {"a": item, "b": i} for i, item in enumerate(column)},
               "column": column}
    assert indented_json_text(summary) == reference_text(summary)


def test_the_summary_written_in_pieces_is_the_text(tmp_path, monkeypatch):
    summary = simulate(mixed_network()).summary
    monkeypatch.setattr(results_dir, "PIECES_PER_WRITE", 7)
    write_indented_json(tmp_path / "summary.json", summary)
    assert (tmp_path / "summary.json").read_bytes() == \
        (indented_json_text(summary) + "\n").encode("ascii")
    assert indented_json_text(summary) == reference_text(summary)
