"""report.html (plot_tool.report, docs/report.md): what it embeds, the command line, and the size
bound. The page itself is checked in a real browser in tests/test_report_browser.py."""
from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plotly", reason="the report needs plotly (pip install 'netsim[report]')")

from netsim.cli import main  # noqa: E402
from plot_tool.report import (Buckets, encode, make_report, run_data,  # noqa: E402
                              sampling_grid)
from plot_tool.results import read_results  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def page_data(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    packed = re.search(r'<script id="netsim-data" type="application/octet-stream">([^<]*)</script>',
                       text).group(1)
    return json.loads(gzip.decompress(base64.b64decode(packed)))


def decode(a: dict) -> np.ndarray:
    if "z" in a:
        return np.zeros(a["z"])
    return np.array([np.nan if q is None else q * a["s"] for q in a["q"]], dtype=float)


@pytest.fixture(scope="module")
def tc2(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "tc2"
    assert main([str(ROOT / "topologies" / "test_case_2.json"), "--out", str(out), "--no-plots",
                 "--quiet", "--check", "--report"]) == 0
    return out


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_run_with_report_writes_one_self_contained_page(tc2):
    page = (tc2 / "report.html").read_text(encoding="utf-8")
    assert page.count('id="plotly-packed"') == 1           # plotly.js inlined once
    # nothing fetched from anywhere: no external script, stylesheet or URL to another host
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=', page)
    assert "http://" not in page.replace("http://www.w3.org", "")
    assert not re.search(r'https?://(?!www\.w3\.org)', page.split('id="plotly-packed"')[0])
    data = page_data(tc2 / "report.html")
    assert data["kind"] == "run"
    assert [link["id"] for link in data["links"]] == list(json.loads(
        (tc2 / "summary.json").read_text())["links"])
    assert [f["id"] for f in data["flows"]] == ["F1", "F2", "F3"]
    assert data["predictions"]          # --check: predictions embedded (drawn dashed)


def test_frames_are_the_links_csv_values_with_idle_gaps_as_zeros(tc2):
    data = page_data(tc2 / "report.html")
    rs = read_results(tc2)
    grid = sampling_grid(rs.summary)
    assert data["frames_exact"] and len(data["frame_t"]) == len(grid)
    for link in data["links"]:
        for d in link["dirs"]:
            mask = (rs.links["link"] == link["id"]) & (rs.links["direction"] == d["dir"])
            rate = decode(d["frame_rate"])
            buffer = decode(d["frame_buffer"])
            expected = np.zeros(len(grid))
            times = rs.links["time_s"][mask]
            idx = np.array([int(np.argmin(np.abs(grid - t))) for t in times], dtype=int)
            expected[idx] = rs.links["rate_mbps"][mask]
            assert np.allclose(rate, expected, atol=np.abs(expected).max() / 5000 + 1e-12)
            expected[:] = 0
            expected[idx] = rs.links["buffer_kb"][mask]
            assert np.allclose(buffer, expected, atol=np.abs(expected).max() / 5000 + 1e-12)


def test_routes_follow_the_forwarding_tables(tmp_path):
    out = tmp_path / "tc1"
    assert main([str(ROOT / "topologies" / "test_case_1.json"), "--out", str(out), "--no-plots",
                 "--quiet", "--duration", "20"]) == 0
    data = run_data(read_results(out))
    paths = [tuple(change["paths"]["F1"]) for change in data["routes"]]
    # test case 1: the flow alternates between the branches R1-R2-R4 and R1-R3-R4
    assert len(set(paths)) == 2
    assert all(p[0] == "L0" and p[-1] == "L5" and len(p) == 4 for p in paths)


def test_decimation_keeps_extremes_and_bounds_points():
    values = np.sin(np.arange(10_000) / 37.0)
    values[4321] = 7.0                       # a single spike survives
    buckets = Buckets(len(values), 1000)
    out = buckets.extremes(values)
    assert len(out) == 2000
    assert out.max() == 7.0 and out.min() == values.min()
    means = Buckets(len(values), 1000).means(values)
    assert len(means) == 1000 and np.isclose(means.mean(), values.mean())
    assert encode(np.zeros(5)) == {"z": 5}
    assert decode(encode(np.array([1.0, np.nan, -2.0]))).tolist()[0] == 1.0


def test_report_subcommand_on_an_earlier_run(tc2, tmp_path):
    out = tmp_path / "again.html"
    done = subprocess.run([sys.executable, "-m", "netsim", "report", str(tc2), "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.is_file() and page_data(out)["kind"] == "run"
    assert main(["report", str(tmp_path / "missing")]) == 2


def test_sweep_report_has_the_charts_and_the_runs(tmp_path):
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps({
        "name": "tiny", "topology": "lossy_link", "duration_s": 2,
        "parameters": {"links.L1.impairments.H1->H2.loss_rate": [0.002, 0.01],
                       "flows.F1.data_mb": [None]},
        "seeds": 2, "metrics": ["flows.F1.goodput_mbps"],
        "plots": [{"file": "g.png", "x": "links.L1.impairments.H1->H2.loss_rate",
                   "y": "flows.F1.goodput_mbps", "logx": True, "theory": {"model": "mathis"}}]}))
    out = tmp_path / "sweep"
    assert main(["sweep", str(sweep), "--out", str(out), "--jobs", "1", "--quiet", "--no-plots",
                 "--report"]) == 0
    data = page_data(out / "report.html")
    assert data["kind"] == "sweep" and len(data["runs"]["rows"]) == 4
    (chart,) = data["charts"]
    measured, theory = chart["traces"]
    assert len(measured["x"]) == 2 and "error_y" in measured
    assert theory["line"]["dash"] == "dash" and theory["name"].startswith("Mathis")


def test_a_logarithmic_sweep_axis_labels_its_ticks_with_numbers():
    """plotly labels a log axis within a decade or two with lone digits ("2 3 4 ... 8": a p99
    slowdown of 39 read as "4"); the report's ticks are the PNG's numbers."""
    from plot_tool.report_sweep import _log_ticks
    traces = [{"y": [3.0, 9.5, 39.0], "error_y": {"array": [0.5, 1.0, 20.0]}}]
    assert _log_ticks(traces) == [5.0, 10.0, 20.0, 50.0]
    assert _log_ticks([{"y": [2.0, 7.0]}]) == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    assert _log_ticks([{"y": [0.0, float("nan")]}]) == []


def test_a_long_run_stays_bounded(tmp_path):
    """Decimated series: at most 2000 points per series, 1000 slider frames."""
    out = tmp_path / "long"
    assert main([str(ROOT / "topologies" / "test_case_0.json"), "--out", str(out), "--no-plots",
                 "--quiet", "--interval", "0.005", "--duration", "15"]) == 0
    path = make_report(out)
    data = page_data(path)
    assert data["samples"] == 3000 and data["decimated"]
    assert len(data["series_t"]) == 2000 and len(data["frame_t"]) == 1000
    for d in data["links"][0]["dirs"]:
        assert all(len(decode(s)) == 2000 for s in d["series"].values())
    assert path.stat().st_size < 3_000_000


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_no_report_no_plotly(tmp_path):
    code = ("import sys; from netsim.cli import main; import plot_tool; "
            "code = main([sys.argv[1], '--quiet', '--out', sys.argv[2]]); "
            "print(code, 'plotly' in sys.modules, 'plot_tool.report' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "topologies" / "test_case_0.json"),
                           str(tmp_path / "r")], cwd=ROOT, capture_output=True, text=True,
                          check=True, env={"MPLBACKEND": "Agg", **__import__("os").environ})
    assert done.stdout.strip() == "0 False False"


def test_summary_tables_have_the_consoles_ecn_and_discipline_columns(tc2):
    """As the console's tables: a flow's ECN cuts where some flow got ECN echoes, a link's AQM
    drops, marks and sojourn times where some link has a queue discipline; not otherwise."""
    from plot_tool.report_network import summary_tables
    summary = json.loads((tc2 / "summary.json").read_text())
    run, flows, links = summary_tables(summary)
    assert "ECN cuts" not in flows["columns"] and "marks" not in links["columns"]
    summary["flows"]["F1"].update(ecn_echoes=12, ecn_reactions=3)
    summary["links"]["L1"]["queue"] = "red"
    direction = next(iter(summary["links"]["L1"]["directions"].values()))
    direction.update(aqm_drops=4, marks=7, avg_sojourn_ms=1.25, p99_sojourn_ms=3.5)
    run, flows, links = summary_tables(summary)
    assert flows["columns"][-2:] == ["ECN cuts", "in order"]
    assert [row[-2] for row in flows["rows"]] == ["3", "0", "0"]
    assert links["columns"][-4:] == ["AQM drops", "marks", "sojourn ms", "p99 ms"]
    first = next(row for row in links["rows"] if row[0] == "L1")
    assert first[-4:] == ["4", "7", "1.250", "3.500"]
    assert all(len(row) == len(links["columns"]) for row in links["rows"])


def test_the_check_line_says_when_nothing_was_compared():
    from plot_tool.report_network import check_line
    nothing = {"compared": 0, "max_error_pct": 0.0, "passed": False}
    assert check_line(nothing) == ("--check: predictions from the analytic equilibrium drawn "
                                   "dashed; nothing compared (see check.json for the reasons); "
                                   "OUT OF TOLERANCE")
    some = {"compared": 3, "max_error_pct": 2.5, "passed": True}
    assert check_line(some).endswith("; largest error 2.50 %; within tolerance")


def test_a_run_of_workloads_only_says_where_its_flows_are():
    """Its Flows table was the headers of an empty table."""
    from plot_tool.report_network import summary_tables
    summary = {"flows": {}, "links": {}, "workloads": {"W": {}}}
    flows = next(t for t in summary_tables(summary) if t["title"] == "Flows")
    assert flows["rows"] == [["none listed in the topology; its workloads' flows, one row each "
                              "in fct.csv, are summed up per workload below"]]
    del summary["workloads"]
    flows = next(t for t in summary_tables(summary) if t["title"] == "Flows")
    assert flows["rows"] == [["none listed in the topology"]]
    assert [t["title"] for t in summary_tables(summary)] == ["Run", "Flows", "Links"]


def test_a_run_with_workloads_has_their_table():
    """A workload run's page had no FCT or slowdown at all, its main result (acceptance test
    Z7): one row per workload and size bucket with finished flows, from summary.json."""
    from plot_tool.report_network import summary_tables
    bucket = {"count": 2, "mean_fct_s": 0.0125, "p50_fct_s": 0.01, "p99_fct_s": 0.0149,
              "mean_slowdown": 1.5, "p50_slowdown": 1.25, "p99_slowdown": 1.7475}
    workload = {"algorithm": "dctcp", "flows_started": 3, "flows_completed": 2,
                "flows_unfinished": 1, "all": bucket, "under_100kb": bucket,
                "100kb_to_10mb": {"count": 0}, "over_10mb": {"count": 0}}
    summary = {"flows": {}, "links": {}, "workloads": {"W": workload, "V": dict(
        workload, all={"count": 0}, under_100kb={"count": 0})}}
    tables = summary_tables(summary)
    assert [t["title"] for t in tables] == ["Run", "Flows", "Workloads", "Links"]
    table = tables[2]
    assert table["columns"][:7] == ["workload", "algorithm", "started", "completed",
                                    "unfinished", "size bucket", "flows"]
    row = ["0.0125", "0.01", "0.0149", "1.5", "1.25", "1.75"]
    assert table["rows"] == [["W", "dctcp", "3", "2", "1", "all", "2", *row],
                             ["", "", "", "", "", "< 100 KB", "2", *row],
                             ["V", "dctcp", "3", "2", "1", "all", "0", *["-"] * 6]]


def test_the_check_line_names_tied_links_as_links_png_does():
    """Tied links' backlog is predicted as their sum and drawn on the first: the report said
    nothing, so L1's prediction read 10 % off where the check found 0.5 % (acceptance test Z7)."""
    from plot_tool.report_network import check_line
    row = {"kind": "link", "id": "L1+L2+L3", "quantity": "backlog_kb", "predicted": 26.6,
           "simulated": 26.7, "error_pct": 0.5}
    check = {"compared": 1, "max_error_pct": 0.5, "passed": None,
             "intervals": [{"start_s": 0.5, "end_s": 10.0, "rows": [row]},
                           {"start_s": 10.0, "end_s": 20.0, "rows": [dict(row, id="L3")]}]}
    assert check_line(check) == ("--check: predictions from the analytic equilibrium drawn "
                                 "dashed; largest error 0.50 %; L1+L2+L3 (0.5\u201310 s): tied "
                                 "links, their sum predicted, dashed on L1")
