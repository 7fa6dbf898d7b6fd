"""FAST and Vegas simulations against the analytic equilibrium engine, and `--check`."""
from __future__ import annotations

from pathlib import Path

import json

import numpy as np
import pytest

from initializer import main
from netsim import load_topology, simulate
from theory.check import compare, predict_run
from theory.fluid import TheoryError, predict

ROOT = Path(__file__).resolve().parent.parent

TOLERANCE_PCT = 5.0


def single_link(n_flows, algorithm, params, starts=None, duration_s=30.0, data_mb=None):
    """n sender/receiver pairs sharing one 10 Mbps, 10 ms full-duplex link (R1 -> R2); the access
    links are fast so that the shared link is the only bottleneck."""
    hosts, links, flows = [], [{"id": "L", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 10,
                                "buffer_kb": 1000}], []
    for i in range(n_flows):
        hosts += [f"S{i}", f"D{i}"]
        links.append({"id": f"A{i}", "ends": [f"S{i}", "R1"], "rate_mbps": 100, "delay_ms": 1,
                      "buffer_kb": 1000})
        links.append({"id": f"B{i}", "ends": ["R2", f"D{i}"], "rate_mbps": 100, "delay_ms": 1,
                      "buffer_kb": 1000})
        flows.append({"id": f"F{i}", "src": f"S{i}", "dst": f"D{i}", "data_mb": data_mb,
                      "start_s": starts[i] if starts else 0.0, "algorithm": algorithm,
                      "params": params})
    return load_topology({"name": "single_link", "hosts": hosts, "routers": ["R1", "R2"],
                          "links": links, "flows": flows, "duration_s": duration_s})


def check(spec, **options):
    results = simulate(spec)
    model = predict(spec)
    return results, model, compare(results, model, tolerance_pct=TOLERANCE_PCT, **options)


def assert_within_tolerance(report):
    worst = [(iv["start_s"], row["id"], row["quantity"], row["error_pct"])
             for iv in report["intervals"] for row in iv["rows"]
             if row["error_pct"] is not None and row["error_pct"] > TOLERANCE_PCT]
    worst += [(None, row["id"], "finish_s", row["error_pct"]) for row in report["completion"]
              if row["error_pct"] is None or row["error_pct"] > TOLERANCE_PCT]
    assert not worst and not report["unmatched"] and report["passed"], worst


def test_fast_on_test_case_0_matches_the_equilibrium():
    spec = load_topology(ROOT / "topologies" / "test_case_0.json")
    results, model, report = check(spec)
    assert_within_tolerance(report)
    (interval,) = report["intervals"]
    quantities = {(row["id"], row["quantity"]) for row in interval["rows"]}
    assert quantities == {("F1", "rate_mbps"), ("F1", "queue_delay_ms"), ("L1", "backlog_kb")}
    # the half-duplex link carries data and ACKs: the data rate is 1024/1088 of the link
    rate = next(row for row in interval["rows"] if row["quantity"] == "rate_mbps")
    assert rate["predicted"] == pytest.approx(10 * 1024 / 1088)


def test_fast_single_link_three_flows_joining_one_by_one():
    spec = single_link(3, "fast", {"alpha": 30}, starts=[0.0, 8.0, 16.0], duration_s=30.0)
    results, model, report = check(spec)
    assert_within_tolerance(report)
    assert [iv["flows"] for iv in report["intervals"]] == [["F0"], ["F0", "F1"], ["F0", "F1", "F2"]]
    # late joiners see a queue at start: they get more than an equal share, as predicted
    last = model.timeline[-1]
    assert last.rates_pps["F2"] > last.rates_pps["F1"] > last.rates_pps["F0"]
    assert last.joined_delay_s["F0"] == 0.0 and last.joined_delay_s["F2"] > last.joined_delay_s["F1"] > 0


def test_fast_single_link_three_identical_flows_share_equally():
    spec = single_link(3, "fast", {"alpha": 20}, duration_s=15.0)
    results, model, report = check(spec)
    assert_within_tolerance(report)
    (iv,) = model.timeline
    backlog = iv.backlog_bytes["L R1->R2"] / 1000
    assert backlog == pytest.approx(3 * 20 * 1024 / 1000)       # n * alpha packets of 1024 B, in KB
    assert len(set(np.round(list(iv.rates_pps.values()), 9))) == 1


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_fast_on_test_case_2_all_five_intervals_and_completion_times():
    spec = load_topology(ROOT / "topologies" / "test_case_2.json")
    results, model, report = check(spec)
    assert_within_tolerance(report)
    assert [iv["flows"] for iv in report["intervals"]] == [
        ["F1"], ["F1", "F2"], ["F1", "F2", "F3"], ["F1", "F3"], ["F3"]]
    for iv in report["intervals"]:
        kinds = {row["quantity"] for row in iv["rows"]}
        assert kinds == {"rate_mbps", "queue_delay_ms", "backlog_kb"}
    # F1 alone crosses three equal links: the model only fixes their sum, compared as a group
    assert any(row["id"] == "L1+L2+L3" for row in report["intervals"][0]["rows"])
    assert {row["id"] for row in report["completion"]} == {"F1", "F2", "F3"}


def test_timeline_of_test_case_2_has_one_interval_per_set_of_active_flows():
    spec = load_topology(ROOT / "topologies" / "test_case_2.json")
    model = predict(spec)
    assert [iv.flows for iv in model.timeline] == [
        ["F1"], ["F1", "F2"], ["F1", "F2", "F3"], ["F1", "F3"], ["F3"]]
    assert model.timeline[1].joined_delay_s["F2"] == pytest.approx(
        model.timeline[0].queue_delay_s["F1"])      # F2 joins L1 while F1 keeps a queue there


