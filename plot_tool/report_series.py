"""The report's time series of one trace (links.csv or flows.csv), reduced to what the page embeds
(see `plot_tool.report`): per entity (a link direction, a flow) and column, the samples on the
run's sampling grid, or beyond ``2 max_buckets`` samples each bucket's minimum and maximum; the
mean of each slider frame for the columns that colour the network; per frame whether a column
(``failure_drops``) is positive somewhere; which columns are not all zero.

Two ways to the same numbers. `reduce_table` puts a Table held whole (a ResultSet built in
memory) on the full grid and reduces it, as the report always did. `stream_trace` reads the file
a chunk at a time (`plot_tool.results.iter_table`) and keeps per entity only the rows of the
bucket still open and what the page embeds: its memory is O(entities x buckets) whatever the
length of the run. Every finished bucket is rebuilt on its own (its samples, zeros or NaN where
the entity has no row) and reduced by the very functions of the whole series
(`bucket_means`, `bucket_extremes`: numpy reduces each bucket alone), so the page is the same
byte for byte. The stream needs the file in time order, as netsim writes it; the first chunk
out of order (or a column whose type a chunk cannot decide) sends it back to reading the file
whole (`read_table`, then `reduce_table`): correct, not bounded.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from plot_tool.report_grid import Buckets, SampleGrid, bucket_extremes, bucket_means, grid_index
from plot_tool.results import Table, TraceFile, iter_table

Key = tuple[str, ...]                # an entity: (link, direction) or (flow,)
BATCH_SAMPLES = 1 << 16              # finished buckets rebuilt at a time, in samples (at least one)


class Sampling:
    """The run's sampling grid, its slider frames, and how its series are decimated."""

    def __init__(self, summary: Mapping[str, Any], max_frames: int, max_buckets: int):
        self.grid = SampleGrid(summary)
        self.n = n = self.grid.n
        self.frames = Buckets(n, max_frames)
        self.decimate = n > 2 * max_buckets
        self.buckets = Buckets(n, max_buckets)
        if self.decimate:
            self.series_t = np.empty(2 * len(self.buckets.starts))
            self.series_t[0::2] = self.grid.at(self.buckets.starts)
            self.series_t[1::2] = self.grid.at(self.buckets.ends - 1)
        else:
            self.series_t = self.grid.values()


@dataclass(frozen=True)
class TracePlan:
    """What the page takes from one trace: its entity `keys` columns, the value `columns` (in
    the page's order), the `fill` of a grid instant without a row (0 for links.csv: an idle
    direction; NaN for flows.csv: no sample), the columns always embedded (the others only when
    not all zero), those whose frame means are drawn, and the one whose positive frames are
    kept."""

    keys: tuple[str, ...]
    columns: tuple[str, ...]
    fill_nan: bool                       # the fill: NaN, else 0 (a bool: NaN != NaN)
    always: frozenset[str]
    mean_columns: tuple[str, ...] = ()
    positive_column: str | None = None

    @property
    def fill(self) -> float:
        return float("nan") if self.fill_nan else 0.0


# what the page takes from a table of those columns; strict (a chunk): None when undecided
# (Optional: a runtime alias, and plot_tool runs on Python 3.9)
PlanOf = Callable[[Table, bool], Optional[TracePlan]]  # noqa: UP045


class Reduced:
    """One entity's series as the page embeds them, before encoding: `points` (column -> the
    samples, or each bucket's min and max; only the columns embedded), `means` (column -> each
    frame's mean), `positive` (per frame, or None), `nonzero` (columns with a value other than
    0; NaN counts)."""

    __slots__ = ("points", "means", "positive", "nonzero")

    def __init__(self, points: dict[str, np.ndarray], means: dict[str, np.ndarray],
                 positive: np.ndarray | None, nonzero: set[str]):
        self.points = points
        self.means = means
        self.positive = positive
        self.nonzero = nonzero


def reduce_full(full: Mapping[str, np.ndarray], plan: TracePlan, sampling: Sampling) -> Reduced:
    """An entity's series on the whole grid (column -> n values) reduced for the page."""
    nonzero = {c for c, v in full.items() if np.any(v != 0)}
    points = {c: sampling.buckets.extremes(v) if sampling.decimate else v
              for c, v in full.items() if c in plan.always or c in nonzero}
    means = {c: sampling.frames.means(full[c]) for c in plan.mean_columns}
    positive = None
    column = plan.positive_column
    if column is not None and column in full:
        positive = sampling.frames.means((full[column] > 0).astype(float)) > 0
    return Reduced(points, means, positive, nonzero)


