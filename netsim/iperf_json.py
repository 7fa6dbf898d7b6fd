"""iperf3-compatible JSON (``--iperf-json``, or ``python -m netsim.iperf_json DIR``): a run's
flows in the structure and field names of ``iperf3 -J`` output, so that scripts written for real
iperf3 results (plots of bits_per_second, snd_cwnd, rtt, retransmits) read netsim's unchanged.

Built from a results directory only (summary.json and flows.csv), so it also works for earlier
results; flows.csv is read a chunk at a time, each interval's sums kept as its rows come, so the
memory is the document's (its intervals), not the trace's. One stream per reliable flow (file
order; ``cbr``/``onoff`` flows have no window and are left out), socket 5, 6, ...; addresses and
ports as in the packet captures (netsim/pcap.py).
The report's interval is the whole number of sampling intervals (``--interval``) nearest to
iperf3's default of 1 s (at least one); times are seconds from the first flow's start.

Exact and approximated fields (docs/outputs.md, "iperf3 JSON"):

* exact: ``end`` totals -- ``retransmits`` (summary.json's), ``sum_received.bytes`` (bytes
  delivered in order), the streams' ``min_rtt`` and ``mean_rtt`` (every RTT sample), the
  sender's ``bytes`` of a completed flow (its data);
* from flows.csv, exact to its sampling: an interval's ``bytes`` and ``bits_per_second`` (bytes
  delivered in order to the receiver during the interval: goodput, as iperf3's receiver counts
  them; the sender's own count of bytes written to a socket does not exist in the model),
  ``snd_cwnd`` (the window at the interval's end, in packets times the data packet size);
* approximated: an interval's ``rtt`` (mean of the sampling intervals' mean RTTs, µs; the last
  value carried over an interval without samples, as the kernel's smoothed RTT stays),
  ``rttvar`` (RFC 6298's mean deviation run over those sampling-interval means, µs),
  ``max_rtt`` and ``max_snd_cwnd`` (over the samples), the sender's ``bytes`` of an unfinished
  flow (first transmissions times the packet size);
* from the run's per-interval counts: an interval's ``retransmits``, exact, when the run wrote
  the file (``--iperf-json``); absent when written later from a results directory (which holds
  only each flow's total; iperf3 leaves the field out too when the system does not report it);
* zeros: ``end.cpu_utilization_percent`` (no host CPU is simulated; there so that readers which
  require the block accept the file).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from plot_tool.schema import RECEIVER_PORT
from topologies.bounds import TIME_RESOLUTION_S, time_problem

IPERF_FILE = "iperf3.json"
CPU_FIELDS = ("host_total", "host_user", "host_system", "remote_total", "remote_user",
              "remote_system")        # iperf3's end.cpu_utilization_percent
DEFAULT_INTERVAL_S = 1.0           # iperf3's -i default
FIRST_SOCKET = 5
# The header bytes a data packet's size holds besides its payload, as the packet captures write
# them: IPv4 and TCP headers (40) and the timestamps option (12); the MSS is the size - 52.
# Defined here for netsim/pcap.py too, which needs the optional dpkt and so cannot be imported here.
DATA_HEADERS = 52


class IperfJsonError(ValueError):
    """The results directory cannot be read (one printable line)."""


def _ip(index: int) -> str:
    return f"10.0.{(index + 1) >> 8}.{(index + 1) & 255}"


def _read_rows(path: Path) -> dict:
    """flows.csv rows by flow: lists of (time_s, recv_rate, window_pkts, rtt_ms or None), read
    whole with the results' one CSV reader (plot_tool.results.read_table): the way for a file
    whose rows of a flow are not in time order (`_stream_rows` does the rest)."""
    from plot_tool.results import read_table
    table = read_table(path, "flows")
    rows: dict = {}
    for flow, time_s, recv, window, rtt in _columns(table):
        problem = _row_problem(path, flow, time_s, recv, window, rtt)
        if problem is not None:
            raise problem
        rows.setdefault(flow, []).append((
            float(time_s), float(recv), None if math.isnan(window) else float(window),
            None if math.isnan(rtt) else float(rtt)))
    return rows


def _columns(table: dict):
    """(flow, time_s, recv_rate_mbps, window_pkts, rtt_ms) of each row of a flows table (a
    column the file lacks: NaN)."""
    columns = [table[name].tolist() for name in ("flow", "time_s", "recv_rate_mbps")]
    optional = [table[name].tolist() if name in table else [math.nan] * len(columns[0])
                for name in ("window_pkts", "rtt_ms")]
    return zip(*columns, *optional)


def _row_problem(path: Path, flow, time_s, recv, window, rtt) -> IperfJsonError | None:
    """The error of a row with a time or rate that is not a finite number, or a window or RTT
    that is neither empty nor finite."""
    for name, value, empty_ok in (("time_s", time_s, False), ("recv_rate_mbps", recv, False),
                                  ("window_pkts", window, True), ("rtt_ms", rtt, True)):
        if not math.isfinite(value) and not (empty_ok and math.isnan(value)):
            shown = "empty" if math.isnan(value) else repr(value)
            return IperfJsonError(f"{path}: flow {flow!r}: {name} is {shown}; expected a "
                                  f"finite number")
    return None


class _OutOfOrder(Exception):
    """A flow's row belongs to an earlier report interval than its previous row."""


