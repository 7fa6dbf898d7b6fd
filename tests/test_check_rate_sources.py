"""--check and the sources without congestion control (cbr, onoff): they are named for what they
are, never told to declare a `theory_model` (they have no algorithm class to give one)."""
from __future__ import annotations

import json

from initializer import main
from theory.check import models_problem
from theory.models import missing_models_hint, no_model_reason
from topologies.loader import load_topology


def topology(*flows) -> dict:
    return {"units": "si", "hosts": ["S1", "T1", "S2", "T2"], "routers": ["R1", "R2"],
            "links": [{"id": "LB", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 10,
                       "buffer_kb": 100}]
            + [{"id": f"L{h}", "ends": [h, "R1" if h[0] == "S" else "R2"], "rate_mbps": 100,
                "delay_ms": 1, "buffer_kb": 100} for h in ("S1", "T1", "S2", "T2")],
            "flows": list(flows), "duration_s": 4}


CBR = {"id": "C1", "src": "S1", "dst": "T1", "kind": "cbr", "rate_mbps": 2}
ONOFF = {"id": "C2", "src": "S2", "dst": "T2", "kind": "onoff", "rate_mbps": 2, "on_s": 0.5,
         "off_s": 0.5}
RENO = {"id": "F1", "src": "S2", "dst": "T2", "algorithm": "reno"}


def test_a_topology_of_rate_sources_has_nothing_to_compare(tmp_path, capsys):
    assert models_problem(load_topology(topology(CBR, ONOFF))) == (
        "nothing to compare: the topology's flows, C1 (cbr), C2 (onoff), send at the rates they "
        "were given, without congestion control; --check compares congestion-controlled flows "
        "(tahoe, reno, newreno, fast, vegas, cubic, bbr, dctcp) with their algorithms' models")
    assert main([str(_write(tmp_path, topology(CBR))), "--check", "--no-plots",
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --check: nothing to compare: the topology's flows, C1 (cbr),")
    assert "theory_model" not in err


def test_beside_a_modelled_flow_a_rate_source_is_not_compared_and_says_why():
    assert no_model_reason("cbr") == ("a constant-bit-rate source (cbr), without congestion "
                                      "control: it sends at the rate it was given, not compared "
                                      "with a model")
    assert no_model_reason("onoff").startswith("an on-off source (onoff), without congestion")
    assert models_problem(load_topology(topology(CBR, RENO))) is None
    assert "cbr" not in missing_models_hint(["cbr", "aimd"])


def _write(tmp_path, data):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    return path