def reduce_table(table: Table, plan: TracePlan, sampling: Sampling,
                 entities: Iterable[Key]) -> dict[Key, Reduced]:
    """Each of `entities` of a Table held whole, in any row order, on the full grid."""
    rows_of = rows_by(table, plan.keys)
    grid = sampling.grid.values()
    out: dict[Key, Reduced] = {}
    for key in entities:
        if key in out:
            continue
        rows = rows_of.get(key)
        full = {c: np.full(sampling.n, plan.fill) for c in plan.columns}
        if rows is not None:
            idx = grid_index(grid, table["time_s"][rows])
            for c in plan.columns:
                full[c][idx] = table[c][rows]
        out[key] = reduce_full(full, plan, sampling)
    return out


def rows_by(table: Table, keys: tuple[str, ...]) -> dict[tuple, np.ndarray]:
    """Row indices of each entity, sorted by time (rows are not globally time-sorted)."""
    if not len(table.get("time_s", ())):
        return {}
    columns = [np.asarray(table[k]) for k in keys]
    order = np.lexsort((table["time_s"], *reversed(columns)))
    out: dict[tuple, np.ndarray] = {}
    keyed = list(zip(*(c[order].tolist() for c in columns)))
    start = 0
    for i in range(1, len(order) + 1):
        if i == len(order) or keyed[i] != keyed[start]:
            out[keyed[start]] = order[start:i]
            start = i
    return out


def stream_trace(trace: TraceFile, plan_of: PlanOf,
                 sampling: Sampling, entities: Sequence[Key],
                 chunk_rows: int | None = None) -> tuple[TracePlan, dict[Key, Reduced]]:
    """The trace file `trace` (links.csv or flows.csv) reduced for `entities`, read a chunk at a
    time (`iter_table`, `chunk_rows` rows). `plan_of(table, strict)` says what the page takes from
    a table with those columns; strict (a chunk): None when the chunk's column types cannot decide
    it (a column the page may use that this chunk reads as text, where the whole file may read as
    numbers). The file is read whole instead when a chunk is out of time order, leaves the plan
    undecided or decides another one, and when it has no rows."""
    plan: TracePlan | None = None
    stream: _Stream | None = None
    chunks = iter_table(trace.path, trace.name, chunk_rows)
    try:
        for chunk in chunks:
            chunk_plan = plan_of(chunk, True)
            if chunk_plan is None or (plan is not None and chunk_plan != plan):
                break
            if stream is None:
                plan = chunk_plan
                stream = _Stream(plan, sampling, entities)
            if not stream.feed(chunk):
                break
        else:
            if stream is not None and plan is not None:
                return plan, stream.finish()
    finally:
        close = getattr(chunks, "close", None)   # (the file, when a chunk sent us back)
        if close is not None:
            close()
    table = trace.read()
    whole = plan_of(table, False)
    assert whole is not None
    return whole, reduce_table(table, whole, sampling, entities)


# ---------------------------------------------------------------------------------------------
# The stream: every entity at once, a few numpy operations per chunk


class _Cut:
    """One way of cutting the grid into buckets and what each bucket yields: the means of some
    columns, the min and max of every column, whether one column is positive."""

    __slots__ = ("buckets", "means", "extremes", "positive")

    def __init__(self, buckets: Buckets, means: tuple[int, ...], extremes: bool,
                 positive: int | None):
        self.buckets = buckets
        self.means = means
        self.extremes = extremes
        self.positive = positive


