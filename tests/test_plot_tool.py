"""Tests of plot_tool on a small synthetic results directory in the format of docs/outputs.md."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from plot_tool import ResultSet, make_figures, read_results, select
from plot_tool.figures import (LINKS_FIGURE, _link_series, _links_figure_spec, _route_series,
                               _routes_changed, _routes_to_plot)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TIMES = (0.1, 0.2, 0.3, 0.4, 0.45)       # interval 0.1 s; the last interval is shorter


def _summary(units: str = "si") -> dict:
    unit_table = {
        "si": {"system": "si", "bits_per_mbit": 1000000, "bytes_per_kb": 1000,
               "bytes_per_mb": 1000000},
        "binary": {"system": "binary", "bits_per_mbit": 1048576, "bytes_per_kb": 1024,
                   "bytes_per_mb": 1048576},
    }[units]
    direction = {"avg_buffer_kb": 4.0, "avg_buffer_pkts": 3.9, "drops": 2, "failure_drops": 0,
                 "routing_packets": 3, "routing_drops": 0,
                 "packets_transmitted": 300, "avg_rate_mbps": 5.0, "utilization": 0.5}
    return {
        "netsim_version": "0.1.0",
        "topology": "synthetic_case", "source": "topologies/synthetic_case.json",
        "description": "two links, two flows",
        "seed": 1,
        "units": unit_table,
        "interval_s": 0.1,
        "end_time_s": 0.45,
        "stop_reason": "completed",
        "stop_detail": "all finite flows finished",
        "wall_time_s": 0.01, "events": 1234, "packet_hops": 4321,
        "routing": {"protocol": "bellman-ford", "update_interval_s": 0.2, "settle_s": 0.05,
                    "rounds": 3, "routing_packets": 12, "route_changes": 4},
        "flows": {
            "F1": {"algorithm": "reno", "src": "S1", "dst": "T1", "data_mb": 0.1,
                   "data_bytes": 100000, "start_s": 0.0, "finish_s": 0.35, "completed": True,
                   "goodput_mbps": 2.29, "avg_rtt_ms": 21.0, "avg_window_pkts": 3.0,
                   "packets_sent": 100, "retransmissions": 2, "timeouts": 0,
                   "delivered_bytes": 100000, "in_order": True},
            "F2": {"algorithm": "tahoe", "src": "S2", "dst": "T2", "data_mb": None,
                   "data_bytes": None, "start_s": 0.1, "finish_s": None, "completed": False,
                   "goodput_mbps": 1.0, "avg_rtt_ms": None, "avg_window_pkts": 1.0,
                   "packets_sent": 40, "retransmissions": 0, "timeouts": 1,
                   "delivered_bytes": 40000, "in_order": True},
        },
        "links": {
            "L1": {"ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 10, "buffer_kb": 64,
                   "duplex": "full",
                   "directions": {"R1->R2": dict(direction), "R2->R1": dict(direction)}},
            "L2": {"ends": ["R2", "T1"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 64,
                   "duplex": "half",
                   "directions": {"R2->T1": dict(direction), "T1->R2": dict(direction)}},
        },
        "hosts": {"S1": {"avg_send_rate_mbps": 2.3, "avg_recv_rate_mbps": 0.1},
                  "S2": {"avg_send_rate_mbps": 1.0, "avg_recv_rate_mbps": 0.05}},
        "routers": {"R1": {"no_route_drops": 0}, "R2": {"no_route_drops": 1}},
    }


# routes.csv: the static tables of t=0 ...
STATIC_ROUTES = ["time_s,router,destination,next_hop,link,cost_ms",
                 "0,R1,T1,R2,L1,15",
                 "0,R1,S1,S1,L0,1",
                 "0,R2,T1,T1,L2,5",
                 "0,R2,S1,R1,L1,11"]
# ... and what Bellman-Ford installed later: R1 -> T1 switches to R3 and back, R2 -> T1 changes
# its cost only, R2 -> S1 becomes unreachable (empty next hop and link, cost inf).
DYNAMIC_ROUTES = ["0.2,R1,T1,R3,L3,17.5",
                  "0.3,R1,T1,R2,L1,15.25",
                  "0.35,R2,T1,T1,L2,5.5",
                  "0.4,R2,S1,,,inf"]


def write_results(out_dir: Path, units: str = "si", *, dynamic: bool = False,
                  failures: bool = False) -> Path:
    """Write a complete synthetic results directory (summary.json + the 4 CSVs) into out_dir.

    `dynamic`: routes.csv also has entries after t=0; `failures`: links.csv has failure drops."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(_summary(units), indent=2))

    lines = ["time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,drops,failure_drops,"
             "routing_rate_mbps"]
    for i, t in enumerate(TIMES):
        lost = [0, 0, 3, 0, 0][i] if failures else 0
        lines.append(f"{t},L1,R1->R2,{8 + i},{10 * i},{i},{i % 2},{lost},0.01")
        lines.append(f"{t},L1,R2->R1,0.5,0,0,0,0,0.01")
        lines.append(f"{t},L2,R2->T1,{6 + i},{2.5 * i},{0.5 * i},1,{2 * lost},0")
        lines.append(f"{t},L2,T1->R2,{1 + i},1.5,1,{i},{lost},0")
    (out_dir / "links.csv").write_text("\n".join(lines) + "\n")

    routes = STATIC_ROUTES + (DYNAMIC_ROUTES if dynamic else [])
    (out_dir / "routes.csv").write_text("\n".join(routes) + "\n")

    flows = ["time_s,flow,send_rate_mbps,recv_rate_mbps,window_pkts,rtt_ms",
             "0.1,F1,2.5,0,2,",            # no RTT sample in the first interval
             "0.2,F1,3,2.0,3,20.5",
             "0.3,F1,3,2.5,4,21.5",
             "0.4,F1,1,2.0,4,",
             "0.2,F2,1,0.5,1,",
             "0.3,F2,1,1,1,30",
             "0.4,F2,1,1,2,31",
             "0.45,F2,1,1,2,"]
    (out_dir / "flows.csv").write_text("\n".join(flows) + "\n")

    hosts = ["time_s,host,send_rate_mbps,recv_rate_mbps"]
    for t in TIMES:
        hosts.append(f"{t},S1,2.5,0.1")
        hosts.append(f"{t},S2,1,0.05")
    (out_dir / "hosts.csv").write_text("\n".join(hosts) + "\n")
    return out_dir


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    return write_results(tmp_path / "run")


