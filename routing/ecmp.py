"""ECMP: spreading traffic over every equal-cost next hop.

With ``"routing": {"ecmp": true}`` (mode "flow") or ``"ecmp": "packet"``, a router's forwarding
entry towards a destination holds *every* next hop whose route cost is within the tie tolerance
(routing/static.py TIE_TOLERANCE, relative 1e-9) of the lowest, in the router's link order; an
entry with a single next hop stays a plain `LinkDirection`, so a network without equal costs
forwards exactly as without ECMP. An entry with several is a group object whose ``send(packet)``
picks one member in O(1), so `Router.receive` forwards through it unchanged:

* **flow** (`FlowHashGroup`): every flow carries, in each direction, a 64-bit hash of
  (flow id, source id, destination id, the run's seed), `flow_hash`, computed once when the
  flow is created (blake2b of the tuple: independent of Python's hash randomization) and
  copied into each packet. A router picks member ``mix(hash XOR salt) mod n``, where `salt` is
  a per-router hash of (router id, seed): without it every router with the same number of
  members would take the same residue, and the second tier of a fat tree would only reach the
  core switches the first tier's choice allows (hash polarization). A flow's packets therefore
  all take one path, and its ACKs one path (generally another, since source and destination
  are swapped). Flows collide: two flows may hash onto the same link while another stays idle;
  that is how ECMP behaves and it is part of the result, not a defect of the model.
* **packet** (`SprayGroup`): a router sends successive packets of a group round-robin over its
  members, from a start position given by a hash of (router id, destination set, seed). The
  counter belongs to the router's entry (one per router and set of next hops), not to the flow:
  deterministic, and it draws nothing from `sim.rng`, so spraying does not shift the workload's
  or the impairments' random draws. Packets of one flow take different paths and may arrive
  out of order; the transport handles that as it handles any reordering (duplicate ACKs, and a
  spurious fast retransmit when a packet is overtaken by `dupack_threshold` others).

Loop freedom: a member other than the tie rule's first choice must lead to a neighbour strictly
closer to the destination, or (over a link of no cost) as close and fewer hops away, so no
packet circulates even with zero-cost links.
"""
from __future__ import annotations

from hashlib import blake2b

MODES = ("flow", "packet")
_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def stable_hash(*parts) -> int:
    """A 64-bit hash of `parts` (strings and ints), the same in every process and Python."""
    text = "\x1f".join(str(part) for part in parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(text, digest_size=8).digest(), "little")


def flow_hash(flow_id: str, src_id: str, dst_id: str, seed) -> int:
    """The ECMP hash of one direction of a flow (packets from `src_id` to `dst_id`)."""
    return stable_hash("flow", flow_id, src_id, dst_id, seed)


def set_flow_hashes(flow, seed) -> None:
    """Give `flow` (a `Flow` or a `RateFlow`) its data and ACK hashes for `seed`."""
    forward = flow_hash(flow.id, flow.src.id, flow.dst.id, seed)
    sender = getattr(flow, "sender", None)
    if sender is None:                      # a rate flow has no ACKs
        flow.flow_hash = forward
        return
    sender.flow_hash = forward
    flow.receiver.flow_hash = flow_hash(flow.id, flow.dst.id, flow.src.id, seed)


def _member(hash_value: int, salt: int, n: int) -> int:
    """The member a router with `salt` picks among `n` for a packet hashed `hash_value`."""
    mixed = ((hash_value ^ salt) * _GOLDEN) & _MASK
    return (mixed >> 29) % n


class FlowHashGroup:
    """A forwarding entry with several next hops, chosen by the packet's flow hash."""

    __slots__ = ("hops", "n", "salt")

    def __init__(self, hops: tuple, salt: int):
        self.hops = hops
        self.n = len(hops)
        self.salt = salt

    def pick(self, hash_value: int):
        """The member (`LinkDirection`) the packets of hash `hash_value` take."""
        return self.hops[_member(hash_value, self.salt, self.n)]

    def send(self, packet) -> bool:
        mixed = ((packet.flow_hash ^ self.salt) * _GOLDEN) & _MASK
        return self.hops[(mixed >> 29) % self.n].send(packet)


