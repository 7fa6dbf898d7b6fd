"""Where a line of a run figure breaks: the one rule, applied to every panel (front end).

A line breaks at a NaN value and where two consecutive samples are more than ``GAP_FACTOR``
sampling intervals apart, except, for links and hosts, across a gap bounded by two zero values (an
idle entity writes no rows, and the rows around the gap are zero: drawing zero across it is
exact). Values that cover an interval are drawn as steps over ``(time - interval, time]``.
"""
from __future__ import annotations

import numpy as np

#   "interval": the value covers (time - interval, time]: drawn as steps, each value held over its
#               interval;
#   "instant":  the value was sampled at that instant: straight segments between samples;
#   "sparse":   interval values that may be missing (NaN): steps that break where a value is
#               missing, with a dot on a sample that has no neighbour.
STYLES = ("interval", "instant", "sparse")


# A line breaks where consecutive samples are more than this many sampling intervals apart.
GAP_FACTOR = 1.5


def _run_starts(time: np.ndarray, values: np.ndarray, interval_s: float | None,
                idle_is_zero: bool, resolution_s: float = 0.0) -> np.ndarray:
    """Indices of the samples that begin a run (0 first): a sample more than `GAP_FACTOR`
    sampling intervals (plus `resolution_s` for a reduced line, whose consecutive samples may be
    that far apart without a gap: `plot_tool.line_reduction`) after the previous one, unless
    `idle_is_zero` and both bound a gap with zero values (an idle entity: zero all along the
    gap)."""
    if interval_s is None or len(time) < 2:
        return np.zeros(1 if len(time) else 0, dtype=np.intp)
    gap = np.diff(time) > GAP_FACTOR * interval_s + resolution_s
    if idle_is_zero:
        gap &= ~((values[:-1] == 0) & (values[1:] == 0))
    return np.concatenate(([0], np.flatnonzero(gap) + 1))


def interval_start(time: np.ndarray, interval_s: float | None) -> np.ndarray:
    """Start of the sampling interval that ends at each of `time` (sampling instants are the
    multiples of `interval_s`, and the end of the run)."""
    if interval_s is None:
        return np.asarray(time, dtype=np.float64)
    return np.maximum(0.0, interval_s * (np.ceil(time / interval_s - 1e-6) - 1))


def line_arrays(time: np.ndarray, values: np.ndarray, *, style: str,
                 interval_s: float | None, idle_is_zero: bool, resolution_s: float = 0.0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The x and y arrays that draw one series in one panel: the one place deciding where lines
    break.

    A line breaks (a NaN point) between runs of samples (`_run_starts`: a gap of more than
    `GAP_FACTOR` intervals, except an idle gap bounded by zeros when `idle_is_zero`), and at a NaN
    value. "interval" and "sparse" values are drawn with ``drawstyle="steps-pre"``: each run
    starts with a point at the start of its first interval, so that every value is held over its
    whole interval ``(time - interval, time]``, the first of a run included. "instant" values are
    joined by straight segments within a run.
    """
    time = np.asarray(time, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    if not len(time):
        return time, values
    starts = _run_starts(time, values, interval_s, idle_is_zero, resolution_s)
    if style == "instant":
        later = starts[1:]
        if not len(later):
            return time, values
        return (np.insert(time, later, (time[later - 1] + time[later]) / 2),
                np.insert(values, later, np.nan))
    lead = interval_start(time[starts], interval_s)
    x = np.insert(time, starts, lead)
    y = np.insert(values, starts, values[starts])
    if len(starts) > 1:
        # before each later run's lead point: a NaN point at the same x (with steps-pre, a NaN
        # point elsewhere would draw a horizontal segment from it to the lead point)
        at = starts[1:] + np.arange(1, len(starts))
        x = np.insert(x, at, lead[1:])
        y = np.insert(y, at, np.nan)
    return x, y


def isolated(time: np.ndarray, values: np.ndarray, interval_s: float | None,
              idle_is_zero: bool, resolution_s: float = 0.0) -> np.ndarray:
    """Mask of the samples with a value whose neighbours in their run are both missing: drawn
    as a step of one interval only, so they also get a dot."""
    n = len(time)
    if not n:
        return np.zeros(0, dtype=bool)
    finite = np.isfinite(values)
    starts = np.zeros(n, dtype=bool)
    starts[_run_starts(time, values, interval_s, idle_is_zero, resolution_s)] = True
    ends = np.append(starts[1:], True)
    left_missing = starts | np.concatenate(([True], ~finite[:-1]))
    right_missing = ends | np.append(~finite[1:], True)
    return finite & left_missing & right_missing
