"""Trace files written while a run goes: links.csv, flows.csv, hosts.csv and routes.csv.

A `TraceFile` is a sampler table (`simulator.sampling`) that formats each row at once and hands
the rows of each sampling instant to a buffered file together, so that the memory of a run does
not depend on how many rows it writes. Rows are comma-separated with LF line endings, floats with
nine significant digits, NaN as an empty field; identifiers are quoted as the csv module would
quote them. The columns of each file are those of the results schema (`plot_tool.schema`); the
one reader (`plot_tool.results`) loads a file back into columns of numpy arrays, only when
someone asks for the data.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from struct import Struct
from typing import Any, Final

from plot_tool.schema import ROUTES

BUFFER_BYTES: Final = 1 << 16
SHARED_AFTER_ROWS: Final = 64     # rows of one time before a trace file looks their texts up
TEXT_CHUNK_ROWS: Final = 8192     # rows given as text kept before they are written (append_text)


def csv_field(text: str) -> str:
    """`text` as one CSV field (quoted only when it needs to be), as the csv module writes it."""
    if text and "," not in text and '"' not in text and "\n" not in text and "\r" not in text:
        return text                                      # nothing to quote: the text itself
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow([text])
    return out.getvalue()


def format_float(value: float) -> str:
    return "" if value != value else f"{value:.9g}"


class RowKey:
    """A trace file's handle of one entity (`TraceFile.prepare`): the CSV text of its key
    columns, and its last row (`values`, the tuple it was given) with the text of that row
    after its time (`line`: the key text, then the values')."""

    __slots__ = ("text", "values", "line")

    def __init__(self, text: str) -> None:
        self.text = text
        self.values: tuple | None = None
        self.line = ""


class TraceFile:
    """A long-format CSV file written row by row: time_s, key columns, value columns.

    A row costs at most one string formatting of its values: the key text of an entity is made
    once (`prepare`), and NaN fields are emptied by a replace on the values' text (where "nan"
    can only be a NaN: %.9g writes digits, signs, '.', 'e', "inf" and "nan"), giving the same
    bytes as `format_float`. A row given as the very tuple of the entity's last row (a probe
    whose figures did not change returns its last row again, netsim/probes.py) reuses that
    row's text, and so does the very tuple given last (an idle row, one constant). Beyond the
    first `SHARED_AFTER_ROWS` rows of a time, any other row is looked up by its values' bits
    (the doubles %.9g formats, packed: unlike equality of floats, bits tell -0.0 from 0.0) among
    the rows of that time already formatted: many entities share rows (flows stalled with the
    same window), so most rows of a large sample are formatted once.

    The rows of one time (a sample: every entity's row) are kept as their texts after the time,
    and written together when the time changes or the file closes, the time's text put before
    each of them by one join (``time + time.join(rows)``): a row costs one list append. Rows
    given as text (`append_text`) are also written every `TEXT_CHUNK_ROWS` rows: a routing table
    logged at one time may have a million rows (the same bytes, never all held at once).
    """

    __slots__ = ("path", "key_columns", "value_columns", "_fh", "_format", "_pack", "_time_s",
                 "_time_text", "_lines", "_texts", "_last_values", "_last_text", "_written")

    def __init__(self, path: Any, key_columns: Sequence, value_columns: Sequence) -> None:
        self.path = path
        self.key_columns = tuple(key_columns)
        self.value_columns = tuple(value_columns)
        self._fh: Any = open(path, "w", encoding="utf-8", newline="\n", buffering=BUFFER_BYTES)
        self._fh.write(",".join(("time_s", *self.key_columns, *self.value_columns)) + "\n")
        self._format = ",".join(("%.9g",) * len(self.value_columns)) + "\n"
        self._pack: Any = Struct(f"<{len(self.value_columns)}d").pack
        self._time_s: float | None = None
        self._time_text = ""
        self._lines: list[str] = []   # the rows of `_time_s` not written yet, after their time
        self._texts: dict[bytes, str] = {}   # packed values -> their text, for the rows of `_time_s`
        self._last_values: tuple | None = None    # the tuple of the last row formatted or
        self._last_text = ""                      # looked up, and its text
        self._written = 0             # rows written to the file

    def prepare(self, key: Sequence) -> RowKey:
        """The handle of an entity: the CSV text of its key columns between commas, made once."""
        return RowKey("," + ",".join([csv_field(str(part)) for part in key]) + ",")

    def prepare_all(self, keys: list[tuple]) -> list[RowKey]:
        """`prepare` of each of `keys` (tuples), in order: the handles of a sampler group's
        members, made at its first sample (tens of thousands of link directions).

        Each key text is made by one format, and the fields are checked for quoting all at
        once: when every field is one `csv_field` leaves as it is (not empty, no comma, quote
        or line break: ids rarely need quoting), a key text of `size` fields has exactly
        size + 1 commas, none of them adjacent, and no quote or line break, and the texts of
        all the keys joined by another character show it together. Otherwise (or for keys of
        different sizes) each key is made as `prepare` makes it."""
        size = len(keys[0]) if keys else 0
        texts: list[str] = []
        if size:
            form = "," + "%s," * size        # (`%s` is `str`, as `prepare` takes it)
            try:
                texts = [form % key for key in keys]
            except TypeError:                # (a key of another size)
                texts = []
        joined = "|".join(texts)
        if (not texts or joined.count(",") != (size + 1) * len(texts) or ",," in joined
                or '"' in joined or "\n" in joined or "\r" in joined):
            return [self.prepare(key) for key in keys]
        return list(map(RowKey, texts))

    def append(self, time_s: float, key: RowKey, values: tuple) -> None:
        if time_s != self._time_s:        # (`_start_time`, inline: this runs once per row)
            self._write_lines()
            self._time_s = time_s
            self._time_text = format_float(time_s)
        if values is not key.values:      # (the entity's last row again: its line again)
            if values is self._last_values:       # (the row before, e.g. an idle row)
                text = self._last_text
            else:
                # (the first rows of a time are formatted: a lookup costs more than it saves
                # where a sample has few rows)
                bits: bytes | None = (self._pack(*values) if len(self._lines) >= SHARED_AFTER_ROWS
                                      else None)
                found = self._texts.get(bits) if bits is not None else None
                if found is None:
                    text = self._format % values
                    if "nan" in text:     # an empty field for "no value" (e.g. no RTT sample)
                        text = text.replace("nan", "")
                    if bits is not None:
                        self._texts[bits] = text
                else:
                    text = found
                self._last_values = values
                self._last_text = text
            key.values = values
            key.line = key.text + text
        self._lines.append(key.line)

    def append_all(self, time_s: float, keys: list[RowKey], values: tuple) -> None:
        """`append` of the same row (`values`) for each of the entities `keys`, in order: the
        idle row of a sampler group's members that sleep from its first sample, and again at
        the end of the run. The row's text is made once, and each entity's line by one
        concatenation (none at the end: there the idle row is each one's last row again)."""
        if not keys:
            return
        if time_s != self._time_s:
            self._start_time(time_s)
        if values is self._last_values:
            text = self._last_text
        else:
            text = self._format % values
            if "nan" in text:             # an empty field for "no value", as `append`
                text = text.replace("nan", "")
            self._last_values = values
            self._last_text = text
        lines = self._lines
        for key in keys:
            if values is not key.values:
                key.values = values
                key.line = key.text + text
            lines.append(key.line)

    def append_text(self, time_s: float, text: str) -> None:
        """Append a row given as its text after the time (its key and value fields, each
        preceded by a comma, and the newline): what `append` makes of a row, made by a caller
        that does better than `append` (`RouteLog`)."""
        if time_s != self._time_s:
            self._start_time(time_s)
        lines = self._lines
        lines.append(text)
        if len(lines) >= TEXT_CHUNK_ROWS:
            self._write_lines()

    def _start_time(self, time_s: float) -> None:
        """Write the rows of the current time; the rows given next are at `time_s`."""
        self._write_lines()
        self._time_s = time_s
        self._time_text = format_float(time_s)

    def _write_lines(self) -> None:
        """Write the rows of the current time."""
        lines = self._lines
        self._texts.clear()
        if lines:
            self._lines = []
            self._written += len(lines)
            time_text = self._time_text
            self._write(time_text + time_text.join(lines))

    def _write(self, text: str) -> None:
        try:
            self._fh.write(text)
        except OSError as exc:
            self._name(exc)
            raise

    def _name(self, exc: OSError) -> None:
        """Have an error of writing this file name it (the OSError's `filename`, which
        `netsim.cli_output.failed_file` reads first: compiled, the methods of a trace file leave
        no frame whose locals would show the writer)."""
        if not exc.filename:
            exc.filename = self.path

    @property
    def rows(self) -> int:
        """Rows appended so far."""
        return self._written + len(self._lines)

    def close(self) -> None:
        if not self._fh.closed:
            try:
                try:
                    self._write_lines()
                finally:
                    self._fh.close()
            except OSError as exc:
                self._name(exc)
                raise

    def __len__(self) -> int:
        return self._written + len(self._lines)


class RouteLog:
    """routes.csv, written as forwarding tables change: a list-like sink for `Network.route_log`
    (``append((time_s, router, destination, next_hop, link, cost_s))`` and ``len``).

    Its rows are all different (one per router and destination at a time), so a row's text is
    made here at once (`TraceFile.append_text`) rather than through an entity's `RowKey`: the ids'
    CSV fields quoted once per id, and the cost's text, as `TraceFile.append` formats it, once
    per cost and time (a table installed at t = 0 on a network of equal links has a few
    distinct costs for thousands of rows; a zero, whose sign equality would lose, and a NaN,
    equal to nothing, are formatted every time)."""

    __slots__ = ("file", "_fields", "_format", "_costs", "_time_s", "_left", "_on_limit")

    def __init__(self, path: Any, limit: int | None = None,
                 on_limit: Callable[[int], None] | None = None) -> None:
        self.file = TraceFile(path, ROUTES.names[1:-1], ROUTES.names[-1:])   # ids, then cost_ms
        # rows still allowed before `on_limit(rows written)` is called, once (None: no limit)
        self._left = limit
        self._on_limit = on_limit
        self._fields: dict = {}          # id -> its CSV field, quoted once per id
        self._format = self.file._format
        self._costs: dict = {}           # cost_s -> the text of its value, for rows of `_time_s`
        self._time_s: float | None = None

    def append(self, row: tuple) -> None:
        time_s, router, destination, next_hop, link, cost_s = row
        fields = self._fields
        try:
            ids = [fields[router], fields[destination], fields[next_hop], fields[link]]
        except KeyError:                 # (an id not seen before)
            ids = [*map(self._field, (router, destination, next_hop, link))]
        if time_s != self._time_s:
            self._time_s = time_s
            self._costs.clear()
        text = self._costs.get(cost_s)
        if text is None:
            text = self._format % (cost_s * 1e3,)
            if "nan" in text:            # an empty field for "no value", as `TraceFile.append`
                text = text.replace("nan", "")
            if cost_s and cost_s == cost_s:
                self._costs[cost_s] = text
        ids.append(text)
        self.file.append_text(time_s, "," + ",".join(ids))
        if self._left is not None:
            self._left -= 1
            if self._left <= 0:
                self._left = None
                if self._on_limit is not None:
                    self._on_limit(len(self))

    def _field(self, part) -> str:
        """The CSV field of an id (quoted once per id)."""
        text = self._fields.get(part)
        if text is None:
            text = self._fields[part] = csv_field(str(part))
        return text

    def close(self) -> None:
        self.file.close()

    def __len__(self) -> int:
        return len(self.file)
