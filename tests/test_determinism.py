"""Same topology and seed give identical results; output files are written the same way."""
from __future__ import annotations

from pathlib import Path

import json

from netsim import load_topology, simulate

ROOT = Path(__file__).resolve().parent.parent


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


def random_topology() -> dict:
    """Test case 1 with every kind of randomness a link can draw: independent and burst loss,
    duplication, reordering and reordering jitter."""
    data = json.loads((ROOT / "topologies" / "test_case_1.json").read_text())
    links = {link["id"]: link for link in data["links"]}
    links["L1"]["loss_rate"] = 0.01
    links["L2"]["jitter_ms"] = 2.0
    links["L2"]["jitter_reorder"] = True
    links["L3"]["duplicate_rate"] = 0.02
    links["L3"]["reorder_rate"] = 0.02
    links["L3"]["reorder_delay_ms"] = 5.0
    links["L4"]["loss_model"] = {"type": "gilbert-elliott", "p_good_to_bad": 0.001,
                                 "p_bad_to_good": 0.3}
    data["flows"][0]["data_mb"] = 3
    return data


def run_random(out, seed):
    simulate(load_topology(random_topology()), seed=seed).write(out)
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("wall_time_s")
    return summary, {name: (out / name).read_bytes() for name in ("links.csv", "flows.csv", "hosts.csv", "routes.csv")}


def test_same_seed_same_results_with_random_losses_duplicates_and_reordering(tmp_path):
    first = run_random(tmp_path / "a", seed=3)
    second = run_random(tmp_path / "b", seed=3)
    assert first == second
    link_totals = first[0]["links"]
    assert sum(d["impairment_drops"] for link in link_totals.values()
               for d in link["directions"].values()) > 0          # the randomness was used ...
    assert sum(d["duplicated"] for link in link_totals.values()
               for d in link["directions"].values()) > 0
    other = run_random(tmp_path / "c", seed=4)
    assert other[1]["flows.csv"] != first[1]["flows.csv"]        # ... and the seed decides it


def test_seed_is_recorded(tmp_path):
    summary, _ = run_to(tmp_path / "c", seed=7)
    assert summary["seed"] == 7


def test_csv_files_are_long_format_with_documented_columns(tmp_path):
    _, files = run_to(tmp_path / "d")
    headers = {name: data.decode().splitlines()[0] for name, data in files.items()}
    assert headers == {
        "links.csv": ("time_s,link,direction,rate_mbps,buffer_kb,buffer_pkts,backlog_kb,drops,"
                      "failure_drops,impairment_drops,routing_rate_mbps,marks,aqm_drops,sojourn_ms"),
        "flows.csv": ("time_s,flow,send_rate_mbps,recv_rate_mbps,arrival_rate_mbps,window_pkts,rtt_ms,"
                      "rto,tlp,rack_lost,lost_retrans,spurious_undo,sack_recoveries,fast_retransmits"),
        "hosts.csv": "time_s,host,send_rate_mbps,recv_rate_mbps",
        "routes.csv": "time_s,router,destination,next_hop,link,cost_ms",
    }
