"""Interactive HTML report of a results directory: ``report.html`` (docs/report.md).

    from plot_tool.report import make_report
    make_report("results/test_case_2")            # -> Path("results/test_case_2/report.html")
    make_report("results/sweeps/goodput_vs_loss") # a sweep directory: its figures, interactive

One self-contained file, opened from disk with no server and no request to any other host: the
page is drawn by plotly.js, whose script is inlined once, and by ``report.js`` (beside this
module). Both the plotly script and the report's data are stored gzip-compressed and base64-encoded
in the page and inflated by the browser (``DecompressionStream``): plotly.js alone is 4.8 MB, 1.5 MB
compressed, which is what keeps a report of a long, large run under 5 MB.

Like the rest of plot_tool this module reads the results directory only (`read_results`); plotly
and networkx are imported when a report is made, never at import.

Size bound. Every trace is put on the run's sampling grid (``interval_s``, ``2 interval_s``, ...,
``end_time_s``; idle intervals, which have no row in links.csv / hosts.csv, are zeros, as
docs/outputs.md says). The time series embedded are the samples themselves when the run has at
most ``2 * MAX_BUCKETS`` of them; beyond that the grid is cut into ``MAX_BUCKETS`` buckets and
each bucket keeps its minimum and its maximum (in the order they occur, placed at the first and
last sample time of the bucket): min/max-preserving decimation, so that no peak or drop vanishes,
at most 2000 points per series. The time slider has at most ``MAX_FRAMES`` frames, each the mean
of its bucket of samples (the samples themselves when there are no more than ``MAX_FRAMES``).
Values are quantized to 1/QUANT of the largest magnitude of their series. The full data stays in
the CSV files.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

import numpy as np

from plot_tool.report_grid import Buckets, encode, grid_index, sampling_grid, sig
from plot_tool.report_network import (
    check_line,
    network_nodes,
    predictions_data,
    route_changes,
    summary_tables,
    tier_names,
)
from plot_tool.report_page import render_page
from plot_tool.report_sweep import sweep_data
from plot_tool.results import ResultSet, Table, read_results

PathLike = Union[str, "os.PathLike[str]"]

REPORT_FILE = "report.html"
MAX_FRAMES = 1000          # slider frames (mean per bucket beyond that)
MAX_BUCKETS = 1000         # series buckets: min and max of each, so at most 2000 points
DEFAULT_FLOWS = 8          # flows selected at first when none are named
DEFAULT_LINKS = 2          # links selected at first when none are named: the busiest ones
LINK_SERIES = ("rate_mbps", "buffer_kb", "drops", "impairment_drops", "failure_drops")
FLOW_SERIES = ("arrival_rate_mbps", "send_rate_mbps", "window_pkts", "rtt_ms")



def make_report(results_dir: PathLike, out: PathLike | None = None, *,
                links: Sequence[str] | None = None,
                flows: Sequence[str] | None = None) -> Path:
    """Write the interactive report of `results_dir` (a run's results directory, or a sweep
    directory holding ``sweep.json`` and ``results.csv``) to `out` (default
    ``results_dir/report.html``); return its path. `links` and `flows` are the ones whose time
    series are shown at first (default: the busiest links, the first flows); any other can be
    added on the page. An id the results do not hold, or ids given for a sweep directory, are a
    ValueError. The file is written to a temporary name beside it and renamed into place.
    """
    directory = Path(results_dir)
    if is_sweep_directory(directory):
        if links or flows:
            raise ValueError("a sweep directory's report has no link or flow time series to "
                             "select: links and flows apply to a run's results directory")
        data = sweep_data(directory)
    else:
        data = run_data(read_results(directory), links=links, flows=flows)
    page = render_page(data)
    path = Path(out) if out is not None else directory / REPORT_FILE
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        partial.write_text(page, encoding="utf-8")
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()
    return path




def is_sweep_directory(directory: Path) -> bool:
    """Whether `directory` holds a sweep (sweep.json and results.csv), not a run's results."""
    return (directory / "sweep.json").is_file() and (directory / "results.csv").is_file()


