"""Sweep parameters whose values are whole objects (a link's "queue") and labelled value lists:
validation with one-line errors, the labels in results.csv and figure legends, and stable run
keys."""
from __future__ import annotations

import csv
import json

import pytest

from netsim.sweep import run_sweep
from netsim.sweep_file import SweepError, load_sweep, value_cell

RED = {"discipline": "red", "min_kb": 20, "max_kb": 60}
QUEUES = {"values": [{"discipline": "droptail"}, RED, {"discipline": "codel"}],
          "labels": ["drop-tail", "RED 20/60 KB", "CoDel"]}


def sweep_dict(queue_spec, **extra):
    return {"name": "queues", "topology": "lossy_link", "duration_s": 1,
            "parameters": {"links.L1.buffer_kb": [80, 120], "links.L1.queue": queue_spec},
            "metrics": ["flows.F1.goodput_mbps", "links.L1.directions.H1->H2.avg_sojourn_ms"],
            **extra}


def write(tmp_path, data):
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(data))
    return path


def error_of(path) -> str:
    with pytest.raises(SweepError) as info:
        load_sweep(path)
    message = str(info.value)
    assert len(message.splitlines()) == 1 and message.startswith(f"{path}: ")
    return message


def test_labelled_objects_load_and_name_their_values(tmp_path):
    sweep = load_sweep(write(tmp_path, sweep_dict(QUEUES)))
    assert sweep.values["links.L1.queue"] == QUEUES["values"]
    assert len(sweep.runs()) == 6
    assert [sweep.cell("links.L1.queue", v) for v in QUEUES["values"]] == QUEUES["labels"]
    assert sweep.cell("links.L1.buffer_kb", 80) == 80


def test_unlabelled_objects_are_shown_as_compact_json(tmp_path):
    sweep = load_sweep(write(tmp_path, sweep_dict(QUEUES["values"])))
    assert sweep.cell("links.L1.queue", RED) == \
        '{"discipline": "red", "min_kb": 20, "max_kb": 60}'
    assert value_cell(3.5) == 3.5 and value_cell("reno") == "reno"


def test_run_keys_depend_on_the_values_not_on_the_labels(tmp_path):
    labelled = load_sweep(write(tmp_path, sweep_dict(QUEUES))).runs()
    renamed = dict(QUEUES, labels=["a", "b", "c"])
    assert load_sweep(write(tmp_path, sweep_dict(renamed))).runs() == labelled


@pytest.mark.parametrize("spec, expected", [
    ({"values": [RED]}, 'a labelled list needs "values" and "labels"'),
    ({"values": [RED], "labels": ["a", "b"]},
     'field "labels": expected a list of 1 names, one per value, got a list'),
    ({"values": [RED, {"discipline": "codel"}], "labels": ["x", "x"]},
     'field "labels": "x" is given twice'),
    ({"values": [RED], "labels": [""]}, 'field "labels": expected a non-empty string, got ""'),
    ({"values": [RED], "labels": [3]}, 'field "labels": expected a non-empty string, got 3'),
    ({"values": [RED], "labels": ["a\nb"]},
     'field "labels": expected an id without control characters, got "a\\nb" (U+000A)'),
    ({"values": RED, "labels": ["a"]}, 'field "values": expected a list of values'),
    ({"values": [RED], "labels": ["a"], "lables": 1}, 'unknown field "lables" (did you mean '
                                                      '"labels"?)'),
    ({"values": [RED, dict(RED)], "labels": ["a", "b"]},
     'field "values": an object is given twice; each value has its own label'),
    ([[1, 2]], "expected numbers, strings, booleans, null or objects, got a list"),
])
def test_bad_labelled_lists_are_one_line(tmp_path, spec, expected):
    assert expected in error_of(write(tmp_path, sweep_dict(spec)))


def test_an_object_the_topology_refuses_names_the_point(tmp_path):
    bad = {"values": [{"discipline": "red", "min_kb": 100, "max_kb": 300}], "labels": ["RED"]}
    message = error_of(write(tmp_path, sweep_dict(bad)))
    assert 'links.L1.queue = "RED"' in message
    assert "queue.min_kb" in message and "buffer_kb (80)" in message


def test_results_csv_and_legends_use_the_labels(tmp_path):
    data = sweep_dict(QUEUES, plots=[{"file": "delay.png", "x": "links.L1.buffer_kb",
                                      "y": "links.L1.directions.H1->H2.avg_sojourn_ms",
                                      "lines": "links.L1.queue"}])
    sweep = load_sweep(write(tmp_path, data))
    run_sweep(sweep, tmp_path / "out", jobs=1)
    with open(tmp_path / "out" / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [row["links.L1.queue"] for row in rows] == [
        "drop-tail", "RED 20/60 KB", "CoDel"] * 2
    assert all(row["status"] == "ok" for row in rows)
    from plot_tool.sweep_figures import aggregate
    series = aggregate(rows, "links.L1.buffer_kb", "links.L1.directions.H1->H2.avg_sojourn_ms",
                       "links.L1.queue")
    assert sorted(s.label for s in series) == sorted(QUEUES["labels"])


def test_booleans_and_lists_appear_as_json_writes_them():
    assert value_cell(False) == "false" and value_cell(True) == "true"    # not Python's False
    assert value_cell([1, 2]) == "[1, 2]" and value_cell(0) == 0 and value_cell(None) is None
