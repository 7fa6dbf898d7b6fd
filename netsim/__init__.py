"""netsim: packet-level discrete-event network simulation, the application and its Python API.

    from netsim import load_topology, simulate
    spec = load_topology("topologies/test_case_2.json", algorithm="reno")
    results = simulate(spec, duration_s=30, seed=1)
    results.summary["flows"]["F1"]["goodput_mbps"]
    t, window = results.trace("flows", "F1", "window_pkts")
    results.write("results/tc2")               # a complete results directory, atomically

Modules: `run` (running a topology: termination, stall guard, interrupts, sampling), `results`
(the summary and the trace tables), `traces` and `probes` (what is sampled and how it is
written), `results_dir` (one complete run per directory), `sweep_file` and `sweep` (parameter
sweeps), `cli` and `sweep_cli` (the command line; ``python -m netsim``). The topology format is
in `topologies`, theory (equilibria, response functions, the run comparison) in `theory`.
"""
from netsim.run import Results, Run, RunError, check_conservation, simulate
from netsim.version import __version__
from topologies.loader import TopologyError, load_topology
from topologies.spec import TopologySpec

__all__ = ["Results", "Run", "RunError", "TopologyError", "TopologySpec", "__version__",
           "check_conservation", "load_topology", "simulate"]
