"""Figures of a simulation run: ``links.png``, ``flows.png``, ``hosts.png``, ``fct.png`` when the
run had workloads and, when dynamic routing changed a forwarding table, ``routing.png`` (see
docs/outputs.md, "Figures"). Big runs get aggregate lines (``_aggregate``: a group's mean and
10th-90th percentile band) instead of one line per entity.

The work is split into data preparation and drawing:

* ``_link_series`` / ``_flow_series`` / ``_host_series`` turn the result tables into a list of
  `Series` (one per plotted line: a label, times, and one array per panel column). Rows are
  selected by entity and sorted by time (the CSV files are not in time order);
* ``_prediction_series`` matches the rows of ``predictions.csv`` (written by ``--check``) to those
  series: one `PredictionSeries` per series and predicted quantity (piecewise constant, with a
  [low, high] interval for Vegas). A flow's prediction belongs to the flow's series; a link's to
  the series of the same link whose directions include the prediction's (a half-duplex link: its
  summed line; a full-duplex direction: that direction's line);
* a `FigureSpec` lists the panels of one figure (`Panel`: column, y label, drawing style) and
  whether a gap in the rows means "idle" (links, hosts) or "no data" (flows);
* ``_draw_figure`` draws a list of series into a given matplotlib Figure, one ``_plot_panel`` call
  per panel, adds the shared legend and sets the geometry (`plot_tool.layout`: fixed margins
  computed from measured text, no layout engine, so each figure is drawn once). Every line goes
  through ``_line_arrays``, the one place that decides where a line breaks: at NaN values, and
  where consecutive samples are more than ``GAP_FACTOR`` sampling intervals apart, except, for
  links and hosts, across a gap bounded by two zero values (an idle entity writes no rows, and
  the rows around the gap are zero: drawing zero across it is exact).
* The drops panel of ``links.png`` (``Panel.losses``) draws every cause of loss present in the
  plotted lines, one line style per cause (`LossCause`: buffer full, random loss from the link's
  impairments, link down, and any other ``*_drops`` column), and says "no packets lost" when
  nothing was lost. A panel may also name a ``prediction`` quantity: the matching
  `PredictionSeries` are drawn as dashed steps in the colour of their series, or as a shaded band
  where low < high (``_plot_predictions``). When link predictions are drawn, the buffer panel of
  ``links.png`` shows the simulated ``backlog_kb`` (the quantity the fluid model predicts).
* ``routing.png`` has its own preparation (``_route_series``: one `RouteSeries` per router and
  destination, from ``routes.csv``; ``_routes_to_plot`` picks the ones whose next hop changed and
  draws routes whose lines coincide once, labelled with all of them) and drawing
  (``_draw_routing_figure``); its top panel reuses the link series.

Saving uses the object-oriented API (`matplotlib.figure.Figure` with an Agg canvas), so nothing
needs a display; pyplot is imported only when ``show=True``. Each figure is drawn once and its
canvas written as an RGB PNG with Pillow (``_save_png``); garbage collection is postponed while
the figures are drawn. ``bench/bench_figures.py`` measures the cost against the simulation's.
"""
from __future__ import annotations

import dataclasses
import gc
import logging
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from plot_tool.layout import finish_layout, stacked_axes
from plot_tool.results import OPTIONAL_COLUMNS, SCHEMAS, Table, read_results

log = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]
IdSelection = Optional[Union[str, Iterable[str]]]

# Drawing styles of a panel:
#   "interval": the value covers (time - interval, time]: drawn as steps, each value held over its
#               interval;
#   "instant":  the value was sampled at that instant: straight segments between samples;
#   "sparse":   interval values that may be missing (NaN): steps that break where a value is
#               missing, with a dot on a sample that has no neighbour.
STYLES = ("interval", "instant", "sparse")

# A line breaks where consecutive samples are more than this many sampling intervals apart.
GAP_FACTOR = 1.5

DPI = 100
PNG_COMPRESS_LEVEL = 3          # zlib level: 6 (the default) makes files 10 % smaller, 40 % slower
WIDTH_IN = 11.0
PANEL_HEIGHT_IN = 2.4
TITLE_HEIGHT_IN = 1.0           # title band and x axis labels, beyond the panels
LINE_WIDTH = 1.2

ROUTING_FILENAME = "routing.png"
MAX_ROUTE_LINES = 12          # routing.png: at most this many router -> destination lines
MAX_LABELS_PER_LINE = 10      # and at most this many next-hop labels per line (markers: all)
MAX_COST_ONLY_LINES = 6       # lines when no next hop changed (costs only: the widest ranges)
# Two route lines closer than this fraction of the panel's range (about one pixel), on both axes,
# at every instant are drawn once, labelled with both routes.
COINCIDENT_FRACTION = 0.003
ROUTE_WIDTH = 1.4             # route line width; a line that a later one covers is drawn wider
ROUTE_HALO = 1.3              # ... by this much per later line covering it (at most 3)

# Beyond this many lines in a figure whose entities the user did not choose (-l / -F), the figure
# draws one aggregate line per group instead: the mean over the group at each sample time, with
# the 10th-90th percentile band (docs/outputs.md, "Aggregate lines"). Flows (grouped by
# algorithm) and hosts (all together): beyond MAX_LINES, the distinct colours of the palette
# (tab20). Links: beyond MAX_TIERED_LINK_LINES in a tiered network (`plot_tool.tiers`: grouped
# by the tiers their ends are in, host-edge, edge-aggregation, ...), beyond MAX_LINK_LINES in
# any other (all links together: the shipped parking lot's 22 directions stay lines).
MAX_LINES = 20
MAX_TIERED_LINK_LINES = 12
MAX_LINK_LINES = 40
AGGREGATE_QUANTILES = (10.0, 90.0)
AGGREGATE_TITLE = "mean over the {what} of each group\n(band: 10th\u201390th percentile)"

# fct.png (runs with workloads): each finished flow's FCT slowdown against its size, and per
# workload and size bucket (summary.json's: under 100 KB, 100 KB to 10 MB, over 10 MB, in the
# run's units) the median and the 99th percentile, computed exactly from fct.csv.
FCT_FILENAME = "fct.png"
FCT_QUANTILES = (50.0, 99.0)
FCT_BUCKETS = (("under_100kb", "< 100 KB"), ("100kb_to_10mb", "100 KB \u2013 10 MB"),
               ("over_10mb", "> 10 MB"))
FCT_MEDIAN_LABEL = "median slowdown of a size bucket"
FCT_P99_LABEL = "99th percentile of a size bucket"

NO_LOSS_TEXT = "no packets lost"
LOSS_HEADER = "packets lost (drops panel):"
LOSS_AND_MARK_HEADER = "packets lost or CE-marked (drops panel):"   # when marks are drawn


@dataclass
class Series:
    """One plotted line: the same entity in every panel of a figure."""

    key: str                      # stable identity, e.g. "L1" (half duplex) or "L1 R1->R2"
    label: str                    # legend text
    time: np.ndarray              # sample times, seconds (end of each interval), increasing
    values: dict[str, np.ndarray]  # panel column -> values, same length as time
    color: Optional[str] = None   # assigned by _assign_colors
    entity: str = ""              # the id predictions.csv uses: link, flow or host id
    directions: tuple[str, ...] = ()  # link directions the line covers (empty: not a link)
    summed: bool = False          # a half-duplex link: its directions summed
    aqm: bool = False             # a link with a queue discipline (summary.json links.<id>.queue)
    # An aggregate line (`_aggregate`): `values` are the means over `members` entities at each
    # sample time, `low` / `high` their 10th and 90th percentiles (drawn as a band).
    members: int = 1
    low: Optional[dict[str, np.ndarray]] = None
    high: Optional[dict[str, np.ndarray]] = None


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
MARKS = LossCause("marks", "CE marked (not lost)", (0, (1, 3)))
LOSS_CAUSES = (BUFFER_LOSS, IMPAIRMENT_LOSS, FAILURE_LOSS, AQM_LOSS, MARKS)
OTHER_LOSS_STYLE = "-."       # any other "*_drops" column of links.csv (labelled by its name)