class _Stream:
    """The reduction of one trace's chunks, in time order, for its entities (rows e of the
    arrays below, in the order given).

    A short run (not decimated): each column's samples on the whole grid, entities x n (at most
    2 max_buckets), made at the first value other than the fill. A decimated run: the rows of
    the buckets still open (`pending_*`, sorted by entity and instant), and per finished bucket
    what the page embeds: per column, entities x buckets arrays of min and max (and of frame
    means, and of positive frames), made at the first value other than the fill, until then
    every bucket holding the fill's constant results."""

    def __init__(self, plan: TracePlan, sampling: Sampling, entities: Sequence[Key]):
        self.plan = plan
        self.sampling = sampling
        self.keys = list(dict.fromkeys(entities))
        self.entity = {key: e for e, key in enumerate(self.keys)}
        self.last_time_s = -np.inf
        self.last_index = 0
        ncolumns, nentities = len(plan.columns), len(self.keys)
        self.full: dict[int, np.ndarray] = {}             # short run: column -> E x n
        self.nonzero = np.zeros((ncolumns, nentities), dtype=bool)
        self.pending_entity = np.zeros(0, dtype=np.int64)
        self.pending_idx = np.zeros(0, dtype=np.int64)
        self.pending_values = np.zeros((ncolumns, 0))
        self.extremes: dict[int, np.ndarray] = {}         # column -> E x 2 buckets
        self.means: dict[int, np.ndarray] = {}            # column -> E x frames
        self.positive: np.ndarray | None = None           # E x frames
        self.cuts: list[_Cut] = []
        if sampling.decimate:
            frames, buckets = sampling.frames, sampling.buckets
            mean_index = tuple(plan.columns.index(c) for c in plan.mean_columns)
            positive = (plan.columns.index(plan.positive_column)
                        if plan.positive_column in plan.columns else None)
            wants_frames = bool(mean_index) or positive is not None
            if wants_frames and np.array_equal(frames.starts, buckets.starts):
                self.cuts = [_Cut(buckets, mean_index, True, positive)]
            else:
                self.cuts = [_Cut(buckets, (), True, None)]
                if wants_frames:
                    self.cuts.append(_Cut(frames, mean_index, False, positive))
        self.done = [0] * len(self.cuts)                  # per cut: its buckets finished

    def differs(self, values: np.ndarray) -> bool:
        """Whether any of `values` is not the fill (the constant of an entity without rows)."""
        if self.plan.fill_nan:
            return bool(np.any(~np.isnan(values)))
        return bool(np.any(values != 0.0))

    def feed(self, chunk: Table) -> bool:
        """Reduce one chunk; False (and nothing done) when it is out of time order."""
        times = np.asarray(chunk["time_s"])
        if not len(times):
            return True
        if (np.isnan(times).any() or times[0] < self.last_time_s
                or np.any(times[1:] < times[:-1])):
            return False
        idx = self.sampling.grid.index(times)
        # (nearest instants of times in order are in order, but for an infinite time)
        if idx[0] < self.last_index or np.any(idx[1:] < idx[:-1]):
            return False
        self.last_time_s = float(times[-1])
        self.last_index = final = int(idx[-1])     # every later row is at this index or beyond
        entity = self._entities(chunk)
        known = entity >= 0
        values = np.vstack([np.asarray(chunk[c], dtype=float)[known] for c in self.plan.columns])
        if self.sampling.decimate:
            self._add(entity[known], idx[known], values)
            self._advance(final)
        else:
            self._fill(entity[known], idx[known], values)
        return True

    def _entities(self, chunk: Table) -> np.ndarray:
        """Each row's entity (-1: not one of ours)."""
        codes = np.zeros(len(chunk["time_s"]), dtype=np.int64)
        for k in self.plan.keys:
            uniques, inverse = np.unique(np.asarray(chunk[k]), return_inverse=True)
            codes = codes * len(uniques) + inverse.reshape(-1)
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        lookup = np.array([self.entity.get(tuple(str(chunk[k][row]) for k in self.plan.keys), -1)
                           for row in first], dtype=np.int64)
        return lookup[inverse.reshape(-1)]

    def _last_of_each(self, entity: np.ndarray, idx: np.ndarray,
                      values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows sorted by entity and instant, of rows of one entity at one instant the last
        (as assigning them all in order leaves it)."""
        if not len(entity):
            return entity, idx, values
        key = entity * self.sampling.n + idx
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        keep = order[np.append(ordered[1:] != ordered[:-1], True)]
        return entity[keep], idx[keep], values[:, keep]

    def _fill(self, entity: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
        """A short run: the rows into the whole grid."""
        entity, idx, values = self._last_of_each(entity, idx, values)
        for i, row in enumerate(values):
            full = self.full.get(i)
            if full is None:
                if not self.differs(row):
                    continue                    # (the fill already)
                full = self.full[i] = np.full((len(self.keys), self.sampling.n), self.plan.fill)
            full[entity, idx] = row

    def _add(self, entity: np.ndarray, idx: np.ndarray, values: np.ndarray) -> None:
        """A decimated run: the rows join those pending (a later row at an entity's instant
        replaces the earlier one)."""
        self.pending_entity, self.pending_idx, self.pending_values = self._last_of_each(
            np.concatenate((self.pending_entity, entity)),
            np.concatenate((self.pending_idx, idx)),
            np.concatenate((self.pending_values, values), axis=1))

    def _advance(self, final: int) -> None:
        """Finish every bucket ending at or before grid index `final` (no row can come before
        it any more); the rows no open bucket needs leave."""
        keep_from = self.sampling.n
        idx = self.pending_idx
        for c, cut in enumerate(self.cuts):
            starts, ends = cut.buckets.starts, cut.buckets.ends
            finished = int(np.searchsorted(ends, final, side="right"))
            if finished > self.done[c]:
                rows = (idx >= starts[self.done[c]]) & (idx < ends[finished - 1])
                if rows.any():
                    self._finish(cut, self.pending_entity[rows], idx[rows],
                                 self.pending_values[:, rows])
                self.done[c] = finished
            if self.done[c] < len(starts):
                keep_from = min(keep_from, int(starts[self.done[c]]))
        leaving = idx < keep_from
        if leaving.any():
            entity = self.pending_entity[leaving]
            for i, row in enumerate(self.pending_values[:, leaving]):
                self.nonzero[i, entity[row != 0]] = True
            staying = ~leaving
            self.pending_entity = self.pending_entity[staying]
            self.pending_idx = idx[staying]
            self.pending_values = self.pending_values[:, staying]

    def _finish(self, cut: _Cut, entity: np.ndarray, idx: np.ndarray,
                values: np.ndarray) -> None:
        """Reduce the buckets of `cut` holding rows (sorted by entity and instant); the others
        in the finished range hold none: the fill's results, already there."""
        buckets = cut.buckets
        bucket = np.searchsorted(buckets.ends, idx, side="right")
        segment = entity * len(buckets.starts) + bucket               # (entity, bucket)
        segments, first_row = np.unique(segment, return_index=True)
        sizes = buckets.sizes[segments % len(buckets.starts)]
        ends = np.cumsum(sizes)
        start = 0
        while start < len(segments):           # at most BATCH_SAMPLES samples (or one bucket)
            stop = max(start + 1, int(np.searchsorted(ends, ends[start] - sizes[start]
                                                      + BATCH_SAMPLES, side="right")))
            rows = slice(first_row[start], first_row[stop] if stop < len(segments) else len(idx))
            self._reduce(cut, segments[start:stop], segment[rows], idx[rows], values[:, rows])
            start = stop

    def _reduce(self, cut: _Cut, segments: np.ndarray, segment: np.ndarray, idx: np.ndarray,
                values: np.ndarray) -> None:
        """Rebuild the samples of the buckets `segments` (their rows: `segment`, `idx`,
        `values`) one after the other, and reduce each bucket alone."""
        buckets, plan = cut.buckets, self.plan
        nb = len(buckets.starts)
        entity, bucket = segments // nb, segments % nb
        sizes = buckets.sizes[bucket]
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))     # in the rebuilt samples
        slot = np.searchsorted(segments, segment)
        position = starts[slot] + (idx - buckets.starts[bucket[slot]])
        total = int(starts[-1] + sizes[-1])
        shape = (len(self.keys), nb)
        for i, row in enumerate(values):
            if not (cut.extremes or i in cut.means or i == cut.positive):
                continue
            samples = np.full(total, plan.fill)
            samples[position] = row
            if i == cut.positive:
                positive = samples > 0
                if self.positive is not None or positive.any():
                    if self.positive is None:
                        self.positive = np.zeros(shape, dtype=bool)
                    self.positive[entity, bucket] = np.logical_or.reduceat(positive, starts)
            kept = (cut.extremes and i in self.extremes) or (i in cut.means and i in self.means)
            if not (kept or self.differs(samples)):
                continue                        # the fill: its constant results hold
            if cut.extremes:
                out = self.extremes.get(i)
                if out is None:
                    out = self.extremes[i] = np.full((shape[0], 2 * nb), plan.fill)
                reduced = bucket_extremes(samples, starts)
                out[entity, 2 * bucket] = reduced[0::2]
                out[entity, 2 * bucket + 1] = reduced[1::2]
            if i in cut.means:
                means = self.means.get(i)
                if means is None:
                    means = self.means[i] = np.full(shape, plan.fill)
                means[entity, bucket] = bucket_means(samples, starts)

    def finish(self) -> dict[Key, Reduced]:
        """Each entity's series (the fill for one without rows)."""
        plan, sampling = self.plan, self.sampling
        if not sampling.decimate:
            out = {}
            for e, key in enumerate(self.keys):
                full = {c: self.full[i][e] if i in self.full else np.full(sampling.n, plan.fill)
                        for i, c in enumerate(plan.columns)}
                out[key] = reduce_full(full, plan, sampling)
            return out
        self._advance(sampling.n)
        nb_series, nb_frames = len(sampling.buckets.starts), len(sampling.frames.starts)
        has_positive = plan.positive_column in plan.columns
        out = {}
        for e, key in enumerate(self.keys):
            nonzero = {c for i, c in enumerate(plan.columns) if self.nonzero[i, e]}
            points = {c: self.extremes[i][e] if i in self.extremes
                      else np.full(2 * nb_series, plan.fill)
                      for i, c in enumerate(plan.columns) if c in plan.always or c in nonzero}
            means = {c: self.means[i][e] if i in self.means else np.full(nb_frames, plan.fill)
                     for i, c in ((plan.columns.index(c), c) for c in plan.mean_columns)}
            positive = None
            if has_positive:
                positive = (self.positive[e] if self.positive is not None
                            else np.zeros(nb_frames, dtype=bool))
            out[key] = Reduced(points, means, positive, nonzero)
        return out
