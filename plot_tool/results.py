"""Reading a results directory written by a simulation run (format: docs/outputs.md).

A results directory holds ``summary.json``, three long-format CSV files (``links.csv``,
``flows.csv``, ``hosts.csv``) and the log of forwarding-table changes ``routes.csv``; a run made
with ``--check`` also has ``check.json`` (the comparison with the analytic model) and
``predictions.csv`` (the predicted piecewise-constant timeline).
`read_results` loads them into a `ResultSet`; each CSV becomes a `Table`: a plain ``dict`` mapping
column name to a 1-D numpy array. Identifier columns (``link``, ``direction``, ``flow``, ``host``,
``router``, ``destination``, ``next_hop``; ``kind``, ``id``, ``quantity`` of predictions.csv) are
numpy string arrays; every other column is float64, with NaN for an empty field (``flows.csv``'s
``rtt_ms`` is empty for an interval without an RTT sample) and infinity for ``inf``
(``routes.csv``'s ``cost_ms`` of an unreachable destination).

Results written before dynamic routing existed are still accepted: without ``routes.csv``
(`ResultSet.routes` is then None) and without the ``links.csv`` columns ``failure_drops``,
``routing_rate_mbps`` and ``backlog_kb`` (then simply absent from the Table). Without ``--check``
there is no ``predictions.csv`` nor ``check.json`` (`ResultSet.predictions` and `ResultSet.check`
are None).

This is the one reader of a results directory: the figures, the report, the sweeps and the
Python API of a run (`netsim.results.Results`) all read through it; which columns each file has,
which are identifiers and which older results lack come from the one schema (`plot_tool.schema`).
`ResultSet.frame` (and `as_frame`) gives a table as a pandas DataFrame when pandas is installed,
else as plain rows.

This module reads files only: it imports nothing from the simulator packages.
"""
from __future__ import annotations

import csv
import itertools
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union, cast

import numpy as np

from plot_tool.json_fields import MAX_JSON_BYTES, check_fields
from plot_tool.schema import CHECK_FIELDS, CHECK_FILE, SUMMARY_FIELDS, SUMMARY_FILE, TABLES

READ_CHUNK_ROWS = 65536          # CSV rows turned into numpy columns at a time (`_read_table`)


# rows of a chunk of `iter_table`: its memory is the chunk's rows as Python strings (about 8 MB)
STREAM_CHUNK_ROWS = 8192

Table = dict[str, np.ndarray]

TRACE_TABLES = ("links", "flows", "hosts")    # the traces sampled at every interval
PathLike = Union[str, "os.PathLike[str]"]


# Each CSV file's required columns, in the order the simulator writes them, and which of them hold
# identifiers (strings), from the one schema (`plot_tool.schema`). Any other column is numeric.
# Extra columns are accepted (see `read_table`).
SCHEMAS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    name: (table.required, table.string_columns) for name, table in TABLES.items()}

# Numeric columns that newer results have and older ones lack: read strictly as numbers when
# present (a non-number is an error, as for a required column), accepted when absent.
OPTIONAL_COLUMNS: dict[str, tuple[str, ...]] = {
    name: table.optional_numbers for name, table in TABLES.items() if table.optional_numbers}

# Files that older results (or runs without --check) lack: the ResultSet attribute is None when
# the file is absent.
OPTIONAL_FILES = frozenset(name for name, table in TABLES.items() if table.optional)



@dataclass(frozen=True)
class TraceFile:
    """A trace of a results directory (links.csv, flows.csv, hosts.csv, routes.csv) left on disk by
    ``read_results(..., traces_in_memory=False)``: `read` loads it whole, `chunks` streams it
    (`iter_table`), for a reader whose memory must not grow with the length of the run."""

    path: Path
    name: str                     # its table in the schema: "links", "flows", "hosts", "routes"

    def read(self) -> Table:
        return read_table(self.path, self.name)

    def chunks(self) -> Iterator[Table]:
        return iter_table(self.path, self.name)


