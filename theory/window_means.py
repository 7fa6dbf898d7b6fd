"""The time-weighted means and sums of trace columns that `--check` compares
(`theory.check_rows.Window`), over every compared window of a run at once, from the trace files
streamed a chunk at a time: the memory is O(series of interest x windows x columns), whatever
the number of rows (the simulated time, the sampling interval).

The values are bit for bit those of `theory.windows.window_mean` and `window_sum` on the arrays
`Results.trace` gives, the whole table in memory: the same series (a link's sampling instants
without a row, in which it was idle, filled in with zeros; its two directions summed when no
direction is given), the same spans and the same rows in a window, and the same order of
summation. numpy adds an array pairwise (`PairwiseSum`), in a tree that depends on the number of
terms: a first pass counts the terms of every sum, a second adds them as they come.

Every series of interest must be in time order in the file (netsim writes the traces so); a
table where one is not, or whose times lie outside the run, is read whole through
`Results.trace` instead (the reader accepts any order), as is a query for a series, a column or
a window that was not declared in advance, and the traces of a results object that cannot
stream them (one without `trace_chunks`).
"""
from __future__ import annotations

import math

import numpy as np

from theory.windows import window_mean, window_sum

LEAF_TERMS = 128          # numpy's PW_BLOCKSIZE: a run of up to this many terms is added in one go
UNROLL = 8                # numpy splits a longer run at a multiple of this (its unrolled loop)
FILL_INSTANTS = 8192      # sampling instants filled in at a time across a link's idle gap
_KEYS = {"flows": "flow", "links": "link"}


class PairwiseSum:
    """The sum of `n` float64 terms that arrive in pieces (`add`, in order), equal bit for bit to
    numpy's sum of all of them in one contiguous array (``ndarray.sum``, ``np.average``):
    numpy's pairwise summation splits n > 128 terms at n // 2 rounded down to a multiple of 8 and
    adds up to 128 terms in one leaf (eight running sums). Each leaf is added here by numpy
    itself, the tree of leaves on a stack of the pending left halves: O(log n) memory.
    `total` is the sum once `n` terms arrived (None before); `overflow` says more came."""

    __slots__ = ("_stack", "_need", "_pieces", "_got", "total", "overflow")

    def __init__(self, n: int):
        self._stack: list = []        # [terms of the right half, sum of the left half or None]
        self._pieces: list = []       # the terms of the current leaf that arrived so far
        self._got = 0
        self._need = 0
        self.total: float | None = 0.0 if n == 0 else None
        self.overflow = False
        if n:
            self._descend(n)

    def _descend(self, n: int) -> None:
        while n > LEAF_TERMS:
            half = n // 2
            half -= half % UNROLL
            self._stack.append([n - half, None])
            n = half
        self._need = n

    def add(self, terms: np.ndarray) -> None:
        start, count = 0, len(terms)
        while start < count:
            if self.total is not None:
                self.overflow = True
                return
            take = min(self._need - self._got, count - start)
            piece = terms[start:start + take]
            start += take
            if not self._got and take == self._need:
                leaf = float(piece.sum())
            else:                             # (a copy: a view would keep all of `terms`)
                self._pieces.append(piece.copy())
                self._got += take
                if self._got < self._need:
                    continue
                leaf = float(np.concatenate(self._pieces).sum())
                self._pieces, self._got = [], 0
            # (numpy's leaf starts from -0.0, piece.sum() from +0.0: a zero's sign cannot change
            # a sum that is not zero, and the total gets numpy's +0.0 start below)
            self._up(leaf)

    def _up(self, value: float) -> None:
        stack = self._stack
        while stack:
            frame = stack[-1]
            if frame[1] is None:
                frame[1] = value
                self._descend(frame[0])
                return
            value = frame[1] + value
            stack.pop()
        self.total = 0.0 + value


