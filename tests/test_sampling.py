"""Tests of simulator.sampling: sample instants, spans, skipped rows, the last interval, Table."""
from __future__ import annotations

import pytest
from counting_entity import Counter

from simulator.engine import Simulator
from simulator.sampling import Sampler, Table


class Probe:
    """Records every (now, span) it is called with and returns (now, span), or None when
    `skip(call_index)` says so."""

    def __init__(self, skip=lambda k: False):
        self.calls = []
        self.skip = skip

    def __call__(self, now, span):
        self.calls.append((now, span))
        if self.skip(len(self.calls) - 1):
            return None
        return (now, span)


def make(interval=0.1, origin=0.0, skip=lambda k: False):
    sim = Simulator()
    if origin:
        sim.run(until=origin)
    sampler = Sampler(sim, interval)
    table = sampler.table("t", ("entity",), ("now", "span"))
    probe = Probe(skip)
    sampler.register(table, ("e1",), probe)
    return sim, sampler, table, probe


def test_rows_at_exact_multiples_of_the_interval():
    sim, sampler, table, probe = make(0.1)
    sampler.start()
    sim.run(until=0.35)
    expected = [0.0 + k * 0.1 for k in (1, 2, 3)]
    assert list(table.time_s) == expected          # 0.30000000000000004, not 0.1+0.1+0.1
    assert [now for now, _ in probe.calls] == expected


def test_sample_times_do_not_drift_over_many_intervals():
    sim, sampler, table, _ = make(0.1)
    sampler.start()
    sim.run(until=1000.05)
    assert len(table) == 10_000
    assert list(table.time_s) == [k * 0.1 for k in range(1, 10_001)]
    assert table.time_s[-1] == 1000.0


def test_rows_from_a_nonzero_origin():
    sim, sampler, table, probe = make(0.1, origin=0.25)
    assert sim.now == 0.25
    sampler.start()
    sim.run(until=0.6)
    expected = [0.25 + k * 0.1 for k in (1, 2, 3)]
    assert list(table.time_s) == expected
    # the first span is measured from the origin, not from 0
    assert [span for _, span in probe.calls] == [expected[0] - 0.25, expected[1] - expected[0],
                                                expected[2] - expected[1]]


def test_span_is_the_time_since_the_previous_sample():
    sim, sampler, table, probe = make(0.1)
    sampler.start()
    sim.run(until=0.45)
    times = [k * 0.1 for k in range(1, 5)]
    previous = [0.0] + times[:-1]
    assert probe.calls == [(t, t - p) for t, p in zip(times, previous)]
    assert list(table.values[1]) == [t - p for t, p in zip(times, previous)]
    assert all(span == pytest.approx(0.1, rel=1e-12) for _, span in probe.calls)


def test_probe_returning_none_skips_the_row_but_not_the_interval():
    # Skip the 2nd and 3rd calls: no rows at 0.2, 0.3, and the row at 0.4 covers only (0.3, 0.4].
    sim, sampler, table, probe = make(0.1, skip=lambda k: k in (1, 2))
    sampler.start()
    sim.run(until=0.45)
    assert len(probe.calls) == 4
    assert list(table.time_s) == [0.1, 0.4]
    assert list(table.values[1]) == [0.1, 0.4 - 0.30000000000000004]
    assert table.keys == [["e1", "e1"]]


def test_finish_records_a_last_shorter_interval():
    sim, sampler, table, probe = make(0.1)
    sampler.start()
    sim.run(until=0.35)
    sampler.finish()
    assert list(table.time_s) == [0.1, 0.2, 0.30000000000000004, 0.35]
    assert probe.calls[-1] == (0.35, 0.35 - 0.30000000000000004)
    # after finish the sampler records nothing more
    sim.run(until=2.0)
    assert len(table) == 4
    assert len(probe.calls) == 4


