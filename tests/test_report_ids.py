"""`report DIR -l/-F` check the ids against the results, as a run checks them against its
topology: one line with a did-you-mean and exit 2, no report written."""
from __future__ import annotations

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


def test_known_ids_are_accepted(results, tmp_path, run_cli):
    out = tmp_path / "r.html"
    done = run_cli("report", results, "-o", out, "-l", "L1", "-F", "F1", "--quiet")
    assert done.returncode == 0, done.stderr
    assert out.is_file()
