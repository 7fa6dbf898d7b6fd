"""Bellman-Ford's loop freedom (routing/distance_vector.py, Babel's feasibility condition): the
next hops of the routers' current tables never form a loop, at any instant of a loaded run whose
link costs jump at every round, and a congested fabric no longer counts up around loops."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import routing.distance_vector as dv
from netsim.run import Run
from routing.ecmp import members
from topologies import load_topology
from topologies.generate import Common, fat_tree, random_graph


def successor_loops(agents: list, destination: int, members: bool = False) -> list:
    """The routers on a loop of next hops towards `destination` (an index), if any; with
    `members`, a next hop is any member of the router's equal-cost set (ECMP)."""
    by_router = {a.router: a for a in agents}

    def next_hops(agent):
        entry = agent.best[destination]
        if entry is None:
            return []
        ports = agent._equal_cost_ports(destination, entry) if members else (entry[2],)
        return [by_router[agent.ports[p].dst] for p in ports if agent.ports[p].dst in by_router]

    loops, state = [], {}                  # depth-first search: 1 on the stack, 2 done
    for start in agents:
        stack = [(start, iter(next_hops(start)))]
        if state.get(start):
            continue
        state[start] = 1
        while stack:
            agent, rest = stack[-1]
            nxt = next(rest, None)
            if nxt is None:
                state[agent] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                loops.append([a.router.id for a, _ in stack])
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(next_hops(nxt))))
    return loops


@pytest.fixture
def watched(monkeypatch):
    """Check, after every recomputation of any router, that no destination it changed has a loop
    of next hops; returns the list of loops found (empty if the property holds)."""
    found: list = []
    agents: list = []
    recompute = dv.DistanceVectorAgent._recompute

    def checked(self, destinations, **options):
        changed = recompute(self, destinations, **options)
        if changed and agents:
            members = self._groups is not None
            for i in set(destinations):
                loops = successor_loops(agents, i, members)
                if loops:
                    found.append((self.sim.now, i, loops))
        return changed

    start = dv.start_distance_vector

    def started(*args, **kwargs):
        agents.extend(start(*args, **kwargs))
        return agents

    monkeypatch.setattr(dv.DistanceVectorAgent, "_recompute", checked)
    monkeypatch.setattr(dv, "start_distance_vector", started)   # (build imports it when it runs)
    return found


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), routers=st.integers(6, 14),
       ecmp=st.sampled_from([None, "packet"]))
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_next_hops_never_loop_while_a_loaded_network_changes_its_costs(watched, seed, routers,
                                                                       ecmp):
    # slow links and long-lived flows: queueing delays, hence costs, jump at every round
    # (every 0.2 s), the situation that made routers count up around loops before; with ECMP,
    # no loop through the members of the equal-cost sets either
    data = random_graph(routers, degree=3.0, hosts=6, rate_mbps=2.0, delay_ms=1.0, buffer_kb=30.0,
                        common=Common(flows=6, data_mb=None, duration_s=2.0, seed=seed,
                                      routing="bellman-ford", ecmp=ecmp))
    data["routing"]["update_interval_s"] = 0.2
    results = Run(load_topology(data)).execute()
    assert results.summary["routing"]["rounds"] >= 10
    assert watched == []


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_congested_fat_tree_sends_few_routing_packets(quoted):
    # k = 4 at 20 Mb/s, 16 long-lived flows: the first round under load (5 s) made routers count
    # up around loops of three, 94 480 routing packets in 5.5 s; now its two rounds and the
    # start-up take under a thousand, none dropped
    data = fat_tree(4, host_rate_mbps=20.0, fabric_rate_mbps=20.0,
                    common=Common(flows=16, data_mb=None, duration_s=5.5,
                                  routing="bellman-ford", ecmp="flow"))
    results = Run(load_topology(data)).execute()
    routing = results.summary["routing"]
    assert routing["rounds"] == 2
    assert routing["routing_packets"] < 1500
    drops = sum(d["routing_drops"] for link in results.summary["links"].values()
                for d in link["directions"].values())
    assert drops == 0
    assert quoted(r"16 long-lived flows \(ECMP flow hashing\) sends (\d+) routing packets",
                  "README.md") == [(routing["routing_packets"],)]
    assert quoted(r"the fat tree above sends (\d+) routing packets with ECMP flow hashing",
                  "docs/model.md") == [(routing["routing_packets"],)]


