"""What a run figure is made of, as data (the front end's vocabulary; no matplotlib).

`Series` (one plotted line: an entity's times and one array per panel column; an aggregate line
carries its group's percentile band), `PredictionSeries` (the analytic prediction of one quantity
for one line, piecewise constant), `Panel` and `FigureSpec` (the panels of links.png, flows.png and
hosts.png, with their y labels and drawing styles), `LossCause` (a column of links.csv counting
lost packets, with its legend text and line style), and `FigureData`: one figure, its data
computed once by `plot_tool.run_data`, which a drawing backend (`plot_tool.png`) draws.
"""
from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

PathLike = Union[str, "os.PathLike[str]"]


IdSelection = Union[str, Iterable[str], None]  # noqa: UP007 (evaluated: no X | Y in 3.9)


WIDTH_IN = 11.0


PANEL_HEIGHT_IN = 2.4


TITLE_HEIGHT_IN = 1.0           # title band and x axis labels, beyond the panels


@dataclass
class Series:
    """One plotted line: the same entity in every panel of a figure."""

    key: str                      # stable identity, e.g. "L1" (half duplex) or "L1 R1->R2"
    label: str                    # legend text
    time: np.ndarray              # sample times, seconds (end of each interval), increasing
    values: dict[str, np.ndarray]  # panel column -> values, same length as time
    color: str | None = None   # assigned by assign_colors
    entity: str = ""              # the id predictions.csv uses: link, flow or host id
    directions: tuple[str, ...] = ()  # link directions the line covers (empty: not a link)
    summed: bool = False          # a half-duplex link: its directions summed
    aqm: bool = False             # a link with a queue discipline (summary.json links.<id>.queue)
    # An aggregate line (`aggregate_series`): `values` are the means over `members` entities at each
    # sample time, `low` / `high` their 10th and 90th percentiles (drawn as a band).
    members: int = 1
    low: dict[str, np.ndarray] | None = None
    high: dict[str, np.ndarray] | None = None
    # A reduced line (`plot_tool.line_reduction`, a long run read from disk): the samples kept
    # are those of each bucket of `resolution_s` seconds that draw it (first, last, minimum,
    # maximum), so a line breaks only across a gap of more than GAP_FACTOR intervals plus
    # `resolution_s` (`plot_tool.lines`); `totals` are the sums of each column over every sample.
    resolution_s: float = 0.0
    totals: dict[str, float] | None = None


def column_total(series: Series, column: str) -> float:
    """The sum of `column` over every sample of `series` (NaN as 0; 0 when it lacks the column),
    also for a reduced line, whose `values` keep only the samples that draw it."""
    if series.totals is not None and column in series.totals:
        return series.totals[column]
    return float(np.nansum(series.values.get(column, np.zeros(0))))