@dataclass(frozen=True)
class Panel:
    column: str                   # key into Series.values
    ylabel: str                   # may contain {Mbps}, {KB} and {interval} placeholders
    style: str = "interval"
    prediction: Optional[str] = None   # predictions.csv quantity drawn over this panel
    # A losses panel (drops of links.png) when not None: the causes to draw, one line style each
    # (empty: nothing was lost, and the panel says so). `column` is then only its name.
    losses: Optional[tuple[LossCause, ...]] = None


@dataclass
class RouteSeries:
    """The forwarding-table entry of one router for one destination, over the run.

    Row i holds the entry installed at ``time[i]`` (row 0: the static table of t=0), in force
    until ``time[i + 1]``. ``cost_ms`` is inf and ``next_hop`` and ``link`` are "" while the
    destination is unreachable. ``also`` lists other (router, destination) pairs whose line
    coincides with this one (drawn once, labelled with all of them).
    """

    router: str
    destination: str
    time: np.ndarray
    cost_ms: np.ndarray
    next_hop: np.ndarray
    link: np.ndarray
    color: Optional[str] = None
    also: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """"R1 → T1"; for coincident routes one line per router: "R1 → T1, T3\\nR4 → S2"."""
        by_router: dict[str, list[str]] = {}
        for router, destination in ((self.router, self.destination), *self.also):
            by_router.setdefault(router, []).append(destination)
        return "\n".join(f"{router} \u2192 {', '.join(dests)}"
                         for router, dests in by_router.items())

    @property
    def changes(self) -> np.ndarray:
        """Indices of the installations that changed the next hop or the link to it (never 0)."""
        hops, links = self.next_hop, self.link
        return np.flatnonzero((hops[1:] != hops[:-1]) | (links[1:] != links[:-1])) + 1

    def change_label(self, i: int) -> str:
        """"via R3" for change `i`; "via R3 (L7)" when only the link changed (parallel links);
        "no route" when the destination became unreachable."""
        if not np.isfinite(self.cost_ms[i]) or not self.next_hop[i]:
            return "no route"
        if i > 0 and self.next_hop[i] == self.next_hop[i - 1]:
            return f"via {self.next_hop[i]} ({self.link[i]})"
        return f"via {self.next_hop[i]}"


@dataclass(frozen=True)
class FigureSpec:
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

# links.png as it is when the only losses are buffer overflows; `_links_figure_spec` adapts the
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
PREDICTION_BAND_LABEL = "predicted interval (shaded)"

HOSTS_FIGURE = FigureSpec("hosts.png", (
    Panel("send_rate_mbps", "send rate ({Mbps})"),
    Panel("recv_rate_mbps", "receive rate ({Mbps})"),
), legend_title="host")

LINK_TITLE = "link direction"
HALF_DUPLEX_TITLE = "link (half duplex:\nboth directions summed)"
MIXED_LINK_TITLE = "link direction, or link\n(half duplex: both\ndirections summed)"

_LINK_VALUES = ("rate_mbps", "buffer_kb", "buffer_pkts", "backlog_kb", "drops", "failure_drops",
                "impairment_drops", "routing_rate_mbps", "aqm_drops", "marks", "sojourn_ms")
_FLOW_VALUES = ("send_rate_mbps", "recv_rate_mbps", "window_pkts", "rtt_ms")
_HOST_VALUES = ("send_rate_mbps", "recv_rate_mbps")
# Numeric columns the figures use beyond results.SCHEMAS/OPTIONAL_COLUMNS (newer results have
# them; older ones get zeros for the link column and the goodput panel for the flow one). Any
# other numeric links.csv column named "*_drops" is a cause of loss too.
_FIGURE_COLUMNS = {"links": ("impairment_drops", "aqm_drops", "marks", "sojourn_ms"),
                   "flows": ("arrival_rate_mbps",)}
_ZEROS_WHEN_ABSENT = {"links": ("impairment_drops", "aqm_drops", "marks")}


def make_figures(results: Any, out_dir: Optional[PathLike] = None, *,
                 links: IdSelection = None, flows: IdSelection = None, hosts: IdSelection = None,
                 routers: IdSelection = None, predictions: Optional[bool] = None,
                 show: bool = False) -> list[Path]:
    """Write ``links.png``, ``flows.png``, ``hosts.png`` (and ``routing.png``); return the paths.

    Args:
        results: a results directory (str or path; read with `read_results`), or any object with
            attributes ``summary``, ``links``, ``flows``, ``hosts`` (and optionally ``routes``) in
            the documented format (a `ResultSet`, or the simulator's in-memory results).
        out_dir: where to write the PNG files (created if needed). Defaults to the results
            directory when `results` is a path; required otherwise.
        links, flows, hosts: ids to plot (an id or an iterable of ids); None means every one in
            the summary. A figure is written only when at least one of its entities is selected.
            An id that is not in the summary raises ValueError.
        routers: routers whose routes ``routing.png`` shows (None: every router). ``routing.png``
            is written only when the routes table has entries after t = 0 (dynamic routing
            changed a forwarding table) and at least one router is selected; its rate panel
            shows the selected `links`.
        predictions: draw the analytic predictions of ``predictions.csv`` (written by a run with
            ``--check``) over the simulated lines: None (default) draws them when the results have
            them (`ResultSet.predictions` is not None), False never, True always (ValueError when
            the results have none). They appear as dashed steps in the colour of the line they
            predict (a shaded band where the prediction is an interval, for Vegas) on the arrival
            rate and RTT panels of ``flows.png`` and the buffer panel of ``links.png``, which then
            shows the simulated ``backlog_kb`` instead of ``buffer_kb``.
        show: after saving, also show the figures with pyplot (blocks until they are closed).

    A run with workloads (``fct.csv``) also gets ``fct.png``: each finished workload flow's FCT
    slowdown against its size, with the median and 99th percentile of each size bucket.

    The paths are returned in the order links, flows, hosts, fct, routing (figures not written
    are left out).
    """
    source_dir: Optional[Path] = None
    if isinstance(results, (str, os.PathLike)):
        source_dir = Path(results)
        results = read_results(source_dir)
        source_dir = results.directory or source_dir
    for attribute in ("summary", "links", "flows", "hosts"):
        if not hasattr(results, attribute):
            raise TypeError(f"make_figures needs a results directory or an object with attributes "
                            f"summary, links, flows, hosts; got {type(results).__name__} "
                            f"without {attribute!r}")
    if out_dir is None:
        if source_dir is None:
            raise ValueError("out_dir is required when results is not a results directory")
        out_dir = source_dir
    out_dir = Path(out_dir)
    jobs = _plan_figures(results, links=links, flows=flows, hosts=hosts, routers=routers,
                         predictions=predictions)

    written: list[Path] = []
    if jobs:
        out_dir.mkdir(parents=True, exist_ok=True)
    # A figure allocates many small objects, which trigger garbage collections that traverse
    # every live object (after a run, the simulation's too); the figures free theirs when they
    # are dropped, so collecting is postponed to the end.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for job in jobs:
            path = out_dir / job.filename
            _save_png(_render(job), path)
            log.debug("wrote %s", path)
            written.append(path)
    finally:
        if collecting:
            gc.enable()

    if show and jobs:
        import matplotlib.pyplot as plt  # only here: pyplot may need a display

        for job in jobs:
            job.draw(plt.figure(figsize=job.figsize))
        plt.show()
    return written


