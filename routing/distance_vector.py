"""Decentralized Bellman-Ford: distance vectors exchanged as packets over the simulated links.

Each router runs a `DistanceVectorAgent`. It knows only its own links and what its neighbours tell
it in routing packets (one hop, addressed to the neighbour router, sized `packet_bytes.routing`);
it never reads another router's state. Destinations are the hosts.

* **Link cost** = static part (the link's `cost`, else its propagation delay) + the measured
  queueing delay of the link direction: the time average, since the router's previous update
  round, of the bytes waiting in the buffer this direction's packets join (on a half-duplex link,
  the shared buffer), divided by the link rate in bytes per second. This is the wait a packet
  arriving at a random instant of that window would have had. Costs are snapshotted when a round
  starts and held until the next round.
* **Rounds**: every `update_interval_s`, from t = 0, all routers snapshot costs, recompute, and
  send their vector to every neighbour router. **Triggered updates**: whenever a router's
  distances change, it sends its vector again to each neighbour whose advertisement changed.
* **Count to infinity**: split horizon with poison reverse (a route learned from a neighbour is
  advertised back to it as unreachable) and a maximum metric: a route of more hops than there are
  routers is unreachable. Unreachable destinations have no forwarding entry: routers drop their
  packets as "no route" drops.
* **Hold-down**: a recomputed table is installed in the router's forwarding table only after it
  has been stable for `settle_s` (each change restarts the wait); until the first installation
  packets follow the static shortest paths the network was built with.
* **Failures**: a router notices at once when one of its links goes down or up (the cost becomes
  infinite, or the static cost again) and recomputes.
* Routing packets are ordinary packets in the FIFO buffers: a full buffer drops them (counted as
  routing drops of that link direction); the neighbour then keeps the previous vector until the
  next round.
"""
from __future__ import annotations

import math

from components.node import Router
from components.packet import ROUTING, Packet
from routing.static import link_cost, pick_next_hop
from simulator.engine import Timer

UNREACHABLE = (math.inf, math.inf)


def queue_sharers(d):
    """The link directions whose packets wait in the same buffer as `d`'s."""
    link = d.link
    return link.directions if link.duplex == "half" else (d,)


