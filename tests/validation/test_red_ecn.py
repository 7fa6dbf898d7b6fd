"""ECN through RED (RFC 3168; Floyd 1994, "TCP and Explicit Congestion Notification"): Reno flows
that mark instead of losing keep the goodput they have without ECN, with a small fraction of
the retransmissions.

Four Reno flows share a 10 Mb/s bottleneck (base RTT ~26 ms) whose RED queue has min 30 KB,
max 90 KB, gentle, max_p 0.1 and a 300 KB buffer (Linux `tc-red`'s example thresholds). RED with
ECN still drops where its average is above `max_kb` (RFC 3168 §7), which happens once: in the
slow-start overshoot of the first second, when the instantaneous queue runs ahead of the
average. After that a run with ECN loses nothing, while without ECN every congestion signal is
a loss. Measured (seed 1, 30 s): goodput 9.71 Mb/s with ECN, 9.31 Mb/s without; 165 against
402 retransmissions over the run, all of the ECN ones in the overshoot (a loss in the window an
ECN reaction already halved does not halve it again, RFC 3168 §6.1.2); after 2 s 0 losses
against about 200.
"""
from __future__ import annotations

import pytest

from networks import dumbbell, run

SETTLE_S = 2.0


def _run(ecn: bool):
    queue = {"discipline": "red", "min_kb": 30, "max_kb": 90, "ecn": ecn}
    topology = dumbbell(4, rate_mbps=10, delay_ms=10, buffer_kb=300, algorithm="reno",
                        duration_s=30.0, bottleneck_extra={"queue": queue}, access_jitter_ms=1.0,
                        name="red_ecn")
    for flow in topology["flows"]:
        flow["ecn"] = ecn
    results = run(topology)
    times, aqm = results.trace("links", "L", "aqm_drops", "R1->R2")
    _, overflow = results.trace("links", "L", "drops", "R1->R2")
    late_losses = float((aqm + overflow)[times > SETTLE_S].sum())
    return results.summary, late_losses


@pytest.fixture(scope="module")
def runs():
    return {ecn: _run(ecn) for ecn in (False, True)}


def _totals(summary):
    flows = summary["flows"].values()
    return (sum(f["retransmissions"] for f in flows), sum(f["ecn_reactions"] for f in flows),
            summary["links"]["L"]["directions"]["R1->R2"])


def test_ecn_keeps_the_goodput(runs):
    goodput = {ecn: sum(f["goodput_mbps"] for f in runs[ecn][0]["flows"].values())
               for ecn in runs}
    assert goodput[False] >= 9.3                              # of 10 Mb/s
    assert goodput[True] >= 0.99 * goodput[False]
    for ecn in runs:
        assert all(f["in_order"] for f in runs[ecn][0]["flows"].values())


def test_ecn_replaces_losses_by_marks(runs):
    plain_retx, plain_reactions, plain_link = _totals(runs[False][0])
    ecn_retx, ecn_reactions, ecn_link = _totals(runs[True][0])
    assert plain_link["marks"] == 0 and plain_reactions == 0
    assert ecn_link["marks"] > 100 and ecn_reactions > 20
    assert ecn_retx <= 0.45 * plain_retx                      # over the whole run
    # after slow start: no loss at all with ECN, hundreds without
    assert runs[True][1] == 0
    assert runs[False][1] >= 100


def test_red_keeps_its_average_between_the_thresholds_with_ecn(runs):
    summary, _ = runs[True]
    link = summary["links"]["L"]["directions"]["R1->R2"]
    assert link["drops"] == 0                                 # the buffer never overflows
    assert 10.0 <= link["avg_sojourn_ms"] <= 80.0             # 30-90 KB at 10 Mb/s: 24-72 ms


def test_docs_model_quotes_these_runs(runs, quoted):
    """docs/model.md ("Validation of ECN with RED") gives these runs' figures."""
    goodput = {ecn: sum(f["goodput_mbps"] for f in runs[ecn][0]["flows"].values())
               for ecn in runs}
    (figures,) = quoted(r"the goodput is the same \((\d+\.\d\d) against (\d+\.\d\d) Mb/s\) with "
                        r"(\d+) retransmissions against (\d+),.* about \d+ packets without "
                        r"\((\d+)\)", "docs/model.md")
    assert figures == (round(goodput[True], 2), round(goodput[False], 2),
                       _totals(runs[True][0])[0], _totals(runs[False][0])[0], runs[False][1])
