"""--pcap / --pcap-links (netsim/pcap.py): captures read back with dpkt and matched against the
summary: host captures (both directions of a host's interface), link-direction captures, the
frames' sizes (no ACK payload), TCP timestamps, SACK blocks and file names."""
from __future__ import annotations

import collections
import json

import pytest

dpkt = pytest.importorskip("dpkt")

from netsim.cli import main  # noqa: E402
from netsim.pcap import DATA_HEADERS, host_capture_name  # noqa: E402


def read(path):
    with open(path, "rb") as fh:
        return [(ts, dpkt.ethernet.Ethernet(buf)) for ts, buf in dpkt.pcap.Reader(fh)]


def options(tcp):
    return dict(dpkt.tcp.parse_opts(tcp.opts))


def tcp_payload(frame) -> int:
    """The TCP payload length the headers declare (IP total length - IP and TCP headers)."""
    ip = frame.data
    return ip.len - ip.hl * 4 - ip.data.off * 4


@pytest.fixture(scope="module")
def tc0_hosts(tmp_path_factory):
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("pcap") / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--algorithm", "reno", "--pcap",
                 "--duration", "12", "--no-plots", "--quiet", "--out", str(out)]) == 0
    return out, json.loads((out / "summary.json").read_text())


def test_host_capture_has_both_directions_at_the_host(tc0_hosts):
    out, summary = tc0_hosts
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["H1.pcap", "H2.pcap"]
    flow = summary["flows"]["F1"]
    frames = read(out / "pcap" / "H1.pcap")
    data = [(ts, f) for ts, f in frames if f.data.data.sport == 10000]
    acks = [(ts, f) for ts, f in frames if f.data.data.dport == 10000]
    assert len(data) + len(acks) == len(frames)
    assert len(data) == flow["packets_sent"]           # every packet sent, when it was sent
    times = [ts for ts, _ in frames]
    assert times == sorted(times) and times[0] == 1.0   # F1 starts at 1 s: its first packet
    # the receiver's capture: what the buffer did not drop (minus what is still on the wire at
    # the end), and every ACK it sent (some of which are still on their way to H1)
    at_receiver = read(out / "pcap" / "H2.pcap")
    dropped = summary["links"]["L1"]["directions"]["H1->H2"]["drops"]
    arrived = sum(1 for _, f in at_receiver if f.data.data.dport == 5001)
    assert flow["packets_sent"] - dropped - 100 <= arrived <= flow["packets_sent"] - dropped
    sent_acks = sum(1 for _, f in at_receiver if f.data.data.sport == 5001)
    assert sent_acks == arrived and len(acks) <= sent_acks


