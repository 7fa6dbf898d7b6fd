"""Topology files and running them: the Python API.

    from topologies import load_topology, simulate
    results = simulate(load_topology("topologies/test_case_0.json"))
    results.summary["flows"]["F1"]["goodput_mbps"]
    t, window = results.trace("flows", "F1", "window_pkts")
    results.write("results/tc0")

The shipped JSON files live in this folder; `loader` validates them into a `spec.TopologySpec`,
`build` wires simulation objects, `run` runs them and collects `Results`.
"""
from topologies.loader import TopologyError, load_topology
from topologies.run import Results, Run, RunError, check_conservation, simulate
from topologies.spec import TopologySpec

__all__ = ["Results", "Run", "RunError", "TopologyError", "TopologySpec", "check_conservation",
           "load_topology", "simulate"]
