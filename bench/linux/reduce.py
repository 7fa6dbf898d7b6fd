"""Reduce testbed runs to the compared figures and write tests/data/linux/reference.json.

Per run (``reduce_run``), per flow: goodput (Mb/s of TCP payload, iperf3's receiver), RTOs
(nstat TcpExtTCPTimeouts of the flow's sender namespace), retransmitted segments (nstat
TcpRetransSegs), tail loss probes (TcpExtTCPLossProbes), the median of the sampled congestion
window (``ss -tin`` cwnd, packets, every sample of the transfer), the share of the pair's goodput
(pairs only), the fraction of the busy time the flow was receive-window limited (``ss``
rwnd_limited / busy); per run: the mean of the sampled tbf backlog (packets waiting at the
bottleneck) and the tbf drops.

    python bench/linux/reduce.py RUNS.jsonl [--selfcheck SELFCHECK.json] \
        [--out tests/data/linux/reference.json]

aggregates the repetitions of every case into ``min``/``max``/``mean`` (and the values) of each
figure, keeps each case's configuration (bench/linux/compare.py builds the netsim topology from
it) and the kernel, and records the testbed's own noise.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

FLOW_FIGURES = ("goodput_mbps", "goodput_iperf3_mbps", "rtos", "retransmits", "tlps",
                "cwnd_median_pkts", "share", "rwnd_limited_frac", "sack_recoveries",
                "lost_retrans", "spurious_undo")
UNDO_COUNTERS = ("TcpExtTCPFullUndo", "TcpExtTCPPartialUndo", "TcpExtTCPDSACKUndo",
                 "TcpExtTCPLossUndo", "TcpExtTCPSpuriousRTOs")
RUN_FIGURES = ("queue_mean_pkts", "queue_drops")
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "linux" / "reference.json"


def reduce_run(config: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """The figures of one run from the testbed's raw measurements (Testbed.transfer)."""
    duration = float(config["duration_s"])
    samples = [s for s in raw["samples"] if 0 <= s["t"] <= duration]
    flows = []
    for i, alg in enumerate(config["algorithms"]):
        end = raw["iperf3"][i]["end"]
        nstat = raw["nstat"][i]
        cwnds = [s["flows"][i]["cwnd"] for s in samples
                 if len(s["flows"]) > i and s["flows"][i] is not None]
        last = next((s["flows"][i] for s in reversed(samples)
                     if len(s["flows"]) > i and s["flows"][i] is not None), None) or {}
        busy = last.get("busy_ms", 0.0)
        flows.append({
            "algorithm": alg,
            "goodput_mbps": receiver_goodput_mbps(raw["iperf3_server"][i], duration),
            "goodput_iperf3_mbps": end["sum_received"]["bits_per_second"] / 1e6,
            "rtos": nstat.get("TcpExtTCPTimeouts", 0),
            "retransmits": nstat.get("TcpRetransSegs", 0),
            "tlps": nstat.get("TcpExtTCPLossProbes", 0),
            "sack_recoveries": nstat.get("TcpExtTCPSackRecovery", 0),
            "lost_retrans": nstat.get("TcpExtTCPLostRetransmit", 0),
            "spurious_undo": sum(nstat.get(k, 0) for k in UNDO_COUNTERS),
            "cwnd_median_pkts": statistics.median(cwnds) if cwnds else None,
            "rwnd_limited_frac": (last.get("rwnd_limited_ms", 0.0) / busy) if busy else 0.0,
        })
    if len(flows) > 1:
        total = sum(f["goodput_mbps"] for f in flows)
        for f in flows:
            f["share"] = f["goodput_mbps"] / total if total else None
    queue = [s["qdisc"]["backlog_pkts"] for s in samples if s.get("qdisc")]
    drops = [s["qdisc"]["dropped"] for s in samples if s.get("qdisc")]
    return {"flows": flows, "queue_mean_pkts": statistics.fmean(queue) if queue else None,
            "queue_drops": (drops[-1] - drops[0]) if drops else None,
            "samples": len(samples)}


def receiver_goodput_mbps(server: dict[str, Any], duration_s: float) -> float:
    """Payload bytes the receiver got in the first ``duration_s`` of its test (0.1 s intervals
    of the iperf3 server), per second: what arrived by the end, not what was in flight then
    (iperf3's own end figure also counts the data that drains after the sender stops)."""
    got, until = 0.0, 0.0
    for iv in server["intervals"]:
        s = iv["sum"]
        if s["end"] <= duration_s + 1e-3:
            got += s["bytes"]
            until = s["end"]
    return got * 8 / until / 1e6 if until else 0.0


