"""A sweep directory holds nothing drawn from results it no longer has: `--force` removes the
earlier sweep's report too; results that change remove the report and figures not drawn again
now; a figure the sweep no longer names is removed (netsim/sweep_store.py `remove_stale`)."""
from __future__ import annotations

import json

from initializer import main

SWEEP = {"name": "stale", "topology": "lossy_link", "duration_s": 1, "seeds": 1,
         "parameters": {"links.L1.delay_ms": [5, 10]}, "metrics": ["flows.F1.goodput_mbps"],
         "plots": [{"file": "g.png", "x": "links.L1.delay_ms", "y": "flows.F1.goodput_mbps"}]}


def sweep(tmp_path, out, capsys, *extra, **changes) -> str:
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(dict(SWEEP, **changes)))
    capsys.readouterr()
    assert main(["sweep", str(path), "--out", str(out), "--jobs", "1", *extra]) == 0
    return capsys.readouterr().err


def test_force_removes_the_earlier_sweeps_report(tmp_path, capsys):
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys, "--no-plots")
    (out / "report.html").write_text("<html>the earlier sweep</html>")
    sweep(tmp_path, out, capsys, "--no-plots", "--force", name="other")
    assert not (out / "report.html").exists()


def test_changed_results_remove_what_is_not_drawn_again(tmp_path, capsys):
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    assert (out / "g.png").is_file()
    (out / "report.html").write_text("<html>two runs</html>")
    sweep(tmp_path, out, capsys, "--no-plots")                  # nothing new: all kept
    assert (out / "report.html").is_file() and (out / "g.png").is_file()
    err = sweep(tmp_path, out, capsys, "--no-plots", seeds=2)   # two more runs
    assert not (out / "report.html").exists() and not (out / "g.png").exists()
    assert "stale: removed report.html, g.png, drawn from the earlier results" in err
    (out / "report.html").write_text("<html>four runs</html>")
    sweep(tmp_path, out, capsys, seeds=3)                       # figures drawn again
    assert (out / "g.png").is_file() and not (out / "report.html").exists()


def test_a_figure_no_longer_named_is_removed(tmp_path, capsys):
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    renamed = [dict(SWEEP["plots"][0], file="g2.png")]
    sweep(tmp_path, out, capsys, plots=renamed)
    assert (out / "g2.png").is_file() and not (out / "g.png").exists()


def test_the_report_file_name_is_the_reports():
    from netsim.sweep_store import REPORT_FILE
    from plot_tool.report import REPORT_FILE as WRITTEN
    assert REPORT_FILE == WRITTEN
