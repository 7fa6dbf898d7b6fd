"""Round-trip time estimation and the retransmission timeout (RFC 6298).

SRTT and RTTVAR follow RFC 6298 (2.2) and (2.3) with alpha = 1/8, beta = 1/4 and K = 4; the RTO is
SRTT + K * RTTVAR clamped to [min_rto_s, max_rto_s], and doubles on every timeout (5.5) up to
max_rto_s. The sender feeds only valid samples (Karn's rule: none from retransmitted packets), so a
backed-off RTO stays until such a sample arrives. The estimator also keeps the smallest sample
(`min_rtt`) and the sum and count of the samples, for statistics.
"""
from __future__ import annotations

import math

RTO_ALPHA = 1.0 / 8.0   # RFC 6298 (2.3)
RTO_BETA = 1.0 / 4.0
RTO_K = 4.0
_RTTVAR_KEEP = 1.0 - RTO_BETA   # the weights of the old values, computed once
_SRTT_KEEP = 1.0 - RTO_ALPHA


class RttEstimator:
    """SRTT, RTTVAR and RTO of one flow (RFC 6298), from the valid RTT samples it is given."""

    __slots__ = ("max_rto_s", "min_rto_s", "min_rtt", "rto", "rtt_count", "rtt_sum", "rttvar",
                 "srtt")

    def __init__(self, initial_rto_s: float, min_rto_s: float, max_rto_s: float):
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.rto = initial_rto_s
        self.min_rto_s = min_rto_s
        self.max_rto_s = max_rto_s
        self.min_rtt = math.inf       # the smallest sample so far
        self.rtt_sum = 0.0
        self.rtt_count = 0

    def sample(self, rtt_s: float) -> None:
        """A valid RTT sample (Karn's rule applied by the caller)."""
        srtt = self.srtt
        if srtt is None:                              # RFC 6298 (2.2)
            self.srtt = srtt = rtt_s
            self.rttvar = rtt_s / 2.0
        else:                                         # RFC 6298 (2.3)
            deviation = srtt - rtt_s                  # |SRTT - R'| (abs, inline)
            if deviation < 0.0:
                deviation = -deviation
            self.rttvar = _RTTVAR_KEEP * self.rttvar + RTO_BETA * deviation
            self.srtt = srtt = _SRTT_KEEP * srtt + RTO_ALPHA * rtt_s
        rto = srtt + RTO_K * self.rttvar
        # clamped to [min_rto_s, max_rto_s] (min(max(...)), inline: the same comparisons)
        if self.min_rto_s > rto:
            rto = self.min_rto_s
        if self.max_rto_s < rto:
            rto = self.max_rto_s
        self.rto = rto
        if rtt_s < self.min_rtt:
            self.min_rtt = rtt_s
        self.rtt_sum += rtt_s
        self.rtt_count += 1

    def back_off(self) -> None:
        """A timeout: double the RTO, up to max_rto_s (RFC 6298 (5.5))."""
        self.rto = min(self.rto * 2.0, self.max_rto_s)
