"""The report of a sweep (see `plot_tool.report`): one interactive chart per plot spec of
sweep.json, the plotly drawing of the data that the front end `plot_tool.sweep_data` computes
for the PNG figures too (the same series, labels, ticks, footnote and theory overlays), and the
table of runs.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from plot_tool.report_grid import sig
from plot_tool.sweep_data import Overlay, SweepPlotData, plot_data, read_sweep, sweep_units
from plot_tool.sweep_stats import format_value, is_ok

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
DASH = {"dash": "dash", "width": 1.5}


def sweep_data(directory: Path) -> dict:
    """The sweep page: one chart per plot spec (a spec the rows cannot serve gets its error
    instead of a chart), and the table of runs."""
    sweep, rows = read_sweep(directory)
    units = sweep_units(directory, sweep)
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
    traces = [_series_trace(data, s, colors[format_value(s.line)]) for s in data.series]
    for overlay in data.overlays:
        traces += _overlay_traces(overlay, data, colors)
    xaxis: dict[str, Any] = {"title": {"text": data.xlabel},
                             "type": "log" if data.logx else None}
    if data.x_ticks:                      # every swept value labelled, and only those
        xaxis.update(tickmode="array", tickvals=[sig(v) for v in data.x_ticks],
                     ticktext=[f"{v:g}" for v in data.x_ticks])
    yaxis: dict[str, Any] = {"title": {"text": data.ylabel}, "type": "log" if data.logy else None}
    if data.y_from_zero:
        yaxis["rangemode"] = "tozero"
    layout = {"title": {"text": data.title}, "xaxis": xaxis, "yaxis": yaxis,
              "legend": {"title": {"text": data.legend_title or ""}},
              "margin": {"t": 60}, "height": 460}
    return {"title": data.title, "file": plot.get("file"), "traces": traces, "layout": layout,
            "note": data.footnote}


def _listed(values: np.ndarray) -> list:
    if values.dtype.kind == "f":
        return [sig(float(v)) for v in values]
    return [str(v) for v in values]


def _series_trace(data: SweepPlotData, s: Any, color: str) -> dict:
    numeric = data.categories is None
    trace: dict[str, Any] = {"type": "scatter", "mode": "lines+markers" if numeric else "markers",
             "x": _listed(s.x), "y": _listed(s.mean), "name": data.series_label(s),
             "line": {"color": color}, "marker": {"size": 7},
             "customdata": [int(k) for k in s.n],
             "hovertemplate": "%{x}: %{y:.4g} (%{customdata} runs)<extra>%{fullData.name}</extra>"}
    if data.error_bars != "none":
        trace["error_y"] = {"type": "data", "symmetric": False, "array": _listed(s.upper),
                            "arrayminus": _listed(s.lower), "color": color}
    return trace


def _overlay_traces(overlay: Overlay, data: SweepPlotData,
                    colors: Mapping[str, str]) -> list[dict]:
    """One theory overlay as plotly traces, dashed, in the colour of its line (black for a
    model or a reference line)."""
    color = colors.get(overlay.line or "", "black") if overlay.line is not None else "black"
    if overlay.kind == "level":
        return [{"type": "scatter", "mode": "lines", "x": _listed(overlay.x),
                 "y": [sig(float(overlay.y[0]))] * len(overlay.x), "name": overlay.label,
                 "line": {"color": color, **DASH}}]
    if overlay.kind == "curve":
        return [{"type": "scatter", "mode": "lines" if len(overlay.x) > 1 else "markers",
                 "x": _listed(overlay.x), "y": _listed(overlay.y), "name": overlay.label,
                 "line": {"color": color, **DASH}, "marker": {"symbol": "x", "color": color}}]
    if overlay.kind == "values":
        return [{"type": "scatter", "mode": "lines" if data.categories is None else "markers",
                 "x": _listed(overlay.x), "y": _listed(overlay.y), "name": overlay.label,
                 "line": {"color": color, **DASH},
                 "marker": {"symbol": "line-ew-open", "size": 16, "color": color}}]
    assert overlay.high is not None
    edge = {"color": color, "dash": "dash", "width": 1}
    return [{"type": "scatter", "mode": "lines", "x": _listed(overlay.x),
             "y": _listed(overlay.y), "line": edge, "legendgroup": overlay.label,
             "showlegend": False, "name": overlay.label},
            {"type": "scatter", "mode": "lines", "x": _listed(overlay.x),
             "y": _listed(overlay.high), "fill": "tonexty", "opacity": 0.6, "line": edge,
             "legendgroup": overlay.label, "name": overlay.label}]
