"""TCP Reno (RFC 5681): Tahoe plus fast recovery.

On the third duplicate ACK the lost packet is retransmitted, ssthresh becomes half the flight size
and the window is inflated to ssthresh + 3 (the three packets that left the network). Each further
duplicate ACK inflates it by one more packet, so new data keeps flowing; the first ACK of new data
ends recovery and deflates the window to ssthresh.
"""
from __future__ import annotations

from flows.congestion import OPEN, RECOVERY
from flows.tahoe import Tahoe


class Reno(Tahoe):
    """Reno: Tahoe's window growth with fast recovery (window inflation and deflation)."""

    name = "reno"
    fast_recovery = True
    __slots__ = ()

    def on_state(self, old: str, new: str) -> None:
        flow = self.flow
        if new == RECOVERY:
            flow.cwnd = flow.ssthresh + flow.dupack_threshold     # inflate
        elif old == RECOVERY and new == OPEN:
            flow.cwnd = flow.ssthresh                             # deflate
        else:
            super().on_state(old, new)

    def on_dupack(self) -> None:
        self.flow.cwnd += 1.0
