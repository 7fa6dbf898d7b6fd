"""Periodic sampling of counters into long-format tables.

Entities keep cheap running counters (O(1) per event); a `Sampler` wakes up every `interval_s`
of simulated time, asks each registered probe for the values of the interval that just ended, and
hands one row per entity to a table. A table is anything with ``prepare(key)`` and
``append(time_s, handle, values)``, and, to take a group (below), ``prepare_all(keys)`` (the
handles of these keys, a list of tuples, in order) and ``append_all(time_s, handles, values)``
(`append` of the same row for each of these handles, in order): the in-memory `Table` below, or
a sink that streams rows to a file, so that the memory of a run does not grow with the number of
samples. The sampler knows nothing of what it samples.

Idle entities cost nothing per tick. A probe registered with a `wake` function may return None to
say "my entity was idle in this interval, and stays idle until ``wake()`` returns something else":
the sampler then stops calling it (the probe is *asleep*). With an `idle_row`, the sampler writes
that row where the entity goes to sleep, at the end of the last idle interval before it wakes up
again, and at the end of the run, so that a reader can tell an idle gap (bounded by idle rows)
from missing data. When every probe is asleep, the sampler skips the ticks before the next
scheduled event: nothing can change before it, so a network that waits for a far-future flow costs
no sampling work.

How a sleeper is noticed when it wakes is the probe's choice, through its `arm` function, called
when the probe falls asleep (and again whenever a check finds it still asleep):
``arm(nudge) -> float`` returns the simulated time before which ``wake()`` cannot change unless
``nudge()`` is called (the probe arranges for its entity to call `nudge` when it becomes active).
``math.inf``: only a nudge can wake it; a time t: compare ``wake()`` at the first tick at or after
t; ``-math.inf`` (or any past time): compare ``wake()`` at every tick. A probe without `arm` is
compared at every tick. Only the compared sleepers cost anything, so a network of idle entities
armed with nudges costs nothing per tick; `disarm` (if given) undoes an arrangement when the run
finishes. ``wake()`` stays the only judge: a nudge or a due time only says "compare now", so rows
do not depend on how a probe is armed.

Many entities can be registered as one group (`register_group`), whose members are made only
when needed: a member the group says has been idle since it was registered writes its idle row
at the first sample and sleeps with no probe, entry or arrangement beyond the group's own (its
`sleep`), so a large network whose entities mostly never see a packet pays for its rows only.
A group stands for its members registered in order with `register` (``lazy=False`` does that):
the rows are the same, in the same order. The group's interface (its members 0 .. len - 1) asks
about all its members at once, as the first sample needs them (most of a large group sleeps from
then on, and a call per member would cost more than its row):

* ``keys()``: the keys of the members, a list of tuples in member order;
  ``member(i) -> (probe, wake, arm, disarm)``: member i's registration, made when the sampler
  first needs it (an active member at the first sample, or one waking);
* ``idle()``: for each member, in order, True only if its probe, made now, would answer None
  and its ``wake()`` would give ``token`` (a member idle since its registration);
* ``sleep(members, wake)``: these members (a list of indices, in order: those idle at the first
  sample) sleep from the first sample on: arrange for ``wake(i)`` to be called when member i
  may change (the nudge of an `arm` returning ``math.inf``); ``unwatch(members)`` undoes that
  for these members (those still asleep without an entry, in order) when the run finishes.
"""
from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Sequence
from functools import partial
from heapq import heappop, heappush
from itertools import compress
from operator import not_
from typing import TYPE_CHECKING, Any, Final, cast

from simulator.compiled import plain_mypyc_attr

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr

# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)

SKIP: Final = ()       # a probe's answer for "no row this time" that does not put it to sleep


class Table:
    """Rows of (time, entity key columns..., value columns...), kept in memory column by column."""

    __slots__ = ("key_columns", "value_columns", "time_s", "keys", "values")

    def __init__(self, key_columns: Sequence, value_columns: Sequence) -> None:
        self.key_columns = tuple(key_columns)
        self.value_columns = tuple(value_columns)
        self.time_s = array("d")
        self.keys: list = [[] for _ in self.key_columns]
        self.values = [array("d") for _ in self.value_columns]

    def prepare(self, key: Sequence) -> tuple:
        """The handle `append` takes for the entity `key` (here the key itself)."""
        return tuple(key)

    def prepare_all(self, keys: list[tuple]) -> list[tuple]:
        """`prepare` of each of `keys`, in order."""
        return [tuple(key) for key in keys]

    def append(self, time_s: float, key: tuple, values: tuple) -> None:
        self.time_s.append(time_s)
        for column, part in zip(self.keys, key):
            column.append(part)
        for column, value in zip(self.values, values):
            column.append(value)

    def append_all(self, time_s: float, keys: list[tuple], values: tuple) -> None:
        """`append` of the same row for each of `keys`, in order."""
        for key in keys:
            self.append(time_s, key, values)

    def __len__(self) -> int:
        return len(self.time_s)

    def columns(self) -> dict:
        """Column name -> list/array, in header order (time_s, keys, values)."""
        out = {"time_s": self.time_s}
        out.update(zip(self.key_columns, self.keys))
        out.update(zip(self.value_columns, self.values))
        return out


