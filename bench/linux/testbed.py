"""A real-Linux dumbbell in network namespaces: the reference testbed of docs/validation.md.

Layout (one namespace each, names prefixed with ``nsl<pid>``)::

    s1 ─┐                       (tbf 10 Mb/s,            (user-space delay
    s2 ─┴─ r ── bn ────────────── buffer B) ──── d ────── line, RTT/2 each way) ──── h
    senders  router: forwards,                  delay hop: bridges din<->dout     receiver
             tbf on its egress to d             through bench/linux/delayline.c   (iperf3 -s)

* the bottleneck is a ``tbf`` on the router's interface towards the delay hop (rate, a burst of
  two frames, ``limit`` = the buffer in bytes of 1514-byte frames);
* the delay hop has no IP address: ``delayline`` (C, AF_PACKET) copies every frame from one side
  to the other after a fixed one-way delay, in order (this kernel has no sch_netem);
* random loss: ``iptables -m statistic --mode random`` dropping data packets in the receiver's
  INPUT chain, i.e. after the bottleneck (as netsim's impairment on the bottleneck link);
* TSO, GSO, GRO and checksum offloads are off on every veth, so every packet is one 1514-byte
  frame (1448 bytes of payload with TCP timestamps), as in the netsim dumbbell;
* ``tcp_no_metrics_save`` is 1 in the senders, so repetitions do not inherit a cached ssthresh.

Everything is bounded in time and removed on exit, on errors, on Ctrl-C and on SIGTERM
(``Testbed`` is a context manager; ``cleanup_stale()`` removes what a killed run left).
Run as root.  Python 3.9+, standard library only.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("bench.linux.testbed")

HERE = Path(__file__).resolve().parent
FRAME_BYTES = 1514          # Ethernet frame of a full-sized TCP segment (MTU 1500 + 14)
PAYLOAD_BYTES = 1448        # TCP payload of that frame with the timestamp option (1500 - 20 - 32)
ACK_FRAME_BYTES = 66        # a pure ACK with timestamps: 14 + 20 + 32
NS_PREFIX = "nsl"
RECEIVER_ADDR = "10.0.9.2"
# iperf3 runs at nice -10 so that the machine's other load does not leave the socket empty or
# the receiver unread (the transfers are then limited by the network alone, as netsim's are).
# Not at a real-time priority: a busy real-time iperf3 can starve its peer of the same priority
# on a two-core machine (a pair's client then hangs).
RT = ("nice", "-n", "-10")


def sh(cmd: list[str], check: bool = True, timeout: float = 20.0) -> str:
    """Run one command (no shell), return its stdout; raise with its stderr on failure."""
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {res.returncode}: {res.stderr.strip()}")
    return res.stdout


def build_delayline() -> Path:
    """Compile delayline.c next to a cache of the binary (in /tmp), return the binary's path."""
    src = HERE / "delayline.c"
    out = Path("/tmp") / f"netsim-delayline-{int(src.stat().st_mtime)}"
    if not out.exists():
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise RuntimeError("no C compiler (cc) to build bench/linux/delayline.c")
        sh([cc, "-O2", "-Wall", "-o", str(out), str(src)])
    return out


def available_algorithms() -> list[str]:
    """Congestion controls the kernel offers (after trying to load dctcp)."""
    if shutil.which("modprobe"):
        subprocess.run(["modprobe", "tcp_dctcp"], capture_output=True)
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


def kernel_info() -> dict[str, Any]:
    """Kernel release and the TCP sysctls that shape the reference runs."""
    names = ["tcp_sack", "tcp_recovery", "tcp_early_retrans", "tcp_frto", "tcp_rmem",
             "tcp_wmem", "tcp_ecn", "tcp_rto_min_us", "tcp_slow_start_after_idle",
             "tcp_comp_sack_nr", "tcp_pacing_ss_ratio", "tcp_pacing_ca_ratio",
             "tcp_limit_output_bytes", "tcp_notsent_lowat"]
    sysctl = {}
    for n in names:
        p = Path("/proc/sys/net/ipv4") / n
        if p.exists():
            sysctl[n] = p.read_text().strip()
    return {"release": os.uname().release, "version": os.uname().version, "sysctl": sysctl}


