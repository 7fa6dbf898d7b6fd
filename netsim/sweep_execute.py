"""Running a sweep's runs: one run in a worker (`run_one`, which never raises), the process pool
(``--jobs``) or a Dask cluster (``--scheduler``), and the signals that stop them.

SIGINT and SIGTERM stop a sweep: its workers are killed and `SweepInterrupted` is raised after
the runs that had finished are yielded. Workers never outlive the process that started them
(`_worker_init`). A worker that dies (SIGKILL, the out-of-memory killer) fails only the run that
killed it: the pool's runs are run again, the suspects alone (`_execute_pool`); on Dask, a run
Dask gives up on is run again alone before it is recorded as failed (`_execute_dask`), and the
loss of the scheduler stops the sweep as an interrupt does (`SchedulerLost`).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import json
import logging
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import context as multiprocessing_context

from netsim.results_dir import json_text, pid_alive
from netsim.sweep_store import RECORD_FORMAT
from netsim.sweep_theory import base_rtts_ms

POLL_S = 0.2                 # how often the parent looks for finished runs and stop requests
PARENT_CHECK_S = 1.0         # how often a worker's watchdog checks that its parent is alive
PR_SET_PDEATHSIG = 1         # linux/prctl.h
_PLUGINS_LOADING = threading.Lock()



class RunTimedOut(BaseException):
    """A run went past the sweep's wall-time limit (``--run-timeout``): raised in it, wherever it
    is (a hook that loops or sleeps included), by SIGALRM (`_wall_limit`). A BaseException, so
    that a hook's ``except Exception`` does not swallow it; `run_one` records it as the run's
    error."""

    def __init__(self, limit_s: float):
        super().__init__(f"the run went past --run-timeout {limit_s:g} s of wall time")


HARD_STOP_AFTER_S = 5.0     # past the limit: a run still going (it caught every RunTimedOut)
EXIT_TIMED_OUT = 124        # ... ends its worker process with this status (as timeout(1))


@contextlib.contextmanager
def _wall_limit(limit_s):
    """Raise RunTimedOut in this worker process's main thread once `limit_s` seconds of wall
    time have passed, and again every second after while the block goes on; a run that has
    caught them all (a bare ``except:``, ``except BaseException``) for HARD_STOP_AFTER_S more
    ends the process (`_end_timed_out_worker`). Nothing when `limit_s` is None. After the
    block, an alarm already on its way does nothing."""
    if limit_s is None:
        yield
        return
    armed = True
    hard_at = time.monotonic() + limit_s + HARD_STOP_AFTER_S

    def expire(signum, frame):
        if not armed:
            return
        if time.monotonic() >= hard_at:
            _end_timed_out_worker(limit_s)
        raise RunTimedOut(limit_s)

    previous = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, limit_s, 1.0)
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _end_timed_out_worker(limit_s: float) -> None:
    """End this worker process: its run went past the limit and caught every RunTimedOut for
    HARD_STOP_AFTER_S more. Its file of the run it started (`_pool_run`) gets the run's failure
    as a second line, which the parent records instead of running it again
    (`_ended_runs`)."""
    message = (f"RunTimedOut: the run went past --run-timeout {limit_s:g} s of wall time and "
               f"caught the stop (a bare except: or except BaseException) for "
               f"{HARD_STOP_AFTER_S:g} s more: its worker process was ended")
    if _marker is not None:
        with contextlib.suppress(OSError), open(_marker, "a") as fh:
            fh.write("\n" + message)
    os._exit(EXIT_TIMED_OUT)


class SweepInterrupted(BaseException):
    """SIGINT or SIGTERM stopped the sweep; the finished runs are saved. A BaseException, like
    KeyboardInterrupt, so that nothing records it as a failed run."""

    def __init__(self, signum: int, done: int = 0, total: int = 0, out=None):
        super().__init__(signum)
        self.signum, self.done, self.total, self.out = signum, done, total, out


def run_one(task) -> dict:
    """Run one configuration; never raises: a failure gives status "error" and its message.

    Returns {"config_digest", "status", "error", "wall_time_s", "record"}: the record (summary,
    base RTTs, the check report when asked for) is what `compute_metrics` reads. A task's
    seventh item, when present and not None, is its wall-time limit in seconds (RunTimedOut,
    recorded as the run's error); `run_one` then runs in a pool worker (`_wall_limit`)."""
    data, digest, seed, interval_s, want_check = task[:5]
    plugins = task[5] if len(task) > 5 else ()
    limit_s = task[6] if len(task) > 6 else None
    from netsim.code_digest import code_digest
    code = code_digest(plugins)       # (before the simulator is imported: the code that runs)
    out = {"config_digest": digest, "status": "ok", "error": "", "record": None}
    start = time.perf_counter()
    try:
        with _wall_limit(limit_s):
            if plugins:                        # workers are other processes: load them here
                from netsim.plugins import load_entry_points, load_plugins
                with _PLUGINS_LOADING:    # (a Dask worker's threads: one registers, the others
                    load_entry_points()   # find it registered, not "already taken" half-way)
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
                          "code_digest": code,     # (the code that ran it)
                          "seed_used": seed_used(results), "summary": summary,
                          "base_rtt_ms": _safe_base_rtts_ms(spec), "check": None}
                if want_check:
                    from theory.check import compare, predict_run
                    record["check"] = compare(results, predict_run(spec, results))  # as --check
            finally:
                run.close()
            out["record"] = json.loads(json_text(record, default=_jsonable))
    except (Exception, SystemExit, KeyboardInterrupt, RunTimedOut) as exc:  # recorded, the
        # sweep goes on
        line = None
        if plugins:                               # a plugin's failure: its file, line and hook
            from netsim.plugins import failure_line
            line = failure_line(exc)
        if not isinstance(exc, (Exception, RunTimedOut)) and line is None:
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
    `sim.rng`), or ECMP picked a member of an equal-cost set with it (routing/ecmp.py
    `sets_made`; ECMP on a network without equal costs, a dumbbell, leaves the seed unused)."""
    network = results.network
    if network.sim.rng.getstate() != random.Random(network.seed).getstate():
        return True
    if not (results.summary.get("routing") or {}).get("ecmp"):
        return False
    from routing.ecmp import sets_made
    return sets_made(network.routers.values(), network.agents)


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


def _limited(prepare, limit_s: float, task) -> tuple:
    """`prepare(task)` with the wall-time limit as its seventh item (`run_one`)."""
    prepared = tuple(prepare(task))
    return (*prepared[:5], prepared[5] if len(prepared) > 5 else (), limit_s)


def execute_runs(tasks: list, jobs: int | None, scheduler: str | None, stop: StopSignals,
                 prepare=_as_is, run_timeout_s: float | None = None):
    """Yield run_one's results as runs finish; SweepInterrupted when `stop` is asked, after
    yielding the runs that had finished (SchedulerLost, a SweepInterrupted, when a Dask
    scheduler is lost). `prepare(task)` makes the task run_one takes (its topology) as it is
    handed out: in this process, to a pool or to a Dask cluster, a few runs ahead of those going
    on (`_execute_pool`, `_execute_dask`), so that memory holds the runs in progress, not every
    task. `run_timeout_s` holds each run to that many seconds of wall time (not on Dask, whose
    workers run tasks in threads: `run_sweep` refuses it); the runs then go to worker
    processes, one job included: a run that does not stop is ended with its worker, and the
    sweep's own process keeps its signals and timers."""
    if not tasks:
        return
    if scheduler:
        yield from _execute_dask(tasks, scheduler, stop, prepare)
        return
    if run_timeout_s is not None:
        prepare = functools.partial(_limited, prepare, run_timeout_s)
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 and run_timeout_s is None:
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
RUNNING_DIR = "running"      # in a pool's scratch directory: which run each worker has started