# _Entry.mode: called each tick / asleep, and compared each tick / at a time / when nudged
AWAKE: Final = 0
POLLED: Final = 1
TIMED: Final = 2
DORMANT: Final = 3


class _Entry:
    """One registered probe and its sampling state."""

    __slots__ = ("sampler", "table", "handle", "probe", "wake", "idle_row", "arm", "disarm",
                 "token", "last_row_s", "mode", "stamp", "nudged", "timed_seq")

    def __init__(self, sampler: Sampler, table: Any, handle: Any, probe: Any, wake: Any,
                 idle_row: tuple | None, arm: Any, disarm: Any) -> None:
        self.sampler = sampler
        self.table = table
        self.handle = handle
        self.probe = probe
        self.wake = wake
        self.idle_row = idle_row
        self.arm = arm
        self.disarm = disarm
        self.token: Any = None
        self.last_row_s: float | None = None    # time of the last row written for this entity
        self.mode = AWAKE
        self.stamp = 0            # order of falling asleep (sleepers wake in this order)
        self.nudged = False
        self.timed_seq = 0

    def nudge(self) -> None:
        """The entity may have changed: compare its wake() value at the next tick."""
        if self.mode != AWAKE and not self.nudged:
            self.nudged = True
            self.sampler._nudged.append(self)


class _Group:
    """A group registered with `Sampler.register_group`, and the sampler's record of its members
    from the group's first sample on: their table handles, and their entries (None for a member
    asleep without one since that sample)."""

    __slots__ = ("table", "group", "idle_row", "handles", "entries", "first_stamp", "first_s",
                 "idle")

    def __init__(self, table: Any, group: Any, idle_row: tuple) -> None:
        self.table = table
        self.group = group
        self.idle_row = idle_row
        self.handles: list = []
        self.entries: list[_Entry | None] = []
        self.first_stamp = 0      # member i sleeping since the first sample has stamp first_stamp + i
        self.first_s = 0.0        # when the first sample was
        self.idle = 0             # members asleep without an entry


