"""TCP Tahoe (Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988).

Slow start below ssthresh, additive increase above it, fast retransmit on the third duplicate ACK,
as RFC 5681 writes them down:

* slow start (RFC 5681 §3.1, eq. (2): cwnd += min(N, SMSS) per ACK) and congestion avoidance
  (§3.1, eq. (3): about one packet per round trip), the base class's `standard_growth`;
* every loss, detected by the third duplicate ACK (fast retransmit, §3.2 steps 2-3) or by a
  timeout (§3.1), halves ssthresh (the base class's `ssthresh()`, §3.1 eq. (4):
  max(FlightSize / 2, 2), FlightSize counted up to what the window lets out) and restarts from
  a window of one packet, the loss window LW of §3.1: without fast recovery (§3.2 steps 3-6,
  Reno's), the transport enters its loss state, sets the loss window and goes back to the first
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

    on_ack = CongestionControl.standard_growth      # slow start, then additive increase (RFC 5681 §3.1)