@dataclass
class ResultSet:
    """The contents of one results directory.

    Attributes:
        summary: the parsed ``summary.json`` (a dict, see docs/outputs.md).
        links, flows, hosts: the three CSV files as `Table` objects (column name -> numpy array).
        directory: where the files were read from (None when built in memory).
        routes: ``routes.csv`` as a `Table`, or None for results without that file (written before
            dynamic routing existed).
        predictions: ``predictions.csv`` as a `Table` (columns start_s, end_s, kind, id,
            direction, quantity, low, high), or None when the run was made without ``--check``.
        check: the parsed ``check.json`` (a dict), or None when the run was made without
            ``--check``.
        fct: ``fct.csv`` (one row per finished workload flow) as a `Table`, or None when the
            run had no workloads.
    """

    summary: dict
    links: Table
    flows: Table
    hosts: Table
    directory: Path | None = field(default=None, compare=False)
    routes: Table | None = None
    predictions: Table | None = None
    check: dict | None = None
    fct: Table | None = None

    @property
    def topology(self) -> str:
        return str(self.summary.get("topology", ""))

    @property
    def units(self) -> dict:
        return dict(self.summary.get("units", {}))

    def frame(self, name: str) -> Any:
        """The table `name` ("links", "flows", "hosts", "routes", "predictions", "fct") as a
        pandas DataFrame when pandas is installed, else as a list of row dicts (`as_frame`);
        None for an optional file the results do not have."""
        if name not in TABLES:
            raise KeyError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        table = getattr(self, name)
        return None if table is None else as_frame(table)

    def __repr__(self) -> str:
        rows = ", ".join(f"{name}={num_rows(getattr(self, name))} rows"
                         for name in ("links", "flows", "hosts"))
        rows += ", routes=" + ("none" if self.routes is None else f"{num_rows(self.routes)} rows")
        if self.predictions is not None:
            rows += f", predictions={num_rows(self.predictions)} rows"
        if self.check is not None:
            rows += ", check=yes"
        return f"ResultSet(topology={self.topology!r}, {rows}, directory={self.directory!s})"


def read_results(out_dir: PathLike, *, traces_in_memory: bool = True) -> ResultSet:
    """Read ``summary.json``, ``links.csv``, ``flows.csv``, ``hosts.csv``, ``routes.csv`` and,
    when present, ``predictions.csv``, ``check.json`` and ``fct.csv``.

    With ``traces_in_memory=False``, ``links``, ``flows``, ``hosts`` and ``routes`` (when the
    file exists) are `TraceFile` objects (their files checked to exist, not read): the figures
    stream the traces and read the routes only when they may have changed (`plot_tool.run_data`).

    `out_dir` may also be the path of the ``summary.json`` file itself. Raises FileNotFoundError
    (naming the missing path) when the directory or a required file is missing, and ValueError
    (naming the file, and the line for CSV data) when a file is malformed. ``routes.csv`` is
    optional (older results lack it): `ResultSet.routes` is then None. ``predictions.csv`` and
    ``check.json`` are written only by a run with ``--check``: `ResultSet.predictions` and
    `ResultSet.check` are None without them.
    """
    directory = Path(out_dir)
    if directory.is_file() and directory.name == SUMMARY_FILE:
        directory = directory.parent
    if not directory.exists():
        raise FileNotFoundError(f"results directory not found: {directory}")
    if not directory.is_dir():
        raise NotADirectoryError(f"not a results directory: {directory}")
    summary = read_summary(directory / SUMMARY_FILE)
    tables: dict[str, Table | None] = {}
    traces: dict[str, TraceFile] = {}
    for name, schema in TABLES.items():
        path = directory / schema.file_name
        if schema.optional and not path.exists():
            tables[name] = None
            continue
        if not traces_in_memory and (name in TRACE_TABLES or name == "routes"):
            if not path.is_file():
                raise _not_a_file(path)
            traces[name] = TraceFile(path, name)
            continue
        tables[name] = read_table(path, name)
    check_path = directory / CHECK_FILE
    check = _read_check(check_path) if check_path.exists() else None
    # (a TraceFile in a Table's place: only the figures ask for one, and they accept both)
    links, flows, hosts = (cast(Any, traces.get(name)) or tables[name] for name in TRACE_TABLES)
    assert links is not None and flows is not None and hosts is not None   # required files
    return ResultSet(summary=summary, links=links, flows=flows, hosts=hosts, directory=directory,
                     routes=cast(Any, traces.get("routes")) or tables["routes"],
                     predictions=tables["predictions"], check=check, fct=tables["fct"])


def read_table(path: PathLike, name: str) -> Table:
    """One CSV file of a results directory as a Table; `name` is its table in the schema
    (`plot_tool.schema.TABLES`: "links", "flows", "hosts", "routes", "predictions", "fct"), which
    says which columns are required, which are identifiers and which are numbers."""
    schema = TABLES[name]
    return _read_table(Path(path), schema.required, schema.string_columns, schema.optional_numbers)


def as_rows(table: Table) -> list[dict[str, Any]]:
    """The rows of `table` as plain dicts (column -> Python str or float), in file order."""
    names = list(table)
    columns = [np.asarray(values).tolist() for values in table.values()]
    return [dict(zip(names, row)) for row in zip(*columns)]


def as_frame(table: Table) -> Any:
    """`table` as a pandas DataFrame (the same columns and dtypes) when pandas is installed (the
    ``pandas`` extra), else as plain rows (`as_rows`)."""
    try:
        import pandas as pd
    except ImportError:
        return as_rows(table)
    return pd.DataFrame({name: np.asarray(values) for name, values in table.items()})


