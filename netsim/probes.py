"""Probes: per-interval rows of the links.csv, flows.csv and hosts.csv traces.

Each probe turns an entity's cumulative counters into the values of one sampling interval, in the
topology's units (the column names say which: docs/outputs.md), and remembers the counters for the
next interval. Link directions and hosts sleep while idle (see `simulator.sampling`): their probe
returns None when nothing happened in the interval and nothing is left to happen without a new
packet, and their wake function is a counter that any new packet changes. A flow's probe sleeps
before the flow starts and for good once it has finished; it writes no rows then.

Sleepers cost nothing per tick (the `arm` protocol of `simulator.sampling`), and nothing is added
to the per-packet path to achieve it:

* a sleeping link direction is switched to a subclass of its own class (no new slots, the same
  technique as the event trace's, netsim/event_trace.py) whose `send`, `lost_in_transit` and `fail` --
  the only methods that change its wake counter -- switch it back, nudge the sampler and go on as
  before. Awake directions run their own class untouched (`DirectionWatch`);
* the directions are registered as one sampler group (`DirectionGroup`): one that has seen no
  packet by the first sample sleeps from then on without a probe, only watched, and gets its
  probe when it wakes, so a large network whose links mostly stay idle pays for their rows only;
* a flow that has not started is compared at its start time; a finished flow never again;
* a sleeping host is nudged by either direction of its link when that direction wakes (every
  packet it sends or receives is offered to one of them first). It sleeps that deeply only when
  both directions sleep watched and nothing is in flight towards it (its incoming direction has
  transmitted exactly the bytes the host received, and delivers straight to the host); otherwise
  (packets propagating, an impairment or a failure guard in between) it is compared every tick.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from components.direction import unfinished
from flows.congestion import checked_report
from flows.sender_view import counter_reader
from flows.transport import Flow
from plot_tool.schema import FLOW_COUNTERS, FLOWS, HOSTS, LINKS, STATE_PREFIX
from simulator.compiled import plain_mypyc_attr
from simulator.sampling import SKIP

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr

# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)

# "No value" in a row: this one object (compiled code would make a new NaN object for each
# `math.nan` read, and rows are compared as tuples, where a NaN equals only itself)
_NAN: Any = math.nan

# The value columns of each file, in the results schema's order (the rows below follow it).
LINK_COLUMNS = LINKS.value_columns
FLOW_COLUMNS = FLOWS.value_columns         # then the algorithms' state columns (`flow_columns`)
HOST_COLUMNS = HOSTS.value_columns
_NO_COUNTERS = (_NAN,) * len(FLOW_COUNTERS)

LINK_IDLE_ROW = (0.0,) * (len(LINK_COLUMNS) - 1) + (_NAN,)   # no sojourn: empty
HOST_IDLE_ROW = (0.0,) * len(HOST_COLUMNS)


class DirectionWatch:
    """Wakes the probes of a run's sleeping link directions when their direction becomes active.

    `watch(probe)` switches the probe's direction to a subclass of its class whose `send`,
    `lost_in_transit` and `fail` first switch it back (`release`) and call the probe's `woke`;
    one subclass per direction class and run. `watch_members` does the same for directions
    asleep without a probe (`DirectionGroup`), whose activity calls the sampler's `wake` of their
    member instead. Nothing changes for a direction that is awake.
    """

    __slots__ = ("probes", "members", "classes", "bases", "wake_member")

    def __init__(self):
        self.probes: dict = {}    # id(direction) -> the DirectionProbe of a watched direction
        # a direction watched without a probe -> its group index (keyed by the direction
        # itself, hashed by identity: no int object per id to make for the tens of thousands
        # that `watch_members` files at once)
        self.members: dict = {}
        self.classes: dict = {}   # a direction class -> its watched subclass
        self.bases: dict = {}     # and back
        self.wake_member: Any = None   # the sampler's wake of a group member (`watch_members`)

    def watch(self, probe: DirectionProbe) -> None:
        d = probe.d
        if id(d) in self.probes:
            return
        base = type(d)
        self.probes[id(d)] = probe
        probe.base = base
        d.__class__ = self._watched(base)

    def watch_members(self, directions: list, indices: list[int], wake) -> None:
        """Watch `directions`, members `indices` of the run's `DirectionGroup` (in the same
        order), asleep without a probe: the activity of member i calls ``wake(i)``. (Most
        directions of a large network, at its first sample: the members are filed at once, and
        the classes switched in a loop that looks a watched class up only when the class
        changes from one direction to the next.)"""
        self.wake_member = wake
        self.members.update(zip(directions, indices))
        base: Any = None
        watched: Any = None
        for d in directions:
            if type(d) is not base:
                base = type(d)
                watched = self._watched(base)
            d.__class__ = watched

    def release(self, d) -> DirectionProbe | None:
        """Switch `d` back to its own class; its probe (None if it was watched without one)."""
        probe = self.probes.pop(id(d), None)
        if probe is None:
            del self.members[d]
            d.__class__ = self.bases[type(d)]
            return None
        d.__class__ = probe.base
        probe.base = None
        return probe

    def release_members(self, directions: list) -> None:
        """`release` each of `directions`, all watched without a probe (as `watch_members`
        switched them)."""
        members = self.members
        watched: Any = None
        base: Any = None
        for d in directions:
            del members[d]
            if type(d) is not watched:
                watched = type(d)
                base = self.bases[watched]
            d.__class__ = base

    def woke(self, d) -> None:
        """`d` became active (called by its watched class): release it and wake its probe, or
        the group member it is."""
        index = self.members.get(d)
        probe = self.release(d)
        if probe is not None:
            probe.woke()
        else:
            self.wake_member(index)

    def _watched(self, base: Any) -> type:
        watched = self.classes.get(base)
        if watched is None:
            watched = self.classes[base] = self._watched_class(base)
            self.bases[watched] = base
        return watched

    def _watched_class(self, base: Any) -> type:
        woke = self.woke
        send, lost_in_transit, fail = base.send, base.lost_in_transit, base.fail

        def watched_send(d, packet):
            woke(d)
            return send(d, packet)

        def watched_lost_in_transit(d):
            woke(d)
            lost_in_transit(d)

        def watched_fail(d, now):
            woke(d)
            fail(d, now)

        return type(f"Watched{base.__name__}", (base,),
                    {"__slots__": (), "__doc__": f"A sleeping {base.__name__} (DirectionWatch).",
                     "send": watched_send, "lost_in_transit": watched_lost_in_transit,
                     "fail": watched_fail})


class DirectionProbe:
    """Rate, buffer occupancy, backlog, losses by cause and routing traffic of a link direction.
    With a `DirectionWatch`, it can be armed (`arm`): the direction then nudges the sampler, and
    the probes of the hosts it leaves and enters (`src_nudge`, `dst_nudge`), when it wakes."""

    __slots__ = ("d", "mbit", "kb", "tx_bytes", "dropped", "area_bytes", "area_pkts", "area_work",
                 "failures", "impaired", "routing_bytes", "marks", "aqm_drops", "tx_pkts",
                 "soj_sum", "unsent", "unsent_work", "watcher", "base", "nudge", "src_nudge", "dst_nudge")

    def __init__(self, d, bits_per_mbit: float, bytes_per_kb: float,
                 watch: DirectionWatch | None = None):
        self.d = d
        self.watcher = watch
        self.base: type | None = None   # the direction's own class while it is watched
        self.nudge: Any = None
        self.src_nudge: Any = None   # the nudge of the host the direction leaves, if armed
        self.dst_nudge: Any = None   # and of the host it enters
        self.mbit = float(bits_per_mbit)
        self.kb = float(bytes_per_kb)
        self.tx_bytes = self.dropped = self.failures = self.impaired = self.routing_bytes = 0
        self.area_bytes = self.area_pkts = self.area_work = 0.0
        self.marks = self.aqm_drops = self.tx_pkts = 0
        self.soj_sum = 0.0
        self.unsent = self.unsent_work = 0.0      # `unfinished` at the previous sample

    def wake(self) -> int:
        """Changes with every packet offered to the direction and every packet it loses on the
        way (the only things that can end an idle spell)."""
        d = self.d
        return d.arrived + d.impaired_drops + d.lost_in_flight

    def arm(self, nudge) -> float:
        """Asleep: have the direction call `nudge` when it wakes (see `DirectionWatch`)."""
        if self.watcher is None:
            return -math.inf
        self.nudge = nudge
        self.watcher.watch(self)
        return math.inf

    def disarm(self) -> None:
        if self.base is not None and self.watcher is not None:
            self.watcher.release(self.d)

    def woke(self) -> None:
        """The direction left its sleep (called by the watched class)."""
        self.nudge()
        if self.src_nudge is not None:
            self.src_nudge()
        if self.dst_nudge is not None:
            self.dst_nudge()

    def __call__(self, now: float, span: float):
        d = self.d
        d.settle(now)
        failures = d.failed + d.lost_in_flight
        # the bytes transmitted in the interval, and the unfinished work's integral, leave out
        # what the packet in service has still to send (docs/model.md, "Link rates")
        unsent, unsent_work = unfinished(d, now)
        if (d.tx_bytes == self.tx_bytes and d.area_bytes == self.area_bytes
                and d.area_work == self.area_work and d.dropped == self.dropped
                and failures == self.failures and d.impaired_drops == self.impaired
                and d.routing_bytes == self.routing_bytes and not d.q_pkts
                and d.aqm_drops == self.aqm_drops and unsent == self.unsent):
            return None            # an all-zero row, and empty: idle until a packet comes
        waiting = d.area_bytes - self.area_bytes
        work = d.area_work - self.area_work
        if unsent or self.unsent:
            work += self.unsent_work - unsent_work
            sent = d.tx_bytes - self.tx_bytes - unsent + self.unsent
            self.unsent, self.unsent_work = unsent, unsent_work
        else:
            sent = d.tx_bytes - self.tx_bytes
        row = (sent * 8.0 / span / self.mbit, waiting / span / self.kb,
               (d.area_pkts - self.area_pkts) / span,
               (waiting + work) / span / self.kb,
               float(d.dropped - self.dropped), float(failures - self.failures),
               float(d.impaired_drops - self.impaired),
               (d.routing_bytes - self.routing_bytes) * 8.0 / span / self.mbit,
               float(d.marks - self.marks), float(d.aqm_drops - self.aqm_drops),
               (d.soj_sum - self.soj_sum) / (d.tx_pkts - self.tx_pkts) * 1e3
               if d.tx_pkts != self.tx_pkts else _NAN)
        self.marks, self.aqm_drops, self.tx_pkts, self.soj_sum = (d.marks, d.aqm_drops, d.tx_pkts,
                                                                  d.soj_sum)
        self.impaired = d.impaired_drops
        self.tx_bytes, self.dropped, self.failures = d.tx_bytes, d.dropped, failures
        self.area_bytes, self.area_pkts, self.area_work = d.area_bytes, d.area_pkts, d.area_work
        self.routing_bytes = d.routing_bytes
        return row


class DirectionGroup:
    """The link directions of a run, in order, as one sampler group (`Sampler.register_group`,
    whose interface this is): member i is ``directions[i]``, keyed (link id, direction label),
    with a `DirectionProbe` made when the sampler first needs it, or a host's probe asks for
    it (`get`). A direction that no packet has been offered to, nor lost on the way, and that
    has no probe yet is idle: its probe would answer None and its wake counter is 0 (`token`).
    It sleeps watched by `watch` (`DirectionWatch.watch_members`) until it wakes."""

    __slots__ = ("directions", "mbit", "kb", "watch", "probes")

    token = 0                    # `DirectionProbe.wake` of a direction idle since the start

    def __init__(self, directions: list, bits_per_mbit: float, bytes_per_kb: float,
                 watch: DirectionWatch):
        self.directions = directions
        self.mbit = bits_per_mbit
        self.kb = bytes_per_kb
        self.watch = watch
        self.probes: dict = {}   # direction -> its DirectionProbe, once made

    def __len__(self) -> int:
        return len(self.directions)

    def keys(self) -> list[tuple]:
        return [(d.link.id, d.label) for d in self.directions]

    def get(self, d) -> DirectionProbe:
        """The probe of direction `d`, made now if it has none."""
        probe = self.probes.get(d)
        if probe is None:
            probe = self.probes[d] = DirectionProbe(d, self.mbit, self.kb, self.watch)
        return probe

    def member(self, i: int) -> tuple:
        probe = self.get(self.directions[i])
        return probe, probe.wake, probe.arm, probe.disarm

    def idle(self) -> list[bool]:
        # (a direction with a probe, one of a host's link, is sampled as any: its host's probe
        # looks at whether it sleeps watched)
        probes = self.probes
        return [not (d.arrived or d.impaired_drops or d.lost_in_flight) and d not in probes
                for d in self.directions]

    def sleep(self, members: list[int], wake) -> None:
        directions = self.directions
        self.watch.watch_members([directions[i] for i in members], members, wake)

    def unwatch(self, members: list[int]) -> None:
        directions = self.directions
        self.watch.release_members([directions[i] for i in members])


def flow_state(flow, names: tuple | None = None) -> dict:
    """The named internal state of a flow's algorithm (`CongestionControl.report()`), {} when it
    has none (or no algorithm: cbr, onoff); with `names` (those it reported before), the same
    names are required. A report that is not {name: number} raises
    `flows.congestion.AlgorithmValueError`."""
    cc: Any = getattr(flow, "cc", None)
    report = getattr(cc, "report", None)
    return dict(checked_report(cc, report(), names)) if report is not None else {}


def flow_counters(flow) -> dict | None:
    """The transport's counters of a flow (`Sender.counters()`: the keys of
    `plot_tool.schema.FLOW_COUNTERS`), None for a flow without them (cbr, onoff)."""
    counters = getattr(getattr(flow, "sender", None), "counters", None)
    return dict(counters()) if counters is not None else None


def state_columns(flows, reports=None) -> dict:
    """The algorithm-state columns of flows.csv for these flows: column name -> report name, the
    union over the flows in order of appearance; a name equal to a fixed column is prefixed
    with `STATE_PREFIX`. `reports`: the flows' `flow_state`, if read already (in their order)."""
    columns: dict = {}
    fixed = set(FLOWS.names)
    for state in (reports if reports is not None else map(flow_state, flows)):
        for name in state:
            column = STATE_PREFIX + name if name in fixed else name
            columns.setdefault(column, name)
    return columns


