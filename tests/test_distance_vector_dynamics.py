"""Bellman-Ford dynamics (routing/distance_vector.py): the incremental tables always equal a
recomputation from scratch, convergence to the static shortest paths, poison reverse, the
count-to-infinity bound, link failure and repair, damping of cost-only updates, coalescing of
simultaneous vectors, and recovery from a lost routing packet."""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim.run import Run
from routing.distance_vector import COST_UPDATES_PER_ROUND, UNREACHABLE, DistanceVectorAgent
from routing.static import network_paths
from topologies import load_topology


def link(lid, a, b, delay_ms=5, rate_mbps=10, **extra):
    return {"id": lid, "ends": [a, b], "rate_mbps": rate_mbps, "delay_ms": delay_ms,
            "buffer_kb": 64, **extra}


def topology(routers, hosts, links, flows=(), events=(), name="dv", **routing):
    return {"name": name, "routing": {"protocol": "bellman-ford", **routing}, "hosts": hosts,
            "routers": routers, "links": links, "flows": list(flows), "events": list(events)}


def chain(k, flows=(), delay_ms=1, rate_mbps=10):
    """R0 - R1 - ... - R(k-1), host Hi on Ri."""
    routers = [f"R{i}" for i in range(k)]
    links = [link(f"L{i}", routers[i], routers[i + 1], delay_ms, rate_mbps) for i in range(k - 1)]
    links += [link(f"A{i}", f"H{i}", routers[i], delay_ms, rate_mbps) for i in range(k)]
    return topology(routers, [f"H{i}" for i in range(k)], links, flows, name=f"chain_{k}")


def run(data, duration_s, **kwargs):
    r = Run(load_topology(data), duration_s=duration_s, **kwargs)
    return r, r.execute()


def assert_consistent(agent):
    """The incremental table is what a recomputation from scratch would give."""
    for i, entry in enumerate(agent.best):
        fresh = agent._choose(i)
        assert (entry is None and fresh is None) or entry[:3] == fresh, (agent.router.id, i)


