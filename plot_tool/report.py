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

import base64
import gzip
import html
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from plot_tool.results import ResultSet, Table, read_results
from plot_tool.tiers import network_tiers, tiered_positions

PathLike = Union[str, "os.PathLike[str]"]

REPORT_FILE = "report.html"
MAX_FRAMES = 1000          # slider frames (mean per bucket beyond that)
MAX_BUCKETS = 1000         # series buckets: min and max of each, so at most 2000 points
QUANT = 10000              # values quantized to max|v| / QUANT
DEFAULT_FLOWS = 8          # flows selected at first when none are named
DEFAULT_LINKS = 2          # links selected at first when none are named: the busiest ones
LINK_SERIES = ("rate_mbps", "buffer_kb", "drops", "impairment_drops", "failure_drops")
FLOW_SERIES = ("arrival_rate_mbps", "send_rate_mbps", "window_pkts", "rtt_ms")
LAYOUT_SEED = 143          # spring layout seed: the same topology gets the same drawing

_ASSET = Path(__file__).with_name("report.js")


def make_report(results_dir: PathLike, out: Optional[PathLike] = None, *,
                links: Optional[Sequence[str]] = None,
                flows: Optional[Sequence[str]] = None) -> Path:
    """Write the interactive report of `results_dir` (a run's results directory, or a sweep
    directory holding ``sweep.json`` and ``results.csv``) to `out` (default
    ``results_dir/report.html``); return its path. `links` and `flows` are the ones whose time
    series are shown at first (default: the busiest links, the first flows); any other can be
    added on the page. The file is written to a temporary name beside it and renamed into place.
    """
    directory = Path(results_dir)
    if (directory / "sweep.json").is_file() and (directory / "results.csv").is_file():
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


# ---------------------------------------------------------------------------------------------
# Encoding


def encode(values: Any) -> Any:
    """A numeric array for the page: ``{"z": n}`` when every value is 0, else ``{"s": scale,
    "q": [int or null, ...]}`` with value = q * scale (NaN -> null)."""
    v = np.asarray(values, dtype=float)
    finite = np.isfinite(v)
    if not finite.any():
        return {"s": 1.0, "q": [None] * len(v)}
    top = float(np.max(np.abs(v[finite])))
    if top == 0.0 and finite.all():
        return {"z": len(v)}
    scale = top / QUANT if top > 0 else 1.0
    q = np.where(finite, np.rint(np.where(finite, v, 0.0) / scale), 0).astype(np.int64)
    out: list = q.tolist()
    if not finite.all():
        for i in np.flatnonzero(~finite):
            out[i] = None
    return {"s": float(f"{scale:.6g}"), "q": out}


def sampling_grid(summary: Mapping[str, Any]) -> np.ndarray:
    """The sampling instants of a run: interval_s, 2 interval_s, ..., and end_time_s."""
    interval = float(summary.get("interval_s") or 0.1)
    end = float(summary.get("end_time_s") or 0.0)
    n = int(math.floor(end / interval + 1e-9)) if end > 0 else 0
    grid = interval * np.arange(1, n + 1, dtype=float)
    if not len(grid) or end - grid[-1] > 1e-9 * max(1.0, end):
        grid = np.append(grid, end)
    return grid


