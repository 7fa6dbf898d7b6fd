"""Same topology and seed give identical results; output files are written the same way."""
from __future__ import annotations

import json

from conftest import ROOT
from topologies import load_topology, simulate


def run_to(out, seed=None):
    spec = load_topology(ROOT / "topologies" / "test_case_1.json")
    simulate(spec, seed=seed).write(out)
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("wall_time_s")
    return summary, {name: (out / name).read_bytes() for name in ("links.csv", "flows.csv", "hosts.csv", "routes.csv")}


def test_same_seed_same_results(tmp_path):
    first = run_to(tmp_path / "a")
    second = run_to(tmp_path / "b")
    assert first[0] == second[0]
    assert first[1] == second[1]


def test_seed_is_recorded(tmp_path):
    summary, _ = run_to(tmp_path / "c", seed=7)
    assert summary["seed"] == 7


def test_csv_files_are_long_format_with_documented_columns(tmp_path):
    _, files = run_to(tmp_path / "d")
    headers = {name: data.decode().splitlines()[0] for name, data in files.items()}
    assert headers == {
        "links.csv": ("time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,backlog_kb,drops,"
                      "failure_drops,impairment_drops,routing_rate_mbps"),
        "flows.csv": "time_s,flow,send_rate_mbps,recv_rate_mbps,arrival_rate_mbps,window_pkts,rtt_ms",
        "hosts.csv": "time_s,host,send_rate_mbps,recv_rate_mbps",
        "routes.csv": "time_s,router,destination,next_hop,link,cost_ms",
    }
