"""Turn a validated `TopologySpec` into simulation objects wired together."""
from __future__ import annotations

from typing import TYPE_CHECKING

from components.link import Link
from components.node import GuardedRouter, Host, Router
from flows import ALGORITHMS
from flows.transport import Flow
from routing.static import ShortestPaths, install_static_routes
from simulator.engine import Simulator
from topologies.spec import NO_IMPAIRMENT, TopologySpec

if TYPE_CHECKING:
    from flows.cbr import RateFlow


class Network:
    """Everything a run needs: the simulator, nodes, links and flows by id (in file order), the
    routing agents, and the log of forwarding-table changes."""

    def __init__(self, spec: TopologySpec, sim: Simulator, hosts: dict, routers: dict,
                 links: dict, flows: dict):
        self.spec = spec
        self.sim = sim
        self.hosts = hosts
        self.routers = routers
        self.links = links
        self.flows = flows
        self.agents: list = []
        self.route_log: list[tuple] = []   # (time_s, router, destination, next hop, link, cost_s)
        # the t = 0 tables routes.csv starts with, [(router, {host: (cost_s, entry)})]: a run
        # logs them when it opens routes.csv (netsim/run.py), so their rows, a million at times
        # (every member of every equal-cost set), are written as made, never all held
        self.initial_routes: list = []
        self.seed = spec.seed   # the run's seed (build_network sets the one it used)
        # called with each flow opened while the run goes (a workload's), after `flows` was
        # made: an event trace names their packets (netsim/event_trace.py)
        self.flow_listeners: list = []
        self.tables_changed = 0   # installations that changed some forwarding entry (log_routes)
        # static routing with workloads: the routes of a host pair are logged when a workload
        # first opens a flow between them (`_log_pair_routes`); {destination: {routers logged}},
        # as large as the rows logged (no set of pairs: an all-to-all workload has hosts^2)
        self._static: ShortestPaths | None = None
        self._logged: dict = {}
        self._router_order: dict = {}

    def log_routes(self, time_s: float, router, changes: dict) -> None:
        """Record forwarding-table changes: {destination: (cost_s, direction, ECMP group or
        None)}; a group writes one row per member (docs/outputs.md, routes.csv)."""
        self.tables_changed += 1
        self._append_rows(time_s, router, changes)

    def _append_rows(self, time_s: float, router, changes: dict) -> None:
        for dest, (cost_s, d) in changes.items():
            if d is not None and not hasattr(d, "link"):       # an ECMP group
                for member in d.hops:
                    self.route_log.append((time_s, router.id, dest.id, member.dst.id,
                                           member.link.id, cost_s))
                continue
            self.route_log.append((time_s, router.id, dest.id, d.dst.id if d else "",
                                   d.link.id if d else "", cost_s))

    def _log_pair_routes(self, flow) -> None:
        """Static routing: log, at the time `flow` opens, the entries on its data path towards
        its destination and on its ACK path towards its source that no earlier row gave, the
        first time a workload opens a flow between these two hosts (docs/outputs.md,
        routes.csv): a pair seen before stops at its first router, already logged. Under ECMP
        flow hashing, the entries on this flow's own paths (the members its hashes pick) that
        no earlier row gave: another flow between the same hosts may take other routers. The
        tables are those of t = 0: static ones never change."""
        static = self._static
        assert static is not None
        ecmp = self.spec.routing.ecmp
        now = self.sim.now
        if ecmp == "flow":      # the flow's own paths: another flow of the pair may take others
            directions = _hashed_directions(flow)
        else:
            directions = [(flow.src, flow.dst, None), (flow.dst, flow.src, None)]
        for src, dst, hash_value in directions:
            logged = self._logged.setdefault(dst, set())
            if hash_value is None:
                marked = _path_routers(static, src.out[0].dst, dst, ecmp, logged)
            else:
                marked = [router for router in _hashed_path_routers(src, dst, hash_value)
                          if router not in logged]
                logged.update(marked)
            for router in sorted(marked, key=self._router_order.__getitem__):
                entry = static.entry(router, dst)
                if entry is not None:
                    if ecmp:                           # the installed entry: maybe a group
                        entry = (entry[0], router.routes[dst])
                    self._append_rows(now, router, {dst: entry})

    def flow_paths(self, flow_id: str) -> list:
        """The paths (lists of node ids, source first) flow `flow_id`'s data packets take through
        the current forwarding tables: one, or with ECMP packet spraying every one they may take
        (routing/ecmp.py `flow_paths`)."""
        from routing.ecmp import flow_paths
        return flow_paths(self.flows[flow_id])

    def apply_event(self, event) -> None:
        link = self.links[event.link]
        if event.action == "down":
            link.go_down()
        else:
            link.come_up()


