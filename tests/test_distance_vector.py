"""Bellman-Ford distance-vector routing: convergence, path alternation, failures, partitions."""
from __future__ import annotations

from pathlib import Path

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routing.static import next_hops
from netsim import check_conservation, load_topology, simulate
from netsim.run import Run

ROOT = Path(__file__).resolve().parent.parent


def random_topology(seed: int, n_routers: int) -> dict:
    """A connected random graph of routers (a random spanning tree plus extra links), one host
    on about half the routers, small integer delays so that equal-cost paths are common."""
    rng = random.Random(seed)
    routers = [f"R{i}" for i in range(n_routers)]
    links, pairs = [], set()

    def add(a, b):
        links.append({"id": f"L{len(links)}", "ends": [a, b], "rate_mbps": 10,
                      "delay_ms": rng.randint(1, 4), "buffer_kb": 64})
        pairs.add(frozenset((a, b)))

    for i in range(1, n_routers):
        add(routers[i], routers[rng.randrange(i)])
    for _ in range(rng.randint(0, n_routers)):
        a, b = rng.sample(routers, 2) if n_routers > 1 else (None, None)
        if a is not None and frozenset((a, b)) not in pairs:
            add(a, b)
    hosts = []
    for router in routers:
        if rng.random() < 0.5 or not hosts and router == routers[-1]:
            host = f"H{router[1:]}"
            hosts.append(host)
            links.append({"id": f"A{router[1:]}", "ends": [host, router], "rate_mbps": 10,
                          "delay_ms": rng.randint(1, 4), "buffer_kb": 64})
    rng.shuffle(links)      # file order decides ties: make it arbitrary
    return {"name": f"random_{seed}", "routing": {"protocol": "bellman-ford"}, "hosts": hosts,
            "routers": routers, "links": links, "flows": []}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), n_routers=st.integers(2, 30))
def test_converged_tables_equal_static_shortest_paths(seed, n_routers):
    spec = load_topology(random_topology(seed, n_routers))
    run = Run(spec, duration_s=3.0)            # before the second round: no traffic, no queues
    for router in run.network.routers.values():
        router.routes.clear()                   # the tables must come from the protocol
    results = run.execute()
    net = results.network
    routers, hosts, links = (list(net.routers.values()), list(net.hosts.values()),
                             list(net.links.values()))
    for host in hosts:
        expected = next_hops(host, routers, links)
        for router in routers:
            got = router.routes.get(host)
            want = expected.get(router)
            assert got is want, (router.id, host.id, got and got.label, want and want.label)
    assert results.summary["routing"]["rounds"] == 1


