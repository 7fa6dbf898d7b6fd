"""Tahoe and Reno hooks, and the transport's recovery window for them, on a stand-in flow
without a simulator."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows import ALGORITHMS
from flows.congestion import LOSS, OPEN, RECOVERY, CongestionControl
from flows.newreno import NewReno
from flows.recovery import NewRenoWindow, RenoWindow, recovery_window
from flows.reno import Reno
from flows.tahoe import Tahoe


@pytest.mark.parametrize("cls", [Tahoe, Reno])
def test_slow_start_adds_one_packet_per_ack(cls, fake_flow):
    flow = fake_flow(cwnd=1.0, ssthresh=8.0)
    cc = cls(flow)
    sizes = []
    for _ in range(7):
        cc.on_ack(1)
        sizes.append(flow.cwnd)
    assert sizes == [2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("cls", [Tahoe, Reno])
def test_slow_start_growth_is_capped_per_ack(cls, fake_flow):
    # RFC 5681: cwnd += min(N, SMSS) for an ACK covering N packets
    flow = fake_flow(cwnd=4.0, ssthresh=100.0)
    cls(flow).on_ack(30)
    assert flow.cwnd == 5.0


@pytest.mark.parametrize("cls", [Tahoe, Reno])
def test_congestion_avoidance_adds_one_packet_per_window(cls, fake_flow):
    flow = fake_flow(cwnd=10.0, ssthresh=5.0)
    cc = cls(flow)
    for _ in range(10):
        cc.on_ack(1)
    # ten increments of 1/cwnd, cwnd growing as it goes: a little under 11
    assert 10.95 < flow.cwnd < 11.0


def test_crossing_ssthresh_spends_the_rest_in_congestion_avoidance(fake_flow):
    flow = fake_flow(cwnd=7.5, ssthresh=8.0)
    Reno(flow).on_ack(1)
    assert flow.cwnd == pytest.approx(8.0 + 0.5 / 8.0)


@pytest.mark.parametrize("cls", [Tahoe, Reno])
def test_ssthresh_is_half_the_flight_size_at_least_two(cls, fake_flow):
    assert cls(fake_flow(cwnd=40.0, flight=40)).ssthresh() == 20.0
    assert cls(fake_flow(cwnd=40.0, flight=30)).ssthresh() == 15.0     # the flight, not cwnd
    assert cls(fake_flow(cwnd=10.5, flight=11)).ssthresh() == 5.5      # what 10.5 lets out
    assert cls(fake_flow(flight=3)).ssthresh() == 2.0


@pytest.mark.parametrize("cls", [Tahoe, Reno])
def test_ssthresh_counts_no_more_in_flight_than_the_window_lets_out(cls, fake_flow):
    """After Reno's exit at a partial ACK, 25 packets of the inflated window are in flight
    against cwnd 9.5: a second loss halves the window (to 5), as Fall and Floyd's Reno does,
    instead of setting ssthresh 12.5 above it (RFC 5681 (4) is an upper bound)."""
    assert cls(fake_flow(cwnd=9.5, flight=25)).ssthresh() == 5.0
    assert cls(fake_flow(cwnd=2.0, flight=25)).ssthresh() == 2.0


def test_tahoe_has_no_fast_recovery_and_restarts_from_one_packet(fake_flow):
    flow = fake_flow(cwnd=30.0, ssthresh=15.0)
    cc = Tahoe(flow)
    assert Tahoe.fast_recovery is False
    recovery_window(flow, cc, 3).enter_loss()      # what the transport does on any loss
    assert flow.cwnd == 1.0 and flow.state == LOSS


def test_reno_inflates_during_recovery_and_deflates_after(fake_flow):
    # the window during recovery is the transport's policy for the algorithm's recovery mode
    flow = fake_flow(cwnd=30.0, flight=30)
    cc = Reno(flow)
    window = recovery_window(flow, cc, 3)
    assert isinstance(window, RenoWindow)
    window.loss_reaction()
    assert flow.ssthresh == 15.0
    window.enter_recovery()
    assert flow.cwnd == 15.0 + 3 and flow.state == RECOVERY
    for _ in range(5):
        window.on_dupack()
    assert flow.cwnd == 23.0
    window.end_episode()
    assert flow.cwnd == 15.0 and flow.state == OPEN


def test_newreno_partial_ack_deflates_by_the_packets_acknowledged_plus_one(fake_flow):
    flow = fake_flow(cwnd=30.0, flight=30)
    window = recovery_window(flow, NewReno(flow), 3)
    assert isinstance(window, NewRenoWindow)
    window.loss_reaction()
    window.enter_recovery()
    window.on_partial_ack(5)
    assert flow.cwnd == 18.0 - 5 + 1
    window.on_partial_ack(100)
    assert flow.cwnd == 1.0


def test_reno_timeout_sets_the_loss_window(fake_flow):
    flow = fake_flow(cwnd=30.0, ssthresh=15.0)
    flow.state = RECOVERY
    recovery_window(flow, Reno(flow), 3).enter_loss()
    assert flow.cwnd == 1.0 and flow.state == LOSS


def test_the_state_change_is_told_before_the_window_changes(fake_flow):
    seen = []

    class Spy(Reno):
        __slots__ = ()

        def on_state(self, old, new):
            seen.append((old, new, self.flow.cwnd))

    flow = fake_flow(cwnd=30.0, flight=30)
    window = recovery_window(flow, Spy(flow), 3)
    window.loss_reaction()
    window.enter_recovery()
    window.end_episode()
    window.enter_loss()
    window.end_episode()
    assert seen == [(OPEN, RECOVERY, 30.0), (RECOVERY, OPEN, 18.0), (OPEN, LOSS, 15.0),
                    (LOSS, OPEN, 1.0)]


def test_registry_names_and_parameter_checks():
    assert {"tahoe", "reno", "newreno", "fast", "vegas", "cubic"} <= set(ALGORITHMS)
    assert all(issubclass(cls, CongestionControl) and cls.name == name
               for name, cls in ALGORITHMS.items())
    assert CongestionControl.param_problem("x", 1.5) is None
    assert CongestionControl.param_problem("x", 0) == "expected a positive number"
    assert CongestionControl.param_problem("x", True) == "expected a number"
    assert CongestionControl.param_problem("x", float("nan")) == "expected a number"


class _StepByStep(Reno):
    """Reno with its growth steps redefined as the base class's: standard_growth calls them."""

    __slots__ = ()

    def slow_start(self, acked_pkts: float) -> float:
        return CongestionControl.slow_start(self, acked_pkts)

    def congestion_avoidance(self, acked_pkts: float) -> None:
        CongestionControl.congestion_avoidance(self, acked_pkts)


