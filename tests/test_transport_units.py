"""Unit tests of the classic transport's parts (issue 24 item 6): the SACK scoreboard, RTO
backoff, and how each recovery window policy enters and leaves an episode
(flows/scoreboard.py, flows/rtt.py, flows/recovery.py)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.congestion import LOSS, OPEN, RECOVERY, CongestionControl
from flows.prr import PrrWindow, reduction_window
from flows.recovery import ModelWindow, NewRenoWindow, RenoWindow, SackWindow, recovery_window
from flows.rtt import RttEstimator
from flows.scoreboard import Scoreboard


# -- scoreboard --------------------------------------------------------------------------------
def test_advance_forgets_what_the_cumulative_ack_covers_and_recomputes_the_top():
    board = Scoreboard(3)
    for seq in (12, 14, 15, 18, 20):
        board.record(seq)
    board.retransmitting(10)
    assert board.top == [15, 18, 20]
    board.advance(10, 16)
    assert board.sacked == {18, 20} and board.retx_out == set()
    assert board.top == [18, 20]
    assert board.lost_count(16, 2) == 0               # fewer than 3 sacked: nothing lost


def test_next_hole_resumes_above_the_last_retransmission():
    board = Scoreboard(3)
    for seq in (5, 7, 8, 9):
        board.record(seq)
    assert board.next_hole(0) == 0
    board.retransmitting(0)
    assert board.next_hole(0) == 1
    for seq in (1, 2, 3, 4, 6):
        board.retransmitting(seq)
    assert board.next_hole(0) is None                 # 7 is the third highest: nothing below left


def test_a_sacked_retransmission_leaves_the_pipe():
    board = Scoreboard(3)
    for seq in (4, 5, 6):
        board.record(seq)
    board.retransmitting(0)
    assert board.pipe(0, 8) == 8 - 3 - 4 + 1
    board.record(0)
    assert board.retx_out == set() and board.pipe(0, 8) == 8 - 4 - 3
    board.clear_retransmissions()
    assert board.retx_out == set()


@settings(max_examples=50, deadline=None)
@given(st.sets(st.integers(min_value=1, max_value=60), max_size=40))
def test_lost_count_matches_its_definition(sacked):
    board = Scoreboard(3)
    for seq in sorted(sacked):
        board.record(seq)
    top = sorted(sacked)[-3:]
    expected = 0 if len(sacked) < 3 else sum(
        1 for seq in range(0, top[0]) if seq not in sacked)
    assert board.lost_count(0, len(sacked)) == expected


# -- RTO backoff -------------------------------------------------------------------------------
def test_backoff_doubles_up_to_the_maximum_and_a_sample_recomputes():
    rtt = RttEstimator(1.0, 0.2, 10.0)
    rtt.sample(0.1)
    base = rtt.rto
    backed = []
    for _ in range(8):
        rtt.back_off()
        backed.append(rtt.rto)
    assert backed[:5] == [base * 2 ** k for k in range(1, 6)]   # 0.3 s -> 9.6 s
    assert backed[-1] == 10.0
    rtt.sample(0.1)
    assert rtt.rto < 1.0


# -- recovery windows ----------------------------------------------------------------------------
class _Flow:
    def __init__(self, cwnd=20.0, flight=20):
        self.cwnd = cwnd
        self.ssthresh = math.inf
        self.prior_cwnd = cwnd
        self.state = OPEN
        self.flight = flight

    def flight_size(self):
        return self.flight


class _Cc(CongestionControl):
    name = "unit"
    __slots__ = ("states",)

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.states = []

    def on_state(self, old, new):
        self.states.append((old, new))

    def restore_cwnd(self):
        return 33.0

    on_ack = CongestionControl.standard_growth


class _ModelCc(_Cc):
    name = "unit-model"
    loss_based = False


def _episode(policy, loss_based=True):
    flow = _Flow()
    cc = (_Cc if loss_based else _ModelCc)(flow)
    window = policy(flow, cc, 3)
    window.loss_reaction()
    window.enter_recovery()
    return flow, cc, window


def test_reno_inflates_by_three_and_each_dupack_and_deflates_at_the_end():
    flow, cc, window = _episode(RenoWindow)
    assert flow.ssthresh == 10.0 and flow.cwnd == 13.0 and flow.prior_cwnd == 20.0
    window.on_dupack()
    assert flow.cwnd == 14.0
    window.end_episode()
    assert flow.cwnd == 10.0 and flow.state == OPEN
    assert cc.states == [(OPEN, RECOVERY), (RECOVERY, OPEN)]


def test_newreno_partial_ack_deflates_by_the_acked_packets_plus_one():
    flow, _, window = _episode(NewRenoWindow)
    window.on_partial_ack(5)
    assert flow.cwnd == 13.0 - 5 + 1
    window.on_partial_ack(100)
    assert flow.cwnd == 1.0


def test_sack_window_is_ssthresh_throughout():
    flow, _, window = _episode(SackWindow)
    assert flow.cwnd == 10.0
    window.on_dupack()
    assert flow.cwnd == 10.0
    window.end_episode()
    assert flow.cwnd == 10.0 and flow.state == OPEN


def test_a_model_window_keeps_its_window_and_restores_the_algorithms():
    flow, _, window = _episode(ModelWindow, loss_based=False)
    assert flow.ssthresh == math.inf and flow.cwnd == 20.0
    window.end_episode()
    assert flow.cwnd == 33.0


def test_a_timeout_episode_ends_without_touching_a_loss_based_window():
    flow = _Flow()
    cc = _Cc(flow)
    window = SackWindow(flow, cc, 3)
    window.loss_reaction()
    window.enter_loss()
    assert flow.cwnd == 1.0 and flow.state == LOSS
    flow.cwnd = 7.0                                   # slow start meanwhile
    window.end_episode()
    assert flow.cwnd == 7.0 and flow.state == OPEN


def test_policy_choice_follows_mode_and_prr():
    flow = _Flow()
    cc = _Cc(flow)
    assert type(recovery_window(flow, cc, 3)) is RenoWindow
    assert type(recovery_window(flow, cc, 3, "sack")) is SackWindow
    assert type(reduction_window(flow, cc, 3, "sack", prr=True)) is PrrWindow
    assert type(reduction_window(flow, cc, 3, "reno", prr=True)) is RenoWindow
    with pytest.raises(KeyError):
        recovery_window(flow, cc, 3, "vegas")
