"""Workload percentiles mean the same in every output: summary.json (and so the console and the
sweep metrics, which read it) and fct.png (numpy on fct.csv) both interpolate linearly between
order statistics; the summary's order statistics come from log histograms, within 6 %."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from initializer import main
from plot_tool import read_results
from plot_tool.fct_data import FCT_BUCKETS, fct_buckets, normalize_fct

WEBSEARCH = Path(__file__).resolve().parent.parent / "topologies" / "examples" / "websearch.json"
HISTOGRAM_RESOLUTION = 10 ** (1 / 40) - 1       # half a bucket of 20 per decade: 5.9 %


@pytest.fixture(scope="module")
def websearch(tmp_path_factory):
    """The shipped websearch example's results (the acceptance tester's case: 50 small flows,
    whose p99 slowdown was the maximum by nearest rank, 2848, against numpy's 1883)."""
    out = tmp_path_factory.mktemp("ws") / "out"
    assert main([str(WEBSEARCH), "--no-plots", "--quiet", "--out", str(out)]) == 0
    return read_results(out)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_the_summary_and_fct_png_give_the_same_percentiles(websearch):
    workload = websearch.summary["workloads"]["W"]
    buckets = fct_buckets(normalize_fct(websearch.fct), websearch.summary)
    assert {b.bucket for b in buckets} == {name for name, _ in FCT_BUCKETS}
    for bucket in buckets:
        summary = workload[bucket.bucket]
        assert summary["count"] == bucket.count
        assert summary["p50_slowdown"] == pytest.approx(bucket.p50, rel=HISTOGRAM_RESOLUTION)
        assert summary["p99_slowdown"] == pytest.approx(bucket.p99, rel=HISTOGRAM_RESOLUTION)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_the_summarys_fct_percentiles_are_numpys_on_fct_csv(websearch):
    fct_s = np.asarray(websearch.fct["fct_s"], dtype=float)
    fct_s = fct_s[np.isfinite(fct_s)]
    summary = websearch.summary["workloads"]["W"]["all"]
    assert summary["count"] == len(fct_s)
    for q in (50, 99):
        assert summary[f"p{q}_fct_s"] == pytest.approx(float(np.percentile(fct_s, q)),
                                                       rel=HISTOGRAM_RESOLUTION)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_small_buckets_p99_is_not_its_maximum(websearch):
    """Nearest rank on 50 or so flows took the largest; linear interpolation lies between the
    two largest (51 flows: halfway)."""
    small = websearch.summary["workloads"]["W"]["under_100kb"]
    slowdown = np.asarray(websearch.fct["slowdown"], dtype=float)
    size = np.asarray(websearch.fct["size_bytes"], dtype=float)
    mine = np.sort(slowdown[np.isfinite(slowdown) & (size < 100_000)])
    assert small["count"] == len(mine) >= 50 and mine[-1] > 1.05 * mine[-2]
    assert small["p99_slowdown"] < mine[-1] / (1 + HISTOGRAM_RESOLUTION)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_the_console_workload_line_is_the_summarys(tmp_path, capsys):
    out = tmp_path / "out"
    assert main([str(WEBSEARCH), "--no-plots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())["workloads"]["W"]["all"]
    line = next(line for line in printed.splitlines() if line.startswith("W "))
    mean, p50, p99 = (float(v) for v in line.split()[-3:])
    assert (mean, p50, p99) == pytest.approx((summary["mean_fct_s"], summary["p50_fct_s"],
                                              summary["p99_fct_s"]), abs=5e-5)
