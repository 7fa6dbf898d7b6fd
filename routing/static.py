"""Static routing: shortest paths by link cost, computed once before the run.

The cost of a link is its propagation delay. Hosts never forward, so paths to a destination host
run through routers only. For each router and destination host, the next hop is the link that
minimises (link cost + distance of the neighbour to the destination); equal costs (within a
relative 1e-9) are broken by the link's position in the topology file, first wins. The same rule
is the reference for dynamic routing.
"""
from __future__ import annotations

import networkx as nx

from components.node import Router

TIE_TOLERANCE = 1e-9


def link_cost(link) -> float:
    """Static cost of a link: its propagation delay in seconds."""
    return link.delay_s


def distances_to(destination, routers, links, cost=link_cost) -> dict:
    """Shortest-path cost from every router (and the destination) to `destination`."""
    graph = nx.Graph()
    graph.add_node(destination)
    graph.add_nodes_from(routers)
    for link in links:
        a, b = link.ends
        if (a is destination or isinstance(a, Router)) and (b is destination or isinstance(b, Router)):
            weight = cost(link)
            if not graph.has_edge(a, b) or graph[a][b]["weight"] > weight:
                graph.add_edge(a, b, weight=weight)
    return nx.single_source_dijkstra_path_length(graph, destination, weight="weight")


def next_hops(destination, routers, links, cost=link_cost) -> dict:
    """Router -> outgoing LinkDirection towards `destination` (routers with no path are absent).

    A router's links are attached in file order, so keeping the first of equal-cost candidates
    implements the documented tie rule.
    """
    dist = distances_to(destination, routers, links, cost)
    table = {}
    for router in routers:
        if router not in dist:
            continue
        best_total, best = None, None
        for link, direction in zip(router.links, router.out):
            neighbour = direction.dst
            if neighbour not in dist:
                continue
            total = cost(link) + dist[neighbour]
            if best_total is None or total < best_total - TIE_TOLERANCE * max(best_total, 1e-12):
                best_total, best = total, direction
        if best is not None:
            table[router] = best
    return table


def install_static_routes(routers, hosts, links, cost=link_cost) -> None:
    """Fill every router's forwarding table with shortest paths to every host."""
    for host in hosts:
        for router, direction in next_hops(host, routers, links, cost).items():
            router.routes[host] = direction