# Style of every panel, set when the axes are created (cheaper than changing each axes after).
STYLE = {"axes.grid": True, "grid.alpha": 0.3}
Y_TICKS = 5         # at most this many intervals between y ticks (matplotlib's default: about 7)


def _render(job: "_Job") -> Figure:
    """`job` drawn into a new Figure on an Agg canvas, at the resolution it is saved with."""
    fig = Figure(figsize=job.figsize, dpi=DPI)
    FigureCanvasAgg(fig)
    job.draw(fig)
    return fig


def _stacked_axes(fig: Figure, n: int, height_ratios: Optional[Sequence[float]] = None
                  ) -> np.ndarray:
    """`n` panels stacked in one column of `fig` on one time axis, with the `STYLE`."""
    axes = stacked_axes(fig, n, height_ratios=height_ratios, style=STYLE)
    for ax in axes:
        ax.yaxis.set_major_locator(MaxNLocator(nbins=Y_TICKS, steps=[1, 2, 2.5, 5, 10]))
    return axes


def _save_png(fig: Figure, path: Path) -> None:
    """Draw `fig` once and write it as an RGB PNG (the figures are opaque: the alpha channel of
    the canvas is all 255, so dropping it loses nothing and makes encoding faster)."""
    from PIL import Image, PngImagePlugin

    fig.canvas.draw()
    rgba = fig.canvas.buffer_rgba()
    width, height = fig.canvas.get_width_height()
    image = Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1).convert("RGB")
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", f"netsim plot_tool (matplotlib {matplotlib.__version__})")
    image.save(path, format="png", pnginfo=info, compress_level=PNG_COMPRESS_LEVEL,
               dpi=(fig.dpi, fig.dpi))


@dataclass
class _Job:
    """One figure to write: its file name, size in inches, and how to draw it into a Figure;
    for the figures drawn from a `FigureSpec`, also what is drawn (for inspection)."""

    filename: str
    figsize: tuple[float, float]
    draw: Callable[[Figure], None]
    spec: Optional[FigureSpec] = None
    series: Sequence[Series] = ()
    predictions: Sequence[PredictionSeries] = ()


def _plan_figures(results: Any, *, links: IdSelection = None, flows: IdSelection = None,
                  hosts: IdSelection = None, routers: IdSelection = None,
                  predictions: Optional[bool] = None) -> list[_Job]:
    """The figures `make_figures` writes for `results` (an object with the result attributes),
    in order, with their data prepared; arguments as for `make_figures`."""
    summary = dict(results.summary)
    link_ids = _choose("link", links, summary.get("links", {}))
    flow_ids = _choose("flow", flows, summary.get("flows", {}))
    host_ids = _choose("host", hosts, summary.get("hosts", {}))
    raw_routes = getattr(results, "routes", None)
    routes = None if raw_routes is None else _normalize(raw_routes, "routes")
    router_ids = _choose("router", routers, _known_routers(summary, routes))
    raw_predictions = getattr(results, "predictions", None)
    if predictions and raw_predictions is None:
        raise ValueError("predictions=True, but the results have no predictions "
                         "(predictions.csv is written by a run with --check)")
    prediction_table = (None if raw_predictions is None or predictions is False
                        else _normalize(raw_predictions, "predictions"))

    jobs: list[_Job] = []
    link_series: list[Series] = []
    if link_ids:
        link_table = _normalize(results.links, "links")
        link_series = _link_series(summary, link_table, link_ids)
        link_predictions: list[PredictionSeries] = []
        groups = None
        if links is None and len(link_series) > MAX_TIERED_LINK_LINES:
            groups = _link_groups(summary, link_series,
                                  at_most=MAX_TIERED_LINK_LINES, untiered_at_most=MAX_LINK_LINES)
        if groups is not None:
            link_series = _aggregate(link_series, groups, summary, idle_is_zero=True)
            spec = dataclasses.replace(_links_figure_spec(link_series),
                                       legend_title=AGGREGATE_TITLE.format(what="link directions"))
            jobs.append(_spec_job(spec, link_series, summary))
        elif prediction_table is not None and "backlog_kb" in link_table:
            link_predictions = _prediction_series(prediction_table, link_series, "link",
                                                  ("backlog_kb",))
        if not any(s.members > 1 for s in link_series):
            jobs.append(_spec_job(_links_figure_spec(link_series, backlog=bool(link_predictions)),
                                  link_series, summary, link_predictions))
    if flow_ids:
        flow_table = _normalize(results.flows, "flows")
        flow_series = _flow_series(flow_table, flow_ids)
        flow_predictions: list[PredictionSeries] = []
        spec = FLOWS_FIGURE if "arrival_rate_mbps" in flow_table else FLOWS_FIGURE_GOODPUT
        if flows is None and len(flow_series) > MAX_LINES:
            flow_series = _aggregate(flow_series, _flow_groups(summary, flow_series), summary,
                                     idle_is_zero=False)
            spec = dataclasses.replace(spec, legend_title=AGGREGATE_TITLE.format(what="flows"))
        elif prediction_table is not None:
            flow_predictions = _prediction_series(prediction_table, flow_series, "flow",
                                                  ("rate_mbps", "rtt_ms"))
        jobs.append(_spec_job(spec, flow_series, summary, flow_predictions))
    if host_ids:
        host_series = _host_series(_normalize(results.hosts, "hosts"), host_ids)
        spec = HOSTS_FIGURE
        if hosts is None and len(host_series) > MAX_LINES:
            host_series = _aggregate(host_series, {s.key: "all hosts" for s in host_series},
                                     summary, idle_is_zero=True)
            spec = dataclasses.replace(spec, legend_title=AGGREGATE_TITLE.format(what="hosts"))
        jobs.append(_spec_job(spec, host_series, summary))
    fct = getattr(results, "fct", None)
    if fct is not None and len(fct.get("slowdown", ())):
        jobs.append(_fct_job(_normalize_fct(fct), summary))
    if router_ids and _routes_changed(routes):
        ecmp = bool((summary.get("routing") or {}).get("ecmp"))
        chosen, omitted = _routes_to_plot(_route_series(routes, router_ids, ecmp=ecmp),
                                          end_s=_end_time(summary))
        jobs.append(_routing_job(link_series, chosen, omitted, summary))
    return jobs


def _spec_job(spec: FigureSpec, series: list[Series], summary: dict,
              predictions: Sequence[PredictionSeries] = ()) -> _Job:
    return _Job(spec.filename, _figsize(spec),
                lambda fig: _draw_figure(fig, spec, series, summary, predictions),
                spec=spec, series=series, predictions=list(predictions))


@dataclass
class FctBucket:
    """The finished flows of one workload in one size bucket: their count, size range and the
    `FCT_QUANTILES` of their slowdown (numpy's linear percentiles of the fct.csv values)."""

    workload: str
    bucket: str               # "under_100kb", ...
    count: int
    min_size: float
    max_size: float
    p50: float
    p99: float


def _normalize_fct(fct: Any) -> Table:
    columns = {str(c): fct[c] for c in fct}
    out: Table = {}
    for name in ("workload", "flow"):
        out[name] = np.asarray(columns[name]).astype(str)
    for name in ("size_bytes", "slowdown", "fct_s"):
        out[name] = np.asarray(columns[name], dtype=np.float64)
    return out


