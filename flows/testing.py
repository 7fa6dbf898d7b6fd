"""Unit-testing a congestion-control algorithm's hooks without building a network.

`StandInFlow` is a plain-attribute implementation of `flows.congestion.FlowView`: create one,
hand it to the algorithm, call the hooks the way the transport would and read the window::

    from flows.testing import StandInFlow

    flow = StandInFlow(cwnd=10.0, ssthresh=5.0)
    cc = MyAlgorithm(flow, {"beta": 0.5})
    cc.init()
    cc.on_ack(1)                 # an ACK of one packet, outside recovery
    assert flow.cwnd > 10.0
    flow.flight = 20             # what flight_size() reports (default: the window, rounded up)
    assert cc.ssthresh() == 10.0

Set any member directly (`srtt`, `min_rtt`, `state`, `snd_una`, `snd_nxt`, `delivered`,
`is_cwnd_limited`, `prior_cwnd`, ...; `stack="linux"` selects the built-ins' Linux variants;
`inflight` is what `pipe()` reports; `sim.now` is the simulated time and `sim.rng` a seeded
`random.Random`). Nothing here runs the transport: the window policy during loss recovery
(`flows.recovery`) is the transport's and is not applied.
"""
from __future__ import annotations

import math
import random

from flows.congestion import OPEN


class StandInSim:
    """The simulator members an algorithm reads: `now` (seconds, settable) and `rng`."""

    def __init__(self, seed: int = 1):
        self.now = 0.0
        self.rng = random.Random(seed)


class StandInFlow:
    """A stand-in for the flow an algorithm sees (`flows.congestion.FlowView`): exactly the
    protocol's members, plus `flight` and `inflight` (what `flight_size()` and `pipe()`
    report). Slotted, so a misspelt member raises instead of being silently set."""

    __slots__ = ("cwnd", "ssthresh", "state", "sim", "packet_bytes", "snd_una", "snd_nxt",
                 "srtt", "min_rtt", "delivered", "retransmissions", "pacing_rate_bps",
                 "app_limited_until", "is_cwnd_limited", "prior_cwnd", "stack", "flight",
                 "inflight")

    def __init__(self, cwnd: float = 10.0, ssthresh: float = math.inf,
                 flight: int | None = None, srtt: float | None = None, seed: int = 1,
                 packet_bytes: int = 1000, stack: str = "classic"):
        self.cwnd = cwnd
        self.ssthresh = ssthresh
        self.state = OPEN
        self.sim = StandInSim(seed)
        self.packet_bytes = packet_bytes
        self.snd_una = 0
        self.snd_nxt = 0
        self.srtt = srtt
        self.min_rtt = math.inf
        self.delivered = 0
        self.retransmissions = 0
        self.pacing_rate_bps: float | None = None
        self.app_limited_until = 0
        self.is_cwnd_limited = True   # the window limited the last sends
        self.prior_cwnd = 0.0         # the window before the last reduction (undo_cwnd's)
        self.stack = stack            # "classic" or "linux": which variant the algorithm runs
        self.flight = flight          # what flight_size() reports; None: ceil(cwnd)
        self.inflight = 0             # what pipe() reports

    @property
    def srtt_s(self) -> float | None:
        return self.srtt

    @property
    def min_rtt_s(self) -> float:
        return self.min_rtt

    def flight_size(self) -> int:
        return math.ceil(self.cwnd) if self.flight is None else self.flight

    def pipe(self) -> int:
        return self.inflight