def random_topology(seed, n_routers):
    rng = random.Random(seed)
    routers = [f"R{i}" for i in range(n_routers)]
    links, pairs = [], set()
    for i in range(1, n_routers):
        pair = (routers[i], routers[rng.randrange(i)])
        links.append(link(f"L{len(links)}", *pair, rng.randint(1, 4)))
        pairs.add(frozenset(pair))
    for _ in range(rng.randint(0, n_routers)):
        a, b = rng.sample(routers, 2)
        if frozenset((a, b)) not in pairs:
            pairs.add(frozenset((a, b)))
            links.append(link(f"L{len(links)}", a, b, rng.randint(1, 4)))
    hosts = [f"H{i}" for i in range(rng.randint(1, n_routers))]
    links += [link(f"A{h}", h, rng.choice(routers), rng.randint(1, 4)) for h in hosts]
    rng.shuffle(links)
    return topology(routers, hosts, links, name=f"random_{seed}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_routers=st.integers(2, 25))
def test_converges_to_the_static_routes_and_costs_with_consistent_incremental_state(seed, n_routers):
    _, results = run(random_topology(seed, n_routers), 3.0)
    net = results.network
    routers, hosts = list(net.routers.values()), list(net.hosts.values())
    static = network_paths(routers, hosts, list(net.links.values()))
    for agent in net.agents:
        assert_consistent(agent)
        for host in hosts:
            entry = agent.table.get(host)
            want = static.entry(agent.router, host)
            assert (entry is None) == (want is None)
            if entry is not None:
                assert entry[2] is want[1]
                assert entry[0] == pytest.approx(want[0], rel=1e-12)
                assert agent.router.routes[host] is want[1]


def test_poison_reverse_advertises_a_route_as_unreachable_to_its_next_hop():
    _, results = run(chain(3), 1.0)
    agents = {a.router.id: a for a in results.network.agents}
    r1 = agents["R1"]
    h2 = r1.index[results.network.hosts["H2"]]
    towards = {r1.ports[p].dst.id: p for p in r1.router_ports}
    assert r1.table[results.network.hosts["H2"]][2].dst.id == "R2"
    assert r1.sent[towards["R2"]][h2] is UNREACHABLE          # poisoned back to its next hop
    cost, hops, seq = r1.sent[towards["R0"]][h2]               # advertised to the other side
    assert hops == 2 and math.isfinite(cost) and seq == 0      # (no request: H2's first number)
    # and what R0 heard from R1 is exactly that
    r0 = agents["R0"]
    assert r0.heard[0 if r0.ports[0].dst.id == "R1" else 1][h2] == (cost, hops, seq)


def test_count_to_infinity_is_bounded_by_the_hop_limit():
    # a ring R0-R1-R2-R3 (poison reverse alone cannot stop counting around a loop); H on R4 behind
    # L4 from R0: when L4 fails, every router must withdraw H within the hop limit
    routers = ["R0", "R1", "R2", "R3", "R4"]
    links = [link("L0", "R0", "R1"), link("L1", "R1", "R2"), link("L2", "R2", "R3"),
             link("L3", "R3", "R0"), link("L4", "R0", "R4"), link("A", "H", "R4"),
             link("B", "G", "R2")]
    data = topology(routers, ["H", "G"], links, events=[{"at_s": 1.0, "link": "L4", "action": "down"}])
    _, results = run(data, 4.0)
    net = results.network
    h = net.hosts["H"]
    for agent in net.agents:
        if agent.router.id != "R4":
            assert h not in agent.table, agent.router.id
            assert h not in agent.router.routes
        assert_consistent(agent)
    routes = results.routes
    withdrawn = [(t, router) for t, router, dest, hop in zip(routes["time_s"], routes["router"],
                                                            routes["destination"], routes["next_hop"])
                 if dest == "H" and hop == ""]
    assert {router for _, router in withdrawn} == {"R0", "R1", "R2", "R3"}
    assert max(t for t, _ in withdrawn) < 1.0 + 0.5               # long before the next round
    # and no route ever counted beyond the limit: hop counts stay <= max_hops
    assert all(e is None or e[1] <= a.max_hops for a in net.agents for e in a.best)


def failing_branches(expensive_link: str) -> dict:
    """Two branches R1-R2-R4 (cheap) and R1-R3-R4, whose `expensive_link` (L2 or L4) costs 1000;
    L1 (R1-R2) fails at 1 s and returns at 2 s; 5 ms links of 10 Mb/s."""
    costs = {"L1": 1, "L2": 1, "L3": 1, "L4": 1, expensive_link: 1000}
    links = [link("LA", "H1", "R1"), link("L1", "R1", "R2", cost=costs["L1"]),
             link("L2", "R1", "R3", cost=costs["L2"]), link("L3", "R2", "R4", cost=costs["L3"]),
             link("L4", "R3", "R4", cost=costs["L4"]), link("LB", "R4", "H2")]
    events = [{"at_s": 1.0, "link": "L1", "action": "down"}, {"at_s": 2.0, "link": "L1", "action": "up"}]
    flows = [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.1, "start_s": 2.5}]
    return topology(["R1", "R2", "R3", "R4"], ["H1", "H2"], links, flows, events)


def r1_routes_to_h2(results) -> list:
    routes = results.routes
    return [(t, hop) for t, router, dest, hop in zip(routes["time_s"], routes["router"],
                                                     routes["destination"], routes["next_hop"])
            if router == "R1" and dest == "H2"]


def test_a_failed_link_with_a_feasible_alternative_is_routed_around_at_once():
    # R3's route to H2 (1 + LB) is cheaper than R1's was (1 + 1 + LB): feasible, taken at once
    data = failing_branches("L2")
    settle = 0.15
    r = Run(load_topology(data), duration_s=1.0 + settle / 2)
    results = r.execute()
    r1 = next(a for a in results.network.agents if a.router.id == "R1")
    h2 = results.network.hosts["H2"]
    assert r1.table[h2][2].dst.id == "R3"          # recomputed at once
    assert r1.router.routes[h2].dst.id == "R2"     # but installed only after the hold-down
    assert r1.requests_sent == 0
    _, results = run(data, 3.0)
    rows = r1_routes_to_h2(results)
    assert rows[0] == (0.0, "R2")
    assert rows[1][1] == "R3" and rows[1][0] == pytest.approx(1.0 + settle)
    assert rows[2][1] == "R2" and 2.0 + settle <= rows[2][0] < 2.0 + settle + 0.05
    for agent in results.network.agents:
        assert_consistent(agent)


