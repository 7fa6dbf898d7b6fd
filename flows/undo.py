"""Undo of a window reduction caused by spurious retransmissions (Linux's undo machinery).

Used by the extended sender (flows/linux_sender.py) when ``undo`` is on. As Linux
(net/ipv4/tcp_input.c tcp_init_undo, tcp_may_undo, tcp_packet_delayed, tcp_undo_cwnd_reduction):

* a loss episode (fast recovery, or a retransmission timeout out of OPEN) opens an undo record:
  the slow-start threshold before it (``prior_ssthresh`` = max(ssthresh, 3/4 cwnd), Linux
  tcp_current_ssthresh; none for an episode that follows an ECN reduction), the time of the
  first retransmission (``retrans_stamp``), and the number of retransmissions not yet shown to
  be spurious (``undo_retrans``; -1 before the first);
* a retransmission is shown spurious by a D-SACK (RFC 2883) for it: the receiver got the packet
  twice (Linux tcp_sacktag_write_queue decrements undo_retrans);
* the episode may be undone (tcp_may_undo) when every retransmission was D-SACKed, or when an
  ACK that advances snd_una echoes a send time before the first retransmission: the packet that
  advanced the receiver was an original sent earlier, so it was delayed, not lost (Eifel
  detection, RFC 3522, with the timestamps Linux carries on every segment; tcp_packet_delayed).
  The sender checks this where Linux does: when fast recovery ends (tcp_try_undo_recovery), on
  every D-SACK during it (tcp_try_undo_dsack), and on every ACK advancing snd_una after a
  timeout (tcp_try_undo_loss);
* undoing sets cwnd to the algorithm's ``undo_cwnd()`` (default Linux tcp_reno_undo_cwnd:
  max(cwnd, prior_cwnd)) and ssthresh back to prior_ssthresh if that is higher.

Not modelled: F-RTO (RFC 5682, Linux tcp_frto), partial undo on reordering during recovery
(tcp_try_undo_partial), and the reordering degree Linux learns (tp->reordering).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from flows.congestion import LOSS, OPEN, RECOVERY, returned_count

if TYPE_CHECKING:
    from flows.congestion import CongestionControl
    from flows.linux_sender import LinuxSender


class Undo:
    """The undo record of one sender's current loss episode."""

    __slots__ = ("marker", "prior_ssthresh", "retrans", "retrans_stamp", "retransmitted",
                 "undone", "undos")

    def __init__(self) -> None:
        self.marker = False              # an episode that may still be undone
        self.prior_ssthresh = 0.0
        self.retrans = -1                # retransmissions not shown spurious (-1: none yet)
        self.retrans_stamp = math.inf    # time of the episode's first retransmission
        self.retransmitted: set[int] = set()
        self.undone = False              # the current episode was undone
        self.undos = 0

    def begin(self, cwnd: float, ssthresh: float, after_ecn: bool) -> None:
        """tcp_init_undo, and prior_ssthresh as tcp_enter_recovery / tcp_enter_loss set it."""
        self.marker = True
        self.undone = False
        self.prior_ssthresh = 0.0 if after_ecn else max(ssthresh, 0.75 * cwnd)
        self.retrans = -1
        self.retrans_stamp = math.inf
        self.retransmitted.clear()

    def on_retransmit(self, seq: int, now: float) -> None:
        if not self.marker:
            return
        if self.retrans_stamp == math.inf:
            self.retrans_stamp = now
        self.retrans = max(self.retrans, 0) + 1
        self.retransmitted.add(seq)

    def on_dsack(self, seq: int) -> None:
        """A D-SACK: packet `seq` arrived twice."""
        if self.marker and seq in self.retransmitted and self.retrans > 0:
            self.retransmitted.discard(seq)
            self.retrans -= 1

    def may_undo(self, echo_s: float | None) -> bool:
        """tcp_may_undo: every retransmission D-SACKed, or (`echo_s`, the send time an ACK
        advancing snd_una echoes) the packet was sent before the first retransmission."""
        if not self.marker:
            return False
        if self.retrans == 0:
            return True
        return echo_s is not None and echo_s < self.retrans_stamp < math.inf

    def apply(self, flow, cc: CongestionControl) -> None:
        """tcp_undo_cwnd_reduction: the window and ssthresh from before the episode."""
        cwnd = cc.undo_cwnd()
        if cwnd.__class__ is not float or not 0.0 < cwnd < math.inf:     # (a float: checked)
            cwnd = returned_count(cc, "undo_cwnd", cwnd)
        flow.cwnd = float(cwnd)
        if self.prior_ssthresh > flow.ssthresh:
            flow.ssthresh = self.prior_ssthresh
        self.marker = False
        self.undone = True
        self.undos += 1


def undo_episode(sender: LinuxSender) -> None:
    """tcp_try_undo_recovery / tcp_try_undo_loss: the episode was spurious; after a timeout
    the packets marked lost are not (tcp_undo_cwnd_reduction's unmark_loss)."""
    undo = sender.undo
    assert undo is not None
    was_loss = sender.state == LOSS
    undo.apply(sender, sender.cc)
    if was_loss:
        sender.board.unmark_lost()
    sender.window._set_state(OPEN)


def on_dsack(sender: LinuxSender, seq: int) -> None:
    """A D-SACK for packet `seq`: maybe every retransmission of a fast recovery was spurious
    (tcp_try_undo_dsack: undone, recovery goes on); maybe the loss probe was."""
    undo = sender.undo
    if undo is not None:
        undo.on_dsack(seq)
        if sender.state == RECOVERY and undo.marker and undo.retrans == 0:
            undo.apply(sender, sender.cc)
    if sender.tlp is not None:
        sender.tlp.on_dsack(seq)
