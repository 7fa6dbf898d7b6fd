"""Ctrl-C (SIGINT) or SIGTERM stops a run at the current event, writes its results with stop
reason "interrupted", prints one line and exits 128 + the signal number."""
from __future__ import annotations

from pathlib import Path

import json
import signal
import subprocess
import sys
import time

import pytest

from topologies import load_topology
from netsim.run import Run

ROOT = Path(__file__).resolve().parent.parent

ENDLESS = {"name": "endless", "duration_s": 1e5, "hosts": ["H1", "H2"],
           "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 10,
                      "buffer_kb": 64}],
           "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": None, "start_s": 0}]}


def start_endless(tmp_path, *extra):
    topology = tmp_path / "endless.json"
    topology.write_text(json.dumps(ENDLESS))
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), str(topology),
                             "--out", str(out), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60          # a guard against a hang, not a timing
    while not _simulating(tmp_path):
        assert time.time() < deadline and proc.poll() is None, "the run never started"
        time.sleep(0.05)
    return proc, out


def _simulating(tmp_path) -> bool:
    """Whether the run writes its links.csv (the sampler's rows, a block at a time): it is
    simulating, its stop handler in place."""
    for staging in tmp_path.iterdir():
        if ".partial-" in staging.name:
            try:
                return (staging / "links.csv").stat().st_size > 0
            except OSError:
                return False
    return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_signal_stops_the_run_and_keeps_its_results(tmp_path, sig):
    proc, out = start_endless(tmp_path, "--no-plots")
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted at t=")
    assert lines[0].endswith(f"partial results written to {out}/")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted"
    assert 0 < summary["end_time_s"] < 1e6
    assert summary["flows"]["F1"]["delivered_bytes"] > 0
    assert "interrupted" in stdout             # the summary table still says how it ended
    rows = (out / "links.csv").read_text().splitlines()
    assert len(rows) - 1 == summary["trace_rows"]["links"]


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_interrupted_run_draws_its_figures_too(tmp_path):
    proc, out = start_endless(tmp_path)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert (out / "links.png").exists() and (out / "flows.png").exists()


def test_interrupt_from_the_api_stops_at_the_current_event():
    run = Run(load_topology(ENDLESS))
    run.sim.schedule_at(3.0, lambda _: run.interrupt())
    results = run.execute()
    assert results.summary["stop_reason"] == "interrupted"
    assert results.summary["end_time_s"] == 3.0


def test_an_interrupt_while_drawing_keeps_the_whole_run_without_figures(tmp_path, capsys,
                                                                        monkeypatch):
    """The data files are whole once the run is simulated: Ctrl-C while the figures are drawn
    removes what was drawn and keeps the run (it used to throw the whole run away)."""
    import plot_tool
    from netsim.cli import main

    def interrupted(source, out_dir, **kwargs):
        (Path(out_dir) / "links.png").write_bytes(b"\x89PNG half")   # drawn when stopped
        raise KeyboardInterrupt
    monkeypatch.setattr(plot_tool, "make_figures", interrupted)
    out = tmp_path / "out"
    code = main([str(ROOT / "topologies" / "test_case_0.json"), "--duration", "1.5", "--quiet",
                 "--out", str(out)])
    assert code == 130
    assert capsys.readouterr().err.strip().splitlines() == [
        f"interrupted (SIGINT) while drawing the figures: results written to {out}/ without "
        f'figures (the run was complete: stop reason "duration")']
    assert json.loads((out / "summary.json").read_text())["stop_reason"] == "duration"
    assert (out / "links.csv").is_file() and not list(out.glob("*.png"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_data_files_are_written_is_held_until_they_are_whole(
        tmp_path, capsys, monkeypatch, sig):
    """A signal after the simulation, while summary.json (or the check, iperf3.json) is
    written, would have left half a file: it is held, the data files are written whole and
    kept, and the figures are not drawn (the run used to be thrown away)."""
    import os

    from netsim.cli import main
    from netsim.results import Results
    write_summary = Results.write_summary

    def signalled(self, *args, **kwargs):
        os.kill(os.getpid(), sig)                 # arrives while the summary is written
        return write_summary(self, *args, **kwargs)
    monkeypatch.setattr(Results, "write_summary", signalled)
    out = tmp_path / "out"
    before = signal.getsignal(signal.SIGINT)   # (ignored when pytest runs as a background job)
    code = main([str(ROOT / "topologies" / "test_case_0.json"), "--duration", "1.5", "--quiet",
                 "--check", "--out", str(out)])
    assert code == 128 + sig
    assert capsys.readouterr().err.strip().splitlines() == [
        f"interrupted ({signal.Signals(sig).name}) after the simulation: results written to "
        f'{out}/ without figures (the run was complete: stop reason "duration")']
    assert json.loads((out / "summary.json").read_text())["stop_reason"] == "duration"
    assert (out / "check.json").is_file() and not list(out.glob("*.png"))
    assert signal.getsignal(signal.SIGINT) is before                          # put back


LOOPING_PLUGIN = """
from pathlib import Path
from flows.congestion import CongestionControl

class Stuck(CongestionControl):
    name = "stuck"

    def on_ack(self, acked_pkts):
        self.standard_growth(acked_pkts)
        if self.flow.snd_una > 20:
            Path(__file__).with_name("looping").touch()
            while True:
                pass
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_plugin_hook_that_never_returns(tmp_path, sig):
    plugin = tmp_path / "stuck.py"
    plugin.write_text(LOOPING_PLUGIN)
    topology = tmp_path / "endless.json"
    topology.write_text(json.dumps(ENDLESS))
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), str(topology),
                             "--plugin", str(plugin), "--algorithm", "stuck", "--no-plots",
                             "--quiet", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60          # a guard against a hang, not a timing
    while not (tmp_path / "looping").exists():
        assert time.time() < deadline and proc.poll() is None, "the hook never began its loop"
        time.sleep(0.02)
    proc.send_signal(sig)                # once: the hook is stopped, not waited for
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    summary = json.loads((out / "summary.json").read_text())
    assert stderr.splitlines() == [     # (the loop's line: its `while` or its body)
        f"plugin {plugin}, line {line}, in hook on_ack: interrupted ({signal.Signals(sig).name}) "
        f"while the hook ran (at t={summary['end_time_s']:.3f} s; partial results written to "
        f"{out}/)" for line in (12, 13) if f", line {line}," in stderr]
    assert summary["stop_reason"] == "interrupted"
    assert summary["flows"]["F1"]["delivered_bytes"] > 0