def test_frames_carry_the_model_sizes(tc0_hosts):
    out, _ = tc0_hosts
    frames = read(out / "pcap" / "H1.pcap")
    for ts, f in frames:
        ip, tcp = f.data, f.data.data
        opts = options(tcp)
        tsval, tsecr = (int.from_bytes(opts[dpkt.tcp.TCP_OPT_TIMESTAMP][i:i + 4], "big")
                        for i in (0, 4))
        if tcp.sport == 10000:                          # data: 1024 bytes, 972 of payload
            assert ip.len == 1024 and tcp_payload(f) == 1024 - DATA_HEADERS
            assert tcp.seq % (1024 - DATA_HEADERS) == 0
            assert tsval == round(ts * 1e6) // 1000    # sent now, by the host's ms clock
        else:                                           # ACK: 64 bytes, never payload
            assert ip.len == 64 and tcp_payload(f) == 0 and tcp.off == 11
            assert tsecr <= tsval <= round(ts * 1e6) // 1000
    sacked = [f for _, f in frames if dpkt.tcp.TCP_OPT_SACK in options(f.data.data)]
    assert sacked                                       # SACK blocks after losses
    for f in sacked:
        block = options(f.data.data)[dpkt.tcp.TCP_OPT_SACK]
        left, right = int.from_bytes(block[:4], "big"), int.from_bytes(block[4:8], "big")
        assert right - left == 1024 - DATA_HEADERS and left > f.data.data.ack


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_data_echoes_the_last_ack_and_acks_echo_the_data(tc0_hosts):
    out, _ = tc0_hosts
    last_ack_tsval = 0
    sent_tsval = {}
    for _ts, f in read(out / "pcap" / "H1.pcap"):
        tcp = f.data.data
        tsval, tsecr = (int.from_bytes(options(tcp)[dpkt.tcp.TCP_OPT_TIMESTAMP][i:i + 4], "big")
                        for i in (0, 4))
        if tcp.sport == 10000:
            assert tsecr == last_ack_tsval
            sent_tsval.setdefault(tcp.seq, set()).add(tsval)
        else:
            last_ack_tsval = tsval
            assert any(tsecr in values for values in sent_tsval.values())


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_last_ack_covers_the_whole_transfer(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--algorithm", "reno", "--pcap",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    data_bytes = summary["flows"]["F1"]["data_bytes"]
    packets = -(-data_bytes // 1024)
    last = data_bytes - (packets - 1) * 1024
    frames = read(out / "pcap" / "H1.pcap")
    acks = [f.data.data.ack for _, f in frames if f.data.data.dport == 10000]
    assert acks[-1] == (packets - 1) * (1024 - DATA_HEADERS) + last - DATA_HEADERS


def test_link_captures_stay_an_option(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--algorithm", "reno",
                 "--pcap-links", "--duration", "12", "--no-plots", "--quiet",
                 "--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["L1_H1-H2.pcap", "L1_H2-H1.pcap"]
    summary = json.loads((out / "summary.json").read_text())
    directions = summary["links"]["L1"]["directions"]
    data = read(out / "pcap" / "L1_H1-H2.pcap")
    acks = read(out / "pcap" / "L1_H2-H1.pcap")
    flow = summary["flows"]["F1"]
    seqs = collections.Counter(frame.data.data.seq for _, frame in data)
    # what the buffer dropped never reached the far end; each packet once per transmission
    assert len(data) <= directions["H1->H2"]["packets_transmitted"]
    assert sum(seqs.values()) + directions["H1->H2"]["drops"] >= flow["packets_sent"] - 100
    assert len(acks) <= directions["H2->H1"]["packets_transmitted"]
    assert all(tcp_payload(f) == 0 for _, f in acks)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_cbr_is_udp_and_only_links_of_interest_are_captured(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "examples" / "cbr_beside_reno.json"), "-l", "L",
                 "--pcap-links", "--no-plots", "--quiet", "--out", str(out)]) == 0
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


def test_host_captures_of_the_flows_of_interest_only(root, tmp_path):
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_2.json"), "-F", "F2", "--pcap",
                 "--duration", "2", "--no-plots", "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    flow = summary["flows"]["F2"]
    assert sorted(p.name for p in (out / "pcap").iterdir()) == \
        sorted([host_capture_name(flow["src"]), host_capture_name(flow["dst"])])


def test_host_file_names_are_one_to_one():
    names = {host_capture_name(h) for h in ("H_1", "H 1", "H%5F1", "H1", "h1")}
    assert len(names) == 5 and all("_" not in n and "-" not in n for n in names)


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
    from plot_tool.figure_files import written_by_netsim
    assert written_by_netsim(out / "seq_F1.png")       # so `netsim plot` may draw it again
    seq = (out / "seq_F1.png").read_bytes()
    assert main(["plot", str(out), "--quiet"]) == 0
    assert (out / "seq_F1.png").read_bytes() == seq


def _drawn(monkeypatch) -> list:
    """The figures `make_seq_plots` saves, kept for inspection."""
    from matplotlib.figure import Figure
    figures: list = []
    saved = Figure.savefig
    monkeypatch.setattr(Figure, "savefig",
                        lambda self, *args, **kwargs: (figures.append(self),
                                                       saved(self, *args, **kwargs)))
    return figures


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_the_sequence_axis_is_in_the_runs_units(root, tmp_path, monkeypatch):
    """Test case 0 moves 20 MB in binary units: the axis ends at 20 binary MB of payload (less
    the headers a capture does not count as payload), not at 20.97 decimal MB."""
    from plot_tool.seqplot import make_seq_plots
    out = tmp_path / "out"
    assert main([str(root / "topologies" / "test_case_0.json"), "--algorithm", "reno", "--pcap",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    figures = _drawn(monkeypatch)
    make_seq_plots(out)
    (ax,) = figures[0].axes
    assert ax.get_ylabel() == "sequence (MB of TCP payload as captured, binary)"
    top = max(max(line.get_ydata()) for line in ax.get_lines())
    assert 20 * (1024 - DATA_HEADERS) / 1024 - 0.01 < top <= 20.0


def test_a_flow_that_sent_nothing_gets_a_note_not_an_empty_legend(tmp_path, monkeypatch):
    import warnings

    from plot_tool.seqplot import make_seq_plots
    topology = {"hosts": ["H1", "H2"], "duration_s": 1,
                "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 5,
                           "buffer_kb": 64}],
                "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1, "start_s": 5}]}
    path = tmp_path / "late.json"
    path.write_text(json.dumps(topology))
    out = tmp_path / "out"
    assert main([str(path), "--pcap", "--no-plots", "--quiet", "--out", str(out)]) == 0
    figures = _drawn(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # (matplotlib warned of an empty legend)
        make_seq_plots(out)
    (ax,) = figures[0].axes
    assert ax.get_legend() is None
    assert [t.get_text() for t in ax.texts] == ["no packets captured: the flow sent nothing"]


def _one_link(tmp_path, data_bytes: int, **extra) -> str:
    """One 1 Mb/s link H1 -> H2 without loss, a Reno flow of 500 bytes, packets of `data_bytes`."""
    topology = {"packet_bytes": {"data": data_bytes, **extra}, "hosts": ["H1", "H2"],
                "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 1, "delay_ms": 5,
                           "buffer_kb": 100}],
                "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.0005}]}
    path = tmp_path / f"size_{data_bytes}.json"
    path.write_text(json.dumps(topology))
    return str(path)


@pytest.mark.parametrize("data_bytes", [30, 52, 53])
def test_packets_of_one_payload_byte_count_one_sequence_number_each(tmp_path, data_bytes):
    """A data packet of 52 bytes or less carries 1 payload byte in the capture (docs/outputs.md),
    so packet k starts at k (its sequence numbers stood still at 52 bytes and ran backwards
    below)."""
    out = tmp_path / "out"
    assert main([_one_link(tmp_path, data_bytes), "--pcap", "--no-plots", "--quiet",
                 "--out", str(out)]) == 0
    data = [f.data.data for _, f in read(out / "pcap" / "H1.pcap") if f.data.data.sport == 10000]
    payload = max(data_bytes - DATA_HEADERS, 1)
    packets = -(-500 // data_bytes)                    # (a packet's size counts its headers)
    assert len(data) == packets                        # (no loss: every packet once)
    assert [tcp.seq for tcp in data] == [k * payload for k in range(packets)]
    acks = [f.data.data.ack for _, f in read(out / "pcap" / "H2.pcap")
            if f.data.data.sport == 5001]
    last = 500 - (packets - 1) * data_bytes
    assert acks == sorted(acks) and acks[-1] == data[-1].seq + max(last - DATA_HEADERS, 1)


@pytest.mark.parametrize("option", ["--pcap", "--pcap-links"])
@pytest.mark.parametrize("field", ["data", "ack"])
def test_packets_larger_than_an_ipv4_packet_are_refused_in_one_line(tmp_path, capsys, option,
                                                                    field):
    sizes = {"data": 1500, "ack": 40, field: 70000}
    path = _one_link(tmp_path, sizes.pop("data"), **sizes)
    out = tmp_path / "out"
    assert main([path, option, "--no-plots", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: {option}: {path}: packet_bytes.{field} is 70000 bytes, and a capture "
                   f"holds IPv4 packets of at most 65535 bytes (a 16-bit total length); give "
                   f"smaller packets, or run without captures")
    assert not out.exists()
    assert main([path, "--no-plots", "--quiet", "--out", str(out)]) == 0   # without: it runs


def test_the_api_refuses_packets_larger_than_an_ipv4_packet(tmp_path):
    from netsim import load_topology
    from netsim.pcap import install_captures, install_host_captures
    from netsim.run import Run
    network = Run(load_topology(_one_link(tmp_path, 65536))).network
    for install in (install_captures, install_host_captures):
        with pytest.raises(ValueError, match="packet_bytes.data is 65536 bytes"):
            install(network, tmp_path / "pcap")


def _checksum(data: bytes) -> int:
    """RFC 1071's one's-complement sum, complemented (an independent reference)."""
    if len(data) % 2:
        data += b"\0"
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def test_tcp_checksums_are_right_and_tcp_is_dont_fragment(tc0_hosts):
    """Every TCP segment carries its checksum (RFC 9293 §3.1), over the segment as it was on
    the wire, its payload (not stored) taken as zeros: a pure ACK, stored whole, validates in
    Wireshark (it was 0, "Bad" with checksum validation on; acceptance test Z10). IPv4 says
    Don't Fragment, as Linux's TCP does."""
    out, _ = tc0_hosts
    checked = collections.Counter()
    for _, f in read(out / "pcap" / "H1.pcap")[:400] + read(out / "pcap" / "H2.pcap")[:400]:
        ip, tcp = f.data, f.data.data
        assert ip.df == 1 and ip.off & 0x1FFF == 0
        header = bytes(tcp)[:tcp.off * 4]
        length = ip.len - ip.hl * 4
        whole = header[:16] + b"\0\0" + header[18:] + b"\0" * (length - len(header))
        pseudo = ip.src + ip.dst + bytes([0, 6]) + length.to_bytes(2, "big")
        assert tcp.sum == _checksum(pseudo + whole)
        checked["ack" if length == len(header) else "data"] += 1
    assert checked["ack"] > 100 and checked["data"] > 100
