"""The window during loss recovery: one owner, the transport.

The sender (flows/sender.py) decides *when* a loss episode begins and ends and which packets to
resend; this module decides what the window is meanwhile, the same way for every algorithm of a
kind. Algorithms only supply numbers through their hooks: the new slow-start threshold
(`ssthresh()`), and for algorithms whose window comes from a model of the path rather than from
losses, the window to continue with when an episode ends (`restore_cwnd()`).

Every policy moves the flow between the states OPEN, RECOVERY and LOSS and tells the algorithm
(`on_state(old, new)`, before the window changes, so it can remember the window it had). The
policies:

==================  =======================================================================
`RenoWindow`        RFC 5681 fast recovery (``recovery = "reno"``): on entering RECOVERY
                    cwnd = ssthresh + 3 (the duplicate-ACK threshold: packets that left the
                    network), +1 per further duplicate ACK (inflation); leaving it,
                    cwnd = ssthresh (deflation)
`NewRenoWindow`     RFC 6582 (``"newreno"``): Reno's, and a partial ACK deflates the window by
                    the packets it acknowledged and adds one
`SackWindow`        RFC 6675 (``"sack"``): cwnd = ssthresh on entering RECOVERY and on leaving
                    it, no inflation (the sender counts the packets in flight instead)
`ModelWindow`       algorithms with ``loss_based = False`` (BBR): a loss does not lower ssthresh
                    or the window; when an episode ends the window is the algorithm's
                    `restore_cwnd()`
==================  =======================================================================

All of them share the RFC 5681 loss window: one packet after a retransmission timeout and after
a fast retransmit without fast recovery (Tahoe), and a loss reaction (ssthresh from the
algorithm) at most once per episode, which the sender enforces.

The numbers the hooks return are checked where they are taken (a finite number > 0, else
`flows.congestion.AlgorithmValueError` naming the hook), so a bad one never becomes the window.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from flows.congestion import LOSS, OPEN, RECOVERY, CaState, returned_count

_INF = math.inf

if TYPE_CHECKING:
    from flows.congestion import CongestionControl
    from flows.sender import Sender


class RecoveryWindow:
    """The part every policy shares: state changes, the loss reaction and the loss window."""

    __slots__ = ("cc", "dupack_threshold", "flow")

    def __init__(self, flow: Sender, cc: CongestionControl, dupack_threshold: int):
        self.flow = flow
        self.cc = cc
        self.dupack_threshold = dupack_threshold

    def _set_state(self, new: CaState) -> CaState:
        flow = self.flow
        old = flow.state
        flow.state = new
        self.cc.on_state(old, new)
        return old

    def loss_reaction(self) -> None:
        """A loss episode begins (fast retransmit, or a timeout while OPEN): the algorithm's
        slow-start threshold; the window until now is remembered (`prior_cwnd`)."""
        flow = self.flow
        flow.prior_cwnd = flow.cwnd
        ssthresh = self.cc.ssthresh()
        if ssthresh.__class__ is not float or not 0.0 < ssthresh < _INF:   # (a float: checked)
            ssthresh = returned_count(self.cc, "ssthresh", ssthresh)
        flow.ssthresh = ssthresh

    def ecn_reaction(self) -> bool:
        """An ECN echo to react to (RFC 3168 §6.1.2): ssthresh from the algorithm's
        `ecn_ssthresh()` and the window reduced to it, without retransmission. Returns whether
        the window was reduced."""
        flow = self.flow
        flow.prior_cwnd = flow.cwnd
        ssthresh = self.cc.ecn_ssthresh()
        if ssthresh.__class__ is not float or not 0.0 < ssthresh < _INF:   # (a float: checked)
            ssthresh = returned_count(self.cc, "ecn_ssthresh", ssthresh)
        flow.ssthresh = ssthresh
        flow.cwnd = min(flow.cwnd, ssthresh)
        return True

    def ecn_ack(self, ece: bool, cum: int, acked: int) -> None:
        """An ACK of an ECN flow (RFC 3168 §6.1.2): count the echo, show the ACK to the
        algorithm, react at most once per window of data (not while a loss is being repaired,
        not before data sent after the previous reaction or loss reaction is acknowledged)."""
        flow = self.flow
        if ece:
            flow.ecn_echoes += 1
        self.cc.ecn_ack(acked, ece)
        if ece and flow.state == OPEN and cum > flow.ecn_recover and cum > flow.recover:
            if self.ecn_reaction():
                flow.ecn_reactions += 1
                flow.ecn_recover = flow.high_seq
                flow.cwr_pending = True

    def enter_recovery(self) -> None:
        """Fast recovery begins (after the fast retransmit)."""
        self._set_state(RECOVERY)
        self._recovery_window()

    def _recovery_window(self) -> None:
        pass

    def on_dupack(self) -> None:
        """A duplicate ACK during fast recovery."""

    def on_partial_ack(self, acked: int) -> None:
        """A partial ACK of `acked` packets during NewReno recovery (after its retransmission)."""

    def enter_loss(self) -> None:
        """A retransmission timeout, or a fast retransmit without fast recovery: go-back-N
        from a window of one packet (RFC 5681)."""
        self._set_state(LOSS)
        self.flow.cwnd = 1.0

    def end_episode(self) -> None:
        """Everything outstanding when the episode began is acknowledged: back to OPEN."""
        if self._set_state(OPEN) == RECOVERY:
            self._after_recovery()
        else:
            self._after_loss()

    def _after_recovery(self) -> None:
        flow = self.flow
        flow.cwnd = flow.ssthresh

    def _after_loss(self) -> None:
        pass                                  # slow start has been growing the window


class RenoWindow(RecoveryWindow):
    """RFC 5681 fast recovery: inflation by the duplicate ACKs, deflation at the end."""

    __slots__ = ()

    def _recovery_window(self) -> None:
        flow = self.flow
        flow.cwnd = flow.ssthresh + self.dupack_threshold     # inflate

    def on_dupack(self) -> None:
        self.flow.cwnd += 1.0


class NewRenoWindow(RenoWindow):
    """RFC 6582: Reno's window, deflated by partial ACKs."""

    __slots__ = ()

    def on_partial_ack(self, acked: int) -> None:
        flow = self.flow
        flow.cwnd = max(flow.cwnd - acked + 1.0, 1.0)


