"""Links: a rate, a propagation delay and FIFO drop-tail buffers, in one of two duplex models.

* ``full``: each direction has its own buffer and transmitter.
* ``half``: the CS/EE 143 reference model: both directions share one FIFO buffer and one
  transmitter; packets of both directions queue together in arrival order, with no turnaround cost.

Model (see docs/model.md): a packet that finds the transmitter idle starts transmitting at once and
never occupies the buffer; otherwise it waits in the buffer if it fits (queued bytes + its size
<= capacity), else it is dropped (drop-tail). The buffer holds waiting packets only, not the one
being transmitted. Transmission takes size * 8 / rate seconds, then the packet propagates for the
link's delay and arrives at the far node.

Because the queue is FIFO and the rate constant, a packet's departure time is known the moment it
is accepted. The transmitter therefore schedules the arrival at the far end directly, one event per
packet and hop, and accounts lazily for packets leaving the buffer (in time order, before any later
arrival or sample), which keeps buffer statistics exact.

Failures: a link can go down and come back up. While down, each direction's transmitter is
replaced by a `DeadTransmitter` that drops everything offered (failure drops), so links cost
nothing extra while up. Packets a link holds when it fails (waiting, being transmitted, or
propagating) are lost: links that may fail deliver through an `Arrival` guard that is cut when
the link goes down. The nodes at both ends are told at once (`Node.link_changed`).

Impairments (loss, burst loss, duplication, reordering, jitter) act on a direction's packets
after transmission, at the moment they would arrive: an `Impairment` stands in for the far node's
receive callback, so unimpaired directions pay nothing for the feature.
"""
from __future__ import annotations

from collections import deque

DUPLEX_MODES = ("full", "half")


class LinkDirection:
    """One direction of a link, from `src` to `dst`, with its counters.

    Counters are cumulative since the start of the run: packets offered (`arrived`), dropped,
    transmitted (transmission begun), bytes transmitted, and the time integral of the bytes and
    packets this direction has waiting in the buffer (`area_bytes`, `area_pkts`). `area_work`
    integrates what is left to send of this direction's packet in service (a packet of S bytes
    adds S * S / rate / 2 byte-seconds when its transmission begins), so `area_bytes +
    area_work` integrates the unfinished work: the backlog a packet arriving at that moment
    would wait behind, queueing delay times rate.
    """

    __slots__ = ("link", "index", "src", "dst", "label", "transmitter", "dst_receive",
                 "arrived", "dropped", "tx_pkts", "tx_bytes", "q_bytes", "q_pkts",
                 "area_bytes", "area_pkts", "area_work", "last_s", "failed", "lost_in_flight", "delivered",
                 "routing_pkts", "routing_bytes", "routing_dropped", "impaired_drops",
                 "duplicated", "delayed")

    def __init__(self, link, index: int, src, dst, transmitter):
        self.link = link
        self.index = index
        self.src = src
        self.dst = dst
        self.label = f"{src.id}->{dst.id}"
        self.transmitter = transmitter
        self.dst_receive = dst.receive
        self.arrived = 0
        self.dropped = 0
        self.tx_pkts = 0
        self.tx_bytes = 0
        self.q_bytes = 0
        self.q_pkts = 0
        self.area_bytes = 0.0
        self.area_pkts = 0.0
        self.area_work = 0.0       # time integral of the untransmitted bytes of packets in service
        self.last_s = 0.0
        self.failed = 0            # offered while the link was down, or waiting when it failed
        self.lost_in_flight = 0    # transmitted, then lost because the link failed
        self.delivered = 0         # counted only on links that may fail (see Arrival)
        self.routing_pkts = 0      # routing packets offered (counted by routing agents)
        self.routing_bytes = 0
        self.routing_dropped = 0
        self.impaired_drops = 0    # lost in transit by an impairment (see Impairment)
        self.duplicated = 0        # extra copies delivered by an impairment
        self.delayed = 0           # packets held back by reordering

    def impair(self, spec) -> None:
        """Apply an impairment description (see `Impairment`) to this direction's arrivals.
        Call before any packet is sent, and before `Link.enable_failures`."""
        if spec is not None and spec.active:
            self.dst_receive = Impairment(self, self.link.sim, spec, self.dst_receive)

    def send(self, packet) -> bool:
        """Offer `packet` to the link in this direction; False if it was dropped."""
        return self.transmitter.offer(packet, self)

    def settle(self, now: float) -> None:
        """Bring the counters up to `now` (packets that began transmission, occupancy integral)."""
        self.transmitter.release(now)
        span = now - self.last_s
        if span > 0:
            self.area_bytes += self.q_bytes * span
            self.area_pkts += self.q_pkts * span
            self.last_s = now

    def waiting(self) -> int:
        """Packets of this direction waiting in the buffer now (after `settle`)."""
        return self.q_pkts


