"""A sweep directory (docs/sweeps.md): what it holds and how it is written.

* ``sweep.json``: the sweep as run, with its theory settings resolved from the topology;
* ``runs/<config digest>.json``: one small record per successful run, named by the SHA-256 of the
  run's resolved configuration and holding its ``summary.json`` data; resume reuses a record
  only for a run with the same digest;
* ``results.csv``: one row per run, appended as runs finish and rewritten in run order at the end.

A directory holds one sweep: `claim` refuses a different sweep (another name, topology or set of
swept parameters) unless forced, and any directory that cannot hold a sweep.
"""
from __future__ import annotations

import csv
import json
import logging
import math
import os
import re
from pathlib import Path

from netsim.results_dir import json_text
from netsim.sweep_parameters import SweepError
from netsim.sweep_points import Sweep

log = logging.getLogger(__name__)

SWEEP_FILE = "sweep.json"
RESULTS_FILE = "results.csv"
RECORDS_DIR = "runs"
REPORT_FILE = "report.html"   # what `sweep --report` writes (plot_tool.report.REPORT_FILE)
RECORD_FORMAT = 1
RESULT_TAIL = ("config_digest", "wall_time_s", "status", "error")



class SweepConflict(SweepError):
    """The results directory holds another sweep (and force was not given)."""


def identity(saved: dict) -> dict:
    """What makes two sweeps the same sweep: name, topology and the swept parameters (their
    paths; values, seeds, duration, metrics and plots may change between resumes)."""
    topology = saved.get("topology")
    return {"name": saved.get("name"),
            "topology": Path(str(topology)).stem if topology else None,
            "parameters": sorted(saved.get("parameters") or {})}


def result_columns(sweep: Sweep) -> list:
    return (["run_id", "point", "seed"] + [p for p, _ in sweep.parameters] + sweep.metrics
            + list(RESULT_TAIL))


def saved_sweep(sweep: Sweep) -> dict:
    """sweep.json: the sweep as run, its plots with theory settings resolved from the topology."""
    return dict(sweep.raw, name=sweep.name, topology=str(sweep.topology_path),
                plots=getattr(sweep, "resolved_plots", None) or sweep.plots)


def _describe(ident: dict) -> str:
    return (f"sweep \"{ident['name']}\" of topology {ident['topology']} over "
            f"{', '.join(ident['parameters']) or 'no parameters'}")


def check_sweep_dir(out: Path, sweep: Sweep) -> None:
    """Refuse (SweepError, whatever --force says) a directory that cannot hold the sweep: one
    that is not a directory, a single run's results directory, a non-empty directory that holds
    no sweep, one inside a results or sweep directory, or one holding an input of the sweep
    (its file, topology or plugins)."""
    from netsim.output_paths import OutputPathError, check_inputs_outside
    from netsim.results_dir import enclosing_results_dir, is_results_dir
    from plot_tool.figure_files import file_kind
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise SweepError(f"--out {out}: exists and is not a directory")
    if is_results_dir(out):
        raise SweepError(f"--out {out}: is the results directory of a single run (it holds "
                         f"summary.json), not a sweep directory; use another --out")
    if out.is_dir() and not (out / SWEEP_FILE).is_file() and not (out / RESULTS_FILE).exists() \
            and any(not entry.name.startswith(".") for entry in out.iterdir()):
        raise SweepError(f"--out {out}: exists, is not empty and holds no sweep (no "
                         f"{SWEEP_FILE}); choose another --out or remove what is there")
    records = out / RECORDS_DIR
    if records.is_symlink() or (records.exists() and not records.is_dir()):
        what = "a symbolic link" if records.is_symlink() else file_kind(records)
        raise SweepError(f"--out {out}: its {RECORDS_DIR} is {what}, not a directory; the sweep "
                         f"keeps its run records, and removes those it no longer needs, in a "
                         f"{RECORDS_DIR}/ directory of its own")
    outer = enclosing_results_dir(out)
    if outer is not None:
        raise SweepError(f"--out {out}: is inside the netsim results directory {outer}; use "
                         f"another --out")
    try:
        check_inputs_outside("--out", out, [getattr(sweep, "path", None), sweep.topology_path,
                                            *sweep.plugins])
    except OutputPathError as exc:
        raise SweepError(str(exc)) from None