def build_network(spec: TopologySpec, seed: int | None = None) -> Network:
    """Create the simulator, components, flows, routing and scheduled link events of `spec`."""
    seed = spec.seed if seed is None else seed
    sim = Simulator(seed)
    hosts = {host_id: Host(host_id) for host_id in spec.hosts}
    # routing that can loop gets routers with a loop guard (components/node.py GuardedRouter):
    # no loop-free path forwards a packet more often than there are routers
    kind = GuardedRouter if spec.routing.protocol == "bellman-ford" else Router
    routers = {router_id: kind(router_id) for router_id in spec.routers}
    for router in routers.values():
        router.max_forwards = len(routers)
    nodes = {**hosts, **routers}
    links = {}
    for ls in spec.links:
        ends = ls.ends
        link = Link(sim, ls.id, nodes[ends[0]], nodes[ends[1]], ls.rate_bps, ls.delay_s,
                    ls.buffer_bytes, ls.duplex, ls.cost_s, queue=ls.queue)
        impairments = ls.impairments
        if impairments[0] is not NO_IMPAIRMENT or impairments[1] is not NO_IMPAIRMENT:
            for direction, impairment in zip(link.directions, impairments):
                direction.impair(impairment)    # (the shared no-impairment: nothing to do)
        links[ls.id] = link
    flows: dict[str, Flow | RateFlow] = {}
    sizes = spec.packet_sizes
    for fs in spec.flows:
        if fs.kind != "bulk":
            from flows.cbr import RateFlow  # (imported by the runs that have such flows)
            flows[fs.id] = RateFlow(sim, fs.id, hosts[fs.src], hosts[fs.dst], fs.data_bytes,
                                    fs.start_s, fs.rate_bps, sizes.data_bytes, kind=fs.kind,
                                    on_s=fs.on_s, off_s=fs.off_s, periods=fs.periods)
            continue
        flows[fs.id] = Flow(sim, fs.id, hosts[fs.src], hosts[fs.dst], fs.data_bytes, fs.start_s,
                            ALGORITHMS[fs.algorithm], fs.params, fs.transport,
                            sizes.data_bytes, sizes.ack_bytes, ecn=fs.ecn,
                            delayed_ack=fs.delayed_ack)
    net = Network(spec, sim, hosts, routers, links, flows)
    net.seed = seed
    router_list, host_list = list(routers.values()), list(hosts.values())
    ecmp = spec.routing.ecmp
    static = install_static_routes(router_list, host_list, list(links.values()), ecmp=ecmp,
                                   seed=seed)
    if ecmp == "flow":
        from routing.ecmp import set_flow_hashes
        for flow in flows.values():
            set_flow_hashes(flow, seed)
    dynamic = spec.routing.protocol == "bellman-ford"
    installed = None
    if dynamic:        # what each router forwards with until its agent first installs a table
        tables = static.tables()
        installed = {router: _installed_table(router, tables[router], ecmp)
                     for router in router_list}
    net.initial_routes = initial_route_entries(spec, net, static, installed)
    if installed is None and spec.workloads:  # workload pairs: logged as first drawn
        net._static = static
        net._router_order = {router: index for index, router in enumerate(router_list)}
        for router, table in net.initial_routes:
            for host in table:
                net._logged.setdefault(host, set()).add(router)
        net.flow_listeners.append(net._log_pair_routes)
    if installed is not None:
        from routing.distance_vector import start_distance_vector  # (Bellman-Ford runs only)
        net.agents = start_distance_vector(
            sim, router_list, host_list, update_interval_s=spec.routing.update_interval_s,
            settle_s=spec.routing.settle_s, packet_bytes=sizes.routing_bytes,
            on_install=net.log_routes, ecmp=ecmp, seed=seed, installed=installed)
    for ls in spec.links:                      # time-varying links: changes at their times
        link = links[ls.id]
        for changes, change in ((ls.rate_schedule, link.set_rate), (ls.delay_schedule, link.set_delay)):
            for t_s, value in changes:
                if t_s > 0:
                    sim.schedule_at(t_s, change, value)
                else:                          # before anything is sent
                    change(value)
    for link_id in dict.fromkeys(event.link for event in spec.events):
        links[link_id].enable_failures()
    for event in spec.events:
        sim.schedule_at(event.at_s, net.apply_event, event)
    return net


# Up to this many sources towards one destination, the routes on their paths are found by
# searching from both ends of each path (`ShortestPaths.prime`); with more, the destination's
# own search, run once as far as the farthest of them, costs less.
PRIME_SOURCES = 4


