"""A sweep's worker that dies (SIGKILL, the out-of-memory killer) fails only the run it was
running: with --jobs the runs a broken pool had are run again, the suspects alone; on a Dask
cluster a run Dask gives up on (KilledWorker) is that run's failure, the loss of the scheduler
ends the sweep as an interrupt does (finished runs kept, in run order), and runs are handed to the
cluster a bounded window at a time."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from netsim import sweep_execute
from netsim.sweep import RECORDS_DIR, SweepInterrupted, load_sweep, run_sweep

PLUGIN = Path(__file__).resolve().parent / "data" / "sweep_killer_plugin.py"
MODE = "algorithms.killer.mode"       # 2: the run kills its worker; 3: kills it once; else fine
DIED = "worker process died while running it (killed by SIGKILL: out of memory?)"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


def _sweep_file(tmp_path: Path, runs: list, name: str = "deaths.json") -> Path:
    """Tiny runs (0.3 s of a 2-host link, a few hundredths of a second each): `runs` zips the
    plugin's mode with the link's delay; one seed."""
    modes, delays = [mode for mode, _ in runs], [delay for _, delay in runs]
    data = {"name": "deaths", "topology": "lossy_link", "duration_s": 0.3,
            "combine": "zip", "plugins": [PLUGIN.name],
            "parameters": {MODE: modes, "links.L1.delay_ms": delays,
                           "flows.*.algorithm": ["killer"] * len(modes),
                           "flows.F1.data_mb": [None] * len(modes)},
            "seeds": 1, "metrics": ["flows.F1.goodput_mbps", "flows.F1.retransmissions"]}
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _run(tmp_path: Path, runs: list, out: str, **options) -> list:
    sweep = load_sweep(_sweep_file(tmp_path, runs, f"{out}.json"), plugins=[PLUGIN])
    return run_sweep(sweep, tmp_path / out, **options)


def _by_digest(rows: list) -> dict:
    """Rows by configuration digest, without what depends on the sweep (point numbers) or the
    clock."""
    return {row["config_digest"]: {k: v for k, v in row.items()
                                   if k not in ("run_id", "point", "wall_time_s")}
            for row in rows}


def _record(out: Path, digest: str) -> dict:
    record = json.loads((out / RECORDS_DIR / f"{digest}.json").read_text())
    record.pop("wall_time_s")
    record["summary"].pop("wall_time_s", None)
    return record


def _assert_same_runs(tmp_path: Path, rows: list, out: str, reference: list, ref_out: str):
    """Every run of `reference` is in `rows` with the same values and the same record."""
    mine, theirs = _by_digest(rows), _by_digest(reference)
    assert set(theirs) <= set(mine)
    for digest, row in theirs.items():
        assert row["status"] == "ok" and mine[digest] == row
        assert _record(tmp_path / out, digest) == _record(tmp_path / ref_out, digest)


HEALTHY = [(1, 5), (4, 5), (1, 10), (4, 10), (1, 20)]    # (mode, delay_ms)
KILLER = (2, 5)


@pytest.fixture
def reference(tmp_path):
    """The healthy runs, in a sweep without the killer, in this process."""
    return _run(tmp_path, HEALTHY, "reference", jobs=1)


def test_a_run_that_kills_its_worker_fails_alone_with_why(tmp_path, reference):
    """(About 1 s: pools of spawned workers.) The pool broke: every run after the killer
    failed as "worker process died" (28 of 36 in the acceptance test), and a resume met the
    killer first and failed them again."""
    rows = _run(tmp_path, [KILLER, *HEALTHY], "out", jobs=2)
    failed = [row for row in rows if row["status"] != "ok"]
    assert [(row[MODE], row["error"]) for row in failed] == [(2, DIED)]
    assert len(rows) == 6
    _assert_same_runs(tmp_path, rows, "out", reference, "reference")
    with open(tmp_path / "out" / "results.csv", newline="") as fh:     # in run order
        assert [r["run_id"] for r in csv.DictReader(fh)] == [row["run_id"] for row in rows]


@pytest.mark.slow   # three pools of spawned workers: 0.6 to 2.5 s
def test_a_worker_killed_once_loses_no_run(tmp_path, monkeypatch):
    """A worker killed from outside (or by a transient lack of memory): its run, alone again,
    succeeds, as does every other run the pool had."""
    flag = tmp_path / "killed-once"
    monkeypatch.setenv("NETSIM_TEST_KILL_ONCE", str(flag))
    rows = _run(tmp_path, [(1, 5), (3, 5), (4, 5), (1, 10), (4, 10)], "out", jobs=2)
    assert flag.exists()                                  # a worker was killed
    assert all(row["status"] == "ok" for row in rows), [row["error"] for row in rows]
    reference_once = _run(tmp_path, [(1, 5), (3, 5), (4, 5), (1, 10), (4, 10)], "reference_once", jobs=1)
    _assert_same_runs(tmp_path, rows, "out", reference_once, "reference_once")


# -- Dask ------------------------------------------------------------------------------------
class _FakeFuture:
    """A Dask future that is done when made: its run's result, or an exception."""

    def __init__(self, value=None, exception=None):
        self.value, self._exception = value, exception

    def add_done_callback(self, callback):
        callback(self)

    def done(self):
        return True

    def cancelled(self):
        from concurrent.futures import CancelledError
        return isinstance(self._exception, CancelledError)

    def exception(self):
        return self._exception

    def result(self):
        if self._exception is not None:
            raise self._exception
        return self.value