SCRATCH_PREFIX = "netsim-sweep-"


def scratch_directory() -> str:
    """A new scratch directory for a pool's workers, in the temporary directory, named with
    this process's pid (``netsim-sweep-<pid>-<random>``); first those of sweeps whose process is
    gone are removed (a sweep killed with kill -9 cannot remove its own, with the partial traces
    of the runs its workers had started)."""
    parent = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            pid, dash, _ = entry.name[len(SCRATCH_PREFIX):].partition("-")
            if (entry.name.startswith(SCRATCH_PREFIX) and dash and pid.isdigit()
                    and entry.is_dir(follow_symlinks=False) and not pid_alive(int(pid))):
                shutil.rmtree(entry.path, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=parent)


def _execute_pool(tasks: list, jobs: int, stop: StopSignals, prepare=_as_is):
    """Run `tasks` in a pool of `jobs` worker processes. A worker that dies (killed, out of
    memory) breaks the whole pool, and every run it had is lost with it; only the run that
    killed its worker fails. The runs the workers had started are the suspects: each is run
    again alone, in a pool of one worker, one after the other (`_run_alone`); the one whose
    worker dies again is recorded as failed, with how its worker died, and is not tried again;
    the others give their results. The runs not started yet, and those still waiting, go on in
    a fresh pool. Every break settles at least one suspect, so a sweep always ends."""
    # the workers' runs write their traces under one directory of the sweep's, removed when
    # the pool stops: an interrupt kills workers mid-run, which leaves their own behind
    scratch = scratch_directory()
    try:
        os.mkdir(os.path.join(scratch, RUNNING_DIR))
        waiting = iter(tasks)
        while True:
            lost = yield from _pool_round(waiting, jobs, stop, prepare, scratch)
            if lost is None:
                return
            started = _marked_runs(scratch)
            ended = _ended_runs(started)        # (runs past their time limit: failed, not again)
            for task in lost:
                if task[1] in ended:
                    yield _failed(task, ended[task[1]])
            lost = [task for task in lost if task[1] not in ended]
            suspects = [task for task in lost if task[1] in started.values()] or lost
            unstarted = [task for task in lost if not any(task is s for s in suspects)]
            settled = yield from _run_alone(suspects, stop, prepare, scratch)
            waiting = itertools.chain(unstarted, waiting)
            if settled is not True:         # workers die before they start a run: give up
                for task in waiting:
                    yield _failed(task, _cannot_start(settled))
                return
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@contextlib.contextmanager
def _workers_starting():
    """While workers are started (a pool's first submits). A Ctrl-C reaches the whole process
    group. Workers must ignore it from their first instruction, or one pressed while they import
    prints their tracebacks. So SIGINT is blocked in this thread while the workers are started:
    they inherit the mask across exec, hold a Ctrl-C pending until they ignore SIGINT
    (`_worker_init`), which discards it. Here the stop handler stays in place; a Ctrl-C in that
    window reaches it when the mask is put back (or at once, through another thread of this
    process). Without signal masks, SIGINT is ignored in that window instead: an ignored signal
    stays ignored across exec."""
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
    try:
        yield
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        elif main:
            signal.signal(signal.SIGINT, handler)


