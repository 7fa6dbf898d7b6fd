"""Topology generators: fat trees, leaf-spine fabrics, dumbbells, parking lots and random router
graphs as plain topology dicts (docs/topology-format.md, "Generated topologies").

    from topologies.generate import Common, fat_tree, dumps
    topology = fat_tree(4, common=Common(flows=8, seed=2))    # a dict the loader accepts
    text = dumps(topology)                                    # one link or flow per line

Every generator is a pure function of its arguments: the same arguments give the same dict, its
random choices (which hosts the flows join, their start times, the random graph's edges) drawn
from ``random.Random(common.seed)`` once, at generation, and written into the file. The run's own
randomness still comes from the file's ``seed`` alone. ``initializer.py generate KIND`` is the
command line (netsim/generate_cli.py).

Node names show the structure (every index counts from 0):

* fat tree of k-port switches (Al-Fares et al., SIGCOMM 2008): pod p, edge switch ``e_p{p}_{e}``,
  aggregation switch ``a_p{p}_{a}``, host ``h_p{p}_e{e}_{h}`` (host h of edge e of pod p), core
  switch ``c_{a}_{j}`` (the j-th core of group a, joined to aggregation switch a of every pod);
* leaf-spine: leaf ``l_{l}``, spine ``s_{s}``, host ``h_l{l}_{h}``;
* dumbbell and parking lot: the names of the shipped topologies/dumbbell.json and
  parking_lot.json (S/T hosts, R routers, bottleneck links L/LB, access links LS/LT);
* random graph: routers ``r{i}``, hosts ``h{i}``.

Fabric and random-graph links are named after their ends, ``"<end0>-<end1>"`` (lower tier first:
``h_p0_e1_2-e_p0_1``, ``e_p0_1-a_p0_0``, ``a_p0_1-c_1_0``). Every problem is a `GenerateError`,
one line naming the option as the command line spells it.
"""
from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from topologies.spec import ROUTING_PROTOCOLS
from topologies.validation import MAX_FILE_BYTES, InputError

# -- defaults and where they come from (docs/topology-format.md, "Generated topologies") -------

PACKET_BYTES = {"data": 1500, "ack": 40}       # Ethernet MTU frames; 40 B pure ACKs
INITIAL_CWND_PKTS = 10                         # RFC 6928
DC_MIN_RTO_MS = 200.0        # Linux TCP_RTO_MIN (HZ/5): what data-center hosts run with
WAN_MIN_RTO_MS = 1000.0      # RFC 6298 (as the shipped dumbbell and parking lot)
DC_DELAY_US = 2.0            # per link: 1-2 us port-to-port latency of a data-center switch plus
                             # tens of metres of fibre (5 ns/m)
FAT_TREE_RATE_MBPS = 1000.0  # Al-Fares et al. 2008: commodity 1 GigE switches, every link alike
FAT_TREE_BUFFER_KB = 80.0    # per port: the 4 MB shared buffer of the Broadcom Triumph (DCTCP
                             # paper's 1 Gb/s top-of-rack switch, 48 x 1 + 4 x 10 Gb/s) / 52 ports
LEAF_SPINE = (9, 4, 16)      # leaves, spines, hosts per leaf: pFabric's (Alizadeh et al. 2013)
LEAF_SPINE_HOST_MBPS = 10000.0     # pFabric: 10 Gb/s host links,
LEAF_SPINE_FABRIC_MBPS = 40000.0   # 40 Gb/s leaf-spine links (full bisection at 16 x 10 / 4 x 40)
LEAF_SPINE_BUFFER_KB = 170.0  # per port: the 4 MB shared buffer of the Broadcom Scorpion (DCTCP
                              # paper's 10 Gb/s switch, 24 ports) / 24
MAX_LINKS = 300_000          # a file beyond this would exceed the loader's MAX_FILE_BYTES
PATTERNS = ("random", "permutation")


class GenerateError(InputError):
    """Arguments a generator cannot build a topology from: one line naming the option."""


