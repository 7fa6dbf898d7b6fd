"""Links: a rate, a propagation delay and FIFO drop-tail buffers, in one of two duplex models.

* ``full``: each direction has its own buffer and transmitter.
* ``half``: the CS/EE 143 reference model: both directions share one FIFO buffer and one
  transmitter; packets of both directions queue together in arrival order, with no turnaround cost.

A `Link` is two `LinkDirection`s and their `Transmitter`s (components/direction.py, where the
model of a direction is described), or the queue discipline's (components/queues.py, imported
only by links that have one).

Failures: a link can go down and come back up. While down, everything its directions are offered
is a failure drop. Packets a link holds when it fails (waiting, being transmitted, or propagating)
are lost: links that may fail deliver through an `Arrival` guard that is cut when the link goes
down, so links that never fail pay nothing for it. The nodes at both ends are
told at once (`Node.link_changed`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from components.direction import (
    SOJOURN_BUCKETS,
    SOJOURN_FINE_BUCKETS_MAX,
    SOJOURN_FINE_FIRST,
    Arrival,
    LinkDirection,
    Transmitter,
    count_sojourn,
    record_sojourn,
    sojourn_bucket_bytes,
    sojourn_quantile,
)

if TYPE_CHECKING:
    from simulator.engine import Simulator

__all__ = [
    "DUPLEX_MODES",
    "SOJOURN_BUCKETS",
    "SOJOURN_FINE_BUCKETS_MAX",
    "SOJOURN_FINE_FIRST",
    "Arrival",
    "Link",
    "LinkDirection",
    "Transmitter",
    "count_sojourn",
    "record_sojourn",
    "sojourn_bucket_bytes",
    "sojourn_quantile",
]

DUPLEX_MODES = ("full", "half")


class Link:
    """A link between two nodes: rate, propagation delay, buffer capacity and duplex model, and
    optionally a queue discipline (`queue`: the resolved ``"queue"`` object of the topology, see
    components/queues.py; None or drop-tail: the FIFO `Transmitter`)."""

    __slots__ = ("id", "ends", "rate_bps", "delay_s", "buffer_bytes", "duplex", "directions",
                 "transmitters", "static_cost_s", "up", "can_fail", "sim")

    def __init__(self, sim: Simulator, link_id: str, a, b, rate_bps: float, delay_s: float,
                 buffer_bytes: int, duplex: str = "full", cost_s: float | None = None,
                 queue: dict | None = None):
        if duplex not in DUPLEX_MODES:
            raise ValueError(f"link {link_id}: duplex must be one of {DUPLEX_MODES}, got {duplex!r}")
        if not rate_bps > 0:
            raise ValueError(f"link {link_id}: rate must be positive, got {rate_bps}")
        if delay_s < 0 or buffer_bytes < 0:
            raise ValueError(f"link {link_id}: delay and buffer must not be negative")
        self.sim = sim
        self.id = link_id
        self.ends = (a, b)
        self.static_cost_s = delay_s if cost_s is None else cost_s
        self.up = True
        self.can_fail = False
        self.rate_bps = rate_bps
        self.delay_s = delay_s
        self.buffer_bytes = buffer_bytes
        self.duplex = duplex
        make: Callable = Transmitter
        direction: type = LinkDirection
        if queue is not None and queue.get("discipline", "droptail") != "droptail":
            from components.queues import AqmDirection, make_transmitter

            def make(sim, rate_bps, delay_s, buffer_bytes):
                return make_transmitter(sim, rate_bps, delay_s, buffer_bytes, queue)
            direction = AqmDirection
        first = make(sim, rate_bps, delay_s, buffer_bytes)
        second = first if duplex == "half" else make(sim, rate_bps, delay_s, buffer_bytes)
        self.transmitters: tuple = (first,) if duplex == "half" else (first, second)
        self.directions = (direction(self, 0, a, b, first), direction(self, 1, b, a, second))
        a.attach(self, self.directions[0])
        b.attach(self, self.directions[1])

    # -- failures ---------------------------------------------------------------------------
    def enable_failures(self) -> None:
        """Route arrivals through `Arrival` guards so that a failure can cut packets in flight.
        Call before any packet is sent; links that never fail skip this and the guard's cost."""
        if not self.can_fail:
            self.can_fail = True
            for d in self.directions:
                d.guard_arrivals()

    def go_down(self) -> None:
        """Fail the link: drop what it holds and, until `come_up`, everything sent to it."""
        if not self.up:
            return
        if not self.can_fail:
            raise RuntimeError(f"link {self.id} was not prepared for failures (enable_failures)")
        now = self.sim.now
        for d in self.directions:
            d.fail(now)
        for t in self.transmitters:
            t.reset(now)
        self.up = False
        for node in self.ends:
            node.link_changed(self)

    def come_up(self) -> None:
        """Repair the link: empty buffers, idle transmitters."""
        if self.up:
            return
        now = self.sim.now
        for d in self.directions:
            d.repair(now)
        self.up = True
        for node in self.ends:
            node.link_changed(self)

    # -- time-varying links (rate_schedule, delay_schedule) --------------------------------
    def set_rate(self, rate_bps: float) -> None:
        """Change the transmission rate now: the packet in service finishes at the old rate,
        those waiting and those accepted from now on are sent at the new one
        (`Transmitter.change_rate`; docs/model.md, "Time-varying links")."""
        if not rate_bps > 0:
            raise ValueError(f"link {self.id}: rate must be positive, got {rate_bps}")
        self.rate_bps = rate_bps
        now = self.sim.now
        for t in self.transmitters:
            t.change_rate(rate_bps, now)

    def set_delay(self, delay_s: float) -> None:
        """Change the propagation delay now, for packets accepted from now on. A decrease by D
        holds the FIFO transmitter idle for D after its last accepted packet, so that no packet
        overtakes one sent before the change (the link keeps its order)."""
        if delay_s < 0:
            raise ValueError(f"link {self.id}: delay must not be negative, got {delay_s}")
        now = self.sim.now
        for t in self.transmitters:
            if t.delay_by_impairment:       # netem jitter draws from the link's delay (below)
                continue
            shorter = t.delay_s - delay_s
            # (a transmitter that never began a packet, or none since a failure emptied it --
            # none in service, busy_until 0 -- has nothing in flight to keep in order)
            if shorter > 0 and t.busy_until + t.delay_s > now and \
                    (t.serving is not None or t.busy_until > 0.0):
                t.hold_idle(t.busy_until, t.busy_until + shorter)
                t.busy_until += shorter                   # (a packet may still be in flight)
            t.delay_s = delay_s
        self.delay_s = delay_s

    def direction_from(self, node) -> LinkDirection:
        """The direction in which `node` sends on this link."""
        for d in self.directions:
            if d.src is node:
                return d
        raise ValueError(f"node {getattr(node, 'id', node)} is not an end of link {self.id}")

    def other_end(self, node):
        a, b = self.ends
        return b if node is a else a

    def __repr__(self) -> str:
        return f"Link({self.id}, {self.ends[0].id}<->{self.ends[1].id})"