_MAIN_HIDDEN = threading.Lock()     # held while the main module's unreadable file is hidden


def unreadable_main_file() -> str | None:
    """The path `spawn` would give a worker to import the main module from (its ``__file__``,
    as `multiprocessing.spawn.get_preparation_data` resolves it) when no file is there: a
    script piped into ``python -`` is "<stdin>". None when the main module is imported by name
    (``python -m``), has no file (``python -c``, a notebook, the interactive prompt) or its
    file exists."""
    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return None
    path = getattr(main, "__file__", None)
    if not isinstance(path, str):
        return None
    from multiprocessing import process
    original_dir = getattr(process, "ORIGINAL_DIR", None)    # (the directory spawn resolves in)
    if not os.path.isabs(path) and original_dir is not None:
        path = os.path.join(original_dir, path)
    return None if os.path.isfile(path) else path


@contextlib.contextmanager
def _main_file_hidden():
    """While a worker is spawned: the main module's ``__file__`` is hidden when no file is
    there (`unreadable_main_file`), so that the worker does not import the main module again,
    as for a script given with ``python -c`` or a notebook's. Spawn would run that path as a
    script in every worker (``runpy.run_path``) and each would die before its first run: a
    script read from standard input ran no sweep with jobs above 1. The workers need nothing of
    the main module (a task is netsim's function and plain data; plugins are loaded from their
    files). Put back at once; the lock keeps two sweeps in threads from putting it back under
    each other."""
    with _MAIN_HIDDEN:
        path = unreadable_main_file()
        if path is None:
            yield
            return
        main = sys.modules["__main__"]
        name = main.__file__
        del main.__file__
        try:
            yield
        finally:
            main.__file__ = name


