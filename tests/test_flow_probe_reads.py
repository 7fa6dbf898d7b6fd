"""How the flow probe reads a flow (netsim/probes.py): the transport's `Flow` through its parts,
its counters where the sender says it keeps them (`counter_paths`), compared as one tuple per
sample. The rows must be what reading the flow's properties and `counters()`
gives, on both stacks, with the counters actually moving."""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from flows.sender_view import COUNTERS
from netsim.probes import FLOW_COLUMNS, FlowProbe
from plot_tool.schema import FLOW_COUNTERS
from topologies.spec import TransportSpec

FIXED = len(FLOW_COLUMNS) - len(FLOW_COUNTERS)


def by_hand(sender) -> tuple:
    """The counters in `FLOW_COUNTERS` order, read attribute by attribute (0 where off)."""
    tlp = getattr(sender, "tlp", None)
    undo = getattr(sender, "undo", None)
    board = sender.scoreboard
    return (sender.timeouts, tlp.probes if tlp is not None else 0,
            getattr(board, "rack_lost", 0), getattr(board, "lost_retrans", 0),
            undo.undos if undo is not None else 0, sender.sack_recoveries,
            sender.fast_retransmits)


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_rows_are_the_flows_figures_and_counter_gains(make_flow, stack):
    # a 10 kB buffer at 8 Mb/s: losses, fast retransmits (and on Linux RACK marks and TLPs)
    sim, _h1, _h2, flow = make_flow(packets=3000, buffer_bytes=10_000,
                                    transport=TransportSpec(stack=stack))
    assert FLOW_COUNTERS == COUNTERS
    probe = FlowProbe(flow, 1e6)
    assert probe.read_counters is not None          # the fast path, not counters()
    span = 0.05
    last_counts = (0,) * len(FLOW_COUNTERS)
    last_figures = (0, 0, 0, 0.0, 0)
    gained = [0] * len(FLOW_COUNTERS)
    rows = 0
    for tick in range(1, 80):
        now = tick * span
        sim.run(until=now)
        figures = (flow.bytes_sent, flow.delivered_bytes, flow.arrived_bytes, flow.rtt_sum,
                   flow.rtt_count)
        parts = (probe.sending.bytes_sent, probe.receiving.delivered_bytes,
                 probe.receiving.arrived_bytes, probe.timing.rtt_sum, probe.timing.rtt_count,
                 probe.sending.cwnd, probe.sending.finish_s)
        assert parts == (*figures, flow.cwnd, flow.finish_s)
        row = probe(now, span)
        if flow.finish_s is not None and flow.finish_s <= now - span:
            assert row is None
            break
        rows += 1
        counts = by_hand(flow.sender)
        assert row[FIXED:] == tuple(float(a - b) for a, b in zip(counts, last_counts))
        assert row[0] == (figures[0] - last_figures[0]) * 8.0 / span / 1e6
        assert row[1] == (figures[1] - last_figures[1]) * 8.0 / span / 1e6
        assert row[2] == (figures[2] - last_figures[2]) * 8.0 / span / 1e6
        assert row[3] == float(flow.cwnd)
        count = figures[4] - last_figures[4]
        expected_rtt = (figures[3] - last_figures[3]) / count / 1e-3 if count else math.nan
        assert row[4] == expected_rtt or (math.isnan(row[4]) and math.isnan(expected_rtt))
        gained = [g + a - b for g, a, b in zip(gained, counts, last_counts)]
        last_counts, last_figures = counts, figures
    assert rows > 10
    assert tuple(gained) == by_hand(flow.sender)
    assert dict(zip(COUNTERS, by_hand(flow.sender))) == flow.sender.counters()
    moved = dict(zip(FLOW_COUNTERS, gained))
    assert moved["fast_retransmits"] > 0
    if stack == "linux":
        assert moved["rack_lost"] > 0 and moved["sack_recoveries"] > 0


def test_counter_paths_name_only_the_mechanisms_a_sender_runs(make_flow):
    _, _, _, classic = make_flow()
    _, _, _, linux = make_flow(transport=TransportSpec(stack="linux"))
    assert classic.sender.counter_paths() == ("timeouts", None, None, None, None,
                                              "sack_recoveries", "fast_retransmits")
    paths = linux.sender.counter_paths()
    assert paths[0] == "timeouts" and paths[1] == "tlp.probes" and paths[2:4] == (
        "scoreboard.rack_lost", "scoreboard.lost_retrans") and paths[4] == "undo.undos"


def test_a_sender_keeping_one_counter_is_read_through_a_tuple():
    sender = SimpleNamespace(fast_retransmits=0)
    sender.counters = lambda: {"fast_retransmits": sender.fast_retransmits}
    sender.counter_paths = lambda: (None,) * (len(FLOW_COUNTERS) - 1) + ("fast_retransmits",)
    flow = SimpleNamespace(started=True, start_s=0.0, finish_s=None, bytes_sent=0,
                           delivered_bytes=0, arrived_bytes=0, cwnd=10.0, rtt_sum=0.0,
                           rtt_count=0, sender=sender)
    probe = FlowProbe(flow, 1e6)
    sender.fast_retransmits = 2
    assert probe(0.1, 0.1)[FIXED:] == (0.0,) * (len(FLOW_COUNTERS) - 1) + (2.0,)
    assert probe(0.2, 0.1)[FIXED:] == (0.0,) * len(FLOW_COUNTERS)
    sender.fast_retransmits = 5
    assert probe(0.3, 0.1)[FIXED:] == (0.0,) * (len(FLOW_COUNTERS) - 1) + (3.0,)
