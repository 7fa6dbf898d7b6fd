"""Routes for theory come from the routing code without building a network, and equal the
forwarding tables a built network starts with."""
from __future__ import annotations

from pathlib import Path

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.paths import NoRouteError, Paths, base_rtts_s
from topologies import load_topology
from topologies.build import build_network

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGIES = sorted((ROOT / "topologies").glob("*.json"))


def built_path(net, src, dst) -> list:
    """(link id, direction label) hops along a built network's installed tables."""
    hops, node = [], net.hosts[src]
    target = net.hosts[dst]
    while node is not target:
        d = node.port if node.id == src else node.routes[target]
        hops.append((d.link.id, d.label))
        node = d.dst
    return hops


def plain(paths, src, dst) -> list:
    return [(hop.link.id, hop.label) for hop in paths.path(src, dst)]


@pytest.mark.parametrize("path", TOPOLOGIES, ids=lambda p: p.stem)
def test_paths_equal_the_tables_of_a_built_network(path):
    spec = load_topology(path)
    net = build_network(spec)
    paths = Paths(spec)
    for flow in spec.flows:
        assert plain(paths, flow.src, flow.dst) == built_path(net, flow.src, flow.dst)
        assert plain(paths, flow.dst, flow.src) == built_path(net, flow.dst, flow.src)


def test_base_rtt_of_test_case_0_by_hand():
    spec = load_topology(ROOT / "topologies" / "test_case_0.json")
    link = spec.links[0]
    sizes = spec.packet_sizes
    expected = 2 * link.delay_s + (sizes.data_bytes + sizes.ack_bytes) * 8.0 / link.rate_bps
    assert base_rtts_s(spec) == {"F1": pytest.approx(expected, rel=1e-15)}


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=2, max_value=9), st.data())
def test_random_topologies_with_ties_and_parallel_links(routers, data):
    names = [f"R{i}" for i in range(routers)]
    links = []
    for i in range(1, routers):                       # a spanning tree keeps it connected
        j = data.draw(st.integers(0, i - 1))
        links.append((names[i], names[j]))
    links += data.draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names))
                                .filter(lambda e: e[0] != e[1]), max_size=8))
    delays = data.draw(st.lists(st.sampled_from([1, 2, 5]), min_size=len(links),
                                max_size=len(links)))
    topology = {
        "name": "random", "hosts": ["HA", "HB"], "routers": names,
        "links": [{"id": "LA", "ends": ["HA", names[0]], "rate_mbps": 10, "delay_ms": 1,
                   "buffer_kb": 64},
                  {"id": "LB", "ends": ["HB", names[-1]], "rate_mbps": 10, "delay_ms": 1,
                   "buffer_kb": 64}]
        + [{"id": f"L{k}", "ends": list(ends), "rate_mbps": 10, "delay_ms": delay,
            "buffer_kb": 64} for k, (ends, delay) in enumerate(zip(links, delays))],
        "flows": [{"id": "F1", "src": "HA", "dst": "HB", "data_mb": 1}],
    }
    spec = load_topology(json.loads(json.dumps(topology)))
    net = build_network(spec)
    paths = Paths(spec)
    assert plain(paths, "HA", "HB") == built_path(net, "HA", "HB")
    assert plain(paths, "HB", "HA") == built_path(net, "HB", "HA")


def test_unreachable_destination_is_named():
    data = json.loads((ROOT / "topologies" / "test_case_1.json").read_text())
    data["links"] = [link for link in data["links"] if link["id"] not in ("L1", "L2")]
    data["flows"] = []                     # the loader refuses a flow between unconnected hosts
    spec = load_topology(data)
    with pytest.raises(NoRouteError, match="no loop-free route from H1 to H2"):
        Paths(spec).path("H1", "H2")
