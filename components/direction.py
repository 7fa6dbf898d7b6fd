"""Link directions: where a direction's packets enter a link, its FIFO drop-tail buffer and
transmitter, and its counters (components/link.py puts two of them together as a link).

Model (see docs/model.md): a packet that finds the transmitter idle starts transmitting at once and
never occupies the buffer; otherwise it waits in the buffer if it fits (queued bytes + its size
<= capacity), else it is dropped (drop-tail). The buffer holds waiting packets only, not the one
being transmitted. Transmission takes size * 8 / rate seconds, then the packet propagates for the
link's delay and arrives at the far node.

Because the queue is FIFO and the rate constant, a packet's departure time is known the moment it
is accepted. The direction therefore schedules the arrival at the far end directly, one event per
packet and hop, and accounts lazily for packets leaving the buffer (in time order, before any later
arrival or sample), which keeps buffer statistics exact. Arrivals come due in the order the packets
were accepted, so they go on the transmitter's event line (`Simulator.schedule_line`): one heap
entry per busy transmitter, not per packet in flight.

Who owns what:

* `LinkDirection` is the one place a direction's packets enter the link (`send`) and the only
  writer of its counters: offered, dropped, transmitted, and the occupancy integrals, which one
  helper (`_advance`) brings up to a given time.
* `Transmitter` is the state of one FIFO server (a buffer and the transmitter draining it), shared
  by both directions of a half-duplex link; it keeps no counters.
* `Impairment` (components/impairment.py: loss, burst loss, duplication, reordering, jitter) acts
  on a direction's packets after transmission, at the moment they would arrive: it stands in for
  the far node's receive callback, so unimpaired directions pay nothing for the feature.
* `Arrival` guards the deliveries of a link that may fail and counts them: a failure cuts the
  packets in flight, and links that never fail pay nothing for it.

Queue disciplines (components/queues.py) subclass `LinkDirection` and `Transmitter`.
"""
from __future__ import annotations

from array import array
from collections import deque
from math import floor, frexp
from typing import TYPE_CHECKING, Any, Callable

from simulator.compiled import plain_mypyc_attr

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mypy_extensions import mypyc_attr

    from components.link import Link
    from components.packet import Packet
    from simulator.engine import Simulator


# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)

# Sojourn-time histogram (time from joining the buffer to the start of transmission, of the
# packets that waited), in two parts so that the common case costs one multiplication and one
# array increment per packet:
# - fine: linear buckets of the time it takes to transmit `sojourn_bucket_bytes(capacity)` bytes
#   at the link's rate (64 bytes; for buffers over 256 KB, 1/4096 of the buffer), as many as
#   cover the whole buffer plus two full-size packets: every wait of a drop-tail FIFO. The counts
#   are an array('I') (4 bytes a bucket; 'Q' should one reach 2^32), allocated when a packet
#   first waits and grown (doubling, from 256 buckets) only as far as the longest wait so far, so
#   a direction whose packets never wait long pays for the buckets it uses;
# - coarse: waits beyond that (a discipline's scheduler can hold a packet longer): 8 log-spaced
#   buckets per octave (each at most 12.5 % wide) from 2^-21 s (0.48 us) to 2^7 s; shorter and
#   longer waits fall in the first and last bucket. Bucket i holds waits w with frexp(w) = (m, e),
#   i = (e + 20) * 8 + int((m - 0.5) * 16).
# The clock's rounding: a transmitter that becomes free within CLOCK_ROUNDING * now of a
# packet's arrival is free for it (it begins at once and never waits in the buffer). The two
# times are sums taken along different paths (the previous packet's start + its transmission
# time, and an upstream departure + the propagation delay) and may differ by a few units in the
# last place where they are equal; a wait that short would only put float noise into the buffer
# and sojourn statistics (docs/model.md, "Links and buffers"). 4 units in the last place.
CLOCK_ROUNDING = 4 * 2.0 ** -52

SOJOURN_FINE_BUCKETS_MAX = 4096
SOJOURN_FINE_FIRST = 256       # fine buckets allocated by the first wait (then doubled as needed)
SOJOURN_BUCKETS = 224


