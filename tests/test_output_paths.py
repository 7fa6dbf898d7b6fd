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
TRACE_HEADER = "time_s,event,node,link,direction,flow,kind,seq,size_bytes,cause,start_s\n"


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
    log.write_text("INFO netsim.cli: previous log\n")      # an earlier run's log
    done = run_cli(tmp_path / "missing.json", "-f", log, "--out", tmp_path / "r")
    assert done.returncode == 2
    assert log.read_text() == "INFO netsim.cli: previous log\n"   # a run that never started
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
    previous = TRACE_HEADER + "1.0,transmit,H1,L1,H1->H2,F1,data,0,1024,,\n"   # an earlier trace
    trace.write_text(previous)
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
    assert trace.read_text() == previous
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


def test_a_killed_runs_partial_trace_is_removed_by_the_next_run(tmp_path):
    """kill -9 during a --trace run left its hidden partial file; eight such runs left 45 MB
    beside the trace for good. A process's own is kept while it runs; a file of the user's that
    only looks alike (no pid) is kept."""
    from netsim.output_paths import AtomicFile
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    dead = int(ended.stdout)                         # (exited: its pid runs nothing of ours)
    stale = tmp_path / f".t.csv.partial-{dead}-abc123"
    live = tmp_path / f".t.csv.partial-{os.getpid()}-def456"
    mine = tmp_path / ".t.csv.partial-notes"
    for path in (stale, live, mine):
        path.write_text("partial")
    atomic = AtomicFile(tmp_path / "t.csv")
    atomic.fh.write("x\n")
    atomic.commit()
    assert not stale.exists() and live.exists() and mine.exists()
    assert (tmp_path / "t.csv").read_text() == "x\n"


# -- an existing file is replaced only if netsim wrote it (or with --force) ----------------------

def _run(run_cli, out, *extra):
    return run_cli(TC0, "--duration", "0.5", "--no-plots", "--quiet", "--out", out, *extra)


@pytest.mark.parametrize("option, name, what", [("-f", "notes.txt", "a log file"),
                                                ("--trace", "data.csv", "an event trace"),
                                                ("--trace", "data.jsonl", "an event trace")])
def test_a_log_or_trace_never_replaces_a_file_netsim_did_not_write(tmp_path, run_cli, option,
                                                                   name, what):
    mine = tmp_path / name
    mine.write_text("my thesis notes\n")
    out = tmp_path / "r"
    done = _run(run_cli, out, option, mine)
    assert done.returncode == 2
    assert one_error_line(done) == (f"error: {option} {mine}: exists and is not {what} netsim "
                                    f"wrote; pass --force to replace it")
    assert mine.read_text() == "my thesis notes\n" and not out.exists()
    done = _run(run_cli, out, option, mine, "--force")          # the user says so
    assert done.returncode == 0, done.stderr
    assert "my thesis notes" not in mine.read_text()


def test_the_same_run_again_replaces_its_own_log_and_traces(tmp_path, run_cli):
    log, csv_trace, jsonl_trace = tmp_path / "run.log", tmp_path / "t.csv", tmp_path / "t.jsonl"
    out = tmp_path / "r"
    for _ in range(2):
        for trace in (csv_trace, jsonl_trace):
            done = _run(run_cli, out, "-f", log, "-v", "INFO", "--trace", trace,
                        "--duration", "1.5")            # (the flow starts at 1 s)
            assert done.returncode == 0, done.stderr
    assert log.read_text().startswith("INFO netsim.cli: ")
    assert csv_trace.read_text().startswith(TRACE_HEADER)
    assert jsonl_trace.read_text().startswith('{"time_s":')
    empty = tmp_path / "empty.log"               # a log with nothing logged: ours, and empty
    for _ in range(2):
        assert _run(run_cli, out, "-f", empty).returncode == 0
    assert empty.read_text() == ""


def test_force_never_replaces_a_link_an_input_or_a_directory(topology, tmp_path, run_cli):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    link = tmp_path / "link.log"
    link.symlink_to(victim)
    for target, end in ((link, "is a symbolic link; give the path of a regular file"),
                        (topology, f"is the same file as the input {topology}; it would be "
                                   f"overwritten"),
                        (tmp_path, "is a directory, not a file netsim may write")):
        done = run_cli(topology, "--duration", "0.5", "--no-plots", "--quiet", "--out",
                       tmp_path / "r", "-f", target, "--force")
        assert done.returncode == 2
        assert one_error_line(done) == f"error: -f {target}: {end}"
    assert victim.read_text() == "keep me" and link.is_symlink()


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_report_o_never_replaces_a_page_netsim_did_not_write(results_dir, run_cli, tmp_path):
    pytest.importorskip("plotly")
    page = tmp_path / "page.html"
    page.write_text("<html>my page</html>\n")
    done = run_cli("report", results_dir, "-o", page)
    assert done.returncode == 2
    assert one_error_line(done) == (f"error: -o {page}: exists and is not a report netsim wrote; "
                                    f"pass --force to replace it")
    assert page.read_text() == "<html>my page</html>\n"
    done = run_cli("report", results_dir, "-o", page, "--force", "--quiet")
    assert done.returncode == 0, done.stderr
    assert "<title>netsim report: " in page.read_text()
    done = run_cli("report", results_dir, "-o", page, "--quiet")     # now ours: no --force
    assert done.returncode == 0, done.stderr


