"""Static routing: shortest paths by link cost, computed once before the run.

The cost of a link is its static cost: the topology's `cost` if given, else its propagation
delay. Hosts never forward, so paths to a destination host run through routers only. For each
router and destination host, the next hop is the link that
minimises (link cost + distance of the neighbour to the destination); equal costs (within a
relative 1e-9) are broken by the link's position in the topology file, first wins. The same rule
is the reference for dynamic routing.

A next hop leads strictly closer to the destination, so routes never loop. Only a router link
too cheap to tell apart from no link at all (cost zero, or within the tie tolerance of the path's)
can tie with a neighbour no closer than the router itself; such a neighbour is a next hop only
when it is exactly as far and the search reached it in fewer hops (`_Attachment.hops`), so each
step lowers (distance, hops) and the routes still never loop. A network without such links never
counts hops (`ShortestPaths.counts_hops`), and its routes are the tie rule's alone.

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

import math
from collections import deque
from functools import partial
from heapq import heappop, heappush
from itertools import chain, repeat
from typing import Any

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
            vu = d + weight           # (a settled u has seen[u] <= d <= vu: never pushed again)
            if u not in seen or vu < seen[u]:
                seen[u] = vu
                heappush(heap, (vu, count, u))
                count += 1
    return dist


def _neighbour_masks(neighbours: dict) -> tuple:
    """({router: 1 << its index}, {router: the OR of its neighbours' bits}) of `neighbours`
    ({router: neighbour routers})."""
    bits = {router: 1 << index for index, router in enumerate(neighbours)}
    masks = {}
    for router, near in neighbours.items():
        mask = 0
        for u in near:
            mask |= bits[u]
        masks[router] = mask
    return bits, masks


def _first_within(ports, lowest, dist, hops=None, own_hops=0):
    """(position, cost, hop) of the first of a router's router-facing ports [(position, cost,
    far, hop)] whose (link cost + far end's distance) is within the tie tolerance of `lowest`,
    or None. `lowest` is the router's own distance: Dijkstra makes it exactly the lowest such sum
    (every neighbour settled before the router relaxed it with that sum; every other one is at
    least as far), so this is the tie rule's choice among those ports. With `hops` (the search's
    hop counts, the router's own `own_hops`), a far end no closer than `lowest` qualifies only
    when exactly as far and fewer hops away (`_leads_on`)."""
    limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
    get = dist.get
    for position, cost, far, hop in ports:
        d = get(far)
        if d is not None:
            total = cost + d
            if total <= limit and (hops is None or _leads_on(d, far, lowest, hops, own_hops)):
                return position, total, hop
    return None


def _leads_on(d, far, lowest, hops, own_hops) -> bool:
    """Whether a neighbour at distance `d` from the destination (`far`, `hops[far]` hops from it
    in the search) may be the next hop of a router at distance `lowest`, `own_hops` hops: it is
    strictly closer, or as close and fewer hops away. Every next hop so lowers (distance, hops),
    and no route loops, even over zero-cost links; the router's own predecessor in the search
    always qualifies. A far end the search has no hops for is the destination host (-1)."""
    return d < lowest or (d == lowest and hops.get(far, -1) < own_hops)


def _next_layer(neighbours: dict, layer: list, hops_of: dict, count: int) -> list:
    """The neighbours of `layer`'s routers that are `count` hops from one end of a two-ended
    search (`hops_of`: its hop counts), each once (`ShortestPaths.prime`)."""
    return [u for u in dict.fromkeys(u for v in layer for u in neighbours[v])
            if hops_of.get(u) == count]


def _all_within(candidates, lowest, dist_of_far, search_hops=None, own_hops=0):
    """The hops of `candidates` [(position, cost, far, hop)], given in position order, whose (cost +
    far's distance) is within the tie tolerance of `lowest`: the first such one, then those whose
    far end is strictly closer than `lowest` (loop freedom); with `search_hops` (the search's hop
    counts, the router's own `own_hops`), every one that `_leads_on`, so that the first is
    `_first_within`'s. `dist_of_far(far)` may be None."""
    limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
    hops: list = []
    for _, cost, far, hop in candidates:
        d = dist_of_far(far)
        if d is None or cost + d > limit:
            continue
        if search_hops is None:
            if d < lowest or not hops:
                hops.append(hop)
        elif _leads_on(d, far, lowest, search_hops, own_hops):
            hops.append(hop)
    return tuple(hops)


class _Attachment:
    """The hosts reaching the routers through the same (router, cost) edges: one search, run
    only as far as the routes asked for need it (`ShortestPaths._settle`)."""

    __slots__ = ("starts", "hosts", "dist", "seen", "heap", "count", "unseen", "near_routers",
                 "choices", "near", "equal_cost", "hops", "depth")

    def __init__(self, starts: tuple, breadth_first: bool, counts_hops: bool = False):
        self.starts = starts
        self.hosts: list = []
        self.dist: dict = {}        # router -> distance, routers settled so far (final values)
        # router -> the fewest hops from the start of the paths of exactly its distance (a
        # breadth-first search's layer), when the network `counts_hops`
        self.hops: dict | None = dict.fromkeys([r for r, _ in starts], 0) if counts_hops else None
        self.depth = 0              # a breadth-first search: the layers settled so far
        self.seen: dict = {}        # router -> best distance pushed so far (heap searches;
        #                             a breadth-first one has seen exactly the settled routers
        #                             whenever it looks, so it asks `dist`)
        # the search's frontier: a heap of (distance, insertion count, router), or for a
        # breadth-first search (`ShortestPaths._settle`) a deque of them in insertion order
        # (with hop counts and not breadth-first: (distance, hops, insertion count, router),
        # `ShortestPaths._settle_counting_hops`)
        heap: list = []
        self.count = 0
        with_hops = counts_hops and not breadth_first
        for node, d in starts:      # `dijkstra`'s start, kept to be resumed
            if node not in self.seen or d < self.seen[node]:
                self.seen[node] = d
                heappush(heap, (d, 0, self.count, node) if with_hops else (d, self.count, node))
                self.count += 1
        self.heap: Any = deque(heap) if breadth_first else heap     # (one start if breadth-first)
        # the routers not in `seen` as a bit mask (`ShortestPaths._settle_breadth_first` with
        # neighbour masks), set when that search first runs
        self.unseen: int | None = None
        self.near_routers = {router for router, _ in starts}
        self.choices: dict = {}     # router -> (cost, hop) or None, routers not attached to the hosts
        self.near: dict = {}        # (router, host) -> (cost, hop) or None, routers attached to them
        self.equal_cost: dict = {}  # router -> equal-cost hops, routers not attached to the hosts


class ShortestPaths:
    """Shortest-path routes of every router towards every host.

    `routers` and `hosts` are node keys, `edges` are (end, end, cost) in file order, `ports` maps
    each router to its ports [(cost, far end, hop)] in its link order (the tie order); a hop is
    whatever the caller wants back (a `LinkDirection`, a link index). `entry(router, host)` is
    the chosen (cost, hop) or None when the router cannot reach the host.

    Nothing is searched when it is built: an entry is computed when it is first asked for, by
    running the attachment's Dijkstra only until the router and every router as close to the
    host as it are settled (the search is resumed, never restarted, so the distances and their
    order are exactly those of the whole search), and kept. A run's forwarding tables ask only
    for the entries its packets use (`RouteTable`)."""

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
        self._is_router = is_router
        weights = {w for neighbours in adjacency.values() for w in neighbours.values()}
        # a router link within the tie tolerance of the longest possible path (every router
        # link and the dearest host link) can tie with a neighbour no closer than the router:
        # only then do the searches count hops (`_leads_on`); without such a link every tie
        # leads strictly closer (cost + d <= lowest (1 + tolerance) with cost > tolerance x
        # lowest gives d < lowest; the factor 2 covers rounding)
        longest = sum(w for neighbours in adjacency.values() for w in neighbours.values()) / 2 \
            + max((w for edges_of in host_edges.values() for w in edges_of.values()), default=0.0)
        self.counts_hops = bool(weights) and \
            min(weights) <= 2 * TIE_TOLERANCE * max(longest, 1e-12)
        # every router link costs the same: a breadth-first search gives Dijkstra's distances
        # and order (`_settle`), with neighbours as plain tuples
        self._uniform = weights.pop() if len(weights) == 1 else None
        self._neighbours = ({r: tuple(neighbours) for r, neighbours in adjacency.items()}
                            if self._uniform is not None else None)
        # and with many links per router, the breadth-first search finds the routers a router
        # reaches first as a bit mask (`_settle_breadth_first`): one mask operation a router
        # instead of one look-up a link. Measured (CPython 3.11), that costs about 0.35 us +
        # 0.17 us per 1000 routers a router against about 0.1 us a link: masks when the mean
        # number of neighbours is above 4 + routers / 600 (a k = 24 fat tree's 720 switches:
        # 19.2 against 5.2, 0.14 ms a search instead of 0.34)
        self._bits: dict = {}              # router -> 1 << its index
        self._masks: dict | None = None    # router -> the OR of its neighbours' bits
        n_routers = len(adjacency)
        if self._neighbours is not None and \
                sum(map(len, adjacency.values())) > n_routers * (4 + n_routers / 600):
            self._bits, self._masks = _neighbour_masks(self._neighbours)
        self._router_ports: dict = {}      # router -> [(position, cost, far router, hop)]
        self._host_ports: dict = {}        # router -> {host: [(position, cost, hop)]}, on demand
        attachments: dict = {}
        self._attachment_of: dict = {}
        for host in self.hosts:
            starts = tuple(host_edges[host].items())
            attachment = attachments.get(starts)
            if attachment is None:
                attachment = attachments[starts] = _Attachment(
                    starts, self._uniform is not None and len(starts) == 1, self.counts_hops)
            attachment.hosts.append(host)
            self._attachment_of[host] = attachment
        self.attachments = list(attachments.values())

    def _ports_of(self, router) -> list:
        """The router's router-facing ports [(position, cost, far router, hop)] (and, kept in
        `_host_ports`, its host-facing ones), split from `ports` on first use."""
        found = self._router_ports.get(router)
        if found is None:
            is_router = self._is_router
            found = self._router_ports[router] = []
            towards_hosts: dict = {}
            for position, (cost, far, hop) in enumerate(self.ports[router]):
                if far in is_router:
                    found.append((position, cost, far, hop))
                else:
                    towards_hosts.setdefault(far, []).append((position, cost, hop))
            self._host_ports[router] = towards_hosts
        return found

    def _settle(self, attachment: _Attachment, router=None, limit: float = math.inf) -> None:
        """Resume the attachment's search (`dijkstra`, step for step): until `router` is settled
        (or cannot be reached) when given, then while the closest unsettled router is within
        `limit`."""
        dist, seen, heap = attachment.dist, attachment.seen, attachment.heap
        if type(heap) is deque:
            self._settle_breadth_first(attachment, router, limit)
            return
        if attachment.hops is not None:
            self._settle_counting_hops(attachment, router, limit)
            return
        adjacency = self.adjacency
        count = attachment.count
        while heap:
            if router is not None:
                if router in dist:
                    break
            elif heap[0][0] > limit:
                break
            d, _, v = heappop(heap)
            if v in dist:
                continue
            dist[v] = d
            for u, weight in adjacency[v].items():
                vu = d + weight       # (a settled u has seen[u] <= d <= vu: never pushed again)
                if u not in seen or vu < seen[u]:
                    seen[u] = vu
                    heappush(heap, (vu, count, u))
                    count += 1
        attachment.count = count

    def _settle_counting_hops(self, attachment: _Attachment, router, limit: float) -> None:
        """`_settle`'s heap search on a network that `counts_hops`: Dijkstra on (distance,
        hops), heap entries (distance, hops, insertion count, router). Each router settles at
        its distance with the fewest hops of the paths of that exact distance, and routers of
        equal distance settle fewest hops first."""
        dist, seen, heap, hops = attachment.dist, attachment.seen, attachment.heap, attachment.hops
        assert hops is not None
        adjacency = self.adjacency
        count = attachment.count
        while heap:
            if router is not None:
                if router in dist:
                    break
            elif heap[0][0] > limit:
                break
            d, h, _, v = heappop(heap)
            if v in dist:
                continue
            dist[v] = d
            further = h + 1
            for u, weight in adjacency[v].items():
                if u in dist:
                    continue
                vu = d + weight
                if u not in seen or vu < seen[u] or (vu == seen[u] and further < hops[u]):
                    seen[u] = vu
                    hops[u] = further
                    heappush(heap, (vu, further, count, u))
                    count += 1
        attachment.count = count

    def _settle_breadth_first(self, attachment: _Attachment, router, limit: float) -> None:
        """`_settle` when every router link costs the same W and the search has one start:
        Dijkstra then pushes each router once, when first reached, at the start's distance plus
        W once per hop (in floating point, added hop by hop as Dijkstra does: never decreasing),
        and pops them in the order they were pushed -- a breadth-first search, which this is,
        with the same distances and the same order.

        It settles a whole layer (the routers one hop count away, all at the same distance) at
        a time, so the queue always holds exactly one layer, in the order the router-by-router
        search appends it: the order of first appearance, in the layer's neighbour lists taken
        in the layer's order, of the routers not seen before. Asked for `router`, it stops at
        the end of `router`'s layer rather than at `router`; `_distance`, its only caller with a
        router, then settles the rest of that layer anyway (all at `router`'s distance, within
        the tie tolerance of it), so every search is left exactly as the one-at-a-time search
        leaves it."""
        dist, queue = attachment.dist, attachment.heap
        neighbours = self._neighbours
        assert neighbours is not None
        weight = self._uniform
        n_routers = len(neighbours)
        count = attachment.count
        while queue:
            d = queue[0][0]                     # the layer's distance
            if router is not None:
                if router in dist:
                    break
            elif d > limit:
                break
            layer = [v for _, _, v in queue]
            queue.clear()
            dist.update(zip(layer, repeat(d)))
            if attachment.hops is not None:
                attachment.hops.update(zip(layer, repeat(attachment.depth)))
            attachment.depth += 1
            if self._masks is not None:
                reached = self._expand_by_masks(attachment, layer)
            elif len(dist) == n_routers:        # every router reached: nothing left to find
                reached = []
            else:                               # (seen: the settled, the queue being empty)
                # the unseen first, then each once in the order of first appearance: most
                # neighbours of a late layer are settled (40 000 routers: 4.2 -> 3.9 s)
                reached = list(dict.fromkeys([u for u in chain.from_iterable(
                    map(neighbours.__getitem__, layer)) if u not in dist]))
            du = d + weight
            queue.extend(zip(repeat(du), range(count, count + len(reached)), reached))
            count += len(reached)
        attachment.count = count

    def _expand_by_masks(self, attachment: _Attachment, layer: list) -> list:
        """The routers `layer` reaches that the search has not seen, in the order the
        router-by-router search appends them (`_settle_breadth_first`): for each router of the
        layer in turn, its neighbours in their order whose bit is in `fresh`, the bits of its
        neighbours no earlier router had seen -- exactly those the search finds not yet seen."""
        masks, bits, neighbours = self._masks, self._bits, self._neighbours
        assert masks is not None and neighbours is not None
        unseen = attachment.unseen
        if unseen is None:
            unseen = (1 << len(bits)) - 1
            for router in attachment.dist:      # (seen: the settled, the queue being empty)
                unseen ^= bits[router]
        reached: list = []
        for v in layer:
            if not unseen:                      # every router reached: nothing left to find
                break
            fresh = masks[v] & unseen
            if fresh:
                unseen ^= fresh
                reached += [u for u in neighbours[v] if bits[u] & fresh]
        attachment.unseen = unseen
        return reached

    def _distance(self, attachment: _Attachment, router):
        """The router's distance to the attachment's hosts (None if unreachable), with every
        router whose distance is within the tie tolerance of it settled."""
        dist = attachment.dist
        lowest = dist.get(router)
        if lowest is None:
            self._settle(attachment, router)
            lowest = dist.get(router)
            if lowest is None:
                return None
        limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
        heap = attachment.heap
        if heap and heap[0][0] <= limit:
            self._settle(attachment, limit=limit)
        return lowest

    def entry(self, router, host):
        """(cost, hop) of `router`'s route to `host`, or None."""
        attachment = self._attachment_of[host]
        if router not in attachment.near_routers:
            choices = attachment.choices
            if router in choices:
                return choices[router]
            lowest = self._distance(attachment, router)
            chosen = None
            if lowest is not None:
                chosen = self._first_hop(attachment, router, lowest, attachment.dist)
                if chosen is not None:
                    chosen = chosen[1:]
            choices[router] = chosen
            return chosen
        key = (router, host)
        near = attachment.near
        if key in near:
            return near[key]
        # attached to the host: the host's own port (at distance cost + 0) may come first
        lowest = self._distance(attachment, router)       # (a start: never None)
        chosen = self._first_hop(attachment, router, lowest, attachment.dist)
        limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
        pick = chosen
        for position, cost, hop in self._host_ports[router].get(host, ()):
            total = cost + 0
            if total <= limit:
                if pick is None or position < pick[0]:
                    pick = (position, total, hop)
                break
        found = near[key] = None if pick is None else pick[1:]
        return found

    def _first_hop(self, attachment: _Attachment, router, lowest, dist):
        """`_first_within` of the router's ports, with the search's hop counts if it keeps them."""
        hops = attachment.hops
        return _first_within(self._ports_of(router), lowest, dist, hops,
                             0 if hops is None else hops[router])

    def prime(self, router, host) -> bool:
        """Compute the entries towards `host` of every router on a shortest path from `router`,
        searching from both ends instead of from the host's side alone; False if it cannot
        (then `entry` searches as usual). The entries are those `entry` gives, kept where it
        looks first: what a breadth-first search from the host finds about a router on such a
        path, its distance and the first of its ports leading one hop closer, depends only on
        the routers of those paths.

        For breadth-first searches without neighbour masks (every router link costs the same,
        on a sparse graph), when the host's search has not reached `router` yet. Two searches,
        from `router` and from the host's router, grow a hop layer at a time, the smaller
        frontier first, until they meet at h hops; the routers on shortest paths are then those
        at hop k from `router` and h - k from the host's router, found layer by layer outwards
        from a layer both searches have reached. In a graph where every router is a few hops
        from every other, this visits two balls of about half the distance instead of the whole
        graph."""
        attachment = self._attachment_of.get(host)
        if attachment is None or self._masks is not None or type(attachment.heap) is not deque:
            return False
        neighbours = self._neighbours
        if neighbours is None or router not in neighbours or router in attachment.dist:
            return False
        (target, start_s), = attachment.starts
        if router is target:
            return False
        # hop counts from each end, and each side's layers
        near_hops: dict = {router: 0}
        far_hops: dict = {target: 0}
        near_layers: list = [[router]]
        far_layers: list = [[target]]
        hops = -1
        while hops < 0:
            if not near_layers[-1] or not far_layers[-1]:
                return False                      # disconnected
            grow_near = len(near_layers[-1]) <= len(far_layers[-1])
            seen, other, layers = ((near_hops, far_hops, near_layers) if grow_near
                                   else (far_hops, near_hops, far_layers))
            depth = len(layers)
            layer = []
            for v in layers[-1]:
                for u in neighbours[v]:
                    if u not in seen:
                        seen[u] = depth
                        layer.append(u)
                        met = other.get(u)
                        if met is not None and (hops < 0 or depth + met < hops):
                            hops = depth + met
            layers.append(layer)
        # the routers on shortest paths, by hop count from `router`: a layer both searches have
        # reached, then outwards on each side
        middle = min(len(near_layers) - 1, hops)
        middle_layer = [v for v in near_layers[middle] if far_hops.get(v) == hops - middle]
        on_paths: dict = dict.fromkeys(middle_layer, middle)
        layer = middle_layer
        for k in range(middle - 1, -1, -1):       # towards `router`
            layer = _next_layer(neighbours, layer, near_hops, k)
            on_paths.update(dict.fromkeys(layer, k))
        layer = middle_layer
        for k in range(middle + 1, hops + 1):     # towards the host's router
            layer = _next_layer(neighbours, layer, far_hops, hops - k)
            on_paths.update(dict.fromkeys(layer, k))
        # their distances as the host's search adds them up, hop by hop from its start
        weight = self._uniform
        assert weight is not None
        distances = [start_s]
        for _ in range(hops):
            distances.append(distances[-1] + weight)
        for d in distances:      # a router link one hop away from a router's own layer must
            if not d + weight > d + TIE_TOLERANCE * max(abs(d), 1e-12):   # fall outside its ties
                return False     # (else the whole search's tie rule reaches beyond these paths)
        dist = {v: distances[hops - k] for v, k in on_paths.items()}
        choices, near = attachment.choices, attachment.near_routers
        for v in on_paths:
            if v in near or v in choices:
                continue
            chosen = _first_within(self._ports_of(v), dist[v], dist)
            choices[v] = None if chosen is None else chosen[1:]
        return True

    def hop(self, router, host):
        """The outgoing hop of `router`'s route to `host`, or None."""
        found = self.entry(router, host)
        return None if found is None else found[1]

    def _settled_all(self, attachment: _Attachment) -> dict:
        """The attachment's whole search (every reachable router settled)."""
        if attachment.heap:
            self._settle(attachment)
        return attachment.dist

    def equal_cost_hops(self, router, host) -> tuple:
        """The next hops of `router` towards `host` whose route cost is within the tie
        tolerance of the lowest, in the router's link order (empty if unreachable). Computed
        once per attachment for a router not attached to the attachment's hosts (their routes
        are the same there), per host for one that is."""
        attachment = self._attachment_of[host]
        near = router in attachment.near_routers
        if not near:
            found = attachment.equal_cost.get(router)
            if found is not None:
                return found
        lowest = self._distance(attachment, router)
        if lowest is None:
            hops: tuple = ()
        else:
            dist = attachment.dist
            candidates = self._ports_of(router)
            if near and self.entry(router, host) is not None:     # the host's own ports too
                own = self._host_ports[router].get(host, ())
                candidates = sorted([*candidates, *((position, cost, host, hop)
                                                    for position, cost, hop in own)],
                                    key=lambda c: c[0])
            search_hops = attachment.hops
            hops = _all_within(candidates, lowest, lambda far: 0 if far is host else dist.get(far),
                               search_hops, 0 if search_hops is None else search_hops[router])
        if not near:
            attachment.equal_cost[router] = hops
        return hops

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

    def tables(self) -> dict:
        """router -> `table(router)`, every router (Bellman-Ford's routers forward with these
        until their first installation). Each attachment's search is run whole once; then each
        router, its ports split once, chooses once per attachment away from the attachment's
        hosts, as `entry` does (`_distance` has nothing left to settle: `_first_within` of the
        router's own distance), rather than an `entry` call per router and host."""
        searches = [(attachment, self._settled_all(attachment)) for attachment in self.attachments]
        host_attachments = [(host, self._attachment_of[host]) for host in self.hosts]
        tables: dict = {}
        for router in self.routers:
            ports = self._ports_of(router)
            for attachment, dist in searches:
                choices = attachment.choices
                if router in choices or router in attachment.near_routers:
                    continue
                lowest = dist.get(router)
                hops = attachment.hops
                chosen = None if lowest is None else _first_within(
                    ports, lowest, dist, hops, 0 if hops is None else hops[router])
                choices[router] = None if chosen is None else chosen[1:]
            table = tables[router] = {}
            for host, attachment in host_attachments:
                if router in attachment.near_routers:
                    found = self.entry(router, host)
                else:
                    found = attachment.choices[router]
                if found is not None:
                    table[host] = found
        return tables

    def hops(self) -> dict:
        """router -> {host: hop}, every route (computing every entry)."""
        tables: dict = {router: {} for router in self.routers}
        for attachment in self.attachments:
            dist = self._settled_all(attachment)
            hosts = attachment.hosts
            near_routers = attachment.near_routers
            for router in dist:
                if router not in near_routers:
                    found = self.entry(router, hosts[0])
                    if found is not None:
                        tables[router].update(dict.fromkeys(hosts, found[1]))
            for router in dist:
                if router in near_routers:
                    for host in hosts:
                        found = self.entry(router, host)
                        if found is not None:
                            tables[router][host] = found[1]
        return tables


class RouteTable(dict):
    """A router's forwarding table (destination -> outgoing `LinkDirection`) that computes an
    entry the first time it is looked up (``table[dst]``, as `Router.route` does for a packet
    with no entry yet) from `source` (``source(dst)``: the hop or None), and keeps it. Until
    then the entry is not in the table (``get``, ``in`` and iteration see the entries computed
    so far; `ShortestPaths.hops` gives them all). `clear` empties the table for good: nothing
    is computed afterwards."""

    __slots__ = ("source",)

    def __init__(self, source=None):
        super().__init__()
        self.source = source

    def __missing__(self, dst):
        source = self.source
        hop = None if source is None else source(dst)
        if hop is None:
            raise KeyError(dst)
        self[dst] = hop
        return hop

    def clear(self) -> None:
        self.source = None
        super().clear()


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
    """Give every router a forwarding table of shortest paths to every host.

    Each router gets a `RouteTable` that computes an entry when it is first needed (a packet to
    forward, a look-up), so a run pays for the routes its packets take, not for routers x hosts
    entries; entries already in a router's table stay where static routing has no route. Without
    ECMP an entry is the tie rule's next hop; with `ecmp` "flow" or "packet" it holds every
    equal-cost next hop (`equal_cost_hops`), several of them as an ECMP group (routing/ecmp.py,
    seeded by `seed`; a router's equal sets share one group whenever they are made). Returns the
    `ShortestPaths` (costs and directions of the routes, by `entry`; the equal-cost sets by
    `equal_cost_hops`)."""
    paths = network_paths(routers, hosts, links, cost)
    hop = paths.hop
    if ecmp is not None:
        from routing.ecmp import GroupMaker
    for router in routers:
        if ecmp is None:
            source = partial(hop, router)
        else:
            source = partial(_equal_cost_entry, paths, GroupMaker(ecmp, seed, router.id), router)
        table = RouteTable(source)
        for dst, out in router.routes.items():
            if dst not in paths._attachment_of or hop(router, dst) is None:
                table[dst] = out
        router.routes = table
    return paths


def _equal_cost_entry(paths: ShortestPaths, maker, router, host):
    """`router`'s ECMP forwarding entry towards `host`: its equal-cost next hops as `maker`
    (the router's `GroupMaker`) makes them, or None if it has no route."""
    hops = paths.equal_cost_hops(router, host)
    return maker.entry(hops) if hops else None


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