@dataclass(frozen=True)
class Common:
    """What every generator takes besides its structure: flows, routing, run settings.

    `flows` None means the generator's default count; `data_mb` None makes the flows long-lived
    (they send until `duration_s`, which is then required); `start_spread_s` > 0 draws each
    start uniformly from [start_s, start_s + start_spread_s). `pattern` (fabrics and random
    graphs): "random" draws each flow's two hosts independently (distinct), "permutation" sends
    from every host in turn to its image under a random permutation without fixed points.
    `mark_k_kb` puts DCTCP step marking at K on every link (RFC 8257 §3.1). `ecmp` "flow" or
    "packet" writes ``"routing": {"ecmp": true}`` or ``"packet"`` (routing/ecmp.py); None (the
    default here; the subcommand's fat-tree and leaf-spine default to "flow") or "none", as on
    the command line, writes nothing."""

    flows: int | None = None
    data_mb: float | None = 1.0
    algorithm: str = "reno"
    ecn: bool = False
    start_s: float = 0.0
    start_spread_s: float = 0.0
    pattern: str = "random"
    routing: str = "static"
    ecmp: str | None = None
    seed: int = 1
    duration_s: float | None = None
    min_rto_ms: float | None = None
    mark_k_kb: float | None = None
    name: str | None = None
    description: str = ""


# -- checks -------------------------------------------------------------------------------------

def _integer(option: str, value, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (
            maximum is not None and value > maximum):
        bound = f" and <= {maximum}" if maximum is not None else ""
        raise GenerateError(f"{option}: expected an integer >= {minimum}{bound}, got {value!r}")
    return value


def _number(option: str, value, *, positive: bool = False, nullable: bool = False):
    if value is None and nullable:
        return None
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
          and value == value and abs(value) != float("inf"))
    if not ok or value < 0 or (positive and value == 0):
        what = "a positive number" if positive else "a number >= 0"
        raise GenerateError(f"{option}: expected {what}, got {value!r}")
    return value


def _check_common(common: Common) -> None:
    if common.flows is not None:
        _integer("--flows", common.flows, 0, 1_000_000)
    _number("--flow-mb", common.data_mb, positive=True, nullable=True)
    _number("--start-s", common.start_s)
    _number("--start-spread-s", common.start_spread_s)
    _number("--duration", common.duration_s, positive=True, nullable=True)
    _number("--min-rto-ms", common.min_rto_ms, positive=True, nullable=True)
    _number("--mark-k-kb", common.mark_k_kb, nullable=True)
    _integer("--seed", common.seed, 0)
    if common.pattern not in PATTERNS:
        raise GenerateError(f"--pattern: expected one of {', '.join(PATTERNS)}, got {common.pattern!r}")
    if common.routing not in ROUTING_PROTOCOLS:
        raise GenerateError(f"--routing: expected one of {', '.join(ROUTING_PROTOCOLS)}, "
                            f"got {common.routing!r}")
    if common.ecmp not in (None, "none", "flow", "packet"):
        raise GenerateError(f"--ecmp: expected flow, packet or none, got {common.ecmp!r}")
    if common.data_mb is None and common.duration_s is None:
        raise GenerateError("--long-lived: flows without a size send until the run ends; "
                            "give --duration S")


def _check_links(count: int) -> None:
    if count > MAX_LINKS:
        raise GenerateError(f"the topology would have {count} links; at most {MAX_LINKS} fit in "
                            f"a file the loader reads ({MAX_FILE_BYTES // 2**20} MiB)")


def _ms(value_us: float) -> float:
    """Microseconds as the file's milliseconds, without binary-fraction noise (2 us -> 0.002)."""
    return float(f"{value_us / 1000.0:.12g}")


