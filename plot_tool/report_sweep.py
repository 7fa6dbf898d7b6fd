"""The report of a sweep (see `plot_tool.report`): one interactive chart per plot spec of
sweep.json, the plotly drawing of the data that the front end `plot_tool.sweep_data` computes
for the PNG figures too (the same series, labels, ticks, footnote and theory overlays), and the
table of runs.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from plot_tool.report_grid import sig
from plot_tool.sweep_data import (
    Overlay,
    SweepPlotData,
    plot_data,
    read_sweep,
    series_offsets,
    sweep_units,
    x_positions,
)
from plot_tool.sweep_stats import format_value, is_ok

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
DASH = {"dash": "dash", "width": 1.5}


def sweep_data(directory: Path) -> dict:
    """The sweep page: one chart per plot spec (a spec the rows cannot serve gets its error
    instead of a chart), and the table of runs."""
    sweep, rows = read_sweep(directory)
    units = sweep_units(directory)
    charts = []
    for plot in sweep.get("plots") or []:
        try:
            charts.append(sweep_chart(plot, rows, units))
        except (KeyError, ValueError) as exc:
            charts.append({"title": str(plot.get("title") or plot.get("file")), "error": str(exc),
                           "traces": [], "layout": {}})
    columns = list(rows[0]) if rows else []
    return {"kind": "sweep", "title": str(sweep.get("name", directory.name)),
            "description": str(sweep.get("description", "")),
            "charts": charts, "runs": {"columns": columns,
                                       "rows": [[row.get(c, "") for c in columns] for row in rows]},
            "failed": sum(1 for row in rows if not is_ok(row))}


def sweep_chart(plot: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                units: Mapping[str, Any]) -> dict:
    """One chart: plotly traces and layout of `plot_data`, and its footnote."""
    data = plot_data(plot, rows, units=units)
    colors = {format_value(s.line): PALETTE[i % len(PALETTE)] for i, s in enumerate(data.series)}
    # a text x: categories at 0, 1, ... and each series beside the others, as in the figure
    offsets = (series_offsets(len(data.series)) if data.categories is not None
               else [0.0] * len(data.series))
    offset_of = {format_value(s.line): o for s, o in zip(data.series, offsets)}
    traces = [_series_trace(data, s, colors[format_value(s.line)], o)
              for s, o in zip(data.series, offsets)]
    for overlay in data.overlays:
        traces += _overlay_traces(overlay, data, colors, offset_of)
    xaxis: dict[str, Any] = {"title": {"text": plain(data.xlabel)}, "zeroline": False,  # (a line at
                             # x = 0 looked like an error bar; the figure has none)
                             "type": "log" if data.logx and data.categories is None else None}
    if data.x_ticks and data.label_every_x:    # every swept value labelled, and only those
        xaxis.update(tickmode="array", tickvals=[sig(v) for v in data.x_ticks],
                     ticktext=[f"{v:g}" for v in data.x_ticks])
    elif data.categories is not None:
        xaxis.update(tickmode="array", tickvals=list(range(len(data.categories))),
                     ticktext=[plain(c) for c in data.categories],
                     range=[-0.5, len(data.categories) - 0.5])
    yaxis: dict[str, Any] = {"title": {"text": plain(data.ylabel)},
                             "type": "log" if data.logy else None}
    if data.logy:                         # numbers, not plotly's lone digits ("2 3 4 ... 8")
        ticks = _log_ticks(traces)
        if ticks:
            yaxis.update(tickmode="array", tickvals=ticks, ticktext=[f"{v:g}" for v in ticks])
    if data.y_from_zero:                  # from 0 to 5 % above the top of what is drawn, as the
        yaxis["range"] = [0, _top(traces) * 1.05]         # figure (error bars may reach below 0)
    layout = {"title": {"text": plain(data.title)}, "xaxis": xaxis, "yaxis": yaxis,
              "legend": {"title": {"text": plain(data.legend_title or "")}},
              "margin": {"t": 60}, "height": 460}
    return {"title": data.title, "file": plot.get("file"), "traces": traces, "layout": layout,
            "note": data.footnote}


def _listed(values: np.ndarray) -> list:
    if values.dtype.kind == "f":
        return [sig(float(v)) for v in values]
    return [str(v) for v in values]


def plain(text: str) -> str:
    """`text` as plotly shows it literally: it reads <b>, <br>, <a href=...> and &...; in the
    strings it is given as markup, so an id holding them (ids may) would be shown as another
    name, or as a link out of the page."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _log_ticks(traces: list) -> list[float]:
    """Ticks of a logarithmic y axis over what `traces` draw (error bars included): 1, 2 and 5
    times the powers of ten within the range, or 1 to 9 times them when that gives fewer than
    three; each labelled with its value, as the PNG's are."""
    values = [v for point in _drawn(traces) for v in point if np.isfinite(v) and v > 0]
    if not values:
        return []
    low, high = min(values), max(values)
    for mantissas in ((1, 2, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9)):
        ticks = [float(f"{m * 10.0 ** k:.12g}")
                 for k in range(math.floor(math.log10(low)), math.floor(math.log10(high)) + 1)
                 for m in mantissas if low <= m * 10.0 ** k <= high]
        if len(ticks) >= 3:
            break
    return ticks


