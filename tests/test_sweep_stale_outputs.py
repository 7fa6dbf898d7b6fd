"""A sweep directory holds nothing drawn from results it no longer has: `--force` removes the
earlier sweep's report too; results that change remove the report and figures not drawn again
now; a figure the sweep no longer names is removed (netsim/sweep_store.py `remove_stale`)."""
from __future__ import annotations

import json

from initializer import main

SWEEP = {"name": "stale", "topology": "lossy_link", "duration_s": 1, "seeds": 1,
         "parameters": {"links.L1.delay_ms": [5, 10]}, "metrics": ["flows.F1.goodput_mbps"],
         "plots": [{"file": "g.png", "x": "links.L1.delay_ms", "y": "flows.F1.goodput_mbps"}]}


def sweep(tmp_path, out, capsys, *extra, status=0, **changes) -> str:
    """Run SWEEP with `changes` into `out`, expecting exit `status`; its standard error."""
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(dict(SWEEP, **changes)))
    capsys.readouterr()
    assert main(["sweep", str(path), "--out", str(out), "--jobs", "1", *extra]) == status
    return capsys.readouterr().err


def netsims_report(text: str) -> str:
    """A report.html as netsim writes them begin (plot_tool.figure_files is_netsims_report)."""
    return f"<!DOCTYPE html>\n<html><head><title>netsim report: {text}</title></head></html>"


def test_force_removes_the_earlier_sweeps_report(tmp_path, capsys):
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys, "--no-plots")
    (out / "report.html").write_text(netsims_report("the earlier sweep"))
    sweep(tmp_path, out, capsys, "--no-plots", "--force", name="other")
    assert not (out / "report.html").exists()


def test_changed_results_remove_what_is_not_drawn_again(tmp_path, capsys):
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    assert (out / "g.png").is_file()
    (out / "report.html").write_text(netsims_report("two runs"))
    sweep(tmp_path, out, capsys, "--no-plots")                  # nothing new: all kept
    assert (out / "report.html").is_file() and (out / "g.png").is_file()
    err = sweep(tmp_path, out, capsys, "--no-plots", seeds=2)   # two more runs
    assert not (out / "report.html").exists() and not (out / "g.png").exists()
    assert "stale: removed report.html, g.png, drawn from the earlier results" in err
    (out / "report.html").write_text(netsims_report("four runs"))
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


def refused(tmp_path, out, capsys, *extra, **changes) -> str:
    return sweep(tmp_path, out, capsys, *extra, status=2, **changes)


def test_a_file_of_yours_a_plot_names_is_neither_replaced_nor_removed(tmp_path, capsys):
    """A figure is replaced or removed only if netsim wrote it (its PNG "Software" text): the
    user's mine.png was overwritten by a plot naming it, and deleted with --no-plots."""
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    (out / "mine.png").write_text("my thesis figure")
    plots = [*SWEEP["plots"], dict(SWEEP["plots"][0], file="mine.png")]
    for extra in ((), ("--no-plots",)):
        err = refused(tmp_path, out, capsys, *extra, plots=plots, seeds=2)
        assert err == (f"error: {out / 'mine.png'}: plots[1] names it, and it is not a figure "
                       f"netsim wrote (a file of yours, or a symbolic link): move it, or name "
                       f"another file\n")
        assert (out / "mine.png").read_text() == "my thesis figure"
    sweep(tmp_path, out, capsys, "--no-plots", seeds=2)     # its own g.png goes, mine.png stays
    assert not (out / "g.png").exists() and (out / "mine.png").read_text() == "my thesis figure"


def test_a_figure_is_never_written_through_a_link(tmp_path, capsys):
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    victim = tmp_path / "victim.txt"
    victim.write_text("not a figure")
    (out / "g.png").unlink()
    (out / "g.png").symlink_to(victim)
    refused(tmp_path, out, capsys, seeds=2)
    assert victim.read_text() == "not a figure" and (out / "g.png").is_symlink()


def test_only_netsims_own_pngs_count_as_its_figures(tmp_path, capsys):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from plot_tool.figure_files import written_by_netsim
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    assert written_by_netsim(out / "g.png")
    mine = tmp_path / "mine.png"
    Figure().savefig(mine)                                 # matplotlib's own PNG
    link = tmp_path / "link.png"
    link.symlink_to(out / "g.png")
    assert not written_by_netsim(mine) and not written_by_netsim(link)
    assert not written_by_netsim(tmp_path / "missing.png") and not written_by_netsim(tmp_path)


