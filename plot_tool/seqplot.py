"""Time-sequence plots of flows from their packet captures (--pcap): seq_<flow>.png.

For each reliable flow whose sender host was captured (--pcap), or else whose first link (the
sender's access link) was (--pcap-links), the plot shows the data packets sent (their starting
byte against the time), the retransmissions among them, the cumulative ACK coming back, and the
SACKed range each ACK reports. Times are those of the capture: sent and received at the sender,
or arrival at the far end of the first link.
"""
from __future__ import annotations

from pathlib import Path

from netsim.pcap import RECEIVER_PORT, _safe, host_capture_name


def _frames(path: Path):
    import dpkt
    with open(path, "rb") as fh:
        for ts, buf in dpkt.pcap.Reader(fh):
            ip = dpkt.ethernet.Ethernet(buf).data
            if isinstance(getattr(ip, "data", None), dpkt.tcp.TCP):
                yield ts, ip.data


def _sack_blocks(tcp):
    import dpkt
    for kind, value in dpkt.tcp.parse_opts(tcp.opts):
        if kind == dpkt.tcp.TCP_OPT_SACK:
            for i in range(0, len(value) - 7, 8):
                yield (int.from_bytes(value[i:i + 4], "big"), int.from_bytes(value[i + 4:i + 8], "big"))


def make_seq_plots(out_dir, network) -> list:
    """Draw seq_<flow>.png into `out_dir` for every bulk flow whose sender host, or else first
    link, has a capture under `out_dir`/pcap; returns the paths written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import dpkt
    out_dir = Path(out_dir)
    written = []
    for k, flow in enumerate(network.flows.values()):
        if not hasattr(flow, "receiver"):
            continue
        d = flow.src.port
        link = d.link
        back = link.directions[1 - d.index]
        forward = out_dir / "pcap" / f"{_safe(link.id)}_{_safe(d.src.id)}-{_safe(d.dst.id)}.pcap"
        reverse = out_dir / "pcap" / f"{_safe(link.id)}_{_safe(back.src.id)}-{_safe(back.dst.id)}.pcap"
        at_host = out_dir / "pcap" / host_capture_name(flow.src.id)   # --pcap: the sender's
        if at_host.exists():
            forward = reverse = at_host
        elif not forward.exists() or not reverse.exists():
            continue
        port = 10000 + k
        sent, retx, acks, sacks = [], [], [], []
        for ts, tcp in _frames(forward):
            if tcp.sport == port and tcp.dport == RECEIVER_PORT:
                (retx if tcp.flags & dpkt.tcp.TH_PUSH else sent).append((ts, tcp.seq / 1e6))
        for ts, tcp in _frames(reverse):
            if tcp.dport == port and tcp.sport == RECEIVER_PORT:
                acks.append((ts, tcp.ack / 1e6))
                for left, right in _sack_blocks(tcp):
                    sacks.append((ts, left / 1e6, right / 1e6))
        fig, ax = plt.subplots(figsize=(9, 5.5))
        if sacks:
            ax.vlines([s[0] for s in sacks], [s[1] for s in sacks], [s[2] for s in sacks],
                      colors="0.6", linewidth=3, label="SACKed range")
        if sent:
            ax.plot(*zip(*sent), ".", markersize=2, color="tab:blue", label="data sent")
        if acks:
            ax.step(*zip(*acks), where="post", color="tab:green", linewidth=1, label="cumulative ACK")
        if retx:
            ax.plot(*zip(*retx), "x", markersize=5, color="tab:red", label="retransmission")
        ax.set_xlabel("time (s), sent and received at the sender" if forward == reverse
                      else "time (s), at the far end of the first link")
        ax.set_ylabel("sequence (MB of payload)")
        where = f"at {flow.src.id}" if forward == reverse else f"on {link.id}"
        ax.set_title(f"{flow.id}: time-sequence ({flow.algorithm}, captured {where})")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        path = out_dir / f"seq_{_safe(flow.id)}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written
