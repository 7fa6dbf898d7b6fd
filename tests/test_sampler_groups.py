"""A group registered with the sampler (`Sampler.register_group`) writes the rows of its members
registered one by one, in the same order, while its members idle since the start get no probe:
on a toy group (members active before the first sample, waking later in any order, nudged
without a change, nudged after the last tick) and on whole runs of generated networks, whose
link directions are such a group (netsim/probes.py `DirectionGroup`)."""
from __future__ import annotations

import pytest
from counting_entity import Counter

from netsim.run import Run
from simulator.engine import Simulator
from simulator.sampling import Sampler
from topologies import load_topology
from topologies.generate import Common, fat_tree, random_graph


# -- the sampler alone ---------------------------------------------------------------------------
class CounterGroup:
    """Counters as a sampler group; a member sleeping without a probe is watched by a nudge."""

    token = 0

    def __init__(self, counters):
        self.counters = counters
        self.made: set = set()

    def __len__(self):
        return len(self.counters)

    def keys(self):
        return [(f"g{i}",) for i in range(len(self.counters))]

    def member(self, i):
        self.made.add(i)
        c = self.counters[i]
        return c.probe, c.wake, c.arm, None

    def idle(self):
        return [c.value == 0 and i not in self.made for i, c in enumerate(self.counters)]

    def sleep(self, members, wake):
        for i in members:
            def woke(c=self.counters[i], i=i):
                c.nudge = None
                wake(i)
            self.counters[i].nudge = woke

    def unwatch(self, members):
        for i in members:
            self.counters[i].nudge = None


def sampled_group(bumps, *, lazy, until_s=12.0, late=()):
    """Rows of a table holding a counter, a group of 8 and another counter; `bumps` = [(time,
    member or "a"/"z", by)], `late`: bumps scheduled after the tick at the same time."""
    sim = Simulator()
    sampler = Sampler(sim, 1.0)
    table = sampler.table("t", ("k",), ("v",))
    alone = {"a": Counter(), "z": Counter()}
    group = CounterGroup([Counter() for _ in range(8)])
    sampler.register(table, ("a",), alone["a"].probe, wake=alone["a"].wake, idle_row=(0.0,),
                     arm=alone["a"].arm)
    sampler.register_group(table, group, idle_row=(0.0,), lazy=lazy)
    sampler.register(table, ("z",), alone["z"].probe, wake=alone["z"].wake, idle_row=(0.0,),
                     arm=alone["z"].arm)

    def bump(who, by):
        def event(_):
            (alone[who] if isinstance(who, str) else group.counters[who]).bump(by)
        return event

    for at, who, by in bumps:
        sim.schedule_at(at, bump(who, by))
    def later(at, event):            # scheduled half an interval before: after that time's tick
        return lambda _: sim.schedule_at(at, event)

    for at, who, by in late:
        sim.schedule_at(at - 0.5, later(at, bump(who, by)))
    sim.schedule_at(until_s, lambda _: None)
    sampler.start()
    sim.run(until=until_s)
    sampler.finish()
    columns = table.columns()
    return list(zip(columns["time_s"], columns["k"], columns["v"])), sampler, group


BUMPS = [(0.3, 2, 1), (0.4, "z", 1), (0.6, 5, 1), (2.5, 7, 1), (2.5, 1, 1), (2.7, 4, 1),
         (3.2, 1, 1), (4.5, 6, 0), (5.5, 3, 1), (5.5, 0, 1), (7.1, "a", 1), (7.2, 6, 1),
         (9.9, 5, 1)]


@pytest.mark.parametrize("late", [(), ((12.0, 3, 1), (12.0, 0, 0))], ids=["", "after-last-tick"])
def test_a_group_writes_the_rows_of_its_members_registered_one_by_one(late):
    lazy, sampler, group = sampled_group(BUMPS, lazy=True, late=late)
    eager, _, _ = sampled_group(BUMPS, lazy=False, late=late)
    assert lazy == eager
    assert [k for t, k, v in lazy if t == 1.0] == ["a"] + [f"g{i}" for i in range(8)] + ["z"]
    assert group.made == set(range(8))      # each member was bumped (or nudged) at some point
    assert sampler.asleep == 10


def test_a_run_ending_at_the_first_sample_closes_no_gap():
    # the finish writes no second idle row at the time of the first one (`Sampler.finish`)
    lazy, sampler, _ = sampled_group(BUMPS[:1], lazy=True, until_s=1.0)
    eager, _, _ = sampled_group(BUMPS[:1], lazy=False, until_s=1.0)
    assert lazy == eager
    assert len(lazy) == 10 and sampler.asleep == 9       # (g2 awake)


def test_a_member_idle_all_along_gets_no_probe():
    bumps = [(0.3, 2, 1), (5.5, 3, 1), (6.1, 6, 0)]
    lazy, sampler, group = sampled_group(bumps, lazy=True)
    eager, _, _ = sampled_group(bumps, lazy=False)
    assert lazy == eager
    assert group.made == {2, 3, 6}          # active at the first sample, woken, nudged
    assert sampler.asleep == 10
    # an idle member: its row where it fell asleep and at the end, nothing between
    assert [(t, v) for t, k, v in lazy if k == "g5"] == [(1.0, 0.0), (12.0, 0.0)]


# -- whole runs: the directions of generated networks ----------------------------------------------
def run_files(spec, *, lazy: bool):
    """The bytes of a run's trace files, its summary (no wall time), events, and the run."""
    original = Sampler.register_group

    def eager(self, table, group, *, idle_row, lazy=True):
        original(self, table, group, idle_row=idle_row, lazy=False)

    if not lazy:
        Sampler.register_group = eager
    try:
        run = Run(spec)
    finally:
        Sampler.register_group = original
    results = run.execute()
    files = {name: (run.trace_dir / f"{name}.csv").read_bytes()
             for name in ("links", "flows", "hosts", "routes")}
    summary = {k: v for k, v in results.summary.items() if k != "wall_time_s"}
    return files, summary, run.sim.events, run


def spread(data: dict, *, half_duplex=False, failure=None) -> dict:
    if half_duplex:
        data["duplex"] = "half"
    if failure is not None:
        data["events"] = [{"at_s": 0.35, "link": failure, "action": "down"},
                          {"at_s": 0.6, "link": failure, "action": "up"}]
    return data


@pytest.mark.parametrize("make", [
    lambda: random_graph(300, hosts=16, common=Common(flows=8, data_mb=0.2, start_spread_s=1.5)),
    lambda: fat_tree(4, common=Common(flows=6, data_mb=0.2, start_spread_s=0.8, ecmp="flow")),
    lambda: spread(random_graph(120, hosts=10, common=Common(flows=5, data_mb=0.1,
                                                             start_spread_s=1.0)),
                   half_duplex=True, failure="r0-r1"),
], ids=["random-graph", "fat-tree-ecmp", "half-duplex-failure"])
def test_lazy_directions_give_the_eager_run(make):
    spec = load_topology(make())
    files, summary, events, run = run_files(spec, lazy=True)
    eager_files, eager_summary, eager_events, _ = run_files(spec, lazy=False)
    assert files == eager_files and summary == eager_summary and events == eager_events
    group = run.sampler._groups[0].group            # the run's DirectionGroup
    assert len(group) == 2 * len(spec.links)
    assert 0 < len(group.probes) < len(group)         # idle directions never got a probe
    # the switched classes are undone when the run finishes
    assert all(not type(d).__name__.startswith("Watched") for d in group.directions)
    assert not group.watch.members and not group.watch.probes    # (released all at once)
