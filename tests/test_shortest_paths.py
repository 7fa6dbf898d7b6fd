"""Static shortest paths (routing.static): the one-adjacency, per-attachment heap Dijkstra gives
exactly the routes and costs of the documented rule computed the textbook way, one networkx
graph and Dijkstra per destination host, next hop by (link cost + neighbour's distance) with
ties within a relative 1e-9 broken by the link's position in the file."""
from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.link import Link
from components.node import Host, Router
from routing.static import (
    ShortestPaths,
    _neighbour_masks,
    dijkstra,
    install_static_routes,
    pick_next_hop,
    plain_next_hops,
    plain_paths,
)
from simulator.engine import Simulator

# small integers make equal-cost paths common; the decimals make float sums order-sensitive
COSTS = st.sampled_from([0.001, 0.002, 0.003, 0.1, 0.2, 0.3, 0.7, 1.0, 2.0, 3.0])


@st.composite
def plain_topologies(draw):
    """(routers, hosts, links) as plain data: random router links (parallel links allowed, the
    graph possibly disconnected), one link per host, to a router or now and then to a host."""
    n_routers = draw(st.integers(1, 12))
    routers = [f"R{i}" for i in range(n_routers)]
    links = []
    for _ in range(draw(st.integers(0, 3 * n_routers))):
        a, b = draw(st.sampled_from(routers)), draw(st.sampled_from(routers))
        if a != b:
            links.append((f"L{len(links)}", (a, b), draw(COSTS)))
    hosts = [f"H{i}" for i in range(draw(st.integers(1, 10)))]
    unlinked = list(hosts)
    while unlinked:
        host = unlinked.pop()
        if unlinked and draw(st.integers(0, 9)) == 0:      # a host-to-host link
            other = unlinked.pop()
            ends = (host, other)
        else:
            router = draw(st.sampled_from(routers))
            ends = (host, router) if draw(st.booleans()) else (router, host)
        links.append((f"A{host}", ends, draw(COSTS)))
    order = draw(st.permutations(range(len(links))))     # file order decides ties
    return routers, hosts, [links[i] for i in order]


def reference_tables(routers, hosts, links) -> dict:
    """(router, host) -> (cost, link index, next node), the textbook way: a networkx graph of the
    destination and the routers for every destination, Dijkstra from it, the fewest hops of the
    paths of exactly each router's distance (a breadth-first search over the links on which the
    distance grows by exactly the link's cost), then every router's links in file order through
    the tie rule, keeping only neighbours strictly closer, or as close and fewer hops away."""
    router_set = set(routers)
    attached = {r: [] for r in routers}
    for index, (_, (a, b), cost) in enumerate(links):
        if a in attached:
            attached[a].append((index, b, cost))
        if b in attached:
            attached[b].append((index, a, cost))
    tables = {}
    for host in hosts:
        graph = nx.Graph()
        graph.add_node(host)
        graph.add_nodes_from(routers)
        for _, (a, b), cost in links:
            if (a == host or a in router_set) and (b == host or b in router_set):
                if not graph.has_edge(a, b) or graph[a][b]["weight"] > cost:
                    graph.add_edge(a, b, weight=cost)
        dist = nx.single_source_dijkstra_path_length(graph, host, weight="weight")
        hops = {host: -1}
        frontier = [host]
        while frontier:
            following = []
            for v in frontier:
                for u in graph[v]:
                    if u not in hops and dist[v] + graph[v][u]["weight"] == dist[u]:
                        hops[u] = hops[v] + 1
                        following.append(u)
            frontier = following
        for router in routers:
            if router not in dist:
                continue
            chosen = pick_next_hop(
                (cost + dist[far], (index, far)) for index, far, cost in attached[router]
                if far in dist and (dist[far] < dist[router] or (
                    dist[far] == dist[router] and hops[far] < hops[router])))
            if chosen is not None:
                tables[router, host] = (chosen[0], chosen[1][0], chosen[1][1])
    return tables


def equal_router_link_costs(routers, links, cost) -> list:
    """`links` with every router-to-router link costing `cost` (host links keep theirs)."""
    router_set = set(routers)
    return [(lid, ends, cost if set(ends) <= router_set else host_cost)
            for lid, ends, host_cost in links]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies())
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_routes_and_costs_equal_a_networkx_dijkstra_per_destination(topology):
    routers, hosts, links = topology
    assert plain_next_hops(routers, hosts, links) == reference_tables(routers, hosts, links)


