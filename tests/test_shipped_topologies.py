"""Every shipped topology runs to completion and conserves packets and bytes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from netsim import check_conservation, load_topology, simulate

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.json"))


def test_the_three_cs_ee_143_cases_are_shipped():
    names = {path.stem for path in TOPOLOGIES}
    assert {"test_case_0", "test_case_1", "test_case_2"} <= names


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
# as shipped in the default run; every file under the other algorithms with the slow tests
@pytest.mark.parametrize("algorithm", [None] + [pytest.param(name, marks=pytest.mark.slow)
                                               for name in ("reno", "tahoe", "vegas", "bbr")])
def test_shipped_topology_completes_and_conserves(path, algorithm):
    results = simulate(load_topology(path, algorithm=algorithm))   # None: as shipped (FAST)
    summary = results.summary
    assert summary["stop_reason"] == "completed"
    assert check_conservation(results.network) == []
    for flow_id, flow in summary["flows"].items():
        assert flow["completed"] and flow["in_order"], flow_id
        assert flow["delivered_bytes"] == flow["data_bytes"]
        assert flow["finish_s"] > flow["start_s"]
    for link in summary["links"].values():
        for direction in link["directions"].values():
            assert 0.0 <= direction["utilization"] <= 1.0
        if link["duplex"] == "half":   # one transmitter shared by both directions
            assert sum(d["utilization"] for d in link["directions"].values()) <= 1.0 + 1e-9


# presets that complete before 3 s are stopped while their flows still run
SHORTENED_S = {"profile_data_center": 0.05}   # two transfers at 10 Gb/s, done at 0.115 s


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
def test_shortened_run_stops_at_the_duration_and_conserves(path):
    duration_s = SHORTENED_S.get(path.stem, 3.0)
    results = simulate(load_topology(path), duration_s=duration_s)
    assert results.summary["stop_reason"] == "duration"
    assert results.summary["end_time_s"] == duration_s
    assert check_conservation(results.network) == []
    assert results.links["time_s"].max() == pytest.approx(duration_s)


def test_tc0_reno_shows_a_sawtooth_with_drops():
    results = simulate(load_topology(TOPOLOGIES[0].parent / "test_case_0.json", algorithm="reno"))
    flow = results.summary["flows"]["F1"]
    assert flow["completed"] and flow["retransmissions"] > 0
    assert results.summary["links"]["L1"]["directions"]["H1->H2"]["drops"] > 0
    _, window = results.trace("flows", "F1", "window_pkts")
    # congestion avoidance climbs, a loss halves the window: count the halvings
    halvings = int(np.sum(window[1:] < 0.7 * window[:-1]))
    assert halvings >= 4
    # between halvings the window grows: most steps are increases
    steps = np.diff(window)
    assert np.mean(steps > 0) > 0.6


def test_tc2_flows_cross_the_expected_links():
    results = simulate(load_topology(TOPOLOGIES[0].parent / "test_case_2.json"), duration_s=25.0)
    links = results.summary["links"]
    sent = {lid: sum(d["packets_transmitted"] for d in link["directions"].values())
            for lid, link in links.items()}
    # F1 crosses L1, L2 and L3; F2 only L1; F3 only L3: L2 carries F1 alone
    assert sent["L1"] > sent["L2"] and sent["L3"] > sent["L2"] > 0
    assert sent["LT2"] > 0 and sent["LS3"] > 0