class Transmitter:
    """A FIFO drop-tail buffer of `capacity_bytes` and the transmitter that drains it."""

    __slots__ = ("sim", "rate_bps", "seconds_per_byte", "half_seconds_per_byte", "delay_s",
                 "capacity_bytes", "queue", "queued_bytes", "busy_until")

    def __init__(self, sim, rate_bps: float, delay_s: float, capacity_bytes: int):
        self.sim = sim
        self.rate_bps = rate_bps
        self.seconds_per_byte = 8.0 / rate_bps
        self.half_seconds_per_byte = 4.0 / rate_bps
        self.delay_s = delay_s
        self.capacity_bytes = capacity_bytes
        self.queue = deque()      # (transmission start time, size, direction) of waiting packets
        self.queued_bytes = 0
        self.busy_until = 0.0     # when the last accepted packet finishes transmission

    def release(self, now: float) -> None:
        """Take out of the buffer every packet whose transmission has begun by `now`."""
        queue = self.queue
        while queue and queue[0][0] <= now:
            start, size, d = queue.popleft()
            self.queued_bytes -= size
            span = start - d.last_s
            if span > 0:
                d.area_bytes += d.q_bytes * span
                d.area_pkts += d.q_pkts * span
                d.last_s = start
            d.q_bytes -= size
            d.q_pkts -= 1
            d.tx_bytes += size
            d.tx_pkts += 1
            d.area_work += size * size * self.half_seconds_per_byte

    def offer(self, packet, d: LinkDirection) -> bool:
        """Accept `packet` for direction `d` (transmit, or queue) or drop it; False if dropped."""
        sim = self.sim
        now = sim.now
        queue = self.queue
        if queue and queue[0][0] <= now:
            self.release(now)
        size = packet.size_bytes
        d.arrived += 1
        start = self.busy_until
        if start <= now:
            start = now
            d.tx_bytes += size
            d.tx_pkts += 1
            d.area_work += size * size * self.half_seconds_per_byte
        elif self.queued_bytes + size > self.capacity_bytes:
            d.dropped += 1
            return False
        else:
            self.queued_bytes += size
            span = now - d.last_s
            if span > 0:
                d.area_bytes += d.q_bytes * span
                d.area_pkts += d.q_pkts * span
                d.last_s = now
            d.q_bytes += size
            d.q_pkts += 1
            queue.append((start, size, d))
        finish = start + size * self.seconds_per_byte
        self.busy_until = finish
        sim.schedule_at(finish + self.delay_s, d.dst_receive, packet)
        return True


class Impairment:
    """What happens to one direction's packets between transmitter and far node.

    Called at a packet's nominal arrival time, in this order: lost (independently with
    `loss_rate`, or by the Gilbert-Elliott chain, stepped once per packet), else delivered; held
    back by `reorder_delay_s` with probability `reorder_rate` (later packets overtake it); delayed
    by a uniform jitter in [0, `jitter_s`] — without `jitter_reorder`, never earlier than the
    previous jittered packet of this direction, so jitter alone keeps the order; and with
    probability `duplicate_rate` delivered a second time right after. Lost packets have used the
    link's capacity; duplicates have not. All draws come from the run's generator.
    """

    __slots__ = ("d", "sim", "rng", "receive", "loss_rate", "gilbert", "bad", "duplicate_rate",
                 "reorder_rate", "reorder_delay_s", "jitter_s", "jitter_reorder", "last_release_s")

    def __init__(self, d: LinkDirection, sim, spec, receive):
        self.d = d
        self.sim = sim
        self.rng = sim.rng
        self.receive = receive
        self.loss_rate = spec.loss_rate
        self.gilbert = spec.loss_model
        self.bad = False
        self.duplicate_rate = spec.duplicate_rate
        self.reorder_rate = spec.reorder_rate
        self.reorder_delay_s = spec.reorder_delay_s
        self.jitter_s = spec.jitter_s
        self.jitter_reorder = spec.jitter_reorder
        self.last_release_s = 0.0

    def _lost(self) -> bool:
        random = self.rng.random
        model = self.gilbert
        if model is None:
            return self.loss_rate > 0.0 and random() < self.loss_rate
        if self.bad:
            if random() < model.p_bad_to_good:
                self.bad = False
        elif random() < model.p_good_to_bad:
            self.bad = True
        return random() < (model.loss_bad if self.bad else model.loss_good)

    def __call__(self, packet) -> None:
        if self._lost():
            self.d.impaired_drops += 1
            return
        random = self.rng.random
        delay = 0.0
        if self.reorder_rate and random() < self.reorder_rate:
            delay = self.reorder_delay_s
            self.d.delayed += 1
        copies = 2 if self.duplicate_rate and random() < self.duplicate_rate else 1
        if copies == 2:
            self.d.duplicated += 1
        if self.jitter_s:
            now = self.sim.now
            release = now + random() * self.jitter_s
            if not self.jitter_reorder:
                release = max(release, self.last_release_s)
                self.last_release_s = release
            delay += release - now
        if delay > 0.0:
            for _ in range(copies):
                self.sim.schedule(delay, self.receive, packet)
        else:
            for _ in range(copies):
                self.receive(packet)


