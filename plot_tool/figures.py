"""Figures of a simulation run: ``links.png``, ``flows.png``, ``hosts.png`` and, when dynamic
routing changed a forwarding table, ``routing.png`` (see docs/outputs.md).

The work is split into data preparation and drawing:

* ``_link_series`` / ``_flow_series`` / ``_host_series`` turn the result tables into a list of
  `Series` (one per plotted line: a label, times, and one array per panel column);
* ``_prediction_series`` matches the rows of ``predictions.csv`` (written by ``--check``) to those
  series: one `PredictionSeries` per series and predicted quantity (piecewise constant, with a
  [low, high] interval for Vegas). A flow's prediction belongs to the flow's series; a link's to
  the series of the same link whose directions include the prediction's (a half-duplex link: its
  summed line; a full-duplex direction: that direction's line);
* a `FigureSpec` lists the panels of one figure (`Panel`: column, y label, drawing style);
* ``_draw_figure`` draws a list of series into a given matplotlib Figure, one ``_plot_panel`` call
  per panel, and adds the shared legend. A panel may name an ``overlay`` column, drawn dashed in
  the same colours (``links.png`` uses it for failure drops, only when there are any:
  ``_links_figure_spec``), and a ``prediction`` quantity: the matching `PredictionSeries` are
  drawn as dashed steps in the colour of their series, or as a shaded band where low < high
  (``_plot_predictions``). When link predictions are drawn, the buffer panel of ``links.png``
  shows the simulated ``backlog_kb`` (the quantity the fluid model predicts) instead of
  ``buffer_kb``.
* ``routing.png`` has its own preparation (``_route_series``: one `RouteSeries` per router and
  destination, from ``routes.csv``; ``_routes_to_plot`` picks the ones whose next hop changed) and
  drawing (``_draw_routing_figure``); its top panel reuses the link series.

Saving uses the object-oriented API (`matplotlib.figure.Figure` with an Agg canvas), so nothing
needs a display; pyplot is imported only when ``show=True``.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from plot_tool.results import OPTIONAL_COLUMNS, SCHEMAS, Table, read_results

PathLike = Union[str, "os.PathLike[str]"]
IdSelection = Optional[Union[str, Iterable[str]]]

# Drawing styles of a panel:
#   "interval": the value covers (time - interval, time]: drawn as steps ending at each sample time;
#   "instant":  the value was sampled at that instant: straight segments between samples;
#   "sparse":   interval values that may be missing (NaN): missing samples are skipped and the
#               remaining ones joined by straight segments.
STYLES = ("interval", "instant", "sparse")

DPI = 110
WIDTH_IN = 11.0
PANEL_HEIGHT_IN = 2.4

ROUTING_FILENAME = "routing.png"
MAX_ROUTE_LINES = 12          # routing.png: at most this many router -> destination lines
MAX_LABELS_PER_LINE = 10      # and at most this many next-hop labels per line (markers: all)
MAX_COST_ONLY_LINES = 6       # lines when no next hop changed (costs only: the widest ranges)


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
class Panel:
    column: str                   # key into Series.values
    ylabel: str                   # may contain {Mbps}, {KB} and {interval} placeholders
    style: str = "interval"
    overlay: Optional[str] = None  # another column, drawn dashed in the same colours
    labels: tuple[str, str] = ("", "")  # in-panel legend: (solid lines, dashed overlay)
    prediction: Optional[str] = None   # predictions.csv quantity drawn over this panel


@dataclass
class RouteSeries:
    """The forwarding-table entry of one router for one destination, over the run.

    Row i holds the entry installed at ``time[i]`` (row 0: the static table of t=0), in force
    until ``time[i + 1]``. ``cost_ms`` is inf and ``next_hop`` and ``link`` are "" while the
    destination is unreachable.
    """

    router: str
    destination: str
    time: np.ndarray
    cost_ms: np.ndarray
    next_hop: np.ndarray
    link: np.ndarray
    color: Optional[str] = None

    @property
    def label(self) -> str:
        return f"{self.router} \u2192 {self.destination}"

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


LINKS_FIGURE = FigureSpec("links.png", (
    Panel("buffer_kb", "buffer occupancy ({KB})"),
    Panel("drops", "drops (packets per\n{interval} interval)"),
    Panel("rate_mbps", "transmitted rate ({Mbps})"),
), legend_title="link direction")

# The drops panel of links.png when some link lost packets because it was down.
FAILURE_DROPS_PANEL = Panel("drops", LINKS_FIGURE.panels[1].ylabel, overlay="failure_drops",
                            labels=("buffer full", "failure (link down)"))

RATE_PANEL = LINKS_FIGURE.panels[2]

# The buffer panel of links.png when predictions are drawn: the simulated backlog (unfinished work:
# waiting bytes plus the rest of the packet in transmission), which is what the fluid model
# predicts, with the predicted backlog over it.
BACKLOG_PANEL = Panel("backlog_kb", "backlog ({KB})", prediction="backlog_kb")

FLOWS_FIGURE = FigureSpec("flows.png", (
    Panel("send_rate_mbps", "send rate ({Mbps})"),
    Panel("recv_rate_mbps", "receive rate, goodput\n({Mbps})", prediction="rate_mbps"),
    Panel("window_pkts", "window (packets)", style="instant"),
    Panel("rtt_ms", "RTT (ms)", style="sparse", prediction="rtt_ms"),
), legend_title="flow")

PREDICTION_LABEL = "analytic prediction (dashed)"
PREDICTION_BAND_LABEL = "predicted interval (shaded)"

HOSTS_FIGURE = FigureSpec("hosts.png", (
    Panel("send_rate_mbps", "send rate ({Mbps})"),
    Panel("recv_rate_mbps", "receive rate ({Mbps})"),
), legend_title="host")

_LINK_VALUES = ("rate_mbps", "buffer_kb", "buffer_pkts", "backlog_kb", "drops", "failure_drops",
                "routing_rate_mbps")
_FLOW_VALUES = ("send_rate_mbps", "recv_rate_mbps", "window_pkts", "rtt_ms")
_HOST_VALUES = ("send_rate_mbps", "recv_rate_mbps")


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
            predict (a shaded band where the prediction is an interval, for Vegas) on the receive
            rate and RTT panels of ``flows.png`` and the buffer panel of ``links.png``, which then
            shows the simulated ``backlog_kb`` instead of ``buffer_kb``.
        show: after saving, also show the figures with pyplot (blocks until they are closed).

    The paths are returned in the order links, flows, hosts, routing (figures not written are
    left out).
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
    for job in jobs:
        fig = Figure(figsize=job.figsize, layout="constrained")
        FigureCanvasAgg(fig)
        job.draw(fig)
        path = out_dir / job.filename
        fig.savefig(path, dpi=DPI)
        written.append(path)

    if show and jobs:
        import matplotlib.pyplot as plt  # only here: pyplot may need a display

        for job in jobs:
            job.draw(plt.figure(figsize=job.figsize, layout="constrained"))
        plt.show()
    return written


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
        if prediction_table is not None and "backlog_kb" in link_table:
            link_predictions = _prediction_series(prediction_table, link_series, "link",
                                                  ("backlog_kb",))
        jobs.append(_spec_job(_links_figure_spec(link_series, backlog=bool(link_predictions)),
                              link_series, summary, link_predictions))
    if flow_ids:
        flow_series = _flow_series(_normalize(results.flows, "flows"), flow_ids)
        flow_predictions: list[PredictionSeries] = []
        if prediction_table is not None:
            flow_predictions = _prediction_series(prediction_table, flow_series, "flow",
                                                  ("rate_mbps", "rtt_ms"))
        jobs.append(_spec_job(FLOWS_FIGURE, flow_series, summary, flow_predictions))
    if host_ids:
        jobs.append(_spec_job(HOSTS_FIGURE, _host_series(_normalize(results.hosts, "hosts"),
                                                         host_ids), summary))
    if router_ids and _routes_changed(routes):
        chosen, omitted = _routes_to_plot(_route_series(routes, router_ids))
        jobs.append(_routing_job(link_series, chosen, omitted, summary))
    return jobs


def _spec_job(spec: FigureSpec, series: list[Series], summary: dict,
              predictions: Sequence[PredictionSeries] = ()) -> _Job:
    return _Job(spec.filename, _figsize(spec),
                lambda fig: _draw_figure(fig, spec, series, summary, predictions),
                spec=spec, series=series, predictions=list(predictions))


def _routing_job(link_series: list[Series], routes: list[RouteSeries], omitted: int,
                 summary: dict) -> _Job:
    height = 1.0 + (PANEL_HEIGHT_IN if link_series else 0.0) + 1.4 * PANEL_HEIGHT_IN
    return _Job(ROUTING_FILENAME, (WIDTH_IN, height),
                lambda fig: _draw_routing_figure(fig, link_series, routes, omitted, summary))


# ---------------------------------------------------------------------------------------------
# Data preparation: result tables -> Series


def _link_series(summary: dict, table: Table, link_ids: Sequence[str]) -> list[Series]:
    """One series per link direction; one per link (directions summed) for a half-duplex link.

    A half-duplex link has one buffer and one transmitter shared by its two directions, so its
    buffer occupancy, backlog, drops and transmitted rate are the sums over the directions, per
    sample time. A ``backlog_kb`` column absent from `table` (older results) gives zeros.
    """
    out: list[Series] = []
    table = _with_optional_columns(table, "links")
    link_column = table["link"]
    for link_id in link_ids:
        info = summary.get("links", {}).get(link_id, {}) or {}
        rows = link_column == link_id
        if info.get("duplex") == "half":
            time, values = _sum_by_time(table["time_s"][rows],
                                        {c: table[c][rows] for c in _LINK_VALUES})
            out.append(Series(key=link_id, label=link_id, time=time, values=values,
                              entity=link_id,
                              directions=tuple(_directions(info, table["direction"][rows]))))
            continue
        for direction in _directions(info, table["direction"][rows]):
            both = rows & (table["direction"] == direction)
            time, values = _sorted_rows(table, both, _LINK_VALUES)
            out.append(Series(key=f"{link_id} {direction}", label=f"{link_id} {direction}",
                              time=time, values=values, entity=link_id, directions=(direction,)))
    return out


def _links_figure_spec(series: Sequence[Series], *, backlog: bool = False) -> FigureSpec:
    """`LINKS_FIGURE`, with failure drops overlaid (dashed) on the drops panel only when some
    plotted line has a non-zero failure drop, and with `BACKLOG_PANEL` (simulated backlog, with
    the predicted one over it) instead of the buffer panel when `backlog` is true."""
    failures = any(np.nansum(s.values.get("failure_drops", np.zeros(0))) > 0 for s in series)
    if not failures and not backlog:
        return LINKS_FIGURE
    replace = {"drops": FAILURE_DROPS_PANEL if failures else None,
               "buffer_kb": BACKLOG_PANEL if backlog else None}
    panels = tuple(replace.get(p.column) or p for p in LINKS_FIGURE.panels)
    return FigureSpec(LINKS_FIGURE.filename, panels, LINKS_FIGURE.legend_title)


def _flow_series(table: Table, flow_ids: Sequence[str]) -> list[Series]:
    return [Series(key=f, label=f, time=t, values=v, entity=f)
            for f in flow_ids
            for t, v in [_sorted_rows(table, table["flow"] == f, _FLOW_VALUES)]]


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


def _route_series(routes: Table, router_ids: Sequence[str]) -> list[RouteSeries]:
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
            out.append(RouteSeries(router=router_id, destination=dest, time=time[rows],
                                   cost_ms=cost[rows], next_hop=hop[rows], link=link[rows]))
    return out


def _routes_to_plot(series: Sequence[RouteSeries], limit: int = MAX_ROUTE_LINES
                    ) -> tuple[list[RouteSeries], int]:
    """The route lines of routing.png and how many more qualified.

    Those whose next hop changed at least once; beyond `limit`, the ones with the most changes.
    When no next hop changed at all: those whose cost changed after t = 0; beyond
    min(`limit`, MAX_COST_ONLY_LINES), the ones whose finite cost varied most. Ties keep the given
    order, and the lines kept are returned in the given order."""
    chosen = [s for s in series if len(s.changes)]
    if chosen:
        weight = [float(len(s.changes)) for s in chosen]
    else:
        chosen = [s for s in series if np.any(s.time > 0)]
        weight = [float(np.ptp(c)) if len(c := s.cost_ms[np.isfinite(s.cost_ms)]) else 0.0
                  for s in chosen]
        limit = min(limit, MAX_COST_ONLY_LINES)
    if len(chosen) <= limit:
        return list(chosen), 0
    keep = sorted(sorted(range(len(chosen)), key=lambda i: -weight[i])[:limit])
    return [chosen[i] for i in keep], len(chosen) - limit


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
    columns of `name` (`SCHEMAS`, `OPTIONAL_COLUMNS`); a missing identifier (None, NaN) becomes "".
    """
    required, string_columns = SCHEMAS[name]
    optional = OPTIONAL_COLUMNS.get(name, ())
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
    return out