def build(routers, hosts, links):
    """The plain topology as components (links attached in file order)."""
    sim = Simulator(1)
    nodes = {r: Router(r) for r in routers}
    nodes.update({h: Host(h) for h in hosts})
    built = [Link(sim, lid, nodes[a], nodes[b], 1e6, 0.001, 10_000, "full", cost)
             for lid, (a, b), cost in links]
    return nodes, built


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies())
def test_installed_tables_follow_the_plain_tables(topology):
    routers, hosts, links = topology
    nodes, built = build(routers, hosts, links)
    router_objs = [nodes[r] for r in routers]
    host_objs = [nodes[h] for h in hosts]
    paths = install_static_routes(router_objs, host_objs, built)
    assert all(not router.routes for router in router_objs)    # nothing computed yet
    expected = reference_tables(routers, hosts, links)
    got = {}
    for router in router_objs:
        for host in host_objs:             # what a packet to `host` at `router` looks up
            d = router.route(host)
            if d is None:
                assert paths.entry(router, host) is None and host not in router.routes
                continue
            cost, same_d = paths.entry(router, host)
            assert same_d is d and router.routes[host] is d
            got[router.id, host.id] = (cost, built.index(d.link), d.dst.id)
    assert got == expected
    for router in router_objs:             # table(): the same entries, hosts in file order
        assert list(paths.table(router)) == [h for h in host_objs if h in router.routes]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies(), st.randoms(use_true_random=False))
def test_entries_asked_for_in_any_order_equal_the_whole_search(topology, rnd):
    # each attachment's search is resumed as far as an entry needs: the order of the questions
    # changes nothing, and neither does asking before or after the whole search has run
    routers, hosts, links = topology
    pairs = [(r, h) for r in routers for h in hosts]
    rnd.shuffle(pairs)
    lazy = plain_paths(routers, hosts, links)
    asked = {pair: lazy.entry(*pair) for pair in pairs}
    whole = plain_paths(routers, hosts, links)
    tables = whole.hops()
    for (router, host), entry in asked.items():
        assert entry == whole.entry(router, host)
        assert (entry[1] if entry else None) == tables[router].get(host)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies(), st.randoms(use_true_random=False))
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_equal_cost_sets_asked_in_any_order_equal_those_of_the_whole_search(topology, rnd):
    # ECMP tables are filled on first use (install_static_routes): an equal-cost set computed
    # from a partly run search, and kept per attachment for the routers away from its hosts, is
    # the one the whole search gives, whatever was asked before; the tie rule's hop comes first
    routers, hosts, links = topology
    pairs = [(r, h) for r in routers for h in hosts]
    rnd.shuffle(pairs)
    lazy = plain_paths(routers, hosts, links)
    asked = {}
    for router, host in pairs:
        if rnd.random() < 0.3:
            lazy.entry(router, host)
        asked[router, host] = lazy.equal_cost_hops(router, host)
    whole = plain_paths(routers, hosts, links)
    whole.hops()                                  # every search run to its end
    for (router, host), hops in asked.items():
        assert hops == whole.equal_cost_hops(router, host)
        entry = whole.entry(router, host)
        assert (hops[0] if hops else None) == (entry[1] if entry else None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies(), st.randoms(use_true_random=False))
def test_every_table_at_once_equals_the_tables_router_by_router(topology, rnd):
    # tables() (Bellman-Ford's t = 0 forwarding) chooses once per router and attachment: the
    # same entries, hosts in file order, whether some entries were asked for before or not
    routers, hosts, links = topology
    one_by_one = plain_paths(routers, hosts, links)
    expected = {router: one_by_one.table(router) for router in one_by_one.routers}
    at_once = plain_paths(routers, hosts, links)
    pairs = [(r, h) for r in routers for h in hosts]
    for router, host in rnd.sample(pairs, rnd.randint(0, len(pairs))):
        at_once.entry(router, host)
    tables = at_once.tables()
    assert {router: list(table.items()) for router, table in tables.items()} == {
        router: list(table.items()) for router, table in expected.items()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies(), st.sampled_from([0.001, 0.1, 0.3, 1.0, 1e-300, 1e300]))
