"""A results directory always holds exactly one complete run: staged, swapped into place whole,
never mixed with an earlier run, never written over a directory that is not a results directory."""
from __future__ import annotations

from pathlib import Path

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from netsim import load_topology, simulate
from netsim.results_dir import ResultsDirError, StagedDirectory

ROOT = Path(__file__).resolve().parent.parent

TC0 = ROOT / "topologies" / "test_case_0.json"
TC2 = ROOT / "topologies" / "test_case_2.json"
ENDLESS = {"name": "endless", "duration_s": 1e5, "hosts": ["H1", "H2"],
           "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 10,
                      "buffer_kb": 64}],
           "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": None, "start_s": 0}]}


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_later_run_leaves_no_file_of_an_earlier_one(run_cli, tmp_path):
    out = tmp_path / "r"
    first = run_cli(TC2, "--check", "--no-plots", "--duration", "25", "--out", out)
    assert first.returncode == 0, first.stderr
    assert (out / "check.json").exists() and (out / "predictions.csv").exists()
    second = run_cli(TC2, "--algorithm", "reno", "--no-plots", "--duration", "25", "--out", out)
    assert second.returncode == 0, second.stderr
    assert sorted(p.name for p in out.iterdir()) == ["flows.csv", "hosts.csv", "links.csv",
                                                     "routes.csv", "summary.json"]
    assert {f["algorithm"] for f in json.loads((out / "summary.json").read_text())["flows"].values()} == {"reno"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]   # no staging left


def test_a_killed_run_leaves_the_previous_results_untouched(run_cli, tmp_path):
    out = tmp_path / "r"
    done = run_cli(TC0, "--no-plots", "--out", out)
    assert done.returncode == 0, done.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    topology = tmp_path / "endless.json"
    topology.write_text(json.dumps(ENDLESS))
    proc = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), str(topology),
                             "--no-plots", "--quiet", "--out", str(out)])
    deadline = time.time() + 30
    while not [p for p in tmp_path.iterdir() if ".partial-" in p.name]:
        assert time.time() < deadline, "the run never started writing"
        time.sleep(0.05)
    time.sleep(0.5)
    proc.kill()
    proc.wait()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # the next run into the same place removes the dead run's staging directory
    again = run_cli(TC0, "--no-plots", "--out", out)
    assert again.returncode == 0, again.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_results_never_replace_a_directory_of_something_else(run_cli, tmp_path):
    precious = tmp_path / "thesis"
    precious.mkdir()
    (precious / "chapter1.tex").write_text("do not lose me")
    done = run_cli(TC0, "--no-plots", "--out", precious)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: --out: {precious} exists and is not a netsim results directory (no netsim "
        f"summary.json); choose another directory or remove it"]
    assert (precious / "chapter1.tex").read_text() == "do not lose me"
    with pytest.raises(ResultsDirError):
        simulate(load_topology(TC0)).write(precious)


def test_a_symbolic_link_is_named_as_one(run_cli, tmp_path):
    earlier = tmp_path / "earlier"
    assert run_cli(TC0, "--no-plots", "--duration", "0.5", "--out", earlier).returncode == 0
    link = tmp_path / "link"
    link.symlink_to(earlier)
    done = run_cli(TC0, "--no-plots", "--out", link)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: --out: {link} is a symbolic link; give the path of a directory"]
    assert link.is_symlink() and (earlier / "summary.json").is_file()


