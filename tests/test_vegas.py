"""TCP Vegas' once-per-RTT adjustment on hand-computed sequences, without a simulator."""
from __future__ import annotations

import math

import pytest

from flows.vegas import Vegas


def round_trip(flow, cc, rtt_s, acks=1):
    """One RTT: the ACKs of the previous round arrive with RTT samples `rtt_s`."""
    for _ in range(acks):
        cc.on_rtt(rtt_s)
        flow.snd_una += 1
        cc.on_ack(1)
    flow.snd_nxt = flow.snd_una + int(flow.cwnd)


def test_diff_is_the_packets_queued(fake_flow):
    flow = fake_flow(cwnd=20.0)
    cc = Vegas(flow)
    cc.base_rtt = 0.1
    assert cc.queued_packets(0.125) == pytest.approx(20 * (1 - 0.1 / 0.125))


@pytest.mark.parametrize("diff, expected", [
    (0.0, 11.0),        # fewer than alpha = 2 packets queued: one more packet
    (1.5, 11.0),
    (3.0, 10.0),        # between alpha and beta: hold
    (6.0, 9.0),         # more than beta = 4: one packet less
])
def test_congestion_avoidance_steps(diff, expected, fake_flow):
    flow = fake_flow(cwnd=10.0, ssthresh=5.0)
    cc = Vegas(flow)
    cc.on_rtt(0.1)                               # baseRTT
    cc.epoch_rtt = math.inf
    cc.on_rtt(0.1 / (1 - diff / 10.0))          # an RTT with `diff` packets queued
    flow.snd_una = 1
    cc.on_ack(1)
    assert flow.cwnd == expected


def test_decrease_keeps_the_flow_out_of_slow_start(fake_flow):
    flow = fake_flow(cwnd=30.0, ssthresh=30.0)
    cc = Vegas(flow)
    cc.on_rtt(0.1)
    cc.epoch_rtt = math.inf
    cc.on_rtt(0.2)                   # diff = 15 > beta
    flow.snd_una = 1
    cc.on_ack(1)
    assert flow.cwnd == 29.0 and flow.ssthresh <= 28.0
    flow.snd_una = 2                 # within the same round trip: nothing changes
    cc.on_ack(1)
    assert flow.cwnd == 29.0


def test_adjusts_once_per_round_trip(fake_flow):
    flow = fake_flow(cwnd=10.0, ssthresh=5.0)
    cc = Vegas(flow)
    cc.on_rtt(0.1)
    flow.snd_nxt = 10
    flow.snd_una = 1
    cc.on_ack(1)                     # ends the first epoch: +1, next epoch ends at packet 10
    assert flow.cwnd == 11.0 and cc.epoch_end == 10
    for una in range(2, 10):
        flow.snd_una = una
        cc.on_rtt(0.1)
        cc.on_ack(1)
    assert flow.cwnd == 11.0
    flow.snd_una = 10
    cc.on_ack(1)
    assert flow.cwnd == 12.0


def slow_start_vegas(fake_flow, cwnd, grow, fixed=None):
    """A Vegas flow in slow start with baseRTT 0.1 s, in the middle of a round trip."""
    flow = fake_flow(cwnd=cwnd)
    cc = Vegas(flow)
    cc.on_rtt(0.1)
    cc.epoch_rtt = math.inf
    cc.epoch_end = 1000                    # the round trip goes on
    cc.ss_grow, cc.ss_fixed = grow, fixed
    return flow, cc


def ack(flow, cc, rtt_s):
    cc.on_rtt(rtt_s)
    flow.snd_una += 1
    cc.on_ack(1)


def test_slow_start_holds_the_window_in_the_fixed_round_trip(fake_flow):
    flow, cc = slow_start_vegas(fake_flow, 40.0, grow=False, fixed=40.0)
    ack(flow, cc, 0.1)
    assert flow.cwnd == 40.0


def test_slow_start_grows_per_ack_in_the_growing_round_trip(fake_flow):
    flow, cc = slow_start_vegas(fake_flow, 50.0, grow=True, fixed=40.0)
    ack(flow, cc, 0.1)
    ack(flow, cc, 0.1)
    assert flow.cwnd == 52.0
    ack(flow, cc, 0.125)                   # 40 * 0.2 = 8 > gamma queued: no growth on this ACK
    assert flow.cwnd == 52.0


def test_slow_start_exits_when_the_fixed_window_had_more_than_gamma_queued(fake_flow):
    flow, cc = slow_start_vegas(fake_flow, 50.0, grow=True, fixed=40.0)
    cc.epoch_end = 0                       # this ACK ends the growing round trip
    ack(flow, cc, 0.125)                   # its smallest sample: diff = 40 * (1 - 0.1 / 0.125) = 8
    assert flow.cwnd == pytest.approx(40 * 0.1 / 0.125 + 1)    # 33
    assert flow.ssthresh == pytest.approx(32.0)


def test_slow_start_alternates_growing_and_fixed_round_trips(fake_flow):
    flow, cc = slow_start_vegas(fake_flow, 50.0, grow=True, fixed=40.0)
    cc.epoch_end = 0
    ack(flow, cc, 0.1)                     # no queue: the growing round trip ends, hold 50
    assert (cc.ss_grow, cc.ss_fixed, flow.cwnd, flow.ssthresh) == (False, 50.0, 50.0, math.inf)
    cc.epoch_end = 0
    ack(flow, cc, 0.1)                     # the fixed round trip ends: grow again
    assert cc.ss_grow and flow.cwnd == 51.0


def test_alpha_must_not_exceed_beta():
    assert Vegas.params_problem({"alpha": 5, "beta": 4, "gamma": 1}) == "alpha (5) must not exceed beta (4)"
    assert Vegas.params_problem(dict(Vegas.PARAMETERS)) is None


def test_after_a_timeout_vegas_slow_starts_as_reno_then_starts_afresh(fake_flow):
    """Outside OPEN Vegas grows as Reno (Linux tcp_vegas_state: vegas_disable), and back in OPEN
    it starts afresh (vegas_enable). Before, the fixed window of the first slow start (51) and
    an RTT sample from before the timeout showed 51 (1 - 41.66/44.40) = 3.15 > gamma packets
    queued, so the window stayed at one packet (acceptance test Z8)."""
    from flows.congestion import LOSS, OPEN

    flow = fake_flow(cwnd=51.0)
    cc = Vegas(flow)
    cc.on_rtt(0.04166)                           # baseRTT
    cc.ss_grow, cc.ss_fixed = True, 51.0         # the first slow start's state, left over
    cc.on_rtt(0.04440)                           # the last sample before the timeout
    old = flow.state
    flow.state, flow.cwnd, flow.ssthresh = LOSS, 1.0, 18.5
    cc.on_state(old, LOSS)
    for _ in range(3):                           # ACKs of go-back-N: no RTT samples (Karn)
        flow.snd_una += 1
        cc.on_ack(1)
    assert flow.cwnd == 4.0                      # Reno's slow start: one packet per ACK
    flow.state = OPEN
    cc.on_state(LOSS, OPEN)
    assert (cc.ss_fixed, cc.ss_grow, cc.last_rtt, cc.epoch_rtt) == (None, True, math.inf,
                                                                   math.inf)
    flow.snd_una += 1
    cc.on_ack(1)
    assert flow.cwnd == 5.0                      # Vegas's growing round trip, fresh
