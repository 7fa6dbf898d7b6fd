"""The `sweep` subcommand: ``python initializer.py sweep SWEEP.json [--jobs N] ...``.

Exit status: 0 when every run succeeded, 1 when runs failed (they are recorded with their
error), 2 for bad input (sweep file, option values, unwritable output directory, a directory
holding another sweep without --force), 128 + the signal number when SIGINT (Ctrl-C: 130) or
SIGTERM (143) stopped the sweep, as for single runs (the finished runs are kept: run the same
command again to resume).
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from pathlib import Path

from netsim.cli_options import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RUNS_FAILED,
    OneLineParser,
    UsageError,
    add_shared_options,
    cluster_available,
    figures_remedy,
    modules_available,
    program_name,
    report_available,
)
from netsim.cli_output import progress_shown
from plot_tool.schema import stopped_early

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_RUNS_FAILED",
           "build_sweep_parser", "sweep_main"]

MISSING_SHOWN = 5      # warnings for runs lacking a metric; the rest are counted


class _Lines(logging.Formatter):
    """A log record as the sweep command's own lines read: ``warning: MESSAGE``."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def _remove_stale(out: Path, sweep, before: tuple, quiet: bool, *, report: bool,
                  figures: bool) -> None:
    """When results.csv or sweep.json changed since `before` (their bytes), remove the report
    (`report`) and figures (`figures`) drawn from the earlier ones, and say so."""
    from netsim.sweep_store import RESULTS_FILE, SWEEP_FILE, remove_stale
    if (_read_bytes(out / RESULTS_FILE), _read_bytes(out / SWEEP_FILE)) == before:
        return
    stale = remove_stale(out, sweep.plots, report=report, figures=figures)
    if stale and not quiet:
        print(f"{sweep.name}: removed {', '.join(stale)}, drawn from the earlier results "
              f"or plots (--report and figures draw them again)", file=sys.stderr)


