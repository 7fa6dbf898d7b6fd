"""Every run ends: completion, duration, the stall guard, and runs that cannot end."""
from __future__ import annotations

from pathlib import Path

import copy
import json

import pytest

from netsim import RunError, load_topology, simulate
from netsim.run import Run

ROOT = Path(__file__).resolve().parent.parent

TC0 = json.loads((ROOT / "topologies" / "test_case_0.json").read_text())


def test_stall_guard_stops_a_flow_that_cannot_progress_and_says_why():
    data = json.loads((ROOT / "topologies" / "test_case_1.json").read_text())
    data["routing"] = {"protocol": "static"}        # nothing will put the routes back
    run = Run(load_topology(data), stall_timeout_s=20.0)
    for router in run.network.routers.values():
        router.routes.clear()                    # no router knows a way anywhere
    results = run.execute()
    summary = results.summary
    assert summary["stop_reason"] == "stalled"
    assert "F1 made no progress since t=0.500 s" in summary["stop_detail"]
    assert "lack of a route" in summary["stop_detail"]
    assert 20.0 <= summary["end_time_s"] <= 22.5
    assert summary["flows"]["F1"]["completed"] is False
    assert summary["flows"]["F1"]["timeouts"] >= 3


def test_endless_flow_needs_a_duration():
    data = copy.deepcopy(TC0)
    data["flows"][0]["data_mb"] = None
    spec = load_topology(data)
    with pytest.raises(RunError, match="flow F1 has no data_mb, so nothing ends the run"):
        simulate(spec)
    results = simulate(spec, duration_s=2.0)
    assert results.summary["stop_reason"] == "duration"
    assert results.summary["flows"]["F1"]["finish_s"] is None
    assert results.summary["flows"]["F1"]["goodput_mbps"] > 1.0


def test_topology_without_flows_needs_a_duration():
    data = copy.deepcopy(TC0)
    data["flows"] = []
    with pytest.raises(RunError, match="no flows"):
        simulate(load_topology(data))
    assert simulate(load_topology(data), duration_s=1.0).summary["end_time_s"] == 1.0


def test_run_stops_when_finite_flows_complete_even_with_a_long_duration():
    spec = load_topology(ROOT / "topologies" / "test_case_0.json")
    results = simulate(spec, duration_s=1000.0)
    assert results.summary["stop_reason"] == "completed"
    assert results.summary["end_time_s"] < 60.0


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_bad_duration_and_interval_are_rejected(bad):
    spec = load_topology(ROOT / "topologies" / "test_case_0.json")
    with pytest.raises(RunError, match="duration"):
        Run(spec, duration_s=bad)
    with pytest.raises(RunError, match="interval"):
        Run(spec, interval_s=bad)


@pytest.mark.parametrize("seed", [-4, 1.5, "abc", True, None.__class__])
def test_the_api_refuses_a_seed_the_topology_would(seed):
    """As the command line's --seed and a topology's "seed": a non-negative integer (-4 ran as
    4, under another configuration digest; True, 1.5 and "abc" were written to summary.json)."""
    from netsim.run import RunError, simulate
    from topologies.loader import load_topology
    spec = load_topology({"hosts": ["A", "B"],
                          "links": [{"id": "L", "ends": ["A", "B"], "rate_mbps": 10,
                                     "delay_ms": 5, "buffer_kb": 50}],
                          "flows": [{"id": "F", "src": "A", "dst": "B", "data_mb": 0.1}]})
    with pytest.raises(RunError, match=r"^seed: expected a non-negative integer \(as a "
                                       r"topology's seed\), got "):
        simulate(spec, seed=seed)
    assert simulate(spec, seed=10 ** 30).summary["seed"] == 10 ** 30