@pytest.mark.slow   # two end-to-end runs, 11 simulated seconds each: CI runs them with -m slow
def test_a_loaded_random_graph_sends_the_routing_packets_the_docs_quote(tmp_path, quoted):
    """`generate random --routers 200 --rate-mbps 2 --long-lived --duration 11 --routing
    bellman-ford`, loaded and idle (--flows 0): as README.md and docs/model.md say."""
    import json

    from netsim.cli import main

    sent = []
    for flows in ("10", "0"):
        topology, out = tmp_path / f"g{flows}.json", tmp_path / f"out{flows}"
        assert main(["generate", "random", "--routers", "200", "--rate-mbps", "2", "--long-lived",
                     "--duration", "11", "--routing", "bellman-ford", "--flows", flows,
                     "-o", str(topology)]) == 0
        assert main([str(topology), "--no-plots", "--quiet", "--out", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        sent.append(summary["routing"]["routing_packets"])
        assert sum(d["routing_drops"] for link in summary["links"].values()
                   for d in link["directions"].values()) == 0
    assert quoted(r"a 200-router graph at 2 Mb/s (\d[\d ]*) in 11 s", "README.md") == [(sent[0],)]
    assert quoted(r"the 200-router graph (\d[\d ]*) in 11 s \((\d[\d ]*) of them its start-up",
                  "docs/model.md") == [tuple(sent)]


def ring(events: list, flows: tuple = (), duration_s: float = 2.0) -> dict:
    """A ring R0-R1-R2-R3 (links L0..L3, 10 Mb/s, 5 ms) with host H on R0 and G on R1."""
    links = [{"id": f"L{i}", "ends": [f"R{i}", f"R{(i + 1) % 4}"], "rate_mbps": 10,
              "delay_ms": 5, "buffer_kb": 64} for i in range(4)]
    links += [{"id": "A", "ends": ["H", "R0"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 64},
              {"id": "B", "ends": ["G", "R1"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 64}]
    return {"name": "ring", "routing": {"protocol": "bellman-ford"}, "hosts": ["H", "G"],
            "routers": ["R0", "R1", "R2", "R3"], "links": links, "flows": list(flows),
            "events": events, "duration_s": duration_s}


def routes_of(results, router: str, destination: str) -> list:
    """(time, next hop) rows of routes.csv for one router and destination."""
    return [(t, hop) for t, r, dest, hop in zip(*(results.routes[k] for k in (
        "time_s", "router", "destination", "next_hop"))) if r == router and dest == destination]


def test_a_router_with_only_unfeasible_routes_has_none_until_the_new_number_arrives(watched):
    # a ring R0-R1-R2-R3 with H behind R0: when R0-R1 fails, R1's only other route goes the long
    # way round (R2, R3, R0), costlier than R1 ever was: unfeasible until R0 renumbers H's routes
    data = ring([{"at_s": 1.0, "link": "L0", "action": "down"}])
    results = Run(load_topology(data)).execute()
    agents = {a.router.id: a for a in results.network.agents}
    h = agents["R0"].index[results.network.hosts["H"]]
    assert agents["R0"].own_seq[h] == 1                 # renumbered once, on request
    requests = results.summary["routing"]["seqno_requests"]
    assert requests == sum(a.requests_sent for a in agents.values()) >= 1
    assert agents["R1"].best[h][3] == (0.02, 4, 1)      # R1 -> R2 -> R3 -> R0 -> H, 5 ms each
    assert agents["R1"].ports[agents["R1"].best[h][2]].dst.id == "R2"
    rows = routes_of(results, "R1", "H")
    assert rows[-1][1] == "R2" and 1.0 < rows[-1][0] < 1.3
    assert watched == []


def test_the_feasibility_condition_orders_numbers_then_metrics():
    fd = (0.010, 2, 3)                                   # (cost, hops, seq), as an entry
    assert dv.feasible((0.5, 9, 4), fd)                  # newer number: whatever the metric
    assert not dv.feasible((0.001, 1, 2), fd)            # older number: never
    assert dv.feasible((0.009, 5, 3), fd)                # same number, strictly cheaper
    assert dv.feasible((0.010, 1, 3), fd)                # same cost, fewer hops
    assert not dv.feasible((0.010, 2, 3), fd)            # the same metric is not enough
    assert not dv.feasible((0.011, 1, 3), fd)
    assert dv.feasible((0.011, 1, 0), None)              # no route ever chosen: anything


def test_the_feasibility_distance_is_an_entry_the_router_chose(watched):
    # no tuple of its own per router and destination: the advertised entry of the smallest
    # route chosen, the current one on an idle ring (where nothing got worse), shared with the
    # table unless the route later moved to an equal one through another port
    results = Run(load_topology(ring([]))).execute()
    shared = 0
    for agent in results.network.agents:
        for i, entry in enumerate(agent.best):
            assert entry is not None and agent.fd[i] == entry[3]
            shared += agent.fd[i] is entry[3]
    assert shared >= 6                       # of 8 (two routers have two equal ways round)


def test_a_lost_request_is_sent_again_when_the_table_is_installed(monkeypatch):
    # the ring above, with R1's first request lost: R1 asks again a hold-down (0.15 s) later,
    # when it installs its table without H, instead of waiting for the next round (5 s)
    data = ring([{"at_s": 1.0, "link": "L0", "action": "down"}])
    lost = []
    send = dv.DistanceVectorAgent._send_request

    def lossy(self, p, i, wanted, ttl):
        if self.router.id == "R1" and not lost:
            lost.append(self.sim.now)
            return
        send(self, p, i, wanted, ttl)

    monkeypatch.setattr(dv.DistanceVectorAgent, "_send_request", lossy)
    results = Run(load_topology(data)).execute()
    agents = {a.router.id: a for a in results.network.agents}
    h = agents["R0"].index[results.network.hosts["H"]]
    assert len(lost) == 1 and 1.0 <= lost[0] < 1.1
    assert agents["R0"].own_seq[h] == 1 and agents["R1"].best[h][3] == (0.02, 4, 1)
    rows = routes_of(results, "R1", "H")
    assert [hop for _, hop in rows[-2:]] == ["", "R2"]          # withdrawn, then back
    assert lost[0] + 0.15 < rows[-1][0] < lost[0] + 0.15 + 0.3


def test_a_second_failure_in_one_round_is_routed_around_as_fast_as_the_first():
    # L0 fails, returns and fails again within one round: the second time R1 asks for a newer
    # number than the first, and R2, which forwarded the first request, forwards this one too
    # (it used to refuse any second request of the round: no route to H from 2.0 to 5.03 s)
    data = ring([{"at_s": 1.0, "link": "L0", "action": "down"},
                 {"at_s": 1.5, "link": "L0", "action": "up"},
                 {"at_s": 2.0, "link": "L0", "action": "down"}],
                flows=[{"id": "F1", "src": "G", "dst": "H", "data_mb": 4, "start_s": 0.0}],
                duration_s=40.0)
    results = Run(load_topology(data)).execute()
    hops = [hop for t, hop in routes_of(results, "R1", "H") if t > 0]
    times = [t for t, hop in routes_of(results, "R1", "H") if t > 0]
    assert hops[:3] == ["R2", "R0", "R2"]
    assert 1.0 < times[0] < 1.3 and 2.0 < times[2] < 2.3        # one request's round trip each
    assert all(r["no_route_drops"] == 0 for r in results.summary["routers"].values())
    assert results.summary["flows"]["F1"]["finish_s"] < 7.0


def test_an_idle_network_still_asks_for_a_better_unfeasible_route_after_a_failure():
    """R1 reaches H2 (on R4) over L1 (2 ms). When L1 fails, R2's route (0.1 + 3.5 ms) is the
    shortest, but R2 had routed through R1, so its entry is unfeasible at R1, which takes R3's
    (3 + 1 ms) instead. No cost moves on an idle network, so no recomputation at a round would
    notice; the router keeps asking at each round while an unfeasible route beats its choice,
    and has the shortest route after the first round (it kept R3's for good before)."""
    link = {"rate_mbps": 10, "buffer_kb": 64}
    data = {"name": "outdone", "units": "binary", "routing": {"protocol": "bellman-ford"},
            "seed": 1, "duration_s": 12, "hosts": ["H1", "H2"],
            "routers": ["R1", "R2", "R3", "R4"],
            "links": [{"id": lid, "ends": ends, "delay_ms": ms, **link} for lid, ends, ms in (
                ("L0", ["H1", "R1"], 1), ("L1", ["R1", "R4"], 2), ("L2", ["R1", "R3"], 3),
                ("L3", ["R3", "R4"], 1), ("L4", ["R1", "R2"], 0.1), ("L5", ["R2", "R4"], 3.5),
                ("L6", ["R4", "H2"], 1))],
            "flows": [], "events": [{"at_s": 1.0, "link": "L1", "action": "down"}]}
    run = Run(load_topology(data))
    net = run.network
    r1, h2 = net.routers["R1"], net.hosts["H2"]
    seen = []
    for t in (1.5, 5.5, 11.5):
        run.sim.schedule_at(t, lambda t: seen.append((t, r1.routes[h2].link.id)), t)
    run.execute()
    assert seen == [(1.5, "L2"), (5.5, "L4"), (11.5, "L4")]
    assert r1.agent.outdone == set()


def test_triggered_updates_list_their_destinations_in_one_order_on_every_interpreter():
    """A triggered update lists the destinations it carries in increasing order, not in the
    order of the set that collected them (CPython and PyPy order sets differently, and the
    receiver's recomputations, requests and so the routing packets follow this order)."""
    data = random_graph(30, degree=3.0, hosts=10,
                        common=Common(flows=8, routing="bellman-ford", ecmp="packet", seed=4))
    data["events"] = [{"at_s": 0.2, "link": data["links"][-1]["id"], "action": "down"},
                      {"at_s": 0.7, "link": data["links"][-1]["id"], "action": "up"}]
    data["duration_s"] = 2.0
    run = Run(load_topology(data))
    lists = []
    for agent in run.network.agents:
        def receive(packet, _receive=agent.receive):
            lists.append(packet.payload[3])
            _receive(packet)
        agent.receive = receive
    run.execute()
    triggered = [changed for changed in lists if 1 < len(changed) < 40]
    assert triggered and all(changed == sorted(changed) for changed in triggered)


def test_an_idle_network_asks_for_an_unfeasible_route_that_would_join_an_equal_cost_set():
    """R reaches H2 over S (1 + 2 ms). When L3 (S-O) fails, S re-routes over X and advertises
    3 ms: R's route through S rises to 4 ms and ties N's (1 + 3 ms), which the tie rule takes
    (L1 first). S's 3 ms is not below R's feasibility distance (3 ms), so with ECMP S could not
    join R's set, and no cost moves on an idle network to make a round ask for it: R kept the
    set {N} for good (and O, symmetrically, {N} towards H1) where static routing has {N, S} and
    {N, X}. An unfeasible route that would join the set now keeps the router asking at each
    round, like one that beats the choice; the sets are whole one request after the 5 s round."""
    link = {"rate_mbps": 10, "buffer_kb": 64}
    data = {"name": "tie_joins_set", "units": "binary",
            "routing": {"protocol": "bellman-ford", "ecmp": True},
            "seed": 1, "duration_s": 30, "hosts": ["H1", "H2"],
            "routers": ["R", "N", "S", "O", "X"],
            "links": [{"id": lid, "ends": ends, "delay_ms": ms, **link} for lid, ends, ms in (
                ("L0", ["H1", "R"], 1), ("L1", ["R", "N"], 1), ("L2", ["R", "S"], 1),
                ("L3", ["S", "O"], 1), ("L4", ["N", "O"], 2), ("L5", ["S", "X"], 1.5),
                ("L6", ["X", "O"], 0.5), ("L7", ["O", "H2"], 1))],
            "flows": [], "events": [{"at_s": 1.0, "link": "L3", "action": "down"}]}
    run = Run(load_topology(data))
    net = run.network
    entries = ((net.routers["R"], net.hosts["H2"]), (net.routers["O"], net.hosts["H1"]))
    seen = []

    def sets(t):
        seen.append((t, [[m.link.id for m in members(r.routes[h])] for r, h in entries]))
    for t in (4.5, 5.5, 29.9):
        run.sim.schedule_at(t, sets, t)
    run.execute()
    assert seen == [(4.5, [["L1"], ["L4"]]), (5.5, [["L1", "L2"], ["L4", "L6"]]),
                    (29.9, [["L1", "L2"], ["L4", "L6"]])]
    assert all(not a.outdone and not a.starving for a in net.agents)
