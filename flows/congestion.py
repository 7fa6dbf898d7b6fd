"""The congestion-control interface: the small set of hooks an algorithm overrides.

The transport (`flows.transport.Flow`, its `flows.sender.Sender`) owns sequence numbers, ACK
processing, loss detection, the retransmission timer and retransmission, and the window during
loss recovery (`flows.recovery`: inflation, deflation, the loss window). It keeps the window
state (`flow.cwnd`, `flow.ssthresh`, both in packets) and calls these hooks, in the spirit of
Linux's `tcp_congestion_ops`:

==================  ==============================================================================
hook                when the transport calls it
==================  ==============================================================================
``init()``          once, when the flow starts (after the transport set the initial window)
``ssthresh()``      on a loss reaction (fast retransmit or first timeout of an episode), if
                    ``loss_based``: returns the new slow-start threshold
``on_ack(n)``       an ACK advanced the cumulative ACK by ``n`` packets while not in fast
                    recovery: grow the window
``on_rtt(rtt_s)``   a valid RTT sample (Karn's rule applied)
``on_state(old,     the transport moved between OPEN, RECOVERY and LOSS; told before the
new)``              transport sets the window of the new state (a notification: the window
                    during recovery is the transport's)
``restore_cwnd()``  a loss episode ended, if not ``loss_based``: returns the window to go on with
``tick()``          every ``tick_interval_s`` seconds, if the algorithm sets it
``on_rate_sample``  an ACK delivered packets and the algorithm set ``wants_rate_samples``: a
``(rs)``            delivery-rate sample (BBR's input)
``ecn_ack(n, ece)`` (ECN flows only) every ACK: it acknowledged ``n`` new packets, carried ECE or not
``ecn_ssthresh()``  (ECN flows only) an ECE to react to, at most once per window, if ``loss_based``:
                    returns the new ssthresh; the transport sets the window to it (default: as on
                    a loss, ``ssthresh()``)
==================  ==============================================================================

Algorithms may also pace: setting ``flow.pacing_rate_bps`` makes the transport release packets
no faster than that rate.

What an algorithm may read and set on its flow is the `FlowView` protocol below: the transport's
`flows.sender.Sender` implements it, and the built-in algorithms are type-checked against it
(mypy). It is the interface documented for plugin authors (docs/algorithms.md, "The algorithm
interface").
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, Protocol

if TYPE_CHECKING:
    import random

    from flows.rate_sampler import RateSample

OPEN = "open"          # no loss being repaired
RECOVERY = "recovery"  # fast recovery after a fast retransmit
LOSS = "loss"          # after a retransmission timeout (or Tahoe's fast retransmit): go-back-N


class Clock(Protocol):
    """The simulator as an algorithm sees it: the time and the run's random generator."""

    @property
    def now(self) -> float: ...              # simulated time, s

    @property
    def rng(self) -> random.Random: ...      # the run's generator (draw only from it)


class FlowView(Protocol):
    """What a congestion-control algorithm may read and set on its flow (``self.flow``).

    Windows are in packets (floats), times in seconds. Set by the algorithm: `cwnd`, `ssthresh`
    (outside loss recovery; during it the transport owns the window), `pacing_rate_bps` (None:
    no pacing), `app_limited_until` (rate samples of packets sent before this many were delivered
    are marked application-limited). Everything else is read-only.
    """

    cwnd: float                      # congestion window, packets
    ssthresh: float                  # slow-start threshold, packets (inf: none)
    pacing_rate_bps: float | None
    app_limited_until: int

    @property
    def sim(self) -> Clock: ...
    @property
    def state(self) -> str: ...      # OPEN, RECOVERY or LOSS
    @property
    def packet_bytes(self) -> int: ...   # the data packet size (the model's MSS), bytes
    @property
    def snd_una(self) -> int: ...    # first unacknowledged packet
    @property
    def snd_nxt(self) -> int: ...    # next packet to send
    @property
    def srtt(self) -> float | None: ...   # smoothed RTT (RFC 6298), None before a sample
    @property
    def min_rtt(self) -> float: ...  # smallest valid RTT sample (inf before one)
    @property
    def delivered(self) -> int: ...  # packets delivered (counted with wants_rate_samples)
    @property
    def retransmissions(self) -> int: ...    # packets resent so far

    def flight_size(self) -> int:
        """Packets sent and not yet cumulatively acknowledged (RFC 5681 FlightSize)."""
        ...

    def pipe(self) -> int:
        """RFC 6675 estimate of the packets in flight (SACK recovery's pipe)."""
        ...


