"""BBR v1 on the Linux stack (flows/bbr_linux.py, flows/bbr_model.py): Linux tcp_bbr's gains in
fixed point, the quantization budget, extra_acked from an aggregated ACK stream in the target
window, strict RTprop, packet conservation in recovery, undo, the pacing margin."""
from __future__ import annotations

import math

import pytest

from flows.bbr import Bbr
from flows.bbr_model import AckAggregation, quantization_budget, tso_segs_goal
from flows.congestion import OPEN, RECOVERY
from flows.rate_sampler import RateSample
from flows.testing import StandInFlow


class Driver:
    """Feeds a Bbr rate samples as the transport does (on_rtt, then on_rate_sample)."""

    def __init__(self, stack="linux", cwnd=10.0):
        self.flow = StandInFlow(cwnd=cwnd, stack=stack, packet_bytes=1000)
        self.cc = Bbr(self.flow)
        self.cc.init()
        self.delivered = 0

    def ack(self, at, rate, rtt=0.1, n=1, new_round=False, inflight=None):
        flow, cc = self.flow, self.cc
        flow.sim.now = at
        flow.srtt = flow.srtt or rtt
        if inflight is not None:
            flow.inflight = inflight
        prior = cc.next_round_delivered if new_round else cc.next_round_delivered - 1
        self.delivered += n
        cc.on_rtt(rtt)
        cc.on_rate_sample(RateSample(rate, self.delivered, prior, 0.01, rtt, False, n))
        return cc

    def to_probe_bw(self, rtt=0.1):
        """Startup with a plateau at 950 packets/s, then Drain, then ProbeBW at t = 1 s."""
        t = 0.0
        for rate in (100, 200, 400, 800, 850, 900, 950):
            t += 0.1
            self.ack(t, rate, rtt, new_round=True, inflight=200)
        assert self.cc.state == "drain"
        self.ack(1.0, 950, rtt, inflight=90)
        assert self.cc.state == "probe_bw"
        return self


def test_gains_in_linux_fixed_point():
    linux, classic = Driver().cc, Driver("classic").cc
    assert linux.high_gain == 739 / 256 and linux.drain_gain == 88 / 256
    assert classic.high_gain == 2.885 and classic.drain_gain == 1 / 2.885


def test_tso_goal_and_quantization_budget():
    assert tso_segs_goal(1.0e6, 1500) == 1                  # below bbr_min_tso_rate
    assert tso_segs_goal(10e6, 1500) == 2                   # 1.2 kB a ms: the 2-segment floor
    assert tso_segs_goal(1e9, 1500) == (65536 - 1 - 320) // 1500
    assert tso_segs_goal(100e9, 100) == 127                 # at most 0x7F
    assert quantization_budget(69, 2, probing=False) == 76  # 69 + 3 x 2, rounded up to even
    assert quantization_budget(70, 2, probing=False) == 76
    assert quantization_budget(69, 2, probing=True) == 78   # + 2 in the 5/4 phase


def test_the_first_rtt_sample_restarts_the_pacing_rate_with_a_margin():
    d = Driver()
    assert d.flow.pacing_rate_bps == pytest.approx(739 / 256 * 10 / 1e-3 * 8000 * 0.99)
    d.ack(0.1, 50, rtt=0.1)
    # high_gain x cwnd / SRTT, cwnd grown by the packet delivered
    assert d.flow.pacing_rate_bps == pytest.approx(739 / 256 * 10 / 0.1 * 8000 * 0.99)


def test_target_window_is_the_budgeted_ceil_bdp():
    d = Driver().to_probe_bw()
    cc = d.cc
    # BDP 950 x 0.1 = 95: ceil(2 x 95) = 190, + 3 x tso goal (950 packets/s x 8 kbit: 7.6
    # Mbit/s, 2 segments), even; + 2 only in the probing phase
    probing = cc.cycle_index == 0
    extra = cc.lx.aggregation.cwnd_pkts(cc.btl_bw_pps(), True)
    assert cc.target_cwnd() == quantization_budget(190 + extra, 2, probing)
    assert cc.inflight_pkts(1.0) == quantization_budget(95, 2, probing)
    assert d.flow.ssthresh == quantization_budget(95, 2, False)    # set on entering Drain


