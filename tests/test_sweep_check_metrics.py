"""check.* sweep metrics: their names are checked before anything runs; on runs too short for
them, a clear message in the row, not an IndexError (netsim/sweep.py, `compute_metrics`); a
metric a run cannot give blanks its cell only; `check.max_error_pct` has no value when nothing
was compared (0 read as perfect agreement), and `check.compared` says how many were."""
from __future__ import annotations

import pytest

from netsim.sweep import MetricUnavailable, compute_metrics


def record(intervals, compared=1):
    return {"summary": {"flows": {}}, "check": {"max_error_pct": 3.0, "compared": compared,
                                                "intervals": intervals}}


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
    assert row["status"] == "ok" and row["check.5.F1.rate_mbps.simulated"] is None
    assert row["error"].startswith("check.5.F1.rate_mbps.simulated: the run's "
                                   "--check comparison has only intervals 0 to 0")


def test_a_metric_the_run_cannot_give_leaves_the_others_in_the_row():
    from netsim.sweep import PlannedRun, _row

    class FakeSweep:
        metrics = ("check.0.F1.rate_mbps.simulated", "check.4.F1.rate_mbps.simulated",
                   "check.compared")

        def cell(self, path, value):
            return value

    row = _row(FakeSweep(), PlannedRun("p0000-s1-x", 0, 1, (), "d" * 64),
               {"status": "ok", "error": "", "wall_time_s": 0.1,
                "record": record([{"rows": [ROW]}])})
    assert row["status"] == "ok"
    assert row["check.0.F1.rate_mbps.simulated"] == 4.9 and row["check.compared"] == 1
    assert row["check.4.F1.rate_mbps.simulated"] is None
    assert row["error"].startswith("check.4.F1.rate_mbps.simulated: the run's --check")


def test_nothing_compared_has_no_max_error():
    empty = record([], compared=0)
    assert compute_metrics(empty, ["check.compared"]) == {"check.compared": 0}
    with pytest.raises(MetricUnavailable, match="compared nothing"):
        compute_metrics(empty, ["check.max_error_pct"])


@pytest.mark.parametrize("metric, message", [
    ("check.max_eror_pct", 'expected check.max_error_pct, check.compared or check.<interval>'
                           '.<id>.<rate_mbps|queue_delay_ms|backlog_kb>.<predicted|simulated|'
                           'error_pct|predicted_low|predicted_high> (did you mean '
                           '"max_error_pct"?)'),
    ("check.x.F1.rate_mbps.simulated", 'the interval "x" is not a number (0, 1, ...)'),
    ("check.0.F9.rate_mbps.simulated", 'no flow or link "F9" (did you mean "F1"?)'),
    ("check.0.F1.rate.simulated", 'unknown quantity "rate" (did you mean "rate_mbps"?)'),
    ("check.0.F1.rate_mbps.simulted", 'unknown field "simulted" (did you mean "simulated"?)'),
    ("check.0.F1.rate_mbps", "expected check.max_error_pct, check.compared"),
])
def test_check_metric_names_are_checked_before_any_run(tmp_path, metric, message):
    import json

    from netsim.sweep import SweepError, load_sweep
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "s", "topology": "lossy_link", "seeds": 1,
                                "parameters": {"flows.F1.data_mb": [1]}, "metrics": [metric]}))
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    assert f'field "metrics": "{metric}": {message}' in str(caught.value)
    path.write_text(json.dumps({"name": "s", "topology": "lossy_link", "seeds": 1,
                                "parameters": {"flows.F1.data_mb": [1]},
                                "metrics": ["check.compared", "check.0.L1.backlog_kb.error_pct"]}))
    load_sweep(path)