class CongestionControl:
    """Base class of every congestion-control algorithm.

    Subclasses set `name`, `PARAMETERS` (parameter name -> default) and override hooks. The
    defaults do nothing, except `ssthresh()`: half the flight size, at least two packets.
    """

    name: ClassVar[str] = "base"
    PARAMETERS: ClassVar[dict[str, float]] = {}
    fast_recovery: ClassVar[bool] = True   # third duplicate ACK: RECOVERY (False: LOSS, Tahoe)
    recovery: ClassVar[str] = "reno"       # the transport's loss recovery: "reno", "newreno", "sack"
    loss_based: ClassVar[bool] = True      # False: losses lower neither ssthresh nor the window
    wants_rate_samples: ClassVar[bool] = False   # True: on_rate_sample(rs) on delivering ACKs
    tick_interval_s: float | None = None      # period of tick(), or None
    ecn_mode: ClassVar[str] = "classic"    # the receiver's ECE: RFC 3168 "classic" or "dctcp"

    __slots__ = ("abc_limit", "flow", "params")
    # whether the class keeps the base class's slow_start and congestion_avoidance, which
    # standard_growth then runs inline (set for every subclass by __init_subclass__)
    _standard_steps: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._standard_steps = (cls.slow_start is CongestionControl.slow_start
                               and cls.congestion_avoidance is CongestionControl.congestion_avoidance)

    def __init__(self, flow: FlowView, params: dict | None = None):
        self.flow = flow
        self.abc_limit = 1.0     # RFC 3465 L, packets (the transport sets 2 with delayed ACKs)
        merged = dict(self.PARAMETERS)
        if params:
            merged.update(params)
        self.params = merged

    @classmethod
    def param_problem(cls, name: str, value) -> str | None:
        """Why `value` is not acceptable for parameter `name` (None if it is)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return "expected a number"
        if value <= 0:
            return "expected a positive number"
        return None

    @classmethod
    def params_problem(cls, params: dict) -> str | None:
        """Why a complete, merged parameter set is not acceptable (None if it is); for rules
        that tie parameters together."""
        return None

    # -- hooks -------------------------------------------------------------------------------
    def init(self) -> None:
        pass

    def ssthresh(self) -> float:
        """The slow-start threshold after a loss (RFC 5681 (4): FlightSize / 2, at least 2)."""
        return max(self.flow.flight_size() / 2.0, 2.0)

    def on_ack(self, acked_pkts: float) -> None:
        pass

    def on_rtt(self, rtt_s: float) -> None:
        pass

    def on_state(self, old: str, new: str) -> None:
        pass

    def restore_cwnd(self) -> float:
        """The window when a loss episode ends (asked only if not `loss_based`)."""
        return self.flow.cwnd

    def tick(self) -> None:
        pass

    def on_rate_sample(self, rs: RateSample) -> None:
        """A delivery-rate sample (`flows.transport.RateSample`); only if wants_rate_samples."""

    def ecn_ack(self, acked_pkts: int, ece: bool) -> None:
        """An ACK of an ECN flow: `acked_pkts` newly acknowledged, `ece` its echo."""

    def ecn_ssthresh(self) -> float:
        """The slow-start threshold on an ECN reaction (RFC 3168 §6.1.2: as on a loss)."""
        return self.ssthresh()

    # -- helpers for window-based algorithms ------------------------------------------------
    def slow_start(self, acked_pkts: float) -> float:
        """Grow the window by one packet per ACK, at most by the packets it acknowledged
        (RFC 5681 eq. 2: cwnd += min(N, SMSS)), up to ssthresh; return the ACKed packets left
        for congestion avoidance once ssthresh is reached. With delayed ACKs the transport sets
        `abc_limit` to 2 (RFC 3465 appropriate byte counting, L = 2 SMSS)."""
        flow = self.flow
        before = flow.cwnd
        grown = min(before + min(acked_pkts, self.abc_limit), flow.ssthresh)
        if grown <= before:
            return acked_pkts
        flow.cwnd = grown
        return acked_pkts - (grown - before) if grown >= flow.ssthresh else 0.0

    def congestion_avoidance(self, acked_pkts: float) -> None:
        """Additive increase: one packet per window's worth of ACKs."""
        flow = self.flow
        flow.cwnd += acked_pkts / flow.cwnd

    def standard_growth(self, acked_pkts: float) -> None:
        """RFC 5681 window growth: slow start below ssthresh, then congestion avoidance with what
        is left of the ACK. Algorithms whose growth is standard use it as their `on_ack`."""
        flow = self.flow
        if not self._standard_steps:          # a subclass redefined a step: call the steps
            if flow.cwnd < flow.ssthresh:
                acked_pkts = self.slow_start(acked_pkts)
                if acked_pkts <= 0:
                    return
            self.congestion_avoidance(acked_pkts)
            return
        # The steps inline (once per ACK; the same operations in the same order):
        cwnd = flow.cwnd
        ssthresh = flow.ssthresh
        if cwnd < ssthresh:
            # slow_start(acked_pkts): grown = min(cwnd + min(acked_pkts, abc_limit), ssthresh)
            abc_limit = self.abc_limit
            grown = cwnd + (abc_limit if abc_limit < acked_pkts else acked_pkts)
            if ssthresh < grown:
                grown = ssthresh
            if grown > cwnd:
                flow.cwnd = grown
                if grown < ssthresh:
                    return                    # all of the ACK spent in slow start
                acked_pkts = acked_pkts - (grown - cwnd)
                if acked_pkts <= 0:
                    return
                cwnd = grown
            elif acked_pkts <= 0:
                return
        # congestion_avoidance(acked_pkts): one packet per window's worth of ACKs
        flow.cwnd = cwnd + acked_pkts / cwnd
