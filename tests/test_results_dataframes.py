"""Results' tables as pandas DataFrames (issue 23 item 3): docs/notebook.md's code runs as
written, and without pandas the same calls give plain rows with the same values."""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from netsim import load_topology, simulate
from plot_tool.results import as_frame, as_rows, read_results

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "notebook.md"


@pytest.fixture(scope="module")
def results():
    return simulate(load_topology(ROOT / "topologies" / "test_case_0.json"), duration_s=2, seed=1)


def test_the_notebook_page_runs(monkeypatch, capsys):
    pytest.importorskip("pandas")
    blocks = re.findall(r"```python\n(.*?)```", NOTEBOOK.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(ROOT)
    exec(compile("\n".join(blocks), str(NOTEBOOK), "exec"), {"__name__": "notebook"})
    printed = capsys.readouterr().out
    assert "mean goodput over the samples:" in printed and "None" in printed


def test_frames_have_the_columns_and_values_of_the_tables(results):
    pd = pytest.importorskip("pandas")
    for name in ("links", "flows", "hosts", "routes"):
        table = results.table(name)
        frame = results.frame(name)
        assert isinstance(frame, pd.DataFrame)
        assert list(frame.columns) == list(table) and len(frame) == len(table["time_s"])
        for column, values in table.items():
            np.testing.assert_array_equal(frame[column].to_numpy(), values)
    assert frame["router"].dtype == object or str(frame["router"].dtype).startswith("str")


def test_without_pandas_frames_are_plain_rows(results, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)          # import pandas -> ImportError
    rows = results.frame("flows")
    table = results.table("flows")
    assert isinstance(rows, list) and len(rows) == len(table["time_s"])
    assert list(rows[0]) == list(table)
    assert rows[0]["flow"] == str(table["flow"][0]) and isinstance(rows[0]["time_s"], float)
    empty = [r["rtt_ms"] for r in rows if math.isnan(r["rtt_ms"])]
    assert len(empty) == int(np.isnan(table["rtt_ms"]).sum())
    assert as_frame({"a": np.array([1.0, 2.0])}) == [{"a": 1.0}, {"a": 2.0}]


def test_result_set_frames_and_absent_files(results, tmp_path):
    out = results.write(tmp_path / "r")
    rs = read_results(out)
    assert rs.frame("predictions") is None and rs.frame("fct") is None
    rows = as_rows(rs.hosts)
    assert {r["host"] for r in rows} == set(rs.summary["hosts"])
    with pytest.raises(KeyError, match="no table 'link'; tables: links, flows, hosts"):
        rs.frame("link")
