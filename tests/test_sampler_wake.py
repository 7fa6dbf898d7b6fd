"""Sleeping probes cost nothing per tick: they are compared only when nudged or due (the `arm`
protocol of simulator/sampling.py, netsim/probes.py), and the traces are byte for byte those of a
sampler that compares every sleeper at every tick."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from counting_entity import Counter

from netsim.event_trace import EventTrace
from netsim.run import Run
from simulator.engine import Simulator
from simulator.sampling import Sampler
from topologies import load_topology

ROOT = Path(__file__).resolve().parent.parent


# -- the sampler alone ---------------------------------------------------------------------------
def sampled(counters, bumps, until_s, interval_s=1.0, armed=True, ticking=False):
    """Rows of `counters` sampled every `interval_s`; `bumps` = [(time, index, notify)];
    `ticking`: with a probe that never sleeps (no tick is skipped)."""
    sim = Simulator()
    sampler = Sampler(sim, interval_s)
    table = sampler.table("t", ("k",), ("v",))
    if ticking:
        sampler.register(sampler.table("clock", ("k",), ("v",)), ("clock",),
                         lambda now, span: (span,))
    for i, c in enumerate(counters):
        sampler.register(table, (f"c{i}",), c.probe, wake=c.wake, idle_row=(0.0,),
                         arm=c.arm if armed else None)
    for at, i, notify in bumps:
        sim.schedule_at(at, lambda _, c=counters[i], n=notify: c.bump(notify=n))
    sim.schedule_at(until_s, lambda _: None)
    sampler.start()
    sim.run(until=until_s)
    sampler.finish()
    columns = table.columns()
    return list(zip(columns["time_s"], columns["k"], columns["v"])), sampler


def test_a_dormant_sleeper_is_compared_only_when_nudged():
    counters = [Counter() for _ in range(50)]
    bumps = [(0.5, i, True) for i in range(50)] + [(40.5, 7, True), (41.5, 7, True)]
    rows, sampler = sampled(counters, bumps, until_s=100.0, ticking=True)
    # one comparison when falling asleep (the token), one when the nudge comes
    assert [c.compared for c in counters[:3]] == [1, 1, 1]
    assert counters[7].compared == 3       # asleep at 2, nudged at 40.5, asleep again at 43
    assert ("c7", 1.0) in [(k, v) for t, k, v in rows if t == 41.0]
    assert [(t, v) for t, k, v in rows if k == "c7"] == [
        (1.0, 1.0), (2.0, 0.0), (40.0, 0.0), (41.0, 1.0), (42.0, 1.0), (43.0, 0.0), (100.0, 0.0)]
    assert sampler.asleep == 50 and sampler.compared == 0


def test_a_timed_sleeper_is_compared_from_its_time_and_a_polled_one_every_tick():
    class Timed(Counter):
        def arm(self, nudge):             # "nothing before 30 s", then "only when nudged"
            return 30.0 if self.value < 2 else math.inf

    timed, polled = Timed(), Counter(arm_at=-math.inf)
    bumps = [(0.5, 0, False), (0.5, 1, False), (30.5, 0, False), (30.5, 1, False)]
    rows, _ = sampled([timed, polled], bumps, until_s=50.0, ticking=True)
    # timed: token at 2, compared at 30 (unchanged: re-armed, every tick now), woken at 31,
    # token at 32, then dormant
    assert timed.compared == 4
    assert polled.compared == 1 + 29 + 1 + 18    # token at 2, ticks 3..31, token at 32, 33..50
    assert [(t, v) for t, k, v in rows if k == "c0"] == [(t, v) for t, k, v in rows if k == "c1"]


def test_armed_rows_equal_polled_rows_whatever_the_order_of_waking():
    def bumps():
        out = [(0.25 + 0.5 * i, i % 9, True) for i in range(9)]
        out += [(17.3, 4, True), (17.3, 2, True), (17.9, 8, True), (25.0, 1, True),
                (25.0, 6, True), (26.2, 4, True), (60.0, 0, True)]
        return out
    for ticking in (False, True):
        armed, _ = sampled([Counter() for _ in range(9)], bumps(), until_s=70.0, interval_s=0.7,
                           ticking=ticking)
        polled, _ = sampled([Counter() for _ in range(9)], bumps(), until_s=70.0,
                            interval_s=0.7, armed=False, ticking=ticking)
        assert armed == polled and len(armed) > 40


def test_arm_needs_a_wake_function():
    sampler = Sampler(Simulator(), 1.0)
    table = sampler.table("t", ("k",), ("v",))
    with pytest.raises(ValueError, match="arm and disarm need a wake function"):
        sampler.register(table, ("a",), lambda now, span: None, arm=lambda nudge: 0.0)


# -- whole runs: armed traces equal polled traces --------------------------------------------------
def traces(spec, *, armed: bool, duration_s=None, interval_s=0.1, event_trace=None):
    """The bytes of links.csv, flows.csv and hosts.csv of a run, and the run."""
    original, original_group = Sampler.register, Sampler.register_group

    def polling(self, table, key, probe, *, wake=None, idle_row=None, arm=None, disarm=None):
        original(self, table, key, probe, wake=wake, idle_row=idle_row)

    def polling_group(self, table, group, *, idle_row, lazy=True):   # each member, polled
        # (as ``lazy=False`` would, but through `polling`: a compiled sampler calls its own
        # `register`, not one patched onto the class)
        for i, key in enumerate(group.keys()):
            probe, wake, _, _ = group.member(i)
            polling(self, table, key, probe, wake=wake, idle_row=idle_row)

    if not armed:
        Sampler.register, Sampler.register_group = polling, polling_group
    try:
        run = Run(spec, duration_s=duration_s, interval_s=interval_s)
    finally:
        Sampler.register, Sampler.register_group = original, original_group
    if event_trace is not None:
        with EventTrace(event_trace) as trace:
            trace.install(run.network)
            run.execute()
    else:
        run.execute()
    return {name: (run.trace_dir / f"{name}.csv").read_bytes()
            for name in ("links", "flows", "hosts")}, run


def staggered(dumbbell, pairs=6, gap_s=1.3):
    data = dumbbell(pairs, total_mb=0.05 * pairs)
    for i, flow in enumerate(data["flows"]):
        flow["start_s"] = i * gap_s
    return data


def with_impairments(dumbbell):
    data = staggered(dumbbell, pairs=4)
    links = {link["id"]: link for link in data["links"]}
    links["A0"]["impairments"] = {"S0->R1": {"loss_rate": 0.02, "duplicate_rate": 0.02}}
    links["A1"]["impairments"] = {"S1->R1": {"jitter_ms": 3}}
    links["B1"]["impairments"] = {"R2->D1": {"reorder_rate": 0.1, "reorder_delay_ms": 2}}
    data["events"] = [{"at_s": 1.4, "link": "B1", "action": "down"},
                      {"at_s": 2.2, "link": "B1", "action": "up"},
                      {"at_s": 6.0, "link": "A3", "action": "down"}]
    data["duration_s"] = 12.0
    return data


def failing_while_propagating(dumbbell):
    """The link fails while the packets of an idle direction propagate: they are lost in flight
    (a counter that moves while the direction sleeps)."""
    return {"name": "long_wire", "units": "si", "hosts": ["H1", "H2"],
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 100, "delay_ms": 400,
                       "buffer_kb": 200}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.015, "start_s": 0}],
            "events": [{"at_s": 0.25, "link": "L1", "action": "down"},
                       {"at_s": 1.0, "link": "L1", "action": "up"}]}


def with_queues(dumbbell):
    data = staggered(dumbbell, pairs=3, gap_s=2.1)
    data["links"][0]["queue"] = {"discipline": "codel"}
    data["links"][1]["queue"] = {"discipline": "red", "min_kb": 20, "max_kb": 60}
    data["duplex"] = "half"
    return data


def shipped(name, duration_s=None):
    def make(dumbbell):
        data = json.loads((ROOT / "topologies" / f"{name}.json").read_text())
        if duration_s is not None:
            data["duration_s"] = duration_s
        return data
    return make


@pytest.mark.parametrize("make, interval_s", [
    (staggered, 0.1), (staggered, 0.037), (with_impairments, 0.1), (with_queues, 0.05),
    (failing_while_propagating, 0.1), (shipped("test_case_0"), 0.1),
    (shipped("test_case_1"), 0.25), (shipped("examples/websearch", duration_s=2.0), 0.05)],
    ids=["staggered", "staggered-fine", "impairments-failures", "aqm-half-duplex",
         "lost-in-flight", "tc0", "tc1", "workload"])
def test_armed_traces_are_byte_identical_to_polled_ones(dumbbell, make, interval_s):
    spec = load_topology(make(dumbbell))
    armed, run = traces(spec, armed=True, interval_s=interval_s)
    polled, _ = traces(spec, armed=False, interval_s=interval_s)
    assert armed == polled
    assert len(armed["links"].splitlines()) > 2 and len(armed["hosts"].splitlines()) > 2
    assert b",0,0\n" in armed["hosts"]   # an idle row: some host slept
    # the switched classes are undone when the run finishes
    for link in run.network.links.values():
        assert all(not type(d).__name__.startswith("Watched") for d in link.directions)


def test_armed_traces_match_with_the_event_trace_installed(dumbbell, tmp_path):
    spec = load_topology(with_impairments(dumbbell))
    armed, _ = traces(spec, armed=True, event_trace=tmp_path / "a.csv")
    polled, _ = traces(spec, armed=False, event_trace=tmp_path / "p.csv")
    assert armed == polled
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "p.csv").read_bytes()


def test_sleepers_are_not_compared_while_one_pair_is_busy(dumbbell, monkeypatch):
    """16 pairs, flows one after another: at every tick most entities sleep. Count the wake()
    calls: a polling sampler makes one per sleeper and tick, an armed one a few per sleep."""
    data = staggered(dumbbell, pairs=16, gap_s=0.6)
    calls = {"n": 0}
    original = Sampler.register

    def counting(self, table, key, probe, *, wake=None, **rest):
        def counted(wake=wake):
            calls["n"] += 1
            return wake()
        original(self, table, key, probe, wake=None if wake is None else counted, **rest)

    monkeypatch.setattr(Sampler, "register", counting)
    _, run = traces(load_topology(data), armed=True, interval_s=0.01)
    ticks = run.sim.now / 0.01
    entities = 2 * len(data["links"]) + len(data["flows"]) + len(data["hosts"])
    assert ticks > 900
    # a polling sampler: about ticks x sleepers (> 50 000 here); armed: a few per sleep
    assert calls["n"] < 0.02 * ticks * entities, (calls["n"], ticks, entities)
    assert run.sampler.compared == 0
