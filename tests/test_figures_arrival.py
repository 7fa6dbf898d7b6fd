"""The second panel of flows.png is the data arriving at the receiver (issue 9, part 6).

flows.csv's ``recv_rate_mbps`` is the in-order delivery to the application (goodput): when a
retransmission repairs a gap it jumps far above the path's capacity, releasing what was held back.
``arrival_rate_mbps`` counts the data bytes reaching the receiver in the interval, in order or
not, so it is bounded by the path's capacity: that is what the panel draws. Results written before
that column existed fall back to the goodput, labelled as such.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from plot_tool import make_figures, read_results
from plot_tool.png import render
from plot_tool.run_data import plan_figures
from plot_tool.series import ARRIVAL_PANEL, FLOWS_FIGURE, FLOWS_FIGURE_GOODPUT, GOODPUT_PANEL

# A 10 Mbps path: data held back by a loss at 0.2 s is released at 0.4 s (goodput 30 Mbps).
ROWS = [(0.1, 10, 10, 10), (0.2, 10, 4, 10), (0.3, 10, 0, 10), (0.4, 10, 30, 10),
        (0.5, 10, 10, 10)]


def _write(out: Path, *, arrival: bool = True) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    summary = {"topology": "repair", "interval_s": 0.1, "end_time_s": 0.5,
               "units": {"system": "binary", "bits_per_mbit": 1048576, "bytes_per_kb": 1024,
                         "bytes_per_mb": 1048576},
               "links": {}, "hosts": {}, "flows": {"F1": {"start_s": 0.0}}}
    (out / "summary.json").write_text(json.dumps(summary))
    header = "time_s,flow,send_rate_mbps,recv_rate_mbps," + \
        ("arrival_rate_mbps," if arrival else "") + "window_pkts,rtt_ms"
    lines = [header] + [f"{t},F1,{send},{goodput}," + (f"{arr}," if arrival else "") + "20,30"
                        for t, send, goodput, arr in ROWS]
    (out / "flows.csv").write_text("\n".join(lines) + "\n")
    (out / "links.csv").write_text("time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,"
                                   "drops\n")
    (out / "hosts.csv").write_text("time_s,host,send_rate_mbps,recv_rate_mbps\n")
    return out


def test_panel_draws_data_arriving(tmp_path: Path) -> None:
    (job,) = plan_figures(read_results(_write(tmp_path / "run")))
    assert job.spec is FLOWS_FIGURE and job.spec.panels[1] is ARRIVAL_PANEL
    ax = render(job).axes[1]
    (line,) = ax.get_lines()
    assert line.get_ydata().tolist() == [10] * 6             # never above the path's 10 Mbps
    assert ax.get_ylabel() == "data arriving at the\nreceiver (Mbps, binary)"
    assert ax.get_ylim()[1] < 11
    # the goodput stays in the data
    assert job.series[0].values["recv_rate_mbps"].tolist() == [10, 4, 0, 30, 10]


def test_older_results_draw_the_goodput(tmp_path: Path) -> None:
    (job,) = plan_figures(read_results(_write(tmp_path / "old", arrival=False)))
    assert job.spec is FLOWS_FIGURE_GOODPUT and job.spec.panels[1] is GOODPUT_PANEL
    ax = render(job).axes[1]
    assert ax.get_lines()[0].get_ydata().tolist() == [10, 10, 4, 0, 30, 10]
    assert "goodput" in ax.get_ylabel()
    assert [p.column for p in FLOWS_FIGURE_GOODPUT.panels] == \
        ["send_rate_mbps", "recv_rate_mbps", "window_pkts", "rtt_ms"]


def test_in_memory_results_with_arrival(tmp_path: Path) -> None:
    rs = read_results(_write(tmp_path / "run"))

    class InMemory:            # the simulator's Results: lists are accepted
        summary = rs.summary
        links, hosts = rs.links, rs.hosts
        flows = {k: v.tolist() for k, v in rs.flows.items()}

    (job,) = plan_figures(InMemory())
    assert job.spec is FLOWS_FIGURE
    np.testing.assert_array_equal(job.series[0].values["arrival_rate_mbps"], [10] * 5)
    assert [p.name for p in make_figures(InMemory(), tmp_path / "png")] == ["flows.png"]
