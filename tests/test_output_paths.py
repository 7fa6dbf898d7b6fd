"""No output path replaces an input or anything that is not ours (netsim/output_paths.py), a
full disk is one line with nothing half-written left, and different ids never share a file."""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TC0 = ROOT / "topologies" / "test_case_0.json"
LOSSY = ROOT / "topologies" / "lossy_link.json"


def one_error_line(done) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture
def topology(tmp_path):
    path = tmp_path / "t.json"
    shutil.copyfile(TC0, path)
    return path


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    """A complete single run's results directory (module-wide: read, never written)."""
    out = tmp_path_factory.mktemp("run") / "r"
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), str(TC0), "--duration",
                           "1", "--no-plots", "--quiet", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


# -- report -o -----------------------------------------------------------------------------------

def test_report_never_writes_over_the_runs_own_files(results_dir, run_cli):
    pytest.importorskip("plotly")
    summary = results_dir / "summary.json"
    before = summary.read_bytes()
    for target in (summary, results_dir / "links.csv", results_dir / "new.html"):
        done = run_cli("report", results_dir, "-o", target)
        assert done.returncode == 2
        line = one_error_line(done)
        assert line == (f"error: -o {target}: is inside the netsim results directory "
                        f"{results_dir}, which holds one run (or sweep) and nothing else; write "
                        f"it elsewhere")
        assert not (results_dir / "new.html").exists()
    assert summary.read_bytes() == before


def test_report_refuses_a_symlink_and_a_named_pipe(results_dir, run_cli, tmp_path):
    pytest.importorskip("plotly")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "link.html"
    link.symlink_to(victim)
    done = run_cli("report", results_dir, "-o", link)
    assert done.returncode == 2
    assert one_error_line(done) == f"error: -o {link}: is a symbolic link; give the path of a regular file"
    assert link.is_symlink() and victim.read_text() == "keep me"
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    done = run_cli("report", results_dir, "-o", fifo, timeout=60)
    assert done.returncode == 2
    assert one_error_line(done) == f"error: -o {fifo}: is a named pipe, not a file netsim may write"
    assert fifo.is_fifo()


def test_report_may_write_elsewhere(results_dir, run_cli, tmp_path):
    pytest.importorskip("plotly")
    done = run_cli("report", results_dir, "-o", tmp_path / "page.html", "--quiet")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "page.html").stat().st_size > 0
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]


def test_devices_and_directories_are_refused_by_the_one_rule(tmp_path):
    from netsim.output_paths import OutputPathError, check_output_file
    for path, what in (("/dev/null", "a device"), (tmp_path, "a directory")):
        with pytest.raises(OutputPathError, match=f"^-o {path}: is {what}, not a file"):
            check_output_file("-o", path)
    assert check_output_file("-o", tmp_path / "new.json") == tmp_path / "new.json"


# -- a run's -f, --trace and --out ---------------------------------------------------------------

@pytest.mark.parametrize("option", ["-f", "--trace"])
def test_a_log_or_trace_over_the_topology_is_refused_before_anything_is_written(
        topology, tmp_path, run_cli, option):
    before = topology.read_bytes()
    done = run_cli(topology, option, topology, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert one_error_line(done) == (f"error: {option} {topology}: is the same file as the input "
                                    f"{topology}; it would be overwritten")
    assert topology.read_bytes() == before and not (tmp_path / "r").exists()


def test_another_spelling_or_a_hard_link_of_an_input_is_the_same_file(topology, tmp_path,
                                                                       run_cli):
    plugin = tmp_path / "p.py"
    shutil.copyfile(ROOT / "experiments" / "plugins" / "aimd.py", plugin)
    hard = tmp_path / "hard.json"
    os.link(topology, hard)
    before = topology.read_bytes()
    for output in (hard, tmp_path / "sub" / ".." / "t.json", plugin):
        (tmp_path / "sub").mkdir(exist_ok=True)
        done = run_cli(topology, "--plugin", plugin, "--trace", output, "--no-plots",
                       "--out", tmp_path / "r")
        assert done.returncode == 2
        assert "is the same file as the input" in one_error_line(done)
    assert topology.read_bytes() == before
    assert plugin.read_text().startswith('"""An AIMD')


def test_log_and_trace_are_not_inside_the_results_directory_or_the_same_file(topology, tmp_path,
                                                                           run_cli):
    out = tmp_path / "r"
    done = run_cli(topology, "-f", out / "log.txt", "--no-plots", "--out", out)
    assert done.returncode == 2
    assert f"is inside the results directory {out}, which the run replaces" in one_error_line(done)
    done = run_cli(topology, "-f", tmp_path / "x.log", "--trace", tmp_path / "x.log",
                   "--no-plots", "--out", out)
    assert done.returncode == 2
    assert "is the same file as the output" in one_error_line(done)
    assert not out.exists() and not (tmp_path / "x.log").exists()


def test_an_out_directory_holding_an_input_is_refused(tmp_path, run_cli):
    out = tmp_path / "r"
    done = run_cli(TC0, "--duration", "0.5", "--no-plots", "--quiet", "--out", out)
    assert done.returncode == 0, done.stderr
    inside = out / "t.json"                     # a topology kept in a results directory
    shutil.copyfile(TC0, inside)
    done = run_cli(inside, "--duration", "0.5", "--no-plots", "--quiet", "--out", out)
    assert done.returncode == 2
    assert one_error_line(done) == (f"error: --out {out}: holds the input {inside}, which writing "
                                    f"the results there would delete or overwrite; choose "
                                    f"another directory")
    assert inside.exists()


def test_the_log_file_is_opened_after_the_inputs_are_read(topology, tmp_path, run_cli):
    log = tmp_path / "log.txt"
    log.write_text("previous log\n")
    done = run_cli(tmp_path / "missing.json", "-f", log, "--out", tmp_path / "r")
    assert done.returncode == 2
    assert log.read_text() == "previous log\n"          # a run that never started: untouched
    done = run_cli(topology, "-f", log, "-v", "INFO", "--no-plots",
                   "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert "previous log" not in log.read_text() and "INFO" in log.read_text()


def test_a_log_on_a_device_is_refused_not_lost(topology, tmp_path, run_cli):
    done = run_cli(topology, "-f", "/dev/full", "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert one_error_line(done) == "error: -f /dev/full: is a device, not a file netsim may write"


def test_convert_never_writes_over_its_input(tmp_path, run_cli):
    old = tmp_path / "old.json"
    shutil.copyfile(ROOT / "tests" / "data" / "legacy" / "test_case_0.json", old)
    before = old.read_bytes()
    done = run_cli("convert", old, "-o", old)
    assert done.returncode == 2
    assert "is the same file as the input" in one_error_line(done)
    assert old.read_bytes() == before


# -- a full disk ---------------------------------------------------------------------------------

def _limit_file_size(limit_bytes):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return apply


@pytest.mark.parametrize("extra", [[], ["--trace", "TRACE"], ["--pcap"]])
def test_a_full_disk_is_one_line_and_leaves_nothing_half_written(tmp_path, extra):
    if extra == ["--pcap"]:
        pytest.importorskip("dpkt")
    trace = tmp_path / "trace.csv"
    trace.write_text("previous trace\n")
    out = tmp_path / "r"
    args = [str(trace) if a == "TRACE" else a for a in extra]
    interval = "0.01" if extra[:1] == ["--trace"] else "0.001"    # the trace fills up first
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), str(LOSSY), "--duration",
                           "20", "--interval", interval, "--no-plots", "--quiet", "--out", str(out),
                           *args], capture_output=True, text=True, timeout=120,
                          preexec_fn=_limit_file_size(300_000))
    assert done.returncode == 2
    line = one_error_line(done)
    assert line.startswith("error: cannot write ") and line.endswith(": File too large")
    assert ("trace.csv" in line) if extra and extra[0] == "--trace" else (".partial-" in line)
    assert not out.exists()
    assert trace.read_text() == "previous trace\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trace.csv"]     # no staging left