@dataclass
class Case:
    """One reference configuration: a dumbbell of ``len(algorithms)`` flows over one bottleneck."""

    name: str
    algorithms: list[str]
    rtt_ms: float
    rate_mbps: float = 10.0
    buffer_bdp: float = 1.0
    loss: float = 0.0
    duration_s: float = 20.0
    buffer_pkts: int = field(init=False)

    def __post_init__(self) -> None:
        self.buffer_pkts = max(2, round(self.buffer_bdp * self.bdp_pkts))

    @property
    def bdp_pkts(self) -> float:
        """Bandwidth-delay product of the base RTT, in 1514-byte frames."""
        return self.rate_mbps * 1e6 * self.rtt_ms / 1e3 / 8 / FRAME_BYTES

    def config(self) -> dict[str, Any]:
        """Everything needed to rebuild this case elsewhere (netsim: bench/linux/compare.py)."""
        return {
            "algorithms": list(self.algorithms), "rtt_ms": self.rtt_ms,
            "rate_mbps": self.rate_mbps, "buffer_bdp": self.buffer_bdp,
            "buffer_pkts": self.buffer_pkts, "buffer_bytes": self.buffer_pkts * FRAME_BYTES,
            "loss": self.loss, "loss_where": "bottleneck to receiver, data direction only",
            "duration_s": self.duration_s, "frame_bytes": FRAME_BYTES,
            "payload_bytes": PAYLOAD_BYTES, "ack_frame_bytes": ACK_FRAME_BYTES,
            "delay_one_way_ms": self.rtt_ms / 2, "tbf_burst_bytes": 2 * FRAME_BYTES,
            "start_s": [0.0] * len(self.algorithms),
        }


