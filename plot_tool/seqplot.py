"""Time-sequence plots of flows from their packet captures (--pcap): seq_<flow>.png.

For each reliable flow whose sender host was captured (--pcap), or else whose first link (the
sender's access link) was (--pcap-links), the plot shows the data packets sent (their starting
byte against the time), the retransmissions among them, the cumulative ACK coming back, and the
SACKed range each ACK reports. Times are those of the capture: sent and received at the sender,
or arrival at the far end of the first link.

Like the rest of plot_tool it reads the results directory only: ``summary.json`` for the flows
(their order gives their ports, `plot_tool.schema.sender_port`) and the links, and the captures
under ``pcap/`` (their names: `plot_tool.schema`).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from plot_tool.figure_files import refuse_foreign_figures
from plot_tool.missing_glyphs import glyphs_reported
from plot_tool.schema import (
    PCAP_DIR,
    RECEIVER_PORT,
    SUMMARY_FILE,
    file_part,
    host_capture_name,
    link_capture_name,
    sender_port,
)

RATE_KINDS = ("cbr", "onoff")      # flows without a transport: UDP, no sequence to plot


def _frames(path: Path) -> Iterator[tuple[float, Any]]:
    import dpkt
    with open(path, "rb") as fh:
        try:
            reader = dpkt.pcap.Reader(fh)
        except (ValueError, dpkt.dpkt.Error) as exc:    # (not what --pcap writes)
            raise ValueError(f"{path}: not a pcap capture: {exc}") from None
        for ts, buf in reader:
            ip = dpkt.ethernet.Ethernet(buf).data
            if isinstance(getattr(ip, "data", None), dpkt.tcp.TCP):
                yield ts, ip.data


def _sack_blocks(tcp: Any) -> Iterator[tuple[int, int]]:
    import dpkt
    for kind, value in dpkt.tcp.parse_opts(tcp.opts):
        if kind == dpkt.tcp.TCP_OPT_SACK:
            for i in range(0, len(value) - 7, 8):
                yield (int.from_bytes(value[i:i + 4], "big"),
                       int.from_bytes(value[i + 4:i + 8], "big"))


def _access_link(summary: dict, host: str) -> tuple[str, str] | None:
    """(link id, the other end) of the first link of `host` in summary.json, or None."""
    for link_id, info in (summary.get("links") or {}).items():
        ends = [str(end) for end in info.get("ends", ())]
        if len(ends) == 2 and host in ends:
            return str(link_id), ends[1 - ends.index(host)]
    return None


def _captures(pcap_dir: Path, summary: dict, src: str) -> tuple[Path, Path, str] | None:
    """(forward capture, reverse capture, where) for a flow sent by `src`: its host capture
    (both directions in one file), else its access link's two direction captures."""
    at_host = pcap_dir / host_capture_name(src)
    if at_host.is_file():               # (not a FIFO, which would block, nor a device)
        return at_host, at_host, f"at {src}"
    access = _access_link(summary, src)
    if access is None:
        return None
    link_id, other = access
    forward = pcap_dir / link_capture_name(link_id, src, other)
    reverse = pcap_dir / link_capture_name(link_id, other, src)
    if forward.is_file() and reverse.is_file():
        return forward, reverse, f"on {link_id}"
    return None


def _sequence(forward: Path, reverse: Path, port: int, bytes_per_mb: float
              ) -> tuple[list, list, list, list]:
    """(sent, retransmitted, acks, sacks) of the flow sending from `port`, in MB (of
    `bytes_per_mb` bytes: the run's units) of TCP payload as captured."""
    import dpkt
    sent: list = []
    retx: list = []
    acks: list = []
    sacks: list = []
    for ts, tcp in _frames(forward):
        if tcp.sport == port and tcp.dport == RECEIVER_PORT:
            (retx if tcp.flags & dpkt.tcp.TH_PUSH else sent).append((ts, tcp.seq / bytes_per_mb))
    for ts, tcp in _frames(reverse):
        if tcp.dport == port and tcp.sport == RECEIVER_PORT:
            acks.append((ts, tcp.ack / bytes_per_mb))
            for left, right in _sack_blocks(tcp):
                sacks.append((ts, left / bytes_per_mb, right / bytes_per_mb))
    return sent, retx, acks, sacks


def make_seq_plots(results_dir: str | Path) -> list[Path]:
    """Draw seq_<flow>.png into the results directory `results_dir` for every reliable flow whose
    sender host, or else first link, has a capture under ``pcap/``; returns the paths written."""
    out_dir = Path(results_dir)
    with open(out_dir / SUMMARY_FILE, encoding="utf-8") as fh:
        summary = json.load(fh)
    units = summary.get("units") or {}
    binary = units.get("system") == "binary"
    bytes_per_mb = float(units.get("bytes_per_mb") or (2 ** 20 if binary else 1e6))
    ylabel = f"sequence (MB of TCP payload as captured{', binary' if binary else ''})"
    written: list[Path] = []
    drawn = []                                # (port index, flow id, flow, captures, path)
    for k, (flow_id, flow) in enumerate((summary.get("flows") or {}).items()):
        if flow.get("kind") in RATE_KINDS:
            continue
        found = _captures(out_dir / PCAP_DIR, summary, str(flow.get("src", "")))
        if found is not None:
            drawn.append((k, flow_id, flow, found,
                          out_dir / f"seq_{file_part(str(flow_id))}.png"))
    refuse_foreign_figures(path for *_, path in drawn)    # (before any is drawn)
    with glyphs_reported():           # a character the font has not, said once
        _draw_sequences(drawn, ylabel, bytes_per_mb, written)
    return written


def _draw_sequences(drawn: list, ylabel: str, bytes_per_mb: float, written: list) -> None:
    """Draw and save each of `drawn`'s time-sequence figures, appending its path to `written`."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from plot_tool.layout import literal_texts
    from plot_tool.png.common import software_text  # (the tag that says netsim drew it)

    for k, flow_id, flow, found, path in drawn:
        forward, reverse, where = found
        sent, retx, acks, sacks = _sequence(forward, reverse, sender_port(k), bytes_per_mb)
        fig = Figure(figsize=(9, 5.5))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        if sacks:
            ax.vlines([s[0] for s in sacks], [s[1] for s in sacks], [s[2] for s in sacks],
                      colors="0.6", linewidth=3, label="SACKed range")
        if sent:
            ax.plot(*zip(*sent), ".", markersize=2, color="tab:blue", label="data sent")
        if acks:
            ax.step(*zip(*acks), where="post", color="tab:green", linewidth=1,
                    label="cumulative ACK")
        if retx:
            ax.plot(*zip(*retx), "x", markersize=5, color="tab:red", label="retransmission")
        ax.set_xlabel("time (s), sent and received at the sender" if forward == reverse
                      else "time (s), at the far end of the first link")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{flow_id}: time-sequence ({flow.get('algorithm', '?')}, captured {where})")
        ax.grid(alpha=0.3)
        if sent or retx or acks or sacks:
            ax.legend(loc="upper left", fontsize=8)
        else:                                 # (a run stopped before the flow started)
            ax.text(0.5, 0.5, "no packets captured: the flow sent nothing",
                    transform=ax.transAxes, ha="center", va="center", color="dimgray")
        literal_texts(fig)                    # (a flow id is drawn as it reads)
        fig.savefig(path, dpi=100, metadata={"Software": software_text()})
        written.append(path)