def _stream_rows(path: Path, builders: dict) -> bool:
    """Feed flows.csv's rows to the builders of their flows (`_FlowStreams`) as they are read,
    a chunk at a time (plot_tool.results.iter_table): the memory is a chunk, not the file.
    Every row is checked as `_read_rows` checks it (the file's own errors first, as reading it
    whole raises them before any row is looked at; then the first bad row). False when a flow's
    rows are not in the order of the report's intervals: the caller reads the file whole."""
    from plot_tool.results import iter_table
    problem = None
    for chunk in iter_table(path, "flows"):
        if problem is not None:
            continue                      # (read on: the file's own errors come first)
        for flow, time_s, recv, window, rtt in _columns(chunk):
            problem = _row_problem(path, flow, time_s, recv, window, rtt)
            if problem is not None:
                break
            builder = builders.get(flow)
            if builder is not None:
                try:
                    builder.add(float(time_s), float(recv),
                                None if math.isnan(window) else float(window),
                                None if math.isnan(rtt) else float(rtt))
                except _OutOfOrder:
                    return False
    if problem is not None:
        raise problem
    return True


def _packet_bytes(flow: dict) -> int:
    """A flow's data packet size, when neither the caller nor summary.json (`packet_bytes`,
    written since results of 2026-11-29) gives it: its data over its first transmissions for a
    completed flow (exact but for a short last packet: the ceiling), else the bytes delivered
    over them (approximate: packets still in flight make it low)."""
    sent = flow.get("packets_sent") or 0
    retx = flow.get("retransmissions") or 0
    firsts = sent - retx
    data = flow.get("data_bytes")
    if flow.get("completed") and data and firsts > 0:
        return max(1, math.ceil(data / firsts))
    delivered = flow.get("delivered_bytes") or 0
    return max(1, round(delivered / firsts)) if firsts > 0 and delivered else 1


def _rate(nbytes: float, seconds: float) -> float:
    """Bits per second over `seconds`; 0 over a span shorter than the clock's resolution (a
    rounding remainder, or a damaged end_time_s of 1e-320, would give an infinite rate)."""
    return nbytes * 8 / seconds if seconds >= TIME_RESOLUTION_S else 0.0