class Testbed:
    """The namespaces, links, bottleneck, delay line and loss of one Case; removed on exit."""

    def __init__(self, case: Case, tag: str = "") -> None:
        self.case = case
        self.prefix = f"{NS_PREFIX}{os.getpid()}{tag}"
        self.senders = [f"{self.prefix}s{i + 1}" for i in range(len(case.algorithms))]
        self.router = f"{self.prefix}r"
        self.delay = f"{self.prefix}d"
        self.receiver = f"{self.prefix}h"
        self.namespaces = [*self.senders, self.router, self.delay, self.receiver]
        self.delayline: subprocess.Popen[str] | None = None
        self.delayline_report = ""
        self._old_handlers: dict[int, Any] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> Testbed:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._old_handlers[sig] = signal.signal(sig, _raise_interrupt)
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
        for sig, handler in self._old_handlers.items():
            signal.signal(sig, handler)

    def close(self) -> None:
        """Stop the delay line and delete every namespace (their veths go with them)."""
        if self.delayline is not None and self.delayline.poll() is None:
            self.delayline.terminate()
            try:
                out, _ = self.delayline.communicate(timeout=5)
                self.delayline_report = out.strip()
            except subprocess.TimeoutExpired:
                self.delayline.kill()
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "pids", ns], capture_output=True)
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                                  text=True).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    # -- construction ----------------------------------------------------------------------
    def ns(self, ns: str, *cmd: str, check: bool = True, timeout: float = 20.0) -> str:
        return sh(["ip", "netns", "exec", ns, *cmd], check=check, timeout=timeout)

    def _veth(self, ns_a: str, name_a: str, ns_b: str, name_b: str) -> None:
        sh(["ip", "link", "add", name_a, "netns", ns_a, "type", "veth", "peer", "name", name_b,
            "netns", ns_b])
        for ns, dev in ((ns_a, name_a), (ns_b, name_b)):
            sh(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off",
                "gro", "off", "tx", "off", "rx", "off"], check=False)
            sh(["ip", "-n", ns, "link", "set", dev, "up"])

    def _build(self) -> None:
        c = self.case
        for ns in self.namespaces:
            sh(["ip", "netns", "add", ns])
            sh(["ip", "-n", ns, "link", "set", "lo", "up"])
            self.ns(ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
            self.ns(ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", check=False)
        for i, s in enumerate(self.senders):
            self._veth(s, "eth0", self.router, f"s{i + 1}")
            sh(["ip", "-n", s, "addr", "add", f"10.0.{i + 1}.2/24", "dev", "eth0"])
            sh(["ip", "-n", self.router, "addr", "add", f"10.0.{i + 1}.1/24", "dev", f"s{i + 1}"])
            sh(["ip", "-n", s, "route", "add", "default", "via", f"10.0.{i + 1}.1"])
            self.ns(s, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
        self._veth(self.router, "bn", self.delay, "din")
        self._veth(self.delay, "dout", self.receiver, "eth0")
        sh(["ip", "-n", self.router, "addr", "add", "10.0.9.1/24", "dev", "bn"])
        sh(["ip", "-n", self.receiver, "addr", "add", f"{RECEIVER_ADDR}/24", "dev", "eth0"])
        sh(["ip", "-n", self.receiver, "route", "add", "default", "via", "10.0.9.1"])
        self.ns(self.router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        self.ns(self.receiver, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
        for dev in ("din", "dout"):
            sh(["ip", "-n", self.delay, "link", "set", dev, "promisc", "on"])
        # The bottleneck: tbf on the router's egress towards the delay hop.
        sh(["ip", "netns", "exec", self.router, "tc", "qdisc", "add", "dev", "bn", "root", "tbf",
            "rate", f"{int(c.rate_mbps * 1e6)}bit", "burst", str(2 * FRAME_BYTES),
            "limit", str(c.buffer_pkts * FRAME_BYTES)])
        # Random loss of data packets after the bottleneck (receiver's INPUT, TCP to iperf3).
        if c.loss > 0:
            self.ns(self.receiver, "iptables", "-A", "INPUT", "-p", "tcp", "--dport", "5201:5210",
                    "-m", "statistic", "--mode", "random", "--probability", f"{c.loss:.6f}",
                    "-j", "DROP")
        binary = build_delayline()
        limit_s = str(int(c.duration_s + 120))
        self.delayline = subprocess.Popen(
            ["ip", "netns", "exec", self.delay, "chrt", "-f", "50", str(binary), "din", "dout",
             str(round(c.rtt_ms * 500)), limit_s],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.2)
        if self.delayline.poll() is not None:
            err = self.delayline.stderr.read() if self.delayline.stderr else ""
            raise RuntimeError(f"delayline exited: {err.strip()}")
        # Prime ARP in both directions so the first data packet does not wait for it.
        for s in self.senders:
            self.ns(s, "ping", "-c", "1", "-W", "2", RECEIVER_ADDR, check=False)

    # -- measurements ----------------------------------------------------------------------
    def ping(self, count: int = 20, interval_s: float = 0.2) -> list[float]:
        """RTT samples (ms) from the first sender to the receiver over the empty path."""
        out = self.ns(self.senders[0], "ping", "-c", str(count), "-i", str(interval_s),
                      "-s", "56", RECEIVER_ADDR, timeout=count * interval_s + 10)
        return [float(m) for m in re.findall(r"time=([\d.]+) ms", out)]

    def udp_rate(self, offered_mbps: float = 20.0, seconds: float = 10.0) -> dict[str, float]:
        """Saturate the bottleneck with UDP; the rate the tbf sent (frames, Mb/s) between 1 s
        and ``seconds - 1`` s (tc's Sent counter) and iperf3's receiver-side payload rate."""
        server = self._server(5201)
        try:
            client = subprocess.Popen(
                ["ip", "netns", "exec", self.senders[0], *RT, "iperf3", "-c", RECEIVER_ADDR, "-p",
                 "5201", "-u", "-b", f"{offered_mbps}M", "-l", "1472", "-t", str(seconds), "-J"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)
            t1, b1 = time.monotonic(), self.tbf_sent_bytes()
            time.sleep(seconds - 2.0)
            t2, b2 = time.monotonic(), self.tbf_sent_bytes()
            out, _ = client.communicate(timeout=seconds + 20)
        finally:
            _stop(server)
        end = json.loads(out)["end"]
        return {"tbf_frame_mbps": (b2 - b1) * 8 / (t2 - t1) / 1e6,
                "iperf3_payload_mbps": float(end["sum"]["bits_per_second"])
                * (1 - end["sum"]["lost_percent"] / 100) / 1e6}

    def tbf_sent_bytes(self) -> int:
        """Bytes the bottleneck's tbf has sent so far."""
        out = self.ns(self.router, "tc", "-s", "qdisc", "show", "dev", "bn")
        m = re.search(r"Sent (\d+) bytes", out)
        return int(m.group(1)) if m else 0

    def _server(self, port: int) -> subprocess.Popen[str]:
        p = subprocess.Popen(["ip", "netns", "exec", self.receiver, *RT, "iperf3", "-s", "-1", "-p",
                              str(port), "-i", "0.1", "-J"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        time.sleep(0.3)
        return p

    def transfer(self, sample_s: float = 0.05) -> dict[str, Any]:
        """Run every flow of the case at once for its duration; return the raw measurements."""
        c = self.case
        servers = [self._server(5201 + i) for i in range(len(c.algorithms))]
        nstat_before = [self.nstat(s) for s in self.senders]
        stop = threading.Event()
        samples: list[dict[str, Any]] = []
        sampler = threading.Thread(target=self._sample, args=(stop, samples, sample_s), daemon=True)
        clients = []
        t0 = time.monotonic()
        for i, (s, alg) in enumerate(zip(self.senders, c.algorithms)):
            clients.append(subprocess.Popen(
                ["ip", "netns", "exec", s, *RT, "iperf3", "-c", RECEIVER_ADDR, "-p", str(5201 + i),
                 "-C", alg, "-t", str(c.duration_s), "-i", "0.1", "-J"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        sampler.start()
        outs = []
        server_outs: list[dict[str, Any]] = []
        try:
            for p in clients:
                out, err = p.communicate(timeout=c.duration_s + 30)
                if p.returncode != 0:
                    raise RuntimeError(f"iperf3 client failed: {err.strip() or out[-500:]}")
                outs.append(json.loads(out))
            for p in servers:
                out, _ = p.communicate(timeout=15)
                server_outs.append(json.loads(out))
        finally:
            stop.set()
            sampler.join(timeout=5)
            for p in clients:
                _stop(p)
            for p in servers:
                _stop(p)
        nstat_after = [self.nstat(s) for s in self.senders]
        nstat_delta = [{k: after.get(k, 0) - before.get(k, 0) for k in after}
                       for before, after in zip(nstat_before, nstat_after)]
        for s in samples:
            s["t"] -= t0
        return {"iperf3": outs, "iperf3_server": server_outs, "samples": samples,
                "nstat": nstat_delta}

    def nstat(self, ns: str) -> dict[str, int]:
        """Absolute TCP/IP counters of a namespace (nstat -az)."""
        out = self.ns(ns, "nstat", "-az", "--json")
        data = json.loads(out)
        counters = next(iter(data.values())) if data else {}
        return {k: int(v) for k, v in counters.items()}

    def _sample(self, stop: threading.Event, samples: list[dict[str, Any]], period_s: float) -> None:
        next_t = time.monotonic()
        while not stop.is_set():
            t = time.monotonic()
            row: dict[str, Any] = {"t": t, "flows": [], "qdisc": None}
            try:
                for i, s in enumerate(self.senders):
                    row["flows"].append(parse_ss(self.ns(s, "ss", "-tinH", "dport", "=",
                                                         f":{5201 + i}", timeout=5)))
                row["qdisc"] = parse_tbf(self.ns(self.router, "tc", "-s", "qdisc", "show", "dev",
                                                 "bn", timeout=5))
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
            samples.append(row)
            next_t += period_s
            stop.wait(max(0.0, next_t - time.monotonic()))


def parse_ss(text: str) -> dict[str, float] | None:
    """cwnd (packets), rtt (ms), retransmissions and delivery state of the data connection.

    ``ss -tinH`` lists the control connection iperf3 keeps too; the data connection is the one
    that has sent the most bytes.
    """
    best: dict[str, float] | None = None
    for block in re.split(r"\n(?=\S)", text.strip()):
        info: dict[str, float] = {}
        for key, pat in (("cwnd", r"\bcwnd:(\d+)"), ("ssthresh", r"\bssthresh:(\d+)"),
                         ("rtt_ms", r"\brtt:([\d.]+)/"), ("rto_ms", r"\brto:([\d.]+)"),
                         ("bytes_sent", r"\bbytes_sent:(\d+)"),
                         ("bytes_acked", r"\bbytes_acked:(\d+)"),
                         ("retrans_total", r"\bretrans:\d+/(\d+)"),
                         ("rwnd_limited_ms", r"\brwnd_limited:(\d+)ms"),
                         ("busy_ms", r"\bbusy:(\d+)ms"), ("lost", r"\blost:(\d+)"),
                         ("unacked", r"\bunacked:(\d+)")):
            m = re.search(pat, block)
            if m:
                info[key] = float(m.group(1))
        if "cwnd" in info and info.get("bytes_sent", 0) >= (best or {}).get("bytes_sent", -1):
            best = info
    return best


def parse_tbf(text: str) -> dict[str, int] | None:
    """Backlog (bytes, packets) and drops of the tbf qdisc from ``tc -s qdisc show``."""
    m = re.search(r"backlog (\d+)b (\d+)p", text)
    d = re.search(r"dropped (\d+)", text)
    if not m:
        return None
    return {"backlog_bytes": int(m.group(1)), "backlog_pkts": int(m.group(2)),
            "dropped": int(d.group(1)) if d else 0}


def cleanup_stale() -> list[str]:
    """Delete the namespaces a killed testbed run left behind: names nsl<pid>... whose process
    no longer exists (a testbed still running in another process keeps its namespaces)."""
    gone = []
    for line in sh(["ip", "netns", "list"]).splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.match(rf"{NS_PREFIX}(\d+)", name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            for pid in sh(["ip", "netns", "pids", name], check=False).split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            gone.append(name)
    return gone


def _stop(p: subprocess.Popen[str]) -> None:
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=3)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=3)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
