"""Figures of a simulation run: ``links.png``, ``flows.png`` and ``hosts.png`` (see docs/outputs.md).

The work is split so that more lines can be overlaid later (e.g. predictions as dashed lines in the
same colours) without restructuring:

* ``_link_series`` / ``_flow_series`` / ``_host_series`` turn the result tables into a list of
  `Series` (one per plotted line: a label, times, and one array per panel column);
* a `FigureSpec` lists the panels of one figure (`Panel`: column, y label, drawing style);
* ``_draw_figure`` draws a list of series into a given matplotlib Figure, one ``_plot_panel`` call
  per panel, and adds the shared legend.

Saving uses the object-oriented API (`matplotlib.figure.Figure` with an Agg canvas), so nothing
needs a display; pyplot is imported only when ``show=True``.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from plot_tool.results import SCHEMAS, Table, read_results

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


@dataclass
class Series:
    """One plotted line: the same entity in every panel of a figure."""

    key: str                      # stable identity, e.g. "L1" (half duplex) or "L1 R1->R2"
    label: str                    # legend text
    time: np.ndarray              # sample times, seconds (end of each interval), increasing
    values: dict[str, np.ndarray]  # panel column -> values, same length as time
    color: Optional[str] = None   # assigned by _assign_colors


@dataclass(frozen=True)
class Panel:
    column: str                   # key into Series.values
    ylabel: str                   # may contain {Mbps}, {KB} and {interval} placeholders
    style: str = "interval"


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

FLOWS_FIGURE = FigureSpec("flows.png", (
    Panel("send_rate_mbps", "send rate ({Mbps})"),
    Panel("recv_rate_mbps", "receive rate, goodput\n({Mbps})"),
    Panel("window_pkts", "window (packets)", style="instant"),
    Panel("rtt_ms", "RTT (ms)", style="sparse"),
), legend_title="flow")

HOSTS_FIGURE = FigureSpec("hosts.png", (
    Panel("send_rate_mbps", "send rate ({Mbps})"),
    Panel("recv_rate_mbps", "receive rate ({Mbps})"),
), legend_title="host")

_LINK_VALUES = ("rate_mbps", "buffer_kb", "buffer_pkts", "drops")
_FLOW_VALUES = ("send_rate_mbps", "recv_rate_mbps", "window_pkts", "rtt_ms")
_HOST_VALUES = ("send_rate_mbps", "recv_rate_mbps")


def make_figures(results: Any, out_dir: Optional[PathLike] = None, *,
                 links: IdSelection = None, flows: IdSelection = None, hosts: IdSelection = None,
                 show: bool = False) -> list[Path]:
    """Write ``links.png``, ``flows.png`` and ``hosts.png`` for a run; return the paths written.

    Args:
        results: a results directory (str or path; read with `read_results`), or any object with
            attributes ``summary``, ``links``, ``flows``, ``hosts`` in the documented format (a
            `ResultSet`, or the simulator's in-memory results).
        out_dir: where to write the PNG files (created if needed). Defaults to the results
            directory when `results` is a path; required otherwise.
        links, flows, hosts: ids to plot (an id or an iterable of ids); None means every one in
            the summary. A figure is written only when at least one of its entities is selected.
            An id that is not in the summary raises ValueError.
        show: after saving, also show the figures with pyplot (blocks until they are closed).
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

    summary = dict(results.summary)
    link_ids = _choose("link", links, summary.get("links", {}))
    flow_ids = _choose("flow", flows, summary.get("flows", {}))
    host_ids = _choose("host", hosts, summary.get("hosts", {}))

    jobs: list[tuple[FigureSpec, list[Series]]] = []
    if link_ids:
        jobs.append((LINKS_FIGURE, _link_series(summary, _normalize(results.links, "links"), link_ids)))
    if flow_ids:
        jobs.append((FLOWS_FIGURE, _flow_series(_normalize(results.flows, "flows"), flow_ids)))
    if host_ids:
        jobs.append((HOSTS_FIGURE, _host_series(_normalize(results.hosts, "hosts"), host_ids)))

    written: list[Path] = []
    if jobs:
        out_dir.mkdir(parents=True, exist_ok=True)
    for spec, series in jobs:
        fig = Figure(figsize=_figsize(spec), layout="constrained")
        FigureCanvasAgg(fig)
        _draw_figure(fig, spec, series, summary)
        path = out_dir / spec.filename
        fig.savefig(path, dpi=DPI)
        written.append(path)

    if show and jobs:
        import matplotlib.pyplot as plt  # only here: pyplot may need a display

        for spec, series in jobs:
            fig = plt.figure(figsize=_figsize(spec), layout="constrained")
            _draw_figure(fig, spec, series, summary)
        plt.show()
    return written


# ---------------------------------------------------------------------------------------------
# Data preparation: result tables -> Series


def _link_series(summary: dict, table: Table, link_ids: Sequence[str]) -> list[Series]:
    """One series per link direction; one per link (directions summed) for a half-duplex link.

    A half-duplex link has one buffer and one transmitter shared by its two directions, so its
    buffer occupancy, drops and transmitted rate are the sums over the directions, per sample time.
    """
    out: list[Series] = []
    link_column = table["link"]
    for link_id in link_ids:
        info = summary.get("links", {}).get(link_id, {}) or {}
        rows = link_column == link_id
        if info.get("duplex") == "half":
            time, values = _sum_by_time(table["time_s"][rows],
                                        {c: table[c][rows] for c in _LINK_VALUES})
            out.append(Series(key=link_id, label=link_id, time=time, values=values))
            continue
        for direction in _directions(info, table["direction"][rows]):
            both = rows & (table["direction"] == direction)
            time, values = _sorted_rows(table, both, _LINK_VALUES)
            out.append(Series(key=f"{link_id} {direction}", label=f"{link_id} {direction}",
                              time=time, values=values))
    return out


def _flow_series(table: Table, flow_ids: Sequence[str]) -> list[Series]:
    return [Series(key=f, label=f, time=t, values=v)
            for f in flow_ids
            for t, v in [_sorted_rows(table, table["flow"] == f, _FLOW_VALUES)]]


def _host_series(table: Table, host_ids: Sequence[str]) -> list[Series]:
    return [Series(key=h, label=h, time=t, values=v)
            for h in host_ids
            for t, v in [_sorted_rows(table, table["host"] == h, _HOST_VALUES)]]


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
    pandas DataFrame, or lists with None for missing values).
    """
    required, string_columns = SCHEMAS[name]
    columns = {str(c): table[c] for c in table}
    missing = [c for c in required if c not in columns]
    if missing:
        raise ValueError(f"{name} table: missing column(s) {', '.join(missing)}")
    out: Table = {}
    for column, values in columns.items():
        if column in string_columns:
            out[column] = np.asarray(values).astype(str)
        elif column in required:
            out[column] = np.asarray(values, dtype=np.float64)
    return out


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


def _draw_figure(fig: Figure, spec: FigureSpec, series: list[Series], summary: dict) -> None:
    """Draw `series` into `fig`: one panel per `spec.panels` entry, shared time axis, one legend."""
    _assign_colors(series)
    axes = fig.subplots(len(spec.panels), 1, sharex=True, squeeze=False)[:, 0]
    labels = _unit_labels(summary)
    for ax, panel in zip(axes, spec.panels):
        _plot_panel(ax, series, panel)
        ax.set_ylabel(panel.ylabel.format(**labels))
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("time (s)")
    end = summary.get("end_time_s")
    if isinstance(end, (int, float)) and end > 0:
        axes[-1].set_xlim(0, end)
    fig.suptitle(str(summary.get("topology", "")) or "netsim results")
    _add_legend(fig, axes[0], spec)


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


def _add_legend(fig: Figure, ax: Any, spec: FigureSpec) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    height_in = fig.get_size_inches()[1]
    rows_fit = max(1, int(height_in * 5))          # ~5 small-font entries per inch
    ncol = math.ceil(len(handles) / rows_fit)
    fig.legend(handles, labels, loc="outside right upper", ncol=ncol, fontsize="small",
               title=spec.legend_title, title_fontsize="small", frameon=False)


def _assign_colors(series: list[Series]) -> None:
    """Distinct colours: tab10 up to 10 lines, otherwise tab20 (dark shades first)."""
    from matplotlib import colormaps

    if len(series) <= 10:
        palette = list(colormaps["tab10"].colors)
    else:
        tab20 = list(colormaps["tab20"].colors)
        palette = tab20[0::2] + tab20[1::2]
    for i, s in enumerate(series):
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
