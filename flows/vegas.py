"""TCP Vegas (Brakmo and Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
Internet", IEEE JSAC 13(8), 1995; the sections named are theirs).

Once per round trip Vegas compares the throughput it expects, w / baseRTT, with the one it gets,
w / RTT, and turns the difference into packets it has queued in the network:

    diff = w (1 - baseRTT / RTT)

In congestion avoidance (the paper's "Congestion Avoidance Mechanism") the window grows by one
packet per RTT while diff < alpha and shrinks by one while diff > beta, so each flow keeps between
alpha and beta packets queued.

Slow start as in the paper ("Modified Slow-Start Mechanism"): the window grows exponentially (one
packet per ACK) only every other round trip; in between it stays fixed, so that the next round
trip's RTT samples, which are those of the fixed window's packets, give a valid comparison. At the
end of a growing round trip, if even the smallest of those samples shows more than gamma of the
fixed window's packets queued (w_fixed (1 - baseRTT / RTT) > gamma), Vegas leaves slow start with
the window it can sustain, w_fixed baseRTT / RTT, plus one packet. Within a growing round trip an
ACK whose sample already shows more than gamma queued does not grow the window (the first packets
of the fixed window queue behind the burst that the growing round sent, so a single sample cannot
end slow start, but it must not feed the overshoot either). ssthresh follows every decrease so that
the flow never slips back into slow start. baseRTT is the smallest RTT observed; in congestion
avoidance RTT is the smallest sample of the last round trip. Losses are handled like Reno (not with
the paper's retransmission mechanism, which checks a fine-grained timeout on duplicate ACKs): outside
the transport's OPEN state (after a timeout, or while it reduces for ECN) the window grows as
Reno's, and Vegas starts afresh, with a new round trip and a new slow start's state, when the
transport is back in OPEN, as Linux's tcp_vegas_state turns Vegas off and on (vegas_disable,
vegas_enable). Before, the slow start's state from before a timeout (its fixed window, its last
RTT sample) held the window at one packet for a round trip per packet outstanding.
"""
from __future__ import annotations

import math
from typing import ClassVar

from flows.congestion import OPEN
from flows.reno import Reno


class Vegas(Reno):
    """TCP Vegas: keep between alpha and beta packets queued, adjusting once per RTT."""

    name = "vegas"
    theory_model = "delay"
    PARAMETERS: ClassVar[dict[str, float]] = {"alpha": 2.0, "beta": 4.0, "gamma": 1.0}
    __slots__ = ("alpha", "beta", "gamma", "base_rtt", "epoch_rtt", "epoch_end", "last_rtt",
                 "ss_grow", "ss_fixed")

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.alpha = float(self.params["alpha"])
        self.beta = float(self.params["beta"])
        self.gamma = float(self.params["gamma"])
        self.base_rtt = math.inf
        self.epoch_rtt = math.inf       # smallest RTT sample of the current round trip
        self.epoch_end = 0              # the round trip ends when this packet is acknowledged
        self.last_rtt = math.inf        # the latest RTT sample
        self.ss_grow = True             # slow start: this round trip grows the window
        self.ss_fixed = None            # slow start: the window held in the last fixed round trip

    @classmethod
    def params_problem(cls, params: dict):
        if params["alpha"] > params["beta"]:
            return f"alpha ({params['alpha']}) must not exceed beta ({params['beta']})"
        return None

    def on_rtt(self, rtt_s: float) -> None:
        self.last_rtt = rtt_s
        self.base_rtt = min(self.base_rtt, rtt_s)
        self.epoch_rtt = min(self.epoch_rtt, rtt_s)

    def queued_packets(self, rtt_s: float) -> float:
        """diff = w (1 - baseRTT / RTT): this flow's packets queued in the network."""
        return self.flow.cwnd * (1.0 - self.base_rtt / rtt_s)

    def on_ack(self, acked_pkts: float) -> None:
        flow = self.flow
        if flow.state != OPEN:            # Linux tcp_vegas_cong_avoid: off, Reno's growth
            self.standard_growth(acked_pkts)
            return
        slow_start = flow.cwnd < flow.ssthresh
        if flow.snd_una >= self.epoch_end and self.epoch_rtt < math.inf:
            if slow_start:
                slow_start = self._slow_start_round()      # "Modified Slow-Start Mechanism"
            else:                                          # "Congestion Avoidance Mechanism"
                diff = self.queued_packets(self.epoch_rtt)
                if diff > self.beta:
                    flow.cwnd = max(2.0, flow.cwnd - 1.0)
                    flow.ssthresh = min(flow.ssthresh, max(2.0, flow.cwnd - 1.0))   # stay in CA
                elif diff < self.alpha:
                    flow.cwnd += 1.0
            self._new_epoch()
        if slow_start and self.ss_grow and not self._fixed_queued(self.last_rtt):
            self.slow_start(acked_pkts)

    def _fixed_queued(self, rtt_s: float) -> bool:
        """In a growing round trip: whether an RTT of the fixed round's packets shows more than
        gamma of them queued."""
        fixed = self.ss_fixed
        return fixed is not None and rtt_s < math.inf and fixed * (1.0 - self.base_rtt / rtt_s) > self.gamma

    def _slow_start_round(self) -> bool:
        """The end of a slow-start round trip; False when Vegas leaves slow start."""
        flow = self.flow
        if not self.ss_grow:                  # fixed round over: grow in the next one
            self.ss_grow = True
            return True
        fixed = self.ss_fixed
        if fixed is not None and self._fixed_queued(self.epoch_rtt):
            # even the smallest RTT of the fixed round's packets had more than gamma queued
            sustainable = fixed * self.base_rtt / self.epoch_rtt + 1.0
            flow.cwnd = max(2.0, min(flow.cwnd, sustainable))
            flow.ssthresh = max(2.0, flow.cwnd - 1.0)
            return False
        self.ss_grow = False                  # hold the window for a round trip
        self.ss_fixed = flow.cwnd
        return True

    def _new_epoch(self) -> None:
        self.epoch_end = self.flow.snd_nxt
        self.epoch_rtt = math.inf

    def on_state(self, old: str, new: str) -> None:
        if new == OPEN:                   # Linux vegas_enable: a new round trip, no sample yet
            self._new_epoch()
            self.last_rtt = math.inf
            self.ss_grow = True           # (and a new slow start, if the window is below
            self.ss_fixed = None          # ssthresh)
