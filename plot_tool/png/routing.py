"""Drawing routing.png from its `FigureData` (matplotlib): the rate of the links of interest over
the cost of each route whose next hop changed, a marker and the new next hop at each change, and
dotted vertical lines at the change times in every panel. The rate panel is that of links.png:
the links' down spans shaded (across both panels) and a time-varying link's capacity drawn, by
the same code (`plot_tool.png.link_changes`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from plot_tool.entity_series import link_legend_title
from plot_tool.layout import finish_layout
from plot_tool.link_changes import LinkChanges
from plot_tool.png.common import (
    SIDE_LEGEND,
    assign_colors,
    finish_time_axis,
    legend_columns,
    panel_axes,
    unit_labels,
    zero_based_ylim,
)
from plot_tool.png.link_changes import draw_capacities, shade_down_spans
from plot_tool.png.panels import plot_panel
from plot_tool.routes_data import ROUTE_WIDTH, RouteSeries, route_linewidths
from plot_tool.series import PANEL_HEIGHT_IN, RATE_PANEL, Series, run_end_s, sampling_interval_s

MAX_LABELS_PER_LINE = 10      # and at most this many next-hop labels per line (markers: all)


def draw_routing_figure(fig: Figure, link_series: list[Series], routes: list[RouteSeries],
                         omitted: int, summary: dict,
                         link_changes: Sequence[LinkChanges] = ()) -> None:
    """routing.png: the rate of the links of interest (if any) over the route cost of each router
    to each destination whose next hop changed, with a marker and the new next hop at each change.
    Dotted vertical lines in every panel mark the times of those changes. `link_changes` (of the
    links of `link_series`) as in links.png: down spans shaded across both panels, the capacity
    of a time-varying link in the rate panel, each with an entry in the rate panel's legend."""
    n = 2 if link_series else 1
    axes = panel_axes(fig, n, height_ratios=[1.0, 1.4][-n:])
    labels = unit_labels(summary)
    legends = []
    if link_series:
        assign_colors(link_series)
        colors = {s.key: s.color for s in link_series}
        ax = axes[0]
        plot_panel(ax, link_series, RATE_PANEL, interval_s=sampling_interval_s(summary, link_series),
                    idle_is_zero=True)
        extra = draw_capacities(ax, link_changes, colors)
        ax.set_ylabel(RATE_PANEL.ylabel.format(**labels))
        zero_based_ylim(ax)
        extra += shade_down_spans(axes, link_changes, colors)     # (both panels)
        title = link_legend_title(link_series)
        handles, names = ax.get_legend_handles_labels()
        handles += extra
        names += [h.get_label() for h in extra]
        legends.append(ax.legend(handles, names, title=title, ncol=legend_columns(
            len(handles), PANEL_HEIGHT_IN, title), **SIDE_LEGEND))

    ax = axes[-1]
    assign_colors(routes, start=len(link_series))   # colours not used by the links above
    end = run_end_s(summary)
    change_times: list[float] = []
    no_route_labels: set[int] = set()
    widths = route_linewidths(routes, end)
    pending: list[Label] = []
    for index, (route, width) in enumerate(zip(routes, widths)):
        change_times += _plot_route(ax, route, end, above=index % 2 == 0, linewidth=width,
                                    no_route_labels=no_route_labels, labels=pending)
    if not routes:
        ax.text(0.5, 0.5, "no route changed for the selected routers", ha="center",
                va="center", transform=ax.transAxes, color="0.4")
    ax.set_ylabel("route cost (ms)")
    title = ("router \u2192 destination\n\u25cf next hop changed\n(labelled with the new one;"
             "\na dotted line at its time" + (",\nacross both panels)" if len(axes) > 1 else ")"))
    if routes and not any(len(r.changes) for r in routes):
        title = "router \u2192 destination\n(cost changes only:\nno next hop changed)"
    if any(r.also for r in routes):
        title += "\nseveral routes on one line:\nthe same cost (to 1 pixel)"
    if any(w > ROUTE_WIDTH for w in widths):
        title += "\nwider line: partly under\nthe lines listed after it"
    if omitted:
        title += f"\n{omitted} more not shown"
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        rows = sum(label.count("\n") + 1 for label in labels)
        legends.append(ax.legend(title=title, ncol=legend_columns(
            rows, 1.4 * PANEL_HEIGHT_IN, title), **SIDE_LEGEND))
    for axis in axes:
        for t in sorted(set(change_times)):
            axis.axvline(t, color="0.6", linestyle=":", linewidth=0.8, zorder=0)
    finish_time_axis(axes, summary)
    _place_labels(ax, pending)
    fig.suptitle((str(summary.get("topology", "")) or "netsim results") + ": dynamic routing")
    finish_layout(fig, axes, axes_legends=legends)


