"""The loss-recovery counters (summary.json `counters`, flows.csv's counter columns) count every
algorithm's recoveries by one rule, the transport's: a retransmission is a fast retransmit when
loss recovery sent it, not a timeout (docs/outputs.md). Tahoe's go-back-N after a third
duplicate ACK is loss recovery (it used to count nothing: 152 retransmissions, every counter 0)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.packet import DATA
from flows.bbr import Bbr
from flows.cubic import Cubic
from flows.fast import Fast
from flows.newreno import NewReno
from flows.reno import Reno
from flows.tahoe import Tahoe
from flows.vegas import Vegas
from netsim.run import simulate
from topologies.loader import load_topology

ALGORITHMS = ["tahoe", "reno", "newreno", "cubic", "fast", "vegas", "bbr", "dctcp"]
CLASSES = [Tahoe, Reno, NewReno, Cubic, Fast, Vegas, Bbr]


def drop_copies(copies: dict[int, int]):
    """A drop_at predicate that drops the first `copies[seq]` copies of data packet seq."""
    left = dict(copies)

    def predicate(packet):
        if packet.kind == DATA and left.get(packet.seq, 0) > 0:
            left[packet.seq] -= 1
            return True
        return False
    return predicate


def assert_counted_by_the_rule(retransmissions, timeouts, counters, label):
    """No more fast retransmits (or probes) than retransmissions; without a timeout every
    retransmission is loss recovery's or a probe; each timeout resent at least one packet."""
    fast, probes = counters["fast_retransmits"], counters["tlp"]
    assert 0 <= fast and fast + probes <= retransmissions, label
    if timeouts == 0:
        assert fast + probes == retransmissions, label
    assert retransmissions - fast - probes >= timeouts, label


@pytest.mark.parametrize("stack", ["classic", "linux"])
@pytest.mark.parametrize("topology", ["test_case_0", "lossy_link"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_algorithm_counts_its_retransmissions_by_one_rule(root, topology, algorithm,
                                                                stack):
    spec = load_topology(root / "topologies" / f"{topology}.json", algorithm=algorithm,
                         stack=stack)
    results = simulate(spec, duration_s=10)
    for flow_id, flow in results.summary["flows"].items():
        assert_counted_by_the_rule(flow["retransmissions"], flow["timeouts"], flow["counters"],
                                   (algorithm, stack, flow_id))


def test_tahoe_counts_its_go_back_n_in_summary_and_flows_csv(root):
    spec = load_topology(root / "topologies" / "test_case_0.json", algorithm="tahoe")
    results = simulate(spec)
    flow = results.summary["flows"]["F1"]
    assert flow["timeouts"] == 0 and flow["retransmissions"] > 100
    assert flow["counters"]["fast_retransmits"] == flow["retransmissions"]
    assert flow["counters"]["rto"] == 0
    columns = results.flows                           # flows.csv, a column per key
    column = columns["fast_retransmits"][columns["flow"] == "F1"]
    assert column.sum() == flow["retransmissions"]
    assert results.network.flows["F1"].sender.loss_recovery is False    # every episode ended


@pytest.mark.parametrize("algorithm", CLASSES, ids=lambda c: c.__name__)
def test_one_loss_repaired_without_a_timeout_is_one_fast_retransmit(make_flow, drop_at,
                                                                     algorithm):
    sim, _, h2, flow = make_flow(packets=300, algorithm=algorithm)
    drop_at(h2, drop_copies({100: 1}))
    sim.run()
    assert flow.finished and flow.timeouts == 0
    assert flow.retransmissions == flow.sender.fast_retransmits == 1


@pytest.mark.parametrize("algorithm", CLASSES, ids=lambda c: c.__name__)
def test_a_timeout_takes_over_the_episode_and_its_retransmission_is_not_fast(make_flow,
                                                                             drop_at, algorithm):
    """The fast retransmission of packet 100 is lost too: the timeout resends it."""
    sim, _, h2, flow = make_flow(packets=300, algorithm=algorithm)
    drop_at(h2, drop_copies({100: 2}))
    sim.run()
    assert flow.finished and flow.timeouts == 1
    assert flow.sender.fast_retransmits == 1
    assert flow.retransmissions == 2


def test_a_lost_last_packet_is_the_timeouts_alone(make_flow, drop_at):
    sim, _, h2, flow = make_flow(packets=50, algorithm=Tahoe)
    drop_at(h2, drop_copies({49: 1}))
    sim.run()
    assert flow.timeouts == 1 and flow.retransmissions == 1
    assert flow.sender.fast_retransmits == 0


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(algorithm=st.sampled_from(CLASSES),
       losses=st.dictionaries(st.integers(0, 199), st.integers(1, 3), max_size=12))
def test_any_losses_are_counted_by_the_rule(make_flow, drop_at, algorithm, losses):
    sim, _, h2, flow = make_flow(packets=200, algorithm=algorithm, buffer_bytes=30_000)
    drop_at(h2, drop_copies(losses))
    sim.run()
    assert flow.finished
    sender = flow.sender
    assert_counted_by_the_rule(sender.retransmissions, sender.timeouts, sender.counters(),
                               algorithm.__name__)
