"""Static routing: shortest paths by link cost, computed once before the run.

The cost of a link is its static cost: the topology's `cost` if given, else its propagation
delay. Hosts never forward, so paths to a destination host run through routers only. For each
router and destination host, the next hop is the link that
minimises (link cost + distance of the neighbour to the destination); equal costs (within a
relative 1e-9) are broken by the link's position in the topology file, first wins. The same rule
is the reference for dynamic routing.

How it is computed (`ShortestPaths`): one adjacency structure of the routers, built once; then a
plain heap Dijkstra per *attachment* rather than per host: hosts that reach the routers through
the same links at the same costs (every host of an access router, typically) have the same
distances, so one search serves them all, and so does each router's choice of next hop, except at
the routers attached to the host itself. The search relaxes neighbours in the order of the links
in the file and breaks equal heap keys by insertion, so its floating-point distances are exactly
those of a textbook per-destination Dijkstra over the same graph (the tests compare it with
networkx's). Cost: O(attachments x links x log routers) to compute, O(routers x hosts) to fill the
forwarding tables, no graph object per destination.

ECMP (routing/ecmp.py): `equal_cost_hops` gives, instead of the tie rule's one next hop, every
next hop within the tie tolerance, in the router's link order (the tie rule's choice first). A
member other than that first one must lead to a neighbour strictly closer to the destination, so
the sets never form a loop (zero-cost links, tolerance). Computed only when a run asks for ECMP.
"""
from __future__ import annotations

from heapq import heappop, heappush

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


def _keep_lowest(neighbours: dict, node, weight) -> None:
    """Add an edge to an adjacency dict; a parallel edge keeps the first position, lowest weight."""
    if node not in neighbours or neighbours[node] > weight:
        neighbours[node] = weight


def dijkstra(adjacency: dict, starts) -> dict:
    """Distances from a virtual source over `adjacency` (node -> {neighbour: weight}, in link
    order). `starts` are (node, distance) pairs, the source's own edges in link order. Neighbours
    are relaxed in adjacency order and equal keys leave the heap in insertion order."""
    dist: dict = {}
    seen: dict = {}
    heap: list = []
    count = 0
    for node, d in starts:
        if node not in seen or d < seen[node]:
            seen[node] = d
            heappush(heap, (d, count, node))
            count += 1
    while heap:
        d, _, v = heappop(heap)
        if v in dist:
            continue
        dist[v] = d
        for u, weight in adjacency[v].items():
            if u in dist:
                continue
            vu = d + weight
            if u not in seen or vu < seen[u]:
                seen[u] = vu
                heappush(heap, (vu, count, u))
                count += 1
    return dist


def _first_within(ports, lowest, dist):
    """(position, cost, hop) of the first of a router's router-facing ports [(position, cost,
    far, hop)] whose (link cost + far end's distance) is within the tie tolerance of `lowest`,
    or None. `lowest` is the router's own distance: Dijkstra makes it exactly the lowest such sum
    (every neighbour settled before the router relaxed it with that sum; every other one is at
    least as far), so this is the tie rule's choice among those ports."""
    limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
    get = dist.get
    for position, cost, far, hop in ports:
        d = get(far)
        if d is not None:
            total = cost + d
            if total <= limit:
                return position, total, hop
    return None


def _all_within(candidates, lowest, dist_of_far):
    """The hops of `candidates` [(position, cost, far, hop)], in position order, whose (cost +
    far's distance) is within the tie tolerance of `lowest`: the first such one, then those whose
    far end is strictly closer than `lowest` (loop freedom). `dist_of_far(far)` may be None."""
    limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
    hops: list = []
    for _, cost, far, hop in sorted(candidates, key=lambda c: c[0]):
        d = dist_of_far(far)
        if d is None or cost + d > limit:
            continue
        if not hops or d < lowest:
            hops.append(hop)
    return tuple(hops)


class _Attachment:
    """The hosts reaching the routers through the same (router, cost) edges: one search."""

    __slots__ = ("starts", "hosts", "dist", "choices", "near")

    def __init__(self, starts: tuple):
        self.starts = starts
        self.hosts: list = []
        self.dist: dict = {}
        self.choices: dict = {}     # router -> (cost, hop), routers not attached to the hosts
        self.near: dict = {}        # (router, host) -> (cost, hop), routers attached to them


