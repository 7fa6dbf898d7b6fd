"""The routes of a topology's flows and their base round trips, from the spec alone.

Paths follow the static shortest-path tables every run starts with, computed by the routing code
itself (`routing.static.plain_paths`, the same distances and tie rule that fill the routers'
tables) on the topology's plain data: no network is built, and a route is looked up per router
and destination when a path asks for it (no routers x hosts table). A hop is a `Hop`: one direction of a
link. Hosts do not forward, so a path leaves its source host on the host's one link and then
follows the routers' tables.
"""
from __future__ import annotations

from dataclasses import dataclass

from routing.static import plain_paths
from topologies.spec import LinkSpec


class NoRouteError(ValueError):
    """A flow's source cannot reach its destination (or the tables loop)."""


@dataclass(frozen=True)
class Hop:
    """One link direction of a path."""

    link: LinkSpec
    index: int               # 0: ends[0] -> ends[1]; 1: back

    @property
    def label(self) -> str:
        ends = self.link.ends
        return f"{ends[self.index]}->{ends[1 - self.index]}"

    @property
    def dst(self) -> str:
        return self.link.ends[1 - self.index]


def _cost_s(link) -> float:
    return link.delay_s if link.cost_s is None else link.cost_s


class Paths:
    """Static routes of a topology spec: `path(src, dst)` as a list of `Hop`s."""

    def __init__(self, spec):
        self.spec = spec
        self.links = list(spec.links)
        self.routes = plain_paths(list(spec.routers), list(spec.hosts),
                                  [(ls.id, ls.ends, _cost_s(ls)) for ls in self.links])
        self._routers = set(spec.routers)
        self._host_link: dict = {}
        hosts = set(spec.hosts)
        for ls in self.links:
            for index, end in enumerate(ls.ends):
                if end in hosts:
                    self._host_link.setdefault(end, Hop(ls, index))

    def path(self, src: str, dst: str) -> list:
        """Hops from host `src` to host `dst`."""
        hops, node, seen = [], src, set()
        while node != dst:
            if node == src:
                hop = self._host_link.get(src)
            else:
                entry = self.routes.entry(node, dst) if node in self._routers else None
                hop = None
                if entry is not None:
                    link = self.links[entry[1][0]]
                    hop = Hop(link, 0 if link.ends[0] == node else 1)
            if hop is None or hop in seen:
                raise NoRouteError(f"no loop-free route from {src} to {dst}")
            seen.add(hop)
            hops.append(hop)
            node = hop.dst
        return hops

    def flow_paths(self, flow) -> tuple:
        """(data path, ACK path) of a FlowSpec."""
        return self.path(flow.src, flow.dst), self.path(flow.dst, flow.src)

    def base_rtt_s(self, flow) -> float:
        """Propagation and transmission time of one data packet and its ACK along the flow's
        paths: its round trip without queueing."""
        data_path, ack_path = self.flow_paths(flow)
        return path_rtt_s(data_path, ack_path, self.spec.packet_sizes)


def path_rtt_s(data_path, ack_path, sizes) -> float:
    """Propagation and transmission time of one data packet and its ACK along the paths."""
    rtt = sum(h.link.delay_s + sizes.data_bytes * 8.0 / h.link.rate_bps for h in data_path)
    return rtt + sum(h.link.delay_s + sizes.ack_bytes * 8.0 / h.link.rate_bps for h in ack_path)


def base_rtts_s(spec) -> dict:
    """Flow id -> round trip without queueing, along the static routes."""
    paths = Paths(spec)
    return {flow.id: paths.base_rtt_s(flow) for flow in spec.flows}


