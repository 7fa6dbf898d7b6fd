"""summary.json's layout (netsim.results_dir.indented_json_text): indented like json.dumps(indent=2)
down to depth 4, each deeper container on one line, strict JSON."""
from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from netsim.results_dir import ONE_LINE_DEPTH, indented_json_text

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | \
    st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) |
                           st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=20)


def depth(value) -> int:
    if isinstance(value, dict) and value:
        return 1 + max(depth(v) for v in value.values())
    if isinstance(value, list) and value:
        return 1 + max(depth(v) for v in value)
    return 0


@given(json_values)
def test_reads_back_as_the_same_data(value):
    assert json.loads(indented_json_text(value)) == value


@given(json_values)
def test_shallow_data_is_laid_out_exactly_as_indent_2(value):
    if depth(value) <= ONE_LINE_DEPTH:
        assert indented_json_text(value) == json.dumps(value, indent=2)


def test_a_link_direction_is_one_line_and_nan_is_null():
    summary = {"links": {"L1": {"rate_mbps": 10.0, "directions": {
        "A->B": {"drops": 0, "p99_sojourn_ms": math.nan}, "B->A": {"drops": 2, "lost": math.inf}}}}}
    text = indented_json_text(summary)
    lines = text.splitlines()
    assert '        "A->B": {"drops": 0, "p99_sojourn_ms": null},' in lines
    assert '        "B->A": {"drops": 2, "lost": null}' in lines
    assert '      "rate_mbps": 10.0,' in lines
    assert json.loads(text)["links"]["L1"]["directions"]["A->B"]["p99_sojourn_ms"] is None
