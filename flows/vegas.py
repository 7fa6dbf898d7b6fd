"""TCP Vegas (Brakmo and Peterson, IEEE JSAC 1995).

Once per round trip Vegas compares the throughput it expects, w / baseRTT, with the one it gets,
w / RTT, and turns the difference into packets it has queued in the network:

    diff = w (1 - baseRTT / RTT)

In congestion avoidance the window grows by one packet per RTT while diff < alpha and shrinks by
one while diff > beta, so each flow keeps between alpha and beta packets queued. In slow start the
window grows by one packet per ACK until diff exceeds gamma; Vegas then leaves slow start with the
window it can sustain without queueing (w baseRTT / RTT), plus one packet, and ssthresh follows
every decrease so that the flow never slips back into slow start. baseRTT is the smallest
RTT observed; RTT is the smallest sample of the last round trip. Losses are handled like Reno.
"""
from __future__ import annotations

import math
from typing import ClassVar

from flows.congestion import OPEN
from flows.reno import Reno


class Vegas(Reno):
    """TCP Vegas: keep between alpha and beta packets queued, adjusting once per RTT."""

    name = "vegas"
    PARAMETERS: ClassVar[dict[str, float]] = {"alpha": 2.0, "beta": 4.0, "gamma": 1.0}
    __slots__ = ("alpha", "beta", "gamma", "base_rtt", "epoch_rtt", "epoch_end")

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.alpha = float(self.params["alpha"])
        self.beta = float(self.params["beta"])
        self.gamma = float(self.params["gamma"])
        self.base_rtt = math.inf
        self.epoch_rtt = math.inf       # smallest RTT sample of the current round trip
        self.epoch_end = 0              # the round trip ends when this packet is acknowledged

    @classmethod
    def params_problem(cls, params: dict):
        if params["alpha"] > params["beta"]:
            return f"alpha ({params['alpha']}) must not exceed beta ({params['beta']})"
        return None

    def on_rtt(self, rtt_s: float) -> None:
        self.base_rtt = min(self.base_rtt, rtt_s)
        self.epoch_rtt = min(self.epoch_rtt, rtt_s)

    def queued_packets(self, rtt_s: float) -> float:
        """diff = w (1 - baseRTT / RTT): this flow's packets queued in the network."""
        return self.flow.cwnd * (1.0 - self.base_rtt / rtt_s)

    def on_ack(self, acked_pkts: float) -> None:
        flow = self.flow
        slow_start = flow.cwnd < flow.ssthresh
        if flow.snd_una >= self.epoch_end and self.epoch_rtt < math.inf:
            diff = self.queued_packets(self.epoch_rtt)
            if slow_start and diff > self.gamma:
                flow.cwnd = max(2.0, min(flow.cwnd, flow.cwnd * self.base_rtt / self.epoch_rtt + 1.0))
                flow.ssthresh = max(2.0, flow.cwnd - 1.0)
                slow_start = False
            elif not slow_start:
                if diff > self.beta:
                    flow.cwnd = max(2.0, flow.cwnd - 1.0)
                    flow.ssthresh = min(flow.ssthresh, max(2.0, flow.cwnd - 1.0))   # stay in CA
                elif diff < self.alpha:
                    flow.cwnd += 1.0
            self._new_epoch()
        if slow_start:
            self.slow_start(acked_pkts)

    def _new_epoch(self) -> None:
        self.epoch_end = self.flow.snd_nxt
        self.epoch_rtt = math.inf

    def on_state(self, old: str, new: str) -> None:
        if new == OPEN:
            self._new_epoch()
