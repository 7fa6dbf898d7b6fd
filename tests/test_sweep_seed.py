"""A run's seed comes from the sweep's `seeds` only (docs/sweeps.md): `seed` is not a parameter,
so results.csv has one seed column, the seed each run used; and no other column name repeats
(a metric is listed once)."""
from __future__ import annotations

import csv
import json

import pytest


def sweep_file(tmp_path, **fields):
    data = {"topology": "lossy_link", "metrics": ["flows.F1.goodput_mbps"], "seeds": 1,
            "duration_s": 1, **fields}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("parameters", [{"seed": [1, 2]}, {"seed": [7]}, {"seed.x": [1]}])
def test_seed_as_a_parameter_is_refused_pointing_to_seeds(tmp_path, run_cli, parameters):
    path = sweep_file(tmp_path, parameters=parameters)
    done = run_cli("sweep", path, "--jobs", "1", "--no-plots", "--out", tmp_path / "out")
    assert done.returncode == 2
    name = next(iter(parameters))
    assert done.stderr == (f'error: {path}: parameters: "{name}": the seed of each run comes '
                           f'from the sweep\'s "seeds" (a count, or a list such as [1, 2]): '
                           f"give the seeds there\n")
    assert not (tmp_path / "out").exists()


def test_seeds_give_each_run_its_seed_in_one_column(tmp_path, run_cli):
    path = sweep_file(tmp_path, seeds=[1, 2], parameters={"flows.F1.data_mb": [0.2]})
    done = run_cli("sweep", path, "--jobs", "1", "--no-plots", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "out" / "results.csv", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [dict(zip(header, row)) for row in reader]
    assert len(header) == len(set(header)) and header.count("seed") == 1
    assert [row["seed"] for row in rows] == ["1", "2"]
    # a 1 % random-loss link: the two seeds are two different runs
    assert rows[0]["flows.F1.goodput_mbps"] != rows[1]["flows.F1.goodput_mbps"]


def test_a_metric_listed_twice_is_refused_so_no_column_name_repeats(tmp_path, run_cli):
    path = sweep_file(tmp_path, parameters={"flows.F1.data_mb": [0.2]},
                      metrics=["flows.F1.goodput_mbps", "power", "flows.F1.goodput_mbps"])
    done = run_cli("sweep", path, "--jobs", "1", "--no-plots", "--out", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr == (f'error: {path}: field "metrics[2]": metric "flows.F1.goodput_mbps" '
                           f"is already listed\n")
    assert not (tmp_path / "out").exists()
