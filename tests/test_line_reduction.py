"""The lines of a long run, streamed and reduced (plot_tool.line_reduction): exactly the samples
that draw the whole line, whatever the chunks, and a memory that does not grow with the run."""
from __future__ import annotations

import csv
import itertools
import logging
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plot_tool.line_reduction import (
    DRAWN_BUCKETS,
    REDUCE_ABOVE,
    LineReducer,
    Unstreamable,
    instant_chunks,
    reduction_bucket_s,
)
from plot_tool.lines import line_arrays
from plot_tool.results import read_results
from plot_tool.run_data import plan_figures
from plot_tool.series import Series, column_total


def _series(time, **values) -> Series:
    return Series(key="x", label="x", time=np.asarray(time, dtype=float),
                  values={k: np.asarray(v, dtype=float) for k, v in values.items()})


def _reduce(pieces: list[Series], bucket_s: float) -> Series:
    reducer = LineReducer(bucket_s)
    for piece in pieces:
        reducer.add(piece)
    return reducer.series()


def _cut(s: Series, at: list[int]) -> list[Series]:
    edges = [0, *sorted(set(at)), len(s.time)]
    return [_series(s.time[a:b], **{k: v[a:b] for k, v in s.values.items()})
            for a, b in itertools.pairwise(edges)]


values = st.one_of(st.just(float("nan")), st.floats(-5, 5, allow_nan=False))


@given(st.lists(st.tuples(st.integers(1, 3), values, values), min_size=1, max_size=80),
       st.lists(st.integers(0, 80), max_size=6))
def test_chunks_add_up_to_the_whole_line(rows, cuts):
    """Reducing a line piece by piece keeps exactly the samples reducing it whole keeps."""
    time = np.cumsum([step for step, _, _ in rows]) * 0.1
    whole = _series(time, a=[a for _, a, _ in rows], b=[b for _, _, b in rows])
    one = _reduce([whole], bucket_s=0.7)
    parts = _reduce(_cut(whole, [c for c in cuts if c <= len(time)]), bucket_s=0.7)
    np.testing.assert_array_equal(one.time, parts.time)
    for column in ("a", "b"):
        np.testing.assert_array_equal(one.values[column], parts.values[column])
        assert parts.totals[column] == pytest.approx(float(np.nansum(whole.values[column])))


@given(st.lists(st.tuples(st.integers(1, 3), values), min_size=1, max_size=120))
def test_each_bucket_keeps_its_first_last_and_extremes(rows):
    time = np.cumsum([step for step, _ in rows]) * 0.1
    v = np.array([a for _, a in rows])
    kept = _reduce([_series(time, v=v)], bucket_s=0.5)
    assert set(kept.time) <= set(time) and np.all(np.diff(kept.time) > 0)   # real samples, in order
    bucket = np.floor(time / 0.5)
    kept_bucket = np.floor(kept.time / 0.5)
    for b in np.unique(bucket):
        mine, theirs = v[bucket == b], kept.values["v"][kept_bucket == b]
        assert time[bucket == b][0] in kept.time and time[bucket == b][-1] in kept.time
        if np.isfinite(mine).any():
            assert np.nanmin(theirs) == np.nanmin(mine) and np.nanmax(theirs) == np.nanmax(mine)
        assert np.isnan(mine).any() == np.isnan(theirs).any()          # a break stays a break
    assert len(kept.time) <= 5 * len(np.unique(bucket))


def test_a_reduced_line_breaks_only_across_a_real_gap():
    """Kept samples of contiguous data may be a bucket apart: no break there; a gap longer than
    GAP_FACTOR intervals plus the bucket still breaks the line."""
    interval = 0.1
    time = np.concatenate((np.arange(1, 201), np.arange(260, 401))) * interval
    v = np.sin(time)
    s = _reduce([_series(time, v=v)], bucket_s=2.0)
    x, y = line_arrays(s.time, s.values["v"], style="interval", interval_s=interval,
                       idle_is_zero=False, resolution_s=s.resolution_s)
    assert np.isnan(y).sum() == 1                      # the one real gap (20 -> 26 s)
    broken_at = x[np.flatnonzero(np.isnan(y))[0]]
    assert 20.0 <= broken_at <= 26.0


def test_totals_are_over_every_sample():
    time = np.arange(1, 5001) * 0.01
    drops = np.where(np.arange(5000) % 7 == 0, 1.0, 0.0)
    s = _reduce([_series(time, drops=drops)], bucket_s=1.0)
    assert len(s.time) < 500
    assert column_total(s, "drops") == drops.sum() != np.nansum(s.values["drops"])


def test_instant_chunks_never_split_an_instant_and_refuse_disorder():
    table = {"time_s": np.array([1, 1, 2, 2, 2, 3, 3.0]), "x": np.arange(7.0)}
    pieces = [{k: v[a:b] for k, v in table.items()} for a, b in ((0, 3), (3, 4), (4, 7))]
    out = list(instant_chunks(pieces))
    assert [list(c["time_s"]) for c in out] == [[1, 1], [2, 2, 2], [3, 3]]
    assert np.concatenate([c["x"] for c in out]).tolist() == list(range(7))
    late = [{"time_s": np.array([1.0, 2.0])}, {"time_s": np.array([1.5])}]
    with pytest.raises(Unstreamable, match="time order"):
        list(instant_chunks(late))


