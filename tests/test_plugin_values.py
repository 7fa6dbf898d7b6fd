"""Values a plugin hands the transport (docs/algorithms.md, "Write your own"): a number a hook
returns, a pacing rate, a report, a class attribute. A bad one is one line naming the plugin
file, line and hook, exit 2, with the partial results written (stop_reason "error"); a bad class
attribute is refused at registration. `sys.exit()` and KeyboardInterrupt raised by a hook are
the plugin's failure too."""
from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOSSY = ROOT / "topologies" / "lossy_link.json"


def run_with(run_cli, tmp_path, path, *extra):
    return run_cli(LOSSY, "--plugin", path, "--algorithm", "bad", "--duration", "5",
                   "--no-plots", "--quiet", "--out", tmp_path / "r", *extra)


def failed(done, tmp_path) -> str:
    """The one line of a run that failed (exit 2), without its "(at t=...)" tail; checks that
    the partial results were written with stop_reason "error"."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert line.endswith(f"partial results written to {tmp_path / 'r'}/)"), line
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["stop_reason"] == "error"
    assert (tmp_path / "r" / "flows.csv").exists()
    return line[:line.rindex(" (at t=")]


def refused(done, path) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


GROW = """\
def on_ack(self, acked_pkts):
    self.flow.cwnd += acked_pkts / self.flow.cwnd
"""


# -- numbers the hooks return: checked where the transport takes them --------------------------
@pytest.mark.parametrize("stack", ["classic", "linux"])
@pytest.mark.parametrize("value, shown", [
    ("float('nan')", "nan (float)"), ("'x'", "'x' (str)"), ("-3", "-3 (int)"),
    ("float('inf')", "inf (float)"), ("True", "True (bool)"), ("None", "None (NoneType)"),
])
def test_a_bad_ssthresh_returned_is_refused_on_both_stacks(write_plugin, tmp_path, run_cli, stack,
                                                           value, shown):
    first = write_plugin.first_line
    path = write_plugin(sack=True, body=GROW + f"""\
def ssthresh(self):
    return {value}
""")
    line = failed(run_with(run_cli, tmp_path, path, "--stack", stack), tmp_path)
    assert line == (f"error: plugin {path}, line {first + 2}, in hook ssthresh: algorithm 'bad' "
                    f"returned {shown} from ssthresh(); a slow-start threshold is a finite "
                    f"number of packets > 0")


def test_a_bad_window_returned_by_restore_cwnd_is_refused(write_plugin, tmp_path, run_cli):
    first = write_plugin.first_line
    path = write_plugin(sack=True, body=GROW + """\
loss_based = False
def restore_cwnd(self):
    return float('nan')
""")
    line = failed(run_with(run_cli, tmp_path, path), tmp_path)
    assert line == (f"error: plugin {path}, line {first + 3}, in hook restore_cwnd: algorithm "
                    f"'bad' returned nan (float) from restore_cwnd(); a window is a finite "
                    f"number of packets > 0")


# -- values set on the flow -----------------------------------------------------------------------
@pytest.mark.parametrize("value, shown", [
    ("float('nan')", "nan (float)"), ("-1.0", "-1.0 (float)"), ("float('inf')", "inf (float)"),
    ("0", "0 (int)"), ("'fast'", "'fast' (str)"),
])
def test_a_bad_pacing_rate_is_refused_where_it_is_set(write_plugin, tmp_path, run_cli, value,
                                                      shown):
    first = write_plugin.first_line
    path = write_plugin(sack=True, body=f"""\
def on_ack(self, acked_pkts):
    self.flow.pacing_rate_bps = {value}
    self.flow.cwnd += acked_pkts / self.flow.cwnd
