"""A sweep directory's sweep.json is checked where its readers (`report DIR`, the sweep figures)
read it: a damaged field is one line naming the file, the field and what was expected, exit 2,
never a traceback (plot_tool/sweep_data.py `check_sweep`)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SWEEP = {"name": "s", "topology": "lossy_link", "duration_s": 1, "seeds": 1,
         "parameters": {"links.L1.impairments.H1->H2.loss_rate": [0.001, 0.01]},
         "metrics": ["flows.F1.goodput_mbps"],
         "plots": [{"x": "links.L1.impairments.H1->H2.loss_rate", "y": "flows.F1.goodput_mbps",
                    "file": "goodput.png"}]}


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    """A finished two-run sweep (module-wide: copied before it is damaged)."""
    base = tmp_path_factory.mktemp("sweep")
    (base / "s.json").write_text(json.dumps(SWEEP))
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), "sweep",
                           str(base / "s.json"), "--no-plots", "--out", str(base / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return base / "out"


@pytest.mark.parametrize("damage, field, expected", [
    ({"plots": "x"}, "plots", 'expected a list, got "x"'),
    ({"plots": 1e308}, "plots", "expected a list, got 1e+308"),
    ({"plots": [1, 2]}, "plots[0]", "expected an object, got 1"),
    ({"plots": [{"y": "flows.F1.goodput_mbps"}]}, "plots[0].x", "expected a string, missing"),
    ({"plots": [{"x": 3, "y": "flows.F1.goodput_mbps"}]}, "plots[0].x",
     "expected a string, got 3"),
    ({"plots": [{"x": "seed", "y": "flows.F1.goodput_mbps", "logy": "yes"}]}, "plots[0].logy",
     'expected true or false, got "yes"'),
    ({"plots": [{"x": "seed", "y": "flows.F1.goodput_mbps", "theory": [1]}]},
     "plots[0].theory", "expected an object, got a list"),
    ({"name": ["s"]}, "name", "expected a string, got a list"),
])
def test_a_damaged_sweep_json_is_one_line(sweep_dir, tmp_path, run_cli, damage, field, expected):
    copy = tmp_path / "sweep"
    shutil.copytree(sweep_dir, copy)
    path = copy / "sweep.json"
    data = json.loads(path.read_text())
    data.update(damage)
    path.write_text(json.dumps(data))
    done = run_cli("report", copy, "-o", tmp_path / "page.html")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [f"error: report {copy}: {path}: {field}: "
                                                f"{expected}"]


def test_an_undamaged_sweep_directory_still_gives_its_report(sweep_dir, tmp_path, run_cli):
    done = run_cli("report", sweep_dir, "-o", tmp_path / "page.html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "page.html").stat().st_size > 0


@pytest.mark.parametrize("tail, expected", [
    ("x" * 131073 + "\n", "not a CSV row: field larger than field limit (131072)"),
    ("\xff\n", "not UTF-8 text"),
])
def test_a_damaged_results_csv_is_one_line(sweep_dir, tmp_path, run_cli, tail, expected):
    copy = tmp_path / "sweep"
    shutil.copytree(sweep_dir, copy)
    path = copy / "results.csv"
    with open(path, "ab") as fh:
        fh.write(tail.encode("latin-1"))
    done = run_cli("report", copy, "-o", tmp_path / "page.html")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: report {copy}: {path}") and expected in line
