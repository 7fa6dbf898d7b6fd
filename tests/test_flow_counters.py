"""Per-flow transport counters and algorithm state in flows.csv and summary.json
(docs/outputs.md, interfaces of the transport's `Sender.counters()` and the algorithm's
`report()`): read with getattr, so flows without them get empty fields."""
from __future__ import annotations

import math
from types import SimpleNamespace

from netsim.probes import FLOW_COLUMNS, FlowProbe, flow_counters, flow_state, state_columns
from plot_tool.schema import FLOW_COUNTERS, STATE_PREFIX


class Counting:
    """A sender whose counters grow as the test says."""

    def __init__(self):
        self.values = dict.fromkeys(FLOW_COUNTERS, 0)

    def counters(self):
        return dict(self.values)


def stand_in_flow(sender=None, cc=None):
    return SimpleNamespace(started=True, start_s=0.0, finish_s=None, bytes_sent=0,
                           delivered_bytes=0, arrived_bytes=0, cwnd=10.0, rtt_sum=0.0,
                           rtt_count=0, sender=sender, cc=cc)


def test_counters_are_written_per_interval_and_state_at_the_sample():
    sender = Counting()
    alpha = {"alpha": 0.5}
    cc = SimpleNamespace(report=lambda: dict(alpha))
    probe = FlowProbe(stand_in_flow(sender, cc), 1e6, ("alpha",))
    sender.values.update(rto=1, fast_retransmits=3)
    first = probe(0.1, 0.1)
    sender.values.update(rto=1, fast_retransmits=7, tlp=2)
    alpha["alpha"] = 0.25
    second = probe(0.2, 0.1)
    fixed = len(FLOW_COLUMNS) - len(FLOW_COUNTERS)
    counts = dict(zip(FLOW_COUNTERS, first[fixed:fixed + len(FLOW_COUNTERS)]))
    assert counts["rto"] == 1 and counts["fast_retransmits"] == 3 and counts["tlp"] == 0
    counts = dict(zip(FLOW_COUNTERS, second[fixed:fixed + len(FLOW_COUNTERS)]))
    assert counts["rto"] == 0 and counts["fast_retransmits"] == 4 and counts["tlp"] == 2
    assert first[-1] == 0.5 and second[-1] == 0.25
    assert len(second) == len(FLOW_COLUMNS) + 1


def test_flows_without_counters_or_state_get_empty_fields():
    probe = FlowProbe(stand_in_flow(sender=SimpleNamespace(), cc=SimpleNamespace()), 1e6,
                      ("alpha",))
    row = probe(0.1, 0.1)
    fixed = len(FLOW_COLUMNS) - len(FLOW_COUNTERS)
    assert all(math.isnan(v) for v in row[fixed:])
    assert flow_counters(stand_in_flow()) is None and flow_state(stand_in_flow()) == {}


def test_state_columns_are_the_union_in_order_and_never_shadow_a_fixed_column():
    bbr = SimpleNamespace(cc=SimpleNamespace(report=lambda: {"btlbw_bps": 1.0, "min_rtt_s": 0.1}))
    dctcp = SimpleNamespace(cc=SimpleNamespace(report=lambda: {"alpha": 0.1, "rtt_ms": 3.0}))
    reno = SimpleNamespace(cc=SimpleNamespace())
    columns = state_columns([bbr, reno, dctcp, bbr])
    assert columns == {"btlbw_bps": "btlbw_bps", "min_rtt_s": "min_rtt_s", "alpha": "alpha",
                       STATE_PREFIX + "rtt_ms": "rtt_ms"}
