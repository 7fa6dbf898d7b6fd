"""Running a sweep's runs: one run in a worker (`run_one`, which never raises), the process pool
(``--jobs``) or a Dask cluster (``--scheduler``), and the signals that stop them.

SIGINT and SIGTERM stop a sweep: its workers are killed and `SweepInterrupted` is raised after
the runs that had finished are yielded. Workers never outlive the process that started them
(`_worker_init`).
"""
from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from netsim.results_dir import json_text
from netsim.sweep_store import RECORD_FORMAT
from netsim.sweep_theory import base_rtts_ms

POLL_S = 0.2                 # how often the parent looks for finished runs and stop requests
PARENT_CHECK_S = 1.0         # how often a worker's watchdog checks that its parent is alive
PR_SET_PDEATHSIG = 1         # linux/prctl.h



class SweepInterrupted(BaseException):
    """SIGINT or SIGTERM stopped the sweep; the finished runs are saved. A BaseException, like
    KeyboardInterrupt, so that nothing records it as a failed run."""

    def __init__(self, signum: int, done: int = 0, total: int = 0, out=None):
        super().__init__(signum)
        self.signum, self.done, self.total, self.out = signum, done, total, out


def run_one(task) -> dict:
    """Run one configuration; never raises: a failure gives status "error" and its message.

    Returns {"config_digest", "status", "error", "wall_time_s", "record"}: the record (summary,
    base RTTs, the check report when asked for) is what `compute_metrics` reads."""
    data, digest, seed, interval_s, want_check = task[:5]
    plugins = task[5] if len(task) > 5 else ()
    out = {"config_digest": digest, "status": "ok", "error": "", "record": None}
    start = time.perf_counter()
    try:
        if plugins:                               # workers are other processes: load them here
            from netsim.plugins import load_entry_points, load_plugins
            load_entry_points()
            load_plugins(plugins)
        from netsim.run import Run
        from topologies.loader import load_topology
        spec = load_topology(data)
        run = Run(spec, seed=seed, interval_s=interval_s, caller="sweep")
        try:         # a worker ends with os._exit: nothing else would remove its trace files
            results = run.execute()
            summary = dict(results.summary)
            summary.pop("description", None)
            record = {"format": RECORD_FORMAT, "config_digest": digest, "seed": seed,
                      "seed_used": seed_used(results), "summary": summary,
                      "base_rtt_ms": _safe_base_rtts_ms(spec), "check": None}
            if want_check:
                from theory.check import compare, predict_run
                record["check"] = compare(results, predict_run(spec, results))  # as --check
        finally:
            run.close()
        out["record"] = json.loads(json_text(record, default=_jsonable))
    except (Exception, SystemExit, KeyboardInterrupt) as exc:   # recorded, the sweep goes on
        line = None
        if plugins:                               # a plugin's failure: its file, line and hook
            from netsim.plugins import failure_line
            line = failure_line(exc)
        if not isinstance(exc, Exception) and line is None:
            raise                 # an exit or an interrupt not raised by a plugin's code (a
        # signal stops a sweep as SweepInterrupted: a KeyboardInterrupt here is a hook's)
        out["status"], out["error"] = "error", line or f"{type(exc).__name__}: {exc}"
    out["wall_time_s"] = round(time.perf_counter() - start, 4)
    if out["record"] is not None:
        out["record"]["wall_time_s"] = out["wall_time_s"]
    return out


def seed_used(results) -> bool:
    """Whether the run's seed could change its results: it drew from the run's one random
    generator (its state is no longer the seeded one: every source of randomness draws from
    `sim.rng`), or ECMP hashed flows and routers with the seed (routing/ecmp.py)."""
    network = results.network
    drew = network.sim.rng.getstate() != random.Random(network.seed).getstate()
    return drew or bool((results.summary.get("routing") or {}).get("ecmp"))


def _jsonable(value):
    try:
        import numpy as np
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            return value.tolist()
    except ImportError:                           # pragma: no cover
        pass
    return repr(value)


