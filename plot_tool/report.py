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

Memory bound. `make_report` reads links.csv and flows.csv a chunk at a time and keeps per series
only what the page embeds (`plot_tool.report_series`): its memory depends on the page (series x
buckets), not on the length of the run. `run_data` of a ResultSet held in memory (the Python API)
reduces its tables whole, to the same numbers.
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union, cast

import numpy as np

from plot_tool.figure_files import foreign_report, naming_errors

# (Buckets and sampling_grid are imported from here by the tests and the Python API)
from plot_tool.report_grid import Buckets, encode, sampling_grid, sig  # noqa: F401
from plot_tool.report_network import (
    check_line,
    hashed_paths,
    network_nodes,
    predictions_data,
    route_changes,
    summary_tables,
    tier_names,
)
from plot_tool.report_page import render_page
from plot_tool.report_series import (
    Key,
    PlanOf,
    Reduced,
    Sampling,
    TracePlan,
    reduce_table,
    stream_trace,
)
from plot_tool.report_sweep import sweep_data
from plot_tool.results import ResultSet, Table, TraceFile, read_results

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
        data = run_data(read_results(directory, traces_in_memory=False), links=links,
                        flows=flows)
    path = Path(out) if out is not None else directory / REPORT_FILE
    if out is None and foreign_report(path):
        raise ValueError(f"{path}: exists and is not a report netsim wrote (a file of yours, or "
                         f"a symbolic link): move it, or write the report elsewhere (report "
                         f"DIR -o FILE)")
    page = render_page(data)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        with naming_errors(path):
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


def run_data(rs: ResultSet, *, links: Sequence[str] | None = None,
             flows: Sequence[str] | None = None, chunk_rows: int | None = None) -> dict:
    """Everything the run page draws, as plain JSON-able data. Traces left on disk
    (``read_results(..., traces_in_memory=False)``) are read `chunk_rows` rows at a time."""
    summary = rs.summary
    sampling = Sampling(summary, MAX_FRAMES, MAX_BUCKETS)
    grid, frames = sampling.grid, sampling.frames
    link_ids = list(summary["links"])
    flow_ids = list(summary["flows"])
    link_plan, link_series = _trace_series(rs.links, _link_plan(rs.predictions is not None),
                                           sampling, _link_keys(summary), chunk_rows)
    flow_plan, flow_series = _trace_series(rs.flows, _flow_plan, sampling,
                                           [(fid,) for fid in flow_ids], chunk_rows)
    rs = _tables_read(rs)
    out_links, busy = _link_entries(summary, sampling, link_plan, link_series)
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
        "frame_t": [sig(float(t)) for t in grid.at(frames.ends - 1)],
        "frames_exact": bool(sampling.n <= MAX_FRAMES),
        "series_t": [sig(float(t), 8) for t in sampling.series_t],
        "decimated": bool(sampling.decimate),
        "samples": sampling.n,
        "nodes": nodes,
        "tiers": tier_names(summary, nodes),
        "links": out_links,
        "flows": _flow_entries(summary, flow_plan, flow_series),
        "routes": route_changes(rs, nodes),
        "predictions": predictions_data(rs.predictions),
        "selected": {"links": selected_links, "flows": selected_flows},
        "tables": summary_tables(summary),
        "check": check_line(rs.check),
    }


def _trace_series(trace: Table | TraceFile, plan_of: PlanOf, sampling: Sampling,
                  entities: list[Key], chunk_rows: int | None
                  ) -> tuple[TracePlan, dict[Key, Reduced]]:
    """A trace's series for the page: streamed from its file, or reduced from a Table."""
    if isinstance(trace, TraceFile):
        return stream_trace(trace, plan_of, sampling, entities, chunk_rows)
    plan = plan_of(trace, False)
    assert plan is not None                     # (None: strict only)
    return plan, reduce_table(trace, plan, sampling, entities)


def _tables_read(rs: ResultSet) -> ResultSet:
    """`rs` with routes.csv and predictions.csv read, when a reader left them on disk
    (`TraceFile`): predictions.csv whole, routes.csv streamed for the rows towards the flows'
    destinations, all the page's flow paths need (`route_changes`): an all-to-all workload's
    routes.csv of a k = 16 fat tree is 2.1 million rows, none of them drawn."""
    routes, predictions = cast(Any, rs.routes), cast(Any, rs.predictions)
    if isinstance(routes, TraceFile) and hashed_paths(rs.summary) is not None:
        rs = dataclasses.replace(rs, routes=None)     # (the flows' paths are in the summary)
    elif isinstance(routes, TraceFile):
        destinations = {str(f.get("dst")) for f in rs.summary["flows"].values()}
        kept: list[Table] = []
        for chunk in routes.chunks() if destinations else ():
            rows = np.isin(chunk["destination"], list(destinations))
            kept.append({name: values[rows] for name, values in chunk.items()})
        table = ({name: np.concatenate([part[name] for part in kept]) for name in kept[0]}
                 if kept else None)
        rs = dataclasses.replace(rs, routes=table)
    if isinstance(predictions, TraceFile):
        rs = dataclasses.replace(rs, predictions=predictions.read())
    return rs