class _FakeClient:
    """A Dask client whose runs are run (in this process) as they are submitted; `outcome(task)`
    gives an exception for a task Dask would not finish, else None."""
    outcome = staticmethod(lambda task: None)
    nthreads_total = 2
    submitted: ClassVar[list] = []
    in_flight_max = 0

    def __init__(self, address, timeout=None):
        self.status = "running"
        self.open = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self, timeout=None):
        pass

    def nthreads(self):
        return {"tcp://w:1": self.nthreads_total}

    def submit(self, function, task, pure=True):
        assert pure is False
        type(self).submitted.append(task[1])
        exception = self.outcome(task)
        future = _FakeFuture(None if exception else function(task), exception)
        self.open += 1
        type(self).in_flight_max = max(type(self).in_flight_max, self.open)
        real = future.result

        def result():
            self.open -= 1
            return real()
        future.result = result  # type: ignore[method-assign]
        return future

    def map(self, function, tasks, pure=True):           # (what the sweep did before)
        return [self.submit(function, task, pure) for task in tasks]

    def cancel(self, futures):
        pass


@pytest.fixture
def fake_dask(monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setattr(distributed, "Client", _FakeClient)
    monkeypatch.setattr(_FakeClient, "submitted", [])
    monkeypatch.setattr(_FakeClient, "in_flight_max", 0)
    return _FakeClient


def test_dask_a_run_dask_gives_up_on_is_that_runs_failure(tmp_path, fake_dask, monkeypatch,
                                                          reference):
    """KilledWorker came out of future.result() as a traceback and ended the sweep. (Dask also
    gives up on a run that was only on the same worker: so the run is tried again alone.)"""
    from distributed.scheduler import KilledWorker
    monkeypatch.setattr(fake_dask, "outcome", staticmethod(
        lambda task: KilledWorker("run_one-x", None, 3) if _mode(task) == 2 else None))
    rows = _run(tmp_path, [KILLER, *HEALTHY], "out", scheduler="tcp://fake:1")
    failed = [(row[MODE], row["error"]) for row in rows if row["status"] != "ok"]
    assert failed == [(2, "worker process died while running it, on each of the 4 workers "
                          "Dask tried (KilledWorker: out of memory, or a crash?)")]
    _assert_same_runs(tmp_path, rows, "out", reference, "reference")


def _mode(task) -> float:
    """The plugin's mode in a prepared task (its topology)."""
    return task[0]["algorithms"]["killer"]["mode"]


def test_dask_losing_the_scheduler_stops_the_sweep_keeping_finished_runs(tmp_path, fake_dask,
                                                                         monkeypatch):
    from distributed.client import FutureCancelledError
    runs = [(1, 5), (4, 5), (1, 10), KILLER, (4, 10), (1, 20)]   # lost at the fourth run
    monkeypatch.setattr(fake_dask, "outcome", staticmethod(
        lambda task: FutureCancelledError("run_one-x", "scheduler-connection-lost")
        if _mode(task) == 2 else None))
    sweep = load_sweep(_sweep_file(tmp_path, runs), plugins=[PLUGIN])
    with pytest.raises(sweep_execute.SchedulerLost) as info:
        run_sweep(sweep, tmp_path / "out", scheduler="tcp://fake:1")
    lost = info.value
    assert isinstance(lost, SweepInterrupted) and lost.signum is None
    assert str(lost) == "lost the Dask scheduler at tcp://fake:1 (scheduler-connection-lost)"
    assert (lost.done, lost.total) == (3, 6)
    with open(tmp_path / "out" / "results.csv", newline="") as fh:
        kept = list(csv.DictReader(fh))
    assert [row["status"] for row in kept] == ["ok"] * 3          # the finished runs, in order
    assert [row["run_id"] for row in kept] == sorted(row["run_id"] for row in kept)


def test_dask_runs_are_handed_out_a_window_at_a_time(tmp_path, fake_dask, monkeypatch):
    """All runs' topologies were made first and sent as one graph (632 MB in the sweep's process
    for 2000 runs of a k = 8 fat tree)."""
    monkeypatch.setattr(sweep_execute, "DASK_MIN_IN_FLIGHT", 3)
    monkeypatch.setattr(fake_dask, "nthreads_total", 1)        # window: max(3, 2 x 1)
    prepared = []
    tasks = [(None, f"d{i}") for i in range(10)]

    def prepare(task):
        prepared.append(task)
        return task
    monkeypatch.setattr(sweep_execute, "run_one", lambda task: {"config_digest": task[1]})
    results = []
    with sweep_execute.StopSignals() as stop:
        for result in sweep_execute.execute_runs(tasks, None, "tcp://fake:1", stop, prepare):
            assert len(prepared) <= len(results) + 3
            results.append(result)
    assert [r["config_digest"] for r in results] == [t[1] for t in tasks]
    assert prepared == tasks and fake_dask.in_flight_max == 3


@pytest.mark.slow   # a local Dask cluster of two worker processes: 2 to 5 s
def test_dask_cluster_a_run_that_kills_its_worker_fails_alone(tmp_path, reference):
    distributed = pytest.importorskip("dask.distributed")
    import dask
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "distributed.scheduler.worker-saturation": 1.0}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster:
            rows = _run(tmp_path, [KILLER, *HEALTHY], "out", scheduler=cluster.scheduler_address)
    failed = [(row[MODE], row["error"]) for row in rows if row["status"] != "ok"]
    assert failed == [(2, "worker process died while running it, on the worker Dask "
                          "tried (KilledWorker: out of memory, or a crash?)")]
    _assert_same_runs(tmp_path, rows, "out", reference, "reference")


