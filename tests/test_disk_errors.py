"""A full or read-only disk under `report`, `plot` and a run's figures and report: one line
naming the file as it would have been named (not its hidden temporary name), in the system's
words, exit 2. Before: "[Errno 28] No space left on device" with no file, or the partial name
(".report.html.partial-5867"; acceptance test Z9)."""
from __future__ import annotations

import errno
import pathlib
from pathlib import Path

import pytest

from netsim.cli import main
from netsim.cli_output import os_error_text, written_name

ROOT = Path(__file__).resolve().parent.parent
TC0 = ROOT / "topologies" / "test_case_0.json"


@pytest.mark.parametrize("path, expected", [
    ("out/.report.html.partial-5867", "out/report.html"),
    ("small/.r3.partial-920-twbu23v2/hosts.csv", "small/r3/hosts.csv"),
    (".x.html.partial-12-ab", "x.html"),
    ("res/links.png", "res/links.png"),
    ("res/.hidden", "res/.hidden"),
])
def test_written_names(path, expected):
    assert written_name(path) == expected


def test_an_error_without_a_file_names_what_was_written():
    exc = OSError(errno.ENOSPC, "No space left on device")
    assert os_error_text(exc, "results to out") == "results to out: No space left on device"
    exc = OSError(errno.EROFS, "Read-only file system", "ro/.report.html.partial-7")
    assert os_error_text(exc, "the report") == "ro/report.html: Read-only file system"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("disk") / "r"
    assert main([str(TC0), "--duration", "2", "--no-plots", "--quiet", "--out", str(out)]) == 0
    return out


def _full(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_report_on_a_full_disk(results, monkeypatch, capsys):
    monkeypatch.setattr(pathlib.Path, "write_text", _full)
    assert main(["report", str(results)]) == 2
    assert capsys.readouterr().err == (f"error: report {results}: {results / 'report.html'}: "
                                       f"No space left on device\n")
    assert not [p for p in results.iterdir() if p.name.startswith(".")]


def test_plot_on_a_full_disk(results, monkeypatch, capsys):
    monkeypatch.setattr(pathlib.Path, "write_bytes", _full)
    assert main(["plot", str(results), "-l", "L1"]) == 2
    assert capsys.readouterr().err == (f"error: plot {results}: {results / 'links.png'}: No "
                                       f"space left on device\n")


def test_a_runs_figures_on_a_full_disk(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(pathlib.Path, "write_bytes", _full)
    out = tmp_path / "r"
    assert main([str(TC0), "--duration", "2", "--quiet", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"error: cannot write {out / 'links.png'}: No space left "
                                       f"on device\n")
    assert list(tmp_path.iterdir()) == []          # nothing half-written kept