def _read_bytes(path: Path):
    """The bytes of a regular file, None for anything else (a FIFO would block, a link to
    /dev/zero never end)."""
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def build_sweep_parser() -> argparse.ArgumentParser:
    """The parser of ``sweep SWEEP.json``."""
    parser = OneLineParser(
        prog=f"{program_name()} sweep",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a parameter sweep: every point x seed of a sweep file is an independent "
                    "simulation,\nrun in parallel; results.csv, one record per run and the "
                    "figures go to the results directory.",
        epilog="""resume:
  Running the same sweep into the same directory again runs only what is missing: each run is
  keyed by the SHA-256 of its resolved configuration (topology with the point's parameters,
  duration, interval, seed), so an edited setting re-runs just the points it changes, and a
  metric added to the file is computed from the stored run records without re-running.
  A directory holds one sweep: another sweep (name, topology or swept parameters differ) is
  refused unless --force.

interrupts:
  Ctrl-C (SIGINT) or SIGTERM stops the workers, keeps every finished run and exits 130
  (143 for SIGTERM); the same command resumes. Workers never outlive this process, even
  after kill -9.

exit status: 0 all runs ok, 1 some runs failed (recorded with their error), 2 bad input,
  130 interrupted by Ctrl-C, 143 by SIGTERM.

Single runs: python initializer.py --help.  Sweep files, resume and figures: docs/sweeps.md.
examples:
  python initializer.py sweep experiments/goodput_vs_loss.json --jobs 2
  python initializer.py sweep SWEEP.json --scheduler tcp://scheduler:8786""")
    parser.add_argument("sweep", help="sweep file (JSON), e.g. experiments/goodput_vs_loss.json")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="worker processes (default: the number of cores)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="run on a Dask distributed cluster (e.g. tcp://host:8786) instead")
    parser.add_argument("--run-timeout", type=float, metavar="S",
                        help="stop a run that takes more than S seconds of wall time and record "
                             "it as failed (not with --scheduler)")
    parser.add_argument("--force", action="store_true",
                        help="replace the results of a different sweep in --out (its sweep.json, "
                             "results.csv, runs/ and figures are deleted)")
    add_shared_options(parser, "sweep")  # --out --no-plots --show --report --quiet --plugin
    return parser


def sweep_main(argv) -> int:
    from netsim.sweep import (
        SweepError,
        SweepInterrupted,
        jobs_problem,
        load_sweep,
        run_sweep,
        run_timeout_problem,
        seeds_warning,
    )
    from netsim.sweep_execute import SchedulerLost
    from netsim.sweep_store import RECORDS_DIR, RESULTS_FILE, SWEEP_FILE, remove_figure_partials
    args = build_sweep_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    for handler in logging.getLogger().handlers:   # "warning: ..." as the command's own lines
        handler.setFormatter(_Lines())
    try:
        problem = jobs_problem(args.jobs) or run_timeout_problem(args.run_timeout, args.scheduler)
        if problem is not None:
            raise UsageError(problem)
        if args.out == "":
            raise UsageError("--out: expected a path, got an empty string")
        if args.scheduler:
            cluster_available()
        sweep = load_sweep(args.sweep, plugins=args.plugin)
        if sweep.plots and (not args.no_plots or args.show):
            modules_available("drawing the sweep's figures", ("numpy", "matplotlib"),
                              figures_remedy("python initializer.py report DIR, or run the "
                                             "sweep again: it reuses every run"))
        if args.report:
            report_available()
    except (SweepError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else Path("results") / "sweeps" / sweep.name
    if args.report:                           # before any run: its report.html would be refused
        from plot_tool.figure_files import foreign_report
        page = out / "report.html"
        if foreign_report(page):
            print(f"error: {page}: exists and is not a report netsim wrote (a file of yours, "
                  f"or a symbolic link): move it, or run without --report", file=sys.stderr)
            return EXIT_BAD_INPUT
    total = len(sweep.runs())
    bar = None
    if progress_shown(args.quiet):
        from tqdm import tqdm
        bar = tqdm(total=total, unit="run", file=sys.stderr, desc=sweep.name)
    if args.scheduler:                        # reachable, before anything is written
        from netsim.sweep_execute import scheduler_problem
        problem = scheduler_problem(args.scheduler)
        if problem is not None:
            if bar is not None:
                bar.close()
            print(f"error: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
    started = time.perf_counter()
    counts: dict = {}
    before = _read_bytes(out / RESULTS_FILE), _read_bytes(out / SWEEP_FILE)
    try:
        rows = run_sweep(sweep, out, jobs=args.jobs, scheduler=args.scheduler, force=args.force,
                         progress=(lambda row: bar.update(1)) if bar is not None else None,
                         counts=counts, run_timeout_s=args.run_timeout)
    except SchedulerLost as lost:             # (a SweepInterrupted: the finished runs are kept)
        if bar is not None:
            bar.close()
        _remove_stale(out, sweep, before, args.quiet, report=True, figures=True)
        print(f"error: {sweep.name}: {lost}; {lost.done} of {lost.total} runs done, kept in "
              f"{out}/results.csv; run the same command to resume", file=sys.stderr)
        return EXIT_RUNS_FAILED
    except SweepInterrupted as stop:
        if bar is not None:
            bar.close()
        # what was drawn from the earlier results goes now: nothing draws it again this time
        _remove_stale(out, sweep, before, args.quiet, report=True, figures=True)
        print(f"{sweep.name}: interrupted ({signal.Signals(stop.signum).name}); {stop.done} of "
              f"{stop.total} runs done, kept in {out}/results.csv; run the same command to resume",
              file=sys.stderr)
        return 128 + int(stop.signum)
    except KeyboardInterrupt as exc:          # before the runs started: nothing to keep
        print(f"{sweep.name}: interrupted before any run finished", file=sys.stderr)
        return 128 + int(getattr(exc, "signum", signal.SIGINT))
    except SweepError as exc:                 # another sweep in --out
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        where = f"cannot write {exc.filename}" if exc.filename else f"cannot write results to {out}"
        kept = ("; the runs recorded so far are kept: run the same command to resume"
                if (out / RECORDS_DIR).is_dir() else "")
        print(f"error: {where}: {exc.strerror or exc}{kept}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        if bar is not None:
            bar.close()
    failed = [row for row in rows if row["status"] != "ok"]
    drawing = bool(sweep.plots) and (not args.no_plots or args.show)
    remove_figure_partials(out, sweep.plots)   # what a sweep killed while drawing left
    # what was drawn from the earlier results, or from the earlier sweep.json (its plots)
    _remove_stale(out, sweep, before, args.quiet, report=not args.report, figures=not drawing)
    stage = "after its runs"        # results.csv is whole from here on: an interrupt keeps it
    try:
        if drawing:
            stage = "while drawing the figures"
            from plot_tool.sweep_figures import make_sweep_figures
            make_sweep_figures(out, show=args.show)
        if args.report:
            stage = "while writing the report"
            from plot_tool.report import make_report
            report = make_report(out)
            if not args.quiet:
                print(f"{sweep.name}: report written to {report}")
    except KeyboardInterrupt as exc:
        signum = int(getattr(exc, "signum", signal.SIGINT))
        print(f"{sweep.name}: interrupted ({signal.Signals(signum).name}) {stage}; all "
              f"{len(rows)} runs are in {out}/results.csv", file=sys.stderr)
        return 128 + signum
    except ValueError as exc:     # (the plots are checked before any run: this is a last guard)
        print(f"error: {exc} ({stage}; all {len(rows)} runs are in {out}/results.csv)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if counts.get("other_code") and not args.quiet:
        print(f"{sweep.name}: {counts['other_code']} run records were made by other netsim "
              f"code (its sources, or the plugins, changed since): simulated again",
              file=sys.stderr)
    if not args.quiet:
        reused = counts.get("reused", 0)
        earlier = f", {reused} reused from earlier" if reused else ""
        simulated = counts.get("simulated", 0)
        shared = counts.get("rows_now", simulated) - simulated
        shared_text = f" (+{shared} runs of the same configurations)" if shared > 0 else ""
        print(f"{sweep.name}: {len(rows)} runs of {total} in {out}/results.csv "
              f"({simulated} simulated now{shared_text}{earlier}; "
              f"{time.perf_counter() - started:.1f} s wall, {len(failed)} failed)")
    for row in failed:
        print(f"warning: run {row['run_id']} failed: {row['error']}", file=sys.stderr)
    early = [row for row in rows if row["status"] == "ok" and stopped_early(row)]
    for row in early[:MISSING_SHOWN]:         # ok runs that ended at a bound, before the others
        print(f"warning: run {row['run_id']} {row['error']}", file=sys.stderr)
    if len(early) > MISSING_SHOWN:
        print(f"warning: {len(early) - MISSING_SHOWN} more runs stopped early (the error column "
              f"of {out}/results.csv says why)", file=sys.stderr)
    lacking = [row for row in rows if row["status"] == "ok" and row.get("error")
               and not stopped_early(row)]
    for row in lacking[:MISSING_SHOWN]:       # ok runs with an empty metric: why, in the row
        print(f"warning: run {row['run_id']}: no value for {row['error']}", file=sys.stderr)
    if len(lacking) > MISSING_SHOWN:
        print(f"warning: {len(lacking) - MISSING_SHOWN} more runs lack a metric (the error "
              f"column of {out}/results.csv says why)", file=sys.stderr)
    same = seeds_warning(sweep, out)
    if same:
        print(f"warning: {same}", file=sys.stderr)
    return EXIT_RUNS_FAILED if failed else EXIT_OK
