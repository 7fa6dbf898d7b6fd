"""Topologies: the shipped JSON networks, the format (`spec`, `loader` and its `load_*` section
modules, `validation`) and building a network from it (`build`).

    from topologies import load_topology
    spec = load_topology("topologies/test_case_0.json")      # a validated TopologySpec

Running a topology is the application's job: ``from netsim import simulate`` (also `Run`,
`Results`, `RunError`, `check_conservation`). This package never imports `netsim`.
"""
from topologies.loader import TopologyError, load_topology
from topologies.spec import TopologySpec

__all__ = ["TopologyError", "TopologySpec", "load_topology"]
