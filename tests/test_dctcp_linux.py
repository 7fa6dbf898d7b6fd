"""DCTCP on the Linux stack (flows/dctcp.py): Linux tcp_dctcp's alpha in fixed point
(dctcp_update_alpha: per window, g = 1/16, min_not_zero decay), dctcp_ssthresh for the CWR
reduction, cwnd / 2 on a loss, dctcp_cwnd_undo."""
from __future__ import annotations

import pytest

from flows.dctcp import Dctcp
from flows.testing import StandInFlow


def linux_dctcp(cwnd=100.0, **params):
    flow = StandInFlow(cwnd=cwnd, stack="linux")
    flow.snd_nxt = 100
    cc = Dctcp(flow, params or None)
    cc.init()
    return flow, cc


def window(cc, flow, marked_every, packets=100):
    """Acknowledge `packets` (one per ACK, each releasing a new packet: a window of that many
    in flight), every `marked_every`-th with ECE."""
    start = flow.snd_una
    for i in range(packets):
        flow.snd_una = start + i + 1
        flow.snd_nxt = flow.snd_una + packets
        cc.ecn_ack(1, bool(marked_every) and i % marked_every == 0)


@pytest.mark.parametrize("every, fraction", [(4, 0.25), (10, 0.10), (2, 0.5), (1, 1.0)])
def test_alpha_converges_to_the_marked_fraction(every, fraction):
    flow, cc = linux_dctcp()
    for _ in range(300):
        window(cc, flow, every)
    # the fixed point: alpha >> 4 == (marked << 6) / delivered, so alpha is at most 15/1024
    # above the fraction (the decay truncates)
    assert fraction <= cc.alpha <= fraction + 16 / 1024
    assert cc.alpha == cc.alpha_fp / 1024 and cc.report() == {"alpha": cc.alpha}


def test_one_update_per_window_at_snd_una_reaching_next_seq():
    flow, cc = linux_dctcp()
    flow.snd_una = 0
    cc.window_end = 10
    for una in range(1, 10):
        flow.snd_una = una
        cc.ecn_ack(1, False)
    assert cc.alpha_updates == 0
    flow.snd_una = 10                                  # !before(snd_una, next_seq)
    cc.ecn_ack(1, True)
    assert cc.alpha_updates == 1
    # 1024 - 1024 >> 4 + (1 << 6) / 10 = 960 + 6
    assert cc.alpha_fp == 966 and cc.window_end == flow.snd_nxt


def test_a_small_alpha_drops_to_zero_in_a_window_without_marks():
    flow, cc = linux_dctcp(alpha_init=16 / 1024)
    window(cc, flow, 0)
    assert cc.alpha_fp == 15                           # 16 - 16 >> 4
    window(cc, flow, 0)
    assert cc.alpha_fp == 0 and cc.alpha == 0.0        # min_not_zero(15, 0) = 15: all of it


def test_the_classic_alpha_decays_smoothly():
    flow = StandInFlow(cwnd=100.0)
    flow.snd_nxt = 100
    cc = Dctcp(flow, {"alpha_init": 16 / 1024})
    window(cc, flow, 0)
    window(cc, flow, 0)
    assert 0 < cc.alpha < 16 / 1024


@pytest.mark.parametrize("alpha_fp, cwnd, expected", [
    (1024, 100, 50), (256, 100, 88), (512, 7, 6), (1024, 3, 2), (0, 40, 40),
])
def test_ecn_reduction_is_dctcp_ssthresh(alpha_fp, cwnd, expected):
    _flow, cc = linux_dctcp(cwnd=float(cwnd))
    cc.alpha_fp = alpha_fp
    assert cc.ecn_ssthresh() == expected               # cwnd - (cwnd alpha >> 11), >= 2
    assert cc.loss_cwnd == cwnd


def test_a_loss_halves_the_window_whatever_alpha():
    flow, cc = linux_dctcp(cwnd=81.0)
    cc.alpha_fp = 100
    flow.flight = 20                                    # the window, not the flight size
    assert cc.ssthresh() == 40.0 and cc.loss_cwnd == 81.0
    flow.cwnd = 40.0
    assert cc.undo_cwnd() == 81.0                       # dctcp_cwnd_undo
    flow.cwnd = 90.0
    assert cc.undo_cwnd() == 90.0


def test_growth_is_linux_reno():
    flow, cc = linux_dctcp(cwnd=10.0)
    cc.on_ack(2)
    assert flow.cwnd == 12.0                            # tcp_slow_start: the whole ACK
    flow.ssthresh = 12.0
    for _ in range(12):
        cc.on_ack(1)
    assert flow.cwnd == 13.0                            # tcp_cong_avoid_ai(cwnd)


def test_classic_reactions_are_unchanged():
    flow = StandInFlow(cwnd=100.0)
    cc = Dctcp(flow, {"alpha_init": 0.5})
    assert cc.ecn_ssthresh() == 75.0
    flow.flight = 60
    assert cc.ssthresh() == 30.0                        # RFC 5681: FlightSize / 2
