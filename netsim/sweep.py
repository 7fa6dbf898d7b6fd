"""Running parameter sweeps: every point x seed of a `Sweep` is an independent simulation.

`run_sweep` is the orchestration; the jobs are in their own modules (docs/sweeps.md):

* `netsim.sweep_file` reads and validates a sweep file (`load_sweep`), with
  `netsim.sweep_parameters` (values, paths), `netsim.sweep_points` (the `Sweep`, its points and
  runs), `netsim.sweep_metrics` (what can be collected, and computing it) and
  `netsim.sweep_theory` (theory curves resolved from the topology);
* `netsim.sweep_plan`: every run with the digest of its configuration;
* `netsim.sweep_store`: the sweep directory (sweep.json, run records, results.csv), resume;
* `netsim.sweep_execute`: one run in a worker, the process pool or Dask cluster, and signals.

A sweep whose runs cannot differ between seeds (nothing random in the topology) is run as asked
and `seeds_warning` says so.
"""
from __future__ import annotations

import csv
import logging
import numbers
from contextlib import closing
from functools import partial
from pathlib import Path

from netsim import sweep_execute
from netsim.code_digest import code_digest
from netsim.sweep_execute import SweepInterrupted
from netsim.sweep_file import load_sweep
from netsim.sweep_metrics import (
    DERIVED_METRICS,
    MetricUnavailable,
    RerunNeeded,
    compute_metrics,
    metric_values,
)
from netsim.sweep_parameters import SweepError, set_path, value_cell
from netsim.sweep_plan import PlannedRun, plan
from netsim.sweep_points import Sweep, point_data, point_spec
from netsim.sweep_store import (
    RECORDS_DIR,
    RESULTS_FILE,
    SWEEP_FILE,
    SweepConflict,
    cell_text,
    claim,
    prune_records,
    read_record,
    result_columns,
    save_record,
    write_results_csv,
)
from netsim.sweep_theory import resolve_theory
from plot_tool.figure_files import naming_errors
from plot_tool.schema import STOPPED_EARLY

log = logging.getLogger(__name__)

EARLY_STOPS = ("limit", "stalled")    # stop reasons of a run that ended before its duration

__all__ = ["DERIVED_METRICS", "RECORDS_DIR", "RESULTS_FILE", "SWEEP_FILE", "MetricUnavailable",
           "PlannedRun", "Sweep", "SweepConflict", "SweepError", "SweepInterrupted",
           "compute_metrics", "jobs_problem", "load_sweep", "plan", "point_data", "point_spec",
           "resolve_theory", "run_sweep", "run_timeout_problem", "seeds_warning", "set_path",
           "value_cell"]


def _row(sweep: Sweep, run: PlannedRun, result: dict) -> dict:
    metrics = sweep.metrics
    row = {"run_id": run.run_id, "point": run.point, "seed": run.seed}
    row.update({param: sweep.cell(param, value) for param, value in run.params})
    row.update({metric: None for metric in metrics})
    row.update(config_digest=run.digest, wall_time_s=result.get("wall_time_s"),
               status=result["status"], error=result["error"])
    if result["status"] == "ok":
        try:                    # each metric apart: one a run cannot give blanks only its cell
            values, problems = metric_values(result["record"], metrics)
        except Exception as exc:                  # recorded like a failed run
            row["status"], row["error"] = "error", f"{type(exc).__name__}: {exc}"
        else:
            row.update(values)
            summary = result["record"].get("summary") or {}
            early = None
            if summary.get("stop_reason") in EARLY_STOPS:     # (its values are of a shorter run)
                end_s = summary.get("end_time_s")
                at = f" at t={end_s:.6g} s" if isinstance(end_s, (int, float)) else ""
                detail = summary.get("stop_detail")
                early = f"{STOPPED_EARLY}{at}" + (f" ({detail})" if detail else "")
            row["error"] = "; ".join([*filter(None, [early]), *problems.values()])
    return row