def select(table: Table, **equal: Any) -> Table:
    """Rows of `table` where every named column equals the given value.

    ``select(rs.links, link="L1", direction="R1->R2")`` keeps the rows of that link direction.
    Returns a new Table with the same columns (copies). An unknown column raises KeyError.
    """
    n = num_rows(table)
    mask = np.ones(n, dtype=bool)
    for column, value in equal.items():
        if column not in table:
            known = ", ".join(table) or "none"
            raise KeyError(f"no column {column!r} in table; columns: {known}")
        mask &= np.asarray(table[column]) == value
    return {column: np.asarray(values)[mask] for column, values in table.items()}


def num_rows(table: Table) -> int:
    """Number of rows of a Table (0 for a table without columns)."""
    for values in table.values():
        return len(values)
    return 0


# ---------------------------------------------------------------------------------------------
# Readers


def read_summary(path: PathLike, required: Sequence[str] = ()) -> dict:
    """``summary.json`` at `path`, parsed and checked (`check_summary`); `required`: names of
    further fields the caller needs ("end_time_s", "flows.*.start_s"). FileNotFoundError when it
    is missing, ValueError (one line naming the file and the field) when it is malformed."""
    path = Path(path)
    if not path.is_file():
        raise _not_a_file(path, f" ({SUMMARY_FILE} is written at the end of a run)")
    summary = read_json_object(path)
    check_summary(summary, path, required)
    return summary


def check_summary(summary: dict, path: PathLike, required: Sequence[str] = ()) -> None:
    """ValueError unless every field of `summary` that the readers use has its type
    (`plot_tool.schema.SUMMARY_FIELDS`) and the run's sampling grid is within the bounds of a
    run (at most MAX_TRACE_ROWS sampling intervals, topologies/bounds.py)."""
    check_fields(summary, SUMMARY_FIELDS, path, required)
    end, interval = summary.get("end_time_s"), summary.get("interval_s")
    if end is not None and interval is not None:
        from topologies.bounds import MAX_TRACE_ROWS
        if end / interval > MAX_TRACE_ROWS:
            raise ValueError(f"{path}: end_time_s: expected at most {MAX_TRACE_ROWS} sampling "
                             f"intervals of interval_s = {interval:g} s, got {end:g} s "
                             f"({end / interval:.3g} intervals)")




def _read_check(path: Path) -> dict:
    check = read_json_object(path)
    check_fields(check, CHECK_FIELDS, path)
    return check




def _not_a_file(path: Path, missing_why: str = "") -> OSError:
    """The error for a results file that is not a regular file: FileNotFoundError "missing"
    (with `missing_why`), or, for a directory, a named pipe or a device there, an OSError
    naming it (never read: a pipe would block)."""
    from plot_tool.figure_files import file_kind
    what = file_kind(path)
    if what == "missing":
        return FileNotFoundError(f"{path}: missing{missing_why}")
    return OSError(f"{path}: {what}, not a file netsim wrote")


def read_json_object(path: Path) -> dict:
    """The JSON object in the file `path` (ValueError when it is not a regular file of at most
    MAX_JSON_BYTES, not JSON or not an object: a pipe or a device would block or never end):
    summary.json, check.json, and a sweep's run records (`plot_tool.sweep_data.sweep_units`)."""
    if not path.is_file():
        raise ValueError(f"{path}: not a regular file")
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise ValueError(f"{path}: {size} bytes, more than any results file netsim writes "
                         f"(at most {MAX_JSON_BYTES} are read)")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: not valid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object at the top level")
    return data


def iter_table(path: PathLike, name: str, chunk_rows: int | None = None) -> Iterator[Table]:
    """One CSV file of a results directory as consecutive Tables of at most `chunk_rows` rows each,
    in file order, read as `read_table` reads it (the same checks and errors, raised when the
    chunk holding the bad line is reached): the memory of a reader that reduces the rows as they
    come is one chunk (default `STREAM_CHUNK_ROWS` rows), whatever the length of the file. An
    extra column (not in the schema) is float64 in a chunk where every value is a number, else
    text."""
    schema = TABLES[name]
    return _iter_table(Path(path), schema.required, schema.string_columns,
                       schema.optional_numbers, chunk_rows or STREAM_CHUNK_ROWS)


