"""Theory curves of sweeps take packet size, RTT, units and rates from the topology: a setting
that disagrees with the topology is refused, and every shipped experiment draws its theory with
the topology's values."""
from __future__ import annotations

from pathlib import Path

import json

import pytest

from initializer import main
from netsim.sweep import SweepError, load_sweep, point_spec
from theory.paths import base_rtts_s

ROOT = Path(__file__).resolve().parent.parent

EXPERIMENTS = sorted((ROOT / "experiments").glob("*.json"))
LOSS = "links.L1.impairments.H1->H2.loss_rate"
LOSSY = {
    "name": "theory", "topology": "lossy_link", "duration_s": 1,
    "parameters": {LOSS: [0.01, 0.02], "flows.*.algorithm": ["reno", "cubic"]},
    "metrics": ["flows.F1.goodput_mbps"],
    "plots": [{"file": "g.png", "x": LOSS, "y": "flows.F1.goodput_mbps",
               "lines": "flows.*.algorithm", "theory": {"model": "mathis"}}],
}


def write(tmp_path, data, name="sweep.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def with_theory(theory, **changes):
    plot = dict(LOSSY["plots"][0], theory=theory)
    return dict(LOSSY, plots=[plot], **changes)


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.stem)
def test_shipped_theory_settings_agree_with_the_topology(path):
    """The packet size, RTT, units and rates each theory curve uses are the topology's, at every
    point of the sweep."""
    named = json.loads(path.read_text()).get("plugins", [])          # given as --plugin
    sweep = load_sweep(path, plugins=[path.parent / plugin for plugin in named])
    for plot in sweep.resolved_plots:
        theory = plot.get("theory")
        if theory is None or theory["model"] == "column":
            continue
        for point in sweep.points():
            spec = point_spec(sweep, point)
            if theory["model"] in ("mathis", "cubic"):
                assert theory["mss_bytes"] == spec.packet_sizes.data_bytes
                base_ms = base_rtts_s(spec)[theory["flow"]] * 1e3
                assert theory["rtt_ms"] == pytest.approx(base_ms, rel=1e-9)
                assert theory["units_bits_per_mbit"] == spec.units.bits_per_mbit
            else:
                rate = spec.link(theory["link"]).rate_bps / spec.units.bits_per_mbit
                share = rate / len(spec.flows) if theory["model"] == "fair_share" else rate
                assert theory["mbps"] == pytest.approx(share)


def test_goodput_vs_loss_uses_1500_byte_packets_and_the_20_ms_path():
    sweep = load_sweep(ROOT / "experiments" / "goodput_vs_loss.json")
    for plot in sweep.resolved_plots:
        theory = plot["theory"]
        assert theory["mss_bytes"] == 1500
        # 2 x 10 ms propagation + 1500 B and 40 B at 100 Mb/s
        assert theory["rtt_ms"] == pytest.approx(20 + (1500 + 40) * 8 / 100e6 * 1e3)
        assert theory["units_bits_per_mbit"] == 1_000_000


def test_rtt_fairness_reference_line_is_the_fair_share_and_seeds_differ():
    sweep = load_sweep(ROOT / "experiments" / "rtt_fairness.json")
    theory = sweep.resolved_plots[1]["theory"]
    assert theory == {"model": "fair_share", "link": "LB", "mbps": 5.0,
                      "label": "fair share 5 Mbps (LB 10 Mbps / 2 flows)"}
    # something random in every run: jitter on the bottleneck
    spec = point_spec(sweep, sweep.points()[0])
    assert spec.link("LB").impairments[0].jitter_s == pytest.approx(0.001)


def test_the_old_goodput_vs_loss_setting_is_refused(tmp_path):
    theory = {"model": "mathis", "mss_bytes": 1024, "rtt_ms": 20.2,
              "units_bits_per_mbit": 1000000}
    with pytest.raises(SweepError, match=r'plots\[0\]: field "theory.mss_bytes": 1024 disagrees '
                                         r"with the topology, whose data packets are 1500 B"):
        load_sweep(write(tmp_path, with_theory(theory)))


@pytest.mark.parametrize("theory, message", [
    ({"model": "cubic", "rtt_ms": 10}, 'field "theory.rtt_ms": 10 is below the base RTT of '
                                       "flow F1's path (20.12 ms)"),
    ({"model": "mathis", "units_bits_per_mbit": 1048576},
     'field "theory.units_bits_per_mbit": 1048576 disagrees with the topology'),
    ({"model": "mathis", "flow": "F9"}, 'field "theory.flow": no flow "F9" (did you mean "F1"?)'),
    ({"model": "mathis", "mss": 1500}, 'field "theory.mss": not a field of the mathis model '
                                       '(did you mean "mss_bytes"?)'),
    ({"model": "capacity", "link": "L1", "mbps": 10},
     'field "theory.mbps": 10 disagrees with the topology (L1 capacity 100 Mbps)'),
    ({"model": "capacity", "link": "L2"}, 'field "theory.link": no link "L2" (did you mean "L1"?)'),
    ({"model": "fair", "link": "L1"}, 'field "theory": expected an object with "model" one of'),
    ({"model": "band", "low": "flows.F1.goodput_mbps", "high": "flows.F1.goodput_mbs"},
     'field "theory.high": expected a collected metric (did you mean "flows.F1.goodput_mbps"?)'),
])
def test_theory_settings_that_disagree_with_the_topology_are_refused(tmp_path, theory, message):
    with pytest.raises(SweepError) as info:
        load_sweep(write(tmp_path, with_theory(theory)))
    assert message in str(info.value)


