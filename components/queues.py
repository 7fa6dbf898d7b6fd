"""Queue disciplines (active queue management) for link directions: RED, CoDel, FQ-CoDel, PIE and
step marking (docs/model.md, "Queue disciplines").

A drop-tail FIFO knows each packet's departure when it accepts it (components/link.py). The
disciplines here drop at dequeue (CoDel, FQ-CoDel), reorder (FQ-CoDel) or look at the queue as
each packet arrives, so they run a dequeue event whenever a transmission ends with packets
waiting: `AqmTransmitter` and `AqmDirection` replace `Transmitter` and `LinkDirection` only on
the directions whose link has a ``"queue"`` other than drop-tail, and drop-tail pays nothing.

`buffer_kb` stays the hard byte limit of the waiting packets (overflow drops are counted as
`dropped`, as for drop-tail); what the discipline drops is counted as `aqm_drops`, what it marks
(CE on an ECN-capable packet, RFC 3168 §5) as `marks`.
"""
from __future__ import annotations

from collections import deque
from math import sqrt
from typing import TYPE_CHECKING

from components.direction import CLOCK_ROUNDING, LinkDirection, Transmitter, record_sojourn

if TYPE_CHECKING:
    from components.packet import Packet
    from simulator.engine import Simulator


class AqmDirection(LinkDirection):
    """A link direction whose packets go through an `AqmTransmitter` (same counters)."""

    __slots__ = ()

    def send(self, packet: Packet) -> bool:
        self.arrived += 1
        if self.down:
            self.failed += 1
            return False
        t = self.transmitter
        return t.enqueue(packet, self, self.sim.now)   # type: ignore[attr-defined]

    def _advance(self, now: float, joining: int = 0) -> bool:
        touch(self, now)
        return True


def touch(d: LinkDirection, now: float) -> None:
    """Bring the occupancy integrals of `d` up to `now` (before its queue changes)."""
    span = now - d.last_s
    if span > 0:
        if d.q_pkts:
            d.area_bytes += d.q_bytes * span
            d.area_pkts += d.q_pkts * span
        d.last_s = now


