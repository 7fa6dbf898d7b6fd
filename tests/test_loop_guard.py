"""The routers' loop guard (docs/model.md, "Loop guard"): a packet forwarded as many times as the
network has routers is dropped and counted in `loop_drops`; no loop-free path is cut, however
long; and the count reaches summary.json."""
from __future__ import annotations

from components.packet import DATA, Packet
from netsim import load_topology
from netsim.run import Run
from topologies.build import build_network


def chain(routers: int, data_mb: float = 0.05) -> dict:
    """H1 - R1 - ... - R<routers> - H2, 100 Mb/s and 0.1 ms per link, one Reno flow, routed by
    Bellman-Ford (whose routers have the guard)."""
    names = ["H1", *(f"R{i}" for i in range(1, routers + 1)), "H2"]
    links = [{"id": f"L{i}", "ends": [a, b], "rate_mbps": 100, "delay_ms": 0.1,
              "buffer_kb": 200} for i, (a, b) in enumerate(zip(names, names[1:]), 1)]
    return {"name": f"chain_{routers}", "hosts": ["H1", "H2"], "routers": names[1:-1],
            "links": links, "routing": {"protocol": "bellman-ford"},
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": data_mb}]}


def test_a_packet_in_a_loop_is_dropped_after_as_many_forwards_as_routers():
    topology = chain(3, data_mb=0.001)
    topology["flows"][0]["start_s"] = 10.0              # only the packet below moves
    net = build_network(load_topology(topology))
    r1, r2, r3 = (net.routers[r] for r in ("R1", "R2", "R3"))
    h1, h2 = net.hosts["H1"], net.hosts["H2"]
    assert {r.max_forwards for r in (r1, r2, r3)} == {3}
    towards = {d.dst: d for r in (r1, r2) for d in r.out}
    r1.routes = {h2: towards[r2]}                       # R1 -> R2 -> R1 -> ...
    r2.routes = {h2: towards[r1]}
    delivered = []
    packet = Packet(DATA, h1, h2, 1000, delivered.append, seq=0)
    h1.send(packet)
    net.sim.run(until=1.0)
    assert delivered == [] and packet.hops == 3
    assert r1.loop_drops + r2.loop_drops == 1 and r3.loop_drops == 0
    # forwarded by R1, R2, R1: the fourth router visit is the drop
    assert sum(d.tx_pkts - d.routing_pkts for d in net.links["L2"].directions) == 3


def test_a_long_chain_is_not_cut_and_counts_no_loop_drops():
    results = Run(load_topology(chain(80))).execute()     # longer than IP's default TTL of 64
    summary = results.summary
    assert summary["stop_reason"] == "completed"
    assert summary["flows"]["F1"]["delivered_bytes"] == 50_000
    assert {r["loop_drops"] for r in summary["routers"].values()} == {0}
    assert set(summary["routers"]["R1"]) == {"no_route_drops", "loop_drops"}


def test_a_duplicate_is_a_packet_of_its_own_and_is_not_taken_for_a_loop():
    """A link that duplicates delivers the same packet twice: as one object, the second copy
    arrived at the next router already counted as forwarded there and was dropped as looping."""
    topology = chain(2, data_mb=0.2)
    topology["links"][0]["impairments"] = {"H1->R1": {"duplicate_rate": 0.2}}
    summary = Run(load_topology(topology), seed=3).execute().summary
    duplicated = summary["links"]["L1"]["directions"]["H1->R1"]["duplicated"]
    assert duplicated > 10
    assert {r["loop_drops"] for r in summary["routers"].values()} == {0}
    assert summary["flows"]["F1"]["delivered_bytes"] == 200_000


def test_static_routers_have_no_guard():
    net = build_network(load_topology(dict(chain(3), routing={"protocol": "static"})))
    assert {type(r).__name__ for r in net.routers.values()} == {"Router"}
    guarded = build_network(load_topology(chain(3)))
    assert {type(r).__name__ for r in guarded.routers.values()} == {"GuardedRouter"}