def _reused_rows(sweep: Sweep, out: Path, runs: list, want_check: bool, counts: dict):
    """The rows of the runs whose records `out` holds (computed from them) and the tasks of the
    others, one per configuration digest: (rows by run id, tasks by digest, runs by digest). A
    record made by other code (`netsim.code_digest`: the simulator's sources or the plugins
    changed since) is not reused; `counts["other_code"]` says how many."""
    rows: dict = {}
    todo: dict = {}
    by_digest: dict = {}
    code = code_digest(sweep.plugins)
    counts["other_code"] = 0
    for run in runs:
        by_digest.setdefault(run.digest, []).append(run)
        if run.digest in todo:
            continue
        record = read_record(out, run.digest)
        if record is not None and record.get("code_digest") != code:
            counts["other_code"] += 1         # (its numbers may not be this code's)
            record = None
        if record is not None:
            try:
                metric_values(record, sweep.metrics)
            except RerunNeeded:                   # only a new run can give a metric
                record = None
            except Exception:                     # a new run would fail the same way: the
                pass                              # row records the error (_row)
        if record is None:
            todo[run.digest] = (run.params, run.digest, run.seed, sweep.interval_s,
                                want_check, sweep.plugins)      # (its topology: `_task`)
            continue
        rows[run.run_id] = _row(sweep, run, {"status": "ok", "error": "", "record": record,
                                             "wall_time_s": record.get("wall_time_s")})
    return rows, todo, by_digest


def _task(sweep: Sweep, planned: tuple) -> tuple:
    """The task `run_one` takes for a planned one (params, digest, ...): its point's topology
    is made here, as the task is handed out, so that a sweep of thousands of runs holds the
    topologies of the runs going on, not of every run it plans."""
    return (point_data(sweep, planned[0]), *planned[1:])


def _run_missing(sweep: Sweep, out: Path, tasks: list, by_digest: dict, rows: dict, columns: list,
                 options: dict) -> None:
    """Run `tasks`, saving each record and appending its rows to results.csv as it finishes."""
    code = code_digest(sweep.plugins)
    other_code = 0
    with open(out / RESULTS_FILE, "a", newline="") as fh, sweep_execute.StopSignals() as stop:
        writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        with closing(sweep_execute.execute_runs(
                tasks, options["jobs"], options["scheduler"], stop, prepare=partial(_task, sweep),
                run_timeout_s=options["run_timeout_s"])) as results:
            for result in results:
                options["simulated"] += 1
                if result["status"] == "ok":
                    save_record(out, result["record"])
                    if result["record"].get("code_digest") != code and not other_code:
                        other_code += 1           # (said once: a resume runs them again)
                        log.warning("%s: run %s was simulated by other netsim code than this "
                                    "command's (a Dask worker importing another checkout or "
                                    "version?); a resume will simulate it again", sweep.name,
                                    result["config_digest"][:12])
                for run in by_digest[result["config_digest"]]:
                    row = _row(sweep, run, result)
                    rows[run.run_id] = row
                    with naming_errors(out / RESULTS_FILE):
                        writer.writerow({k: cell_text(v) for k, v in row.items()})
                        fh.flush()
                    if options["progress"] is not None:
                        options["progress"](row)


def jobs_problem(jobs) -> str | None:
    """Why `jobs` (``--jobs``: worker processes) cannot be used, or None: None (as many as the
    machine has cores) or an integer (not a bool) of at least 1. 0 is refused, not taken for
    "all cores", and a string is not taken for its number."""
    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral) or jobs < 1:
        return f"--jobs: expected a number of processes >= 1, got {jobs!r}"
    return None


MAX_RUN_TIMEOUT_S = 1e6     # (11.6 days; far beyond, the system's interval timer overflows)


def run_timeout_problem(run_timeout_s, scheduler: str | None) -> str | None:
    """Why `run_timeout_s` (``--run-timeout``) cannot be used, or None: a number of seconds
    above 0 and at most MAX_RUN_TIMEOUT_S (numpy's numbers too), and not on a Dask cluster,
    whose workers run tasks in threads that nothing can stop from outside."""
    if run_timeout_s is None:
        return None
    if (isinstance(run_timeout_s, bool) or not isinstance(run_timeout_s, numbers.Real)
            or not 0 < float(run_timeout_s) <= MAX_RUN_TIMEOUT_S):
        shown = repr(run_timeout_s) if isinstance(run_timeout_s, str) else run_timeout_s
        return (f"--run-timeout: expected a number of seconds above 0 and at most "
                f"{MAX_RUN_TIMEOUT_S:g}, got {shown}")
    if scheduler:
        return ("--run-timeout: not with --scheduler: a Dask worker runs each run in one of its "
                "threads, which cannot be stopped from outside; leave it out, or run with --jobs")
    return None