def test_equal_router_link_costs_search_breadth_first_with_dijkstras_results(topology, cost):
    # every router link costs the same: the breadth-first search gives the reference tables,
    # and the same distances in the same settling order as the heap Dijkstra
    routers, hosts, links = topology
    links = equal_router_link_costs(routers, links, cost)
    assert plain_next_hops(routers, hosts, links) == reference_tables(routers, hosts, links)
    paths = plain_paths(routers, hosts, links)
    paths.hops()                                  # every search run to its end
    for attachment in paths.attachments:
        assert list(attachment.dist.items()) == list(dijkstra(paths.adjacency,
                                                              attachment.starts).items())
        if len(attachment.starts) == 1 and paths.adjacency and any(paths.adjacency.values()):
            assert type(attachment.heap).__name__ == "deque"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies(), st.sampled_from([0.001, 0.3, 1.0, 1e-300, 1e300]), st.booleans(),
       st.randoms(use_true_random=False))
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_breadth_first_searches_stop_where_the_heap_dijkstra_does(topology, cost, masks, rnd):
    # the breadth-first search settles a layer at a time, finding the next layer by neighbour
    # lists or by bit masks: after every question each search is left as the heap Dijkstra
    # leaves it (the same routers settled and seen, in the same order, the same frontier), and
    # the entries and equal-cost hops are the same
    routers, hosts, links = topology
    links = equal_router_link_costs(routers, links, cost)
    fast = plain_paths(routers, hosts, links)
    if fast._neighbours is None:                  # no router link: no breadth-first search
        return
    if masks:
        fast._bits, fast._masks = _neighbour_masks(fast._neighbours)
    else:
        fast._masks = None
    slow = plain_paths(routers, hosts, links)
    for attachment in slow.attachments:           # the heap Dijkstra (`_settle`) instead
        # (on (distance, hops) when router links cost next to nothing: `counts_hops`)
        attachment.heap = [(d, 0, c, v) for d, c, v in attachment.heap] if slow.counts_hops \
            else list(attachment.heap)
    questions = [(r, h, rnd.random() < 0.2) for r in routers for h in hosts]
    rnd.shuffle(questions)
    for router, host, equal_cost in questions:
        if equal_cost:
            assert fast.equal_cost_hops(router, host) == slow.equal_cost_hops(router, host)
        else:
            assert fast.entry(router, host) == slow.entry(router, host)
        for a, b in zip(fast.attachments, slow.attachments):
            assert list(a.dist.items()) == list(b.dist.items())
            # what the breadth-first search has seen is its settled routers and its queue
            # (it keeps no `seen` of its own): the heap Dijkstra's `seen`, in its order
            seen = {**a.dist, **{v: d for d, _, v in a.heap}}
            assert list(seen.items()) == list(b.seen.items())
            heap = [(d, c, v) for d, _, c, v in b.heap] if slow.counts_hops else b.heap
            assert list(a.heap) == sorted(heap) and a.count == b.count
            if slow.counts_hops:                  # a layer is the fewest hops
                assert {v: a.hops[v] for v in a.dist} == {v: b.hops[v] for v in b.dist}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies(), st.sampled_from([0.001, 0.3, 1.0, 1e-300, 1e300]),
       st.randoms(use_true_random=False))
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_routes_found_from_both_ends_equal_those_of_the_whole_search(topology, cost, rnd):
    # `prime` finds the entries of the routers on a router's shortest paths to a host by two
    # searches meeting halfway; asked in any order, mixed with ordinary questions, every entry
    # is the whole search's
    routers, hosts, links = topology
    links = equal_router_link_costs(routers, links, cost)
    fast = plain_paths(routers, hosts, links)
    fast._bits, fast._masks = {}, None            # (small graphs would get masks)
    whole = plain_paths(routers, hosts, links)
    whole.hops()
    questions = [(r, h, rnd.random() < 0.5) for r in routers for h in hosts]
    rnd.shuffle(questions)
    for router, host, from_both_ends in questions:
        if from_both_ends:
            fast.prime(router, host)
        else:
            assert fast.entry(router, host) == whole.entry(router, host)
    for router in routers:
        for host in hosts:
            assert fast.entry(router, host) == whole.entry(router, host)