class SamplingGrid:
    """The run's sampling instants as `Results.trace` fills a link's idle intervals with them:
    k x interval_s (k = 1, 2, ...) before the end, then the end, each as the traces write a time
    (9 significant digits). `between` gives those of a time range, from a cache of the
    CACHED_INSTANTS instants last asked about (the traces are read in time order)."""

    CACHED_INSTANTS = 8192

    def __init__(self, end_s: float, interval_s: float):
        self.end_s, self.interval_s = end_s, interval_s
        last = int(end_s / interval_s) + 1
        while last >= 1 and last * interval_s >= end_s:
            last -= 1
        self.last = last              # k of the last instant before the end (k = last + 1: end)
        self._first_k, self._cached = 1, np.empty(0)

    def instants(self, k0: int, k1: int) -> np.ndarray:
        """Instants k0 to k1 - 1 (clipped to the run's)."""
        k0, k1 = max(k0, 1), min(k1, self.last + 2)
        if k1 <= k0:
            return np.empty(0)
        raw = np.arange(k0, min(k1, self.last + 1), dtype=float) * self.interval_s
        if k1 == self.last + 2:
            raw = np.append(raw, self.end_s)
        return np.char.mod("%.9g", raw).astype(float)

    def between(self, low: float, high: float) -> np.ndarray:
        """The instants strictly between `low` and `high` (sorted; two may be equal)."""
        margin = 2 + int(abs(high / self.interval_s) * 1e-8)   # (9 digits: within 5e-9 of k dt)
        k0 = max(1, math.floor(low / self.interval_s) - margin)
        k1 = min(self.last + 2, math.ceil(high / self.interval_s) + margin + 1)
        if k1 <= k0:
            return np.empty(0)
        first = self._first_k
        if k0 < first or k1 > first + len(self._cached):
            self._first_k, first = k0, k0
            self._cached = self.instants(k0, max(k1, k0 + self.CACHED_INSTANTS))
        values = self._cached[k0 - first:k1 - first]
        return values[np.searchsorted(values, low, side="right"):
                      np.searchsorted(values, high, side="left")]


class _Unordered(Exception):
    """A series of interest is not in time order, or has times outside the run: read the
    table whole."""


class _Series:
    """One series' filled points as they come: its previous point, and for a link's two
    directions summed the point of the time last seen, which rows of the next chunk may add to."""

    __slots__ = ("last", "pending_t", "pending")

    def __init__(self):
        self.last: float | None = None        # the time of the previous point given out
        self.pending_t: float | None = None   # (summed directions) the time being summed
        self.pending: dict | None = None      # its column sums so far


