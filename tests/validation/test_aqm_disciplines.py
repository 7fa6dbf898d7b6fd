"""Validation of the queue disciplines (components/queues.py) against their sources.

* CoDel (RFC 8289): 4 CUBIC flows through a 10 Mb/s bottleneck with a 1000 KB buffer: drop-tail
  queues hundreds of ms; CoDel keeps the mean sojourn near its 5 ms target (<= 15 ms) with the
  link >= 85 % used.
* PIE (RFC 8033): the same load; the queueing delay settles near the 15 ms target.
* RED (Floyd & Jacobson 1993): 8 long-lived Reno flows: RED's averaged queue stays between
  min_kb and max_kb.
* FQ-CoDel (RFC 8290): CUBIC at 44 and 164 ms and BBR share the bottleneck with Jain >= 0.95, and
  a small transfer started later sees almost no queueing (drop-tail: hundreds of ms).
* Every algorithm delivers every byte in order through every discipline: the stress matrix
  (tests/validation/test_stress_matrix.py).

Each steady-state measure is taken after 5 s (10 s for fairness), from links.csv / flows.csv.
"""
from __future__ import annotations

import numpy as np

from components.queues import Red
from netsim import check_conservation

from networks import dumbbell, run, steady_goodput_bps

DATA = "R1->R2"


def sojourn_ms(results, after_s):
    t, v = results.trace("links", "L", "sojourn_ms", direction=DATA)
    keep = (t > after_s) & ~np.isnan(v)
    return float(np.mean(v[keep]))


def utilization(results, after_s):
    t, v = results.trace("links", "L", "rate_mbps", direction=DATA)
    return float(np.mean(v[t > after_s])) / 10.0


def four_cubic(queue, algorithm="cubic"):
    return run(dumbbell(4, algorithm=algorithm, duration_s=20, start_s=[0, 0.1, 0.2, 0.3],
                        access_jitter_ms=1.0,
                        bottleneck_extra={"queue": queue} if queue else None))


def test_codel_removes_the_standing_queue():
    droptail = four_cubic(None)
    codel = four_cubic({"discipline": "codel"})
    assert sojourn_ms(droptail, 5) > 300              # measured 669 ms
    assert sojourn_ms(codel, 5) <= 15                 # measured 9.2 ms (target 5 ms)
    assert utilization(codel, 5) >= 0.85              # measured 1.00
    d = codel.summary["links"]["L"]["directions"][DATA]
    assert d["aqm_drops"] > 0 and d["drops"] == 0


def test_pie_settles_near_its_target():
    pie = four_cubic({"discipline": "pie"})
    assert 10 <= sojourn_ms(pie, 5) <= 22             # measured 15.3 ms (target 15 ms)
    assert utilization(pie, 5) >= 0.85


def test_red_average_queue_between_the_thresholds(monkeypatch):
    """RED's own average (the EWMA it decides on), recorded at each arrival after 5 s."""
    averages: dict = {}
    average = Red._average

    def recorded(self, now):
        avg = average(self, now)
        if now > 5:
            averages.setdefault(self, []).append(avg)
        return avg
    monkeypatch.setattr(Red, "_average", recorded)
    red = run(dumbbell(8, algorithm="reno", duration_s=20, start_s=[0.1 * i for i in range(8)],
                       access_jitter_ms=1.0,
                       bottleneck_extra={"queue": {"discipline": "red", "min_kb": 30,
                                                   "max_kb": 90}}))
    averages = averages[red.network.links["L"].directions[0].transmitter]
    mean_kb, low_kb, high_kb = (x / 1000 for x in (np.mean(averages), np.percentile(averages, 5),
                                                 np.percentile(averages, 95)))
    assert 30 <= mean_kb <= 90 and 25 <= low_kb and high_kb <= 90, (mean_kb, low_kb, high_kb)
    d = red.summary["links"]["L"]["directions"][DATA]
    assert d["aqm_drops"] > 0 and d["drops"] == 0


def mixed(queue):
    return run(dumbbell(4, algorithm=["cubic", "cubic", "bbr", "reno"],
                        access_delay_ms=[6, 36, 6, 6], duration_s=30, start_s=[0, 0, 0, 15],
                        data_mb=[None, None, None, 0.05], access_jitter_ms=1.0,
                        bottleneck_extra={"queue": queue} if queue else None))


def test_fq_codel_isolates_flows():
    fq = mixed({"discipline": "fq_codel"})
    goodput = [steady_goodput_bps(fq, f"F{i}", 10) for i in range(3)]
    jain = sum(goodput) ** 2 / (3 * sum(g * g for g in goodput))
    assert jain >= 0.95, goodput                      # measured 0.996
    small = fq.summary["flows"]["F3"]
    assert small["in_order"]
    base_ms = 2 * (10 + 2 * 6) + 2.0                 # propagation + about 2 ms of transmissions
    assert small["avg_rtt_ms"] - base_ms < 20         # measured 14 ms (its own slow start)
    droptail = mixed(None).summary["flows"]["F3"]
    assert droptail["avg_rtt_ms"] - base_ms > 300     # measured 604 ms


def test_ecn_flows_are_marked_not_dropped():
    """CoDel with "ecn": true marks ECN-capable CUBIC flows instead of dropping them (RFC 3168
    §5), and DCTCP through step marking at K = 30 KB keeps the queue near K (24 ms at 10 Mb/s)."""
    def ecn_run(queue, algorithm):
        topology = dumbbell(4, algorithm=algorithm, duration_s=15, start_s=[0, 0.1, 0.2, 0.3],
                            access_jitter_ms=1.0, bottleneck_extra={"queue": queue})
        for flow in topology["flows"]:
            flow["ecn"] = True
        results = run(topology)
        return results.summary["links"]["L"]["directions"][DATA], results
    codel, results = ecn_run({"discipline": "codel", "ecn": True}, "cubic")
    assert codel["marks"] > 0 and codel["aqm_drops"] == 0 and codel["drops"] == 0   # 368 marks
    assert codel["avg_sojourn_ms"] <= 15 and codel["utilization"] >= 0.85         # 12.8 ms, 0.99
    assert sum(f["ecn_reactions"] for f in results.summary["flows"].values()) > 0
    step, _ = ecn_run({"discipline": "step", "k_kb": 30}, "dctcp")
    assert step["marks"] > 0 and step["drops"] == 0 and step["utilization"] >= 0.95
    assert 15 <= step["avg_sojourn_ms"] <= 30                                       # 23.7 ms


def test_half_duplex_link_with_a_discipline_conserves_packets():
    topology = dumbbell(2, algorithm="reno", data_mb=0.5, bottleneck_extra={
        "queue": {"discipline": "fq_codel"}, "duplex": "half", "buffer_kb": 50})
    results = run(topology)
    assert results.summary["stop_reason"] == "completed"
    assert all(f["in_order"] and f["completed"] for f in results.summary["flows"].values())
    assert check_conservation(results.network) == []