def spread(values: list[float | None]) -> dict[str, Any] | None:
    """min/max/mean of the repetitions' values (None when any is missing)."""
    if not values or any(v is None for v in values):
        return None
    vals = [float(v) for v in values if v is not None]
    return {"min": min(vals), "max": max(vals), "mean": statistics.fmean(vals), "values": vals}


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Cases (configuration + figures over repetitions) from the JSON lines of run_grid.py."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_case.setdefault(r["case"], []).append(r)
    cases = []
    for name, reps in by_case.items():
        reps.sort(key=lambda r: r["rep"])
        config = reps[0]["config"]
        flows = []
        for i, alg in enumerate(config["algorithms"]):
            fig = {k: spread([r["figures"]["flows"][i].get(k) for r in reps])
                   for k in FLOW_FIGURES}
            flows.append({"algorithm": alg, **{k: v for k, v in fig.items() if v is not None}})
        figures = {k: spread([r["figures"].get(k) for r in reps]) for k in RUN_FIGURES}
        pings = [p for r in reps for p in r.get("ping_ms", [])]
        cases.append({
            "name": name, "config": config, "repetitions": len(reps), "flows": flows,
            **{k: v for k, v in figures.items() if v is not None},
            "ping_ms": {"min": min(pings), "max": max(pings),
                        "median": statistics.median(pings)} if pings else None,
        })
    return {"cases": cases}


def delayline_lateness(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The delay line's timing over the runs that report it (bench/linux/delayline.c)."""
    late = []
    for r in runs:
        m = re.search(r"a->b (\d+) b->a (\d+) dropped (\d+) late_max_us (\d+) "
                      r"late_mean_us ([\d.]+) late_over_1ms (\d+)", r.get("delayline", ""))
        if m:
            late.append([float(x) for x in m.groups()])
    if not late:
        return None
    frames = sum(x[0] + x[1] for x in late)
    return {"runs": len(late), "frames": int(frames), "dropped": int(sum(x[2] for x in late)),
            "late_mean_us": sum(x[4] * (x[0] + x[1]) for x in late) / frames,
            "late_over_1ms_frac": sum(x[5] for x in late) / frames,
            "late_max_us_median_run": statistics.median(x[3] for x in late),
            "late_max_us_worst_run": max(x[3] for x in late)}


def noise(cases: list[dict[str, Any]], selfcheck: dict[str, Any] | None) -> dict[str, Any]:
    """How far the testbed disagrees with itself: repetition spread of every figure."""
    rel_goodput = []
    for c in cases:
        for f in c["flows"]:
            g = f["goodput_mbps"]
            if g["mean"] > 0:
                rel_goodput.append((g["max"] - g["min"]) / g["mean"])
    out: dict[str, Any] = {
        "goodput_rel_spread_median": statistics.median(rel_goodput) if rel_goodput else None,
        "goodput_rel_spread_max": max(rel_goodput) if rel_goodput else None,
    }
    if selfcheck:
        out["selfcheck"] = selfcheck["checks"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, help="JSON lines written by run_grid.py")
    ap.add_argument("--selfcheck", type=Path, help="run_grid.py --selfcheck output")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    runs = [json.loads(line) for line in args.runs.read_text().splitlines() if line.strip()]
    selfcheck = json.loads(args.selfcheck.read_text()) if args.selfcheck else None
    agg = aggregate(runs)
    kernels = sorted({r["kernel"] for r in runs})
    doc = {
        "description": "Real Linux TCP on the bench/linux testbed (network namespaces, tbf "
                       "bottleneck, user-space delay line, iptables random loss), reduced by "
                       "bench/linux/reduce.py from runs of bench/linux/run_grid.py",
        "kernel": kernels[0] if len(kernels) == 1 else kernels,
        "kernel_sysctl": (selfcheck or {}).get("kernel", {}).get("sysctl"),
        "tools": "iperf3 -J -C ALG -t DURATION -i 0.1; ss -tin and tc -s qdisc every 0.1 s; "
                 "nstat -az before and after",
        "figures": {
            "goodput_mbps": "TCP payload received in the first duration_s of the iperf3 "
                            "server's test (its 0.1 s intervals) per second",
            "goodput_iperf3_mbps": "iperf3's own end figure (sum_received), which also counts "
                                   "what drains after the sender stops",
            "rtos": "nstat TcpExtTCPTimeouts of the sender's namespace",
            "retransmits": "nstat TcpRetransSegs of the sender's namespace",
            "tlps": "nstat TcpExtTCPLossProbes",
            "sack_recoveries": "nstat TcpExtTCPSackRecovery",
            "lost_retrans": "nstat TcpExtTCPLostRetransmit",
            "spurious_undo": "nstat TcpExtTCPFullUndo + TCPPartialUndo + TCPDSACKUndo + "
                             "TCPLossUndo + TCPSpuriousRTOs",
            "cwnd_median_pkts": "median of ss cwnd sampled every 0.1 s over the transfer",
            "share": "the flow's goodput over the pair's total",
            "queue_mean_pkts": "mean of the tbf backlog (packets) sampled every 0.1 s",
            "rwnd_limited_frac": "ss rwnd_limited / busy at the end of the transfer",
        },
        **agg,
        "noise": noise(agg["cases"], selfcheck),
    }
    doc["noise"]["delayline"] = delayline_lateness(runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{args.out}: {len(agg['cases'])} cases from {len(runs)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
