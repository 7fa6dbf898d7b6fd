"""Tests of plot_tool on a small synthetic results directory in the format of docs/outputs.md."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from plot_tool import ResultSet, make_figures, read_results, select
from plot_tool.entity_series import link_series_of, links_figure_spec, prediction_series
from plot_tool.png.panels import BAND_SHADE, LOSS_HEADER
from plot_tool.routes_data import route_series, routes_changed, routes_to_plot
from plot_tool.run_data import plan_figures
from plot_tool.series import (
    BACKLOG_PANEL,
    BUFFER_LOSS,
    BUFFER_PANEL,
    FAILURE_LOSS,
    LINKS_FIGURE,
    PREDICTION_BAND_LABEL,
    PREDICTION_LABEL,
)

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


# predictions.csv of a run with --check: F1 and both links have values, F2 (Vegas-like) has
# [low, high] intervals, L1 R1->R2 has a gap between 0.2 and 0.3, and the half-duplex L2 has one
# prediction for both directions, a value then an interval.
PREDICTIONS = ["start_s,end_s,kind,id,direction,quantity,low,high",
               "0,0.2,flow,F1,,rate_mbps,2,2",
               "0,0.2,flow,F1,,queue_delay_ms,1,1",
               "0,0.2,flow,F1,,rtt_ms,20,20",
               "0.2,0.35,flow,F1,,rate_mbps,2.5,2.5",
               "0.2,0.35,flow,F1,,queue_delay_ms,2,2",
               "0.2,0.35,flow,F1,,rtt_ms,21,21",
               "0.1,0.45,flow,F2,,rate_mbps,0.8,1.2",
               "0.1,0.45,flow,F2,,queue_delay_ms,8,12",
               "0.1,0.45,flow,F2,,rtt_ms,28,32",
               "0,0.2,link,L1,R1->R2,backlog_kb,15,15",
               "0,0.2,link,L1,R2->R1,backlog_kb,0,0",
               "0.3,0.45,link,L1,R1->R2,backlog_kb,25,25",
               "0,0.2,link,L2,R2->T1+T1->R2,backlog_kb,4,4",
               "0.2,0.45,link,L2,R2->T1+T1->R2,backlog_kb,3,6"]

CHECK = {
    "settle_s": 0.1, "tolerance_pct": 5.0,
    "intervals": [{"start_s": 0.1, "end_s": 0.35, "compared_from_s": 0.2,
                   "compared_until_s": 0.33, "flows": ["F1", "F2"],
                   "rows": [{"kind": "flow", "id": "F1", "quantity": "rate_mbps",
                             "predicted": 2.5, "simulated": 2.4, "error_pct": 4.0},
                            {"kind": "flow", "id": "F2", "quantity": "queue_delay_ms",
                             "predicted": [8.0, 12.0], "simulated": None, "error_pct": None},
                            {"kind": "link", "id": "L1+L2", "quantity": "backlog_kb",
                             "predicted": [0.0, 1.0], "simulated": 0.5, "error_pct": 0.0}]}],
    "completion": [{"kind": "flow", "id": "F1", "quantity": "finish_s", "predicted": 0.34,
                    "simulated": 0.35, "error_pct": 2.94}],
    "unmatched": [],
    "max_error_pct": 4.0,
    "passed": True,
}


def write_results(out_dir: Path, units: str = "si", *, dynamic: bool = False,
                  failures: bool = False, check: bool = False) -> Path:
    """Write a complete synthetic results directory (summary.json + the 4 CSVs) into out_dir.

    `dynamic`: routes.csv also has entries after t=0; `failures`: links.csv has failure drops;
    `check`: also predictions.csv and check.json, as a run with --check writes them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(_summary(units), indent=2))

    lines = ["time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,backlog_kb,drops,"
             "failure_drops,routing_rate_mbps"]
    for i, t in enumerate(TIMES):
        lost = [0, 0, 3, 0, 0][i] if failures else 0
        lines.append(f"{t},L1,R1->R2,{8 + i},{10 * i},{i},{10 * i + 0.5},{i % 2},{lost},0.01")
        lines.append(f"{t},L1,R2->R1,0.5,0,0,0.1,0,0,0.01")
        lines.append(f"{t},L2,R2->T1,{6 + i},{2.5 * i},{0.5 * i},{2.5 * i + 0.5},1,{2 * lost},0")
        lines.append(f"{t},L2,T1->R2,{1 + i},1.5,1,2,{i},{lost},0")
    (out_dir / "links.csv").write_text("\n".join(lines) + "\n")

    if check:
        (out_dir / "predictions.csv").write_text("\n".join(PREDICTIONS) + "\n")
        (out_dir / "check.json").write_text(json.dumps(CHECK, indent=2))

    routes = STATIC_ROUTES + (DYNAMIC_ROUTES if dynamic else [])
    (out_dir / "routes.csv").write_text("\n".join(routes) + "\n")

    # arrival_rate_mbps (data reaching the receiver, in order or not) differs from the goodput
    # recv_rate_mbps where a gap holds data back (F1 at 0.1 s) and releases it (F1 at 0.4 s)
    flows = ["time_s,flow,send_rate_mbps,recv_rate_mbps,arrival_rate_mbps,window_pkts,rtt_ms",
             "0.1,F1,2.5,0,0.5,2,",            # no RTT sample in the first interval
             "0.2,F1,3,2.0,2.0,3,20.5",
             "0.3,F1,3,2.5,2.5,4,21.5",
             "0.4,F1,1,2.0,1.5,4,",
             "0.2,F2,1,0.5,0.5,1,",
             "0.3,F2,1,1,1,1,30",
             "0.4,F2,1,1,1,2,31",
             "0.45,F2,1,1,1,2,"]
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