class _WorkerProcess(multiprocessing_context.SpawnProcess):
    """A spawned worker process, started with the main module's unreadable file hidden
    (`_main_file_hidden`): where `spawn` reads what the worker imports, whichever call of the
    pool starts it."""

    @staticmethod
    def _Popen(process_obj):
        with _main_file_hidden():
            return multiprocessing_context.SpawnProcess._Popen(process_obj)


class _SpawnContext(multiprocessing_context.SpawnContext):
    """The "spawn" context, whose processes are `_WorkerProcess`."""

    Process = _WorkerProcess


def _new_pool(workers: int, scratch: str):
    # workers are children of this process, started with spawn
    return _Pool(max_workers=workers, mp_context=_SpawnContext(), initializer=_worker_init,
                 initargs=(os.getpid(), scratch))


def _pool_round(waiting, jobs: int, stop: StopSignals, prepare, scratch: str):
    """Run the tasks of the iterator `waiting` in a new pool of `jobs` workers, yielding their
    results; return None when every task ran, or, when the pool broke (a worker died), the tasks
    it had not given a result for (a worker may have started them or not)."""
    from concurrent.futures.process import BrokenProcessPool
    pool = None
    pending: dict = {}
    lost: list = []
    try:
        with _workers_starting():
            pool = _new_pool(jobs, scratch)
            for task in itertools.islice(waiting, jobs * AHEAD_PER_WORKER):
                try:
                    pending[pool.submit(_pool_run, prepare(task))] = task
                except BrokenProcessPool:             # a worker died as it started
                    lost.append(task)
                    break
        while pending and not lost:
            finished, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            done = list(finished)
            if stop.signum is not None:                # keep what finished meanwhile, then stop
                done = [future for future in pending if future.done()]
            for future in done:
                task = pending.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:             # a worker died (killed, out of memory)
                    lost.append(task)                 # (or an interrupt killed it: stop.check)
                    continue
                yield result
            stop.check()
            if lost:
                break
            for task in itertools.islice(waiting, len(done)):      # (one for each finished)
                try:
                    pending[pool.submit(_pool_run, prepare(task))] = task
                except BrokenProcessPool:
                    lost.append(task)
                    break
        if not lost:
            return None
        _kill_workers(pool)               # broken: every future it had fails, or has finished
        pool = None
        for future, task in pending.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                yield future.result()
            else:
                lost.append(task)
        stop.check()
        return lost
    finally:
        if pool is not None:
            _kill_workers(pool)


