"""Routing: filling router forwarding tables.

`static` computes shortest paths once; `distance_vector` runs decentralized Bellman-Ford agents
on the routers, exchanging routing packets over the simulated links; `ecmp` spreads packets over
equal-cost next hops. Each is imported by the runs that use it (`routing.static` by every run),
so the package itself imports none of them: ``from routing import start_distance_vector`` imports
its module when it is asked for.
"""
from __future__ import annotations

import importlib

_WHERE = {"DistanceVectorAgent": "routing.distance_vector",
          "start_distance_vector": "routing.distance_vector",
          "install_static_routes": "routing.static", "next_hops": "routing.static",
          "shortest_routes": "routing.static"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'routing' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