@pytest.fixture
def checked_dir(tmp_path: Path) -> Path:
    """Results of a run with --check: predictions.csv and check.json too."""
    return write_results(tmp_path / "checked", check=True)


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
                             "buffer_pkts", "backlog_kb", "drops", "failure_drops",
                             "routing_rate_mbps"}
    assert rs.links["failure_drops"].dtype == np.float64
    assert rs.links["backlog_kb"][:4].tolist() == [0.5, 0.1, 0.5, 2.0]
    assert rs.predictions is None and rs.check is None      # a run without --check
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
    _drop_link_columns(results_dir, "backlog_kb", "failure_drops", "routing_rate_mbps")
    rs = read_results(results_dir)
    assert rs.routes is None
    assert "failure_drops" not in rs.links and "routing_rate_mbps" not in rs.links
    assert "backlog_kb" not in rs.links
    assert "routes=none" in repr(rs)
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
    assert all(s.values["failure_drops"].tolist() == [0] * len(TIMES) for s in series)
    paths = make_figures(rs, results_dir)
    assert [p.name for p in paths] == ["links.png", "flows.png", "hosts.png"]


def _drop_link_columns(results_dir: Path, *names: str) -> None:
    """Rewrite links.csv without the named columns (as older results wrote it)."""
    rows = [line.split(",") for line in (results_dir / "links.csv").read_text().splitlines()]
    keep = [i for i, name in enumerate(rows[0]) if name not in names]
    (results_dir / "links.csv").write_text("\n".join(",".join(row[i] for i in keep)
                                                      for row in rows) + "\n")


def test_header_only_routes_csv(results_dir: Path) -> None:
    (results_dir / "routes.csv").write_text(STATIC_ROUTES[0] + "\n")
    rs = read_results(results_dir)
    assert rs.routes is not None and len(rs.routes["time_s"]) == 0
    assert not routes_changed(rs.routes)


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


def test_a_row_the_csv_module_cannot_read_is_named_by_its_line(results_dir: Path) -> None:
    with open(results_dir / "links.csv", "a") as f:                 # a field past csv's limit
        f.write("0.1,L1," + "x" * 200_000 + "\n")
    lines = (results_dir / "links.csv").read_text().count("\n")
    with pytest.raises(ValueError, match=rf"links\.csv, line {lines}: not a CSV row: field "
                                         rf"larger than field limit"):
        read_results(results_dir)


@pytest.mark.parametrize("content, message", [
    ("x" * 131073 + "\n", r"links\.csv, line 1: not a CSV header row: field larger than field"),
    ("\0" * 200_000 + "\n", r"links\.csv, line 1: not a CSV header row"),
])
def test_a_header_the_csv_module_cannot_read_is_one_error(results_dir: Path, content: str,
                                                          message: str) -> None:
    """Before: csv.Error escaped as a traceback (found by fuzzing)."""
    (results_dir / "links.csv").write_text(content)
    with pytest.raises(ValueError, match=message):
        read_results(results_dir)


def test_bytes_that_are_not_utf8_are_one_error(results_dir: Path) -> None:
    text = (results_dir / "links.csv").read_bytes()
    (results_dir / "links.csv").write_bytes(text + b"0.1,L1,\xff\xfe,1,1,1,0\n")
    with pytest.raises(ValueError, match=r"links\.csv: not UTF-8 text"):
        read_results(results_dir)


def test_tables_are_read_in_chunks_as_one(results_dir: Path, monkeypatch) -> None:
    """`_read_table` turns a few rows at a time into numpy columns (its memory is the columns,
    not a list of every row): the same table, a bad value named by its line in any chunk, an
    extra column numbers if every chunk's are, text if one is not, blank lines skipped."""
    import plot_tool.results as results_module
    header = "time_s,flow,send_rate_mbps,recv_rate_mbps,window_pkts,rtt_ms,state,note"
    lines = [f"{i / 10},F{i % 3},{i},{2 * i},{i % 7},,{i / 4},{'x' if i == 9 else i}"
             for i in range(11)]
    (results_dir / "flows.csv").write_text("\n".join([header, *lines[:5], "", *lines[5:]]) + "\n")
    whole = read_results(results_dir).flows
    monkeypatch.setattr(results_module, "READ_CHUNK_ROWS", 3)
    chunked = read_results(results_dir).flows
    assert list(chunked) == list(whole)
    for name in whole:
        assert np.array_equal(chunked[name], whole[name], equal_nan=name not in ("flow", "note"))
    assert chunked["state"].dtype == np.float64 and chunked["note"].dtype.kind == "U"
    assert chunked["note"].tolist()[8:10] == ["8", "x"]
    lines[8] = lines[8].replace(",8,16,", ",8,bad,")
    (results_dir / "flows.csv").write_text("\n".join([header, *lines]) + "\n")
    with pytest.raises(ValueError, match=r"flows\.csv, line 10: column 'recv_rate_mbps': "
                                         r"not a number: 'bad'"):
        read_results(results_dir)


