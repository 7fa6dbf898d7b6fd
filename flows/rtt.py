"""Round-trip time estimation and the retransmission timeout (RFC 6298).

SRTT and RTTVAR follow RFC 6298 (2.2) and (2.3) with alpha = 1/8, beta = 1/4 and K = 4; the RTO is
SRTT + K * RTTVAR clamped to [min_rto_s, max_rto_s], and doubles on every timeout (5.5) up to
max_rto_s. The sender feeds only valid samples (Karn's rule: none from retransmitted packets), and
a backed-off RTO collapses only on a sample from an ACK that acknowledges new data (RFC 6298, the
note after (5.7): `sample_backed_off` takes the others into SRTT and RTTVAR and keeps the RTO;
Linux's estimator collapses it on every sample). The estimator also keeps the smallest sample
(`min_rtt`) and the sum and count of the samples, for statistics.
"""
from __future__ import annotations

import math
from typing import Any

RTO_ALPHA = 1.0 / 8.0   # RFC 6298 (2.3)
RTO_BETA = 1.0 / 4.0
RTO_K = 4.0
_RTTVAR_KEEP = 1.0 - RTO_BETA   # the weights of the old values, computed once
_SRTT_KEEP = 1.0 - RTO_ALPHA


class RttEstimator:
    """SRTT, RTTVAR and RTO of one flow (RFC 6298), from the valid RTT samples it is given."""

    __slots__ = ("backoffs", "max_rto_s", "min_rto_s", "min_rtt", "rto", "rtt_count", "rtt_sum",
                 "rttvar", "srtt")

    def __init__(self, initial_rto_s: float, min_rto_s: float, max_rto_s: float):
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.rto = initial_rto_s
        self.backoffs = 0             # timeouts since the RTO was last computed from a sample
        self.min_rto_s = min_rto_s
        self.max_rto_s = max_rto_s
        self.min_rtt = math.inf       # the smallest sample so far
        # (`Any`: Python objects when compiled, which the flow probes compare by identity,
        # netsim/probes.py)
        self.rtt_sum: Any = 0.0
        self.rtt_count: Any = 0

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
        self.backoffs = 0
        if rtt_s < self.min_rtt:
            self.min_rtt = rtt_s
        self.rtt_sum += rtt_s
        self.rtt_count += 1

    def sample_backed_off(self, rtt_s: float) -> None:
        """A valid sample from an ACK that acknowledges no new data, while the RTO is backed off
        (`backoffs` > 0): SRTT, RTTVAR and the statistics take it, the backed-off RTO stays.
        RFC 6298, the note after (5.7): the RTO collapses once "new data has been sent and
        acknowledged"; the duplicate ACKs of packets sent before a timeout would otherwise undo
        its backoff while the retransmitted packet is still unacknowledged."""
        rto, backoffs = self.rto, self.backoffs
        self.sample(rtt_s)
        self.rto, self.backoffs = rto, backoffs

    def back_off(self) -> None:
        """A timeout: double the RTO, up to max_rto_s (RFC 6298 (5.5))."""
        self.rto = min(self.rto * 2.0, self.max_rto_s)
        self.backoffs += 1

    def base_rto_s(self) -> float | None:
        """The RTO of the last estimate, without backoff (None before a sample)."""
        if self.srtt is None:
            return None
        return min(max(self.srtt + RTO_K * self.rttvar, self.min_rto_s), self.max_rto_s)


class LinuxRttEstimator(RttEstimator):
    """Linux's SRTT and RTO (net/ipv4/tcp_input.c tcp_rtt_estimator, tcp_set_rto).

    SRTT has gain 1/8 as in RFC 6298. The variation term differs: ``mdev`` (kept as 4 x the mean
    deviation, like Linux's mdev_us) moves by 1/4 of the error, or by 1/32 when the sample is
    below SRTT (Linux's "finer gain" that keeps RTT drops from inflating the RTO); ``rttvar``
    follows the largest mdev of the current round trip at once and decays towards it by 1/4 once
    per round trip (when snd_una passes the snd_nxt of the previous update), and is never below
    `min_rto_s` (tcp_rto_min). RTO = SRTT + rttvar, at most `max_rto_s` (tcp_bound_rto): so at
    least SRTT + 200 ms with Linux's TCP_RTO_MIN. The first sample sets SRTT = R,
    mdev = 2 R, rttvar = max(2 R, min_rto_s). Backoff doubles the RTO up to `max_rto_s`.
    `flow` supplies snd_una and snd_nxt (the round-trip boundaries)."""

    __slots__ = ("flow", "mdev", "mdev_max", "rtt_seq")

    def __init__(self, flow, initial_rto_s: float, min_rto_s: float, max_rto_s: float):
        super().__init__(initial_rto_s, min_rto_s, max_rto_s)
        self.flow = flow
        self.mdev = 0.0               # 4 x mean deviation (Linux mdev_us)
        self.mdev_max = 0.0           # the largest mdev in the current round trip
        self.rtt_seq = 0              # snd_nxt when the round trip began

    def sample(self, rtt_s: float) -> None:
        srtt = self.srtt
        flow = self.flow
        if srtt is None:
            self.srtt = srtt = rtt_s
            self.mdev = 2.0 * rtt_s
            self.rttvar = max(self.mdev, self.min_rto_s)
            self.mdev_max = self.rttvar
            self.rtt_seq = flow.snd_nxt
        else:
            error = rtt_s - srtt
            self.srtt = srtt = srtt + error / 8.0
            if error < 0.0:
                error = -error - self.mdev / 4.0
                if error > 0.0:
                    error /= 8.0
            else:
                error -= self.mdev / 4.0
            self.mdev += error
            if self.mdev > self.mdev_max:
                self.mdev_max = self.mdev
                if self.mdev_max > self.rttvar:
                    self.rttvar = self.mdev_max
            if flow.snd_una > self.rtt_seq:
                if self.mdev_max < self.rttvar:
                    self.rttvar -= (self.rttvar - self.mdev_max) / 4.0
                self.rtt_seq = flow.snd_nxt
                self.mdev_max = self.min_rto_s
        self.rto = min(srtt + self.rttvar, self.max_rto_s)
        self.backoffs = 0
        if rtt_s < self.min_rtt:
            self.min_rtt = rtt_s
        self.rtt_sum += rtt_s
        self.rtt_count += 1

    def sample_backed_off(self, rtt_s: float) -> None:
        """Linux resets the backoff on every valid sample, of a SACKed packet too
        (tcp_ack_update_rtt): the RTO collapses."""
        self.sample(rtt_s)

    def base_rto_s(self) -> float | None:
        if self.srtt is None:
            return None
        return min(self.srtt + self.rttvar, self.max_rto_s)