def test_report_again_replaces_its_own_report_html(tmp_path, run_cli):
    pytest.importorskip("plotly")
    out = tmp_path / "r"
    assert _run(run_cli, out).returncode == 0
    for _ in range(2):
        done = run_cli("report", out, "--quiet")
        assert done.returncode == 0, done.stderr
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_netsim_recognises_its_files_by_their_first_bytes(tmp_path):
    from netsim.event_trace import FIELDS
    from netsim.output_paths import written_by_netsim
    assert TRACE_HEADER == ",".join(FIELDS) + "\n"          # the header the recogniser knows
    cases = {
        ("log", "WARNING netsim.cli: a warning\n"): True,
        ("log", "DEBUG simulator.engine: x\nmore\n"): True,
        ("log", "my notes\n"): False,
        ("log", "INFO\n"): False,
        ("trace", TRACE_HEADER): True,
        ("trace", '{"time_s":0.5,"event":"receive"}\n'): True,
        ("trace", "time_s,value\n1,2\n"): False,
        ("trace", '{"a": 1}\n'): False,
        ("report", "<!DOCTYPE html>\n<html><head>\n<title>netsim report: x</title>"): True,
        ("report", "<!DOCTYPE html>\n<html><head><title>My page</title>"): False,
    }
    for (kind, text), expected in cases.items():
        path = tmp_path / "f"
        path.write_text(text)
        assert written_by_netsim(path, kind) is expected, (kind, text)
    path.write_text("")
    assert all(written_by_netsim(path, kind) for kind in ("log", "trace", "report"))


# -- a results directory: netsim never deletes what it did not write -----------------------------

def test_a_results_directory_holding_the_users_files_is_never_replaced(tmp_path, run_cli):
    out = tmp_path / "res"
    assert _run(run_cli, out).returncode == 0
    (out / "thesis.tex").write_text("important")
    (out / "mydata").mkdir()
    (out / "mydata" / "x").write_text("1")
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    for force in ([], ["--force"]):                # --force is about -f and --trace only
        done = _run(run_cli, out, *force)
        assert done.returncode == 2
        assert one_error_line(done) == (
            f"error: --out: {out} holds mydata/ and thesis.tex, which netsim did not write "
            f"(replacing the results would delete them); move them elsewhere or choose another "
            f"directory")
        assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
        assert (out / "mydata" / "x").read_text() == "1"
    shutil.move(str(out / "thesis.tex"), tmp_path / "thesis.tex")
    shutil.move(str(out / "mydata"), tmp_path / "mydata")
    assert _run(run_cli, out).returncode == 0       # moved away: the run replaces its results


def test_the_refusal_names_at_most_three_entries_and_what_is_inside_pcap(tmp_path):
    from netsim.results_dir import ResultsDirError, check_destination
    out = tmp_path / "res"
    out.mkdir()
    (out / "summary.json").write_text('{\n  "netsim_version": "1"\n}\n')
    (out / "pcap").mkdir()
    (out / "pcap" / "H1.pcap").write_bytes(b"")
    (out / "pcap" / "notes.txt").write_text("mine")
    with pytest.raises(ResultsDirError) as caught:
        check_destination(out)
    assert str(caught.value) == (f"{out} holds pcap/notes.txt, which netsim did not write "
                                 f"(replacing the results would delete it); move it elsewhere or "
                                 f"choose another directory")
    for name in ("a.txt", "b.txt", ".notes", "z"):
        (out / name).write_text("mine")
    with pytest.raises(ResultsDirError, match=r" holds \.notes, a\.txt, b\.txt and 2 more, which "
                                              r"netsim did not write \(replacing the results "
                                              r"would delete them\); move them elsewhere"):
        check_destination(out)


@pytest.mark.slow                 # a run with every output: figures, report, captures, iperf3.json
def test_every_file_a_run_writes_is_known_as_ours(tmp_path, run_cli):
    """A run with every output (figures, --check, --report, captures and their sequence plots,
    --iperf-json) into the same directory twice: what it wrote is never taken for the user's."""
    for module in ("matplotlib", "plotly", "dpkt"):
        pytest.importorskip(module)
    from netsim.results_dir import RUN_FILES, foreign_entries
    out = tmp_path / "res"
    args = ["--duration", "3", "--quiet", "--check", "--report", "--pcap", "--pcap-links",
            "--iperf-json", "--out", out]
    for _ in range(2):
        done = run_cli(ROOT / "topologies" / "test_case_1.json", *args)
        assert done.returncode in (0, 1), done.stderr          # (1: off its model: still written)
        assert foreign_entries(out) == []
    names = {p.name for p in out.iterdir()}
    assert {"summary.json", "check.json", "predictions.csv", "report.html", "iperf3.json",
            "links.png", "pcap"} <= names and any(n.startswith("seq_") for n in names)
    (out / "notes.txt").write_text("mine")
    (out / ".summary.json.partial-1-x").write_text("a killed write")      # ours: no refusal
    assert foreign_entries(out) == ["notes.txt"]
    from netsim.iperf_json import IPERF_FILE
    from plot_tool.fct_data import FCT_FILENAME
    from plot_tool.report import REPORT_FILE
    from plot_tool.routes_data import ROUTING_FILENAME
    from plot_tool.schema import CHECK_FILE, SUMMARY_FILE, TABLES
    from plot_tool.series import FLOWS_FIGURE, HOSTS_FIGURE, LINKS_FIGURE
    written = {IPERF_FILE, FCT_FILENAME, REPORT_FILE, ROUTING_FILENAME, CHECK_FILE, SUMMARY_FILE,
               *(f"{name}.csv" for name in TABLES),
               *(figure.filename for figure in (FLOWS_FIGURE, HOSTS_FIGURE, LINKS_FIGURE))}
    assert written <= RUN_FILES