def _run_alone(suspects: list, stop: StopSignals, prepare, scratch: str):
    """Run each task of `suspects` alone in a pool of one worker, one after the other, yielding
    its result, or its failure if its worker dies while running it (a new pool of one then
    takes the next). A worker that dies before it starts its run is given a second chance; if
    the next one does too, the workers cannot start (nothing will run): the task and the rest
    fail, and how the worker died is returned. Otherwise returns True."""
    from concurrent.futures.process import BrokenProcessPool
    pool = None
    unstarted_deaths = 0
    index = 0
    try:
        while index < len(suspects):
            task = suspects[index]
            stop.check()
            future = None
            if pool is not None:
                try:
                    future = pool.submit(_pool_run, prepare(task))
                except BrokenProcessPool:             # its worker died after the last run
                    _kill_workers(pool)
                    pool = None
            if pool is None:
                with _workers_starting():
                    pool = _new_pool(1, scratch)
                    try:
                        future = pool.submit(_pool_run, prepare(task))
                    except BrokenProcessPool:
                        future = None
            processes = list((getattr(pool, "_processes", None) or {}).values())
            while future is not None and not future.done():
                wait([future], timeout=POLL_S)
                if not future.done():
                    stop.check()
            try:
                if future is None:
                    raise BrokenProcessPool("the pool broke as its worker started")
                result = future.result()
            except BrokenProcessPool:
                stop.check()                          # (an interrupt killed it)
                marked = _marked_runs(scratch)
                ended = _ended_runs(marked).get(task[1])
                started = task[1] in marked.values()
                _kill_workers(pool)
                pool = None
                how = _exit_text(processes[0].exitcode if processes else None)
                if ended is not None:                 # past its time limit, caught the stop
                    yield _failed(task, ended)
                    index += 1
                    continue
                if started:
                    yield _failed(task, f"worker process died while running it{how}")
                    index += 1
                    continue
                unstarted_deaths += 1
                if unstarted_deaths < 2:
                    continue                          # (once: it may have been killed from outside)
                yield _failed(task, f"worker process died before starting it{how}; "
                                    f"{NO_MAIN_GUARD}")
                for rest in suspects[index + 1:]:
                    yield _failed(rest, _cannot_start(how))
                return how
            unstarted_deaths = 0
            index += 1
            yield result
        stop.check()
    finally:
        if pool is not None:
            _kill_workers(pool)
    return True


# why a pool's workers die before any run, most often: the script they import starts a sweep
NO_MAIN_GUARD = ("a Python script that runs a sweep with jobs above 1 must start it under "
                 "if __name__ == \"__main__\": (docs/sweeps.md, \"From Python\")")


def _cannot_start(how: str) -> str:
    return f"not run: the sweep's worker processes die before starting a run{how}; {NO_MAIN_GUARD}"


_running_dir: str | None = None      # in a pool worker: where it says which run it has started
_marker: str | None = None           # ... and the file saying so, while it runs one


def _pool_run(task) -> dict:
    """run_one in a pool worker, which says meanwhile which run it is running (a file named by
    its pid, holding the run's digest, in the pool's scratch directory): if it dies, the parent
    knows which run it had started."""
    global _marker
    marker = None
    if _running_dir is not None:
        marker = os.path.join(_running_dir, str(os.getpid()))
        try:
            with open(marker, "w") as fh:
                fh.write(task[1])
        except OSError:
            marker = None
    _marker = marker
    try:
        return run_one(task)
    finally:
        _marker = None
        if marker is not None:
            try:
                os.remove(marker)
            except OSError:
                pass


def _ended_runs(marked: dict) -> dict:
    """{digest: failure} of the runs whose workers ended themselves, past their time limit
    (`_end_timed_out_worker`), among `_marked_runs`."""
    return dict(text.split("\n", 1) for text in marked.values() if "\n" in text)


def _marked_runs(scratch: str) -> dict:
    """The runs the pool's workers had started and not finished: {pid: digest}, read from the
    workers' files (`_pool_run`), which are removed: a broken pool's workers are all dead. A
    worker that ended itself over a run past its time limit wrote the run's failure as a
    second line (`_ended_runs`): its text is not a digest."""
    folder = os.path.join(scratch, RUNNING_DIR)
    started: dict = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return started
    for name in names:
        path = os.path.join(folder, name)
        try:
            with open(path) as fh:
                started[name] = fh.read()
            os.remove(path)
        except OSError:
            pass
    return started


def _exit_text(exitcode: int | None) -> str:
    """How a worker process ended, as " (killed by SIGKILL: out of memory?)", or ""."""
    if exitcode is None or exitcode == 0:
        return ""
    if exitcode > 0:
        return f" (it exited with status {exitcode})"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    hint = ": out of memory?" if -exitcode == signal.SIGKILL else ""
    return f" (killed by {name}{hint})"


