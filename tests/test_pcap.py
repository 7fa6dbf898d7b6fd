"""--pcap (netsim/pcap.py): captures read back with dpkt and matched against the summary."""
from __future__ import annotations

import collections
import json

import pytest

dpkt = pytest.importorskip("dpkt")

from netsim.cli import main  # noqa: E402


def read(path):
    with open(path, "rb") as fh:
        return [(ts, dpkt.ethernet.Ethernet(buf)) for ts, buf in dpkt.pcap.Reader(fh)]


def test_capture_matches_the_summary(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--algorithm", "reno", "--pcap",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    directions = summary["links"]["L1"]["directions"]
    data = read(out / "pcap" / "L1_H1-H2.pcap")
    acks = read(out / "pcap" / "L1_H2-H1.pcap")
    assert len(data) == directions["H1->H2"]["packets_transmitted"]
    assert len(acks) == directions["H2->H1"]["packets_transmitted"]
    times = [ts for ts, _ in data]
    assert times == sorted(times) and times[0] >= 1.0                  # F1 starts at 1 s
    seqs = collections.Counter(frame.data.data.seq for _, frame in data)
    mss = 1024 - 40
    assert all(seq % mss == 0 for seq in seqs)
    flow = summary["flows"]["F1"]
    assert len(seqs) == -(-flow["data_bytes"] // 1024)                 # every packet on the wire
    # what the buffer dropped never reached the wire: on it, each packet once per transmission
    assert sum(seqs.values()) == flow["packets_sent"] - directions["H1->H2"]["drops"]
    first = data[0][1].data
    assert first.p == dpkt.ip.IP_PROTO_TCP and first.len == 1024      # full size, truncated frame
    assert acks[-1][1].data.data.ack == (len(seqs)) * mss              # the last cumulative ACK
    assert any(frame.data.data.opts for _, frame in acks)              # SACK blocks after losses


def test_cbr_is_udp_and_only_links_of_interest_are_captured(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "examples" / "cbr_beside_reno.json"), "-l", "L",
                 "--pcap", "--no-plots", "--quiet", "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["L_R1-R2.pcap", "L_R2-R1.pcap"]
    summary = json.loads((out / "summary.json").read_text())
    frames = read(out / "pcap" / "L_R1-R2.pcap")
    udp = sum(1 for _, f in frames if f.data.p == dpkt.ip.IP_PROTO_UDP)
    cbr = summary["flows"]["CBR"]
    assert udp == cbr["packets_sent"] - (summary["links"]["L"]["directions"]["R1->R2"]["drops"]
                                         - (summary["flows"]["F1"]["packets_sent"]
                                            - sum(1 for _, f in frames
                                                  if f.data.p == dpkt.ip.IP_PROTO_TCP)))
    assert len(frames) == summary["links"]["L"]["directions"]["R1->R2"]["packets_transmitted"]


def test_no_capture_without_the_option(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--duration", "2", "--no-plots",
                 "--quiet", "--out", str(out)]) == 0
    assert not (out / "pcap").exists()


def test_time_sequence_plot_per_flow(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--algorithm", "reno", "--pcap",
                 "--duration", "4", "--quiet", "--out", str(out)]) == 0
    assert (out / "seq_F1.png").stat().st_size > 10000
