"""Tests of simulator.engine: event order, the clock, run/stop, Timer and the random generator."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.engine import SchedulingError, Simulator, Timer


def recorder(sim: Simulator, log: list):
    """A callback that appends (now, argument) to `log`."""
    def callback(argument):
        log.append((sim.now, argument))
    return callback


# -- ordering ---------------------------------------------------------------------------------
def test_events_run_in_time_order():
    sim = Simulator()
    log = []
    cb = recorder(sim, log)
    for delay, name in [(3.0, "c"), (1.0, "a"), (2.5, "b"), (10.0, "e"), (4.0, "d")]:
        sim.schedule(delay, cb, name)
    assert sim.run() == 10.0
    assert log == [(1.0, "a"), (2.5, "b"), (3.0, "c"), (4.0, "d"), (10.0, "e")]
    assert sim.now == 10.0
    assert sim.pending == 0


def test_schedule_at_uses_absolute_time():
    sim = Simulator()
    log = []
    cb = recorder(sim, log)
    sim.schedule(1.0, lambda _: sim.schedule_at(1.75, cb, "abs"))
    sim.schedule(1.0, lambda _: sim.schedule(0.5, cb, "rel"))
    sim.run()
    assert log == [(1.5, "rel"), (1.75, "abs")]


def test_ties_run_in_scheduling_order():
    sim = Simulator()
    log = []
    cb = recorder(sim, log)
    for i in range(20):
        sim.schedule(2.0, cb, i)
    sim.schedule_at(2.0, cb, 20)
    sim.run()
    assert log == [(2.0, i) for i in range(21)]


def test_ties_include_events_scheduled_from_callbacks():
    # An event scheduled at time t from inside a callback at t runs after every event already
    # queued for t, and events it schedules for t run after those of earlier callbacks.
    sim = Simulator()
    log = []
    cb = recorder(sim, log)

    def spawn(name):
        log.append((sim.now, name))
        sim.schedule(0.0, cb, name + "-child")
        sim.schedule_at(sim.now, cb, name + "-child2")

    sim.schedule(1.0, spawn, "x")
    sim.schedule(1.0, cb, "y")
    sim.schedule(1.0, spawn, "z")
    sim.schedule(1.0, cb, "w")
    sim.run()
    assert [name for _, name in log] == ["x", "y", "z", "w", "x-child", "x-child2",
                                         "z-child", "z-child2"]
    assert all(t == 1.0 for t, _ in log)


def test_zero_delay_event_runs_after_current_time_queue_not_before_earlier_time():
    sim = Simulator()
    log = []
    cb = recorder(sim, log)
    sim.schedule(1.0, lambda _: sim.schedule(0.0, cb, "zero"))
    sim.schedule(1.0 + 1e-9, cb, "later")
    sim.run()
    assert log == [(1.0, "zero"), (1.0 + 1e-9, "later")]


# -- scheduling in the past -------------------------------------------------------------------
def test_negative_delay_raises():
    sim = Simulator()
    with pytest.raises(SchedulingError):
        sim.schedule(-1e-12, lambda _: None)
    assert sim.pending == 0


def test_schedule_at_before_now_raises():
    sim = Simulator()
    errors = []

    def late(_):
        try:
            sim.schedule_at(4.999, lambda _: None)
        except SchedulingError as exc:
            errors.append(exc)

    sim.schedule(5.0, late)
    sim.run()
    assert len(errors) == 1
    assert sim.pending == 0
    with pytest.raises(SchedulingError):
        sim.schedule_at(4.0, lambda _: None)
    sim.schedule_at(5.0, lambda _: None)   # exactly now is allowed
    assert sim.pending == 1


def test_scheduling_error_is_a_value_error():
    assert issubclass(SchedulingError, ValueError)


def test_run_until_before_now_raises():
    sim = Simulator()
    sim.run(until=3.0)
    with pytest.raises(SchedulingError):
        sim.run(until=2.0)
    assert sim.now == 3.0


# -- run(until) and stop ------------------------------------------------------------------------
def test_run_until_processes_events_at_exactly_until_and_keeps_later_ones():
    sim = Simulator()
    log = []
    cb = recorder(sim, log)
    sim.schedule(1.0, cb, "a")
    sim.schedule(2.0, cb, "b")
    sim.schedule(2.0, lambda _: sim.schedule(0.0, cb, "b-child"))
    sim.schedule(2.0 + 1e-12, cb, "c")
    sim.schedule(7.0, cb, "d")
    assert sim.run(until=2.0) == 2.0
    assert log == [(1.0, "a"), (2.0, "b"), (2.0, "b-child")]
    assert sim.now == 2.0
    assert sim.pending == 2
    assert sim.peek() == 2.0 + 1e-12
    assert sim.events == 4


def test_run_until_sets_clock_when_queue_empties_early():
    sim = Simulator()
    sim.schedule(1.0, lambda _: None)
    assert sim.run(until=5.5) == 5.5
    assert sim.now == 5.5
    assert sim.events == 1
    assert sim.peek() is None


def test_second_run_continues_from_where_first_stopped():
    sim = Simulator()
    log = []
    cb = recorder(sim, log)
    for t in (1.0, 2.0, 3.0, 4.0):
        sim.schedule(t, cb, t)
    sim.run(until=2.5)
    assert log == [(1.0, 1.0), (2.0, 2.0)]
    assert sim.now == 2.5
    sim.schedule(0.25, cb, "new")             # relative to the clock at 2.5
    sim.run(until=3.5)
    assert log[2:] == [(2.75, "new"), (3.0, 3.0)]
    assert sim.now == 3.5
    sim.run()
    assert log[4:] == [(4.0, 4.0)]
    assert sim.now == 4.0
    assert sim.events == 5


def test_stop_ends_run_after_current_event():
    sim = Simulator()
    log = []
    cb = recorder(sim, log)

    def stopper(_):
        log.append((sim.now, "stop"))
        sim.stop("enough")
        sim.schedule(0.0, cb, "after-stop")   # queued, not run in this run

    sim.schedule(1.0, cb, "a")
    sim.schedule(2.0, stopper)
    sim.schedule(2.0, cb, "same-time")
    sim.schedule(3.0, cb, "b")
    assert sim.run(until=10.0) == 2.0         # stopped: the clock is not moved to `until`
    assert log == [(1.0, "a"), (2.0, "stop")]
    assert sim.now == 2.0
    assert sim.stop_reason == "enough"
    assert sim.pending == 3
    assert sim.events == 2
    sim.run()                                  # a new run resumes
    assert [name for _, name in log[2:]] == ["same-time", "after-stop", "b"]
    assert sim.now == 3.0
    assert sim.events == 5


def test_stop_reason_keeps_the_first_reason():
    sim = Simulator()
    sim.schedule(1.0, lambda _: (sim.stop("first"), sim.stop("second")))
    sim.run()
    assert sim.stop_reason == "first"


def test_stop_without_until():
    sim = Simulator()
    count = []

    def tick(_):
        count.append(sim.now)
        if len(count) == 5:
            sim.stop()
        sim.schedule(1.0, tick)               # a self-perpetuating process

    sim.schedule(0.0, tick)
    sim.run()
    assert count == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert sim.stop_reason is None
    assert sim.pending == 1


def test_events_counter_counts_processed_events_across_runs():
    sim = Simulator()
    assert sim.events == 0
    for i in range(10):
        sim.schedule(float(i), lambda _: None)
    sim.run(until=4.0)
    assert sim.events == 5
    sim.run()
    assert sim.events == 10


def test_events_counter_updated_when_callback_raises():
    sim = Simulator()

    def boom(_):
        raise RuntimeError("boom")

    sim.schedule(1.0, lambda _: None)
    sim.schedule(2.0, boom)
    with pytest.raises(RuntimeError):
        sim.run()
    assert sim.events == 2
    assert sim.now == 2.0


# -- the clock never goes backwards (property) -----------------------------------------------
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0]),
                          st.lists(st.sampled_from([0.0, 0.25, 1.0, 3.0]), max_size=3)),
                min_size=1, max_size=40))
def test_clock_is_monotonic_and_order_is_time_then_scheduling(plan):
    """Each top-level event (delay, child delays) schedules children from its callback; the
    recorded order must equal the events sorted by (time, scheduling sequence)."""
    sim = Simulator()
    seq = [0]
    scheduled = []          # (time, seq, label) in the order schedule() was called
    executed = []           # (now, seq, label)

    def schedule(delay, label, children):
        seq[0] += 1
        scheduled.append((sim.now + delay, seq[0], label))
        sim.schedule(delay, run_event, (seq[0], label, children))

    def run_event(arg):
        s, label, children = arg
        executed.append((sim.now, s, label))
        for j, child_delay in enumerate(children):
            schedule(child_delay, f"{label}.{j}", [])

    for i, (delay, children) in enumerate(plan):
        schedule(delay, str(i), children)
    sim.run()

    times = [t for t, _, _ in executed]
    assert times == sorted(times)
    assert executed == sorted(scheduled)
    assert sim.events == len(scheduled)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=100.0, allow_nan=False), min_size=1,
                max_size=60),
       st.floats(min_value=0.0, max_value=120.0, allow_nan=False))
def test_run_until_splits_any_schedule_at_until(delays, until):
    sim = Simulator()
    seen = []
    for i, d in enumerate(delays):
        sim.schedule(d, lambda i: seen.append((sim.now, i)), i)
    sim.run(until=until)
    expected = sorted((d, i) for i, d in enumerate(delays))
    assert seen == [e for e in expected if e[0] <= until]
    assert sim.now == until
    assert sim.pending == sum(1 for d in delays if d > until)
    sim.run()
    assert seen == expected


# -- Timer --------------------------------------------------------------------------------------
def make_timer(sim: Simulator):
    fired = []
    timer = Timer(sim, lambda: fired.append(sim.now))
    return timer, fired


def test_timer_fires_once_at_deadline():
    sim = Simulator()
    timer, fired = make_timer(sim)
    sim.schedule(1.0, lambda _: timer.start(2.5))
    sim.run()
    assert fired == [3.5]
    assert timer.active is False
    assert timer.deadline == 3.5
    assert sim.pending == 0


def test_timer_restart_later_moves_the_deadline():
    sim = Simulator()
    timer, fired = make_timer(sim)
    timer.start(2.0)
    sim.schedule(1.0, lambda _: timer.start(3.0))   # new deadline 4.0
    sim.run(until=3.0)
    assert fired == []                              # not at the old deadline 2.0
    sim.run()
    assert fired == [4.0]


def test_timer_restart_earlier_fires_at_earlier_time_only_once():
    sim = Simulator()
    timer, fired = make_timer(sim)
    timer.start(5.0)
    sim.schedule(1.0, lambda _: timer.start(1.0))   # new deadline 2.0
    sim.run()
    assert fired == [2.0]
    assert sim.now == 5.0                           # the stale entry came up and was ignored
    assert sim.pending == 0


def test_timer_restart_earlier_then_later_again():
    sim = Simulator()
    timer, fired = make_timer(sim)
    timer.start(5.0)
    timer.start(2.0)
    timer.start(4.0)          # between the two pending entries
    sim.run()
    assert fired == [4.0]


def test_timer_cancel_prevents_firing():
    sim = Simulator()
    timer, fired = make_timer(sim)
    timer.start(2.0)
    sim.schedule(1.0, lambda _: timer.cancel())
    sim.run()
    assert fired == []
    assert timer.active is False


def test_timer_cancel_then_start_again():
    sim = Simulator()
    timer, fired = make_timer(sim)
    timer.start(2.0)
    timer.cancel()
    timer.start(5.0)          # later than the cancelled entry: that entry re-arms
    sim.run()
    assert fired == [5.0]

    timer.start(3.0)          # at t=5: deadline 8
    sim.schedule(1.0, lambda _: timer.cancel())
    sim.schedule(2.0, lambda _: timer.start(0.5))   # at t=7: deadline 7.5, earlier than 8
    sim.run()
    assert fired == [5.0, 7.5]


def test_timer_restarted_from_its_own_callback():
    sim = Simulator()
    fired = []

    def expire():
        fired.append(sim.now)
        if len(fired) < 3:
            timer.start(1.5)

    timer = Timer(sim, expire)
    timer.start(1.0)
    sim.run()
    assert fired == [1.0, 2.5, 4.0]


def test_timer_restarted_many_times_at_once_keeps_heap_tiny():
    sim = Simulator()
    timer, fired = make_timer(sim)
    for i in range(100_000):
        timer.start(1.0 + i * 1e-3)
        assert sim.pending <= 2
    sim.run()
    assert fired == [1.0 + 99_999 * 1e-3]


def test_timer_restarted_on_every_ack_keeps_heap_tiny():
    """A retransmission timer restarted on each of 100000 ACKs, 1 ms apart, with a 1 s timeout:
    the heap never holds more than the next ACK and one timer entry, and the timer entry is
    re-queued only about once per timeout, not once per restart."""
    sim = Simulator()
    timer, fired = make_timer(sim)
    n = 100_000
    peak = [0]

    def ack(i):
        timer.start(1.0)
        peak[0] = max(peak[0], sim.pending)
        if i + 1 < n:
            sim.schedule(1e-3, ack, i + 1)

    sim.schedule(0.0, ack, 0)
    sim.run()
    assert peak[0] <= 2
    assert len(fired) == 1
    assert fired[0] == pytest.approx((n - 1) * 1e-3 + 1.0, rel=1e-9)
    # n ACK events plus roughly one timer entry per simulated second
    assert n < sim.events <= n + 2 * (n * 1e-3 + 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=0, max_value=12),
                          st.one_of(st.just(None), st.sampled_from([0.5, 1.5, 2.5, 4.5]))),
                max_size=25))
def test_timer_matches_a_reference_model(ops):
    """Random start(delay)/cancel (None) operations at integer times; deadlines fall on half
    integers so no deadline ties with an operation. The timer must fire exactly when a naive
    model (one deadline, one active flag) says so."""
    sim = Simulator()
    timer, fired = make_timer(sim)

    def apply(op):
        if op is None:
            timer.cancel()
        else:
            timer.start(op)

    for t, op in ops:
        sim.schedule_at(float(t), apply, op)
    sim.run()

    expected, deadline, active = [], None, False
    for t, op in sorted(ops, key=lambda o: o[0]):          # stable: scheduling order on ties
        if active and deadline < t:
            expected.append(deadline)
            active = False
        if op is None:
            active = False
        else:
            deadline, active = t + op, True
    if active:
        expected.append(deadline)
    assert fired == expected
    assert sim.pending == 0


# -- random numbers ---------------------------------------------------------------------------
def test_same_seed_same_random_sequence():
    a, b = Simulator(seed=42), Simulator(seed=42)
    assert [a.rng.random() for _ in range(100)] == [b.rng.random() for _ in range(100)]
    assert [a.rng.randrange(1000) for _ in range(50)] == [b.rng.randrange(1000) for _ in range(50)]


def test_different_seed_different_sequence():
    a, b = Simulator(seed=1), Simulator(seed=2)
    assert [a.rng.random() for _ in range(10)] != [b.rng.random() for _ in range(10)]


def test_default_seed_is_reproducible():
    assert Simulator().rng.random() == Simulator().rng.random() == Simulator(seed=1).rng.random()


# -- the garbage collector around a run (simulator/garbage.py) ---------------------------------
class _Cycle:
    """An object in a reference cycle (only the cyclic collector frees it)."""

    def __init__(self):
        self.me = self


def test_objects_older_than_the_loop_are_set_aside_while_it_runs_and_handed_back():
    import gc
    sim = Simulator()
    seen = []
    sim.schedule(1.0, lambda _: seen.append((gc.get_freeze_count(), gc.isenabled())))
    was_enabled = gc.isenabled()
    sim.run()
    assert seen[0][0] > 0 and seen[0][1] == was_enabled     # set aside, collector as it was
    assert gc.get_freeze_count() == 0                       # all handed back


def test_a_cycle_dropped_after_a_run_is_collected():
    import gc
    import weakref
    from simulator.garbage import collection_paused

    with collection_paused():                   # built like a run: then set aside
        cycle = _Cycle()
    ref = weakref.ref(cycle)
    sim = Simulator()
    sim.schedule(0.5, lambda _: None)
    sim.run()                                   # its end hands everything back
    del cycle
    gc.collect()
    assert ref() is None and gc.get_freeze_count() == 0


def test_collection_paused_restores_the_collector_as_it_found_it():
    import gc
    from simulator.garbage import collection_paused

    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0     # nothing left set aside
    with collection_paused(until_run=True):
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() > 0     # what was built is set aside
    Simulator().run()
    assert gc.get_freeze_count() == 0
    gc.disable()
    try:
        with collection_paused(until_run=True):
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() == 0   # off before: nothing set aside
    finally:
        gc.enable()

    @collection_paused(until_run=True)
    def build(depth):
        assert not gc.isenabled()
        return build(depth - 1) if depth else gc.get_freeze_count()
    build(3)
    assert gc.isenabled()
    Simulator().run()                            # hands back what the decorated call set aside
    assert gc.get_freeze_count() == 0