def _unknown_ids(kind: str, wanted: Sequence[str], known: Sequence[str]) -> None:
    """ValueError naming the first of `wanted` that is not among `known` (with a
    did-you-mean)."""
    from topologies.validation import unknown_id
    problem = unknown_id(kind, wanted, known)
    if problem is not None:
        raise ValueError(problem)


class _Sampling:
    """The run's sampling grid, its slider frames, and how its series are decimated."""

    def __init__(self, summary: Mapping[str, Any]):
        self.grid = sampling_grid(summary)
        self.n = n = len(self.grid)
        self.frames = Buckets(n, MAX_FRAMES)
        self.decimate = n > 2 * MAX_BUCKETS
        self.buckets = Buckets(n, MAX_BUCKETS)
        if self.decimate:
            self.series_t = np.empty(2 * len(self.buckets.starts))
            self.series_t[0::2] = self.grid[self.buckets.starts]
            self.series_t[1::2] = self.grid[self.buckets.ends - 1]
        else:
            self.series_t = self.grid

    def series(self, values: np.ndarray) -> Any:
        """A series as embedded: the samples, or each bucket's min and max."""
        return encode(self.buckets.extremes(values) if self.decimate else values)


def run_data(rs: ResultSet, *, links: Sequence[str] | None = None,
             flows: Sequence[str] | None = None) -> dict:
    """Everything the run page draws, as plain JSON-able data."""
    summary = rs.summary
    sampling = _Sampling(summary)
    grid, frames = sampling.grid, sampling.frames
    link_ids = list(summary["links"])
    flow_ids = list(summary["flows"])
    out_links, busy = _link_entries(rs, sampling)
    nodes = network_nodes(summary)
    _unknown_ids("links", links or [], link_ids)
    _unknown_ids("flows", flows or [], flow_ids)
    if links:
        selected_links = [lid for lid in links if lid in summary["links"]]
    else:
        selected_links = sorted(link_ids, key=lambda lid: -busy.get(lid, 0.0))[:DEFAULT_LINKS]
    selected_flows = [f for f in flows if f in summary["flows"]] if flows else \
        flow_ids[:DEFAULT_FLOWS]
    units = summary.get("units", {})
    return {
        "kind": "run",
        "title": str(summary.get("topology", "run")),
        "units": "binary" if units.get("system") == "binary" else "",
        "interval_s": summary.get("interval_s"), "end_time_s": summary.get("end_time_s"),
        "frame_t": [sig(float(t)) for t in grid[frames.ends - 1]],
        "frames_exact": bool(sampling.n <= MAX_FRAMES),
        "series_t": [sig(float(t), 8) for t in sampling.series_t],
        "decimated": bool(sampling.decimate),
        "samples": sampling.n,
        "nodes": nodes,
        "tiers": tier_names(summary, nodes),
        "links": out_links,
        "flows": _flow_entries(rs, sampling),
        "routes": route_changes(rs, nodes),
        "predictions": predictions_data(rs.predictions),
        "selected": {"links": selected_links, "flows": selected_flows},
        "tables": summary_tables(summary),
        "check": check_line(rs.check),
    }


def _link_columns(rs: ResultSet) -> list[str]:
    """The links.csv columns the page shows (backlog only for a --check run's predictions)."""
    extra = [c for c in rs.links if "mark" in c.lower()
             and c not in LINK_SERIES and rs.links[c].dtype.kind == "f"]
    columns = [c for c in (*LINK_SERIES, "backlog_kb", *extra) if c in rs.links]
    if rs.predictions is None and "backlog_kb" in columns:
        columns.remove("backlog_kb")             # the queue is buffer_kb; backlog for --check
    return columns


