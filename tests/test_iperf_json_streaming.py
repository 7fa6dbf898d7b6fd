"""`--iperf-json` reads flows.csv a chunk at a time (netsim/iperf_json.py): the document is the
one reading the file whole gives (a flow's rows in any interleaving with other flows', any
chunk size; a file whose rows of a flow go back in time is read whole, as before), and its
memory does not grow with the simulated time, only with the intervals reported."""
from __future__ import annotations

import json
import random
import shutil
import tracemalloc

import pytest
from networks import dumbbell, two_hosts

import netsim.iperf_json as iperf_json
import plot_tool.results
from netsim import simulate
from topologies import load_topology

ITER_TABLE = plot_tool.results.iter_table


def written(topology: dict, path, interval_s: float):
    results = simulate(load_topology(topology), interval_s=interval_s)
    try:
        results.write(path)
    finally:
        results.close()
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("iperf_streaming")
    lossy = dumbbell(2, rate_mbps=10, delay_ms=10, loss_rate=0.02, start_s=[0.0, 1.3],
                     data_mb=[None, 0.4], duration_s=3, transport={"min_rto_s": 0.2})
    mixed = dumbbell(3, rate_mbps=5, delay_ms=5, algorithm=["cubic", "vegas", "reno"],
                     start_s=[0.5, 0.0, 2.0], duration_s=3)
    mixed["flows"].append({"id": "C", "src": "S0", "dst": "D1", "kind": "cbr", "rate_mbps": 1,
                           "start_s": 0.2, "data_mb": None})     # (no stream: no window)
    return [written(lossy, base / "lossy", 0.003), written(mixed, base / "mixed", 0.01)]


def chunks_of(monkeypatch, rows: int) -> None:
    monkeypatch.setattr(plot_tool.results, "iter_table",
                        lambda path, name: ITER_TABLE(path, name, chunk_rows=rows))


def read_whole(monkeypatch) -> None:
    """As before: flows.csv read whole (`_read_rows`), each flow's streams from its list."""
    monkeypatch.setattr(iperf_json, "_stream_rows", lambda path, builders: False)


def document(directory, **options) -> str:
    return json.dumps(iperf_json.build(directory, **options), indent=1, allow_nan=False)


def retransmits_of(directory) -> dict:
    """Made-up counts by flow and sampling interval (as `RetransmitCounter` counts them)."""
    summary = json.loads((directory / "summary.json").read_text())
    rng = random.Random(3)
    last = int(summary["end_time_s"] / summary["interval_s"]) + 3
    return {fid: {rng.randrange(0, last): rng.randrange(1, 4) for _ in range(20)}
            for fid in summary["flows"]}


@pytest.mark.parametrize("rows", [8192, 37])
@pytest.mark.parametrize("interval_s", [None, 0.03, 0.7, 100.0])
def test_the_streamed_document_is_the_whole_reads(runs, monkeypatch, rows, interval_s):
    for directory in runs:
        for retransmits in (None, retransmits_of(directory)):
            with monkeypatch.context() as m:
                chunks_of(m, rows)
                m.setattr(iperf_json, "_read_rows", refuse)
                streamed = document(directory, interval_s=interval_s, retransmits=retransmits)
            with monkeypatch.context() as m:
                read_whole(m)
                assert document(directory, interval_s=interval_s,
                                retransmits=retransmits) == streamed


def refuse(*args, **kwargs):
    raise AssertionError("flows.csv was read whole")


def rewrite(directory, tmp_path, order) -> object:
    """A copy of `directory` whose flows.csv has its data rows in `order(rows)`."""
    copy = tmp_path / directory.name
    shutil.copytree(directory, copy)
    header, *rows = (copy / "flows.csv").read_text().splitlines(keepends=True)
    (copy / "flows.csv").write_text(header + "".join(order(rows)))
    return copy


def test_flows_interleaved_otherwise_stream_the_same_document(runs, tmp_path, monkeypatch):
    """Every row of F0, then every row of F1, ...: each flow's rows still in time order, the
    file streamed, the document the same."""
    directory = runs[1]
    expected = document(directory, interval_s=0.2)
    copy = rewrite(directory, tmp_path, lambda rows: sorted(rows, key=lambda r: r.split(",")[1]))
    monkeypatch.setattr(iperf_json, "_read_rows", refuse)
    assert document(copy, interval_s=0.2) == expected


def test_a_file_out_of_time_order_is_read_whole_as_before(runs, tmp_path, monkeypatch):
    """Rows shuffled (netsim never writes them so): read whole, the document what reading it
    whole always gave (each flow's rows taken in file order)."""
    copy = rewrite(runs[0], tmp_path, lambda rows: random.Random(1).sample(rows, len(rows)))
    called = []
    whole = iperf_json._read_rows
    monkeypatch.setattr(iperf_json, "_read_rows", lambda path: called.append(path) or whole(path))
    got = document(copy)
    assert called
    with monkeypatch.context() as m:
        read_whole(m)
        assert document(copy) == got


def test_a_malformed_line_is_named_before_an_earlier_bad_value(runs, tmp_path, capsys):
    """As when the file was read whole: its own errors first (a line of 3 fields near the end),
    then the first row whose value is not a finite number."""
    def bad_value(rows):
        fields = rows[5].split(",")
        fields[3] = "inf"
        return [*rows[:5], ",".join(fields), *rows[6:]]
    both = rewrite(runs[0], tmp_path / "both",
                   lambda rows: [*bad_value(rows)[:-2], "1,2,3\n", *rows[-2:]])
    assert iperf_json.main([str(both), "-o", str(tmp_path / "x.json")]) == 2
    lines = (both / "flows.csv").read_text().splitlines()
    assert capsys.readouterr().err.startswith(
        f"error: {both / 'flows.csv'}, line {len(lines) - 2}: 3 fields, expected")
    value = rewrite(runs[0], tmp_path / "value", bad_value)
    assert iperf_json.main([str(value), "-o", str(tmp_path / "x.json")]) == 2
    assert capsys.readouterr().err == (f"error: {value / 'flows.csv'}: flow 'F0': "
                                       f"recv_rate_mbps is inf; expected a finite number\n")


def test_the_file_is_json_dumps_text(runs, tmp_path):
    """iperf3.json is encoded into the file a piece at a time: the text json.dumps gave."""
    path = iperf_json.write(runs[1], tmp_path / "x.json", interval_s=0.3)
    assert path.read_text() == document(runs[1], interval_s=0.3) + "\n"


# -- memory --------------------------------------------------------------------------------------

def build_peak(directory) -> int:
    """Python's peak memory (tracemalloc) of building the document of `directory` with one
    report interval (the document's own size fixed)."""
    tracemalloc.start()
    try:
        iperf_json.build(directory, interval_s=1000.0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_memory_does_not_grow_with_the_simulated_time(tmp_path, monkeypatch):
    """4 times the simulated time, the same peak: chunks of 128 rows here (8192 in a run), so
    that the short run holds several (flows.csv 1200 rows, against 4800). Reading flows.csv
    whole, as before, peaked 4 times higher (0.68 -> 2.68 MB; streamed: 0.16 and 0.16)."""
    chunks_of(monkeypatch, 128)
    runs = [written(two_hosts(rate_mbps=2, delay_ms=10, duration_s=duration_s),
                    tmp_path / str(duration_s), 0.00025) for duration_s in (0.3, 1.2)]
    build_peak(runs[0])                   # (what building imports on its first use)
    short, long = build_peak(runs[0]), build_peak(runs[1])
    assert long < 1.3 * short, (short, long)