def claim(out: Path, sweep: Sweep, force: bool = False) -> None:
    """Make `out` the directory of `sweep`: refuse (SweepError) a directory that cannot hold it
    (`check_sweep_dir`) and (SweepConflict) one that holds another sweep, unless `force`, which
    removes what that sweep wrote (sweep.json, results.csv, runs/ and its figures). Then write
    sweep.json."""
    check_sweep_dir(out, sweep)
    saved = saved_sweep(sweep)
    for i, file_name in foreign_figures(out, saved.get("plots")):
        raise SweepError(f"{out / file_name}: plots[{i}] names it, and it is not a figure netsim "
                         f"wrote (a file of yours, or a symbolic link): move it, or name another "
                         f"file")
    sweep_path, results_path = out / SWEEP_FILE, out / RESULTS_FILE
    previous = None
    if sweep_path.is_file():
        try:
            previous = json.loads(sweep_path.read_text())
        except (OSError, ValueError):
            previous = {}
        if not isinstance(previous, dict):
            previous = {}
    elif results_path.exists():
        previous = {}
    if previous is not None and identity(previous) == identity(saved):
        named = {path for path in figure_paths(out, saved.get("plots"))}
        for path in figure_paths(out, previous.get("plots")):
            if path not in named:            # a figure the sweep no longer draws
                path.unlink()
    if previous is not None and identity(previous) != identity(saved):
        if not force:
            what = (_describe(identity(previous)) if previous.get("name") is not None
                    else "results of an unknown sweep")
            raise SweepConflict(f"{out} holds the {what}, not the {_describe(identity(saved))}; "
                                f"use another --out, or pass --force to replace them")
        _remove_sweep(out, previous)
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(sweep_path, json_text(saved, indent=2) + "\n")


def _remove_sweep(out: Path, previous: dict) -> None:
    """Remove what the sweep `previous` wrote in `out`, and nothing else: its files, its run
    records (runs/ itself once empty) and its figures."""
    from plot_tool.figure_files import report_written_by_netsim
    for name in (SWEEP_FILE, RESULTS_FILE):
        (out / name).unlink(missing_ok=True)
    if report_written_by_netsim(out / REPORT_FILE):         # (a file of the user's stays)
        (out / REPORT_FILE).unlink()
    records = out / RECORDS_DIR
    if records.is_dir() and not records.is_symlink():
        prune_records(out, set())
        try:
            records.rmdir()
        except OSError:                  # a file of the user's in it: it stays, and runs/ too
            pass
    for path in figure_paths(out, previous.get("plots")):
        path.unlink()


def is_record_name(name: str) -> bool:
    """Whether `name` is that of a run record (`_record_path`: the 64 hex digits of a
    configuration digest, .json), the only files of runs/ a sweep removes."""
    return (len(name) == 69 and name.endswith(".json")
            and all(c in "0123456789abcdef" for c in name[:64]))


def _named_files(out: Path, plots):
    """(index, file name, path in `out`) of each plot of a sweep's "plots" (as saved in its
    sweep.json) that names a file."""
    for i, plot in enumerate(plots if isinstance(plots, list) else []):
        file_name = plot.get("file") if isinstance(plot, dict) else None
        if isinstance(file_name, str):
            yield i, file_name, out / file_name


def figure_paths(out: Path, plots) -> list:
    """The existing figures inside `out` that a sweep's "plots" name and netsim wrote
    (`written_by_netsim`: a PNG with netsim's "Software" text, not a link); nothing outside
    `out`, and no file of the user's, is ever returned."""
    from plot_tool.figure_files import written_by_netsim
    root = out.resolve()
    return [path for _, _, path in _named_files(out, plots)
            if path.suffix.lower() == ".png" and root in path.resolve().parents
            and written_by_netsim(path)]


def remove_figure_partials(out: Path, plots) -> None:
    """Remove what a sweep killed while drawing a figure of `plots` left in `out`: its
    `.NAME.partial-PID-RANDOM` of a process gone (`netsim.output_paths.remove_stale_partials`,
    as plot_tool.sweep_figures names them), and the `.STEM.XXXXXXXX.part` (tempfile.mkstemp's
    eight characters) an earlier netsim wrote; regular files only."""
    from netsim.output_paths import remove_stale_partials
    for _, _, path in _named_files(out, plots):
        remove_stale_partials(path)
        older = re.compile(rf"\.{re.escape(path.stem)}\.[a-z0-9_]{{8}}\.part")
        try:
            entries = [e for e in os.scandir(path.parent) if older.fullmatch(e.name)]
        except OSError:
            continue
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass


