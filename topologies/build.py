"""Turn a validated `TopologySpec` into simulation objects wired together."""
from __future__ import annotations

from components.link import Link
from components.node import Host, Router
from flows import ALGORITHMS
from flows.cbr import RateFlow
from flows.transport import Flow
from routing.distance_vector import start_distance_vector
from routing.static import install_static_routes
from simulator.engine import Simulator
from topologies.spec import TopologySpec


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
        self.agents = []
        self.route_log = []     # (time_s, router, destination, next hop, link, cost_s)

    def log_routes(self, time_s: float, router, changes: dict) -> None:
        """Record forwarding-table changes: {destination: (cost_s, direction or None)}."""
        for dest, (cost_s, d) in changes.items():
            self.route_log.append((time_s, router.id, dest.id, d.dst.id if d else "",
                                   d.link.id if d else "", cost_s))

    def apply_event(self, event) -> None:
        link = self.links[event.link]
        if event.action == "down":
            link.go_down()
        else:
            link.come_up()


def build_network(spec: TopologySpec, seed: int | None = None) -> Network:
    """Create the simulator, components, flows, routing and scheduled link events of `spec`."""
    sim = Simulator(spec.seed if seed is None else seed)
    hosts = {host_id: Host(host_id) for host_id in spec.hosts}
    routers = {router_id: Router(router_id) for router_id in spec.routers}
    nodes = {**hosts, **routers}
    links = {}
    for ls in spec.links:
        a, b = (nodes[end] for end in ls.ends)
        link = Link(sim, ls.id, a, b, ls.rate_bps, ls.delay_s, ls.buffer_bytes, ls.duplex,
                    ls.cost_s, queue=ls.queue)
        for direction, impairment in zip(link.directions, ls.impairments):
            direction.impair(impairment)
        links[ls.id] = link
    flows = {}
    sizes = spec.packet_sizes
    for fs in spec.flows:
        if fs.kind != "bulk":
            flows[fs.id] = RateFlow(sim, fs.id, hosts[fs.src], hosts[fs.dst], fs.data_bytes,
                                    fs.start_s, fs.rate_bps, sizes.data_bytes, kind=fs.kind,
                                    on_s=fs.on_s, off_s=fs.off_s, periods=fs.periods)
            continue
        flows[fs.id] = Flow(sim, fs.id, hosts[fs.src], hosts[fs.dst], fs.data_bytes, fs.start_s,
                            ALGORITHMS[fs.algorithm], fs.params, fs.transport,
                            sizes.data_bytes, sizes.ack_bytes, ecn=fs.ecn,
                            delayed_ack=fs.delayed_ack)
    net = Network(spec, sim, hosts, routers, links, flows)
    router_list, host_list = list(routers.values()), list(hosts.values())
    static = install_static_routes(router_list, host_list, list(links.values()))
    for router, table in static.items():
        net.log_routes(0.0, router, table)
    if spec.routing.protocol == "bellman-ford":
        net.agents = start_distance_vector(
            sim, router_list, host_list, update_interval_s=spec.routing.update_interval_s,
            settle_s=spec.routing.settle_s, packet_bytes=sizes.routing_bytes,
            on_install=net.log_routes, installed=static)
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
