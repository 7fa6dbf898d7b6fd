"""Pacing: packets leave no faster than a rate the congestion-control algorithm sets.

Packets leave in quanta of max(2 packets, 1 ms at the pacing rate), as Linux sizes its pacing
bursts; each packet pushes the start of the next quantum back by its size at the pacing rate, so
the average is the pacing rate. When a quantum is spent and the next may not start yet, a
scheduled wake-up resumes sending. O(1) per packet; flows whose rate is None do not pace.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from simulator.engine import Simulator

PACING_QUANTUM_S = 0.001   # pacing releases max(2 packets, this much at the pacing rate) at once


class Pacer:
    """Spaces one sender's packets at `rate_bps` (None: no pacing); calls `resume` when it may
    send again after holding packets back."""

    __slots__ = ("budget", "next_send_s", "packet_bytes", "rate_bps", "resume", "sim", "wake_at")

    def __init__(self, sim: Simulator, packet_bytes: int, resume: Callable[[], None]):
        self.sim = sim
        self.packet_bytes = packet_bytes
        self.resume = resume
        self.rate_bps: float | None = None   # set by the algorithm to pace; None: no pacing
        self.next_send_s = 0.0                  # when the next quantum may start
        self.wake_at: float | None = None    # time of the pending wake-up, if any
        self.budget = 0                         # packets the current quantum may still send

    def held(self) -> bool:
        """Whether the current quantum is spent and the next may not start yet; if so, a
        wake-up is scheduled for when it may. (Callers may skip the call while `budget` > 0.)"""
        if self.budget <= 0 and self.sim.now < self.next_send_s:
            self._wake()
            return True
        return False

    def pace(self, size_bytes: int) -> bool:
        """Whether a packet of `size_bytes` may leave now (it is then counted); if not, a
        wake-up is scheduled for when it may."""
        now = self.sim.now
        rate = self.rate_bps
        assert rate is not None
        if self.budget <= 0:
            if now < self.next_send_s:
                self._wake()
                return False
            self.budget = max(2, int(rate * PACING_QUANTUM_S / (8.0 * self.packet_bytes)))
        self.budget -= 1
        start = self.next_send_s if self.next_send_s > now else now
        self.next_send_s = start + size_bytes * 8.0 / rate
        return True

    def _wake(self) -> None:
        at = self.next_send_s
        if self.wake_at is None or self.wake_at > at:
            self.wake_at = at
            self.sim.schedule_at(at, self._wakeup, at)

    def _wakeup(self, at: float) -> None:
        if at != self.wake_at:
            return                                    # superseded by an earlier wake-up
        self.wake_at = None
        self.resume()