def _with_optional_columns(table: Table, name: str) -> Table:
    """`table` (not copied) plus zeros for the optional columns it lacks (older results)."""
    absent = [c for c in OPTIONAL_COLUMNS.get(name, ()) if c not in table]
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


# ---------------------------------------------------------------------------------------------
# Drawing


def _figsize(spec: FigureSpec) -> tuple[float, float]:
    return WIDTH_IN, 1.0 + PANEL_HEIGHT_IN * len(spec.panels)


def _draw_figure(fig: Figure, spec: FigureSpec, series: list[Series], summary: dict,
                 predictions: Sequence[PredictionSeries] = ()) -> None:
    """Draw `series` into `fig`: one panel per `spec.panels` entry, shared time axis, one legend.

    `predictions` are drawn over the panels whose ``prediction`` is their quantity, in the colour
    of their series; the legend then has an entry for them."""
    _assign_colors(series)
    colors = {s.key: s.color for s in series}
    axes = fig.subplots(len(spec.panels), 1, sharex=True, squeeze=False)[:, 0]
    labels = _unit_labels(summary)
    drawn = {"line": False, "band": False}
    for ax, panel in zip(axes, spec.panels):
        _plot_panel(ax, series, panel)
        if panel.overlay is not None:
            _plot_panel(ax, series, Panel(panel.overlay, panel.ylabel, panel.style),
                        linestyle="--", with_labels=False)
            _add_style_legend(ax, panel.labels)
        if panel.prediction is not None:
            line, band = _plot_predictions(
                ax, [p for p in predictions if p.quantity == panel.prediction], colors)
            drawn["line"] |= line
            drawn["band"] |= band
        ax.set_ylabel(panel.ylabel.format(**labels))
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("time (s)")
    end = summary.get("end_time_s")
    if isinstance(end, (int, float)) and end > 0:
        axes[-1].set_xlim(0, end)
    fig.suptitle(str(summary.get("topology", "")) or "netsim results")
    _add_legend(fig, axes[0], spec, _prediction_handles(drawn["line"], drawn["band"]))