def grid_index(grid: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Index of the grid instant nearest to each time."""
    if not len(times):
        return np.zeros(0, dtype=int)
    right = np.clip(np.searchsorted(grid, times), 1, max(1, len(grid) - 1))
    left = right - 1
    if len(grid) == 1:
        return np.zeros(len(times), dtype=int)
    return np.where(np.abs(grid[left] - times) <= np.abs(grid[right] - times), left, right)


class Buckets:
    """Consecutive groups of grid samples: frames (means) and series (min/max) buckets."""

    def __init__(self, n: int, count: int):
        count = max(1, min(count, n))
        edges = np.linspace(0, n, count + 1).round().astype(int)
        self.starts = edges[:-1]
        self.ends = edges[1:]
        self.sizes = self.ends - self.starts
        self.n = n

    def means(self, values: np.ndarray) -> np.ndarray:
        finite = np.isfinite(values)
        sums = np.add.reduceat(np.where(finite, values, 0.0), self.starts)
        counts = np.add.reduceat(finite.astype(float), self.starts)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def extremes(self, values: np.ndarray) -> np.ndarray:
        """Min and max of each bucket, in the order they occur: 2 values per bucket."""
        lo = np.fmin.reduceat(values, self.starts)
        hi = np.fmax.reduceat(values, self.starts)
        bucket = np.repeat(np.arange(len(self.starts)), self.sizes)
        index = np.arange(self.n)
        first_lo = np.minimum.reduceat(np.where(values == lo[bucket], index, self.n), self.starts)
        first_hi = np.minimum.reduceat(np.where(values == hi[bucket], index, self.n), self.starts)
        lo_first = first_lo <= first_hi
        out = np.empty(2 * len(self.starts))
        out[0::2] = np.where(lo_first, lo, hi)
        out[1::2] = np.where(lo_first, hi, lo)
        return out


# ---------------------------------------------------------------------------------------------
# A run


def _sig(value: Any, digits: int = 6) -> Any:
    if isinstance(value, float):
        return float(f"{value:.{digits}g}") if math.isfinite(value) else None
    return value


def run_data(rs: ResultSet, *, links: Optional[Sequence[str]] = None,
             flows: Optional[Sequence[str]] = None) -> dict:
    """Everything the run page draws, as plain JSON-able data."""
    summary = rs.summary
    grid = sampling_grid(summary)
    n = len(grid)
    frames = Buckets(n, MAX_FRAMES)
    decimate = n > 2 * MAX_BUCKETS
    buckets = Buckets(n, MAX_BUCKETS)
    if decimate:
        series_t = np.empty(2 * len(buckets.starts))
        series_t[0::2] = grid[buckets.starts]
        series_t[1::2] = grid[buckets.ends - 1]
    else:
        series_t = grid

    def series(values: np.ndarray) -> Any:
        return encode(buckets.extremes(values) if decimate else values)

    link_ids = list(summary["links"])
    flow_ids = list(summary["flows"])
    extra_link_columns = [c for c in rs.links if "mark" in c.lower()
                          and c not in LINK_SERIES and rs.links[c].dtype.kind == "f"]
    link_columns = [c for c in (*LINK_SERIES, "backlog_kb", *extra_link_columns) if c in rs.links]
    if rs.predictions is None and "backlog_kb" in link_columns:
        link_columns.remove("backlog_kb")             # the queue is buffer_kb; backlog for --check

    rows_of = _rows_by(rs.links, ("link", "direction"))
    out_links = []
    busy: dict[str, float] = {}
    for lid in link_ids:
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
                "series": {c: series(full[c]) for c in link_columns
                           if c in ("rate_mbps", "buffer_kb") or np.any(full[c] != 0)},
            })
        if info.get("down_s") is not None:             # the link's down spans, from the run
            down = np.zeros(n, dtype=bool)
            for start_s, stop_s in info["down_s"]:
                down |= (grid > start_s) & (grid - summary.get("interval_s", 0.0) < stop_s)
        link["frame_down"] = encode(frames.means(down.astype(float)) > 0) if down.any() else None
        out_links.append(link)

    flow_rows = _rows_by(rs.flows, ("flow",))
    out_flows = []
    for fid in flow_ids:
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
                          "series": {c: series(v) for c, v in full.items()}})

    nodes = _nodes(summary)
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
        "frame_t": [_sig(float(t)) for t in grid[frames.ends - 1]],
        "frames_exact": bool(n <= MAX_FRAMES),
        "series_t": [_sig(float(t), 8) for t in series_t],
        "decimated": bool(decimate),
        "samples": n,
        "nodes": nodes,
        "tiers": _tier_names(summary, nodes),
        "links": out_links,
        "flows": out_flows,
        "routes": route_changes(rs, nodes),
        "predictions": _predictions(rs.predictions),
        "selected": {"links": selected_links, "flows": selected_flows},
        "tables": summary_tables(summary),
        "check": _check_line(rs.check),
    }


def _rows_by(table: Table, keys: tuple[str, ...]) -> dict[tuple, np.ndarray]:
    """Row indices of each entity, sorted by time (rows are not globally time-sorted)."""
    if not len(table.get("time_s", ())):
        return {}
    columns = [np.asarray(table[k]) for k in keys]
    order = np.lexsort((table["time_s"], *reversed(columns)))
    out: dict[tuple, list] = {}
    keyed = list(zip(*(c[order].tolist() for c in columns)))
    start = 0
    for i in range(1, len(order) + 1):
        if i == len(order) or keyed[i] != keyed[start]:
            out[keyed[start]] = order[start:i]
            start = i
    return out


def _nodes(summary: Mapping[str, Any]) -> list[dict]:
    """Hosts and routers with a position. A tiered network (`plot_tool.tiers`: a fat tree, a
    leaf-spine fabric, any network whose links all join adjacent hop-distance tiers from the
    hosts) is drawn in tiers: hosts at the bottom, the farthest tier (a fat tree's core) on top,
    each tier ordered to keep pods together; a node then has its ``tier``. Any other network is
    drawn by a spring layout of the link graph with a fixed seed (on the nodes and links in
    sorted order), so that the same topology is always drawn the same way."""
    hosts = set(summary.get("hosts", {}))
    routers = set(summary.get("routers", {}) or {})
    tiers = network_tiers(summary)
    if tiers is not None:
        pos = tiered_positions(tiers)
        order = sorted(pos)
        xs = np.array([pos[v][0] for v in order], dtype=float)
        ys = np.array([pos[v][1] for v in order], dtype=float)
        return [{"id": v, "kind": "host" if v in hosts or v not in routers else "router",
                 "x": round(float(x), 4), "y": round(float(y), 4), "tier": tiers.tier[v]}
                for v, x, y in zip(order, xs, ys)]
    import networkx as nx

    graph = nx.Graph()
    for info in summary["links"].values():
        graph.add_nodes_from(info.get("ends", []))
    graph.add_nodes_from(hosts | routers)
    order = sorted(graph.nodes)
    ordered = nx.Graph()
    ordered.add_nodes_from(order)
    for lid in sorted(summary["links"]):
        ends = summary["links"][lid].get("ends", [])
        if len(ends) == 2:
            ordered.add_edge(*sorted(ends))
    if len(order) == 1:
        pos = {order[0]: (0.0, 0.0)}
    elif len(order) == 2 and ordered.number_of_edges() == 1:
        pos = {order[0]: (-1.0, 0.0), order[1]: (1.0, 0.0)}
    else:
        pos = nx.spring_layout(ordered, seed=LAYOUT_SEED, iterations=200)
    xs = np.array([pos[v][0] for v in order], dtype=float)
    ys = np.array([pos[v][1] for v in order], dtype=float)
    span = max(float(np.ptp(xs)), float(np.ptp(ys)), 1e-9)
    xs = (xs - xs.min()) / span
    ys = (ys - ys.min()) / span
    return [{"id": v, "kind": "host" if v in hosts or v not in routers else "router",
             "x": round(float(x), 4), "y": round(float(y), 4)} for v, x, y in zip(order, xs, ys)]


def _tier_names(summary: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> Optional[list]:
    """What each tier of a tiered drawing is, bottom first ("host", "edge", ...); None when the
    network is drawn by the spring layout."""
    if not nodes or "tier" not in nodes[0]:
        return None
    tiers = network_tiers(summary)
    return None if tiers is None else list(tiers.names)


def route_changes(rs: ResultSet, nodes: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The path of every flow (its links, from source to destination) at t = 0 and after each
    change of routes.csv that moves one: ``[{"t": time, "paths": {flow: [link, ...]}}]``. A flow
    whose destination cannot be reached from some node gets the links up to there and
    ``"broken": [flow, ...]``.

    With ECMP a router's entry is an equal-cost set (routes.csv: one row per member, at the same
    time). Which member a flow's hash picks is not in the results, so the flow's "path" is then
    every link of every equal-cost path it may take (source side first), and the flow is listed
    in ``"ecmp"``."""
    summary = rs.summary
    host_links: dict[str, list[tuple[str, str]]] = {}
    for lid in sorted(summary["links"]):
        ends = summary["links"][lid].get("ends", [])
        if len(ends) == 2:
            host_links.setdefault(ends[0], []).append((lid, ends[1]))
            host_links.setdefault(ends[1], []).append((lid, ends[0]))
    routers = set(summary.get("routers", {}) or {})
    flows = {fid: (f.get("src"), f.get("dst")) for fid, f in summary["flows"].items()}
    # (router, destination) -> (time installed, [(next hop, link, cost), ...]: the set's members)
    table: dict[tuple[str, str], tuple[float, list[tuple[str, str, float]]]] = {}

    def path(src: str, dst: str) -> tuple[list[str], bool, bool]:
        """(links, broken, several paths): breadth-first over the next hops from `src`."""
        links: dict[str, None] = {}
        frontier, seen = [src], {src}
        broken = several = False
        for _ in range(len(summary["links"]) + 1):
            if not frontier:
                break
            following: list[str] = []
            for node in frontier:
                if node == dst:
                    continue
                if node in routers:
                    entry = table.get((node, dst))
                    hops = [(h, lid) for h, lid, cost in (entry[1] if entry else [])
                            if math.isfinite(cost)]
                else:                               # a host: its (first) link
                    choices = host_links.get(node, [])
                    direct = [c for c in choices if c[1] == dst]
                    hops = [(h, lid) for lid, h in (direct or choices)[:1]]
                if not hops:
                    broken = True
                several |= len(hops) > 1
                for next_hop, lid in hops:
                    links.setdefault(lid)
                    if next_hop not in seen:
                        seen.add(next_hop)
                        following.append(next_hop)
            frontier = following
        else:
            broken = True                           # (cannot happen: each node is seen once)
        return list(links), broken or dst not in seen, several

    changes: list[dict] = []
    ecmp = bool((summary.get("routing") or {}).get("ecmp"))
    routes = rs.routes
    times = np.asarray(routes["time_s"]) if routes is not None else np.zeros(0)
    order = np.argsort(times, kind="stable")
    distinct = sorted(set(times.tolist())) or [0.0]
    if not len(times) or distinct[0] > 0:
        distinct = [0.0, *[t for t in distinct if t > 0]]
    i = 0
    previous = None
    for t in distinct:
        while i < len(order) and times[order[i]] <= t:
            k = order[i]
            key = (str(routes["router"][k]), str(routes["destination"][k]))
            member = (str(routes["next_hop"][k]), str(routes["link"][k]),
                      float(routes["cost_ms"][k]))
            installed = table.get(key)
            if installed is not None and installed[0] == float(times[k]) and ecmp:
                installed[1].append(member)         # another member of the same set
            else:
                table[key] = (float(times[k]), [member])
            i += 1
        paths, broken, several = {}, [], []
        for fid, (src, dst) in flows.items():
            links, bad, many = path(str(src), str(dst))
            paths[fid] = links
            if bad:
                broken.append(fid)
            if many:
                several.append(fid)
        state = (paths, broken)
        if state != previous:
            changes.append({"t": _sig(float(t)), "paths": paths, "broken": broken,
                            "ecmp": several})
            previous = state
    return changes


def _predictions(table: Optional[Table]) -> dict:
    """predictions.csv as ``{"flow:F1": {"rate_mbps": [[start, end, low, high], ...]},
    "link:L1:R1->R2": {"backlog_kb": [...]}}``."""
    if table is None:
        return {}
    out: dict[str, dict[str, list]] = {}
    for i in range(len(table["start_s"])):
        kind, ident = str(table["kind"][i]), str(table["id"][i])
        key = f"{kind}:{ident}" if kind == "flow" else f"{kind}:{ident}:{table['direction'][i]}"
        out.setdefault(key, {}).setdefault(str(table["quantity"][i]), []).append(
            [_sig(float(table[c][i])) for c in ("start_s", "end_s", "low", "high")])
    return out


def _check_line(check: Optional[Mapping[str, Any]]) -> Optional[str]:
    if not check:
        return None
    passed = check.get("passed")
    worst = check.get("max_error_pct")
    text = "--check: predictions from the analytic equilibrium drawn dashed"
    if worst is not None:
        text += f"; largest error {float(worst):.2f} %"
    if passed is not None:
        text += "; within tolerance" if passed else "; OUT OF TOLERANCE"
    return text


def summary_tables(summary: Mapping[str, Any]) -> list[dict]:
    """The run's summary as tables: ``[{"title", "columns", "rows"}]`` (rows of strings)."""
    binary = " (binary)" if summary.get("units", {}).get("system") == "binary" else ""

    def num(value: Any, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    facts = [["topology", str(summary.get("topology", ""))],
             ["stopped", f"{summary.get('stop_detail', summary.get('stop_reason', ''))} at "
                         f"t = {num(summary.get('end_time_s'), '.3f')} s"],
             ["seed", str(summary.get("seed", ""))],
             ["sampling interval", f"{summary.get('interval_s')} s"],
             ["events", str(summary.get("events", ""))],
             ["wall time", f"{num(summary.get('wall_time_s'), '.2f')} s"],
             ["units", str(summary.get("units", {}).get("system", ""))],
             ["config digest", str(summary.get("config_digest", ""))[:16]]]
    flows = [[fid, str(f.get("algorithm", "")), f"{f.get('src')} → {f.get('dst')}",
              num(f.get("start_s"), ".3f"), num(f.get("finish_s"), ".3f"),
              num(f.get("goodput_mbps"), ".3f"), num(f.get("avg_rtt_ms"), ".1f"),
              str(f.get("retransmissions", "")), str(f.get("timeouts", "")),
              "yes" if f.get("in_order") else "NO"]
             for fid, f in summary["flows"].items()]
    links = []
    for lid, info in summary["links"].items():
        for d, s in (info.get("directions") or {}).items():
            links.append([lid, d, num(s.get("avg_rate_mbps"), ".3f"), num(s.get("utilization"), ".2f"),
                          num(s.get("avg_buffer_kb"), ".2f"), str(s.get("drops", "")),
                          str(s.get("impairment_drops", "")), str(s.get("failure_drops", ""))])
    return [
        {"title": "Run", "columns": ["", ""], "rows": facts},
        {"title": "Flows", "columns": ["flow", "algorithm", "path", "start s", "finish s",
                                       f"goodput Mbps{binary}", "RTT ms", "retx", "RTOs",
                                       "in order"], "rows": flows},
        {"title": "Links", "columns": ["link", "direction", f"rate Mbps{binary}", "util",
                                       f"buffer KB{binary}", "lost: overflow", "random",
                                       "failure"], "rows": links},
    ]


# ---------------------------------------------------------------------------------------------
# A sweep


def sweep_data(directory: Path) -> dict:
    """The sweep page: one interactive chart per plot spec of sweep.json (error bars, theory
    overlays), built with the aggregation, labels and response functions of
    plot_tool.sweep_figures, and the table of runs."""
    from plot_tool import sweep_figures as sf

    sweep, rows = sf.read_sweep(directory)
    units = sf.sweep_units(directory, sweep)
    charts = []
    for plot in sweep.get("plots") or []:
        try:
            charts.append(_sweep_chart(plot, rows, units))
        except (KeyError, ValueError) as exc:
            charts.append({"title": str(plot.get("title") or plot.get("file")), "error": str(exc),
                           "traces": [], "layout": {}})
    columns = list(rows[0]) if rows else []
    return {"kind": "sweep", "title": str(sweep.get("name", directory.name)),
            "description": str(sweep.get("description", "")),
            "charts": charts, "runs": {"columns": columns,
                                       "rows": [[row.get(c, "") for c in columns] for row in rows]},
            "failed": sum(1 for row in rows if str(row.get("status", "ok")).strip() != "ok")}


_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")


def _listed(values: np.ndarray) -> list:
    if values.dtype.kind == "f":
        return [_sig(float(v)) for v in values]
    return [str(v) for v in values]


def _sweep_chart(plot: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
                 units: Mapping[str, Any]) -> dict:
    from plot_tool import sweep_figures as sf

    x, y = str(plot["x"]), str(plot["y"])
    lines = plot.get("lines")
    error_bars = plot.get("error_bars") or "std"
    series = sf.aggregate(rows, x, y, lines, error_bars)
    traces: list[dict] = []
    colors = {}
    for i, s in enumerate(series):
        color = _PALETTE[i % len(_PALETTE)]
        colors[sf._format_value(s.line)] = color
        trace = {"type": "scatter", "mode": "lines+markers" if s.x.dtype.kind == "f" else "markers",
                 "x": _listed(s.x), "y": _listed(s.mean),
                 "name": s.label if lines is not None else sf.quantity_name(y),
                 "line": {"color": color}, "marker": {"size": 7},
                 "customdata": [int(k) for k in s.n],
                 "hovertemplate": "%{x}: %{y:.4g} (%{customdata} runs)<extra>%{fullData.name}</extra>"}
        if error_bars != "none":
            trace["error_y"] = {"type": "data", "symmetric": False, "array": _listed(s.upper),
                                "arrayminus": _listed(s.lower), "color": color}
        traces.append(trace)
    theory = plot.get("theory")
    if theory:
        traces += _theory_traces(theory, series, rows, x, lines, units, colors,
                                 logx=bool(plot.get("logx")))
    title = plot.get("title") or (lambda t: t[:1].upper() + t[1:])(
        f"{sf.quantity_name(y)} vs {sf.quantity_name(x)}")
    xlabel = plot.get("xlabel") or sf.axis_label(x, units)
    if not plot.get("xlabel") and theory and theory.get("model") in ("mathis", "cubic"):
        xlabel += " = loss probability p"
    layout = {"title": {"text": str(title)},
              "xaxis": {"title": {"text": xlabel}, "type": "log" if plot.get("logx") else None},
              "yaxis": {"title": {"text": plot.get("ylabel") or sf.axis_label(y, units)},
                        "type": "log" if plot.get("logy") else None},
              "legend": {"title": {"text": sf.quantity_name(lines) if lines else ""}},
              "margin": {"t": 60}, "height": 460}
    note = {"std": "error bars: ±1 standard deviation",
            "ci95": "error bars: 95 % confidence interval of the mean",
            "none": "no error bars"}.get(error_bars, "")
    return {"title": str(title), "file": plot.get("file"), "traces": traces, "layout": layout,
            "note": note}


def _theory_traces(theory: Mapping[str, Any], series: Sequence[Any], rows: Sequence[Any], x: str,
                   lines: Optional[str], units: Mapping[str, Any], colors: Mapping[str, str], *,
                   logx: bool) -> list[dict]:
    """The theory overlays of plot_tool.sweep_figures (`draw_sweep_plot`), dashed."""
    from plot_tool import sweep_figures as sf

    model = theory.get("model")
    dash = {"dash": "dash", "width": 1.5}
    numeric = all(s.x.dtype.kind == "f" for s in series)
    if model in ("capacity", "fair_share"):
        mbps = float(theory["mbps"])
        binary = " (binary)" if units.get("system") == "binary" else ""
        label = theory.get("label") or (f"capacity {mbps:g} Mbps" if model == "capacity"
                                        else f"fair share {mbps:g} Mbps")
        xs = [v for s in series for v in _listed(s.x)]
        if numeric and xs:
            xs = [min(xs), max(xs)]
        return [{"type": "scatter", "mode": "lines", "x": xs, "y": [mbps] * len(xs),
                 "name": f"{label}{binary}", "line": {"color": "black", **dash}}]
    if model == "column":
        name = sf.quantity_name(str(theory["y"]))
        out = []
        for s in sf.aggregate(rows, x, str(theory["y"]), lines, "none"):
            color = colors.get(sf._format_value(s.line), "black")
            out.append({"type": "scatter", "mode": "lines" if numeric else "markers",
                        "x": _listed(s.x), "y": _listed(s.mean),
                        "name": f"{s.label}: {name}" if lines is not None else name,
                        "line": {"color": color, **dash},
                        "marker": {"symbol": "line-ew-open", "size": 16, "color": color}})
        return out
    if model == "band":
        low_col, high_col = str(theory["low"]), str(theory["high"])
        name = sf.quantity_name(low_col).removesuffix(", predicted low").removesuffix(" low")
        highs = {sf._format_value(s.line): s for s in sf.aggregate(rows, x, high_col, lines, "none")}
        out = []
        for low in sf.aggregate(rows, x, low_col, lines, "none"):
            key = sf._format_value(low.line)
            high = highs.get(key)
            if high is None:
                continue
            color = colors.get(key, "black")
            label = f"{low.label}: {name}, predicted range" if lines is not None \
                else f"{name}, predicted range"
            out.append({"type": "scatter", "mode": "lines", "x": _listed(low.x),
                        "y": _listed(low.mean), "line": {"color": color, "dash": "dash", "width": 1},
                        "legendgroup": label, "showlegend": False, "name": label})
            out.append({"type": "scatter", "mode": "lines", "x": _listed(high.x),
                        "y": _listed(high.mean), "fill": "tonexty", "opacity": 0.6,
                        "line": {"color": color, "dash": "dash", "width": 1},
                        "legendgroup": label, "name": label})
        return out
    if model in ("mathis", "cubic") and numeric:
        xs = np.concatenate([s.x for s in series]) if series else np.zeros(0)
        xs = xs[np.isfinite(xs) & (xs > 0)]
        if not len(xs):
            return []
        lo, hi = float(xs.min()), float(xs.max())
        p = np.geomspace(lo, hi, sf.THEORY_POINTS) if logx else np.linspace(lo, hi, sf.THEORY_POINTS)
        rtt_s = float(theory["rtt_ms"]) / 1e3
        mss = float(theory["mss_bytes"])
        bits = float(theory.get("units_bits_per_mbit") or units.get("bits_per_mbit") or 1e6)
        if model == "mathis":
            values = sf.mathis_goodput_mbps(p, mss, rtt_s, bits)
            label = f"Mathis et al. (MSS {mss:g} B, RTT {rtt_s * 1e3:.3g} ms)"
        else:
            C, beta = float(theory.get("C", 0.4)), float(theory.get("beta", 0.7))
            values = sf.cubic_goodput_mbps(p, mss, rtt_s, C, beta, bits)
            label = f"CUBIC, RFC 9438 (C {C:g}, β {beta:g}, MSS {mss:g} B, RTT {rtt_s * 1e3:.3g} ms)"
        return [{"type": "scatter", "mode": "lines", "x": _listed(p),
                 "y": _listed(np.asarray(values, dtype=float)), "name": label,
                 "line": {"color": "black", **dash}}]
    return []


# ---------------------------------------------------------------------------------------------
# The page


def _packed(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)).decode()


_PLOTLY_CACHE: dict[str, str] = {}


def _plotly_packed() -> str:
    """plotly.js, gzip-compressed and base64-encoded (computed once per process)."""
    if "js" not in _PLOTLY_CACHE:
        from plotly.offline import get_plotlyjs   # only here: runs without a report never pay

        _PLOTLY_CACHE["js"] = _packed(get_plotlyjs())
    return _PLOTLY_CACHE["js"]


def _tables_html(tables: Iterable[Mapping[str, Any]]) -> str:
    parts = []
    for t in tables:
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in t["columns"])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
                       for row in t["rows"])
        parts.append(f"<h3>{html.escape(t['title'])}</h3><table class=\"summary\">"
                     f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    return "\n".join(parts)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:16px 24px;color:#222}
h1{font-size:1.4em;margin:0 0 4px} h2{font-size:1.15em;margin:18px 0 6px} h3{font-size:1em}
.muted{color:#666;font-size:.9em}
#controls{display:flex;align-items:center;gap:12px;margin:6px 0}
#slider{flex:1}
#time{font-variant-numeric:tabular-nums;min-width:9em}
table.summary{border-collapse:collapse;font-size:.85em;margin-bottom:8px}
table.summary td,table.summary th{border:1px solid #ddd;padding:2px 8px;text-align:right}
table.summary td:first-child,table.summary th:first-child{text-align:left}
#runs-wrap{max-height:480px;overflow:auto}
#status{color:#a00}
button{font-size:1em;padding:2px 12px}
"""


def render_page(data: Mapping[str, Any]) -> str:
    """The HTML page: inlined plotly.js and report.js, the data packed."""
    title = html.escape(str(data.get("title", "netsim")))
    if data["kind"] == "run":
        body = f"""
<h1>netsim run: {title}</h1>
<div class="muted">{html.escape(data.get("check") or "")}</div>
<div id="status">loading…</div>
<h2>Network</h2>
<div class="muted">Links coloured by utilization, bars beside them: buffer occupancy of each
direction (at the sending end); ✕ a link losing packets because it is down; dotted lines: the
route of each flow, or with ECMP every equal-cost path it may take (click a flow in the legend to
hide it). Click a link (its label) or a flow
route to show or hide its time series below.</div>
<div id="topology" style="height:560px"></div>
<div id="controls"><button id="play" type="button">▶ Play</button>
<input id="slider" type="range" min="0" max="0" value="0" step="1"><span id="time"></span></div>
<h2>Time series</h2>
<div class="muted" id="selection"></div>
<div id="series" style="height:900px"></div>
<h2>Summary</h2>
{_tables_html(data.get("tables", []))}
"""
    else:
        runs = data["runs"]
        body = f"""
<h1>netsim sweep: {title}</h1>
<div class="muted">{html.escape(data.get("description", ""))}</div>
<div id="status">loading…</div>
<div id="charts"></div>
<h2>Runs ({len(runs["rows"])}, {data.get("failed", 0)} failed)</h2>
<div id="runs-wrap">{_tables_html([{"title": "", **runs}])}</div>
"""
    script = _ASSET.read_text(encoding="utf-8")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>netsim report: {title}</title>
<style>{_CSS}</style></head>
<body>
{body}
<script id="netsim-data" type="application/octet-stream">{_packed(json.dumps(data, separators=(",", ":"), allow_nan=False))}</script>
<script id="plotly-packed" type="application/octet-stream">{_plotly_packed()}</script>
<script>
{script}
</script>
</body></html>
"""
