"""Static routes never loop, even over router links that cost nothing: a tie goes to a neighbour
strictly closer to the destination, or as close and fewer hops away (routing/static.py,
`_leads_on`)."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from netsim import load_topology, simulate
from routing.static import TIE_TOLERANCE, plain_paths
from topologies.generate import Common, fat_tree


def triangle(first_cost_ms, other_cost_ms=1.0, hosts_on=("A", "B")):
    """Routers A, B, C; A-B (listed first) costs `first_cost_ms`, A-C and B-C `other_cost_ms`;
    H1 and H2 on `hosts_on`; one flow of 0.1 MB from H1 to H2."""
    return {
        "hosts": ["H1", "H2"], "routers": ["A", "B", "C"],
        "routing": {"protocol": "static"},
        "links": [
            {"id": "AB", "ends": ["A", "B"], "rate_mbps": 10, "delay_ms": 1,
             "cost": first_cost_ms, "buffer_kb": 64},
            {"id": "AC", "ends": ["A", "C"], "rate_mbps": 10, "delay_ms": 1,
             "cost": other_cost_ms, "buffer_kb": 64},
            {"id": "BC", "ends": ["B", "C"], "rate_mbps": 10, "delay_ms": 1,
             "cost": other_cost_ms, "buffer_kb": 64},
            {"id": "H1", "ends": ["H1", hosts_on[0]], "rate_mbps": 10, "delay_ms": 1,
             "buffer_kb": 64},
            {"id": "H2", "ends": ["H2", hosts_on[1]], "rate_mbps": 10, "delay_ms": 1,
             "buffer_kb": 64}],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.1}],
    }


def zero_delay(data):
    """`data` with every router-to-router link's delay (and so its cost) zero."""
    routers = set(data["routers"])
    for link in data["links"]:
        link.pop("cost", None)
        if set(link["ends"]) <= routers:
            link["delay_ms"] = 0
    return data


def walk_all(paths, routers, host):
    """Every router's every next hop towards `host` (ECMP members included), followed: asserts
    that no walk comes back to a router it passed, and that each ends at the host."""
    members = {r: [far for _, far in paths.equal_cost_hops(r, host)] for r in routers}
    for start in routers:
        stack = [(start, (start,))]
        while stack:
            router, path = stack.pop()
            assert members[router], f"{router} has no route to {host} on the way from {start}"
            for far in members[router]:
                if far == host:
                    continue
                assert far not in path, f"loop towards {host}: {' -> '.join((*path, far))}"
                stack.append((far, (*path, far)))


def plain(data):
    """(routers, hosts, links) of a topology dict as `plain_paths` takes them (costs in s)."""
    links = [(link["id"], tuple(link["ends"]),
              link.get("cost", link["delay_ms"]) / 1000.0) for link in data["links"]]
    return data["routers"], data["hosts"], links


@pytest.mark.parametrize("cost_ms", [0.0, 1e-6])
@pytest.mark.parametrize("ecmp", [None, "flow"])
def test_a_link_that_costs_nothing_takes_no_packet_back(cost_ms, ecmp):
    """A-B costs nothing (or 1e-6 ms against paths of 1000 ms: within the tie tolerance), so A
    and B tie through each other; they pointed at each other, even A at B for its own host H1,
    and the flow never got through."""
    data = triangle(cost_ms, other_cost_ms=1.0 if cost_ms == 0.0 else 1000.0,
                    hosts_on=("A", "C"))
    if cost_ms == 0.0:
        data = zero_delay(data)
        data["links"][1]["delay_ms"] = data["links"][2]["delay_ms"] = 1
    if ecmp:
        data["routing"]["ecmp"] = ecmp
    results = simulate(load_topology(data), duration_s=5.0)   # (looping, it never ended)
    assert results.summary["stop_reason"] == "completed"
    routes = results.routes
    logged = dict(zip(zip(routes["router"], routes["destination"]), routes["next_hop"]))
    assert logged["A", "H2"] == "C"               # straight there, not over B and back
    paths = plain_paths(*plain(data))
    assert paths.counts_hops
    assert paths.entry("A", "H1")[1][1] == "H1"   # its own host, not across the free link
    assert paths.entry("B", "H1")[1][1] == "A"
    assert paths.entry("A", "H2")[1][1] == "C"
    assert paths.entry("B", "H2")[1][1] == "C"
    for host in ("H1", "H2"):
        walk_all(paths, ["A", "B", "C"], host)