def _plot_panel(ax: Any, series: Sequence[Series], panel: Panel, *, linestyle: str = "-",
                with_labels: bool = True) -> None:
    """Draw one column of every series into `ax` (each series in its own colour).

    `linestyle` and `with_labels` exist for overlays (e.g. predictions drawn dashed, without
    legend entries of their own).
    """
    if panel.style not in STYLES:
        raise ValueError(f"unknown panel style {panel.style!r}")
    for s in series:
        time, values = s.time, s.values[panel.column]
        kwargs: dict[str, Any] = dict(color=s.color, linestyle=linestyle, linewidth=1.2,
                                      label=s.label if with_labels else "_nolegend_")
        if panel.style == "interval":
            kwargs["drawstyle"] = "steps-pre"
        elif panel.style == "sparse":
            keep = ~np.isnan(values)
            time, values = time[keep], values[keep]
            if len(time) == 1:
                kwargs["marker"] = "."
        ax.plot(time, values, **kwargs)


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
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = []
    if line:
        handles.append(Line2D([], [], color="0.35", linestyle=(0, (4, 2.5)), linewidth=1.7,
                              label=PREDICTION_LABEL))
    if band:
        handles.append(Patch(facecolor=(0.35, 0.35, 0.35, 0.2), edgecolor=(0.35, 0.35, 0.35, 0.8),
                             linewidth=0.9, label=PREDICTION_BAND_LABEL))
    return handles


