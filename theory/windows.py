"""The parts of a run `--check` compares: the intervals between the simulated joins and
departures (and the links' changes), time-weighted means and sums of trace columns over a window
of an interval, and the route changes in a window (every model assumes fixed routes)."""
from __future__ import annotations

import itertools

import numpy as np


def window_mean(times, values, start_s: float, end_s: float, interval_s: float) -> float | None:
    """Mean of the rows whose sample interval lies in [start_s, end_s], weighted by its length."""
    spans = np.diff(times, prepend=times[0] - interval_s) if len(times) else times
    rows = (times - spans >= start_s - 1e-9) & (times <= end_s + 1e-9) & ~np.isnan(values)
    if not rows.any():
        return None
    return float(np.average(values[rows], weights=spans[rows]))


def window_sum(times, values, start_s: float, end_s: float, interval_s: float) -> float:
    """Sum of the rows whose sample interval lies in [start_s, end_s]."""
    spans = np.diff(times, prepend=times[0] - interval_s) if len(times) else times
    rows = (times - spans >= start_s - 1e-9) & (times <= end_s + 1e-9) & ~np.isnan(values)
    return float(values[rows].sum())


def simulated_intervals(summary: dict, cuts=()) -> list:
    """(start, end, active flow ids) between the simulated joins and departures, and the
    instants `cuts` (the links' changes: `theory.link_changes`) within the run."""
    flows = summary["flows"]
    end_run = summary["end_time_s"]
    marks = sorted({f["start_s"] for f in flows.values()} |
                   {f["finish_s"] for f in flows.values() if f["finish_s"] is not None} | {end_run}
                   | {t for t in cuts if t < end_run})
    intervals = []
    for start, end in itertools.pairwise(marks):
        active = [fid for fid, f in flows.items() if f["start_s"] <= start and
                  (f["finish_s"] is None or f["finish_s"] >= end) and start < end_run]
        if active and end > start:
            intervals.append((start, end, active))
    return intervals


def route_changes(results, start_s: float, end_s: float) -> int:
    """Forwarding entries whose next hop or link changed (routes.csv rows that do not merely
    update a cost) in [start_s, end_s]."""
    try:
        routes = results.routes
    except (KeyError, OSError):
        return 0
    last: dict = {}
    changes = 0
    ecmp = bool((results.summary.get("routing") or {}).get("ecmp"))
    rows = list(zip(routes["time_s"], routes["router"], routes["destination"], routes["link"]))
    merged: list = []                 # ECMP: the rows of one installation's set are one entry
    for t, router, dest, link in rows:
        key = (str(router), str(dest))
        if ecmp and merged and merged[-1][0] == float(t) and merged[-1][1] == key:
            merged[-1][2].append(str(link))
        else:
            merged.append((float(t), key, [str(link)]))
    for t, key, links in merged:
        if key in last and last[key] != links and start_s - 1e-9 <= t <= end_s + 1e-9:
            changes += 1
        last[key] = links
    return changes
