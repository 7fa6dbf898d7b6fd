"""Trace files written while a run goes: links.csv, flows.csv, hosts.csv and routes.csv.

A `TraceFile` is a sampler table (`simulator.sampling`) that formats each row at once and hands it
to a buffered file, so that the memory of a run does not depend on how many rows it writes. Rows
are comma-separated with LF line endings, floats with nine significant digits, NaN as an empty
field; identifiers are quoted as the csv module would quote them. The columns of each file are
those of the results schema (`plot_tool.schema`); the one reader (`plot_tool.results`) loads a
file back into columns of numpy arrays, only when someone asks for the data.
"""
from __future__ import annotations

import csv
import io
import re

from plot_tool.schema import ROUTES

BUFFER_BYTES = 1 << 16


_CSV_SPECIAL = re.compile(r'[,"\r\n]')


def csv_field(text: str) -> str:
    """`text` as one CSV field (quoted only when it needs to be), as the csv module writes it."""
    if text and _CSV_SPECIAL.search(text) is None:      # nothing to quote: the text itself
        return text
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow([text])
    return out.getvalue()


def format_float(value: float) -> str:
    return "" if value != value else f"{value:.9g}"


class RowKey:
    """A trace file's handle of one entity (`TraceFile.prepare`): the CSV text of its key
    columns, and its last row (`values`, the tuple it was given) with that row's text."""

    __slots__ = ("text", "values", "values_text")

    def __init__(self, text: str):
        self.text = text
        self.values: tuple | None = None
        self.values_text = ""


class TraceFile:
    """A long-format CSV file written row by row: time_s, key columns, value columns.

    A row costs one string formatting of its values: the key text of an entity is made once
    (`prepare`), the time text once per sample time (rows of one tick share it), and NaN fields
    are emptied by a replace on the values' text (where "nan" can only be a NaN: %.9g writes
    digits, signs, '.', 'e', "inf" and "nan"), giving the same bytes as `format_float`. A row
    given as the very tuple of the entity's last row (a probe whose figures did not change
    returns its last row again, netsim/probes.py; an idle row is one constant) reuses that
    row's text: nothing is formatted.
    """

    __slots__ = ("path", "key_columns", "value_columns", "rows", "_fh", "_values", "_time_s",
                 "_time_text")

    def __init__(self, path, key_columns: tuple, value_columns: tuple):
        self.path = path
        self.key_columns = tuple(key_columns)
        self.value_columns = tuple(value_columns)
        self.rows = 0
        self._fh = open(path, "w", encoding="utf-8", newline="\n", buffering=BUFFER_BYTES)
        self._fh.write(",".join(("time_s", *self.key_columns, *self.value_columns)) + "\n")
        self._values = ",".join(("%.9g",) * len(self.value_columns)) + "\n"
        self._time_s: float | None = None
        self._time_text = ""

    def prepare(self, key: tuple) -> RowKey:
        """The handle of an entity: the CSV text of its key columns between commas, made once."""
        return RowKey("," + ",".join(csv_field(str(part)) for part in key) + ",")

    def append(self, time_s: float, key: RowKey, values: tuple) -> None:
        if time_s != self._time_s:
            self._time_s = time_s
            self._time_text = format_float(time_s)
        if values is key.values:          # the entity's last row again: its text again
            text = key.values_text
        else:
            text = self._values % values
            if "nan" in text:             # an empty field for "no value" (e.g. no RTT sample)
                text = text.replace("nan", "")
            key.values = values
            key.values_text = text
        self._fh.write(self._time_text + key.text + text)
        self.rows += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __len__(self) -> int:
        return self.rows


class RouteLog:
    """routes.csv, written as forwarding tables change: a list-like sink for `Network.route_log`
    (``append((time_s, router, destination, next_hop, link, cost_s))`` and ``len``)."""

    __slots__ = ("file", "_fields")

    def __init__(self, path):
        self.file = TraceFile(path, ROUTES.names[1:-1], ROUTES.names[-1:])   # ids, then cost_ms
        self._fields: dict = {}          # id -> its CSV field, quoted once per id

    def append(self, row: tuple) -> None:
        time_s, router, destination, next_hop, link, cost_s = row
        fields = self._fields
        parts = []
        for part in (router, destination, next_hop, link):
            text = fields.get(part)
            if text is None:
                text = fields[part] = csv_field(str(part))
            parts.append(text)
        self.file.append(time_s, RowKey("," + ",".join(parts) + ","), (cost_s * 1e3,))

    def close(self) -> None:
        self.file.close()

    def __len__(self) -> int:
        return len(self.file)