def test_a_write_failing_in_a_trace_file_names_it(tmp_path, monkeypatch, capsys):
    from netsim import cli, traces
    append = traces.TraceFile.append

    def full(self, *args):
        if self.rows > 50 and self.path.name == "flows.csv":
            raise OSError(28, "No space left on device")
        append(self, *args)

    monkeypatch.setattr(traces.TraceFile, "append", full)
    code = cli.main([str(LOSSY), "--duration", "10", "--no-plots", "--quiet", "--out",
                     str(tmp_path / "r")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot write ")
    assert err[0].endswith("flows.csv: No space left on device")
    assert not (tmp_path / "r").exists() and list(tmp_path.iterdir()) == []


# -- ids that would share a file -----------------------------------------------------------------

def test_different_ids_never_share_a_capture_or_plot_file_name():
    from netsim.pcap import file_part
    ids = ["L_1", "L 1", "L-1", "L.1", "L%1", "L%5F1", "l_1", "Ł1", "x" * 300, "x" * 301, "L1"]
    parts = [file_part(i) for i in ids]
    assert len(set(parts)) == len(ids)
    assert file_part("L1") == "L1"                  # plain ids keep their names
    assert all(len(p) <= 60 and "/" not in p and not p.startswith(".") for p in parts)
    names = {f"{file_part(link)}_{file_part(a)}-{file_part(b)}"
             for link, a, b in [("L", "a-b", "c"), ("L", "a", "b-c"), ("L_a", "b", "c"),
                                ("L", "a_b", "c")]}
    assert len(names) == 4


def test_captures_of_links_whose_ids_differ_only_in_punctuation_are_distinct(tmp_path):
    pytest.importorskip("dpkt")
    from netsim.pcap import install_captures
    from netsim.run import Run
    from topologies.loader import load_topology
    link = {"rate_mbps": 10, "delay_ms": 5, "buffer_kb": 100}
    data = {"hosts": ["H1", "H2"], "routers": ["R1", "R2"], "duration_s": 0.5,
            "links": [dict(link, id="A", ends=["H1", "R1"]), dict(link, id="L_1", ends=["R1", "R2"]),
                      dict(link, id="L 1", ends=["R2", "R1"]), dict(link, id="B", ends=["R2", "H2"])],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.2}]}
    simulation = Run(load_topology(data), trace_dir=tmp_path)
    captures = install_captures(simulation.network, tmp_path / "pcap", ["L_1", "L 1"])
    simulation.execute()
    for capture in captures:
        capture.close()
    names = sorted(p.name for p in (tmp_path / "pcap").iterdir())
    assert names == ["L%201_R1-R2.pcap", "L%201_R2-R1.pcap", "L%5F1_R1-R2.pcap", "L%5F1_R2-R1.pcap"]
    sizes = [p.stat().st_size for p in (tmp_path / "pcap").iterdir()]
    assert sum(size > 24 for size in sizes) == 2        # the route's link, both directions


def test_a_run_refused_after_the_trace_was_opened_leaves_no_partial_trace(tmp_path, run_cli):
    data = json.loads(LOSSY.read_text())
    del data["flows"][0]["data_mb"]                       # endless, and no duration: refused
    path = tmp_path / "endless.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--trace", tmp_path / "t.csv", "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2 and "nothing ends the run" in one_error_line(done)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["endless.json"]
