"""The lines of a long run, read from disk a chunk at a time and reduced to what draws them.

A figure is about a thousand pixels wide. When a run has more than `REDUCE_ABOVE` sampling
instants, its traces are not read whole: `stream_lines` reads a trace file in chunks of complete
sampling instants (`instant_chunks`), builds each chunk's lines with the same functions as for a
whole table (per entity, half-duplex sums and aggregate lines alike), and hands each line's piece
to its `LineReducer`. The time axis is cut into `DRAWN_BUCKETS` buckets of equal length from 0;
in each bucket a line keeps only the samples that draw it: the first and the last, and, for every
value column (an aggregate's band edges included), the first sample holding its minimum, the
first holding its maximum and the first without a value (NaN, where the line breaks). Every kept
point is a sample of the run, in time order, so the drawn line passes through the same extremes
as the whole line would at the figure's resolution, and the memory is one chunk plus a few points
per bucket and line, whatever the length of the run. The sums of every column over all samples
(`Series.totals`) are kept for the legend's totals of lost packets.

Files netsim writes are in time order. A file that is not (readers accept any order), or whose
chunks give lines or columns the first chunk did not, is read whole instead (`Unstreamable`).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from plot_tool.results import Table
from plot_tool.series import Series

DRAWN_BUCKETS = 1000        # buckets over the run's duration: about one per pixel column


REDUCE_ABOVE = 4 * DRAWN_BUCKETS   # sampling instants beyond which a run's lines are reduced


MERGE_PARTS = 16            # a line's kept parts are joined into one when there are this many


class Unstreamable(Exception):
    """A trace file the reduced reading cannot take (not in time order, or lines that change
    from chunk to chunk): the caller reads it whole."""


def reduction_bucket_s(summary: dict) -> float | None:
    """The bucket length of a run whose lines are reduced: its duration over `DRAWN_BUCKETS`,
    when it has more than `REDUCE_ABOVE` sampling instants; None when its lines are drawn from
    every sample."""
    end, interval = summary.get("end_time_s"), summary.get("interval_s")
    if not isinstance(end, (int, float)) or not isinstance(interval, (int, float)):
        return None
    if not (math.isfinite(end) and math.isfinite(interval)) or end <= 0 or interval <= 0:
        return None
    if end / interval <= REDUCE_ABOVE:
        return None
    return float(end) / DRAWN_BUCKETS


def instant_chunks(chunks: Iterable[Table]) -> Iterator[Table]:
    """`chunks` of a trace regrouped so that no sampling instant is split between two of them:
    the rows of the last instant of a chunk wait for the next one. Unstreamable when a time is
    NaN or earlier than the one before it."""
    held: Table | None = None
    last_s = -math.inf
    for chunk in chunks:
        time = chunk["time_s"]
        if not len(time):
            continue
        if not bool(np.all(np.diff(time, prepend=last_s) >= 0)):
            raise Unstreamable("rows not in time order")
        last_s = float(time[-1])
        if held is not None:
            chunk = {name: np.concatenate((held[name], values)) for name, values in chunk.items()
                     if name in held}
            time = chunk["time_s"]
        cut = int(np.searchsorted(time, time[-1], side="left"))
        if cut:
            yield {name: values[:cut] for name, values in chunk.items()}
        held = {name: values[cut:] for name, values in chunk.items()}
    if held is not None:
        yield held


class LineReducer:
    """The kept samples of one line (`Series`), fed its pieces in time order (`add`)."""

    __slots__ = ("bucket_s", "template", "columns", "done", "pending", "totals")

    def __init__(self, bucket_s: float):
        self.bucket_s = bucket_s
        self.template: Series | None = None
        self.columns: tuple[str, ...] = ()
        self.done: list[dict[str, np.ndarray]] = []      # kept rows of finished buckets
        self.pending: dict[str, np.ndarray] | None = None  # kept rows of the last bucket so far
        self.totals: dict[str, float] = {}

    def add(self, piece: Series) -> None:
        """Take the next piece of the line (later samples than every piece before)."""
        arrays = _arrays_of(piece)
        if self.template is None:
            self.template = piece
            self.columns = tuple(piece.values)
            self.totals = dict.fromkeys(self.columns, 0.0)
        elif (tuple(piece.values) != self.columns
              or (piece.low is None) != (self.template.low is None)):
            raise Unstreamable(f"line {piece.key}: columns differ between chunks")
        if not len(piece.time):
            return
        for column in self.columns:
            self.totals[column] += float(np.nansum(piece.values[column]))
        if self.pending is not None:
            arrays = {name: np.concatenate((self.pending[name], values))
                      for name, values in arrays.items()}
        kept, last = _kept_rows(arrays, self.bucket_s)
        if last:
            self.done.append({name: values[kept[:last]] for name, values in arrays.items()})
            if len(self.done) >= MERGE_PARTS:   # one part, not one per chunk: memory by buckets
                self.done = [{name: np.concatenate([part[name] for part in self.done])
                              for name in arrays}]
        self.pending = {name: values[kept[last:]] for name, values in arrays.items()}

    def series(self) -> Series:
        """The reduced line: the template's identity, the kept samples, the totals."""
        assert self.template is not None
        parts = self.done + ([self.pending] if self.pending is not None else [])
        names = ["time"] + [f"v:{c}" for c in self.columns]
        if self.template.low is not None:
            names += [f"{edge}:{c}" for edge in ("lo", "hi") for c in self.columns]
        joined = {name: (np.concatenate([part[name] for part in parts]) if parts
                         else np.zeros(0)) for name in names}
        band = self.template.low is not None
        return dataclasses.replace(
            self.template, time=joined["time"],
            values={c: joined[f"v:{c}"] for c in self.columns},
            low={c: joined[f"lo:{c}"] for c in self.columns} if band else None,
            high={c: joined[f"hi:{c}"] for c in self.columns} if band else None,
            resolution_s=self.bucket_s, totals=dict(self.totals))


