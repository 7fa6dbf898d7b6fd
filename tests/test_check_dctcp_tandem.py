"""`--check` for DCTCP on equal-rate links in tandem: the queue forms at the first saturated link
along the path, where the flows' packets arrive faster than it drains; a link whose every flow
arrives through a saturated link of the same or a lower rate holds no standing queue, so it is
compared with [0, one data packet per such upstream link] (`inputs.paced_by`: the
nearest saturated link before it on each flow's path), not with the
sawtooth (before, both downstream links of a k = 4 fat tree's chain showed 96.9 % errors).

The chain: S0, S1 -- R1 == L1 == R2 == L2 == R3 == L3 == T, access links 1 Gb/s, L1..L3 at
100 Mb/s with step marking at 20 kB (or L3 at 50 Mb/s: then L3 is the one bottleneck); two DCTCP
flows S_i -> T.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from netsim.run import simulate
from theory.check import compare, predict_run
from theory.check_rows import paced_upstream
from topologies.loader import load_topology

PACKET_KB = 1.024
SETTLE_S = 0.5


def chain(last_mbps=100.0, duration_s=1.0) -> dict:
    step = {"discipline": "step", "k_kb": 20}

    def link(link_id, a, b, rate, delay_ms, **extra):
        return dict({"id": link_id, "ends": [a, b], "rate_mbps": rate, "delay_ms": delay_ms,
                     "buffer_kb": 200}, **extra)
    return {"units": "si", "hosts": ["S0", "S1", "T"], "routers": ["R1", "R2", "R3"],
            "links": [link("A0", "S0", "R1", 1000, 0.25), link("A1", "S1", "R1", 1000, 0.25),
                      link("L1", "R1", "R2", 100, 0.5, queue=step),
                      link("L2", "R2", "R3", 100, 0.5, queue=step),
                      link("L3", "R3", "T", last_mbps, 0.25, queue=step)],
            "flows": [{"id": f"F{i}", "src": f"S{i}", "dst": "T", "algorithm": "dctcp",
                       "ecn": True} for i in range(2)],
            "duration_s": duration_s}


def link_rows(report) -> dict:
    return {row["id"]: row for iv in report["intervals"] for row in iv["rows"]
            if row["kind"] == "link"}


def test_only_the_first_of_equal_links_in_tandem_gets_the_sawtooth():
    spec = load_topology(chain())
    results = simulate(spec, interval_s=0.01)
    report = compare(results, predict_run(spec, results), settle_s=SETTLE_S)
    rows = link_rows(report)
    assert set(rows) == {"L1 R1->R2", "L2 R2->R3", "L3 R3->T"}
    low, high = rows["L1 R1->R2"]["predicted"]
    assert high == pytest.approx(20 + 2 * PACKET_KB) and low > 10 * PACKET_KB   # K + N, Q_min
    assert rows["L1 R1->R2"]["error_pct"] == 0.0 and rows["L1 R1->R2"]["simulated"] > 15.0
    for downstream, upstream in (("L2 R2->R3", "L1 R1->R2"), ("L3 R3->T", "L2 R2->R3")):
        row = rows[downstream]
        assert row["predicted"] == pytest.approx([0.0, PACKET_KB])
        assert row["inputs"] == {"paced_by": [upstream]}           # the nearest one upstream
        assert row["model"] == "dctcp" and row["error_pct"] == 0.0
        assert row["simulated"] < PACKET_KB
    assert report["max_error_pct"] < 5.0 and report["not_compared"] == 0


def test_a_slower_last_link_is_the_one_bottleneck():
    spec = load_topology(chain(last_mbps=50.0))
    results = simulate(spec, interval_s=0.01)
    report = compare(results, predict_run(spec, results), settle_s=SETTLE_S)
    rows = link_rows(report)
    assert set(rows) == {"L3 R3->T"}                # L1 and L2 are not saturated
    assert rows["L3 R3->T"]["predicted"][1] == pytest.approx(20 + 2 * PACKET_KB)
    assert rows["L3 R3->T"]["error_pct"] == 0.0 and "inputs" not in rows["L3 R3->T"]


class _Hop:
    def __init__(self, name):
        self.name = name


def test_paced_upstream_by_hand():
    """Resources 0 -> 1 -> 2 on flow A's data path, 3 -> 2 on B's: 2 is paced only when every
    flow reaching it passed a saturated resource no faster than it."""
    hops = {name: _Hop(name) for name in "abcd"}

    Model = SimpleNamespace(
        hop_resource={hops["a"]: 0, hops["b"]: 1, hops["c"]: 2, hops["d"]: 3},
        paths={"A": ([hops["a"], hops["b"], hops["c"]], []), "B": ([hops["d"], hops["c"]], [])})
    capacity = np.array([1.0, 1.0, 1.0, 2.0])
    saturated = np.array([True, True, True, True])
    assert paced_upstream(Model, ["A"], 2, saturated, capacity) == {"A": 1}    # the nearest
    assert paced_upstream(Model, ["A"], 0, saturated, capacity) is None        # the first
    assert paced_upstream(Model, ["A", "B"], 2, saturated, capacity) is None   # B's 3 is faster
    capacity[3] = 0.5
    assert paced_upstream(Model, ["A", "B"], 2, saturated, capacity) == {"A": 1, "B": 3}
    saturated[1] = False
    assert paced_upstream(Model, ["A", "B"], 2, saturated, capacity) == {"A": 0, "B": 3}


def parking_lot() -> dict:
    """L1 and L2 at 100 Mb/s in tandem, both marking at 20 kB: the long flow FL crosses both,
    F1 only L1, F2 only L2 (Alizadeh et al.'s analysis is of one bottleneck per flow)."""
    step = {"discipline": "step", "k_kb": 20}

    def link(link_id, a, b, rate, **extra):
        return dict({"id": link_id, "ends": [a, b], "rate_mbps": rate, "delay_ms": 0.25,
                     "buffer_kb": 200}, **extra)

    def flow(fid, src, dst):
        return {"id": fid, "src": src, "dst": dst, "algorithm": "dctcp", "ecn": True}
    return {"units": "si", "hosts": ["SL", "S1", "S2", "T1", "T2", "TL"],
            "routers": ["R1", "R2", "R3"],
            "links": [link("AL", "SL", "R1", 1000), link("A1", "S1", "R1", 1000),
                      link("A2", "S2", "R2", 1000), link("B1", "R2", "T1", 1000),
                      link("BL", "R3", "TL", 1000), link("B2", "R3", "T2", 1000),
                      link("L1", "R1", "R2", 100, queue=step),
                      link("L2", "R2", "R3", 100, queue=step)],
            "flows": [flow("FL", "SL", "TL"), flow("F1", "S1", "T1"), flow("F2", "S2", "T2")],
            "duration_s": 1.0}


def test_a_flow_queueing_at_two_marking_bottlenecks_is_named_as_the_reason():
    spec = load_topology(parking_lot())
    results = simulate(spec, interval_s=0.01)
    report = compare(results, predict_run(spec, results), settle_s=SETTLE_S)
    reason = ("FL queues at 2 bottlenecks on its path (L1 R1->R2 and L2 R2->R3): DCTCP marks it "
              "at each, and the analysis (Alizadeh et al. 2010, Section 3.3) is of flows with "
              "one bottleneck")
    assert report["no_model_reasons"] == [reason]
    rows = {row["id"]: row for iv in report["intervals"] for row in iv["rows"]}
    assert {fid for fid, row in rows.items() if row.get("no_model") == reason} == {
        "FL", "F1", "F2", "L1 R1->R2", "L2 R2->R3"}
    # the long flow gets less than the max-min share of 50 Mb/s it would be predicted
    goodput = {fid: results.summary["flows"][fid]["goodput_mbps"] for fid in ("FL", "F1", "F2")}
    assert goodput["FL"] < 0.8 * min(goodput["F1"], goodput["F2"])