def test_entity_rows_are_in_time_order_file_order_for_equal_times() -> None:
    """`RowIndex` (sorted once, searched per entity) selects what a scan per entity selected:
    each flow's rows by time, rows of one time in file order."""
    from plot_tool.entity_series import flow_series_of
    flows = np.array(["F2", "F1", "F2", "F1", "F10", "F2", "F1"])
    time = np.array([0.2, 0.1, 0.1, 0.2, 0.1, 0.1, 0.1])
    table = {"time_s": time, "flow": flows, **{c: np.arange(7.0) for c in
             ("send_rate_mbps", "recv_rate_mbps", "window_pkts", "rtt_ms")}}
    series = {s.key: s for s in flow_series_of(table, ["F1", "F2", "F10", "F3"])}
    assert series["F1"].time.tolist() == [0.1, 0.1, 0.2]
    assert series["F1"].values["send_rate_mbps"].tolist() == [1.0, 6.0, 3.0]
    assert series["F2"].values["send_rate_mbps"].tolist() == [2.0, 5.0, 0.0]
    assert series["F10"].values["send_rate_mbps"].tolist() == [4.0]
    assert len(series["F3"].time) == 0


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
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
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


def test_failure_drops_drawn_only_when_nonzero(tmp_path: Path) -> None:
    rs = read_results(write_results(tmp_path / "none"))
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
    assert links_figure_spec(series).panels[1].losses == (BUFFER_LOSS,)
    assert links_figure_spec(series[:2]) is LINKS_FIGURE          # full duplex, buffer drops
    assert LINKS_FIGURE.panels[1].losses == (BUFFER_LOSS,)

    rs = read_results(write_results(tmp_path / "fail", failures=True))
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
    forward, backward, half = series
    assert forward.values["failure_drops"].tolist() == [0, 0, 3, 0, 0]
    assert backward.values["failure_drops"].tolist() == [0] * 5
    assert half.values["failure_drops"].tolist() == [0, 0, 9, 0, 0]   # half duplex: 2*3 + 3
    spec = links_figure_spec(series)
    drops = [p for p in spec.panels if p.losses is not None]
    assert len(drops) == 1 and drops[0].losses == (BUFFER_LOSS, FAILURE_LOSS)
    assert [p.column for p in spec.panels] == [p.column for p in LINKS_FIGURE.panels]
    # only the links that are plotted count: L1 R2->R1 lost nothing
    assert links_figure_spec([backward]).panels[1].losses == ()