def test_finish_on_a_sample_instant_adds_no_empty_row():
    sim, sampler, table, probe = make(0.25)
    sampler.start()
    sim.run(until=0.5)
    sampler.finish()
    assert list(table.time_s) == [0.25, 0.5]
    assert len(probe.calls) == 2


def test_finish_before_first_interval():
    sim, sampler, table, probe = make(0.1)
    sampler.start()
    sim.run(until=0.04)
    sampler.finish()
    assert list(table.time_s) == [0.04]
    assert probe.calls == [(0.04, 0.04)]


def test_several_probes_and_tables():
    sim = Simulator()
    sampler = Sampler(sim, 0.5)
    links = sampler.table("links", ("link", "direction"), ("x",))
    hosts = sampler.table("hosts", ("host",), ("y", "z"))
    assert sampler.table("links", ("ignored",), ("ignored",)) is links
    counter = {"n": 0}

    def link_probe(name):
        def probe(now, span):
            counter["n"] += 1
            return (float(counter["n"]),)
        return probe

    sampler.register(links, ("L1", "A->B"), link_probe("ab"))
    sampler.register(links, ["L1", "B->A"], link_probe("ba"))
    sampler.register(hosts, ("H1",), lambda now, span: (now * 2, span * 4))
    sampler.start()
    sim.run(until=1.0)
    assert list(links.time_s) == [0.5, 0.5, 1.0, 1.0]
    assert links.keys == [["L1", "L1", "L1", "L1"], ["A->B", "B->A", "A->B", "B->A"]]
    assert list(links.values[0]) == [1.0, 2.0, 3.0, 4.0]
    assert list(hosts.time_s) == [0.5, 1.0]
    assert hosts.keys == [["H1", "H1"]]
    assert [list(v) for v in hosts.values] == [[1.0, 2.0], [2.0, 2.0]]
    assert sampler.tables == {"links": links, "hosts": hosts}


def test_sampler_does_not_keep_run_alive_past_until():
    sim, sampler, table, _ = make(0.1)
    sampler.start()
    sim.run(until=0.15)
    assert sim.pending == 1                     # only the next tick
    assert sim.peek() == 0.2


@pytest.mark.parametrize("bad", [0.0, -0.1, float("nan")])
def test_interval_must_be_positive(bad):
    with pytest.raises(ValueError):
        Sampler(Simulator(), bad)


def test_table_columns_order_and_content():
    table = Table(("link", "direction"), ("rate", "buffer", "drops"))
    table.append(0.1, ("L1", "A->B"), (1.0, 2.0, 3.0))
    table.append(0.2, ("L2", "B->A"), (4.0, 5.0, 6.0))
    columns = table.columns()
    assert list(columns) == ["time_s", "link", "direction", "rate", "buffer", "drops"]
    assert list(columns["time_s"]) == [0.1, 0.2]
    assert columns["link"] == ["L1", "L2"]
    assert columns["direction"] == ["A->B", "B->A"]
    assert list(columns["rate"]) == [1.0, 4.0]
    assert list(columns["buffer"]) == [2.0, 5.0]
    assert list(columns["drops"]) == [3.0, 6.0]
    assert len(table) == 2


def test_empty_table():
    table = Table(("flow",), ("a",))
    assert len(table) == 0
    assert list(table.columns()) == ["time_s", "flow", "a"]


def test_restarting_after_finish_samples_on_the_new_grid_only():
    from simulator.engine import Simulator
    from simulator.sampling import Sampler
    sim = Simulator()
    sampler = Sampler(sim, 0.25)
    table = sampler.table("t", ("k",), ("v",))
    sampler.register(table, ("a",), lambda now, span: (span,))
    sampler.start()
    sim.run(until=0.375)
    sampler.finish()
    sampler.start()
    sim.run(until=1.5)
    assert list(table.time_s) == [0.25, 0.375, 0.625, 0.875, 1.125, 1.375]