def test_a_path_found_from_both_ends_leaves_the_rest_of_the_graph_alone():
    # 4 000 routers of a random graph (a random tree plus as many random links: every router a
    # few hops from every other): priming a path visits two small balls, and following it then
    # needs no search from the host
    import random
    rnd = random.Random(5)
    n = 4000
    links = [(f"T{i}", (f"R{rnd.randrange(i)}", f"R{i}"), 0.001) for i in range(1, n)]
    links += [(f"X{i}", (f"R{rnd.randrange(n)}", f"R{rnd.randrange(n)}"), 0.001)
              for i in range(n)]
    links = [link for link in links if link[1][0] != link[1][1]]
    links += [("A", ("H0", "R17"), 0.002), ("B", ("R3999", "H1"), 0.002)]
    routers = [f"R{i}" for i in range(n)]
    paths = plain_paths(routers, ["H0", "H1"], links)
    assert paths._masks is None and paths.prime("R17", "H1")
    router, path = "R17", []
    while router != "R3999":
        cost, (_, router) = paths.entry(router, "H1")
        path.append((router, cost))
    target = paths._attachment_of["H1"]
    assert target.dist == {}                       # the host's own search never ran
    whole = plain_paths(routers, ["H0", "H1"], links)
    router, expected = "R17", []
    while router != "R3999":
        cost, (_, router) = whole.entry(router, "H1")
        expected.append((router, cost))
    assert path == expected and len(whole._attachment_of["H1"].dist) > n // 4
    assert len(target.choices) < n // 20           # the routers of its shortest paths only