def _safe_base_rtts_ms(spec):
    try:
        return base_rtts_ms(spec)
    except Exception:                             # no route at the start: no queueing delay
        return None


class StopSignals:
    """While active (in the main thread), SIGINT and SIGTERM ask the sweep to stop: `signum` is
    set, and, while `interruptible` (a run in this process), SweepInterrupted is raised at once."""

    def __init__(self):
        self.signum = None
        self.interruptible = False
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        first = self.signum is None
        self.signum = signum
        if first and self.interruptible:
            self.interruptible = False
            raise SweepInterrupted(signum)

    def check(self):
        if self.signum is not None:
            raise SweepInterrupted(self.signum)

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False


def _as_is(task):
    return task


def execute_runs(tasks: list, jobs: int | None, scheduler: str | None, stop: StopSignals,
                 prepare=_as_is):
    """Yield run_one's results as runs finish; SweepInterrupted when `stop` is asked, after
    yielding the runs that had finished. `prepare(task)` makes the task run_one takes (its
    topology) as it is handed out: in this process or to a pool, a few runs ahead of those
    going on (`_execute_pool`), so that memory holds the runs in progress, not every task."""
    if not tasks:
        return
    if scheduler:
        yield from _execute_dask([prepare(task) for task in tasks], scheduler, stop)
        return
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        for task in tasks:
            stop.check()
            stop.interruptible = True
            try:
                result = run_one(prepare(task))
            finally:
                stop.interruptible = False
            yield result
        stop.check()
        return
    yield from _execute_pool(tasks, min(jobs, len(tasks)), stop, prepare)


class _Pool(ProcessPoolExecutor):
    """The standard pool. Debian's PyPy 3.9 (7.3.11) ships a `submit` that calls
    `_adjust_process_count` under a start method that spawns, a method it renamed
    `_adjust_process_count_cpython`: every `submit` raised AttributeError there. The name is
    given back where it is missing; elsewhere this is `ProcessPoolExecutor` itself."""

    if not hasattr(ProcessPoolExecutor, "_adjust_process_count") and hasattr(
            ProcessPoolExecutor, "_adjust_process_count_cpython"):
        _adjust_process_count = ProcessPoolExecutor._adjust_process_count_cpython  # type: ignore[attr-defined]


# tasks handed to a pool beyond its workers' (so that none waits for its next one)
AHEAD_PER_WORKER = 2


def _execute_pool(tasks: list, jobs: int, stop: StopSignals, prepare=_as_is):
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool
    context = multiprocessing.get_context("spawn")     # workers are children of this process
    # A Ctrl-C reaches the whole process group. Workers must ignore it from their first
    # instruction, or one pressed while they import prints their tracebacks. So SIGINT is
    # blocked in this thread while the workers are started: they inherit the mask across exec,
    # hold a Ctrl-C pending until they ignore SIGINT (`_worker_init`), which discards it. Here
    # the stop handler stays in place; a Ctrl-C in that window reaches it when the mask is put
    # back (or at once, through another thread of this process). Without signal masks, SIGINT
    # is ignored in that window instead: an ignored signal stays ignored across exec.
    main = threading.current_thread() is threading.main_thread()
    masked = hasattr(signal, "pthread_sigmask")
    if masked:
        # multiprocessing starts its resource tracker with SIGINT blocked and then unblocks it
        # (bpo-33613), which would end the window early: start it first.
        from multiprocessing import resource_tracker
        resource_tracker.ensure_running()
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    elif main:
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the workers' runs write their traces under one directory of the sweep's, removed when
    # the pool stops: an interrupt kills workers mid-run, which leaves their own behind
    scratch = tempfile.mkdtemp(prefix="netsim-sweep-")
    try:
        pool = _Pool(max_workers=jobs, mp_context=context,
                                   initializer=_worker_init, initargs=(os.getpid(), scratch))
        waiting = iter(tasks)
        pending: dict = {}
        for task in itertools.islice(waiting, jobs * AHEAD_PER_WORKER):
            pending[pool.submit(run_one, prepare(task))] = task
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        elif main:
            signal.signal(signal.SIGINT, handler)
    try:
        while pending:
            finished, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            done = list(finished)
            if stop.signum is not None:                # keep what finished meanwhile, then stop
                done = [future for future in pending if future.done()]
            for future in done:
                task = pending.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool as exc:      # a worker died (killed, out of memory)
                    if stop.signum is None:           # not a casualty of the interrupt
                        yield _died(task, exc)
            stop.check()
            for task in itertools.islice(waiting, len(done)):      # (one for each finished)
                try:
                    pending[pool.submit(run_one, prepare(task))] = task
                except BrokenProcessPool as exc:      # (the pool broke: the rest fail so)
                    for failed in (task, *waiting):
                        yield _died(failed, exc)
                    break
    finally:
        _kill_workers(pool)
        shutil.rmtree(scratch, ignore_errors=True)