def _is_png(path: Path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_SIGNATURE)


# --- reading -----------------------------------------------------------------------------------


def test_read_results_round_trips_values(results_dir: Path) -> None:
    rs = read_results(results_dir)
    assert isinstance(rs, ResultSet)
    assert rs.directory == results_dir
    assert rs.summary == _summary()
    assert rs.topology == "synthetic_case"

    assert set(rs.links) == {"time_s", "link", "direction", "rate_mbps", "buffer_kb",
                             "buffer_pkts", "drops", "failure_drops", "routing_rate_mbps"}
    assert rs.links["failure_drops"].dtype == np.float64
    assert rs.links["routing_rate_mbps"][0] == pytest.approx(0.01)
    assert len(rs.links["time_s"]) == 4 * len(TIMES)
    assert rs.links["link"].dtype.kind == "U"
    assert rs.links["drops"].dtype == np.float64
    assert rs.links["link"][0] == "L1" and rs.links["direction"][0] == "R1->R2"
    assert rs.links["time_s"][-1] == pytest.approx(0.45)
    assert rs.links["rate_mbps"][4] == pytest.approx(9.0)      # row 4: t=0.2, L1 R1->R2

    assert rs.flows["flow"].tolist() == ["F1"] * 4 + ["F2"] * 4
    assert rs.flows["window_pkts"].tolist() == [2, 3, 4, 4, 1, 1, 2, 2]
    rtt = rs.flows["rtt_ms"]
    assert rtt.dtype == np.float64
    assert np.isnan(rtt[[0, 3, 4, 7]]).all()
    assert rtt[[1, 2, 5, 6]].tolist() == [20.5, 21.5, 30.0, 31.0]

    assert rs.hosts["host"].tolist() == ["S1", "S2"] * len(TIMES)
    assert rs.hosts["recv_rate_mbps"][1] == pytest.approx(0.05)