def _plain(value):
    """A number as a person writes it: 1000 rather than 1000.0."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 53:
        return int(value)
    return value


def _link(a: str, b: str, rate_mbps: float, delay_ms: float, buffer_kb: float,
          link_id: str | None = None) -> dict:
    return {"id": link_id or f"{a}-{b}", "ends": [a, b], "rate_mbps": _plain(rate_mbps),
            "delay_ms": _plain(delay_ms), "buffer_kb": _plain(buffer_kb)}


# -- flows --------------------------------------------------------------------------------------

Pair = tuple[str, str]


def _random_pairs(hosts: list[str], pattern: str) -> Callable[[random.Random, int], list[Pair]]:
    """A drawer of `count` (src, dst) pairs over `hosts` (at least 2) by `pattern`."""
    def draw(rng: random.Random, count: int) -> list[Pair]:
        n = len(hosts)
        if pattern == "permutation":
            image = list(range(n))              # Sattolo: a random cycle, so no fixed point
            for i in range(n - 1, 0, -1):
                j = rng.randrange(i)
                image[i], image[j] = image[j], image[i]
            return [(hosts[i % n], hosts[image[i % n]]) for i in range(count)]
        pairs = []
        for _ in range(count):
            src = rng.randrange(n)
            dst = rng.randrange(n - 1)
            pairs.append((hosts[src], hosts[dst + 1 if dst >= src else dst]))
        return pairs
    return draw


def _flows(pairs: list[Pair], common: Common, rng: random.Random, first_id: int = 1) -> list:
    flows = []
    for index, (src, dst) in enumerate(pairs):
        flow: dict = {"id": f"F{index + first_id}", "src": src, "dst": dst}
        if common.data_mb is not None:
            flow["data_mb"] = _plain(common.data_mb)
        start = common.start_s
        if common.start_spread_s > 0:
            start = float(f"{start + rng.random() * common.start_spread_s:.9g}")
        flow["start_s"] = _plain(start)
        flow["algorithm"] = common.algorithm
        if common.ecn or common.algorithm == "dctcp":
            flow["ecn"] = True
        flows.append(flow)
    return flows


def _assemble(name: str, description: str, hosts: list, routers: list, links: list,
              flows: list, common: Common, min_rto_ms: float) -> dict:
    if common.mark_k_kb is not None:
        smallest = min(link["buffer_kb"] for link in links)
        if not common.mark_k_kb < smallest:
            raise GenerateError(f"--mark-k-kb: expected a threshold below every link's buffer "
                                f"(the smallest is {smallest:g} kB), got {common.mark_k_kb:g}")
        for link in links:
            link["queue"] = {"discipline": "step", "k_kb": _plain(common.mark_k_kb)}
    rto_ms = common.min_rto_ms if common.min_rto_ms is not None else min_rto_ms
    topology = {
        "name": common.name or name,
        "description": " ".join(part for part in (description, common.description) if part),
        "units": "si", "duplex": "full", "packet_bytes": dict(PACKET_BYTES),
        "routing": {"protocol": common.routing,
                    **({"ecmp": True if common.ecmp == "flow" else common.ecmp}
                       if common.ecmp not in (None, "none") else {})},
        "transport": {"initial_cwnd_pkts": INITIAL_CWND_PKTS,
                      "min_rto_s": _plain(float(f"{rto_ms / 1000.0:.12g}"))},
        "seed": common.seed, "duration_s": _plain(common.duration_s),
        "hosts": hosts, "routers": routers, "links": links, "flows": flows,
    }
    return topology


def _flow_text(flows: list, common: Common) -> str:
    if not flows:
        return "no flows (add flows or workloads)"
    size = "long-lived" if common.data_mb is None else f"of {common.data_mb:g} MB"
    start = (f"starting in [{common.start_s:g}, {common.start_s + common.start_spread_s:g}) s"
             if common.start_spread_s > 0 else f"starting at {common.start_s:g} s")
    plural = "s" if len(flows) > 1 else ""
    return f"{len(flows)} {common.algorithm} flow{plural} {size} {start}"


# -- generators ---------------------------------------------------------------------------------

def _check_fabric_options(host_rate_mbps, fabric_rate_mbps, delay_us, buffer_kb,
                          common) -> None:
    """The link and flow options shared by the fat tree and the leaf-spine fabric."""
    for option, value in (("--host-rate-mbps", host_rate_mbps),
                          ("--fabric-rate-mbps", fabric_rate_mbps)):
        _number(option, value, positive=True)
    _number("--delay-us", delay_us)
    _number("--buffer-kb", buffer_kb)
    _check_common(common)


def fat_tree(k: int = 4, *, host_rate_mbps: float = FAT_TREE_RATE_MBPS,
             fabric_rate_mbps: float = FAT_TREE_RATE_MBPS, delay_us: float = DC_DELAY_US,
             buffer_kb: float = FAT_TREE_BUFFER_KB, common: Common = Common()) -> dict:
    """A k-ary fat tree (Al-Fares et al. 2008): k pods of k/2 edge and k/2 aggregation switches,
    k/2 hosts per edge switch, (k/2)^2 core switches: k^3/4 hosts, 5k^2/4 switches, 3k^3/4 links.
    Flows (default: hosts/2) join hosts drawn by `common.pattern`."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 2 or k % 2:
        raise GenerateError(f"--k: expected an even integer >= 2 (switch ports), got {k!r}")
    _check_links(3 * k ** 3 // 4)
    _check_fabric_options(host_rate_mbps, fabric_rate_mbps, delay_us, buffer_kb, common)
    half = k // 2
    delay_ms = _ms(delay_us)
    hosts, edges, aggs, links = [], [], [], []
    cores = [f"c_{a}_{j}" for a in range(half) for j in range(half)]
    for p in range(k):
        for e in range(half):
            edge = f"e_p{p}_{e}"
            edges.append(edge)
            for h in range(half):
                host = f"h_p{p}_e{e}_{h}"
                hosts.append(host)
                links.append(_link(host, edge, host_rate_mbps, delay_ms, buffer_kb))
        aggs += [f"a_p{p}_{a}" for a in range(half)]
    for p in range(k):
        links += [_link(f"e_p{p}_{e}", f"a_p{p}_{a}", fabric_rate_mbps, delay_ms, buffer_kb)
                  for e in range(half) for a in range(half)]
    for p in range(k):
        links += [_link(f"a_p{p}_{a}", f"c_{a}_{j}", fabric_rate_mbps, delay_ms, buffer_kb)
                  for a in range(half) for j in range(half)]
    rng = random.Random(common.seed)
    count = len(hosts) // 2 if common.flows is None else common.flows
    flows = _flows(_random_pairs(hosts, common.pattern)(rng, count), common, rng)
    description = (f"k={k} fat tree (Al-Fares et al., SIGCOMM 2008): {len(hosts)} hosts, "
                   f"{len(edges)} edge, {len(aggs)} aggregation and {len(cores)} core switches, "
                   f"{len(links)} links; host links {host_rate_mbps:g} Mb/s, fabric links "
                   f"{fabric_rate_mbps:g} Mb/s, {delay_us:g} us and {buffer_kb:g} kB per port; "
                   f"{_flow_text(flows, common)} ({common.pattern} hosts, seed {common.seed}).")
    return _assemble(f"fat_tree_k{k}", description, hosts, edges + aggs + cores, links, flows,
                     common, DC_MIN_RTO_MS)


def leaf_spine(leaves: int = LEAF_SPINE[0], spines: int = LEAF_SPINE[1],
               hosts_per_leaf: int = LEAF_SPINE[2], *,
               host_rate_mbps: float = LEAF_SPINE_HOST_MBPS,
               fabric_rate_mbps: float = LEAF_SPINE_FABRIC_MBPS, delay_us: float = DC_DELAY_US,
               buffer_kb: float = LEAF_SPINE_BUFFER_KB, common: Common = Common()) -> dict:
    """A two-tier leaf-spine (folded Clos) fabric: every leaf joined to every spine by one link,
    `hosts_per_leaf` hosts per leaf. Oversubscription = hosts_per_leaf * host rate /
    (spines * fabric rate), written in the description. Flows (default: hosts/2) as fat_tree."""
    _integer("--leaves", leaves, 1)
    _integer("--spines", spines, 1)
    _integer("--hosts-per-leaf", hosts_per_leaf, 1)
    if leaves * hosts_per_leaf < 2:
        raise GenerateError("--hosts-per-leaf: a single leaf needs at least 2 hosts")
    _check_links(leaves * (hosts_per_leaf + spines))
    _check_fabric_options(host_rate_mbps, fabric_rate_mbps, delay_us, buffer_kb, common)
    delay_ms = _ms(delay_us)
    leaf_ids = [f"l_{i}" for i in range(leaves)]
    spine_ids = [f"s_{i}" for i in range(spines)]
    hosts, links = [], []
    for i, leaf in enumerate(leaf_ids):
        for h in range(hosts_per_leaf):
            host = f"h_l{i}_{h}"
            hosts.append(host)
            links.append(_link(host, leaf, host_rate_mbps, delay_ms, buffer_kb))
    links += [_link(leaf, spine, fabric_rate_mbps, delay_ms, buffer_kb)
              for leaf in leaf_ids for spine in spine_ids]
    rng = random.Random(common.seed)
    count = len(hosts) // 2 if common.flows is None else common.flows
    flows = _flows(_random_pairs(hosts, common.pattern)(rng, count), common, rng)
    ratio = hosts_per_leaf * host_rate_mbps / (spines * fabric_rate_mbps)
    description = (f"Leaf-spine fabric: {leaves} leaves, {spines} spines, {hosts_per_leaf} hosts "
                   f"per leaf ({len(hosts)} hosts, {len(links)} links); host links "
                   f"{host_rate_mbps:g} Mb/s, leaf-spine links {fabric_rate_mbps:g} Mb/s "
                   f"(oversubscription {ratio:.3g}:1), {delay_us:g} us and {buffer_kb:g} kB "
                   f"per port; {_flow_text(flows, common)} ({common.pattern} hosts, seed "
                   f"{common.seed}).")
    return _assemble(f"leaf_spine_{leaves}x{spines}x{hosts_per_leaf}", description, hosts,
                     leaf_ids + spine_ids, links, flows, common, DC_MIN_RTO_MS)


def _one_bdp_kb(rate_mbps: float, rtt_ms: float) -> float:
    return float(f"{rate_mbps * rtt_ms / 8:.6g}")          # Mb/s x ms / 8 = kB


def dumbbell(pairs: int = 4, *, rate_mbps: float = 10.0, delay_ms: float = 20.0,
             buffer_kb: float | None = None, access_rate_mbps: float = 100.0,
             access_delay_ms: float = 1.0, access_buffer_kb: float = 200.0,
             common: Common = Common(data_mb=4.0)) -> dict:
    """N sender/receiver pairs S_i -> T_i over one bottleneck R1-R2 (LB), access links LS_i and
    LT_i, as topologies/dumbbell.json. `buffer_kb` None: one bandwidth-delay product of the base
    RTT. Flow j (from 1; default one per pair) runs on pair ((j - 1) mod pairs) + 1."""
    _integer("--pairs", pairs, 1)
    _check_links(2 * pairs + 1)
    for option, value in (("--rate-mbps", rate_mbps), ("--access-rate-mbps", access_rate_mbps)):
        _number(option, value, positive=True)
    for option, value in (("--delay-ms", delay_ms), ("--access-delay-ms", access_delay_ms),
                          ("--access-buffer-kb", access_buffer_kb)):
        _number(option, value)
    _number("--buffer-kb", buffer_kb, nullable=True)
    _check_common(common)
    rtt_ms = 2 * (delay_ms + 2 * access_delay_ms)
    if buffer_kb is None:
        buffer_kb = _one_bdp_kb(rate_mbps, rtt_ms)
    senders = [f"S{i}" for i in range(1, pairs + 1)]
    receivers = [f"T{i}" for i in range(1, pairs + 1)]
    links = [_link("R1", "R2", rate_mbps, delay_ms, buffer_kb, "LB")]
    links += [_link(s, "R1", access_rate_mbps, access_delay_ms, access_buffer_kb, f"LS{i}")
              for i, s in enumerate(senders, 1)]
    links += [_link("R2", t, access_rate_mbps, access_delay_ms, access_buffer_kb, f"LT{i}")
              for i, t in enumerate(receivers, 1)]
    count = pairs if common.flows is None else common.flows
    flows = _flows([(senders[j % pairs], receivers[j % pairs]) for j in range(count)], common,
                   random.Random(common.seed))
    description = (f"Dumbbell: {pairs} sender/receiver pairs (S1..S{pairs} -> T1..T{pairs}) "
                   f"share one {rate_mbps:g} Mb/s bottleneck R1-R2 with {delay_ms:g} ms one-way "
                   f"delay and a {buffer_kb:g} kB buffer; {access_rate_mbps:g} Mb/s access links "
                   f"with {access_delay_ms:g} ms delay (base RTT {rtt_ms:g} ms, one BDP "
                   f"{_one_bdp_kb(rate_mbps, rtt_ms):g} kB); {_flow_text(flows, common)}, "
                   f"flow Fj on pair ((j - 1) mod {pairs}) + 1.")
    return _assemble(f"dumbbell_{pairs}", description, senders + receivers, ["R1", "R2"], links,
                     flows, common, WAN_MIN_RTO_MS)


def parking_lot(hops: int = 3, *, rate_mbps: float = 10.0, delay_ms: float = 10.0,
                buffer_kb: float = 50.0, access_rate_mbps: float = 100.0,
                access_delay_ms: float = 1.0, access_buffer_kb: float = 200.0,
                common: Common = Common(data_mb=4.0)) -> dict:
    """A chain R1..R(N+1) of N bottleneck links L1..LN, as topologies/parking_lot.json: the long
    path S0 -> T0 crosses all of them, cross path i (S_i -> T_i) only L_i. Flow F_j (from 0;
    default one per path) runs on path j mod (N + 1)."""
    _integer("--hops", hops, 1)
    _check_links(3 * hops + 2)
    for option, value in (("--rate-mbps", rate_mbps), ("--access-rate-mbps", access_rate_mbps)):
        _number(option, value, positive=True)
    for option, value in (("--delay-ms", delay_ms), ("--buffer-kb", buffer_kb),
                          ("--access-delay-ms", access_delay_ms),
                          ("--access-buffer-kb", access_buffer_kb)):
        _number(option, value)
    _check_common(common)
    routers = [f"R{i}" for i in range(1, hops + 2)]
    hosts, paths = [], []
    links = [_link(routers[i], routers[i + 1], rate_mbps, delay_ms, buffer_kb, f"L{i + 1}")
             for i in range(hops)]
    for i in range(hops + 1):
        first, last = (routers[0], routers[-1]) if i == 0 else (routers[i - 1], routers[i])
        hosts += [f"S{i}", f"T{i}"]
        paths.append((f"S{i}", f"T{i}"))
        links.append(_link(f"S{i}", first, access_rate_mbps, access_delay_ms, access_buffer_kb,
                           f"LS{i}"))
        links.append(_link(last, f"T{i}", access_rate_mbps, access_delay_ms, access_buffer_kb,
                           f"LT{i}"))
    count = hops + 1 if common.flows is None else common.flows
    flows = _flows([paths[j % (hops + 1)] for j in range(count)], common,
                   random.Random(common.seed), first_id=0)
    description = (f"Parking lot: {hops} bottleneck links of {rate_mbps:g} Mb/s in a chain "
                   f"R1..R{hops + 1} ({delay_ms:g} ms one-way each, {buffer_kb:g} kB buffers); "
                   f"the long path S0 -> T0 crosses all of them, path i (S_i -> T_i) only L_i; "
                   f"{access_rate_mbps:g} Mb/s access links with {access_delay_ms:g} ms delay; "
                   f"{_flow_text(flows, common)}, flow F_j on path j mod {hops + 1}.")
    return _assemble(f"parking_lot_{hops}", description, hosts, routers, links, flows, common,
                     WAN_MIN_RTO_MS)


def random_graph(routers: int = 100, *, degree: float = 4.0, hosts: int = 20,
                 rate_mbps: float = 100.0, delay_ms: float = 1.0, buffer_kb: float = 100.0,
                 common: Common = Common(flows=10)) -> dict:
    """A connected random router graph: a random recursive tree (router i > 0 joined to a
    uniformly drawn router < i), then uniformly drawn extra router pairs (no loops, no parallel
    links) until there are round(routers * degree / 2) router links (mean degree `degree`);
    each host joined to a uniformly drawn router. Flows (default 10) as fat_tree."""
    _integer("--routers", routers, 2)
    _integer("--hosts", hosts, 2)
    _number("--degree", degree, positive=True)
    possible = routers * (routers - 1) // 2
    wanted = routers * degree / 2                # (1e308 x routers is infinite: no round())
    if not math.isfinite(wanted) or round(wanted) > possible:
        raise GenerateError(f"--degree: at most {routers - 1} with {routers} routers, got {degree:g}")
    edges = max(routers - 1, round(wanted))
    _check_links(edges + hosts)
    _number("--rate-mbps", rate_mbps, positive=True)
    _number("--delay-ms", delay_ms)
    _number("--buffer-kb", buffer_kb)
    _check_common(common)
    rng = random.Random(common.seed)
    names = [f"r{i}" for i in range(routers)]
    pairs = [(rng.randrange(i), i) for i in range(1, routers)]
    seen = set(pairs)
    while len(pairs) < edges:
        a, b = rng.randrange(routers), rng.randrange(routers)
        pair = (min(a, b), max(a, b))
        if a != b and pair not in seen:
            seen.add(pair)
            pairs.append(pair)
    links = [_link(names[a], names[b], rate_mbps, delay_ms, buffer_kb) for a, b in pairs]
    host_ids = [f"h{i}" for i in range(hosts)]
    links += [_link(h, names[rng.randrange(routers)], rate_mbps, delay_ms, buffer_kb)
              for h in host_ids]
    count = 10 if common.flows is None else common.flows
    flows = _flows(_random_pairs(host_ids, common.pattern)(rng, count), common, rng)
    description = (f"Random router graph: {routers} routers joined by {edges} links (a random "
                   f"recursive tree plus random extra links: connected, mean degree "
                   f"{2 * edges / routers:.3g}), {hosts} hosts each on a random router; every "
                   f"link {rate_mbps:g} Mb/s, {delay_ms:g} ms, {buffer_kb:g} kB; "
                   f"{_flow_text(flows, common)} ({common.pattern} hosts, seed {common.seed}).")
    return _assemble(f"random_{routers}", description, host_ids, names, links, flows, common,
                     WAN_MIN_RTO_MS)


# -- writing ------------------------------------------------------------------------------------

def _wrapped(values: list, indent: str, width: int = 100) -> str:
    """A JSON list of strings over as many lines as needed, `width` characters at most each."""
    if not values:
        return "[]"
    lines: list = []
    line: list = []
    length = len(indent) + 2
    for value in values:
        text = json.dumps(value)
        if line and length + len(text) + 2 > width:
            lines.append(", ".join(line))
            line, length = [], len(indent) + 2
        line.append(text)
        length += len(text) + 2
    lines.append(", ".join(line))
    inner = f",\n{indent}  ".join(lines)
    return f"[\n{indent}  {inner}\n{indent}]" if len(lines) > 1 else f"[{inner}]"


def dumps(topology: dict) -> str:
    """The topology as a person reads it: one field per line, host and router lists wrapped,
    one link, flow or event per line. Raises GenerateError beyond the loader's size limit."""
    lines = ["{"]
    items = list(topology.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        if key in ("links", "flows", "events", "workloads") and value:
            inner = ",\n".join(f"    {json.dumps(v)}" for v in value)
            lines.append(f'  "{key}": [\n{inner}\n  ]{comma}')
        elif key in ("hosts", "routers") and isinstance(value, list):
            lines.append(f'  "{key}": {_wrapped(value, "  ")}{comma}')
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    text = "\n".join(lines) + "\n}\n"
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise GenerateError(f"the topology would be {size} bytes; the loader reads at most "
                            f"{MAX_FILE_BYTES} bytes ({MAX_FILE_BYTES // 2**20} MiB)")
    return text
