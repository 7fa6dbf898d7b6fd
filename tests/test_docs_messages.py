"""The error messages docs/topology-format.md quotes are the program's own, word for word: each
example here is produced by the loader and must appear as a line of the document (a new field or
algorithm changes the lists they give)."""
from __future__ import annotations

import copy
import json

import pytest

from topologies.loader import TopologyError, load_topology

BASE = {"hosts": ["H1", "H2", "T1"], "routers": ["R1"],
        "links": [{"id": f"L{i}", "ends": ends, "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 10}
                  for i, ends in enumerate([["H1", "R1"], ["R1", "H2"], ["R1", "T1"]], 1)],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1}]}


def unconnected(d):
    d["routers"].append("R2")
    d["links"][1]["ends"] = ["R2", "H2"]


CASES = [
    lambda d: d["links"][1].update(rate_mbps=-5),
    lambda d: d["links"][0].update(rate_mpbs=1),
    lambda d: d["links"][0].pop("delay_ms"),
    lambda d: d["links"][0].update(delay_ms="ten"),
    lambda d: d["links"].append(dict(d["links"][0])),
    lambda d: d["flows"][0].update(dst="T9"),
    lambda d: d["flows"][0].update(src="R1"),
    lambda d: d["flows"][0].update(params={"beta": 1}),
    unconnected,
]


@pytest.fixture(scope="module")
def document(root):
    return (root / "docs" / "topology-format.md").read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def root():
    from pathlib import Path
    return Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("change", CASES)
def test_each_quoted_example_is_the_loaders_message(tmp_path, monkeypatch, document, change):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "topologies").mkdir()
    data = copy.deepcopy(BASE)
    change(data)
    (tmp_path / "topologies" / "x.json").write_text(json.dumps(data))
    with pytest.raises(TopologyError) as info:
        load_topology("topologies/x.json")
    assert str(info.value) in document


def test_the_algorithm_override_example_is_the_programs(document):
    with pytest.raises(TopologyError) as info:
        load_topology(copy.deepcopy(BASE), algorithm="rneo")
    assert str(info.value) in document
