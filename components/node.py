"""Nodes: hosts, which originate and consume packets, and routers, which forward them.

A node hands a packet addressed to itself to ``packet.deliver`` (a flow endpoint or a routing
agent); a router forwards every other packet along its forwarding table, which maps destination
nodes to outgoing link directions and is filled in by a routing module. Nodes send through the
link direction (`LinkDirection.send`), which does the link's accounting.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simulator.compiled import plain_mypyc_attr

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr

    from components.link import Link, LinkDirection
    from components.packet import Packet


# a router's loop guard before the network sets it to its number of routers (`Router`)
UNLIMITED_FORWARDS = 1 << 62

# (mypyc_attr: simulator/compiled.py, `plain_mypyc_attr`)
globals().setdefault("mypyc_attr", plain_mypyc_attr)


@mypyc_attr(allow_interpreted_subclasses=True)
class Node:
    """Common part of hosts and routers: an id and the link directions leaving it."""

    __slots__ = ("id", "links", "out")

    def __init__(self, node_id: str):
        self.id = node_id
        self.links: list[Link] = []
        self.out: list[LinkDirection] = []

    def attach(self, link: Link, direction: LinkDirection) -> None:
        self.links.append(link)
        self.out.append(direction)

    def receive(self, packet: Packet) -> None:
        raise NotImplementedError

    def link_changed(self, link: Link) -> None:
        """`link` went down or came up (see `link.up`); hosts have nothing to do."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id})"


@mypyc_attr(allow_interpreted_subclasses=True)
class Host(Node):
    """An end system with exactly one link; counts the bytes it sends and receives."""

    __slots__ = ("port", "sent_bytes", "received_bytes", "misdelivered")

    port: LinkDirection     # the direction of its link that leaves it (set by `attach`)

    def __init__(self, node_id: str):
        super().__init__(node_id)
        self.port = None  # type: ignore[assignment]   # until the host's link is attached
        self.sent_bytes = 0
        self.received_bytes = 0
        self.misdelivered = 0

    def attach(self, link: Link, direction: LinkDirection) -> None:
        if self.port is not None:
            raise ValueError(f"host {self.id} already has link {self.links[0].id}; "
                             f"a host has exactly one link")
        super().attach(link, direction)
        self.port = direction

    def send(self, packet: Packet) -> bool:
        """Put `packet` on the host's link; False if the link dropped it."""
        self.sent_bytes += packet.size_bytes
        port: Any = self.port           # (a dynamic call: see "Compiled core" in docs/model.md)
        return port.send(packet)

    def receive(self, packet: Packet) -> None:
        self.received_bytes += packet.size_bytes
        if packet.dst is self:
            packet.deliver(packet)
        else:
            self.misdelivered += 1


@mypyc_attr(allow_interpreted_subclasses=True)
class Router(Node):
    """Forwards packets by destination; packets addressed to the router go to `packet.deliver`.

    `routes` maps a destination node to the outgoing `LinkDirection`, or to anything else that
    sends a packet on (`send(packet)`: an ECMP group, routing/ecmp.py); a packet with no route is
    dropped and counted in `no_route_drops`. The table may compute an entry when it is first
    looked up (``routes[dst]``, a dict's `__missing__`: static routing's `RouteTable`); a packet
    finding no entry asks for it that way (`route`), once per destination.
    `loop_drops` counts the packets a `GuardedRouter` dropped as caught in a forwarding loop
    (always 0 here: static routes never loop).
    """

    __slots__ = ("routes", "no_route_drops", "agent", "max_forwards", "loop_drops")

    def __init__(self, node_id: str):
        super().__init__(node_id)
        self.routes: dict[Node, Any] = {}     # LinkDirection, or an ECMP group
        self.no_route_drops = 0
        self.agent: Any | None = None    # the routing agent, if the routing is dynamic
        self.max_forwards = UNLIMITED_FORWARDS    # until the network sets it
        self.loop_drops = 0

    def link_changed(self, link: Link) -> None:
        if self.agent is not None:
            self.agent.link_changed(link)

    def receive(self, packet: Packet) -> None:
        dst = packet.dst
        if dst is self:
            packet.deliver(packet)
            return
        out: Any = self.routes.get(dst)   # (a dynamic call: docs/model.md, "Compiled core")
        if out is None:
            out = self.route(dst)             # an entry computed on first use, or none
            if out is None:
                self.no_route_drops += 1
                return
        out.send(packet)

    def route(self, dst: Node) -> Any:
        """The forwarding entry towards `dst` (computed now if the table does so on first use),
        or None if there is none."""
        try:
            return self.routes[dst]
        except KeyError:
            return None


@mypyc_attr(allow_interpreted_subclasses=True)
class GuardedRouter(Router):
    """A router with a loop guard, for routing that can loop (Bellman-Ford while it converges):
    a packet that routers have already forwarded `max_forwards` times is dropped and counted in
    `loop_drops`. The network sets `max_forwards` to its number of routers
    (topologies/build.py): a path without a loop visits each router once, so only a packet
    caught in a forwarding loop gets that far, and a loop cannot keep a packet, and the capacity
    of its links, for ever. It plays the part of IP's TTL without cutting any loop-free path,
    however long (docs/model.md, "Loop guard"). Static routes are shortest paths (and ECMP sets
    only lead strictly closer), which never loop: their routers are plain `Router`s, and the
    guard costs them nothing.
    """

    __slots__ = ()

    def receive(self, packet: Packet) -> None:
        dst = packet.dst
        if dst is self:
            packet.deliver(packet)
            return
        hops = packet.hops
        if hops >= self.max_forwards:         # only a forwarding loop gets a packet this far
            self.loop_drops += 1
            return
        packet.hops = hops + 1
        # Router.receive's forwarding, written again here rather than called: a call per hop
        out: Any = self.routes.get(dst)   # (a dynamic call: docs/model.md, "Compiled core")
        if out is None:
            out = self.route(dst)             # an entry computed on first use, or none
            if out is None:
                self.no_route_drops += 1
                return
        out.send(packet)
