"""What changed on the plotted links during a run, as data (front end; no matplotlib): the spans
in which each was down (summary.json ``links.<id>.down_s``) and, for a link with a
``rate_schedule``, its capacity over time (``rate_mbps`` until the first change, then each
entry of ``rate_schedule_mbps``). links.png and routing.png draw them alike
(`plot_tool.png.link_changes`): the down spans shaded in the link's colour across the panels, the
capacity as a step line in the rate panel, each with a legend entry.

A ``delay_schedule`` is not drawn: no panel of these figures shows a delay.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from plot_tool.series import Series, run_end_s


@dataclass
class LinkChanges:
    """The changes of one plotted link: drawn in the colour of its first line (`key`)."""

    link: str
    key: str                      # Series.key of the link's first plotted line
    down_s: tuple[tuple[float, float], ...] = ()
    # the capacity as steps, None for a link without rate_schedule: capacity_mbps[i] from
    # capacity_time[i] on; the last point repeats the last value at the end of the run
    capacity_time: np.ndarray | None = None
    capacity_mbps: np.ndarray | None = None

    @property
    def down_label(self) -> str:
        """"L1 down: 3\u201312 s, 15\u201316 s (shaded)" (en dashes)."""
        when = ", ".join(f"{start:g}\u2013{end:g} s" for start, end in self.down_s)
        return f"{self.link} down: {when} (shaded)"

    @property
    def capacity_label(self) -> str:
        return f"{self.link} capacity (rate_schedule)"


def link_changes(summary: dict, series: Sequence[Series]) -> list[LinkChanges]:
    """The `LinkChanges` of each link plotted as one or more lines of its own (aggregate lines
    have none), in the order of its first line, for the links that failed or have a
    ``rate_schedule``; empty for runs with neither."""
    links = summary.get("links") or {}
    end = run_end_s(summary)
    out: list[LinkChanges] = []
    seen: set[str] = set()
    for s in series:
        if not s.directions or s.members > 1 or s.entity in seen:
            continue
        seen.add(s.entity)
        info = links.get(s.entity) or {}
        spans = tuple((float(a), float(b)) for a, b in info.get("down_s") or ())
        steps = capacity_steps(info, end if end is not None else _last_time(s))
        if spans or steps is not None:
            time, mbps = steps if steps is not None else (None, None)
            out.append(LinkChanges(s.entity, s.key, spans, time, mbps))
    return out


def capacity_steps(info: dict, end_s: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(times, rates) of a link's capacity from 0 to `end_s` as steps held from each time on
    (the last point: the last rate again at `end_s`), from its summary.json entry `info`; None
    for a link without ``rate_schedule_mbps`` (not time-varying, or older results). Changes at
    or after `end_s` are left out (the run ended before them)."""
    schedule = info.get("rate_schedule_mbps")
    rate = info.get("rate_mbps")
    if not schedule or rate is None:
        return None
    time, mbps = [0.0], [float(rate)]
    for at_s, value in schedule:
        if at_s >= end_s:
            break
        if at_s <= 0.0:
            mbps[-1] = float(value)
            continue
        time.append(float(at_s))
        mbps.append(float(value))
    time.append(float(end_s))
    mbps.append(mbps[-1])
    return np.array(time), np.array(mbps)


def _last_time(s: Series) -> float:
    """The end of the time axis of a run whose summary has no ``end_time_s``: the last sample
    of the line (0 without one)."""
    return float(s.time[-1]) if len(s.time) else 0.0
