"""What the outputs asked for need is checked before anything is simulated: a Python without
numpy or matplotlib (Debian's PyPy) gets one line and exit 2 for figures, --check, --report or
--iperf-json, never a traceback after the run, however the module is missing (not installed,
blocked in sys.modules, refused by an import hook); without tqdm a terminal run goes without a
progress bar."""
from __future__ import annotations

import importlib.abc
import importlib.util
import json
import sys

import pytest

from initializer import main
from netsim import cli_output

REAL_FIND_SPEC = importlib.util.find_spec


def without(monkeypatch, *names):
    """This process's `find_spec` no longer finds `names` (as under PyPy)."""
    def find_spec(name, *args, **kwargs):
        if name in names:
            return None
        return REAL_FIND_SPEC(name, *args, **kwargs)
    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def python_name():
    return f"{sys.implementation.name} {sys.version.split()[0]}"


def test_figures_without_numpy_and_matplotlib_are_refused_before_the_run(tmp_path, monkeypatch,
                                                                          capsys):
    without(monkeypatch, "numpy", "matplotlib")
    out = tmp_path / "out"
    assert main(["test_case_0", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: drawing the figures needs both numpy and matplotlib, which this Python "
        f"({python_name()}) does not have: pass --no-plots, or install them (pip install -e . "
        f"in the checkout)\n")
    assert not out.exists()
    assert main(["test_case_0", "--no-plots", "--quiet", "--duration", "1",
                 "--out", str(out)]) == 0                    # without figures it runs


def test_check_without_numpy_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    without(monkeypatch, "numpy")
    assert main(["test_case_2", "--check", "--no-plots", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"error: --check needs numpy, which this Python ({python_name()}) does not have: run it "
        f"under CPython, or install numpy for this Python\n")


def test_a_sweep_with_figures_without_matplotlib_is_refused_before_its_runs(tmp_path,
                                                                            monkeypatch, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({
        "topology": "lossy_link", "duration_s": 1, "metrics": ["flows.F1.goodput_mbps"],
        "parameters": {"flows.F1.data_mb": [0.1]},
        "plots": [{"file": "g.png", "x": "flows.F1.data_mb", "y": "flows.F1.goodput_mbps"}]}))
    without(monkeypatch, "matplotlib")
    assert main(["sweep", str(path), "--jobs", "1", "--out", str(tmp_path / "o")]) == 2
    assert "error: drawing the sweep's figures needs matplotlib, which" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("tqdm, quiet, shown", [(True, False, True), (False, False, False),
                                                 (True, True, False)])
def test_a_progress_bar_only_where_tqdm_is(monkeypatch, tqdm, quiet, shown):
    monkeypatch.setattr(cli_output.sys.stderr, "isatty", lambda: True, raising=False)
    if not tqdm:
        without(monkeypatch, "tqdm")
    assert cli_output.progress_shown(quiet) is shown


def test_iperf_json_without_numpy_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    without(monkeypatch, "numpy")
    out = tmp_path / "o"
    assert main(["test_case_0", "--iperf-json", "--no-plots", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: --iperf-json needs numpy, which this Python ({python_name()}) does not have: "
        f"run it under CPython, or install numpy for this Python\n")
    assert not out.exists()


def test_the_report_without_numpy_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    without(monkeypatch, "numpy")
    assert main(["test_case_0", "--report", "--no-plots", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"error: --report: the interactive report needs numpy, which this Python "
        f"({python_name()}) does not have: run it under CPython, or install numpy for this "
        f"Python\n")


def test_a_module_blocked_in_sys_modules_counts_as_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # `import matplotlib` fails
    assert main(["test_case_0", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("error: drawing the figures needs matplotlib, "
                                              "which this Python")
    assert not (tmp_path / "o").exists()


class Refusing(importlib.abc.MetaPathFinder):
    """An import hook that refuses a module by raising, as some sandboxes do."""

    def find_spec(self, name, path=None, target=None):
        if name == "dpkt":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def test_a_finder_that_raises_counts_as_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "dpkt", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Refusing(), *sys.meta_path])
    assert main(["test_case_0", "--pcap", "--no-plots", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("error: --pcap: packet captures need dpkt;")


def test_a_module_missing_after_the_run_is_one_line_and_nothing_written(tmp_path, monkeypatch,
                                                                         capsys):
    import plot_tool

    def draw(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")
    monkeypatch.setattr(plot_tool, "make_figures", draw)
    out = tmp_path / "o"
    assert main(["test_case_0", "--duration", "1", "--quiet", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: writing the results needs matplotlib, which this Python cannot import: no "
        f"results written to {out}/ (pass --no-plots and leave out --check, --report and "
        f"--iperf-json, or install it)\n")
    assert not out.exists()


@pytest.mark.parametrize("missing, line", [
    (("networkx",), "--report: the interactive report needs networkx; install it with "),
    (("plotly", "networkx"), "--report: the interactive report needs plotly and networkx; "
                             "install them with "),
])
def test_report_without_its_extra_is_refused_before_the_run(tmp_path, monkeypatch, capsys,
                                                           missing, line):
    """The report extra is plotly and networkx (the network's layout): with plotly alone, the
    pre-check passed and the run was simulated, then lost ("writing the results needs
    networkx ... pass --no-plots", with --no-plots given)."""
    without(monkeypatch, *missing)
    out = tmp_path / "o"
    assert main(["test_case_0", "--report", "--no-plots", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {line}") and err.endswith(
        f"(or pip install {' '.join(missing)})\n") and err.count("\n") == 1
    assert not out.exists()


def test_a_sweep_on_dask_without_the_cluster_extra_is_one_line(tmp_path, monkeypatch, capsys):
    """--scheduler without dask was a ModuleNotFoundError traceback, exit 1 (acceptance test
    Z16)."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({
        "topology": "lossy_link", "duration_s": 1, "metrics": ["flows.F1.goodput_mbps"],
        "parameters": {"flows.F1.data_mb": [0.1]}}))
    without(monkeypatch, "dask", "distributed")
    assert main(["sweep", str(path), "--scheduler", "tcp://127.0.0.1:1", "--no-plots",
                 "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        "error: --scheduler: running on a Dask cluster needs dask and distributed; install them "
        "with pip install -e '.[cluster]' in the netsim checkout\n")
    assert not (tmp_path / "o").exists()


def test_under_pypy_the_figures_line_says_to_draw_them_under_cpython(tmp_path, monkeypatch,
                                                                     capsys):
    """PyPy 3.9 cannot pip-install netsim (Python 3.11 is required): "pip install -e ." was a
    remedy that fails there (acceptance test Z16)."""
    without(monkeypatch, "numpy", "matplotlib")
    monkeypatch.setattr(sys.implementation, "name", "pypy")
    assert main(["test_case_0", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.endswith(
        "does not have: pass --no-plots, and draw them under CPython afterwards (python "
        "initializer.py plot DIR)\n")
