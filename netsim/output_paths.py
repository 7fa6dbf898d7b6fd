"""Where outputs may go: the one rule every output option follows (docs/outputs.md, "Bounds and
rules"), and writing a file whole or not at all.

No output path may replace an input or anything that is not ours. `check_output_file` is called
for every file the user names as an output (``report -o``, ``-f LOGFILE``, ``--trace FILE``,
``convert -o``) and refuses, with one line naming the option (`OutputPathError`), a path that

* is a symbolic link, or exists and is not a regular file (a device such as /dev/full, a FIFO, a
  socket, a directory): writing would replace or feed something that is not a file of ours;
* is the same file as an input of the command (the topology, the sweep file, a plugin file;
  compared by device and inode, so another spelling or a hard link is caught too), or as
  another output of the same command;
* lies inside a results directory: the one the command replaces (``--out``, swapped in whole
  when the run ends, which would delete the file), or any other netsim results or sweep
  directory (a file there would make it hold more than its run), except where `allowed_inside`
  says (``report``'s own ``report.html``);
* exists as a regular file that netsim did not write, for the outputs whose kind it can tell
  (`kind`: ``"log"`` for ``-f``, ``"trace"`` for ``--trace``, ``"report"`` for ``report -o``;
  `written_by_netsim`), unless the user passed ``--force``: the same command run again replaces
  its own file, never the user's notes. An empty file is netsim's of every kind (nothing is
  lost). ``convert -o`` and ``generate -o`` write topologies, which are the user's files once
  written: they refuse any existing file without ``--force``.

`check_inputs_outside` refuses a results or sweep directory (``--out``) that holds an input of the
command: replacing the directory would delete it. `AtomicFile` writes a hidden temporary file
beside the target (``.NAME.partial-PID-RANDOM``) and renames it into place on `commit`, so that a
failed or interrupted write leaves the previous file (or nothing) and never a truncated one.
"""
from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path

from netsim.results_dir import current_umask, partial_stem, pid_alive
from plot_tool.figure_files import file_kind
from topologies.validation import one_line


class OutputPathError(ValueError):
    """An output path that must not be written; one line naming the option."""


def _stat(path: Path, follow: bool = True):
    try:
        return os.stat(path) if follow else os.lstat(path)
    except (OSError, ValueError):           # missing, a NUL in the name, too long...
        return None


def _same_file(a, b) -> bool:
    return a is not None and b is not None and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _resolved(path: Path) -> Path | None:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _inside(path: Path, directory: Path) -> bool:
    """True when resolved `path` is `directory` (resolved) or below it."""
    inner, outer = _resolved(path), _resolved(directory)
    return inner is not None and outer is not None and (inner == outer or outer in inner.parents)


# How the first line of each kind of file netsim writes begins (`written_by_netsim`), and what
# the refusal calls it. A log line is LOG_FORMAT of netsim/cli_output.py ("%(levelname)s
# %(name)s: %(message)s"); an event trace begins with its CSV header (netsim/event_trace.py
# FIELDS) or, in JSON Lines, with an event's "time_s"; a report is the page of
# plot_tool/report_page.py, whose <title> begins "netsim report: ".
_LOG_LINE = re.compile(rb"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \S+: ")
_TRACE_CSV_HEAD = (b"time_s,event,node,link,direction,flow,kind,seq,size_bytes,cause,start_s\n",
                   b"time_s,event,node,link,direction,flow,kind,seq,size_bytes,cause,start_s\r\n")
_TRACE_JSONL_HEAD = b'{"time_s":'
_IPERF_HEAD = b'{\n "start": {\n  "connected": ['     # (netsim.iperf_json.write, indent 1)
HEAD_BYTES = 4096                      # what is read of an existing file to tell whose it is
KINDS = {"log": "a log file", "trace": "an event trace", "report": "a report",
         "iperf": "an iperf3.json"}


