"""A sweep's wall-time limit per run (``--run-timeout S``, `run_sweep(run_timeout_s=S)`): its runs
go to worker processes, one job included; a run that goes past the limit is stopped wherever it
is, a hook that loops, or sleeps and catches every Exception, included, and recorded as failed; a
hook that catches everything has its worker ended 5 s later, recorded the same way and not run
again; the other runs give the results they give without it; the sweep's own process keeps its
signals and timers; a bad value, or a limit with a Dask scheduler, is refused before anything
runs."""
from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

import pytest

from netsim.sweep import load_sweep, run_sweep, run_timeout_problem

PLUGIN = Path(__file__).resolve().parent / "data" / "sweep_hang_plugin.py"
MODE = "algorithms.hang.mode"   # 2: a busy loop; 3: sleeps catching Exception; 4: catching all
LIMIT_S = 3.0                   # (a healthy run, in a new worker, takes well under a second)
TIMED_OUT = "RunTimedOut: the run went past --run-timeout 3 s of wall time"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


def _sweep_file(tmp_path: Path, modes: list, name: str) -> Path:
    """Tiny runs (0.3 s of a 2-host link): one per mode of the plugin, each with its own delay."""
    data = {"name": "hang", "topology": "lossy_link", "duration_s": 0.3, "combine": "zip",
            "plugins": [PLUGIN.name],
            "parameters": {MODE: modes, "links.L1.delay_ms": [5 + i for i in range(len(modes))],
                           "flows.*.algorithm": ["hang"] * len(modes),
                           "flows.F1.data_mb": [None] * len(modes)},
            "seeds": 1, "metrics": ["flows.F1.goodput_mbps"]}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def _run(tmp_path: Path, modes: list, name: str, **options) -> list:
    sweep = load_sweep(_sweep_file(tmp_path, modes, name), plugins=[PLUGIN])
    return run_sweep(sweep, tmp_path / name, **options)


def _assert_limited(rows: list, reference: list) -> None:
    """Rows of modes [2, 1, 3]: the two hanging runs failed at the limit, in the plugin's
    hook; the healthy one as in `reference`, the same sweep without a limit or hang."""
    assert [row["status"] for row in rows] == ["error", "ok", "error"]
    for row, line in ((rows[0], 19), (rows[2], 23)):
        assert row["error"] == (f"plugin {PLUGIN}, line {line}, in hook on_ack: {TIMED_OUT}")
        assert row["flows.F1.goodput_mbps"] is None
        assert LIMIT_S <= row["wall_time_s"] < LIMIT_S + 10
    healthy = reference[1]
    assert healthy["status"] == "ok" and rows[1]["error"] == ""
    assert rows[1]["flows.F1.goodput_mbps"] == healthy["flows.F1.goodput_mbps"] > 0
    assert rows[1]["config_digest"] == healthy["config_digest"]


@pytest.fixture
def reference(tmp_path):
    """The same three configurations, every one healthy (mode 1), without a limit: only the
    second is compared (the others' digests differ by their mode)."""
    return _run(tmp_path, [1, 1, 1], "reference", jobs=1)


def test_a_run_past_the_limit_fails_and_leaves_this_process_as_it_was(tmp_path):
    """One job: the run is in a worker process, so the sweep's own SIGALRM handler and timer
    are untouched (a user's timer set before the sweep goes on)."""
    def mine(signum, frame):
        pass
    previous = signal.signal(signal.SIGALRM, mine)
    signal.setitimer(signal.ITIMER_REAL, 600)
    try:
        rows = _run(tmp_path, [2], "limited", jobs=1, run_timeout_s=0.5)
        assert signal.getsignal(signal.SIGALRM) is mine
        assert 590 < signal.getitimer(signal.ITIMER_REAL)[0] <= 600
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert [row["status"] for row in rows] == ["error"]
    assert rows[0]["error"] == (f"plugin {PLUGIN}, line 19, in hook on_ack: RunTimedOut: the "
                                f"run went past --run-timeout 0.5 s of wall time")


@pytest.mark.slow
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_run_past_the_limit_fails_and_the_sweep_goes_on(tmp_path, reference, jobs):
    _assert_limited(_run(tmp_path, [2, 1, 3], f"jobs{jobs}", jobs=jobs, run_timeout_s=LIMIT_S),
                    reference)