def test_only_runs_with_more_samples_than_pixels_are_reduced():
    assert reduction_bucket_s({"end_time_s": 20.0, "interval_s": 0.1}) is None
    assert reduction_bucket_s({"end_time_s": REDUCE_ABOVE * 0.1, "interval_s": 0.1}) is None
    assert reduction_bucket_s({"end_time_s": 1000.0, "interval_s": 0.1}) == 1000.0 / DRAWN_BUCKETS
    assert reduction_bucket_s({"end_time_s": 1000.0}) is None


# -- whole runs ----------------------------------------------------------------------------------
def _run(tmp, name, *generate, duration, interval="0.002"):
    topology = tmp / f"{name}.json"
    subprocess.run([sys.executable, "-m", "netsim", "generate", "dumbbell", *generate,
                    "--rate-mbps", "1", "--long-lived", "--duration", str(duration),
                    "-o", str(topology)], check=True, capture_output=True)
    out = tmp / name
    subprocess.run([sys.executable, "-m", "netsim", str(topology), "--no-plots", "--interval",
                    interval, "--out", str(out)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def long_runs(tmp_path_factory):
    """Runs of 1 200 samples: 2 flows (one line each), and 24 flows with 52 link directions
    (aggregate lines)."""
    tmp = tmp_path_factory.mktemp("long")
    return {"lines": _run(tmp, "lines", "--pairs", "2", duration=12, interval="0.01"),
            "aggregates": _run(tmp, "aggregates", "--pairs", "12", "--flows", "24",
                               duration=12, interval="0.01")}


@pytest.fixture
def few_buckets(monkeypatch):
    """Reduction from 400 samples on, into 100 buckets: a short run has many samples per
    bucket, as a long one does with the figures' 1 000; chunks of 1 024 rows."""
    import plot_tool.line_reduction as reduction
    import plot_tool.results as results
    monkeypatch.setattr(reduction, "DRAWN_BUCKETS", 100)
    monkeypatch.setattr(reduction, "REDUCE_ABOVE", 400)
    monkeypatch.setattr(results, "STREAM_CHUNK_ROWS", 1024)


@pytest.mark.parametrize("case", ["lines", "aggregates"])
def test_streamed_lines_are_the_whole_lines_reduced(long_runs, case, few_buckets):
    """Streaming the traces in chunks gives exactly the lines of the whole tables, reduced."""
    directory = long_runs[case]
    whole = plan_figures(read_results(directory))
    streamed = plan_figures(read_results(directory, traces_in_memory=False))
    assert [job.filename for job in whole] == [job.filename for job in streamed]
    bucket_s = reduction_bucket_s(streamed[0].summary)
    assert bucket_s is not None
    reduced_any = False
    for full_job, job in zip(whole, streamed):
        assert [s.key for s in full_job.series] == [s.key for s in job.series]
        assert job.spec == full_job.spec
        for full, s in zip(full_job.series, job.series):
            expected = _reduce([full], bucket_s)
            np.testing.assert_array_equal(s.time, expected.time)
            for column in full.values:
                np.testing.assert_array_equal(s.values[column], expected.values[column])
                if full.low is not None:
                    np.testing.assert_array_equal(s.low[column], expected.low[column])
                    np.testing.assert_array_equal(s.high[column], expected.high[column])
                assert column_total(s, column) == pytest.approx(
                    float(np.nansum(full.values[column])), rel=1e-12, abs=1e-9)
            reduced_any |= len(s.time) < len(full.time)
            assert (s.members, s.label, s.directions) == (full.members, full.label, full.directions)
    assert reduced_any
    if case == "aggregates":
        assert any(s.members > 1 for job in streamed for s in job.series)


def test_a_trace_out_of_time_order_is_read_whole(long_runs, tmp_path, caplog, few_buckets):
    import shutil
    directory = tmp_path / "shuffled"
    shutil.copytree(long_runs["lines"], directory)
    path = directory / "flows.csv"
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([rows[0], *rows[1:][::-1]])       # last instant first
    with caplog.at_level(logging.INFO, logger="plot_tool.run_data"):
        jobs = plan_figures(read_results(directory, traces_in_memory=False))
    assert "read whole, not streamed (rows not in time order)" in caplog.text
    flows = next(job for job in jobs if job.filename == "flows.png")
    whole = next(job for job in plan_figures(read_results(long_runs["lines"]))
                 if job.filename == "flows.png")
    for full, s in zip(whole.series, flows.series):     # all of it, as from the ordered file
        np.testing.assert_array_equal(s.time, full.time)


def _plan_peak_bytes(directory) -> int:
    tracemalloc.start()
    try:
        plan_figures(read_results(directory, traces_in_memory=False))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_figures_memory_does_not_grow_with_the_run(tmp_path, few_buckets):
    """4x the simulated time (and rows): about the same peak memory while planning the
    figures (reading the whole tables takes about 4x)."""
    short = _run(tmp_path, "short", "--pairs", "1", duration=6, interval="0.005")
    long = _run(tmp_path, "long", "--pairs", "1", duration=24, interval="0.005")
    _plan_peak_bytes(short)                    # the modules imported, the caches filled
    short_bytes = _plan_peak_bytes(short)
    assert _plan_peak_bytes(long) < 1.3 * short_bytes

