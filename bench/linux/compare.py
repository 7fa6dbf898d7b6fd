"""netsim against the recorded real-Linux runs (tests/data/linux/reference.json).

For every recorded case, build the equivalent netsim dumbbell, run it, reduce its results to the
testbed's figures and judge each figure by the criteria of issue 21 (docs/validation.md,
"Against real Linux")::

    python bench/linux/compare.py                      # stack "linux", every case
    python bench/linux/compare.py --stack classic      # the classic stack aligned by hand
    python bench/linux/compare.py --only cubic_rtt50_buf4_loss0 --json out.json

The topology (``topology_for``): senders S1..Sn and receivers T1..Tn on 1 Gb/s access links of
``ACCESS_DELAY_MS`` each, a bottleneck R1-R2 at the case's rate with a buffer of ``buffer_pkts``
minus one waiting 1514-byte frames (`waiting_buffer_bytes`, see below) and a propagation delay making
up the rest of the RTT, 1514-byte data packets and 66-byte ACKs (Ethernet frames with TCP
timestamps, as on the testbed), random loss on R1->R2 (after the bottleneck's transmitter, as
the testbed drops after the tbf), every flow sending from 0 s for the case's duration. A case
with random loss runs with as many seeds as Linux had repetitions and each figure is the mean
over them (``seeds_for``). ``stack="linux"`` sets only ``"transport": {"stack": "linux"}``;
``stack="classic"`` aligns the classic stack by hand (IW 10, min RTO 200 ms, delayed ACKs), as
the issue's "before" figures did.

netsim counts whole data packets as goodput; the testbed counts TCP payload, so netsim's goodput
is scaled by 1448/1514.

The testbed's bottleneck is a tbf (net/sched/sch_tbf.c) with a bfifo child of ``limit`` bytes,
netsim's a transmitter behind a drop-tail buffer. The tbf keeps a packet queued until its bucket
holds the packet's tokens (tbf_dequeue peeks at the head, and dequeues it only then; it then
leaves at once over the veth), so when the link is busy the head packet is in the backlog for its
whole transmission time, and the bfifo's byte limit counts it (bfifo_enqueue compares the
backlog including the head). netsim's buffer holds only the packets waiting behind the one being
transmitted. So the equivalent buffer is one frame less (`waiting_buffer_bytes`) and the
equivalent of the sampled backlog is the waiting packets plus the packet in transmission
(`tbf_backlog_pkts`). Not modelled: the tbf's bucket of two frames (``burst``), which lets up to
two packets arriving after an idle period of two frame times leave at once, uncounted (netsim
counts the first as in transmission).
"""
from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "data" / "linux" / "reference.json"
ACCESS_DELAY_MS = 0.05        # per access link: the testbed's veth + forwarding, ~0.2 ms per RTT
ACCESS_RATE_MBPS = 1000
ACCESS_BUFFER_KB = 10000
CLASSIC_TRANSPORT = {"initial_cwnd_pkts": 10, "min_rto_s": 0.2}


# -- the criteria of issue 21 item 5 -----------------------------------------------------------
def goodput_agrees(netsim: float, linux: dict[str, float]) -> bool:
    """Within 3 % of Linux's mean, or within Linux's spread (min..max of the repetitions)."""
    return abs(netsim - linux["mean"]) <= 0.03 * linux["mean"] or \
        linux["min"] <= netsim <= linux["max"]


def rtos_agree(netsim: float, linux: dict[str, float]) -> bool:
    """At most Linux's maximum + 1."""
    return netsim <= linux["max"] + 1


def queue_agrees(netsim: float, linux: dict[str, float]) -> bool:
    """Within 25 % of Linux's mean, or within 2 packets."""
    return abs(netsim - linux["mean"]) <= max(0.25 * linux["mean"], 2.0)


def window_agrees(netsim: float, linux: dict[str, float]) -> bool:
    """Within 20 % of Linux's mean, or within 3 packets."""
    return abs(netsim - linux["mean"]) <= max(0.20 * linux["mean"], 3.0)


