"""The lines of links.png, flows.png and hosts.png, from the result tables (front end).

One `Series` per link direction (per link, its directions summed, for a half-duplex link), flow
and host; rows are selected by entity and sorted by time (the CSV files are not in time order).
Big runs get one aggregate line per group (`aggregate_series`: the group's mean and 10th-90th
percentile band). `prediction_series` matches the rows of predictions.csv (``--check``) to the
lines: a flow's prediction to the flow's line, a link's to the line of the same link whose
directions include the prediction's. `normalize_table` accepts any table-like input (a Table, a
pandas DataFrame, lists with None) with the columns of the results schema.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from plot_tool.results import OPTIONAL_COLUMNS, SCHEMAS, Table
from plot_tool.series import (
    BACKLOG_PANEL,
    BUFFER_PANEL,
    HALF_DUPLEX_TITLE,
    LINK_TITLE,
    LINKS_FIGURE,
    LOSS_CAUSES,
    MIXED_LINK_TITLE,
    OTHER_LOSS_STYLE,
    RATE_PANEL,
    SOJOURN_PANEL,
    FigureSpec,
    LossCause,
    Panel,
    PredictionSeries,
    Series,
    column_total,
)

_LINK_VALUES = ("rate_mbps", "buffer_kb", "buffer_pkts", "backlog_kb", "drops", "failure_drops",
                "impairment_drops", "routing_rate_mbps", "aqm_drops", "marks", "sojourn_ms")


AGGREGATE_QUANTILES = (10.0, 90.0)


_FLOW_VALUES = ("send_rate_mbps", "recv_rate_mbps", "window_pkts", "rtt_ms")


_HOST_VALUES = ("send_rate_mbps", "recv_rate_mbps")


# Numeric columns the figures use beyond results.SCHEMAS/OPTIONAL_COLUMNS (newer results have
# them; older ones get zeros for the link column and the goodput panel for the flow one). Any
# other numeric links.csv column named "*_drops" is a cause of loss too.
_FIGURE_COLUMNS = {"links": ("impairment_drops", "aqm_drops", "marks", "sojourn_ms"),
                   "flows": ("arrival_rate_mbps",)}


_ZEROS_WHEN_ABSENT = {"links": ("impairment_drops", "aqm_drops", "marks")}


def link_series_of(summary: dict, table: Table, link_ids: Sequence[str]) -> list[Series]:
    """One series per link direction; one per link (directions summed) for a half-duplex link.

    A half-duplex link has one buffer and one transmitter shared by its two directions, so its
    buffer occupancy, backlog, losses and transmitted rate are the sums over the directions, per
    sample time (a direction without a row at some time was idle then and adds nothing). Columns
    absent from `table` (older results: ``backlog_kb``, ``failure_drops``, ``impairment_drops``,
    ``routing_rate_mbps``) give zeros; any other ``*_drops`` column is kept (a cause of loss).
    """
    out: list[Series] = []
    table = _with_optional_columns(table, "links")
    columns = tuple(c for c in _LINK_VALUES if c in table) + tuple(_other_loss_columns(table))
    by_link = RowIndex(table["link"], table["time_s"])
    for link_id in link_ids:
        info = summary.get("links", {}).get(link_id, {}) or {}
        aqm = info.get("queue", "droptail") != "droptail"
        rows = by_link.rows(link_id)
        if info.get("duplex") == "half":
            summed = tuple(c for c in columns if c != "sojourn_ms")    # a mean: not summed
            time, values = _sum_by_time(table["time_s"][rows],
                                        {c: table[c][rows] for c in summed})
            values["sojourn_ms"] = np.full(len(time), np.nan)
            out.append(Series(key=link_id, label=link_id, time=time, values=values,
                              entity=link_id, summed=True, aqm=aqm,
                              directions=tuple(_directions(info, table["direction"][rows]))))
            continue
        directions = table["direction"][rows]
        for direction in _directions(info, directions):
            time, values = _columns_of(table, rows[directions == direction], columns)
            out.append(Series(key=f"{link_id} {direction}", label=f"{link_id} {direction}",
                              time=time, values=values, entity=link_id, directions=(direction,),
                              aqm=aqm))
    return out


def link_groups(summary: dict, series: Sequence[Series], *, at_most: int = 0,
                 untiered_at_most: int = 0) -> dict[str, str] | None:
    """Series key -> group of a link line: the tier pair its link joins ("host\u2013edge
    links") in a tiered network (`plot_tool.tiers`), else "all links". None (draw the lines)
    when there are at most `at_most` lines in a tiered network, `untiered_at_most` in another."""
    from plot_tool.tiers import network_tiers

    tiers = network_tiers(summary)
    if len(series) <= (at_most if tiers is not None else untiered_at_most):
        return None
    out = {}
    for s in series:
        ends = (summary.get("links", {}).get(s.entity, {}) or {}).get("ends") or []
        if tiers is not None and len(ends) == 2 and all(e in tiers.tier for e in ends):
            out[s.key] = f"{tiers.link_group(str(ends[0]), str(ends[1]))} links"
        else:
            out[s.key] = "all links"
    return out


def flow_groups(summary: dict, series: Sequence[Series]) -> dict[str, str]:
    """Series key -> group of a flow line: its congestion-control algorithm."""
    flows = summary.get("flows", {}) or {}
    return {s.key: str((flows.get(s.entity, {}) or {}).get("algorithm") or "flows")
            for s in series}


_NO_VALUE_WHEN_IDLE = frozenset({"sojourn_ms"})
# members x sample times an aggregate line holds at once (8 MB of floats): a k = 24 fat tree's
# 20 736 link directions over 500 samples made 83 MB matrices (and nanpercentile's copies)
AGGREGATE_CELLS = 1 << 20


def aggregate_series(series: Sequence[Series], groups: dict[str, str], summary: dict, *,
               idle_is_zero: bool) -> list[Series]:
    """One `Series` per group (in order of first appearance): at each sample time of any member,
    the mean of every column over the group's members, and the `AGGREGATE_QUANTILES` as
    ``low`` / ``high``. A member without a row at a time counts as 0 when `idle_is_zero` (an
    idle link or host), and is left out otherwise (a flow not sending: NaN, no data), and
    always for the queue sojourn time (a mean over the interval's packets: none when idle). The label
    says what the line is: "<group> (n <what>): mean"."""
    order = list(dict.fromkeys(groups[s.key] for s in series))
    out: list[Series] = []
    for group in order:
        members = [s for s in series if groups[s.key] == group]
        time = np.unique(np.concatenate([s.time for s in members] or [np.zeros(0)]))
        columns = list(dict.fromkeys(c for s in members for c in s.values))
        # each member's rows as positions among the sample times; the members x times matrix
        # is made `step` times at a time (each time's mean and quantiles are its own column's)
        positions = [np.searchsorted(time, s.time) for s in members]
        step = max(1, AGGREGATE_CELLS // max(1, len(members)))
        mean, low, high = {}, {}, {}
        for column in columns:
            # idle: 0, except for a mean over the interval's packets (no packet: no value)
            idle = 0.0 if idle_is_zero and column not in _NO_VALUE_WHEN_IDLE else np.nan
            means, lows, highs = [], [], []
            for first in range(0, len(time), step):
                last = min(first + step, len(time))
                matrix = np.full((len(members), last - first), idle)
                for i, s in enumerate(members):
                    if column in s.values:
                        at = positions[i]
                        begin, end = np.searchsorted(at, (first, last))
                        matrix[i, at[begin:end] - first] = s.values[column][begin:end]
                means.append(_member_mean(matrix))
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)   # an instant with no value
                    quantiles = np.nanpercentile(matrix, AGGREGATE_QUANTILES, axis=0)
                lows.append(quantiles[0])
                highs.append(quantiles[1])
            empty = np.zeros(0)
            mean[column] = np.concatenate(means) if means else empty
            low[column] = np.concatenate(lows) if lows else empty
            high[column] = np.concatenate(highs) if highs else empty
        what = "link directions" if members[0].directions else (
            "flows" if not idle_is_zero else "hosts")
        if any(s.summed for s in members):
            what = "links"
        label = f"{group} ({len(members)} {what}): mean"
        out.append(Series(key=f"aggregate {group}", label=label, time=time, values=mean,
                          entity="", members=len(members), low=low, high=high,
                          aqm=any(s.aqm for s in members)))
    return out


def _member_mean(matrix: np.ndarray) -> np.ndarray:
    """The mean of each column of `matrix` (members x sample times) over its values (NaN: none;
    NaN where a column has none), summed member by member: the same sums whatever the times
    alongside (numpy's own reduction sums a single column pairwise), so that a long run's
    aggregate lines built a chunk of times at a time (`plot_tool.line_reduction`) are those of
    the whole table."""
    total = np.zeros(matrix.shape[1])
    count = np.zeros(matrix.shape[1])
    for row in matrix:
        present = ~np.isnan(row)
        total += np.where(present, row, 0.0)
        count += present
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def _other_loss_columns(table: Table) -> list[str]:
    """Numeric links.csv columns named ``*_drops`` that are not a known `LossCause`."""
    known = {c.column for c in LOSS_CAUSES}
    return [c for c in table if c.endswith("_drops") and c not in known
            and np.asarray(table[c]).dtype.kind == "f"]


def _loss_causes(series: Sequence[Series]) -> tuple[LossCause, ...]:
    """The causes of loss with at least one lost packet in the plotted `series`, in the order of
    `LOSS_CAUSES`, then any other ``*_drops`` column (labelled by its name)."""
    known = {c.column for c in LOSS_CAUSES}
    others = dict.fromkeys(c for s in series for c in s.values
                           if c.endswith("_drops") and c not in known)
    causes = list(LOSS_CAUSES) + [LossCause(c, c, OTHER_LOSS_STYLE) for c in others]
    return tuple(cause for cause in causes
                 if any(column_total(s, cause.column) > 0 for s in series))


def link_legend_title(series: Sequence[Series]) -> str:
    """What the lines of a link figure are: link directions, half-duplex links (directions
    summed), or both."""
    summed = [s.summed for s in series]
    if summed and all(summed):
        return HALF_DUPLEX_TITLE
    return MIXED_LINK_TITLE if any(summed) else LINK_TITLE


def links_figure_spec(series: Sequence[Series], *, backlog: bool = False) -> FigureSpec:
    """``links.png`` for these lines: the drops panel draws the causes of loss present
    (`loss_causes`; none: "no packets lost"), the legend title says what the lines are, and the
    buffer panel is `BACKLOG_PANEL` (simulated backlog, with the predicted one over it) when
    `backlog` is true. `LINKS_FIGURE` itself when that is what it shows."""
    drops = dataclasses.replace(LINKS_FIGURE.panels[1], losses=_loss_causes(series))
    panels: tuple[Panel, ...] = (BACKLOG_PANEL if backlog else BUFFER_PANEL, drops, RATE_PANEL)
    if any(s.aqm for s in series):
        panels += (SOJOURN_PANEL,)
    spec = FigureSpec(LINKS_FIGURE.filename, panels, link_legend_title(series))
    return LINKS_FIGURE if spec == LINKS_FIGURE else spec


def flow_series_of(table: Table, flow_ids: Sequence[str]) -> list[Series]:
    columns = _FLOW_VALUES + (("arrival_rate_mbps",) if "arrival_rate_mbps" in table else ())
    by_flow = RowIndex(table["flow"], table["time_s"])
    return [Series(key=f, label=f, time=t, values=v, entity=f)
            for f in flow_ids
            for t, v in [_columns_of(table, by_flow.rows(f), columns)]]


def host_series_of(table: Table, host_ids: Sequence[str]) -> list[Series]:
    by_host = RowIndex(table["host"], table["time_s"])
    return [Series(key=h, label=h, time=t, values=v, entity=h)
            for h in host_ids
            for t, v in [_columns_of(table, by_host.rows(h), _HOST_VALUES)]]


def prediction_series(table: Table, series: Sequence[Series], kind: str,
                       quantities: Sequence[str]) -> list[PredictionSeries]:
    """The predictions (``predictions.csv`` rows of `kind`) of `quantities` for each series.

    A row belongs to a series when its ``id`` is the series' entity and its ``direction`` fits
    (`_direction_fits`): a half-duplex link's prediction ("R1->R2+R2->R1") goes to the link's
    summed line, a full-duplex direction's ("R1->R2") to that direction's line. Rows of one
    series for the same time interval are added up. Series without a matching row get none.
    Ordered by quantity, then as `series`.
    """
    out: list[PredictionSeries] = []
    start, end = table["start_s"], table["end_s"]
    low, high = np.minimum(table["low"], table["high"]), np.maximum(table["low"], table["high"])
    of_kind = table["kind"] == kind
    for quantity in quantities:
        rows = of_kind & (table["quantity"] == quantity)
        for s in series:
            pieces: dict[tuple[float, float], list[float]] = {}
            for i in np.flatnonzero(rows & (table["id"] == s.entity)):
                if not _direction_fits(str(table["direction"][i]), s.directions):
                    continue
                piece = pieces.setdefault((float(start[i]), float(end[i])), [0.0, 0.0])
                piece[0] += float(low[i])
                piece[1] += float(high[i])
            if not pieces:
                continue
            keys = sorted(pieces)
            out.append(PredictionSeries(
                key=s.key, quantity=quantity,
                start=np.array([k[0] for k in keys]), end=np.array([k[1] for k in keys]),
                low=np.array([pieces[k][0] for k in keys]),
                high=np.array([pieces[k][1] for k in keys])))
    return out


def _direction_fits(direction: str, directions: Sequence[str]) -> bool:
    """Whether a predictions.csv ``direction`` ("A->B", "A->B+B->A" or "") fits a line covering
    `directions` (empty for flows and hosts)."""
    labels = {label for label in direction.split("+") if label}
    if not directions:
        return not labels
    if not labels:                     # a prediction for the whole link: only its summed line
        return len(directions) > 1
    return labels <= set(directions)


def _directions(info: dict, present: np.ndarray) -> list[str]:
    """Directions of a link in a stable order: ends[0]->ends[1], the reverse, then any others."""
    ordered: list[str] = []
    ends = info.get("ends")
    if isinstance(ends, (list, tuple)) and len(ends) == 2:
        ordered += [f"{ends[0]}->{ends[1]}", f"{ends[1]}->{ends[0]}"]
    ordered += list(info.get("directions", {}) or {})
    ordered += sorted(set(present.tolist()))
    seen: list[str] = []
    for direction in ordered:
        if direction not in seen:
            seen.append(direction)
    return seen


class RowIndex:
    """The rows of a table grouped by a key column (a flow, host or link id), each group in time
    order (rows of equal times in file order): sorted once, each group then found by binary
    search, so that selecting the rows of every entity costs O(rows log rows) rather than a scan
    of the whole table per entity (2 000 flows of a 3-million-row flows.csv: 11 s)."""

    def __init__(self, keys: np.ndarray, time: np.ndarray):
        self.order = np.lexsort((time, keys))         # stable: ties keep their file order
        self.keys = keys[self.order]

    def rows(self, key: str) -> np.ndarray:
        """The indices of the rows whose key is `key`, in time order."""
        low = np.searchsorted(self.keys, key, side="left")
        high = np.searchsorted(self.keys, key, side="right")
        return self.order[low:high]


def _columns_of(table: Table, rows: np.ndarray, columns: Sequence[str]
                ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The times and the named columns of `rows` (indices, in time order)."""
    return table["time_s"][rows], {c: table[c][rows] for c in columns}


def _sum_by_time(time: np.ndarray, columns: dict[str, np.ndarray]
                 ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Sum each column over the rows sharing a sample time; NaN only where every value is NaN."""
    unique, inverse = np.unique(time, return_inverse=True)
    inverse = inverse.reshape(-1)
    sums: dict[str, np.ndarray] = {}
    for name, values in columns.items():
        total = np.zeros(len(unique))
        count = np.zeros(len(unique))
        finite = ~np.isnan(values)
        np.add.at(total, inverse[finite], values[finite])
        np.add.at(count, inverse[finite], 1)
        total[count == 0] = np.nan
        sums[name] = total
    return unique, sums


def normalize_table(table: Any, name: str) -> Table:
    """A copy of `table` as numpy arrays: identifier columns as str, the others as float64.

    Accepts a Table, or anything indexable by column name and iterable over column names (e.g. a
    pandas DataFrame, or lists with None for missing values). Keeps the required and the optional
    columns of `name` (`SCHEMAS`, `OPTIONAL_COLUMNS`), and those the figures use when present
    (`_FIGURE_COLUMNS`; for links also any numeric ``*_drops`` column); a missing identifier
    (None, NaN) becomes "".
    """
    required, string_columns = SCHEMAS[name]
    optional = OPTIONAL_COLUMNS.get(name, ())
    wanted = _FIGURE_COLUMNS.get(name, ())
    columns = {str(c): table[c] for c in table}
    missing = [c for c in required if c not in columns]
    if missing:
        raise ValueError(f"{name} table: missing column(s) {', '.join(missing)}")
    out: Table = {}
    for column, values in columns.items():
        if column in string_columns:
            array = np.asarray(values)
            if array.dtype.kind not in "US":
                array = np.array(["" if v is None or (isinstance(v, float) and math.isnan(v))
                                  else str(v) for v in array.tolist()], dtype=str)
            out[column] = array.astype(str)
        elif column in required or column in optional:
            out[column] = np.asarray(values, dtype=np.float64)
        elif column in wanted or (name == "links" and column.endswith("_drops")):
            numbers = _floats(values)
            if numbers is not None:
                out[column] = numbers
    return out


def _floats(values: Any) -> np.ndarray | None:
    """`values` as float64 (None as NaN), or None when they are not numbers."""
    try:
        return np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        pass
    try:
        return np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _with_optional_columns(table: Table, name: str) -> Table:
    """`table` (not copied) plus zeros for the optional columns it lacks (older results)."""
    absent = [c for c in OPTIONAL_COLUMNS.get(name, ()) + _ZEROS_WHEN_ABSENT.get(name, ())
              if c not in table]
    if not absent:
        return table
    n = len(table["time_s"])
    return {**table, **{c: np.zeros(n) for c in absent}}
