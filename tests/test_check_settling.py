"""--check judges an interval only when its flows had the settling time (--check-settle) and one
sampling interval more: a shorter interval gets a "not settled" row, never an error counted
against --check-tolerance (a DCTCP flow still in slow start in a 1 s interval had shown 57 %)."""
from __future__ import annotations

from netsim.run import simulate
from theory.check import compare, predict_run
from theory.check_report import format_report
from topologies.loader import load_topology


def dumbbell(start2_s: float) -> dict:
    """Two DCTCP flows over a 10 Mb/s, 20 ms step-marking bottleneck (K = 20 kB); the second
    joins at `start2_s`, so [0, start2_s] is an interval of its own."""
    def link(link_id, a, b, **extra):
        return dict({"id": link_id, "ends": [a, b], "rate_mbps": 100, "delay_ms": 1,
                     "buffer_kb": 200}, **extra)
    return {"units": "si", "hosts": ["S1", "S2", "T1", "T2"], "routers": ["R1", "R2"],
            "links": [link("LS1", "S1", "R1"), link("LS2", "S2", "R1"),
                      link("LB", "R1", "R2", rate_mbps=10, delay_ms=20, buffer_kb=60,
                           queue={"discipline": "step", "k_kb": 20}),
                      link("LT1", "R2", "T1"), link("LT2", "R2", "T2")],
            "flows": [{"id": "F1", "src": "S1", "dst": "T1", "algorithm": "dctcp", "ecn": True},
                      {"id": "F2", "src": "S2", "dst": "T2", "algorithm": "dctcp", "ecn": True,
                       "start_s": start2_s}],
            "duration_s": 12}


def intervals(report):
    return {(iv["start_s"], iv["end_s"]): iv["rows"] for iv in report["intervals"]}


def test_an_interval_shorter_than_the_settling_time_is_not_judged():
    spec = load_topology(dumbbell(1.0))
    results = simulate(spec)
    report = compare(results, predict_run(spec, results), settle_s=2.0)
    first, second = sorted(intervals(report))
    assert first == (0.0, 1.0)
    assert all(row["error_pct"] is None and "may not have settled" in row["no_model"]
               for row in intervals(report)[first])
    judged = [row["error_pct"] for row in intervals(report)[second]
              if row["error_pct"] is not None]
    assert judged and report["max_error_pct"] == max(judged)    # the first counts for nothing


def test_a_shorter_settling_time_judges_the_short_interval():
    spec = load_topology(dumbbell(1.0))
    results = simulate(spec)
    report = compare(results, predict_run(spec, results), settle_s=0.5)
    first = sorted(intervals(report))[0]
    assert any(row["error_pct"] is not None for row in intervals(report)[first])


def test_the_boundary_is_the_settling_time_plus_one_sampling_interval():
    """[0, 1] s with 0.1 s samples: judged after 0.9 s of settling, not after 0.95 s."""
    spec = load_topology(dumbbell(1.0))
    results = simulate(spec)
    assert results.summary["interval_s"] == 0.1
    for settle_s, judged in ((0.9, True), (0.95, False)):
        report = compare(results, predict_run(spec, results), settle_s=settle_s)
        rows = intervals(report)[(0.0, 1.0)]
        assert any(row["error_pct"] is not None for row in rows) is judged, settle_s


def test_the_console_says_the_short_interval_was_not_compared():
    spec = load_topology(dumbbell(1.0))
    results = simulate(spec)
    text = format_report(compare(results, predict_run(spec, results), settle_s=2.0,
                                 tolerance_pct=50.0))
    assert "[0 s, 1 s] active: F1 (not compared: see the reasons below)" in text
    assert "[1 s, 12 s] active: F1, F2 (compared 3-12 s)" in text
    assert ("  1. the interval is not one sampling interval (0.1 s) longer than the settling "
            "time (2 s, --check-settle): its flows may not have settled") in text
    assert text.endswith("% tolerance (1 row outside every model's regime not counted: see the "
                         "reasons above)")
