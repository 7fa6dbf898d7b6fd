"""Host captures (--pcap) read by tshark, as a student would read them in Wireshark: on the
sender's capture tshark's retransmissions equal summary.json's, no ACK is flagged, duplicate
ACKs and SACK blocks are plausible, and its ACK RTTs agree with netsim's RTT.

tshark (Debian's `tshark` package) is installed by .ci/run; without it these tests fail with
the command to install it (they are never skipped)."""
from __future__ import annotations

import bisect
import json
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest

from netsim.cli import main

ROOT = Path(__file__).resolve().parent.parent


FIELDS = ("tcp.srcport", "tcp.dstport", "tcp.len", "tcp.seq_raw", "tcp.ack_raw",
          "tcp.analysis.retransmission", "tcp.analysis.fast_retransmission",
          "tcp.analysis.out_of_order", "tcp.analysis.duplicate_ack", "tcp.options.sack_le",
          "tcp.analysis.ack_rtt", "tcp.options.timestamp.tsval", "tcp.options.timestamp.tsecr")


@pytest.fixture(scope="module")
def tshark():
    path = shutil.which("tshark")
    if path is None:
        pytest.fail("tshark is not installed: apt-get install -y tshark (.ci/run installs it)")
    return path


def packets(tshark, pcap):
    """One dict per TCP packet of `pcap`, the fields tshark's analysis gives."""
    command = [tshark, "-r", str(pcap), "-Y", "tcp", "-T", "fields", "-E", "separator=\t",
               "-E", "occurrence=f"]
    for field in FIELDS:
        command += ["-e", field]
    lines = subprocess.run(command, capture_output=True, text=True, check=True).stdout.splitlines()
    return [dict(zip(FIELDS, line.split("\t"))) for line in lines]


def analyse(rows, port):
    """tshark's figures for the flow whose sender uses `port`, at the sender's capture."""
    data = [r for r in rows if r["tcp.srcport"] == str(port)]
    acks = [r for r in rows if r["tcp.dstport"] == str(port)]
    retransmitted = sorted({int(r["tcp.seq_raw"]) for r in data if r["tcp.analysis.retransmission"]})
    rtts = [float(r["tcp.analysis.ack_rtt"]) * 1e3 for r in acks if r["tcp.analysis.ack_rtt"]]
    # Karn's rule, as netsim applies it: no sample from an ACK that newly acknowledges a
    # retransmitted segment (tshark times it from the first transmission of the highest
    # segment it covers)
    karn, previous = [], 0
    for r in acks:
        ack = int(r["tcp.ack_raw"])
        covers = bisect.bisect_left(retransmitted, ack) > bisect.bisect_left(retransmitted, previous)
        if r["tcp.analysis.ack_rtt"] and not covers:
            karn.append(float(r["tcp.analysis.ack_rtt"]) * 1e3)
        previous = max(previous, ack)
    return {
        "data": len(data), "acks": len(acks),
        "retransmissions": sum(1 for r in data if r["tcp.analysis.retransmission"]),
        "fast_retransmissions": sum(1 for r in data if r["tcp.analysis.fast_retransmission"]),
        "flagged_acks": sum(1 for r in acks if r["tcp.analysis.retransmission"]
                            or r["tcp.analysis.out_of_order"]),
        "acks_with_payload": sum(1 for r in acks if r["tcp.len"] != "0"),
        "dupacks": sum(1 for r in acks if r["tcp.analysis.duplicate_ack"]),
        "sacks": sum(1 for r in acks if r["tcp.options.sack_le"]),
        "rtt_mean_ms": statistics.mean(rtts) if rtts else None,
        "rtt_median_ms": statistics.median(rtts) if rtts else None,
        "rtt_karn_mean_ms": statistics.mean(karn) if karn else None,
        "timestamps": all(r["tcp.options.timestamp.tsval"] for r in data + acks),
    }


def check_flow(t, flow, base_rtt_ms):
    assert t["retransmissions"] == flow["retransmissions"]
    assert t["data"] == flow["packets_sent"]           # every data packet the sender sent
    assert t["flagged_acks"] == 0 and t["acks_with_payload"] == 0
    assert t["timestamps"]
    # a fast retransmit follows three duplicate ACKs, each carrying the block that triggered it
    assert 3 * t["fast_retransmissions"] <= t["dupacks"] <= t["acks"]
    assert t["sacks"] >= t["dupacks"]
    netsim = flow["avg_rtt_ms"]
    assert abs(t["rtt_karn_mean_ms"] - netsim) <= 0.05 * netsim
    assert abs(t["rtt_median_ms"] - netsim) <= 0.15 * netsim
    assert t["rtt_mean_ms"] >= t["rtt_karn_mean_ms"] and min(t["rtt_mean_ms"], netsim) >= base_rtt_ms