""")
    line = failed(run_with(run_cli, tmp_path, path), tmp_path)
    assert line == (f"error: plugin {path}, line {first + 1}, in hook on_ack: algorithm 'bad' set "
                    f"pacing_rate_bps to {shown}; a pacing rate is a finite number of bit/s > 0, "
                    f"or None (no pacing)")


def flow_rows(tmp_path) -> list:
    with open(tmp_path / "r" / "flows.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_pacing_rate_of_none_means_no_pacing(write_plugin, tmp_path, run_cli):
    """Paced at 1 Mb/s until 0.5 s, then not at all (lossy_link: 100 Mb/s, 20 ms RTT, SI units,
    1500-byte packets, seed 1)."""
    path = write_plugin(sack=True, body="""\
def on_ack(self, acked_pkts):
    self.flow.pacing_rate_bps = 1e6 if self.flow.sim.now < 0.5 else None
    self.flow.cwnd += acked_pkts / self.flow.cwnd
""")
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 0, done.stderr
    rows = [(float(r["time_s"]), float(r["send_rate_mbps"]), float(r["window_pkts"]),
             float(r["rtt_ms"] or "nan")) for r in flow_rows(tmp_path)]    # (empty: no sample)
    # from the first ACK on the pacer holds the rate to 1 Mb/s (+ one packet per 0.1 s sample),
    # well below what the window would send in a round trip
    paced = [row for row in rows if 0.2 < row[0] <= 0.5]
    assert len(paced) == 3
    for _, rate, window, rtt_ms in paced:
        assert rate <= 1.0 + 1500 * 8 / 0.1 / 1e6
        assert window * 1500 * 8 / (rtt_ms / 1e3) / 1e6 > 2.0
    # None: no pacing, the window alone sets the rate
    assert max(rate for t, rate, _, _ in rows if t > 0.5) > 4.0


@pytest.mark.parametrize("stack", ["classic", "linux"])
def test_a_window_of_true_is_refused_like_a_string(write_plugin, tmp_path, run_cli, stack):
    path = write_plugin(sack=True, body="""\
def on_ack(self, acked_pkts):
    self.flow.cwnd = True if self.flow.sim.now > 0.3 else self.flow.cwnd + 1
""")
    line = failed(run_with(run_cli, tmp_path, path, "--stack", stack), tmp_path)
    assert line == (f"error: plugin {path}: algorithm 'bad' set cwnd to True (bool); a window is "
                    f"a finite number of packets > 0")


def test_a_bad_ssthresh_set_on_the_flow_is_refused_at_the_latest_at_the_end(write_plugin, tmp_path,
                                                                            run_cli):
    path = write_plugin(sack=True, body="""\
def on_ack(self, acked_pkts):
    self.flow.ssthresh = 'x'
""")
    line = failed(run_with(run_cli, tmp_path, path, "--duration", "1"), tmp_path)
    assert line == (f"error: plugin {path}: algorithm 'bad' set ssthresh to 'x' (str); a "
                    f"slow-start threshold is a number of packets > 0 (inf: none)")


# -- report() -----------------------------------------------------------------------------------
@pytest.mark.parametrize("value, shown", [
    ("{'x': 'notanumber'}", "{'x': 'notanumber' (str)}"), ("None", "None (NoneType)"),
    ("{'x': True}", "{'x': True (bool)}"), ("[1.0]", "[1.0] (list)"),
])
def test_a_report_that_is_not_name_to_number_is_refused(write_plugin, tmp_path, run_cli, value,
                                                        shown):
    first = write_plugin.first_line
    path = write_plugin(sack=True, body=GROW + f"""\
def report(self):
    return {value}
""")
    line = failed(run_with(run_cli, tmp_path, path), tmp_path)
    assert line == (f"error: plugin {path}, line {first + 2}, in hook report: algorithm 'bad' "
                    f"returned {shown} from report(); report() returns {{name: number}} (NaN or "
                    f"None: not known yet)")


def test_a_report_must_give_the_same_names_every_time(write_plugin, tmp_path, run_cli):
    first = write_plugin.first_line
    path = write_plugin(sack=True, body=GROW + """\
def report(self):
    return {'x': 1} if self.flow.sim.now < 0.25 else {'y': 2}
