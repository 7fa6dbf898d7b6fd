"""`--check` reads the traces a chunk at a time (theory/window_means.py): its means and sums are
bit for bit `window_mean` / `window_sum` on `Results.trace`'s arrays (the whole table), whatever
the chunks, the idle gaps of a link or the order of the file; and its memory does not grow with
the simulated time."""
from __future__ import annotations

import json
import math
import random
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest
from networks import dumbbell, two_hosts

import theory.window_means as window_means
from netsim import simulate
from netsim.results import Results
from plot_tool.results import iter_table
from theory.check import compare, predict_run
from theory.check_rows import FLOW_MEANS, LINK_MEANS, LINK_SUMS
from theory.window_means import PairwiseSum, SamplingGrid, TraceMeans
from theory.windows import window_mean, window_sum
from topologies import load_topology


def lossy(**options) -> dict:
    """Two Reno flows over a 10 Mb/s bottleneck losing 2 % of the data, the second from 1.5 s:
    flows compared with Padhye's response function, links idle before the second starts."""
    options = {"rate_mbps": 10, "delay_ms": 10, "loss_rate": 0.02, "start_s": [0.0, 1.5],
               "duration_s": 4, "transport": {"min_rto_s": 0.2}, **options}
    return dumbbell(2, **options)


def with_failure() -> dict:
    """`lossy` with its first access link down from 1 s to 2.2 s (idle in the middle) and a
    half-duplex bottleneck (its directions summed)."""
    topology = lossy(bottleneck_extra={"duplex": "half"})
    topology["events"] = [{"at_s": 1, "link": "A0", "action": "down"},
                          {"at_s": 2.2, "link": "A0", "action": "up"}]
    return topology


def checked(topology: dict, interval_s: float = 0.002):
    spec = load_topology(topology)
    return spec, simulate(spec, interval_s=interval_s)


@pytest.fixture(scope="module")
def runs():
    return [checked(lossy()), checked(with_failure(), 0.005),
            checked(dumbbell(2, rate_mbps=2, algorithm="vegas", duration_s=4,
                             start_s=[0.0, 1.0]), 0.003)]


def small_chunks(monkeypatch, rows: int, instants: int) -> None:
    """Chunks of `rows` rows, idle gaps filled and instants cached `instants` at a time."""
    def chunks(self, name):
        return iter_table(self.directory / f"{name}.csv", name, chunk_rows=rows)
    monkeypatch.setattr(Results, "trace_chunks", chunks)
    monkeypatch.setattr(window_means, "FILL_INSTANTS", instants)
    monkeypatch.setattr(SamplingGrid, "CACHED_INSTANTS", instants)


def windows_of(results, count: int = 3, seed: int = 1) -> list:
    end, step = results.summary["end_time_s"], results.summary["interval_s"]
    rng = random.Random(seed)
    windows = [(0.0, end), (1.0, end), (end, end), (end - step, end + 1.0)]
    for _ in range(count):
        start = rng.uniform(-step, end)
        windows.append((start, rng.uniform(start, end + step)))
    return windows


def same(got, expected) -> bool:
    if got is None or expected is None:
        return got is expected
    return got == expected or (math.isnan(got) and math.isnan(expected))