@pytest.mark.slow   # spawns a script and its workers (about 2 s)
def test_a_script_without_a_main_guard_is_told_what_to_add(tmp_path):
    """Spawned workers import the script that started the sweep; without the guard each starts
    a sweep of its own and dies. Every run used to read "worker process died"; now the runs say
    why, and the sweep ends."""
    import subprocess
    sweep = {"name": "guard", "topology": "lossy_link", "duration_s": 0.2, "seeds": 1,
             "parameters": {"links.L1.delay_ms": [5, 10]}, "metrics": ["flows.F1.goodput_mbps"]}
    (tmp_path / "s.json").write_text(json.dumps(sweep))
    script = tmp_path / "noguard.py"
    root = str(Path(__file__).resolve().parent.parent)     # (this checkout's netsim)
    script.write_text(f"import sys\nsys.path.insert(0, {root!r})\n"
                      "from netsim.sweep import load_sweep, run_sweep\n"
                      f"rows = run_sweep(load_sweep({str(tmp_path / 's.json')!r}), "
                      f"{str(tmp_path / 'out')!r}, jobs=2)\n")
    subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                   cwd=tmp_path)
    with open(tmp_path / "out" / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [row["status"] for row in rows] == ["error", "error"]
    assert all(row["error"].endswith(sweep_execute.NO_MAIN_GUARD) for row in rows)
