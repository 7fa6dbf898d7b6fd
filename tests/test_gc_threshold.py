"""The youngest generation's collection threshold while the event loop runs
(simulator/garbage.py): raised to `RUN_GEN0_THRESHOLD`, restored when the loop returns, also
after a nested run, and left alone when it is off (0) or already higher."""
from __future__ import annotations

import gc

import pytest

from simulator.engine import Simulator
from simulator.garbage import RUN_GEN0_THRESHOLD


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    yield saved
    gc.set_threshold(*saved)


def seen_during_run(sim: Simulator) -> list:
    seen: list = []
    sim.schedule(1.0, lambda _: seen.append(gc.get_threshold()))
    sim.run()
    return seen


def test_raised_while_the_loop_runs_and_restored_after(thresholds):
    gc.set_threshold(700, 10, 10)
    assert seen_during_run(Simulator()) == [(RUN_GEN0_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_nested_run_keeps_it_until_the_outer_one_returns(thresholds):
    gc.set_threshold(500, 7, 9)
    outer, inner = Simulator(), Simulator()
    seen = []

    def nested(_):
        inner.schedule(0.5, lambda _: seen.append(("inner", gc.get_threshold())))
        inner.run()
        seen.append(("after inner", gc.get_threshold()))

    outer.schedule(1.0, nested)
    outer.run(until=2.0)
    assert seen == [("inner", (RUN_GEN0_THRESHOLD, 7, 9)),
                    ("after inner", (RUN_GEN0_THRESHOLD, 7, 9))]
    assert gc.get_threshold() == (500, 7, 9)


@pytest.mark.parametrize("first", [0, RUN_GEN0_THRESHOLD * 3])
def test_off_or_higher_is_left_as_it_is(thresholds, first):
    gc.set_threshold(first, 10, 10)
    assert seen_during_run(Simulator()) == [(first, 10, 10)]
    assert gc.get_threshold() == (first, 10, 10)


def test_restored_when_an_event_raises(thresholds):
    gc.set_threshold(700, 10, 10)
    sim = Simulator()

    def fail(_):
        raise RuntimeError("boom")

    sim.schedule(1.0, fail)
    with pytest.raises(RuntimeError, match="boom"):
        sim.run()
    assert gc.get_threshold() == (700, 10, 10)
