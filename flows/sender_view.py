"""What the algorithm and the outputs read from a sender, besides plain attributes.

`SenderView` is the base of `flows.sender.Sender`: the read-mostly side of the `FlowView`
protocol (flows/congestion.py) computed from the sender's parts (RTT estimator, pacer, rate
sampler, scoreboard), and the per-flow counters the outputs carry (`counters`, like Linux's
nstat MIB counters). It holds no state of its own.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flows.pacer import Pacer
    from flows.rate_sampler import RateSampler
    from flows.rtt import RttEstimator
    from flows.scoreboard import Scoreboard

# Sender.counters() keys, always all of them (0 where a mechanism is off), with their Linux
# nstat counterparts
COUNTERS = (
    "rto",               # retransmission timeouts (TcpExtTCPTimeouts)
    "tlp",               # tail loss probes sent (TcpExtTCPLossProbes)
    "rack_lost",         # packets RACK marked lost (part of TcpExtTCPLostRetransmit's kin)
    "lost_retrans",      # retransmissions found lost again (TcpExtTCPLostRetransmit)
    "spurious_undo",     # reductions undone as spurious (TcpExtTCPFullUndo+DSACKUndo+LossUndo)
    "sack_recoveries",   # fast recoveries with SACK (TcpExtTCPSackRecovery)
    "fast_retransmits",  # retransmissions during fast recovery (TcpExtTCPFastRetrans)
)


class SenderView:
    """Properties of `Sender` that read its parts, and its counters."""

    __slots__ = ()
    if TYPE_CHECKING:                 # the Sender's attributes these read
        rtt: RttEstimator
        pacer: Pacer
        rates: RateSampler | None
        scoreboard: Scoreboard
        snd_una: int
        snd_nxt: int
        high_seq: int
        n_packets: float
        packet_bytes: int
        last_packet_bytes: int
        rwnd_limited: bool
        timeouts: int
        sack_recoveries: int
        fast_retransmits: int

    @property
    def srtt(self) -> float | None:
        return self.rtt.srtt

    @property
    def min_rtt(self) -> float:
        return self.rtt.min_rtt

    @property
    def pacing_rate_bps(self) -> float | None:
        return self.pacer.rate_bps

    @pacing_rate_bps.setter
    def pacing_rate_bps(self, rate_bps: float | None) -> None:
        self.pacer.rate_bps = rate_bps

    @property
    def delivered(self) -> int:
        return self.rates.delivered if self.rates is not None else 0

    @property
    def app_limited_until(self) -> int:
        return self.rates.app_limited_until if self.rates is not None else 0

    @app_limited_until.setter
    def app_limited_until(self, delivered: int) -> None:
        if self.rates is not None:
            self.rates.app_limited_until = delivered

    @property
    def is_cwnd_limited(self) -> bool:
        """Whether the window, rather than the data left or the receive window, limits the
        sender (the extended sender keeps Linux's per-window latch, tcp_is_cwnd_limited)."""
        return self.high_seq < self.n_packets and not self.rwnd_limited

    def flight_size(self) -> int:
        """Packets sent and not yet cumulatively acknowledged (RFC 5681 FlightSize)."""
        return self.snd_nxt - self.snd_una

    def pipe(self) -> int:
        """RFC 6675 estimate of the packets in flight (see `Scoreboard.pipe`)."""
        return self.scoreboard.pipe(self.snd_una, self.snd_nxt)

    def packet_size(self, seq: int) -> int:
        return self.last_packet_bytes if seq == self.n_packets - 1 else self.packet_bytes

    def counters(self) -> dict[str, int]:
        """Per-flow counters like Linux's nstat (`COUNTERS`, always every key)."""
        scoreboard = self.scoreboard
        undo = getattr(self, "undo", None)
        return {
            "rto": self.timeouts,
            "tlp": getattr(self, "tlp_probes", 0),
            "rack_lost": getattr(scoreboard, "rack_lost", 0),
            "lost_retrans": getattr(scoreboard, "lost_retrans", 0),
            "spurious_undo": undo.undos if undo is not None else 0,
            "sack_recoveries": self.sack_recoveries,
            "fast_retransmits": self.fast_retransmits,
        }
