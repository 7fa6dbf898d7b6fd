"""CUBIC on the Linux stack (flows/cubic_linux.py, flows/hystart.py HyStartLinux): Linux
tcp_cubic's fixed-point constants, the 2008 HyStart (ACK train, delay increase, low window 16,
no conservative slow start), bictcp_update's cnt, the 8/15 Reno-friendly estimate, fast
convergence, the reset on a timeout, undo."""
from __future__ import annotations

import dataclasses
import math
import types

import pytest

from flows.congestion import LOSS, OPEN, RECOVERY
from flows.cubic import Cubic
from flows.testing import StandInFlow


def linux_cubic(cwnd=10.0, ssthresh=math.inf, **params):
    flow = StandInFlow(cwnd=cwnd, ssthresh=ssthresh, stack="linux", packet_bytes=1500)
    cc = Cubic(flow, params or None)
    cc.init()
    return flow, cc


def ack_round(flow, cc, rtt, start_s, spacing_s=0.003, grow=True):
    """One round trip of ACKs of one packet each, `spacing_s` apart from `start_s`, each with an
    RTT sample `rtt`; every ACK sends two new packets in slow start (one in avoidance). Stops
    when slow start ends; returns the time of the last ACK."""
    now = start_s
    flow.snd_nxt = max(flow.snd_nxt, flow.snd_una + int(flow.cwnd))
    end = flow.snd_nxt
    while flow.snd_una < end:
        flow.sim.now = now
        flow.snd_una += 1
        flow.snd_nxt += 2 if flow.cwnd < flow.ssthresh else 1
        flow.srtt = rtt
        in_slow_start = flow.cwnd < flow.ssthresh
        cc.on_rtt(rtt)                               # the transport's order: RTT, then growth
        cc.on_ack(1)
        if in_slow_start and flow.cwnd >= flow.ssthresh:
            return now
        now += spacing_s
    return now


def test_fixed_point_constants_are_linuxs():
    _flow, cc = linux_cubic()
    lx = cc.lx
    assert cc.hystart is None and lx is not None
    assert lx.beta == 717 and lx.bic_scale == 41 and lx.cube_rtt_scale == 410
    assert lx.beta_scale == 15                       # 8 (1024 + 717) / 3 / (1024 - 717)
    assert lx.cube_factor == (1 << 40) // 410


def test_slow_start_takes_the_whole_ack_on_the_integer_window():
    flow, cc = linux_cubic(cwnd=10.0)
    cc.on_ack(2)                                     # a delayed ACK: +2, no per-ACK limit
    assert flow.cwnd == 12.0
    flow.is_cwnd_limited = False                     # tcp_is_cwnd_limited: no growth
    cc.on_ack(2)
    assert flow.cwnd == 12.0


def test_hystart_exits_at_the_delay_increase_straight_to_congestion_avoidance():
    flow, cc = linux_cubic(cwnd=16.0)
    t = ack_round(flow, cc, 0.100, 0.0)              # delay_min = 100 ms
    assert flow.ssthresh == math.inf and cc.lx.delay_min_s == 0.100
    # the next round's RTTs are 13 ms higher: above delay_min + clamp(100 / 8 ms, 4, 16)
    t = ack_round(flow, cc, 0.113, t + 0.01)
    hystart = cc.lx.hystart
    assert hystart.found and hystart.exit_reason == "delay"
    # HyStart's round began at the third ACK (snd_una past the snd_nxt of its previous start);
    # the 9th sample after it decides, at cwnd 32 + 10; ssthresh = cwnd before the ACK's
    # growth, which is then congestion avoidance's
    assert flow.ssthresh == 42.0 and flow.cwnd == 42.0
    # no conservative slow start: avoidance at once, one packet per cnt = 20 ACKed packets
    # (the cubic target is still about cwnd, and no loss has set W_max: 5 % a round trip)
    for i in range(40):
        flow.sim.now = t + 0.001 * (i + 1)
        flow.snd_una += 1
        cc.on_ack(1)
    assert cc.lx.cnt == 20 and flow.cwnd == 44.0