def sojourn_bucket_bytes(capacity_bytes: int) -> int:
    """Width in bytes (of transmission time) of the fine sojourn buckets for a buffer."""
    return max(64, -(-(capacity_bytes + 3000) // SOJOURN_FINE_BUCKETS_MAX))


def record_sojourn(d: LinkDirection, wait: float) -> None:
    """Count a packet of direction `d` that waited `wait` > 0 seconds before its transmission.
    (`LinkDirection._advance` inlines this.)"""
    d.soj_sum += wait
    count_sojourn(d, wait)


def count_sojourn(d: LinkDirection, wait: float) -> None:
    """Add a wait of `wait` > 0 seconds to the sojourn histogram of `d` (not to `soj_sum`)."""
    i = floor(wait * d.soj_scale)
    hist: array
    if i < d.soj_fine_count:
        fine = d.soj_fine
        hist = _grow_fine(d, i) if fine is None or i >= len(fine) else fine
    else:
        coarse = d.soj_hist
        if coarse is None:
            coarse = d.soj_hist = array("I", [0]) * SOJOURN_BUCKETS
        hist = coarse
        m, e = frexp(wait)
        i = (e + 20) * 8 + int((m - 0.5) * 16)
        i = 0 if i < 0 else i if i < SOJOURN_BUCKETS else SOJOURN_BUCKETS - 1
    try:
        hist[i] += 1
    except OverflowError:                       # 2^32 packets in one bucket: 8-byte counts
        wide = array("Q", hist)
        wide[i] += 1
        if hist is d.soj_fine:
            d.soj_fine = wide
        else:
            d.soj_hist = wide


def _grow_fine(d: LinkDirection, i: int) -> array:
    """The fine buckets of `d`, allocated or grown so that bucket `i` exists."""
    fine = d.soj_fine
    size = SOJOURN_FINE_FIRST if fine is None else len(fine)
    while size <= i:
        size *= 2
    size = min(size, d.soj_fine_count)
    if fine is None:
        fine = d.soj_fine = array("I", [0]) * size
    else:
        fine.extend(array(fine.typecode, [0]) * (size - len(fine)))
    return fine


def sojourn_quantile(d: LinkDirection, q: float) -> float:
    """The `q` quantile (0..1) of the sojourn times of the packets `d` transmitted, in seconds:
    0 if the packets that did not wait reach it, else the middle of its fine bucket, or the
    geometric middle of its coarse bucket."""
    n = d.tx_pkts
    if not n:
        return 0.0
    rank = max(1, -int(-q * n // 1))          # ceil(q n)
    fine: Sequence[int] = d.soj_fine or ()
    hist: Sequence[int] = d.soj_hist or ()
    below = n - sum(fine) - sum(hist)
    if rank <= below:
        return 0.0
    for i, count in enumerate(fine):
        below += count
        if below >= rank:
            return (i + 0.5) / d.soj_scale
    for i, count in enumerate(hist):
        below += count
        if below >= rank:
            e, sub = divmod(i, 8)
            low = (0.5 + sub / 16.0) * 2.0 ** (e - 20)
            return (low * (low + 2.0 ** (e - 24))) ** 0.5
    return 2.0 ** 7


@mypyc_attr(allow_interpreted_subclasses=True)
class LinkDirection:
    """One direction of a link, from `src` to `dst`: where its packets enter the link, and its
    counters.

    `send(packet)` offers a packet to the link in this direction (transmit at once, wait in the
    buffer, or drop) and returns whether it was accepted. Counters are cumulative since the start
    of the run: packets offered (`arrived`), dropped by the full buffer (`dropped`), transmitted
    (transmission begun: `tx_pkts`, `tx_bytes`), failure drops (`failed`, `lost_in_flight`),
    impairment events (`impaired_drops`, `duplicated`, `delayed`), and the time integral of the
    bytes and packets this direction has waiting in the buffer (`area_bytes`, `area_pkts`).
    `area_work` integrates what is left to send of this direction's packet in service (a packet of
    S bytes adds S * S / rate / 2 byte-seconds when its transmission begins), so `area_bytes +
    area_work` integrates the unfinished work: the backlog a packet arriving at that moment would
    wait behind, queueing delay times rate. The integrals are exact up to `last_s`; `settle(now)`
    brings everything up to `now`. Routing agents count their own packets in `routing_pkts`,
    `routing_bytes` and `routing_dropped` (`send_routing`).
    """

    __slots__ = ("link", "index", "src", "dst", "label", "sim", "transmitter", "dst_receive",
                 "down", "guard",
                 "arrived", "dropped", "tx_pkts", "tx_bytes", "q_bytes", "q_pkts",
                 "area_bytes", "area_pkts", "area_work", "last_s", "failed", "lost_in_flight",
                 "impaired_drops", "duplicated", "delayed",
                 "routing_pkts", "routing_bytes", "routing_dropped",
                 "marks", "aqm_drops", "soj_sum", "soj_scale", "soj_fine_count", "soj_fine",
                 "soj_hist")

    def __init__(self, link: Link, index: int, src, dst, transmitter: Transmitter):
        self.link = link
        self.index = index
        self.src = src
        self.dst = dst
        self.label = f"{src.id}->{dst.id}"
        self.sim = transmitter.sim
        self.transmitter = transmitter
        self.dst_receive = dst.receive
        self.down = False          # the link failed: everything offered is a failure drop
        self.guard: Arrival | None = None
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
        self.impaired_drops = 0    # lost in transit by an impairment (see Impairment)
        self.duplicated = 0        # extra copies delivered by an impairment
        self.delayed = 0           # packets held back by an impairment's reordering
        self.routing_pkts = 0      # routing packets offered (see send_routing)
        self.routing_bytes = 0
        self.routing_dropped = 0
        self.marks = 0             # CE marks set by the queue discipline (components/queues.py)
        self.aqm_drops = 0         # drops decided by the queue discipline (not overflow)
        self.soj_sum = 0.0         # sum of the sojourn times (join to start of transmission)
        # their histogram (see record_sojourn), allocated when a packet first waits
        bucket_bytes = sojourn_bucket_bytes(transmitter.capacity_bytes)
        self.soj_scale = transmitter.rate_bps / (8.0 * bucket_bytes)    # fine buckets per second
        self.soj_fine_count = -(-(transmitter.capacity_bytes + 3000) // bucket_bytes)
        self.soj_fine: array | None = None
        self.soj_hist: array | None = None

    # -- sending -----------------------------------------------------------------------------
    def send(self, packet: Packet) -> bool:
        """Offer `packet` to the link in this direction: it is transmitted at once, waits in the
        buffer, or is dropped (buffer full, or the link is down); False if dropped."""
        if self.down:
            self.arrived += 1
            self.failed += 1
            return False
        t = self.transmitter
        sim = self.sim
        now = sim.now
        size = packet.size_bytes
        self.arrived += 1
        start = t.busy_until
        queue = t.queue
        if start <= now:                              # idle: transmission begins at once
            if queue:
                self._advance(now)                    # (everything waiting has begun by now)
            elif queue is None:                       # its first packet: a buffer and a line
                t.open()
            start = now
            self.tx_bytes += size
            self.tx_pkts += 1
            self.area_work += size * size * t.half_seconds_per_byte
            t.serving = self                          # (`unfinished`)
        else:                                         # busy: wait in the buffer if it fits
            if (queue and queue[0][0] <= now) or t.queued_bytes + size > t.capacity_bytes:
                if not self._advance(now, size) and (queue or start - now > now * CLOCK_ROUNDING):
                    self.dropped += 1
                    return False
            else:                   # no packet began since, and it fits: `_advance`, inline
                span = now - self.last_s
                if span > 0:
                    if self.q_pkts:
                        self.area_bytes += self.q_bytes * span
                        self.area_pkts += self.q_pkts * span
                    self.last_s = now
            if queue or start - now > now * CLOCK_ROUNDING:     # it waits
                t.queued_bytes += size
                self.q_bytes += size
                self.q_pkts += 1
                queue.append((start, size, self, start - now))  # type: ignore[union-attr]  # (busy: opened)
            else:             # free up to the clock's rounding: it begins when free, not waiting
                self.tx_bytes += size
                self.tx_pkts += 1
                self.area_work += size * size * t.half_seconds_per_byte
                t.serving = self                      # (`unfinished`)
        finish = start + size * t.seconds_per_byte
        t.busy_until = finish
        arrive = finish + t.delay_s
        line = t.line
        if line and arrive >= line[-1][0]:   # `Simulator.schedule_line`'s common case, inline
            sim.seq = seq = sim.seq + 1
            line.append((arrive, seq, self.dst_receive, packet, line))
        else:
            sim.schedule_line(line, arrive, self.dst_receive, packet)  # type: ignore[arg-type]
        return True

    def send_routing(self, packet: Packet) -> bool:
        """Send a routing packet, counted apart (`routing_pkts`, `routing_bytes`,
        `routing_dropped`) as well as in the ordinary counters; False if it was dropped."""
        self.routing_pkts += 1
        self.routing_bytes += packet.size_bytes
        me: Any = self                  # (a dynamic call: docs/model.md, "Compiled core")
        if me.send(packet):
            return True
        self.routing_dropped += 1
        return False

    # -- accounting --------------------------------------------------------------------------
    def _advance(self, now: float, joining: int = 0) -> bool:
        """Bring the (possibly shared) buffer up to `now`, and with it the occupancy integrals:
        the one place they are computed.

        Every packet whose transmission began by `now` leaves the buffer, accounted to its own
        direction at the moment it began (the integrals of that direction are brought up to that
        moment first, at the occupancy before it left). Then this direction's integrals are
        brought up to `now` -- unless a packet of `joining` bytes is about to join and does not
        fit, in which case it will be dropped and nothing else changes. Returns whether it fits.
        """
        t = self.transmitter
        queue = t.queue
        d: LinkDirection | None = None
        while queue and queue[0][0] <= now:
            at, size, d, wait = queue.popleft()       # leaves the buffer: transmission begins
            span = at - d.last_s
            if span > 0:
                if d.q_pkts:                          # (an empty buffer adds nothing)
                    d.area_bytes += d.q_bytes * span
                    d.area_pkts += d.q_pkts * span
                d.last_s = at
            t.queued_bytes -= size
            d.q_bytes -= size
            d.q_pkts -= 1
            d.tx_bytes += size
            d.tx_pkts += 1
            d.area_work += size * size * t.half_seconds_per_byte
            d.soj_sum += wait                         # (wait > 0: it joined a busy link)
            try:                                      # record_sojourn's common case, inline
                d.soj_fine[floor(wait * d.soj_scale)] += 1  # type: ignore[index]
            except (TypeError, IndexError, OverflowError):  # first wait, beyond the buckets
                count_sojourn(d, wait)                      # allocated so far, or 2^32
        if d is not None:                             # the last to begin is in service
            t.serving = d                             # (`unfinished`)
        if joining and t.queued_bytes + joining > t.capacity_bytes:
            return False
        span = now - self.last_s
        if span > 0:
            if self.q_pkts:                           # (an empty buffer adds nothing)
                self.area_bytes += self.q_bytes * span
                self.area_pkts += self.q_pkts * span
            self.last_s = now
        return True

    def settle(self, now: float) -> None:
        """Bring the counters up to `now` (packets that began transmission, occupancy integral)."""
        self._advance(now)

    def waiting(self) -> int:
        """Packets of this direction waiting in the buffer now (after `settle`)."""
        return self.q_pkts

    # -- impairments -------------------------------------------------------------------------
    def impair(self, spec) -> None:
        """Apply an impairment description (see `Impairment`) to this direction's arrivals.
        Call before any packet is sent, and before `Link.enable_failures`."""
        if spec is not None and spec.active:
            from components.impairment import Impairment  # (only runs with impairments load it)
            impairment = Impairment(self, spec, self.dst_receive)
            if impairment.netem:        # the impairment draws each packet's propagation delay
                if len(self.link.transmitters) != 2:
                    raise ValueError(f"link {self.link.id}: jitter mode \"netem\" needs a "
                                     f"full-duplex link (its directions share one transmitter)")
                self.transmitter.delay_s = 0.0
                self.transmitter.delay_by_impairment = True
            self.dst_receive = impairment

    def lost_in_transit(self) -> None:
        """An impairment lost a packet of this direction."""
        self.impaired_drops += 1

    def held_back(self) -> None:
        """An impairment held a packet back (reordering)."""
        self.delayed += 1

    def duplicate_delivered(self) -> None:
        """An impairment delivered a packet twice."""
        self.duplicated += 1

    # -- failures ----------------------------------------------------------------------------
    def guard_arrivals(self) -> None:
        """Deliver through an `Arrival` guard, so that a failure can cut packets in flight."""
        if self.guard is None:
            self.guard = Arrival(self.dst_receive, 0)
            self.dst_receive = self.guard

    def fail(self, now: float) -> None:
        """The link went down at `now`: packets waiting are failure drops, packets transmitted
        and not delivered are lost in flight, and from now on everything offered is dropped."""
        if self.guard is None:
            raise RuntimeError(f"link direction {self.label} was not prepared for failures")
        self.settle(now)
        self.failed += self.q_pkts
        self.q_bytes = self.q_pkts = 0
        self.lost_in_flight = self.tx_pkts - self.guard.delivered   # transmitting or propagating
        self.guard.live = False
        self.down = True

    def repair(self, now: float) -> None:
        """The link came back up at `now`, with an idle transmitter and an empty buffer."""
        old = self.guard
        if old is None:
            raise RuntimeError(f"link direction {self.label} was not prepared for failures")
        self.last_s = now
        self.guard = Arrival(old.receive, old.delivered)
        self.dst_receive = self.guard
        self.down = False


@mypyc_attr(allow_interpreted_subclasses=True)
class Transmitter:
    """One FIFO drop-tail buffer of `capacity_bytes` and the transmitter that drains it: the
    state the directions that share it (one, or both on a half-duplex link) send into."""

    __slots__ = ("sim", "rate_bps", "seconds_per_byte", "half_seconds_per_byte", "delay_s",
                 "capacity_bytes", "queue", "queued_bytes", "busy_until", "line",
                 "delay_by_impairment", "serving", "gaps", "rate_changes")

    def __init__(self, sim: Simulator, rate_bps: float, delay_s: float, capacity_bytes: int):
        self.sim = sim
        self.rate_bps = rate_bps
        self.seconds_per_byte = 8.0 / rate_bps
        self.half_seconds_per_byte = 4.0 / rate_bps
        self.delay_s = delay_s
        self.capacity_bytes = capacity_bytes
        # (transmission start time, size, direction, sojourn) of the waiting packets, and the
        # arrivals at the far end(s) in order (engine.py): made by `open` when the first packet
        # comes (760 bytes each; most links of a large network never carry one)
        self.queue: deque[tuple[float, int, LinkDirection, float]] | None = None
        self.line: deque | None = None
        self.queued_bytes = 0
        self.busy_until = 0.0     # when the last accepted packet finishes transmission
        self.delay_by_impairment = False   # netem jitter: delay_s is 0, the impairment delays
        # what `unfinished` needs to know of the packet in service: the direction of the one
        # whose transmission began last; (start, end) of the idle spells a shorter delay holds
        # the transmitter for (Link.set_delay); (end, seconds per byte) of the packet in service
        # at each rate change (Link.set_rate), which keeps the old rate. The two lists only
        # after such changes, and until they have passed.
        self.serving: LinkDirection | None = None
        self.gaps: list[tuple[float, float]] | None = None
        self.rate_changes: list[tuple[float, float]] | None = None

    def open(self) -> None:
        """Make the buffer and the line: before the first packet is transmitted (which finds the
        transmitter idle, so `LinkDirection.send` calls this there and nowhere else)."""
        self.queue = deque()
        self.line = self.sim.line()

    def reset(self, now: float) -> None:
        """Empty buffer and idle transmitter (the link failed). The packets it had accepted keep
        their events on the old line (the failure guard drops them as they come up); what it
        accepts from now on goes on a new one, so that the line's last events are always its
        waiting packets' (`_retime`)."""
        if self.queue is not None:
            self.queue.clear()
            self.line = self.sim.line()
        self.queued_bytes = 0
        # as a transmitter that never began a packet: nothing it accepted is still in flight, so
        # a shorter delay has nothing to keep in order (Link.set_delay) until it sends again
        self.busy_until = 0.0
        self.serving = None          # (a packet cut by the failure counts whole)
        self.gaps = self.rate_changes = None

    def hold_idle(self, start_s: float, end_s: float) -> None:
        """Record that the transmitter stays idle from `start_s` to `end_s` (Link.set_delay)
        after the packets it accepted so far."""
        if self.gaps is None:
            self.gaps = []
        self.gaps.append((start_s, end_s))

    def change_rate(self, rate_bps: float, now: float) -> None:
        """Transmit at `rate_bps` from now on. The packet in service finishes at the old rate;
        the packets waiting are re-timed at the new rate behind it (`_retime`), as Linux's tbf
        after `tc change` and ns-3's SetDataRate send them (docs/model.md, "Time-varying
        links")."""
        queue = self.queue
        if queue:
            queue[0][2]._advance(now)                # (what began by now leaves the buffer)
        old_seconds_per_byte = self.seconds_per_byte
        self.rate_bps = rate_bps
        self.seconds_per_byte = 8.0 / rate_bps
        self.half_seconds_per_byte = 4.0 / rate_bps
        in_service_end = self._retime(now) if queue else self.busy_until
        if in_service_end > now:                     # `unfinished`: its rate is the old one
            if self.rate_changes is None:
                self.rate_changes = []
            self.rate_changes.append((in_service_end, old_seconds_per_byte))

    def _retime(self, now: float) -> float:
        """Re-time the waiting packets at the current rate: each begins when the one before
        ends (or an idle spell a shorter delay imposed, kept at its length), and arrives after
        the delay it was accepted with. Moves their buffer entries, their arrivals on the line
        and `busy_until`; returns when the packet in service ends (now or before if none)."""
        queue, line = self.queue, self.line
        assert queue is not None and line is not None
        n = len(queue)
        if len(line) < n:             # (not the waiting packets' arrivals: left as they are)
            return self.busy_until
        arrivals = [line[i][0] for i in range(len(line) - n, len(line))]
        gaps = [g for g in (self.gaps or ()) if g[1] > now]
        # what follows the packet in service, in time order: idle spells and waiting packets
        elements = sorted([(g[0], 0, i) for i, g in enumerate(gaps)] +
                          [(w[0], 1, i) for i, w in enumerate(queue)])
        first = elements[0]
        in_service_end = first[0] if first[1] == 1 or first[0] > now else now
        cursor = first[0]
        seconds_per_byte = self.seconds_per_byte
        waiting, times, spells = [], [], []
        for k, (_, kind, i) in enumerate(elements):
            old_end = elements[k + 1][0] if k + 1 < len(elements) else self.busy_until
            if kind == 0:
                begin, end = gaps[i]
                if begin <= now:                     # held idle now: until it ends
                    spells.append((begin, end))
                    cursor = end
                else:
                    spells.append((cursor, cursor + end - begin))
                    cursor += end - begin
                continue
            at, size, d, wait = queue[i]
            if arrivals[i] < old_end:     # (not its arrival: left as they are, as above)
                return self.busy_until
            finish = cursor + size * seconds_per_byte
            waiting.append((cursor, size, d, wait + cursor - at))
            times.append(finish + arrivals[i] - old_end)   # (its delay: arrival - old end)
            cursor = finish
        queue.clear()
        queue.extend(waiting)
        self.sim.retime_line(line, times)
        self.gaps = spells or None
        self.busy_until = cursor
        return in_service_end


def unfinished(d: LinkDirection, now: float) -> tuple[float, float]:
    """What `d`'s packet in service at `now` has still to send: (bytes, the time integral of the
    bytes left from now until it ends), (0.0, 0.0) if none. `d.tx_bytes` counts a packet whole,
    and `d.area_work` its whole integral, when its transmission begins; a rate or a backlog over
    an interval that ends at `now` takes these off (docs/model.md, "Link rates"). Call after
    `d.settle(now)`, at times that never go back.

    The packet in service ends when the next one waiting begins, or at `busy_until`, unless a
    shorter delay holds the transmitter idle before that; it is transmitted at the rate in
    effect when it was accepted.
    """
    t = d.transmitter
    if t.serving is not d:
        return 0.0, 0.0
    queue = t.queue
    end = queue[0][0] if queue else t.busy_until
    gaps = t.gaps
    if gaps:
        while gaps and gaps[0][1] <= now:
            del gaps[0]
        if gaps:
            start = gaps[0][0]
            if start <= now:
                return 0.0, 0.0                       # held idle: nothing in service
            if start < end:
                end = start
    if end <= now:
        return 0.0, 0.0
    seconds_per_byte = t.seconds_per_byte
    changes = t.rate_changes
    if changes:
        while changes and changes[0][0] <= now:
            del changes[0]
        for last_end, old_seconds_per_byte in changes:
            if end <= last_end:                       # accepted before that change
                seconds_per_byte = old_seconds_per_byte
                break
    left_s = end - now
    left = left_s / seconds_per_byte
    whole = round(left)                               # a whole number of bytes up to the
    if abs(left - whole) * seconds_per_byte <= end * CLOCK_ROUNDING:   # clock's rounding (a
        if not whole:                                 # packet that begins or ends at `now`):
            return 0.0, 0.0                           # exactly that many, never a negative rate
        left = float(whole)
        left_s = left * seconds_per_byte
    return left, left * left_s * 0.5


@mypyc_attr(allow_interpreted_subclasses=True)
class Arrival:
    """Hands packets of one direction to the far node, unless the link failed after sending
    them; counts the packets it delivered (`delivered`, cumulative over the link's up periods)."""

    __slots__ = ("receive", "live", "delivered")

    def __init__(self, receive: Callable[[Packet], None], delivered: int):
        self.receive = receive
        self.live = True
        self.delivered = delivered

    def __call__(self, packet: Packet) -> None:
        if self.live:
            self.delivered += 1
            self.receive(packet)
