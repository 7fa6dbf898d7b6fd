"""Stopping sweeps: SIGINT/SIGTERM keep every finished run and exit 130; workers never outlive
their parent, even after kill -9 of the parent."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from netsim.sweep import RECORDS_DIR, SweepInterrupted, load_sweep, run_sweep

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux signals")

# Runs of about a second each (BBR at 100 Mb/s), more of them than two workers finish quickly.
SLOW = {
    "name": "slow", "topology": "lossy_link", "duration_s": 12,
    "parameters": {"links.L1.impairments.H1->H2.loss_rate": [0.001, 0.002, 0.003, 0.004],
                   "flows.F1.algorithm": ["bbr"], "flows.F1.data_mb": [None]},
    "seeds": 2,
    "metrics": ["flows.F1.goodput_mbps"],
}


def _start(tmp_path):
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(SLOW))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), "sweep", str(path),
                             "--jobs", "2", "--out", str(out), "--no-plots"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    return proc, out


def _workers(pid: int, count: int = 2, timeout_s: float = 30.0) -> list:
    """The pool workers of process `pid` (its children but multiprocessing's resource tracker),
    once `count` of them run."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            children = psutil.Process(pid).children(recursive=True)
            workers = [c for c in children if "resource_tracker" not in " ".join(c.cmdline())]
        except psutil.Error:
            workers = []
        if len(workers) >= count:
            return workers
        time.sleep(0.05)
    raise AssertionError(f"no {count} workers under {pid} within {timeout_s} s")


def _rows(out):
    path = out / "results.csv"
    if not path.is_file():
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _wait_for_rows(out, count: int, proc, timeout_s: float = 40.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if len(_rows(out)) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} finished runs within {timeout_s} s")


def _gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(processes: list, timeout_s: float) -> list:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = [p for p in processes if not _gone(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return [p.pid for p in processes if not _gone(p)]


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_sigint_stops_workers_keeps_finished_rows_and_exits_130(tmp_path):
    proc, out = _start(tmp_path)
    try:
        workers = _workers(proc.pid)
        _wait_for_rows(out, 1, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)           # a guard against a hang, not a timing
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "interrupted (SIGINT)" in lines[0] and "resume" in lines[0]
    assert _wait_gone(workers, 30) == []                # a hang guard, not a timing
    rows = _rows(out)
    assert 1 <= len(rows) < 8 and f"{len(rows)} of 8 runs done" in lines[0]
    assert all(row["status"] == "ok" and float(row["flows.F1.goodput_mbps"]) > 0 for row in rows)
    # results.csv is in run order and every row has its record: a resume keeps them all
    order = [r[0] for r in load_sweep(tmp_path / "slow.json").runs()]
    assert [row["run_id"] for row in rows] == [i for i in order if i in
                                               {row["run_id"] for row in rows}]
    records = {p.stem for p in (out / RECORDS_DIR).glob("*.json")}
    assert {row["config_digest"] for row in rows} <= records


def _wait_busy(processes: list, cpu_s: float, timeout_s: float) -> None:
    """Until each of `processes` has used `cpu_s` of CPU time: past its start-up imports (about
    0.3 s), into its first run. CPU time, not wall time: the same point on a loaded machine;
    `timeout_s` only guards against a hang."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if all(sum(p.cpu_times()[:2]) >= cpu_s for p in processes):
                return
        except psutil.Error as exc:
            raise AssertionError(f"a worker ended before it was busy: {exc}") from exc
        time.sleep(0.05)
    raise AssertionError(f"the workers did not use {cpu_s} s of CPU each within {timeout_s} s")


def test_kill_9_of_the_parent_takes_the_workers_with_it(tmp_path):
    proc, out = _start(tmp_path)
    try:
        workers = _workers(proc.pid)
        _wait_busy(workers, 0.6, 60)          # the workers are simulating (8 runs of ~1 s)
        assert all(not _gone(w) for w in workers)
        proc.kill()                           # SIGKILL: no handler, no cleanup in the parent
        proc.wait(timeout=30)                 # hang guards, not timings
        assert _wait_gone(workers, 30) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for worker in workers if "workers" in locals() else []:
            if not _gone(worker):
                worker.kill()


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_sigterm_in_process_sweep_keeps_finished_rows(tmp_path):
    """jobs=1 runs in this process: SIGTERM interrupts the current simulation at once."""
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(dict(SLOW, duration_s=5)))
    sweep = load_sweep(path)
    finished = []

    def progress(row):
        finished.append(row)
        if len(finished) == 2:               # stop during the third run
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM)).start()
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SweepInterrupted) as info:
        run_sweep(sweep, tmp_path / "out", jobs=1, progress=progress)
    assert signal.getsignal(signal.SIGTERM) is previous            # handler restored
    assert info.value.signum == signal.SIGTERM
    assert (info.value.done, info.value.total) == (2, 8)
    assert [row["run_id"] for row in _rows(tmp_path / "out")] == \
        [row["run_id"] for row in finished]


def test_ctrl_c_while_the_pool_starts_its_workers_still_stops_the_sweep(tmp_path, monkeypatch):
    """The sweep ignores SIGINT while it starts its workers (so they ignore it from exec); a
    Ctrl-C in that very window is held, not lost: it stops the sweep once they are started."""
    import netsim.sweep_execute as execute

    class SignalledPool(execute._Pool):
        def submit(self, *args, **kwargs):
            future = super().submit(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGINT)      # a Ctrl-C while workers are being started
            return future
    monkeypatch.setattr(execute, "_Pool", SignalledPool)
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(dict(SLOW, duration_s=5)))
    previous = signal.getsignal(signal.SIGINT)
    with pytest.raises(SweepInterrupted) as info:
        run_sweep(load_sweep(path), tmp_path / "out", jobs=2)
    assert info.value.signum == signal.SIGINT
    assert (info.value.done, info.value.total) == (0, 8)
    assert signal.getsignal(signal.SIGINT) is previous            # handler restored
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # and unblocked


def test_sigterm_exit_status_is_143_with_one_line(tmp_path, capsys):
    from initializer import main
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(dict(SLOW, duration_s=5)))
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGTERM))
    timer.start()
    try:
        code = main(["sweep", str(path), "--jobs", "1", "--out", str(tmp_path / "out")])
    finally:
        timer.cancel()
    assert code == 143
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "slow: interrupted (SIGTERM)" in err[0]


def test_ctrl_c_to_the_whole_group_while_workers_start_prints_one_line(tmp_path):
    """A terminal's Ctrl-C signals every process of the group, workers included, even while
    they are still importing: they ignore it from their start, the sweep prints one line."""
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(SLOW))
    proc = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), "sweep", str(path),
                             "--jobs", "2", "--out", str(tmp_path / "out"), "--no-plots"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)
    try:
        workers = _workers(proc.pid)          # just started: importing the simulator
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err.strip().splitlines() == [
        f"slow: interrupted (SIGINT); 0 of 8 runs done, kept in {tmp_path / 'out'}/results.csv; "
        f"run the same command to resume"]
    assert _wait_gone(workers, 3) == []


def test_ctrl_c_after_the_runs_keeps_them_and_says_so(tmp_path, capsys, monkeypatch):
    """An interrupt once every run is in results.csv (importing matplotlib, drawing the figures)
    says where the runs are; it used to fall through to "no results written"."""
    import plot_tool.sweep_figures as figures
    from initializer import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(figures, "make_sweep_figures", interrupted)
    sweep = dict(SLOW, duration_s=0.5, seeds=1,
                 parameters=dict(SLOW["parameters"], **{
                     "links.L1.impairments.H1->H2.loss_rate": [0.001, 0.002]}),
                 plots=[{"file": "g.png", "x": "links.L1.impairments.H1->H2.loss_rate",
                         "y": "flows.F1.goodput_mbps"}])
    path = tmp_path / "quick.json"
    path.write_text(json.dumps(sweep))
    out = tmp_path / "out"
    code = main(["sweep", str(path), "--jobs", "1", "--out", str(out), "--quiet"])
    assert code == 130
    assert capsys.readouterr().err.strip().splitlines() == [
        f"slow: interrupted (SIGINT) while drawing the figures; all 2 runs are in "
        f"{out}/results.csv"]
    assert len(_rows(out)) == 2


def test_a_killed_sweeps_scratch_is_removed_by_the_next_one(tmp_path, monkeypatch):
    """kill -9 of a sweep cannot remove its workers' scratch directory (their partial traces):
    the next sweep removes those whose process is gone. Before, they stayed in /tmp for ever
    (acceptance test Z9 found 35)."""
    import tempfile

    from netsim.sweep_execute import scratch_directory

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"netsim-sweep-{gone.pid}-abc123"
    (dead / "running").mkdir(parents=True)
    (dead / "netsim-x" / "links.csv").parent.mkdir()
    (dead / "netsim-x" / "links.csv").write_text("partial")
    live = tmp_path / f"netsim-sweep-{os.getppid()}-def456"     # (its process runs)
    live.mkdir()
    unknown = tmp_path / "netsim-sweep-q1w2e3r4"                # an older name: whose?
    unknown.mkdir()
    mine = Path(scratch_directory())
    assert mine.parent == tmp_path and mine.name.startswith(f"netsim-sweep-{os.getpid()}-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [mine.name, live.name, unknown.name])
