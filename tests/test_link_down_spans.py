"""summary.json records when each link was down, and the report marks those intervals even when
nothing was offered to the link."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from netsim import load_topology, simulate

ROOT = Path(__file__).resolve().parent.parent
TC1 = json.loads((ROOT / "topologies" / "test_case_1.json").read_text())


def with_events(events, data_mb=None):
    data = copy.deepcopy(TC1)
    data["events"] = events
    data["flows"][0]["data_mb"] = data_mb
    return data


def test_down_spans_follow_the_events():
    data = with_events([{"at_s": 2.0, "link": "L2", "action": "down"},
                        {"at_s": 4.0, "link": "L2", "action": "up"},
                        {"at_s": 5.0, "link": "L4", "action": "down"}])
    results = simulate(load_topology(data), duration_s=8.0)
    links = results.summary["links"]
    assert links["L2"]["down_s"] == [[2.0, 4.0]]
    assert links["L4"]["down_s"] == [[5.0, 8.0]]          # still down at the end
    assert links["L1"]["down_s"] == []


def test_report_marks_a_down_link_with_no_traffic(tmp_path):
    pytest.importorskip("plotly", reason="the report extra: pip install -e .[report]")
    from plot_tool import read_results
    from plot_tool.report import run_data
    # L4 is down from 1 s to 3 s; static routing sends nothing over the lower branch at all
    data = with_events([{"at_s": 1.0, "link": "L4", "action": "down"},
                        {"at_s": 3.0, "link": "L4", "action": "up"}])
    data["routing"] = {"protocol": "static"}
    results = simulate(load_topology(data), duration_s=5.0)
    results.write(tmp_path / "r")
    summary = results.summary
    assert sum(d["failure_drops"] for d in summary["links"]["L4"]["directions"].values()) == 0
    page = run_data(read_results(tmp_path / "r"))
    l4 = next(link for link in page["links"] if link["id"] == "L4")
    assert l4["frame_down"] is not None
