"""Lines break where there are no samples (issue 9, part 6).

One helper, ``line_arrays``, decides for every panel: a line breaks (a NaN point) at a NaN value
(flows.csv's ``rtt_ms`` of an interval without an RTT sample) and where consecutive samples of a
series are more than 1.5 sampling intervals apart, except, for links and hosts, across a gap
whose two bounding values are 0: an idle link or host writes no rows, and the rows around the gap
are zero rows, so zero is drawn across it. Rows are selected by entity and sorted by time (the
CSV files are not in time order).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from plot_tool import read_results
from plot_tool.lines import line_arrays
from plot_tool.png import render
from plot_tool.run_data import plan_figures

NAN = float("nan")


def _same(actual, expected) -> bool:
    """Equal arrays, NaN equal to NaN."""
    return np.array_equal(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float),
                          equal_nan=True)


# --- the helper --------------------------------------------------------------------------------


def test_steps_start_at_the_first_interval() -> None:
    x, y = line_arrays(np.array([0.6, 0.7, 0.8]), np.array([1.0, 2.0, 3.0]), style="interval",
                        interval_s=0.1, idle_is_zero=True)
    assert x.tolist() == pytest.approx([0.5, 0.6, 0.7, 0.8]) and y.tolist() == [1, 1, 2, 3]


def test_gap_with_values_breaks() -> None:
    time = np.array([0.1, 0.2, 0.6, 0.7])
    x, y = line_arrays(time, np.array([4.0, 5.0, 6.0, 7.0]), style="interval", interval_s=0.1,
                        idle_is_zero=True)
    # 0.2 -> 0.6: no rows for three intervals and non-zero bounds: a NaN point, then the next
    # run starts at the start of its first interval (0.5)
    assert _same(x, [0.0, 0.1, 0.2, 0.5, 0.5, 0.6, 0.7])
    assert _same(y, [4, 4, 5, NAN, 6, 6, 7])


@pytest.mark.parametrize("bounds, broken", [((0.0, 0.0), False), ((0.0, 3.0), True),
                                            ((3.0, 0.0), True)])
def test_idle_gap_bounded_by_zeros_is_drawn_at_zero(bounds, broken) -> None:
    time = np.array([0.1, 0.2, 1.0, 1.1])
    values = np.array([5.0, bounds[0], bounds[1], 4.0])
    x, y = line_arrays(time, values, style="interval", interval_s=0.1, idle_is_zero=True)
    assert np.isnan(y).any() == broken
    if not broken:      # steps-pre: the value at 1.0 (0) is held from 0.2 to 1.0
        assert _same(x, [0.0, 0.1, 0.2, 1.0, 1.1]) and _same(y, [5, 5, 0, 0, 4])
    # flows: a gap is missing data even between zeros
    _, y = line_arrays(time, values, style="interval", interval_s=0.1, idle_is_zero=False)
    assert np.isnan(y).any()


def test_nan_values_break_steps() -> None:
    time = np.round(np.arange(1, 7) * 0.1, 10)
    rtt = np.array([20.0, NAN, NAN, 21.0, 22.0, NAN])
    x, y = line_arrays(time, rtt, style="sparse", interval_s=0.1, idle_is_zero=False)
    assert _same(x, [0.0, *time]) and _same(y, [20, *rtt])


def test_instant_values_break_at_gaps() -> None:
    x, y = line_arrays(np.array([0.1, 0.2, 0.9, 1.0]), np.array([1.0, 2.0, 3.0, 4.0]),
                        style="instant", interval_s=0.1, idle_is_zero=False)
    assert _same(x, [0.1, 0.2, 0.55, 0.9, 1.0]) and _same(y, [1, 2, NAN, 3, 4])


def test_last_shorter_interval_is_not_a_gap() -> None:
    time = np.array([0.1, 0.2, 0.3, 0.37])
    x, y = line_arrays(time, np.ones(4), style="interval", interval_s=0.1, idle_is_zero=False)
    assert not np.isnan(y).any() and x[0] == 0.0


# --- in the figures ----------------------------------------------------------------------------


LINK_COLUMNS = ("time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,backlog_kb,drops,"
                "failure_drops,impairment_drops,routing_rate_mbps")


def _write(out: Path) -> Path:
    """Results in the sparse format: L1 A->B is idle from 0.3 s to 1.0 s (zero rows around the
    gap, no rows inside), L1 B->A has a gap between non-zero rows (missing data), host A is idle
    like L1 A->B, flow F1 has no RTT sample at 0.2 and 0.3 s; the rows are shuffled."""
    out.mkdir(parents=True, exist_ok=True)
    summary = {"topology": "gaps", "interval_s": 0.1, "end_time_s": 1.2,
               "units": {"system": "si", "bits_per_mbit": 1000000, "bytes_per_kb": 1000,
                         "bytes_per_mb": 1000000},
               "links": {"L1": {"ends": ["A", "B"], "duplex": "full"}},
               "flows": {"F1": {"start_s": 0.0}}, "hosts": {"A": {}}}
    (out / "summary.json").write_text(json.dumps(summary))
    links = []
    for t, rate in [(0.1, 8), (0.2, 8), (0.3, 0), (1.0, 0), (1.1, 7), (1.2, 7)]:
        busy = int(rate > 0)
        links.append(f"{t},L1,A->B,{rate},{3 * busy},{busy},{3 * busy},{busy},0,0,0")
    for t, rate in [(0.1, 1), (0.2, 1), (0.9, 2), (1.0, 2)]:
        links.append(f"{t},L1,B->A,{rate},1,1,1,1,0,0,0")
    hosts = [f"{t},A,{rate},0.5" if rate else f"{t},A,0,0"
             for t, rate in [(0.1, 8), (0.2, 8), (0.3, 0), (1.0, 0), (1.1, 7)]]
    flows = ["0.1,F1,8,8,8,10,20", "0.2,F1,8,8,8,12,", "0.3,F1,8,8,8,14,", "0.4,F1,8,8,8,16,21",
             "0.5,F1,8,8,8,18,", "0.6,F1,8,8,8,20,22", "0.7,F1,8,8,8,22,23"]
    rng = random.Random(3)
    for rows in (links, hosts, flows):
        rng.shuffle(rows)
    (out / "links.csv").write_text("\n".join([LINK_COLUMNS, *links]) + "\n")
    (out / "hosts.csv").write_text("\n".join(["time_s,host,send_rate_mbps,recv_rate_mbps",
                                              *hosts]) + "\n")
    (out / "flows.csv").write_text("\n".join([
        "time_s,flow,send_rate_mbps,recv_rate_mbps,arrival_rate_mbps,window_pkts,rtt_ms",
        *flows]) + "\n")
    return out


@pytest.fixture
def figures(tmp_path: Path) -> dict:
    rs = read_results(_write(tmp_path / "run"))
    return {job.filename: render(job) for job in plan_figures(rs)}


def test_link_idle_gap_drawn_at_zero_and_missing_data_broken(figures: dict) -> None:
    buffer, drops, rate = figures["links.png"].axes
    for ax, idle_values in ((rate, [8, 8, 8, 0, 0, 7, 7]), (buffer, [3, 3, 3, 0, 0, 3, 3]),
                            (drops, [1, 1, 1, 0, 0, 1, 1])):
        idle, missing = ax.get_lines()[:2]
        assert idle.get_label() in ("L1 A->B", "_nolegend_")
        # A->B: sorted by time, zero across the idle gap (0.3 -> 1.0), no break
        assert _same(idle.get_xdata(), [0.0, 0.1, 0.2, 0.3, 1.0, 1.1, 1.2])
        assert _same(idle.get_ydata(), idle_values)
        # B->A: 0.2 -> 0.9 between non-zero rows: the line breaks
        assert np.isnan(missing.get_ydata()).sum() == 1
        assert _same(missing.get_xdata(), [0.0, 0.1, 0.2, 0.8, 0.8, 0.9, 1.0])


def test_host_idle_gap_drawn_at_zero(figures: dict) -> None:
    send, receive = figures["hosts.png"].axes
    (line,) = send.get_lines()
    assert _same(line.get_xdata(), [0.0, 0.1, 0.2, 0.3, 1.0, 1.1])
    assert _same(line.get_ydata(), [8, 8, 8, 0, 0, 7])
    assert not np.isnan(receive.get_lines()[0].get_ydata()).any()


def test_rtt_breaks_where_there_is_no_sample(figures: dict) -> None:
    send, arrival, window, rtt = figures["flows.png"].axes
    line = rtt.get_lines()[0]
    assert _same(line.get_xdata(), [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    assert _same(line.get_ydata(), [20, 20, NAN, NAN, 21, NAN, 22, 23])
    # the samples at 0.1 and 0.4 s have no neighbour: a dot in the middle of their interval
    dots = [ln for ln in rtt.get_lines() if ln.get_marker() == "."]
    assert len(dots) == 1
    assert dots[0].get_xdata().tolist() == pytest.approx([0.05, 0.35])
    assert dots[0].get_ydata().tolist() == [20, 21]
    # the other flow panels have no gap
    for ax in (send, arrival, window):
        assert not np.isnan(ax.get_lines()[0].get_ydata()).any()