class SackWindow(RecoveryWindow):
    """RFC 6675: the window is ssthresh throughout fast recovery, without inflation."""

    __slots__ = ()

    def _recovery_window(self) -> None:
        flow = self.flow
        flow.cwnd = flow.ssthresh


class ModelWindow(RecoveryWindow):
    """For algorithms whose window comes from a model of the path (``loss_based = False``):
    losses are repaired but lower neither ssthresh nor the window; when an episode ends the
    window is the algorithm's `restore_cwnd()`. The loss window after a timeout still applies."""

    __slots__ = ()

    def loss_reaction(self) -> None:
        pass

    def ecn_reaction(self) -> bool:
        return False                          # a model-based window ignores ECN as it does loss

    def _after_recovery(self) -> None:
        self.flow.cwnd = self._restored()

    def _after_loss(self) -> None:
        self.flow.cwnd = self._restored()

    def _restored(self) -> float:
        cwnd = self.cc.restore_cwnd()
        if cwnd.__class__ is not float or not 0.0 < cwnd < _INF:     # (a float: checked)
            cwnd = returned_count(self.cc, "restore_cwnd", cwnd)
        return cwnd


def recovery_window(flow: Sender, cc: CongestionControl, dupack_threshold: int,
                    mode: str | None = None) -> RecoveryWindow:
    """The recovery window policy for algorithm `cc` (its `loss_based`), in recovery `mode`
    (default: the algorithm's `recovery`). (PRR: flows/prr.py `reduction_window`.)"""
    if not cc.loss_based:
        return ModelWindow(flow, cc, dupack_threshold)
    mode = cc.recovery if mode is None else mode
    policy = {"reno": RenoWindow, "newreno": NewRenoWindow, "sack": SackWindow}[mode]
    return policy(flow, cc, dupack_threshold)