def test_read_routes(tmp_path: Path) -> None:
    rs = read_results(write_results(tmp_path / "dyn", dynamic=True))
    routes = rs.routes
    assert routes is not None
    assert list(routes) == ["time_s", "router", "destination", "next_hop", "link", "cost_ms"]
    assert routes["router"].dtype.kind == "U" and routes["cost_ms"].dtype == np.float64
    assert routes["time_s"].tolist() == [0, 0, 0, 0, 0.2, 0.3, 0.35, 0.4]
    assert routes["next_hop"].tolist() == ["R2", "S1", "T1", "R1", "R3", "R2", "T1", ""]
    assert routes["link"][-1] == "" and routes["cost_ms"][-1] == math.inf   # unreachable
    assert routes["cost_ms"][:-1].tolist() == [15, 1, 5, 11, 17.5, 15.25, 5.5]
    assert "routes=8 rows" in repr(rs)


def test_read_results_without_routes_csv(results_dir: Path) -> None:
    """Results written before dynamic routing: no routes.csv, no new links.csv columns."""
    (results_dir / "routes.csv").unlink()
    old = [",".join(line.split(",")[:7])
           for line in (results_dir / "links.csv").read_text().splitlines()]
    (results_dir / "links.csv").write_text("\n".join(old) + "\n")
    rs = read_results(results_dir)
    assert rs.routes is None
    assert "failure_drops" not in rs.links and "routing_rate_mbps" not in rs.links
    assert "routes=none" in repr(rs)
    series = _link_series(rs.summary, rs.links, ["L1", "L2"])
    assert all(s.values["failure_drops"].tolist() == [0] * len(TIMES) for s in series)
    paths = make_figures(rs, results_dir)
    assert [p.name for p in paths] == ["links.png", "flows.png", "hosts.png"]


def test_header_only_routes_csv(results_dir: Path) -> None:
    (results_dir / "routes.csv").write_text(STATIC_ROUTES[0] + "\n")
    rs = read_results(results_dir)
    assert rs.routes is not None and len(rs.routes["time_s"]) == 0
    assert not _routes_changed(rs.routes)


def test_new_numeric_columns_are_checked(results_dir: Path) -> None:
    text = (results_dir / "links.csv").read_text().splitlines()
    text[1] = text[1].rsplit(",", 2)[0] + ",x,0.01"
    (results_dir / "links.csv").write_text("\n".join(text) + "\n")
    with pytest.raises(ValueError, match=r"links\.csv, line 2.*failure_drops.*'x'"):
        read_results(results_dir)


def test_read_results_accepts_summary_path_and_str(results_dir: Path) -> None:
    rs = read_results(str(results_dir / "summary.json"))
    assert rs.directory == results_dir


def test_read_results_header_only_csv(results_dir: Path) -> None:
    (results_dir / "hosts.csv").write_text("time_s,host,send_rate_mbps,recv_rate_mbps\n")
    rs = read_results(results_dir)
    assert len(rs.hosts["time_s"]) == 0 and len(rs.hosts["host"]) == 0


def test_select(results_dir: Path) -> None:
    rs = read_results(results_dir)
    rows = select(rs.links, link="L1", direction="R1->R2")
    assert set(rows) == set(rs.links)
    assert rows["time_s"].tolist() == list(TIMES)
    assert rows["buffer_kb"].tolist() == [0, 10, 20, 30, 40]
    assert len(select(rs.links, link="L2")["time_s"]) == 2 * len(TIMES)
    assert len(select(rs.flows, flow="nope")["time_s"]) == 0
    assert select(rs.flows, flow="F2", time_s=0.3)["rtt_ms"].tolist() == [30.0]
    with pytest.raises(KeyError, match="colour"):
        select(rs.flows, colour="red")


@pytest.mark.parametrize("name", ["summary.json", "links.csv", "flows.csv", "hosts.csv"])
def test_missing_file_names_it(results_dir: Path, name: str) -> None:
    (results_dir / name).unlink()
    with pytest.raises(FileNotFoundError, match=name):
        read_results(results_dir)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere"):
        read_results(tmp_path / "nowhere")


