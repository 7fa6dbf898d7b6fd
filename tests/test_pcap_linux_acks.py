"""The Linux stack's ACKs as the captures show them (netsim/pcap.py, flows/receiver.py
`LinuxReceiver`): TSecr is TS.Recent (RFC 7323 §4.3: constant through duplicate ACKs, never the
receiver's own clock), a duplicate is reported by a D-SACK block first (RFC 2883 §4), and the
first SACK block is the whole contiguous range holding the segment that triggered the ACK
(RFC 2018 §4), checked frame by frame against the data that reached the receiver."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from networks import two_hosts

dpkt = pytest.importorskip("dpkt")

from netsim.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def reordered(tmp_path_factory):
    """One CUBIC flow on the Linux stack with 2 % of the packets reordered by 8 ms (spurious
    retransmissions, so duplicates) and a little loss."""
    topology = two_hosts(rate_mbps=20.0, delay_ms=10.0, buffer_kb=100.0, algorithm="cubic",
                         data_mb=3, transport={"stack": "linux"}, seed=5,
                         impairment={"reorder_rate": 0.02, "reorder_delay_ms": 8.0,
                                     "loss_rate": 0.002})
    directory = tmp_path_factory.mktemp("linux_acks")
    path = directory / "t.json"
    path.write_text(json.dumps(topology))
    out = directory / "out"
    assert main([str(path), "--pcap", "--no-plots", "--quiet", "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text())


def _receiver_view(out):
    """The receiver's capture, in order: ("data", seq, end, tsval) and ("ack", ack, tsval,
    tsecr, blocks)."""
    events = []
    with open(out / "pcap" / "H2.pcap", "rb") as fh:
        for _, buf in dpkt.pcap.Reader(fh):
            ip = dpkt.ethernet.Ethernet(buf).data
            tcp = ip.data
            opts = dict(dpkt.tcp.parse_opts(tcp.opts))
            tsval, tsecr = int.from_bytes(opts[8][:4], "big"), int.from_bytes(opts[8][4:], "big")
            if tcp.dport == 5001:
                length = ip.len - ip.hl * 4 - tcp.off * 4
                events.append(("data", tcp.seq, tcp.seq + length, tsval))
            else:
                raw = opts.get(dpkt.tcp.TCP_OPT_SACK, b"")
                blocks = [(int.from_bytes(raw[i:i + 4], "big"), int.from_bytes(raw[i + 4:i + 8], "big"))
                          for i in range(0, len(raw), 8)]
                events.append(("ack", tcp.ack, tsval, tsecr, blocks))
    return events


def test_sack_blocks_and_tsecr_follow_the_rfcs(reordered):
    out, summary = reordered
    received: set = set()            # segment starts that reached the receiver
    ends: dict = {}
    tsvals: set = set()
    last = None                      # the data segment before the ACK: (start, duplicate)
    previous = None                  # the previous ACK: (ack, tsecr)
    dsacks = duplicates = dupacks = 0
    for event in _receiver_view(out):
        if event[0] == "data":
            _, start, end, tsval = event
            last = (start, start in received)
            duplicates += start in received
            received.add(start)
            ends[start] = end
            tsvals.add(tsval)
            continue
        _, ack, tsval, tsecr, blocks = event
        assert tsecr in tsvals       # an echo of a segment's TSval, never the receiver's clock
        start, duplicate = last
        if duplicate:                # RFC 2883 §4: the D-SACK first
            assert blocks and blocks[0] == (start, ends[start])
            dsacks += 1
            blocks = blocks[1:]
        elif previous is not None and ack == previous[0]:
            # RFC 7323 §4.3: an out-of-order segment does not update TS.Recent
            assert tsecr == previous[1]
            dupacks += 1
        # every block is a maximal contiguous range received above the cumulative ACK, and the
        # first holds the segment that triggered the ACK when it is above it (RFC 2018 §4)
        for left, right in blocks:
            assert ack < left < right and left in received and right not in received
            seg = left
            while seg < right:
                assert seg in received
                seg = ends[seg]
            assert not any(ends.get(s) == left for s in received)   # nothing just before
        if start > ack and not duplicate:
            assert blocks and blocks[0][0] <= start < blocks[0][1]
        assert len(blocks) <= 3
        previous = (ack, tsecr)
    assert dsacks == duplicates > 0 and dupacks > 20
    assert summary["flows"]["F1"]["counters"]["spurious_undo"] > 0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_reads_every_dsack(reordered):
    out, _ = reordered
    count = subprocess.run(["tshark", "-r", str(out / "pcap" / "H1.pcap"), "-Y",
                            "tcp.options.sack.dsack"], capture_output=True, text=True,
                           check=True).stdout.count("\n")
    spurious = subprocess.run(["tshark", "-r", str(out / "pcap" / "H2.pcap"), "-Y",
                               "tcp.analysis.spurious_retransmission"], capture_output=True,
                              text=True, check=True).stdout.count("\n")
    assert count == spurious > 0