@mypyc_attr(allow_interpreted_subclasses=True)
class Sampler:
    """Calls probes every `interval_s` and records what they return.

    A probe is ``probe(now_s, interval_s) -> tuple of floats, or SKIP, or None``; it is expected
    to reset its own per-interval counters when called. SKIP (an empty tuple) skips the row of this
    interval only; so does None without `wake`. With `wake` (see the module docstring), None puts
    the probe to sleep until ``wake()`` changes; such a probe must return None only when every
    later interval would give `idle_row` (or no row) as long as ``wake()`` keeps its value.
    """

    __slots__ = ("sim", "interval_s", "tables", "_awake", "_sleeping", "_polled", "_timed",
                 "_nudged", "_stamps", "_timed_seqs", "_last_s", "_idle_until", "_running",
                 "_origin_s", "_ticks", "_generation", "_groups", "_unsampled")

    def __init__(self, sim: Any, interval_s: float) -> None:
        if not interval_s > 0:
            raise ValueError(f"sampling interval must be positive, got {interval_s}")
        self.sim = sim
        self.interval_s = interval_s
        self.tables: dict = {}
        # entries called every tick, in registration order (and groups waiting for their first
        # sample: `_unsampled`)
        self._awake: list[_Entry | _Group] = []
        self._sleeping: dict[_Entry, None] = {}  # every asleep entry, in the order they fell asleep
        self._polled: list[_Entry] = []   # asleep entries compared every tick
        # heap of (time, seq, entry): asleep, compared from that time
        self._timed: list[tuple[float, int, _Entry]] = []
        self._nudged: list[_Entry] = []   # asleep entries nudged since the last tick
        self._stamps = 0
        self._timed_seqs = 0
        self._last_s = 0.0
        self._idle_until: float | None = None   # end of the ticks skipped while all slept
        self._running = False
        self._origin_s = 0.0
        self._ticks = 0
        self._generation = 0
        self._groups: list[_Group] = []   # the registered groups (`register_group`)
        self._unsampled = False   # some group waits for its first sample (in `_awake`)

    def table(self, name: str, key_columns: Sequence, value_columns: Sequence) -> Table:
        """The in-memory table `name` (created on first use)."""
        if name not in self.tables:
            self.tables[name] = Table(key_columns, value_columns)
        return self.tables[name]

    def add_table(self, name: str, table: Any) -> None:
        """Use `table` (any object with ``prepare`` and ``append``) as table `name`."""
        self.tables[name] = table

    def register(self, table: Any, key: Sequence, probe: Any, *, wake: Any = None,
                 idle_row: tuple | None = None, arm: Any = None, disarm: Any = None) -> None:
        """Sample `probe` into `table` under `key`; see the class docstring for `wake`/`idle_row`
        and the module docstring for `arm`/`disarm`."""
        if idle_row is not None and wake is None:
            raise ValueError("idle_row needs a wake function")
        if (arm is not None or disarm is not None) and wake is None:
            raise ValueError("arm and disarm need a wake function")
        self._awake.append(_Entry(self, table, table.prepare(tuple(key)), probe, wake, idle_row,
                                  arm, disarm))

    def register_group(self, table: Any, group: Any, *, idle_row: tuple,
                       lazy: bool = True) -> None:
        """Register the members of `group` (see the module docstring) with `table`, each as
        `register` would with `idle_row` and its `member` registration. Lazily, a member is made
        only when it is active at the first sample or wakes; ``lazy=False`` makes every member
        now (the rows are the same)."""
        if not lazy:
            for i, key in enumerate(group.keys()):
                probe, wake, arm, disarm = group.member(i)
                self.register(table, key, probe, wake=wake, idle_row=idle_row, arm=arm,
                              disarm=disarm)
            return
        if idle_row is None:
            raise ValueError("a group needs an idle row")
        record = _Group(table, group, idle_row)
        self._groups.append(record)
        self._awake.append(record)
        self._unsampled = True

    @property
    def asleep(self) -> int:
        """Number of probes asleep now (group members included)."""
        return len(self._sleeping) + sum(group.idle for group in self._groups)

    @property
    def compared(self) -> int:
        """Number of sleeping probes whose wake() the next tick compares at the least (those
        compared every tick, and those nudged since the last tick)."""
        return len(self._polled) + len(self._nudged)

    def start(self) -> None:
        """Begin sampling from the current simulated time."""
        self._last_s = self._origin_s = self.sim.now
        self._running = True
        self._ticks = 0
        self._generation += 1     # a tick chain of an earlier start() stops at its next tick
        self._schedule_next()

    def _grid(self, tick: int) -> float:
        # k * interval from the origin, not repeated addition: sample times do not drift.
        return self._origin_s + tick * self.interval_s

    def _schedule_next(self) -> None:
        self._ticks += 1
        self.sim.schedule_at(self._grid(self._ticks), self._tick, self._generation)

    def _tick(self, generation: int) -> None:
        if not self._running or generation != self._generation:
            return
        self.sample()
        if self._awake:
            self._schedule_next()
            return
        # Everything sleeps: nothing changes before the next event, so skip the ticks before it.
        upcoming = self.sim.peek()
        if upcoming is None:
            return                # nothing will ever happen again; finish() closes the tables
        ticks = int((upcoming - self._origin_s) / self.interval_s)
        while self._grid(ticks) < upcoming:
            ticks += 1
        if ticks > self._ticks + 1:
            self._ticks = ticks - 1
            self._idle_until = self._grid(ticks - 1)   # the skipped intervals were idle
        self._schedule_next()

    def sample(self) -> None:
        """Record one row per awake probe for the interval (last sample, now]; wake up the
        sleeping probes whose entity changed."""
        now: float = self.sim.now
        last = self._last_s
        idle_until = self._idle_until
        if idle_until is not None:
            if now > idle_until:
                last = idle_until           # the skipped intervals were idle: no row, no span
            self._idle_until = None
        span = now - last
        if span <= 0:
            return
        if self._sleeping:
            self._wake_changed(last, now)
        if self._unsampled:
            self._sample_groups(now, span)
            self._last_s = now
            return
        awake = cast("list[_Entry]", self._awake)     # no group waits: entries only
        sleepers: list[_Entry] | None = None
        for entry in awake:
            values = entry.probe(now, span)
            if values:
                entry.table.append(now, entry.handle, values)
                entry.last_row_s = now
            elif values is None and entry.wake is not None:
                if sleepers is None:
                    sleepers = []
                sleepers.append(entry)
                entry.token = entry.wake()
                if entry.idle_row is not None and entry.last_row_s != now:
                    entry.table.append(now, entry.handle, entry.idle_row)
                    entry.last_row_s = now
        if sleepers is not None:
            sleeping = self._sleeping
            for entry in sleepers:
                entry.mode = POLLED       # (until armed) not AWAKE, so that it is not kept
                self._stamps += 1
                entry.stamp = self._stamps
                sleeping[entry] = None
                self._arm(entry, now)
            self._awake = [entry for entry in awake if entry.mode == AWAKE]
        self._last_s = now

    def _sample_groups(self, now: float, span: float) -> None:
        """`sample` when groups wait for their first sample: the same, with each group standing
        in the registration order for its members in order. A member idle since it was
        registered writes the idle row its probe's None would have written and falls asleep,
        in its place, without an entry; any other one gets its entry and is sampled as any."""
        awake: list[_Entry | _Group] = []
        sleepers: list[_Entry | _Group] = []   # entries, and groups (their members, in order)
        for item in self._awake:
            if not isinstance(item, _Group):
                _sample_entry(item, now, span, awake, sleepers)
                continue
            group, table, idle_row = item.group, item.table, item.idle_row
            handles = item.handles = table.prepare_all(group.keys())
            idle = group.idle()
            entries: list[_Entry | None] = [None] * len(handles)
            item.entries = entries
            item.first_s = now
            sleepers.append(item)
            # Between two active members (few, in a large group), the idle ones' rows all at
            # once: the same rows in the same order as one member at a time.
            start = 0
            for i in compress(range(len(idle)), map(not_, idle)):    # the active members
                table.append_all(now, handles[start:i], idle_row)
                probe, wake, arm, disarm = group.member(i)
                made = _Entry(self, table, handles[i], probe, wake, idle_row, arm, disarm)
                entries[i] = made
                _sample_entry(made, now, span, awake, None)
                start = i + 1
            table.append_all(now, handles[start:], idle_row)
        self._unsampled = False
        self._awake = awake
        sleeping = self._sleeping
        for item in sleepers:     # asleep, in order (stamps as `sample` gives them)
            if isinstance(item, _Group):
                entries = item.entries
                item.first_stamp = self._stamps + 1
                self._stamps += len(entries)
                asleep = [i for i, entry in enumerate(entries) if entry is None]
                item.idle = len(asleep)
                item.group.sleep(asleep, partial(self._wake_member, item))
                # those with an entry (few: picked out without a Python step per member)
                for i in compress(range(len(entries)), entries):
                    entry = cast(_Entry, entries[i])
                    if entry.mode == POLLED:   # (fell asleep just now)
                        entry.stamp = item.first_stamp + i
                        sleeping[entry] = None
                        self._arm(entry, now)
                continue
            self._stamps += 1
            item.stamp = self._stamps
            sleeping[item] = None
            self._arm(item, now)

    def _wake_member(self, record: _Group, i: int) -> None:
        """Member `i` of the group of `record`, asleep without an entry since the first sample,
        may have changed: its entry now, in the state sleeping gave it, nudged."""
        probe, wake, arm, disarm = record.group.member(i)
        entry = _Entry(self, record.table, record.handles[i], probe, wake, record.idle_row, arm,
                       disarm)
        entry.token = record.group.token
        entry.last_row_s = record.first_s
        entry.stamp = record.first_stamp + i
        entry.mode = DORMANT
        record.entries[i] = entry
        record.idle -= 1
        self._sleeping[entry] = None
        entry.nudge()

    def _arm(self, entry: _Entry, now: float) -> None:
        """File the asleep `entry` by when its wake() must next be compared."""
        entry.nudged = False
        when: float = -math.inf if entry.arm is None else entry.arm(entry.nudge)
        if when <= now:
            entry.mode = POLLED
            self._polled.append(entry)
        elif when == math.inf:
            entry.mode = DORMANT
        else:
            entry.mode = TIMED
            self._timed_seqs += 1
            entry.timed_seq = self._timed_seqs
            heappush(self._timed, (when, self._timed_seqs, entry))

    def _wake_changed(self, previous_s: float, now: float) -> None:
        """Move to the awake list every sleeping probe whose wake() value changed among those
        due for a comparison; `previous_s` ends the last interval in which they were idle."""
        due = self._polled
        self._polled = []
        if self._nudged:
            due.extend(entry for entry in self._nudged if entry.mode != POLLED)
            self._nudged = []
        timed = self._timed
        while timed and timed[0][0] <= now:
            _, seq, entry = heappop(timed)
            if entry.mode == TIMED and entry.timed_seq == seq and not entry.nudged:
                due.append(entry)
        if not due:
            return
        woken: list[_Entry] = []
        for entry in due:
            if entry.wake() == entry.token:
                self._arm(entry, now)
            else:
                woken.append(entry)
        if not woken:
            return
        woken.sort(key=_stamp)        # in the order they fell asleep
        sleeping = self._sleeping
        for entry in woken:
            entry.mode = AWAKE
            entry.nudged = False
            del sleeping[entry]
            if entry.idle_row is not None and entry.last_row_s is not None \
                    and entry.last_row_s < previous_s:
                entry.table.append(previous_s, entry.handle, entry.idle_row)
                entry.last_row_s = previous_s
        self._awake.extend(woken)

    def finish(self) -> None:
        """Record the last, possibly shorter, interval, close every idle gap with an idle row at
        the end, undo the probes' wake-up arrangements, and stop."""
        self.sample()
        now = self._last_s
        for item in self._sleepers():
            if type(item) is tuple:              # a group's stretch of stamps
                record, asleep = item
                self._close_group(record, asleep, now)
            else:
                _close(item, now)
        self._running = False

    def _sleepers(self) -> list:
        """Every sleeping entry in the order it fell asleep, with (group record, its entries
        asleep with a stamp of the group's) in place of the stretch of stamps of each group
        that has members asleep without an entry.

        The entries are `_sleeping` sorted by stamp (in that order already unless group members
        got theirs since). A group's members sleeping since its first sample have the stamps
        first_stamp .. first_stamp + len - 1, given to no one else, so its members asleep
        without an entry and those of its entries asleep with their first stamp are one
        stretch, between the same other entries."""
        entries = sorted(self._sleeping, key=_stamp)
        idle = [record for record in self._groups if record.idle]
        if not idle:
            return entries
        stamps = [entry.stamp for entry in entries]
        ordered: list = []
        start = 0
        for record in sorted(idle, key=_first_stamp):
            first = record.first_stamp
            lo = bisect_left(stamps, first, start)
            hi = bisect_left(stamps, first + len(record.entries), lo)
            ordered += entries[start:lo]
            ordered.append((record, entries[lo:hi]))
            start = hi
        ordered += entries[start:]
        return ordered

    def _close_group(self, record: _Group, asleep: list[_Entry], now: float) -> None:
        """`finish` for the stretch of stamps of the group of `record`: in member order, the
        idle row of each member asleep without an entry (as its entry would write: its last
        row is the first sample's) and each of `asleep` (its entries asleep with their first
        stamp, in stamp order) closed, the rows of the members between two of `asleep` written
        at once; then the former released, all at once (releasing writes no row, so when does
        not matter)."""
        first = record.first_stamp
        idle = [i for i, entry in enumerate(record.entries) if entry is None]
        rows = idle if record.first_s < now else []
        table, idle_row, handles = record.table, record.idle_row, record.handles
        row_handles = [handles[i] for i in rows]
        start = 0
        for entry in asleep:
            stop = bisect_left(rows, entry.stamp - first, start)
            table.append_all(now, row_handles[start:stop], idle_row)
            _close(entry, now)
            start = stop
        table.append_all(now, row_handles[start:], idle_row)
        record.group.unwatch(idle)