def _link_plan(predictions: bool) -> PlanOf:
    """The plan of links.csv for a table of those columns (see `report_series.stream_trace`):
    the links.csv columns the page shows, backlog only for a --check run's predictions, and any
    numeric column whose name holds "mark" (strict: a chunk reading one as text decides
    nothing)."""

    def plan_of(table: Table, strict: bool) -> TracePlan | None:
        marks = [c for c in table if "mark" in c.lower() and c not in LINK_SERIES]
        if strict and any(table[c].dtype.kind != "f" for c in marks):
            return None
        extra = [c for c in marks if table[c].dtype.kind == "f"]
        columns = [c for c in (*LINK_SERIES, "backlog_kb", *extra) if c in table]
        if not predictions and "backlog_kb" in columns:
            columns.remove("backlog_kb")         # the queue is buffer_kb; backlog for --check
        return TracePlan(keys=("link", "direction"), columns=tuple(columns), fill_nan=False,
                         always=frozenset(("rate_mbps", "buffer_kb")),
                         mean_columns=("rate_mbps", "buffer_kb"),
                         positive_column="failure_drops")
    return plan_of


def _flow_plan(table: Table, strict: bool) -> TracePlan:
    """The plan of flows.csv: the flow series the page shows, NaN where a flow has no row."""
    columns = tuple(c for c in FLOW_SERIES if c in table)
    return TracePlan(keys=("flow",), columns=columns, fill_nan=True,
                     always=frozenset(columns))


def _link_directions(info: Mapping[str, Any]) -> list[str]:
    ends = list(info.get("ends", []))
    return list((info.get("directions") or {}).keys()) or [f"{ends[0]}->{ends[1]}",
                                                            f"{ends[1]}->{ends[0]}"]


def _link_keys(summary: Mapping[str, Any]) -> list[Key]:
    return [(lid, d) for lid, info in summary["links"].items() for d in _link_directions(info)]


def _link_entries(summary: Mapping[str, Any], sampling: Sampling, plan: TracePlan,
                  series: Mapping[Key, Reduced]) -> tuple[list[dict], dict[str, float]]:
    """Each link with its directions' frames and series on the grid, and each link's highest
    utilization (the busiest are shown first)."""
    frames = sampling.frames
    out_links = []
    busy: dict[str, float] = {}
    for lid in summary["links"]:
        info = summary["links"][lid]
        ends = list(info.get("ends", []))
        dirs = _link_directions(info)
        link = {"id": lid, "ends": ends, "rate_mbps": info.get("rate_mbps"),
                "delay_ms": info.get("delay_ms"), "buffer_kb": info.get("buffer_kb"),
                "duplex": info.get("duplex", "full"), "dirs": []}
        down = np.zeros(len(frames.starts), dtype=bool)      # per frame
        for d in dirs:
            reduced = series[(lid, d)]
            if reduced.positive is not None:                 # failure_drops > 0
                down |= reduced.positive
            stats = (info.get("directions") or {}).get(d, {})
            busy[lid] = max(busy.get(lid, 0.0), float(stats.get("utilization") or 0.0))
            link["dirs"].append({
                "dir": d,
                "frame_rate": encode(reduced.means["rate_mbps"]),
                "frame_buffer": encode(reduced.means["buffer_kb"]),
                "series": {c: encode(reduced.points[c]) for c in plan.columns
                           if c in reduced.points},
            })
        if info.get("down_s") is not None:             # the link's down spans, from the run
            down = _down_frames(sampling, info["down_s"], summary.get("interval_s", 0.0))
        link["frame_down"] = encode(down) if down.any() else None
        out_links.append(link)
    return out_links, busy


def _down_frames(sampling: Sampling, spans: Sequence[Sequence[float]], interval: Any) -> np.ndarray:
    """Per frame, whether some sampling interval of it overlaps a down span: the instants t
    with t > start and t - interval < stop, a run of consecutive grid instants per span."""
    grid, frames = sampling.grid, sampling.frames
    down = np.zeros(len(frames.starts), dtype=bool)
    for start_s, stop_s in spans:
        first = grid.first(lambda t: t > start_s)                 # noqa: B023 (called here)
        stop = grid.first(lambda t: not t - interval < stop_s)    # noqa: B023
        if first < stop:
            down |= (frames.starts < stop) & (frames.ends > first)
    return down


def _flow_entries(summary: Mapping[str, Any], plan: TracePlan,
                  series: Mapping[Key, Reduced]) -> list[dict]:
    """Each flow with its series on the grid (NaN where it has no row)."""
    out_flows = []
    for fid in summary["flows"]:
        info = summary["flows"][fid]
        reduced = series[(fid,)]
        out_flows.append({"id": fid, "src": info.get("src"), "dst": info.get("dst"),
                          "algorithm": info.get("algorithm"), "start_s": info.get("start_s"),
                          "finish_s": info.get("finish_s"),
                          "series": {c: encode(reduced.points[c]) for c in plan.columns}})
    return out_flows