class ShortestPaths:
    """Shortest-path routes of every router towards every host.

    `routers` and `hosts` are node keys, `edges` are (end, end, cost) in file order, `ports` maps
    each router to its ports [(cost, far end, hop)] in its link order (the tie order); a hop is
    whatever the caller wants back (a `LinkDirection`, a link index). `entry(router, host)` is
    the chosen (cost, hop) or None when the router cannot reach the host."""

    def __init__(self, routers, hosts, edges, ports: dict):
        is_router = set(routers)
        self.routers = list(routers)
        self.hosts = list(hosts)
        self.ports = ports
        adjacency: dict = {r: {} for r in self.routers}
        host_edges: dict = {h: {} for h in self.hosts}
        for a, b, weight in edges:
            if a in is_router:
                if b in is_router:
                    _keep_lowest(adjacency[a], b, weight)
                    _keep_lowest(adjacency[b], a, weight)
                elif b in host_edges:
                    _keep_lowest(host_edges[b], a, weight)
            elif b in is_router and a in host_edges:
                _keep_lowest(host_edges[a], b, weight)
        self.adjacency = adjacency
        self._router_ports: dict = {}      # router -> [(position, cost, far router, hop)]
        self._host_ports: dict = {}        # router -> {host: [(position, cost, hop)]}
        for router in self.routers:
            towards_routers: list = []
            towards_hosts: dict = {}
            for position, (cost, far, hop) in enumerate(ports[router]):
                if far in is_router:
                    towards_routers.append((position, cost, far, hop))
                else:
                    towards_hosts.setdefault(far, []).append((position, cost, hop))
            self._router_ports[router] = towards_routers
            self._host_ports[router] = towards_hosts
        attachments: dict = {}
        self._attachment_of: dict = {}
        for host in self.hosts:
            starts = tuple(host_edges[host].items())
            attachment = attachments.get(starts)
            if attachment is None:
                attachment = attachments[starts] = _Attachment(starts)
            attachment.hosts.append(host)
            self._attachment_of[host] = attachment
        self.attachments = list(attachments.values())
        for attachment in self.attachments:
            self._solve(attachment)

    def _solve(self, attachment: _Attachment) -> None:
        dist = attachment.dist = dijkstra(self.adjacency, attachment.starts)
        near = {router for router, _ in attachment.starts}
        router_ports, choices = self._router_ports, attachment.choices
        for router, lowest in dist.items():
            chosen = _first_within(router_ports[router], lowest, dist)
            if router not in near:
                if chosen is not None:
                    choices[router] = chosen[1:]
                continue
            # attached to the hosts: a host's own port (at distance cost + 0) may come first
            limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
            own_ports = self._host_ports[router]
            for host in attachment.hosts:
                pick = chosen
                for position, cost, hop in own_ports.get(host, ()):
                    total = cost + 0
                    if total <= limit:
                        if pick is None or position < pick[0]:
                            pick = (position, total, hop)
                        break
                if pick is not None:
                    attachment.near[router, host] = pick[1:]

    def entry(self, router, host):
        """(cost, hop) of `router`'s route to `host`, or None."""
        attachment = self._attachment_of[host]
        found = attachment.near.get((router, host))
        return found if found is not None else attachment.choices.get(router)

    def equal_cost_hops(self, router, host) -> tuple:
        """The next hops of `router` towards `host` whose route cost is within the tie
        tolerance of the lowest, in the router's link order (empty if unreachable)."""
        attachment = self._attachment_of[host]
        lowest = attachment.dist.get(router)
        if lowest is None:
            return ()
        dist = attachment.dist
        candidates = list(self._router_ports[router])
        if (router, host) in attachment.near:
            candidates += [(position, cost, host, hop)
                           for position, cost, hop in self._host_ports[router].get(host, ())]
        return _all_within(candidates, lowest, lambda far: 0 if far is host else dist.get(far))

    def equal_cost_tables(self) -> dict:
        """router -> {host: equal-cost next hops}, every route, as `equal_cost_hops` gives them
        (one computation per attachment and router away from the hosts' own routers)."""
        tables: dict = {router: {} for router in self.routers}
        router_ports = self._router_ports
        for attachment in self.attachments:
            dist = attachment.dist
            hosts = attachment.hosts
            for router in attachment.choices:
                hops = _all_within(router_ports[router], dist[router], dist.get)
                tables[router].update(dict.fromkeys(hosts, hops))
            for router, host in attachment.near:
                tables[router][host] = self.equal_cost_hops(router, host)
        return tables

    def distance(self, router, host):
        """Shortest-path cost from `router` to `host` (None if unreachable)."""
        entry = self.entry(router, host)
        return None if entry is None else entry[0]

    def table(self, router) -> dict:
        """host -> (cost, hop) of every host `router` reaches, in host order."""
        out = {}
        for host in self.hosts:
            entry = self.entry(router, host)
            if entry is not None:
                out[host] = entry
        return out

    def hops(self) -> dict:
        """router -> {host: hop}, every route (built by whole attachments at once)."""
        tables: dict = {router: {} for router in self.routers}
        for attachment in self.attachments:
            hosts = attachment.hosts
            for router, (_, hop) in attachment.choices.items():
                tables[router].update(dict.fromkeys(hosts, hop))
            for (router, host), (_, hop) in attachment.near.items():
                tables[router][host] = hop
        return tables


