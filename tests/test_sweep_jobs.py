"""A sweep's number of worker processes (``--jobs N``, `run_sweep(jobs=N)`): None (every core)
or an integer >= 1, one rule and one line for both (`netsim.sweep.jobs_problem`), checked
before anything is written. Before (acceptance test z17, finding 4) `run_sweep` took jobs=0 for
"every core" where the command refused --jobs 0, jobs=-3 failed in concurrent.futures and
jobs="2" in a comparison, each after writing sweep.json and results.csv to a new directory."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from netsim.sweep import jobs_problem, load_sweep, run_sweep


def _sweep_file(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"name": "jobs", "topology": "lossy_link", "duration_s": 0.2,
                                "seeds": 1, "parameters": {"links.L1.delay_ms": [5]},
                                "metrics": ["flows.F1.goodput_mbps"]}))
    return path


@pytest.mark.parametrize("jobs, message", [
    (0, "--jobs: expected a number of processes >= 1, got 0"),
    (-3, "--jobs: expected a number of processes >= 1, got -3"),
    ("2", "--jobs: expected a number of processes >= 1, got '2'"),
    (2.0, "--jobs: expected a number of processes >= 1, got 2.0"),
    (True, "--jobs: expected a number of processes >= 1, got True"),
])
def test_run_sweep_refuses_bad_jobs_before_writing_anything(tmp_path, jobs, message):
    assert jobs_problem(jobs) == message
    with pytest.raises(ValueError) as raised:
        run_sweep(load_sweep(_sweep_file(tmp_path)), tmp_path / "out", jobs=jobs)
    assert str(raised.value) == message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("jobs", [None, 1, 64, np.int64(2)])
def test_none_and_counts_of_processes_are_taken(jobs):
    assert jobs_problem(jobs) is None


def test_jobs_one_runs(tmp_path):
    rows = run_sweep(load_sweep(_sweep_file(tmp_path)), tmp_path / "out", jobs=np.int64(1))
    assert [row["status"] for row in rows] == ["ok"]


@pytest.mark.parametrize("value, shown", [("0", "0"), ("-3", "-3")])
def test_the_command_refuses_the_same_values_in_the_same_words(tmp_path, run_cli, value, shown):
    done = run_cli("sweep", _sweep_file(tmp_path), "--jobs", value, "--out", tmp_path / "out",
                   "--quiet", "--no-plots")
    assert (done.returncode, done.stderr) == (
        2, f"error: --jobs: expected a number of processes >= 1, got {shown}\n")
    assert not (tmp_path / "out").exists()