@dataclass(frozen=True)
class RunPaths:
    """The paths one flow's packets took in a simulated run, read from the network's forwarding
    tables after it: `data` and `ack` are lists of `Hop` paths, one each unless ECMP packet
    spraying spread the packets over several (`sprayed`); `truncated` when there were more than
    `run_paths`' limit (then `data`/`ack` hold the first ones)."""

    data: tuple
    ack: tuple
    truncated: bool = False

    @property
    def sprayed(self) -> bool:
        return len(self.data) > 1 or len(self.ack) > 1 or self.truncated

    def hops(self) -> set:
        """Every hop any of the paths crosses."""
        return {hop for path in (*self.data, *self.ack) for hop in path}


def run_paths(network, spec, limit: int = 64) -> dict:
    """Flow id -> `RunPaths` of every flow of `spec` in the simulated `network` (a
    `topologies.build.Network` after its run; read, not changed, except that a router may compute
    a forwarding entry on first use as forwarding would). The walk is
    `routing.ecmp.direction_paths` (a flow-hash group picks the member of the packet's hash: the
    sender's for data, the receiver's for ACKs; a spray group every member), in `Hop`s of the
    spec. Flows the network does not hold, or without a route, are left out."""
    from routing.ecmp import direction_paths

    out: dict = {}
    for flow in spec.flows:
        net_flow = network.flows.get(flow.id)
        if net_flow is None:
            continue
        sender = getattr(net_flow, "sender", None)
        receiver = getattr(net_flow, "receiver", None)
        data_hash = getattr(sender, "flow_hash", getattr(net_flow, "flow_hash", 0))
        ack_hash = getattr(receiver, "flow_hash", 0)
        found = []
        for src, dst, hash_value in ((net_flow.src, net_flow.dst, data_hash),
                                     (net_flow.dst, net_flow.src, ack_hash)):
            paths, truncated = direction_paths(src.port, dst, hash_value, limit=limit)
            found.append((tuple(tuple(_hop(spec, d) for d in path) for path in paths), truncated))
        (data, cut_data), (ack, cut_ack) = found
        if data and (ack or receiver is None):
            out[flow.id] = RunPaths(data, ack or ((),), cut_data or cut_ack)
    return out


def workload_hops(spec, network=None) -> dict:
    """Workload id -> (the hops its flows' data may cross, the hops their ACKs may cross): over
    every sender and receiver it may draw, through `network`'s forwarding tables after the run
    with every member of an equal-cost set (each flow hashes anew), else along the static routes
    of `spec`. One walk per destination host, from all its senders at once."""
    out: dict = {}
    paths = None
    for ws in spec.workloads:
        data: set = set()
        acks: set = set()
        for sources, sinks, into in ((ws.src, ws.dst, data), (ws.dst, ws.src, acks)):
            for dst in dict.fromkeys(sinks):
                starts = [src for src in dict.fromkeys(sources) if src != dst]
                if network is not None:
                    into.update(_reachable_hops(spec, network, starts, dst))
                    continue
                if paths is None:
                    paths = Paths(spec)
                for src in starts:
                    try:
                        into.update(paths.path(src, dst))
                    except NoRouteError:
                        pass
        out[ws.id] = (data, acks)
    return out


def _reachable_hops(spec, network, sources: list, dst_id: str) -> set:
    """The hops of every path from the hosts `sources` to host `dst_id` through the forwarding
    tables, every member of an equal-cost set followed."""
    dst = network.hosts[dst_id]
    seen: set = set()
    stack = [port for port in (network.hosts[src].port for src in sources) if port is not None]
    while stack:
        direction = stack.pop()
        if direction in seen:
            continue
        seen.add(direction)
        node = direction.dst
        if node is dst:
            continue
        find = getattr(node, "route", None)           # (a Router: its entry, maybe computed now)
        route = find(dst) if find is not None else None
        if route is not None:
            stack.extend(getattr(route, "hops", (route,)))
    return {_hop(spec, direction) for direction in seen}


def _hop(spec, direction) -> Hop:
    """The `Hop` of `spec` a simulated link direction is."""
    link = spec.link(direction.link.id)
    return Hop(link, 0 if link.ends[1] == direction.dst.id else 1)
