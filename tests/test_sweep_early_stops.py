"""A sweep's run that stopped at a bound (stop_reason "limit" or "stalled") before its duration
is kept, its values being those of a shorter run, and said so: the error cell of its row in
results.csv starts with "stopped early", the command warns once per such run, and the figures'
footnotes count them. Before, two runs of a workload that hit its limit at 2.6 and 3.3 s of 6
were averaged with full-length runs with status ok, no warning and no note (a single run warns)."""
from __future__ import annotations

from types import SimpleNamespace

from netsim.sweep import _row
from plot_tool.schema import STOPPED_EARLY
from plot_tool.sweep_data import footnote, plot_data


def record(stop_reason: str, end_time_s: float, detail: str) -> dict:
    return {"summary": {"flows": {}, "end_time_s": end_time_s, "stop_reason": stop_reason,
                        "stop_detail": detail}}


def row_of(rec: dict) -> dict:
    sweep = SimpleNamespace(metrics=["end_time_s"], cell=lambda param, value: value)
    run = SimpleNamespace(run_id="p0001-s1", point=1, seed=1, params=(), digest="d" * 64)
    return _row(sweep, run, {"status": "ok", "error": "", "record": rec, "wall_time_s": 0.1})


def test_a_run_stopped_at_a_bound_says_so_in_its_row():
    row = row_of(record("limit", 3.3217725, "stopped at a bound: workload W: 50 workload flows "
                                            "in progress at once"))
    assert row["status"] == "ok" and row["end_time_s"] == 3.3217725
    assert row["error"] == ("stopped early at t=3.32177 s (stopped at a bound: workload W: 50 "
                            "workload flows in progress at once)")
    stalled = row_of(record("stalled", 12.0, "stall guard: no flow made progress for 10 s"))
    assert stalled["error"].startswith(f"{STOPPED_EARLY} at t=12 s (stall guard: ")
    for reason in ("duration", "completed"):
        assert row_of(record(reason, 6.0, "simulated time reached 6 s"))["error"] == ""


def test_the_footnote_counts_the_runs_that_stopped_early():
    rows = [{"run_id": f"r{i}", "status": "ok", "x": "1", "y": str(10 + i),
             "error": "stopped early at t=2 s (stopped at a bound: ...)" if i < 2 else ""}
            for i in range(4)]
    data = plot_data({"file": "f.png", "x": "x", "y": "y"}, rows)
    assert ("2 runs stopped early at a bound (limit or stall) and counted as far as they went "
            "(results.csv's error column says where)") in data.footnote
    assert "1 run stopped early at a bound (limit or stall) and counted as far as it went" in \
        footnote(0, 4, 0, "y", "std", early=1)
    assert "stopped early" not in footnote(0, 4, 0, "y", "std")