class AqmTransmitter(Transmitter):
    """A buffer with a discipline and the transmitter draining it: a `Transmitter` whose waiting
    packets the discipline holds (its FIFO `queue` stays empty). Subclasses implement `admit`
    (the arriving packet joins the queue, or is dropped or marked) and `pick` (the next packet to
    transmit, possibly after dropping some). Entries are (packet, direction, enqueue time)."""

    __slots__ = ("rng", "config", "ecn", "queued_pkts", "pending", "epoch", "max_packet",
                 "on_queued_drop")

    def __init__(self, sim: Simulator, rate_bps: float, delay_s: float, capacity_bytes: int,
                 config: dict):
        super().__init__(sim, rate_bps, delay_s, capacity_bytes)
        self.open()               # (its packets reach `_start` without `LinkDirection.send`)
        self.rng = sim.rng
        self.config = config
        self.ecn = bool(config.get("ecn", False))
        self.queued_pkts = 0
        self.pending = False      # a dequeue event is scheduled
        self.epoch = 0            # bumped by reset: stale dequeue events do nothing
        self.max_packet = 0       # the largest packet seen (CoDel's "maxpacket", PIE's MTU)
        self.on_queued_drop = None   # set by an event trace: (packet, direction, cause) when a
                                     # packet already queued is dropped (CoDel at dequeue, FQ)

    # -- the server ---------------------------------------------------------------------------
    def enqueue(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        size = packet.size_bytes
        if size > self.max_packet:
            self.max_packet = size
        start = self.busy_until
        if not self.queued_pkts and (start <= now or start - now <= now * CLOCK_ROUNDING):
            self.arrival_idle(now)                # idle, up to the clock's rounding
            if start < now:
                start = now
            self._start(packet, d, start, start)
            return True
        if not self.admit(packet, d, now):
            return False
        if not self.pending:
            self.pending = True
            self.sim.schedule_at(self.busy_until, self._done, self.epoch)
        return True

    def _done(self, epoch: int) -> None:
        if epoch != self.epoch:
            return
        now = self.sim.now
        if now < self.busy_until:        # held idle by a shorter delay (Link.set_delay)
            self.sim.schedule_at(self.busy_until, self._done, epoch)
            return
        self.pending = False
        entry = self.pick(now)
        if entry is None:
            return
        packet, d, enqueued = entry
        self._start(packet, d, now, enqueued)
        if self.queued_pkts or self.dequeues_when_empty():
            self.pending = True
            self.sim.schedule_at(self.busy_until, self._done, epoch)

    def dequeues_when_empty(self) -> bool:
        """Whether the scheduler has work when the buffer is empty, so that the next dequeue
        must run although no packet waits (FQ-CoDel's flow lists)."""
        return False

    def _start(self, packet: Packet, d: LinkDirection, now: float, enqueued: float) -> None:
        size = packet.size_bytes
        d.tx_bytes += size
        d.tx_pkts += 1
        d.area_work += size * size * self.half_seconds_per_byte
        self.serving = d                      # (`unfinished`)
        if now > enqueued:
            record_sojourn(d, now - enqueued)
        finish = now + size * self.seconds_per_byte
        self.busy_until = finish
        self.sim.schedule_line(self.line, finish + self.delay_s, d.dst_receive, packet)  # type: ignore[arg-type]  # (opened)

    # -- bookkeeping used by the disciplines ---------------------------------------------------
    def join(self, packet: Packet, d: LinkDirection, now: float) -> None:
        touch(d, now)
        size = packet.size_bytes
        d.q_bytes += size
        d.q_pkts += 1
        self.queued_bytes += size
        self.queued_pkts += 1

    def leave(self, packet: Packet, d: LinkDirection, now: float) -> None:
        touch(d, now)
        size = packet.size_bytes
        d.q_bytes -= size
        d.q_pkts -= 1
        self.queued_bytes -= size
        self.queued_pkts -= 1

    def mark_or_drop(self, packet: Packet, d: LinkDirection) -> bool:
        """Congestion signal for `packet`: CE mark (True) if ECN is on and the packet ECN-capable,
        else an AQM drop (False)."""
        if self.ecn and packet.ect:
            packet.ce = True
            d.marks += 1
            return True
        d.aqm_drops += 1
        return False

    def _queued_drop(self, entry, cause: str) -> None:
        if self.on_queued_drop is not None:
            self.on_queued_drop(entry[0], entry[1], cause)

    def overflows(self, size: int) -> bool:
        return self.queued_bytes + size > self.capacity_bytes

    def reset(self, now: float) -> None:
        """Empty buffer and idle transmitter (the link failed): the waiting packets are failure
        drops (`LinkDirection.fail` counts them)."""
        if self.on_queued_drop is not None:
            for entry in self.waiting_entries():
                self._queued_drop(entry, "link_failure")
        self.epoch += 1
        self.pending = False
        self.queued_bytes = self.queued_pkts = 0
        self.busy_until = 0.0        # (nothing in flight: `Transmitter.reset`)
        self.serving = None
        self.gaps = self.rate_changes = None
        self.clear()

    # -- the discipline ------------------------------------------------------------------------
    def arrival_idle(self, now: float) -> None:
        """A packet found the server idle and the buffer empty (it is transmitted at once)."""

    def admit(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        raise NotImplementedError

    def pick(self, now: float):
        raise NotImplementedError

    def clear(self) -> None:
        raise NotImplementedError

    def waiting_entries(self) -> list:
        """The entries waiting now, in the order they would be served within each queue."""
        raise NotImplementedError


class FifoAqm(AqmTransmitter):
    """A FIFO whose discipline acts at enqueue (`decide`: True to enqueue); a packet that
    overflows the buffer is dropped before it is decided, unless the discipline sees every
    arrival (`decides_overflow`: RED, whose average counts them, as Linux's red_enqueue)."""

    decides_overflow = False
    __slots__ = ("fifo",)

    def __init__(self, *args):
        super().__init__(*args)
        self.fifo: deque = deque()

    def admit(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        if self.decides_overflow:
            if not self.decide(packet, d, now):
                return False
            if self.overflows(packet.size_bytes):
                d.dropped += 1
                return False
        else:
            if self.overflows(packet.size_bytes):
                d.dropped += 1
                return False
            if not self.decide(packet, d, now):
                return False
        self.join(packet, d, now)
        self.fifo.append((packet, d, now))
        return True

    def decide(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        raise NotImplementedError

    def pick(self, now: float):
        if not self.fifo:
            return None
        entry = self.fifo.popleft()
        self.leave(entry[0], entry[1], now)
        return entry

    def clear(self) -> None:
        self.fifo.clear()

    def waiting_entries(self) -> list:
        return list(self.fifo)


class Step(FifoAqm):
    """Step marking (DCTCP, RFC 8257 §3.1): CE on an ECN-capable packet that joins a queue of
    more than K bytes; otherwise drop-tail (nothing is dropped but overflow)."""

    __slots__ = ("k_bytes",)

    def __init__(self, *args):
        super().__init__(*args)
        self.k_bytes = self.config["k_bytes"]

    def decide(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        if self.queued_bytes > self.k_bytes and packet.ect:
            packet.ce = True
            d.marks += 1
        return True


class Red(FifoAqm):
    """RED (Floyd & Jacobson 1993) on the bytes waiting (as Linux's sch_red; the probability is
    not scaled by packet size) with the gentle variant (Floyd 2000).

    The average `avg` is an EWMA (weight w) of the bytes waiting, updated at each arrival (one
    the full buffer then drops too, as Floyd and Jacobson §4 and Linux's red_enqueue average
    every arrival); after an idle spell it is multiplied by (1 - w)^m, as if m = idle / s
    packets had arrived to an empty queue (s: the transmission time of the largest packet seen;
    Floyd and Jacobson take a small packet, Linux tc its avpkt). Between min and max the probability rises
    linearly to max_p, spread by the count since the last mark or drop (pa = pb / (1 - count pb));
    gentle: from max to 2 max it rises linearly from max_p to 1, above that every packet is
    dropped. ECN: marks instead of dropping only below max (RFC 3168 §7: above the maximum
    threshold packets are dropped)."""

    decides_overflow = True
    __slots__ = ("min_b", "max_b", "max_p", "weight", "gentle", "avg", "count", "idle_since")

    def __init__(self, *args):
        super().__init__(*args)
        c = self.config
        self.min_b = c["min_bytes"]
        self.max_b = c["max_bytes"]
        self.max_p = c["max_p"]
        self.weight = c["weight"]
        self.gentle = c["gentle"]
        self.avg = 0.0
        self.count = -1
        self.idle_since: float | None = 0.0

    def arrival_idle(self, now: float) -> None:
        self._average(now)
        self.idle_since = now      # the queue stays empty; the server is busy until busy_until

    def _average(self, now: float) -> float:
        if self.queued_pkts or self.idle_since is None:
            self.avg += self.weight * (self.queued_bytes - self.avg)
        else:
            idle_start = max(self.idle_since, self.busy_until)
            s = max(self.max_packet, 1) * self.seconds_per_byte
            m = max(0.0, now - idle_start) / s
            self.avg *= (1.0 - self.weight) ** m      # (Floyd and Jacobson: that alone)
        self.idle_since = None
        return self.avg

    def probability(self, avg: float) -> float:
        """The base probability pb at average `avg` (bytes): 0 below min, the (gentle) linear
        profile above it, 1 where everything is dropped."""
        if avg < self.min_b:
            return 0.0
        if avg < self.max_b:
            return self.max_p * (avg - self.min_b) / (self.max_b - self.min_b)
        if self.gentle and avg < 2 * self.max_b:
            return self.max_p + (1.0 - self.max_p) * (avg - self.max_b) / self.max_b
        return 1.0

    def decide(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        avg = self._average(now)
        if avg < self.min_b:
            self.count = -1
            return True
        pb = self.probability(avg)
        if pb >= 1.0:
            self.count = 0
            d.aqm_drops += 1
            return False
        self.count += 1
        pa = 1.0 if self.count * pb >= 1.0 else pb / (1.0 - self.count * pb)
        if self.rng.random() >= pa:
            return True
        self.count = 0
        if avg < self.max_b:
            return self.mark_or_drop(packet, d)
        d.aqm_drops += 1
        return False

    def pick(self, now: float):
        entry = super().pick(now)
        if not self.fifo:
            self.idle_since = now
        return entry

    def clear(self) -> None:
        """The link failed: the average and the count start again, as Linux's red_reset
        (red_restart) does when the carrier drops."""
        super().clear()
        self.avg = 0.0
        self.count = -1
        self.idle_since = 0.0


class Pie(FifoAqm):
    """PIE (RFC 8033): a drop probability updated every `tupdate` from the queueing delay (§4.2,
    with its scaling of alpha and beta at small probabilities; the 2 % cap of §5.5), applied at
    enqueue (§4.1) with the burst allowance (§4.4). The queueing delay is the bytes waiting over
    the link rate (the rate is known exactly, §5.2's departure-rate estimate is not needed). ECN
    (§5.1): mark while the probability is at most 10 %, drop above."""

    __slots__ = ("target", "tupdate", "alpha", "beta", "max_burst", "drop_prob", "qdelay_old",
                 "burst_allowance", "timer")

    def __init__(self, *args):
        super().__init__(*args)
        c = self.config
        self.target = c["target_s"]
        self.tupdate = c["tupdate_s"]
        self.alpha = c["alpha"]
        self.beta = c["beta"]
        self.max_burst = c["max_burst_s"]
        self.drop_prob = 0.0
        self.qdelay_old = 0.0
        self.burst_allowance = self.max_burst
        self.timer = False

    def qdelay(self) -> float:
        return self.queued_bytes * self.seconds_per_byte

    def _update(self, epoch: int) -> None:
        if epoch != self.epoch:      # a chain of updates from before a failure: it ends (the
            return                   # failure cleared `timer`; a later packet began a new chain)
        qdelay = self.qdelay()
        p = self.alpha * (qdelay - self.target) + self.beta * (qdelay - self.qdelay_old)
        prob = self.drop_prob
        for limit, scale in ((0.000001, 2048), (0.00001, 512), (0.0001, 128), (0.001, 32),
                             (0.01, 8), (0.1, 2)):
            if prob < limit:
                p /= scale
                break
        if prob >= 0.1 and p > 0.02:
            p = 0.02
        prob += p
        if qdelay == 0.0 and self.qdelay_old == 0.0:
            prob *= 0.98
        self.drop_prob = min(1.0, max(0.0, prob))
        self.burst_allowance = max(0.0, self.burst_allowance - self.tupdate)
        if (self.drop_prob == 0.0 and qdelay < self.target / 2
                and self.qdelay_old < self.target / 2):
            self.burst_allowance = self.max_burst
        self.qdelay_old = qdelay
        if self.queued_pkts or self.drop_prob > 0.0 or qdelay > 0.0:
            self.sim.schedule(self.tupdate, self._update, epoch)
        else:
            # idle: restarted by the next packet that waits. The next update would find both
            # delays 0 and the probability 0, and restore the burst allowance (§4.4): it does
            # so now, even when this update could not (the queue emptied as it ran)
            self.timer = False
            self.burst_allowance = self.max_burst

    def decide(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        if not self.timer:
            self.timer = True
            self.sim.schedule(self.tupdate, self._update, self.epoch)
        if self.burst_allowance > 0.0:
            return True
        if self.qdelay_old < self.target / 2 and self.drop_prob < 0.2:
            return True
        if self.queued_bytes <= 2 * self.max_packet:
            return True
        if self.rng.random() >= self.drop_prob:
            return True
        if self.ecn and packet.ect and self.drop_prob <= 0.1:
            return self.mark_or_drop(packet, d)
        d.aqm_drops += 1
        return False

    def clear(self) -> None:
        """The link failed: probability 0, no delay remembered, the whole burst allowance, as
        Linux's pie_reset (pie_vars_init) does when the carrier drops."""
        super().clear()
        self.timer = False
        self.drop_prob = 0.0
        self.qdelay_old = 0.0
        self.burst_allowance = self.max_burst


class CodelState:
    """The CoDel state of one queue (RFC 8289 §5): dropping, count, lastcount, first_above_time,
    drop_next, and the queue itself (entries, bytes)."""

    __slots__ = ("queue", "bytes", "dropping", "count", "lastcount", "first_above", "drop_next",
                 "deficit", "listed", "key")

    def __init__(self, key=None):
        self.queue: deque = deque()
        self.bytes = 0
        self.dropping = False
        self.count = 0
        self.lastcount = 0
        self.first_above = 0.0
        self.drop_next = 0.0
        self.deficit = 0
        self.listed = False
        self.key = key


class Codel(AqmTransmitter):
    """CoDel (RFC 8289) on one FIFO: packets are timestamped at enqueue and dropped at dequeue
    once the sojourn time has stayed above `target` for `interval` (§5.4-5.6), at the rate of the
    control law interval / sqrt(count). ECN: the packet that would be dropped is marked instead and
    transmitted, as Linux's codel does."""

    __slots__ = ("target", "interval", "state")

    def __init__(self, *args):
        super().__init__(*args)
        self.target = self.config["target_s"]
        self.interval = self.config["interval_s"]
        self.state = CodelState()

    def admit(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        if self.overflows(packet.size_bytes):
            d.dropped += 1
            return False
        self.join(packet, d, now)
        s = self.state
        s.queue.append((packet, d, now))
        s.bytes += packet.size_bytes
        return True

    def pick(self, now: float):
        return self.codel_dequeue(self.state, now)

    def clear(self) -> None:
        self.state = CodelState()

    def waiting_entries(self) -> list:
        return list(self.state.queue)

    # -- RFC 8289 §5 ------------------------------------------------------------------------
    def _dodequeue(self, s: CodelState, now: float):
        if not s.queue:
            s.first_above = 0.0
            return None, False
        entry = s.queue.popleft()
        packet = entry[0]
        s.bytes -= packet.size_bytes
        self.leave(packet, entry[1], now)
        # at most one maximal packet left waiting: the whole discipline's bytes, not this
        # queue's (one queue in CoDel; with FQ-CoDel Linux's codel_should_drop is given the
        # qdisc's backlog, so a flow with one packet left among many still counts as above)
        if now - entry[2] < self.target or self.queued_bytes <= self.max_packet:
            s.first_above = 0.0
            return entry, False
        if s.first_above == 0.0:
            s.first_above = now + self.interval
            return entry, False
        return entry, now >= s.first_above

    def _control_law(self, t: float, count: int) -> float:
        return t + self.interval / sqrt(count)

    def codel_dequeue(self, s: CodelState, now: float):
        entry, ok_to_drop = self._dodequeue(s, now)
        if entry is None:
            s.dropping = False
            return None
        if s.dropping:
            if not ok_to_drop:
                s.dropping = False
            while s.dropping and now >= s.drop_next:
                s.count += 1
                if self.mark_or_drop(entry[0], entry[1]):
                    s.drop_next = self._control_law(s.drop_next, s.count)
                    return entry
                self._queued_drop(entry, "aqm")
                entry, ok_to_drop = self._dodequeue(s, now)
                if entry is None:
                    s.dropping = False
                    return None
                if not ok_to_drop:
                    s.dropping = False
                else:
                    s.drop_next = self._control_law(s.drop_next, s.count)
        elif ok_to_drop:
            if not self.mark_or_drop(entry[0], entry[1]):
                self._queued_drop(entry, "aqm")
                entry, _ = self._dodequeue(s, now)
            s.dropping = True
            delta = s.count - s.lastcount
            s.count = 1
            if delta > 1 and now - s.drop_next < 16 * self.interval:
                s.count = delta
            s.drop_next = self._control_law(now, s.count)
            s.lastcount = s.count
        return entry


DROP_BATCH = 64          # FQ-CoDel: packets dropped at most per overflow (Linux drop_batch_size)


class FqCodel(Codel):
    """FQ-CoDel (RFC 8290): one queue per flow (exact: keyed by the packet's destination
    endpoint, so no hash collisions), each with its own CoDel state, served by deficit round robin
    (quantum `quantum_bytes`) with the new-flows list served before the old-flows list (§4.2).
    `buffer_kb` is the shared limit: as Linux's fq_codel_enqueue and fq_codel_drop, the arrival
    joins its queue first, then over the limit the queue with the most bytes (the arrival's
    counted) drops from its head half its bytes, at most `DROP_BATCH` packets, and its CoDel
    count grows by the packets dropped (§4.1; overflow drops). The scheduler also dequeues once
    the buffer has emptied, which takes emptied flows off the lists and resets their CoDel state
    (Linux's dequeue until NULL; §4.2), so a flow idle between bursts returns as a new flow."""

    __slots__ = ("quantum", "flows", "new_flows", "old_flows")

    def __init__(self, *args):
        super().__init__(*args)
        self.quantum = self.config["quantum_bytes"]
        self.flows: dict = {}
        self.new_flows: deque = deque()
        self.old_flows: deque = deque()

    def admit(self, packet: Packet, d: LinkDirection, now: float) -> bool:
        size = packet.size_bytes
        if size > self.capacity_bytes:
            d.dropped += 1
            return False
        key = packet.deliver
        q = self.flows.get(key)
        if q is None:
            q = self.flows[key] = CodelState(key)
        self.join(packet, d, now)
        q.queue.append((packet, d, now))
        q.bytes += size
        if not q.listed:
            q.listed = True
            q.deficit = self.quantum or self.max_packet
            self.new_flows.append(q)
        while self.queued_bytes > self.capacity_bytes:    # (bytes, where Linux counts packets:
            self._drop_from_fattest(now)                   # one batch may not be enough)
        return True

    def _drop_from_fattest(self, now: float) -> None:
        """Linux fq_codel_drop: the queue with the most bytes drops from its head until half
        its bytes are gone or `DROP_BATCH` packets (at least one), and its CoDel count grows
        by the packets dropped ("tell codel to increase its signal strength also")."""
        fattest = max(self.flows.values(), key=lambda q: q.bytes)
        threshold = fattest.bytes // 2
        dropped = freed = 0
        while fattest.queue:
            head = fattest.queue.popleft()
            size = head[0].size_bytes
            fattest.bytes -= size
            self.leave(head[0], head[1], now)
            head[1].dropped += 1
            self._queued_drop(head, "overflow")
            dropped += 1
            freed += size
            if dropped >= DROP_BATCH or freed >= threshold:
                break
        fattest.count += dropped

    def dequeues_when_empty(self) -> bool:
        return bool(self.new_flows or self.old_flows)

    def _forget(self, q: CodelState, now: float) -> None:
        """Delete the state of `q`, just taken off the lists, when a return of its flow would not
        use it, and likewise the oldest state of the table (else moved to its end), so that the
        table holds the listed flows and those that dropped in the last 16 intervals, not every
        flow ever seen. Off the lists a state is empty, not dropping and without first_above;
        only CoDel's count re-use (§5.6: count - lastcount, when dropping resumes within 16
        intervals of drop_next) could tell an old state from a new one."""
        flows = self.flows
        if self._spent(q, now):
            del flows[q.key]
        if flows:
            key = next(iter(flows))
            oldest = flows[key]
            if not oldest.listed and self._spent(oldest, now):
                del flows[key]
            else:
                flows[key] = flows.pop(key)

    def _spent(self, q: CodelState, now: float) -> bool:
        return q.count - q.lastcount <= 1 or now - q.drop_next >= 16 * self.interval

    def pick(self, now: float):
        new, old = self.new_flows, self.old_flows
        while True:
            if new:
                lst = new
            elif old:
                lst = old
            else:
                return None
            q = lst[0]
            if q.deficit <= 0:
                q.deficit += self.quantum or self.max_packet
                lst.popleft()
                old.append(q)
                continue
            entry = self.codel_dequeue(q, now)
            if entry is None:
                lst.popleft()
                if lst is new and old:
                    old.append(q)      # §4.2: an emptied new flow goes to the old list
                else:
                    q.listed = False
                    self._forget(q, now)
                continue
            q.deficit -= entry[0].size_bytes
            return entry

    def clear(self) -> None:
        self.flows = {}
        self.new_flows = deque()
        self.old_flows = deque()

    def waiting_entries(self) -> list:
        return [entry for q in self.flows.values() for entry in q.queue]


TRANSMITTERS = {"red": Red, "codel": Codel, "fq_codel": FqCodel, "pie": Pie, "step": Step}


def make_transmitter(sim: Simulator, rate_bps: float, delay_s: float, capacity_bytes: int,
                     config: dict) -> AqmTransmitter:
    """The transmitter of discipline ``config["discipline"]`` (not drop-tail) with the resolved
    parameters in `config` (seconds and bytes, see topologies/loader.py)."""
    return TRANSMITTERS[config["discipline"]](sim, rate_bps, delay_s, capacity_bytes, config)
