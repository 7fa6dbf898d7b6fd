"""A run's length and its trace rows (netsim/run.py, topologies/bounds.py): a run whose length is
not known in advance (its flows may complete before the duration) is not refused up front; it
stops cleanly once its traces reach MAX_TRACE_ROWS, and the stop says which setting to change in
the words of whoever asked for the run (--interval on the command line, interval_s in the Python
API and in a sweep)."""
from __future__ import annotations

import pytest

from netsim import run as run_module
from netsim.sweep_execute import run_one
from topologies.loader import load_topology


def slow_flow() -> dict:
    """A flow of 100 GB over 10 Mbps: it would take 80 000 s, so the row limit ends its run."""
    return {"hosts": ["H1", "H2"], "duration_s": 1e5,
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 5,
                       "buffer_kb": 100}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1e5}]}


@pytest.fixture
def small_row_limit(monkeypatch):
    monkeypatch.setattr(run_module, "MAX_TRACE_ROWS", 1000)


@pytest.mark.parametrize("caller, setting", [("cli", "--interval"), ("api", "interval_s"),
                                             ("sweep", "interval_s")])
def test_the_row_limit_names_the_interval_as_the_caller_knows_it(small_row_limit, caller,
                                                                  setting):
    spec = load_topology(slow_flow())
    assert run_module.run_problem(spec, spec.duration_s, 0.01, caller) is None   # not known
    results = run_module.simulate(spec, interval_s=0.01, caller=caller)
    summary = results.summary
    assert summary["stop_reason"] == "limit"
    assert summary["stop_detail"].endswith(f"every 0.01 s); use a longer {setting}")
    assert 800 < sum(summary["trace_rows"][name] for name in ("links", "flows", "hosts")) <= 1000


def test_a_sweep_run_stopped_by_the_row_limit_says_interval_s(small_row_limit):
    done = run_one((slow_flow(), "d" * 64, 1, 0.01, False))
    assert done["status"] == "ok", done["error"]
    summary = done["record"]["summary"]
    assert summary["stop_reason"] == "limit"
    assert summary["stop_detail"].endswith("use a longer interval_s")
    assert "--interval" not in summary["stop_detail"]