def test_malformed_files_give_clear_errors(results_dir: Path) -> None:
    (results_dir / "flows.csv").write_text("time_s,flow,send_rate_mbps\n0.1,F1,1\n")
    with pytest.raises(ValueError, match=r"flows\.csv.*missing column.*recv_rate_mbps"):
        read_results(results_dir)
    (results_dir / "flows.csv").write_text(
        "time_s,flow,send_rate_mbps,recv_rate_mbps,window_pkts,rtt_ms\n0.1,F1,1,x,2,\n")
    with pytest.raises(ValueError, match=r"flows\.csv, line 2.*recv_rate_mbps.*'x'"):
        read_results(results_dir)
    (results_dir / "summary.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"summary\.json.*not valid JSON"):
        read_results(results_dir)


# --- figures -----------------------------------------------------------------------------------


def test_make_figures_writes_three_pngs(results_dir: Path) -> None:
    paths = make_figures(results_dir)
    assert [p.name for p in paths] == ["links.png", "flows.png", "hosts.png"]
    for path in paths:
        assert path.parent == results_dir
        assert _is_png(path)


def test_make_figures_from_result_set_needs_out_dir(results_dir: Path, tmp_path: Path) -> None:
    rs = read_results(results_dir)
    with pytest.raises(ValueError, match="out_dir"):
        make_figures(rs)
    paths = make_figures(rs, tmp_path / "figs" / "new")
    assert all(_is_png(p) and p.parent == tmp_path / "figs" / "new" for p in paths)


def test_make_figures_accepts_duck_typed_results(results_dir: Path, tmp_path: Path) -> None:
    rs = read_results(results_dir)

    class InMemory:       # like the simulator's own results: same attributes, lists allowed
        summary = rs.summary
        links = {k: v.tolist() for k, v in rs.links.items()}
        flows = {k: [None if isinstance(x, float) and math.isnan(x) else x for x in v.tolist()]
                 for k, v in rs.flows.items()}
        hosts = rs.hosts

    paths = make_figures(InMemory(), tmp_path, flows="F1")
    assert len(paths) == 3 and all(_is_png(p) for p in paths)


def test_make_figures_respects_selection(results_dir: Path, tmp_path: Path) -> None:
    paths = make_figures(results_dir, tmp_path, links=[], flows=["F2"], hosts=[])
    assert [p.name for p in paths] == ["flows.png"]
    assert not (tmp_path / "links.png").exists()

    paths = make_figures(results_dir, tmp_path / "b", links=["L2"], flows=[], hosts=["S1"])
    assert [p.name for p in paths] == ["links.png", "hosts.png"]


@pytest.mark.parametrize("kind, ids, known", [("link", "L9", "L1, L2"),
                                              ("flow", "F7", "F1, F2"),
                                              ("host", "H3", "S1, S2")])
def test_unknown_id_raises(results_dir: Path, kind: str, ids: str, known: str) -> None:
    with pytest.raises(ValueError) as info:
        make_figures(results_dir, **{f"{kind}s": ["L1" if kind == "link" else ids, ids]})
    assert str(info.value) == f"unknown {kind} '{ids}'; known: {known}"


def test_link_series_sums_half_duplex_and_splits_full_duplex(results_dir: Path) -> None:
    rs = read_results(results_dir)
    series = _link_series(rs.summary, rs.links, ["L1", "L2"])
    assert [s.label for s in series] == ["L1 R1->R2", "L1 R2->R1", "L2"]

    forward, backward, half = series
    assert forward.time.tolist() == list(TIMES)
    assert forward.values["buffer_kb"].tolist() == [0, 10, 20, 30, 40]
    assert forward.values["drops"].tolist() == [0, 1, 0, 1, 0]
    assert backward.values["rate_mbps"].tolist() == [0.5] * 5

    i = np.arange(len(TIMES))
    assert half.time.tolist() == list(TIMES)
    np.testing.assert_allclose(half.values["rate_mbps"], (6 + i) + (1 + i))
    np.testing.assert_allclose(half.values["buffer_kb"], 2.5 * i + 1.5)
    np.testing.assert_allclose(half.values["buffer_pkts"], 0.5 * i + 1)
    np.testing.assert_allclose(half.values["drops"], 1 + i)


def test_failure_drops_overlay_only_when_nonzero(tmp_path: Path) -> None:
    rs = read_results(write_results(tmp_path / "none"))
    series = _link_series(rs.summary, rs.links, ["L1", "L2"])
    assert _links_figure_spec(series) is LINKS_FIGURE
    assert all(p.overlay is None for p in LINKS_FIGURE.panels)

    rs = read_results(write_results(tmp_path / "fail", failures=True))
    series = _link_series(rs.summary, rs.links, ["L1", "L2"])
    forward, backward, half = series
    assert forward.values["failure_drops"].tolist() == [0, 0, 3, 0, 0]
    assert backward.values["failure_drops"].tolist() == [0] * 5
    assert half.values["failure_drops"].tolist() == [0, 0, 9, 0, 0]   # half duplex: 2*3 + 3
    spec = _links_figure_spec(series)
    drops = [p for p in spec.panels if p.column == "drops"]
    assert len(drops) == 1 and drops[0].overlay == "failure_drops"
    assert [p.column for p in spec.panels] == [p.column for p in LINKS_FIGURE.panels]
    # only the links that are plotted count
    assert _links_figure_spec([backward]) is LINKS_FIGURE


def test_failure_drops_drawn_dashed(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from plot_tool.figures import _draw_figure

    rs = read_results(write_results(tmp_path / "fail", failures=True))
    series = _link_series(rs.summary, rs.links, ["L1", "L2"])
    fig = Figure()
    _draw_figure(fig, _links_figure_spec(series), series, rs.summary)
    drops_ax = fig.axes[1]
    dashed = [line for line in drops_ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == len(series)
    assert [line.get_color() for line in dashed] == [s.color for s in series]
    legend = drops_ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["buffer full", "failure (link down)"]
    # no dashed line anywhere else, and none at all without failure drops
    assert not [ln for ax in (fig.axes[0], fig.axes[2]) for ln in ax.get_lines()
                if ln.get_linestyle() == "--"]
    fig = Figure()
    rs = read_results(write_results(tmp_path / "none"))
    series = _link_series(rs.summary, rs.links, ["L1", "L2"])
    _draw_figure(fig, _links_figure_spec(series), series, rs.summary)
    assert not [ln for ln in fig.axes[1].get_lines() if ln.get_linestyle() == "--"]


def test_route_series_and_changes(tmp_path: Path) -> None:
    rs = read_results(write_results(tmp_path / "dyn", dynamic=True))
    assert _routes_changed(rs.routes)
    series = _route_series(rs.routes, ["R1", "R2"])
    assert [(s.router, s.destination) for s in series] == [("R1", "T1"), ("R1", "S1"),
                                                           ("R2", "T1"), ("R2", "S1")]
    r1_t1, r1_s1, r2_t1, r2_s1 = series
    assert r1_t1.time.tolist() == [0, 0.2, 0.3]
    assert r1_t1.next_hop.tolist() == ["R2", "R3", "R2"]
    assert r1_t1.changes.tolist() == [1, 2]
    assert r1_s1.changes.tolist() == [] and r2_t1.changes.tolist() == []   # cost change only
    assert r2_s1.changes.tolist() == [1] and r2_s1.cost_ms[1] == math.inf
    assert r1_t1.label == "R1 \u2192 T1"

    chosen, omitted = _routes_to_plot(series)
    assert [(s.router, s.destination) for s in chosen] == [("R1", "T1"), ("R2", "S1")]
    assert omitted == 0
    chosen, omitted = _routes_to_plot(series, limit=1)   # the one with the most changes
    assert [(s.router, s.destination) for s in chosen] == [("R1", "T1")] and omitted == 1
    # no next hop changed: fall back to the routes whose cost changed after t=0
    chosen, _ = _routes_to_plot([r1_s1, r2_t1])
    assert chosen == [r2_t1]
    from plot_tool.figures import MAX_COST_ONLY_LINES, RouteSeries
    many = [RouteSeries("R1", f"H{k}", time=np.array([0.0, 5.0]), cost_ms=np.array([10.0, 10 + k]),
                        next_hop=np.array(["R2", "R2"]), link=np.array(["L1", "L1"]))
            for k in range(1, MAX_COST_ONLY_LINES + 3)]
    chosen, omitted = _routes_to_plot(many[::-1])          # the widest cost ranges, given order
    assert [s.destination for s in chosen] == [f"H{k}" for k in range(len(many), 2, -1)]
    assert omitted == 2
    assert [s.router for s in _route_series(rs.routes, ["R2"])] == ["R2", "R2"]
    assert [r1_t1.change_label(i) for i in r1_t1.changes] == ["via R3", "via R2"]
    assert r2_s1.change_label(1) == "no route"


def test_route_change_over_a_parallel_link() -> None:
    from plot_tool.figures import RouteSeries

    route = RouteSeries("R1", "H2", time=np.array([0.0, 5.1, 10.1]),
                        cost_ms=np.array([30.0, 31.0, 32.0]),
                        next_hop=np.array(["R2", "R2", "R2"]), link=np.array(["L1", "L7", "L7"]))
    assert route.changes.tolist() == [1]          # same neighbour, other link
    assert route.change_label(1) == "via R2 (L7)"


def test_routing_png_only_when_routes_changed(tmp_path: Path) -> None:
    static = write_results(tmp_path / "static")
    assert not _routes_changed(read_results(static).routes)
    paths = make_figures(static)
    assert [p.name for p in paths] == ["links.png", "flows.png", "hosts.png"]
    assert not (static / "routing.png").exists()

    dynamic = write_results(tmp_path / "dynamic", dynamic=True, failures=True)
    paths = make_figures(dynamic)
    assert [p.name for p in paths] == ["links.png", "flows.png", "hosts.png", "routing.png"]
    assert _is_png(dynamic / "routing.png")

    # without links of interest the routing figure is only the route panel; no router: none
    paths = make_figures(dynamic, tmp_path / "a", links=[], flows=[], hosts=[])
    assert [p.name for p in paths] == ["routing.png"]
    assert make_figures(dynamic, tmp_path / "b", links=[], flows=[], hosts=[], routers=[]) == []
    with pytest.raises(ValueError, match="unknown router 'R9'; known: R1, R2"):
        make_figures(dynamic, tmp_path / "c", routers=["R9"])


def test_routing_figure_panels(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from plot_tool.figures import _draw_routing_figure

    rs = read_results(write_results(tmp_path / "dyn", dynamic=True))
    links = _link_series(rs.summary, rs.links, ["L1"])
    chosen, omitted = _routes_to_plot(_route_series(rs.routes, ["R1", "R2"]))
    fig = Figure()
    _draw_routing_figure(fig, links, chosen, omitted, rs.summary)
    top, bottom = fig.axes
    assert top.get_ylabel() == "transmitted rate (Mbps)"
    assert bottom.get_ylabel() == "route cost (ms)"
    legend = [t.get_text() for t in bottom.get_legend().get_texts()]
    assert legend == ["R1 \u2192 T1", "R2 \u2192 S1"]
    labels = sorted(t.get_text() for t in bottom.texts)
    assert labels == ["no route", "via R2", "via R3"]
    # route colours differ from the link colours of the rate panel
    assert not {s.color for s in chosen} & {s.color for s in links}


def test_in_memory_routes_with_inf_and_lists(results_dir: Path, tmp_path: Path) -> None:
    rs = read_results(write_results(tmp_path / "dyn", dynamic=True))

    class InMemory:       # the simulator's Results: routes as arrays with inf, or lists
        summary = rs.summary
        links, flows, hosts = rs.links, rs.flows, rs.hosts
        routes = {k: v.tolist() for k, v in rs.routes.items()}

    paths = make_figures(InMemory(), tmp_path / "mem")
    assert paths[-1].name == "routing.png"


def test_binary_units_in_axis_labels(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from plot_tool.figures import LINKS_FIGURE, _draw_figure

    rs = read_results(write_results(tmp_path / "bin", units="binary"))
    fig = Figure()
    _draw_figure(fig, LINKS_FIGURE, _link_series(rs.summary, rs.links, ["L1"]), rs.summary)
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels[0] == "buffer occupancy (KB, binary)"
    assert labels[2] == "transmitted rate (Mbps, binary)"
    assert fig.get_suptitle() == "synthetic_case"


def test_show_uses_pyplot_after_saving(results_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(plt, "show", lambda *a, **k: shown.append(len(plt.get_fignums())))
    try:
        paths = make_figures(results_dir, show=True)
    finally:
        plt.close("all")
    assert len(paths) == 3 and shown == [3]


def test_show_includes_routing_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = []
    monkeypatch.setattr(plt, "show", lambda *a, **k: shown.append(len(plt.get_fignums())))
    try:
        paths = make_figures(write_results(tmp_path / "dyn", dynamic=True), show=True)
    finally:
        plt.close("all")
    assert len(paths) == 4 and shown == [4]


def test_plot_tool_imports_no_simulator_package() -> None:
    code = ("import sys, plot_tool, plot_tool.figures, plot_tool.results; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'simulator', 'components', 'flows', 'routing', 'topologies'}))")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
