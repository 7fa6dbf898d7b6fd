"""DCTCP against its analysis (Alizadeh et al., "Data Center TCP", SIGCOMM 2010; "Analysis of
DCTCP: Stability, Convergence, and Fairness", SIGMETRICS 2011).

N = 2 long-lived DCTCP flows share a 100 Mb/s bottleneck (base RTT 3 ms: C·RTT = 36.6 packets of
1024 B) whose queue marks CE on arrival above K = 20 packets (K >= C·RTT / 7 = 5.2, the paper's
bound for full throughput). The sawtooth analysis (g small, synchronized flows) predicts:

* the window at which the queue reaches K: W* = (C·RTT + K) / N = 28.3 packets;
* steady-state alpha ~ sqrt(2 / W*) = 0.266 (tolerance here: 20 %);
* the queue's peak Q_max = K + N = 22 packets (tolerance: +2);
* the queue's oscillation amplitude A = (1/2) sqrt(2 N (C·RTT + K)) = 7.5 packets, compared with
  the 5th-95th percentile spread of the queue seen by arriving packets (tolerance: 50 %);
* full throughput (utilization >= 90 %) with no drops, the queue near K.

Measured (seed 1): utilization 0.998, no drops, alpha 0.279, queue 15/18/21 packets at the
5th/50th/95th percentile, peak 22. The first test marks with `step_marking` (a stand-in for the
``step`` queue discipline that records the queue each arrival sees); `test_with_the_step_discipline`
runs the same network through the real ``step`` discipline (components/queues.py): utilization
0.996, no drops, average queue 19.1 packets (K = 20), no retransmissions.
"""
from __future__ import annotations

import math

import pytest

from flows.dctcp import Dctcp

from .conftest import dumbbell, run
from .step_marking import step_discipline_available, step_marking

N, RATE_MBPS, DELAY_MS, ACCESS_MS, K = 2, 100.0, 1.0, 0.25, 20
SETTLE_S = 1.0


def _network(duration_s=5.0):
    topology = dumbbell(N, rate_mbps=RATE_MBPS, delay_ms=DELAY_MS, access_delay_ms=ACCESS_MS,
                        buffer_kb=1000.0, algorithm="dctcp", duration_s=duration_s,
                        name="dctcp_validation")
    for flow in topology["flows"]:
        flow["ecn"] = True
    return topology


def _predictions():
    base_rtt_s = 2 * (DELAY_MS + 2 * ACCESS_MS) / 1e3
    bdp = RATE_MBPS * 1e6 / 8 / 1024 * base_rtt_s
    w_star = (bdp + K) / N
    return bdp, w_star, math.sqrt(2 / w_star), 0.5 * math.sqrt(2 * N * (bdp + K))


def _alphas(monkeypatch):
    seen = []
    original = Dctcp.ecn_ack

    def ecn_ack(self, acked, ece):
        updates = self.alpha_updates
        original(self, acked, ece)
        if self.alpha_updates != updates and self.flow.sim.now > SETTLE_S:
            seen.append(self.alpha)

    monkeypatch.setattr(Dctcp, "ecn_ack", ecn_ack)
    return seen


def test_dctcp_full_throughput_queue_near_k_and_alpha(monkeypatch):
    bdp, _w_star, alpha_pred, amplitude_pred = _predictions()
    assert K >= bdp / 7
    marking = step_marking(monkeypatch, "R1->R2", K)
    alphas = _alphas(monkeypatch)
    summary = run(_network()).summary
    link = summary["links"]["L"]["directions"]["R1->R2"]
    assert link["utilization"] >= 0.90
    assert link["drops"] == 0
    for flow in summary["flows"].values():
        assert flow["retransmissions"] == 0 and flow["ecn_reactions"] > 0
    alpha = sum(alphas) / len(alphas)
    assert alpha == pytest.approx(alpha_pred, rel=0.20)
    queue = sorted(q for t, q in marking.samples if t > SETTLE_S)
    p5, p50, p95 = (queue[int(f * (len(queue) - 1))] for f in (0.05, 0.5, 0.95))
    assert abs(p50 - K) <= 5                                   # near K
    assert queue[-1] <= K + N + 2                              # Q_max = K + N
    assert (p95 - p5) == pytest.approx(amplitude_pred, rel=0.5)


@pytest.mark.skipif(not step_discipline_available(),
                    reason="the step queue discipline has not landed yet")
def test_with_the_step_discipline():
    topology = _network(duration_s=3.0)
    bottleneck = topology["links"][0]
    bottleneck["queue"] = {"discipline": "step", "k_kb": K * 1.024}
    summary = run(topology).summary
    link = summary["links"]["L"]["directions"]["R1->R2"]
    assert link["utilization"] >= 0.90 and link["drops"] == 0
    assert link["avg_buffer_pkts"] <= K + N + 2
