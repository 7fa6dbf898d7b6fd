"""Results directories that always hold exactly one complete run.

A run writes into a hidden staging directory beside its destination
(``.<name>.partial-<pid>-<random>``); `StagedDirectory.commit` then puts it in place of the
destination in one step (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames a moment
apart) and removes what was there before. So a run that is killed leaves the previous results
untouched, and no file of an earlier run (``check.json``, ``predictions.csv``, ``routing.png``, ...)
survives a later one. Staging directories left behind by killed runs are removed by the next run
into the same place once their process is gone.

An existing destination is replaced only when it is empty or is itself a results directory (it
holds a ``summary.json`` written by netsim, the marker of a single run's results): a results
directory is never allowed to swallow a directory of something else. A sweep directory (marked by
its ``sweep.json``) and a single run's results directory each refuse the other, and neither may
be put inside a results directory (replacing that one would delete it).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import math
import os
import re
import shutil
import tempfile
from json.encoder import encode_basestring_ascii
from math import isfinite
from operator import is_
from pathlib import Path

SUMMARY_FILE = "summary.json"     # the marker of a single run's results directory
SWEEP_FILE = "sweep.json"         # the marker of a sweep directory (netsim.sweep), with
SWEEP_RESULTS_FILE = "results.csv"  # its table of runs
_STAGING = re.compile(r"^\.(?P<name>.+)\.(?:partial|old)-(?P<pid>\d+)-[^/]+$")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class ResultsDirError(OSError):
    """The destination cannot hold results (exists and is something else)."""


# how every summary.json netsim writes begins (`indented_json_text`, "netsim_version" first)
_SUMMARY_HEAD = b'{\n  "netsim_version": "'


def is_results_dir(path: Path) -> bool:
    """True when `path` is a directory holding a netsim summary.json: a JSON object with a
    "netsim_version". One that begins as netsim writes them is known by its first bytes, not
    read whole (the summary of a large network is tens of MB, and a run checks the directory
    it replaces twice)."""
    summary = path / SUMMARY_FILE
    try:
        with open(summary, "rb") as fh:
            if fh.read(len(_SUMMARY_HEAD)) == _SUMMARY_HEAD:
                return True
            fh.seek(0)
            data = json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "netsim_version" in data


def is_sweep_dir(path: Path) -> bool:
    """True when `path` is a directory holding a sweep.json written by netsim (a JSON object
    with the sweep's name, topology and parameters) and its results.csv (a sweep file that
    happens to be called sweep.json does not make its folder a sweep directory)."""
    if not (path / SWEEP_RESULTS_FILE).is_file():
        return False
    try:
        with open(path / SWEEP_FILE, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and all(key in data for key in ("name", "topology",
                                                                  "parameters"))


def enclosing_results_dir(path: Path):
    """The nearest directory above `path` that is a results or sweep directory, or None."""
    try:
        resolved = Path(path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    for parent in resolved.parents:
        if is_results_dir(parent) or is_sweep_dir(parent):
            return parent
    return None


def check_destination(path: Path, what: str = "results") -> None:
    """Raise ResultsDirError unless `path` may receive (or be replaced by) a results directory."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise ResultsDirError(f"{path} exists and is not a directory")
    if is_sweep_dir(path):
        raise ResultsDirError(f"{path} is a sweep directory (it holds {SWEEP_FILE}), not the "
                              f"results directory of a single run; choose another directory")
    outer = enclosing_results_dir(path)
    if outer is not None:
        raise ResultsDirError(f"{path} is inside the netsim results directory {outer}, which "
                              f"holds one run (or sweep) and nothing else; choose another "
                              f"directory")
    if path.is_dir() and any(path.iterdir()) and not is_results_dir(path):
        raise ResultsDirError(f"{path} exists and is not a netsim {what} directory (no netsim "
                              f"{SUMMARY_FILE}); choose another directory or remove it")