# -- sleeping probes: idle entities cost nothing, idle gaps are bounded by idle rows -------------
def sleepy(interval=0.1):
    sim = Simulator()
    sampler = Sampler(sim, interval)
    table = sampler.table("t", ("entity",), ("delta",))
    entity = Counter()
    sampler.register(table, ("e",), entity.probe, wake=entity.wake, idle_row=(0.0,))
    return sim, sampler, table, entity


def bump(entity, amount=1):
    def event(_):
        entity.value += amount
    return event


def test_a_sleeping_probe_is_not_called_and_gaps_are_bounded_by_idle_rows():
    sim, sampler, table, entity = sleepy()
    sim.schedule_at(0.05, bump(entity))
    sim.schedule_at(1.05, bump(entity, 3))
    sampler.start()
    sim.run(until=1.5)
    sampler.finish()
    rows = list(zip(table.time_s, table.values[0]))
    # 0.1: the bump; 0.2: first idle interval (idle row); nothing until the idle row that ends
    # the last idle interval (1.0) before the next bump (1.1); 1.2 idle; the end (1.5) closes it
    assert [(round(t, 9), v) for t, v in rows] == [(0.1, 1.0), (0.2, 0.0), (1.0, 0.0), (1.1, 3.0),
                                                   (1.2, 0.0), (1.5, 0.0)]
    assert entity.calls == 4                 # 0.1, 0.2, then 1.1, 1.2: not the idle ticks


def test_an_entity_idle_from_the_start_gets_a_first_and_a_last_row():
    sim, sampler, table, entity = sleepy()
    sim.schedule_at(0.75, lambda _: None)   # something else keeps the run going
    sampler.start()
    sim.run(until=1.0)
    sampler.finish()
    assert [round(t, 9) for t in table.time_s] == [0.1, 1.0]
    assert list(table.values[0]) == [0.0, 0.0]


def test_ticks_are_skipped_while_everything_sleeps():
    sim, sampler, table, entity = sleepy(interval=0.1)
    sim.schedule_at(0.05, bump(entity))
    sim.schedule_at(10_000.05, bump(entity, 2))
    sampler.start()
    sim.run()
    sampler.finish()
    assert sim.events < 20                   # not 100 000 ticks
    times = [round(t, 6) for t in table.time_s]
    values = list(table.values[0])
    assert times[:2] == [0.1, 0.2] and values[:2] == [1.0, 0.0]
    assert (10000.0, 0.0) in zip(times, values)          # idle row before the wake-up ...
    assert (10000.1, 2.0) in zip(times, values)          # ... and the change, over one interval
    assert sampler.asleep == 1


def test_skipped_ticks_do_not_stretch_the_span_of_the_next_interval():
    spans = []
    sim = Simulator()
    sampler = Sampler(sim, 0.5)
    table = sampler.table("t", ("k",), ("span",))
    state = {"value": 0, "seen": 0}

    def probe(now, span):
        if state["value"] == state["seen"]:
            return None
        state["seen"] = state["value"]
        spans.append(span)
        return (span,)

    sampler.register(table, ("k",), probe, wake=lambda: state["value"], idle_row=(0.0,))
    sim.schedule_at(100.2, lambda _: state.update(value=1))
    sampler.start()
    sim.run()
    sampler.finish()
    assert spans == [0.5]


def test_skip_keeps_a_probe_awake_without_a_row():
    from simulator.sampling import SKIP
    sim = Simulator()
    sampler = Sampler(sim, 0.1)
    table = sampler.table("t", ("k",), ("v",))
    answers = iter([SKIP, SKIP, (1.0,), None])
    sampler.register(table, ("k",), lambda now, span: next(answers), wake=lambda: 0)
    sampler.start()
    sim.run(until=0.45)
    assert [round(t, 9) for t in table.time_s] == [0.3]
    assert sampler.asleep == 1


def test_idle_row_needs_a_wake_function():
    sampler = Sampler(Simulator(), 0.1)
    with pytest.raises(ValueError, match="idle_row needs a wake function"):
        sampler.register(sampler.table("t", ("k",), ("v",)), ("k",), lambda n, s: None,
                         idle_row=(0.0,))