def _died(task, exc: BaseException) -> dict:
    """run_one's result for `task` when the pool that had it, or was to get it, broke."""
    return {"config_digest": task[1], "status": "error", "record": None, "wall_time_s": None,
            "error": f"worker process died: {exc}"}


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool at once: kill its workers (whatever they are running) and cancel the rest."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)   # (shutdown forgets it)
    for process in processes:
        try:
            process.kill()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.join(timeout=5)
        except (OSError, ValueError, AssertionError, AttributeError):
            pass
    # the executor's management thread closes its wake-up pipe as it sees the pool broken; at
    # exit concurrent.futures wakes every such thread, and a pipe closed under it gave a
    # traceback after the sweep's one line (1 interrupt in 30): wait for the thread to finish
    if manager is not None:
        try:
            manager.join(timeout=5)
        except RuntimeError:
            pass


SCHEDULER_TIMEOUT_S = 30          # how long connecting to a --scheduler may take


def scheduler_problem(scheduler: str) -> str | None:
    """Why the Dask scheduler at `scheduler` cannot take the sweep's runs (None if it can): it
    is connected to, and let go, before the sweep writes anything."""
    from dask.distributed import Client
    try:
        with Client(scheduler, timeout=SCHEDULER_TIMEOUT_S):
            return None
    except (OSError, TimeoutError, ValueError) as exc:
        return (f"--scheduler: cannot connect to the Dask scheduler at {scheduler}: "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")


def _execute_dask(tasks: list, scheduler: str, stop: StopSignals):
    from dask.distributed import Client
    with Client(scheduler, timeout=SCHEDULER_TIMEOUT_S) as client:
        futures = client.map(run_one, tasks, pure=False)
        pending = list(futures)
        try:
            while pending:
                done = [f for f in pending if f.done()]
                for future in done:
                    pending.remove(future)
                    yield future.result()
                stop.check()
                if not done:
                    time.sleep(POLL_S)
        finally:
            if pending:
                client.cancel(pending)


def _worker_init(parent_pid: int, scratch: str | None = None) -> None:
    """Initializer of every pool worker. Its runs' temporary trace directories go under
    `scratch`, which the parent removes when the pool stops. Ctrl-C reaches the whole process
    group; the parent decides what happens, so the worker ignores SIGINT (held from its start:
    `_execute_pool`). And the worker must not outlive the parent, even after kill -9 of the
    parent: on Linux the kernel kills it when the parent dies (prctl PR_SET_PDEATHSIG, SIGKILL);
    the parent may have died before that call, so the worker then checks that its parent is
    still the process that started it; and, where prctl is not available, a watchdog thread
    checks it every PARENT_CHECK_S seconds."""
    if scratch is not None:
        tempfile.tempdir = scratch
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # discards a Ctrl-C held since exec
    if hasattr(signal, "pthread_sigmask"):            # blocked since exec: see _execute_pool
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent_pid:
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True,
                         name="sweep-parent-watchdog").start()


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        if os.getppid() != parent_pid:
            os._exit(1)
