"""The run report's network view and tables (see `plot_tool.report`): node positions (tiers, or
a seeded spring layout), each flow's path over time from routes.csv, the predictions of a
``--check`` run, and the summary tables.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from plot_tool.report_grid import sig
from plot_tool.results import ResultSet, Table
from plot_tool.run_data import tied_link_notes
from plot_tool.tiers import network_tiers, tiered_positions

LAYOUT_SEED = 143          # spring layout seed: the same topology gets the same drawing


def network_nodes(summary: Mapping[str, Any]) -> list[dict]:
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


def tier_names(summary: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> list | None:
    """What each tier of a tiered drawing is, bottom first ("host", "edge", ...); None when the
    network is drawn by the spring layout."""
    if not nodes or "tier" not in nodes[0]:
        return None
    tiers = network_tiers(summary)
    return None if tiers is None else list(tiers.names)


def _host_links(summary: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """Node -> [(link, the node at its other end)], links in sorted order."""
    host_links: dict[str, list[tuple[str, str]]] = {}
    for lid in sorted(summary["links"]):
        ends = summary["links"][lid].get("ends", [])
        if len(ends) == 2:
            host_links.setdefault(ends[0], []).append((lid, ends[1]))
            host_links.setdefault(ends[1], []).append((lid, ends[0]))
    return host_links


# (router, destination) -> (time installed, [(next hop, link, cost), ...]: the set's members)
_Tables = dict[tuple[str, str], tuple[float, list[tuple[str, str, float]]]]


def _flow_path(src: str, dst: str, table: _Tables, routers: set[str],
               host_links: Mapping[str, list[tuple[str, str]]],
               n_links: int) -> tuple[list[str], bool, bool]:
    """(links, broken, several paths) of a flow: breadth-first over the next hops from `src`
    in the forwarding tables `table`."""
    links: dict[str, None] = {}
    frontier, seen = [src], {src}
    broken = several = False
    for _ in range(n_links + 1):
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


def hashed_paths(summary: Mapping[str, Any]) -> dict | None:
    """{flow: [link, ...]} of a static run with ECMP flow hashing, from its flows' `path_links`
    (the one path each flow's hash picked, for the whole run), or None: another run, results
    without the field, or a field that names no link of the run (not trusted)."""
    routing = summary.get("routing") or {}
    if routing.get("protocol") != "static" or not routing.get("ecmp") or not summary["flows"]:
        return None
    hashed = {fid: f.get("path_links") for fid, f in summary["flows"].items()}
    known = summary["links"]
    if all(isinstance(p, list) and all(isinstance(lid, str) and lid in known for lid in p)
           for p in hashed.values()):
        return hashed
    return None


def route_changes(rs: ResultSet, nodes: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The path of every flow (its links, from source to destination) at t = 0 and after each
    change of routes.csv that moves one: ``[{"t": time, "paths": {flow: [link, ...]}}]``. A flow
    whose destination cannot be reached from some node gets the links up to there and
    ``"broken": [flow, ...]``.

    With ECMP a router's entry is an equal-cost set (routes.csv: one row per member, at the same
    time). Under static routing with flow hashing, summary.json gives the one path each flow's
    hash picks (``path_links``), and that is its path. Otherwise (packet spraying, Bellman-Ford,
    results without the field) which member a packet takes is not in the results, so the flow's
    "path" is every link of every equal-cost path it may take (source side first), and the flow
    is listed in ``"ecmp"``."""
    summary = rs.summary
    host_links = _host_links(summary)
    routers = set(summary.get("routers", {}) or {})
    flows = {fid: (f.get("src"), f.get("dst")) for fid, f in summary["flows"].items()}
    table: _Tables = {}
    changes: list[dict] = []
    ecmp = bool((summary.get("routing") or {}).get("ecmp"))
    routes = rs.routes
    times = np.asarray(routes["time_s"]) if routes is not None else np.zeros(0)
    order = np.argsort(times, kind="stable")
    distinct = sorted(set(times.tolist())) or [0.0]
    if not len(times) or distinct[0] > 0:
        distinct = [0.0, *[t for t in distinct if t > 0]]
    hashed = hashed_paths(summary)
    if hashed is not None:
        return [{"t": sig(0.0), "paths": hashed,
                 "broken": [fid for fid, p in hashed.items() if not p], "ecmp": []}]
    if (summary.get("routing") or {}).get("protocol") == "static":
        distinct = [0.0]    # the tables never change; later rows are a workload's pairs
    i = 0
    previous = None
    for t in distinct:
        while i < len(order) and times[order[i]] <= t:
            assert routes is not None
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
            links, bad, many = _flow_path(str(src), str(dst), table, routers, host_links,
                                          len(summary["links"]))
            paths[fid] = links
            if bad:
                broken.append(fid)
            if many:
                several.append(fid)
        state = (paths, broken)
        if state != previous:
            changes.append({"t": sig(float(t)), "paths": paths, "broken": broken,
                            "ecmp": several})
            previous = state
    return changes


def predictions_data(table: Table | None) -> dict:
    """predictions.csv as ``{"flow:F1": {"rate_mbps": [[start, end, low, high], ...]},
    "link:L1:R1->R2": {"backlog_kb": [...]}}``."""
    if table is None:
        return {}
    out: dict[str, dict[str, list]] = {}
    for i in range(len(table["start_s"])):
        kind, ident = str(table["kind"][i]), str(table["id"][i])
        key = f"{kind}:{ident}" if kind == "flow" else f"{kind}:{ident}:{table['direction'][i]}"
        out.setdefault(key, {}).setdefault(str(table["quantity"][i]), []).append(
            [sig(float(table[c][i])) for c in ("start_s", "end_s", "low", "high")])
    return out


def check_line(check: Mapping[str, Any] | None) -> str | None:
    if not check:
        return None
    passed = check.get("passed")
    worst = check.get("max_error_pct")
    text = "--check: predictions from the analytic equilibrium drawn dashed"
    if check.get("compared", 1) == 0:           # (its 0 % error would read as agreement)
        text += "; nothing compared (see check.json for the reasons)"
    elif worst is not None:
        text += f"; largest error {float(worst):.2f} %"
    if passed is not None:
        text += "; within tolerance" if passed else "; OUT OF TOLERANCE"
    for note in tied_link_notes(dict(check)):     # (as links.png's legend says it)
        text += "; " + note.replace("\n", " ")
    return text


WORKLOAD_BUCKETS = (("all", "all"), ("under_100kb", "< 100 KB"),
                    ("100kb_to_10mb", "100 KB \u2013 10 MB"), ("over_10mb", "> 10 MB"))


def workload_table(workloads: Mapping[str, Any]) -> dict:
    """One row per workload and size bucket with finished flows (summary.json's `workloads`):
    flows started, completed and unfinished, then the bucket's count, mean, p50 and p99 of the
    completion time and of the slowdown: summary.json's log-histogram figures, as the console
    prints them (fct.png computes its own from fct.csv, its p99 from 100 flows on)."""
    def sig(value: Any) -> str:
        return "-" if value is None else f"{value:.3g}"

    rows = []
    for wid, w in workloads.items():
        first = True
        for key, name in WORKLOAD_BUCKETS:
            b = w.get(key) or {}
            if not b.get("count") and key != "all":
                continue
            rows.append([wid if first else "", str(w.get("algorithm", "")) if first else "",
                         *([str(w.get(k, "")) for k in ("flows_started", "flows_completed",
                                                        "flows_unfinished")]
                           if first else ["", "", ""]),
                         name, str(b.get("count", 0)),
                         *(sig(b.get(f"{q}_fct_s")) for q in ("mean", "p50", "p99")),
                         *(sig(b.get(f"{q}_slowdown")) for q in ("mean", "p50", "p99"))])
            first = False
    return {"title": "Workloads", "columns": [
        "workload", "algorithm", "started", "completed", "unfinished", "size bucket", "flows",
        "FCT s mean", "p50", "p99", "slowdown mean", "p50", "p99"], "rows": rows}


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
    # as the console's tables (netsim/console.py): the ECN and queue-discipline columns only
    # where some flow got an ECN echo, some link has a discipline
    ecn = any(f.get("ecn_echoes") for f in summary["flows"].values())
    aqm = any((info.get("queue") or "droptail") != "droptail"
              for info in summary["links"].values())
    flows = [[fid, str(f.get("algorithm", "")), f"{f.get('src')} → {f.get('dst')}",
              num(f.get("start_s"), ".3f"), num(f.get("finish_s"), ".3f"),
              num(f.get("goodput_mbps"), ".3f"), num(f.get("avg_rtt_ms"), ".1f"),
              str(f.get("retransmissions", "")), str(f.get("timeouts", "")),
              *([str(f.get("ecn_reactions", 0))] if ecn else []),
              "yes" if f.get("in_order") else "NO"]
             for fid, f in summary["flows"].items()]
    links = []
    for lid, info in summary["links"].items():
        for d, s in (info.get("directions") or {}).items():
            links.append([lid, d, num(s.get("avg_rate_mbps"), ".3f"), num(s.get("utilization"), ".2f"),
                          num(s.get("avg_buffer_kb"), ".2f"), str(s.get("drops", "")),
                          str(s.get("impairment_drops", "")), str(s.get("failure_drops", "")),
                          *([str(s.get("aqm_drops", "-")), str(s.get("marks", "-")),
                             num(s.get("avg_sojourn_ms"), ".3f"),
                             num(s.get("p99_sojourn_ms"), ".3f")] if aqm else [])])
    flow_table = {"title": "Flows", "columns": ["flow", "algorithm", "path", "start s",
                                                "finish s", f"goodput Mbps{binary}", "RTT ms",
                                                "retx", "RTOs", *(["ECN cuts"] if ecn else []),
                                                "in order"], "rows": flows}
    if not flows:                     # (a run of workloads only: not an empty table's headers)
        where = ("its workloads' flows, one row each in fct.csv, are summed up per workload "
                 "below" if summary.get("workloads") else "")
        flow_table = {"title": "Flows", "columns": [""],
                      "rows": [["none listed in the topology" + (f"; {where}" if where else "")]]}
    tables = [{"title": "Run", "columns": ["", ""], "rows": facts}, flow_table]
    if summary.get("workloads"):
        tables.append(workload_table(summary["workloads"]))
    return [
        *tables,
        {"title": "Links", "columns": ["link", "direction", f"rate Mbps{binary}", "util",
                                       f"buffer KB{binary}", "lost: overflow", "random",
                                       "failure", *(["AQM drops", "marks", "sojourn ms",
                                                     "p99 ms"] if aqm else [])],
         "rows": links},
    ]