def _read_table(path: Path, required: tuple[str, ...], string_columns: frozenset[str],
                optional: tuple[str, ...] = ()) -> Table:
    """Read one long-format CSV file into a Table.

    Required columns must be present (any order); `optional` numeric columns may be absent but
    must hold numbers when present; extra columns are kept, as float64 when every value parses as
    a number and as strings otherwise.
    """
    chunks: list[Table] = []
    header: list[str] = []
    for chunk in _iter_table(path, required, string_columns, optional, READ_CHUNK_ROWS,
                             extra_as_text=True, header_out=header):
        chunks.append(chunk)
    table: Table = {}
    for name in header:
        parts = [chunk[name] for chunk in chunks]
        if name in string_columns:
            table[name] = np.concatenate(parts) if parts else np.array((), dtype=str)
        elif name in required or name in optional:
            table[name] = np.concatenate(parts) if parts else np.array((), dtype=np.float64)
        else:                                      # numbers if every value is one, else text
            text = np.concatenate(parts) if parts else np.array((), dtype=str)
            try:
                table[name] = _to_float(text.tolist(), path, name)
            except ValueError:
                table[name] = text
    return table


def _iter_table(path: Path, required: tuple[str, ...], string_columns: frozenset[str],
                optional: tuple[str, ...], chunk_rows: int, *, extra_as_text: bool = False,
                header_out: list[str] | None = None) -> Iterator[Table]:
    """The data rows of one long-format CSV file, `chunk_rows` at a time, as Tables (see
    `iter_table`; `extra_as_text`: extra columns stay text, for `_read_table` to decide on the
    whole column; `header_out` receives the header)."""
    if not path.is_file():
        raise _not_a_file(path)
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
        except csv.Error as exc:       # (the header past the csv module's field limit, a NUL)
            raise ValueError(f"{path}, line 1: not a CSV header row: {exc}") from None
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text: {exc}") from None
        if header is None:
            raise ValueError(f"{path}: empty file (expected a header row: {','.join(required)})")
        header = [name.strip() for name in header]
        missing = [name for name in required if name not in header]
        if missing:
            raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; "
                             f"header is {','.join(header)}")
        duplicates = sorted({name for name in header if header.count(name) > 1})
        if duplicates:
            raise ValueError(f"{path}: duplicate column(s) {', '.join(duplicates)}")
        if header_out is not None:
            header_out[:] = header
        # rows are read a chunk at a time, each turned into columns at once: the memory of a big
        # trace (3 million rows of flows.csv) is its numpy columns, not a Python list of every row
        first = 0                                  # data rows before the chunk
        while True:
            try:
                chunk = list(itertools.islice(reader, chunk_rows))
            except csv.Error as exc:   # (a field past the csv module's limit, a NUL byte)
                raise ValueError(f"{path}, line {reader.line_num}: not a CSV row: {exc}") from None
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}: not UTF-8 text (after line {reader.line_num}): "
                                 f"{exc}") from None
            if not chunk:
                break
            rows = [row for row in chunk if row]   # blank lines (e.g. a trailing one) skipped
            if not rows:
                continue
            if set(map(len, rows)) - {len(header)}:
                number, row = next((number, row) for number, row in _numbered_rows(path)
                                   if len(row) != len(header))
                raise ValueError(f"{path}, line {number}: {len(row)} fields, "
                                 f"expected {len(header)} ({','.join(header)})")
            table: Table = {}
            # one tuple per column, transposed in C (appending field by field cost a third)
            for name, values in zip(header, zip(*rows)):
                if name in string_columns:
                    table[name] = np.array(values, dtype=str)
                elif name in required or name in optional:
                    table[name] = _to_float(values, path, name, first)
                elif extra_as_text:
                    table[name] = np.array(values, dtype=str)
                else:
                    try:
                        table[name] = np.array([text or "nan" for text in values],
                                               dtype=np.float64)
                    except ValueError:
                        table[name] = np.array(values, dtype=str)
            first += len(rows)
            yield table


def _numbered_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """The data rows of the CSV file `path` (blank lines left out) with their line numbers: to
    name the line of an error."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader, None)
        for row in reader:
            if row:
                yield reader.line_num, row


def _to_float(values: Sequence[str], path: Path, column: str, first: int = 0) -> np.ndarray:
    """Column `column` of `path` as float64, `values` its data rows from row `first` on (0: the
    first data row): "" (no value) is NaN."""
    try:                  # numpy parses the text as float() does
        if "" in values:
            return np.array([text or "nan" for text in values], dtype=np.float64)
        return np.array(values, dtype=np.float64)
    except ValueError:    # a field that is not a number: find it and name its line
        pass
    out = np.empty(len(values), dtype=np.float64)
    for i, text in enumerate(values):
        text = text.strip()
        if not text:
            out[i] = np.nan
            continue
        try:
            out[i] = float(text)
        except ValueError:
            number = next(number for n, (number, _) in enumerate(_numbered_rows(path))
                          if n == first + i)  # that data row's line
            raise ValueError(f"{path}, line {number}: column {column!r}: "
                             f"not a number: {text!r}") from None
    return out
