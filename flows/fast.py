"""FAST TCP (Jin, Wei, Low, INFOCOM 2004; Wei, Jin, Low, Hegde, IEEE/ACM ToN 2006).

A delay-based window update, run on a clock rather than per ACK. Every `update_interval_s`:

    w <- min{ 2w, (1 - gamma) w + gamma (baseRTT / avgRTT * w + alpha) }

baseRTT is the smallest RTT the flow has observed; avgRTT the mean of its last `rtt_samples` RTT
samples. At equilibrium w = (baseRTT / avgRTT) w + alpha: the flow keeps `alpha` of its packets
queued in the network, x * (avgRTT - baseRTT) = alpha, which is what the analytic model
(flows/equilibrium.py) predicts network-wide.

Loss response (FAST is delay-based; loss is not its congestion signal but must still be handled):
the transport retransmits as always; on the third duplicate ACK the window is halved and the
transport's SACK-based recovery (RFC 6675) repairs every hole of the window within about a round
trip, with no periodic update meanwhile; after a timeout the window is one packet, and the
periodic update grows it again (at most doubling per update).
"""
from __future__ import annotations

from collections import deque

from flows.congestion import OPEN, RECOVERY
from flows.reno import Reno


class Fast(Reno):
    """FAST TCP: periodic delay-based window update towards alpha packets queued."""

    name = "fast"
    recovery = "sack"
    PARAMETERS = {"alpha": 20.0, "gamma": 0.5, "update_interval_s": 0.05, "rtt_samples": 40}
    __slots__ = ("alpha", "gamma", "tick_interval_s", "base_rtt", "samples", "sample_sum")

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.alpha = float(self.params["alpha"])
        self.gamma = float(self.params["gamma"])
        self.tick_interval_s = float(self.params["update_interval_s"])
        self.base_rtt = None
        self.samples = deque(maxlen=int(self.params["rtt_samples"]))
        self.sample_sum = 0.0

    @classmethod
    def param_problem(cls, name: str, value):
        problem = super().param_problem(name, value)
        if problem:
            return problem
        if name == "gamma" and value > 1:
            return "expected a number in (0, 1]"
        if name == "rtt_samples" and (not isinstance(value, int) or value < 1):
            return "expected a whole number of samples >= 1"
        return None

    def on_rtt(self, rtt_s: float) -> None:
        if self.base_rtt is None or rtt_s < self.base_rtt:
            self.base_rtt = rtt_s
        samples = self.samples
        if len(samples) == samples.maxlen:
            self.sample_sum -= samples[0]
        samples.append(rtt_s)
        self.sample_sum += rtt_s

    def average_rtt(self) -> float | None:
        return self.sample_sum / len(self.samples) if self.samples else None

    def on_ack(self, acked_pkts: float) -> None:
        pass                                  # the window changes on the clock only

    def ssthresh(self) -> float:
        return max(self.flow.cwnd / 2.0, 2.0)

    def on_state(self, old: str, new: str) -> None:
        flow = self.flow
        if new == RECOVERY or (old == RECOVERY and new == OPEN):
            flow.cwnd = flow.ssthresh             # halved, no inflation: SACK recovery uses pipe
        else:
            super().on_state(old, new)

    def tick(self) -> None:
        flow = self.flow
        avg_rtt = self.average_rtt()
        if avg_rtt is None or flow.state == RECOVERY:
            return
        w = flow.cwnd
        target = (1.0 - self.gamma) * w + self.gamma * (self.base_rtt / avg_rtt * w + self.alpha)
        flow.cwnd = max(1.0, min(2.0 * w, target))