def test_a_report_drawn_from_other_plots_is_removed(tmp_path, capsys):
    """The report showed the charts of plots the sweep no longer had (results.csv unchanged)."""
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    (out / "report.html").write_text(netsims_report("the g.png chart"))
    renamed = [dict(SWEEP["plots"][0], file="g2.png", title="another")]
    err = sweep(tmp_path, out, capsys, plots=renamed)
    assert not (out / "report.html").exists() and (out / "g2.png").is_file()
    assert "stale: removed report.html, drawn from the earlier results or plots" in err
    (out / "report.html").write_text(netsims_report("the g2.png chart"))
    sweep(tmp_path, out, capsys, plots=renamed)                 # nothing changed: kept
    assert (out / "report.html").is_file()


def test_a_report_html_of_yours_is_neither_removed_nor_replaced(tmp_path, capsys):
    """Only a report netsim wrote is stale: a file of the user's named report.html stays through
    changed results and --force (before, both deleted it), and `report` refuses to replace it."""
    out = tmp_path / "out"
    sweep(tmp_path, out, capsys, "--no-plots")
    (out / "report.html").write_text("my notes")
    sweep(tmp_path, out, capsys, "--no-plots", seeds=2)         # changed results
    sweep(tmp_path, out, capsys, "--no-plots", "--force", name="other")
    assert (out / "report.html").read_text() == "my notes"
    capsys.readouterr()
    assert main(["report", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "report.html: exists and is not a report netsim wrote" in err
    assert (out / "report.html").read_text() == "my notes"
    # and a sweep asked for its report says so before it runs anything (found in review)
    before = (out / "results.csv").read_text()
    err = sweep(tmp_path, out, capsys, "--no-plots", "--report", status=2, name="other",
                seeds=3)
    assert err.startswith(f"error: {out / 'report.html'}: exists and is not a report netsim "
                          f"wrote") and "run without --report" in err
    assert (out / "results.csv").read_text() == before                   # nothing was run


def test_an_interrupted_resume_removes_what_the_earlier_results_drew(tmp_path, capsys,
                                                                    monkeypatch):
    """A resume stopped by Ctrl-C after new runs had changed results.csv left the earlier
    report.html and figures beside it, drawn from results it no longer had."""
    import signal

    from netsim import sweep_execute

    out = tmp_path / "out"
    sweep(tmp_path, out, capsys)
    (out / "report.html").write_text(netsims_report("two runs"))
    real = sweep_execute.execute_runs

    def one_run_then_ctrl_c(tasks, *args, **kwargs):
        results = real(tasks, *args, **kwargs)
        yield next(results)
        results.close()
        raise sweep_execute.SweepInterrupted(signal.SIGINT)

    monkeypatch.setattr(sweep_execute, "execute_runs", one_run_then_ctrl_c)
    err = sweep(tmp_path, out, capsys, status=130, seeds=2)
    assert not (out / "report.html").exists() and not (out / "g.png").exists()
    assert "stale: removed report.html, g.png, drawn from the earlier results" in err
    assert "stale: interrupted (SIGINT); 3 of 4 runs done" in err
    monkeypatch.undo()
    sweep(tmp_path, out, capsys, "--no-plots")          # nothing new since: nothing to remove
    assert sweep(tmp_path, out, capsys, "--no-plots", seeds=2) == ""


def test_a_killed_drawings_partial_file_goes_and_figures_have_the_umasks_mode(tmp_path, capsys):
    """A sweep killed while drawing left `.g.<random>.part` for good (even --force kept it), and
    sweep figures were written mode 0600 where every other file of a results directory follows
    the umask (0644)."""
    import os
    import stat

    out = tmp_path / "out"
    sweep(tmp_path, out, capsys, "--no-plots")
    dead = out / ".g.png.partial-999999999-0a1b2c3d"       # (no such process)
    dead.write_bytes(b"half a figure")
    mine = out / ".g.png.partial-notapid"                  # not the pattern: left alone
    mine.write_text("mine")
    older = out / ".g.cag4hcrm.part"                       # an earlier netsim's temporary name
    older.write_bytes(b"")
    old = os.umask(0o022)
    try:
        sweep(tmp_path, out, capsys, seeds=2)
    finally:
        os.umask(old)
    assert not dead.exists() and not older.exists() and mine.exists()
    assert stat.S_IMODE((out / "g.png").stat().st_mode) == 0o644
    assert not [p for p in os.listdir(out) if ".partial-" in p and p != mine.name]