def network_paths(routers, hosts, links, cost=link_cost) -> ShortestPaths:
    """`ShortestPaths` of a built network: hops are outgoing `LinkDirection`s."""
    ports = {router: [(cost(link), d.dst, d) for link, d in zip(router.links, router.out)]
             for router in routers}
    edges = [(link.ends[0], link.ends[1], cost(link)) for link in links]
    return ShortestPaths(routers, hosts, edges, ports)


def distances_to(destination, routers, links, cost=link_cost, is_router=None) -> dict:
    """Shortest-path cost from every router (and the destination) to `destination`.

    `links` have ``ends`` (two nodes); `is_router(node)` says which nodes forward (default: the
    `Router` objects), so the same computation serves built networks and plain topology data."""
    if is_router is None:
        def is_router(node):
            return isinstance(node, Router)
    routers = [r for r in routers if is_router(r)]
    edges = [(link.ends[0], link.ends[1], cost(link)) for link in links]
    adjacency: dict = {r: {} for r in routers}
    starts: dict = {}
    for a, b, weight in edges:
        if a in adjacency and b in adjacency:
            _keep_lowest(adjacency[a], b, weight)
            _keep_lowest(adjacency[b], a, weight)
        elif a == destination and b in adjacency:
            _keep_lowest(starts, b, weight)
        elif b == destination and a in adjacency:
            _keep_lowest(starts, a, weight)
    dist = {destination: 0}
    dist.update(dijkstra(adjacency, starts.items()))
    return dist


def shortest_routes(destination, routers, links, cost=link_cost) -> dict:
    """Router -> (cost, outgoing LinkDirection) towards `destination`; routers with no path are
    absent. A router's links are attached in file order, so the documented tie rule applies."""
    paths = network_paths(routers, [destination], links, cost)
    return {router: entry for router in routers
            if (entry := paths.entry(router, destination)) is not None}


def next_hops(destination, routers, links, cost=link_cost) -> dict:
    """Router -> outgoing LinkDirection towards `destination`."""
    return {router: d for router, (_, d) in shortest_routes(destination, routers, links, cost).items()}


def install_static_routes(routers, hosts, links, cost=link_cost, *, ecmp: str | None = None,
                          seed=None) -> ShortestPaths:
    """Fill every router's forwarding table with shortest paths to every host.

    `ecmp` "flow" or "packet": entries with several equal-cost next hops become ECMP groups
    (routing/ecmp.py, seeded by `seed`). Returns the `ShortestPaths` (costs and directions of
    the routes, by `entry`; the equal-cost sets by `equal_cost_hops`)."""
    paths = network_paths(routers, hosts, links, cost)
    if ecmp is None:
        for router, table in paths.hops().items():
            router.routes.update(table)
        return paths
    from routing.ecmp import GroupMaker
    for router, table in paths.equal_cost_tables().items():
        maker = GroupMaker(ecmp, seed, router.id)
        routes = router.routes
        for host, hops in table.items():
            routes[host] = maker.entry(hops)
    return paths


def plain_paths(routers, hosts, links) -> ShortestPaths:
    """`ShortestPaths` of a topology given as plain data, without building it: `routers` and
    `hosts` are node ids, `links` are (link id, (end, end), cost_s) in file order. Hops are
    (link index, next node id)."""
    ports: dict = {router: [] for router in routers}
    for index, (_, (a, b), cost_s) in enumerate(links):
        if a in ports:
            ports[a].append((cost_s, b, (index, b)))
        if b in ports:
            ports[b].append((cost_s, a, (index, a)))
    edges = [(a, b, cost_s) for _, (a, b), cost_s in links]
    return ShortestPaths(routers, hosts, edges, ports)


def plain_next_hops(routers, hosts, links) -> dict:
    """The static forwarding tables of a topology given as plain data (see `plain_paths`).
    Returns (router id, host id) -> (cost_s, link index, next node id), by the same distances and
    tie rule as `install_static_routes` (a router's links in file order)."""
    paths = plain_paths(routers, hosts, links)
    tables = {}
    for host in paths.hosts:
        for router in paths.routers:
            entry = paths.entry(router, host)
            if entry is not None:
                total, (index, far) = entry
                tables[router, host] = (total, index, far)
    return tables
