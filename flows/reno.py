"""TCP Reno (RFC 5681): Tahoe plus fast recovery (RFC 5681 §3.2).

On the third duplicate ACK the lost packet is retransmitted, ssthresh becomes half the flight size
(§3.2 step 2, eq. (4); counted up to what the window lets out, so that a second loss after a
partial ACK ended recovery halves the window again, as in Fall and Floyd 1996) and the window is
inflated to ssthresh + 3 (step 3: the three packets that left the network). Each further duplicate
ACK inflates it by one more packet (step 4), so new data keeps flowing (step 5); the first ACK of
new data ends recovery and deflates the window to ssthresh (step 6). Outside recovery the window
grows as Tahoe's (slow start and congestion avoidance, §3.1); a timeout restarts from one packet
(§3.1). The window during recovery is the transport's (`flows.recovery.RenoWindow`, the ``"reno"``
recovery mode); Reno's own part is Tahoe's growth and ssthresh, with fast recovery switched on.
"""
from __future__ import annotations

from flows.tahoe import Tahoe


class Reno(Tahoe):
    """Reno: Tahoe's window growth with fast recovery (window inflation and deflation)."""

    name = "reno"
    theory_model = "loss"
    fast_recovery = True
    __slots__ = ()