def share_agrees(netsim: float, linux: dict[str, float]) -> bool:
    """Within 5 percentage points of Linux's mean share."""
    return abs(netsim - linux["mean"]) <= 0.05


CRITERIA = {"goodput_mbps": goodput_agrees, "rtos": rtos_agree, "queue_mean_pkts": queue_agrees,
            "cwnd_median_pkts": window_agrees, "share": share_agrees}


@dataclass
class Row:
    """One compared figure."""

    case: str
    flow: str            # "F1 cubic", or "" for a figure of the bottleneck
    figure: str
    linux: dict[str, float]
    netsim: float
    agrees: bool

    def as_dict(self) -> dict[str, Any]:
        return {"case": self.case, "flow": self.flow, "figure": self.figure,
                "linux_mean": self.linux["mean"], "linux_min": self.linux["min"],
                "linux_max": self.linux["max"], "netsim": self.netsim, "agrees": self.agrees}


# -- netsim side ---------------------------------------------------------------------------------
def waiting_buffer_bytes(cfg: dict[str, Any]) -> int:
    """The netsim buffer equivalent to the testbed's tbf ``limit`` (see the module docstring):
    the tbf's byte limit (its bfifo child, bfifo_enqueue) counts the head packet that waits
    for tokens, netsim's buffer only the packets waiting behind the one in transmission, so
    the tbf's B frames are B - 1 waiting frames and one in transmission."""
    return cfg["buffer_bytes"] - cfg["frame_bytes"]


def tbf_backlog_pkts(direction: dict[str, Any]) -> float:
    """The bottleneck's mean queue as the testbed measures it, the tbf backlog (``tc -s qdisc``
    ``backlog ...p``): the packets waiting plus the head packet, which stays in the qdisc until
    the bucket holds its tokens (tbf_dequeue), that is while netsim transmits it. netsim's
    time-averaged waiting packets plus the fraction of the time its transmitter is busy (the
    link's utilization)."""
    return direction["avg_buffer_pkts"] + direction["utilization"]


def topology_for(case: dict[str, Any], stack: str = "linux", seed: int = 1) -> dict[str, Any]:
    """The netsim dumbbell equivalent to a recorded case (see the module docstring)."""
    cfg = case["config"]
    n = len(cfg["algorithms"])
    bottleneck_delay_ms = cfg["rtt_ms"] / 2 - 2 * ACCESS_DELAY_MS
    bottleneck: dict[str, Any] = {
        "id": "LB", "ends": ["R1", "R2"], "rate_mbps": cfg["rate_mbps"],
        "delay_ms": bottleneck_delay_ms, "buffer_kb": waiting_buffer_bytes(cfg) / 1000}
    if cfg["loss"] > 0:
        bottleneck["impairments"] = {"R1->R2": {"loss_rate": cfg["loss"]}}
    links = [bottleneck]
    for i in range(1, n + 1):
        for host, ends in ((f"S{i}", [f"S{i}", "R1"]), (f"T{i}", ["R2", f"T{i}"])):
            links.append({"id": f"L{host}", "ends": ends, "rate_mbps": ACCESS_RATE_MBPS,
                          "delay_ms": ACCESS_DELAY_MS, "buffer_kb": ACCESS_BUFFER_KB})
    flows = []
    for i, alg in enumerate(cfg["algorithms"], start=1):
        flow: dict[str, Any] = {"id": f"F{i}", "src": f"S{i}", "dst": f"T{i}",
                                "start_s": cfg.get("start_s", [0.0] * n)[i - 1],
                                "algorithm": alg}
        if stack == "classic":
            flow["delayed_ack"] = True
        flows.append(flow)
    transport = dict(CLASSIC_TRANSPORT) if stack == "classic" else {"stack": stack}
    return {
        "name": f"linuxref_{case['name']}".replace(".", "_"),
        "description": f"netsim equivalent of the real-Linux reference case {case['name']} "
                       "(bench/linux/compare.py)",
        "units": "si", "duplex": "full",
        "packet_bytes": {"data": cfg["frame_bytes"], "ack": cfg["ack_frame_bytes"]},
        "transport": transport, "seed": seed, "duration_s": cfg["duration_s"],
        "hosts": [f"S{i}" for i in range(1, n + 1)] + [f"T{i}" for i in range(1, n + 1)],
        "routers": ["R1", "R2"], "links": links, "flows": flows,
    }