def test_a_run_computes_only_the_entries_its_packets_use():
    # a line of 30 routers with a host at each end and 28 hosts in the middle; one flow from end
    # to end: the routers hold entries towards its two hosts only
    from netsim.run import simulate
    from topologies.loader import load_topology
    routers = [f"R{i}" for i in range(30)]
    hosts = ["HA", "HB"] + [f"M{i}" for i in range(28)]
    links = [{"id": f"L{i}", "ends": [routers[i], routers[i + 1]], "rate_mbps": 10,
              "delay_ms": 1, "buffer_kb": 64} for i in range(29)]
    links += [{"id": "A", "ends": ["HA", "R0"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 64},
              {"id": "B", "ends": ["HB", "R29"], "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 64}]
    links += [{"id": f"LM{i}", "ends": [f"M{i}", routers[i + 1]], "rate_mbps": 10,
               "delay_ms": 1, "buffer_kb": 64} for i in range(28)]
    results = simulate(load_topology({
        "name": "line", "hosts": hosts, "routers": routers, "links": links,
        "flows": [{"id": "F", "src": "HA", "dst": "HB", "data_mb": 0.05}]}))
    net = results.network
    assert results.summary["flows"]["F"]["completed"]
    for router in net.routers.values():
        assert {h.id for h in router.routes} == {"HA", "HB"}, router.id


def test_ties_go_to_the_first_link_in_the_file():
    # R0 reaches H over R1 or R2 at the same cost; the link listed first wins, whatever the names
    links = [("b", ("R0", "R2"), 1.0), ("a", ("R0", "R1"), 1.0), ("x", ("R1", "R3"), 1.0),
             ("y", ("R2", "R3"), 1.0), ("h", ("R3", "H"), 1.0)]
    tables = plain_next_hops(["R0", "R1", "R2", "R3"], ["H"], links)
    assert tables["R0", "H"] == (3.0, 0, "R2")
    links[0], links[1] = links[1], links[0]
    assert plain_next_hops(["R0", "R1", "R2", "R3"], ["H"], links)["R0", "H"] == (3.0, 0, "R1")


def test_costs_within_the_tolerance_are_ties_and_beyond_it_are_not():
    def route(bottom_cost):
        links = [("top", ("R0", "R1"), 1.0), ("bottom", ("R0", "R2"), bottom_cost),
                 ("t", ("R1", "R3"), 1.0), ("u", ("R2", "R3"), 1.0), ("h", ("R3", "H"), 1.0)]
        return plain_next_hops(["R0", "R1", "R2", "R3"], ["H"], links)["R0", "H"][2]
    assert route(1.0 - 0.5e-9 * 3) == "R1"          # cheaper, but within 1e-9 of 3: a tie
    assert route(1.0 - 2e-9 * 3) == "R2"            # cheaper beyond the tolerance


def test_one_search_per_attachment_not_per_host():
    # 50 hosts on each of two routers: two searches serve the 100 destinations
    links = [("core", ("R0", "R1"), 1.0)]
    links += [(f"a{i}", (f"H{i}", "R0" if i < 50 else "R1"), 0.5) for i in range(100)]
    paths = plain_paths(["R0", "R1"], [f"H{i}" for i in range(100)], links)
    assert len(paths.attachments) == 2
    assert paths.entry("R0", "H99") == (1.5, (0, "R1"))
    assert paths.entry("R0", "H3") == (0.5, (4, "H3"))
    assert paths.distance("R1", "H3") == 1.5


def test_unreachable_hosts_have_no_entry():
    links = [("l", ("R0", "R1"), 1.0), ("a", ("H0", "R0"), 1.0), ("b", ("H1", "R2"), 1.0),
             ("c", ("H2", "H3"), 1.0)]
    paths = plain_paths(["R0", "R1", "R2"], ["H0", "H1", "H2", "H3"], links)
    assert paths.entry("R1", "H0") == (2.0, (0, "R0"))
    assert paths.entry("R0", "H1") is None and paths.entry("R2", "H0") is None
    assert all(paths.entry(r, h) is None for r in ("R0", "R1", "R2") for h in ("H2", "H3"))
    assert isinstance(paths, ShortestPaths)


@pytest.mark.parametrize("module", ["routing", "routing.static", "topologies", "netsim.run"])
def test_the_run_path_does_not_import_networkx(module):
    import subprocess
    import sys
    code = (f"import sys, {module}; "
            f"sys.exit(1 if any(m == 'networkx' or m.startswith('networkx.') for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_topologies(), st.data())
def test_the_loader_accepts_a_flow_exactly_when_the_routes_connect_its_hosts(topology, data):
    from topologies import TopologyError, load_topology
    routers, hosts, links = topology
    if len(hosts) < 2:
        return
    src, dst = data.draw(st.permutations(hosts))[:2]
    paths = plain_paths(routers, hosts, links)
    (_, ends, _), = [entry for entry in links if src in entry[1]]     # a host has one link
    first = ends[1] if ends[0] == src else ends[0]
    routed = first == dst or (first in routers and paths.entry(first, dst) is not None)
    spec = {"name": "t", "hosts": hosts, "routers": routers,
            "links": [{"id": lid, "ends": list(pair), "rate_mbps": 10, "delay_ms": cost * 1e3,
                       "buffer_kb": 64} for lid, pair, cost in links],
            "flows": [{"id": "F", "src": src, "dst": dst, "data_mb": 1}]}
    try:
        load_topology(spec)
        loaded = True
    except TopologyError as error:
        assert "are not connected" in str(error), str(error)
        loaded = False
    assert loaded == routed


def test_a_path_looked_up_before_any_packet_computes_its_entries():
    # readers of the forwarding tables (the workloads' empty-network FCT) ask the routers
    # (`Router.route`), which compute the entries the tables do not hold yet
    from netsim.workloads import path_links
    from topologies.build import build_network
    from topologies.loader import load_topology
    spec = load_topology({
        "name": "chain", "hosts": ["A", "B"], "routers": ["R0", "R1", "R2"],
        "links": [{"id": i, "ends": ends, "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 64}
                  for i, ends in (("a", ["A", "R0"]), ("x", ["R0", "R1"]), ("y", ["R1", "R2"]),
                                  ("b", ["R2", "B"]))],
        "flows": [{"id": "F", "src": "A", "dst": "B", "data_mb": 0.01}]})
    net = build_network(spec)
    hosts = net.hosts
    assert [link.id for link in path_links(hosts["A"], hosts["B"])] == ["a", "x", "y", "b"]
    assert [link.id for link in path_links(hosts["B"], hosts["A"])] == ["b", "y", "x", "a"]
