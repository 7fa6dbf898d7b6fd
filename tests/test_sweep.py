"""Parameter sweeps: validation, parallel and sequential runs, resume, Dask, the example sweeps."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from initializer import main
from netsim import sweep as sweep_module
from netsim.sweep import SweepError, load_sweep, run_sweep

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = sorted((ROOT / "experiments").glob("*.json"))

SMALL = {
    "name": "small", "topology": "lossy_link", "duration_s": 2,
    "parameters": {"links.L1.impairments.H1->H2.loss_rate": [0.005, 0.01, 0.02],
                   "flows.F1.data_mb": [None]},
    "seeds": 2,
    "metrics": ["flows.F1.goodput_mbps", "flows.F1.retransmissions", "jain_index",
                "mean_queue_delay_ms", "power"],
    "plots": [{"file": "goodput.png", "x": "links.L1.impairments.H1->H2.loss_rate",
               "y": "flows.F1.goodput_mbps", "logx": True}],
}


def write(tmp_path, data, name="sweep.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def rows_of(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def comparable(rows):
    return [{k: v for k, v in row.items() if k != "wall_time_s"} for row in rows]


def test_expansion_cross_and_zip(tmp_path):
    sweep = load_sweep(write(tmp_path, dict(SMALL, plots=[], parameters={
        "links.L1.delay_ms": [5, 10], "flows.*.algorithm": ["reno", "cubic", "bbr"]})))
    assert len(sweep.points()) == 6 and len(sweep.runs()) == 12
    zipped = load_sweep(write(tmp_path, dict(SMALL, combine="zip", plots=[], parameters={
        "links.L1.delay_ms": [5, 10], "flows.*.algorithm": ["reno", "cubic"]}), "z.json"))
    assert [dict(p) for p in zipped.points()] == [
        {"links.L1.delay_ms": 5, "flows.*.algorithm": "reno"},
        {"links.L1.delay_ms": 10, "flows.*.algorithm": "cubic"}]
    # a one-value parameter is a fixed override under zip too (it was refused: "needs equally
    # many values"), in every point
    fixed = load_sweep(write(tmp_path, dict(SMALL, combine="zip", plots=[], parameters={
        "links.L1.delay_ms": [5, 10, 20], "flows.*.algorithm": ["cubic"]}), "f.json"))
    assert [dict(p) for p in fixed.points()] == [
        {"links.L1.delay_ms": d, "flows.*.algorithm": "cubic"} for d in (5, 10, 20)]
    assert len(fixed.runs()) == 3 * len(fixed.seeds)


def test_ranges_linear_and_log(tmp_path):
    sweep = load_sweep(write(tmp_path, dict(SMALL, parameters={
        "links.L1.delay_ms": {"from": 1, "to": 100, "num": 3, "scale": "log"},
        "links.L1.buffer_kb": {"from": 100, "to": 300, "num": 3}}, plots=[])))
    assert sweep.values["links.L1.delay_ms"] == pytest.approx([1, 10, 100])
    assert sweep.values["links.L1.buffer_kb"] == pytest.approx([100, 200, 300])


@pytest.mark.parametrize("change, message", [
    ({"parameters": {"links.L9.delay_ms": [1]}}, 'no link "L9" (did you mean "L1"?)'),
    ({"parameters": {"nodes.H1.x": [1]}}, 'cannot vary "nodes"'),
    ({"parameters": {"links.L1.delay_ms": [-5]}}, 'links.L1.delay_ms = -5'),
    ({"parameters": {"links.L1.delay_ms": []}}, "expected at least one value"),
    ({"parameters": {"links.L1.delay_ms": {"from": 1, "to": 2}}}, 'a range needs numbers'),
    ({"parameters": {"flows.*.algorithm": ["rneo"]}}, 'unknown algorithm "rneo"'),
    ({"metrics": ["flows.F1.goodput_mpbs"]}, 'unknown flow metric "goodput_mpbs" (did you mean "goodput_mbps"?)'),
    ({"metrics": ["throughput"]}, 'unknown metric "throughput"'),
    ({"seeds": 0}, 'field "seeds"'),
    ({"combine": "zip", "parameters": {"links.L1.delay_ms": [1, 2],
                                       "flows.*.algorithm": ["reno", "cubic", "bbr"]}},
     '"zip" needs equally many values, or one'),
    ({"topology": "lossy_lnk"}, 'no file or preset "lossy_lnk" (did you mean "lossy_link"?)'),
    ({"plots": [{"file": "a.png", "x": "links.L1.delay_ms", "y": "flows.F1.goodput_mbps"}]},
     'is not a swept parameter'),
    ({"plots": [{"file": "a.png", "x": "flows.F1.data_mb", "y": "total_goodput_mbps"}]},
     '"total_goodput_mbps" is not a collected metric'),
    ({"sweeep": 1}, 'unknown field "sweeep"'),
])
def test_bad_sweep_files_exit_2_with_a_clear_message(tmp_path, capsys, change, message):
    data = dict(SMALL, **change)
    if "parameters" in change and "plots" not in change:
        data["plots"] = []
    path = write(tmp_path, data)
    with pytest.raises(SweepError, match=None) as info:
        load_sweep(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_jsonpickle_tags_are_rejected(tmp_path):
    path = write(tmp_path, dict(SMALL, description={"py/object": "os.system"}))
    with pytest.raises(SweepError, match='jsonpickle tag "py/object"'):
        load_sweep(path)


def test_parallel_sweep_gives_the_rows_of_runs_done_one_by_one(tmp_path):
    sweep = load_sweep(write(tmp_path, SMALL))
    parallel = run_sweep(sweep, tmp_path / "par", jobs=2)
    run_sweep(sweep, tmp_path / "seq", jobs=1)
    assert len(parallel) == 6 and all(row["status"] == "ok" for row in parallel)
    assert comparable(rows_of(tmp_path / "par" / "results.csv")) == \
        comparable(rows_of(tmp_path / "seq" / "results.csv"))
    header = list(rows_of(tmp_path / "par" / "results.csv")[0])
    assert header == ["run_id", "point", "seed", "links.L1.impairments.H1->H2.loss_rate",
                      "flows.F1.data_mb", "flows.F1.goodput_mbps", "flows.F1.retransmissions",
                      "jain_index", "mean_queue_delay_ms", "power", "config_digest",
                      "wall_time_s", "status", "error"]
    assert b"\r" not in (tmp_path / "par" / "results.csv").read_bytes()     # LF line endings
    by_loss = {}
    for row in parallel:
        by_loss.setdefault(row["links.L1.impairments.H1->H2.loss_rate"], []).append(
            row["flows.F1.goodput_mbps"])
    means = [sum(v) / len(v) for _, v in sorted(by_loss.items())]
    assert means[0] > means[-1]                     # more loss, less goodput
    assert {row["seed"] for row in parallel} == {1, 2}


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(tmp_path, monkeypatch):
    sweep = load_sweep(write(tmp_path, SMALL))
    real = sweep_module.metric_values

    def flaky(record, metrics):
        if record["seed"] == 2:
            raise RuntimeError("boom")
        return real(record, metrics)
    monkeypatch.setattr(sweep_module, "metric_values", flaky)
    rows = run_sweep(sweep, tmp_path / "out", jobs=1)
    failed = [row for row in rows if row["status"] == "error"]
    assert len(rows) == 6 and len(failed) == 3
    assert all(row["error"] == "RuntimeError: boom" for row in failed)


def test_a_runs_topology_is_made_when_its_run_is_handed_out(tmp_path, monkeypatch):
    """A sweep's parent held a deep copy of the topology for every run it planned before the
    first began (0.35 MB per run of a k=12 fat tree)."""
    from netsim import sweep_execute
    sweep = load_sweep(write(tmp_path, SMALL))
    made, at_runs = [], []
    real_data, real_run = sweep_module.point_data, sweep_execute.run_one
    monkeypatch.setattr(sweep_module, "point_data",
                        lambda *args: made.append(1) or real_data(*args))
    monkeypatch.setattr(sweep_execute, "run_one",
                        lambda task: at_runs.append(len(made)) or real_run(task))
    rows = run_sweep(sweep, tmp_path / "out", jobs=1)
    assert len(rows) == 6 and at_runs == [1, 2, 3, 4, 5, 6]


def test_a_pool_is_handed_a_few_runs_ahead_of_its_workers(monkeypatch):
    from netsim import sweep_execute
    handed = []

    class Pool:                          # a pool whose runs finish at once, in order
        def __init__(self, **_):
            pass

        def submit(self, function, task):
            from concurrent.futures import Future
            handed.append(task)
            future = Future()
            future.set_result({"config_digest": task[1]})
            return future
    monkeypatch.setattr(sweep_execute, "_Pool", Pool)
    monkeypatch.setattr(sweep_execute, "_kill_workers", lambda pool: None)
    prepared = []
    tasks = [(None, f"d{i}") for i in range(20)]
    results = []
    with sweep_execute.StopSignals() as stop:
        for result in sweep_execute._execute_pool(
                tasks, 2, stop, lambda task: prepared.append(task) or task):
            # (the runs finished, and those handed out since: at most 2 per worker ahead)
            assert len(handed) <= len(results) + 2 * sweep_execute.AHEAD_PER_WORKER
            results.append(result)
    assert sorted(r["config_digest"] for r in results) == sorted(f"d{i}" for i in range(20))
    assert prepared == tasks and handed == tasks


def _as_csv(rows):
    return [{k: sweep_module.cell_text(v) for k, v in row.items()} for row in rows]


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_cli_sweep_writes_results_and_figures(tmp_path):
    path = write(tmp_path, SMALL)
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), "sweep", str(path),
                           "--jobs", "2", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "small: 6 runs of 6" in done.stdout and "0 failed" in done.stdout
    assert (tmp_path / "out" / "goodput.png").stat().st_size > 0
    assert json.loads((tmp_path / "out" / "sweep.json").read_text())["name"] == "small"


DASK_SCRIPT = """
import json, sys
from dask.distributed import LocalCluster
from netsim.sweep import load_sweep, run_sweep

