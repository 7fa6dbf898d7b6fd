"""The one results schema (plot_tool/schema.py): docs/outputs.md lists exactly its columns, with
the same types, units and meanings; the files a run writes have exactly its columns, in its
order; the reader takes its identifiers and optional columns from it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from plot_tool import schema
from plot_tool.results import read_results

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "outputs.md"
HEADINGS = {"links": "### `links.csv`", "flows": "### `flows.csv`", "hosts": "### `hosts.csv`",
            "routes": "### `routes.csv`", "predictions": "### `predictions.csv`",
            "fct": "### `fct.csv`"}


def doc_table(heading: str) -> list[tuple[str, ...]]:
    """The rows (name, type, unit, meaning) of the first table after `heading`; a row naming
    several fields ("`src`, `dst`") gives one row per field."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    while not lines[start].startswith("|"):
        start += 1
        assert not lines[start].startswith("#"), f"no table under {heading}"
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        name, kind, unit, meaning = (cell.strip() for cell in line.strip().strip("|").split(" | "))
        for one in name.split(", "):
            rows.append((one.strip("`"), kind, unit, meaning))
    return rows


def as_rows(columns) -> list[tuple[str, ...]]:
    return [(c.name, c.type, c.unit, c.meaning) for c in columns]


@pytest.mark.parametrize("name", sorted(HEADINGS))
def test_the_document_lists_every_column_of_the_schema(name):
    assert doc_table(HEADINGS[name]) == as_rows(schema.TABLES[name].columns)


def test_the_document_lists_every_field_of_a_flow_in_the_summary():
    assert doc_table("### `flows.<id>`") == as_rows(schema.SUMMARY_FLOW_FIELDS)


def test_a_run_writes_the_columns_of_the_schema_in_order(tmp_path):
    from netsim.cli import main
    out = tmp_path / "r"
    assert main([str(ROOT / "topologies" / "test_case_2.json"), "--duration", "2", "--no-plots",
                 "--quiet", "--out", str(out)]) == 0
    for name in ("links", "hosts", "routes"):
        header = (out / f"{name}.csv").read_text().splitlines()[0]
        assert header.split(",") == list(schema.TABLES[name].names)
    flows_header = (out / "flows.csv").read_text().splitlines()[0].split(",")
    fixed = list(schema.FLOWS.names)
    assert flows_header[:len(fixed)] == fixed          # then the algorithms' state, if any
    summary = json.loads((out / "summary.json").read_text())
    for flow in summary["flows"].values():
        assert {c.name for c in schema.SUMMARY_FLOW_FIELDS if c.required} <= set(flow)
        assert "path_links" not in flow                 # (only with ECMP flow hashing)
        assert flow["counters"] is None or set(flow["counters"]) == set(schema.FLOW_COUNTERS)
        assert isinstance(flow["algorithm_state"], dict)
    rs = read_results(out)
    assert set(rs.flows) >= set(schema.FLOWS.names) - {"arrival_rate_mbps"}
    assert rs.flows["flow"].dtype.kind == "U" and rs.flows["rto"].dtype.kind == "f"


def test_check_and_workload_files_have_the_columns_of_the_schema(tmp_path):
    """predictions.csv (written by theory, which sits below plot_tool and cannot import the
    schema) and fct.csv (netsim/workloads.py) have the schema's header."""
    from netsim.cli import main
    out = tmp_path / "c"
    assert main([str(ROOT / "topologies" / "test_case_2.json"), "--duration", "3", "--check",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    header = (out / "predictions.csv").read_text().splitlines()[0]
    assert header.split(",") == list(schema.PREDICTIONS.names)
    out = tmp_path / "w"
    assert main([str(ROOT / "topologies" / "examples" / "websearch.json"), "--duration", "0.2",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    header = (out / "fct.csv").read_text().splitlines()[0]
    assert header.split(",") == list(schema.FCT.names)


def test_the_reader_takes_identifiers_and_optional_columns_from_the_schema():
    from plot_tool.results import OPTIONAL_COLUMNS, OPTIONAL_FILES, SCHEMAS
    assert SCHEMAS["links"][1] == frozenset({"link", "direction"})
    assert SCHEMAS["routes"][1] == frozenset({"router", "destination", "next_hop", "link"})
    assert "sojourn_ms" in OPTIONAL_COLUMNS["links"] and "rto" in OPTIONAL_COLUMNS["flows"]
    assert "rtt_ms" in SCHEMAS["flows"][0]                     # required since the first format
    assert OPTIONAL_FILES == {"routes", "predictions", "fct"}


def test_the_schema_refuses_an_unknown_column_name():
    with pytest.raises(KeyError, match="links.csv has no column 'buffer_mb'; columns: time_s"):
        schema.LINKS.column("buffer_mb")


def test_importing_the_schema_loads_neither_numpy_nor_matplotlib():
    import subprocess
    import sys
    code = ("import sys, plot_tool.schema, netsim.probes, netsim.traces\n"
            "print(sorted(m for m in ('numpy', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_capture_names_are_one_to_one():
    assert schema.host_capture_name("H 1") == "H%201.pcap"
    assert schema.link_capture_name("L_1", "a-b", "c") != schema.link_capture_name("L_1", "a", "b-c")
    assert schema.sender_port(0) == 10000 and schema.sender_port(55536) == 10000