def test_a_failed_link_without_a_feasible_alternative_asks_for_a_new_sequence_number():
    # R3 routed to H2 through R1 (1 + 1 + 1 + LB); when L1 fails R1 has no route and says so,
    # and R3 falls back to its own route through R4 (1000 + LB) and advertises it (two hops).
    # That costs more than R1's feasibility distance (1 + 1 + LB): R1 may not take it (R3 could
    # still be routing through R1), so it asks R4, which originates H2, for a newer sequence
    # number; the request goes R1 -> R3 -> R4 and the renumbered route comes back
    # R4 -> R3 -> R1: six hops in all of 5 ms plus 64 B at 10 Mb/s each, then the hold-down
    data = failing_branches("L4")
    settle = 0.15
    _, results = run(data, 3.0)
    agents = {a.router.id: a for a in results.network.agents}
    assert agents["R1"].requests_sent == 1
    h2 = agents["R4"].index[results.network.hosts["H2"]]
    assert agents["R4"].own_seq[h2] == 1 and agents["R1"].best[h2][3][2] == 1
    # R2, cut from H1 the same way, asked R1 (through R4 and R3) for H1 in turn
    h1 = agents["R1"].index[results.network.hosts["H1"]]
    assert agents["R1"].own_seq[h1] == 1 and agents["R2"].best[h1][3][2] == 1
    hops = 6 * (0.005 + 64 * 8 / 10e6)
    rows = r1_routes_to_h2(results)
    assert rows[0] == (0.0, "R2")
    assert rows[1][1] == "R3" and rows[1][0] == pytest.approx(1.0 + hops + settle)
    assert rows[2][1] == "R2" and 2.0 + settle <= rows[2][0] < 2.0 + settle + 0.05
    for agent in results.network.agents:
        assert_consistent(agent)


def routing_packets_per_round(k):
    """Routing packets of rounds 2-4 of a loaded chain of k routers (2 long flows end to end)."""
    flows = [{"id": "F1", "src": "H0", "dst": f"H{k - 1}", "data_mb": 100, "start_s": 0},
             {"id": "F2", "src": f"H{k - 1}", "dst": "H0", "data_mb": 100, "start_s": 0}]
    data = chain(k, flows, rate_mbps=1)
    counts = []
    for duration in (5.0 - 1e-6, 20.0 - 1e-6):
        _, results = run(data, duration)
        counts.append(results.summary["routing"]["routing_packets"])
    return (counts[1] - counts[0]) / 3


def test_cost_only_updates_are_damped_so_a_loaded_chain_does_not_cascade():
    small, large = routing_packets_per_round(6), routing_packets_per_round(12)
    neighbours = lambda k: 2 * (k - 1)                      # noqa: E731
    # per round and neighbour: the periodic vector and at most the budget of cost-only updates
    assert small <= neighbours(6) * (1 + COST_UPDATES_PER_ROUND)
    assert large <= neighbours(12) * (1 + COST_UPDATES_PER_ROUND)
    # linear in K (ratio 11/5 = 2.2 in neighbours), far from quadratic ((11/5)^2 = 4.8)
    assert large / small < (11 / 5) ** 1.5


def test_vectors_arriving_at_the_same_instant_make_one_triggered_update():
    # R0 hears R1 and R2 at the same instant (equal delays), each bringing new destinations:
    # one triggered update per neighbour carries both
    links = [link("L1", "R0", "R1"), link("L2", "R0", "R2"), link("L3", "R0", "R3"),
             link("A1", "H1", "R1"), link("A2", "H2", "R2"), link("A3", "H3", "R3")]
    data = topology(["R0", "R1", "R2", "R3"], ["H1", "H2", "H3"], links)
    _, results = run(data, 1.0)
    r0 = next(a for a in results.network.agents if a.router.id == "R0")
    # round 1: one periodic packet per neighbour; then one triggered packet per neighbour carrying
    # the two destinations learned from the other two neighbours
    assert r0.packets_sent == 3 + 3
    for agent in results.network.agents:
        assert_consistent(agent)


def test_a_lost_routing_packet_is_recovered_by_comparing_whole_vectors(monkeypatch):
    from components.link import LinkDirection
    original = LinkDirection.send_routing
    lost = []

    def send_routing(self, packet):
        # lose the second packet R1 sends to R0 (a triggered update carrying H2)
        if packet.src.id == "R1" and packet.dst.id == "R0" and packet.payload[1] == 2 and not lost:
            lost.append(packet)
            self.routing_pkts += 1
            self.routing_dropped += 1
            return False
        return original(self, packet)

    monkeypatch.setattr(LinkDirection, "send_routing", send_routing)
    _, results = run(chain(4), 12.0)                 # rounds at 0, 5 and 10 s
    assert lost
    net = results.network
    static = network_paths(list(net.routers.values()), list(net.hosts.values()),
                           list(net.links.values()))
    for agent in net.agents:
        assert_consistent(agent)
        for host in net.hosts.values():
            assert agent.table[host][2] is static.entry(agent.router, host)[1]


