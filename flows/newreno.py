"""TCP NewReno (RFC 6582): Reno whose fast recovery survives several losses in one window.

Reno leaves fast recovery at the first ACK of new data, so a second loss in the same window waits
for three more duplicate ACKs, or for a timeout. NewReno remembers the highest packet outstanding
when recovery began (``recover``); an ACK below it is a *partial* ACK: the next unacknowledged
packet is lost too, so it is retransmitted at once and recovery continues, the window deflated by
the packets the partial ACK covered plus one. Recovery ends with the ACK that covers ``recover``
(window deflated to ssthresh). Everything else is Reno's. The partial-ACK machinery and its
window are the transport's ``"newreno"`` recovery mode (flows/sender.py, flows/recovery.py).
"""
from __future__ import annotations

from flows.congestion import RecoveryMode
from flows.reno import Reno


class NewReno(Reno):
    """NewReno: Reno with partial-ACK handling in fast recovery (RFC 6582)."""

    name = "newreno"
    recovery = RecoveryMode.NEWRENO
    __slots__ = ()
