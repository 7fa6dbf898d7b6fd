"""The congestion-control interface: the small set of hooks an algorithm overrides.

The transport (`flows.transport.Flow`) owns sequence numbers, ACK processing, loss detection, the
retransmission timer and retransmission. It keeps the window state (`flow.cwnd`, `flow.ssthresh`,
both in packets) and calls these hooks, in the spirit of Linux's `tcp_congestion_ops`:

==================  ==============================================================================
hook                when the transport calls it
==================  ==============================================================================
``init()``          once, when the flow starts (after the transport set the initial window)
``ssthresh()``      on a loss reaction (fast retransmit or first timeout of an episode): returns
                    the new slow-start threshold
``on_ack(n)``       an ACK advanced the cumulative ACK by ``n`` packets while not in recovery:
                    grow the window
``on_dupack()``     a duplicate ACK arrived during fast recovery
``on_rtt(rtt_s)``   a valid RTT sample (Karn's rule applied)
``on_state(old,     the transport moved between OPEN, RECOVERY and LOSS
new)``
``tick()``          every ``tick_interval_s`` seconds, if the algorithm sets it
``on_rate_sample``  an ACK delivered packets and the algorithm set ``wants_rate_samples``: a
``(rs)``            delivery-rate sample (BBR's input)
==================  ==============================================================================

Algorithms may also pace: setting ``flow.pacing_rate_bps`` makes the transport release packets
no faster than that rate.
"""
from __future__ import annotations

import math

OPEN = "open"          # no loss being repaired
RECOVERY = "recovery"  # fast recovery after a fast retransmit
LOSS = "loss"          # after a retransmission timeout (or Tahoe's fast retransmit): go-back-N


class CongestionControl:
    """Base class of every congestion-control algorithm.

    Subclasses set `name`, `PARAMETERS` (parameter name -> default) and override hooks. The
    defaults implement nothing but the loss window of RFC 5681: the window is one packet after a
    timeout.
    """

    name = "base"
    PARAMETERS: dict = {}
    fast_recovery = True        # three duplicate ACKs enter RECOVERY (False: enter LOSS, Tahoe)
    recovery = "reno"           # loss recovery mode of the transport: "reno", "newreno", "sack"
    wants_rate_samples = False  # True: the transport calls on_rate_sample(rs) on delivering ACKs
    tick_interval_s = None      # period of tick(), or None

    __slots__ = ("flow", "params")

    def __init__(self, flow, params: dict | None = None):
        self.flow = flow
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
        return max(self.flow.flight_size() / 2.0, 2.0)

    def on_ack(self, acked_pkts: int) -> None:
        pass

    def on_dupack(self) -> None:
        pass

    def on_rtt(self, rtt_s: float) -> None:
        pass

    def on_state(self, old: str, new: str) -> None:
        if new == LOSS:
            self.flow.cwnd = 1.0

    def tick(self) -> None:
        pass

    def on_rate_sample(self, rs) -> None:
        """A delivery-rate sample (`flows.transport.RateSample`); only if wants_rate_samples."""

    # -- helpers for window-based algorithms ------------------------------------------------
    def slow_start(self, acked_pkts: float) -> float:
        """Grow the window by one packet per ACK, at most by the packets it acknowledged
        (RFC 5681 eq. 2: cwnd += min(N, SMSS)), up to ssthresh; return the ACKed packets left
        for congestion avoidance once ssthresh is reached."""
        flow = self.flow
        before = flow.cwnd
        grown = min(before + min(acked_pkts, 1.0), flow.ssthresh)
        if grown <= before:
            return acked_pkts
        flow.cwnd = grown
        return acked_pkts - (grown - before) if grown >= flow.ssthresh else 0.0

    def congestion_avoidance(self, acked_pkts: float) -> None:
        """Additive increase: one packet per window's worth of ACKs."""
        flow = self.flow
        flow.cwnd += acked_pkts / flow.cwnd
