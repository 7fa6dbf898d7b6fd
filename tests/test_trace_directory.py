"""A run's temporary trace directory: removed by `Results.close()` (and ``with``), by a failed
`simulate()`, and by every sweep run, including those of worker processes that end with
os._exit (they had left one directory of CSV files per run in the temporary directory)."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from netsim import load_topology, simulate
from netsim.run import Run
from netsim.sweep_execute import run_one

ROOT = Path(__file__).resolve().parent.parent
ONE_LINK = {"hosts": ["A", "B"],
            "links": [{"id": "L", "ends": ["A", "B"], "rate_mbps": 10, "delay_ms": 5,
                       "buffer_kb": 50}],
            "flows": [{"id": "F", "src": "A", "dst": "B", "data_mb": 0.2}]}


@pytest.fixture
def own_tmp(tmp_path, monkeypatch):
    """The temporary directory runs make theirs in, empty at the start."""
    base = tmp_path / "tmp"
    base.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    return base


def test_close_removes_the_directory_and_keeps_what_was_read(own_tmp):
    results = simulate(load_topology(ONE_LINK))
    directory = results.directory
    assert directory.parent == own_tmp and (directory / "flows.csv").exists()
    flows = results.flows
    results.close()
    assert not directory.exists() and list(own_tmp.iterdir()) == []
    assert results.flows is flows and results.summary["flows"]["F"]["finish_s"] > 0
    with pytest.raises(ValueError, match="the links table cannot be read: close"):
        results.table("links")
    with pytest.raises(ValueError, match="the traces cannot be read: close"):
        results.write(own_tmp.parent / "out")
    results.close()                                   # idempotent


def test_with_block_closes(own_tmp):
    with simulate(load_topology(ONE_LINK)) as results:
        t, window = results.trace("flows", "F", "window_pkts")
        assert len(t) == len(window) > 0
    assert list(own_tmp.iterdir()) == []


def test_a_given_trace_directory_is_kept(own_tmp, tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    results = Run(load_topology(ONE_LINK), trace_dir=keep).execute()
    results.close()
    assert (keep / "flows.csv").exists() and len(results.links["time_s"]) > 0


def test_a_failed_run_leaves_nothing(own_tmp, monkeypatch):
    def fail(self):
        raise RuntimeError("hook failed")
    monkeypatch.setattr(Run, "_check_algorithms", fail)
    with pytest.raises(RuntimeError, match="hook failed"):
        simulate(load_topology(ONE_LINK))
    assert list(own_tmp.iterdir()) == []


def test_a_sweep_run_leaves_nothing_ok_or_failed(own_tmp, monkeypatch):
    done = run_one((ONE_LINK, "d1", 1, 0.1, True))
    assert done["status"] == "ok" and done["record"]["check"] is not None
    monkeypatch.setattr(Run, "_check_algorithms",
                        lambda self: (_ for _ in ()).throw(RuntimeError("hook failed")))
    failed = run_one((ONE_LINK, "d2", 1, 0.1, False))
    assert failed["status"] == "error" and "hook failed" in failed["error"]
    assert list(own_tmp.iterdir()) == []


def _four_run_sweep(tmp_path, name: str, topology: str, sizes_mb: list):
    """(an empty TMPDIR for the sweep, its sweep file): one run per flow size of F1."""
    base = tmp_path / "tmp"
    base.mkdir()
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps({
        "name": name, "topology": str(ROOT / "topologies" / topology), "seeds": 1,
        "parameters": {"flows.F1.data_mb": sizes_mb}, "metrics": ["flows.F1.goodput_mbps"]}))
    return base, sweep


def test_a_parallel_sweep_leaves_nothing_in_tmpdir(tmp_path):
    """Pool workers end with os._exit, which runs no finalizer: 4 runs left 4 directories."""
    base, sweep = _four_run_sweep(tmp_path, "leak", "test_case_1.json", [0.5, 1, 1.5, 2])
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), "sweep", str(sweep),
                           "--jobs", "2", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "TMPDIR": str(base)})
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "out" / "results.csv").read_text().splitlines()) == 5
    assert [p.name for p in base.iterdir() if p.name.startswith("netsim-")] == []


def test_an_interrupted_parallel_sweep_leaves_nothing_in_tmpdir(tmp_path):
    """The parent kills its workers mid-run on an interrupt: their runs' directories are under
    one of the sweep's, which it removes."""
    import os
    import signal
    import time

    base, sweep = _four_run_sweep(tmp_path, "killed", "test_case_2.json", [10, 11, 12, 13])
    proc = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), "sweep", str(sweep),
                             "--jobs", "2", "--out", str(tmp_path / "out"), "--no-plots"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(base)})
    deadline = time.time() + 60
    while not list(base.glob("netsim-sweep-*/netsim-*")):      # a run is writing its traces
        assert proc.poll() is None and time.time() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert [p.name for p in base.iterdir() if p.name.startswith("netsim-")] == []
