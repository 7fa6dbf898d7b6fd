"""HyStart++ (RFC 9406) in CUBIC: slow start ends on a measured RTT increase, before the first loss.

A 50 Mb/s, 20 ms bottleneck (base RTT about 44 ms, 270 packets in flight fill it) with a 2000 KB
buffer: plain slow start doubles the window until the buffer overflows (over 1000 packets lost),
while HyStart++ sees the round's minimum RTT rise, goes through Conservative Slow Start into
congestion avoidance, and loses nothing in the first 1.3 s.
"""
from __future__ import annotations

import math

from networks import dumbbell, run

from flows.hystart import CSS_ROUNDS, HyStart


def _run(hystart):
    topology = dumbbell(1, rate_mbps=50.0, delay_ms=20.0, buffer_kb=2000.0, algorithm="cubic",
                        params={"hystart": hystart}, duration_s=1.3, name=f"hystart_{hystart}")
    results = run(topology)
    drops = results.summary["links"]["L"]["directions"]["R1->R2"]["drops"]
    return results.network.flows["F0"], drops


def test_hystart_leaves_slow_start_without_loss():
    flow, drops = _run(True)
    assert flow.cc.hystart.exited_s is not None
    # left slow start: in Conservative Slow Start, or past it in congestion avoidance
    assert flow.cc.hystart.in_css or flow.ssthresh < math.inf
    assert drops == 0 and flow.retransmissions == 0 and flow.timeouts == 0


def test_without_hystart_slow_start_overshoots():
    flow, drops = _run(False)
    assert flow.cc.hystart is None
    assert drops > 1000 and flow.retransmissions > 0


def test_hystart_is_on_by_default():
    from flows import ALGORITHMS
    assert ALGORITHMS["cubic"].PARAMETERS["hystart"] is True


def test_rtt_increase_enters_css_and_css_rounds_end_slow_start():
    hs = HyStart()
    nxt = 10
    hs.on_ack(1, nxt, 0.0)                      # first round begins
    for _ in range(8):
        hs.on_rtt(0.100)
    hs.on_ack(nxt, 30, 0.1)                     # next round: lastRoundMinRTT = 100 ms
    for _ in range(8):
        hs.on_rtt(0.1125)                       # +12.5 ms >= clamp(100/8, 4, 16) ms
    assert not hs.in_css
    hs.on_ack(nxt + 1, 30, 0.15)
    assert hs.in_css and hs.exited_s == 0.15 and hs.growth_divisor() == 4
    end = 30
    for i in range(CSS_ROUNDS):
        for _ in range(8):
            hs.on_rtt(0.1125)
        done = hs.on_ack(end, end + 20, 0.2 + i)
        end += 20
    assert done


def in_css() -> HyStart:
    """A HyStart++ that entered CSS at t = 0.15 s: a first round at 100 ms, the second at 120
    ms (window_end 30), baseline 120 ms."""
    hs = HyStart()
    hs.on_ack(1, 10, 0.0)
    for _ in range(8):
        hs.on_rtt(0.100)
    hs.on_ack(10, 30, 0.1)
    for _ in range(8):
        hs.on_rtt(0.120)
    hs.on_ack(11, 30, 0.15)
    assert hs.in_css
    return hs


def test_rtt_below_baseline_in_css_resumes_slow_start():
    hs = in_css()
    for _ in range(8):
        hs.on_rtt(0.101)                        # below cssBaselineMinRtt (120 ms): spurious
    assert not hs.on_ack(30, 50, 0.3)
    assert not hs.in_css


def test_hystart_parameter_validation():
    from flows.cubic import Cubic
    assert Cubic.param_problem("hystart", False) is None
    assert Cubic.param_problem("hystart", 1) is None
    assert Cubic.param_problem("hystart", "yes") is not None


def test_a_spurious_exit_is_undone_on_the_ack_not_at_the_rounds_end():
    """RFC 9406 §4.2 checks the round's minimum RTT against the baseline on every ACK in CSS:
    slow start resumes as soon as N_RTT_SAMPLE samples of the round show it, mid-round."""
    hs = in_css()
    hs.on_ack(30, 50, 0.2)                      # CSS's first round begins (ends at 50)
    for _ in range(7):
        hs.on_rtt(0.101)
    assert not hs.on_ack(31, 50, 0.21) and hs.in_css       # 7 samples: not yet judged
    hs.on_rtt(0.101)                                       # the 8th, below the baseline
    assert not hs.on_ack(32, 50, 0.22)
    assert not hs.in_css and hs.growth_divisor() == 1      # mid-round, slow start again
