"""The verdict of `--check`: a check that compared nothing (every row outside its model's regime)
says so and, with `--check-tolerance`, does not pass (exit status 1, `passed` false); before, it
said "nothing compared — within the 5 % tolerance" and exited 0, which an autograder read as a
pass. README's BBR example on lossy_link.json is such a run: its 10 MB take 0.89 s, less than
the 2 s settling time."""
from __future__ import annotations

import json
from pathlib import Path

from initializer import main
from theory.check import _add_verdict
from theory.check_report import format_report

ROOT = Path(__file__).resolve().parent.parent
LOSSY = str(ROOT / "topologies" / "lossy_link.json")
SETTLING = ("the interval is not one sampling interval (0.1 s) longer than the settling time "
            "(2 s, --check-settle): its flows may not have settled")


def report_of(rows, tolerance_pct):
    report = {"settle_s": 2.0, "tolerance_pct": tolerance_pct, "unmatched": [], "completion": [],
              "intervals": [{"start_s": 0.0, "end_s": 1.0, "compared_from_s": 1.0,
                             "compared_until_s": 1.0, "flows": ["F1"], "rows": rows}]}
    _add_verdict(report, tolerance_pct)
    return report


NOT_COMPARED = {"kind": "flow", "id": "F1", "quantity": "rate_mbps", "predicted": None,
                "simulated": None, "error_pct": None, "no_model": "why"}
COMPARED = {"kind": "flow", "id": "F1", "quantity": "rate_mbps", "predicted": 1.0,
            "simulated": 1.01, "error_pct": 1.0}


def test_nothing_compared_does_not_pass_a_tolerance():
    report = report_of([NOT_COMPARED], 5.0)
    assert report["compared"] == 0 and report["passed"] is False
    assert format_report(report).splitlines()[-1] == (
        "nothing compared — NOT within the 5 % tolerance: a check that compared nothing does not "
        "pass (1 row outside every model's regime not counted: see the reasons above)")


def test_without_a_tolerance_nothing_compared_has_no_verdict():
    report = report_of([NOT_COMPARED], None)
    assert report["passed"] is None
    assert format_report(report).splitlines()[-1] == (
        "nothing compared (1 row outside every model's regime not counted: see the reasons above)")


def test_one_compared_row_is_judged_as_before():
    report = report_of([COMPARED, NOT_COMPARED], 5.0)
    assert report["passed"] is True and report["compared"] == 1
    assert format_report(report).splitlines()[-1].startswith(
        "largest error 1.00 % — within the 5 % tolerance (1 row")


def test_bbr_transfer_shorter_than_the_settling_time_fails_the_tolerance(tmp_path, capsys):
    code = main([LOSSY, "--algorithm", "bbr", "--check", "--check-tolerance", "5",
                 "--out", str(tmp_path / "a"), "--no-plots"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"  1. {SETTLING}\n" in out
    assert ("nothing compared — NOT within the 5 % tolerance: a check that compared nothing does "
            "not pass") in out
    report = json.loads((tmp_path / "a" / "check.json").read_text())
    assert report["compared"] == 0 and report["passed"] is False
    assert report["no_model_reasons"] == [SETTLING]


def test_without_a_tolerance_the_run_still_exits_0(tmp_path, capsys):
    assert main([LOSSY, "--algorithm", "bbr", "--check", "--out", str(tmp_path / "b"),
                 "--no-plots"]) == 0
    assert "\nnothing compared (1 row outside" in capsys.readouterr().out


def test_quiet_prints_the_failed_verdict_as_its_one_line(tmp_path, capsys):
    """--quiet prints nothing but errors; a failed tolerance (exit 1) printed nothing at all."""
    out = tmp_path / "q"
    code = main([LOSSY, "--algorithm", "bbr", "--check", "--check-tolerance", "5", "--quiet",
                 "--out", str(out), "--no-plots"])
    assert code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"check failed: nothing compared — NOT within the 5 % tolerance: a "
                            f"check that compared nothing does not pass (1 row outside every "
                            f"model's regime not counted: see the reasons in {out}/check.json)\n")


def test_quiet_prints_nothing_for_a_passed_or_unjudged_check(tmp_path, capsys):
    assert main([LOSSY, "--algorithm", "bbr", "--check", "--quiet", "--out",
                 str(tmp_path / "n"), "--no-plots"]) == 0
    assert capsys.readouterr().err == ""