def loaded_topology_with_failures(seed, n_routers):
    """A random topology with equal link costs (ties), flows between random hosts that load its
    queues (so that measured costs change) and links that fail and return."""
    rng = random.Random(seed)
    data = random_topology(seed, n_routers)
    hosts = data["hosts"]
    if len(hosts) >= 2:
        data["flows"] = [{"id": f"F{k}", "src": src, "dst": dst, "data_mb": 0.3,
                          "start_s": rng.uniform(0.0, 1.0)}
                         for k, (src, dst) in enumerate(rng.sample(
                             [(a, b) for a in hosts for b in hosts if a != b],
                             min(3, len(hosts) * (len(hosts) - 1))))]
    router_links = [ls["id"] for ls in data["links"] if not ls["id"].startswith("A")]
    events = []
    for lid in rng.sample(router_links, min(2, len(router_links))):
        down = rng.uniform(0.5, 2.0)
        events += [{"at_s": down, "link": lid, "action": "down"},
                   {"at_s": down + rng.uniform(0.2, 1.0), "link": lid, "action": "up"}]
    data["events"] = events
    data["routing"]["update_interval_s"] = 0.5
    return data


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_routers=st.integers(2, 12))
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_skipping_destinations_a_vector_cannot_change_changes_nothing(seed, n_routers):
    # DistanceVectorAgent._affected leaves out the destinations a received vector cannot move;
    # with it and with every changed destination recomputed, the same routes at the same times
    data = loaded_topology_with_failures(seed, n_routers)
    _, skipping = run(data, 4.0)
    for agent in skipping.network.agents:
        assert_consistent(agent)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DistanceVectorAgent, "_affected",
                      lambda self, p, old, vector, changed: list(changed))
        _, everything = run(data, 4.0)
    assert route_rows(skipping) == route_rows(everything)
    assert skipping.summary["events"] == everything.summary["events"]
    assert skipping.summary["flows"] == everything.summary["flows"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_routers=st.integers(2, 12))
def test_a_periodic_vector_is_the_whole_vector_rebuilt(seed, n_routers):
    """A round sends each neighbour the vector it last sent with only the destinations marked
    since then looked at again (`_advertise`); after the round every neighbour's vector is the
    one made from the table from scratch, under load, link failures and 0.5 s rounds."""
    checked = []
    original = DistanceVectorAgent._advertise

    def advertise(self, periodic):
        original(self, periodic)
        if not periodic:
            return
        for p in self.router_ports:
            d = self.ports[p]
            if not d.link.up or d.dst.agent is None:
                continue
            whole = [UNREACHABLE if e is None or self.port_dst[e[2]] is d.dst else e[3]
                     for e in self.best]
            assert self.sent[p] == whole and not self.dirty[p], (self.router.id, p)
            checked.append(p)

    data = loaded_topology_with_failures(seed, n_routers)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DistanceVectorAgent, "_advertise", advertise)
        run(data, 3.0)
    assert checked or n_routers == 1


def route_rows(results):
    table = results.routes
    return list(zip(*(table[column].tolist() for column in table)))


def test_a_worse_vector_from_a_port_that_set_the_tie_limit_can_move_the_route_to_another():
    # R0 reaches H through A, B or C (ports in that order), C the cheapest, B within the tie
    # tolerance of C (so B is chosen: the first port within it), A just outside. When C's route
    # goes away (its link to R9 fails), the lowest cost is B's, whose tie limit now takes in A:
    # the first port within it is A. Nothing changed for A or B, but their choice did.
    base_ms = 1.0
    links = [link("LA", "R0", "A", cost=base_ms + 3.6e-9), link("LB", "R0", "B", cost=base_ms + 1.5e-9),
             link("LC", "R0", "C", cost=base_ms),
             link("A9", "A", "R9", cost=1.0), link("B9", "B", "R9", cost=1.0),
             link("C9", "C", "R9", cost=1.0), link("H9", "H", "R9", cost=1.0)]
    data = topology(["R0", "A", "B", "C", "R9"], ["H"], links,
                    events=[{"at_s": 1.0, "link": "C9", "action": "down"}])
    for duration, next_hop in ((0.9, "B"), (2.0, "A")):
        _, results = run(data, duration)
        r0 = next(a for a in results.network.agents if a.router.id == "R0")
        assert r0.table[results.network.hosts["H"]][2].dst.id == next_hop, duration
        assert_consistent(r0)
