"""check.* sweep metrics on runs too short for them: a clear message in the row, not an
IndexError (netsim/sweep.py, `compute_metrics`)."""
from __future__ import annotations

import pytest

from netsim.sweep import MetricUnavailable, compute_metrics


def record(intervals):
    return {"summary": {"flows": {}}, "check": {"max_error_pct": 3.0, "intervals": intervals}}


ROW = {"id": "F1", "quantity": "rate_mbps", "predicted": 5.0, "simulated": 4.9, "error_pct": 2.0}


def test_an_interval_the_run_did_not_reach_is_a_clear_message():
    metric = "check.3.F1.rate_mbps.error_pct"
    with pytest.raises(MetricUnavailable) as caught:
        compute_metrics(record([{"rows": [ROW]}, {"rows": [ROW]}]), [metric])
    assert str(caught.value) == (f"{metric}: the run's --check comparison has only intervals 0 "
                                 f"to 1 (the run is too short for interval 3: lengthen "
                                 f"duration_s, or collect an earlier interval)")
    with pytest.raises(MetricUnavailable, match="has no interval long enough to compare"):
        compute_metrics(record([]), [metric])
    assert compute_metrics(record([{"rows": [ROW]}]), ["check.0.F1.rate_mbps.error_pct"]) == \
        {"check.0.F1.rate_mbps.error_pct": 2.0}


def test_a_sweep_row_records_the_message(tmp_path):
    from netsim.sweep import PlannedRun, _row

    class FakeSweep:
        metrics = ("check.5.F1.rate_mbps.simulated",)

        def cell(self, path, value):
            return value

    run = PlannedRun("p0000-s1-x", 0, 1, (), "d" * 64)
    row = _row(FakeSweep(), run, {"status": "ok", "error": "", "wall_time_s": 0.1,
                                  "record": record([{"rows": [ROW]}])})
    assert row["status"] == "error"
    assert row["error"].startswith("MetricUnavailable: check.5.F1.rate_mbps.simulated: the run's "
                                   "--check comparison has only intervals 0 to 0")