def initial_route_entries(spec: TopologySpec, net: Network, static: ShortestPaths,
                          installed: dict | None) -> list:
    """The t = 0 entries routes.csv logs, as [(router, {host: (cost_s, direction)})] in router
    order, hosts in file order: with static routing the entries the flows' packets use (every
    router on the data path of a flow towards its destination, and on its ACK path towards its
    source; under ECMP flow hashing the routers of the one path each direction's hash picks,
    with every member of their sets; a workload's pairs are logged as it draws them,
    `Network._log_pair_routes`); with Bellman-Ford (`installed`: every router's {host: (cost_s,
    forwarding entry)} at t = 0, in host order), whose later changes may move a flow onto any
    router, every router's entry towards every host a flow or workload sends to, taken from
    `installed`. Cost O(entries logged + path lengths), never routers x hosts unless the flows
    ask for it."""
    hosts, routers = net.hosts, net.routers
    ecmp = spec.routing.ecmp
    pairs = [(fs.src, fs.dst) for fs in spec.flows]
    if installed is not None:
        ends = {h for pair in pairs for h in pair}
        ends.update(h for ws in spec.workloads for h in (*ws.src, *ws.dst))
        out = []
        if ends:
            for router in routers.values():
                table = {host: entry for host, entry in installed[router].items()
                         if host.id in ends}
                if table:
                    out.append((router, table))
        return out
    order = {host_id: index for index, host_id in enumerate(spec.hosts)}
    wanted: dict = {}                                  # router -> {host ids}
    if ecmp == "flow":      # each flow's packets take one path, its hash's (routing/ecmp.py)
        for fs in spec.flows:
            for src, dst, hash_value in _hashed_directions(net.flows[fs.id]):
                for router in _hashed_path_routers(src, dst, hash_value):
                    wanted.setdefault(router, set()).add(dst.id)
        pairs = []
    by_destination: dict = {}
    for src, dst in pairs:
        by_destination.setdefault(dst, set()).add(src)
        by_destination.setdefault(src, set()).add(dst)
    for dst_id, src_ids in by_destination.items():
        dst = hosts[dst_id]
        marked: set = set()
        prime = not ecmp and len(src_ids) <= PRIME_SOURCES
        for src_id in src_ids:
            if src_id != dst_id:                   # (a host has exactly one link)
                _path_routers(static, hosts[src_id].out[0].dst, dst, ecmp, marked, prime)
        for router in marked:
            wanted.setdefault(router, set()).add(dst_id)
    out = []
    for router in routers.values():
        ids = wanted.get(router)
        if not ids:
            continue
        table = {}
        for host_id in sorted(ids, key=order.__getitem__):
            entry = static.entry(router, hosts[host_id])
            if entry is not None:
                if ecmp:                               # the installed entry: maybe a group
                    entry = (entry[0], router.routes[hosts[host_id]])
                table[hosts[host_id]] = entry
        if table:
            out.append((router, table))
    return out


def _path_routers(static: ShortestPaths, node, dst, ecmp, marked: set,
                  prime: bool = False) -> list:
    """The routers on the path from `node` (a router) towards host `dst` that are not yet in
    `marked`, added to it; with ECMP every member of every set on the way. Every router of
    `marked` had its whole path marked with it, so a walk stops at the first one it meets.
    `prime`: find the path by searching from both ends (`ShortestPaths.prime`)."""
    if ecmp:
        return _mark_ecmp(node, dst, marked)
    if prime:
        static.prime(node, dst)
    new = []
    while isinstance(node, Router) and node not in marked:
        marked.add(node)
        new.append(node)
        entry = static.entry(node, dst)
        if entry is None:
            break
        node = entry[1].dst
    return new


def _hashed_directions(flow) -> list:
    """[(source host, destination host, ECMP hash)] of the directions `flow` sends packets in
    under flow hashing: its data, and its ACKs (a flow without ACKs, cbr or on-off, has none)."""
    sender = getattr(flow, "sender", None)
    if sender is None:
        return [(flow.src, flow.dst, flow.flow_hash)]
    return [(flow.src, flow.dst, sender.flow_hash), (flow.dst, flow.src, flow.receiver.flow_hash)]


def _hashed_path_routers(src, dst, hash_value: int) -> list:
    """The routers, in path order, that packets hashed `hash_value` cross from host `src` to
    host `dst` under flow hashing: one path, the member the hash picks at each equal-cost set
    (routing/ecmp.py `direction_paths`, the walk forwarding does)."""
    from routing.ecmp import direction_paths
    paths, _ = direction_paths(src.port, dst, hash_value, limit=1)
    return [direction.dst for direction in paths[0][:-1]] if paths else []


def _mark_ecmp(node, dst, marked: set) -> list:
    """Add to `marked` every router on an ECMP path from `node` towards `dst` that is not yet
    in it; return those."""
    from routing.ecmp import members
    new = []
    stack = [node]
    while stack:
        node = stack.pop()
        if not isinstance(node, Router) or node in marked:
            continue
        marked.add(node)
        new.append(node)
        route = node.route(dst)           # (computed now if not yet used)
        if route is not None:
            stack.extend(member.dst for member in members(route))
    return new


def _installed_table(router, table: dict, ecmp) -> dict:
    """{host: (cost_s, forwarding entry)} of `router` at t = 0 (with ECMP, maybe a group), from
    its static `table` ({host: (cost_s, direction)})."""
    if ecmp is None:
        return table
    routes = router.routes
    return {host: (entry[0], routes[host]) for host, entry in table.items()}
