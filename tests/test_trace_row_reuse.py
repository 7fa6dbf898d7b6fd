"""Rows that repeat an entity's last row (netsim/traces.py `RowKey`, netsim/probes.py
`FlowProbe.last_row`): a trace file reuses the text of the very tuple it was given last for the
entity, and a flow probe hands back its last row when its figures did not change. The bytes
must be those of formatting every row."""
from __future__ import annotations

import io
import math
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim import traces
from netsim.probes import FlowProbe
from netsim.traces import TraceFile, format_float

values = st.sampled_from([math.nan, 0.0, -0.0, 1.5, 10.0, math.inf])


def formatted(time_s, key, row) -> str:
    return ",".join([format_float(time_s), key] + [format_float(v) for v in row]) + "\n"


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["A", "B"]), st.booleans(),
                                st.tuples(values, values)), min_size=1, max_size=12))
def test_a_repeated_tuple_gives_the_bytes_of_formatting_it(tmp_path_factory, steps):
    """Each step appends for entity A or B either its last tuple again (True) or a new tuple of
    maybe equal values (-0.0 against 0.0, NaN objects): the text always matches the values."""
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    trace = TraceFile(path, ("k",), ("x", "y"))
    handles = {name: trace.prepare((name,)) for name in "AB"}
    last: dict = {}
    expected = "time_s,k,x,y\n"
    for i, (name, again, fresh) in enumerate(steps):
        row = last[name] if again and name in last else tuple(float(v) for v in fresh)
        last[name] = row
        trace.append(0.1 * (i + 1), handles[name], row)
        expected += formatted(0.1 * (i + 1), name, row)
    trace.close()
    assert path.read_text(encoding="utf-8") == expected


def test_only_the_same_tuple_reuses_text(tmp_path):
    trace = TraceFile(tmp_path / "t.csv", ("k",), ("x",))
    key = trace.prepare(("A",))
    zero = (0.0,)
    trace.append(0.1, key, zero)
    trace.append(0.2, key, zero)            # the same tuple: reused
    trace.append(0.3, key, (-0.0,))         # equal to it, but another tuple: formatted
    trace.close()
    assert (tmp_path / "t.csv").read_text().splitlines() == [
        "time_s,k,x", "0.1,A,0", "0.2,A,0", "0.3,A,-0"]


IDLE = (0.0, math.nan)
BUSY = (1.5, 2.0)


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from([0.1, 0.2, 0.3]), st.booleans(),
                                st.lists(st.sampled_from("ABCD"), max_size=4),
                                st.sampled_from([IDLE, BUSY, (0.0, math.nan), (-0.0, 1.0)])),
                      min_size=1, max_size=10))
def test_a_row_appended_for_many_entities_is_that_row_appended_for_each(tmp_path_factory,
                                                                        steps):
    """`TraceFile.append_all` (a sampler group's idle members, at its first sample and at the
    end) writes the bytes of `append` for each entity in turn, whether the row is an entity's
    last tuple again, the file's last one, an equal tuple or another (a step appends alone
    (False) or for all of its entities at once)."""
    bytes_of = []
    for together in (False, True):
        path = tmp_path_factory.mktemp("trace") / "t.csv"
        trace = TraceFile(path, ("k",), ("x", "y"))
        handles = dict(zip("ABCD", trace.prepare_all([(name,) for name in "ABCD"])))
        for time_s, alone, names, row in steps:
            if together and not alone:
                trace.append_all(time_s, [handles[name] for name in names], row)
            else:
                for name in names:
                    trace.append(time_s, handles[name], row)
        trace.close()
        bytes_of.append(path.read_bytes())
    assert bytes_of[0] == bytes_of[1]


def flow(**figures):
    class Stand:
        pass
    f = Stand()
    f.__dict__.update(started=True, start_s=0.0, finish_s=None, bytes_sent=0,
                      delivered_bytes=0, arrived_bytes=0, cwnd=10.0, rtt_sum=0.0, rtt_count=0,
                      sender=None, cc=None)
    f.__dict__.update(figures)
    return f


def test_a_flow_probe_returns_its_last_row_while_nothing_changes():
    f = flow()
    probe = FlowProbe(f, 1e6)
    first = probe(0.1, 0.1)
    second = probe(0.2, 0.1)
    assert second is first and math.isnan(first[4])
    f.bytes_sent = 1000
    third = probe(0.3, 0.1)
    assert third is not second and third[0] == 1000 * 8.0 / 0.1 / 1e6
    fourth = probe(0.4, 0.1)               # no bytes in this interval: a new row
    assert fourth is not third and fourth[0] == 0.0
    assert probe(0.45, 0.05) is fourth      # nothing moved: zero rates over any span
    f.delivered_bytes = 3000
    assert probe(0.5, 0.05)[1] == 3000 * 8.0 / 0.05 / 1e6