def _fct_buckets(fct: Table, summary: dict) -> list[FctBucket]:
    """Per workload (in order of first appearance) and size bucket with flows: `FctBucket`.
    Bucket bounds as the summary's: size < 100 KB, 100 KB <= size <= 10 MB, size > 10 MB (KB and
    MB in the run's units)."""
    units = summary.get("units") or {}
    small = 100 * float(units.get("bytes_per_kb") or 1000)
    large = 10 * float(units.get("bytes_per_mb") or 1_000_000)
    size, slowdown = fct["size_bytes"], fct["slowdown"]
    masks = {"under_100kb": size < small, "100kb_to_10mb": (size >= small) & (size <= large),
             "over_10mb": size > large}
    out = []
    for workload in dict.fromkeys(fct["workload"].tolist()):
        mine = (fct["workload"] == workload) & np.isfinite(slowdown)
        for bucket, _ in FCT_BUCKETS:
            rows = mine & masks[bucket]
            if not rows.any():
                continue
            p50, p99 = np.percentile(slowdown[rows], FCT_QUANTILES)
            out.append(FctBucket(workload, bucket, int(rows.sum()), float(size[rows].min()),
                                 float(size[rows].max()), float(p50), float(p99)))
    return out


def _fct_job(fct: Table, summary: dict) -> _Job:
    workloads = list(dict.fromkeys(fct["workload"].tolist()))
    height = TITLE_HEIGHT_IN + 1.3 * PANEL_HEIGHT_IN * len(workloads)
    return _Job(FCT_FILENAME, (WIDTH_IN, height),
                lambda fig: _draw_fct_figure(fig, fct, summary, workloads))


def _draw_fct_figure(fig: Figure, fct: Table, summary: dict, workloads: Sequence[str]) -> None:
    """fct.png: one panel per workload, flow size (log) against FCT slowdown (log): a dot per
    finished flow, and per size bucket its median and 99th percentile as horizontal segments
    over the sizes of its flows, with their values written beside them."""
    buckets = _fct_buckets(fct, summary)
    names = dict(FCT_BUCKETS)
    axes = stacked_axes(fig, len(workloads), style=STYLE)
    info = summary.get("workloads") or {}
    units = summary.get("units") or {}
    small = 100 * float(units.get("bytes_per_kb") or 1000)
    large = 10 * float(units.get("bytes_per_mb") or 1_000_000)
    for ax, workload in zip(axes, workloads):
        ax.set_xscale("log")
        ax.set_yscale("log")
        rows = fct["workload"] == workload
        n = int(rows.sum())
        ax.scatter(fct["size_bytes"][rows], fct["slowdown"][rows], s=5, linewidths=0,
                   color="0.45", alpha=0.35 if n > 500 else 0.7, zorder=2)
        ax.axhline(1.0, color="0.2", linestyle=(0, (4, 2.5)), linewidth=1.0, zorder=1.8)
        for bound in (small, large):
            ax.axvline(bound, color="0.5", linestyle=":", linewidth=1.0, zorder=1.7)
        for b in (b for b in buckets if b.workload == workload):
            low, high = b.min_size / 1.15, b.max_size * 1.15
            for value, color, gid in ((b.p50, "tab:blue", "p50"), (b.p99, "tab:red", "p99")):
                ax.plot([low, high], [value, value], color=color, linewidth=2.2, zorder=3,
                        solid_capstyle="butt", gid=f"{gid} {b.bucket}")
                above = gid == "p99" or value > b.p99 * 0.999      # p50 below its segment
                ax.annotate(f"{gid} {value:.3g}", xy=(low, value), xytext=(2, 2 if above else -2),
                            textcoords="offset points", va="bottom" if above else "top",
                            fontsize="x-small", color=color, zorder=4)
            ax.annotate(f"{names[b.bucket]}: {b.count} flows", xy=(b.min_size / 1.15, 0.0),
                        xycoords=("data", "axes fraction"), xytext=(2, 3),
                        textcoords="offset points", va="bottom", fontsize="x-small", color="0.3")
        details = info.get(workload) or {}
        unfinished = details.get("flows_unfinished")
        text = f"workload {workload}"
        if details.get("algorithm"):
            text += f" ({details['algorithm']})"
        text += f": {n} finished flows"
        if unfinished:
            text += f", {unfinished} unfinished (not drawn)"
        ax.text(0.99, 0.97, text, transform=ax.transAxes, ha="right", va="top",
                fontsize="small", bbox=dict(boxstyle="round,pad=0.2", facecolor="white",
                                            edgecolor="none", alpha=0.8), zorder=5)
        ax.set_ylabel("FCT slowdown")
        values = fct["slowdown"][rows]
        values = values[np.isfinite(values) & (values > 0)]
        if len(values):           # room below for the labels, above for the workload's text
            ax.set_ylim(min(float(values.min()), 1.0) / 4, max(float(values.max()), 1.0) * 4)
    axes[-1].set_xlabel("flow size (bytes)")
    if len(axes) > 1:                    # one size axis: the same limits in every panel
        low = min(ax.dataLim.x0 for ax in axes)
        high = max(ax.dataLim.x1 for ax in axes)
        for ax in axes:
            ax.set_xlim(low / 1.5, high * 3)
    else:
        axes[0].set_xlim(axes[0].dataLim.x0 / 1.5, axes[0].dataLim.x1 * 3)
    fig.suptitle((str(summary.get("topology", "")) or "netsim results") +
                 ": flow completion time slowdown (FCT / FCT on an empty network)")
    handles = [
        Line2D([], [], linestyle="none", marker="o", markersize=3, color="0.45",
               label="one finished flow"),
        Line2D([], [], color="tab:blue", linewidth=2.2, label=FCT_MEDIAN_LABEL),
        Line2D([], [], color="tab:red", linewidth=2.2, label=FCT_P99_LABEL),
        Line2D([], [], color="0.2", linestyle=(0, (4, 2.5)), linewidth=1.0,
               label="slowdown 1: the FCT on\nan empty network"),
        Line2D([], [], color="0.5", linestyle=":", linewidth=1.0,
               label="size bucket bounds\n(100 KB, 10 MB)"),
    ]
    legend = fig.legend(handles=handles, title="fct.csv; percentiles: linear\ninterpolation "
                        "over the bucket's flows", **_SIDE_LEGEND)
    finish_layout(fig, axes, figure_legends=[legend])


def _routing_job(link_series: list[Series], routes: list[RouteSeries], omitted: int,
                 summary: dict) -> _Job:
    height = TITLE_HEIGHT_IN + (PANEL_HEIGHT_IN if link_series else 0.0) + 1.4 * PANEL_HEIGHT_IN
    return _Job(ROUTING_FILENAME, (WIDTH_IN, height),
                lambda fig: _draw_routing_figure(fig, link_series, routes, omitted, summary))


# ---------------------------------------------------------------------------------------------
# Data preparation: result tables -> Series


def _link_series(summary: dict, table: Table, link_ids: Sequence[str]) -> list[Series]:
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
    link_column = table["link"]
    for link_id in link_ids:
        info = summary.get("links", {}).get(link_id, {}) or {}
        aqm = info.get("queue", "droptail") != "droptail"
        rows = link_column == link_id
        if info.get("duplex") == "half":
            summed = tuple(c for c in columns if c != "sojourn_ms")    # a mean: not summed
            time, values = _sum_by_time(table["time_s"][rows],
                                        {c: table[c][rows] for c in summed})
            values["sojourn_ms"] = np.full(len(time), np.nan)
            out.append(Series(key=link_id, label=link_id, time=time, values=values,
                              entity=link_id, summed=True, aqm=aqm,
                              directions=tuple(_directions(info, table["direction"][rows]))))
            continue
        for direction in _directions(info, table["direction"][rows]):
            both = rows & (table["direction"] == direction)
            time, values = _sorted_rows(table, both, columns)
            out.append(Series(key=f"{link_id} {direction}", label=f"{link_id} {direction}",
                              time=time, values=values, entity=link_id, directions=(direction,),
                              aqm=aqm))
    return out


def _link_groups(summary: dict, series: Sequence[Series], *, at_most: int = 0,
                 untiered_at_most: int = 0) -> Optional[dict[str, str]]:
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


