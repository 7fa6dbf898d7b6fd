"""The summary.json layout by its definition, one value at a time, and hypothesis strategies of
the values that test it (tests/test_summary_layout.py, tests/test_results_fast_paths.py). A
helper module, not a test module: ``from json_layout_reference import reference_text``.
"""
from __future__ import annotations

import json
import math

from hypothesis import strategies as st

from netsim.results_dir import ONE_LINE_DEPTH

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | \
    st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) |
                           st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=20)


def reference_text(value, depth: int = 0, indent: int = 2) -> str:
    """The layout by its definition, one value at a time (the writer before its speed-up):
    json.dumps(indent=2) down to ONE_LINE_DEPTH, json.dumps (NaN and infinities null) below."""
    if depth >= ONE_LINE_DEPTH or not value or not isinstance(value, (dict, list, tuple)):
        return json.dumps(nulled(value), allow_nan=False)
    inner = "\n" + " " * (indent * (depth + 1))
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            return json.dumps(nulled(value), allow_nan=False)
        items = [f"{inner}{json.dumps(key)}: {reference_text(item, depth + 1, indent)}"
                 for key, item in value.items()]
        return "{" + ",".join(items) + "\n" + " " * (indent * depth) + "}"
    items = [inner + reference_text(item, depth + 1, indent) for item in value]
    return "[" + ",".join(items) + "\n" + " " * (indent * depth) + "]"


def nulled(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: nulled(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [nulled(item) for item in value]
    return value


# zeros of every kind (0, 0.0, -0.0, False) and floats that are not numbers: what a writer that
# remembers texts could confuse; keys that are not strings (the object then on one line)
tricky_scalars = st.sampled_from([0, 0.0, -0.0, False, 1, 1.0, True, None, math.nan, math.inf,
                                  -math.inf, "", "0", "é\n\"x\""]) | scalars
tricky_keys = st.text(max_size=3) | st.sampled_from([0, 1, 1.5, True, None])
tricky_values = st.recursive(
    tricky_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner) |
    st.dictionaries(st.text(max_size=3), inner, max_size=4) |
    st.dictionaries(tricky_keys, inner, max_size=2), max_leaves=24)
