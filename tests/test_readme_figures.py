"""Figures the README quotes from runs of shipped or generated topologies are what those runs give
now: each test reads the number from README.md and runs the command it describes. Before these
tests, a transport change had left "about 6 Mb/s" (now 5.61) and a leaf-spine row count
(1 240 rows where the run wrote 1 065) in the README, and no test noticed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(tmp_path, *args) -> dict:
    out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
    assert main([*map(str, args), "--no-plots", "--quiet", "--out", str(out)]) == 0
    return json.loads((out / "summary.json").read_text())


@pytest.mark.slow   # an end-to-end run of the example (30 simulated seconds): CI runs it with -m slow
def test_cbr_beside_reno_goodputs(tmp_path, quoted):
    ((rounded, exact, cbr),) = quoted(
        r"leaves Reno about (\d+\.\d) Mb/s \((\d+\.\d\d); the CBR source gets its (\d+)\)",
        "README.md")
    flows = run(tmp_path, ROOT / "topologies" / "examples" / "cbr_beside_reno.json")["flows"]
    assert round(flows["F1"]["goodput_mbps"], 2) == exact
    assert round(flows["F1"]["goodput_mbps"], 1) == rounded
    assert round(flows["CBR"]["goodput_mbps"]) == cbr


@pytest.mark.slow   # two end-to-end runs of a 144-host fabric: CI runs them with -m slow
def test_leaf_spine_rows_at_a_fine_interval(tmp_path, quoted):
    ((fine, default),) = quoted(r"the 144-host leaf-spine fabric with 20 flows: "
                                r"(\d[\d ]*) links\.csv rows instead of (\d[\d ]*),", "README.md")
    topology = tmp_path / "ls.json"
    assert main(["generate", "leaf-spine", "--flows", "20", "-o", str(topology)]) == 0
    rows = [run(tmp_path, topology, "--interval", interval)["trace_rows"]["links"]
            for interval in ("0.001", "0.1")]
    assert rows == [fine, default]