@pytest.mark.parametrize("run, rows, instants", [(0, 8192, 8192), (1, 8192, 8192), (1, 301, 50)])
def test_every_mean_and_sum_is_the_whole_tables_bit_for_bit(runs, monkeypatch, run, rows,
                                                            instants):
    """The columns the check reads (rtt_ms has empty rows), of every flow and link direction
    and of a link's two directions summed, over windows anywhere in the run: the values of the
    whole table, read in chunks of 8192 rows or of 301 (series cut anywhere) with idle gaps
    filled 50 instants at a time."""
    small_chunks(monkeypatch, rows, instants)
    _, results = runs[run]
    summary, step = results.summary, results.summary["interval_s"]
    links = {link: set(entry["directions"]) | {None} for link, entry in summary["links"].items()}
    windows = windows_of(results)
    means = TraceMeans(results, windows, step, list(summary["flows"]), links,
                       means={"flows": FLOW_MEANS, "links": LINK_MEANS},
                       sums={"links": LINK_SUMS})
    queries = [("flows", fid, None, column, window_mean) for fid in summary["flows"]
               for column in FLOW_MEANS]
    queries += [("links", link, direction, column, reduce) for link, labels in links.items()
                for direction in labels
                for column, reduce in [(c, window_mean) for c in LINK_MEANS]
                + [(c, window_sum) for c in LINK_SUMS]]
    for table, entity, direction, column, reduce in queries:
        t, values = results.trace(table, entity, column, direction=direction)
        for window in windows:
            expected = reduce(t, values, window[0], window[1], step)
            ask = means.mean if reduce is window_mean else means.sum
            got = ask(table, window, entity, column, direction)
            assert same(got, expected), (window, table, entity, direction, column)
    assert len(queries) * len(windows) > 300
    assert means.whole == {"flows": False, "links": False}


def test_the_run_with_a_failure_has_idle_gaps_to_fill(runs):
    """(The instants a link without rows gets are many: its gap is filled, not skipped.)"""
    _, results = runs[1]
    t, _ = results.trace("links", "A0", "rate_mbps", direction="S0->R1")
    rows = results.links["link"] == "A0"
    assert len(t) - np.count_nonzero(rows & (results.links["direction"] == "S0->R1")) > 100


def compared(spec, results, **options) -> str:
    report = compare(results, predict_run(spec, results), **options)
    return json.dumps(report, indent=2, allow_nan=False)


def test_the_check_report_is_the_whole_tables_and_reads_none_whole(runs, monkeypatch):
    """check.json's text with the traces streamed (every query declared: none reads a table
    whole), and with every query answered from the whole table (`Results.trace`, as before):
    the same, on runs with rows compared (Reno's response function, Vegas's equilibrium)."""
    for spec, results in runs:
        with monkeypatch.context() as m:
            m.setattr(Results, "trace", refuse)
            streamed = compared(spec, results, settle_s=0.5)
        with monkeypatch.context() as m:
            m.setattr(window_means._Table, "compute", lambda self: setattr(self, "whole", True))
            assert compared(spec, results, settle_s=0.5) == streamed
        assert json.loads(streamed)["compared"] > 0 or spec.links[0].duplex == "half"


def refuse(*args, **kwargs):
    raise AssertionError("a table was read whole")


def read_whole(results, flow: str) -> dict:
    """Which tables `TraceMeans` read whole to give `flow`'s mean RTT and link L's rate."""
    means = TraceMeans(results, [(0.5, 4.0)], 0.005, [flow], {"L": {"R1->R2"}},
                       means={"flows": ("rtt_ms",), "links": ("rate_mbps",)}, sums={})
    means.mean("flows", (0.5, 4.0), flow, "rtt_ms")
    means.mean("links", (0.5, 4.0), "L", "rate_mbps", "R1->R2")
    return means.whole


def test_a_file_out_of_time_order_gives_the_same_report(tmp_path):
    """Readers accept rows in any order: the check of a run whose traces were shuffled (read
    whole then) is the same as of the run as written."""
    spec, results = checked(lossy(), 0.005)
    expected = compared(spec, results, settle_s=0.5)
    for name in ("flows", "links"):
        path = results.directory / f"{name}.csv"
        header, *rows = path.read_text().splitlines(keepends=True)
        random.Random(2).shuffle(rows)
        path.write_text(header + "".join(rows))
    assert compared(spec, results, settle_s=0.5) == expected
    assert read_whole(results, "F0") == {"flows": True, "links": True}


