"""summary.json's layout (netsim.results_dir.indented_json_text): indented like json.dumps(indent=2)
down to depth 4, each deeper container on one line, strict JSON."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from json_layout_reference import (
    json_values,
    reference_text,
    tricky_keys,
    tricky_scalars,
    tricky_values,
)

from netsim.results_dir import ONE_LINE_DEPTH, indented_json_text


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


# -- the writer against its definition ---------------------------------------------------------
@given(tricky_values)
def test_the_text_is_that_of_the_definition(value):
    assert indented_json_text(value) == reference_text(value)


@given(st.lists(tricky_values, min_size=1, max_size=6), st.data())
def test_objects_sharing_values_are_written_each_as_itself(deep, data):
    """Deep objects built from the same value objects (as the summary's idle link directions
    are), mixed with objects equal to them but not made of the same objects (0 where another
    holds 0.0 or False, -0.0 where another holds 0.0): each is written as itself."""
    template = {f"k{i}": value for i, value in enumerate(deep)}
    twins = [dict(template) for _ in range(3)]
    lookalikes = [{key: data.draw(st.sampled_from([value, 0, 0.0, -0.0, False, math.nan]))
                   for key, value in template.items()} for _ in range(3)]
    entries = data.draw(st.permutations(twins + lookalikes))
    summary = {"links": {"L": {"directions": {f"d{i}": e for i, e in enumerate(entries)}}}}
    assert indented_json_text(summary) == reference_text(summary)


@given(tricky_values)
def test_without_the_c_encoder_the_text_is_the_same(value):
    """Where the json module has no C encoder (PyPy), plain json.dumps writes the pieces."""
    import netsim.results_dir as results_dir
    saved = results_dir._c_make_encoder
    results_dir._c_make_encoder = None
    try:
        assert indented_json_text(value) == reference_text(value)
    finally:
        results_dir._c_make_encoder = saved


# -- a column at a time ------------------------------------------------------------------------
# The writer makes the texts of many values together (the same field of every link); columns of
# mixed kinds, sizes and keys are split, and each value must still be written as itself.
records = st.lists(st.dictionaries(st.sampled_from(["a", "b", "%s", "é"]) | tricky_keys,
                                   tricky_values, min_size=1, max_size=3),
                   min_size=2, max_size=12)


@given(records, st.lists(st.lists(tricky_scalars, min_size=1, max_size=3), min_size=2,
                         max_size=12))
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_columns_of_records_and_lists_are_written_as_each_value(dicts, lists):
    summary = {"links": {f"L{i}": {"ends": ["A", "B"], "fields": entry, "spans": lists[i % len(lists)]}
                         for i, entry in enumerate(dicts)},
               "rows": lists, "records": dicts}
    assert indented_json_text(summary) == reference_text(summary)


def test_the_summary_of_a_generated_network_is_that_of_the_definition():
    """A run's summary, written a column at a time, against the definition written a value at
    a time: a random graph's links (mostly idle, some not), flows, hosts and routers."""
    from netsim.run import simulate
    from topologies.generate import Common, random_graph
    from topologies.loader import load_topology
    spec = load_topology(random_graph(80, hosts=8, common=Common(flows=4, data_mb=0.05)))
    summary = simulate(spec).summary
    assert indented_json_text(summary) == reference_text(summary)
