"""Trace rows (netsim/traces.py): every row, NaN or not, is formatted as `format_float` and the
csv module would write it: nine significant digits, NaN as an empty field, quoted identifiers."""
from __future__ import annotations

import csv
import io
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netsim.traces import TraceFile, csv_field, format_float

values = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-300, 123456789.5])
keys = st.text(alphabet="nanNAN,\"' x-1>é", min_size=1, max_size=8)


def reference(time_s, key, row) -> str:
    """The row as the csv module writes it, with format_float's number text."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(
        [format_float(time_s)] + list(key) + [format_float(v) for v in row])
    return out.getvalue()


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.floats(0, 1e7), st.tuples(keys, keys),
                               st.tuples(values, values, values)), min_size=1, max_size=6))
def test_rows_are_the_reference_bytes(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("trace") / "t.csv"
    trace = TraceFile(path, ("a", "b"), ("x", "y", "z"))
    for time_s, key, row in rows:
        trace.append(time_s, trace.prepare(key), row)
    trace.close()
    assert len(trace) == len(rows)
    expected = "time_s,a,b,x,y,z\n" + "".join(reference(*row) for row in rows)
    assert path.read_text(encoding="utf-8") == expected


def test_nan_fields_are_empty_and_identifiers_keep_nan(tmp_path):
    trace = TraceFile(tmp_path / "t.csv", ("link",), ("rate", "sojourn"))
    trace.append(0.1, trace.prepare(("nan",)), (1.5, math.nan))
    trace.append(0.1, trace.prepare(("L,1",)), (math.nan, math.inf))
    trace.append(0.2, trace.prepare(("nan",)), (0.0, 2.0))
    trace.close()
    assert (tmp_path / "t.csv").read_text().splitlines() == [
        "time_s,link,rate,sojourn", "0.1,nan,1.5,", '0.1,"L,1",,inf', "0.2,nan,0,2"]


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=10) |
       st.text(alphabet=",\"\r\n \t=+é-x", max_size=6))
def test_an_identifier_field_is_what_the_csv_module_writes(text):
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow([text])
    assert csv_field(text) == out.getvalue()


plain_ids = st.text(alphabet="rR0129-_>.", min_size=1, max_size=6)
parts = keys | plain_ids | st.just("") | st.sampled_from(["a\nb", "c\rd", "x|y"]) | st.integers(-3, 3)


@settings(max_examples=300, deadline=None)
@given(group=st.lists(st.tuples(plain_ids, plain_ids), max_size=6)
       | st.lists(st.tuples(plain_ids, parts), max_size=6)
       | st.lists(st.lists(parts, max_size=3).map(tuple), max_size=6))
def test_keys_prepared_together_are_those_prepared_one_by_one(tmp_path_factory, group):
    """`TraceFile.prepare_all` (a sampler group's members, netsim/probes.py) gives each key the
    text `prepare` gives it: plain ids, fields that need quoting (or are empty), keys of other
    sizes, numbers."""
    trace = TraceFile(tmp_path_factory.mktemp("trace") / "t.csv", ("a", "b"), ("x",))
    together = trace.prepare_all(group)
    trace.close()
    assert [handle.text for handle in together] == [trace.prepare(key).text for key in group]


@pytest.mark.parametrize("odd", ["", "a,b", 'a"b', "a\nb", "c\rd", "x|y", 7, None, ("p", 2)])
def test_one_field_to_quote_among_plain_keys_is_quoted(tmp_path, odd):
    group = [("r1-r2", "r1->r2"), ("r2-r3", odd), ("r3-r4", "r4->r3")]
    trace = TraceFile(tmp_path / "t.csv", ("a", "b"), ("x",))
    together = trace.prepare_all(group)
    trace.close()
    assert [handle.text for handle in together] == [trace.prepare(key).text for key in group]