class _Grid:
    """The report's intervals laid over the sampling rows: `k` sampling intervals of `dt`
    each, laid from the sampling boundary at or before the first flow's start `t0`; the first
    is reported from `t0` (iperf3's 0), the last is cut at the end of the run."""

    def __init__(self, dt: float, interval_s: float | None, t0: float, end_s: float):
        self.dt = dt
        self.k = max(1, round((interval_s or DEFAULT_INTERVAL_S) / dt))
        self.report_s = self.k * dt
        self.t0 = t0
        self.end_s = end_s
        self.first_row = math.floor(t0 / dt + 1e-9)           # rows end at multiples of dt
        self.origin = self.first_row * dt
        self.n = max(1, math.ceil((end_s - self.origin) / self.report_s - 1e-9))

    def of_time(self, time_s: float) -> int:
        """The interval holding the sampling row that ends at `time_s`."""
        return max(0, min(self.n - 1, math.ceil(round((time_s - self.origin) / self.report_s, 9)) - 1))

    def of_sample(self, j: int) -> int:
        """The interval holding sampling interval number `j` (the one ending at j x dt)."""
        return max(0, min(self.n - 1, (j - self.first_row - 1) // self.k))

    def row_start(self, time_s: float) -> float:
        """Where the sampling row that ends at `time_s` begins: the sampling instant before
        it (a flow's first row covers a whole sampling interval, its rate counted over it)."""
        return max(0.0, (math.ceil(round(time_s / self.dt, 9)) - 1) * self.dt)

    def bounds(self, i: int) -> tuple:
        """The interval's start and end; the first starts at the first flow's start, as
        iperf3's first interval starts at 0 (nothing was sent before it)."""
        start = self.origin + i * self.report_s
        return max(start, self.t0), min(start + self.report_s, self.end_s)


class _RttTracker:
    """RFC 6298's SRTT and RTTVAR run over the sampling intervals' mean RTTs, and their max."""

    def __init__(self):
        self.srtt: float | None = None
        self.rttvar: float | None = None
        self.max_rtt = 0.0

    def add(self, rtt: float) -> None:
        if self.srtt is None or self.rttvar is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self.max_rtt = max(self.max_rtt, rtt)


def _flow_streams(grid: _Grid, socket: int, rows: list, size: int, bits_per_mbit: float,
                  retx_rows: dict | None, with_retransmits: bool) -> tuple:
    """One flow's stream object in every interval, and its largest window (bytes) and RTT."""
    per: list = [[] for _ in range(grid.n)]
    previous = None
    for time_s, recv, window, rtt in rows:
        if previous is None:                          # (`_FlowStreams.add`)
            previous = grid.row_start(time_s)
        per[grid.of_time(time_s)].append((max(0.0, time_s - previous), recv, window, rtt))
        previous = time_s
    retx_per = [0] * grid.n
    for j, count in (retx_rows or {}).items():
        retx_per[grid.of_sample(j)] += count
    rtt_tracker = _RttTracker()
    cwnd = max_cwnd = 0
    streams = []
    for i, got in enumerate(per):
        start, stop = grid.bounds(i)
        delivered = sum(recv * bits_per_mbit / 8 * span for span, recv, _, _ in got)
        rtts = [rtt for *_, rtt in got if rtt is not None]
        for rtt in rtts:
            rtt_tracker.add(rtt)
        windows = [w for *_, w, _ in got if w is not None]
        if windows:
            cwnd = round(windows[-1] * size)
            max_cwnd = max(max_cwnd, round(max(windows) * size))
        mean_rtt = sum(rtts) / len(rtts) if rtts else (rtt_tracker.srtt or 0.0)
        seconds = max(stop - start, 0.0)
        stream = {
            "socket": socket, "start": round(start - grid.t0, 6), "end": round(stop - grid.t0, 6),
            "seconds": round(seconds, 6), "bytes": round(delivered),
            "bits_per_second": _rate(delivered, seconds)}
        if with_retransmits:
            stream["retransmits"] = retx_per[i]
        stream.update({"snd_cwnd": cwnd, "rtt": round(mean_rtt * 1000),
                       "rttvar": round((rtt_tracker.rttvar or 0.0) * 1000), "pmtu": size,
                       "omitted": False, "sender": True})
        streams.append(stream)
    return streams, max_cwnd, rtt_tracker.max_rtt


class _FlowStreams:
    """One flow's stream objects (`_flow_streams`'s, bit for bit) built as its rows come, in
    file order: an interval is closed when a row of a later one comes, so the memory is the
    streams written so far (the document's) and one interval's running sums. A row of an
    earlier interval than the previous row's raises `_OutOfOrder`."""

    def __init__(self, grid: _Grid, socket: int, size: int, bits_per_mbit: float,
                 retx_rows: dict | None, with_retransmits: bool):
        self.grid, self.socket, self.size = grid, socket, size
        self.bits_per_mbit = bits_per_mbit
        self.with_retransmits = with_retransmits
        self.retx_per = [0] * grid.n
        for j, count in (retx_rows or {}).items():
            self.retx_per[grid.of_sample(j)] += count
        self.rtt_tracker = _RttTracker()
        self.cwnd = self.max_cwnd = 0
        self.previous: float | None = None   # the flow's previous row (None: before its first)
        self.streams: list = []
        self.current = 0                  # the interval the rows go to
        self._clear()

    def _clear(self) -> None:
        self.delivered: Any = 0           # (as sum(): from the integer 0)
        self.rtt_sum: Any = 0
        self.rtt_count = 0
        self.last_window: float | None = None
        self.max_window: float | None = None

    def add(self, time_s: float, recv: float, window: float | None, rtt: float | None) -> None:
        i = self.grid.of_time(time_s)
        if i < self.current:
            raise _OutOfOrder
        while self.current < i:
            self._close()
        previous = self.previous
        if previous is None:              # a flow's first row covers its own sampling interval
            previous = self.grid.row_start(time_s)    # (not the time since the first flow began)
        self.delivered += recv * self.bits_per_mbit / 8 * max(0.0, time_s - previous)
        self.previous = time_s
        if rtt is not None:
            self.rtt_tracker.add(rtt)
            self.rtt_sum += rtt
            self.rtt_count += 1
        if window is not None:
            self.last_window = window
            if self.max_window is None or window > self.max_window:
                self.max_window = window

    def _close(self) -> None:
        """The stream of the current interval (as `_flow_streams` makes it)."""
        i = self.current
        start, stop = self.grid.bounds(i)
        if self.last_window is not None and self.max_window is not None:
            self.cwnd = round(self.last_window * self.size)
            self.max_cwnd = max(self.max_cwnd, round(self.max_window * self.size))
        tracker = self.rtt_tracker
        mean_rtt = self.rtt_sum / self.rtt_count if self.rtt_count else (tracker.srtt or 0.0)
        seconds = max(stop - start, 0.0)
        delivered = self.delivered
        stream = {
            "socket": self.socket, "start": round(start - self.grid.t0, 6),
            "end": round(stop - self.grid.t0, 6), "seconds": round(seconds, 6),
            "bytes": round(delivered), "bits_per_second": _rate(delivered, seconds)}
        if self.with_retransmits:
            stream["retransmits"] = self.retx_per[i]
        stream.update({"snd_cwnd": self.cwnd, "rtt": round(mean_rtt * 1000),
                       "rttvar": round((tracker.rttvar or 0.0) * 1000), "pmtu": self.size,
                       "omitted": False, "sender": True})
        self.streams.append(stream)
        self.current += 1
        self._clear()

    def finish(self) -> tuple:
        """(the flow's stream in every interval, its largest window in bytes, its largest RTT)."""
        while self.current < self.grid.n:
            self._close()
        return self.streams, self.max_cwnd, self.rtt_tracker.max_rtt


def _end_stream(grid: _Grid, socket: int, fid: str, flow: dict, size: int, max_cwnd: int,
                max_rtt: float) -> dict:
    """A flow's `end.streams[]` entry: sender and receiver totals from summary.json."""
    start = min(float(flow["start_s"]), grid.end_s)             # (a flow that never started)
    finish = flow.get("finish_s")
    stop = float(finish) if finish is not None else grid.end_s
    seconds = max(stop - start, 0.0)
    received = int(flow.get("delivered_bytes") or 0)
    firsts = (flow.get("packets_sent") or 0) - (flow.get("retransmissions") or 0)
    sent = int(flow["data_bytes"]) if flow.get("completed") and flow.get("data_bytes") \
        else max(received, firsts * size)
    span = {"socket": socket, "start": round(start - grid.t0, 6), "end": round(stop - grid.t0, 6),
            "seconds": round(seconds, 6)}
    return {
        "sender": {**span, "bytes": sent, "bits_per_second": _rate(sent, seconds),
                   "retransmits": int(flow["retransmissions"]), "max_snd_cwnd": max_cwnd,
                   "max_rtt": round(max_rtt * 1000),
                   "min_rtt": round((flow.get("min_rtt_ms") or 0.0) * 1000),
                   "mean_rtt": round((flow.get("avg_rtt_ms") or 0.0) * 1000), "sender": True},
        "receiver": {**span, "bytes": received, "bits_per_second": _rate(received, seconds),
                     "sender": True},
        "netsim_flow": fid}


def _interval_sums(streams_by_interval: list, with_retransmits: bool) -> list:
    """`intervals[]`: each interval's streams and their `sum`."""
    intervals = []
    for streams in streams_by_interval:
        total = sum(s["bytes"] for s in streams)
        seconds = streams[0]["seconds"]
        interval_sum = {"start": streams[0]["start"], "end": streams[0]["end"],
                        "seconds": seconds, "bytes": total,
                        "bits_per_second": _rate(total, seconds)}
        if with_retransmits:
            interval_sum["retransmits"] = sum(s["retransmits"] for s in streams)
        interval_sum.update({"omitted": False, "sender": True})
        intervals.append({"streams": streams, "sum": interval_sum})
    return intervals


def _total(end_streams: list, part: str, with_retransmits: bool) -> dict:
    """`end.sum_sent` (part "sender") or `end.sum_received` ("receiver")."""
    items = [s[part] for s in end_streams]
    start = min(s["start"] for s in items)
    stop = max(s["end"] for s in items)
    nbytes = sum(s["bytes"] for s in items)
    out = {"start": start, "end": stop, "seconds": round(stop - start, 6), "bytes": nbytes,
           "bits_per_second": _rate(nbytes, stop - start)}
    if with_retransmits:
        out["retransmits"] = sum(s["retransmits"] for s in items)
    out["sender"] = True
    return out


def _start_section(summary: dict, grid: _Grid, flows: list, connected: list, address: dict,
                   pmtu: int) -> dict:
    """`start`: the connections and the test's parameters, as iperf3 writes them."""
    from netsim import __version__
    first = flows[0][2]
    mss = max(1, pmtu - DATA_HEADERS)
    return {
        "connected": connected,
        "version": f"netsim {__version__} (iperf3 -J structure)",
        "system_info": "netsim packet-level simulation",
        "timestamp": {"time": "Thu, 01 Jan 1970 00:00:00 GMT", "timesecs": 0},
        "connecting_to": {"host": address.get(first.get("dst"), ""), "port": RECEIVER_PORT},
        "cookie": "",
        "tcp_mss_default": mss,
        "target_bitrate": 0, "sock_bufsize": 0,     # iperf3's "unlimited" and "default"
        "test_start": {"protocol": "TCP", "num_streams": len(flows), "blksize": mss,
                       "omit": 0, "duration": round(grid.end_s - grid.t0, 6), "bytes": 0,
                       "blocks": 0, "reverse": 0, "tos": 0, "target_bitrate": 0},
        "netsim": {"topology": summary.get("topology"), "time_offset_s": grid.t0,
                   "interval_s": grid.report_s, "flows": [fid for _, fid, _ in flows]},
    }


# The fields of summary.json `build` needs beyond those every reader does (plot_tool.results):
# the others it reads are checked when present, and have defaults.
REQUIRED_FIELDS = ("end_time_s", "interval_s", "units.bits_per_mbit", "flows.*.start_s",
                   "flows.*.retransmissions")


def _reading(results_dir: Path, read):
    """`read()`, its errors as one line: a missing or unreadable file names the directory, a
    malformed one names the file and the field or line."""
    try:
        return read()
    except OSError as exc:
        raise IperfJsonError(f"{results_dir}: not a readable results directory "
                             f"(summary.json and flows.csv): {exc}") from None
    except ValueError as exc:             # (the message names the file, and the field or line)
        raise IperfJsonError(str(exc)) from None


def build(results_dir, interval_s: float | None = None, packet_bytes: dict | None = None,
          retransmits: dict | None = None) -> dict:
    """The iperf3 -J document of the results in `results_dir`. `interval_s`: the report's
    interval (default: the sampling intervals nearest 1 s); `packet_bytes`: flow id -> data
    packet size (default: derived from summary.json); `retransmits`: flow id -> {sampling
    interval number j (the interval ending at j x interval_s): retransmissions sent in it}, as
    `RetransmitCounter` counts them during a run (without it, intervals have no `retransmits`)."""
    results_dir = Path(results_dir)
    from plot_tool.results import read_summary
    summary = _reading(results_dir, lambda: read_summary(results_dir / "summary.json",
                                                         REQUIRED_FIELDS))
    flows_csv = results_dir / "flows.csv"
    address = {host: _ip(i) for i, host in enumerate(summary.get("hosts", {}))}
    flows = [(i, fid, f) for i, (fid, f) in enumerate(summary["flows"].items())
             if f.get("kind", "bulk") == "bulk"]                  # cbr/onoff: no window
    if not flows:
        _reading(results_dir, lambda: _stream_rows(flows_csv, {}))    # (its errors first)
        raise IperfJsonError(f"{results_dir}: no flow with a transport (iperf3 streams are TCP)")
    end_s = float(summary["end_time_s"])
    grid = _Grid(float(summary["interval_s"]), interval_s,
                 min(min(float(f["start_s"]) for _, _, f in flows), end_s), end_s)
    bits_per_mbit = float(summary["units"]["bits_per_mbit"])
    run_bytes = (summary.get("packet_bytes") or {}).get("data")   # (an integer: read_summary)
    if not (isinstance(run_bytes, int) and run_bytes > 0):
        run_bytes = None
    with_retransmits = retransmits is not None
    sizes = {fid: (packet_bytes or {}).get(fid) or run_bytes or _packet_bytes(flow)
             for _, fid, flow in flows}
    # each flow's streams as flows.csv is read, a chunk at a time (a file whose rows of a flow
    # go back in time, which netsim does not write: read whole)
    builders = {fid: _FlowStreams(grid, socket, sizes[fid], bits_per_mbit,
                                  (retransmits or {}).get(fid), with_retransmits)
                for socket, (_, fid, _) in enumerate(flows, start=FIRST_SOCKET)}
    if _reading(results_dir, lambda: _stream_rows(flows_csv, builders)):
        built = {fid: builder.finish() for fid, builder in builders.items()}
    else:
        rows = _reading(results_dir, lambda: _read_rows(flows_csv))
        built = {fid: _flow_streams(grid, socket, rows.get(fid, []), sizes[fid], bits_per_mbit,
                                    (retransmits or {}).get(fid), with_retransmits)
                 for socket, (_, fid, _) in enumerate(flows, start=FIRST_SOCKET)}
    streams_by_interval: list = [[] for _ in range(grid.n)]
    end_streams = []
    connected = []
    for socket, (index, fid, flow) in enumerate(flows, start=FIRST_SOCKET):
        streams, max_cwnd, max_rtt = built[fid]
        for i, stream in enumerate(streams):
            streams_by_interval[i].append(stream)
        end_streams.append(_end_stream(grid, socket, fid, flow, sizes[fid], max_cwnd, max_rtt))
        connected.append({"socket": socket, "local_host": address.get(flow.get("src"), ""),
                          "local_port": 10000 + index % 55536,
                          "remote_host": address.get(flow.get("dst"), ""),
                          "remote_port": RECEIVER_PORT})
    algorithms = sorted({f.get("algorithm") or "" for _, _, f in flows})
    return {
        "start": _start_section(summary, grid, flows, connected, address,
                                streams_by_interval[0][0]["pmtu"]),
        "intervals": _interval_sums(streams_by_interval, with_retransmits),
        "end": {
            "streams": end_streams,
            "sum_sent": _total(end_streams, "sender", True),
            "sum_received": _total(end_streams, "receiver", False),
            # (a simulation has no host CPU to report: zeros, so that readers that require the
            # block, e.g. PyPI iperf3's TestResult, accept the file)
            "cpu_utilization_percent": dict.fromkeys(CPU_FIELDS, 0.0),
            "sender_tcp_congestion": ",".join(algorithms),
            "receiver_tcp_congestion": ",".join(algorithms),
        },
    }


class RetransmitCounter:
    """Counts, during a run, the retransmissions each reliable flow's sender sends in each
    sampling interval (for the intervals' `retransmits`): the class of each sending host is
    switched to one whose `send` counts data packets marked as retransmissions, so a run
    without --iperf-json pays nothing. Memory: one count per flow and sampling interval with
    retransmissions."""

    def __init__(self, network, interval_s: float):
        from components.packet import DATA
        self.counts: dict = {}
        flow_of = {}
        for flow in network.flows.values():
            receiver = getattr(flow, "receiver", None)
            if receiver is not None:
                flow_of[id(receiver)] = self.counts.setdefault(flow.id, {})
        classes: dict = {}
        for host in {flow.src for flow in network.flows.values() if hasattr(flow, "receiver")}:
            base = type(host)
            if base not in classes:
                classes[base] = _counting_class(base, flow_of, interval_s, host.port.sim, DATA)
            host.__class__ = classes[base]


def _counting_class(base: Any, flow_of: dict, dt: float, sim, data_kind: int) -> type:
    send = base.send                               # a host class (components.node.Host)

    def counting_send(self, packet):
        if packet.retx and packet.kind == data_kind:
            counts = flow_of.get(id(getattr(packet.deliver, "__self__", None)))
            if counts is not None:
                j = math.ceil(round(sim.now / dt, 9))
                counts[j] = counts.get(j, 0) + 1
        return send(self, packet)

    return type(f"Counting{base.__name__}", (base,), {"__slots__": (), "send": counting_send})


def write(results_dir, path=None, interval_s: float | None = None,
          packet_bytes: dict | None = None, retransmits: dict | None = None) -> Path:
    """Write the document of `results_dir` to `path` (default `results_dir`/iperf3.json),
    whole or not at all. It is encoded into the file a piece at a time: with an indent,
    ``json.dumps`` would first hold every piece of the text (ten times the size of the file)."""
    from netsim.output_paths import AtomicFile
    document = build(results_dir, interval_s, packet_bytes, retransmits)
    path = Path(path) if path is not None else Path(results_dir) / IPERF_FILE
    with AtomicFile(path, "w", encoding="utf-8", newline="\n") as out:
        json.dump(document, out.fh, indent=1, allow_nan=False)
        out.fh.write("\n")
        return out.commit()


def main(argv=None) -> int:
    """``python -m netsim.iperf_json DIR [-o FILE] [-i S]``: 0 written, 2 bad input."""
    import sys

    from netsim.cli_options import NUMPY_REMEDY, OneLineParser, UsageError, modules_available
    parser = OneLineParser(
        prog="python -m netsim.iperf_json",
        description="Write iperf3.json (iperf3 -J's structure) from a results directory.")
    parser.add_argument("directory", help="results directory (summary.json and flows.csv)")
    parser.add_argument("-o", "--out", metavar="FILE", help=f"where to write (default DIR/{IPERF_FILE})")
    parser.add_argument("-i", "--interval", type=float, metavar="S",
                        help="report interval in seconds (default: the sampling intervals nearest 1 s)")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing file that netsim did not write as an iperf3.json")
    args = parser.parse_args(argv)
    try:
        modules_available("reading flows.csv", ("numpy",), NUMPY_REMEDY)   # (Debian's PyPy)
        if args.interval is not None:
            problem = (time_problem(args.interval, zero=False) if math.isfinite(args.interval)
                       else "expected a positive number of seconds")
            if problem is not None:
                raise IperfJsonError(f"-i: {problem}, got {args.interval}")
        from netsim.output_paths import OutputPathError, check_output_file
        own = Path(args.directory) / IPERF_FILE
        try:         # (another file, or the directory's own, only if netsim wrote it as one)
            check_output_file("-o" if args.out is not None else "writing", args.out or own,
                              allowed_inside=[own], kind="iperf", force=args.force)
        except OutputPathError as exc:
            raise IperfJsonError(str(exc)) from None
        path = write(args.directory, args.out, args.interval)
    except (IperfJsonError, UsageError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"iperf3 JSON written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