def _close(entry: _Entry, now: float) -> None:
    """`Sampler.finish` for a sleeping entry: its idle row at the end, and its disarm."""
    if entry.idle_row is not None and entry.last_row_s is not None and entry.last_row_s < now:
        entry.table.append(now, entry.handle, entry.idle_row)
        entry.last_row_s = now
    if entry.disarm is not None:
        entry.disarm()


def _first_stamp(record: _Group) -> int:
    return record.first_stamp


def _stamp(entry: _Entry) -> int:
    return entry.stamp


def _sample_entry(entry: _Entry, now: float, span: float, awake: list[_Entry | _Group],
                  sleepers: list[_Entry | _Group] | None) -> None:
    """One awake entry's part of a sample (`Sampler.sample`'s loop, written out for
    `Sampler._sample_groups`): its row, and `awake` or `sleepers` (None: set its mode only)."""
    values = entry.probe(now, span)
    if values is not None or entry.wake is None:    # a row, SKIP, or a probe that never sleeps
        if values:
            entry.table.append(now, entry.handle, values)
            entry.last_row_s = now
        awake.append(entry)
        return
    entry.token = entry.wake()
    if entry.idle_row is not None and entry.last_row_s != now:
        entry.table.append(now, entry.handle, entry.idle_row)
        entry.last_row_s = now
    entry.mode = POLLED           # (until armed) not AWAKE
    if sleepers is not None:
        sleepers.append(entry)
