"""The event heap stays as wide as the busy links (simulator/engine.py lines, components/link.py):
events on a line run exactly when and in the order one heap entry each would have run them; a
link with thousands of packets in flight holds one heap entry; `step` processes one event."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.link import Link
from components.node import Host
from components.packet import DATA, Packet
from simulator.engine import SchedulingError, Simulator, Timer


def replay(ops, use_lines: bool):
    """Schedule `ops` -- (at, line index or None, delay) at integer times -- and return the order
    in which the scheduled events ran, as (time, name). With `use_lines`, events of a line index
    go on that line; otherwise every event is a plain schedule_at."""
    sim = Simulator()
    lines = {}
    log = []

    def record(name):
        log.append((sim.now, name))

    def act(op):
        i, (line, delay) = op
        if line is None or not use_lines:
            sim.schedule_at(sim.now + delay, record, i)
        else:
            sim.schedule_line(lines.setdefault(line, sim.line()), sim.now + delay, record, i)

    for i, (at, line, delay) in enumerate(ops):
        sim.schedule_at(float(at), act, (i, (line, delay)))
    sim.run()
    return log, sim.events


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from([None, 0, 1, 2]),
                          st.sampled_from([0.0, 0.5, 1.0, 1.5, 3.0])), max_size=40))
def test_lines_run_events_in_the_order_of_plain_entries(ops):
    # Delays may put an event of a line before the line's last one (out of order): it then gets
    # an entry of its own, and the order is still that of plain entries, ties included.
    assert replay(ops, True) == replay(ops, False)


def test_a_line_holds_one_heap_entry():
    sim = Simulator()
    line = sim.line()
    seen = []
    for i in range(1000):
        sim.schedule_line(line, 1.0 + i * 1e-3, seen.append, i)
    assert sim.pending == 1
    sim.schedule_at(0.5, seen.append, "plain")
    assert sim.pending == 2
    sim.run()
    assert seen == ["plain", *range(1000)]
    assert sim.events == 1001
    assert sim.pending == 0 and not line


def test_an_event_before_the_end_of_its_line_gets_its_own_entry():
    sim = Simulator()
    line = sim.line()
    seen = []
    sim.schedule_line(line, 2.0, seen.append, "b")
    sim.schedule_line(line, 1.0, seen.append, "a")        # earlier than the line's last
    assert sim.pending == 2 and len(line) == 1
    sim.run()
    assert seen == ["a", "b"]


def test_a_line_in_the_past_is_refused():
    sim = Simulator()
    line = sim.line()
    sim.run(until=5.0)
    with pytest.raises(SchedulingError):
        sim.schedule_line(line, 4.0, print)
    sim.schedule_line(line, 6.0, print)
    with pytest.raises(SchedulingError):
        sim.schedule_line(line, 4.5, print)               # out of order and in the past
    assert sim.pending == 1


def test_step_processes_one_event_at_a_time():
    sim = Simulator()
    line = sim.line()
    seen = []
    sim.schedule_line(line, 1.0, seen.append, "a")
    sim.schedule_line(line, 3.0, seen.append, "c")
    sim.schedule_at(2.0, seen.append, "b")
    assert sim.step() and seen == ["a"] and sim.now == 1.0
    assert sim.step() and seen == ["a", "b"] and sim.now == 2.0
    assert sim.step() and seen == ["a", "b", "c"] and sim.now == 3.0
    assert not sim.step()
    assert sim.events == 3 and sim.now == 3.0


def test_step_and_run_agree():
    def build():
        sim = Simulator()
        line = sim.line()
        seen = []
        for i in range(50):
            sim.schedule_line(line, i * 0.1, seen.append, ("line", i))
            sim.schedule_at(i * 0.1, seen.append, ("plain", i))
        return sim, seen

    a, seen_a = build()
    a.run()
    b, seen_b = build()
    while b.step():
        pass
    assert seen_a == seen_b and a.events == b.events and a.now == b.now


def test_a_link_with_many_packets_in_flight_holds_one_heap_entry():
    """10 000 packets propagating on a 1 s link: one heap entry, and they arrive in order."""
    sim = Simulator()
    a, b = Host("A"), Host("B")
    Link(sim, "L", a, b, 1e9, 1.0, 10_000_000)
    arrived = []

    def deliver(packet):
        arrived.append(packet.seq)

    def burst(_):
        for seq in range(10_000):
            a.send(Packet(DATA, a, b, 1000, deliver, seq=seq))
        assert sim.pending == 1

    sim.schedule_at(0.0, burst)
    sim.run()
    assert arrived == list(range(10_000))
    assert sim.now == pytest.approx(1.0 + 10_000 * 8e-6)


def test_a_half_duplex_link_shares_one_line_between_its_directions():
    sim = Simulator()
    a, b = Host("A"), Host("B")
    Link(sim, "L", a, b, 1e6, 0.5, 100_000, duplex="half")
    arrived = []

    def deliver(packet):
        arrived.append((packet.src.id, packet.seq))

    def send(_):
        for seq in range(5):
            a.send(Packet(DATA, a, b, 500, deliver, seq=seq))
            b.send(Packet(DATA, b, a, 500, deliver, seq=seq))
        assert sim.pending == 1

    sim.schedule_at(0.0, send)
    sim.run()
    assert arrived == [(end, seq) for seq in range(5) for end in ("A", "B")]


# -- parked timer entries -------------------------------------------------------------------------
class PlainTimer:
    """`Timer`'s logic with every entry a plain heap entry (`schedule_at`): the engine before
    timer entries were parked."""

    def __init__(self, sim: Simulator, callback):
        self.sim, self.callback = sim, callback
        self.deadline, self.active, self.token, self.pending, self.pending_time = 0.0, False, 0, None, 0.0

    def start(self, delay_s: float) -> None:
        self.deadline, self.active = self.sim.now + delay_s, True
        if self.pending is None or self.pending_time > self.deadline:
            self._push(self.deadline)

    def cancel(self) -> None:
        self.active = False

    def _push(self, time_s: float) -> None:
        self.token += 1
        self.pending, self.pending_time = self.token, time_s
        self.sim.schedule_at(time_s, self._fire, self.token)

    def _fire(self, token: int) -> None:
        if token != self.pending:
            return
        self.pending = None
        if not self.active:
            return
        if self.deadline > self.sim.now:
            self._push(self.deadline)
            return
        self.active = False
        self.callback()


def timer_run(ops, timer_class):
    """Run timers started (delay) or cancelled (None) at given times, with plain events at the
    same times; the order in which everything ran."""
    sim = Simulator()
    log = []
    timers = [timer_class(sim, lambda k=k: log.append((sim.now, "timer", k))) for k in range(3)]

    def act(op):
        k, delay = op
        log.append((sim.now, "op", k))
        if delay is None:
            timers[k].cancel()
        else:
            timers[k].start(delay)

    for at, k, delay in ops:
        sim.schedule_at(at, act, (k, delay))
    sim.run()
    return log, sim.events, sim.now


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.004, 0.5, 0.75, 1.0, 2.0]), st.integers(0, 2),
                          st.sampled_from([None, 0.001, 0.25, 0.5, 1.0, 1.25])), max_size=30))
def test_parked_timers_run_as_plain_entries_would(ops):
    # Deadlines tie with each other and with operations; some fall in the current slot (on the
    # heap at once), most in later ones (parked).
    assert timer_run(ops, Timer) == timer_run(ops, PlainTimer)


def test_ten_thousand_armed_timers_hold_a_few_heap_entries():
    sim = Simulator()
    fired = []
    timers = [Timer(sim, lambda k=k: fired.append(k)) for k in range(10_000)]
    for k, timer in enumerate(timers):
        timer.start(1.0 + k * 1e-4)                  # spread over one second: 129 slots
    assert sim.pending == 1                           # the earliest slot's start
    assert sim.peek() == 1.0                          # the first deadline, not its slot's start
    sim.run()
    assert fired == list(range(10_000))
    assert sim.events == 10_000                       # unparking slots is not an event
    assert sim.pending == 0


def test_a_timer_due_in_the_current_slot_goes_on_the_heap():
    sim = Simulator()
    fired = []
    sim.run(until=0.5)
    timer = Timer(sim, lambda: fired.append(sim.now))
    timer.start(0.001)                                # 0.501: the slot of 0.5 (1/128 s)
    assert sim.peek() == 0.501
    sim.run()
    assert fired == [0.501]


# -- events scheduled ahead (flows' starts) -------------------------------------------------------
def ahead_run(ops, ahead: bool):
    """Schedule events at the given times, each either ahead (parked, `schedule_ahead`) or
    plain; some schedule more when they run. The order in which everything ran."""
    sim = Simulator()
    log = []

    def act(op):
        i, later = op
        log.append((sim.now, i))
        if later is not None:
            (sim.schedule_ahead if ahead else sim.schedule_at)(sim.now + later, act, (-i, None))

    for i, (at, later, parked) in enumerate(ops):
        schedule = sim.schedule_ahead if ahead and parked else sim.schedule_at
        schedule(at, act, (i, later))
    sim.run()
    return log, sim.events, sim.now


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 1 / 128, 0.004, 0.5, 0.75, 1.0]),
                          st.sampled_from([None, 0.0, 0.001, 0.25]), st.booleans()), max_size=30))
def test_events_scheduled_ahead_run_as_plain_entries_would(ops):
    # Times tie with each other and with slot starts (1/128 s); some events fall in the
    # current slot (on the heap at once), most in later ones (parked).
    assert ahead_run(ops, True) == ahead_run(ops, False)


def test_flows_starting_over_a_tenth_of_a_second_hold_a_few_heap_entries(dumbbell):
    # 2 000 flows' starts spread over 0.1 s (13 slots of 1/128 s, 156 flows each): those of
    # the current slot on the heap, the others parked behind one heap entry per slot; not one
    # entry per flow. They still start at their own times.
    from topologies.build import build_network
    from topologies.loader import load_topology

    topology = dumbbell(2000, total_mb=20.0)
    for k, flow in enumerate(topology["flows"]):
        flow["start_s"] = k * 0.1 / 2000
    net = build_network(load_topology(topology))
    assert net.sim.pending <= 157 + 12
    net.sim.run(until=0.05)
    assert net.sim.pending <= 157 + 6
    started = [f.start_s for f in net.flows.values() if f.started]
    assert len(started) == 1001 and max(started) <= 0.05
