"""A sweep on a full disk: its files (results.csv, sweep.json, the run records) are written
whole or not at all, leave no temporary file, and the error names the file meant. Before, a
full disk left `.results.csv.PID.tmp` and `runs/.<digest>.json.PID.tmp` files that nothing
removed, and the line named no file (acceptance test Z9)."""
from __future__ import annotations

import csv
import errno
import subprocess
import sys
from pathlib import Path

import pytest

from netsim.sweep_store import save_record, write_results_csv

ROOT = Path(__file__).resolve().parent.parent


def _full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_results_csv_on_a_full_disk_leaves_nothing_and_names_itself(tmp_path, monkeypatch):
    path = tmp_path / "results.csv"
    path.write_text("the earlier results\n")
    monkeypatch.setattr(csv.DictWriter, "writerow", _full)
    with pytest.raises(OSError) as caught:
        write_results_csv(path, ["a"], [{"a": 1}])
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]
    assert path.read_text() == "the earlier results\n"


def test_a_run_record_on_a_full_disk_leaves_nothing_and_names_itself(tmp_path, monkeypatch):
    import netsim.output_paths

    def full_fdopen(fd, *args, **kwargs):
        handle = open(fd, *args, **kwargs)
        handle.write = _full
        return handle

    monkeypatch.setattr(netsim.output_paths.os, "fdopen", full_fdopen)
    digest = "a" * 64
    with pytest.raises(OSError) as caught:
        save_record(tmp_path, {"config_digest": digest, "summary": {}})
    assert caught.value.filename == str(tmp_path / "runs" / f"{digest}.json")
    assert list((tmp_path / "runs").iterdir()) == []


def test_the_sweeps_line_names_the_file_and_what_is_kept(tmp_path):
    """The whole command, with results.csv's writer failing as on a full disk (a child process
    whose sitecustomize makes it fail)."""
    sweep = tmp_path / "s.json"
    sweep.write_text('{"name": "s", "topology": "test_case_0", "duration_s": 0.5, '
                     '"parameters": {"flows.F1.data_mb": [0.1, 0.2]}, "metrics": ["end_time_s"]}')
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import errno, netsim.sweep_store as s\n"
        "header = s.csv.DictWriter.writerow\n"
        "def full(self, row):\n"            # (the header passes: the disk fills with the rows)
        "    if any(k != v for k, v in row.items()):\n"
        "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
        "    return header(self, row)\n"
        "s.csv.DictWriter.writerow = full\n")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), "sweep", str(sweep),
                           "--out", str(out), "--jobs", "1", "--no-plots", "--quiet"],
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": f"{hook}:{ROOT}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"error: cannot write {out / 'results.csv'}: No space left on device; the runs recorded "
        f"so far are kept: run the same command to resume"]
    assert len(list((out / "runs").iterdir())) >= 1         # (each run's record, when done)
    assert sorted(p.name for p in out.iterdir()) == ["results.csv", "runs", "sweep.json"]
    assert len((out / "results.csv").read_text().splitlines()) == 1     # its header: no row fit
