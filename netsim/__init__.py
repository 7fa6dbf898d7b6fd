"""netsim: packet-level discrete-event network simulation, the application and its Python API.

    from netsim import load_topology, simulate
    spec = load_topology("topologies/test_case_2.json", algorithm="reno")
    results = simulate(spec, duration_s=30, seed=1)
    results.summary["flows"]["F1"]["goodput_mbps"]
    t, window = results.trace("flows", "F1", "window_pkts")
    results.write("results/tc2")               # a complete results directory, atomically

Modules: `run` (running a topology: termination, stall guard, interrupts, sampling), `results`
(the summary and the trace tables), `traces` and `probes` (what is sampled and how it is
written), `event_trace` (``--trace``: every packet event), `results_dir` (one complete run per
directory), `version`; parameter sweeps: `sweep` (running one) with `sweep_file`,
`sweep_parameters`, `sweep_points`, `sweep_metrics`, `sweep_theory`, `sweep_plan`,
`sweep_store` and `sweep_execute`; the command line (``python -m netsim``): `command` (where it
starts), `cli` (a run and the dispatch), `cli_options` (what the parsers share), `cli_output`
(what is shown), `sweep_cli`, `convert`, `generate_cli`. The topology format is in
`topologies`, theory (equilibria, response functions, the run comparison) in `theory`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from netsim.version import __version__

if TYPE_CHECKING:
    from netsim.run import Results, Run, RunError, check_conservation, simulate
    from topologies.loader import TopologyError, load_topology
    from topologies.spec import TopologySpec

__all__ = ["Results", "Run", "RunError", "TopologyError", "TopologySpec", "__version__",
           "check_conservation", "load_topology", "simulate"]

# The API is imported when first used (PEP 562), not with the package: importing any module of
# the package (e.g. `netsim.command`, where the command starts) would otherwise import the
# simulator before the command can report a stale compiled core in one line.
_API = {"Results": "netsim.run", "Run": "netsim.run", "RunError": "netsim.run",
        "check_conservation": "netsim.run", "simulate": "netsim.run",
        "TopologyError": "topologies.loader", "load_topology": "topologies.loader",
        "TopologySpec": "topologies.spec"}


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'netsim' has no attribute {name!r}")
    from importlib import import_module
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))   # (the API before its first use too)