@pytest.mark.slow
def test_a_run_that_catches_the_stop_has_its_worker_ended(tmp_path, reference):
    """A bare except: catches every RunTimedOut: 5 s later its worker ends itself, the run is
    recorded as failed, once (not run again alone, as the run of a worker that died is), and
    the other runs go on."""
    import time
    started = time.monotonic()
    rows = _run(tmp_path, [4, 1], "caught", jobs=2, run_timeout_s=LIMIT_S)
    assert [row["status"] for row in rows] == ["error", "ok"]
    assert rows[0]["error"] == (
        "RunTimedOut: the run went past --run-timeout 3 s of wall time and caught the stop (a "
        "bare except: or except BaseException) for 5 s more: its worker process was ended")
    assert rows[1]["flows.F1.goodput_mbps"] == reference[1]["flows.F1.goodput_mbps"]
    assert time.monotonic() - started < 2 * (LIMIT_S + 5)        # (not run a second time)


@pytest.mark.slow
def test_one_job_in_another_thread(tmp_path, reference):
    """A sweep started in another thread (a notebook's background job) is held to the limit
    the same way: its runs are in a worker process's main thread."""
    rows: list = []
    thread = threading.Thread(target=lambda: rows.extend(
        _run(tmp_path, [2, 1, 3], "thread", jobs=1, run_timeout_s=LIMIT_S)))
    thread.start()
    thread.join(120)
    assert not thread.is_alive()
    _assert_limited(rows, reference)


def test_a_limit_that_is_not_reached_changes_nothing(tmp_path, reference):
    rows = _run(tmp_path, [1, 1, 1], "roomy", jobs=1, run_timeout_s=600)
    assert [{k: v for k, v in row.items() if k != "wall_time_s"} for row in rows] == \
        [{k: v for k, v in row.items() if k != "wall_time_s"} for row in reference]


RANGE = "--run-timeout: expected a number of seconds above 0 and at most 1e+06, got"


@pytest.mark.parametrize("value, scheduler, expected", [
    (0, None, f"{RANGE} 0"),
    (-1.5, None, f"{RANGE} -1.5"),
    (float("nan"), None, f"{RANGE} nan"),
    (float("inf"), None, f"{RANGE} inf"),
    (1e10, None, f"{RANGE} 10000000000.0"),       # (setitimer overflowed: every run failed)
    (True, None, f"{RANGE} True"),
    ("5", None, f"{RANGE} '5'"),
    (5, "tcp://127.0.0.1:8786", "--run-timeout: not with --scheduler: a Dask worker runs each "
                                "run in one of its threads, which cannot be stopped from "
                                "outside; leave it out, or run with --jobs"),
])
def test_bad_limits_are_refused_before_anything_runs(tmp_path, value, scheduler, expected):
    assert run_timeout_problem(value, scheduler) == expected
    sweep = load_sweep(_sweep_file(tmp_path, [1], "bad"), plugins=[PLUGIN])
    with pytest.raises(ValueError) as raised:
        run_sweep(sweep, tmp_path / "bad", jobs=1, scheduler=scheduler, run_timeout_s=value)
    assert str(raised.value) == expected
    assert not (tmp_path / "bad").exists()


def test_numpy_numbers_are_numbers():
    import numpy as np
    for value in (np.int64(30), np.float32(30.0), np.float64(0.5)):
        assert run_timeout_problem(value, None) is None


@pytest.mark.parametrize("args, expected", [
    (["--run-timeout", "0"], f"error: {RANGE} 0.0"),
    (["--run-timeout", "nan"], f"error: {RANGE} nan"),
    (["--run-timeout", "5", "--scheduler", "tcp://127.0.0.1:8786"],
     "error: --run-timeout: not with --scheduler: a Dask worker runs each run in one of its "
     "threads, which cannot be stopped from outside; leave it out, or run with --jobs"),
])
def test_the_command_refuses_a_bad_limit_in_one_line(tmp_path, run_cli, args, expected):
    path = _sweep_file(tmp_path, [1], "cli")
    done = run_cli("sweep", path, "--plugin", PLUGIN, "--out", tmp_path / "out", *args,
                   "--quiet", "--no-plots")
    assert (done.returncode, done.stderr.strip()) == (2, expected)
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_command_records_a_run_past_the_limit_and_exits_1(tmp_path, run_cli):
    path = _sweep_file(tmp_path, [1, 2], "cli")
    done = run_cli("sweep", path, "--plugin", PLUGIN, "--out", tmp_path / "out", "--jobs", "1",
                   "--run-timeout", "3", "--quiet", "--no-plots")
    assert done.returncode == 1
    assert TIMED_OUT in done.stderr
    assert done.stderr.count("\n") <= 4       # the failures listed, no traceback
