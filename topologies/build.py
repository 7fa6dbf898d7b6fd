"""Turn a validated `TopologySpec` into simulation objects wired together."""
from __future__ import annotations

from components.link import Link
from components.node import Host, Router
from flows import ALGORITHMS
from flows.transport import Flow
from routing.static import install_static_routes
from simulator.engine import Simulator
from topologies.spec import TopologySpec


class Network:
    """Everything a run needs: the simulator, nodes, links and flows, by id, in file order."""

    def __init__(self, spec: TopologySpec, sim: Simulator, hosts: dict, routers: dict,
                 links: dict, flows: dict):
        self.spec = spec
        self.sim = sim
        self.hosts = hosts
        self.routers = routers
        self.links = links
        self.flows = flows

    def node(self, node_id: str):
        return self.hosts.get(node_id) or self.routers[node_id]


def build_network(spec: TopologySpec, seed: int | None = None) -> Network:
    """Create the simulator, components, flows and forwarding tables described by `spec`."""
    sim = Simulator(spec.seed if seed is None else seed)
    hosts = {host_id: Host(host_id) for host_id in spec.hosts}
    routers = {router_id: Router(router_id) for router_id in spec.routers}
    nodes = {**hosts, **routers}
    links = {}
    for ls in spec.links:
        a, b = (nodes[end] for end in ls.ends)
        links[ls.id] = Link(sim, ls.id, a, b, ls.rate_bps, ls.delay_s, ls.buffer_bytes, ls.duplex)
    if spec.routing.protocol != "static":
        raise ValueError(f"routing protocol {spec.routing.protocol!r} is not available")
    install_static_routes(list(routers.values()), list(hosts.values()), list(links.values()))
    flows = {}
    sizes = spec.packet_sizes
    for fs in spec.flows:
        flows[fs.id] = Flow(sim, fs.id, hosts[fs.src], hosts[fs.dst], fs.data_bytes, fs.start_s,
                            ALGORITHMS[fs.algorithm], fs.params, fs.transport,
                            sizes.data_bytes, sizes.ack_bytes)
    return Network(spec, sim, hosts, routers, links, flows)