@pytest.mark.slow   # a whole simulation of several seconds: CI runs it with -m slow
def test_test_case_0_reno_sender_capture(root, tmp_path, tshark, quoted):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--algorithm", "reno", "--pcap",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    flow = summary["flows"]["F1"]
    assert flow["retransmissions"] > 100
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["H1.pcap", "H2.pcap"]
    t = analyse(packets(tshark, out / "pcap" / "H1.pcap"), 10000)
    check_flow(t, flow, flow["min_rtt_ms"])
    counts = (flow["retransmissions"], t["retransmissions"])
    assert quoted(r"test case 0 with Reno: (\d+) and (\d+)", "README.md",
                  "docs/outputs.md") == [counts, counts]
    assert quoted(r"SACK block \((\d+) on test case 0", "docs/outputs.md") == [(t["dupacks"],)]
    # the receiver's capture: the same ACKs, never flagged; what the buffer dropped is missing
    r = analyse(packets(tshark, out / "pcap" / "H2.pcap"), 10000)
    assert r["acks"] == t["acks"] and r["flagged_acks"] == 0 and r["dupacks"] == t["dupacks"]
    assert r["data"] == flow["packets_sent"] - summary["links"]["L1"]["directions"]["H1->H2"]["drops"]


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_parking_lot_every_sender(root, tmp_path, tshark, quoted):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "parking_lot.json"), "--algorithm", "reno", "--pcap",
                 "--duration", "20", "--no-plots", "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    checked = 0
    for k, flow in enumerate(summary["flows"].values()):
        rows = packets(tshark, out / "pcap" / f"{flow['src']}.pcap")
        check_flow(analyse(rows, 10000 + k), flow, flow["min_rtt_ms"])
        checked += flow["retransmissions"] > 0
    assert checked == len(summary["flows"])
    assert quoted(r"parking lot, 20 s, Reno: (\d+)/(\d+)/(\d+)/(\d+) and the same",
                  "docs/outputs.md") == [tuple(f["retransmissions"]
                                               for f in summary["flows"].values())]


SHIPPED = sorted(p for p in (ROOT / "topologies").glob("*.json")) + sorted(
    p for p in (ROOT / "topologies" / "examples").glob("*.json") if not p.name.startswith("dc_"))


@pytest.mark.slow
@pytest.mark.parametrize("topology", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_topology_reads_without_false_retransmissions(topology, tmp_path, tshark):
    """Each shipped topology (its own algorithms, 15 s): on every bulk flow's sender capture
    tshark counts summary.json's retransmissions and flags no ACK."""
    out = tmp_path / "out"
    assert main([str(topology), "--pcap", "--duration", "15", "--no-plots", "--quiet",
                 "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    for k, flow in enumerate(summary["flows"].values()):
        if flow.get("kind", "bulk") != "bulk" or not flow["packets_sent"]:
            continue
        t = analyse(packets(tshark, out / "pcap" / f"{flow['src']}.pcap"), 10000 + k)
        assert t["retransmissions"] == flow["retransmissions"]
        assert t["flagged_acks"] == 0 and t["acks_with_payload"] == 0


def test_a_fast_retransmission_soon_after_new_data_reads_as_out_of_order(tshark, tmp_path,
                                                                         quoted):
    """Wireshark calls a segment below the highest sequence "Out-Of-Order" when it comes within
    its threshold (3 ms without a handshake) of the highest one: on the sender's capture the
    retransmissions are those and its retransmissions together (docs/outputs.md)."""
    topology = tmp_path / "dbd.json"
    assert main(["generate", "dumbbell", "--pairs", "2", "--flows", "2", "--long-lived",
                 "--duration", "10", "--algorithm", "dctcp", "--mark-k-kb", "30",
                 "-o", str(topology)]) == 0
    out = tmp_path / "r"
    assert main([str(topology), "--duration", "2", "--pcap", "--no-plots", "--quiet", "-F", "F1",
                 "--out", str(out)]) == 0
    flow = json.loads((out / "summary.json").read_text())["flows"]["F1"]
    rows = packets(tshark, out / "pcap" / "S1.pcap")
    data = [r for r in rows if r["tcp.len"] not in ("", "0")]
    retransmissions = sum(1 for r in data if r["tcp.analysis.retransmission"])
    out_of_order = sum(1 for r in data if r["tcp.analysis.out_of_order"])
    assert retransmissions + out_of_order == flow["retransmissions"] > 0
    assert quoted(r"DCTCP dumbbell: (\d+) retransmissions and (\d+) out-of-order, netsim "
                  r"(\d+)", "docs/outputs.md") == [(retransmissions, out_of_order,
                                                   flow["retransmissions"])]