@settings(max_examples=300, deadline=None)
@given(cwnd=st.floats(0.5, 200.0), ssthresh=st.one_of(st.floats(1.0, 200.0), st.just(math.inf)),
       acked=st.integers(0, 40), abc_limit=st.sampled_from([1.0, 2.0]))
def test_inline_standard_growth_equals_its_steps_bit_for_bit(cwnd, ssthresh, acked, abc_limit):
    # standard_growth runs slow_start and congestion_avoidance inline (a speed-up): the window
    # must be exactly the one the steps give, called one by one
    from flows.testing import StandInFlow
    windows = []
    for cls in (Reno, _StepByStep):
        flow = StandInFlow(cwnd=cwnd, ssthresh=ssthresh)
        cc = cls(flow)
        cc.abc_limit = abc_limit
        cc.on_ack(acked)
        windows.append(flow.cwnd)
    assert Reno._standard_steps and not _StepByStep._standard_steps
    assert windows[0] == windows[1] and type(windows[0]) is type(windows[1])


def test_standard_growth_calls_a_redefined_step(fake_flow):
    calls = []

    class Counting(Reno):
        __slots__ = ()

        def congestion_avoidance(self, acked_pkts: float) -> None:
            calls.append(acked_pkts)

    flow = fake_flow(cwnd=10.0, ssthresh=5.0)
    Counting(flow).on_ack(2)
    assert calls == [2] and flow.cwnd == 10.0
