"""docs/algorithms.md lists every algorithm and every parameter with its default."""
from __future__ import annotations

from pathlib import Path

import re

from flows import ALGORITHMS

ROOT = Path(__file__).resolve().parent.parent

DOC = (ROOT / "docs" / "algorithms.md").read_text()


def test_every_algorithm_is_listed():
    listed = set(re.findall(r"^\| `([a-z]+)` \| `flows/", DOC, flags=re.M))
    assert listed == set(ALGORITHMS)


def test_every_parameter_is_documented_with_its_default():
    for name, cls in ALGORITHMS.items():
        for param, default in cls.PARAMETERS.items():
            row = re.search(rf"^\| `{param}` \| ([^|]+) \|", DOC.split(f"### `{name}`")[1], flags=re.M)
            assert row, f"{name}.{param} missing from docs/algorithms.md"
            assert float(row.group(1)) == float(default), (name, param)
    for name, cls in ALGORITHMS.items():
        if not cls.PARAMETERS:
            assert f"`{name}`" in DOC.split("## Parameters")[1].split("###")[0]
