"""The report's sampling grid and the encoding of its series (see `plot_tool.report`): every
series on the run's sampling instants, min/max-preserving buckets, values quantized to 1/QUANT of
their largest magnitude.

`SampleGrid` is the same grid computed where it is needed instead of stored (a run of 20 million
intervals has a 160 MB grid); `bucket_means` and `bucket_extremes` reduce any run of whole
buckets, so that a trace read a chunk at a time (`plot_tool.report_series`) gets the very numbers
of the whole series.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

QUANT = 10000              # values quantized to max|v| / QUANT


def encode(values: Any) -> Any:
    """A numeric array for the page: ``{"z": n}`` when every value is 0, else ``{"s": scale,
    "q": [int or null, ...]}`` with value = q * scale (NaN -> null)."""
    v = np.asarray(values, dtype=float)
    finite = np.isfinite(v)
    if not finite.any():
        return {"s": 1.0, "q": [None] * len(v)}
    top = float(np.max(np.abs(v[finite])))
    if top == 0.0 and finite.all():
        return {"z": len(v)}
    scale = top / QUANT if top > 0 else 1.0
    q = np.where(finite, np.rint(np.where(finite, v, 0.0) / scale), 0).astype(np.int64)
    out: list = q.tolist()
    if not finite.all():
        for i in np.flatnonzero(~finite):
            out[i] = None
    return {"s": float(f"{scale:.6g}"), "q": out}


def sampling_grid(summary: Mapping[str, Any]) -> np.ndarray:
    """The sampling instants of a run: interval_s, 2 interval_s, ..., and end_time_s."""
    interval = float(summary.get("interval_s") or 0.1)
    end = float(summary.get("end_time_s") or 0.0)
    n = math.floor(end / interval + 1e-9) if end > 0 else 0
    grid = interval * np.arange(1, n + 1, dtype=float)
    if not len(grid) or end - grid[-1] > 1e-9 * max(1.0, end):
        grid = np.append(grid, end)
    return grid


def grid_index(grid: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Index of the grid instant nearest to each time."""
    if not len(times):
        return np.zeros(0, dtype=int)
    right = np.clip(np.searchsorted(grid, times), 1, max(1, len(grid) - 1))
    left = right - 1
    if len(grid) == 1:
        return np.zeros(len(times), dtype=int)
    return np.where(np.abs(grid[left] - times) <= np.abs(grid[right] - times), left, right)


class SampleGrid:
    """The sampling instants of `sampling_grid`, computed on demand: ``at(k)`` is exactly
    ``sampling_grid(summary)[k]`` and ``index(times)`` exactly ``grid_index(sampling_grid(summary),
    times)``, with memory for the instants asked about only."""

    __slots__ = ("interval_s", "end_s", "regular", "n")

    def __init__(self, summary: Mapping[str, Any]):
        self.interval_s = interval = float(summary.get("interval_s") or 0.1)
        self.end_s = end = float(summary.get("end_time_s") or 0.0)
        self.regular = math.floor(end / interval + 1e-9) if end > 0 else 0
        last = interval * float(self.regular) if self.regular else None
        appended = last is None or end - last > 1e-9 * max(1.0, end)
        self.n = self.regular + (1 if appended else 0)

    def at(self, index: Any) -> np.ndarray:
        """The instants of the grid indices `index` (an array of ints in [0, n))."""
        k = np.asarray(index, dtype=np.int64)
        return np.where(k < self.regular, self.interval_s * (k + 1).astype(float), self.end_s)

    def values(self) -> np.ndarray:
        """The whole grid (`sampling_grid`)."""
        return self.at(np.arange(self.n))

    def index(self, times: np.ndarray) -> np.ndarray:
        """Index of the grid instant nearest to each time (`grid_index`, ties to the earlier)."""
        t = np.asarray(times, dtype=float)
        n = self.n
        if not len(t) or n == 1:
            return np.zeros(len(t), dtype=int)
        # the number of instants before each time (searchsorted): every instant at an index below
        # base is earlier than t, every one at base + 9 or beyond is not, whatever the rounding of
        # t / interval_s
        with np.errstate(invalid="ignore", over="ignore"):
            estimate = np.floor(t / self.interval_s) - 4
        estimate = np.where(np.isnan(t), n, estimate)
        base = np.clip(estimate, 0, n).astype(np.int64)
        before = base.copy()
        for offset in range(9):
            k = base + offset
            before += (k < n) & (self.at(np.minimum(k, n - 1)) < t)
        right = np.clip(before, 1, n - 1)
        left = right - 1
        return np.where(np.abs(self.at(left) - t) <= np.abs(self.at(right) - t), left, right)

    def first(self, holds: Any) -> int:
        """The first grid index whose instant satisfies `holds` (a test on a float that, once true
        along the grid, stays true), or n."""
        low, high = 0, self.n
        while low < high:
            middle = (low + high) // 2
            if holds(float(self.at(middle))):
                high = middle
            else:
                low = middle + 1
        return low


class Buckets:
    """Consecutive groups of grid samples: frames (means) and series (min/max) buckets."""

    def __init__(self, n: int, count: int):
        count = max(1, min(count, n))
        edges = np.linspace(0, n, count + 1).round().astype(int)
        self.starts = edges[:-1]
        self.ends = edges[1:]
        self.sizes = self.ends - self.starts
        self.n = n

    def means(self, values: np.ndarray) -> np.ndarray:
        """The mean of the finite values of each bucket (NaN for a bucket without one)."""
        return bucket_means(values, self.starts)

    def extremes(self, values: np.ndarray) -> np.ndarray:
        """Min and max of each bucket, in the order they occur: 2 values per bucket."""
        return bucket_extremes(values, self.starts)


def bucket_means(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The mean of the finite values of each bucket of `values` (buckets: `starts`, increasing,
    the last one running to the end), NaN for a bucket without one. A bucket's mean depends on
    that bucket's values only (numpy sums each of them alone, pairwise)."""
    finite = np.isfinite(values)
    sums = np.add.reduceat(np.where(finite, values, 0.0), starts)
    counts = np.add.reduceat(finite.astype(float), starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def bucket_extremes(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Min and max of each bucket of `values` (as `bucket_means`), in the order they occur (the
    first sample equal to each): 2 values per bucket, NaN ignored unless all are."""
    n = len(values)
    sizes = np.diff(starts, append=n)
    lo = np.fmin.reduceat(values, starts)
    hi = np.fmax.reduceat(values, starts)
    bucket = np.repeat(np.arange(len(starts)), sizes)
    index = np.arange(n)
    first_lo = np.minimum.reduceat(np.where(values == lo[bucket], index, n), starts)
    first_hi = np.minimum.reduceat(np.where(values == hi[bucket], index, n), starts)
    lo_first = first_lo <= first_hi
    out = np.empty(2 * len(starts))
    out[0::2] = np.where(lo_first, lo, hi)
    out[1::2] = np.where(lo_first, hi, lo)
    return out


def sig(value: Any, digits: int = 6) -> Any:
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else None
    return value