def test_a_links_down_spans_are_shaded_in_its_colour(tmp_path: Path) -> None:
    """summary.json's ``down_s`` of each plotted link, shaded over every panel in its line's
    colour, with a legend entry before the losses' section: a link's rate fell to 0 with only
    "link down: 1" in the legend to say why (acceptance test Z7)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    from plot_tool.link_changes import link_changes
    from plot_tool.png.panels import draw_figure

    rs = read_results(write_results(tmp_path / "fail", failures=True))
    rs.summary["links"]["L1"]["down_s"] = [[0.1, 0.25], [0.3, 0.35]]
    rs.summary["links"]["L2"]["down_s"] = []
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
    fig = Figure()
    draw_figure(fig, links_figure_spec(series), series, rs.summary,
                link_changes=link_changes(rs.summary, series))
    for ax in fig.axes:
        spans = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_alpha() == 0.12]
        assert sorted((round(p.get_x(), 9), round(p.get_x() + p.get_width(), 9))
                      for p in spans) == [(0.1, 0.25), (0.3, 0.35)]
        assert {p.get_facecolor()[:3] for p in spans} == {
            __import__("matplotlib.colors").colors.to_rgb(series[0].color)}
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[3:5] == ["L1 down: 0.1\u20130.25 s, 0.3\u20130.35 s (shaded)", LOSS_HEADER]
    # no span, no entry
    rs.summary["links"]["L1"]["down_s"] = []
    fig = Figure()
    draw_figure(fig, links_figure_spec(series), series, rs.summary,
                link_changes=link_changes(rs.summary, series))
    assert not any("down:" in t.get_text() and "shaded" in t.get_text()
                   for t in fig.legends[0].get_texts())


def test_failure_drops_drawn_dashed(tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from plot_tool.png.panels import draw_figure

    rs = read_results(write_results(tmp_path / "fail", failures=True))
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
    fig = Figure()
    draw_figure(fig, links_figure_spec(series), series, rs.summary)
    drops_ax = fig.axes[1]
    dashed = [line for line in drops_ax.get_lines() if line.get_linestyle() == "--"]
    assert len(dashed) == len(series)
    assert [line.get_color() for line in dashed] == [s.color for s in series]
    # the steps: each value held over its interval (a point at the start of the first one)
    assert dashed[2].get_drawstyle() == "steps-pre"
    assert dashed[2].get_ydata().tolist() == [0, 0, 0, 9, 0, 0]
    assert dashed[2].get_xdata().tolist() == pytest.approx([0.0, *TIMES])
    solid = [line for line in drops_ax.get_lines() if line.get_linestyle() == "-"]
    assert len(solid) == len(series)                       # buffer full, for every line
    # the figure legend names each cause with its total over the plotted lines
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["L1 R1->R2", "L1 R2->R1", "L2", LOSS_HEADER, "buffer full: 17",
                      "link down: 12"]
    assert drops_ax.get_legend() is None
    # no dashed line anywhere else, and none at all without failure drops
    assert not [ln for ax in (fig.axes[0], fig.axes[2]) for ln in ax.get_lines()
                if ln.get_linestyle() == "--"]
    fig = Figure()
    rs = read_results(write_results(tmp_path / "none"))
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
    draw_figure(fig, links_figure_spec(series), series, rs.summary)
    assert not [ln for ln in fig.axes[1].get_lines() if ln.get_linestyle() == "--"]


def test_routes_unreachable_together_compare_without_warnings() -> None:
    """Two routes both unreachable (cost inf) over the same spell: equal there, and no numpy
    RuntimeWarning from inf - inf (it reached stderr even under --quiet)."""
    import warnings

    from plot_tool.routes_data import RouteSeries, route_linewidths, routes_to_plot
    inf = math.inf
    a, b = (RouteSeries("R1", dest, time=np.array([0.0, 1.0, 2.5]),
                        cost_ms=np.array([3.0, inf, 3.0]), next_hop=np.array(["R2", "", "R2"]),
                        link=np.array(["L1", "", "L1"])) for dest in ("H1", "H2"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen, _ = routes_to_plot([a, b], end_s=4.0)
        route_linewidths(chosen, 4.0)
    assert len(chosen) == 1 and chosen[0].also                 # one line, drawn for both


def test_route_series_and_changes(tmp_path: Path) -> None:
    rs = read_results(write_results(tmp_path / "dyn", dynamic=True))
    assert routes_changed(rs.routes)
    series = route_series(rs.routes, ["R1", "R2"])
    assert [(s.router, s.destination) for s in series] == [("R1", "T1"), ("R1", "S1"),
                                                           ("R2", "T1"), ("R2", "S1")]
    r1_t1, r1_s1, r2_t1, r2_s1 = series
    assert r1_t1.time.tolist() == [0, 0.2, 0.3]
    assert r1_t1.next_hop.tolist() == ["R2", "R3", "R2"]
    assert r1_t1.changes.tolist() == [1, 2]
    assert r1_s1.changes.tolist() == [] and r2_t1.changes.tolist() == []   # cost change only
    assert r2_s1.changes.tolist() == [1] and r2_s1.cost_ms[1] == math.inf
    assert r1_t1.label == "R1 \u2192 T1"

    chosen, omitted = routes_to_plot(series)
    assert [(s.router, s.destination) for s in chosen] == [("R1", "T1"), ("R2", "S1")]
    assert omitted == 0
    chosen, omitted = routes_to_plot(series, limit=1)   # the one with the most changes
    assert [(s.router, s.destination) for s in chosen] == [("R1", "T1")] and omitted == 1
    # no next hop changed: fall back to the routes whose cost changed after t=0
    chosen, _ = routes_to_plot([r1_s1, r2_t1])
    assert chosen == [r2_t1]
    from plot_tool.routes_data import MAX_COST_ONLY_LINES, RouteSeries
    many = [RouteSeries("R1", f"H{k}", time=np.array([0.0, 5.0]), cost_ms=np.array([10.0, 10 + k]),
                        next_hop=np.array(["R2", "R2"]), link=np.array(["L1", "L1"]))
            for k in range(1, MAX_COST_ONLY_LINES + 3)]
    chosen, omitted = routes_to_plot(many[::-1])          # the widest cost ranges, given order
    assert [s.destination for s in chosen] == [f"H{k}" for k in range(len(many), 2, -1)]
    assert omitted == 2
    assert [s.router for s in route_series(rs.routes, ["R2"])] == ["R2", "R2"]
    assert [r1_t1.change_label(i) for i in r1_t1.changes] == ["via R3", "via R2"]
    assert r2_s1.change_label(1) == "no route"


def test_route_change_over_a_parallel_link() -> None:
    from plot_tool.routes_data import RouteSeries

    route = RouteSeries("R1", "H2", time=np.array([0.0, 5.1, 10.1]),
                        cost_ms=np.array([30.0, 31.0, 32.0]),
                        next_hop=np.array(["R2", "R2", "R2"]), link=np.array(["L1", "L7", "L7"]))
    assert route.changes.tolist() == [1]          # same neighbour, other link
    assert route.change_label(1) == "via R2 (L7)"


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_routing_png_only_when_routes_changed(tmp_path: Path) -> None:
    static = write_results(tmp_path / "static")
    assert not routes_changed(read_results(static).routes)
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

    from plot_tool.png.routing import draw_routing_figure

    rs = read_results(write_results(tmp_path / "dyn", dynamic=True))
    links = link_series_of(rs.summary, rs.links, ["L1"])
    chosen, omitted = routes_to_plot(route_series(rs.routes, ["R1", "R2"]))
    fig = Figure()
    draw_routing_figure(fig, links, chosen, omitted, rs.summary)
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

    from plot_tool.png.panels import draw_figure
    from plot_tool.series import LINKS_FIGURE

    rs = read_results(write_results(tmp_path / "bin", units="binary"))
    fig = Figure()
    draw_figure(fig, LINKS_FIGURE, link_series_of(rs.summary, rs.links, ["L1"]), rs.summary)
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
    """Every module of plot_tool, imported (the sequence plot included): nothing of the simulator
    nor of the application (netsim) is loaded."""
    code = ("import importlib, pkgutil, sys, plot_tool\n"
            "for m in pkgutil.walk_packages(plot_tool.__path__, 'plot_tool.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'simulator', 'components', 'flows', 'routing', 'topologies', 'netsim'}))")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


# --- analytic predictions (--check): predictions.csv, check.json, dashed overlay ----------------


def test_read_predictions_and_check(checked_dir: Path) -> None:
    rs = read_results(checked_dir)
    table = rs.predictions
    assert table is not None
    assert list(table) == ["start_s", "end_s", "kind", "id", "direction", "quantity", "low", "high"]
    assert len(table["start_s"]) == len(PREDICTIONS) - 1
    for column in ("kind", "id", "direction", "quantity"):
        assert table[column].dtype.kind == "U"
    for column in ("start_s", "end_s", "low", "high"):
        assert table[column].dtype == np.float64
    assert table["direction"][0] == "" and table["direction"][-1] == "R2->T1+T1->R2"
    assert table["low"][6] == pytest.approx(0.8) and table["high"][6] == pytest.approx(1.2)
    assert rs.check == CHECK
    assert "predictions=14 rows" in repr(rs) and "check=yes" in repr(rs)


def test_malformed_check_files(checked_dir: Path) -> None:
    (checked_dir / "check.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"check\.json.*JSON object"):
        read_results(checked_dir)
    (checked_dir / "check.json").write_text("{oops")
    with pytest.raises(ValueError, match=r"check\.json.*not valid JSON"):
        read_results(checked_dir)
    (checked_dir / "check.json").unlink()
    os.mkfifo(checked_dir / "check.json")           # (read, a pipe would block for ever)
    with pytest.raises(ValueError, match=r"check\.json: not a regular file"):
        read_results(checked_dir)
    (checked_dir / "check.json").unlink()
    (checked_dir / "check.json").symlink_to("/dev/zero")             # (or never end)
    with pytest.raises(ValueError, match=r"check\.json: not a regular file"):
        read_results(checked_dir)
    (checked_dir / "check.json").unlink()
    with open(checked_dir / "check.json", "wb") as f:               # sparse: no disk used
        f.truncate((1 << 30) + 1)
    with pytest.raises(ValueError, match=r"check\.json: 1073741825 bytes, more than any results "
                                         r"file netsim writes"):
        read_results(checked_dir)
    (checked_dir / "check.json").unlink()
    (checked_dir / "predictions.csv").write_text("start_s,end_s,kind,id,quantity,low,high\n")
    with pytest.raises(ValueError, match=r"predictions\.csv.*missing column.*direction"):
        read_results(checked_dir)


def test_link_predictions_matched_to_lines(checked_dir: Path) -> None:
    rs = read_results(checked_dir)
    series = link_series_of(rs.summary, rs.links, ["L1", "L2"])
    forward, backward, half = series
    # the half-duplex line sums its directions' backlog, the quantity the model predicts
    i = np.arange(len(TIMES))
    np.testing.assert_allclose(half.values["backlog_kb"], (2.5 * i + 0.5) + 2.0)
    np.testing.assert_allclose(forward.values["backlog_kb"], 10 * i + 0.5)

    preds = prediction_series(rs.predictions, series, "link", ("backlog_kb",))
    assert [p.key for p in preds] == ["L1 R1->R2", "L1 R2->R1", "L2"]
    assert all(p.quantity == "backlog_kb" for p in preds)
    p_forward, p_backward, p_half = preds
    # full duplex: each direction's own prediction
    assert p_forward.start.tolist() == [0, 0.3] and p_forward.low.tolist() == [15, 25]
    assert p_backward.low.tolist() == [0] and p_backward.high.tolist() == [0]
    # half duplex: the "R2->T1+T1->R2" prediction goes to the summed line "L2"
    assert p_half.start.tolist() == [0, 0.2] and p_half.end.tolist() == [0.2, 0.45]
    assert p_half.low.tolist() == [4, 3] and p_half.high.tolist() == [4, 6]
    assert p_half.is_band.tolist() == [False, True]
    # steps: two points per interval, a NaN point where intervals do not touch
    x, low, high, band = p_forward.steps()
    assert x.tolist() == [0, 0.2, 0.2, 0.3, 0.45]
    assert np.isnan(low[2]) and low[[0, 1, 3, 4]].tolist() == [15, 15, 25, 25]
    assert not band.any()
    x, low, high, band = p_half.steps()
    assert x.tolist() == [0, 0.2, 0.2, 0.45] and band.tolist() == [False, False, True, True]


def test_prediction_direction_matching() -> None:
    from plot_tool.series import Series

    t = np.array([0.1])
    lines = [Series("L1 A->B", "L1 A->B", t, {}, entity="L1", directions=("A->B",)),
             Series("L1 B->A", "L1 B->A", t, {}, entity="L1", directions=("B->A",)),
             Series("L2", "L2", t, {}, entity="L2", directions=("C->D", "D->C"))]
    table = {"start_s": np.array([0.0, 0.0, 0.0, 0.0, 0.0]),
             "end_s": np.array([1.0, 1.0, 1.0, 1.0, 1.0]),
             "kind": np.array(["link"] * 5), "quantity": np.array(["backlog_kb"] * 5),
             "id": np.array(["L1", "L2", "L2", "L9", "L1"]),
             # L1: a whole-link label fits neither direction's line; L2: per-direction
             # predictions of a half-duplex link add up on its summed line; L9 is not plotted
             "direction": np.array(["A->B+B->A", "C->D", "D->C", "X->Y", "B->A"]),
             "low": np.array([9.0, 1.0, 2.0, 5.0, 7.0]),
             "high": np.array([9.0, 1.0, 2.0, 5.0, 7.0])}
    preds = prediction_series(table, lines, "link", ("backlog_kb",))
    assert [(p.key, p.low.tolist()) for p in preds] == [("L1 B->A", [7.0]), ("L2", [3.0])]
    assert prediction_series(table, lines, "flow", ("backlog_kb",)) == []


def test_flow_predictions_and_vegas_band(checked_dir: Path) -> None:
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure

    from plot_tool.png.panels import draw_figure
    from plot_tool.series import FLOWS_FIGURE

    rs = read_results(checked_dir)
    links_job, flows_job, hosts_job = plan_figures(rs)
    assert flows_job.spec is FLOWS_FIGURE and hosts_job.predictions == []
    preds = {(p.key, p.quantity): p for p in flows_job.predictions}
    assert sorted(preds) == [("F1", "rate_mbps"), ("F1", "rtt_ms"),
                             ("F2", "rate_mbps"), ("F2", "rtt_ms")]   # not queue_delay_ms
    assert preds["F1", "rate_mbps"].low.tolist() == [2, 2.5]
    assert not preds["F1", "rtt_ms"].is_band.any()
    assert preds["F2", "rtt_ms"].is_band.all()                 # Vegas: an interval
    assert (preds["F2", "rate_mbps"].low.tolist(), preds["F2", "rate_mbps"].high.tolist()) == \
        ([0.8], [1.2])

    fig = Figure()
    draw_figure(fig, FLOWS_FIGURE, flows_job.series, rs.summary, flows_job.predictions)
    colors = {s.key: s.color for s in flows_job.series}
    send, recv, window, rtt = fig.axes
    for ax, quantity in ((recv, "rate_mbps"), (rtt, "rtt_ms")):
        dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert [ln.get_color() for ln in dashed] == [colors["F1"]]     # F1: a dashed step line
        bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
        assert len(bands) == 1                                        # F2: a band shaded grey
        np.testing.assert_allclose(bands[0].get_facecolor()[0], BAND_SHADE, atol=1e-6)
        edges = sorted(np.nanmax(ln.get_ydata()) for ln in ax.get_lines()
                       if ln.get_color() == colors["F2"] and ln.get_linestyle() == "-"
                       and np.isnan(ln.get_ydata()).sum() < len(ln.get_ydata())
                       and ln.get_zorder() == 1.6)
        assert edges == pytest.approx([preds["F2", quantity].low[0],   # its edges, in its colour
                                       preds["F2", quantity].high[0]])
    for ax in (send, window):
        assert not [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert not _bands(ax)
    dashed = [ln for ln in recv.get_lines() if ln.get_linestyle() == "--"][0]
    y = dashed.get_ydata()
    assert dashed.get_xdata().tolist() == [0, 0.2, 0.2, 0.35] and y.tolist() == [2, 2, 2.5, 2.5]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["F1", "F2", PREDICTION_LABEL, PREDICTION_BAND_LABEL]


def _bands(ax) -> list:
    """The shaded bands (fill_between) of a panel; its other collections are grid lines."""
    from matplotlib.collections import PolyCollection

    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def test_links_backlog_panel_with_predictions(checked_dir: Path) -> None:
    from matplotlib.figure import Figure

    from plot_tool.png.panels import draw_figure

    rs = read_results(checked_dir)
    links_job = plan_figures(rs, flows=[], hosts=[])[0]
    assert links_job.filename == "links.png"
    assert links_job.spec.panels[0] is BACKLOG_PANEL
    assert [p.column for p in links_job.spec.panels] == ["backlog_kb", "drops", "rate_mbps"]
    assert [p.key for p in links_job.predictions] == ["L1 R1->R2", "L1 R2->R1", "L2"]

    fig = Figure()
    draw_figure(fig, links_job.spec, links_job.series, rs.summary, links_job.predictions)
    ax = fig.axes[0]
    assert ax.get_ylabel() == "backlog (KB)"
    solid = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
    half = links_job.series[2]
    # steps: a first point at the start of the first interval, then one per sample
    np.testing.assert_allclose(solid[2].get_ydata()[1:], half.values["backlog_kb"])
    assert solid[2].get_ydata()[0] == half.values["backlog_kb"][0]
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert [ln.get_color() for ln in dashed] == [s.color for s in links_job.series]
    assert len(_bands(ax)) == 1              # L2's interval from 0.2 s
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[-2:] == [PREDICTION_LABEL, PREDICTION_BAND_LABEL]
    assert not [ln for a in fig.axes[1:] for ln in a.get_lines() if ln.get_linestyle() == "--"]

    # the same with failure drops: both replacements apply
    rs = read_results(write_results(checked_dir.parent / "both", failures=True, check=True))
    spec = plan_figures(rs, flows=[], hosts=[])[0].spec
    assert [p.column for p in spec.panels] == ["backlog_kb", "drops", "rate_mbps"]
    assert spec.panels[1].losses == (BUFFER_LOSS, FAILURE_LOSS)


def test_tied_links_say_their_sum_is_predicted_on_the_first(checked_dir: Path) -> None:
    """check.json compares tied links as one group ("L1+L2"), and predictions.csv puts the sum
    on the first: the legend says so, with when (test case 2's L1 looked 10 % off where the
    check found 0.5 %: acceptance test Z7)."""
    from matplotlib.figure import Figure

    from plot_tool import png
    from plot_tool.run_data import tied_link_notes

    rs = read_results(checked_dir)
    links_job = plan_figures(rs, flows=[], hosts=[])[0]
    note = "L1+L2 (0.1\u20130.35 s): tied links,\ntheir sum predicted, dashed on L1"
    assert list(links_job.notes) == [note]
    fig = Figure()
    png.draw(fig, links_job)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[-3:] == [PREDICTION_LABEL, PREDICTION_BAND_LABEL, note]
    # a group compared in two intervals that meet is one span; apart, two
    check = {"intervals": [
        {"start_s": s, "end_s": e, "rows": [{"kind": "link", "id": "L1+L2+L3"}]}
        for s, e in ((0.5, 10.0), (10.0, 20.0), (30.0, 40.0))]}
    assert tied_link_notes(check) == [
        "L1+L2+L3 (0.5\u201320 s, 30\u201340 s): tied links,\ntheir sum predicted, dashed on L1"]
    assert tied_link_notes(None) == [] and tied_link_notes({"intervals": []}) == []
    # without predictions drawn (predictions=False), no note
    assert not plan_figures(rs, flows=[], hosts=[], predictions=False)[0].notes


def test_the_flow_figure_names_the_models_of_its_predictions(checked_dir: Path) -> None:
    """The dashed line was "analytic prediction" whatever the model; the legend now names the
    models of the compared flow rows (check.json's "model"; the fluid equilibrium has none):
    lossy_link's 4.52 Mb/s line is Padhye's, not the Mathis figure of its description
    (acceptance test Z7)."""
    from matplotlib.figure import Figure

    from plot_tool import png
    from plot_tool.run_data import model_notes

    rs = read_results(checked_dir)
    flows_job = [j for j in plan_figures(rs, links=[], hosts=[]) if j.filename == "flows.png"][0]
    assert list(flows_job.notes) == ["model: the fluid equilibrium\n(FAST, Vegas)"]
    fig = Figure()
    png.draw(fig, flows_job)
    assert [t.get_text() for t in fig.legends[0].get_texts()][-1] == flows_job.notes[0]
    rows = [{"kind": "flow", "model": m, "predicted": p}
            for m, p in (("padhye", 4.5), ("rfc9438", 3.0), ("padhye", 1.0), ("bbr", None))]
    assert model_notes({"intervals": [{"rows": rows}]}) == [
        "model: Padhye et al. 1998\n(Reno's response);\nRFC 9438 \u00a75.1 (CUBIC)"]
    assert model_notes(None) == [] and model_notes({"intervals": [{"rows": rows[3:]}]}) == []


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_predictions_false_suppresses_overlay(checked_dir: Path, tmp_path: Path) -> None:
    from matplotlib.figure import Figure

    from plot_tool.png.panels import draw_figure

    rs = read_results(checked_dir)
    jobs = plan_figures(rs, predictions=False)
    assert all(job.predictions == [] for job in jobs)
    assert jobs[0].spec.panels[0] is BUFFER_PANEL             # buffer_kb, as without --check
    for job in jobs:
        fig = Figure()
        draw_figure(fig, job.spec, job.series, rs.summary, job.predictions)
        assert fig.axes[0].get_ylabel() != "backlog (KB)"
        assert not [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert not [c for ax in fig.axes for c in _bands(ax)]
        assert PREDICTION_LABEL not in [t.get_text() for t in fig.legends[0].get_texts()]
    assert [len(job.predictions) for job in plan_figures(rs, predictions=True)] == [3, 4, 0]

    paths = make_figures(checked_dir, tmp_path / "off", predictions=False)
    assert [p.name for p in paths] == ["links.png", "flows.png", "hosts.png"]
    paths = make_figures(checked_dir)                        # default: drawn when present
    assert all(_is_png(p) for p in paths)


def test_results_without_predictions(results_dir: Path, tmp_path: Path) -> None:
    rs = read_results(results_dir)
    assert rs.predictions is None and rs.check is None
    jobs = plan_figures(rs)
    assert all(job.predictions == [] for job in jobs)
    assert jobs[0].spec.panels[0] is BUFFER_PANEL
    assert [p.name for p in make_figures(results_dir)] == ["links.png", "flows.png", "hosts.png"]
    with pytest.raises(ValueError, match=r"predictions=True.*--check"):
        make_figures(results_dir, tmp_path, predictions=True)

    # predictions, but a links.csv without backlog_kb: no like-for-like comparison of the
    # buffer, so the links figure keeps buffer_kb and no overlay; the flows still get theirs
    checked = write_results(tmp_path / "old_links", check=True)
    _drop_link_columns(checked, "backlog_kb")
    links_job, flows_job, _ = plan_figures(read_results(checked))
    assert links_job.spec.panels[0] is BUFFER_PANEL and links_job.predictions == []
    assert len(flows_job.predictions) == 4


def test_in_memory_predictions(checked_dir: Path, tmp_path: Path) -> None:
    rs = read_results(checked_dir)

    class InMemory:       # predictions as lists (e.g. from a DataFrame's columns)
        summary = rs.summary
        links, flows, hosts = rs.links, rs.flows, rs.hosts
        predictions = {k: v.tolist() for k, v in rs.predictions.items()}

    jobs = plan_figures(InMemory())
    assert [len(job.predictions) for job in jobs] == [3, 4, 0]
    assert len(make_figures(InMemory(), tmp_path / "mem")) == 3


def test_sequence_plot_reads_the_results_directory_alone(tmp_path: Path) -> None:
    """seq_<flow>.png from a copy of summary.json and pcap/ only: no live network needed; every
    data packet of the host capture is drawn, sent or retransmitted."""
    pytest.importorskip("dpkt")
    import shutil

    from plot_tool.schema import host_capture_name, sender_port
    from plot_tool.seqplot import _captures, _sequence, make_seq_plots
    root = Path(__file__).resolve().parents[1]
    run = tmp_path / "run"
    subprocess.run([sys.executable, str(root / "initializer.py"),
                    str(root / "topologies" / "lossy_link.json"), "--duration", "3", "--pcap",
                    "--no-plots", "--quiet", "--out", str(run)], check=True)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(run / "summary.json", copy)
    shutil.copytree(run / "pcap", copy / "pcap")
    summary = json.loads((copy / "summary.json").read_text())
    (flow_id, flow), = summary["flows"].items()
    assert make_seq_plots(copy) == [copy / f"seq_{flow_id}.png"]
    assert (copy / f"seq_{flow_id}.png").read_bytes().startswith(PNG_SIGNATURE)
    forward, reverse, _where = _captures(copy / "pcap", summary, flow["src"])
    assert forward == reverse == copy / "pcap" / host_capture_name(flow["src"])
    sent, retransmitted, acks, _ = _sequence(forward, reverse, sender_port(0), 1e6)
    assert len(sent) + len(retransmitted) == flow["packets_sent"]
    assert len(retransmitted) == flow["retransmissions"] > 0 and acks
    forward.write_bytes(b"not a capture")                # one error naming the file (fuzzing)
    with pytest.raises(ValueError, match=rf"{forward.name}: not a pcap capture"):
        make_seq_plots(copy)


def test_coinciding_predictions_take_turns_and_bands_do_not_blend() -> None:
    """Equal flows get equal predictions. Their dashed lines, and their bands' edges, take
    turns along one line (each flow every n-th dash, in its colour); their bands are shaded
    once, in grey: two translucent colours blended into a third that no legend entry has
    (acceptance test Z7: two Vegas flows' bands looked brown)."""
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure

    from plot_tool.png.panels import DASH, _plot_predictions
    from plot_tool.series import PredictionSeries

    def prediction(key, low, high):
        return PredictionSeries(key, "rate_mbps", np.array([0.0]), np.array([1.0]),
                                np.array([low]), np.array([high]))

    ax = Figure().subplots()
    colors = {"F1": "tab:blue", "F2": "tab:orange", "F3": "tab:green"}
    line, band = _plot_predictions(ax, [prediction("F1", 2, 4), prediction("F2", 2, 4),
                                        prediction("F3", 5, 5)], colors)
    assert line and band
    (shade,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    np.testing.assert_allclose(shade.get_facecolor()[0], BAND_SHADE, atol=1e-6)
    edges = {}
    for ln in ax.get_lines():
        edges.setdefault(float(ln.get_ydata()[0]), []).append(ln)
    assert sorted(edges) == [2.0, 4.0, 5.0]
    for y in (2.0, 4.0):                         # each edge: F1's and F2's dashes in turn
        lines = edges[y]
        assert [ln.get_color() for ln in lines] == ["tab:blue", "tab:orange"]
        offsets = [ln._unscaled_dash_pattern[0] for ln in lines]
        assert offsets == [0.0, sum(DASH)]
    (alone,) = edges[5.0]                        # F3's dashed line, alone: plain dashes
    assert alone.get_color() == "tab:green" and alone.get_linestyle() == "--"
