"""TCP Tahoe (Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988).

Slow start below ssthresh, additive increase above it, fast retransmit on the third duplicate ACK.
Every loss, detected by duplicate ACKs or by a timeout, halves ssthresh (the base class's
`ssthresh()`, FlightSize / 2) and restarts from a window of one packet: without fast recovery,
the transport enters its loss state, sets the loss window and goes back to the first
unacknowledged packet.
"""
from __future__ import annotations

from flows.congestion import CongestionControl


class Tahoe(CongestionControl):
    """Tahoe: slow start, congestion avoidance, fast retransmit, window to 1 on any loss."""

    name = "tahoe"
    theory_model = "loss"      # Padhye et al.'s loss response (Tahoe has no model of its own)
    fast_recovery = False
    __slots__ = ()

    on_ack = CongestionControl.standard_growth      # slow start, then additive increase