def run_sweep(sweep: Sweep, out_dir, *, jobs: int | None = None, scheduler: str | None = None,
              progress=None, force: bool = False, counts: dict | None = None,
              run_timeout_s: float | None = None) -> list:
    """Run every run of `sweep` whose result `out_dir` does not hold yet; return all rows in run
    order. Raises SweepConflict when `out_dir` holds another sweep (unless `force`), and
    SweepInterrupted on SIGINT/SIGTERM after saving every finished run. `progress(row)` is
    called once per row, reused ones first. `counts`, if given, gets "reused" (the runs whose
    results `out_dir` held), "simulated" (the configurations simulated now: runs that resolve to
    the same configuration are simulated once), "rows_now" (the runs they gave) and
    "other_code" (the configurations whose records other code made: simulated again).
    `run_timeout_s` stops a run that goes past that many seconds of wall time and records it as
    failed ("RunTimedOut: ..."), its runs then in worker processes, one job included;
    ValueError when it is not a number of seconds in (0, 1e6] or comes with a
    `scheduler` (`run_timeout_problem`), or when `jobs` is neither None nor an integer >= 1
    (`jobs_problem`): both checked before anything is written."""
    problem = jobs_problem(jobs) or run_timeout_problem(run_timeout_s, scheduler)
    if problem is not None:
        raise ValueError(problem)
    jobs = None if jobs is None else int(jobs)      # (numpy's integers too)
    run_timeout_s = None if run_timeout_s is None else float(run_timeout_s)
    out = Path(out_dir)
    runs = plan(sweep)
    claim(out, sweep, force)
    columns = result_columns(sweep)
    want_check = any(m.split(".")[0] == "check" for m in sweep.metrics)
    found: dict = {}
    rows, todo, by_digest = _reused_rows(sweep, out, runs, want_check, found)
    reused = len(rows)
    if counts is not None:
        counts["reused"], counts["simulated"] = reused, 0
        counts["other_code"] = found["other_code"]
    order = [run.run_id for run in runs]

    def in_order():
        return [rows[run_id] for run_id in order if run_id in rows]

    write_results_csv(out / RESULTS_FILE, columns, in_order())
    if progress is not None:
        for row in in_order():
            progress(row)
    interrupted = None
    options = {"jobs": jobs, "scheduler": scheduler, "progress": progress, "simulated": 0,
               "run_timeout_s": run_timeout_s}
    try:
        _run_missing(sweep, out, list(todo.values()), by_digest, rows, columns, options)
    except SweepInterrupted as exc:
        interrupted = exc
    write_results_csv(out / RESULTS_FILE, columns, in_order())
    if interrupted is not None:
        interrupted.done, interrupted.total, interrupted.out = len(rows), len(runs), out
        raise interrupted
    prune_records(out, set(by_digest))
    if counts is not None:      # configurations simulated: runs that resolve to one run once
        counts["simulated"] = options["simulated"]
        counts["rows_now"] = len(rows) - reused
    return in_order()


def seeds_warning(sweep: Sweep, out_dir) -> str | None:
    """The warning a sweep with several seeds deserves when its seeds cannot differ: none of
    its runs drew a random number (no random loss, jitter, random workload, RED or PIE drop...)
    nor hashed flows onto ECMP paths, so every seed of a point repeats the same run
    (docs/sweeps.md, "Running"). None when there is one seed, when some run used its seed, or
    when a run's record does not say (a record of an earlier netsim, a failed run)."""
    if len(sweep.seeds) < 2:
        return None
    out = Path(out_dir)
    for run in plan(sweep):
        record = read_record(out, run.digest)
        if record is None or record.get("seed_used") is not False:
            return None
    return (f"{sweep.name}: its {len(sweep.seeds)} seeds per point gave identical runs: nothing in "
            f"the topology draws random numbers (no random loss, jitter, random workload, RED or "
            f"PIE drops) and no ECMP hashing depends on the seed, so deterministic runs repeat "
            f"each other; use \"seeds\": 1, or add randomness (e.g. jitter) for seeds to differ")
