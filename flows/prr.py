"""Proportional Rate Reduction (RFC 6937), the window while the extended sender reduces it.

Used by the extended sender (flows/linux_sender.py) when ``prr`` is on, for a fast recovery and
for a CWR episode (an ECN echo, or a loss repaired by a tail loss probe). Linux's version
(net/ipv4/tcp_input.c tcp_init_cwnd_reduction, tcp_cwnd_reduction, tcp_end_cwnd_reduction),
with the slow-start reduction bound (PRR-SSRB, RFC 6937 §3.1):

* at the start of a reduction: prior_cwnd = cwnd, ssthresh from the algorithm, and the counts
  prr_delivered (packets delivered since) and prr_out (packets sent since) are zero; the window
  itself is not changed;
* on every ACK that delivers ``delivered`` packets (cumulatively or selectively):
  ``prr_delivered += delivered``; with ``pipe`` the packets in flight,

  - if pipe > ssthresh (the proportional part):
    ``sndcnt = ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out``;
  - else (slow-start reduction bound):
    ``sndcnt = min(ssthresh - pipe, max(prr_delivered - prr_out, delivered) + 1)``, the +1 only
    when the ACK advanced snd_una and marked nothing newly lost (Linux);
  - at least 1 while nothing was sent yet (the fast retransmit goes out at once);

  and ``cwnd = pipe + sndcnt``: the sender then sends sndcnt packets;
* at the end (snd_una passes the point where the reduction began) cwnd = ssthresh, unless the
  reduction was undone.

Windows are whole packets here, as in Linux (ssthresh and prior_cwnd floored). The
flows.recovery policies keep the state changes and the algorithm's hooks.
"""
from __future__ import annotations

import math

from flows.recovery import RecoveryWindow, SackWindow, recovery_window


class PrrWindow(SackWindow):
    """RFC 6937 PRR-SSRB during fast recovery and CWR."""

    __slots__ = ("prr_delivered", "prr_out")

    def __init__(self, flow, cc, dupack_threshold: int):
        super().__init__(flow, cc, dupack_threshold)
        self.prr_delivered = 0
        self.prr_out = 0

    def begin_reduction(self) -> None:
        """tcp_init_cwnd_reduction: remember the window, zero the counts (ssthresh is set by
        the caller's loss or ECN reaction)."""
        self.flow.prior_cwnd = self.flow.cwnd
        self.prr_delivered = 0
        self.prr_out = 0

    def _recovery_window(self) -> None:
        pass                                  # PRR changes the window ACK by ACK

    def on_sent(self, packets: int) -> None:
        self.prr_out += packets

    def on_delivery(self, delivered: int, newly_lost: int, una_advanced: bool) -> None:
        """tcp_cwnd_reduction: the window after an ACK that delivered `delivered` packets."""
        if delivered <= 0:
            return
        flow = self.flow
        pipe = flow.pipe()
        ssthresh = math.floor(flow.ssthresh)
        prior_cwnd = max(math.floor(flow.prior_cwnd), 1)
        self.prr_delivered += delivered
        delta = ssthresh - pipe
        if delta < 0:
            sndcnt = (ssthresh * self.prr_delivered + prior_cwnd - 1) // prior_cwnd - self.prr_out
        else:
            sndcnt = max(self.prr_delivered - self.prr_out, delivered)
            if una_advanced and not newly_lost:
                sndcnt += 1
            sndcnt = min(delta, sndcnt)
        sndcnt = max(sndcnt, 0 if self.prr_out else 1)
        flow.cwnd = float(max(pipe + sndcnt, 1))


def reduction_window(flow, cc, dupack_threshold: int, mode: str, prr: bool) -> RecoveryWindow:
    """The window policy of a sender: PRR for loss-based algorithms in SACK recovery when `prr`
    is on, else flows.recovery's policy for `mode`."""
    if prr and mode == "sack" and cc.loss_based:
        return PrrWindow(flow, cc, dupack_threshold)
    return recovery_window(flow, cc, dupack_threshold, mode)
