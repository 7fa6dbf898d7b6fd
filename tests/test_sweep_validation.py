"""A sweep's points are judged before any run (docs/sweeps.md): what would stop a run -- no end,
a sampling interval too fine for a run of known length -- is one line naming the sweep file, the
point and the sweep's own settings, exit 2. The same check, worded for its caller, stops a
single run (`netsim.run.run_problem`)."""
from __future__ import annotations

import csv
import json

import pytest

from netsim.run import RunError, run_problem, simulate
from netsim.sweep import RECORDS_DIR
from topologies.loader import load_topology


def sweep_file(tmp_path, **fields):
    data = {"topology": "lossy_link", "metrics": ["flows.F1.goodput_mbps"], "seeds": 1, **fields}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    return path


def test_an_endless_point_without_a_duration_is_refused_before_any_run(tmp_path, run_cli):
    path = sweep_file(tmp_path, parameters={"flows.F1.data_mb": [1, None]})
    done = run_cli("sweep", path, "--jobs", "1", "--no-plots", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr == (f"error: {path}: parameters (flows.F1.data_mb = null): flow F1 has "
                           f"no data_mb, so nothing ends the run: set duration_s in the sweep "
                           f"file\n")
    assert not (tmp_path / "out").exists()


def test_an_interval_too_fine_for_a_run_of_known_length_is_refused_up_front(tmp_path, run_cli):
    path = sweep_file(tmp_path, duration_s=100000, interval_s=0.001,
                      parameters={"flows.F1.data_mb": [None]})
    done = run_cli("sweep", path, "--jobs", "1", "--no-plots", "--out", tmp_path / "out")
    assert done.returncode == 2
    line = done.stderr.strip()
    assert "\n" not in line
    assert line.startswith(f"error: {path}: parameters (flows.F1.data_mb = null): interval_s: "
                           f"0.001 s over a 100000 s run whose")
    assert line.endswith("use an interval of at least 0.025 s")
    assert not (tmp_path / "out").exists()


def test_a_duration_that_caps_completing_flows_does_not_refuse_a_fine_interval(tmp_path,
                                                                               run_cli):
    """0.2 MB end the run long before the 100000 s that would make 0.001 s too fine: it runs,
    sampled every 0.001 s, and ends when the flow completes."""
    path = sweep_file(tmp_path, duration_s=100000, interval_s=0.001,
                      parameters={"flows.F1.data_mb": [0.2]})
    done = run_cli("sweep", path, "--jobs", "1", "--no-plots", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "out" / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["status"], r["error"]) for r in rows] == [("ok", "")]
    assert float(rows[0]["flows.F1.goodput_mbps"]) > 0
    record = json.loads((tmp_path / "out" / RECORDS_DIR / f"{rows[0]['config_digest']}.json")
                        .read_text())
    summary = record["summary"]
    assert summary["interval_s"] == 0.001
    assert summary["stop_reason"] == "completed" and summary["flows"]["F1"]["completed"]
    assert summary["end_time_s"] < 10


def endless(**extra) -> dict:
    return {"hosts": ["H1", "H2"], **extra,
            "links": [{"id": "L", "ends": ["H1", "H2"], "rate_mbps": 1, "delay_ms": 1,
                       "buffer_kb": 10}],
            "flows": [{"id": "F", "src": "H1", "dst": "H2", "data_mb": None}]}


@pytest.mark.parametrize("caller, remedy", [
    ("cli", "set duration_s in the file or pass --duration"),
    ("api", "set duration_s in the topology or pass duration_s"),
    ("sweep", "set duration_s in the sweep file")])
def test_the_remedy_fits_the_caller(caller, remedy):
    spec = load_topology(endless())
    assert run_problem(spec, None, 0.1, caller) == (
        f"<dict>: flow F has no data_mb, so nothing ends the run: {remedy}")


@pytest.mark.parametrize("caller, prefix", [("cli", "--duration"), ("api", "duration_s")])
def test_the_duration_is_named_one_way_per_caller(caller, prefix):
    spec = load_topology(endless())
    for value in (1e-10, float("inf")):
        assert run_problem(spec, value, 0.1, caller).startswith(f"{prefix}: expected a time ")


def test_the_api_says_duration_s(tmp_path):
    with pytest.raises(RunError, match=r"pass duration_s$"):
        simulate(load_topology(endless()))


def with_workload(**extra) -> dict:
    data = endless(**extra)
    data["flows"][0]["data_mb"] = 1
    data["workloads"] = [{"id": "W", "src": ["H1"], "dst": ["H2"], "arrivals_per_s": 10,
                          "sizes": "websearch"}]
    return data


def test_a_workload_without_a_duration_names_the_file_and_the_workload(tmp_path, run_cli):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(with_workload()))
    done = run_cli(path, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert done.stderr == (f'error: {path}: workloads[0] "W": the workload opens flows without '
                           f"end, so nothing ends the run: set duration_s in the file or pass "
                           f"--duration\n")
    assert not (tmp_path / "r").exists()


def test_a_sweep_point_with_a_workload_and_no_duration_is_refused_before_any_run(tmp_path,
                                                                                 run_cli):
    topology = tmp_path / "w.json"
    topology.write_text(json.dumps(with_workload()))
    path = sweep_file(tmp_path, topology=str(topology), metrics=["workloads.W.flows_started"],
                      parameters={"workloads.W.arrivals_per_s": [10, 20]})
    done = run_cli("sweep", path, "--jobs", "1", "--no-plots", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr == (f'error: {path}: parameters (workloads.W.arrivals_per_s = 10): '
                           f'workloads[0] "W": the workload opens flows without end, so nothing '
                           f"ends the run: set duration_s in the sweep file\n")
    assert not (tmp_path / "out").exists()
