"""Linux's window arithmetic in the base class (flows/congestion.py): tcp_slow_start,
tcp_cong_avoid_ai, tcp_reno_cong_avoid and tcp_reno_ssthresh, which Reno, NewReno, Tahoe and
DCTCP (and any algorithm using standard_growth) run on the Linux stack."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flows.newreno import NewReno
from flows.reno import Reno
from flows.testing import StandInFlow


def linux_reno(cwnd=10.0, ssthresh=math.inf, cls=Reno):
    flow = StandInFlow(cwnd=cwnd, ssthresh=ssthresh, stack="linux")
    return flow, cls(flow)


def test_slow_start_adds_the_whole_ack_up_to_ssthresh():
    flow, cc = linux_reno(cwnd=10.0, ssthresh=13.0)
    cc.on_ack(2)
    assert flow.cwnd == 12.0
    cc.on_ack(3)                           # 13, then one ACKed packet of avoidance credit
    assert flow.cwnd == 13.0 and cc.cwnd_cnt == 2


def test_avoidance_adds_one_packet_per_window_of_acked_packets():
    flow, cc = linux_reno(cwnd=10.0, ssthresh=5.0)
    for _ in range(9):
        cc.on_ack(1)
    assert flow.cwnd == 10.0
    cc.on_ack(1)
    assert flow.cwnd == 11.0 and cc.cwnd_cnt == 0
    cc.on_ack(25)                          # a stretch ACK: two packets more, 3 left over
    assert flow.cwnd == 13.0 and cc.cwnd_cnt == 3


def test_no_growth_unless_the_window_limited_the_sender():
    flow, cc = linux_reno(cwnd=10.0)
    flow.is_cwnd_limited = False
    cc.on_ack(5)
    assert flow.cwnd == 10.0


def test_a_reduction_restarts_the_credit():
    flow, cc = linux_reno(cwnd=20.0, ssthresh=10.0)
    for _ in range(15):
        cc.on_ack(1)
    assert cc.cwnd_cnt == 15
    flow.cwnd = 10.0                       # the transport cut the window
    cc.on_ack(1)
    assert cc.cwnd_cnt == 1 and flow.cwnd == 10.0


@pytest.mark.parametrize("cls", [Reno, NewReno])
def test_ssthresh_is_half_the_window_not_the_flight(cls):
    flow, cc = linux_reno(cwnd=41.5, cls=cls)
    flow.flight = 10
    assert cc.ssthresh() == 20.0
    flow.cwnd = 3.0
    assert cc.ssthresh() == 2.0


def test_the_classic_stack_keeps_rfc_5681():
    flow = StandInFlow(cwnd=10.0, ssthresh=5.0)
    cc = Reno(flow)
    cc.on_ack(1)
    assert flow.cwnd == pytest.approx(10.1)
    flow.flight = 10
    assert cc.ssthresh() == 5.0


@given(st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=200),
       st.integers(min_value=2, max_value=60), st.integers(min_value=1, max_value=80))
def test_the_window_stays_an_integer_and_grows_by_at_most_the_acked_packets(acks, cwnd, ssthresh):
    flow, cc = linux_reno(cwnd=float(cwnd), ssthresh=float(ssthresh))
    for acked in acks:
        before = flow.cwnd
        cc.on_ack(acked)
        assert flow.cwnd == int(flow.cwnd)
        assert before <= flow.cwnd <= before + acked
    # at most slow start up to ssthresh, then one packet per window of ACKed packets
    assert flow.cwnd <= max(cwnd, ssthresh) + sum(acks) / min(cwnd, ssthresh) + 1
