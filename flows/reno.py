"""TCP Reno (RFC 5681): Tahoe plus fast recovery.

On the third duplicate ACK the lost packet is retransmitted, ssthresh becomes half the flight size
and the window is inflated to ssthresh + 3 (the three packets that left the network). Each further
duplicate ACK inflates it by one more packet, so new data keeps flowing; the first ACK of new data
ends recovery and deflates the window to ssthresh. The window during recovery is the transport's
(`flows.recovery.RenoWindow`, the ``"reno"`` recovery mode); Reno's own part is Tahoe's growth and
ssthresh, with fast recovery switched on.
"""
from __future__ import annotations

from flows.tahoe import Tahoe


class Reno(Tahoe):
    """Reno: Tahoe's window growth with fast recovery (window inflation and deflation)."""

    name = "reno"
    theory_model = "loss"
    fast_recovery = True
    __slots__ = ()
