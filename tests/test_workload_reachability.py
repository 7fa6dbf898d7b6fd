"""A workload's hosts must reach one another: checked per component, not per pair.

An all-to-all workload over a k=32 fat tree's 8 192 hosts spent 10-15 s of loading checking its
67 M pairs one by one (acceptance testing at scale); `unconnected_pair` finds the same first
pair as that loop, in O(|src| + |dst|)."""
from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from topologies.load_nodes import connected
from topologies.load_workloads import unconnected_pair

HOSTS = [f"H{i}" for i in range(8)]


def _pairwise(src, dst, components):
    for a in src:
        for b in dst:
            if a != b and not connected(a, b, components):
                return a, b
    return None


@given(src=st.lists(st.sampled_from(HOSTS), min_size=1, unique=True),
       dst=st.lists(st.sampled_from(HOSTS), min_size=1, unique=True),
       labels=st.lists(st.one_of(st.none(), st.integers(0, 2)), min_size=8, max_size=8))
def test_the_first_unconnected_pair_is_the_pairwise_loops(src, dst, labels):
    components = {h: label for h, label in zip(HOSTS, labels) if label is not None}
    assert unconnected_pair(tuple(src), tuple(dst), components) == _pairwise(src, dst,
                                                                              components)


def test_many_hosts_in_one_component_cost_their_number_not_their_pairs():
    hosts = tuple(f"h{i}" for i in range(20_000))
    components = dict.fromkeys(hosts, 0)
    started = time.process_time()
    assert unconnected_pair(hosts, hosts, components) is None
    components["h19999"] = 1
    assert unconnected_pair(hosts, hosts, components) == ("h0", "h19999")
    assert time.process_time() - started < 1.0        # pairwise: 4e8 checks, minutes
