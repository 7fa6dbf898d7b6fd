"""Where BBR's fair-share model holds in `--check` (`theory.check_rows._bbr_unfair`): besides
an overflowing bottleneck and RTprops more than 1.5 apart, a flow crossing several saturated
links (a parking lot: BBR v1 keeps about an RTprop of queue per flow at each, so the long flow
got 1.4 Mb/s against a max-min share of 5, steadily for 35 s), and a flow whose RTprop estimate
took a standing queue for propagation (after a join: its inflight cap, 2 x BtlBw x RTprop, too
large; 28 % off the fair share and a mean queue twice the bound)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
from networks import link

from netsim.run import simulate
from theory.check import compare, predict_run
from theory.check_rows import _bbr_unfair
from topologies.loader import load_topology


class QuietWindow:
    """No drops, and no RTprop estimate (a model without a spec skips that test)."""

    def link_sum(self, link, column, direction):
        return 0.0

    def flow_mean(self, fid, column):
        return None


def test_a_flow_across_several_saturated_links_leaves_the_fair_share_model():
    # L1 20, L2 10, L3 30 Mb/s; F0 over all three, F1 over L1, F2 over L2, F3 over L3: max-min
    # 5/15/5/25 saturates every link
    resources = [SimpleNamespace(id=f"L{i} R{i}->R{i + 1}", link=f"L{i}", directions=("x",))
                 for i in (1, 2, 3)]
    model = SimpleNamespace(resources=resources, spec=None)
    load = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]], dtype=float)
    capacity = np.array([20.0, 10.0, 30.0])
    used = capacity.copy()
    fids = ["F0", "F1", "F2", "F3"]
    rtprop = dict.fromkeys(fids, 0.025)
    unfair, unbounded = _bbr_unfair(None, model, fids, load, used, capacity, rtprop,
                                    QuietWindow(), load)
    assert set(unfair) == set(fids) and unbounded == {}
    assert unfair["F3"] == (
        "F0 crosses 3 saturated links (L1 R1->R2 and L2 R2->R3): each BBR v1 flow keeps about "
        "an RTprop of its own queue at its bottleneck, so a flow with several queues on its path "
        "gets less than its max-min share and the flows beside it more (the fair-share model is "
        "of one bottleneck per flow)")
    # one flow over equal links in tandem: one constraint (tied), one queue, the model holds
    alone = np.array([[1], [1], [0]], dtype=float)
    assert _bbr_unfair(None, model, ["F0"], alone, np.array([10.0, 10.0, 0.0]),
                       np.array([10.0, 10.0, 30.0]), {"F0": 0.025}, QuietWindow(),
                       alone) == ({}, {})
    # one bottleneck per flow (F0 over L1 only): the model holds
    single = np.array([[1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float)
    assert _bbr_unfair(None, model, fids, single, used, capacity, rtprop, QuietWindow(),
                       single) == ({}, {})


def joined() -> dict:
    """BBR F1 alone over a 20 Mb/s, 10 ms bottleneck, F2 from 10 s: F1's RTprop filter expires
    at 10 s and samples again over F2's startup queue (30.6 against 24.86 ms)."""
    return {"units": "si", "packet_bytes": {"data": 1500, "ack": 40},
            "transport": {"initial_cwnd_pkts": 10, "min_rto_s": 1},
            "hosts": ["S1", "T1", "S2", "T2"], "routers": ["R1", "R2"],
            "links": [link("LB", "R1", "R2", 20, 10, 500), link("LS1", "S1", "R1"),
                      link("LT1", "R2", "T1"), link("LS2", "S2", "R1"), link("LT2", "R2", "T2")],
            "flows": [{"id": "F1", "src": "S1", "dst": "T1", "algorithm": "bbr"},
                      {"id": "F2", "src": "S2", "dst": "T2", "algorithm": "bbr", "start_s": 10}],
            "duration_s": 16}


def test_a_stale_rtprop_estimate_leaves_the_model_rates_and_queue_bound():
    spec = load_topology(joined())
    results = simulate(spec)
    report = compare(results, predict_run(spec, results), settle_s=2.0)
    first, second = report["intervals"]
    assert all(row["error_pct"] is not None for row in first["rows"])     # F1 alone: compared
    assert [row["quantity"] for row in second["rows"]] == ["rate_mbps", "rate_mbps", "backlog_kb"]
    reasons = {row["no_model"] for row in second["rows"]}
    assert len(reasons) == 1
    reason = reasons.pop()
    assert reason.startswith("F1's RTprop estimate averaged 30.6 ms in the compared window, its "
                             "path 24.86 ms: its RTprop filter took a standing queue for "
                             "propagation")
    json.dumps(report)                                 # (check.json: plain data)