def test_a_delay_increase_below_the_threshold_keeps_slow_start():
    flow, cc = linux_cubic(cwnd=16.0)
    t = ack_round(flow, cc, 0.100, 0.0)
    t = ack_round(flow, cc, 0.1124, t + 0.01)        # 12.4 ms < 12.5 ms
    assert flow.ssthresh == math.inf and flow.cwnd == 64.0


def test_no_hystart_exit_below_a_window_of_16():
    flow, cc = linux_cubic(cwnd=4.0)
    t = ack_round(flow, cc, 0.100, 0.0)              # 4 -> 8
    t = ack_round(flow, cc, 0.200, t + 0.01)         # 8 -> 16: the RTT doubled, too early
    assert flow.ssthresh == math.inf and flow.cwnd == 16.0


def test_hystart_exits_on_an_ack_train_spanning_half_the_minimum_rtt():
    flow, cc = linux_cubic(cwnd=16.0)
    t = ack_round(flow, cc, 0.040, 0.0)              # delay_min 40 ms, ACKs 3 ms apart
    assert flow.ssthresh == math.inf
    # a round of back-to-back ACKs 1 ms apart: the train passes 20 ms (+ 1 ms allowance / 2)
    ack_round(flow, cc, 0.040, t + 0.01, spacing_s=0.001)
    hystart = cc.lx.hystart
    assert hystart.exit_reason == "ack_train" and flow.ssthresh == flow.cwnd
    assert 32 + 20 <= flow.cwnd <= 32 + 23


def test_ssthresh_and_fast_convergence_on_the_integer_window():
    flow, cc = linux_cubic(cwnd=100.0, ssthresh=50.0)
    assert cc.ssthresh() == 70.0                     # 100 x 717 / 1024
    assert cc.lx.last_max_cwnd == 100
    flow.cwnd = 80.0                                 # below W_max: fast convergence
    assert cc.ssthresh() == 56.0
    assert cc.lx.last_max_cwnd == 80 * 1741 // 2048
    assert cc.report() == {"w_max_pkts": 68.0}
    cc.lx.fast_convergence = False
    flow.cwnd = 60.0
    cc.ssthresh()
    assert cc.lx.last_max_cwnd == 60


def test_the_reno_estimate_grows_8_15_of_a_packet_per_window_and_keeps_that_rate():
    flow, cc = linux_cubic(cwnd=100.0, ssthresh=50.0)
    lx = cc.lx
    lx.last_max_cwnd = 100                           # a loss happened: no 5 % cap
    flow.sim.now = 1.0
    lx.update(100, 1)                                # the epoch starts: tcp_cwnd = 100
    assert lx.tcp_cwnd == 100 and lx.ack_cnt == 1
    for i in range(20 * 100 - 1):                    # 20 windows of ACKs at cwnd 100
        flow.sim.now = 1.0 + 0.0005 * (i + 1)       # (recomputed every HZ / 32)
        lx.update(100, 1)
    flow.sim.now = 3.0
    lx.update(100, 0)
    # one packet per cwnd x 15 / 8 = 187 ACKed packets: 2000 / 187 = 10.7
    assert lx.tcp_cwnd == 110
    # above the cubic window the estimate bounds cnt: cwnd / (tcp_cwnd - cwnd) = 10
    assert lx.cnt == 10


def test_cnt_is_capped_at_20_until_a_loss():
    flow, cc = linux_cubic(cwnd=100.0, ssthresh=100.0)
    flow.sim.now = 2.0
    cc.lx.delay_min_s = 0.05
    cc.on_ack(1)
    assert cc.lx.last_max_cwnd == 0 and cc.lx.cnt == 20     # 5 % a round trip
    flow.sim.now = 2.5
    cc.on_ack(1)
    assert cc.lx.cnt <= 20