def test_extra_acked_from_an_aggregated_ack_stream():
    agg = AckAggregation(0.0)
    # BtlBw 1000 packets/s; ACKs come 20 ms apart, each for 20 packets (a 2:1 aggregation)
    for k in range(1, 11):
        agg.update(0.02 * k, 1000.0, 20, cwnd=200.0, round_start=False)
    assert agg.extra_acked_pkts() == 20                      # each burst 20 ahead of the rate
    assert agg.cwnd_pkts(1000.0, full_bw_reached=False) == 0
    assert agg.cwnd_pkts(1000.0, full_bw_reached=True) == 20
    assert agg.cwnd_pkts(100.0, full_bw_reached=True) == 10  # at most BtlBw x 100 ms
    smooth = AckAggregation(0.0)
    for k in range(1, 101):                                  # one packet a ms: no aggregation
        smooth.update(0.001 * k, 1000.0, 1, cwnd=200.0, round_start=False)
    assert smooth.extra_acked_pkts() <= 1
    capped = AckAggregation(0.0)
    capped.update(0.01, 1000.0, 50, cwnd=30.0, round_start=False)
    assert capped.extra_acked_pkts() == 30                   # at most the window


def test_extra_acked_is_forgotten_after_5_to_10_rounds():
    agg = AckAggregation(0.0)
    agg.update(0.01, 1000.0, 40, cwnd=200.0, round_start=False)
    assert agg.extra_acked_pkts() == 40
    t = 0.01
    for rounds in range(1, 11):
        t += 0.1
        agg.update(t, 1000.0, 1, cwnd=200.0, round_start=True)
        assert (agg.extra_acked_pkts() == 40) == (rounds < 10), rounds


def test_the_window_includes_extra_acked_on_an_aggregated_stream():
    smooth = Driver().to_probe_bw()
    burst = Driver().to_probe_bw()
    t = 1.0
    for _ in range(30):                                       # 950 packets/s either way
        t += 0.02
        burst.ack(t, 950, n=19, inflight=190)                 # 19 packets every 20 ms
    t = 1.0
    for _ in range(30 * 19):
        t += 0.02 / 19
        smooth.ack(t, 950, n=1, inflight=190)
    extra = burst.cc.lx.aggregation.extra_acked_pkts()
    assert extra >= 18 and smooth.cc.lx.aggregation.extra_acked_pkts() <= 1
    assert burst.cc.target_cwnd() >= smooth.cc.target_cwnd() + extra - 2
    assert burst.flow.cwnd == burst.cc.target_cwnd()
    assert burst.cc.report()["extra_acked_pkts"] == float(extra)


def test_rtprop_takes_only_a_lower_sample_on_linux():
    for stack, refreshed in (("linux", False), ("classic", True)):
        d = Driver(stack)
        d.ack(0.1, 100, rtt=0.1)
        stamp = d.cc.rtprop_stamp
        d.ack(0.5, 100, rtt=0.1)                              # equal: Linux keeps the stamp
        assert (d.cc.rtprop_stamp != stamp) is refreshed
        assert d.cc.min_rtt_s == 0.1


def test_packet_conservation_in_the_first_round_of_recovery():
    d = Driver().to_probe_bw()
    cc, flow = d.cc, d.flow
    full = flow.cwnd
    flow.retransmissions += 3                                 # three packets lost and resent
    flow.state = RECOVERY
    cc.on_state(OPEN, RECOVERY)
    d.ack(1.5, 950, n=2, inflight=60)
    assert cc.lx.conservation and flow.cwnd == 60 + 2         # pipe + ACKed
    d.ack(1.51, 950, n=1, inflight=40)
    assert flow.cwnd == 62                                    # never below pipe + ACKed
    d.ack(1.7, 950, n=1, new_round=True, inflight=40)         # a round later: towards target
    assert not cc.lx.conservation and flow.cwnd == 63
    flow.state = OPEN                     # recovery over: at least the saved window, then on
    d.ack(1.8, 950, n=1, inflight=40)
    assert flow.cwnd == min(max(63, full) + 1, cc.target_cwnd())


def test_newly_lost_packets_come_off_the_window():
    d = Driver().to_probe_bw()
    before = d.flow.cwnd
    d.flow.retransmissions += 5
    d.ack(1.2, 950, n=1, inflight=100)
    assert d.flow.cwnd == min(before - 5 + 1, d.cc.target_cwnd())


def test_undo_keeps_the_window_and_restarts_full_pipe_detection():
    d = Driver().to_probe_bw()
    cwnd = d.flow.cwnd
    assert d.cc.undo_cwnd() == cwnd
    assert d.cc.full_pipe.full_bw == 0.0 and d.cc.full_pipe.count == 0


def test_the_window_stays_an_integer_of_at_least_4():
    d = Driver(cwnd=10.0)
    d.ack(0.1, 100, rtt=0.1)
    assert d.flow.cwnd == int(d.flow.cwnd)
    d.cc.state = "probe_rtt"
    d.ack(0.2, 100, rtt=0.1)
    assert d.flow.cwnd == 4.0


def test_the_classic_window_is_unchanged():
    d = Driver("classic").to_probe_bw()
    assert d.cc.lx is None
    assert d.cc.target_cwnd() == pytest.approx(2 * 95 + 3)
    assert not math.isnan(d.cc.report()["min_rtt_s"])
    assert "extra_acked_pkts" not in d.cc.report()
