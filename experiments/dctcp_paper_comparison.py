"""The data-center experiment held against the DCTCP paper's own numbers.

Alizadeh et al., *Data Center TCP (DCTCP)*, SIGCOMM 2010, §4.3 "Benchmark traffic", report in
absolute completion times what `experiments/dctcp_websearch.json` reports as slowdowns:

* Figure 22: short messages (100 kB to 1 MB) finish 3 ms sooner on average and 9 ms sooner at
  the 95th percentile under DCTCP than under TCP (NewReno with SACK, RTO_min 10 ms);
* §4.3: 1.15 % of the queries (small responses) suffer a timeout under TCP, none under DCTCP.

This script runs the experiment's topology (the same 18 runs as the sweep: three loads, DCTCP and
CUBIC, seeds 1 to 3), keeps each run's `fct.csv`, and reduces it to the same quantities:

* mean and 95th-percentile FCT (ms) of the flows of 100 kB to 1 MB;
* for the flows under 100 kB, the share that waited at least one minimum RTO: FCT minus the
  flow's FCT alone on the empty network >= RTO_min (10 ms). With 80 kB per port at 1 Gb/s a
  queue adds at most 0.64 ms per hop, so such a wait is a retransmission timeout.

    python experiments/dctcp_paper_comparison.py OUTDIR [--jobs 2] [--seeds 3]

writes OUTDIR/runs/<load>_<algorithm>_<seed>/ (the runs' results) and OUTDIR/comparison.json,
and prints the table that docs/sweeps.md quotes. A run already in OUTDIR is not run again.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGY = ROOT / "topologies" / "examples" / "dc_websearch_k8.json"
LOADS = {0.3: 701.242, 0.5: 1168.736, 0.8: 1869.978}     # arrivals per second (the sweep's)
ALGORITHMS = ("dctcp", "cubic")
MIN_RTO_S = 0.01
SHORT_MESSAGE_BYTES = (100_000, 1_000_000)
SMALL_BYTES = 100_000

# The paper's figures (§4.3, Figure 22 and its text), for the table.
PAPER = {"short_mean_benefit_ms": 3.0, "short_p95_benefit_ms": 9.0,
         "tcp_query_timeout_pct": 1.15, "dctcp_query_timeout_pct": 0.0}


def percentile(values: list, q: float) -> float:
    """The q-th percentile (0..100), numpy's linear interpolation (as fct.png's); NaN if empty."""
    return float(np.percentile(values, q)) if values else math.nan


def reduce_fct(rows: list) -> dict:
    """The paper's quantities from the rows of one or more fct.csv files (dicts of strings)."""
    short = [float(r["fct_s"]) * 1e3 for r in rows
             if SHORT_MESSAGE_BYTES[0] <= int(r["size_bytes"]) <= SHORT_MESSAGE_BYTES[1]]
    small = [r for r in rows if int(r["size_bytes"]) < SMALL_BYTES]
    waited = sum(1 for r in small if float(r["fct_s"]) - float(r["ideal_fct_s"]) >= MIN_RTO_S)
    return {"short_count": len(short),
            "short_mean_ms": sum(short) / len(short) if short else math.nan,
            "short_p95_ms": percentile(short, 95.0),
            "small_count": len(small),
            "small_timeout_pct": 100.0 * waited / len(small) if small else math.nan}


def run_one(outdir: Path, load: float, algorithm: str, seed: int) -> Path:
    """Run one configuration (if its results are not there yet); its results directory."""
    rundir = outdir / "runs" / f"{load}_{algorithm}_{seed}"
    if (rundir / "summary.json").exists():
        return rundir
    topology = json.loads(TOPOLOGY.read_text())
    workload = topology["workloads"][0]
    workload["arrivals_per_s"] = LOADS[load]
    workload["algorithm"] = algorithm
    topology["name"] = f"dc_websearch_{load}_{algorithm}"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "topology.json"
        path.write_text(json.dumps(topology))
        subprocess.run([sys.executable, str(ROOT / "initializer.py"), str(path), "--seed", str(seed),
                        "--no-plots", "--quiet", "--out", str(rundir)], check=True)
    return rundir


def read_rows(rundir: Path) -> list:
    files = sorted(rundir.rglob("fct.csv"))
    if not files:
        raise SystemExit(f"{rundir}: no fct.csv")
    with files[0].open(newline="") as f:
        return list(csv.DictReader(f))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    configs = [(load, algorithm, seed) for load in LOADS for algorithm in ALGORITHMS
               for seed in range(1, args.seeds + 1)]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        dirs = list(pool.map(lambda c: run_one(args.outdir, *c), configs))
    table = {}
    for (load, algorithm, _seed), rundir in zip(configs, dirs):
        table.setdefault(f"{load}", {}).setdefault(algorithm, []).extend(read_rows(rundir))
    result = {"paper": PAPER, "seeds": args.seeds, "loads": {}}
    print("| load | short msgs mean FCT ms DCTCP / CUBIC (benefit) | short msgs p95 FCT ms "
          "(benefit) | small flows waiting >= RTO_min, % DCTCP / CUBIC |")
    print("|---|---|---|---|")
    for load, by_algorithm in table.items():
        d = reduce_fct(by_algorithm["dctcp"])
        c = reduce_fct(by_algorithm["cubic"])
        result["loads"][load] = {"dctcp": d, "cubic": c}
        print(f"| {load} | {d['short_mean_ms']:.2f} / {c['short_mean_ms']:.2f} "
              f"({c['short_mean_ms'] - d['short_mean_ms']:+.2f}) | {d['short_p95_ms']:.2f} / "
              f"{c['short_p95_ms']:.2f} ({c['short_p95_ms'] - d['short_p95_ms']:+.2f}) | "
              f"{d['small_timeout_pct']:.2f} / {c['small_timeout_pct']:.2f} |")
    print(f"| paper (§4.3, Fig. 22) | benefit {PAPER['short_mean_benefit_ms']} ms | benefit "
          f"{PAPER['short_p95_benefit_ms']} ms | queries: {PAPER['dctcp_query_timeout_pct']} / "
          f"{PAPER['tcp_query_timeout_pct']} |")
    (args.outdir / "comparison.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
