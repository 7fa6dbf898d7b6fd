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
  send their whole vector to every neighbour router. **Triggered updates**: whenever a router's
  distances change, it sends its vector again to each neighbour whose advertisement changed.
* **Damping**: a triggered update that only changes advertised *costs* (every destination keeps
  its reachability and hop count) is a cost-only update; a router sends at most
  `COST_UPDATES_PER_ROUND` of them to each neighbour per round. Further cost-only changes wait
  and go with the next update to that neighbour (triggered by a reachability or hop-count change,
  or the next round's periodic one). Updates that make a destination reachable or unreachable
  (including the poison below, i.e. a change of next hop) or change its hop count are never held,
  so convergence after a change of topology and the count-to-infinity bound are as fast as
  without damping. Without it, the measured costs of every busy link of a chain change at each
  round and each change travels as its own wave: a chain of K routers sent about K^2 packets per
  round; damped, at most (1 + COST_UPDATES_PER_ROUND) per neighbour and round once converged
  (while no next hop changes: docs/model.md, the known defect of measured costs).
* **Count to infinity**: split horizon with poison reverse (a route learned from a neighbour is
  advertised back to it as unreachable) and a maximum metric: a route of more hops than there are
  routers is unreachable. Unreachable destinations have no forwarding entry: routers drop their
  packets as "no route" drops.
* **Loop freedom** (Babel, RFC 8966 §2.4-2.5, §3.5.1, §3.8): an advertised entry is (cost, hops,
  sequence number); the router a host hangs from originates its routes and owns the number.
  Each router keeps per destination a feasibility distance, the smallest (number, cost, hops)
  it has chosen (a newer number is smaller), and takes a route through a neighbour other than
  its current next hop only if that neighbour's entry is feasible: a newer number, or the same
  and a strictly smaller (cost, hops). Along every next hop the feasibility distance then
  strictly decreases, so the next hops of `best` never form a loop, whatever is in flight (the
  installed tables lag by each router's hold-down and can still loop briefly). A router left with
  only unfeasible routes has none and sends a sequence-number request towards the originating
  router (which raises its number; a router already holding a newer number answers); at a round
  it also asks when an unfeasible route would beat its choice, and at every round, costs moved
  or not, while one beats it by more than a tie, or (ECMP) ties it and would join its
  equal-cost set (`outdone`; a successor left for an equal-cost port is held to the condition
  from then on, so its route counts as unfeasible there too). A router sends or forwards a
  request for one destination and number at most once per `settle_s` / 2 (MIN_RETRY_S at least),
  and asks again when its hold-down ends without a route; a renumbered route is a triggered
  update, never damped.
* **Hold-down**: a recomputed table is installed in the router's forwarding table only after it
  has been stable for `settle_s` (each change restarts the wait); until the first installation
  packets follow the static shortest paths the network was built with.
* **Failures**: a router notices at once when one of its links goes down or up (the cost becomes
  infinite, or the static cost again) and recomputes.
* Routing packets are ordinary packets in the FIFO buffers: a full buffer drops them (counted as
  routing drops of that link direction); the neighbour then keeps the previous vector until the
  next one arrives.

* **ECMP** (``"ecmp"``, routing/ecmp.py): the table computed and advertised is the same (the
  tie rule's one route per destination); when installing it, a router puts in its forwarding
  table every port whose route cost is within the tie tolerance of the best one (a port other
  than the best must lead to a neighbour advertising, in a feasible entry, a strictly lower
  cost, or over a link of no cost the same cost and fewer hops: loop freedom). On an
  idle network these are the static equal-cost sets; under load the measured queueing delays
  make equal costs rare, and the sets shrink to the ports that happen to tie.

Cost: a packet carries the whole vector (an immutable tuple shared by sender and receiver, never
copied entry by entry) together with the destinations that changed since the previous packet on
that link and a sequence number; a receiver that got the previous packet recomputes only those
destinations, otherwise it compares the whole vector, and of these only the ones whose route the
change can move: not those whose route through that neighbour was and stays above the tie limit
of their last choice (`_affected`; about half of them while a 1 000-router graph converges). A
round recomputes every destination only when one of the router's link costs changed, and sends
each neighbour the vector last sent with only the destinations marked since then looked at
again (`_advertise`). Per router:
its table, the last vector sent to and heard from each neighbour (one list of D entries each,
entries shared), no dict per destination.
"""
from __future__ import annotations

import math

from components.node import Router
from components.packet import ROUTING, Packet
from routing.static import TIE_TOLERANCE, link_cost
from simulator.engine import Timer

UNREACHABLE = (math.inf, math.inf, -1)   # an advertised entry: (cost, hops, sequence number)
FORGOTTEN = (math.nan, math.nan, -1)     # in a vector sent: differs from any entry (resend it)
COST_UPDATES_PER_ROUND = 2     # cost-only triggered updates per neighbour and round (damping)
MIN_RETRY_S = 1e-3             # requests for one destination and number: at least settle_s / 2
                               # and this far apart, at each router (sent or forwarded); the
                               # retry at the end of a hold-down comes settle_s after the first


def feasible(entry, fd) -> bool:
    """Babel's feasibility condition (RFC 8966 §2.4, §3.5.1): a neighbour's advertised entry
    (cost, hops, seq) may become this router's route only if its sequence number is newer than
    that of the feasibility distance `fd` (an entry too: (cost, hops, seq)), or the same and
    its metric strictly smaller. Metrics compare as (cost, hops), so a zero-cost link still
    makes a route longer."""
    if fd is None:
        return True
    seq = entry[2]
    if seq != fd[2]:
        return seq > fd[2]
    return entry[0] < fd[0] or (entry[0] == fd[0] and entry[1] < fd[1])


def queue_sharers(d):
    """The link directions whose packets wait in the same buffer as `d`'s."""
    link = d.link
    return link.directions if link.duplex == "half" else (d,)


class DistanceVectorAgent:
    """One router's Bellman-Ford process."""

    def __init__(self, sim, router: Router, destinations: list, *, update_interval_s: float,
                 settle_s: float, packet_bytes: int, max_hops: int, on_install=None,
                 installed: dict | None = None, index: dict | None = None,
                 ecmp: str | None = None, seed=None):
        self.sim = sim
        self.router = router
        self.destinations = destinations
        self.index = index if index is not None else {d: i for i, d in enumerate(destinations)}
        self.update_interval_s = update_interval_s
        self.settle_s = settle_s
        self.packet_bytes = packet_bytes
        self.max_hops = max_hops
        self.on_install = on_install       # callable(time, router, {dest: (cost, direction)})
        self.ports = list(router.out)      # outgoing directions, in file order of the links
        n_ports, n_dest = len(self.ports), len(destinations)
        self.port_of = {d.link: p for p, d in enumerate(self.ports)}
        self.direct = [self.index.get(d.dst, -1) for d in self.ports]  # destination at the far end
        self.port_dst = [d.dst for d in self.ports]
        self.router_ports = [p for p, d in enumerate(self.ports) if isinstance(d.dst, Router)]
        self.costs = [link_cost(d.link) for d in self.ports]
        self.heard: list = [None] * n_ports        # port -> tuple of (cost, hops) per destination
        self.heard_seq = [0] * n_ports
        self.sent: list = [None] * n_ports         # port -> list: the vector last advertised
        self.sent_seq = [0] * n_ports
        self.dirty: list = [set() for _ in range(n_ports)]   # destinations changed since then
        self.cost_updates = [0] * n_ports          # cost-only triggered updates this round
        self.best: list = [None] * n_dest    # dest -> (cost, hops, port, (cost, hops, seq))
        self.fd: list = [None] * n_dest   # dest -> feasibility distance: the smallest entry
                                          # (cost, hops, seq) chosen, shared with `best`
        self.own_seq = {i: 0 for i in self.direct if i >= 0}   # the hosts this router originates
        self.asked: dict = {}                      # dest -> (seq, time) of the last request
        self.retry_s = max(settle_s / 2, MIN_RETRY_S)   # between two requests for one number
        self.starving: set = set()                 # dests with only unfeasible routes
        self.outdone: set = set()   # dests with an unfeasible route better than the choice,
                                    # or (ECMP) one that would join its equal-cost set
        self.requests_sent = 0
        self.limits = [0.0] * n_dest               # dest -> tie limit of its last choice
        self.marks = [(0.0, 0.0)] * n_ports        # (time, buffer byte-seconds)
        self.rounds = 0
        self.packets_sent = 0
        self._flush_pending = False
        self._timer = Timer(sim, self._install)
        self._installed = installed        # {dest: (cost, direction)} in use; None: none yet
        self._groups = None                # ECMP: the router's GroupMaker (routing/ecmp.py)
        if ecmp is not None:
            from routing.ecmp import GroupMaker
            self._groups = GroupMaker(ecmp, seed, router.id)
        router.agent = self

    def start(self) -> None:
        self.sim.schedule_at(self.sim.now, self._round)

    @property
    def equal_cost_sets(self) -> int:
        """How many equal-cost sets of more than one next hop this router has made (ECMP; 0
        without): the seed picks their members (routing/ecmp.py)."""
        return 0 if self._groups is None else len(self._groups.groups)

    @property
    def table(self) -> dict:
        """dest -> (cost, hops, direction): the current (not necessarily installed) table."""
        return {self.destinations[i]: (e[0], e[1], self.ports[e[2]])
                for i, e in enumerate(self.best) if e is not None}

    # -- costs -----------------------------------------------------------------------------
    def _queue_delay_s(self, p: int, now: float) -> float:
        d = self.ports[p]
        area = 0.0
        for shared in queue_sharers(d):
            shared.settle(now)
            area += shared.area_bytes
        since, area_then = self.marks[p]
        self.marks[p] = (now, area)
        if now <= since:
            return 0.0
        return (area - area_then) / (now - since) / (d.link.rate_bps / 8.0)

    def _snapshot_costs(self) -> bool:
        """Measure every link cost; True if any changed."""
        now = self.sim.now
        changed = False
        for p, d in enumerate(self.ports):
            delay = self._queue_delay_s(p, now)
            cost = link_cost(d.link) + delay if d.link.up else math.inf
            if cost != self.costs[p]:
                self.costs[p] = cost
                changed = True
        return changed

    # -- rounds and messages ---------------------------------------------------------------
    def _round(self, _=None) -> None:
        self.rounds += 1
        changed = self._snapshot_costs()
        if changed or self.rounds == 1:     # the table is a function of costs and vectors heard
            everything = range(len(self.best))
            if self._recompute(everything, at_round=True) or (
                    self._groups is not None and self._sets_changed(everything)):
                self._timer.start(self.settle_s)
        elif (self.starving or self.outdone) and self._recompute(
                sorted(self.starving | self.outdone), at_round=True):    # (asks again: on an
            self._timer.start(self.settle_s)        # idle network no cost change would ask)
        self.cost_updates = [0] * len(self.ports)
        self._advertise(periodic=True)
        self.sim.schedule_at(self.rounds * self.update_interval_s, self._round)

    def _advertise(self, periodic: bool) -> None:
        """Send the vector to every neighbour router (periodic), or to those whose advertisement
        changed (triggered; cost-only changes damped, see the module docstring). The vector for
        a neighbour poisons (UNREACHABLE) the routes through that neighbour."""
        best, ports, port_dst = self.best, self.ports, self.port_dst
        dirties, sents, cost_updates = self.dirty, self.sent, self.cost_updates
        for p in self.router_ports:
            d = ports[p]
            if not d.link.up or d.dst.agent is None:
                continue
            dirty = dirties[p]
            sent = sents[p]
            far = d.dst
            if sent is None:                          # nothing sent since the link (re)appeared
                sent = sents[p] = [UNREACHABLE if entry is None or port_dst[entry[2]] is far
                                   else entry[3] for entry in best]
                changed = list(range(len(sent)))
            elif periodic:                            # the whole vector, with whatever changed:
                changed = []                          # only a marked destination can have (its
                for i in sorted(dirty):               # `best` changed since `sent`, or `_resend`)
                    entry = best[i]
                    new = UNREACHABLE if entry is None or port_dst[entry[2]] is far else entry[3]
                    old = sent[i]
                    if new is not old and new != old:
                        sent[i] = new
                        changed.append(i)
            elif not dirty:
                continue
            else:
                # compared first, written only if sent: a damped cost-only update waits for
                # the next update to that neighbour (its destinations stay marked)
                pending, significant, costs_moved = [], False, False
                for i in sorted(dirty):           # (an order every interpreter shares)
                    entry = best[i]
                    new = UNREACHABLE if entry is None or port_dst[entry[2]] is far else entry[3]
                    old = sent[i]
                    if new is not old and new != old:
                        pending.append((i, new))
                        if new[1] != old[1] or new[2] != old[2]:  # reachability, hop count
                            significant = True                        # or a newer number
                        else:
                            costs_moved = True
                if not pending:
                    dirty.clear()
                    continue
                if not significant:
                    if not costs_moved or cost_updates[p] >= COST_UPDATES_PER_ROUND:
                        continue
                    cost_updates[p] += 1
                changed = []
                for i, new in pending:
                    sent[i] = new
                    changed.append(i)
            dirty.clear()
            seq = self.sent_seq[p] = self.sent_seq[p] + 1
            packet = Packet(ROUTING, self.router, far, self.packet_bytes, far.agent.receive,
                            payload=(d.link, seq, tuple(sent), changed))
            self.packets_sent += 1
            d.send_routing(packet)

    def receive(self, packet) -> None:
        link, seq, vector, changed = packet.payload
        p = self.port_of[link]
        old = self.heard[p]
        if old is None:                               # only reachable entries add routes
            changed = [i for i, entry in enumerate(vector) if entry[0] != math.inf]
        elif seq != self.heard_seq[p] + 1:            # missed a packet: compare everything
            changed = [i for i, (a, b) in enumerate(zip(old, vector)) if a != b]
        self.heard[p] = vector
        self.heard_seq[p] = seq
        if old is not None:
            changed = self._affected(p, old, vector, changed)
        if not changed:
            return
        if self._recompute(changed):
            self._timer.start(self.settle_s)
            if not self._flush_pending:           # once every vector of this instant is in
                self._flush_pending = True
                self.sim.schedule(0.0, self._flush)
        elif self._groups is not None and self._sets_changed(changed):
            self._timer.start(self.settle_s)      # same routes, another equal-cost set

    def _flush(self, _=None) -> None:
        """Send the triggered updates of the vectors received at this instant, as one."""
        self._flush_pending = False
        self._advertise(periodic=False)

    def link_changed(self, link) -> None:
        now = self.sim.now
        if not link.up and self._groups is not None and self._installed:
            self._drop_dead_members(link)
        for p, d in enumerate(self.ports):
            if d.link is link:
                self.sent[p] = None                  # tell the neighbour again either way
                if link.up:
                    self.costs[p] = link_cost(link)
                    self.marks[p] = (now, sum(s.area_bytes for s in queue_sharers(d)))
                else:
                    self.costs[p] = math.inf
                    self.heard[p] = None
        everything = range(len(self.best))
        changed = self._recompute(everything)
        if changed or (self._groups is not None and self._sets_changed(everything)):
            self._timer.start(self.settle_s)
        if changed or link.up:
            self._advertise(periodic=False)

    def _drop_dead_members(self, link) -> None:
        """ECMP: take this router's directions on `link`, which just failed, out of the
        equal-cost sets in use at once, as Linux skips a multipath route's dead next hop: the
        packets hashed to it go to the set's other members rather than into the failed link
        until the hold-down installs the recomputed table. An entry with no other member keeps
        its next hop until then (its packets are failure drops either way)."""
        installed, groups = self._installed, self._groups
        routes = dict(self.router.routes)
        changes = {}
        for dest, (cost, route) in installed.items():   # type: ignore[union-attr]
            hops = _members(route)
            if len(hops) < 2 or not any(d.link is link for d in hops):
                continue
            alive = tuple(d for d in hops if d.link is not link)
            if not alive:
                continue
            entry = groups.entry(alive)                  # type: ignore[union-attr]
            installed[dest] = changes[dest] = (cost, entry)   # type: ignore[index]
            routes[dest] = entry
        if changes:
            self.router.routes = routes
            if self.on_install is not None:
                self.on_install(self.sim.now, self.router, changes)

    # -- Bellman-Ford ----------------------------------------------------------------------
    def _choose(self, i: int):
        """(cost, hops, port) of the best route to destination `i`: among the direct route, the
        route through the current next hop and the feasible routes through other neighbours
        (`feasible`), the lowest cost, and among costs equal within TIE_TOLERANCE the first
        port in file order; None if none. The rule stated once: `_recompute` computes the same
        inline, and the tests check its table against this
        (tests/test_distance_vector_dynamics.py)."""
        costs, heard, direct, max_hops = self.costs, self.heard, self.direct, self.max_hops
        entry = self.best[i]
        successor = entry[2] if entry is not None else -1
        fd = self.fd[i]
        candidates = []
        for p, cost in enumerate(costs):
            if cost == math.inf:
                continue
            if direct[p] == i:
                candidates.append((cost, 1, p))
                continue
            vector = heard[p]
            if vector is None:
                continue
            far = vector[i]
            if far[0] == math.inf or far[1] + 1 > max_hops:
                continue
            if p != successor and not feasible(far, fd):
                continue
            candidates.append((cost + far[0], far[1] + 1, p))
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        lowest = min(c[0] for c in candidates)
        limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
        for candidate in candidates:
            if candidate[0] <= limit:
                return candidate
        return None    # pragma: no cover - the lowest is within its own limit

    def _equal_cost_ports(self, i: int, entry) -> tuple:
        """The ports of destination `i`'s equal-cost set (ECMP), the chosen one first among them
        in port order: within the tie tolerance of `entry`'s cost, and other than the chosen
        port only through a neighbour that is closer in a feasible entry: a strictly lower
        cost, or (over a link of no cost) the same cost and fewer hops than `entry`'s, as
        static routing's rule (routing/static.py `_leads_on`). Each member then lowers (cost,
        hops), so packets spread over the set never loop either."""
        lowest, hops, chosen, fd = entry[0], entry[1], entry[2], self.fd[i]
        limit = lowest + TIE_TOLERANCE * max(abs(lowest), 1e-12)
        costs, heard, direct, max_hops = self.costs, self.heard, self.direct, self.max_hops
        out = []
        for p, cost in enumerate(costs):
            if p == chosen:
                out.append(p)
                continue
            if cost == math.inf:
                continue
            if direct[p] == i:
                if cost <= limit and 0.0 < lowest:
                    out.append(p)
                continue
            vector = heard[p]
            if vector is None:
                continue
            far = vector[i]
            far_cost = far[0]
            if (cost + far_cost <= limit
                    and (far_cost < lowest or (far_cost == lowest and far[1] < hops))
                    and far[1] + 1 <= max_hops and feasible(far, fd)):
                out.append(p)                     # (an infinite cost is above the limit)
        return tuple(out)

    def _sets_changed(self, destinations) -> bool:
        """ECMP: whether the equal-cost set of one of `destinations` (indices) differs from the
        installed one while its route did not change (`_recompute` found nothing): a member other
        than the chosen one may have become dearer, unreachable or poisoned, or a port may have
        come to tie. Such a set is installed like a changed route (after `settle_s`): kept, a
        member whose neighbour now routes back through this router would loop packets."""
        installed = self._installed or {}
        ports, dests, best = self.ports, self.destinations, self.best
        for i in destinations:
            entry = best[i]
            old = installed.get(dests[i])
            if entry is None or old is None:
                if (entry is None) != (old is None):
                    return True
                continue
            hops = tuple(ports[p] for p in self._equal_cost_ports(i, entry))
            if _members(old[1]) != hops:
                return True
        return False

    def _affected(self, p: int, old: tuple, vector: tuple, changed) -> list:
        """The destinations of `changed` (entries of port `p`'s vector, `old` before, `vector`
        now) whose route may change. A destination's route cannot change when the route
        through `p` stays out of its choice: `p` is not its chosen port, and the cost through
        `p` was and is above the tie limit of its last choice (or invalid), so the lowest
        cost, the limit and the first port within it are what they were."""
        cost = self.costs[p]
        if cost == math.inf:
            return []                      # a port whose link is down is never a candidate
        best, limits, far_end, max_hops = self.best, self.limits, self.direct[p], self.max_hops
        inf = math.inf
        out = []
        for i in changed:
            if far_end == i:
                continue                   # the route through p is the direct one: unchanged
            entry = best[i]
            new_cost, new_hops, _ = vector[i]
            if entry is None:
                if new_cost == inf or new_hops + 1 > max_hops:
                    continue               # still no route at all
            elif entry[2] != p:
                limit = limits[i]
                old_cost, old_hops, _ = old[i]
                if ((old_cost == inf or old_hops + 1 > max_hops or cost + old_cost > limit)
                        and (new_cost == inf or new_hops + 1 > max_hops
                             or cost + new_cost > limit)):
                    continue
            out.append(i)
        return out

    def _recompute(self, destinations, at_round: bool = False) -> bool:
        """Recompute the routes to `destinations` (indices); True if any next hop or cost
        changed. Changed destinations are marked for every neighbour's next advertisement; a
        route that only carries a newer sequence number is marked too and advertised at once
        (a triggered update), without restarting the hold-down.

        The route chosen is `_choose`'s, computed here inline over the ports whose link is up
        (listed once per call): the same candidates in the same order, the same feasibility
        test, the same arithmetic and the same tie rule. A destination whose only routes are
        unfeasible gets a sequence-number request; so does one whose cheapest route is
        unfeasible, `at_round` (and `outdone` records the destinations to ask for at every
        round: see the module docstring)."""
        best, costs, heard, direct = self.best, self.costs, self.heard, self.direct
        max_hops, inf, tolerance, limits = self.max_hops, math.inf, TIE_TOLERANCE, self.limits
        fds, own_seq, starving, outdone = self.fd, self.own_seq, self.starving, self.outdone
        ecmp = self._groups is not None
        # the ports that can offer a route: up, and with a vector heard or a host at the far end
        live = [(p, cost, direct[p], heard[p]) for p, cost in enumerate(costs)
                if cost != inf and (heard[p] is not None or direct[p] >= 0)]
        changed = []
        wants: list = []                        # (destination, port) to ask through
        renumbered: list = []                   # same route, newer number
        for i in destinations:
            old = best[i]
            successor = old[2] if old is not None else -1
            fd = fds[i]
            first = None
            candidates = None
            refused = None          # the cheapest unfeasible route: (cost, port, far end's cost,
                                    # far end's hops)
            left = None             # ECMP: the same, of the successor's route, if unfeasible
            for p, cost, far_end, vector in live:
                if far_end == i:
                    candidate = (cost, 1, p, own_seq[i])
                elif vector is None:
                    continue
                else:
                    far = vector[i]
                    far_cost = far[0]
                    if far_cost == inf or far[1] + 1 > max_hops:
                        continue
                    if p != successor and fd is not None:       # feasible(far, fd), inline
                        far_seq = far[2]
                        if far_seq < fd[2] or (far_seq == fd[2] and not (
                                far_cost < fd[0] or (far_cost == fd[0] and far[1] < fd[1]))):
                            if refused is None or cost + far_cost < refused[0]:
                                refused = (cost + far_cost, p, far_cost, far[1])
                            continue
                    elif ecmp and p == successor and fd is not None:
                        far_seq = far[2]                # the successor's route, allowed
                        if far_seq < fd[2] or (far_seq == fd[2] and not (   # unfeasible (below)
                                far_cost < fd[0] or (far_cost == fd[0] and far[1] < fd[1]))):
                            left = (cost + far_cost, p, far_cost, far[1])
                    candidate = (cost + far_cost, far[1] + 1, p, far[2])
                if first is None:
                    first = candidate
                    lowest = candidate[0]
                    continue
                if candidates is None:
                    candidates = [first, candidate]
                else:
                    candidates.append(candidate)
                if candidate[0] < lowest:       # (min's choice among equal costs: the first)
                    lowest = candidate[0]
            new = first
            if first is not None:               # the lowest cost; ties: the first port
                scale = lowest if lowest >= 0.0 else -lowest        # max(abs(lowest), 1e-12)
                limit = lowest + tolerance * (scale if scale > 1e-12 else 1e-12)
                limits[i] = limit
                if candidates is not None:
                    for candidate in candidates:
                        if candidate[0] <= limit:
                            new = candidate
                            break
                if left is not None and new is not None and new[2] != successor and (
                        refused is None or left[0] < refused[0]):
                    refused = left      # the successor left for a port of equal cost: its route
                                        # is now held to the feasibility condition too
                if refused is not None and refused[0] < limit and at_round:
                    wants.append((i, refused[1]))    # a better route, unfeasible
                # asked at every round until feasible (RFC 8966 §3.8.2.2: a node SHOULD ask
                # when an unfeasible update is preferable to its selected route): one better
                # beyond a tie, or, with ECMP, one that ties and would join the equal-cost set
                # (its neighbour is closer than the choice, `_equal_cost_ports`). Babel has
                # no multipath; a set short of a member counts here as a worse route.
                if refused is not None and (refused[0] < 2.0 * lowest - limit or (
                        ecmp and refused[0] < limit and (refused[2] < lowest or (
                            refused[2] == lowest and new is not None
                            and refused[3] < new[1])))):
                    outdone.add(i)
                elif i in outdone:
                    outdone.discard(i)
                if i in starving:
                    starving.discard(i)
            elif refused is not None:           # starving: only unfeasible routes
                starving.add(i)
                outdone.discard(i)
                wants.append((i, refused[1]))
            else:                               # no route at all
                if i in starving:
                    starving.discard(i)
                if i in outdone:
                    outdone.discard(i)
            if new is None:
                if old is None:
                    continue
                best[i] = None
            else:
                seq = new[3]
                same = (old is not None and new[0] == old[0] and new[1] == old[1]
                        and new[2] == old[2])
                if same and seq == old[3][2]:
                    continue                    # (its entry is already the FD or above it)
                advertised = (new[0], new[1], seq)
                best[i] = (new[0], new[1], new[2], advertised)
                if feasible(advertised, fd):    # below the FD: it becomes the FD (the same
                    fds[i] = advertised         # tuple, no memory of its own)
                if same:
                    renumbered.append(i)        # the same route, a newer number: advertise it
                    continue
            changed.append(i)
        for i, p in wants:
            self._request(i, p)
        if renumbered:
            for marks in self.dirty:
                marks.update(renumbered)
            if not self._flush_pending:
                self._flush_pending = True
                self.sim.schedule(0.0, self._flush)
        if not changed:
            return False
        for marks in self.dirty:
            marks.update(changed)
        return True

    # -- sequence-number requests (RFC 8966 §2.5, §3.8) -------------------------------------
    def _request(self, i: int, p: int) -> None:
        """Ask, through port `p`, for a route to destination `i` with a sequence number newer
        than this router's feasibility distance (rate-limited: `_may_ask`)."""
        wanted = self.fd[i][2] + 1
        if self._may_ask(i, wanted):
            self._send_request(p, i, wanted, self.max_hops)

    def _may_ask(self, i: int, wanted: int) -> bool:
        """Whether a request for destination `i` and number `wanted` may go out now, sent or
        forwarded: unless one for at least that number went out less than `retry_s` ago (so a
        request lost on the way, or a newer number wanted, is asked again; a flood of requests
        for one number is not). Records it if so."""
        now = self.sim.now
        asked = self.asked.get(i)
        if asked is not None and asked[0] >= wanted and now - asked[1] < self.retry_s:
            return False
        self.asked[i] = (wanted, now)
        return True

    def _send_request(self, p: int, i: int, wanted: int, ttl: int) -> None:
        d = self.ports[p]
        far = d.dst
        if not d.link.up or getattr(far, "agent", None) is None:
            return
        packet = Packet(ROUTING, self.router, far, self.packet_bytes, far.agent.on_request,
                        payload=(d.link, i, wanted, ttl))
        self.requests_sent += 1
        self.packets_sent += 1
        d.send_routing(packet)

    def _resend(self, p: int, i: int) -> None:
        """Send destination `i`'s entry to port `p` again with the next triggered update (the
        neighbour asked for a number this router already advertised: that packet was lost)."""
        sent = self.sent[p]
        if sent is not None:
            sent[i] = FORGOTTEN
        self.dirty[p].add(i)

    def on_request(self, packet) -> None:
        """A neighbour asks for destination `i` with a sequence number of at least `wanted`.
        The router that originates `i` raises its number and advertises it; a router whose
        route already carries such a number sends it to the neighbour; any other forwards the
        request along its own route (within a hop limit, rate-limited by `_may_ask`)."""
        link, i, wanted, ttl = packet.payload
        p = self.port_of[link]
        flush = False
        if i in self.own_seq and any(self.direct[q] == i and self.costs[q] != math.inf
                                     for q in range(len(self.ports))):
            if self.own_seq[i] < wanted:
                self.own_seq[i] = wanted
                if self._recompute([i]):
                    self._timer.start(self.settle_s)
                    flush = True                # (a renumbered route flushes itself)
            else:
                self._resend(p, i)
                flush = True
        else:
            entry = self.best[i]
            if entry is not None and entry[3][2] >= wanted:
                self._resend(p, i)
                flush = True
            elif entry is not None and entry[2] != p and ttl > 1 and self._may_ask(i, wanted):
                self._send_request(entry[2], i, wanted, ttl - 1)
        if flush and not self._flush_pending:
            self._flush_pending = True
            self.sim.schedule(0.0, self._flush)

    def _install(self) -> None:
        """Put the current table in the router's forwarding table and log what changed (a
        route whose next hop and cost, within 1e-9, are the installed ones is no change)."""
        ports, dests = self.ports, self.destinations
        routes = {}
        current = {}
        changes = {}
        previous = self._installed or {}
        groups = self._groups
        kept = 0                                   # destinations installed before and now
        for i, entry in enumerate(self.best):
            if entry is not None:
                dest = dests[i]
                d = ports[entry[2]]
                old = previous.get(dest)
                if old is not None:
                    kept += 1
                if groups is not None:
                    hops = tuple(ports[p] for p in self._equal_cost_ports(i, entry))
                    if old is not None and _members(old[1]) == hops:
                        d = old[1]                  # the same set: keep its object (counter)
                    else:
                        d = groups.entry(hops)
                routes[dest] = d
                cost = entry[0]
                route = current[dest] = (cost, d)
                if old is not None and old[1] is d:   # the same next hop: the same route if
                    scale = cost if cost >= 0.0 else -cost        # max(abs(cost), 1e-12)
                    if not abs(old[0] - cost) > 1e-9 * (scale if scale > 1e-12 else 1e-12):
                        continue                      # the costs are within 1e-9 (or a NaN)
                if not _same_route(old, route):
                    changes[dest] = route
        self.router.routes = routes
        if kept < len(previous):                   # some became unreachable
            changes.update({dest: (math.inf, None) for dest in previous if dest not in current})
        self._installed = current
        if changes and self.on_install is not None:
            self.on_install(self.sim.now, self.router, changes)
        if self.starving:                # still waiting: the request (or its answer) may have
            for i in self.starving:      # been dropped by a full buffer, or refused by a router
                self.asked.pop(i, None)  # that had just forwarded another; ask once more now
            self._recompute(sorted(self.starving))   # rather than at the next round


def _members(route) -> tuple:
    """The next hops of an installed entry: a direction or an ECMP group's members."""
    hops = getattr(route, "hops", None)
    return (route,) if hops is None else hops


def _same_route(old, new) -> bool:
    """Whether two installed routes (cost, direction or ECMP group) are the same (costs within
    1e-9, same next hops)."""
    if old is None or (old[1] is not new[1] and _members(old[1]) != _members(new[1])):
        return False
    return abs(old[0] - new[0]) <= 1e-9 * max(abs(new[0]), 1e-12)


def start_distance_vector(sim, routers: list, hosts: list, *, update_interval_s: float,
                          settle_s: float, packet_bytes: int, on_install=None,
                          installed: dict | None = None, ecmp: str | None = None,
                          seed=None) -> list:
    """Create and start an agent on every router; returns the agents. `installed` maps each
    router to the {host: (cost, direction)} table it forwards with now (static routes)."""
    installed = installed or {}
    index = {host: i for i, host in enumerate(hosts)}
    agents = [DistanceVectorAgent(sim, router, hosts, update_interval_s=update_interval_s,
                                  settle_s=settle_s, packet_bytes=packet_bytes,
                                  max_hops=len(routers) + 1, on_install=on_install,
                                  installed=installed.get(router), index=index,
                                  ecmp=ecmp, seed=seed)
              for router in routers]
    for agent in agents:
        agent.start()
    return agents
