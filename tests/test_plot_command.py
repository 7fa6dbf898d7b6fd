"""``netsim plot DIR`` draws an earlier run's figures into its results directory, the same bytes
as the run draws; and a run whose drawing fails (a bug in netsim) keeps its results, says so in
one line and exits 3, instead of losing the run with a traceback."""
from __future__ import annotations

import json
from pathlib import Path

from netsim.cli import main

ROOT = Path(__file__).resolve().parent.parent
TC1 = str(ROOT / "topologies" / "test_case_1.json")


def test_plot_draws_the_figures_the_run_would_have_drawn(tmp_path, capsys):
    drawn, bare = tmp_path / "drawn", tmp_path / "bare"
    assert main([TC1, "--duration", "12", "--quiet", "--out", str(drawn)]) == 0
    assert main([TC1, "--duration", "12", "--quiet", "--no-plots", "--out", str(bare)]) == 0
    assert not list(bare.glob("*.png"))
    assert main(["plot", str(bare)]) == 0
    names = ["links.png", "flows.png", "hosts.png", "routing.png"]
    assert capsys.readouterr().out.strip() == f"drawn into {bare}/: {', '.join(names)}"
    for name in names:                                   # Bellman-Ford: routing.png too
        assert (bare / name).read_bytes() == (drawn / name).read_bytes(), name
    assert sorted(p.name for p in bare.iterdir()) == sorted(p.name for p in drawn.iterdir())


def test_plot_takes_links_and_flows_as_a_run_does(tmp_path, capsys):
    out = tmp_path / "r"
    assert main([TC1, "--duration", "2", "--quiet", "--no-plots", "--out", str(out)]) == 0
    assert main(["plot", str(out), "-l", "L1", "L1", "-F", "F1", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert (out / "links.png").is_file() and (out / "flows.png").is_file()


def test_plot_refuses_in_one_line(tmp_path, capsys):
    out = tmp_path / "r"
    assert main([TC1, "--duration", "1", "--quiet", "--no-plots", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["plot", str(out), "-l", "L99"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('error: -l: unknown id "L99"')
    (tmp_path / "notes").mkdir()
    assert main(["plot", str(tmp_path / "notes")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: plot {tmp_path / 'notes'}: not a results directory (no summary.json written "
        f"by netsim)")
    assert not list(out.glob("*.png"))


def test_a_run_whose_drawing_fails_keeps_its_results_and_exits_3(tmp_path, capsys,
                                                                   monkeypatch):
    import plot_tool

    def broken(source, out_dir, **kwargs):
        (Path(out_dir) / "links.png").write_bytes(b"\x89PNG half")   # drawn when it failed
        raise RuntimeError("a bug in drawing")
    monkeypatch.setattr(plot_tool, "make_figures", broken)
    out = tmp_path / "out"
    code = main([TC1, "--duration", "1", "--quiet", "--out", str(out)])
    assert code == 3
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: drawing the figures failed (RuntimeError: a bug in drawing): the results are "
        f"written to {out}/ without figures; `python -m netsim plot {out}` draws them again, "
        f"and -v DEBUG shows where it failed (please report it)"]
    assert json.loads((out / "summary.json").read_text())["stop_reason"] == "duration"
    assert (out / "links.csv").is_file() and not list(out.glob("*.png"))
    monkeypatch.undo()
    assert main(["plot", str(out), "--quiet"]) == 0 and (out / "links.png").is_file()


def test_plot_never_replaces_a_file_of_yours_nor_writes_through_a_link(tmp_path, capsys):
    out = tmp_path / "r"
    assert main([TC1, "--duration", "1", "--quiet", "--no-plots", "--out", str(out)]) == 0
    (out / "hosts.png").write_text("my own notes")
    assert main(["plot", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: plot {out}: {out / 'hosts.png'}: exists and is not a figure netsim wrote (a "
        f"file of yours, or a symbolic link): move it, or draw into another directory")
    assert (out / "hosts.png").read_text() == "my own notes"
    assert not (out / "links.png").exists()                 # nothing drawn before refusing
    (out / "hosts.png").unlink()
    victim = tmp_path / "victim.txt"
    victim.write_text("elsewhere")
    (out / "links.png").symlink_to(victim)
    assert main(["plot", str(out)]) == 2
    assert victim.read_text() == "elsewhere"
    (out / "links.png").unlink()
    assert main(["plot", str(out), "--quiet"]) == 0
    assert main(["plot", str(out), "--quiet"]) == 0          # its own figures: replaced


def test_a_failed_check_outranks_a_drawing_failure(tmp_path, capsys, monkeypatch):
    import plot_tool

    def broken(source, out_dir, **kwargs):
        raise RuntimeError("a bug in drawing")
    monkeypatch.setattr(plot_tool, "make_figures", broken)
    out = tmp_path / "out"
    code = main([TC1, "--duration", "3", "--quiet", "--check", "--check-tolerance", "0.001",
                 "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err[0].startswith("error: drawing the figures failed (RuntimeError: a bug in drawing)")
    assert err[1].startswith("check failed: largest error")


def test_a_report_failure_keeps_the_figures_and_says_how_to_write_it(tmp_path, capsys,
                                                                     monkeypatch):
    import plot_tool.report

    def broken(directory, *args, **kwargs):
        (Path(directory) / "report.html").write_text("<html>half")
        raise ValueError("a bug in the report")
    monkeypatch.setattr(plot_tool.report, "make_report", broken)
    out = tmp_path / "out"
    assert main([TC1, "--duration", "1", "--quiet", "--report", "--out", str(out)]) == 3
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: writing report.html failed (ValueError: a bug in the report): the results and "
        f"figures are written to {out}/ without it; `python -m netsim report {out}` writes it "
        f"again, and -v DEBUG shows where it failed (please report it)"]
    assert (out / "links.png").is_file() and not (out / "report.html").exists()
