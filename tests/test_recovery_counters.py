"""The loss-recovery counters (summary.json `counters`, flows.csv's counter columns) count every
algorithm's recoveries by one rule, the transport's: a retransmission is a fast retransmit when
loss recovery sent it, not a timeout (docs/outputs.md). Tahoe's go-back-N after a third
duplicate ACK is loss recovery (it used to count nothing: 152 retransmissions, every counter 0)."""
from __future__ import annotations

import pytest

from netsim.run import simulate
from topologies.loader import load_topology

ALGORITHMS = ["tahoe", "reno", "newreno", "cubic", "fast", "vegas", "bbr"]


@pytest.mark.parametrize("topology", ["test_case_0", "lossy_link"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_retransmissions_without_a_timeout_are_all_fast_retransmits(root, topology, algorithm):
    spec = load_topology(root / "topologies" / f"{topology}.json", algorithm=algorithm)
    results = simulate(spec, duration_s=10)
    for flow_id, flow in results.summary["flows"].items():
        fast = flow["counters"]["fast_retransmits"]
        assert 0 <= fast <= flow["retransmissions"], flow_id
        if flow["timeouts"] == 0:
            assert fast == flow["retransmissions"], flow_id


def test_tahoe_counts_its_go_back_n_and_not_a_timeouts(root):
    spec = load_topology(root / "topologies" / "test_case_0.json", algorithm="tahoe")
    results = simulate(spec)
    flow = results.summary["flows"]["F1"]
    assert flow["timeouts"] == 0 and flow["retransmissions"] > 100
    assert flow["counters"]["fast_retransmits"] == flow["retransmissions"]
    sender = results.network.flows["F1"].sender
    assert sender.go_back_n is False                 # every episode ended


def test_a_timeout_ends_go_back_n_counting(make_flow):
    """A timeout in Tahoe's loss episode: what it retransmits next is the timeout's."""
    from flows.tahoe import Tahoe
    sim, _, _, flow = make_flow(packets=50, algorithm=Tahoe)
    sender = flow.sender
    sender.go_back_n = True
    sim.run(until=0.001)
    sender.on_timeout()
    assert sender.go_back_n is False