class _Table:
    """The windowed means and sums of one trace ("flows" or "links")."""

    def __init__(self, means: TraceMeans, name: str, series: dict):
        self.owner, self.name, self.key = means, name, _KEYS[name]
        # entity -> the directions asked for (None: a link's two directions summed; flows: None)
        self.series = {entity: set(directions) for entity, directions in series.items()}
        self.columns: tuple = ()              # the value columns of the file
        self.seen: set = set()                # entities of interest with a row
        self.seen_directions: set = set()     # (link, direction) of interest with a row
        self.values: dict | None = None       # (entity, direction, column, window, mean) -> value
        self.whole = False                    # read whole (`Results.trace`) instead
        self.changed = False                  # the second pass found terms the first did not

    # -- the two passes ---------------------------------------------------------------------
    def compute(self) -> None:
        owner = self.owner
        chunks = getattr(owner.results, "trace_chunks", None)
        if chunks is None or not self.series:
            self.whole = True
            return
        counts: dict = {}
        try:
            if not self._scan(chunks, counts, None):
                self.whole = True
                return
            sums = {key: (PairwiseSum(n), PairwiseSum(n) if key[4] else None)
                    for key, n in counts.items()}
            self._scan(chunks, None, sums)
        except _Unordered:
            self.whole = True
            return
        values: dict = {}
        if self.changed:
            self.whole = True
            return
        for key, (first, second) in sums.items():
            if first.total is None or first.overflow or (second is not None and (
                    second.total is None or second.overflow)):
                self.whole = True             # (the file changed between the passes)
                return
            values[key] = first.total if second is None else (first.total, second.total)
        self.values = values

    def _scan(self, chunks, counts: dict | None, sums: dict | None) -> bool:
        """One pass over the file: counts the terms of every sum (`counts`) or adds them
        (`sums`). False when the file has no rows (nothing to learn its columns from)."""
        owner = self.owner
        wanted = list(self.series)
        state: dict = {}
        any_rows = False
        for chunk in chunks(self.name):
            if not any_rows:
                any_rows = True
                self.columns = tuple(c for c in chunk if c not in ("time_s", self.key, "direction"))
            columns = [c for c in owner.means[self.name] + owner.sums[self.name] if c in chunk]
            entities = chunk[self.key]
            rows = np.flatnonzero(np.isin(entities, wanted))
            if not len(rows):
                continue
            times = chunk["time_s"]
            directions = chunk["direction"] if self.name == "links" else None
            for entity, entity_rows in _groups(entities, rows):
                self.seen.add(entity)
                asked = self.series[entity]
                if directions is not None:
                    labels = directions[entity_rows]
                    for label in np.unique(labels).tolist():
                        self.seen_directions.add((entity, label))
                        if label in asked:
                            picked = entity_rows[labels == label]
                            self._feed(state, (entity, label), times[picked],
                                       {c: chunk[c][picked] for c in columns}, counts, sums)
                if None in asked:
                    self._feed(state, (entity, None), times[entity_rows],
                               {c: chunk[c][entity_rows] for c in columns}, counts, sums)
        for key, series in state.items():      # the last time of the summed directions
            if series.pending_t is not None and series.pending is not None:
                self._filled(series, key, np.array([series.pending_t]),
                             {c: np.array([v]) for c, v in series.pending.items()}, counts, sums)
        return any_rows

    def _feed(self, state: dict, key: tuple, times: np.ndarray, columns: dict,
              counts: dict | None, sums: dict | None) -> None:
        """Rows of one series (in file order) -> its points, given out in time order."""
        series = state.get(key)
        if series is None:
            series = state[key] = _Series()
        grid = self.owner.grid
        if not np.all(np.isfinite(times)) or times.min() < -grid.interval_s or \
                times.max() > grid.end_s + grid.interval_s:
            raise _Unordered
        if self.name == "flows":              # one point per row; equal times: a span of 0
            if (series.last is not None and times[0] < series.last) or np.any(np.diff(times) < 0):
                raise _Unordered
            self._emit(series, key, times, columns, counts, sums)
            return
        if key[1] is None:                    # both directions: one point per time, summed
            times, columns = self._summed(series, times, columns)
            if not len(times):
                return
        elif (series.last is not None and times[0] <= series.last) or np.any(np.diff(times) <= 0):
            raise _Unordered
        self._filled(series, key, times, columns, counts, sums)

    def _summed(self, series: _Series, times: np.ndarray, columns: dict) -> tuple:
        """A link's rows of both directions -> one value per time, the rows of a time added in
        file order from 0.0 (as `np.bincount`); the last time is held back, as the next chunk
        may have rows of it."""
        if np.any(np.diff(times) < 0) or (series.pending_t is not None and
                                           times[0] < series.pending_t):
            raise _Unordered
        if series.pending_t is not None:      # (its sum so far, to go on from)
            assert series.pending is not None
            times = np.concatenate(([series.pending_t], times))
            columns = {c: np.concatenate(([series.pending[c]], v)) for c, v in columns.items()}
        first = np.flatnonzero(np.concatenate(([True], times[1:] != times[:-1])))
        sizes = np.diff(np.append(first, len(times)))
        longest = int(sizes.max())
        summed = {}
        for c, v in columns.items():
            total = 0.0 + v[first]
            for j in range(1, longest):
                more = sizes > j
                total[more] = total[more] + v[first[more] + j]
            summed[c] = total
        unique = times[first]
        series.pending_t = float(unique[-1])
        series.pending = {c: float(total[-1]) for c, total in summed.items()}
        return unique[:-1], {c: total[:-1] for c, total in summed.items()}

    def _filled(self, series: _Series, key: tuple, times: np.ndarray, columns: dict,
                counts: dict | None, sums: dict | None) -> None:
        """A link's points (times increasing) with its idle sampling instants between them, as
        zeros (`Results.trace`), given out at most about FILL_INSTANTS instants at a time."""
        grid = self.owner.grid
        reach = FILL_INSTANTS * grid.interval_s
        i = 0
        if series.last is None:               # nothing before a series' first row
            self._emit(series, key, times[:1], {c: v[:1] for c, v in columns.items()},
                       counts, sums)
            i = 1
        low = series.last
        assert low is not None
        while i < len(times):
            j = int(np.searchsorted(times, low + reach, side="right"))
            if j <= i:                        # a long idle gap: fill the next part of it
                idle = grid.between(low, low + reach)
                if len(idle):
                    self._emit(series, key, idle, {c: np.zeros(len(idle)) for c in columns},
                               counts, sums)
                    low = float(idle[-1])
                else:
                    low += reach
                continue
            part = times[i:j]
            idle = grid.between(low, float(part[-1]))
            if len(idle):
                filled = np.union1d(part, idle)
                at = np.searchsorted(filled, part)
                values = {}
                for c, v in columns.items():
                    values[c] = np.zeros(len(filled))
                    values[c][at] = v[i:j]
                self._emit(series, key, filled, values, counts, sums)
            else:
                self._emit(series, key, part, {c: v[i:j] for c, v in columns.items()},
                           counts, sums)
            low = float(part[-1])
            i = j

    def _emit(self, series: _Series, key: tuple, t: np.ndarray, columns: dict,
              counts: dict | None, sums: dict | None) -> None:
        """Points of a series -> the terms of every window's sums (or their number)."""
        owner = self.owner
        previous = t[0] - owner.step_s if series.last is None else series.last
        spans = t - np.concatenate(([previous], t[:-1]))
        series.last = float(t[-1])
        starts = t - spans
        kinds = {c: [(True, c in owner.means[self.name]), (False, c in owner.sums[self.name])]
                 for c in columns}
        for w, (from_s, until_s) in enumerate(owner.windows):
            low, high = from_s - 1e-9, until_s + 1e-9
            if t[0] > high or t[-1] < low:
                continue
            inside = (starts >= low) & (t <= high)
            if not inside.any():
                continue
            for c, v in columns.items():
                rows = inside & ~np.isnan(v)
                for mean, wanted in kinds[c]:
                    if not wanted:
                        continue
                    index = (key[0], key[1], c, w, mean)
                    if counts is not None:
                        n = int(np.count_nonzero(rows))
                        if n:
                            counts[index] = counts.get(index, 0) + n
                        continue
                    assert sums is not None
                    pair = sums.get(index)
                    if pair is None:              # (terms the first pass did not see: the
                        self.changed = self.changed or bool(rows.any())   # file changed)
                        continue
                    if mean:
                        pair[0].add(v[rows] * spans[rows])
                        pair[1].add(spans[rows])
                    else:
                        pair[0].add(v[rows])

    # -- answers ----------------------------------------------------------------------------
    def lookup(self, window: int, entity: str, column: str, direction, mean: bool):
        """The value computed for the query (a mean: its numerator and weight); KeyError as
        `Results.trace` raises it; None when the query was not declared (the caller reads the
        table whole)."""
        if self.values is None and not self.whole:
            self.compute()
        if self.whole:
            return None
        asked = self.series.get(entity)
        declared = self.owner.means if mean else self.owner.sums
        if asked is None or direction not in asked or column not in declared[self.name]:
            return None
        if column not in self.columns:
            raise KeyError(f"{self.name} has no value column {column!r}")
        if entity not in self.seen:
            raise KeyError(f"no {self.key} {entity!r} in the results")
        if direction is not None and (entity, direction) not in self.seen_directions:
            raise KeyError(f"link {entity!r} has no direction {direction!r}")
        assert self.values is not None
        return _Found(self.values.get((entity, direction, column, window, mean)))