class DeadTransmitter:
    """Stands in for a failed link's transmitter: every packet offered is a failure drop."""

    __slots__ = ()

    def offer(self, packet, d: LinkDirection) -> bool:
        d.arrived += 1
        d.failed += 1
        return False

    def release(self, now: float) -> None:
        pass


DEAD = DeadTransmitter()


class Arrival:
    """Hands packets of one direction to the far node, unless the link failed after sending them."""

    __slots__ = ("d", "receive", "live")

    def __init__(self, d: LinkDirection, receive):
        self.d = d
        self.receive = receive
        self.live = True

    def __call__(self, packet) -> None:
        if self.live:
            self.d.delivered += 1
            self.receive(packet)


class Link:
    """A link between two nodes: rate, propagation delay, buffer capacity and duplex model."""

    __slots__ = ("id", "ends", "rate_bps", "delay_s", "buffer_bytes", "duplex", "directions",
                 "transmitters", "static_cost_s", "up", "can_fail", "_receivers", "sim")

    def __init__(self, sim, link_id: str, a, b, rate_bps: float, delay_s: float,
                 buffer_bytes: int, duplex: str = "full", cost_s: float | None = None):
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
        self._receivers = None
        self.rate_bps = rate_bps
        self.delay_s = delay_s
        self.buffer_bytes = buffer_bytes
        self.duplex = duplex
        first = Transmitter(sim, rate_bps, delay_s, buffer_bytes)
        second = first if duplex == "half" else Transmitter(sim, rate_bps, delay_s, buffer_bytes)
        self.transmitters = (first,) if duplex == "half" else (first, second)
        self.directions = (LinkDirection(self, 0, a, b, first), LinkDirection(self, 1, b, a, second))
        a.attach(self, self.directions[0])
        b.attach(self, self.directions[1])

    # -- failures ---------------------------------------------------------------------------
    def enable_failures(self) -> None:
        """Route arrivals through `Arrival` guards so that a failure can cut packets in flight.
        Call before any packet is sent; links that never fail skip this and the guard's cost."""
        if not self.can_fail:
            self.can_fail = True
            self._receivers = tuple(d.dst_receive for d in self.directions)
            for d in self.directions:
                d.dst_receive = Arrival(d, d.dst_receive)

    def go_down(self) -> None:
        """Fail the link: drop what it holds and, until `come_up`, everything sent to it."""
        if not self.up:
            return
        if not self.can_fail:
            raise RuntimeError(f"link {self.id} was not prepared for failures (enable_failures)")
        now = self.sim.now
        for d in self.directions:
            d.settle(now)
            d.failed += d.q_pkts
            d.q_bytes = d.q_pkts = 0
            d.lost_in_flight = d.tx_pkts - d.delivered    # being transmitted or propagating
            d.dst_receive.live = False
        for t in self.transmitters:
            t.queue.clear()
            t.queued_bytes = 0
            t.busy_until = now
        for d in self.directions:
            d.transmitter = DEAD
        self.up = False
        for node in self.ends:
            node.link_changed(self)

    def come_up(self) -> None:
        """Repair the link: empty buffers, idle transmitters."""
        if self.up:
            return
        first, second = self.transmitters[0], self.transmitters[-1]
        for d, t, receive in zip(self.directions, (first, second), self._receivers):
            d.transmitter = t
            d.last_s = self.sim.now
            d.dst_receive = Arrival(d, receive)
        self.up = True
        for node in self.ends:
            node.link_changed(self)

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
