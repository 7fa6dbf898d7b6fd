"""check.* sweep metrics: their names are checked before anything runs; on runs too short for
them, a clear message in the row, not an IndexError (netsim/sweep.py, `compute_metrics`); a
metric a run cannot give blanks its cell only; `check.max_error_pct` has no value when nothing
was compared (0 read as perfect agreement), and `check.compared` says how many were."""
from __future__ import annotations

import re

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


LINK_ROWS = [
    {"kind": "link", "id": "L1 H1->H2", "quantity": "backlog_kb", "predicted": [2.0, 4.0],
     "simulated": 3.0, "error_pct": 0.0},
    {"kind": "link", "id": "L2+L3", "quantity": "backlog_kb", "predicted": 1.0,
     "simulated": 1.5, "error_pct": 50.0},
    {"kind": "flow", "id": "F2", "quantity": "rate_mbps", "predicted": None, "simulated": 4.0,
     "error_pct": None, "no_model": "the link, not random loss, sets its rate"},
]


def test_a_link_is_named_as_its_row_or_alone_when_it_has_one_row():
    """check.json names a full-duplex link's row by its direction ("L1 H1->H2") and links the
    model ties together by "+": a plain link id found nothing, the row's name was refused."""
    got = compute_metrics(record([{"rows": LINK_ROWS}]), [
        "check.0.L1 H1->H2.backlog_kb.predicted_high", "check.0.L1.backlog_kb.predicted_low",
        "check.0.L3.backlog_kb.error_pct", "check.0.L2+L3.backlog_kb.simulated"])
    assert got == {"check.0.L1 H1->H2.backlog_kb.predicted_high": 4.0,
                   "check.0.L1.backlog_kb.predicted_low": 2.0,
                   "check.0.L3.backlog_kb.error_pct": 50.0,
                   "check.0.L2+L3.backlog_kb.simulated": 1.5}
    both = LINK_ROWS + [dict(LINK_ROWS[0], id="L1 H2->H1")]
    with pytest.raises(MetricUnavailable) as caught:
        compute_metrics(record([{"rows": both}]), ["check.0.L1.backlog_kb.simulated"])
    assert str(caught.value) == (
        "check.0.L1.backlog_kb.simulated: L1 has a backlog_kb row for each of 2 directions or "
        "groups; collect one: check.0.L1 H1->H2.backlog_kb.simulated, check.0.L1 H2->H1."
        "backlog_kb.simulated")
    with pytest.raises(MetricUnavailable, match=r"has no backlog_kb row for L9 \(it has L1 "
                                                r"H1->H2, L2\+L3\)"):
        compute_metrics(record([{"rows": LINK_ROWS}]), ["check.0.L9.backlog_kb.simulated"])


def test_a_row_without_a_model_gives_its_reason_and_its_simulated_value():
    rows = record([{"rows": LINK_ROWS}])
    assert compute_metrics(rows, ["check.0.F2.rate_mbps.simulated"]) == \
        {"check.0.F2.rate_mbps.simulated": 4.0}
    with pytest.raises(MetricUnavailable) as caught:
        compute_metrics(rows, ["check.0.F2.rate_mbps.predicted"])
    assert str(caught.value) == ("check.0.F2.rate_mbps.predicted: no model: the link, not "
                                 "random loss, sets its rate")


@pytest.mark.parametrize("metric, message", [
    ("check.0.F1.backlog_kb.simulated", 'a flow has no "backlog_kb" row; its quantities: '
                                        "rate_mbps, queue_delay_ms"),
    ("check.0.L1.rate_mbps.simulated", 'a link has no "rate_mbps" row; its quantities: '
                                       "backlog_kb"),
    ("check.0.L1 H2->H9.backlog_kb.simulated", 'no flow or link "L1 H2->H9"'),
])
def test_names_a_run_can_never_give_are_refused(tmp_path, metric, message):
    import json

    from netsim.sweep import SweepError, load_sweep
    path = tmp_path / "s.json"
    data = {"name": "s", "topology": "lossy_link", "seeds": 1,
            "parameters": {"flows.F1.data_mb": [1]}, "metrics": [metric]}
    path.write_text(json.dumps(data))
    with pytest.raises(SweepError, match=re.escape(message)):
        load_sweep(path)
    path.write_text(json.dumps(dict(data, metrics=["check.0.L1 H1->H2.backlog_kb.simulated",
                                                   "check.0.L1.backlog_kb.simulated"])))
    load_sweep(path)


def test_a_link_row_without_a_sample_has_no_value(root):
    """An interval too short to compare: the flows' rows had no value, the links' read 0."""
    from netsim import load_topology, simulate
    from theory.check import compare, predict_run
    spec = load_topology(root / "topologies" / "parking_lot.json", algorithm="vegas")
    with simulate(spec, duration_s=0.5, seed=1) as results:
        report = compare(results, predict_run(spec, results))
    links = [row for iv in report["intervals"] for row in iv["rows"] if row["kind"] == "link"]
    assert links and all(row["simulated"] is None for row in links)