def _plot_route(ax: Any, route: RouteSeries, end: float | None, *, above: bool,
                no_route_labels: set[int], labels: list[Label],
                linewidth: float = ROUTE_WIDTH) -> list[float]:
    """Draw one route's cost as steps held from each installation on; return the change times.
    Its change labels are added to `labels`, placed once every line is drawn (`_place_labels`).

    A change to "unreachable" is an x at the top of the panel, labelled "no route" once per
    second of simulated time (`no_route_labels`: the seconds already labelled, shared by the lines
    of the panel, since routers lose a route at nearly the same time)."""
    time, cost = route.time, route.cost_ms
    shown = np.where(np.isfinite(cost), cost, np.nan)       # unreachable: a gap in the line
    if end is not None and len(time) and end > time[-1]:
        time, shown = np.append(time, end), np.append(shown, shown[-1])
    ax.plot(time, shown, drawstyle="steps-post", color=route.color, linewidth=linewidth,
            label=route.label, solid_capstyle="butt")
    changes = route.changes
    top = ax.get_xaxis_transform()           # x in data, y in axes fraction
    reachable = [i for i in changes if np.isfinite(route.cost_ms[i])]
    if reachable:
        ax.plot(route.time[reachable], route.cost_ms[reachable], linestyle="none", marker="o",
                markersize=5, color=route.color, zorder=3)
    lost = [i for i in changes if not np.isfinite(route.cost_ms[i])]
    if lost:
        ax.plot(route.time[lost], np.full(len(lost), 0.97), linestyle="none", marker="x",
                markersize=6, color=route.color, transform=top, zorder=3)
    for i in changes[:MAX_LABELS_PER_LINE]:
        t = float(route.time[i])
        if np.isfinite(route.cost_ms[i]):
            xy, transform, text = (t, float(route.cost_ms[i])), ax.transData, route.change_label(i)
        else:
            if math.floor(t) in no_route_labels:
                continue
            no_route_labels.add(math.floor(t))
            xy, transform, text = (t, 0.97), top, "no route"
        down = not above or transform is top      # a "no route" label stays inside the panel
        labels.append(Label(text, xy, transform, "0.3" if transform is top else route.color,
                            down))
    return [float(route.time[i]) for i in changes]


class Label:
    """A next-hop (or "no route") label of routing.png: its text, the point it labels (in
    `transform`'s coordinates), its colour, and whether it goes below the point."""

    __slots__ = ("color", "down", "text", "transform", "xy")

    def __init__(self, text: str, xy: tuple, transform: Any, color: str | None, down: bool):
        self.text, self.xy, self.transform, self.color, self.down = text, xy, transform, color, down


LABEL_GAP_PT = 5.0            # between a label and its point, vertically
LABEL_HEIGHT_PT = 10.5        # an x-small label in its box
LABEL_CHAR_PT = 4.4           # the width of one of its characters, about


def _place_labels(ax: Any, labels: list[Label]) -> None:
    """Annotate each label next to its point, above or below as asked, unless that would cover a
    label placed before it: then at the first free place of the other side, one and two label
    heights further out on either side (before, two routes changing at one instant and one cost
    printed "via R3" over "via R1")."""
    ax.autoscale_view()
    to_points = 72.0 / ax.figure.dpi
    placed: list[tuple[float, float, float, float]] = []      # (x0, x1, y0, y1), points
    for label in labels:
        px, py = (v * to_points for v in label.transform.transform(label.xy))
        x0, x1 = px + 4.0, px + 4.0 + LABEL_CHAR_PT * len(label.text)
        below, above = -LABEL_GAP_PT - LABEL_HEIGHT_PT, LABEL_GAP_PT
        first, second = (below, above) if label.down else (above, below)
        step = LABEL_HEIGHT_PT
        candidates = [first, second, first - step if label.down else first + step,
                      second + step if label.down else second - step]
        if label.transform is not ax.transData:   # ("no route" at the top: below it only)
            candidates = [below, below - step, below - 2 * step]
        bottom = next((dy for dy in candidates
                       if not any(x0 < b1 and b0 < x1 and py + dy < c1 and c0 < py + dy
                                  + LABEL_HEIGHT_PT for b0, b1, c0, c1 in placed)),
                      candidates[0])
        placed.append((x0, x1, py + bottom, py + bottom + LABEL_HEIGHT_PT))
        ax.annotate(label.text, xy=label.xy, xycoords=label.transform,
                    xytext=(4, bottom + 1.5), textcoords="offset points", ha="left",
                    va="bottom", fontsize="x-small", color=label.color,
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none",
                              alpha=0.75))