def _add_style_legend(ax: Any, labels: tuple[str, str]) -> None:
    """A small in-panel legend explaining solid versus dashed lines."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="0.35", linestyle=style, linewidth=1.2, label=label)
               for style, label in zip(("-", "--"), labels) if label]
    if handles:
        ax.legend(handles=handles, loc="upper right", fontsize="x-small", framealpha=0.8)


def _draw_routing_figure(fig: Figure, link_series: list[Series], routes: list[RouteSeries],
                         omitted: int, summary: dict) -> None:
    """routing.png: the rate of the links of interest (if any) over the route cost of each router
    to each destination whose next hop changed, with a marker and the new next hop at each change.
    Dotted vertical lines in every panel mark the times of those changes."""
    n = 2 if link_series else 1
    axes = fig.subplots(n, 1, sharex=True, squeeze=False,
                        height_ratios=[1.0, 1.4][-n:])[:, 0]
    labels = _unit_labels(summary)
    legend_kw = dict(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                     fontsize="small", title_fontsize="small", frameon=False)
    if link_series:
        _assign_colors(link_series)
        ax = axes[0]
        _plot_panel(ax, link_series, RATE_PANEL)
        ax.set_ylabel(RATE_PANEL.ylabel.format(**labels))
        ax.set_ylim(bottom=0)
        ax.legend(title="link direction", **legend_kw)

    ax = axes[-1]
    _assign_colors(routes, start=len(link_series))   # colours not used by the links above
    end = summary.get("end_time_s")
    end = float(end) if isinstance(end, (int, float)) else None
    change_times: list[float] = []
    no_route_labels: set[int] = set()
    for index, route in enumerate(routes):
        change_times += _plot_route(ax, route, end, above=index % 2 == 0,
                                    no_route_labels=no_route_labels)
    if not routes:
        ax.text(0.5, 0.5, "no route changed for the selected routers", ha="center",
                va="center", transform=ax.transAxes, color="0.4")
    ax.set_ylabel("route cost (ms)")
    title = "router \u2192 destination\n\u25cf next hop changed\n(labelled with the new one)"
    if routes and not any(len(r.changes) for r in routes):
        title = "router \u2192 destination\n(cost changes only:\nno next hop changed)"
    if omitted:
        title += f"\n{omitted} more not shown"
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(title=title, **legend_kw)
    for axis in axes:
        for t in sorted(set(change_times)):
            axis.axvline(t, color="0.6", linestyle=":", linewidth=0.8, zorder=0)
        axis.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    if end is not None and end > 0:
        axes[-1].set_xlim(0, end)
    fig.suptitle((str(summary.get("topology", "")) or "netsim results") + ": dynamic routing")


def _plot_route(ax: Any, route: RouteSeries, end: Optional[float], *, above: bool,
                no_route_labels: set[int]) -> list[float]:
    """Draw one route's cost as steps held from each installation on; return the change times.

    A change to "unreachable" is an x at the top of the panel, labelled "no route" once per
    second of simulated time (`no_route_labels`: the seconds already labelled, shared by the lines
    of the panel, since routers lose a route at nearly the same time)."""
    time, cost = route.time, route.cost_ms
    shown = np.where(np.isfinite(cost), cost, np.nan)       # unreachable: a gap in the line
    if end is not None and len(time) and end > time[-1]:
        time, shown = np.append(time, end), np.append(shown, shown[-1])
    ax.plot(time, shown, drawstyle="steps-post", color=route.color, linewidth=1.4,
            label=route.label)
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


def _add_legend(fig: Figure, ax: Any, spec: FigureSpec, extra: Sequence[Any] = ()) -> None:
    """The figure's legend, right of the panels: one entry per line of `ax`, then `extra`."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    handles = list(handles) + list(extra)
    labels = list(labels) + [h.get_label() for h in extra]
    height_in = fig.get_size_inches()[1]
    rows_fit = max(1, int(height_in * 5))          # ~5 small-font entries per inch
    ncol = math.ceil(len(handles) / rows_fit)
    fig.legend(handles, labels, loc="outside right upper", ncol=ncol, fontsize="small",
               title=spec.legend_title, title_fontsize="small", frameon=False)


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