if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        run_sweep(load_sweep(sys.argv[1]), sys.argv[2], scheduler=cluster.scheduler_address)
"""


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_dask_cluster_gives_the_same_rows_as_the_local_path(tmp_path):
    pytest.importorskip("dask.distributed", reason="the cluster extra: pip install -e .[cluster]")
    path = write(tmp_path, SMALL)
    script = tmp_path / "run_dask.py"
    script.write_text(DASK_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(path), str(tmp_path / "dask")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    run_sweep(load_sweep(path), tmp_path / "local", jobs=1)
    assert comparable(rows_of(tmp_path / "dask" / "results.csv")) == \
        comparable(rows_of(tmp_path / "local" / "results.csv"))


def _first_two(spec):
    """A parameter's first two values: of a list, a labelled list or a range."""
    if isinstance(spec, list):
        return spec[:2]
    if "values" in spec:
        return {"values": spec["values"][:2], "labels": spec["labels"][:2]}
    return dict(spec, num=2)


# the data-center sweep is a k=8 fat tree even when reduced (tests/test_dc_experiment.py runs a
# shorter one in the default suite)
HEAVY_EXPERIMENTS = {"dctcp_websearch", "fast_alpha", "aqm_bufferbloat",   # over 1 s each
                     "aqm_bufferbloat_bbr", "bufferbloat"}                  # on two cores


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in HEAVY_EXPERIMENTS
                                  else p for p in EXPERIMENTS], ids=lambda p: p.stem)
def test_example_sweep_reduced(tmp_path, path):
    """Each shipped example, cut to its first two values per parameter, one seed, short runs."""
    data = json.loads(path.read_text())
    data["parameters"] = {k: _first_two(v) for k, v in data["parameters"].items()}
    data["seeds"] = 1
    if data.get("duration_s"):
        data["duration_s"] = min(data["duration_s"], 3)
    data["topology"] = str(ROOT / "topologies" / f"{data['topology']}.json")
    plugins = [path.parent / plugin for plugin in data.pop("plugins", [])]   # as --plugin gives them
    sweep = load_sweep(write(tmp_path, data, path.name), plugins=plugins)
    rows = run_sweep(sweep, tmp_path / "out", jobs=2)
    assert rows and all(row["status"] == "ok" for row in rows), [r["error"] for r in rows]
    for metric in sweep.metrics:
        assert all(row[metric] is not None for row in rows), metric
