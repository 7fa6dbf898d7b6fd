"""The report's sampling grid and the encoding of its series (see `plot_tool.report`): every
series on the run's sampling instants, min/max-preserving buckets, values quantized to 1/QUANT of
their largest magnitude.
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
        finite = np.isfinite(values)
        sums = np.add.reduceat(np.where(finite, values, 0.0), self.starts)
        counts = np.add.reduceat(finite.astype(float), self.starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def extremes(self, values: np.ndarray) -> np.ndarray:
        """Min and max of each bucket, in the order they occur: 2 values per bucket."""
        lo = np.fmin.reduceat(values, self.starts)
        hi = np.fmax.reduceat(values, self.starts)
        bucket = np.repeat(np.arange(len(self.starts)), self.sizes)
        index = np.arange(self.n)
        first_lo = np.minimum.reduceat(np.where(values == lo[bucket], index, self.n), self.starts)
        first_hi = np.minimum.reduceat(np.where(values == hi[bucket], index, self.n), self.starts)
        lo_first = first_lo <= first_hi
        out = np.empty(2 * len(self.starts))
        out[0::2] = np.where(lo_first, lo, hi)
        out[1::2] = np.where(lo_first, hi, lo)
        return out


def sig(value: Any, digits: int = 6) -> Any:
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else None
    return value