class DistanceVectorAgent:
    """One router's Bellman-Ford process."""

    def __init__(self, sim, router: Router, destinations: list, *, update_interval_s: float,
                 settle_s: float, packet_bytes: int, max_hops: int, on_install=None,
                 installed: dict | None = None):
        self.sim = sim
        self.router = router
        self.destinations = destinations
        self.update_interval_s = update_interval_s
        self.settle_s = settle_s
        self.packet_bytes = packet_bytes
        self.max_hops = max_hops
        self.on_install = on_install       # callable(time, router, {dest: (cost, direction)})
        self.ports = list(router.out)      # outgoing directions, in file order of the links
        self.costs = {d: link_cost(d.link) for d in self.ports}
        self.vectors: dict = {}            # direction -> {dest: (cost, hops)} heard over it
        self.table: dict = {}              # dest -> (cost, hops, direction)
        self.last_sent: dict = {}          # direction -> the vector last advertised over it
        self.marks = {d: (0.0, 0.0) for d in self.ports}   # (time, buffer byte-seconds)
        self.rounds = 0
        self.packets_sent = 0
        self._timer = Timer(sim, self._install)
        self._installed = installed        # {dest: (cost, direction)} in use; None: none yet
        router.agent = self

    def start(self) -> None:
        self.sim.schedule_at(self.sim.now, self._round)

    # -- costs -----------------------------------------------------------------------------
    def _queue_delay_s(self, d, now: float) -> float:
        area = 0.0
        for shared in queue_sharers(d):
            shared.settle(now)
            area += shared.area_bytes
        since, area_then = self.marks[d]
        self.marks[d] = (now, area)
        if now <= since:
            return 0.0
        return (area - area_then) / (now - since) / (d.link.rate_bps / 8.0)

    def _snapshot_costs(self) -> None:
        now = self.sim.now
        for d in self.ports:
            delay = self._queue_delay_s(d, now)
            self.costs[d] = link_cost(d.link) + delay if d.link.up else math.inf

    # -- rounds and messages ---------------------------------------------------------------
    def _round(self, _=None) -> None:
        self.rounds += 1
        self._snapshot_costs()
        self._recompute()
        self._advertise(periodic=True)
        self.sim.schedule_at(self.rounds * self.update_interval_s, self._round)

    def _vector_for(self, d) -> dict:
        """What to tell the neighbour at the far end of `d` (poison reverse)."""
        vector = {}
        for dest in self.destinations:
            entry = self.table.get(dest)
            if entry is None or entry[2] is d or entry[2].dst is d.dst:
                vector[dest] = UNREACHABLE
            else:
                vector[dest] = (entry[0], entry[1])
        return vector

    def _advertise(self, periodic: bool) -> None:
        for d in self.ports:
            neighbour = d.dst
            if not isinstance(neighbour, Router) or not d.link.up or neighbour.agent is None:
                continue
            vector = self._vector_for(d)
            if not periodic and self.last_sent.get(d) == vector:
                continue
            self.last_sent[d] = vector
            packet = Packet(ROUTING, self.router, neighbour, self.packet_bytes,
                            neighbour.agent.receive, payload=(d.link, vector))
            self.packets_sent += 1
            d.send_routing(packet)

    def receive(self, packet) -> None:
        link, vector = packet.payload
        d = link.direction_from(self.router)
        self.vectors[d] = vector
        if self._recompute():
            self._advertise(periodic=False)

    def link_changed(self, link) -> None:
        now = self.sim.now
        for d in self.ports:
            if d.link is link:
                self.last_sent.pop(d, None)         # tell the neighbour again either way
                if link.up:
                    self.costs[d] = link_cost(link)
                    self.marks[d] = (now, sum(s.area_bytes for s in queue_sharers(d)))
                else:
                    self.costs[d] = math.inf
                    self.vectors.pop(d, None)
        if self._recompute() or link.up:
            self._advertise(periodic=False)

    # -- Bellman-Ford ----------------------------------------------------------------------
    def _candidates(self, dest):
        for d in self.ports:
            cost = self.costs[d]
            if cost == math.inf:
                continue
            if d.dst is dest:
                yield cost, (1, d)
                continue
            heard = self.vectors.get(d)
            if heard is None or dest not in heard:
                continue
            far_cost, far_hops = heard[dest]
            if far_cost == math.inf or far_hops + 1 > self.max_hops:
                continue
            yield cost + far_cost, (far_hops + 1, d)

    def _recompute(self) -> bool:
        """Recompute the table; True if any route's next hop or cost changed."""
        table = {}
        for dest in self.destinations:
            chosen = pick_next_hop(self._candidates(dest))
            if chosen is not None:
                cost, (hops, d) = chosen
                table[dest] = (cost, hops, d)
        changed = table != self.table
        self.table = table
        if changed:
            self._timer.start(self.settle_s)
        return changed

    def _install(self) -> None:
        routes = {dest: entry[2] for dest, entry in self.table.items()}
        self.router.routes = routes
        previous = self._installed or {}
        changes = {dest: (entry[0], entry[2]) for dest, entry in self.table.items()
                   if not _same_route(previous.get(dest), entry)}
        changes.update({dest: (math.inf, None) for dest in previous if dest not in self.table})
        self._installed = {dest: (entry[0], entry[2]) for dest, entry in self.table.items()}
        if changes and self.on_install is not None:
            self.on_install(self.sim.now, self.router, changes)


def _same_route(old, entry) -> bool:
    """Whether an installed (cost, direction) equals a table entry (cost, hops, direction)."""
    if old is None or old[1] is not entry[2]:
        return False
    return abs(old[0] - entry[0]) <= 1e-9 * max(abs(entry[0]), 1e-12)


def start_distance_vector(sim, routers: list, hosts: list, *, update_interval_s: float,
                          settle_s: float, packet_bytes: int, on_install=None,
                          installed: dict | None = None) -> list:
    """Create and start an agent on every router; returns the agents. `installed` maps each
    router to the {host: (cost, direction)} table it forwards with now (static routes)."""
    installed = installed or {}
    agents = [DistanceVectorAgent(sim, router, hosts, update_interval_s=update_interval_s,
                                  settle_s=settle_s, packet_bytes=packet_bytes,
                                  max_hops=len(routers) + 1, on_install=on_install,
                                  installed=installed.get(router))
              for router in routers]
    for agent in agents:
        agent.start()
    return agents