def finite(value):
    """`value` (JSON-like data) with every NaN or infinite float replaced by None: strict JSON,
    where null is a value that is not defined (no RTT sample, no slowdown...)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def json_text(data, **options) -> str:
    """`data` as strict JSON (`json.dumps` with ``allow_nan=False``, after `finite`): what every
    JSON file netsim writes holds, so that browsers, jq and other JSON readers accept it."""
    return json.dumps(finite(data), allow_nan=False, **options)


# Depth from which `indented_json_text` writes a container on one line.
ONE_LINE_DEPTH = 4

# the json module's C encoder (None under PyPy)
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)


def indented_json_text(data, indent: int = 2) -> str:
    """`data` as strict JSON laid out like ``json.dumps(data, indent=indent)`` down to depth
    ONE_LINE_DEPTH (the top level is depth 0), where each container is written on one line: in
    summary.json, one line per field of a flow or a link and one line per link direction
    (``summary["links"][id]["directions"][label]`` is at depth 4).

    Each one-line piece is encoded by the json module's C encoder (which ``indent`` turns off;
    plain ``json.dumps`` where there is none), and a one-line object whose keys and values are
    the very objects of one written before (the summary's idle link directions share their
    template's values) is the same text, taken again rather than encoded again; so writing the
    summary of a network of 10 000 links costs about a tenth of a second. Values are as in
    `json_text` (NaN and infinities are null)."""
    out: list = []
    _Layout(indent, out).write(data, 0)
    return "".join(out)


class _Layout:
    """One `indented_json_text`: the text's pieces in `out`, one-line texts remembered by the
    identities of what they were made of (valid while the data is alive, i.e. for this call)."""

    def __init__(self, indent: int, out: list):
        self.out = out
        self.pads = ["\n" + " " * (indent * depth) for depth in range(ONE_LINE_DEPTH + 1)]
        # by depth: the separator before an item (comma, line, indent); key -> that and the key
        self.commas = ["," + pad for pad in self.pads[1:]]
        self.prefixes: list = [{} for _ in range(ONE_LINE_DEPTH)]
        self.memo: dict = {}      # id of a one-line object's first value -> (its keys, its values, its text)
        self.encoder = _one_line_encoder()

    def write(self, value, depth: int) -> None:
        """Append the text of `value`, a value at `depth`."""
        out = self.out
        if depth >= ONE_LINE_DEPTH or not value or not isinstance(value, (dict, list, tuple)):
            out.append(self.one_line(value))
            return
        mark = len(out)
        try:
            self.write_items(value, depth)
        except TypeError:             # a key that is not a string: the object on one line
            if not isinstance(value, dict):
                raise
            del out[mark:]
            out.append(self.one_line(value))

    def write_items(self, value, depth: int) -> None:
        """Append a non-empty list or string-keyed dict at `depth` < ONE_LINE_DEPTH, laid out
        over lines (scalars inline: most items are). Each item's piece begins with its comma
        (and its key, made once per key and depth); the first one's comma is taken off at the
        end."""
        out, one_line = self.out, self.one_line
        nested = depth + 1 < ONE_LINE_DEPTH
        is_dict = isinstance(value, dict)
        out.append("{" if is_dict else "[")
        first = len(out)
        if is_dict:
            prefixes = self.prefixes[depth]
            items = value.items()
        else:
            comma = self.commas[depth]
        for item in (items if is_dict else value):
            if is_dict:
                key, item = item
                prefix = prefixes.get(key)
                if prefix is None:      # (TypeError for a key that is not a string)
                    prefix = prefixes[key] = (self.commas[depth] + encode_basestring_ascii(key)
                                              + ": ")
                out.append(prefix)
            else:
                out.append(comma)
            kind = type(item)
            if kind is float:
                out.append(float.__repr__(item) if isfinite(item) else "null")
            elif kind is int:
                out.append(int.__repr__(item))
            elif kind is str:
                out.append(encode_basestring_ascii(item))
            elif item is None:
                out.append("null")
            elif nested and item:
                self.write(item, depth + 1)
            elif kind is dict and item:
                out.append(self.dict_line(item))
            else:
                out.append(one_line(item))
        out[first] = out[first][1:]
        out.append(self.pads[depth] + ("}" if is_dict else "]"))

    def one_line(self, value) -> str:
        kind = type(value)                # scalars first, as the json module writes them
        if kind is str:
            return encode_basestring_ascii(value)
        if kind is float:
            return float.__repr__(value) if math.isfinite(value) else "null"
        if kind is int:
            return int.__repr__(value)
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if not value and (kind is dict or kind is list):
            return "{}" if kind is dict else "[]"
        if kind is dict:
            return self.dict_line(value)
        return self.encode(value)

    def dict_line(self, value: dict) -> str:
        """The one-line text of a non-empty dict: that of an object of the same keys (strings)
        and the very same values as one written before, else encoded."""
        values = value.values()
        known = self.memo.get(id(next(iter(values))))
        if known is not None and tuple(value) == known[0] and all(map(is_, values, known[1])):
            return known[2]
        text = self.encode(value)
        keys = tuple(value)
        if all(type(key) is str for key in keys):
            self.memo[id(next(iter(values)))] = (keys, tuple(values), text)
        return text

    def encode(self, value) -> str:
        try:
            if self.encoder is None:
                return json.dumps(value, allow_nan=False)
            return "".join(self.encoder(value, 0))
        except ValueError:            # a NaN or an infinity somewhere inside: null, as json_text
            self.encoder = _one_line_encoder()        # (one that has not stopped half-way)
            return json.dumps(finite(value), allow_nan=False)


def _one_line_encoder():
    """The C encoder as ``json.dumps(value, allow_nan=False)`` sets it up (None without one)."""
    if _c_make_encoder is None:
        return None
    return _c_make_encoder({}, json.JSONEncoder().default, encode_basestring_ascii, None, ": ",
                           ", ", False, False, False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(parent: Path, name: str) -> None:
    """Remove staging directories of `name` whose process no longer runs."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        match = _STAGING.match(entry.name)
        if match and match["name"] == name and not _pid_alive(int(match["pid"])):
            shutil.rmtree(entry, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2); False where that is not available."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0


class StagedDirectory:
    """A hidden sibling of `final` to write a run into; `commit` swaps it into place, `discard`
    removes it."""

    def __init__(self, final, what: str = "results"):
        self.final = Path(final)
        check_destination(self.final, what)
        parent = self.final.parent
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(parent, self.final.name)
        self.path = Path(tempfile.mkdtemp(prefix=f".{self.final.name}.partial-{os.getpid()}-",
                                          dir=parent))
        self.done = False

    def commit(self) -> Path:
        """Put the staging directory in place of `final` and remove the previous contents."""
        final = self.final
        check_destination(final)
        os.chmod(self.path, 0o777 & ~current_umask())
        if final.exists():
            if _exchange(self.path, final):
                shutil.rmtree(self.path, ignore_errors=True)    # now the previous results
            else:
                old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old-{os.getpid()}-",
                                            dir=final.parent))
                os.rename(final, old / "previous")
                os.rename(self.path, final)
                shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(self.path, final)
        self.done = True
        return final

    def discard(self) -> None:
        if not self.done:
            shutil.rmtree(self.path, ignore_errors=True)
            self.done = True

    def __enter__(self) -> StagedDirectory:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.discard()


def current_umask() -> int:
    """The process's umask (read without changing it), for files and directories created
    under a temporary name and then renamed into place."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