def test_a_curve_needs_one_rtt_for_the_figure(tmp_path):
    data = with_theory({"model": "mathis"})
    data["parameters"] = dict(data["parameters"], **{"links.L1.delay_ms": [5, 10]})
    with pytest.raises(SweepError, match=r"the base RTT of flow F1's path differs between the "
                                         r"points of the sweep \(10.12 to 20.12 ms\)"):
        load_sweep(write(tmp_path, data))


def test_an_rtt_override_above_the_base_is_kept_and_named(tmp_path):
    sweep = load_sweep(write(tmp_path, with_theory({"model": "mathis", "rtt_ms": 25})))
    theory = sweep.resolved_plots[0]["theory"]
    assert theory["rtt_ms"] == 25 and theory["base_rtt_ms"] == pytest.approx(20.1232)
    assert theory["mss_bytes"] == 1500


def test_capacity_defaults_to_the_bottleneck_of_the_flow_path(tmp_path):
    sweep = load_sweep(write(tmp_path, with_theory({"model": "capacity"})))
    assert sweep.resolved_plots[0]["theory"] == {
        "model": "capacity", "link": "L1", "mbps": 100.0, "label": "L1 capacity 100 Mbps"}


@pytest.mark.parametrize("change, message", [
    ({"xlabel": 5}, 'field "xlabel": expected a line of text'),
    ({"ylabel": "two\nlines"}, 'field "ylabel": expected a line of text'),
    ({"file": "../escape.png"}, 'field "file": expected a plain file name'),
    ({"file": "sub/dir.png"}, 'field "file": expected a plain file name'),
    ({"file": "figure.svg"}, 'field "file": expected a .png file name'),
    ({"logx": "yes"}, 'field "logx": expected true or false'),
])
def test_plot_fields_are_validated(tmp_path, change, message):
    data = dict(LOSSY, plots=[dict(LOSSY["plots"][0], **change)])
    with pytest.raises(SweepError) as info:
        load_sweep(write(tmp_path, data))
    assert message in str(info.value) and "plots[0]" in str(info.value)


@pytest.mark.parametrize("model", ["mathis", "cubic"])
@pytest.mark.parametrize("x", ["flows.*.algorithm", "transport.min_rto_s"])
def test_a_response_curve_needs_a_swept_loss_rate_as_x(tmp_path, capsys, model, x):
    """Over a categorical x the curve failed after every run with a traceback; over another
    number (an RTO in seconds) it was drawn as if that were p, on an axis labelled so."""
    theory = {"model": model, **({"C": 0.4, "beta": 0.7} if model == "cubic" else {})}
    data = with_theory(theory, parameters={LOSS: [0.01], "flows.*.algorithm": ["reno", "cubic"],
                                           "transport.min_rto_s": [0.2, 0.5]})
    data["plots"][0] = dict(data["plots"][0], x=x, lines=None)
    path = write(tmp_path, data)
    message = (f'plots[0]: field "x": the {model} curve is goodput against the loss probability '
               f'p, so x must be a swept loss_rate (e.g. links.L1.loss_rate), got "{x}"')
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"error: {path}: {message}\n"
    assert not (tmp_path / "out").exists()


def test_a_plot_without_an_x_is_refused_before_any_run(tmp_path, capsys):
    data = dict(LOSSY, plots=[dict(LOSSY["plots"][0], x=None)])
    path = write(tmp_path, data)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f'error: {path}: plots[0]: field "x": expected a swept parameter, got null; '
        f"parameters: {LOSS}, flows.*.algorithm\n")
    assert not (tmp_path / "out").exists()


def test_saved_sweep_json_holds_the_resolved_theory(tmp_path):
    from netsim.sweep import run_sweep
    data = dict(with_theory({"model": "mathis"}), duration_s=0.5,
                parameters={LOSS: [0.02], "flows.*.algorithm": ["reno"]})
    run_sweep(load_sweep(write(tmp_path, data)), tmp_path / "out", jobs=1)
    saved = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert saved["plots"][0]["theory"]["mss_bytes"] == 1500
    assert saved["plots"][0]["theory"]["rtt_ms"] == pytest.approx(20.1232)
    assert (tmp_path / "out" / "g.png").exists() is False         # figures: the CLI's job