def test_tc1_flow_alternates_between_the_two_branches_at_update_rounds():
    spec = load_topology(ROOT / "topologies" / "test_case_1.json")
    assert spec.routing.protocol == "bellman-ford"
    results = simulate(spec)
    assert results.summary["stop_reason"] == "completed"
    assert check_conservation(results.network) == []
    interval = spec.routing.update_interval_s
    t, top = results.trace("links", "L1", "rate_mbps")
    _, bottom = results.trace("links", "L2", "rate_mbps")
    end = results.summary["end_time_s"]
    dominant = []
    for k in range(int(end // interval)):
        period = (t > k * interval) & (t <= (k + 1) * interval)
        top_bytes, bottom_bytes = top[period].sum(), bottom[period].sum()
        share = max(top_bytes, bottom_bytes) / (top_bytes + bottom_bytes)
        assert share > 0.8, (k, share)
        dominant.append("top" if top_bytes > bottom_bytes else "bottom")
    assert len(dominant) >= 3
    assert all(a != b for a, b in zip(dominant, dominant[1:])), dominant
    # the switches follow the round starts by the hold-down plus at most one RTT
    routes = results.routes
    r1_to_h2 = (routes["router"] == "R1") & (routes["destination"] == "H2")
    times, hops = routes["time_s"][r1_to_h2], routes["next_hop"][r1_to_h2]
    switch_times = [time for time, a, b in zip(times[1:], hops, hops[1:]) if a != b]
    rtt_s = results.summary["flows"]["F1"]["avg_rtt_ms"] / 1e3
    assert len(switch_times) >= 2
    for time in switch_times:
        since_round = time - interval * round(time / interval)
        assert spec.routing.settle_s <= since_round <= spec.routing.settle_s + rtt_s, time


def two_path_topology(events, protocol="bellman-ford", data_mb=4):
    """H1 - R1, top branch R1-R2-R4 (preferred by cost), bottom branch R1-R3-R4, R4 - H2."""
    def link(lid, a, b, cost=None):
        item = {"id": lid, "ends": [a, b], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 64}
        if cost is not None:
            item["cost"] = cost
        return item
    return {
        "name": "two_paths", "routing": {"protocol": protocol}, "hosts": ["H1", "H2"],
        "routers": ["R1", "R2", "R3", "R4"],
        "links": [link("LA", "H1", "R1"), link("L1", "R1", "R2", 1), link("L2", "R1", "R3", 1000),
                  link("L3", "R2", "R4", 1), link("L4", "R3", "R4", 1000), link("LB", "R4", "H2")],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": data_mb, "start_s": 0.5}],
        "events": events,
    }


def next_hop_history(results, router, destination):
    routes = results.routes
    rows = (routes["router"] == router) & (routes["destination"] == destination)
    return list(zip(routes["time_s"][rows].tolist(), routes["next_hop"][rows].tolist()))


def test_flow_survives_a_link_failure_and_routes_return_after_repair():
    events = [{"at_s": 3.0, "link": "L1", "action": "down"},    # mid-transfer, link busy
              {"at_s": 6.0, "link": "L1", "action": "up"}]
    results = simulate(load_topology(two_path_topology(events, data_mb=10)))
    summary = results.summary
    flow = summary["flows"]["F1"]
    assert summary["stop_reason"] == "completed"
    assert flow["completed"] and flow["in_order"] and flow["delivered_bytes"] == flow["data_bytes"]
    assert flow["finish_s"] > 6.5                      # it ran through the failure and repair
    assert check_conservation(results.network) == []
    failures = sum(d["failure_drops"] for d in summary["links"]["L1"]["directions"].values())
    assert failures > 0
    history = next_hop_history(results, "R1", "H2")
    assert history[0] == (0.0, "R2")
    after_failure = [(t, hop) for t, hop in history if 3.0 <= t < 6.0]
    assert after_failure and after_failure[0][1] == "R3"
    assert after_failure[0][0] <= 3.0 + 0.15 + 0.1     # noticed at once, hold-down, one hop
    after_repair = [(t, hop) for t, hop in history if t >= 6.0]
    assert after_repair and after_repair[0][1] == "R2"
    # the bottom branch carried the traffic while the top was down, not before or after
    t, bottom = results.trace("links", "L2", "rate_mbps")
    assert bottom[(t > 4.5) & (t <= 6.0)].mean() > 5.0
    assert bottom[(t > 7.0) & (t <= flow["finish_s"] - 0.2)].mean() < 1.0
    assert bottom[t <= 3.0].mean() < 0.1


def test_static_routing_does_not_react_to_failures_but_the_flow_resumes_after_repair():
    events = [{"at_s": 1.5, "link": "L1", "action": "down"},
              {"at_s": 3.0, "link": "L1", "action": "up"}]
    results = simulate(load_topology(two_path_topology(events, protocol="static", data_mb=3)))
    flow = results.summary["flows"]["F1"]
    assert flow["completed"] and flow["in_order"]
    assert flow["timeouts"] >= 1
    assert next_hop_history(results, "R1", "H2") == [(0.0, "R2")]
    t, bottom = results.trace("links", "L2", "rate_mbps")
    assert bottom.max() == 0.0            # static routes never move traffic to the bottom branch


def test_partition_counts_no_route_drops_and_the_stall_guard_ends_the_run():
    topology = {
        "name": "chain", "routing": {"protocol": "bellman-ford"}, "hosts": ["H1", "H2"],
        "routers": ["R1", "R2"],
        "links": [{"id": "LA", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 64},
                  {"id": "L1", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 64},
                  {"id": "LB", "ends": ["R2", "H2"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 64}],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 20, "start_s": 0.0}],
        "events": [{"at_s": 2.0, "link": "L1", "action": "down"}],
    }
    results = Run(load_topology(topology), stall_timeout_s=30.0).execute()
    summary = results.summary
    assert summary["stop_reason"] == "stalled"
    assert "F1 made no progress" in summary["stop_detail"]
    assert "lack of a route" in summary["stop_detail"]
    assert summary["routers"]["R1"]["no_route_drops"] > 0
    assert summary["end_time_s"] < 2.0 + 30.0 + 2.0
    assert not summary["flows"]["F1"]["completed"]
    assert check_conservation(results.network) == []
    last_time, last_hop = next_hop_history(results, "R1", "H2")[-1]
    assert last_hop == "" and 2.0 < last_time <= 2.0 + 0.15 + 0.05   # withdrawn after hold-down
    assert results.routes["cost_ms"][-1] == np.inf


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_routing_traffic_per_round_is_bounded_on_tc2():
    spec = load_topology(ROOT / "topologies" / "test_case_2.json")
    results = simulate(spec)
    routing = results.summary["routing"]
    assert routing["protocol"] == "bellman-ford" and routing["rounds"] >= 10
    router_links = sum(1 for link in spec.links
                       if all(end in spec.routers for end in link.ends))
    per_round = routing["routing_packets"] / routing["rounds"]
    assert per_round >= 2 * router_links                   # every router speaks every round
    assert per_round <= 2 * router_links * (1 + len(spec.hosts))
    counted = sum(d["routing_packets"] for link in results.summary["links"].values()
                  for d in link["directions"].values())
    assert counted == routing["routing_packets"]


def test_routing_packets_use_their_own_size_and_are_counted_apart(tmp_path):
    data = json.loads((ROOT / "topologies" / "test_case_1.json").read_text())
    data["packet_bytes"]["routing"] = 100
    results = simulate(load_topology(data), duration_s=12.0)
    t, routing = results.trace("links", "L1", "routing_rate_mbps")
    one_packet_mbps = 100 * 8 / 0.1 / 2 ** 20         # one 100-byte packet in a 0.1 s interval
    packets = routing / one_packet_mbps
    assert np.allclose(packets, np.round(packets))    # whole routing packets of 100 bytes
    assert packets[0] >= 2                            # the first round crosses L1 both ways
    counted = sum(d["routing_packets"] for d in results.summary["links"]["L1"]["directions"].values())
    assert round(packets.sum()) == counted
    # routing bytes are their own class: the first interval carries no data on L1 at all
    _, rate = results.trace("links", "L1", "rate_mbps")
    assert rate[0] == pytest.approx(routing[0])