def _flow_groups(summary: dict, series: Sequence[Series]) -> dict[str, str]:
    """Series key -> group of a flow line: its congestion-control algorithm."""
    flows = summary.get("flows", {}) or {}
    return {s.key: str((flows.get(s.entity, {}) or {}).get("algorithm") or "flows")
            for s in series}


_NO_VALUE_WHEN_IDLE = frozenset({"sojourn_ms"})


def _aggregate(series: Sequence[Series], groups: dict[str, str], summary: dict, *,
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
        mean, low, high = {}, {}, {}
        for column in columns:
            # idle: 0, except for a mean over the interval's packets (no packet: no value)
            idle = 0.0 if idle_is_zero and column not in _NO_VALUE_WHEN_IDLE else np.nan
            matrix = np.full((len(members), len(time)), idle)
            for i, s in enumerate(members):
                if column in s.values:
                    matrix[i, np.searchsorted(time, s.time)] = s.values[column]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # an instant with no value
                mean[column] = np.nanmean(matrix, axis=0)
                low[column], high[column] = np.nanpercentile(matrix, AGGREGATE_QUANTILES, axis=0)
        what = "link directions" if members[0].directions else (
            "flows" if not idle_is_zero else "hosts")
        if any(s.summed for s in members):
            what = "links"
        label = f"{group} ({len(members)} {what}): mean"
        out.append(Series(key=f"aggregate {group}", label=label, time=time, values=mean,
                          entity="", members=len(members), low=low, high=high,
                          aqm=any(s.aqm for s in members)))
    return out


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
                 if any(np.nansum(s.values.get(cause.column, np.zeros(0))) > 0 for s in series))


def _link_legend_title(series: Sequence[Series]) -> str:
    """What the lines of a link figure are: link directions, half-duplex links (directions
    summed), or both."""
    summed = [s.summed for s in series]
    if summed and all(summed):
        return HALF_DUPLEX_TITLE
    return MIXED_LINK_TITLE if any(summed) else LINK_TITLE


def _links_figure_spec(series: Sequence[Series], *, backlog: bool = False) -> FigureSpec:
    """``links.png`` for these lines: the drops panel draws the causes of loss present
    (`_loss_causes`; none: "no packets lost"), the legend title says what the lines are, and the
    buffer panel is `BACKLOG_PANEL` (simulated backlog, with the predicted one over it) when
    `backlog` is true. `LINKS_FIGURE` itself when that is what it shows."""
    drops = dataclasses.replace(LINKS_FIGURE.panels[1], losses=_loss_causes(series))
    panels = (BACKLOG_PANEL if backlog else BUFFER_PANEL, drops, RATE_PANEL)
    if any(s.aqm for s in series):
        panels += (SOJOURN_PANEL,)
    spec = FigureSpec(LINKS_FIGURE.filename, panels, _link_legend_title(series))
    return LINKS_FIGURE if spec == LINKS_FIGURE else spec


def _flow_series(table: Table, flow_ids: Sequence[str]) -> list[Series]:
    columns = _FLOW_VALUES + (("arrival_rate_mbps",) if "arrival_rate_mbps" in table else ())
    return [Series(key=f, label=f, time=t, values=v, entity=f)
            for f in flow_ids
            for t, v in [_sorted_rows(table, table["flow"] == f, columns)]]


def _host_series(table: Table, host_ids: Sequence[str]) -> list[Series]:
    return [Series(key=h, label=h, time=t, values=v, entity=h)
            for h in host_ids
            for t, v in [_sorted_rows(table, table["host"] == h, _HOST_VALUES)]]


