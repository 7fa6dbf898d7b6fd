"""Sweep resume: rows keyed by the run's configuration digest, metrics added from stored run
records, one sweep per results directory (--force), LF line endings."""
from __future__ import annotations

import csv
import json

import pytest

from initializer import main
from netsim import sweep_execute
from topologies.spec import config_digest
from netsim.sweep import (RECORDS_DIR, SweepConflict, load_sweep, plan, point_spec,
                              run_sweep)
from netsim.sweep_parameters import SweepError

LOSS = "links.L1.impairments.H1->H2.loss_rate"
SMALL = {
    "name": "resume", "topology": "lossy_link", "duration_s": 1,
    "parameters": {LOSS: [0.01, 0.02], "flows.F1.data_mb": [None]},
    "seeds": 2,
    "metrics": ["flows.F1.goodput_mbps"],
}


def write(tmp_path, data, name="sweep.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def rows_of(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def counted(monkeypatch):
    """The configuration digests run_one is asked to simulate (runs in this process: jobs=1)."""
    ran = []
    real = sweep_execute.run_one

    def spy(task):
        ran.append(task[1])
        return real(task)
    monkeypatch.setattr(sweep_execute, "run_one", spy)
    return ran


def test_rows_are_keyed_by_the_config_digest_of_the_run(tmp_path):
    sweep = load_sweep(write(tmp_path, SMALL))
    rows = run_sweep(sweep, tmp_path / "out", jobs=1)
    assert len(rows) == 4 and len({row["config_digest"] for row in rows}) == 4
    for row, (_, _, seed, point) in zip(rows, sweep.runs()):
        spec = point_spec(sweep, point)
        assert row["config_digest"] == config_digest(spec, duration_s=1.0, seed=seed,
                                                     interval_s=0.1)
        record = json.loads((tmp_path / "out" / RECORDS_DIR / f"{row['config_digest']}.json")
                            .read_text())
        # the run harness records the same digest in summary.json
        assert record["summary"]["config_digest"] == row["config_digest"]
        assert record["summary"]["flows"]["F1"]["goodput_mbps"] == row["flows.F1.goodput_mbps"]
    csv_rows = rows_of(tmp_path / "out" / "results.csv")
    assert [r["config_digest"] for r in csv_rows] == [r["config_digest"] for r in rows]
    assert b"\r" not in (tmp_path / "out" / "results.csv").read_bytes()


def test_resume_runs_nothing_when_nothing_changed(tmp_path, counted):
    path = write(tmp_path, SMALL)
    first = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    assert len(counted) == 4
    (tmp_path / "out" / "results.csv").write_text("run_id\n")        # a truncated results.csv
    again = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    assert len(counted) == 4                                          # records reused
    assert [r["flows.F1.goodput_mbps"] for r in again] == \
        [r["flows.F1.goodput_mbps"] for r in first]
    assert len(rows_of(tmp_path / "out" / "results.csv")) == 4


def test_resume_after_a_lost_record_reruns_that_run_only(tmp_path, counted):
    path = write(tmp_path, SMALL)
    first = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    lost = first[2]["config_digest"]
    (tmp_path / "out" / RECORDS_DIR / f"{lost}.json").unlink()
    counted.clear()
    again = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    assert counted == [lost]
    assert [{k: v for k, v in r.items() if k != "wall_time_s"} for r in again] == \
        [{k: v for k, v in r.items() if k != "wall_time_s"} for r in first]


@pytest.mark.parametrize("damage, logged", [
    (lambda r: r["summary"]["flows"]["F1"].update(goodput_mbps="fast"),
     'summary: flows.F1.goodput_mbps: expected a number, got "fast"'),
    (lambda r: r["summary"]["flows"]["F1"].update(goodput_mbps=float("nan")),
     "NaN is not strict JSON"),
    (lambda r: r["summary"].update(flows=[]), "summary: flows: expected an object, got a list"),
])
def test_a_damaged_record_is_run_again_with_a_warning(tmp_path, counted, caplog, damage, logged):
    path = write(tmp_path, SMALL)
    first = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    damaged = first[1]["config_digest"]
    record_path = tmp_path / "out" / RECORDS_DIR / f"{damaged}.json"
    record = json.loads(record_path.read_text())
    damage(record)
    record_path.write_text(json.dumps(record))
    counted.clear()
    again = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    assert counted == [damaged]
    assert [r["flows.F1.goodput_mbps"] for r in again] == \
        [r["flows.F1.goodput_mbps"] for r in first]
    assert [f"{record_path}: {logged}; the run is simulated again"] == [
        r.getMessage() for r in caplog.records if r.name == "netsim.sweep_store"]


def test_a_record_larger_than_any_netsim_writes_is_not_read(tmp_path, counted, caplog,
                                                             monkeypatch):
    """Past the bound (1 GiB; here made 100 bytes) a record is not read whole: run again."""
    import plot_tool.json_fields
    path = write(tmp_path, SMALL)
    first = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    record_path = tmp_path / "out" / RECORDS_DIR / f"{first[0]['config_digest']}.json"
    size = record_path.stat().st_size
    monkeypatch.setattr(plot_tool.json_fields, "MAX_JSON_BYTES", 100)
    counted.clear()
    run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    assert len(counted) == 4
    assert (f"{record_path}: {size} bytes, more than any run record netsim writes (at most 100 "
            f"are read); the run is simulated again") in [
        r.getMessage() for r in caplog.records if r.name == "netsim.sweep_store"]


def test_a_record_that_is_not_a_file_is_refused_in_one_line(tmp_path):
    path = write(tmp_path, SMALL)
    first = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    record_path = tmp_path / "out" / RECORDS_DIR / f"{first[0]['config_digest']}.json"
    record_path.unlink()
    record_path.mkdir()
    with pytest.raises(SweepError) as caught:
        run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    assert str(caught.value) == (f"{record_path}: not a run record netsim wrote (not a regular "
                                 f"file): move it, or give the sweep another --out")


def test_a_changed_duration_reruns_every_point(tmp_path, counted):
    path = write(tmp_path, SMALL)
    first = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    counted.clear()
    changed = run_sweep(load_sweep(write(tmp_path, dict(SMALL, duration_s=1.5))),
                        tmp_path / "out", jobs=1)
    assert len(counted) == 4
    assert {r["config_digest"] for r in changed}.isdisjoint(r["config_digest"] for r in first)
    fresh = run_sweep(load_sweep(write(tmp_path, dict(SMALL, duration_s=1.5), "fresh.json")),
                      tmp_path / "fresh", jobs=1)
    assert [r["flows.F1.goodput_mbps"] for r in changed] == \
        [r["flows.F1.goodput_mbps"] for r in fresh]
    # a complete sweep keeps only the records of its own runs
    assert sorted(p.stem for p in (tmp_path / "out" / RECORDS_DIR).glob("*.json")) == \
        sorted(r["config_digest"] for r in changed)


def test_a_changed_value_reruns_the_affected_points_only(tmp_path, counted):
    path = write(tmp_path, SMALL)
    first = run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    counted.clear()
    edited = dict(SMALL, parameters={LOSS: [0.01, 0.03], "flows.F1.data_mb": [None]})
    rows = run_sweep(load_sweep(write(tmp_path, edited)), tmp_path / "out", jobs=1)
    assert len(counted) == 2 and set(counted) == {r["config_digest"] for r in rows[2:]}
    assert rows[:2] == [dict(r, wall_time_s=rows[i]["wall_time_s"]) for i, r in
                        enumerate(first[:2])]
    assert [r[LOSS] for r in rows] == [0.01, 0.01, 0.03, 0.03]
    # a seed more: one more run per point
    counted.clear()
    run_sweep(load_sweep(write(tmp_path, dict(edited, seeds=3))), tmp_path / "out", jobs=1)
    assert len(counted) == 2


def test_a_metric_added_later_is_computed_from_the_stored_records(tmp_path, counted):
    path = write(tmp_path, SMALL)
    run_sweep(load_sweep(path), tmp_path / "out", jobs=1)
    counted.clear()
    more = dict(SMALL, metrics=["flows.F1.goodput_mbps", "flows.F1.retransmissions",
                                "links.L1.directions.H1->H2.impairment_drops",
                                "mean_queue_delay_ms", "jain_index"])
    rows = run_sweep(load_sweep(write(tmp_path, more)), tmp_path / "out", jobs=1)
    assert counted == []                                             # nothing re-run
    fresh = run_sweep(load_sweep(write(tmp_path, more, "fresh.json")), tmp_path / "fresh", jobs=1)
    assert [{k: v for k, v in r.items() if k != "wall_time_s"} for r in rows] == \
        [{k: v for k, v in r.items() if k != "wall_time_s"} for r in fresh]
    assert all(r["status"] == "ok" and r["flows.F1.retransmissions"] > 0 for r in rows)
    header = list(rows_of(tmp_path / "out" / "results.csv")[0])
    assert "flows.F1.retransmissions" in header and "mean_queue_delay_ms" in header


def test_a_check_metric_added_later_reruns(tmp_path, counted):
    """check.* values need the run's traces: a record made without them cannot give them."""
    fast = {"name": "fast", "topology": "test_case_0", "duration_s": 3,
            "parameters": {"algorithms.fast.alpha": [20]}, "metrics": ["total_goodput_mbps"]}
    run_sweep(load_sweep(write(tmp_path, fast)), tmp_path / "out", jobs=1)
    counted.clear()
    rows = run_sweep(load_sweep(write(tmp_path, dict(
        fast, metrics=["total_goodput_mbps", "check.compared"]))), tmp_path / "out", jobs=1)
    assert len(counted) == 1
    assert rows[0]["status"] == "ok" and isinstance(rows[0]["check.compared"], int)


def test_a_different_sweep_is_not_written_over_an_earlier_one(tmp_path, capsys):
    path = write(tmp_path, SMALL)
    out = tmp_path / "out"
    first = run_sweep(load_sweep(path), out, jobs=1)
    before = (out / "results.csv").read_bytes()
    other = dict(SMALL, name="other", parameters={"links.L1.delay_ms": [5],
                                                   "flows.F1.data_mb": [None]}, seeds=1)
    other_path = write(tmp_path, other, "other.json")
    with pytest.raises(SweepConflict, match="--force"):
        run_sweep(load_sweep(other_path), out, jobs=1)
    assert main(["sweep", str(other_path), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error: ") and 'holds the sweep "resume"' in err and "--force" in err
    assert (out / "results.csv").read_bytes() == before                 # untouched
    assert len(list((out / RECORDS_DIR).glob("*.json"))) == len(first)
    # --force replaces it: one sweep in the directory, none of the first one's records
    assert main(["sweep", str(other_path), "--out", str(out), "--quiet", "--force"]) == 0
    rows = rows_of(out / "results.csv")
    assert len(rows) == 1 and rows[0]["links.L1.delay_ms"] == "5"
    assert [p.stem for p in (out / RECORDS_DIR).glob("*.json")] == [rows[0]["config_digest"]]
    assert json.loads((out / "sweep.json").read_text())["name"] == "other"


def test_a_results_csv_of_unknown_origin_is_not_overwritten(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SweepConflict, match="unknown sweep"):
        run_sweep(load_sweep(write(tmp_path, SMALL)), out, jobs=1)
    assert (out / "results.csv").read_text() == "a,b\n1,2\n"


def test_identical_configurations_run_once(tmp_path, counted):
    """Two points that resolve to the same configuration (a value equal to the topology's) are
    one simulation, recorded in both rows."""
    data = dict(SMALL, parameters={"links.L1.delay_ms": [10, 10.0], "flows.F1.data_mb": [None]},
                seeds=1)
    counts: dict = {}
    rows = run_sweep(load_sweep(write(tmp_path, data)), tmp_path / "out", jobs=1, counts=counts)
    assert len(counted) == 1 and rows[0]["config_digest"] == rows[1]["config_digest"]
    assert rows[0]["flows.F1.goodput_mbps"] == rows[1]["flows.F1.goodput_mbps"]
    assert [r.run_id for r in plan(load_sweep(write(tmp_path, data)))] == \
        [r["run_id"] for r in rows]
    assert counts == {"reused": 0, "simulated": 1, "rows_now": 2, "other_code": 0}     # (it said 2 simulated)


def test_check_metrics_of_an_interval_prediction_name_its_ends():
    """A Vegas prediction is an interval: "predicted" is refused (it used to be the low end,
    silently); predicted_low and predicted_high give the ends."""
    from netsim.sweep import compute_metrics
    report = {"max_error_pct": 3.0, "compared": 2, "intervals": [{"rows": [
        {"id": "L1", "quantity": "backlog_kb", "predicted": [2.5, 4.0], "simulated": 3.0,
         "error_pct": 0.0},
        {"id": "F1", "quantity": "rate_mbps", "predicted": 5.0, "simulated": 4.9,
         "error_pct": 2.0}]}]}
    record = {"summary": {"flows": {}}, "check": report}
    got = compute_metrics(record, ["check.0.L1.backlog_kb.predicted_low",
                                   "check.0.L1.backlog_kb.predicted_high",
                                   "check.0.F1.rate_mbps.predicted",
                                   "check.0.F1.rate_mbps.predicted_low", "check.max_error_pct"])
    assert got == {"check.0.L1.backlog_kb.predicted_low": 2.5,
                   "check.0.L1.backlog_kb.predicted_high": 4.0,
                   "check.0.F1.rate_mbps.predicted": 5.0,
                   "check.0.F1.rate_mbps.predicted_low": 5.0, "check.max_error_pct": 3.0}
    with pytest.raises(KeyError, match=r"interval \[2.5, 4\] \(Vegas\); collect "
                                       r"check.0.L1.backlog_kb.predicted_low"):
        compute_metrics(record, ["check.0.L1.backlog_kb.predicted"])


def test_the_counts_and_the_final_line_say_what_was_reused(tmp_path, capsys):
    path = write(tmp_path, SMALL)
    counts: dict = {}
    run_sweep(load_sweep(path), tmp_path / "out", jobs=1, counts=counts)
    assert counts == {"reused": 0, "simulated": 4, "rows_now": 4, "other_code": 0}
    record = next((tmp_path / "out" / RECORDS_DIR).iterdir())
    record.unlink()
    counts.clear()
    run_sweep(load_sweep(path), tmp_path / "out", jobs=1, counts=counts)
    assert counts == {"reused": 3, "simulated": 1, "rows_now": 1, "other_code": 0}
    assert record.exists()                                   # simulated again
    assert main(["sweep", str(path), "--jobs", "1", "--no-plots", "--out",
                 str(tmp_path / "out")]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith(f"resume: 4 runs of 4 in {tmp_path / 'out'}/results.csv (0 simulated "
                           f"now, 4 reused from earlier; ")
