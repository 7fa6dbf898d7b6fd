"""The console table of runs with rate sources (cbr, onoff) and workloads: a rate source has no
transport, so its row shows `-` for retx and RTOs and its lost packets beside `in order`, never a
transport's zeros that would read as loss-free; a table with no row is not printed (no flow
header for a run of workloads only, no link header without a link direction)."""
from __future__ import annotations

import json

import pytest

from netsim.cli import main
from netsim.console import format_summary


def row(kind, lost, **extra):
    return {"algorithm": kind, "kind": kind, "finish_s": 30.0, "goodput_mbps": 4.0,
            "avg_rtt_ms": None, "retransmissions": 0, "timeouts": 0, "in_order": True,
            "packets_lost": lost, **extra}


def summary(flows, workloads=None, links=None):
    out = {"topology": "t", "units": {"system": "si"}, "stop_detail": "all flows completed",
           "end_time_s": 30.0, "events": 1, "wall_time_s": 0.1, "flows": flows,
           "links": links or {}}
    if workloads:
        out["workloads"] = workloads
    return out


def flow_row(text: str, fid: str) -> list:
    return next(line.split() for line in text.splitlines() if line.split()[:1] == [fid])


@pytest.mark.parametrize("kind", ["cbr", "onoff"])
def test_a_rate_source_that_lost_packets_says_how_many(kind):
    text = format_summary(summary({"S": row(kind, 40)}), [])
    assert flow_row(text, "S")[5:] == ["-", "-", "yes", "(40", "lost)"]


def test_a_rate_source_without_losses_has_no_count_and_no_transport_zeros():
    text = format_summary(summary({"S": row("cbr", 0)}), [])
    assert flow_row(text, "S")[5:] == ["-", "-", "yes"]


def test_a_tcp_flow_keeps_its_retransmissions_and_timeouts():
    tcp = dict(row("reno", None), kind="bulk", retransmissions=7, timeouts=1, avg_rtt_ms=20.0)
    text = format_summary(summary({"F1": tcp}), [])
    assert flow_row(text, "F1")[5:] == ["7", "1", "yes"]


def test_the_cbr_of_the_shipped_example_shows_its_losses(tmp_path, capsys, root):
    out = tmp_path / "o"
    assert main([str(root / "topologies" / "examples" / "cbr_beside_reno.json"), "--no-plots",
                 "--out", str(out)]) == 0
    lost = json.loads((out / "summary.json").read_text())["flows"]["CBR"]["packets_lost"]
    assert lost > 0
    assert flow_row(capsys.readouterr().out, "CBR")[5:] == ["-", "-", "yes", f"({lost}", "lost)"]


def test_a_run_of_workloads_only_prints_no_flow_header(tmp_path, capsys, root):
    assert main([str(root / "topologies" / "examples" / "websearch.json"), "-l", "L",
                 "--duration", "2", "--no-plots", "--out", str(tmp_path / "o")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not any(line.split()[:2] == ["flow", "algorithm"] for line in lines)
    assert [line.split()[0] for line in lines if line.split()[:1] in (["workload"], ["W"])] == [
        "workload", "W"]
    assert any(line.split()[:2] == ["link", "direction"] for line in lines)


def test_no_link_direction_means_no_link_header():
    text = format_summary(summary({"S": row("cbr", 0)}), [])
    assert "direction" not in text
    assert text.splitlines()[-1].split()[:1] == ["S"]
