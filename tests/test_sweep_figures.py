"""Tests of plot_tool.sweep_figures on a synthetic sweep directory (sweep.json + results.csv in the
format of docs/sweeps.md), with hand-computed expectations."""
from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from plot_tool.sweep_figures import (
    aggregate,
    aimd_average_window,
    axis_label,
    cubic_average_window,
    cubic_goodput_mbps,
    cubic_reno_friendly_window,
    draw_sweep_plot,
    make_sweep_figures,
    mathis_goodput_mbps,
    read_sweep,
    reno_average_window,
    sweep_units,
    t_quantile_975,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
LOSS = "links.L1.loss_rate"
ALGO = "flows.*.algorithm"
GOODPUT = "flows.F1.goodput_mbps"
PREDICTED = "check.0.L1.backlog_kb.predicted"
COLUMNS = ["run_id", "point", "seed", LOSS, ALGO, GOODPUT, "mean_queue_delay_ms", PREDICTED,
           "wall_time_s", "status", "error"]

# (loss, algorithm) -> goodputs of seeds 1, 2, 3. Written to results.csv in a scrambled order.
GOODPUTS = {
    (0.001, "reno"): [5.0, 6.0, 7.0],
    (0.01, "reno"): [1.0, 2.0, 4.0],
    (0.001, "cubic"): [8.0, 8.0, 8.0],
    (0.01, "cubic"): [3.0, 5.0, 7.0],
}
PREDICTIONS = {0.001: 10.0, 0.01: 20.0}     # check column: same per loss for every run


def _rows() -> list[dict]:
    rows = []
    point = 0
    for (loss, algo), values in GOODPUTS.items():
        for seed, value in enumerate(values, 1):
            rows.append({"run_id": f"p{point:04d}-s{seed}", "point": point, "seed": seed,
                         LOSS: loss, ALGO: algo, GOODPUT: value,
                         "mean_queue_delay_ms": 12.5 + seed, PREDICTED: PREDICTIONS[loss],
                         "wall_time_s": 0.5, "status": "ok", "error": ""})
        point += 1
    # two failed runs: metrics empty; one at a point that also has successful runs
    for seed in (4, 5):
        rows.append({"run_id": f"p0001-s{seed}", "point": 1, "seed": seed, LOSS: 0.01,
                     ALGO: "reno", GOODPUT: "", "mean_queue_delay_ms": "", PREDICTED: "",
                     "wall_time_s": 0.1, "status": "error",
                     "error": "ValueError: synthetic failure"})
    order = [3, 0, 13, 7, 1, 10, 4, 12, 2, 9, 5, 11, 6, 8]
    return [rows[i] for i in order]


PLOTS = [
    {"file": "goodput.png", "x": LOSS, "y": GOODPUT, "lines": ALGO, "logx": True, "logy": True,
     "title": None, "error_bars": "std",
     "theory": {"model": "mathis", "mss_bytes": 1000, "rtt_ms": 100,
                "units_bits_per_mbit": 1e6}},
    {"file": "goodput_cubic.png", "x": LOSS, "y": GOODPUT, "lines": None, "logx": True,
     "logy": False, "title": "CUBIC vs theory", "error_bars": "ci95",
     "theory": {"model": "cubic", "mss_bytes": 1000, "rtt_ms": 100, "C": 0.4, "beta": 0.7,
                "units_bits_per_mbit": 1e6}},
    {"file": "capacity.png", "x": LOSS, "y": GOODPUT, "lines": ALGO, "logx": False,
     "logy": False, "title": None, "error_bars": "none",
     "theory": {"model": "capacity", "mbps": 10}},
    {"file": "backlog.png", "x": LOSS, "y": GOODPUT, "lines": ALGO, "logx": False,
     "logy": False, "title": None, "error_bars": "std",
     "theory": {"model": "column", "y": PREDICTED}},
    {"file": "by_algorithm.png", "x": ALGO, "y": "mean_queue_delay_ms", "lines": None,
     "logx": False, "logy": False, "title": None, "error_bars": "std", "theory": None},
]


def _write_sweep(directory: Path, rows: list[dict], plots: list[dict]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    sweep = {"name": "synthetic", "topology": "topologies/lossy_link.json",
             "parameters": {LOSS: [0.001, 0.01], ALGO: ["reno", "cubic"]}, "seeds": 3,
             "metrics": [GOODPUT, "mean_queue_delay_ms", PREDICTED], "plots": plots}
    (directory / "sweep.json").write_text(json.dumps(sweep, indent=2))
    with open(directory / "results.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return directory


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    return _write_sweep(tmp_path / "sweep", _rows(), PLOTS)


@pytest.fixture
def csv_rows(sweep_dir: Path) -> list[dict]:
    return read_sweep(sweep_dir)[1]


def _draw(plot: dict, rows: list[dict], units: dict | None = None):
    fig = Figure(figsize=(8, 5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = draw_sweep_plot(fig, plot, rows, units=units)
    fig.canvas.draw()
    return fig, ax


# --- aggregation ---------------------------------------------------------------------------------


def test_aggregate_means_and_std_by_hand(csv_rows: list[dict]) -> None:
    series = aggregate(csv_rows, LOSS, GOODPUT, ALGO, "std")
    assert [s.line for s in series] == ["reno", "cubic"]   # first appearance, not alphabetical
    reno, cubic = series
    np.testing.assert_array_equal(reno.x, [0.001, 0.01])       # sorted although rows are not
    np.testing.assert_allclose(reno.mean, [6.0, 7.0 / 3.0], rtol=1e-15)
    # seeds 5, 6, 7: deviations -1, 0, 1 -> s^2 = 2/2 = 1; seeds 1, 2, 4: mean 7/3, deviations
    # -4/3, -1/3, 5/3 -> squares 42/9, s^2 = 21/9 = 7/3
    np.testing.assert_allclose(reno.lower, [1.0, math.sqrt(7.0 / 3.0)], rtol=1e-14)
    np.testing.assert_allclose(reno.upper, reno.lower, rtol=0)
    np.testing.assert_array_equal(reno.n, [3, 3])              # the failed runs are not counted
    np.testing.assert_allclose(cubic.mean, [8.0, 5.0], rtol=1e-15)
    np.testing.assert_allclose(cubic.lower, [0.0, 2.0], atol=1e-15)   # 3, 5, 7: s = 2


def test_aggregate_ci95_by_hand(csv_rows: list[dict]) -> None:
    reno = aggregate(csv_rows, LOSS, GOODPUT, ALGO, "ci95")[0]
    t2 = 4.302652730                       # Student t, 0.975 quantile, 2 degrees of freedom
    np.testing.assert_allclose(reno.lower, [t2 * 1.0 / math.sqrt(3),
                                            t2 * math.sqrt(7.0 / 3.0) / math.sqrt(3)],
                               rtol=1e-9)
    none = aggregate(csv_rows, LOSS, GOODPUT, ALGO, "none")[0]
    np.testing.assert_array_equal(none.lower, [0.0, 0.0])
    np.testing.assert_array_equal(none.upper, [0.0, 0.0])


def test_aggregate_without_lines_pools_everything(csv_rows: list[dict]) -> None:
    (pooled,) = aggregate(csv_rows, LOSS, GOODPUT, None)
    assert pooled.line is None
    np.testing.assert_allclose(pooled.mean, [(18 + 24) / 6, (7 + 15) / 6], rtol=1e-15)
    np.testing.assert_array_equal(pooled.n, [6, 6])
    expected = np.std([5, 6, 7, 8, 8, 8], ddof=1)
    assert pooled.lower[0] == pytest.approx(expected, rel=1e-14)


def test_aggregate_single_run_has_no_error_bar() -> None:
    rows = [{"x": "1", "y": "2.5", "status": "ok"}, {"x": "2", "y": "3.5", "status": "ok"}]
    (s,) = aggregate(rows, "x", "y", None, "ci95")
    np.testing.assert_array_equal(s.mean, [2.5, 3.5])
    np.testing.assert_array_equal(s.lower, [0.0, 0.0])
    np.testing.assert_array_equal(s.n, [1, 1])


def test_aggregate_ignores_error_rows_and_empty_values() -> None:
    rows = [{"x": "1", "y": "2", "status": "ok"},
            {"x": "1", "y": "4", "status": "ok"},
            {"x": "1", "y": "", "status": "error"},
            {"x": "1", "y": "1000", "status": "error"},   # a value on a failed row: still ignored
            {"x": "1", "y": "", "status": "ok"},          # ok, without a value: left out
            {"x": "1", "y": "nan", "status": "ok"}]
    (s,) = aggregate(rows, "x", "y")
    np.testing.assert_array_equal(s.mean, [3.0])
    np.testing.assert_array_equal(s.n, [2])


def test_aggregate_numeric_lines_sorted_and_numbers_accepted() -> None:
    rows = [{"x": 2, "y": 1.0, "b": 64, "status": "ok"},
            {"x": 1, "y": 2.0, "b": 16, "status": "ok"},
            {"x": 1, "y": 3.0, "b": 64.0, "status": "ok"}]
    series = aggregate(rows, "x", "y", "b")
    assert [s.line for s in series] == [16.0, 64.0]
    assert [s.label for s in series] == ["16", "64"]
    np.testing.assert_array_equal(series[1].x, [1.0, 2.0])
    np.testing.assert_array_equal(series[1].mean, [3.0, 1.0])


def test_aggregate_string_x_keeps_first_appearance(csv_rows: list[dict]) -> None:
    (s,) = aggregate(csv_rows, ALGO, "mean_queue_delay_ms", None, "std")
    assert s.x.tolist() == ["reno", "cubic"]   # the first data row is a reno run: not alphabetical
    np.testing.assert_allclose(s.mean, [14.5, 14.5])  # 12.5 + seed, seeds 1..3 twice
    np.testing.assert_array_equal(s.n, [6, 6])


def test_aggregate_errors(csv_rows: list[dict]) -> None:
    with pytest.raises(ValueError, match="error_bars"):
        aggregate(csv_rows, LOSS, GOODPUT, ALGO, "sem")
    with pytest.raises(ValueError, match=r'no column "flows.F1.goodput_mbp".*did you mean '
                                         r'"flows.F1.goodput_mbps"'):
        aggregate(csv_rows, LOSS, "flows.F1.goodput_mbp")
    with pytest.raises(ValueError, match="run r1.*expected a number"):
        aggregate([{"run_id": "r1", "x": "1", "y": "fast", "status": "ok"}], "x", "y")


def test_t_quantile_matches_tables() -> None:
    # two-sided 95 % values of the usual printed tables (3 decimals)
    for df, value in [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228),
                      (20, 2.086), (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980)]:
        assert t_quantile_975(df) == pytest.approx(value, abs=5e-4), df
    assert t_quantile_975(10 ** 6) == pytest.approx(1.959964, abs=1e-5)
    values = [t_quantile_975(df) for df in range(1, 200)]
    assert all(a > b for a, b in zip(values, values[1:]))       # decreasing, smooth at 30/31
    with pytest.raises(ValueError):
        t_quantile_975(0)


# --- theory curves -------------------------------------------------------------------------------


def test_mathis_by_hand() -> None:
    # MSS 1000 B, RTT 0.1 s, p = 0.01: (8000 bit / 0.1 s) * sqrt(3/2) / 0.1 = 80000 * sqrt(150)
    expected_bps = 80000.0 * math.sqrt(150.0)
    assert mathis_goodput_mbps(0.01, 1000, 0.1, 1e6) == pytest.approx(expected_bps / 1e6,
                                                                      rel=1e-14)
    assert mathis_goodput_mbps(0.01, 1000, 0.1, 2 ** 20) == pytest.approx(expected_bps / 2 ** 20,
                                                                          rel=1e-14)
    assert isinstance(mathis_goodput_mbps(0.01, 1000, 0.1), float)
    p = np.array([0.0001, 0.01, 0.0])
    values = mathis_goodput_mbps(p, 1024, 0.04, 1e6)
    rate = 1024 * 8 / 0.04 * math.sqrt(1.5)
    np.testing.assert_allclose(values[:2], [rate / 0.01 / 1e6, rate / 0.1 / 1e6], rtol=1e-14)
    assert math.isnan(values[2])                      # p = 0: no finite prediction
    assert reno_average_window(0.01) == pytest.approx(math.sqrt(150.0), rel=1e-14)


def test_cubic_by_hand() -> None:
    C, beta, rtt, mss = 0.4, 0.7, 0.1, 1000
    # cubic region: p = 1e-4 -> ((0.4 * 3.7) / (4 * 0.3))^(1/4) * 0.1^(3/4) / 1e-4^(3/4)
    factor = (1.48 / 1.2) ** 0.25
    window = factor * 0.1 ** 0.75 / 1e-4 ** 0.75
    assert window == pytest.approx(187.4, abs=0.05)                     # RFC 9438 Table 1
    assert cubic_average_window(1e-4, rtt, C, beta) == pytest.approx(window, rel=1e-14)
    assert window > math.sqrt(1.5e4)                                    # above Reno's 122.5
    assert cubic_goodput_mbps(1e-4, mss, rtt, C, beta, 1e6) == pytest.approx(
        window * mss * 8 / rtt / 1e6, rel=1e-14)
    # Reno-friendly region: p = 0.01 -> cubic window 5.93 < sqrt(3 / (2 * 0.01)) = 12.25
    assert cubic_average_window(0.01, rtt, C, beta) == pytest.approx(
        factor * 0.1 ** 0.75 / 0.01 ** 0.75, rel=1e-14)
    assert cubic_average_window(0.01, rtt, C, beta) < 6.0
    alpha = 3 * (1 - beta) / (1 + beta)
    assert cubic_reno_friendly_window(0.01, beta) == pytest.approx(
        math.sqrt(alpha * (1 + beta) / (2 * (1 - beta) * 0.01)), rel=1e-14)
    assert cubic_reno_friendly_window(0.01, beta) == pytest.approx(math.sqrt(150.0), rel=1e-14)
    assert cubic_goodput_mbps(0.01, mss, rtt, C, beta, 1e6) == pytest.approx(
        80000.0 * math.sqrt(150.0) / 1e6, rel=1e-14)                    # = Mathis there
    assert aimd_average_window(0.01, 1.0, 0.5) == pytest.approx(math.sqrt(150.0), rel=1e-14)


@pytest.mark.parametrize("rtt, table", [
    # RFC 9438 Section 5.1, CUBIC (C = 0.4) column where the cubic window dominates
    (0.1, {1e-4: 187, 1e-5: 1054, 1e-6: 5926, 1e-7: 33325, 1e-8: 187400}),
    (0.01, {1e-7: 5926, 1e-8: 33325}),
])
def test_cubic_matches_rfc_tables(rtt: float, table: dict) -> None:
    for p, window in table.items():
        rate = cubic_goodput_mbps(p, 1500, rtt, 0.4, 0.7, 1e6)
        assert rate * 1e6 * rtt / (1500 * 8) == pytest.approx(window, rel=3e-3), p


# --- figures -------------------------------------------------------------------------------------


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_make_sweep_figures_writes_pngs(sweep_dir: Path) -> None:
    paths = make_sweep_figures(sweep_dir)
    assert paths == [sweep_dir / p["file"] for p in PLOTS]
    for path in paths:
        data = path.read_bytes()
        assert data[:8] == PNG_SIGNATURE, path
        assert len(data) > 5000, path


def test_make_sweep_figures_without_plots(tmp_path: Path) -> None:
    directory = _write_sweep(tmp_path / "empty", _rows(), [])
    assert make_sweep_figures(directory) == []


def test_missing_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="sweep.json"):
        make_sweep_figures(tmp_path)


def test_lines_markers_errorbars_and_footnote(csv_rows: list[dict]) -> None:
    fig, ax = _draw(PLOTS[0], csv_rows)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_title() == "F1 goodput vs L1 loss rate"
    assert ax.get_xlabel() == "L1 loss rate = loss probability p"
    assert ax.get_ylabel() == "F1 goodput (Mbps)"
    (legend,) = fig.legends
    assert legend.get_title().get_text() == "algorithm"
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:2] == ["reno", "cubic"]
    assert labels[2].startswith("Mathis")
    data_lines = [l for l in ax.lines if l.get_marker() == "o"]
    assert len(data_lines) == 2
    np.testing.assert_allclose(data_lines[0].get_ydata(), [6.0, 7.0 / 3.0])
    assert data_lines[0].get_color() != data_lines[1].get_color()
    footnotes = [t.get_text() for t in fig.texts]
    assert any("2 runs failed (of 14)" in t for t in footnotes)
    assert any("standard deviation" in t for t in footnotes)


def test_single_failure_footnote(tmp_path: Path) -> None:
    rows = [r for r in _rows() if r["run_id"] != "p0001-s5"]
    fig, _ = _draw(PLOTS[2], [{k: str(v) for k, v in r.items()} for r in rows])
    assert any("1 run failed (of 13)" in t.get_text() for t in fig.texts)


def test_footnote_explains_markers_and_error_bars_without_failures(csv_rows: list[dict]) -> None:
    """Issue 23: the PNG says what a marker and an error bar are, even when nothing failed."""
    ok_rows = [r for r in csv_rows if r["status"] == "ok"]
    fig, _ = _draw(PLOTS[0], ok_rows)
    (note,) = [t.get_text().replace("\n", " ") for t in fig.texts]    # (wrapped to fit)
    groups = [(r[ALGO], r[LOSS]) for r in ok_rows if r[GOODPUT]]
    counts = {groups.count(g) for g in groups}
    runs = f"{min(counts)}\u2013{max(counts)} runs" if len(counts) > 1 else f"{min(counts)} runs"
    assert note == (f"markers: mean of {runs} per point (seeds and parameters not on the "
                    "axes); error bars: \u00b11 standard deviation of those runs")
    assert "failed" not in note


def test_mathis_overlay_values(csv_rows: list[dict]) -> None:
    _, ax = _draw(PLOTS[0], csv_rows)
    (curve,) = [l for l in ax.lines if l.get_linestyle() == "--"]
    assert curve.get_color() == "black"
    p = curve.get_xdata()
    assert p[0] == pytest.approx(0.001) and p[-1] == pytest.approx(0.01)
    assert np.all(np.diff(np.log(p)) == pytest.approx(np.log(10) / (len(p) - 1)))  # geometric
    np.testing.assert_allclose(curve.get_ydata(),
                               8000 / 0.1 * math.sqrt(1.5) / np.sqrt(p) / 1e6, rtol=1e-12)


def test_cubic_overlay_and_ci95(csv_rows: list[dict]) -> None:
    fig, ax = _draw(PLOTS[1], csv_rows)
    assert ax.get_title() == "CUBIC vs theory"
    (curve,) = [l for l in ax.lines if l.get_linestyle() == "--"]
    p = curve.get_xdata()
    np.testing.assert_allclose(curve.get_ydata(),
                               cubic_goodput_mbps(p, 1000, 0.1, 0.4, 0.7, 1e6), rtol=1e-14)
    assert any("95 % confidence" in t.get_text() for t in fig.texts)


def test_capacity_overlay(csv_rows: list[dict]) -> None:
    fig, ax = _draw(PLOTS[2], csv_rows)
    (line,) = [l for l in ax.lines if l.get_linestyle() == "--"]
    np.testing.assert_array_equal(line.get_ydata(), [10, 10])
    assert line.get_color() == "black"
    assert "capacity 10 Mbps" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert ax.get_xscale() == "linear"


def test_column_overlay_in_line_colours(csv_rows: list[dict]) -> None:
    fig, ax = _draw(PLOTS[3], csv_rows)
    solid = [l for l in ax.lines if l.get_marker() == "o"]
    dashed = [l for l in ax.lines if l.get_linestyle() == "--"]
    assert len(solid) == len(dashed) == 2
    for data, predicted in zip(solid, dashed):
        assert predicted.get_color() == data.get_color()
        np.testing.assert_array_equal(predicted.get_xdata(), [0.001, 0.01])
        np.testing.assert_array_equal(predicted.get_ydata(), [10.0, 20.0])
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["reno", "cubic", "reno: L1 backlog, predicted",
                      "cubic: L1 backlog, predicted"]
    # every line drawn has a legend entry in its colour and style
    handles = fig.legends[0].legend_handles
    assert [h.get_color() for h in handles[2:]] == [l.get_color() for l in dashed]
    assert all(h.get_linestyle() == "--" for h in handles[2:])


def test_categorical_x(csv_rows: list[dict]) -> None:
    fig, ax = _draw(PLOTS[4], csv_rows)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["reno", "cubic"]
    assert ax.get_ylabel() == "mean queueing delay (ms)"
    assert ax.get_xlabel() == "algorithm"
    (container,) = ax.containers
    assert container.lines[0].get_linestyle() == "None"      # categories are never joined
    np.testing.assert_array_equal(container.lines[0].get_xdata(), [0, 1])
    assert not fig.legends                              # one line, no theory: no legend
    bad = dict(PLOTS[4], theory={"model": "mathis", "mss_bytes": 1000, "rtt_ms": 100,
                                 "units_bits_per_mbit": 1e6})
    with pytest.raises(ValueError, match="numeric"):
        _draw(bad, csv_rows)


def test_all_runs_failed_still_draws(tmp_path: Path) -> None:
    rows = [r for r in _rows() if r["status"] == "error"]
    directory = _write_sweep(tmp_path / "failed", rows, PLOTS[:1])
    (path,) = make_sweep_figures(directory)
    assert path.read_bytes()[:8] == PNG_SIGNATURE


def test_axis_labels_and_units(tmp_path: Path) -> None:
    binary = {"system": "binary", "bits_per_mbit": 1048576}
    assert axis_label("flows.F1.goodput_mbps") == "F1 goodput (Mbps)"
    assert axis_label("total_goodput_mbps", binary) == "total goodput (Mbps, binary)"
    assert axis_label("mean_queue_delay_ms", binary) == "mean queueing delay (ms)"
    assert axis_label(PREDICTED) == "L1 backlog, predicted (KB)"
    assert axis_label("links.L1.directions.R1->R2.avg_buffer_kb", binary) == \
        "L1 R1->R2 average buffer (KB, binary)"
    assert axis_label("flows.F1.finish_s") == "F1 completion time (s)"
    assert axis_label(LOSS) == "L1 loss rate"
    assert axis_label("links.L1.impairments.H1->H2.loss_rate") == "L1 H1->H2 loss rate"
    assert axis_label("jain_index") == "Jain's fairness index"
    assert axis_label("flows.*.algorithm") == "algorithm"
    assert axis_label("flows.F1.avg_rtt_ms") == "F1 average RTT (ms)"
    assert axis_label("algorithms.fast.alpha") == "FAST alpha"
    assert axis_label("links.*.delay_ms") == "link delay (ms)"
    assert axis_label("transport.min_rto_s") == "min RTO (s)"
    assert axis_label("check.max_error_pct") == "largest error vs the model (%)"
    # units: a summary.json in the sweep directory (or below); never the topology file the
    # sweep names (figures read results directories only)
    directory = _write_sweep(tmp_path / "units", _rows(), PLOTS)
    topology = tmp_path / "binary.json"
    topology.write_text(json.dumps({"units": "binary"}))
    sweep = json.loads((directory / "sweep.json").read_text())
    sweep["topology"] = str(topology)
    (directory / "sweep.json").write_text(json.dumps(sweep))
    assert sweep_units(directory) == {}
    (directory / "runs" / "p0000-s1").mkdir(parents=True)
    (directory / "runs" / "p0000-s1" / "summary.json").write_text(
        json.dumps({"units": {"system": "si", "bits_per_mbit": 1000000}}))
    assert sweep_units(directory)["system"] == "si"


def test_units_come_from_the_run_records_and_only_regular_files_are_read(tmp_path) -> None:
    import os
    directory = _write_sweep(tmp_path / "units", _rows(), PLOTS)
    os.mkfifo(directory / "summary.json")          # read, a pipe would block for ever
    (directory / "notes").mkdir()
    (directory / "notes" / "summary.json").symlink_to("/dev/zero")    # or never end
    assert sweep_units(directory) == {}
    (directory / "runs").mkdir(exist_ok=True)
    binary = {"system": "binary", "bits_per_mbit": 1048576}
    (directory / "runs" / "ab12.json").write_text(json.dumps({"summary": {"units": binary}}))
    assert sweep_units(directory) == binary


def test_binary_units_default_for_theory(csv_rows: list[dict]) -> None:
    theory = {"model": "mathis", "mss_bytes": 1000, "rtt_ms": 100}   # no units_bits_per_mbit
    plot = dict(PLOTS[0], theory=theory)
    _, ax = _draw(plot, csv_rows, units={"system": "binary", "bits_per_mbit": 2 ** 20})
    (curve,) = [l for l in ax.lines if l.get_linestyle() == "--"]
    np.testing.assert_allclose(curve.get_ydata()[0],
                               mathis_goodput_mbps(0.001, 1000, 0.1, 2 ** 20), rtol=1e-14)
    assert ax.get_ylabel() == "F1 goodput (Mbps, binary)"


# --- labels, categories, layout ------------------------------------------------------------------


def test_axis_labels_from_the_plot_fields(csv_rows: list[dict]) -> None:
    plot = dict(PLOTS[0], xlabel="random loss p", ylabel="goodput of F1 (Mb/s)",
                title="My title")
    _, ax = _draw(plot, csv_rows)
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == \
        ("random loss p", "goodput of F1 (Mb/s)", "My title")


def test_categorical_x_with_lines_draws_side_by_side_points(csv_rows: list[dict]) -> None:
    plot = {"file": "c.png", "x": ALGO, "y": GOODPUT, "lines": LOSS}
    fig, ax = _draw(plot, csv_rows)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["reno", "cubic"]
    assert len(ax.containers) == 2
    xs = []
    for container in ax.containers:
        data = container.lines[0]
        assert data.get_linestyle() == "None" and data.get_marker() == "o"
        xs.append(data.get_xdata())
    # each category holds one marker per line, side by side around the category's position
    np.testing.assert_allclose(xs[0], [-0.075, 0.925])
    np.testing.assert_allclose(xs[1], [0.075, 1.075])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["0.001", "0.01"]
    assert fig.legends[0].get_title().get_text() == "L1 loss rate"


def test_the_report_draws_categories_side_by_side_from_zero_as_the_figure(csv_rows) -> None:
    """report.html drew a category's series on top of each other, and its y axis went below 0
    with the error bars (plotly's rangemode tozero only includes 0)."""
    pytest.importorskip("plotly")
    from plot_tool.report_sweep import sweep_chart
    plot = {"file": "c.png", "x": ALGO, "y": GOODPUT, "lines": LOSS, "error_bars": "ci95"}
    fig, ax = _draw(plot, csv_rows)
    chart = sweep_chart(plot, csv_rows, {})
    series = [t for t in chart["traces"] if t.get("mode") == "markers"]
    png_x = [container.lines[0].get_xdata() for container in ax.containers]
    for trace, xs in zip(series, png_x, strict=True):
        np.testing.assert_allclose(trace["x"], xs)
        assert trace["text"] == ["reno", "cubic"] and "%{text}" in trace["hovertemplate"]
    xaxis, yaxis = chart["layout"]["xaxis"], chart["layout"]["yaxis"]
    assert xaxis["ticktext"] == ["reno", "cubic"] and xaxis["tickvals"] == [0, 1]
    assert yaxis["range"][0] == 0 and yaxis["range"][1] == pytest.approx(ax.get_ylim()[1])
    assert min(m - lo for t in series for m, lo in zip(t["y"], t["error_y"]["arrayminus"])) < 0


def test_a_long_title_never_overlaps_the_legend(csv_rows: list[dict]) -> None:
    title = ("FAST on test case 2: L1 backlog (F1+F2+F3 active) vs alpha, with a title long "
             "enough to run into any legend placed beside the axes")
    fig, ax = _draw(dict(PLOTS[3], title=title), csv_rows)
    renderer = fig.canvas.get_renderer()
    title_box = ax.title.get_window_extent(renderer)
    legend_box = fig.legends[0].get_window_extent(renderer)
    assert not title_box.overlaps(legend_box)
    assert title_box.x1 <= ax.get_window_extent(renderer).x1 + 1
    assert ax.get_title().replace("\n", " ") == title        # wrapped, not cut


def test_reference_lines_carry_their_label(csv_rows: list[dict]) -> None:
    theory = {"model": "fair_share", "link": "LB", "mbps": 5.0,
              "label": "fair share 5 Mbps (LB 10 Mbps / 2 flows)"}
    fig, ax = _draw(dict(PLOTS[2], theory=theory), csv_rows)
    (line,) = [l for l in ax.lines if l.get_linestyle() == "--"]
    np.testing.assert_array_equal(line.get_ydata(), [5, 5])
    texts = [t.get_text().replace("\n", " ") for t in fig.legends[0].get_texts()]
    assert "fair share 5 Mbps (LB 10 Mbps / 2 flows)" in texts
    assert not any(t.startswith("capacity") for t in texts)


def test_theory_label_names_the_topology_settings(csv_rows: list[dict]) -> None:
    theory = {"model": "mathis", "flow": "F1", "mss_bytes": 1500, "rtt_ms": 20.1232,
              "base_rtt_ms": 20.1232, "units_bits_per_mbit": 1e6}
    fig, ax = _draw(dict(PLOTS[0], theory=theory), csv_rows)
    texts = [t.get_text().replace("\n", " ") for t in fig.legends[0].get_texts()]
    assert "Mathis et al. (MSS 1500 B, base RTT 20.1 ms)" in texts
    (curve,) = [l for l in ax.lines if l.get_linestyle() == "--"]
    np.testing.assert_allclose(curve.get_ydata(),
                               mathis_goodput_mbps(curve.get_xdata(), 1500, 0.0201232, 1e6))


@pytest.mark.parametrize("name", ["sub/x.png", "../x.png", "/tmp/x.png", "x.svg", ""])
def test_plot_files_stay_in_the_sweep_directory(tmp_path: Path, name: str) -> None:
    directory = _write_sweep(tmp_path / "s", _rows(), [dict(PLOTS[0], file=name)])
    with pytest.raises(ValueError, match="plain .png file name"):
        make_sweep_figures(directory)
    assert not list(tmp_path.rglob("x.*"))


def test_predicted_bands_each_match_a_legend_entry(csv_rows: list[dict]) -> None:
    """Vegas predictions are intervals: one band per line, each told apart by dashed edges in its
    line's colour (overlapping translucent fills would blend into a colour no entry has)."""
    low, high = "check.0.L1.backlog_kb.predicted_low", "check.0.L1.backlog_kb.predicted_high"
    rows = [dict(r, **{low: 2.0 + float(r[LOSS]) * 100, high: 4.0 + float(r[LOSS]) * 100})
            for r in csv_rows]
    plot = dict(PLOTS[3], theory={"model": "band", "low": low, "high": high})
    fig, ax = _draw(plot, rows)
    data = [l for l in ax.lines if l.get_marker() == "o"]
    edges = [l for l in ax.lines if l.get_linestyle() == "--"]
    assert len(edges) == 4                                     # low and high edge per line
    assert [e.get_color() for e in edges] == [data[0].get_color()] * 2 + \
        [data[1].get_color()] * 2
    np.testing.assert_allclose(edges[0].get_ydata(), [2.1, 3.0])
    np.testing.assert_allclose(edges[1].get_ydata(), [4.1, 5.0])
    from matplotlib.collections import PolyCollection
    fills = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(fills) == 2 and all(f.get_facecolor()[0][3] < 0.1 for f in fills)
    legend = fig.legends[0]
    texts = [t.get_text().replace("\n", " ") for t in legend.get_texts()]
    assert texts == ["reno", "cubic", "reno: L1 backlog, predicted range",
                     "cubic: L1 backlog, predicted range"]
    patches = legend.get_patches()
    assert [tuple(p.get_edgecolor()[:3]) for p in patches] == \
        [tuple(int(d.get_color()[i:i + 2], 16) / 255 for i in (1, 3, 5)) for d in data]


# --- issue 23: y axes from zero, every x value labelled, the same data for the report ------------


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_y_axis_from_zero_unless_the_plot_says_otherwise(csv_rows: list[dict]) -> None:
    linear = dict(PLOTS[2], theory=None)                  # capacity plot, linear axes
    _, ax = _draw(linear, csv_rows)
    assert ax.get_ylim()[0] == 0
    top = max(max(v) for v in GOODPUTS.values())
    assert top < ax.get_ylim()[1] <= top * 1.06
    _, ax = _draw(dict(linear, y_from_zero=False), csv_rows)
    assert ax.get_ylim()[0] > 0                           # the data's lowest mean is 2.33
    _, ax = _draw(PLOTS[0], csv_rows)                     # log y: never from zero
    assert ax.get_ylim()[0] > 0


def test_every_swept_x_value_has_a_labelled_tick(tmp_path: Path) -> None:
    """0.001, 0.002 and 0.04 on a linear axis: every value a tick, close ones on rows of their
    own (no two labels overlap); on a log axis 0.04 (not 1, 2 or 5 of a decade) is labelled."""
    from matplotlib.transforms import Bbox

    losses = [0.001, 0.002, 0.005, 0.01, 0.02, 0.04]
    rows = [{"run_id": f"p{i}-s1", "point": str(i), "seed": "1", LOSS: str(p), ALGO: "reno",
             GOODPUT: str(10 - i), "status": "ok"} for i, p in enumerate(losses)]
    for logx in (False, True):
        fig, ax = _draw({"file": "g.png", "x": LOSS, "y": GOODPUT, "logx": logx}, rows)
        np.testing.assert_allclose(ax.get_xticks(), losses)
        labels = [t for t in ax.get_xticklabels() if t.get_text()]
        assert [t.get_text().strip() for t in labels] == ["0.001", "0.002", "0.005", "0.01",
                                                          "0.02", "0.04"]
        renderer = fig.canvas.get_renderer()
        boxes = []                    # the visible line of each label (the last one)
        for t in labels:
            box = t.get_window_extent(renderer)
            lines = t.get_text().count("\n") + 1
            boxes.append(Bbox([[box.x0, box.y0], [box.x1, box.y0 + box.height / lines]]))
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not a.overlaps(b)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_png_and_report_draw_the_same_overlays(csv_rows: list[dict]) -> None:
    """The theory overlays are computed once (plot_tool.sweep_data): the PNG's dashed lines and
    the report's traces have the same labels and values."""
    pytest.importorskip("plotly")
    from plot_tool.report_sweep import sweep_chart

    for plot in PLOTS[:4]:
        _, ax = _draw(plot, csv_rows)
        png = {line.get_label(): np.asarray(line.get_ydata(), dtype=float)
               for line in ax.lines if line.get_linestyle() == "--"}
        chart = sweep_chart(plot, csv_rows, {})
        report = {t["name"]: np.asarray(t["y"], dtype=float) for t in chart["traces"]
                  if (t.get("line") or {}).get("dash") == "dash"}
        assert set(png) == set(report) and png
        for label, values in png.items():
            if len(values) == len(report[label]):
                np.testing.assert_allclose(report[label], values, rtol=1e-5)
        assert chart["note"] == [t.get_text().replace("\n", " ") for t in ax.figure.texts][0]


def test_a_model_curve_over_text_x_is_one_error_in_both_backends(csv_rows: list[dict]) -> None:
    pytest.importorskip("plotly")
    from plot_tool.report_sweep import sweep_chart

    plot = dict(PLOTS[4], theory=PLOTS[0]["theory"])
    message = 'theory "mathis": the x parameter \'flows.*.algorithm\' must be numeric'
    with pytest.raises(ValueError, match=re.escape(message)):
        _draw(plot, csv_rows)
    with pytest.raises(ValueError, match=re.escape(message)):
        sweep_chart(plot, csv_rows, {})


def test_sweep_files_accept_y_from_zero_as_true_or_false(tmp_path: Path) -> None:
    from netsim.sweep_file import load_sweep
    from netsim.sweep_parameters import SweepError

    def sweep_file(value: object) -> Path:
        path = tmp_path / "s.json"
        path.write_text(json.dumps({
            "name": "s", "topology": "lossy_link", "duration_s": 1,
            "parameters": {"links.L1.impairments.H1->H2.loss_rate": [0.01]},
            "metrics": ["flows.F1.goodput_mbps"],
            "plots": [{"file": "g.png", "x": "links.L1.impairments.H1->H2.loss_rate",
                       "y": "flows.F1.goodput_mbps", "y_from_zero": value}]}))
        return path

    assert load_sweep(sweep_file(False)).resolved_plots[0]["y_from_zero"] is False
    with pytest.raises(SweepError, match='plots\\[0\\]: field "y_from_zero": expected true or false'):
        load_sweep(sweep_file("no"))


def test_points_a_log_axis_cannot_show_are_counted_in_the_footnote():
    """x = 0 on a logarithmic x axis, or a mean of 0 on a logarithmic y axis, was left out of the
    figure and the report silently (a 0 tick missing, stubs of line towards the hidden point)."""
    from plot_tool.sweep_data import plot_data
    rows = [dict(row) for row in _rows() if row["status"] == "ok"]
    for row in rows:
        if row[LOSS] == 0.001:
            row[LOSS] = 0.0
        if row[ALGO] == "cubic" and row[LOSS] == 0.01:
            row[GOODPUT] = 0.0
    base = {"file": "g.png", "x": LOSS, "y": GOODPUT, "lines": ALGO}
    data = plot_data(dict(base, logx=True), rows)
    assert [s.x.tolist() for s in data.series] == [[0.01], [0.01]] and data.x_ticks == [0.01]
    assert data.footnote.endswith("; 2 points with L1 loss rate \u2264 0 not drawn "
                                  "(logarithmic x axis)")
    data = plot_data(dict(base, logx=True, logy=True), rows)
    cubic = data.series[1]                       # its only point left is 0: a gap, not a line
    assert cubic.label == "cubic" and np.isnan(cubic.mean).all() and np.isnan(cubic.upper).all()
    assert data.footnote.endswith("; 2 points with L1 loss rate \u2264 0 not drawn (logarithmic "
                                  "x axis); 1 point with a mean F1 goodput \u2264 0 not drawn "
                                  "(logarithmic y axis)")
    assert "not drawn" not in plot_data(base, rows).footnote   # linear axes show every point


def test_the_reports_sweep_strings_are_not_read_as_markup(csv_rows) -> None:
    pytest.importorskip("plotly")
    from plot_tool.report_sweep import sweep_chart
    rows = [dict(row, **{ALGO: "<b>reno</b>&amp;"}) if row[ALGO] == "reno" else row
            for row in csv_rows]
    chart = sweep_chart({"file": "c.png", "x": ALGO, "y": GOODPUT, "lines": LOSS,
                         "title": "a <a href='x'>title</a>"}, rows, {})
    assert chart["layout"]["xaxis"]["ticktext"] == ["&lt;b&gt;reno&lt;/b&gt;&amp;amp;", "cubic"]
    assert chart["layout"]["title"]["text"] == "a &lt;a href='x'&gt;title&lt;/a&gt;"
    assert chart["title"] == "a <a href='x'>title</a>"        # (the page's heading: its text)


def test_a_mean_on_the_axis_keeps_its_whole_marker() -> None:
    """A category whose mean is 0, on a y axis from zero, was drawn as half a marker, clipped
    by the axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    rows = [{"run_id": f"r{i}", "status": "ok", "error": "", "a": alg, "y": str(v)}
            for i, (alg, v) in enumerate([("reno", 0), ("cubic", 3), ("bbr", 0)])]
    fig = Figure(figsize=(8.0, 5.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = draw_sweep_plot(fig, {"file": "t.png", "x": "a", "y": "y"}, rows)
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert markers and all(not line.get_clip_on() for line in markers)
    assert ax.get_ylim()[0] == 0.0


@pytest.mark.parametrize("p, rtt_s, expected", [
    ([0.001, 0.03], 0.0201, "; Reno-friendly region at every p shown: Reno's rate"),
    ([1e-6, 1e-5], 0.2, ""),                                      # the cubic region throughout
    ([1e-6, 0.03], 0.1, "; Reno-friendly region (Reno's rate) for p from "),
])
def test_the_cubic_curve_says_where_it_is_renos(p, rtt_s, expected) -> None:
    """RFC 9438's curve is Reno's rate, the Mathis line, in its Reno-friendly region: at a
    20 ms RTT the two coincide, and the legend now says why (acceptance test Z7)."""
    from plot_tool.sweep_data import _cubic_region_note
    from theory.response import cubic_average_window, cubic_reno_friendly_window

    grid = np.geomspace(p[0], p[1], 50)
    note = _cubic_region_note(grid, rtt_s, 0.4, 0.7)
    assert note.startswith(expected) and (expected or note == "")
    friendly = cubic_reno_friendly_window(grid, 0.7) >= cubic_average_window(grid, rtt_s, 0.4, 0.7)
    if 0 < friendly.sum() < len(grid):
        assert note.endswith(f"{grid[friendly].min():.3g} to {grid[friendly].max():.3g}")