def test_the_api_refuses_a_results_directory_holding_the_users_files(tmp_path):
    from netsim import simulate
    from netsim.results_dir import ResultsDirError
    from topologies.loader import load_topology
    results = simulate(load_topology(TC0), duration_s=0.5)
    out = tmp_path / "api"
    results.write(out)
    (out / "thesis.tex").write_text("important")
    with pytest.raises(ResultsDirError, match=r"holds thesis\.tex, which netsim did not write"):
        results.write(out)
    assert (out / "thesis.tex").read_text() == "important"


# -- a sweep directory: only the sweep's own files are removed -----------------------------------

@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_a_sweep_never_removes_the_users_files(tmp_path, run_cli):
    def sweep(values, name):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"name": name, "topology": "test_case_0",
                                    "parameters": {"flows.F1.data_mb": values},
                                    "duration_s": 0.5, "metrics": ["end_time_s"]}))
        return path

    out = tmp_path / "sw"
    assert run_cli("sweep", sweep([0.1, 0.2], "a"), "--out", out, "--quiet",
                   "--no-plots").returncode == 0
    (out / "notes.txt").write_text("mine")
    (out / "runs" / "mine.json").write_text("{}")
    done = run_cli("sweep", sweep([0.1], "a"), "--out", out, "--quiet", "--no-plots")
    assert done.returncode == 0, done.stderr           # one run fewer: its record pruned
    assert len([p for p in (out / "runs").iterdir() if p.name != "mine.json"]) == 1
    done = run_cli("sweep", sweep([0.1], "b"), "--out", out, "--quiet", "--no-plots", "--force")
    assert done.returncode == 0, done.stderr           # another sweep replaces the first
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "runs" / "mine.json").read_text() == "{}"


# -- named pipes and devices where a results or sweep directory's files are ----------------------

@pytest.mark.parametrize("name", ["summary.json"])
def test_a_named_pipe_in_a_results_directory_is_not_read(tmp_path, run_cli, name):
    """A FIFO (or a link to /dev/zero) named summary.json: the run refuses to replace the
    directory, `plot` refuses to read it, in one line each, without blocking (before: both
    hung on the pipe)."""
    out = tmp_path / "r"
    out.mkdir()
    os.mkfifo(out / name)
    done = run_cli(TC0, "--duration", "0.2", "--no-plots", "--out", out, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = run_cli("plot", out, timeout=60)
    assert done.returncode == 2
    one_error_line(done)
    zero = tmp_path / "z"
    zero.mkdir()
    (zero / name).symlink_to("/dev/zero")
    done = run_cli("plot", zero, timeout=60)
    assert done.returncode == 2
    one_error_line(done)


def test_a_named_pipe_in_a_sweep_directory_is_not_read(tmp_path, run_cli):
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps({"name": "s", "topology": "test_case_0", "duration_s": 0.2,
                                 "parameters": {"links.L1.delay_ms": [5]},
                                 "metrics": ["flows.F1.goodput_mbps"]}))
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "sweep.json")
    (out / "results.csv").write_text("")
    done = run_cli("sweep", sweep, "--out", out, "--no-plots", timeout=60)
    assert done.returncode == 2
    one_error_line(done)


def test_what_is_not_a_file_is_named_for_what_it_is(tmp_path, run_cli):
    """A named pipe given as --plugin, or in place of a results file, is said to be one (before:
    "no such file" and "missing")."""
    pipe = tmp_path / "p.py"
    os.mkfifo(pipe)
    done = run_cli(TC0, "--plugin", pipe, "--no-plots", "--out", tmp_path / "o", timeout=60)
    assert done.returncode == 2
    assert one_error_line(done).endswith(f"--plugin {pipe}: a named pipe, not a Python file")
    out = tmp_path / "r"
    assert run_cli(TC0, "--duration", "0.3", "--no-plots", "--quiet", "--out", out,
                   timeout=60).returncode == 0
    (out / "links.csv").unlink()
    os.mkfifo(out / "links.csv")
    done = run_cli("plot", out, timeout=60)
    assert done.returncode == 2
    assert one_error_line(done).endswith("links.csv: a named pipe, not a file netsim wrote")