""")
    line = failed(run_with(run_cli, tmp_path, path), tmp_path)
    assert line == (f"error: plugin {path}, line {first + 2}, in hook report: algorithm 'bad' "
                    f"returned the names ['y'] from report(), earlier ['x']; report() returns the "
                    f"same names every time")


def test_a_report_with_nan_and_none_is_fine(write_plugin, tmp_path, run_cli):
    """NaN and None (not known yet): an empty flows.csv field and null in summary.json."""
    path = write_plugin(sack=True, body=GROW + """\
def report(self):
    return {'x': float('nan'), 'n': None, 'k': 3}
""")
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 0, done.stderr
    rows = flow_rows(tmp_path)
    assert list(rows[0])[-3:] == ["x", "n", "k"]
    assert len(rows) > 1
    assert all(r["x"] == "" and r["n"] == "" and float(r["k"]) == 3 for r in rows)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["stop_reason"] != "error"
    assert summary["flows"]["F1"]["algorithm_state"] == {"x": None, "n": None, "k": 3}


# -- leaving the program from a hook ------------------------------------------------------------
def test_sys_exit_in_a_hook_is_the_plugins_failure(write_plugin, tmp_path, run_cli):
    first = write_plugin.first_line
    path = write_plugin(sack=True, body="""\
def on_ack(self, acked_pkts):
    import sys; sys.exit(3)
""")
    line = failed(run_with(run_cli, tmp_path, path), tmp_path)
    assert line == f"error: plugin {path}, line {first + 1}, in hook on_ack: called sys.exit(3)"


def test_keyboard_interrupt_raised_by_a_hook_is_the_plugins_failure(write_plugin, tmp_path,
                                                                    run_cli):
    """No signal reached the run (the command line's handler stops a run through
    `Run.interrupt` and never raises on the first signal): the hook raised it."""
    first = write_plugin.first_line
    path = write_plugin(sack=True, body="""\
def on_ack(self, acked_pkts):
    raise KeyboardInterrupt
""")
    line = failed(run_with(run_cli, tmp_path, path), tmp_path)
    assert line == f"error: plugin {path}, line {first + 1}, in hook on_ack: KeyboardInterrupt"


def test_keyboard_interrupt_after_a_signal_is_not_the_plugins(tmp_path):
    """Once a signal reached the run (`interrupt`), a KeyboardInterrupt is the user's."""
    import signal

    from netsim.run import Run
    from topologies.loader import load_topology

    run = Run(load_topology(LOSSY), duration_s=1.0)
    run.interrupt()
    previous = signal.signal(signal.SIGINT, lambda *a: None)
    try:
        assert not run._kept(KeyboardInterrupt())
    finally:
        signal.signal(signal.SIGINT, previous)
    assert run._kept(ValueError()) and not run._kept(OSError())


# -- class attributes: refused at registration ----------------------------------------------------
@pytest.mark.parametrize("body, expected", [
    ("name = 42\n" + GROW,
     'class Named: name must be a string, got 42 (int): set name = "..." in its class body'),
    ("name = 'named'\nrecovery = 'bogus'\n" + GROW,
     "class Named: recovery = 'bogus' is not a recovery mode; expected one of reno, newreno, sack "
     "(flows.congestion.RecoveryMode)"),
    ("name = 'named'\ntick_interval_s = 0.0\ndef tick(self):\n    self.flow.cwnd += 1\n",
     "class Named: tick_interval_s = 0.0: expected None (no tick) or a finite number of seconds "
     "> 0"),
    ("name = 'named'\nmin_window_pkts = 'four'\n" + GROW,
     "class Named: min_window_pkts = 'four': expected a number of packets > 0 and at most 1000000"),
    ("name = 'named'\nmin_window_pkts = float('inf')\n" + GROW,
     "class Named: min_window_pkts = inf: expected a number of packets > 0 and at most 1000000"),
    ("name = 'named'\ntick_interval_s = -1\n" + GROW,
     "class Named: tick_interval_s = -1: expected None (no tick) or a finite number of seconds "
     "> 0"),
    ("name = 'named'\ntick_interval_s = float('inf')\ndef tick(self):\n    pass\n",
     "class Named: tick_interval_s = inf: expected None (no tick) or a finite number of seconds "
     "> 0"),
    ("name = 'named'\ntick_interval_s = 1e-12\ndef tick(self):\n    pass\n",
     "class Named: tick_interval_s = 1e-12: expected None (no tick) or at least 1e-05 s between "
     "ticks (one timer event per flow each)"),
    ("name = 'named'\nPARAMETERS = {'a': 'one'}\n" + GROW,
     "class Named: PARAMETERS['a']: expected a number, got \"one\""),
])
def test_a_bad_class_attribute_is_refused_at_registration(tmp_path, run_cli, body, expected):
    path = tmp_path / "named.py"
    path.write_text("from flows.congestion import CongestionControl\n\n\n"
                    "class Named(CongestionControl):\n" + textwrap.indent(body, "    "))
    done = run_cli(LOSSY, "--plugin", path, "--quiet", "--out", tmp_path / "r")
    assert refused(done, path) == f"error: --plugin {path}: {expected}"
    assert not (tmp_path / "r").exists()


