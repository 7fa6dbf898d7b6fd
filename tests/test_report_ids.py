"""`report DIR -l/-F` check the ids against the results, as a run checks them against its
topology: one line with a did-you-mean and exit 2, no report written; a sweep directory has no
time series to select. The API (`make_report`) refuses an unknown id with a ValueError."""
from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from netsim.cli import main
    out = tmp_path_factory.mktemp("r") / "tc1"
    assert main(["test_case_1", "--no-plots", "--quiet", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("option, given, line", [
    ("-l", "L9", 'error: -l: unknown id "L9" (did you mean "L0"?); known: L0, L1, L2, L3, L4, L5'),
    ("-F", "F9", 'error: -F: unknown id "F9" (did you mean "F1"?); known: F1'),
])
def test_an_unknown_id_is_refused(results, tmp_path, run_cli, option, given, line):
    out = tmp_path / "r.html"
    done = run_cli("report", results, "-o", out, option, given)
    assert done.returncode == 2
    assert done.stderr == line + "\n"
    assert not out.exists()


def selected(page: Path) -> dict:
    """The series a report shows at first: its data's "selected" (gzip and base64 in a script
    element, plot_tool/report_page.py)."""
    text = page.read_text(encoding="utf-8")
    packed = re.search(r'<script id="netsim-data" type="application/octet-stream">([^<]*)</script>',
                       text)
    assert packed is not None
    return json.loads(gzip.decompress(base64.b64decode(packed.group(1))))["selected"]


def test_known_ids_are_accepted(results, tmp_path, run_cli):
    out = tmp_path / "r.html"
    done = run_cli("report", results, "-o", out, "-l", "L1", "-F", "F1", "--quiet")
    assert done.returncode == 0, done.stderr
    # shown at first: those given, not the default (the two busiest links, L0 and L5)
    assert selected(out) == {"links": ["L1"], "flows": ["F1"]}


def test_every_id_given_is_checked_not_only_the_first(results, tmp_path, run_cli):
    done = run_cli("report", results, "-o", tmp_path / "r.html", "-l", "L1", "L2", "Lx")
    assert done.returncode == 2
    assert done.stderr.startswith('error: -l: unknown id "Lx"')


def test_ids_for_a_sweep_directory_are_refused(tmp_path, run_cli):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "sweep.json").write_text("{}")
    (sweep / "results.csv").write_text("run_id\n")
    done = run_cli("report", sweep, "-F", "F1")
    assert done.returncode == 2
    assert done.stderr == (f"error: -F: {sweep} is a sweep directory, whose report has no link "
                           f"or flow time series to select; -l and -F apply to a run's results "
                           f"directory\n")
    assert not (sweep / "report.html").exists()


def test_the_api_refuses_an_unknown_id_too(results, tmp_path):
    from plot_tool.report import make_report
    with pytest.raises(ValueError, match=r'^flows: unknown id "F2" \(did you mean "F1"\?\); '
                                         r'known: F1$'):
        make_report(results, tmp_path / "r.html", flows=["F2"])
    assert not (tmp_path / "r.html").exists()
