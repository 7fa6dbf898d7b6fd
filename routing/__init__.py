"""Routing: filling router forwarding tables.

`static` computes shortest paths once; `distance_vector` runs decentralized Bellman-Ford agents
on the routers, exchanging routing packets over the simulated links.
"""
from routing.distance_vector import DistanceVectorAgent, start_distance_vector
from routing.static import install_static_routes, next_hops, shortest_routes

__all__ = ["DistanceVectorAgent", "install_static_routes", "next_hops", "shortest_routes",
           "start_distance_vector"]