def _link_entries(rs: ResultSet, sampling: _Sampling) -> tuple[list[dict], dict[str, float]]:
    """Each link with its directions' frames and series on the grid, and each link's highest
    utilization (the busiest are shown first)."""
    summary, grid, n, frames = rs.summary, sampling.grid, sampling.n, sampling.frames
    link_columns = _link_columns(rs)
    rows_of = _rows_by(rs.links, ("link", "direction"))
    out_links = []
    busy: dict[str, float] = {}
    for lid in summary["links"]:
        info = summary["links"][lid]
        ends = list(info.get("ends", []))
        dirs = list((info.get("directions") or {}).keys()) or [f"{ends[0]}->{ends[1]}",
                                                                 f"{ends[1]}->{ends[0]}"]
        link = {"id": lid, "ends": ends, "rate_mbps": info.get("rate_mbps"),
                "delay_ms": info.get("delay_ms"), "buffer_kb": info.get("buffer_kb"),
                "duplex": info.get("duplex", "full"), "dirs": []}
        down = np.zeros(n, dtype=bool)
        for d in dirs:
            rows = rows_of.get((lid, d))
            full = {c: np.zeros(n) for c in link_columns}
            if rows is not None:
                idx = grid_index(grid, rs.links["time_s"][rows])
                for c in link_columns:
                    full[c][idx] = rs.links[c][rows]
            if "failure_drops" in full:
                down |= full["failure_drops"] > 0
            stats = (info.get("directions") or {}).get(d, {})
            busy[lid] = max(busy.get(lid, 0.0), float(stats.get("utilization") or 0.0))
            link["dirs"].append({
                "dir": d,
                "frame_rate": encode(frames.means(full["rate_mbps"])),
                "frame_buffer": encode(frames.means(full["buffer_kb"])),
                "series": {c: sampling.series(full[c]) for c in link_columns
                           if c in ("rate_mbps", "buffer_kb") or np.any(full[c] != 0)},
            })
        if info.get("down_s") is not None:             # the link's down spans, from the run
            down = np.zeros(n, dtype=bool)
            for start_s, stop_s in info["down_s"]:
                down |= (grid > start_s) & (grid - summary.get("interval_s", 0.0) < stop_s)
        link["frame_down"] = encode(frames.means(down.astype(float)) > 0) if down.any() else None
        out_links.append(link)
    return out_links, busy


def _flow_entries(rs: ResultSet, sampling: _Sampling) -> list[dict]:
    """Each flow with its series on the grid (NaN where it has no row)."""
    summary, grid, n = rs.summary, sampling.grid, sampling.n
    flow_rows = _rows_by(rs.flows, ("flow",))
    out_flows = []
    for fid in summary["flows"]:
        info = summary["flows"][fid]
        rows = flow_rows.get((fid,))
        full = {c: np.full(n, np.nan) for c in FLOW_SERIES if c in rs.flows}
        if rows is not None:
            idx = grid_index(grid, rs.flows["time_s"][rows])
            for c in full:
                full[c][idx] = rs.flows[c][rows]
        out_flows.append({"id": fid, "src": info.get("src"), "dst": info.get("dst"),
                          "algorithm": info.get("algorithm"), "start_s": info.get("start_s"),
                          "finish_s": info.get("finish_s"),
                          "series": {c: sampling.series(v) for c, v in full.items()}})
    return out_flows


def _rows_by(table: Table, keys: tuple[str, ...]) -> dict[tuple, np.ndarray]:
    """Row indices of each entity, sorted by time (rows are not globally time-sorted)."""
    if not len(table.get("time_s", ())):
        return {}
    columns = [np.asarray(table[k]) for k in keys]
    order = np.lexsort((table["time_s"], *reversed(columns)))
    out: dict[tuple, np.ndarray] = {}
    keyed = list(zip(*(c[order].tolist() for c in columns)))
    start = 0
    for i in range(1, len(order) + 1):
        if i == len(order) or keyed[i] != keyed[start]:
            out[keyed[start]] = order[start:i]
            start = i
    return out

