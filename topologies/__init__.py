"""Topologies: the shipped JSON networks, the format (`spec`, `loader`, `validation`) and building
a network from it (`build`).

    from topologies import load_topology
    spec = load_topology("topologies/test_case_0.json")      # a validated TopologySpec

Running a topology is the application's job (`netsim`): ``from netsim import simulate``. The
names `simulate`, `Run`, `Results`, `RunError` and `check_conservation` are still importable
from here, as thin re-exports loaded on first use (so that importing the format never imports
the application).
"""
from topologies.loader import TopologyError, load_topology
from topologies.spec import TopologySpec

_APPLICATION = ("Results", "Run", "RunError", "check_conservation", "simulate")

__all__ = ["TopologyError", "TopologySpec", "load_topology", *_APPLICATION]


def __getattr__(name: str):
    if name in _APPLICATION:
        import netsim.run
        return getattr(netsim.run, name)
    raise AttributeError(f"module 'topologies' has no attribute {name!r}")