def foreign_figures(out: Path, plots) -> list:
    """(index, file name) of each plot of `plots` whose file exists in `out` but is not a
    figure netsim wrote (a file of the user's, or a link): the sweep would have to replace it."""
    from plot_tool.figure_files import written_by_netsim
    return [(i, file_name) for i, file_name, path in _named_files(out, plots)
            if (path.exists() or path.is_symlink()) and not written_by_netsim(path)]


def remove_stale(out: Path, plots, *, report: bool, figures: bool) -> list:
    """After results.csv changed: remove the sweep's report (`report`) and figures (`figures`)
    drawn from the earlier results, when they are not drawn again now; the names removed."""
    from plot_tool.figure_files import report_written_by_netsim
    stale = []
    if report and report_written_by_netsim(out / REPORT_FILE):    # (a file of the user's stays)
        (out / REPORT_FILE).unlink()
        stale.append(REPORT_FILE)
    if figures:
        for path in figure_paths(out, plots):
            path.unlink()
            stale.append(path.name)
    return stale


def _write_atomic(path: Path, text: str) -> None:
    """`text` to `path` whole or not at all (an OSError names `path`)."""
    from netsim.output_paths import write_atomic
    from plot_tool.figure_files import naming_errors  # (not at import: a run does not load it)
    with naming_errors(path):
        write_atomic(path, text)


def _record_path(out: Path, digest: str) -> Path:
    return out / RECORDS_DIR / f"{digest}.json"


def read_record(out: Path, digest: str):
    """The stored record of the run `digest`, or None when there is none or it cannot be used
    (then the run is simulated again): not a regular file, not strict JSON (records are written
    without NaN or Infinity), of another format or run, or a summary whose fields the metrics
    and figures read have other types (`plot_tool.json_fields.check_fields`, as the readers of a
    results directory check summary.json). A damaged record is logged as a warning."""
    from plot_tool.json_fields import MAX_JSON_BYTES, check_fields
    from plot_tool.schema import SUMMARY_FIELDS
    path = _record_path(out, digest)
    if not path.is_file():
        if path.exists():        # (a new record could not replace it: refused, as not ours)
            raise SweepError(f"{path}: not a run record netsim wrote (not a regular file): "
                             f"move it, or give the sweep another --out")
        return None
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise ValueError(f"{path}: {size} bytes, more than any run record netsim writes "
                             f"(at most {MAX_JSON_BYTES} are read)")
        record = json.loads(path.read_text(encoding="utf-8"), parse_constant=_not_strict)
        if (not isinstance(record, dict) or record.get("format") != RECORD_FORMAT
                or record.get("config_digest") != digest
                or not isinstance(record.get("summary"), dict)):
            raise ValueError(f"{path}: not a run record of this sweep's format")
        check_fields(record["summary"], SUMMARY_FIELDS, f"{path}: summary")
    except (OSError, ValueError, RecursionError) as exc:
        text = (str(exc).splitlines() or [type(exc).__name__])[0]
        log.warning("%s; the run is simulated again",
                    text if text.startswith(f"{path}: ") else f"{path}: {text}")
        return None
    return record


def _not_strict(constant: str):
    raise ValueError(f"{constant} is not strict JSON")


def save_record(out: Path, record: dict) -> None:
    (out / RECORDS_DIR).mkdir(exist_ok=True)
    _write_atomic(_record_path(out, record["config_digest"]),
                  json_text(record, separators=(",", ":")) + "\n")


def write_results_csv(path: Path, columns: list, rows: list) -> None:
    """results.csv, whole or not at all (an OSError names `path`)."""
    from netsim.output_paths import AtomicFile
    from plot_tool.figure_files import naming_errors
    with naming_errors(path), AtomicFile(path, "w", newline="") as out:
        writer = csv.DictWriter(out.fh, fieldnames=columns, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: cell_text(v) for k, v in row.items()})
        out.commit()


def cell_text(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.9g}"
    return "" if value is None else value


def prune_records(out: Path, keep: set) -> None:
    """Remove the records of runs that are no longer part of the sweep (a complete sweep only);
    a file in runs/ that is not named as a record is not the sweep's, and stays."""
    directory = out / RECORDS_DIR
    if not directory.is_dir() or directory.is_symlink():      # (not ours: `check_sweep_dir`)
        return
    for path in directory.glob("*.json"):
        if path.stem not in keep and is_record_name(path.name):
            path.unlink(missing_ok=True)
