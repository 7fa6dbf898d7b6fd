"""FAST TCP (Jin, Wei, Low, INFOCOM 2004; Wei, Jin, Low, Hegde, IEEE/ACM ToN 2006).

A delay-based window update, run on a clock rather than per ACK. Every `update_interval_s`, the
update of FAST's window-control component (Wei et al. 2006; `Fast.tick`):

    w <- min{ 2w, (1 - gamma) w + gamma (baseRTT / avgRTT * w + alpha) }

with alpha and gamma constant (parameters). baseRTT is the smallest RTT the flow has observed
(`on_rtt`); avgRTT the mean of its last `rtt_samples` RTT samples. At equilibrium
w = (baseRTT / avgRTT) w + alpha: the flow keeps `alpha` of its packets queued in the network,
x * (avgRTT - baseRTT) = alpha, which is what the analytic model (theory/fluid.py with
theory/equilibrium.py) predicts network-wide.

Loss response (FAST is delay-based; loss is not its congestion signal but must still be handled):
the transport retransmits as always; on the third duplicate ACK ssthresh is half the window, the
transport's SACK-based recovery (RFC 6675) sets the window to it and repairs every hole of the
window within about a round trip, with no periodic update meanwhile; after a timeout the window is
one packet (the transport's loss window), and the periodic update grows it again (at most
doubling per update) once the network has acknowledged something since the previous update:
the update is driven by the RTTs the flow's ACKs measure, and without ACKs it has nothing new to
go on. Over a dead path the flow therefore retransmits one packet per backed-off timeout, as Reno
does, rather than growing its window into the outage on the clock (an acceptance test's FAST flow
sent 77 packets into a link down for 3 s, in the 0.7 s after its first timeout).
"""
from __future__ import annotations

from collections import deque
from typing import ClassVar

from flows.congestion import LOSS, MIN_TICK_INTERVAL_S, RECOVERY, CongestionControl, RecoveryMode

# The shortest update interval (docs/algorithms.md, "fast"): the window update is FAST's tick,
# so the floor of every tick (flows/congestion.py MIN_TICK_INTERVAL_S, 10 us).
MIN_UPDATE_INTERVAL_S = MIN_TICK_INTERVAL_S
MAX_RTT_SAMPLES = 10 ** 6      # RTT samples averaged (a deque's length must fit a C size)


MIN_ALPHA_PKTS = 1e-3           # packets a flow keeps queued: the range a check can solve
MAX_ALPHA_PKTS = 1e6


class Fast(CongestionControl):
    """FAST TCP: periodic delay-based window update towards alpha packets queued."""

    name = "fast"
    recovery = RecoveryMode.SACK
    theory_model = "delay"
    has_slow_start: ClassVar[bool] = False   # the update rule sets the window from the start
    PARAMETERS: ClassVar[dict[str, float]] = {"alpha": 20.0, "gamma": 0.5,
                                              "update_interval_s": 0.05, "rtt_samples": 40}
    __slots__ = ("alpha", "gamma", "tick_interval_s", "base_rtt", "samples", "sample_sum",
                 "una_at_update")

    def __init__(self, flow, params=None):
        super().__init__(flow, params)
        self.alpha = float(self.params["alpha"])
        self.gamma = float(self.params["gamma"])
        self.tick_interval_s = float(self.params["update_interval_s"])
        self.base_rtt: float | None = None
        self.samples: deque[float] = deque(maxlen=int(self.params["rtt_samples"]))
        self.sample_sum = 0.0
        self.una_at_update = 0        # snd_una at the last update (a timeout's updates wait for more)

    @classmethod
    def param_problem(cls, name: str, value):
        problem = super().param_problem(name, value)
        if problem:
            return problem
        if name == "gamma" and value > 1:
            return "expected a number in (0, 1]"
        if name == "alpha" and not MIN_ALPHA_PKTS <= value <= MAX_ALPHA_PKTS:
            # (beyond, --check's fluid model has no solution in floating point: 1e-20 and 1e19
            # failed; FAST's papers use 20 to 200)
            return (f"expected a number of packets from {MIN_ALPHA_PKTS:g} to "
                    f"{MAX_ALPHA_PKTS:g}")
        if name == "rtt_samples" and (not isinstance(value, int) or not 1 <= value <= MAX_RTT_SAMPLES):
            return f"expected a whole number of samples from 1 to {MAX_RTT_SAMPLES}"
        if name == "update_interval_s" and value < MIN_UPDATE_INTERVAL_S:
            return (f"expected at least {MIN_UPDATE_INTERVAL_S:g} s between window updates (one "
                    f"timer event per flow each)")
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

    # ACKs do not move the window (no on_ack): it changes on the clock only.

    def ssthresh(self) -> float:
        """Half the window (the transport's SACK recovery sets the window to it)."""
        return max(self.flow.cwnd / 2.0, 2.0)

    def tick(self) -> None:
        """The periodic window update of the module docstring: none without an RTT sample or
        during loss recovery, nor after a timeout (LOSS) until an ACK has moved snd_una since the
        previous update; at least one packet."""
        flow = self.flow
        avg_rtt = self.average_rtt()
        base_rtt = self.base_rtt
        state = flow.state
        if avg_rtt is None or base_rtt is None or state == RECOVERY:
            return
        if state == LOSS and flow.snd_una == self.una_at_update:
            return
        self.una_at_update = flow.snd_una
        w = flow.cwnd
        target = (1.0 - self.gamma) * w + self.gamma * (base_rtt / avg_rtt * w + self.alpha)
        flow.cwnd = max(1.0, min(2.0 * w, target))