def test_the_cubic_target_uses_the_minimum_rtt_and_grows_towards_w_max():
    flow, cc = linux_cubic(cwnd=100.0, ssthresh=math.inf)
    cc.lx.delay_min_s = 0.1
    flow.cwnd = 100.0
    flow.ssthresh = cc.ssthresh()                    # W_max 100, ssthresh 70
    flow.cwnd = 70.0
    flow.sim.now = 10.0
    cc.on_ack(1)                                     # the epoch: K = cbrt(30 / 0.4) = 4.2 s
    assert cc.lx.bic_origin_point == 100
    assert cc.lx.bic_k == pytest.approx(math.pow(30 / (410 / 1024), 1 / 3) * 1024, abs=2)
    early = cc.lx.cnt
    flow.sim.now = 14.0                              # near the plateau: the target is ~W_max
    cc.on_ack(1)
    assert cc.lx.cnt < early


def test_a_timeout_resets_the_state_and_hystart():
    flow, cc = linux_cubic(cwnd=16.0)
    t = ack_round(flow, cc, 0.100, 0.0)
    ack_round(flow, cc, 0.120, t + 0.01)
    assert cc.lx.hystart.found
    cc.ssthresh()
    cc.on_state(OPEN, RECOVERY)                      # fast recovery keeps it
    assert cc.lx.last_max_cwnd > 0 and cc.lx.hystart.found
    cc.on_state(RECOVERY, LOSS)                      # bictcp_reset, bictcp_hystart_reset
    assert cc.lx.last_max_cwnd == 0 and cc.lx.delay_min_s == 0.0
    assert not cc.lx.hystart.found and cc.lx.epoch_start is None


def test_rtt_samples_right_after_the_epoch_start_are_ignored():
    flow, cc = linux_cubic(cwnd=50.0, ssthresh=40.0)
    cc.on_rtt(0.05)
    assert cc.lx.delay_min_s == 0.05
    flow.sim.now = 3.0
    cc.on_ack(1)                                     # epoch starts at 3 s
    cc.on_rtt(0.02)                                  # within 1 s: discarded
    assert cc.lx.delay_min_s == 0.05
    flow.sim.now = 4.5
    cc.on_rtt(0.02)
    assert cc.lx.delay_min_s == 0.02


def test_undo_is_tcp_reno_undo_cwnd():
    flow, cc = linux_cubic(cwnd=30.0)
    flow.prior_cwnd = 42.0
    assert cc.undo_cwnd() == 42.0


def test_classic_cubic_is_untouched_by_the_linux_variant():
    flow = StandInFlow(cwnd=10.0)
    cc = Cubic(flow)
    assert cc.lx is None and cc.hystart is not None


# -- in a network --------------------------------------------------------------------------------
def _linux_flow(algorithm, packets, rate_bps, delay_s, buffer_bytes):
    from components.link import Link
    from components.node import Host
    from flows.transport import Flow
    from simulator.engine import Simulator
    from topologies.spec import TransportSpec
    transport = types.SimpleNamespace(**dataclasses.asdict(TransportSpec()))
    transport.stack = "linux"
    transport.initial_cwnd_pkts = 10.0
    transport.min_rto_s = 0.2
    sim = Simulator(1)
    h1, h2 = Host("H1"), Host("H2")
    Link(sim, "L1", h1, h2, rate_bps, delay_s, buffer_bytes, "full")
    flow = Flow(sim, "F1", h1, h2, packets * 1500, 0.0, algorithm, None, transport, 1500, 40)
    return sim, flow


def test_hystart_ends_slow_start_before_the_first_loss_in_a_deep_buffer():
    # 10 Mb/s, 50 ms RTT (BDP 42 packets), a 4-BDP buffer
    sim, flow = _linux_flow(Cubic, 4000, 10e6, 0.025, 4 * 52_000)
    sender = flow.sender
    seen = {}

    def watch(_=None):
        if sender.ssthresh != math.inf and "exit" not in seen:
            seen["exit"] = (sender.cwnd, sender.retransmissions)
        if sender.finish_s is None:
            sim.schedule(0.005, watch)
    sim.schedule(0.0, watch)
    sim.run()
    cc = sender.cc
    assert cc.lx.hystart.exit_reason in ("ack_train", "delay")
    cwnd, retransmissions = seen["exit"]
    assert retransmissions == 0 and cwnd == int(cwnd) and cwnd >= 16
    assert sender.finish_s is not None and sender.timeouts == 0
