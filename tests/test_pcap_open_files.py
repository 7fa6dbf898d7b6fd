"""Captures keep one file open each: a run makes room for them or says in one line what to do.

A k=16 fat tree's --pcap-links (6 144 link directions) or a k=24 fabric's --pcap at the usual
limit of 1 024 open files stopped with a traceback and left its hidden staging directory with
thousands of files (acceptance testing at scale)."""
from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dpkt")

ROOT = Path(__file__).resolve().parent.parent


def _run(tmp_path: Path, soft: int, hard: int, *options: str):
    topology = tmp_path / "ft4.json"
    if not topology.exists():
        subprocess.run([sys.executable, str(ROOT / "initializer.py"), "generate", "fat-tree",
                        "--k", "4", "-o", str(topology)], check=True, capture_output=True)

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return subprocess.run([sys.executable, str(ROOT / "initializer.py"), str(topology),
                           "--no-plots", "--quiet", "--out", str(tmp_path / "out"), *options],
                          capture_output=True, text=True, preexec_fn=limit, timeout=120)


def test_more_captures_than_the_hard_limit_is_one_line_and_leaves_nothing(tmp_path):
    done = _run(tmp_path, 40, 40, "--pcap-links")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (
        "error: --pcap-links: 96 capture files would be open at once, and this process may "
        "open 40 files (with 64 for the rest of the run): capture fewer (--pcap with -F FLOW "
        "..., --pcap-links with -l LINK ...) or raise the limit (ulimit -n)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ft4.json"]   # no staging left


def test_a_soft_limit_below_the_hard_one_is_raised_for_the_captures(tmp_path):
    done = _run(tmp_path, 40, 4096, "--pcap-links", "--pcap")
    assert done.returncode == 0, done.stderr
    captures = list((tmp_path / "out" / "pcap").iterdir())
    assert len([p for p in captures if "_" in p.name]) == 96 and len(captures) > 96


def test_a_selection_that_fits_runs_under_the_limit(tmp_path):
    done = _run(tmp_path, 70, 70, "--pcap-links", "-l", "h_p0_e0_0-e_p0_0")
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "out" / "pcap").iterdir())) == 2
