"""Stress matrix: every registered algorithm completes a short transfer over impaired links.

For every algorithm in `flows.ALGORITHMS` (collected at import time, so a newly registered one
joins automatically) a 200 KB flow crosses one link H1 -- H2 whose impairments apply to both
directions, so data packets and ACKs alike are lost, duplicated, held back and jittered:

  a. 1 Mb/s, 10 ms, every packet duplicated (duplicate_rate 1.0)
  b. 10 Mb/s, 10 ms, half the packets held back 20 ms (reorder_rate 0.5) and 10 % lost
  c. 10 Mb/s, 10 ms, 50 % loss (a round trip succeeds one time in four)
  d. 10 Mb/s, 10 ms, 25 % duplication and up to 5 ms of jitter (50 % of the delay)
  e. 5 Mb/s, 10 ms, 5 % each of loss, duplication and reordering (20 ms), and 5 ms of jitter

The same short transfer also crosses every queue discipline (RED, CoDel, FQ-CoDel, PIE, step;
drop-tail is the matrix above) with 1 % loss and 2 ms of jitter, for every algorithm, with ECN
off and on (the discipline marking, the flow ECN-capable; DCTCP only with ECN).

Every run must end with every flow completed (stop_reason "completed", not the stall guard or a
duration), deliver every byte exactly once and in order, and conserve packets
(`netsim.check_conservation`). Default transport (RFC 6298 timer: minimum RTO 1 s, maximum
60 s): 50 % loss backs the timer off for a long simulated time, but with few events.
"""
from __future__ import annotations

import pytest

from flows import ALGORITHMS
from netsim import check_conservation

from networks import run, two_hosts

DATA_MB = 0.2
SEED = 1

SCENARIOS = {
    "a_duplicate_all": (1.0, {"duplicate_rate": 1.0}),
    "b_reorder_half_loss_10": (10.0, {"reorder_rate": 0.5, "reorder_delay_ms": 20, "loss_rate": 0.1}),
    "c_loss_50": (10.0, {"loss_rate": 0.5}),
    "d_duplicate_25_jitter": (10.0, {"duplicate_rate": 0.25, "jitter_ms": 5}),
    "e_everything_5": (5.0, {"loss_rate": 0.05, "duplicate_rate": 0.05, "reorder_rate": 0.05,
                             "reorder_delay_ms": 20, "jitter_ms": 5}),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_flow_completes_in_order_over_impaired_link(algorithm, scenario):
    rate_mbps, impairment = SCENARIOS[scenario]
    topology = two_hosts(rate_mbps=rate_mbps, delay_ms=10.0, buffer_kb=100.0, impairment=impairment,
                         algorithm=algorithm, data_mb=DATA_MB, seed=SEED,
                         name=f"stress_{scenario}_{algorithm}")
    if ALGORITHMS[algorithm].requires_ecn:
        topology["flows"][0]["ecn"] = True       # DCTCP requires ECN
    _check_run(topology, impairment)


# ECN and delayed ACKs on: the receiver's delayed and immediate ACKs, the ECN echo and CWR must
# still deliver every byte in order over the same impairments (scenarios b and e: loss,
# reordering, duplication and jitter together).
@pytest.mark.parametrize("scenario", ["b_reorder_half_loss_10", "e_everything_5"])
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_flow_completes_in_order_with_ecn_and_delayed_acks(algorithm, scenario):
    rate_mbps, impairment = SCENARIOS[scenario]
    topology = two_hosts(rate_mbps=rate_mbps, delay_ms=10.0, buffer_kb=100.0, impairment=impairment,
                         algorithm=algorithm, data_mb=DATA_MB, seed=SEED,
                         name=f"stress_ecn_dack_{scenario}_{algorithm}")
    topology["flows"][0].update({"ecn": True, "delayed_ack": True})
    _check_run(topology, impairment)


def _check_run(topology, impairment):
    results = run(topology)
    summary = results.summary
    flow = summary["flows"]["F1"]
    assert summary["stop_reason"] == "completed", summary["stop_detail"]
    assert flow["completed"] and flow["in_order"]
    assert flow["delivered_bytes"] == flow["data_bytes"] == 200_000
    assert check_conservation(results.network) == []
    # the impairments really happened, in both directions (data H1->H2, ACKs H2->H1)
    for label in ("H1->H2", "H2->H1"):
        d = summary["links"]["L"]["directions"][label]
        if "loss_rate" in impairment:
            assert d["impairment_drops"] > 0, label
        if "duplicate_rate" in impairment:
            assert d["duplicated"] > 0, label
        if "reorder_rate" in impairment:
            assert d["reordered"] > 0, label


QUEUES = {
    "red": {"discipline": "red", "min_kb": 5, "max_kb": 15},
    "codel": {"discipline": "codel"},
    "fq_codel": {"discipline": "fq_codel"},
    "pie": {"discipline": "pie"},
    "step": {"discipline": "step", "k_kb": 10},
}
DISCIPLINE_CASES = [(algorithm, queue, ecn) for algorithm in sorted(ALGORITHMS)
                    for queue in sorted(QUEUES) for ecn in (False, True)
                    if ecn or not ALGORITHMS[algorithm].requires_ecn]


@pytest.mark.parametrize("algorithm, queue, ecn", DISCIPLINE_CASES)
def test_flow_completes_in_order_through_every_discipline(algorithm, queue, ecn):
    impairment = {"loss_rate": 0.01, "jitter_ms": 2}
    topology = two_hosts(rate_mbps=10.0, delay_ms=10.0, buffer_kb=30.0, impairment=impairment,
                         algorithm=algorithm, data_mb=DATA_MB, seed=SEED,
                         name=f"stress_{queue}_{algorithm}_{'ecn' if ecn else 'noecn'}")
    topology["links"][0]["queue"] = dict(QUEUES[queue], **({} if queue == "step" else {"ecn": ecn}))
    topology["flows"][0]["ecn"] = ecn
    _check_run(topology, {})         # (1 % of ~200 ACKs may lose none: not asserted)
