"""The floor of a rate error's denominator (docs/outputs.md, "Errors"): a share of the flow's
own bottleneck, not of the fastest link in the topology. With 10 Gb/s access links the floor was
50 Mb/s, and a Tahoe flow of 0.8 Mb/s that ran 15 % below Padhye's rate was reported 0.25 % off
and passed a 5 % tolerance (acceptance test Z13)."""
from __future__ import annotations

import pytest
from networks import dumbbell

from netsim.run import simulate
from theory.check import RATE_FLOOR_FRACTION, compare, predict_run
from topologies.loader import load_topology


def rate_rows(access_rate_mbps):
    topology = dumbbell(1, rate_mbps=100, delay_ms=48, buffer_kb=2000, loss_rate=0.02,
                        algorithm="tahoe", access_rate_mbps=access_rate_mbps, duration_s=30,
                        transport={"min_rto_s": 1.0})
    spec = load_topology(topology)
    results = simulate(spec)
    report = compare(results, predict_run(spec, results), settle_s=2.0)
    return [row for iv in report["intervals"] for row in iv["rows"]
            if row["quantity"] == "rate_mbps" and row["error_pct"] is not None]


@pytest.mark.parametrize("access_rate_mbps", [1000, 10000])
def test_a_slow_flows_rate_error_is_its_own_whatever_the_fastest_link(access_rate_mbps):
    (row,) = rate_rows(access_rate_mbps)
    predicted, simulated = row["predicted"], row["simulated"]
    assert predicted > RATE_FLOOR_FRACTION * 100            # above its own bottleneck's floor
    assert predicted < RATE_FLOOR_FRACTION * access_rate_mbps   # below the fastest link's
    assert row["error_pct"] == pytest.approx(100 * abs(simulated - predicted) / predicted)
    assert row["error_pct"] > 5.0                           # Tahoe's known miss, now seen