def test_dot_and_dot_dot_are_folded_before_the_run(run_cli, tmp_path):
    """`--out res/sub/..` staged the run inside a res/sub/ it created, then refused res for
    holding sub/, and every later run into res too; `--out .` ran to the end, then refused
    with a false reason (acceptance test Z9)."""
    res = tmp_path / "res"
    assert run_cli(TC0, "--no-plots", "--quiet", "--duration", "0.5", "--out", res).returncode == 0
    done = run_cli(TC0, "--no-plots", "--quiet", "--duration", "0.5", "--out", "res/sub/..",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in res.iterdir()) == ["flows.csv", "hosts.csv", "links.csv",
                                                     "routes.csv", "summary.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    for where, out in ((res, "."), (res, ".."), (tmp_path, "res/..")):
        started = time.monotonic()
        done = run_cli(TC2, "--no-plots", "--out", out, cwd=where)   # refused before it runs
        assert time.monotonic() - started < 10.0
        assert done.returncode == 2
        shown = os.path.normpath(out)
        assert done.stderr.splitlines() == [
            f"error: --out: {shown} is the working directory, or holds it: netsim replaces a "
            f"results directory as a whole; give a directory below it, e.g. --out results/NAME"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_a_file_on_the_way_and_a_mount_point_are_named(run_cli, tmp_path, monkeypatch):
    from netsim.results_dir import check_destination

    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    done = run_cli(TC0, "--no-plots", "--out", notes / "sub")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: --out: {notes / 'sub'}: {notes} is a file, not a directory"]
    mounted = tmp_path / "stick"
    mounted.mkdir()
    monkeypatch.setattr(os.path, "ismount", lambda path: Path(path) == mounted)
    with pytest.raises(ResultsDirError, match=r"stick is a mount point, which netsim cannot "
                                              r"replace as a whole"):
        check_destination(mounted)
    check_destination(mounted / "r")                 # inside it: fine


def test_write_from_the_api_is_complete_and_atomic(tmp_path):
    results = simulate(load_topology(TC0))
    out = tmp_path / "api"
    results.write(out)
    names = sorted(p.name for p in out.iterdir())
    assert names == ["flows.csv", "hosts.csv", "links.csv", "routes.csv", "summary.json"]
    (out / "routing.png").write_text("from an earlier run")   # a file a run writes
    results.write(out)
    assert "routing.png" not in {p.name for p in out.iterdir()}


def test_summary_records_the_digest_of_the_resolved_configuration():
    spec = load_topology(TC0)
    a = simulate(spec, duration_s=5).summary["config_digest"]
    assert a == simulate(spec, duration_s=5).summary["config_digest"]
    assert len(a) == 64 and int(a, 16) >= 0
    assert simulate(spec, duration_s=5, seed=2).summary["config_digest"] != a
    assert simulate(spec, duration_s=6).summary["config_digest"] != a
    assert simulate(spec, duration_s=5, interval_s=0.2).summary["config_digest"] != a
    reno = load_topology(TC0, algorithm="reno")
    assert simulate(reno, duration_s=5).summary["config_digest"] != a


def test_staged_directory_discards_on_error(tmp_path):
    with pytest.raises(RuntimeError):
        with StagedDirectory(tmp_path / "x") as staged:
            (staged.path / "half.csv").write_text("a,b\n")
            raise RuntimeError("killed while writing")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")
def test_stale_staging_of_a_live_process_is_left_alone(tmp_path):
    live = tmp_path / f".r.partial-{os.getpid()}-abc"
    live.mkdir()
    StagedDirectory(tmp_path / "r").discard()
    assert live.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_an_earlier_run_is_exchanged_in_one_step_on_linux(tmp_path):
    # the staging directory and the earlier run swap places atomically (renameat2, found among
    # the process's own symbols), so no instant sees the results directory missing
    from netsim.results_dir import _exchange

    staged, final = tmp_path / "staged", tmp_path / "final"
    staged.mkdir()
    final.mkdir()
    (staged / "new.txt").write_text("new")
    (final / "old.txt").write_text("old")
    assert _exchange(staged, final)
    assert [p.name for p in final.iterdir()] == ["new.txt"]
    assert [p.name for p in staged.iterdir()] == ["old.txt"]


def test_a_long_legal_name_gets_a_short_temporary_name(run_cli, tmp_path):
    """A 240-byte --out (legal: 255 is the limit) was refused as "File name too long": its
    staging directory's name, ".NAME.partial-PID-RANDOM", was too long (acceptance test Z9)."""
    from netsim.results_dir import MAX_STEM_BYTES, partial_stem

    assert partial_stem("res") == "res"
    for name in ("a" * 240, "\u00e9" * 120):
        stem = partial_stem(name)
        assert len(os.fsencode(stem)) <= MAX_STEM_BYTES and stem.startswith(name[:50])
        assert partial_stem(name + "x") != stem                 # a digest of the whole name
    out = tmp_path / ("a" * 240)
    for _ in range(2):                                          # written, then replaced
        done = run_cli(TC0, "--no-plots", "--quiet", "--duration", "0.5", "--out", out,
                       "--trace", tmp_path / ("b" * 240))
        assert done.returncode == 0, done.stderr
    assert (out / "summary.json").is_file() and (tmp_path / ("b" * 240)).is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a" * 240, "b" * 240]