class SprayGroup:
    """A forwarding entry with several next hops, taken in turn by successive packets."""

    __slots__ = ("hops", "n", "next")

    def __init__(self, hops: tuple, start: int):
        self.hops = hops
        self.n = len(hops)
        self.next = start % self.n

    def pick(self, hash_value: int):
        """The member the next packet takes (the hash is not used when spraying)."""
        return self.hops[self.next]

    def send(self, packet) -> bool:
        i = self.next
        self.next = i + 1 if i + 1 < self.n else 0
        return self.hops[i].send(packet)


GROUP_TYPES = (FlowHashGroup, SprayGroup)


def members(route) -> tuple:
    """The next hops (`LinkDirection`s) of a forwarding entry, a group or a single one."""
    if isinstance(route, GROUP_TYPES):
        return route.hops
    return (route,)


def sets_made(routers, agents) -> bool:
    """Whether some router made an equal-cost set of more than one next hop, whose member a
    flow's hash or a spray counter picks with the run's seed: one in a static table (its
    entries are made when first looked up and kept), or one a Bellman-Ford agent made at any
    time (`equal_cost_sets`). Without one, ECMP forwarded as single paths do."""
    return any(isinstance(entry, GROUP_TYPES) for router in routers
               for entry in router.routes.values()) or \
        any(getattr(agent, "equal_cost_sets", 0) for agent in agents)


class GroupMaker:
    """Makes the forwarding entries of one router: a single next hop stays a `LinkDirection`;
    equal sets share one group object (one counter per set when spraying)."""

    __slots__ = ("mode", "seed", "router_id", "salt", "groups")

    def __init__(self, mode: str, seed, router_id: str):
        self.mode = mode
        self.seed = seed
        self.router_id = router_id
        self.salt = stable_hash("router", router_id, seed)
        self.groups: dict = {}

    def entry(self, hops):
        hops = tuple(hops)
        if len(hops) == 1:
            return hops[0]
        group = self.groups.get(hops)
        if group is None:
            if self.mode == "packet":
                start = stable_hash("spray", self.router_id,
                                    *(d.link.id + ">" + d.dst.id for d in hops), self.seed)
                group = SprayGroup(hops, start)
            else:
                group = FlowHashGroup(hops, self.salt)
            self.groups[hops] = group
        return group


def direction_paths(first, dst, hash_value: int, *, max_hops: int = 1024,
                    limit: int | None = None) -> tuple[list, bool]:
    """The paths (lists of link directions, `first` first) a packet hashed `hash_value` takes
    from `first` (a host's port) to the node `dst` through the current forwarding tables: one
    path with flow hashing or without ECMP, every combination of members with packet spraying
    (in the routers' link order). A path without a route, or of more than `max_hops` hops (a
    forwarding loop), is left out; with `limit`, at most that many paths. Returns the paths and
    whether `limit` left some out. The one walk `flow_paths` and `theory.paths.run_paths` read."""
    paths: list = []
    truncated = False

    def walk(direction, path):
        nonlocal truncated
        for _ in range(max_hops):
            if limit is not None and len(paths) >= limit:
                truncated = True
                return
            path = [*path, direction]
            node = direction.dst
            if node is dst:
                paths.append(path)
                return
            find = getattr(node, "route", None)       # (a Router: its entry, maybe computed now)
            route = find(dst) if find is not None else None
            if route is None:
                return
            if isinstance(route, SprayGroup):
                for member in route.hops:
                    walk(member, path)
                return
            direction = route.pick(hash_value) if isinstance(route, FlowHashGroup) else route
    walk(first, [])
    return paths, truncated


def hashed_path_links(flow, max_hops: int = 1024) -> list:
    """The links (ids, source first) a flow's data packets take under flow hashing: the one path
    its hash picks through the current forwarding tables (summary.json ``path_links``); empty if
    there is no route."""
    sender = getattr(flow, "sender", None)
    hash_value = sender.flow_hash if sender is not None else flow.flow_hash
    paths, _ = direction_paths(flow.src.port, flow.dst, hash_value, max_hops=max_hops, limit=1)
    return [d.link.id for d in paths[0]] if paths else []


def flow_paths(flow, max_hops: int = 1024) -> list:
    """The paths (lists of node ids, source first) a flow's data packets can take through the
    current forwarding tables (`direction_paths`, with the sender's hash). Empty if there is no
    route."""
    src = flow.src
    sender = getattr(flow, "sender", None)
    hash_value = sender.flow_hash if sender is not None else getattr(flow, "flow_hash", 0)
    paths, _ = direction_paths(src.port, flow.dst, hash_value, max_hops=max_hops)
    return [[src.id, *(d.dst.id for d in path)] for path in paths]