def test_across_a_free_link_the_router_fewer_hops_away_is_the_next_hop():
    # H2 on B: A is as far as B (A-B costs nothing) but one hop further, so A sends to B and B
    # delivers; C is 1 ms further and ties between A and B: its first link, A, then on to B
    data = zero_delay(triangle(0.0, hosts_on=("A", "B")))
    data["links"][1]["delay_ms"] = data["links"][2]["delay_ms"] = 1
    paths = plain_paths(*plain(data))
    assert paths.counts_hops
    assert paths.entry("A", "H2")[1][1] == "B"
    assert paths.entry("B", "H2")[1][1] == "H2"
    assert paths.entry("B", "H1")[1][1] == "A"
    assert paths.entry("C", "H2")[1][1] == "A" and paths.entry("C", "H2")[0] == 0.002
    assert [far for _, far in paths.equal_cost_hops("C", "H2")] == ["A", "B"]
    results = simulate(load_topology(data), duration_s=5.0)   # (looping, it never ended)
    assert results.summary["stop_reason"] == "completed"


@pytest.mark.parametrize("ecmp", [None, "flow"])
def test_a_fat_tree_without_delays_delivers_every_flow(ecmp):
    """`generate fat-tree --delay-us 0`: every switch link costs nothing, and every edge and
    aggregation switch pointed at each other; nothing was delivered and the run never ended.
    With ECMP the sets are the fewest-hop ways, as on a fat tree with delays."""
    common = Common(flows=4, data_mb=0.1, ecmp=ecmp)
    data = fat_tree(4, delay_us=0.0, common=common)
    spec = load_topology(data)
    results = simulate(spec, duration_s=5.0)
    assert results.summary["stop_reason"] == "completed"
    assert all(f["completed"] for f in results.summary["flows"].values())
    routers, hosts, links = plain(data)
    paths = plain_paths(routers, hosts, links)
    assert paths.counts_hops
    for host in hosts:
        walk_all(paths, routers, host)
    # an edge switch reaches a host of another pod over both its aggregation switches, as it
    # does when links have delays
    with_delays = plain_paths(*plain(fat_tree(4, common=common)))
    assert not with_delays.counts_hops
    for router in routers:
        for host in hosts:
            assert [far for _, far in paths.equal_cost_hops(router, host)] == \
                [far for _, far in with_delays.equal_cost_hops(router, host)]


def test_networks_without_free_links_never_count_hops(root):
    for name in ("test_case_1", "test_case_2", "dumbbell"):
        data = json.loads((root / "topologies" / f"{name}.json").read_text())
        paths = plain_paths(*plain(data))
        assert not paths.counts_hops
        assert all(attachment.hops is None for attachment in paths.attachments)


# zeros, costs far below the tie tolerance of a path, and ordinary costs, some equal
COSTS = st.sampled_from([0.0, 0.0, 1e-15, 1e-13, 0.001, 0.001, 0.002, 0.003 + 1e-14, 1.0])


@st.composite
def free_link_topologies(draw):
    """(routers, hosts, links): a connected random router graph whose links often cost nothing
    or next to nothing (parallel links allowed), a host on a random router each."""
    n = draw(st.integers(2, 9))
    routers = [f"R{i}" for i in range(n)]
    links = [(f"T{i}", (routers[draw(st.integers(0, i - 1))], routers[i]), draw(COSTS))
             for i in range(1, n)]                                # a spanning tree
    for _ in range(draw(st.integers(0, 2 * n))):
        a, b = draw(st.sampled_from(routers)), draw(st.sampled_from(routers))
        if a != b:
            links.append((f"L{len(links)}", (a, b), draw(COSTS)))
    hosts = [f"H{i}" for i in range(draw(st.integers(1, 5)))]
    links += [(f"A{h}", (h, draw(st.sampled_from(routers))), draw(COSTS)) for h in hosts]
    order = draw(st.permutations(range(len(links))))
    return routers, hosts, [links[i] for i in order]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(free_link_topologies())
def test_no_route_loops_and_every_next_hop_is_on_a_shortest_path(topology):
    routers, hosts, links = topology
    paths = plain_paths(routers, hosts, links)
    for host in hosts:
        walk_all(paths, routers, host)
        for router in routers:
            cost, (index, far) = paths.entry(router, host)
            lowest = paths.distance(router, host)
            # every member is within the tie tolerance of the router's shortest distance
            for index, far in paths.equal_cost_hops(router, host):
                link_cost = links[index][2]
                far_cost = 0.0 if far == host else paths.distance(far, host)
                assert link_cost + far_cost <= lowest + TIE_TOLERANCE * max(lowest, 1e-12)
            assert math.isfinite(cost)