def _number(value: Any) -> Any:
    """A reported state value as a float (NaN for a missing one: an empty field)."""
    return _NAN if value is None else float(value)


_ZERO_COUNTERS = (0.0,) * len(FLOW_COUNTERS)     # an interval in which no counter moved
_LOUD = object()                                   # `FlowProbe.quiet_cwnd` of a flow that moved


@mypyc_attr(allow_interpreted_subclasses=True)
class FlowProbe:
    """Send rate, in-order delivery rate, arrival rate at the receiver, window, mean RTT and the
    transport's counters (per interval) of a flow, then its algorithm's state at the sample
    instant (`state`: the report names of the run's state columns, `state_columns`); keeps the
    running mean of the sampled window for the summary.

    A sample reads plain attributes: of a transport `Flow` (flows/transport.py), those of its
    parts that its properties of the same names read (`sending`: the sender's `bytes_sent`,
    `cwnd`, `finish_s`; `receiving`: the receiver's `delivered_bytes`, `arrived_bytes`;
    `timing`: the RTT estimator's `rtt_sum`, `rtt_count`), of any other flow (cbr, onoff) its
    own; the start time is read once (a flow's does not change once built). A sender that says
    where it keeps its counters (`counter_paths`, flows/sender_view.py) has them read by one
    getter (`read_counters`) and compared with the last sample's as one tuple: they rarely
    move, and an interval in which none did gets a constant row part. Any other sender with
    `counters()` (a dict) is read through it.

    A row whose figures equal the last row's is that very tuple again (its text is kept by a
    trace file). A stalled flow (waiting for its retransmission timer) gives the same row of
    zero rates with its window over and over: once such a row repeats (`quiet_cwnd`), the next
    samples only check that every figure is the very object last read, and answer that row."""

    __slots__ = ("f", "mbit", "start_s", "bytes_sent", "delivered", "arrived", "rtt_sum",
                 "rtt_count", "window_sum", "window_rows", "counters", "last_counters", "report",
                 "cc", "names", "state", "sending", "receiving", "timing", "sender", "read_counters",
                 "counter_slots", "last_row", "zero_part", "quiet_cwnd")

    def __init__(self, f: Any, bits_per_mbit: float, state: Sequence = (),
                 names: tuple | None = None) -> None:
        self.f = f
        self.mbit = float(bits_per_mbit)
        self.start_s: float = f.start_s
        # the figures read last, compared by identity (`quiet_cwnd`): the very objects
        self.bytes_sent: Any = 0
        self.delivered: Any = 0
        self.arrived: Any = 0
        self.rtt_count: Any = 0
        self.rtt_sum: Any = 0.0
        self.window_sum = 0.0
        self.window_rows = 0
        sender: Any
        self.sending: Any
        self.receiving: Any
        self.timing: Any
        if type(f) is Flow:                     # its parts (fixed once the flow is built)
            sender = f.sender
            self.sending, self.receiving, self.timing = sender, f.receiver, sender.rtt
        else:
            sender = getattr(f, "sender", None)
            self.sending = self.receiving = self.timing = f
        self.sender: Any = sender
        counters = self.counters = getattr(sender, "counters", None)
        self.read_counters: Any = None
        self.counter_slots: tuple = ()
        self.last_counters: tuple = ()  # the counters read last (0 before the first sample)
        paths = getattr(sender, "counter_paths", None)
        if counters is not None and paths is not None:
            _, self.read_counters, self.counter_slots = counter_reader(paths())
            self.last_counters = (0,) * len(self.counter_slots)
        elif counters is not None:
            self.last_counters = (0,) * len(FLOW_COUNTERS)
        self.last_row: tuple = ()
        # The counters' part of a row in which none moved (None: `counters()` is read, and
        # the stalled flow's path of `__call__` is off); the window of a last row that nothing
        # but the window made, repeated (`_LOUD`: none).
        self.zero_part: tuple | None = (_ZERO_COUNTERS if self.read_counters is not None
                                        else _NO_COUNTERS if counters is None else None)
        self.quiet_cwnd: Any = _LOUD
        self.state = tuple(state)
        self.cc: Any = getattr(f, "cc", None)
        self.report: Any = getattr(self.cc, "report", None) if self.state else None
        # the names the flow's algorithm reports (`names`: as it reported them when the run was
        # set up; None: those of the first sample): it must report the same ones every time
        self.names: Any = names

    def wake(self) -> tuple:
        """Changes when the flow starts and when it finishes; a finished flow sleeps for good."""
        f = self.f
        return f.started, f.finish_s

    def arm(self, nudge) -> float:
        """Nothing changes before the start; a finished flow never changes again."""
        f = self.f
        if f.finish_s is not None:
            return math.inf
        return f.start_s if not f.started else -math.inf

    def __call__(self, now: float, span: float) -> tuple | None:
        if now <= self.start_s:
            return SKIP if self.f.started else None    # no row for the interval it starts at the end of
        sending = self.sending
        finish_s = sending.finish_s
        if finish_s is not None and finish_s <= now - span:
            return None
        bytes_sent, cwnd = sending.bytes_sent, sending.cwnd
        receiving, timing = self.receiving, self.timing
        delivered, arrived = receiving.delivered_bytes, receiving.arrived_bytes
        rtt_sum, rtt_count = timing.rtt_sum, timing.rtt_count
        read_counters = self.read_counters
        if (cwnd is self.quiet_cwnd and bytes_sent is self.bytes_sent
                and delivered is self.delivered and arrived is self.arrived
                and rtt_count is self.rtt_count and rtt_sum is self.rtt_sum
                and (read_counters is None or read_counters(self.sender) == self.last_counters)):
            # A stalled flow: the very objects read last time, and a last row that repeated
            # (0.0, 0.0, 0.0, float(cwnd), _NAN) + `zero_part` with this very window. The
            # row below would be that again (no gain: zero rates, the counters being finite
            # numbers; no RTT sample: the one `_NAN`), and would be answered as the last
            # row, storing the objects already stored: only the window's mean moves.
            self.window_sum += cwnd
            self.window_rows += 1
            return self.last_row
        self.quiet_cwnd = _LOUD
        mbit = self.mbit
        count = rtt_count - self.rtt_count
        row: tuple = ((bytes_sent - self.bytes_sent) * 8.0 / span / mbit,
                      (delivered - self.delivered) * 8.0 / span / mbit,
                      (arrived - self.arrived) * 8.0 / span / mbit, float(cwnd),
                      (rtt_sum - self.rtt_sum) / count / 1e-3 if count else _NAN)
        zero_part = self.zero_part
        if read_counters is not None:
            counts = read_counters(self.sender)
            if counts == self.last_counters:
                row += _ZERO_COUNTERS
            else:
                row += self._counter_deltas(counts)
                self.last_counters = counts
                zero_part = None
        elif self.counters is not None:
            counts = self.counters()
            now_counts = tuple(counts.get(name, 0) for name in FLOW_COUNTERS)
            row += tuple(float(a - b) for a, b in zip(now_counts, self.last_counters))
            self.last_counters = now_counts
        else:
            row += _NO_COUNTERS
        if self.state:
            values: Any = {}
            if self.report is not None:
                values = checked_report(self.cc, self.report(), self.names)
                if self.names is None:
                    self.names = tuple(values)
            row += tuple(_number(values.get(name)) for name in self.state)
        elif row == self.last_row and cwnd:
            # the same figures as the last row: that very tuple, whose text a trace file keeps
            # (equal figures have equal texts here: none can be -0.0, a zero window aside; a
            # missing value is the one `_NAN`, equal to itself in a tuple)
            row = self.last_row
            if zero_part is not None and row == (0.0, 0.0, 0.0, float(cwnd), _NAN, *zero_part):
                self.quiet_cwnd = cwnd            # a stalled flow (see above)
        self.last_row = row
        self.bytes_sent, self.delivered, self.arrived = bytes_sent, delivered, arrived
        self.rtt_sum, self.rtt_count = rtt_sum, rtt_count
        self.window_sum += cwnd
        self.window_rows += 1
        return row

    def _counter_deltas(self, counts: tuple) -> tuple:
        """The counters' row part: what each counter of `FLOW_COUNTERS` gained since the last
        sample."""
        deltas = list(_ZERO_COUNTERS)
        for i, count, last in zip(self.counter_slots, counts, self.last_counters):
            deltas[i] = float(count - last)
        return tuple(deltas)

    def mean_window_pkts(self):
        """Mean of the sampled windows (None before the first sample)."""
        return self.window_sum / self.window_rows if self.window_rows else None