def test_a_zero_window_or_an_algorithm_state_is_never_reused():
    # (0.0 == -0.0, but their texts differ: such rows are built anew)
    probe = FlowProbe(flow(cwnd=0.0), 1e6)
    one, two = probe(0.1, 0.1), probe(0.2, 0.1)
    assert one == two and one is not two
    f = flow()
    f.cc = type("CC", (), {"report": staticmethod(lambda: {"alpha": -0.0})})()
    probe = FlowProbe(f, 1e6, ("alpha",))
    one, two = probe(0.1, 0.1), probe(0.2, 0.1)
    assert one == two and one is not two


def test_trace_text_of_probe_rows_is_formatting_every_row(tmp_path):
    f = flow()
    probe = FlowProbe(f, 1e6)
    trace = TraceFile(tmp_path / "flows.csv", ("flow",), tuple(f"c{i}" for i in range(12)))
    key = trace.prepare(("F1",))
    out = io.StringIO()
    for tick in range(1, 9):
        if tick in (3, 6):
            f.bytes_sent += 1500
            f.rtt_sum += 0.02
            f.rtt_count += 1
        row = probe(tick / 10, 0.1)
        trace.append(tick / 10, key, row)
        out.write(formatted(tick / 10, "F1", row))
    trace.close()
    text = (tmp_path / "flows.csv").read_text()
    assert text.split("\n", 1)[1] == out.getvalue()


@settings(max_examples=200, deadline=None)
@given(ticks=st.lists(st.lists(st.tuples(st.sampled_from(["A", "B", "C"]),
                                         st.sampled_from(["fresh", "shared", "last"]),
                                         st.tuples(values, values)), max_size=8),
                      min_size=1, max_size=5))
def test_rows_of_one_time_share_texts_only_for_the_same_bits(tmp_path_factory, ticks):
    """Many rows at each time, for a few entities, as new tuples of maybe equal values (0.0 and
    -0.0, NaN objects), as one tuple shared by entities, or as the entity's last tuple: every
    text is the values' own (a text is shared by the same doubles only, never 0.0 for -0.0),
    and the rows not yet written count. (Rows are looked up from the first of each time on.)"""
    with looked_up_from(0):
        write_ticks(tmp_path_factory.mktemp("trace") / "t.csv", ticks)


def write_ticks(path, ticks) -> None:
    trace = TraceFile(path, ("k",), ("x", "y"))
    handles = {name: trace.prepare((name,)) for name in "ABC"}
    last: dict = {}
    shared = (0.0, math.nan)
    expected = "time_s,k,x,y\n"
    rows = 0
    for tick, appends in enumerate(ticks, 1):
        for name, kind, fresh in appends:
            if kind == "shared":
                row = shared
            elif kind == "last" and name in last:
                row = last[name]
            else:
                row = tuple(float(v) for v in fresh)
            last[name] = row
            trace.append(tick / 10, handles[name], row)
            expected += formatted(tick / 10, name, row)
            rows += 1
            assert len(trace) == rows
    trace.close()
    assert len(trace) == rows
    assert path.read_text(encoding="utf-8") == expected


@contextmanager
def looked_up_from(rows: int):
    """Trace files look rows up from the `rows`-th of each time on."""
    kept = traces.SHARED_AFTER_ROWS
    traces.SHARED_AFTER_ROWS = rows
    try:
        yield
    finally:
        traces.SHARED_AFTER_ROWS = kept


@pytest.mark.parametrize("after", [0, 2, traces.SHARED_AFTER_ROWS])
def test_a_negative_zero_is_not_given_the_text_of_zero(tmp_path, after):
    with looked_up_from(after):
        trace = TraceFile(tmp_path / "t.csv", ("k",), ("x",))
        for name, value in zip("ABCDEF", (0.0, -0.0, 0.0, -0.0, 1.0, 1.0)):
            trace.append(0.1, trace.prepare((name,)), (value,))    # new tuples of equal values
        trace.close()
    assert (tmp_path / "t.csv").read_text().splitlines() == [
        "time_s,k,x", "0.1,A,0", "0.1,B,-0", "0.1,C,0", "0.1,D,-0", "0.1,E,1", "0.1,F,1"]
