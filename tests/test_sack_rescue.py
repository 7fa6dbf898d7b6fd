"""SACK recovery's rescue retransmission (RFC 6675 §4, NextSeg rule (4)): on a partial ACK, with
no hole known and every packet sent before the episode began, the sender resends the highest
packet the receiver has not selectively acknowledged, once per recovery episode, unless it is
already being retransmitted, so a lost tail packet is repaired in a round trip instead of by
the retransmission timeout (1 s here), and no packet still in flight is resent. Rule (3) is not implemented
(docs/model.md); recoveries without SACK (Reno, NewReno, Tahoe) have no rescue, nor has a tail
sent after the recovery ended (no duplicate ACK can reveal it: the timeout repairs it).""" 
from __future__ import annotations

import pytest

from flows.cubic import Cubic
from flows.dctcp import Dctcp
from flows.reno import Reno
from flows.scoreboard import Scoreboard

PACKETS = 300


def run(make_flow, drop_at, drop_first_copy, algorithm, lost):
    sim, _, h2, flow = make_flow(packets=PACKETS, algorithm=algorithm)
    drop_at(h2, drop_first_copy(lost))
    sim.run()
    assert flow.finished
    return flow


@pytest.mark.parametrize("algorithm", [Cubic, Dctcp], ids=lambda c: c.__name__)
def test_a_lost_last_packet_in_sack_recovery_is_rescued_without_a_timeout(
        make_flow, drop_at, drop_first_copy, algorithm):
    flow = run(make_flow, drop_at, drop_first_copy, algorithm, {250, PACKETS - 1})
    assert flow.sender.recovery_mode == "sack"
    assert flow.timeouts == 0
    assert flow.retransmissions == flow.sender.fast_retransmits == 2      # the hole, the rescue
    alone = run(make_flow, drop_at, drop_first_copy, algorithm, {250})
    assert flow.finish_s - alone.finish_s < 0.05        # a round trip or so, not the 1 s RTO


@pytest.mark.parametrize("algorithm", [Cubic, Dctcp, Reno], ids=lambda c: c.__name__)
@pytest.mark.parametrize("from_end", [1, 2, 4, 5, 8, 20, 80])
def test_one_loss_in_the_last_window_costs_one_retransmission(
        make_flow, drop_at, drop_first_copy, algorithm, from_end):
    """No rescue of a packet in flight: not at the episode's start (the last packets have not
    been reported yet), nor of the hole just retransmitted (a loss four packets from the end
    was resent twice at once)."""
    flow = run(make_flow, drop_at, drop_first_copy, algorithm, {PACKETS - from_end})
    assert flow.retransmissions == 1                 # the timeout's, for the last three
    assert flow.timeouts == (from_end < 4)          # (after them, too few duplicate ACKs)


def test_one_rescue_per_episode(make_flow, drop_at, drop_first_copy):
    flow = run(make_flow, drop_at, drop_first_copy, Cubic, {250, PACKETS - 2, PACKETS - 1})
    assert flow.timeouts == 1 and flow.sender.fast_retransmits == 2
    assert flow.retransmissions == 3


def test_no_rescue_without_a_tail_loss_or_without_sack(make_flow, drop_at, drop_first_copy):
    flow = run(make_flow, drop_at, drop_first_copy, Cubic, {100})
    assert flow.timeouts == 0 and flow.retransmissions == 1          # mid-transfer: new data
    reno = run(make_flow, drop_at, drop_first_copy, Reno, {250, PACKETS - 1})
    assert reno.sender.recovery_mode != "sack" and reno.timeouts == 1


def test_the_scoreboards_rescue_by_hand():
    board = Scoreboard(3)
    for seq in (12, 13, 14, 16):
        board.record(seq)
    board.retransmitting(17)
    assert board.rescue(10, 18, 18) is None          # the highest is being retransmitted
    board.retx_out.clear()
    board.retx_next = 0
    # outstanding 10..17: the highest not sacked is 17; then none again in this episode
    assert board.rescue(10, 18, 18) == 17
    assert board.rescue(10, 18, 18) is None
    assert board.rescue(18, 18, 18) is None          # snd_una not above RescueRxt
    assert board.retx_out == set() and board.retx_next == 0   # neither pipe nor HighRxt move
    for seq in (17, 19):
        board.record(seq)
    assert board.rescue(19, 21, 21) == 20             # a later episode (HighACK > RescueRxt)
    board = Scoreboard(3)
    for seq in (5, 6, 7):
        board.record(seq)
    assert board.rescue(5, 8, 8) is None              # everything outstanding is sacked