def test_a_series_out_of_order_among_ordered_ones_is_read_whole_alone(tmp_path):
    """Two rows of one flow swapped: the flows table is read whole, the links streamed."""
    spec, results = checked(lossy(), 0.005)
    expected = compared(spec, results, settle_s=0.5)
    path = results.directory / "flows.csv"
    lines = path.read_text().splitlines(keepends=True)
    f1 = [i for i, line in enumerate(lines) if ",F1," in line]
    lines[f1[10]], lines[f1[11]] = lines[f1[11]], lines[f1[10]]
    path.write_text("".join(lines))
    assert compared(spec, results, settle_s=0.5) == expected
    assert read_whole(results, "F1") == {"flows": True, "links": False}


def test_missing_series_raise_as_the_whole_table_does(runs):
    _, results = runs[0]
    means = TraceMeans(results, [(0.5, 4.0)], 0.002, ["F9"], {"L": {"R9->R1"}, "Z": {None}},
                       means={"flows": ("rtt_ms", "nope"), "links": ("rate_mbps",)}, sums={})
    for table, entity, column, direction in (("flows", "F9", "rtt_ms", None),
                                             ("links", "L", "rate_mbps", "R9->R1"),
                                             ("links", "Z", "rate_mbps", None)):
        with pytest.raises(KeyError) as streamed:
            means.mean(table, (0.5, 4.0), entity, column, direction)
        with pytest.raises(KeyError) as read_whole:
            results.trace(table, entity, column, direction=direction)
        assert streamed.value.args == read_whole.value.args


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 136, 255, 256, 1000, 4099, 70001])
def test_pairwise_sums_are_numpys_whatever_the_pieces(n):
    rng = np.random.default_rng(n)
    terms = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
    for cuts in ([], sorted(rng.integers(0, n + 1, 5).tolist()), list(range(0, n, 3))):
        total = PairwiseSum(n)
        for a, b in zip([0, *cuts], [*cuts, n]):
            total.add(terms[a:b])
        assert total.total == float(terms.sum()) and not total.overflow
    assert PairwiseSum(3).total is None


@pytest.mark.parametrize("end_s, interval_s", [(4.0, 0.002), (17.9218164, 0.05), (0.35, 0.1),
                                               (62.1834961, 0.1), (1.0, 0.3), (20.0, 0.001)])
def test_the_sampling_instants_are_those_results_fill_in(end_s, interval_s):
    fake = SimpleNamespace(summary={"end_time_s": end_s}, interval_s=interval_s, _grid_s=None)
    expected = Results._grid(fake, np)
    grid = SamplingGrid(end_s, interval_s)
    assert np.array_equal(grid.between(-1.0, end_s + 1.0), expected)
    middle = expected[len(expected) // 3]
    assert np.array_equal(grid.between(middle, end_s), expected[(expected > middle)
                                                                & (expected < end_s)])


# -- memory --------------------------------------------------------------------------------------

def check_peak(duration_s: float) -> int:
    """Python's peak memory (tracemalloc) of checking a Reno run losing 5 % of its packets for
    `duration_s`, sampled every 0.5 ms (both traces read: the loss regime asks for the links'
    drops and rates)."""
    spec = load_topology(two_hosts(rate_mbps=2, delay_ms=10, impairment={"loss_rate": 0.05},
                                   duration_s=duration_s))
    results = simulate(spec, interval_s=0.0005)
    model = predict_run(spec, results)
    tracemalloc.start()
    try:
        report = compare(results, model, settle_s=0.2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        results.close()
    assert "random loss" not in json.dumps(report)     # (the links were read)
    return peak


def test_the_checks_memory_does_not_grow_with_the_simulated_time(monkeypatch):
    """4 times the simulated time, the same peak: chunks of 128 rows here (8192 in a run), so
    that short runs hold several (flows.csv 600 rows, links.csv 490, against 2400 and 1784).
    Reading the tables whole, as the check did, peaked 3.5 times higher (0.39 -> 1.36 MB;
    streamed: 0.18 and 0.21)."""
    small_chunks(monkeypatch, 128, 64)
    check_peak(0.3)                       # (what the check imports on its first use)
    short, long = check_peak(0.3), check_peak(1.2)
    assert long < 1.3 * short, (short, long)