def run_netsim(topology: dict[str, Any], workdir: Path, root: Path = ROOT) -> Path:
    """Run ``root``/initializer.py on the topology; return the results directory."""
    topo = workdir / f"{topology['name']}.json"
    topo.write_text(json.dumps(topology, indent=1))
    out = workdir / "results"
    res = subprocess.run([sys.executable, str(root / "initializer.py"), str(topo), "--out",
                          str(out), "--no-plots", "--interval", "0.1"],
                         capture_output=True, text=True, cwd=root, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(f"netsim failed on {topo.name}: {res.stderr.strip()[-2000:]}")
    return out


def reduce_netsim(case: dict[str, Any], results: Path) -> dict[str, Any]:
    """netsim's results reduced to the testbed's figures (bench/linux/reduce.py)."""
    cfg = case["config"]
    summary = json.loads((results / "summary.json").read_text())
    payload_ratio = cfg["payload_bytes"] / cfg["frame_bytes"]
    windows: dict[str, list[float]] = {}
    with (results / "flows.csv").open() as f:
        for row in csv.DictReader(f):
            if row["window_pkts"] and float(row["time_s"]) <= cfg["duration_s"] + 1e-9:
                windows.setdefault(row["flow"], []).append(float(row["window_pkts"]))
    flows = []
    for i, alg in enumerate(cfg["algorithms"], start=1):
        fs = summary["flows"][f"F{i}"]
        counters = fs.get("counters") or {}
        flows.append({
            "algorithm": alg,
            "goodput_mbps": fs["goodput_mbps"] * payload_ratio,
            "rtos": fs["timeouts"],
            "retransmits": fs["retransmissions"],
            "tlps": counters.get("tlp"),
            "sack_recoveries": counters.get("sack_recoveries"),
            "lost_retrans": counters.get("lost_retrans"),
            "spurious_undo": counters.get("spurious_undo"),
            "rto_ms": fs.get("rto_ms"),
            "cwnd_median_pkts": statistics.median(windows.get(f"F{i}", [0.0])),
        })
    if len(flows) > 1:
        total = sum(f["goodput_mbps"] for f in flows)
        for f in flows:
            f["share"] = f["goodput_mbps"] / total if total else 0.0
    direction = summary["links"]["LB"]["directions"]["R1->R2"]
    return {"flows": flows, "queue_mean_pkts": tbf_backlog_pkts(direction),
            "queue_drops": direction["drops"]}


def compare_case(case: dict[str, Any], netsim: dict[str, Any]) -> list[Row]:
    """Judge every compared figure of one case."""
    rows = []
    pair = len(case["flows"]) > 1
    for i, (lf, nf) in enumerate(zip(case["flows"], netsim["flows"]), start=1):
        label = f"F{i} {lf['algorithm']}"
        figures = ["goodput_mbps", "rtos", "cwnd_median_pkts"] + (["share"] if pair and i == 1
                                                                   else [])
        for fig in figures:
            rows.append(Row(case["name"], label, fig, lf[fig], nf[fig],
                            CRITERIA[fig](nf[fig], lf[fig])))
    q = case["queue_mean_pkts"]
    rows.append(Row(case["name"], "", "queue_mean_pkts", q, netsim["queue_mean_pkts"],
                    queue_agrees(netsim["queue_mean_pkts"], q)))
    return rows


def seeds_for(case: dict[str, Any], first_seed: int = 1) -> list[int]:
    """The seeds a case runs with: as many as Linux's repetitions when the case has random
    loss (the only randomness of these runs), else one (the run does not depend on it)."""
    n = case["repetitions"] if case["config"]["loss"] > 0 else 1
    return list(range(first_seed, first_seed + n))


def run_case(case: dict[str, Any], stack: str, seed: int = 1,
             root: Path = ROOT) -> dict[str, Any]:
    """Build, run and reduce the netsim equivalent of one recorded case; with random loss, the
    mean of each figure over ``seeds_for`` runs, as Linux's figures are means over repetitions."""
    runs = []
    for s in seeds_for(case, seed):
        with tempfile.TemporaryDirectory(prefix="netsim-linuxref-") as tmp:
            results = run_netsim(topology_for(case, stack, s), Path(tmp), root)
            runs.append(reduce_netsim(case, results))
    if len(runs) == 1:
        return runs[0]
    flows = []
    for i, flow in enumerate(runs[0]["flows"]):
        merged = dict(flow)
        for key, value in flow.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                merged[key] = statistics.fmean(r["flows"][i][key] for r in runs)
        flows.append(merged)
    return {"flows": flows, "seeds": seeds_for(case, seed),
            "queue_mean_pkts": statistics.fmean(r["queue_mean_pkts"] for r in runs),
            "queue_drops": statistics.fmean(r["queue_drops"] for r in runs)}


def load_reference(path: Path = REFERENCE) -> dict[str, Any]:
    return json.loads(path.read_text())


def fmt(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def table(rows: list[Row]) -> str:
    """The agreement table as Markdown."""
    lines = ["| case | flow | figure | Linux mean [min, max] | netsim | agrees |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.case} | {r.flow} | {r.figure} | {fmt(r.linux['mean'])} "
                     f"[{fmt(r.linux['min'])}, {fmt(r.linux['max'])}] | {fmt(r.netsim)} | "
                     f"{'yes' if r.agrees else '**no**'} |")
    ok = sum(r.agrees for r in rows)
    lines.append("")
    lines.append(f"{ok} of {len(rows)} figures agree ({100 * ok / len(rows):.0f} %)"
                 if rows else "no figures")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stack", default="linux", choices=["linux", "classic"])
    ap.add_argument("--reference", type=Path, default=REFERENCE)
    ap.add_argument("--only", nargs="*", help="case names (default: every recorded case)")
    ap.add_argument("--seed", type=int, default=1,
                    help="first seed (cases with random loss run as many seeds as Linux's "
                         "repetitions from it)")
    ap.add_argument("--netsim-root", type=Path, default=ROOT,
                    help="checkout whose initializer.py runs the cases (e.g. an older commit "
                         "unpacked with git archive, for a 'before' table)")
    ap.add_argument("--json", type=Path, help="also write the rows and netsim figures here")
    args = ap.parse_args(argv)
    ref = load_reference(args.reference)
    cases = [c for c in ref["cases"] if not args.only or c["name"] in set(args.only)]
    rows: list[Row] = []
    figures = {}
    for case in cases:
        netsim = run_case(case, args.stack, args.seed, args.netsim_root)
        figures[case["name"]] = netsim
        case_rows = compare_case(case, netsim)
        rows.extend(case_rows)
        bad = [f"{r.flow} {r.figure} {fmt(r.netsim)} vs {fmt(r.linux['mean'])}"
               for r in case_rows if not r.agrees]
        print(f"{case['name']}: {sum(r.agrees for r in case_rows)}/{len(case_rows)}"
              + (f"  ({'; '.join(bad)})" if bad else ""), file=sys.stderr)
    print(table(rows))
    by_fig: dict[str, list[bool]] = {}
    for r in rows:
        by_fig.setdefault(r.figure, []).append(r.agrees)
    for fig, oks in by_fig.items():
        print(f"{fig}: {sum(oks)}/{len(oks)} agree")
    if args.json:
        args.json.write_text(json.dumps({"stack": args.stack, "seed": args.seed,
                                         "rows": [r.as_dict() for r in rows],
                                         "netsim": figures}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
