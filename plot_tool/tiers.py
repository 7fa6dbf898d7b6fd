"""Tiers of a network, recognised from its structure (the report's network view, the aggregate
lines of the figures; docs/report.md "Tiered networks").

A node's tier is its hop distance from the nearest host (breadth-first search from every host at
once): hosts are tier 0, the switches they attach to tier 1, and so on; in a fat tree the core
switches are the farthest (tier 3). The network is *tiered* when

* every node is reachable from a host,
* there are at least ``MIN_TIERS`` tiers (hosts and two switch tiers),
* every link joins two adjacent tiers (no link inside a tier: a dumbbell's or a parking lot's
  router-to-router links are, so they are not tiered), and
* it has at least ``MIN_TIERED_NODES`` nodes (below that a spring drawing is readable, and the
  small shipped test cases keep theirs).

Generated fat trees (hosts, edge, aggregation, core) and leaf-spine fabrics (hosts, leaves,
spines) are tiered by this rule whatever their node names. Within a tier, nodes are ordered to
keep pods together: by name (numbers compared as numbers) when every name has the form the
generators write (``h_p0_e1_2``, ``e_p0_1``, ``a_p0_1``, ``c_1_0``; ``h_l0_3``, ``l_0``,
``s_1``), otherwise by the barycenter heuristic (a few sweeps down and up, each node placed at the
mean position of its neighbours in the tier above, then below; ties keep name order).

Only summary.json is read: the link ends and the host and router ids.
"""
from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MIN_TIERS = 3
MIN_TIERED_NODES = 16
BARYCENTER_SWEEPS = 4

# what the generators write (topologies/generate.py, docs/topology-format.md)
GENERATED_NAME = re.compile(r"^(h_p\d+_e\d+_\d+|e_p\d+_\d+|a_p\d+_\d+|c_\d+_\d+|"
                            r"h_l\d+_\d+|l_\d+|s_\d+)$")


def natural_key(name: str) -> tuple:
    """Sort key comparing the digit runs of `name` as numbers ("e_p2_0" before "e_p10_0")."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", name) if part)


def tier_names(count: int) -> list[str]:
    """Names of `count` tiers, bottom (hosts) first: a three-tier network is a leaf-spine fabric
    (hosts, leaf, spine), a four-tier one a fat tree (hosts, edge, aggregation, core); others are
    numbered."""
    if count == 3:
        return ["host", "leaf", "spine"]
    if count == 4:
        return ["host", "edge", "aggregation", "core"]
    return ["host"] + [f"tier {d}" for d in range(1, count)]


@dataclass
class Tiers:
    """The tier of every node and the order of the nodes within each tier (bottom tier first)."""

    tier: dict[str, int]           # node -> tier (0: hosts)
    order: list[list[str]]         # order[d]: the nodes of tier d, left to right
    names: list[str]               # names[d]: what tier d is ("host", "edge", ...)

    def link_group(self, a: str, b: str) -> str:
        """The name of the tier pair a link joins, lower tier first: "host\u2013edge"."""
        ta, tb = sorted((self.tier[a], self.tier[b]))
        return f"{self.names[ta]}\u2013{self.names[tb]}"

    def link_groups(self) -> list[str]:
        """Every tier pair name, bottom up."""
        return [f"{self.names[d]}\u2013{self.names[d + 1]}" for d in range(len(self.names) - 1)]


def _graph(summary: Mapping[str, Any]) -> tuple[list[str], dict[str, list[str]], set[str]]:
    hosts = set(map(str, summary.get("hosts", {}) or {}))
    nodes: dict[str, None] = dict.fromkeys(sorted(hosts | set(map(str, summary.get("routers", {})
                                                                   or {}))))
    neighbours: dict[str, list[str]] = {}
    for lid in sorted(summary.get("links", {}) or {}):
        ends = (summary["links"][lid] or {}).get("ends") or []
        if len(ends) != 2:
            continue
        a, b = str(ends[0]), str(ends[1])
        nodes.setdefault(a, None)
        nodes.setdefault(b, None)
        neighbours.setdefault(a, []).append(b)
        neighbours.setdefault(b, []).append(a)
    return sorted(nodes, key=natural_key), neighbours, hosts


def network_tiers(summary: Mapping[str, Any]) -> Tiers | None:
    """The tiers of the network of `summary` (a run's summary.json), or None when it is not
    tiered (see the module docstring for the rule)."""
    nodes, neighbours, hosts = _graph(summary)
    if len(nodes) < MIN_TIERED_NODES or not hosts:
        return None
    tier: dict[str, int] = {h: 0 for h in hosts}
    queue = deque(sorted(hosts, key=natural_key))
    while queue:
        node = queue.popleft()
        for other in neighbours.get(node, ()):
            if other not in tier:
                tier[other] = tier[node] + 1
                queue.append(other)
    if len(tier) != len(nodes):
        return None                                   # a node no host reaches
    count = max(tier.values()) + 1
    if count < MIN_TIERS:
        return None
    for node, others in neighbours.items():
        if any(abs(tier[node] - tier[o]) != 1 for o in others):
            return None                               # a link inside a tier (or a self-loop)
    order: list[list[str]] = [[] for _ in range(count)]
    for node in nodes:                                # natural name order
        order[tier[node]].append(node)
    if not all(GENERATED_NAME.match(n) for n in nodes):
        _barycenter_sweeps(order, neighbours, tier)
    return Tiers(tier=tier, order=order, names=tier_names(count))


def _barycenter_sweeps(order: list[list[str]], neighbours: Mapping[str, Sequence[str]],
                       tier: Mapping[str, int]) -> None:
    """Reorder each tier by the mean position of its neighbours in the tier above (downward
    sweep), then below (upward sweep), `BARYCENTER_SWEEPS` times; stable sorts, so ties keep
    the order they had."""
    def position() -> dict[str, float]:
        return {n: (i + 0.5) / len(row) for row in order for i, n in enumerate(row)}

    for _ in range(BARYCENTER_SWEEPS):
        for direction in (-1, 1):          # the last sweep is upward: pods come from below
            tiers = range(1, len(order)) if direction == 1 else range(len(order) - 2, -1, -1)
            for d in tiers:
                pos = position()
                ref = d - direction

                def centre(n: str, pos: dict[str, float] = pos, ref: int = ref) -> float:
                    near = [pos[o] for o in neighbours.get(n, ()) if tier[o] == ref]
                    return sum(near) / len(near) if near else pos[n]

                order[d].sort(key=centre)


def tiered_positions(tiers: Tiers, height: float = 0.45) -> dict[str, tuple[float, float]]:
    """Positions of a tiered drawing: tier d on the horizontal line y = d / (tiers - 1) *
    `height` (hosts at the bottom, the farthest tier on top), the nodes of a tier spread evenly
    over x in [0, 1] in their order."""
    top = max(1, len(tiers.order) - 1)
    out: dict[str, tuple[float, float]] = {}
    for d, row in enumerate(tiers.order):
        for i, node in enumerate(row):
            out[node] = ((i + 0.5) / len(row), d / top * height)
    return out


__all__ = ["Tiers", "natural_key", "network_tiers", "tier_names", "tiered_positions"]
