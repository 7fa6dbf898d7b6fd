"""A sweep's wall-time limit per run (``--run-timeout S``, `run_sweep(run_timeout_s=S)`): a run
that goes past it is stopped wherever it is, a hook that loops, or sleeps and catches every
Exception, included, and recorded as failed; the other runs give the results they give without
it; nothing of the alarm is left behind; a bad value, or a limit with a Dask scheduler, is refused
before anything runs."""
from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

import pytest

from netsim.sweep import load_sweep, run_sweep, run_timeout_problem

PLUGIN = Path(__file__).resolve().parent / "data" / "sweep_hang_plugin.py"
MODE = "algorithms.hang.mode"          # 2: a busy loop; 3: sleeps, catching Exception; else fine
TIMED_OUT = "RunTimedOut: the run went past --run-timeout 1 s of wall time"

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
    for row, line in ((rows[0], 18), (rows[2], 22)):
        assert row["error"] == (f"plugin {PLUGIN}, line {line}, in hook on_ack: {TIMED_OUT}")
        assert row["flows.F1.goodput_mbps"] is None
        assert 1.0 <= row["wall_time_s"] < 10
    healthy = reference[1]
    assert healthy["status"] == "ok" and rows[1]["error"] == ""
    assert rows[1]["flows.F1.goodput_mbps"] == healthy["flows.F1.goodput_mbps"] > 0
    assert rows[1]["config_digest"] == healthy["config_digest"]


@pytest.fixture
def reference(tmp_path):
    """The same three configurations, every one healthy (mode 1), without a limit: only the
    second is compared (the others' digests differ by their mode)."""
    return _run(tmp_path, [1, 1, 1], "reference", jobs=1)


def test_a_run_past_the_limit_fails_and_the_sweep_goes_on_in_process(tmp_path, reference):
    rows = _run(tmp_path, [2, 1, 3], "limited", jobs=1, run_timeout_s=1.0)
    _assert_limited(rows, reference)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)      # nothing left armed
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL


@pytest.mark.slow
def test_a_run_past_the_limit_fails_in_a_pool_of_workers(tmp_path, reference):
    _assert_limited(_run(tmp_path, [2, 1, 3], "pool", jobs=2, run_timeout_s=1.0), reference)


@pytest.mark.slow
def test_one_job_outside_the_main_thread_runs_in_a_worker_process(tmp_path, reference):
    """Signals reach the main thread only: a sweep started in another thread (a notebook's
    background job) with one job has its runs in a pool of one worker, which holds them to it."""
    rows: list = []
    thread = threading.Thread(target=lambda: rows.extend(
        _run(tmp_path, [2, 1, 3], "thread", jobs=1, run_timeout_s=1.0)))
    thread.start()
    thread.join(120)
    assert not thread.is_alive()
    _assert_limited(rows, reference)


def test_a_limit_that_is_not_reached_changes_nothing(tmp_path, reference):
    rows = _run(tmp_path, [1, 1, 1], "roomy", jobs=1, run_timeout_s=600)
    assert [{k: v for k, v in row.items() if k != "wall_time_s"} for row in rows] == \
        [{k: v for k, v in row.items() if k != "wall_time_s"} for row in reference]


@pytest.mark.parametrize("value, scheduler, expected", [
    (0, None, "--run-timeout: expected a number of seconds > 0, got 0"),
    (-1.5, None, "--run-timeout: expected a number of seconds > 0, got -1.5"),
    (float("nan"), None, "--run-timeout: expected a number of seconds > 0, got nan"),
    (float("inf"), None, "--run-timeout: expected a number of seconds > 0, got inf"),
    (True, None, "--run-timeout: expected a number of seconds > 0, got True"),
    ("5", None, "--run-timeout: expected a number of seconds > 0, got '5'"),
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


@pytest.mark.parametrize("args, expected", [
    (["--run-timeout", "0"], "error: --run-timeout: expected a number of seconds > 0, got 0.0"),
    (["--run-timeout", "nan"],
     "error: --run-timeout: expected a number of seconds > 0, got nan"),
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
                   "--run-timeout", "1", "--quiet", "--no-plots")
    assert done.returncode == 1
    assert TIMED_OUT in done.stderr
    assert done.stderr.count("\n") <= 4       # the failures listed, no traceback