def _drawn(traces: list):
    """(y, top, bottom) of every point the traces draw: its value and its error bar's ends."""
    for trace in traces:
        ys = [float(y) for y in trace.get("y", []) if isinstance(y, (int, float))]
        error = trace.get("error_y") or {}
        ups = error.get("array") or [0.0] * len(ys)
        downs = error.get("arrayminus") or ups
        for y, up, down in zip(ys, ups, downs):
            yield y, y + up, y - down


def _top(traces: list) -> float:
    """The highest y any trace reaches with its error bar (1 when nothing positive is drawn)."""
    tops = [top for _, top, _ in _drawn(traces) if np.isfinite(top)]
    top = max(tops, default=0.0)
    return top if top > 0 else 1.0


def _series_trace(data: SweepPlotData, s: Any, color: str, offset: float = 0.0) -> dict:
    numeric = data.categories is None
    trace: dict[str, Any] = {"type": "scatter", "mode": "lines+markers" if numeric else "markers",
             "x": _listed(s.x) if numeric else _at(s.x, data, offset),
             "y": _listed(s.mean), "name": plain(data.series_label(s)),
             "line": {"color": color}, "marker": {"size": 7},
             "customdata": [int(k) for k in s.n],
             "hovertemplate": "%{x}: %{y:.4g} (%{customdata} runs)<extra>%{fullData.name}</extra>"}
    if not numeric:                       # (the category's name, not its position)
        trace["text"] = [plain(str(v)) for v in s.x]
        trace["hovertemplate"] = trace["hovertemplate"].replace("%{x}", "%{text}")
    if data.error_bars != "none":
        trace["error_y"] = {"type": "data", "symmetric": False, "array": _listed(s.upper),
                            "arrayminus": _listed(s.lower), "color": color}
    return trace


def _at(x: np.ndarray, data: SweepPlotData, offset: float) -> list:
    """Positions on the x axis: the values, or (a text x) the categories' index plus `offset`."""
    if data.categories is None:
        return _listed(x)
    return [sig(float(v)) for v in x_positions(x, data.categories) + offset]


def _overlay_traces(overlay: Overlay, data: SweepPlotData, colors: Mapping[str, str],
                    offset_of: Mapping[str, float] | None = None) -> list[dict]:
    """One theory overlay as plotly traces, dashed, in the colour of its line (black for a
    model or a reference line), beside its line's markers on a text x."""
    color = colors.get(overlay.line or "", "black") if overlay.line is not None else "black"
    offset = (offset_of or {}).get(overlay.line or "", 0.0) if overlay.line is not None else 0.0
    overlay = replace(overlay, x=np.asarray(_at(overlay.x, data, offset)))
    if overlay.kind == "level":
        return [{"type": "scatter", "mode": "lines", "x": _listed(overlay.x),
                 "y": [sig(float(overlay.y[0]))] * len(overlay.x), "name": plain(overlay.label),
                 "line": {"color": color, **DASH}}]
    if overlay.kind == "curve":
        return [{"type": "scatter", "mode": "lines" if len(overlay.x) > 1 else "markers",
                 "x": _listed(overlay.x), "y": _listed(overlay.y), "name": plain(overlay.label),
                 "line": {"color": color, **DASH}, "marker": {"symbol": "x", "color": color}}]
    if overlay.kind == "values":
        return [{"type": "scatter", "mode": "lines" if data.categories is None else "markers",
                 "x": _listed(overlay.x), "y": _listed(overlay.y), "name": plain(overlay.label),
                 "line": {"color": color, **DASH},
                 "marker": {"symbol": "line-ew-open", "size": 16, "color": color}}]
    assert overlay.high is not None
    edge = {"color": color, "dash": "dash", "width": 1}
    return [{"type": "scatter", "mode": "lines", "x": _listed(overlay.x),
             "y": _listed(overlay.y), "line": edge, "legendgroup": plain(overlay.label),
             "showlegend": False, "name": plain(overlay.label)},
            {"type": "scatter", "mode": "lines", "x": _listed(overlay.x),
             "y": _listed(overlay.high), "fill": "tonexty", "opacity": 0.6, "line": edge,
             "legendgroup": plain(overlay.label), "name": plain(overlay.label)}]
