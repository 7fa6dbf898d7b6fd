"""The report reads links.csv and flows.csv a chunk at a time (plot_tool/report_series.py,
docs/report.md "Size of long runs"): the page is byte for byte the one made from the tables held
whole, whatever the chunks; a file out of time order is read whole; and the report's memory does
not grow with the length of the run."""
from __future__ import annotations

import csv
import json
import random
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plotly", reason="the report needs plotly (pip install 'netsim[report]')")

from netsim.cli import main
from plot_tool import report_series
from plot_tool.report import make_report, run_data
from plot_tool.report_grid import SampleGrid, grid_index, sampling_grid
from plot_tool.report_page import render_page
from plot_tool.results import ResultSet, TraceFile, read_results, read_table

ROOT = Path(__file__).resolve().parent.parent
INTERVAL_S = 0.004          # 2500 samples in 10 s: decimated (beyond 2000), quickly


def dumbbell(tmp: Path, duration_s: float) -> Path:
    """A one-pair long-lived Reno dumbbell at 1 Mb/s whose bottleneck is down from 5 to 7 s,
    run with --check (backlog_kb shown) at INTERVAL_S: the results directory."""
    topology = tmp / f"dumbbell_{duration_s:g}.json"
    assert main(["generate", "dumbbell", "--pairs", "1", "--rate-mbps", "1", "--long-lived",
                 "--duration", str(duration_s), "-o", str(topology)]) == 0
    spec = json.loads(topology.read_text())
    spec["events"] = [{"at_s": 5.0, "link": "LB", "action": "down"},
                      {"at_s": 7.0, "link": "LB", "action": "up"}]
    topology.write_text(json.dumps(spec))
    out = tmp / f"run_{duration_s:g}"
    assert main([str(topology), "--out", str(out), "--no-plots", "--quiet", "--check",
                 "--interval", str(INTERVAL_S)]) == 0
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Results directories: a short run (test case 0: half duplex, not decimated), a decimated
    one (link down spans, --check), and edited copies of it (see `variant`)."""
    tmp = tmp_path_factory.mktemp("streaming")
    short = tmp / "tc0"
    assert main([str(ROOT / "topologies" / "test_case_0.json"), "--out", str(short), "--no-plots",
                 "--quiet"]) == 0
    long = dumbbell(tmp, 10)
    out = {"short": short, "decimated": long}
    for name in ("no_down_s", "edge_values", "idle_gaps", "no_flow_rows", "shuffled",
                 "one_swap", "infinite_time", "text_mark"):
        out[name] = variant(long, tmp / name, name)
    out["short_edge_values"] = variant(short, tmp / "short_edge_values", "edge_values")
    return out


def rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="") as f:
        body = list(csv.reader(f))
    return body[0], body[1:]


def write(path: Path, header: list[str], body: list[list[str]]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(body)


def variant(source: Path, out: Path, kind: str) -> Path:
    """A copy of the results `source` with its traces edited: results written before down_s,
    empty and NaN values, -0.0, duplicate rows, rows of unknown links and a numeric extra mark
    column, idle spells, a flows.csv without rows (a run of workloads only), rows out of time
    order, a last row at an infinite time, a mark column holding text in one row."""
    shutil.copytree(source, out)
    rnd = random.Random(kind)
    links, flows = out / "links.csv", out / "flows.csv"
    header, body = rows(links)
    end = json.loads((out / "summary.json").read_text())["end_time_s"]
    if kind == "no_down_s":
        summary = json.loads((out / "summary.json").read_text())
        for info in summary["links"].values():
            info.pop("down_s", None)
        (out / "summary.json").write_text(json.dumps(summary))
    elif kind == "edge_values":
        rate, buffer, drops = (header.index(c) for c in ("rate_mbps", "buffer_kb", "drops"))
        edited = []
        for row in body:
            r = rnd.random()
            row[rate] = "" if r < 0.01 else row[rate]
            row[buffer] = "nan" if 0.01 <= r < 0.02 else row[buffer]
            row[drops] = "-0.0" if 0.02 <= r < 0.03 else row[drops]
            edited.append([*row, rnd.choice(["0", "0", "1", "2.5"])])
            if r > 0.99:                           # the same instant again, another value
                edited.append([*row[:rate], "0.125", *row[rate + 1:], "3"])
            if 0.98 < r < 0.99:
                edited.append([row[0], "LZ", *row[2:], "7"])
        write(links, [*header, "xmarks"], edited)
        fheader, fbody = rows(flows)
        rtt, window = fheader.index("rtt_ms"), fheader.index("window_pkts")
        for row in fbody:
            row[rtt] = "" if rnd.random() < 0.05 else row[rtt]
            row[window] = "inf" if rnd.random() < 0.01 else row[window]
        write(flows, fheader, fbody)
    elif kind == "idle_gaps":
        write(links, header, [r for r in body if not (0.3 * end < float(r[0]) < 0.6 * end
                                                      and r[1] != "LB")])
        fheader, fbody = rows(flows)
        write(flows, fheader, [r for r in fbody if not 0.2 * end < float(r[0]) < 0.25 * end])
    elif kind == "no_flow_rows":
        write(flows, rows(flows)[0], [])
    elif kind == "shuffled":
        rnd.shuffle(body)
        write(links, header, body)
        fheader, fbody = rows(flows)
        rnd.shuffle(fbody)
        write(flows, fheader, fbody)
    elif kind == "one_swap":                       # in a late chunk only
        k = len(body) - 100
        body[k], body[k + 50] = body[k + 50], body[k]
        write(links, header, body)
    elif kind == "infinite_time":      # in order, but nearer the one-but-last instant (a tie)
        write(links, header, [*body, ["inf", *body[-1][1:]]])
    elif kind == "text_mark":                      # a number in every chunk but one
        body = [[*row, "1"] for row in body]
        body[-3][-1] = "many"
        write(links, [*header, "ecn_marks"], body)
    return out


def in_memory_page(directory: Path, **selection) -> str:
    return render_page(run_data(read_results(directory), **selection))


def streamed(directory: Path, chunk_rows: int | None = None) -> dict:
    return run_data(read_results(directory, traces_in_memory=False), chunk_rows=chunk_rows)


@pytest.fixture
def whole_reads(monkeypatch) -> list[str]:
    """The traces the report read whole (TraceFile.read) instead of streaming them."""
    names: list[str] = []
    read = TraceFile.read

    def spy(self):
        if self.name in ("links", "flows", "hosts"):    # (routes.csv is read whole)
            names.append(self.name)
        return read(self)
    monkeypatch.setattr(TraceFile, "read", spy)
    return names


@pytest.mark.parametrize("name", ["short", "decimated"])
def test_the_streamed_page_is_the_in_memory_page(runs, name, tmp_path, whole_reads):
    path = make_report(runs[name], tmp_path / "report.html")
    assert path.read_text(encoding="utf-8") == in_memory_page(runs[name])
    assert whole_reads == []                       # streamed


@pytest.mark.parametrize("name", ["no_down_s", "edge_values", "idle_gaps", "no_flow_rows",
                                  "short_edge_values"])
def test_the_streamed_data_is_the_in_memory_data(runs, name, whole_reads):
    data = streamed(runs[name])
    assert data["decimated"] == (name != "short_edge_values")
    assert json.dumps(data) == json.dumps(run_data(read_results(runs[name])))
    # streamed: only a flows.csv without rows (its header decides the columns) is read whole
    assert whole_reads == (["flows"] if name == "no_flow_rows" else [])


def test_what_the_decimated_page_holds(runs):
    data = streamed(runs["decimated"])
    (bottleneck,) = [link for link in data["links"] if link["id"] == "LB"]
    assert bottleneck["frame_down"] is not None             # down from 5 to 7 s
    assert "backlog_kb" in bottleneck["dirs"][0]["series"]  # --check
    edge = streamed(runs["edge_values"])
    assert any("xmarks" in d["series"] for link in edge["links"] for d in link["dirs"])
    assert any(None in s["q"] for f in edge["flows"] for s in f["series"].values() if "q" in s)


def test_a_selection_is_the_same(runs, tmp_path):
    selection = {"links": ["LS1"], "flows": ["F1"]}
    path = make_report(runs["decimated"], tmp_path / "report.html", **selection)
    assert path.read_text(encoding="utf-8") == in_memory_page(runs["decimated"], **selection)


@pytest.mark.parametrize("name,chunk_rows", [("short", 1), ("short", 5), ("decimated", 97),
                                             ("edge_values", 1000), ("idle_gaps", 333)])
def test_chunks_do_not_matter(runs, name, chunk_rows, whole_reads):
    expected = json.dumps(run_data(read_results(runs[name])))
    assert json.dumps(streamed(runs[name], chunk_rows)) == expected
    assert whole_reads == []


@pytest.mark.parametrize("name,read_whole", [("shuffled", ["links", "flows"]),
                                             ("one_swap", ["links"]),
                                             ("infinite_time", ["links"]),
                                             ("text_mark", ["links"])])
def test_a_file_out_of_time_order_is_read_whole(runs, name, read_whole, whole_reads):
    """The fallback: the first chunk out of order (or with a mark column read as text, which
    the whole file may read as numbers) sends that file back to `read_table`."""
    expected = json.dumps(run_data(read_results(runs[name])))
    assert json.dumps(streamed(runs[name], 1000)) == expected
    assert whole_reads == read_whole


def one_link(tmp: Path, duration_s: float) -> Path:
    """A long-lived Reno flow over one 1 Mb/s link, run at INTERVAL_S: the results directory."""
    topology = tmp / f"one_link_{duration_s:g}.json"
    topology.write_text(json.dumps({
        "name": f"one_link_{duration_s:g}", "duration_s": duration_s, "hosts": ["H1", "H2"],
        "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 1, "delay_ms": 20,
                   "buffer_kb": 10}],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "start_s": 0, "algorithm": "reno"}]}))
    out = tmp / f"one_link_{duration_s:g}"
    assert main([str(topology), "--out", str(out), "--no-plots", "--quiet",
                 "--interval", str(INTERVAL_S)]) == 0
    return out


def test_memory_does_not_grow_with_the_run(runs, tmp_path, monkeypatch):
    """Four times the simulated time (2500 then 10 000 samples: both decimated, the same page),
    about the same peak of Python memory: the traces' chunks (of 1024 rows here, to be small
    beside the tables of these short runs) and the page's data. The HTML page, the same for
    both (plotly.js: 5 MB), is left out. Measured: 2.3 MB for both; reading the tables whole (the
    report before it streamed them), 3.0 then 13.1 MB."""
    import plot_tool.report
    import plot_tool.results
    runs_s = [one_link(tmp_path, 10), one_link(tmp_path, 40)]
    monkeypatch.setattr(plot_tool.results, "STREAM_CHUNK_ROWS", 1024)
    monkeypatch.setattr(plot_tool.report, "render_page", lambda data: json.dumps(data))
    make_report(runs["short"], tmp_path / "warm.html")       # imports
    peaks = []
    for directory in runs_s:
        tracemalloc.start()
        try:
            make_report(directory, tmp_path / "report.html")
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert [read_results(d).summary["end_time_s"] for d in runs_s] == [10, 40]
    assert peaks[1] < 1.3 * peaks[0], [f"{p / 1e6:.2f} MB" for p in peaks]


@pytest.mark.parametrize("n,instants,chunk_rows", [(3, 3, 2), (40, 40, 1), (1500, 1500, 7),
                                                   (2501, 2000, 300), (4000, 150, 1),
                                                   (300_000, 2000, 700)])
def test_random_traces_stream_to_the_whole_numbers(tmp_path, n, instants, chunk_rows):
    """Synthetic traces of random shape: buckets of 1 to 300 samples (numpy sums those beyond 128
    pairwise), rows only at some instants, several rows at one instant, NaN, -0.0 and infinity,
    rows of a link the summary does not have, times between the instants and past the end;
    chunks of a few rows (of one row: some hold only the unknown link's)."""
    rnd = random.Random(n)
    interval = rnd.choice([0.1, 0.003, 0.25])
    end = interval * n + rnd.choice([0.0, interval / 3])
    summary = {"interval_s": interval, "end_time_s": end, "links": {
        "L1": {"ends": ["A", "B"], "directions": {"A->B": {}, "B->A": {}}},
        "L2": {"ends": ["B", "C"], "down_s": [[rnd.uniform(0, end), end]]}},
        "flows": {"F1": {"src": "A", "dst": "C"}}, "hosts": {"A": {}, "C": {}},
        "routers": {"B": {}}}
    grid = sampling_grid(summary)
    instants = sorted(rnd.sample(range(len(grid)), instants))
    values = [0.0, -0.0, float("nan"), float("inf"), 1.5, 2.0, 1e-3, 7.25]
    link_rows, flow_rows = [], []
    for k in instants:
        t = float(grid[k]) + rnd.choice([0.0, 0.0, interval * 0.4, -interval * 0.5])
        for link, direction in (("L1", "A->B"), ("L1", "B->A"), ("L2", "B->C"), ("L9", "X->Y")):
            for _ in range(rnd.choice([1, 1, 1, 2])):
                link_rows.append([t, link, direction,
                                  *(rnd.choice(values) if rnd.random() < 0.3 else rnd.random()
                                    for _ in range(5))])
        if rnd.random() < 0.7:
            flow_rows.append([t, "F1", *(rnd.choice(values) for _ in range(5))])
    link_rows.sort(key=lambda r: r[0])
    flow_rows.sort(key=lambda r: r[0])
    link_rows.append([end * 2, "L1", "A->B", 1.0, 2.0, 3.0, 4.0, 5.0])
    write(tmp_path / "links.csv", ["time_s", "link", "direction", "rate_mbps", "buffer_kb",
                                   "buffer_pkts", "drops", "failure_drops"],
          [[repr(v) if isinstance(v, float) else v for v in r] for r in link_rows])
    write(tmp_path / "flows.csv", ["time_s", "flow", "send_rate_mbps", "recv_rate_mbps",
                                   "arrival_rate_mbps", "window_pkts", "rtt_ms"],
          [[repr(v) if isinstance(v, float) else v for v in r] for r in flow_rows])
    traces = {name: TraceFile(tmp_path / f"{name}.csv", name) for name in ("links", "flows")}
    whole = ResultSet(summary=summary, links=read_table(tmp_path / "links.csv", "links"),
                      flows=read_table(tmp_path / "flows.csv", "flows"), hosts={})
    on_disk = ResultSet(summary=summary, links=traces["links"],   # type: ignore[arg-type]
                        flows=traces["flows"], hosts={})           # type: ignore[arg-type]
    expected = json.dumps(run_data(whole))
    assert json.dumps(run_data(on_disk, chunk_rows=chunk_rows)) == expected


def test_the_sample_grid_is_the_sampling_grid():
    rnd = random.Random(7)
    for _ in range(300):
        interval = rnd.choice([0.1, 0.01, 0.003, 1.0, 1 / 3, 0.3])
        end = rnd.choice([0.0, interval / 3, interval, interval * rnd.randint(1, 5000)
                          + rnd.choice([0.0, 1e-12, -1e-12, interval / 2, interval * 0.999])])
        summary = {"interval_s": interval, "end_time_s": end}
        grid, lazy = sampling_grid(summary), SampleGrid(summary)
        assert lazy.n == len(grid) and np.array_equal(lazy.values(), grid)
        times = np.concatenate([grid, (grid[:-1] + grid[1:]) / 2, grid + 1e-12, grid - 1e-12,
                                [-1.0, 0.0, end * 2 + 1, np.inf, -np.inf, np.nan],
                                np.random.default_rng(rnd.randint(0, 99)).uniform(
                                    -1, end + 1, 200)])
        assert np.array_equal(lazy.index(times), grid_index(grid, times))


def test_the_stream_keeps_only_the_open_buckets():
    """What a decimated stream holds between chunks: the rows of the open buckets, and per
    finished bucket the page's values (nothing for a column that is all zeros)."""
    summary = {"interval_s": 0.1, "end_time_s": 1000.0}
    sampling = report_series.Sampling(summary, 1000, 1000)
    plan = report_series.TracePlan(keys=("link", "direction"), columns=("rate_mbps", "drops"),
                                   fill_nan=False, always=frozenset({"rate_mbps"}),
                                   mean_columns=("rate_mbps",))
    stream = report_series._Stream(plan, sampling, [("L", "A->B"), ("L", "B->A")])
    times = sampling.grid.at(np.arange(sampling.n))
    for start in range(0, sampling.n, 512):
        part = times[start:start + 512]
        assert stream.feed({"time_s": part, "link": np.full(len(part), "L"),
                            "direction": np.full(len(part), "A->B"),
                            "rate_mbps": np.sin(part), "drops": np.zeros(len(part))})
        assert len(stream.pending_idx) <= max(sampling.buckets.sizes)
        assert set(stream.extremes) == {0} and set(stream.means) == {0}
    reduced = stream.finish()
    full = np.sin(times)
    used, idle = reduced[("L", "A->B")], reduced[("L", "B->A")]
    assert np.array_equal(used.points["rate_mbps"], sampling.buckets.extremes(full))
    assert np.array_equal(used.means["rate_mbps"], sampling.frames.means(full))
    assert set(used.points) == {"rate_mbps"} and used.nonzero == {"rate_mbps"}
    assert not idle.points["rate_mbps"].any() and not idle.nonzero


def test_only_the_routes_towards_the_flows_destinations_are_read(runs, tmp_path):
    """The page's flow paths need the routes towards the flows' destinations only: rows towards
    any other destination (an all-to-all workload's, 2.1 million at k = 16) are skipped as the
    file is read, and a run without flows of its own reads none."""
    source = runs["short"]
    copy = tmp_path / "more_routes"
    shutil.copytree(source, copy)
    header, body = rows(copy / "routes.csv")
    column = {name: i for i, name in enumerate(header)}
    extra = []
    for row in body[:3]:
        other = list(row)
        other[column["destination"]] = "nowhere"
        extra.append(other)
    write(copy / "routes.csv", header, body + extra * 1000)
    assert run_data(read_results(copy, traces_in_memory=False)) == \
        run_data(read_results(source, traces_in_memory=False))
    summary = json.loads((copy / "summary.json").read_text())
    summary["flows"] = {}
    (copy / "summary.json").write_text(json.dumps(summary))
    (copy / "routes.csv").write_text("not,a,routes,table\n")
    data = run_data(read_results(copy, traces_in_memory=False))    # (the bad file: not read)
    assert data["flows"] == [] and all(not change["paths"] for change in data["routes"])
