"""What a newcomer meets first on the command line (issue 23): the program's name in --help,
shipped topologies by name from any directory, a line from `convert`, console columns that fit
the ids with finish times to the microsecond, and install hints that point at this project."""
from __future__ import annotations

import json
import subprocess
import sys

from netsim.cli import main
from netsim.console import format_summary

ROOT_LEGACY = "tests/data/legacy/test_case_0.json"


def test_help_names_the_program(run_cli):
    assert run_cli("--help").stdout.startswith("usage: initializer.py TOPOLOGY")
    done = subprocess.run([sys.executable, "-m", "netsim", "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.startswith("usage: netsim TOPOLOGY") and "netsim sweep SWEEP" in done.stdout
    report = subprocess.run([sys.executable, "-m", "netsim", "report", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert report.stdout.startswith("usage: netsim report")


def test_a_shipped_topology_by_name_from_any_directory(run_cli, tmp_path):
    done = run_cli("test_case_0", "--duration", "1", "--no-plots", "--quiet", "--out",
                   tmp_path / "r", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["topology"] == "test_case_0"
    # a file of that name in the working directory comes first
    mine = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert mine["source"].endswith("test_case_0.json")
    local = tmp_path / "test_case_0"
    local.write_text("{not json")
    bad = run_cli("test_case_0", "--quiet", "--out", tmp_path / "r2", cwd=tmp_path)
    assert bad.returncode == 2 and "test_case_0" in bad.stderr.strip().splitlines()[-1]
    unknown = run_cli("no_such_case", "--quiet", cwd=tmp_path)
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1


def test_convert_says_what_it_wrote(run_cli, root, tmp_path):
    out = tmp_path / "new.json"
    done = run_cli("convert", root / ROOT_LEGACY, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"converted {root / ROOT_LEGACY} to {out} (netsim's format)\n"
    to_stdout = run_cli("convert", root / ROOT_LEGACY)
    assert json.loads(to_stdout.stdout)["name"]            # the topology and nothing else


def test_console_columns_fit_the_ids_and_finish_times_have_microseconds():
    flow = {"algorithm": "cubic", "finish_s": 12.3456789, "goodput_mbps": 1.0,
            "avg_rtt_ms": 10.0, "retransmissions": 0, "timeouts": 0, "in_order": True}
    direction = {"avg_rate_mbps": 1.0, "utilization": 0.1, "avg_buffer_kb": 0.0,
                 "avg_buffer_pkts": 0.0, "drops": 0, "impairment_drops": 0, "failure_drops": 0}
    summary = {"topology": "t", "units": {"system": "si"}, "stop_detail": "all flows completed",
               "end_time_s": 30.0, "events": 1, "wall_time_s": 0.1,
               "flows": {"F1_cubiccubic": flow, "F2": dict(flow, finish_s=None)},
               "links": {"access_link_long": {"queue": "droptail",
                                              "directions": {"host_one->router": direction}}}}
    lines = format_summary(summary, ["access_link_long"]).splitlines()
    row = next(line for line in lines if line.startswith("F1_cubiccubic"))
    assert row.split()[:3] == ["F1_cubiccubic", "cubic", "12.345679"]
    link = next(line for line in lines if line.startswith("access_link_long"))
    assert link.split()[:3] == ["access_link_long", "host_one->router", "1.000"]


def test_missing_extras_point_at_this_project(root, tmp_path, capsys, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("plotly", "dpkt") else real(name, *a))
    topology = str(root / "topologies" / "test_case_0.json")
    assert main([topology, "--report", "--quiet", "--out", str(tmp_path / "a")]) == 2
    assert "pip install -e '.[report]' in the netsim checkout" in capsys.readouterr().err
    assert main([topology, "--pcap", "--quiet", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --pcap: packet captures need dpkt; install it with "
                   "pip install -e '.[pcap]' in the netsim checkout (or pip install dpkt)\n")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
