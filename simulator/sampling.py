"""Periodic sampling of counters into long-format tables.

Entities keep cheap running counters (O(1) per event); a `Sampler` wakes up every `interval_s`
of simulated time, asks each registered probe for the values of the interval that just ended, and
appends one row per entity. Memory grows with the number of samples, never with the number of
packets. The sampler knows nothing of what it samples.
"""
from __future__ import annotations

from array import array


class Table:
    """Rows of (time, entity key columns..., value columns...), stored column by column."""

    __slots__ = ("key_columns", "value_columns", "time_s", "keys", "values")

    def __init__(self, key_columns: tuple, value_columns: tuple):
        self.key_columns = tuple(key_columns)
        self.value_columns = tuple(value_columns)
        self.time_s = array("d")
        self.keys = [[] for _ in self.key_columns]
        self.values = [array("d") for _ in self.value_columns]

    def append(self, time_s: float, key: tuple, values: tuple) -> None:
        self.time_s.append(time_s)
        for column, part in zip(self.keys, key):
            column.append(part)
        for column, value in zip(self.values, values):
            column.append(value)

    def __len__(self) -> int:
        return len(self.time_s)

    def columns(self) -> dict:
        """Column name -> list/array, in header order (time_s, keys, values)."""
        out = {"time_s": self.time_s}
        out.update(zip(self.key_columns, self.keys))
        out.update(zip(self.value_columns, self.values))
        return out


class Sampler:
    """Calls probes every `interval_s` and records what they return.

    A probe is ``probe(now_s, interval_s) -> tuple of floats, or None to skip this row``; it is
    expected to reset its own per-interval counters when called.
    """

    __slots__ = ("sim", "interval_s", "tables", "_probes", "_last_s", "_running", "_origin_s", "_ticks",
                 "_generation")

    def __init__(self, sim, interval_s: float):
        if not interval_s > 0:
            raise ValueError(f"sampling interval must be positive, got {interval_s}")
        self.sim = sim
        self.interval_s = interval_s
        self.tables = {}
        self._probes = []        # (table, key, probe)
        self._last_s = 0.0
        self._running = False
        self._origin_s = 0.0
        self._ticks = 0
        self._generation = 0

    def table(self, name: str, key_columns: tuple, value_columns: tuple) -> Table:
        if name not in self.tables:
            self.tables[name] = Table(key_columns, value_columns)
        return self.tables[name]

    def register(self, table: Table, key: tuple, probe) -> None:
        self._probes.append((table, tuple(key), probe))

    def start(self) -> None:
        """Begin sampling from the current simulated time."""
        self._last_s = self._origin_s = self.sim.now
        self._running = True
        self._ticks = 0
        self._generation += 1     # a tick chain of an earlier start() stops at its next tick
        self._schedule_next()

    def _schedule_next(self) -> None:
        # k * interval from the origin, not repeated addition: sample times do not drift.
        self._ticks += 1
        self.sim.schedule_at(self._origin_s + self._ticks * self.interval_s, self._tick,
                             self._generation)

    def _tick(self, generation: int) -> None:
        if not self._running or generation != self._generation:
            return
        self.sample()
        self._schedule_next()

    def sample(self) -> None:
        """Record one row per probe for the interval (last sample, now]."""
        now = self.sim.now
        span = now - self._last_s
        if span <= 0:
            return
        for table, key, probe in self._probes:
            values = probe(now, span)
            if values is not None:
                table.append(now, key, values)
        self._last_s = now

    def finish(self) -> None:
        """Record the last, possibly shorter, interval and stop."""
        self.sample()
        self._running = False
