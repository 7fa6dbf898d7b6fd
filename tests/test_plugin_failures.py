"""Plugins that fail while a run goes: one line naming the plugin file, line, hook and exception,
exit 2, the partial results written as for an interrupt; windows must be finite and positive;
summary.json is strict JSON."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOSSY = ROOT / "topologies" / "lossy_link.json"


def run_with(run_cli, tmp_path, path, *extra):
    return run_cli(LOSSY, "--plugin", path, "--algorithm", "bad", "--duration", "5",
                   "--no-plots", "--out", tmp_path / "r", *extra)


def the_line(done) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def strict_summary(tmp_path) -> dict:
    text = (tmp_path / "r" / "summary.json").read_text()
    def refuse(literal):
        raise AssertionError(f"{literal} in summary.json")
    return json.loads(text, parse_constant=refuse)


def test_an_exception_in_a_hook_is_one_line_and_keeps_the_partial_results(write_plugin, tmp_path,
                                                                          run_cli):
    path = write_plugin(body="""\
        def on_ack(self, acked_pkts):
            if self.flow.sim.now > 0.5:
                return helper(acked_pkts)
            self.flow.cwnd += 1.0 / self.flow.cwnd
    """)
    path.write_text(path.read_text() + "\n\ndef helper(n):\n    return n / 0\n")
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 2
    line = the_line(done)
    helper_line = write_plugin.first_line + 7         # `return n / 0`, below the class
    assert line.startswith(f"error: plugin {path}, line {helper_line}, in hook on_ack: "
                           f"ZeroDivisionError: division by zero (at t=0.5")
    assert line.endswith(f"partial results written to {tmp_path / 'r'}/)")
    summary = strict_summary(tmp_path)
    assert summary["stop_reason"] == "error" and 0.5 < summary["end_time_s"] < 0.7
    assert "ZeroDivisionError" in summary["stop_detail"]
    assert (tmp_path / "r" / "flows.csv").exists()


@pytest.mark.parametrize("value, shown", [
    ("float('nan')", "nan (float)"), ("0.0", "0.0 (float)"), ("-3", "-3 (int)"),
    ("'ten'", "'ten' (str)"), ("float('inf')", "inf (float)"),
    ("10 ** 400", "an int of 1329 bits"),           # finite, but beyond a float's range
])
def test_a_window_that_is_not_a_finite_positive_number_is_refused(write_plugin, tmp_path, run_cli,
                                                                  value, shown):
    path = write_plugin(body=f"""\
        def on_ack(self, acked_pkts):
            self.flow.cwnd = {value} if self.flow.sim.now > 0.3 else self.flow.cwnd + 1
    """)
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 2
    line = the_line(done)
    assert line.startswith(f"error: plugin {path}: algorithm 'bad' set cwnd to {shown}; a window "
                           f"is a finite number of packets > 0 (at t=")
    summary = strict_summary(tmp_path)                  # NaN nowhere: strict JSON
    assert summary["stop_reason"] == "error"


def test_sys_exit_at_import_is_an_error_line(tmp_path, run_cli):
    path = tmp_path / "leaves.py"
    path.write_text("import sys\n\nsys.exit(3)\n")
    done = run_cli(LOSSY, "--plugin", path, "--out", tmp_path / "r")
    assert done.returncode == 2
    assert the_line(done) == (f"error: --plugin {path}, line 3: called sys.exit(3) while being "
                              f"imported")


def test_summary_json_is_strict_json_with_null_for_undefined_values(tmp_path):
    from netsim.results_dir import json_text
    text = json_text({"a": float("nan"), "b": [1.0, float("inf")], "c": {"d": -float("inf")}})
    assert json.loads(text) == {"a": None, "b": [1.0, None], "c": {"d": None}}


def test_an_exception_in_the_constructor_is_one_line_and_writes_nothing(write_plugin, tmp_path,
                                                                       run_cli):
    """The flows are built before the run: a plugin's __init__ that raises was a traceback."""
    path = write_plugin(body="""\
        def __init__(self, flow, params=None):
            super().__init__(flow, params)
            raise ValueError("no such mode")
        def on_ack(self, acked_pkts):
            self.flow.cwnd += 1.0 / self.flow.cwnd
    """)
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 2
    assert the_line(done) == (f"error: plugin {path}, line {write_plugin.first_line + 2}, in hook "
                              f"__init__: ValueError: no such mode")
    assert not (tmp_path / "r").exists()


def test_a_bad_value_set_in_init_is_one_line(write_plugin, tmp_path, run_cli):
    path = write_plugin(body="""\
        def init(self):
            self.flow.pacing_rate_bps = float("inf")
        def on_ack(self, acked_pkts):
            self.flow.cwnd += 1.0 / self.flow.cwnd
    """)
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 2
    assert the_line(done) == (f"error: plugin {path}, line {write_plugin.first_line + 1}, in hook "
                              f"init: algorithm 'bad' set pacing_rate_bps to inf (float); a pacing "
                              f"rate is a finite number of bit/s > 0, or None (no pacing) (at "
                              f"t=0.000 s; partial results written to {tmp_path / 'r'}/)")


def test_a_pacing_rate_set_in_the_constructor_works_or_is_one_line(write_plugin, tmp_path,
                                                                   run_cli):
    """The sender has no algorithm until the constructor returns: an int rate set there (valid)
    was an AttributeError about `cc`, and a bad one named nothing."""
    def setting(rate: str):
        return write_plugin(body=f"""\
            def __init__(self, flow, params=None):
                super().__init__(flow, params)
                self.flow.pacing_rate_bps = {rate}
            def on_ack(self, acked_pkts):
                self.flow.cwnd += 1.0 / self.flow.cwnd
        """)

    done = run_with(run_cli, tmp_path, setting("1_000_000"))
    assert done.returncode == 0, done.stderr
    path = setting("-1")
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 2
    assert the_line(done) == (f"error: plugin {path}, line {write_plugin.first_line + 2}, in hook "
                              f"__init__: the algorithm set pacing_rate_bps to -1 (int); a pacing "
                              f"rate is a finite number of bit/s > 0, or None (no pacing)")


def test_an_os_error_in_a_hook_is_the_plugins_failure_not_a_write_error(write_plugin, tmp_path,
                                                                        run_cli):
    """A hook that opens a file that is not there (a lookup table, say) raises an OSError, which
    was reported as "cannot write <that file>", with no plugin named and no results kept."""
    missing = tmp_path / "no_such_table.csv"
    path = write_plugin(body=f"""\
        def on_ack(self, acked_pkts):
            if self.flow.sim.now > 0.5:
                open({str(missing)!r}).read()
            self.flow.cwnd += 1.0 / self.flow.cwnd
    """)
    done = run_with(run_cli, tmp_path, path)
    assert done.returncode == 2
    line = the_line(done)
    assert line.startswith(f"error: plugin {path}, line {write_plugin.first_line + 2}, in hook "
                           f"on_ack: FileNotFoundError: [Errno 2] No such file or directory: "
                           f"'{missing}' (at t=0.5")
    assert strict_summary(tmp_path)["stop_reason"] == "error"