@dataclass
class PredictionSeries:
    """The analytic prediction of one quantity for one plotted `Series` (``predictions.csv``).

    Piecewise constant: ``[low[i], high[i]]`` holds from ``start[i]`` to ``end[i]`` (intervals in
    time order). ``low == high`` except for Vegas, whose prediction is an interval.
    """

    key: str                      # Series.key of the line it belongs to (same colour)
    quantity: str                 # predictions.csv quantity, e.g. "rate_mbps"
    start: np.ndarray
    end: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @property
    def is_band(self) -> np.ndarray:
        """Per interval: whether the prediction is an interval (low < high) rather than a value."""
        return self.high - self.low > 1e-9 * np.maximum(1.0, np.abs(self.high))

    def steps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x, low, high, band) for drawing: two points per interval (its start and its end), and
        a NaN point between intervals that do not touch, so that no line joins them."""
        x: list[float] = []
        low: list[float] = []
        high: list[float] = []
        band: list[bool] = []
        is_band = self.is_band
        for i in range(len(self.start)):
            if i and self.start[i] > self.end[i - 1] + 1e-9:
                x.append(float(self.end[i - 1]))
                low.append(math.nan)
                high.append(math.nan)
                band.append(False)
            x += [float(self.start[i]), float(self.end[i])]
            low += [float(self.low[i])] * 2
            high += [float(self.high[i])] * 2
            band += [bool(is_band[i])] * 2
        return np.array(x), np.array(low), np.array(high), np.array(band, dtype=bool)


@dataclass(frozen=True)
class LossCause:
    """One cause of packet loss: a ``links.csv`` column, its legend text and its line style."""

    column: str
    label: str
    linestyle: Any      # a matplotlib line style: a name or an (offset, dashes) tuple


BUFFER_LOSS = LossCause("drops", "buffer full", "-")


IMPAIRMENT_LOSS = LossCause("impairment_drops", "random loss (impairment)", ":")


FAILURE_LOSS = LossCause("failure_drops", "link down", "--")


# queue disciplines (links with a "queue"): their drops, and their CE marks (not losses)
AQM_LOSS = LossCause("aqm_drops", "dropped by the queue discipline", (0, (6, 2, 1, 2, 1, 2)))


# pairs of short dashes: sparse dots read as random loss's dots (acceptance test Z7)
MARKS = LossCause("marks", "CE marked (not lost)", (0, (2, 1.5, 2, 5)))


LOSS_CAUSES = (BUFFER_LOSS, IMPAIRMENT_LOSS, FAILURE_LOSS, AQM_LOSS, MARKS)


OTHER_LOSS_STYLE = "-."       # any other "*_drops" column of links.csv (labelled by its name)


@dataclass(frozen=True)
class Panel:
    """One row of a run figure: the `Series.values` column it draws, its y label (units as
    placeholders), its drawing style (plot_tool/lines.py STYLES), its prediction, its loss causes."""

    column: str                   # key into Series.values
    ylabel: str                   # may contain {Mbps}, {KB} and {interval} placeholders
    style: str = "interval"
    prediction: str | None = None   # predictions.csv quantity drawn over this panel
    # A losses panel (drops of links.png) when not None: the causes to draw, one line style each
    # (empty: nothing was lost, and the panel says so). `column` is then only its name.
    losses: tuple[LossCause, ...] | None = None


@dataclass(frozen=True)
class FigureSpec:
    """One run figure (links.png, flows.png or hosts.png): its file name, its panels top to bottom,
    its legend's title, and what a gap in an entity's rows means."""

    filename: str
    panels: tuple[Panel, ...]
    legend_title: str
    # Whether a gap in an entity's rows means it was idle (links and hosts write no rows while
    # idle, and zero rows around the gap), rather than "no data" (flows).
    idle_is_zero: bool = True


LOSSES_YLABEL = "packets lost per\n{interval} interval"


LOSSES_AND_MARKS_YLABEL = "packets lost or CE-marked\nper {interval} interval"


BUFFER_PANEL = Panel("buffer_kb", "buffer occupancy ({KB})")


RATE_PANEL = Panel("rate_mbps", "transmitted rate ({Mbps})")


# links.png gains it when a plotted link has a queue discipline (summary.json links.<id>.queue)
SOJOURN_PANEL = Panel("sojourn_ms", "queue sojourn time,\nmean per interval (ms)", style="sparse")


# links.png as it is when the only losses are buffer overflows; `links_figure_spec` adapts the
# drops panel to the causes present, the legend title to the lines, and the buffer panel to
# predictions.
LINKS_FIGURE = FigureSpec("links.png", (
    BUFFER_PANEL,
    Panel("drops", LOSSES_YLABEL, losses=(BUFFER_LOSS,)),
    RATE_PANEL,
), legend_title="link direction")


# The buffer panel of links.png when predictions are drawn: the simulated backlog (unfinished work:
# waiting bytes plus the rest of the packet in transmission), which is what the fluid model
# predicts, with the predicted backlog over it.
BACKLOG_PANEL = Panel("backlog_kb", "backlog ({KB})", prediction="backlog_kb")


# flows.png: the second panel is the data arriving at the receiver, in order or not (bounded by
# the path's capacity); results written before flows.csv had arrival_rate_mbps get the goodput
# (in-order delivery, which jumps when a repaired gap releases buffered data) instead.
ARRIVAL_PANEL = Panel("arrival_rate_mbps", "data arriving at the\nreceiver ({Mbps})",
                      prediction="rate_mbps")


GOODPUT_PANEL = Panel("recv_rate_mbps", "receive rate, goodput\n({Mbps})", prediction="rate_mbps")


_SEND_PANEL = Panel("send_rate_mbps", "send rate ({Mbps})")


_WINDOW_PANEL = Panel("window_pkts", "window (packets)", style="instant")


_RTT_PANEL = Panel("rtt_ms", "RTT (ms)", style="sparse", prediction="rtt_ms")


FLOWS_FIGURE = FigureSpec("flows.png", (_SEND_PANEL, ARRIVAL_PANEL, _WINDOW_PANEL, _RTT_PANEL),
                          legend_title="flow", idle_is_zero=False)


FLOWS_FIGURE_GOODPUT = dataclasses.replace(
    FLOWS_FIGURE, panels=(_SEND_PANEL, GOODPUT_PANEL, _WINDOW_PANEL, _RTT_PANEL))


PREDICTION_LABEL = "analytic prediction (dashed)"


PREDICTION_BAND_LABEL = "predicted interval\n(shaded, edges in its colour)"


HOSTS_FIGURE = FigureSpec("hosts.png", (
    Panel("send_rate_mbps", "send rate ({Mbps})"),
    Panel("recv_rate_mbps", "receive rate ({Mbps})"),
), legend_title="host")


LINK_TITLE = "link direction"


HALF_DUPLEX_TITLE = "link (half duplex:\nboth directions summed)"


MIXED_LINK_TITLE = "link direction, or link\n(half duplex: both\ndirections summed)"


@dataclass
class FigureData:
    """One figure to write, its data computed once by the front end (`plot_tool.run_data`); a
    drawing backend draws it (`plot_tool.png.draw`). `kind` says which drawing:

    * "panels": `spec`'s panels over `series`, with `predictions` (links, flows, hosts);
    * "fct": the slowdown of each finished workload flow of `fct`, one panel per `workloads`;
    * "routing": the rate of the link `series` over the cost of the `routes` (`omitted`: how many
      more qualified).

    `link_changes` (links.png and routing.png): the down spans and time-varying capacities of the
    links of `series` (`plot_tool.link_changes`), computed once for both.
    """

    kind: str
    filename: str
    figsize: tuple[float, float]
    summary: dict
    spec: FigureSpec | None = None
    series: Sequence[Series] = ()
    predictions: Sequence[PredictionSeries] = ()
    routes: Sequence[Any] = ()          # RouteSeries (plot_tool.routes_data)
    omitted: int = 0
    fct: dict[str, np.ndarray] | None = None
    workloads: Sequence[str] = ()
    notes: Sequence[str] = ()           # legend lines after the predictions' (panels)
    link_changes: Sequence[Any] = ()    # LinkChanges (plot_tool.link_changes)


def run_end_s(summary: dict) -> float | None:
    end = summary.get("end_time_s")
    return float(end) if isinstance(end, (int, float)) and end > 0 else None


def sampling_interval_s(summary: dict, series: Sequence[Any] = ()) -> float | None:
    """The sampling interval: ``summary["interval_s"]``, else the smallest spacing of the samples
    of the first series with two of them (None when unknown)."""
    interval = summary.get("interval_s")
    if isinstance(interval, (int, float)) and interval > 0:
        return float(interval)
    for s in series:
        steps = np.diff(s.time)
        steps = steps[steps > 0]
        if len(steps):
            return float(steps.min())
    return None


def figure_size(spec: FigureSpec) -> tuple[float, float]:
    return WIDTH_IN, TITLE_HEIGHT_IN + PANEL_HEIGHT_IN * len(spec.panels)