def _arrays_of(piece: Series) -> dict[str, np.ndarray]:
    """A piece's arrays by name: "time", "v:<column>", and for an aggregate "lo:" and "hi:"."""
    arrays = {"time": np.asarray(piece.time, dtype=np.float64)}
    arrays.update({f"v:{c}": np.asarray(v, dtype=np.float64) for c, v in piece.values.items()})
    if piece.low is not None and piece.high is not None:
        arrays.update({f"lo:{c}": np.asarray(v, dtype=np.float64) for c, v in piece.low.items()})
        arrays.update({f"hi:{c}": np.asarray(v, dtype=np.float64)
                       for c, v in piece.high.items()})
    return arrays


def _kept_rows(arrays: dict[str, np.ndarray], bucket_s: float) -> tuple[np.ndarray, int]:
    """(indices of the samples kept, in time order; how many of them are in buckets before the
    last one). Per bucket: the first and the last sample, and per value array the first
    minimum, the first maximum and the first NaN. Keeping these from a bucket's kept samples and
    later ones gives what keeping them from all its samples gives: the chunks add up exactly."""
    time = arrays["time"]
    n = len(time)
    bucket = np.floor(time / bucket_s)
    starts = np.flatnonzero(np.concatenate(([True], bucket[1:] != bucket[:-1])))
    sizes = np.diff(np.append(starts, n))
    keep = np.zeros(n, dtype=bool)
    keep[starts] = True
    keep[starts + sizes - 1] = True
    group = np.repeat(np.arange(len(starts)), sizes)
    index = np.arange(n)
    for name, values in arrays.items():
        if name == "time":
            continue
        missing = np.isnan(values)
        if missing.all():
            continue
        low = np.minimum.reduceat(np.where(missing, np.inf, values), starts)
        high = np.maximum.reduceat(np.where(missing, -np.inf, values), starts)
        for hits in (~missing & (values == low[group]), ~missing & (values == high[group]),
                     missing):
            first = np.minimum.reduceat(np.where(hits, index, n), starts)
            keep[first[first < n]] = True
    kept = np.flatnonzero(keep)
    return kept, int(np.searchsorted(kept, starts[-1]))


def stream_lines(chunks: Iterable[Table], build: Callable[[Table], Sequence[Series]],
                 bucket_s: float) -> list[Series]:
    """The reduced lines `build` makes of a trace read as `chunks` (Tables of consecutive rows,
    regrouped by `instant_chunks` before `build` sees them). Unstreamable when the file cannot
    be read so (the caller reads it whole)."""
    reducers: dict[str, LineReducer] = {}
    columns: frozenset[str] | None = None
    for chunk in instant_chunks(chunks):
        if columns is None:
            columns = frozenset(chunk)
        elif frozenset(chunk) != columns:
            raise Unstreamable("columns differ between chunks")
        pieces = build(chunk)
        if not reducers:
            reducers = {s.key: LineReducer(bucket_s) for s in pieces}
        if len(pieces) != len(reducers) or any(s.key not in reducers for s in pieces):
            raise Unstreamable("lines differ between chunks")
        for piece in pieces:
            reducers[piece.key].add(piece)
    if columns is None:
        raise Unstreamable("no rows")
    return [reducer.series() for reducer in reducers.values()]
