"""What the command line shows: the progress bar, the log's handlers, error lines, and the end
of a run (summary table, check table, warnings, exit status).

Everything here writes to the terminal or the log; nothing runs a simulation.
"""
from __future__ import annotations

import logging
import math
import os
import signal
import sys
from pathlib import Path

from netsim.cli_options import (
    EXIT_BAD_INPUT,
    EXIT_CHECK_FAILED,
    EXIT_FIGURES_FAILED,
    EXIT_OK,
    UsageError,
    importable,
)
from netsim.console import format_summary  # the console table (netsim/console.py)
from netsim.results_dir import PARTIAL_NAME

LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
FEW_SAMPLES = 10   # figures of a run shorter than this many sampling intervals get a warning


def configure_logging(level: str, logfile: str | None = None) -> None:
    """Log to stderr at `level`; and to `logfile` if given (see `open_log_file`)."""
    logging.basicConfig(level=getattr(logging, level), handlers=[logging.StreamHandler(sys.stderr)],
                        force=True, format=LOG_FORMAT)
    if logfile:
        open_log_file(logfile)


def open_log_file(logfile: str) -> None:
    """Also log to `logfile` (opened only once the inputs are read and the path is checked)."""
    try:
        handler = logging.FileHandler(logfile, mode="w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"-f {logfile}: cannot write the log file: {exc.strerror or exc}") from None
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logging.getLogger().addHandler(handler)


def progress_shown(quiet: bool) -> bool:
    """Whether to draw a progress bar: on a terminal, unless --quiet, and where tqdm is installed
    (Debian's PyPy has none: its runs go without a bar rather than fail)."""
    return not quiet and sys.stderr.isatty() and importable("tqdm")


class ProgressBar:
    """tqdm progress bar on stderr, in percent of the run; shown after half a second."""

    def __init__(self):
        from tqdm import tqdm
        self.bar = tqdm(total=100, unit="%", file=sys.stderr, delay=0.5, leave=False,
                        bar_format="{l_bar}{bar}| {n:.0f}% [{elapsed}<{remaining}]")
        self.done = 0.0

    def __call__(self, now_s: float, fraction) -> None:
        if fraction is None:
            return
        target = 100.0 * fraction
        if target > self.done:
            self.bar.update(target - self.done)
            self.done = target
        self.bar.set_description(f"t={now_s:.1f} s", refresh=False)

    def close(self) -> None:
        self.bar.close()


def error(line: str) -> int:
    """Print `error: line` on stderr; the exit status of bad input."""
    print(f"error: {line}", file=sys.stderr)
    return EXIT_BAD_INPUT


def failed_file(exc: OSError) -> str:
    """The file an OSError of a write was about: its filename, else the `path` of the writer
    (a trace file, a capture, the event trace) whose method raised it."""
    if exc.filename:
        return str(exc.filename)
    tb = exc.__traceback__
    path = None
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        found = getattr(owner, "path", None)
        if found is not None and isinstance(found, (str, os.PathLike)):
            path = found
        tb = tb.tb_next
    return str(path) if path is not None else "the results"


def written_name(path: str) -> str:
    """`path` with each staging or temporary component (``.NAME.partial-PID-RANDOM``, of a
    results directory being written or an `AtomicFile`; ``.NAME.partial-PID``, of a report
    page) shown as the NAME it becomes."""
    parts = Path(path).parts
    return str(Path(*(m["name"] if (m := PARTIAL_NAME.match(part)) else part
                      for part in parts))) if parts else path


def os_error_text(exc: OSError, what: str) -> str:
    """"FILE: the system's words" for an OSError (a full or read-only disk, a file that cannot
    be read): the file it was about, named as it is or would have been (not its temporary
    name), else `what`; Python's "[Errno 28] ..." form left out."""
    where = failed_file(exc)
    where = written_name(where) if where != "the results" else what
    return f"{where}: {exc.strerror or exc}"


def never_started(summary: dict, rows: int = 3) -> list:
    """Lines for the flows a run ended before they started (a `start_s` at or after its end:
    e.g. a shorter --duration), and for the workloads that opened no flow; the first `rows`
    flows named, then how many more. Their goodputs read 0, which looks like a network's fault.
    Only of a run that went to its duration: one stopped early (an error, a signal, a bound)
    says why itself."""
    if summary.get("stop_reason") != "duration":
        return []
    end_s = summary["end_time_s"]
    late = [(fid, f["start_s"]) for fid, f in summary["flows"].items()
            if f.get("start_s") is not None and f["start_s"] >= end_s]   # (at the end: its
    # first packet went out at the last instant, and nothing came back)
    lines = []
    if late:
        named = ", ".join(f"{fid} at {start_s:g} s" for fid, start_s in late[:rows])
        more = f" and {len(late) - rows} more" if len(late) > rows else ""
        lines.append(f"{len(late)} flow{'' if len(late) == 1 else 's'} never started: the run "
                     f"ended at {end_s:g} s, before {named}{more} "
                     f"({'its goodput reads' if len(late) == 1 else 'their goodputs read'} 0)")
    idle = [wid for wid, w in (summary.get("workloads") or {}).items()
            if not w.get("flows_started")]
    if idle:
        more = f" and {len(idle) - rows} more" if len(idle) > rows else ""
        lines.append(f"workload{'' if len(idle) == 1 else 's'} {', '.join(idle[:rows])}{more} "
                     f"opened no flow before the run ended at {end_s:g} s (a start_s at or "
                     f"after the end, or arrivals too rare for the run's length)")
    return lines


def finish_run(args, outcome, out, link_ids: list) -> int:
    """Show the end of a run (unless --quiet: the summary table, the check table, where the
    results are; always: warnings, a plugin's failure, an interrupt) and return its exit status.
    `outcome` is (results, the signal that stopped it or None, the check report or None, the
    plugin's failure line or None, (the signal, when it came) if one came once the
    simulation was over, the figures then left out, else None, and what failed if drawing the
    figures or the report failed, else None)."""
    results, signum, report, failure_line, drawing_stopped, drawing_failed = outcome
    if not args.quiet:
        print(format_summary(results.summary, args.links or link_ids, rows=args.table_rows,
                             busiest=not args.links))
        if report is not None:
            from theory.check_report import format_report
            print("\n" + format_report(report, rows=args.table_rows))
        print(f"\nresults written to {out}/")
    if results.summary["stop_reason"] in ("stalled", "limit"):
        print(f"warning: {results.summary['stop_detail']}", file=sys.stderr)
    for line in never_started(results.summary):
        print(f"warning: {line}", file=sys.stderr)
    end_s, interval_s = results.summary["end_time_s"], results.summary["interval_s"]
    if not args.no_plots and end_s == 0 and failure_line is None:
        print("warning: the run stopped at t = 0 s, before anything was sampled: its figures "
              "are empty", file=sys.stderr)
    if not args.no_plots and 0 < end_s < FEW_SAMPLES * interval_s and failure_line is None:
        samples = math.ceil(end_s / interval_s * (1 - 1e-9))
        if end_s < interval_s:
            lasted, has = f"less than one sampling interval ({interval_s:g} s)", "one sample"
        elif samples == 1:
            lasted, has = f"one sampling interval of {interval_s:g} s", "one sample"
        else:
            lasted, has = f"{samples} sampling intervals of {interval_s:g} s", f"{samples} samples"
        print(f"warning: the run lasted {end_s:g} s, {lasted}: its figures have {has} each; a "
              f"shorter --interval, e.g. {end_s / 20:.2g}, shows how it went", file=sys.stderr)
    if failure_line is not None and signum is not None and (
            results.summary["stop_reason"] == "interrupted"):   # (stopped in a plugin's hook)
        print(f"{failure_line} (at t={results.summary['end_time_s']:.3f} s; partial results "
              f"written to {out}/)", file=sys.stderr)
        return 128 + signum
    if failure_line is not None:
        print(f"error: {failure_line} (at t={results.summary['end_time_s']:.3f} s; partial "
              f"results written to {out}/)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if drawing_failed is not None:    # (after a plugin's failure: the figures were drawn)
        stage, what = drawing_failed
        if stage == "report":
            print(f"error: writing report.html failed ({what}): the results and figures are "
                  f"written to {out}/ without it; `python -m netsim report {out}` writes it "
                  f"again, and -v DEBUG shows where it failed (please report it)",
                  file=sys.stderr)
        else:
            print(f"error: drawing the figures failed ({what}): the results are written to "
                  f"{out}/ without figures{' or report.html' if args.report else ''}; `python "
                  f"-m netsim plot {out}` draws them again, and -v DEBUG shows where it failed "
                  f"(please report it)", file=sys.stderr)
    figures = " without figures" if drawing_stopped is not None or (
        drawing_failed is not None and drawing_failed[0] == "figures") else ""
    if signum is not None and results.summary["stop_reason"] == "interrupted":
        print(f"interrupted at t={results.summary['end_time_s']:.3f} s: partial results written "
              f"to {out}/{figures}", file=sys.stderr)
        return 128 + signum
    if signum is not None or drawing_stopped is not None:   # the simulation was over
        number, when = drawing_stopped if signum is None else (signum, "as the simulation ended")
        print(f"interrupted ({signal.Signals(number).name}) {when}: results written to {out}/"
              f"{figures} (the run was complete: stop reason "
              f"\"{results.summary['stop_reason']}\")", file=sys.stderr)
        return 128 + number
    if report is not None and report["passed"] is False:
        if args.quiet:                # (the table, which ends with it, was not printed)
            from theory.check_report import format_verdict
            print(f"check failed: {format_verdict(report, f'in {out}/check.json')}",
                  file=sys.stderr)
        return EXIT_CHECK_FAILED      # (before a drawing failure: the verdict is on the results)
    return EXIT_OK if drawing_failed is None else EXIT_FIGURES_FAILED