@pytest.mark.parametrize("n", [2, 4])
def test_vegas_flows_keep_between_alpha_and_beta_packets_queued(n):
    spec = single_link(n, "vegas", {"alpha": 2, "beta": 4}, duration_s=25.0)
    results = simulate(spec)
    model = predict(spec)
    base = {f.id: f.base_rtt_s for f in model.flows}
    for flow in spec.flows:
        t, rate = results.trace("flows", flow.id, "recv_rate_mbps")
        _, rtt = results.trace("flows", flow.id, "rtt_ms")
        steady = t > 10.0
        pps = rate[steady].mean() * 1e6 / 8 / 1024
        queued = pps * (np.nanmean(rtt[steady]) / 1e3 - base[flow.id])
        assert 2.0 * 0.95 <= queued <= 4.0 * 1.05, (flow.id, queued)
    _, backlog = results.trace("links", "L", "buffer_pkts", direction="R1->R2")
    t, _ = results.trace("links", "L", "rate_mbps", direction="R1->R2")
    assert 2 * n * 0.9 <= backlog[t > 10.0].mean() <= 4 * n * 1.1


def test_vegas_prediction_is_an_interval_and_the_run_falls_inside():
    spec = single_link(2, "vegas", {"alpha": 2, "beta": 4}, duration_s=25.0)
    results, model, report = check(spec, settle_s=8.0)
    assert_within_tolerance(report)
    backlog = next(row for row in report["intervals"][0]["rows"] if row["id"] == "L R1->R2")
    assert backlog["predicted"] == pytest.approx([4.096, 8.192])    # 2 flows x [2, 4] x 1024 B


def test_vegas_late_joiner_measures_the_queue_and_gets_more():
    spec = single_link(2, "vegas", {"alpha": 2, "beta": 4}, starts=[0.0, 10.0], duration_s=40.0)
    results = simulate(spec)
    flows = results.summary["flows"]
    # F1 joins a queue of alpha..beta packets: its baseRTT is that much too high
    assert flows["F0"]["base_rtt_ms"] + 1.0 < flows["F1"]["base_rtt_ms"]
    late = results.trace("flows", "F1", "recv_rate_mbps")
    early = results.trace("flows", "F0", "recv_rate_mbps")
    assert late[1][late[0] > 20.0].mean() > 1.05 * early[1][early[0] > 20.0].mean()
    report = compare(results, predict_run(spec, results), settle_s=5.0, tolerance_pct=TOLERANCE_PCT)
    assert_within_tolerance(report)


def test_no_model_for_loss_based_flows():
    spec = load_topology(ROOT / "topologies" / "test_case_0.json", algorithm="reno")
    with pytest.raises(TheoryError, match=r"F1 \(reno\)"):
        predict(spec)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_check_command_on_test_case_2(tmp_path, capsys):
    code = main([str(ROOT / "topologies" / "test_case_2.json"), "--check", "--check-tolerance", "5",
                 "--out", str(tmp_path), "--no-plots", "-l", "L1", "L2", "L3"])
    out = capsys.readouterr().out
    assert code == 0
    assert "check against the analytic models" in out and "within the 5 % tolerance" in out
    report = json.loads((tmp_path / "check.json").read_text())
    assert report["passed"] is True and report["max_error_pct"] <= 5.0
    assert len(report["intervals"]) == 5
    row = report["intervals"][1]["rows"][0]
    assert set(row) == {"kind", "id", "quantity", "predicted", "simulated", "error_pct"}
    header = (tmp_path / "predictions.csv").read_text().splitlines()[0]
    assert header == "start_s,end_s,kind,id,direction,quantity,low,high"


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_check_tolerance_exit_status_and_errors(tmp_path, capsys):
    tc2 = str(ROOT / "topologies" / "test_case_2.json")
    assert main([tc2, "--check", "--check-tolerance", "0.5", "--out", str(tmp_path), "--no-plots",
                 "--quiet"]) == 1
    assert main([tc2, "--check-tolerance", "5", "--out", str(tmp_path), "--no-plots"]) == 2
    assert "only meaningful with --check" in capsys.readouterr().err
    aimd = str(ROOT / "experiments" / "plugins" / "aimd.py")    # declares no theory_model
    assert main([tc2, "--plugin", aimd, "--algorithm", "aimd", "--check", "--out", str(tmp_path),
                 "--no-plots"]) == 2
    err = capsys.readouterr().err
    assert "--check: no analytic model for flows F1 (aimd)" in err
    assert "models exist for" in err and "tahoe" in err and "aimd," not in err
    assert err.rstrip().endswith(   # the fix: one class attribute
        "to check such a flow, give its algorithm's class the attribute theory_model = \"loss\" "
        "(Padhye's Reno response: a window that grows by 1 packet per round trip and halves on "
        "loss), or \"cubic\", \"delay\", \"rate\" or \"dctcp\" if its steady state is that "
        "model's (docs/algorithms.md, \"Class attributes\")")


def test_check_of_workload_flows_only_says_there_is_nothing_to_compare(tmp_path, capsys):
    websearch = str(ROOT / "topologies" / "examples" / "websearch.json")
    assert main([websearch, "--check", "--out", str(tmp_path / "out"), "--no-plots"]) == 2
    assert capsys.readouterr().err == (
        "error: --check: the topology has no flows of its own to compare (the completion times "
        "of workload flows are in fct.csv and summary.json, not compared with a model)\n")
    assert not (tmp_path / "out").exists()