class _Found:
    """A looked-up value (None: no term in the window)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _groups(entities: np.ndarray, rows: np.ndarray):
    """(entity, its rows among `rows`, in file order) for every entity of `rows`."""
    picked = entities[rows]
    names, inverse = np.unique(picked, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(names) + 1))
    for u, name in enumerate(names.tolist()):
        yield name, rows[order[bounds[u]:bounds[u + 1]]]


class TraceMeans:
    """Windowed means and sums of the traces of `results` (a `netsim.results.Results`) for
    `--check`: `windows` the compared windows [(from_s, until_s)], `step_s` the sampling
    interval, `flows` the flows and `links` the link -> directions (None: both summed) whose
    series are asked for; the columns are `means` and `sums` by table ({"flows": (...),
    "links": (...)}). Each table is streamed on its first query; `mean` and `sum` answer as
    `window_mean` and `window_sum` on `results.trace(...)` do, bit for bit (they call them for
    a query not declared here, or a table read whole)."""

    def __init__(self, results, windows, step_s: float, flows, links: dict,
                 means: dict, sums: dict):
        self.results, self.step_s = results, step_s
        self.windows = list(dict.fromkeys((float(a), float(b)) for a, b in windows))
        self.index = {bounds: w for w, bounds in enumerate(self.windows)}
        self.means = {name: tuple(means.get(name, ())) for name in _KEYS}
        self.sums = {name: tuple(sums.get(name, ())) for name in _KEYS}
        summary = results.summary
        self.grid = SamplingGrid(summary["end_time_s"], summary["interval_s"])
        self.tables = {"flows": _Table(self, "flows", {fid: {None} for fid in flows}),
                       "links": _Table(self, "links", links)}

    def _value(self, table: str, window: tuple, entity: str, column: str, direction,
               mean: bool):
        w = self.index.get(window)
        return None if w is None else self.tables[table].lookup(w, entity, column, direction,
                                                                mean)

    def mean(self, table: str, window: tuple, entity: str, column: str, direction=None):
        found = self._value(table, window, entity, column, direction, True)
        if found is None:                     # read whole (not declared, or not in order)
            t, values = self.results.trace(table, entity, column, direction=direction)
            return window_mean(t, values, window[0], window[1], self.step_s)
        if found.value is None:
            return None
        numerator, weights = found.value
        if weights == 0.0:                    # (as np.average)
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return numerator / weights

    def sum(self, table: str, window: tuple, entity: str, column: str, direction=None) -> float:
        found = self._value(table, window, entity, column, direction, False)
        if found is None:
            t, values = self.results.trace(table, entity, column, direction=direction)
            return window_sum(t, values, window[0], window[1], self.step_s)
        return 0.0 if found.value is None else float(found.value)

    @property
    def whole(self) -> dict:
        """Table -> whether it was read whole instead of streamed (None: not read yet)."""
        return {name: (None if t.values is None and not t.whole else t.whole)
                for name, t in self.tables.items()}
