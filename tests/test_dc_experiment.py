"""The data-center experiment (experiments/dctcp_websearch.json): its loads are what it says, and a
reduced run shows DCTCP's effect on short flows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim.run import simulate
from netsim.sweep import run_sweep
from netsim.sweep_file import SweepError, load_sweep
from netsim.workloads import SizeDistribution
from topologies.loader import TopologyError, load_topology, shipped_sizes

ROOT = Path(__file__).resolve().parent.parent
SWEEP = ROOT / "experiments" / "dctcp_websearch.json"
TOPOLOGY = ROOT / "topologies" / "examples" / "dc_websearch_k8.json"


def _host_rate_mbps(topology: dict, host: str) -> float:
    (link,) = [link for link in topology["links"] if host in link["ends"]]
    return link["rate_mbps"]


def test_the_arrival_rates_are_the_loads_the_sweep_names():
    sweep = json.loads(SWEEP.read_text())
    topology = json.loads(TOPOLOGY.read_text())
    (workload,) = topology["workloads"]
    hosts = workload["src"]
    assert workload["dst"] == hosts and len(hosts) == 32
    assert {_host_rate_mbps(topology, h) for h in hosts} == {1000}
    mean_bytes = SizeDistribution(shipped_sizes("websearch")).mean()
    capacity_flows_per_s = len(hosts) * 1000e6 / (8 * mean_bytes)   # every host link full
    arrivals = sweep["parameters"]["workloads.W.arrivals_per_s"]
    loads = [round(a / capacity_flows_per_s, 4) for a in arrivals]
    assert loads == [0.3, 0.3, 0.5, 0.5, 0.8, 0.8]
    assert sweep["parameters"]["workloads.W.algorithm"] == ["dctcp", "cubic"] * 3
    assert sweep["combine"] == "zip"
    for plot in sweep["plots"]:                       # the axis label gives the same loads
        assert "701, 1169, 1870 = load 0.3, 0.5, 0.8" in plot["xlabel"]
    assert [round(a) for a in arrivals[::2]] == [701, 1169, 1870]
    # DCTCP's K: 30 kB on every port, ECMP by flow
    assert {json.dumps(link["queue"]) for link in topology["links"]} == {
        '{"discipline": "step", "k_kb": 30}'}
    assert topology["routing"]["ecmp"] is True


@pytest.mark.slow   # a whole simulation of several seconds: CI runs it with -m slow
def test_a_short_run_at_load_0_8_shows_dctcp_cutting_the_short_flows_tail(tmp_path):
    data = json.loads(SWEEP.read_text())
    data["parameters"] = {path: values[4:] for path, values in data["parameters"].items()}
    data["seeds"] = 1
    data["duration_s"] = 0.1
    data["topology"] = str(TOPOLOGY)
    path = tmp_path / "dc.json"
    path.write_text(json.dumps(data))
    rows = run_sweep(load_sweep(path), tmp_path / "out", jobs=2)
    assert [row["status"] for row in rows] == ["ok", "ok"], [row["error"] for row in rows]
    dctcp, cubic = rows
    assert (dctcp["workloads.W.algorithm"], cubic["workloads.W.algorithm"]) == ("dctcp", "cubic")
    small = "workloads.W.under_100kb."
    assert dctcp[small + "count"] > 80 and cubic[small + "count"] > 80
    # measured (seed 1, the first 0.1 s): 95 and 91 short flows, median slowdown 1.5 for both
    # (the queues are still building up), 99th percentile DCTCP 8.4, CUBIC 53 (10 ms timeouts)
    assert dctcp[small + "p50_slowdown"] <= cubic[small + "p50_slowdown"]
    assert dctcp[small + "p99_slowdown"] * 3 < cubic[small + "p99_slowdown"]


# -- what the experiment needs: ECN on a workload's DCTCP flows, sweeps over workloads ----------

def _tiny(algorithm: str, **extra) -> dict:
    return {"hosts": ["H1", "H2"], "routers": ["R1"],
            "links": [{"id": "A", "ends": ["H1", "R1"], "rate_mbps": 100, "delay_ms": 0.01,
                       "buffer_kb": 100, "queue": {"discipline": "step", "k_kb": 10}},
                      {"id": "B", "ends": ["R1", "H2"], "rate_mbps": 10, "delay_ms": 0.01,
                       "buffer_kb": 100, "queue": {"discipline": "step", "k_kb": 10}}],
            "workloads": [{"id": "W", "src": ["H1"], "dst": ["H2"], "arrivals_per_s": 20,
                           "sizes": "websearch", "algorithm": algorithm, **extra}],
            "duration_s": 1.0}


def test_a_dctcp_workload_is_ecn_capable_and_its_flows_are_marked_not_dropped():
    assert load_topology(_tiny("dctcp")).workloads[0].ecn is True
    assert load_topology(_tiny("cubic")).workloads[0].ecn is False
    assert load_topology(_tiny("cubic", ecn=True)).workloads[0].ecn is True
    with pytest.raises(TopologyError) as error:
        load_topology(_tiny("dctcp", ecn=False))
    assert str(error.value) == ('<dict>: workloads[0] "W": field "ecn": algorithm "dctcp" '
                                'needs ECN: expected true, got false')
    marked = simulate(load_topology(_tiny("dctcp"))).summary["links"]["B"]["directions"]["R1->H2"]
    dropped = simulate(load_topology(_tiny("cubic"))).summary["links"]["B"]["directions"]["R1->H2"]
    assert marked["marks"] > 0 and marked["drops"] == 0
    assert dropped["marks"] == 0 and dropped["drops"] > 0


@pytest.mark.parametrize("metric, message", [
    ("workloads.W.under_100kb.p99_slowdown", None),
    ("workloads.W.flows_completed", None),
    ("workloads.X.under_100kb.p99_slowdown", 'no workload "X"'),
    ("workloads.W.under_10kb.p99_slowdown", 'unknown size bucket "under_10kb" (did you mean '
                                            '"under_100kb"?); known: all, under_100kb, '
                                            '100kb_to_10mb, over_10mb'),
    ("workloads.W.all.p90_slowdown", 'unknown statistic "p90_slowdown"'),
    ("workloads.W", "expected workloads.<id>.<field> or workloads.<id>.<bucket>.<statistic>"),
])
def test_sweeps_vary_workloads_and_collect_their_statistics(tmp_path, metric, message):
    (tmp_path / "tiny.json").write_text(json.dumps(_tiny("dctcp")))
    sweep = {"topology": "tiny.json", "parameters": {"workloads.W.algorithm": ["dctcp", "cubic"],
                                                     "workloads.*.arrivals_per_s": [10, 20]},
             "seeds": 1, "metrics": [metric]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(sweep))
    if message is None:
        loaded = load_sweep(path)
        assert len(loaded.runs()) == 4
        return
    with pytest.raises(SweepError) as error:
        load_sweep(path)
    assert message in str(error.value) and "\n" not in str(error.value)
