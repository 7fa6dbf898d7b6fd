"""The declared algorithm interface (flows.congestion.FlowView): the transport implements it, the
tests' stand-in flow does too, the documentation lists it, and its plugin example runs."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import flows
from flows.congestion import Clock, FlowView

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "algorithms.md").read_text()
SECTION = DOC.split("## The algorithm interface")[1]


def members(protocol) -> set:
    """The names a Protocol declares (attributes and methods), without typing's own."""
    names = set(getattr(protocol, "__annotations__", {}))
    names |= {n for n, v in vars(protocol).items() if not n.startswith("_") and
              (callable(v) or isinstance(v, property))}
    return names


def test_the_sender_and_the_stand_in_implement_every_member(make_flow, fake_flow):
    sim, h1, h2, flow = make_flow(packets=10)
    for view in (flow.sender, fake_flow()):
        for name in members(FlowView):
            assert hasattr(view, name), name
        for name in members(Clock):
            assert hasattr(view.sim, name), name
    assert flow.cc.flow is flow.sender


def test_every_member_is_documented():
    documented = set(re.findall(r"^\| `(\w+)(?:\(\))?`(?:, `(\w+)`)? \|", SECTION, flags=re.M))
    names = {n for pair in documented for n in pair if n}
    assert members(FlowView) - {"sim"} <= names
    assert "`sim.now`, `sim.rng`" in SECTION


def test_every_hook_is_documented():
    hooks = {"init", "on_ack", "ssthresh", "on_state", "restore_cwnd", "on_rtt", "on_rate_sample",
             "tick"}
    for hook in hooks:
        assert callable(getattr(flows.CongestionControl, hook))
        assert re.search(rf"^\| `{hook}\(", SECTION, flags=re.M), hook
    assert not hasattr(flows.CongestionControl, "on_dupack")     # the transport's now


def test_the_plugin_example_runs(monkeypatch, tmp_path):
    """docs/algorithms.md "Write your own": the plugin file, loaded as --plugin loads it, runs;
    the documented unit test of its hooks passes."""
    from netsim.plugins import load_plugin
    from netsim import load_topology, simulate

    blocks = SECTION.split("## Write your own")[1].split("```python")
    plugin, unit_test = (block.split("```")[0] for block in blocks[1:3])
    (tmp_path / "my_aimd.py").write_text(plugin)
    monkeypatch.setitem(flows.ALGORITHMS, "my_aimd", None)  # removed again after the test
    assert load_plugin(tmp_path / "my_aimd.py") == ["my_aimd"]
    spec = load_topology({
        "hosts": ["H1", "H2"], "routers": [],
        "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 10,
                   "buffer_kb": 32, "loss_rate": 0.002}],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 2, "start_s": 0,
                   "algorithm": "my_aimd", "params": {"b": 0.5}}]})
    summary = simulate(spec).summary
    assert summary["stop_reason"] == "completed" and summary["flows"]["F1"]["in_order"]
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {}
    exec(compile(unit_test, "docs/algorithms.md", "exec"), namespace)
    namespace["test_additive_increase_and_decrease"]()


@pytest.mark.parametrize("name", sorted(flows.ALGORITHMS))
def test_built_in_algorithms_leave_the_recovery_window_to_the_transport(name):
    cls = flows.ALGORITHMS[name]
    assert not hasattr(cls, "on_dupack")
    assert cls.recovery in ("reno", "newreno", "sack")


def test_the_rtts_carry_their_unit_and_the_older_names_still_read(make_flow, fake_flow):
    """srtt_s and min_rtt_s, seconds as their names say (units in names); srtt and min_rtt,
    the names plugins were written with, give the same values."""
    sim, h1, h2, flow = make_flow(packets=20)
    view = flow.sender
    assert view.srtt_s is None and view.min_rtt_s == float("inf")
    sim.run()
    assert view.srtt_s is not None and 0.01 < view.srtt_s < 0.1
    assert (view.srtt_s, view.min_rtt_s) == (view.srtt, view.min_rtt)
    stand_in = fake_flow(srtt=0.05)
    assert (stand_in.srtt_s, stand_in.min_rtt_s) == (0.05, float("inf"))
