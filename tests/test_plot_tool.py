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
from plot_tool.figures import _link_series

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TIMES = (0.1, 0.2, 0.3, 0.4, 0.45)       # interval 0.1 s; the last interval is shorter


def _summary(units: str = "si") -> dict:
    unit_table = {
        "si": {"system": "si", "bits_per_mbit": 1000000, "bytes_per_kb": 1000,
               "bytes_per_mb": 1000000},
        "binary": {"system": "binary", "bits_per_mbit": 1048576, "bytes_per_kb": 1024,
                   "bytes_per_mb": 1048576},
    }[units]
    direction = {"avg_buffer_kb": 4.0, "avg_buffer_pkts": 3.9, "drops": 2,
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
    }


def write_results(out_dir: Path, units: str = "si") -> Path:
    """Write a complete synthetic results directory (summary.json + the 3 CSVs) into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(_summary(units), indent=2))

    lines = ["time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,drops"]
    for i, t in enumerate(TIMES):
        lines.append(f"{t},L1,R1->R2,{8 + i},{10 * i},{i},{i % 2}")
        lines.append(f"{t},L1,R2->R1,0.5,0,0,0")
        lines.append(f"{t},L2,R2->T1,{6 + i},{2.5 * i},{0.5 * i},1")
        lines.append(f"{t},L2,T1->R2,{1 + i},1.5,1,{i}")
    (out_dir / "links.csv").write_text("\n".join(lines) + "\n")

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
                             "buffer_pkts", "drops"}
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


def test_plot_tool_imports_no_simulator_package() -> None:
    code = ("import sys, plot_tool, plot_tool.figures, plot_tool.results; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'simulator', 'components', 'flows', 'routing', 'topologies'}))")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