def _prediction_series(table: Table, series: Sequence[Series], kind: str,
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


def _known_routers(summary: dict, routes: Optional[Table]) -> dict:
    """Router ids: summary["routers"] (newer results), else those of the routes table."""
    known = summary.get("routers")
    if isinstance(known, dict) and known:
        return known
    if routes is None:
        return {}
    return dict.fromkeys(routes["router"].tolist())


def _routes_changed(routes: Optional[Table]) -> bool:
    """Whether a forwarding table changed after the static tables of t = 0."""
    return routes is not None and bool(np.any(routes["time_s"] > 0))


def _route_series(routes: Table, router_ids: Sequence[str], *,
                  ecmp: bool = False) -> list[RouteSeries]:
    """One `RouteSeries` per (router, destination) of the selected routers, in router order, then
    destinations in order of first appearance (the t = 0 rows list them in the topology's order)."""
    order = np.argsort(routes["time_s"], kind="stable")
    time = routes["time_s"][order]
    router, destination = routes["router"][order], routes["destination"][order]
    cost, hop, link = routes["cost_ms"][order], routes["next_hop"][order], routes["link"][order]
    out: list[RouteSeries] = []
    for router_id in router_ids:
        mine = router == router_id
        for dest in dict.fromkeys(destination[mine].tolist()):
            rows = mine & (destination == dest)
            t, c, h, k = time[rows], cost[rows], hop[rows], link[rows]
            if ecmp:                   # a set's members share a time: one row per set
                t, c, h, k = _ecmp_sets(t, c, h, k)
            out.append(RouteSeries(router=router_id, destination=dest, time=t, cost_ms=c,
                                   next_hop=h, link=k))
    return out


def _ecmp_sets(time, cost, hop, link):
    """One row per installation: with ECMP an installation writes one row per member of the
    equal-cost set (same time); those become one row whose next hop and link are the members
    joined by " | " (docs/outputs.md, routes.csv)."""
    if len(time) < 2 or not np.any(time[1:] == time[:-1]):
        return time, cost, hop, link
    starts = np.flatnonzero(np.r_[True, time[1:] != time[:-1]])
    ends = np.r_[starts[1:], len(time)]
    joined_hops = np.array([" | ".join(hop[a:b].tolist()) for a, b in zip(starts, ends)],
                           dtype=object)
    joined_links = np.array([" | ".join(link[a:b].tolist()) for a, b in zip(starts, ends)],
                            dtype=object)
    return time[starts], cost[starts], joined_hops, joined_links


def _routes_to_plot(series: Sequence[RouteSeries], limit: int = MAX_ROUTE_LINES, *,
                    end_s: Optional[float] = None) -> tuple[list[RouteSeries], int]:
    """The route lines of routing.png and how many more routes qualified.

    Those whose next hop changed at least once; when no next hop changed at all, those whose
    cost changed after t = 0 (at most MAX_COST_ONLY_LINES lines). Routes whose lines would be
    drawn on top of each other (`_merge_coincident`) become one line labelled with all of them.
    Beyond the limit, the lines with the most next-hop changes (cost only: whose finite cost
    varied most) are kept. Ties keep the given order, the lines kept are returned in the given
    order, and the count of the others is in routes (a merged line counts each of its routes).
    """
    chosen = [s for s in series if len(s.changes)]
    cost_only = not chosen
    if cost_only:
        chosen = [s for s in series if np.any(s.time > 0)]
        limit = min(limit, MAX_COST_ONLY_LINES)
    chosen = _merge_coincident(chosen, end_s)
    if cost_only:
        weight = [float(np.ptp(c)) if len(c := s.cost_ms[np.isfinite(s.cost_ms)]) else 0.0
                  for s in chosen]
    else:
        weight = [float(len(s.changes)) for s in chosen]
    if len(chosen) <= limit:
        return list(chosen), 0
    keep = sorted(sorted(range(len(chosen)), key=lambda i: -weight[i])[:limit])
    omitted = sum(1 + len(chosen[i].also) for i in range(len(chosen)) if i not in keep)
    return [chosen[i] for i in keep], omitted


def _route_tolerances(series: Sequence[RouteSeries], end_s: Optional[float]
                      ) -> tuple[float, float, float]:
    """(end of the time axis, time tolerance, cost tolerance) for comparing route lines: the
    `COINCIDENT_FRACTION` of the ranges the panel will show. Without `end_s` the axis is taken
    to end a twentieth after the last installation (which then still shows)."""
    times = [float(s.time[-1]) for s in series if len(s.time)]
    last = max(times or [0.0])
    end = max(end_s, last) if end_s is not None else last + max(last / 20, 1e-9)
    costs = np.concatenate([s.cost_ms[np.isfinite(s.cost_ms)] for s in series] or [np.zeros(0)])
    span = float(np.ptp(costs)) if len(costs) else 0.0
    return end, COINCIDENT_FRACTION * max(end, 1e-9), COINCIDENT_FRACTION * max(span, 1e-9)


def _cost_distance(a: RouteSeries, b: RouteSeries, end: float, time_tol: float) -> float:
    """Largest difference between the cost lines of `a` and `b` (steps held from each
    installation until `end`), over the instants where both are defined, leaving out stretches
    shorter than `time_tol` (invisible at the figure's resolution). inf where one route is
    unreachable and the other not."""
    grid = np.union1d(a.time, b.time)
    grid = grid[grid <= end]
    if not len(grid):
        return 0.0
    lengths = np.diff(np.append(grid, end))
    ia = np.searchsorted(a.time, grid, side="right") - 1
    ib = np.searchsorted(b.time, grid, side="right") - 1
    visible = (lengths >= time_tol) & (ia >= 0) & (ib >= 0)
    ca, cb = a.cost_ms[ia[visible]], b.cost_ms[ib[visible]]
    same_inf = np.isinf(ca) & np.isinf(cb)
    diff = np.where(same_inf, 0.0, np.abs(ca - cb))
    diff = np.where(np.isnan(diff), math.inf, diff)
    return float(diff.max()) if len(diff) else 0.0


def _same_changes(a: RouteSeries, b: RouteSeries, time_tol: float) -> bool:
    """Whether `a` and `b` change next hop at the same instants (within `time_tol`) to the same
    labelled next hops (their markers and labels would coincide too)."""
    ca, cb = a.changes, b.changes
    if len(ca) != len(cb):
        return False
    if not len(ca):
        return True
    return bool(np.all(np.abs(a.time[ca] - b.time[cb]) <= time_tol)) and \
        [a.change_label(i) for i in ca] == [b.change_label(i) for i in cb]


def _merge_coincident(series: Sequence[RouteSeries], end_s: Optional[float]) -> list[RouteSeries]:
    """`series` with the routes whose lines would coincide drawn once: a route whose cost line is
    within `COINCIDENT_FRACTION` of the panel's cost range of an earlier route's at every visible
    instant, with the same next-hop changes, is merged into it (`RouteSeries.also`). Routes that
    merge with nothing are returned as they are (same objects)."""
    if len(series) < 2:
        return list(series)
    end, time_tol, cost_tol = _route_tolerances(series, end_s)
    groups: list[list[RouteSeries]] = []
    for s in series:
        for group in groups:
            first = group[0]
            if _same_changes(first, s, time_tol) and \
                    _cost_distance(first, s, end, time_tol) <= cost_tol:
                group.append(s)
                break
        else:
            groups.append([s])
    return [group[0] if len(group) == 1 else
            dataclasses.replace(group[0], also=tuple((m.router, m.destination) for m in group[1:]))
            for group in groups]


def _route_linewidths(routes: Sequence[RouteSeries], end_s: Optional[float]) -> list[float]:
    """Line width of each route line, in drawing order: a line that later lines cover over at
    least 5 % of the time axis (closer than twice the coincidence tolerance) is drawn wider, by
    `ROUTE_HALO` per covering line (at most 3), so that it shows as a coloured edge around them."""
    if len(routes) < 2:
        return [ROUTE_WIDTH] * len(routes)
    end, _, cost_tol = _route_tolerances(routes, end_s)
    widths = []
    for i, route in enumerate(routes):
        covering = 0
        for later in routes[i + 1:]:
            if _covered_fraction(route, later, end, 2 * cost_tol) >= 0.05:
                covering += 1
        widths.append(ROUTE_WIDTH + ROUTE_HALO * min(covering, 3))
    return widths


def _covered_fraction(a: RouteSeries, b: RouteSeries, end: float, cost_tol: float) -> float:
    """Fraction of [0, end] over which the cost lines of `a` and `b` are within `cost_tol`."""
    grid = np.union1d(a.time, b.time)
    grid = grid[grid < end]
    if not len(grid) or end <= 0:
        return 0.0
    lengths = np.diff(np.append(grid, end))
    ia = np.searchsorted(a.time, grid, side="right") - 1
    ib = np.searchsorted(b.time, grid, side="right") - 1
    both = (ia >= 0) & (ib >= 0)
    ca, cb = a.cost_ms[ia[both]], b.cost_ms[ib[both]]
    close = np.isfinite(ca) & np.isfinite(cb) & (np.abs(ca - cb) <= cost_tol)
    return float(lengths[both][close].sum() / end)


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


def _sorted_rows(table: Table, mask: np.ndarray, columns: Sequence[str]
                 ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The rows of one entity (`mask`), sorted by time: the times and the named columns."""
    time = table["time_s"][mask]
    order = np.argsort(time, kind="stable")
    return time[order], {c: table[c][mask][order] for c in columns}


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


def _normalize(table: Any, name: str) -> Table:
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


def _floats(values: Any) -> Optional[np.ndarray]:
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


def _choose(kind: str, requested: IdSelection, known: dict) -> list[str]:
    known_ids = [str(k) for k in known]
    if requested is None:
        return known_ids
    if isinstance(requested, str):
        requested = [requested]
    chosen: list[str] = []
    for item in requested:
        if item not in known_ids:
            raise ValueError(f"unknown {kind} {item!r}; known: {', '.join(known_ids) or 'none'}")
        if item not in chosen:
            chosen.append(item)
    return chosen


def _end_time(summary: dict) -> Optional[float]:
    end = summary.get("end_time_s")
    return float(end) if isinstance(end, (int, float)) and end > 0 else None


def _interval_s(summary: dict, series: Sequence[Any] = ()) -> Optional[float]:
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


# ---------------------------------------------------------------------------------------------
# Lines: where a line breaks


def _run_starts(time: np.ndarray, values: np.ndarray, interval_s: Optional[float],
                idle_is_zero: bool) -> np.ndarray:
    """Indices of the samples that begin a run (0 first): a sample more than `GAP_FACTOR`
    sampling intervals after the previous one, unless `idle_is_zero` and both bound a gap with
    zero values (an idle entity: zero all along the gap)."""
    if interval_s is None or len(time) < 2:
        return np.zeros(1 if len(time) else 0, dtype=np.intp)
    gap = np.diff(time) > GAP_FACTOR * interval_s
    if idle_is_zero:
        gap &= ~((values[:-1] == 0) & (values[1:] == 0))
    return np.concatenate(([0], np.flatnonzero(gap) + 1))


def _interval_start(time: np.ndarray, interval_s: Optional[float]) -> np.ndarray:
    """Start of the sampling interval that ends at each of `time` (sampling instants are the
    multiples of `interval_s`, and the end of the run)."""
    if interval_s is None:
        return np.asarray(time, dtype=np.float64)
    return np.maximum(0.0, interval_s * (np.ceil(time / interval_s - 1e-6) - 1))


def _line_arrays(time: np.ndarray, values: np.ndarray, *, style: str,
                 interval_s: Optional[float], idle_is_zero: bool
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
    starts = _run_starts(time, values, interval_s, idle_is_zero)
    if style == "instant":
        later = starts[1:]
        if not len(later):
            return time, values
        return (np.insert(time, later, (time[later - 1] + time[later]) / 2),
                np.insert(values, later, np.nan))
    lead = _interval_start(time[starts], interval_s)
    x = np.insert(time, starts, lead)
    y = np.insert(values, starts, values[starts])
    if len(starts) > 1:
        # before each later run's lead point: a NaN point at the same x (with steps-pre, a NaN
        # point elsewhere would draw a horizontal segment from it to the lead point)
        at = starts[1:] + np.arange(1, len(starts))
        x = np.insert(x, at, lead[1:])
        y = np.insert(y, at, np.nan)
    return x, y


def _isolated(time: np.ndarray, values: np.ndarray, interval_s: Optional[float],
              idle_is_zero: bool) -> np.ndarray:
    """Mask of the samples with a value whose neighbours in their run are both missing: drawn
    as a step of one interval only, so they also get a dot."""
    n = len(time)
    if not n:
        return np.zeros(0, dtype=bool)
    finite = np.isfinite(values)
    starts = np.zeros(n, dtype=bool)
    starts[_run_starts(time, values, interval_s, idle_is_zero)] = True
    ends = np.append(starts[1:], True)
    left_missing = starts | np.concatenate(([True], ~finite[:-1]))
    right_missing = ends | np.append(~finite[1:], True)
    return finite & left_missing & right_missing


# ---------------------------------------------------------------------------------------------
# Drawing


def _figsize(spec: FigureSpec) -> tuple[float, float]:
    return WIDTH_IN, TITLE_HEIGHT_IN + PANEL_HEIGHT_IN * len(spec.panels)


def _draw_figure(fig: Figure, spec: FigureSpec, series: list[Series], summary: dict,
                 predictions: Sequence[PredictionSeries] = ()) -> None:
    """Draw `series` into `fig`: one panel per `spec.panels` entry, shared time axis, one legend.

    `predictions` are drawn over the panels whose ``prediction`` is their quantity, in the colour
    of their series; the legend then has an entry for them. A losses panel adds an entry per
    cause drawn."""
    _assign_colors(series)
    colors = {s.key: s.color for s in series}
    axes = _stacked_axes(fig, len(spec.panels))
    labels = _unit_labels(summary)
    interval_s = _interval_s(summary, series)
    drawn = {"line": False, "band": False}
    extra: list[Any] = []
    for ax, panel in zip(axes, spec.panels):
        if panel.losses is not None:
            extra += _plot_losses(ax, series, panel.losses, interval_s, spec.idle_is_zero)
        else:
            _plot_panel(ax, series, panel, interval_s=interval_s, idle_is_zero=spec.idle_is_zero)
        if panel.prediction is not None:
            line, band = _plot_predictions(
                ax, [p for p in predictions if p.quantity == panel.prediction], colors)
            drawn["line"] |= line
            drawn["band"] |= band
        if panel.losses is None or panel.losses:
            _zero_based_ylim(ax)
        ylabel = panel.ylabel
        if panel.losses and MARKS in panel.losses:       # marks are not losses: say so
            ylabel = LOSSES_AND_MARKS_YLABEL
        ax.set_ylabel(ylabel.format(**labels))
    _finish_time_axis(axes, summary)
    fig.suptitle(str(summary.get("topology", "")) or "netsim results")
    bands = [Patch(facecolor=(0.35, 0.35, 0.35, 0.2), edgecolor="none",
                   label="10th\u201390th percentile\nof the group (shaded)")] \
        if any(s.low is not None for s in series) else []
    legend = _add_legend(fig, axes[0], spec.legend_title,
                         extra + bands + _prediction_handles(drawn["line"], drawn["band"]))
    finish_layout(fig, axes, figure_legends=[legend] if legend is not None else [])


def _zero_based_ylim(ax: Any) -> None:
    """y from 0 to 5 % above the largest value drawn (0 to 1 when nothing positive is)."""
    top = ax.dataLim.y1 if ax.dataLim.height >= 0 else math.nan
    ax.set_ylim(0, top * 1.05 if math.isfinite(top) and top > 0 else 1.0)


def _finish_time_axis(axes: Sequence[Any], summary: dict) -> None:
    """Label the time axis and make it span the run (0 to ``end_time_s``) in every panel."""
    axes[-1].set_xlabel("time (s)")
    end = _end_time(summary)
    if end is not None:
        for ax in axes:
            ax.set_xlim(0, end)


def _plot_panel(ax: Any, series: Sequence[Series], panel: Panel, *,
                interval_s: Optional[float] = None, idle_is_zero: bool = True,
                linestyle: str = "-", with_labels: bool = True) -> None:
    """Draw one column of every series into `ax` (each series in its own colour, one Line2D
    each, broken where `_line_arrays` says)."""
    if panel.style not in STYLES:
        raise ValueError(f"unknown panel style {panel.style!r}")
    for s in series:
        _plot_values(ax, s, s.values[panel.column], style=panel.style, interval_s=interval_s,
                     idle_is_zero=idle_is_zero, linestyle=linestyle,
                     label=s.label if with_labels else "_nolegend_")
        if s.low is not None and s.high is not None:
            _plot_band(ax, s, panel.column, style=panel.style, interval_s=interval_s,
                       idle_is_zero=idle_is_zero)


def _plot_band(ax: Any, s: Series, column: str, *, style: str, interval_s: Optional[float],
               idle_is_zero: bool) -> None:
    """The 10th-90th percentile band of an aggregate line, shaded in its colour, broken where
    the line is (`_line_arrays`)."""
    assert s.low is not None and s.high is not None
    x, low = _line_arrays(s.time, s.low[column], style=style, interval_s=interval_s,
                          idle_is_zero=idle_is_zero)
    _, high = _line_arrays(s.time, s.high[column], style=style, interval_s=interval_s,
                           idle_is_zero=idle_is_zero)
    ax.fill_between(x, low, high, where=np.isfinite(low) & np.isfinite(high), color=s.color,
                    alpha=0.2, linewidth=0, zorder=1.5, label="_nolegend_",
                    step=None if style == "instant" else "pre")


def _plot_values(ax: Any, s: Series, values: np.ndarray, *, style: str,
                 interval_s: Optional[float], idle_is_zero: bool, linestyle: str,
                 label: str) -> None:
    x, y = _line_arrays(s.time, values, style=style, interval_s=interval_s,
                        idle_is_zero=idle_is_zero)
    ax.plot(x, y, color=s.color, linestyle=linestyle, linewidth=LINE_WIDTH, label=label,
            drawstyle="default" if style == "instant" else "steps-pre")
    if style == "sparse":
        alone = _isolated(s.time, values, interval_s, idle_is_zero)
        if alone.any():
            t = s.time[alone]
            ax.plot((_interval_start(t, interval_s) + t) / 2, values[alone], linestyle="none",
                    marker=".", markersize=5, color=s.color, label="_nolegend_")


def _plot_losses(ax: Any, series: Sequence[Series], causes: Sequence[LossCause],
                 interval_s: Optional[float], idle_is_zero: bool) -> list[Any]:
    """The drops panel: for each cause with losses, one line per series in its colour and the
    cause's line style; "no packets lost" in the panel when there are none. Returns the legend
    entries: a header, then per cause its line style, name and total over the plotted lines."""
    ax.yaxis.set_major_locator(MaxNLocator(nbins=Y_TICKS, steps=[1, 2, 2.5, 5, 10],
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
            total += float(np.nansum(values)) * s.members    # an aggregate: mean x members
            _plot_values(ax, s, values, style="interval", interval_s=interval_s,
                         idle_is_zero=idle_is_zero, linestyle=cause.linestyle,
                         label="_nolegend_")
        handles.append(Line2D([], [], color="0.3", linestyle=cause.linestyle,
                              linewidth=LINE_WIDTH, label=f"{cause.label}: {total:.0f}"))
    return handles


def _plot_predictions(ax: Any, predictions: Sequence[PredictionSeries],
                      colors: dict[str, Optional[str]]) -> tuple[bool, bool]:
    """Draw predictions as dashed steps, or shaded bands where low < high; return whether any
    dashed line and any band was drawn."""
    any_line = any_band = False
    for p in predictions:
        color = colors.get(p.key)
        x, low, high, band = p.steps()
        value = ~band & ~np.isnan(low)
        if value.any():
            ax.plot(x, np.where(value, low, np.nan), color=color, linestyle=(0, (4, 2.5)),
                    linewidth=1.7, zorder=3, label="_nolegend_")
            any_line = True
        if band.any():
            lows, highs = np.where(band, low, np.nan), np.where(band, high, np.nan)
            ax.fill_between(x, lows, highs, where=band, color=color, alpha=0.2, linewidth=0,
                            zorder=1.5, label="_nolegend_")
            for edge in (lows, highs):      # edges: overlapping bands stay distinguishable
                ax.plot(x, edge, color=color, linewidth=0.9, alpha=0.8, zorder=1.6,
                        label="_nolegend_")
            any_band = True
    return any_line, any_band


def _prediction_handles(line: bool, band: bool) -> list[Any]:
    """Legend entries explaining the prediction overlay."""
    handles: list[Any] = []
    if line:
        handles.append(Line2D([], [], color="0.35", linestyle=(0, (4, 2.5)), linewidth=1.7,
                              label=PREDICTION_LABEL))
    if band:
        handles.append(Patch(facecolor=(0.35, 0.35, 0.35, 0.2), edgecolor=(0.35, 0.35, 0.35, 0.8),
                             linewidth=0.9, label=PREDICTION_BAND_LABEL))
    return handles


_SIDE_LEGEND = dict(loc="upper left", borderaxespad=0.0, fontsize="small",
                    title_fontsize="small", frameon=False, alignment="left")


def _draw_routing_figure(fig: Figure, link_series: list[Series], routes: list[RouteSeries],
                         omitted: int, summary: dict) -> None:
    """routing.png: the rate of the links of interest (if any) over the route cost of each router
    to each destination whose next hop changed, with a marker and the new next hop at each change.
    Dotted vertical lines in every panel mark the times of those changes."""
    n = 2 if link_series else 1
    axes = _stacked_axes(fig, n, height_ratios=[1.0, 1.4][-n:])
    labels = _unit_labels(summary)
    legends = []
    if link_series:
        _assign_colors(link_series)
        ax = axes[0]
        _plot_panel(ax, link_series, RATE_PANEL, interval_s=_interval_s(summary, link_series),
                    idle_is_zero=True)
        ax.set_ylabel(RATE_PANEL.ylabel.format(**labels))
        _zero_based_ylim(ax)
        title = _link_legend_title(link_series)
        legends.append(ax.legend(title=title, ncol=_legend_columns(
            len(link_series), PANEL_HEIGHT_IN, title), **_SIDE_LEGEND))

    ax = axes[-1]
    _assign_colors(routes, start=len(link_series))   # colours not used by the links above
    end = _end_time(summary)
    change_times: list[float] = []
    no_route_labels: set[int] = set()
    widths = _route_linewidths(routes, end)
    for index, (route, width) in enumerate(zip(routes, widths)):
        change_times += _plot_route(ax, route, end, above=index % 2 == 0, linewidth=width,
                                    no_route_labels=no_route_labels)
    if not routes:
        ax.text(0.5, 0.5, "no route changed for the selected routers", ha="center",
                va="center", transform=ax.transAxes, color="0.4")
    ax.set_ylabel("route cost (ms)")
    title = "router \u2192 destination\n\u25cf next hop changed\n(labelled with the new one)"
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
        legends.append(ax.legend(title=title, ncol=_legend_columns(
            rows, 1.4 * PANEL_HEIGHT_IN, title), **_SIDE_LEGEND))
    for axis in axes:
        for t in sorted(set(change_times)):
            axis.axvline(t, color="0.6", linestyle=":", linewidth=0.8, zorder=0)
    _finish_time_axis(axes, summary)
    fig.suptitle((str(summary.get("topology", "")) or "netsim results") + ": dynamic routing")
    finish_layout(fig, axes, axes_legends=legends)


def _plot_route(ax: Any, route: RouteSeries, end: Optional[float], *, above: bool,
                no_route_labels: set[int], linewidth: float = ROUTE_WIDTH) -> list[float]:
    """Draw one route's cost as steps held from each installation on; return the change times.

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
        ax.annotate(text, xy=xy, xycoords=transform, xytext=(4, -5 if down else 5),
                    textcoords="offset points", ha="left", va="top" if down else "bottom",
                    fontsize="x-small", color="0.3" if transform is top else route.color,
                    bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none",
                              alpha=0.75))
    return [float(route.time[i]) for i in changes]


def _add_legend(fig: Figure, ax: Any, title: str, extra: Sequence[Any] = ()) -> Optional[Any]:
    """The figure's legend, right of the panels (placed by `finish_layout`): one entry per line
    of `ax`, then `extra`. None when `ax` has no labelled line."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    height_in = fig.get_size_inches()[1] - TITLE_HEIGHT_IN
    room = MAX_LEGEND_COLUMNS * _legend_columns_fit(height_in, title)
    if len(handles) + len(extra) > room:      # hundreds of chosen lines: list the first ones
        keep = max(1, room - len(extra) - 1)
        more = Line2D([], [], linestyle="none",
                      label=f"\u2026 and {len(handles) - keep} more lines (not listed)")
        handles, labels = list(handles[:keep]) + [more], list(labels[:keep]) + [more.get_label()]
    handles = list(handles) + list(extra)
    labels = list(labels) + [h.get_label() for h in extra]
    return fig.legend(handles, labels, ncol=_legend_columns(len(handles), height_in, title),
                      title=title, **_SIDE_LEGEND)


MAX_LEGEND_COLUMNS = 2      # a wider legend would leave the panels no room


def _legend_columns_fit(height_in: float, title: str = "") -> int:
    """Lines of legend text that fit in one column of `height_in` inches (see
    `_legend_columns`)."""
    return max(1, int(height_in * 5) - (title.count("\n") + 1 if title else 0))


def _legend_columns(rows: int, height_in: float, title: str = "") -> int:
    """Columns for a legend of `rows` lines of text under `title` to fit in `height_in` inches
    (about 5 lines of small text per inch)."""
    fit = max(1, int(height_in * 5) - (title.count("\n") + 1 if title else 0))
    return max(1, math.ceil(rows / fit))


def _assign_colors(series: Sequence[Any], start: int = 0) -> None:
    """Distinct colours: tab10 up to 10 lines, otherwise tab20 (dark shades first).

    `start` skips the first colours, already used by `start` other lines of the same figure.
    """
    from matplotlib import colormaps

    if start + len(series) <= 10:
        palette = list(colormaps["tab10"].colors)
    else:
        tab20 = list(colormaps["tab20"].colors)
        palette = tab20[0::2] + tab20[1::2]
    for i, s in enumerate(series, start):
        if s.color is None:
            r, g, b = palette[i % len(palette)][:3]
            s.color = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _unit_labels(summary: dict) -> dict[str, str]:
    units = summary.get("units") or {}
    suffix = ", binary" if units.get("system") == "binary" else ""
    interval = summary.get("interval_s")
    interval_text = f"{interval:g} s" if isinstance(interval, (int, float)) else "sample"
    return {"Mbps": f"Mbps{suffix}", "KB": f"KB{suffix}", "interval": interval_text}


__all__ = ["make_figures"]