def written_by_netsim(path, kind: str) -> bool:
    """Whether the existing regular file `path` is one netsim wrote as an output of `kind`
    (see KINDS), told from its first bytes only (cheap for a trace of gigabytes): an empty file
    (nothing to lose); a log whose first line is a log record (``LEVEL logger: ...``); an event
    trace whose first line is its CSV header or a JSON Lines event; a report page that begins
    with netsim's <!DOCTYPE> and <title>; an iperf3.json that begins as netsim.iperf_json
    writes it. A file that cannot be read is not netsim's."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return False
    if not head:
        return True
    if kind == "log":
        return _LOG_LINE.match(head) is not None
    if kind == "trace":
        return head.startswith(_TRACE_CSV_HEAD) or head.startswith(_TRACE_JSONL_HEAD)
    if kind == "report":
        from plot_tool.figure_files import is_netsims_report
        return is_netsims_report(head)
    if kind == "iperf":
        return head.startswith(_IPERF_HEAD)
    raise ValueError(f"unknown kind of output: {kind!r}")


def check_output_file(option: str, path, *, inputs=(), outputs=(), replaced_dirs=(),
                      allowed_inside=(), kind: str | None = None, force: bool = False) -> Path:
    """Refuse (OutputPathError) an output file path `path` given as `option`; returns it as a
    Path. `inputs`: the command's input files; `outputs`: its other output files; `replaced_dirs`:
    the directories it replaces as a whole; `allowed_inside`: paths that may be written inside a
    results directory (e.g. report.html of the directory being reported); `kind` (see KINDS):
    an existing file is replaced only if netsim wrote it as that kind (`written_by_netsim`), or
    with `force` (``--force``)."""
    path = Path(path)
    shown = f"{option} {one_line(str(path))}"
    link = _stat(path, follow=False)
    if link is not None and stat.S_ISLNK(link.st_mode):
        raise OutputPathError(f"{shown}: is a symbolic link; give the path of a regular file")
    target = _stat(path)
    if target is not None and not stat.S_ISREG(target.st_mode):
        raise OutputPathError(f"{shown}: is {file_kind(path)}, not a file netsim may write")
    for role, others in (("input", inputs), ("output", outputs)):
        for other in others:
            if other is None:
                continue
            same = (_same_file(target, _stat(Path(other))) if target is not None
                    else _resolved(path) == _resolved(Path(other)))
            if same:
                raise OutputPathError(f"{shown}: is the same file as the {role} "
                                      f"{one_line(str(other))}; it would be overwritten")
    for directory in replaced_dirs:
        if directory is not None and _inside(path, Path(directory)):
            raise OutputPathError(f"{shown}: is inside the results directory "
                                  f"{one_line(str(directory))}, which the run replaces as a "
                                  f"whole; write it elsewhere")
    allowed = {_resolved(Path(p)) for p in allowed_inside}
    if _resolved(path) not in allowed:
        from netsim.results_dir import enclosing_results_dir
        ancestor = enclosing_results_dir(path)
        if ancestor is not None:
            raise OutputPathError(f"{shown}: is inside the netsim results directory "
                                  f"{one_line(str(ancestor))}, which holds one run (or sweep) "
                                  f"and nothing else; write it elsewhere")
    if (kind is not None and not force and target is not None
            and not written_by_netsim(path, kind)):
        raise OutputPathError(f"{shown}: exists and is not {KINDS[kind]} netsim wrote; pass "
                              f"--force to replace it")
    return path


def check_inputs_outside(option: str, directory, inputs) -> None:
    """Refuse (OutputPathError) a directory to be replaced or filled by results that holds one of
    the command's input files."""
    for item in inputs:
        if item is not None and _inside(Path(item), Path(directory)):
            raise OutputPathError(f"{option} {one_line(str(directory))}: holds the input "
                                  f"{one_line(str(item))}, which writing the results there "
                                  f"would delete or overwrite; choose another directory")


def remove_stale_partials(path: Path) -> None:
    """Remove the temporary files an `AtomicFile` for `path` left when its process was killed
    (``.<name>.partial-<pid>-<random>`` beside it, the process gone), as a results directory's
    staging directories are (netsim/results_dir.py): a killed long --trace run's can be large."""
    prefix = f".{partial_stem(path.name)}.partial-"
    try:
        entries = [entry for entry in os.scandir(path.parent) if entry.name.startswith(prefix)]
    except OSError:
        return
    for entry in entries:
        pid, dash, _ = entry.name[len(prefix):].partition("-")
        if not (pid.isdigit() and dash) or not entry.is_file(follow_symlinks=False):
            continue
        if pid_alive(int(pid)):              # (its process runs: its file is in use)
            continue
        try:
            os.unlink(entry.path)
        except OSError:
            pass


class AtomicFile:
    """A file written under a hidden temporary name beside `path` and renamed into place by
    `commit`; `discard` (or an exception in a ``with`` block) removes it."""

    def __init__(self, path, mode: str = "w", **open_args):
        self.path = Path(path)
        remove_stale_partials(self.path)
        fd, name = tempfile.mkstemp(prefix=f".{partial_stem(self.path.name)}.partial-"
                                           f"{os.getpid()}-",
                                    dir=self.path.parent)
        self.partial = Path(name)
        try:
            self.fh = os.fdopen(fd, mode, **open_args)
        except BaseException:
            os.close(fd)
            self.partial.unlink(missing_ok=True)
            raise
        os.chmod(self.partial, 0o666 & ~current_umask())
        self.done = False

    def commit(self) -> Path:
        """Close the file and rename it into place (OSError if closing or renaming fails, after
        removing the temporary file)."""
        try:
            self.fh.close()
            os.replace(self.partial, self.path)
        except BaseException:
            self.discard()
            raise
        self.done = True
        return self.path

    def discard(self) -> None:
        if self.done:
            return
        self.done = True
        try:
            self.fh.close()
        except OSError:                      # the disk is full: the file goes anyway
            pass
        self.partial.unlink(missing_ok=True)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.discard()


def write_atomic(path, text: str) -> Path:
    """Write `text` (UTF-8, LF) to `path` whole or not at all."""
    with AtomicFile(path, "w", encoding="utf-8", newline="\n") as out:
        out.fh.write(text)
        return out.commit()
