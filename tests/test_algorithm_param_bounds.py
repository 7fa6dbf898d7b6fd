"""Built-in algorithms' parameters at their extremes (docs/algorithms.md, "Parameters"): every
value is either refused by the loader in one line naming the flow and the parameter, or runs.
An `AlgorithmValueError` a built-in algorithm raises anyway (its init sets an infinite pacing
rate, say) is the same one line as a plugin's, naming the flow, exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows import ALGORITHMS
from netsim.run import simulate
from topologies.loader import TopologyError, load_topology

ROOT = Path(__file__).resolve().parent.parent
LOSSY = ROOT / "topologies" / "lossy_link.json"
BUILT_IN = ("bbr", "cubic", "dctcp", "fast", "newreno", "reno", "tahoe", "vegas")
EXTREMES = (1e308, 1e-320, 0, 10 ** 18, 10 ** 19)


def lossy(algorithm: str, params: dict, stack: str = "classic") -> dict:
    data = json.loads(LOSSY.read_text())
    data["flows"][0].update(algorithm=algorithm, params=params, ecn=algorithm == "dctcp")
    data["transport"] = dict(data.get("transport", {}), stack=stack)
    return data


def one_line(done) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("stack", ["classic", "linux"])
@pytest.mark.parametrize("algorithm, name", [
    (algorithm, name) for algorithm in BUILT_IN for name in ALGORITHMS[algorithm].PARAMETERS])
def test_every_parameter_at_its_extremes_is_refused_or_runs(algorithm, name, stack):
    for value in EXTREMES:
        try:
            spec = load_topology(lossy(algorithm, {name: value}, stack))
        except TopologyError as exc:
            assert "\n" not in str(exc)      # the parameter, or the params their rule ties
            assert f'field "params.{name}"' in str(exc) or 'field "params": ' in str(exc)
            continue
        results = simulate(spec, duration_s=0.3)
        assert results.summary["stop_reason"] in ("completed", "duration"), (value, results.summary)


@pytest.mark.parametrize("algorithm, params, message", [
    ("bbr", {"high_gain": 1e308}, '"params.high_gain": expected a gain above 1 and at most 256 '
                                  "(the drain gain, its inverse, is at least 1/256 in Linux's "
                                  "fixed point), got 1e+308"),
    ("bbr", {"cwnd_gain": 1e308}, '"params.cwnd_gain": expected a positive gain of at most 256 (a '
                                  "window of 256 bandwidth-delay products), got 1e+308"),
    ("cubic", {"C": 1e308}, '"params.C": expected a positive number of at most 1e+06 (Linux\'s '
                            "fixed point: cube_factor = 2^40 / (C x 1024) keeps 10 bits), got 1e+308"),
    ("fast", {"rtt_samples": 10 ** 19}, '"params.rtt_samples": expected a whole number of samples '
                                        "from 1 to 1000000, got 10000000000000000000"),
    # (--check's fluid model had no solution for these: a traceback after the run)
    ("fast", {"alpha": 1e-20}, '"params.alpha": expected a number of packets from 0.001 to '
                               "1e+06, got 1e-20"),
    ("fast", {"alpha": 1e19}, '"params.alpha": expected a number of packets from 0.001 to '
                              "1e+06, got 1e+19"),
])
def test_a_parameter_beyond_its_bound_is_one_line_naming_flow_and_parameter(tmp_path, run_cli,
                                                                           algorithm, params,
                                                                           message):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(lossy(algorithm, params)))
    done = run_cli(path, "--duration", "2", "--no-plots", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert one_line(done) == f'error: {path}: flows[0] "F1": field {message}'
    assert not (tmp_path / "r").exists()


def test_the_gain_bounds_themselves_run_on_the_linux_stack():
    spec = load_topology(lossy("bbr", {"high_gain": 256, "cwnd_gain": 256}, "linux"))
    assert simulate(spec, duration_s=0.3).summary["stop_reason"] in ("completed", "duration")


def test_a_built_in_algorithms_bad_value_is_one_line_naming_the_flow(tmp_path, capsys,
                                                                    monkeypatch):
    """Whatever drives a built-in algorithm out of range (a parameter no bound foresaw) comes out
    as a plugin's bad value does: one line, exit 2, the partial results written."""
    from flows.bbr import Bbr
    from initializer import main
    monkeypatch.setattr(Bbr, "_pacing_bps", lambda self, rate_pps: float("inf"))
    code = main([str(LOSSY), "--algorithm", "bbr", "--duration", "1", "--no-plots", "--quiet",
                 "--out", str(tmp_path / "r")])
    assert code == 2
    err = capsys.readouterr().err
    assert err == (f"error: flow \"F1\": algorithm 'bbr' set pacing_rate_bps to inf (float); a "
                   f"pacing rate is a finite number of bit/s > 0, or None (no pacing) (at "
                   f"t=0.000 s; partial results written to {tmp_path / 'r'}/)\n")
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["stop_reason"] == "error"
