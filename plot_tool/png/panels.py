"""Drawing links.png, flows.png and hosts.png from their `FigureData` (matplotlib): one panel per
`Panel`, every line through `plot_tool.lines.line_arrays`, the drops panel by cause of loss, the
analytic predictions dashed (a shaded band where they are an interval), one legend right of the
panels.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from plot_tool.layout import finish_layout
from plot_tool.lines import STYLES, interval_start, isolated, line_arrays
from plot_tool.link_changes import LinkChanges
from plot_tool.png.common import (
    Y_TICKS,
    ViewLocator,
    add_legend,
    assign_colors,
    finish_time_axis,
    panel_axes,
    unit_labels,
    zero_based_ylim,
)
from plot_tool.png.link_changes import draw_capacities, shade_down_spans
from plot_tool.series import (
    FLOWS_FIGURE,
    LOSSES_AND_MARKS_YLABEL,
    MARKS,
    PREDICTION_BAND_LABEL,
    PREDICTION_LABEL,
    RATE_PANEL,
    FigureSpec,
    LossCause,
    Panel,
    PredictionSeries,
    Series,
    column_total,
    sampling_interval_s,
)

LINE_WIDTH = 1.2
# the predictions' dashes (points on, off); predictions that coincide share the line, each
# drawing every n-th dash in its colour
DASH = (4.0, 2.5)
# a predicted interval's shade: neutral, its edges carry the colour of whose it is
BAND_SHADE = (0.35, 0.35, 0.35, 0.15)


NO_LOSS_TEXT = "no packets lost"


LOSS_HEADER = "packets lost (drops panel):"


LOSS_AND_MARK_HEADER = "packets lost or CE-marked (drops panel):"   # when marks are drawn


def draw_figure(fig: Figure, spec: FigureSpec, series: list[Series], summary: dict,
                 predictions: Sequence[PredictionSeries] = (), notes: Sequence[str] = (),
                 link_changes: Sequence[LinkChanges] = ()) -> None:
    """Draw `series` into `fig`: one panel per `spec.panels` entry, shared time axis, one legend.

    `predictions` are drawn over the panels whose ``prediction`` is their quantity, in the colour
    of their series; the legend then has an entry for them. A losses panel adds an entry per
    cause drawn. `link_changes` (links.png): the down spans shaded over every panel and the
    capacity of a time-varying link in the rate panel (`plot_tool.png.link_changes`), with an
    entry each."""
    assign_colors(series)
    colors = {s.key: s.color for s in series}
    axes = panel_axes(fig, len(spec.panels))
    labels = unit_labels(summary)
    interval_s = sampling_interval_s(summary, series)
    drawn = {"line": False, "band": False}
    extra: list[Any] = []
    capacities: list[Any] = []
    for ax, panel in zip(axes, spec.panels):
        if panel.losses is not None:
            extra += _plot_losses(ax, series, panel.losses, interval_s, spec.idle_is_zero)
        else:
            plot_panel(ax, series, panel, interval_s=interval_s, idle_is_zero=spec.idle_is_zero)
        if panel.column == RATE_PANEL.column and panel.losses is None:
            capacities += draw_capacities(ax, link_changes, colors)
        if panel.prediction is not None:
            line, band = _plot_predictions(
                ax, [p for p in predictions if p.quantity == panel.prediction], colors)
            drawn["line"] |= line
            drawn["band"] |= band
        if panel.losses is None or panel.losses:
            zero_based_ylim(ax)
        ylabel = panel.ylabel
        if panel.losses and MARKS in panel.losses:       # marks are not losses: say so
            ylabel = LOSSES_AND_MARKS_YLABEL
        ax.set_ylabel(ylabel.format(**labels))
    # (before the losses' section)
    extra = capacities + shade_down_spans(axes, link_changes, colors) + extra
    finish_time_axis(axes, summary)
    if series and not any(len(s.time) for s in series):
        axes[0].text(0.5, 0.5, nothing_sampled_text(spec, series, summary),
                     transform=axes[0].transAxes, ha="center", va="center", color="0.35",
                     fontsize="large")
    fig.suptitle(str(summary.get("topology", "")) or "netsim results")
    bands = [Patch(facecolor=(0.35, 0.35, 0.35, 0.2), edgecolor="none",
                   label="10th\u201390th percentile\nof the group (shaded)")] \
        if any(s.low is not None for s in series) else []
    handles = extra + bands + _prediction_handles(drawn["line"], drawn["band"])
    if drawn["line"] or drawn["band"]:
        handles += [Line2D([], [], linestyle="none", label=note) for note in notes]
    legend = add_legend(fig, axes[0], spec.legend_title, handles)
    finish_layout(fig, axes, figure_legends=[legend] if legend is not None else [])


def nothing_sampled_text(spec: FigureSpec, series: Sequence[Series], summary: dict) -> str:
    """The note of a figure whose lines have no sample: the run ended before any of them began
    (a flow that starts after it, or a run stopped early), with the first start when flows."""
    text = f"no samples: the run ended at {summary.get('end_time_s', 0.0):g} s"
    if spec.legend_title == FLOWS_FIGURE.legend_title:
        flows = summary.get("flows") or {}
        starts = [flows[s.entity]["start_s"] for s in series
                  if s.entity in flows and flows[s.entity].get("start_s") is not None]
        if starts:
            first = min(starts)
            ids = [s.entity for s in series if s.entity in flows
                   and flows[s.entity].get("start_s") == first]
            text += f",\nbefore {ids[0]} started (at {first:g} s)" if len(ids) == 1 else (
                f",\nbefore any flow started (the first at {first:g} s)")
        else:
            text += ", before any flow started"
    return text


def plot_panel(ax: Any, series: Sequence[Series], panel: Panel, *,
                interval_s: float | None = None, idle_is_zero: bool = True,
                linestyle: str = "-", with_labels: bool = True) -> None:
    """Draw one column of every series into `ax` (each series in its own colour, one Line2D
    each, broken where `line_arrays` says)."""
    if panel.style not in STYLES:
        raise ValueError(f"unknown panel style {panel.style!r}")
    for s in series:
        _plot_values(ax, s, s.values[panel.column], style=panel.style, interval_s=interval_s,
                     idle_is_zero=idle_is_zero, linestyle=linestyle,
                     label=s.label if with_labels else "_nolegend_")
        if s.low is not None and s.high is not None:
            _plot_band(ax, s, panel.column, style=panel.style, interval_s=interval_s,
                       idle_is_zero=idle_is_zero)


def _plot_band(ax: Any, s: Series, column: str, *, style: str, interval_s: float | None,
               idle_is_zero: bool) -> None:
    """The 10th-90th percentile band of an aggregate line, shaded in its colour, broken where
    the line is (`line_arrays`)."""
    assert s.low is not None and s.high is not None
    x, low = line_arrays(s.time, s.low[column], style=style, interval_s=interval_s,
                          idle_is_zero=idle_is_zero, resolution_s=s.resolution_s)
    _, high = line_arrays(s.time, s.high[column], style=style, interval_s=interval_s,
                           idle_is_zero=idle_is_zero, resolution_s=s.resolution_s)
    ax.fill_between(x, low, high, where=np.isfinite(low) & np.isfinite(high), color=s.color,
                    alpha=0.2, linewidth=0, zorder=1.5, label="_nolegend_",
                    step=None if style == "instant" else "pre")


def _plot_values(ax: Any, s: Series, values: np.ndarray, *, style: str,
                 interval_s: float | None, idle_is_zero: bool, linestyle: str,
                 label: str) -> None:
    x, y = line_arrays(s.time, values, style=style, interval_s=interval_s,
                        idle_is_zero=idle_is_zero, resolution_s=s.resolution_s)
    ax.plot(x, y, color=s.color, linestyle=linestyle, linewidth=LINE_WIDTH, label=label,
            drawstyle="default" if style == "instant" else "steps-pre")
    if style == "sparse":
        alone = isolated(s.time, values, interval_s, idle_is_zero, s.resolution_s)
        if alone.any():
            t = s.time[alone]
            ax.plot((interval_start(t, interval_s) + t) / 2, values[alone], linestyle="none",
                    marker=".", markersize=5, color=s.color, label="_nolegend_")


def _plot_losses(ax: Any, series: Sequence[Series], causes: Sequence[LossCause],
                 interval_s: float | None, idle_is_zero: bool) -> list[Any]:
    """The drops panel: for each cause with losses, one line per series in its colour and the
    cause's line style; "no packets lost" in the panel when there are none. Returns the legend
    entries: a header, then per cause its line style, name and total over the plotted lines."""
    ax.yaxis.set_major_locator(ViewLocator(nbins=Y_TICKS, steps=[1, 2, 2.5, 5, 10],
                                           integer=True))       # counts of packets
    if not causes:
        ax.text(0.5, 0.5, NO_LOSS_TEXT, transform=ax.transAxes, ha="center", va="center",
                color="0.35", fontsize="large")
        ax.set_ylim(0, 1)
        ax.set_yticks([0])
        return []
    header = LOSS_AND_MARK_HEADER if MARKS in causes else LOSS_HEADER
    handles: list[Any] = [Line2D([], [], linestyle="none", label=header)]
    for cause in causes:
        total = 0.0
        for s in series:
            values = s.values[cause.column]
            total += column_total(s, cause.column) * s.members   # an aggregate: mean x members
            _plot_values(ax, s, values, style="interval", interval_s=interval_s,
                         idle_is_zero=idle_is_zero, linestyle=cause.linestyle,
                         label="_nolegend_")
        handles.append(Line2D([], [], color="0.3", linestyle=cause.linestyle,
                              linewidth=LINE_WIDTH, label=f"{cause.label}: {total:.0f}"))
    return handles


def _plot_predictions(ax: Any, predictions: Sequence[PredictionSeries],
                      colors: dict[str, str | None]) -> tuple[bool, bool]:
    """Draw predictions as dashed steps, or bands where low < high; return whether any dashed
    line and any band was drawn. A band is shaded grey, whoever it belongs to (two flows'
    translucent colours would blend into a third that no legend entry has), and its edges are
    drawn in its series' colour; coinciding lines, and coinciding edges, take turns in dashes."""
    any_line = any_band = False
    drawn: list[tuple[Any, Any, list[Any]]] = []     # (x, y, its lines) of each dashed step line
    edges: list[tuple[Any, Any, list[Any]]] = []     # (x, y, its lines) of each band edge
    shaded: list[tuple[Any, Any, Any]] = []          # (x, low, high) of each band shaded
    for p in predictions:
        color = colors.get(p.key)
        x, low, high, band = p.steps()
        value = ~band & ~np.isnan(low)
        if value.any():
            y = np.where(value, low, np.nan)
            line, = ax.plot(x, y, color=color, linestyle=(0, DASH), linewidth=1.7, zorder=3,
                            label="_nolegend_")
            _share(drawn, x, y, line)
            any_line = True
        if band.any():
            lows, highs = np.where(band, low, np.nan), np.where(band, high, np.nan)
            if not any(np.array_equal(x0, x) and np.array_equal(l0, lows, equal_nan=True)
                       and np.array_equal(h0, highs, equal_nan=True) for x0, l0, h0 in shaded):
                ax.fill_between(x, lows, highs, where=band, color=BAND_SHADE, linewidth=0,
                                zorder=1.5, label="_nolegend_")
                shaded.append((x, lows, highs))
            for edge in (lows, highs):
                line, = ax.plot(x, edge, color=color, linewidth=1.0, zorder=1.6,
                                label="_nolegend_")
                _share(edges, x, edge, line)
            any_band = True
    for _, _, lines in drawn + edges:
        if len(lines) > 1:
            period = len(lines) * sum(DASH)
            for j, line in enumerate(lines):
                line.set_linestyle((j * sum(DASH), (DASH[0], period - DASH[0])))
    return any_line, any_band


def _share(drawn: list, x: Any, y: Any, line: Any) -> None:
    """Add `line` (drawn through x, y) to the group of `drawn` it coincides with, or a new one."""
    for x0, y0, lines in drawn:
        if np.array_equal(x0, x) and np.array_equal(y0, y, equal_nan=True):
            lines.append(line)
            return
    drawn.append((x, y, [line]))


def _prediction_handles(line: bool, band: bool) -> list[Any]:
    """Legend entries explaining the prediction overlay."""
    handles: list[Any] = []
    if line:
        handles.append(Line2D([], [], color="0.35", linestyle=(0, DASH), linewidth=1.7,
                              label=PREDICTION_LABEL))
    if band:
        handles.append(Patch(facecolor=BAND_SHADE, edgecolor="0.35", linewidth=1.0,
                             label=PREDICTION_BAND_LABEL))
    return handles