def test_sys_exit_in_a_hook_fails_that_sweep_run_only(write_plugin, tmp_path):
    """In a sweep the run is recorded as failed with the plugin's line; the sweep goes on."""
    first = write_plugin.first_line
    from netsim.sweep_execute import run_one
    path = write_plugin(sack=True, body="""\
def on_ack(self, acked_pkts):
    import sys; sys.exit(3)
""")
    data = json.loads(LOSSY.read_text())
    data["duration_s"] = 2
    for flow in data["flows"]:
        flow["algorithm"] = "bad"
    done = run_one((data, "d" * 64, 1, 0.1, False, (str(path),)))
    assert done["status"] == "error"
    assert done["error"] == f"plugin {path}, line {first + 1}, in hook on_ack: called sys.exit(3)"


@pytest.mark.parametrize("value, expected", [
    ("1e-12", "expected None (no tick) or at least 1e-05 s between ticks (one timer event per "
              "flow each)"),
    ("0.0", "expected None (no tick) or a finite number of seconds > 0"),   # (not "no clock")
])
def test_a_tick_set_by_an_instance_is_refused_when_its_flow_starts(write_plugin, tmp_path,
                                                                    run_cli, value, expected):
    # (a class attribute is refused at registration, above; an instance's value when it starts)
    path = write_plugin(sack=True, body=f"""\
def __init__(self, flow, params):
    super().__init__(flow, params)
    self.tick_interval_s = {value}
def tick(self):
    pass
""")
    line = failed(run_with(run_cli, tmp_path, path), tmp_path)
    assert line == f"error: plugin {path}: algorithm 'bad' set tick_interval_s to {value}; {expected}"


@pytest.mark.parametrize("class_tick, init_tick, ticks", [
    ("None", "0.05", True),         # a clock turned on in init()
    ("0.05", "None", False),        # ... and off
])
def test_a_tick_set_in_init_is_the_one_that_runs(write_plugin, class_tick, init_tick, ticks):
    """`init()` runs when the flow starts, after the sender took its copy of the clock: a clock
    turned on there was refused as "set tick_interval_s to 0.0", a value the plugin never set."""
    from networks import dumbbell

    from netsim.plugins import load_plugin
    from netsim.run import Run
    from topologies import load_topology
    load_plugin(write_plugin(body=f"""\
tick_interval_s = {class_tick}
beats = 0
def init(self):
    self.tick_interval_s = {init_tick}
def on_ack(self, acked_pkts):
    self.standard_growth(acked_pkts)
def tick(self):
    self.beats += 1
"""))
    run = Run(load_topology(dumbbell(1, algorithm="bad", duration_s=1.0)))
    run.execute()
    assert (run.network.flows["F0"].cc.beats >= 19) is ticks
    assert (run.network.flows["F0"].cc.beats == 0) is not ticks