def _failed(task, message: str) -> dict:
    """run_one's result for `task` when it gave none (its worker died, Dask gave up on it)."""
    return {"config_digest": task[1], "status": "error", "record": None, "wall_time_s": None,
            "error": message}


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
DASK_IN_FLIGHT_PER_THREAD = 2     # runs handed to a Dask cluster per thread of its workers
DASK_MIN_IN_FLIGHT = 4            # ... and at least these many (a cluster that is scaling up)
DASK_WINDOW_REFRESH_S = 10.0      # how often the cluster's threads are counted again


class SchedulerLost(SweepInterrupted):
    """The Dask scheduler was lost during the sweep (it stopped, or the connection to it broke):
    the sweep stops as after an interrupt, every finished run kept, and running the same command
    resumes it. `signum` is None; str() says what happened."""

    def __init__(self, reason: str, done: int = 0, total: int = 0, out=None):
        super().__init__(None, done, total, out)      # type: ignore[arg-type]
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def scheduler_problem(scheduler: str) -> str | None:
    """Why the Dask scheduler at `scheduler` cannot take the sweep's runs (None if it can): it
    is connected to, and let go, before the sweep writes anything."""
    from dask.distributed import Client
    try:
        with Client(scheduler, timeout=SCHEDULER_TIMEOUT_S):
            return None
    except (OSError, TimeoutError, ValueError) as exc:
        return (f"--scheduler: cannot connect to the Dask scheduler at {scheduler}: "
                f"{_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text.strip() else type(exc).__name__


def _dask_window(client) -> int:
    """How many runs to keep on the cluster: a few per thread of its workers."""
    try:
        threads = sum(client.nthreads().values())
    except Exception:                             # (asked again later)
        threads = 0
    return max(DASK_MIN_IN_FLIGHT, DASK_IN_FLIGHT_PER_THREAD * threads)


def _execute_dask(tasks: list, scheduler: str, stop: StopSignals, prepare=_as_is):
    """Run `tasks` on the Dask cluster of `scheduler`, a bounded window of them at a time: each
    task is prepared (its topology made) as it is submitted, and more are submitted as results
    come back, so that this process holds the runs on the cluster, not every run of the sweep,
    and an interrupt is acted on within POLL_S. A worker that dies takes with it every run it
    had, and Dask gives up on a run (KilledWorker) when its workers died too often: such a run
    may have been only beside the one that kills workers, so it is a suspect, run again alone
    once the others are done (one after the other); the one Dask gives up on again is recorded
    as failed, and the sweep goes on. Losing the scheduler raises SchedulerLost after the
    finished runs."""
    from dask.distributed import Client
    client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
    lost = False
    try:
        suspects: list = []
        yield from _dask_runs(client, scheduler, iter(tasks), stop, prepare, suspects)
        for task in suspects:
            yield from _dask_runs(client, scheduler, iter([task]), stop, prepare, None)
    except SchedulerLost:
        lost = True
        raise
    finally:
        _close_client(client, lost)


class _DaskQuiet(logging.Filter):
    """Drops what Dask's loggers say (its client's attempts to reconnect to a lost scheduler,
    cancelled as the client is closed: "Failed to reconnect to scheduler after 30.00 seconds",
    which it did not wait, or the traceback of the cancelled attempt): SchedulerLost says it in
    one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith("distributed")


def _close_client(client, lost: bool) -> None:
    if not lost:
        client.close()
        return
    quiet = _DaskQuiet()
    handlers = {*logging.getLogger().handlers, *logging.getLogger("distributed").handlers}
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        client.close(timeout=5)
    except Exception:                                 # (the scheduler is gone)
        pass
    finally:      # (the client's loop may say it just after: the filter stays a few seconds)
        def remove():
            for handler in handlers:
                handler.removeFilter(quiet)
        timer = threading.Timer(5.0, remove)
        timer.daemon = True
        timer.start()


def _dask_runs(client, scheduler: str, waiting, stop: StopSignals, prepare, suspects):
    """Run the tasks of the iterator `waiting` on `client`'s cluster, a window at a time (one
    at a time when `suspects` is None), yielding their results; the tasks Dask gives up on are
    added to `suspects`, or, when it is None, are recorded as failed."""
    import queue
    finished: queue.SimpleQueue = queue.SimpleQueue()
    pending: dict = {}
    window, counted = 1, time.monotonic()
    if suspects is not None:
        window = _dask_window(client)
    try:
        while True:
            stop.check()
            if suspects is not None and time.monotonic() - counted > DASK_WINDOW_REFRESH_S:
                window, counted = _dask_window(client), time.monotonic()
            for task in itertools.islice(waiting, max(0, window - len(pending))):
                future = client.submit(run_one, prepare(task), pure=False)
                pending[future] = task
                future.add_done_callback(finished.put)
                if stop.signum is not None:
                    break
            if not pending:
                return
            try:
                done = [finished.get(timeout=POLL_S)]
            except queue.Empty:
                continue
            while True:                               # (and every other one finished by now)
                try:
                    done.append(finished.get_nowait())
                except queue.Empty:
                    break
            for future in done:
                task = pending.pop(future, None)
                if task is None:
                    continue
                result = _dask_result(client, scheduler, future, task)
                if result is None:                    # Dask gave up on it
                    if suspects is not None:
                        suspects.append(task)
                        continue
                    result = _failed(task, _killed_worker_text(future))
                yield result
    finally:
        if pending:
            try:
                client.cancel(list(pending))
            except Exception:                         # (the scheduler is gone)
                pass


def _dask_result(client, scheduler: str, future, task) -> dict | None:
    """run_one's result of a finished Dask future, None if Dask gave up on it (KilledWorker).
    run_one never raises, so an exception here is Dask's: the scheduler lost (its futures are
    cancelled: SchedulerLost), or a run Dask could not run, recorded as that run's failure."""
    from concurrent.futures import CancelledError
    try:
        return future.result()
    except (Exception, CancelledError) as exc:
        lost = isinstance(exc, CancelledError) or future.cancelled() or getattr(
            client, "status", "running") not in ("running", "newly-created")
        if lost:
            reason = getattr(exc, "reason", None) or _first_line(exc)
            raise SchedulerLost(f"lost the Dask scheduler at {scheduler} ({reason})") from None
        if type(exc).__name__ == "KilledWorker":
            return None
        return _failed(task, f"the Dask cluster could not run it: {type(exc).__name__}: "
                             f"{_first_line(exc)}")


def _killed_worker_text(future) -> str:
    try:
        tries = getattr(future.exception(), "allowed_failures", None)
    except Exception:
        tries = None
    on = ("on every worker Dask tried" if not isinstance(tries, int) else
          "on the worker Dask tried" if tries == 0 else
          f"on each of the {tries + 1} workers Dask tried")
    return f"worker process died while running it, {on} (KilledWorker: out of memory, or a crash?)"


def _worker_init(parent_pid: int, scratch: str | None = None) -> None:
    """Initializer of every pool worker. Its runs' temporary trace directories go under
    `scratch`, which the parent removes when the pool stops. Ctrl-C reaches the whole process
    group; the parent decides what happens, so the worker ignores SIGINT (held from its start:
    `_execute_pool`). And the worker must not outlive the parent, even after kill -9 of the
    parent: on Linux the kernel kills it when the parent dies (prctl PR_SET_PDEATHSIG, SIGKILL);
    the parent may have died before that call, so the worker then checks that its parent is
    still the process that started it; and, where prctl is not available, a watchdog thread
    checks it every PARENT_CHECK_S seconds."""
    global _running_dir
    if scratch is not None:
        tempfile.tempdir = scratch
        _running_dir = os.path.join(scratch, RUNNING_DIR)
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
