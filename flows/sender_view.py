"""What the algorithm and the outputs read from a sender, besides plain attributes.

`SenderView` is the base of `flows.sender.Sender`: the read-mostly side of the `FlowView`
protocol (flows/congestion.py) computed from the sender's parts (RTT estimator, pacer, rate
sampler, scoreboard), and the per-flow counters the outputs carry (`counters`, like Linux's
nstat MIB counters). It holds no state of its own.
"""
from __future__ import annotations

from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable

from flows.congestion import checked_pacing_rate
from simulator.compiled import plain_mypyc_attr

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr

    from flows.pacer import Pacer
    from flows.rate_sampler import RateSampler
    from flows.rtt import RttEstimator
    from flows.scoreboard import Scoreboard


# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)

_INF = float("inf")

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


_readers: dict = {}          # counter paths -> `counter_reader`'s answer (a run's senders share a few)


def counter_reader(paths: tuple) -> tuple:
    """For a sender's `counter_paths()`: (the names of the counters it keeps, in `COUNTERS`
    order; a getter of the tuple of their values from the sender; their places in `COUNTERS`),
    made once per set of paths. The one reader of the counters: `SenderView.counters` and the
    flows' probes (netsim/probes.py, every sample) read them through it."""
    found = _readers.get(paths)
    if found is None:
        kept = [(name, path) for name, path in zip(COUNTERS, paths) if path is not None]
        names = tuple(name for name, _ in kept)
        places = tuple(i for i, path in enumerate(paths) if path is not None)
        getter: Callable[[Any], tuple]     # (any sender: the probes read stand-ins too)
        if len(kept) > 1:
            getter = attrgetter(*[path for _, path in kept])
        else:                        # (attrgetter of one path gives its value, not a tuple)
            getters = [attrgetter(path) for _, path in kept]
            getter = lambda sender: tuple(get(sender) for get in getters)   # noqa: E731
        found = _readers[paths] = (names, getter, places)
    return found


@mypyc_attr(allow_interpreted_subclasses=True)
class SenderView:
    """Properties of `Sender` that read its parts, and its counters."""

    __slots__ = ()
    # The Sender's attributes these read, which its slots hold (declared here, not under an
    # `if`, which mypyc does not take in a class body). `n_packets` is a count or math.inf (a
    # flow without end), kept as that object when compiled (docs/model.md, "Compiled core").
    rtt: RttEstimator
    pacer: Pacer
    cc: Any                      # the algorithm (flows/congestion.py), named by a bad pacing rate
    rates: RateSampler | None
    scoreboard: Scoreboard
    snd_una: int
    snd_nxt: int
    high_seq: int
    n_packets: int | float
    packet_bytes: int
    last_packet_bytes: int
    rwnd_limited: bool
    timeouts: int
    sack_recoveries: int
    fast_retransmits: int

    @property
    def srtt_s(self) -> float | None:
        return self.rtt.srtt

    @property
    def min_rtt_s(self) -> float:
        return self.rtt.min_rtt

    @property
    def srtt(self) -> float | None:            # (srtt_s's older name)
        return self.rtt.srtt

    @property
    def min_rtt(self) -> float:                # (min_rtt_s's older name)
        return self.rtt.min_rtt

    @property
    def pacing_rate_bps(self) -> float | None:
        return self.pacer.rate_bps

    @pacing_rate_bps.setter
    def pacing_rate_bps(self, rate_bps: Any) -> None:
        if rate_bps.__class__ is not float or not 0.0 < rate_bps < _INF:   # (a float: checked)
            # (the algorithm is attached once its constructor returns: one that sets the rate
            # in its __init__ has no `cc` yet)
            rate_bps = checked_pacing_rate(getattr(self, "cc", None), rate_bps)
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
        names, read, _ = counter_reader(self.counter_paths())
        counts = dict.fromkeys(COUNTERS, 0)
        counts.update(zip(names, read(self)))
        return counts

    def counter_paths(self) -> tuple[str | None, ...]:
        """Where this sender keeps each counter of `COUNTERS`, in that order: its attribute path
        from the sender (for `operator.attrgetter`), None for a mechanism the sender does not run
        (the counter is 0). Fixed once the sender is built, so a reader may build its getter
        once (netsim/probes.py reads them every sample)."""
        scoreboard = self.scoreboard
        return ("timeouts",
                "tlp.probes" if getattr(self, "tlp", None) is not None else None,
                "scoreboard.rack_lost" if hasattr(scoreboard, "rack_lost") else None,
                "scoreboard.lost_retrans" if hasattr(scoreboard, "lost_retrans") else None,
                "undo.undos" if getattr(self, "undo", None) is not None else None,
                "sack_recoveries", "fast_retransmits")


class CwndUsage:
    """Whether the window limits a sender (Linux tcp_cwnd_validate, tcp_is_cwnd_limited): the
    answer is latched once per window of data (until snd_una passes the snd_nxt of the last
    update), and, in slow start, the window counts as limiting while it is below twice the
    most packets out in that window (so slow start may double it)."""

    __slots__ = ("latched", "max_packets_out", "usage_seq")

    def __init__(self) -> None:
        self.latched = False
        self.max_packets_out = 0
        self.usage_seq = 0

    def validate(self, snd_una: int, snd_nxt: int, cwnd_limited: bool) -> None:
        """After a round of sending: `cwnd_limited` if the window stopped it."""
        packets_out = snd_nxt - snd_una
        if (snd_una >= self.usage_seq or cwnd_limited
                or (not self.latched and packets_out > self.max_packets_out)):
            self.latched = cwnd_limited
            self.max_packets_out = packets_out
            self.usage_seq = snd_nxt

    def is_cwnd_limited(self, cwnd: float, ssthresh: float) -> bool:
        if self.latched:
            return True
        return cwnd < ssthresh and cwnd < 2 * self.max_packets_out