class HostProbe:
    """Bytes a host sent to and received from its link, as rates. Given the probes of its link's
    directions (`direction_probes.get(direction)`: a dict of DirectionProbes, or the run's
    `DirectionGroup`, which makes them), it can be armed (`arm`)."""

    __slots__ = ("h", "mbit", "sent", "received", "out_probe", "in_probe")

    def __init__(self, h, bits_per_mbit: float, direction_probes: Any = None):
        self.h = h
        self.mbit = float(bits_per_mbit)
        self.sent = self.received = 0
        self.out_probe: DirectionProbe | None = None
        self.in_probe: DirectionProbe | None = None
        port = getattr(h, "port", None)
        if direction_probes and port is not None:
            for d in port.link.directions:
                if d is port:
                    self.out_probe = direction_probes.get(d)
                elif d.dst is h:
                    self.in_probe = direction_probes.get(d)

    def wake(self) -> int:
        h = self.h
        return h.sent_bytes + h.received_bytes

    def arm(self, nudge) -> float:
        """Nudged by its link's directions; compared every tick while either is awake, or while
        anything may still arrive without passing through them (see the module docstring)."""
        out, into = self.out_probe, self.in_probe
        if out is None or into is None:
            return -math.inf
        out.src_nudge = into.dst_nudge = nudge
        h = self.h
        d = into.d
        if (out.base is not None and into.base is not None and d.tx_bytes == h.received_bytes
                and d.dst_receive == h.receive):
            return math.inf
        return -math.inf

    def __call__(self, now: float, span: float):
        h = self.h
        if h.sent_bytes == self.sent and h.received_bytes == self.received:
            return None
        row = ((h.sent_bytes - self.sent) * 8.0 / span / self.mbit,
               (h.received_bytes - self.received) * 8.0 / span / self.mbit)
        self.sent, self.received = h.sent_bytes, h.received_bytes
        return row
