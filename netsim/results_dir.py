"""Results directories that always hold exactly one complete run.

A run writes into a hidden staging directory beside its destination
(``.<name>.partial-<pid>-<random>``); `StagedDirectory.commit` then puts it in place of the
destination in one step (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames a moment
apart) and removes what was there before. So a run that is killed leaves the previous results
untouched, and no file of an earlier run (``check.json``, ``predictions.csv``, ``routing.png``, ...)
survives a later one. Staging directories left behind by killed runs are removed by the next run
into the same place once their process is gone.

An existing destination is replaced only when it is empty or is itself a results directory (it
holds a ``summary.json`` written by netsim, the marker of a single run's results) holding nothing
but what a run writes (`RUN_FILES`, seq_<flow>.png, pcap/ with its .pcap files; `foreign_entries`):
a results directory is never allowed to swallow a directory of something else, nor a file the
user added to it (refused, whatever ``--force`` says: netsim never deletes what it did not
write). A sweep directory (marked by
its ``sweep.json``) and a single run's results directory each refuse the other, and neither may
be put inside a results directory (replacing that one would delete it).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from itertools import groupby, repeat
from json.encoder import encode_basestring_ascii
from math import copysign, isfinite
from operator import is_
from pathlib import Path

SUMMARY_FILE = "summary.json"     # the marker of a single run's results directory
SWEEP_FILE = "sweep.json"         # the marker of a sweep directory (netsim.sweep), with
SWEEP_RESULTS_FILE = "results.csv"  # its table of runs
_STAGING = re.compile(r"^\.(?P<name>.+)\.(?:partial|old)-(?P<pid>\d+)-[^/]+$")
_RENAME_EXCHANGE = 2
# Every name a run (or an earlier netsim version; `report DIR`, `python -m netsim.iperf_json DIR`
# afterwards) writes in a results directory (docs/outputs.md); tests/test_output_paths.py checks
# it against the modules that write them.
RUN_FILES = frozenset({
    SUMMARY_FILE, "links.csv", "flows.csv", "hosts.csv", "routes.csv", "fct.csv",   # traces
    "check.json", "predictions.csv",                                                # --check
    "iperf3.json", "report.html",                                   # --iperf-json, --report
    "links.png", "flows.png", "hosts.png", "fct.png", "routing.png",               # figures
})
RUN_CAPTURES_DIR = "pcap"           # --pcap, --pcap-links: <id>.pcap files
_SEQ_PLOT = re.compile(r"^seq_[^/]+\.png$")     # --pcap's sequence plots, seq_<flow>.png
PARTIAL_NAME = re.compile(r"^\.(?P<name>.+)\.partial-\d+(?:-[^/]*)?$")  # a killed write's file
# what a file manager adds to a folder it shows, and makes again (never anyone's data)
_FILE_MANAGER_FILES = frozenset({".DS_Store", "Thumbs.db"})
SHOWN_FOREIGN = 3                   # entries named by the refusal (then "and N more")
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
    if not summary.is_file():           # (a FIFO would block, a link to /dev/zero never end)
        return False
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
    if not (path / SWEEP_RESULTS_FILE).is_file() or not (path / SWEEP_FILE).is_file():
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


def _ours(name: str) -> bool:
    """Whether a file named `name` at the top of a results directory is one a run writes."""
    if name in RUN_FILES or _SEQ_PLOT.match(name) or name in _FILE_MANAGER_FILES:
        return True
    partial = PARTIAL_NAME.match(name)
    return partial is not None and partial["name"] in RUN_FILES


def foreign_entries(path: Path) -> list:
    """The entries of the results directory `path` that no run writes, sorted (a directory's
    name ending in "/", pcap/'s entries as "pcap/NAME"): anything but `RUN_FILES`,
    seq_<flow>.png and a pcap/ directory of .pcap files (and the hidden files of a killed write of
    one of them, and a file manager's .DS_Store or Thumbs.db)."""
    foreign: list = []
    try:
        entries = sorted(os.scandir(path), key=lambda entry: entry.name)
    except OSError:
        return foreign
    for entry in entries:
        name = entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if name == RUN_CAPTURES_DIR and is_dir:
            try:
                captures = sorted(os.scandir(entry.path), key=lambda inner: inner.name)
            except OSError:
                captures = []
            for capture in captures:
                if not (capture.name.endswith(".pcap") and not capture.name.startswith(".")
                        and capture.is_file(follow_symlinks=False)):
                    foreign.append(f"{name}/{capture.name}"
                                   + ("/" if capture.is_dir(follow_symlinks=False) else ""))
        elif is_dir or not _ours(name):
            foreign.append(name + ("/" if is_dir else ""))
    return foreign


def _named(names: list) -> str:
    """Up to SHOWN_FOREIGN of `names` for one line: "a", "a and b", "a, b, c and 2 more"."""
    from topologies.validation import one_line
    shown = [one_line(name) for name in names[:SHOWN_FOREIGN]]
    rest = len(names) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def check_destination(path: Path, what: str = "results") -> None:
    """Raise ResultsDirError unless `path` may receive (or be replaced by) a results directory:
    one that is put in place by a rename beside it, so not the working directory or one holding
    it, nor a mount point."""
    if path.is_symlink():             # (replacing it would write where it points)
        raise ResultsDirError(f"{path} is a symbolic link; give the path of a directory")
    if path.exists() and not path.is_dir():
        raise ResultsDirError(f"{path} exists and is not a directory")
    for ancestor in path.parents:     # (the first that exists must be a directory)
        if ancestor.exists() or ancestor.is_symlink():
            if not ancestor.is_dir():
                raise ResultsDirError(f"{path}: {ancestor} is a file, not a directory")
            break
    here, where = os.getcwd(), os.path.abspath(path)
    if here == where or here.startswith(where.rstrip(os.sep) + os.sep):
        raise ResultsDirError(f"{path} is the working directory, or holds it: netsim replaces a "
                              f"results directory as a whole; give a directory below it, e.g. "
                              f"--out results/NAME")
    if path.is_dir() and os.path.ismount(path):
        raise ResultsDirError(f"{path} is a mount point, which netsim cannot replace as a whole "
                              f"(it puts a results directory in place by renaming it); give a "
                              f"directory inside it")
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
    if path.is_dir():
        foreign = foreign_entries(path)
        if foreign:
            them = "it" if len(foreign) == 1 else "them"
            raise ResultsDirError(f"{path} holds {_named(foreign)}, which netsim did not write "
                                  f"(replacing the results would delete {them}); move {them} "
                                  f"elsewhere or choose another directory")


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

    The text is made a column at a time (`_Layout`), and each one-line piece is encoded by the
    json module's C encoder (which ``indent`` turns off; plain ``json.dumps`` where there is
    none); a one-line object whose keys and values are the very objects of one written before
    (the summary's idle link directions share their template's values) is the same text, taken
    again rather than encoded again. So the summary of a network of 10 000 routers and 20 000
    links is written in about a tenth of a second (0.19 s a value at a time). Values are as in
    `json_text` (NaN and infinities are null)."""
    return "".join(_Layout(indent).table((data,), 0))


# pieces of `write_indented_json`'s text joined for each write (about a megabyte of summary)
PIECES_PER_WRITE = 1 << 14


def write_indented_json(path, data, indent: int = 2) -> None:
    """Write `indented_json_text(data)` and a newline to the file `path` (UTF-8: the text is
    ASCII), its pieces joined and written PIECES_PER_WRITE at a time: the whole text, tens of
    MB for a large network, is never made, nor copied again as bytes."""
    pieces = _Layout(indent).table((data,), 0)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for start in range(0, len(pieces), PIECES_PER_WRITE):
            fh.write("".join(pieces[start:start + PIECES_PER_WRITE]))
        fh.write("\n")


_CONTAINERS = (dict, list, tuple)
_SCALARS = {int, float, bool, type(None)}
_CONSTANT_KINDS = {str, int, float, bool}
_STR = {str}


class _Layout:
    """One `indented_json_text`, made a column at a time: the texts of a column of values at
    one depth (the same field of every link: their rates, their ends, their directions) are
    made together, by the C function that writes their kind (`encode_basestring_ascii`,
    ``float.__repr__``, ``int.__repr__``) mapped over the column; a column of objects of one
    size is a column per field. A column's texts are given as a *table*: a list of parts, each
    a string (the same in every text) or a list of one string per value, the texts being the
    parts joined. So an object's text is never made on its own (nor copied again at each depth
    above it): the top value's table is the text's pieces, joined once.

    One-line texts are remembered by the identities of what they were made of (valid while the
    data is alive, i.e. for this call)."""

    __slots__ = ("pads", "memo", "encoder")

    def __init__(self, indent: int):
        self.pads = ["\n" + " " * (indent * depth) for depth in range(ONE_LINE_DEPTH + 1)]
        self.memo: dict = {}      # id of a one-line object's first value -> (its keys, its values, its text)
        self.encoder = _one_line_encoder()

    def table(self, values, depth: int) -> list:
        """The table of the texts of `values` (a non-empty list or tuple), values at `depth`.
        A column of one kind is converted by one mapped function (every text depends only on
        its value and depth); a mixed one is split by kind (or size) and each part converted
        so."""
        first = values[0]
        if len(values) == 1:            # (a table of strings: the pieces of its text)
            if depth < ONE_LINE_DEPTH and first and isinstance(first, _CONTAINERS):
                return self.wide(first, depth, isinstance(first, dict))
            return [self.one_line(first)]
        kinds = set(map(type, values))
        if len(kinds) == 1:
            kind = type(first)
            if kind in _CONSTANT_KINDS and values[-1] == first and _constant(values):
                return [self.one_line(first)]     # one text: a string part (see `_constant`)
            if kind is str:
                return [[*map(encode_basestring_ascii, values)]]
            if kind is int:
                return [[*map(int.__repr__, values)]]
            if kind is float:
                if all(map(isfinite, values)):
                    return [[*map(float.__repr__, values)]]
                return [[float.__repr__(value) if isfinite(value) else "null"
                         for value in values]]
            if first is None:
                return ["null"]
            if kind is dict or kind is list or kind is tuple:
                sizes = set(map(len, values))
                if 0 in sizes:
                    if len(sizes) == 1:
                        return ["{}" if kind is dict else "[]"]
                elif depth >= ONE_LINE_DEPTH:
                    return [[*map(self.dict_line if kind is dict else self.encode, values)]]
                elif len(sizes) == 1:
                    return self.records(values, depth, kind is dict)
        if kinds <= _SCALARS:
            # numbers, booleans and nulls (NaN and infinities too: null): the one-line text of
            # the column is their texts, as `one_line` writes each, joined by ", " (which none
            # of them holds), made by the encoder in one call
            return [self.encode(values)[1:-1].split(", ")]
        # a mixed column: its parts by kind, or by size (links without and with down spans)
        forms = [*map(id, map(type, values))] if len(kinds) > 1 else None
        if forms is None and kinds <= set(_CONTAINERS):
            forms = [*map(len, values)]
        if forms is None:                 # one kind, not a column of one form: value by value
            return [[self.text(value, depth) for value in values]]
        order = sorted(range(len(values)), key=forms.__getitem__)
        texts: list = []
        for _, indices in groupby(order, key=forms.__getitem__):
            part = [*map(values.__getitem__, indices)]
            texts += _texts(self.table(part, depth), len(part))
        out = [""] * len(values)
        for index, text in zip(order, texts):
            out[index] = text
        return [out]

    def text(self, value, depth: int) -> str:
        """The text of `value`, a value at `depth`."""
        return "".join(self.table((value,), depth))

    def records(self, values, depth: int, is_dict: bool) -> list:
        """The table of `values`, two or more non-empty dicts (or lists) of one size at `depth`
        < ONE_LINE_DEPTH, laid out over lines. More objects than fields (records, as the links
        are): a table of a column per field (the field's own table); else each object as
        `wide` writes it."""
        count = len(values)
        if count <= len(values[0]):
            return [["".join(self.wide(value, depth, is_dict)) for value in values]]
        inner = self.pads[depth + 1]
        table: list = ["{" if is_dict else "["]
        if is_dict:
            keys = [*map(tuple, values)]
            if keys.count(keys[0]) == count:      # the same keys: one column of keys each
                keys = [(key,) for key in keys[0]]
            else:
                keys = [*zip(*keys)]
            columns = zip(*map(tuple, map(dict.values, values)))
        else:
            columns = zip(*values)
        for position, column in enumerate(columns):
            table.append("," + inner if position else inner)
            if is_dict:
                column_keys = keys[position]
                if set(map(type, column_keys)) != {str}:   # (a key that is not a string:
                    return [[self.text(value, depth) for value in values]]   # each alone)
                if len(column_keys) == 1 or column_keys.count(column_keys[0]) == count:
                    table.append(encode_basestring_ascii(column_keys[0]) + ": ")
                else:
                    table += [[*map(encode_basestring_ascii, column_keys)], ": "]
            table += self.table(column, depth + 1)
        table.append(self.pads[depth] + ("}" if is_dict else "]"))
        return _merged(table)

    def wide(self, value, depth: int, is_dict: bool) -> list:
        """The table (of strings: the pieces of its text) of one non-empty dict (or list) at
        `depth` < ONE_LINE_DEPTH laid out over lines (a dict with a key that is not a string:
        on one line). Its items are a column, each item's pieces those of a row of the column's
        table; items of several kinds (the summary's fields) each have their own table, so that
        no text is made for one alone."""
        items = tuple(value.values()) if is_dict else tuple(value)
        heads = None
        if is_dict:
            keys = tuple(value)
            if not all(map(isinstance, keys, repeat(str))):
                return [self.one_line(value)]
            heads = [*map(encode_basestring_ascii, keys)]
        inner = self.pads[depth + 1]
        pieces = ["{" + inner if is_dict else "[" + inner]
        if len(items) == 1 or len(set(map(type, items))) > 1:
            for index, item in enumerate(items):
                if index:
                    pieces.append("," + inner)
                if heads is not None:
                    pieces += (heads[index], ": ")
                pieces += self.table((item,), depth + 1)
        else:
            # the rows' pieces, a row after the other, put in place a part at a time (a
            # strided slice: each part's texts, or its one string repeated, go to every
            # width-th place): row i's pieces are what it would join, in order
            count = len(items)
            parts: list = self.table(items, depth + 1)
            if heads is not None:
                parts = [heads, ": ", *parts]
            row = ["," + inner, *_merged(parts)]
            width = len(row)
            pieces = [""] * (width * count)
            for place, part in enumerate(row):
                pieces[place::width] = [part] * count if type(part) is str else part
            pieces[0] = "{" + inner if is_dict else "[" + inner     # (not the first separator)
        pieces.append(self.pads[depth] + ("}" if is_dict else "]"))
        return pieces

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
        if set(map(type, keys)) == _STR:
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


def _constant(values) -> bool:
    """Whether a column of one kind of `_CONSTANT_KINDS` holds one text, its first value's: all
    its values are equal to the first (equal strings, ints, booleans or floats have the same
    text, but for the sign of a float zero, and a NaN equals only itself)."""
    first = values[0]
    if values.count(first) != len(values):
        return False
    return bool(first) or type(first) is not float or len(set(map(copysign, repeat(1.0), values))) == 1


def _merged(table: list) -> list:
    """`table` with each run of adjacent strings joined into one: the same texts, in fewer
    parts (so fewer pieces per row to put in place and join)."""
    merged: list = []
    for part in table:
        if type(part) is str and merged and type(merged[-1]) is str:
            merged[-1] += part
        else:
            merged.append(part)
    return merged


def _texts(table: list, count: int) -> list:
    """The `count` texts a `_Layout` table gives (its parts joined)."""
    if count == 1:                        # (the pieces of one text)
        return ["".join(table)]
    columns = [part for part in table if type(part) is not str]
    if not columns:
        return ["".join(table)] * count
    form = "".join([part.replace("%", "%%") if type(part) is str else "%s" for part in table])
    return [*map(form.__mod__, zip(*columns))]


def _one_line_encoder():
    """The C encoder as ``json.dumps(value, allow_nan=False)`` sets it up (None without one)."""
    if _c_make_encoder is None:
        return None
    return _c_make_encoder({}, json.JSONEncoder().default, encode_basestring_ascii, None, ": ",
                           ", ", False, False, False)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` may still run (one of another user's counts; a pid no process can
    have does not): the owner of a staging directory or a partial file."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):
        return False
    return True


MAX_STEM_BYTES = 200       # of a name in a temporary name: 255 bytes less ".", ".partial-", ...


def partial_stem(name: str) -> str:
    """`name` as it goes into its temporary names (``.STEM.partial-PID-RANDOM``): itself, or for
    a name too long to take the rest within a file system's 255 bytes, its first bytes and a
    digest of it (a legal 240-byte --out was refused as "File name too long")."""
    raw = os.fsencode(name)
    if len(raw) <= MAX_STEM_BYTES:
        return name
    head = raw[:MAX_STEM_BYTES - 9].decode("utf-8", errors="ignore")
    return f"{head}~{hashlib.sha256(raw).hexdigest()[:8]}"


def _remove_stale(parent: Path, name: str) -> None:
    """Remove staging directories of `name` whose process no longer runs."""
    name = partial_stem(name)
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        match = _STAGING.match(entry.name)
        if match and match["name"] == name and not pid_alive(int(match["pid"])):
            shutil.rmtree(entry, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2); False where that is not available."""
    import ctypes  # (only replacing an earlier run's directory needs it)

    try:        # the process's own symbols, the C library's among them (no library search:
        libc = ctypes.CDLL(None, use_errno=True)  # ctypes.util's runs ldconfig, 6 ms a run)
        renameat2 = libc.renameat2
    except (OSError, AttributeError, TypeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return result == 0


class StagedDirectory:
    """A hidden sibling of `final` to write a run into; `commit` swaps it into place, `discard`
    removes it."""

    def __init__(self, final, what: str = "results"):
        # `..` and `.` folded first: the staging directory goes beside the directory meant
        # (for "res/sub/.." that is res, not inside a res/sub it would create)
        self.final = Path(os.path.normpath(final))
        check_destination(self.final, what)
        parent = self.final.parent
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(parent, self.final.name)
        self.path = Path(tempfile.mkdtemp(prefix=f".{partial_stem(self.final.name)}.partial-"
                                                 f"{os.getpid()}-",
                                          dir=parent))
        self.done = False

    def commit(self) -> Path:
        """Put the staging directory in place of `final` and remove the previous contents
        (checked again: a file added to it during the run is refused, not deleted)."""
        final = self.final
        check_destination(final)
        os.chmod(self.path, 0o777 & ~current_umask())
        if final.exists():
            if _exchange(self.path, final):
                shutil.rmtree(self.path, ignore_errors=True)    # now the previous results
            else:
                old = Path(tempfile.mkdtemp(prefix=f".{partial_stem(final.name)}.old-{os.getpid()}-",
                                            dir=final.parent))
                try:
                    os.rename(final, old / "previous")
                except OSError:
                    old.rmdir()
                    raise
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
