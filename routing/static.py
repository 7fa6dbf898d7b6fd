"""Static routing: shortest paths by link cost, computed once before the run.

The cost of a link is its static cost: the topology's `cost` if given, else its propagation
delay. Hosts never forward, so paths to a destination host run through routers only. For each
router and destination host, the next hop is the link that
minimises (link cost + distance of the neighbour to the destination); equal costs (within a
relative 1e-9) are broken by the link's position in the topology file, first wins. The same rule
is the reference for dynamic routing.
"""
from __future__ import annotations

import networkx as nx

from components.node import Router

TIE_TOLERANCE = 1e-9


def link_cost(link) -> float:
    """Static cost of a link in seconds: its `cost` from the topology, else its propagation delay."""
    return link.static_cost_s


def pick_next_hop(candidates):
    """The chosen (cost, hop) of `candidates`, an iterable of (cost, hop) in the router's link
    order: the lowest cost, and among costs equal within TIE_TOLERANCE the first. None if empty."""
    candidates = list(candidates)
    if not candidates:
        return None
    lowest = min(cost for cost, _ in candidates)
    limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
    return next(c for c in candidates if c[0] <= limit)


def distances_to(destination, routers, links, cost=link_cost, is_router=None) -> dict:
    """Shortest-path cost from every router (and the destination) to `destination`.

    `links` have ``ends`` (two nodes); `is_router(node)` says which nodes forward (default: the
    `Router` objects), so the same computation serves built networks and plain topology data."""
    if is_router is None:
        def is_router(node):
            return isinstance(node, Router)
    graph = nx.Graph()
    graph.add_node(destination)
    graph.add_nodes_from(routers)
    for link in links:
        a, b = link.ends
        if (a == destination or is_router(a)) and (b == destination or is_router(b)):
            weight = cost(link)
            if not graph.has_edge(a, b) or graph[a][b]["weight"] > weight:
                graph.add_edge(a, b, weight=weight)
    return nx.single_source_dijkstra_path_length(graph, destination, weight="weight")


def shortest_routes(destination, routers, links, cost=link_cost) -> dict:
    """Router -> (cost, outgoing LinkDirection) towards `destination`; routers with no path are
    absent. A router's links are attached in file order, so `pick_next_hop` implements the
    documented tie rule."""
    dist = distances_to(destination, routers, links, cost)
    table = {}
    for router in routers:
        if router not in dist:
            continue
        chosen = pick_next_hop((cost(link) + dist[d.dst], d) for link, d in zip(router.links, router.out)
                               if d.dst in dist)
        if chosen is not None:
            table[router] = chosen
    return table


def next_hops(destination, routers, links, cost=link_cost) -> dict:
    """Router -> outgoing LinkDirection towards `destination`."""
    return {router: d for router, (_, d) in shortest_routes(destination, routers, links, cost).items()}


def install_static_routes(routers, hosts, links, cost=link_cost) -> dict:
    """Fill every router's forwarding table with shortest paths to every host.

    Returns router -> {host: (cost, direction)}, the installed tables with their costs."""
    tables: dict = {router: {} for router in routers}
    for host in hosts:
        for router, (total, d) in shortest_routes(host, routers, links, cost).items():
            router.routes[host] = d
            tables[router][host] = (total, d)
    return tables


def plain_next_hops(routers, hosts, links) -> dict:
    """The static forwarding tables of a topology given as plain data, without building it:
    `routers` and `hosts` are node ids, `links` are (link id, (end, end), cost_s) in file order.
    Returns (router id, host id) -> (cost_s, link index, next node id), by the same distances and
    tie rule as `install_static_routes` (a router's links in file order)."""
    router_set = set(routers)

    class _Edge:
        __slots__ = ("ends", "cost_s")

        def __init__(self, ends, cost_s):
            self.ends, self.cost_s = ends, cost_s

    edges = [_Edge(tuple(ends), cost_s) for _, ends, cost_s in links]
    attached: dict = {node: [] for node in list(routers) + list(hosts)}
    for index, (_, (a, b), cost_s) in enumerate(links):
        attached[a].append((index, b, cost_s))
        attached[b].append((index, a, cost_s))
    tables = {}
    for host in hosts:
        dist = distances_to(host, routers, edges, cost=lambda edge: edge.cost_s,
                            is_router=router_set.__contains__)
        for router in routers:
            if router not in dist:
                continue
            chosen = pick_next_hop((cost_s + dist[far], (index, far))
                                   for index, far, cost_s in attached[router] if far in dist)
            if chosen is not None:
                total, (index, far) = chosen
                tables[router, host] = (total, index, far)
    return tables
