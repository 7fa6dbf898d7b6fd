"""A sweep directory and a single run's results directory each refuse the other, and neither
goes inside a results directory (netsim/results_dir.py; docs/outputs.md, "Bounds and rules")."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TC0 = ROOT / "topologies" / "test_case_0.json"


def sweep_file(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"topology": "test_case_0", "parameters": {"flows.F1.data_mb": [0.1]},
                                "duration_s": 0.5, "metrics": ["end_time_s"]}))
    return path


def refused_either_way(run_cli, tmp_path, out, stderr: str) -> None:
    """A sweep into `out` is refused, with and without --force, with exactly `stderr`."""
    for force in ([], ["--force"]):
        done = run_cli("sweep", sweep_file(tmp_path), "--out", out, "--quiet", *force)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr == stderr


def test_a_sweep_refuses_a_single_runs_results_directory(tmp_path, run_cli):
    out = tmp_path / "r"
    assert run_cli(TC0, "--duration", "0.5", "--no-plots", "--quiet", "--out", out).returncode == 0
    before = sorted(p.name for p in out.iterdir())
    refused_either_way(run_cli, tmp_path, out, (
        f"error: --out {out}: is the results directory of a single run (it holds summary.json), "
        f"not a sweep directory; use another --out\n"))
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_sweep_refuses_a_directory_of_something_else(tmp_path, run_cli):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep")
    done = run_cli("sweep", sweep_file(tmp_path), "--out", out, "--quiet", "--force")
    assert done.returncode == 2
    assert "exists, is not empty and holds no sweep" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_sweep_whose_runs_is_a_link_elsewhere_is_refused(tmp_path, run_cli):
    """A finished sweep removes the records it no longer needs from runs/: through a symbolic
    link it deleted a file of the user's in the directory linked to, and two sweeps linked to
    one runs/ deleted each other's records (acceptance test Z9)."""
    out = tmp_path / "sw"
    assert run_cli("sweep", sweep_file(tmp_path), "--out", out, "--quiet").returncode == 0
    elsewhere = tmp_path / "bigdisk"
    (out / "runs").rename(elsewhere)
    (out / "runs").symlink_to(elsewhere)
    mine = elsewhere / ("0" * 64 + ".json")
    mine.write_text('{"mine": 1}')
    before = sorted(p.name for p in elsewhere.iterdir())
    refused_either_way(run_cli, tmp_path, out, (
        f"error: --out {out}: its runs is a symbolic link, not a directory; the sweep keeps its "
        f"run records, and removes those it no longer needs, in a runs/ directory of its own\n"))
    assert sorted(p.name for p in elsewhere.iterdir()) == before


def test_a_single_run_refuses_a_sweep_directory(tmp_path, run_cli):
    out = tmp_path / "sw"
    done = run_cli("sweep", sweep_file(tmp_path), "--out", out, "--quiet", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    before = sorted(p.name for p in out.iterdir())
    done = run_cli(TC0, "--duration", "0.5", "--no-plots", "--quiet", "--out", out)
    assert done.returncode == 2
    assert done.stderr == (f"error: --out: {out} is a sweep directory (it holds sweep.json), not "
                           f"the results directory of a single run; choose another directory\n")
    assert sorted(p.name for p in out.iterdir()) == before


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_nothing_goes_inside_a_results_directory(tmp_path, run_cli, kind):
    out = tmp_path / "r"
    assert run_cli(TC0, "--duration", "0.5", "--no-plots", "--quiet", "--out", out).returncode == 0
    inner = out / "inner"
    if kind == "run":
        done = run_cli(TC0, "--duration", "0.5", "--no-plots", "--quiet", "--out", inner)
    else:
        done = run_cli("sweep", sweep_file(tmp_path), "--out", inner, "--quiet")
    assert done.returncode == 2
    assert f"inside the netsim results directory {out}" in done.stderr
    assert not inner.exists()


def test_names_like_staging_directories_are_refused(tmp_path, run_cli):
    data = json.loads(TC0.read_text())
    data["name"] = ".x.partial-99999-abc"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--no-plots", "--quiet", cwd=tmp_path)
    assert done.returncode == 2
    assert 'field "name": expected a plain file name (not starting with ".")' in done.stderr
