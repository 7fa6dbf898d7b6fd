"""Nodes: the `hosts` and `routers` lists, the rule that a host has exactly one link, and which
hosts can reach each other (connected components, computed once)."""
from __future__ import annotations

from topologies.load_fields import Where, as_list
from topologies.validation import id_problem, known_list, quote, show


def read_nodes(top: Where, data: dict) -> dict:
    """Node id -> "host" or "router", in file order (hosts first)."""
    kinds: dict = {}
    for kind, key in (("host", "hosts"), ("router", "routers")):
        ids = as_list(top, key, data.get(key, []), "a list of node ids")
        for index, node in enumerate(ids):
            if id_problem(node) is not None or node in kinds:
                _node_problem(Where(top.source, f"{key}[{index}]"), node, kinds)
            kinds[node] = kind
    return kinds


def _node_problem(where: Where, node, kinds: dict) -> None:
    """Raise what is wrong with the node id `node` (`read_nodes`, in its order)."""
    if not isinstance(node, str) or not node:
        raise where.error(f"expected a non-empty string node id, got {show(node)}")
    problem = id_problem(node)
    if problem:
        raise where.error(problem)
    raise where.error(f"duplicate node id {quote(node)} (already a {kinds[node]})")


def check_host_links(top: Where, kinds: dict, links: list) -> None:
    """Each host has exactly one of `links` (as `read_links` gives them: the two ends of a link
    are two different nodes)."""
    attached: dict = {node: [] for node, kind in kinds.items() if kind == "host"}
    for link in links:
        first, second = link.ends
        if first in attached:
            attached[first].append(link.id)
        if second in attached:
            attached[second].append(link.id)
    where = Where(top.source, "hosts")
    for host, link_ids in attached.items():
        if len(link_ids) == 0:
            raise where.error(f"host {quote(host)} has no link; a host has exactly one link")
        if len(link_ids) > 1:
            raise where.error(f"host {quote(host)} has {len(link_ids)} links ({known_list(link_ids)}); "
                              f"a host has exactly one link")


def access_rates(kinds: dict, links: list) -> dict:
    """Host -> the fastest rate (bit/s) of its one link over the link's rate schedule: every
    byte a host sends or receives crosses it (after `check_host_links`)."""
    rates = {}
    for link in links:
        fastest = max([link.rate_bps, *(rate for _, rate in link.rate_schedule)])
        for end in link.ends:
            if kinds[end] == "host":
                rates[end] = fastest
    return rates


def node_components(kinds: dict, links: list) -> dict:
    """Node -> label of its connected component when hosts do not forward: routers joined by
    router-router links (union-find, computed once), a host with the component of the router at
    the other end of its one link (two hosts linked to each other form their own component).
    Two hosts can reach each other iff their labels are equal."""
    parent = {node: node for node, kind in kinds.items() if kind == "router"}

    def find(node):
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    host_links = []
    for link in links:
        a, b = link.ends
        if a in parent and b in parent:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra
        else:
            host_links.append((a, b))
    component = {router: find(router) for router in parent}
    for a, b in host_links:
        if a in parent:
            component[b] = component[a]
        elif b in parent:
            component[a] = component[b]
        else:                      # host - host: the two of them
            component[a] = component[b] = ("hosts", a, b)
    return component


def connected(src: str, dst: str, components: dict) -> bool:
    """Is there a path src -> dst whose intermediate nodes are all routers (hosts do not forward)?"""
    label = components.get(src)
    return label is not None and label == components.get(dst)


