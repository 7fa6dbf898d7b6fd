"""The README figure of the data-center experiment, from a finished sweep's results.csv.

    python initializer.py sweep experiments/dctcp_websearch.json --jobs 2
    python experiments/dctcp_websearch_figure.py results/sweeps/dctcp_websearch \
        docs/figures/dctcp_websearch.png

Two rows (median, 99th percentile) by three columns (small, medium, large flows) of FCT slowdown
against the offered load, DCTCP and CUBIC, each point the mean over the seeds with ± one standard
deviation as error bars (plot_tool.sweep_figures.aggregate). Reads results.csv only.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from plot_tool.sweep_figures import aggregate  # noqa: E402

X = "workloads.W.arrivals_per_s"
LINES = "workloads.W.algorithm"
FULL_LOAD_FLOWS_PER_S = 32 * 1e9 / (8 * 1711250.0)   # 32 host links of 1 Gb/s, websearch mean
BUCKETS = (("under_100kb", "small flows (< 100 kB)"),
           ("100kb_to_10mb", "medium flows (100 kB to 10 MB)"),
           ("over_10mb", "large flows (> 10 MB)"))
QUANTILES = (("p50", "median"), ("p99", "99th percentile"))
STYLE = {"dctcp": ("tab:blue", "o", "DCTCP, step marking K = 30 kB"),
         "cubic": ("tab:red", "s", "CUBIC, drop-tail (80 kB ports)")}


def draw(results_dir: Path, out: Path) -> None:
    with open(results_dir / "results.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    seeds = sorted({row["seed"] for row in rows if row["status"] == "ok"})
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.5), sharex=True)
    for r, (q, q_name) in enumerate(QUANTILES):
        for c, (bucket, bucket_name) in enumerate(BUCKETS):
            ax = axes[r][c]
            y = f"workloads.W.{bucket}.{q}_slowdown"
            for series in aggregate(rows, X, y, LINES, error_bars="std"):
                color, marker, label = STYLE[series.line]
                load = series.x / FULL_LOAD_FLOWS_PER_S
                ax.errorbar(load, series.mean, yerr=[series.lower, series.upper], color=color,
                            marker=marker, capsize=4, label=label)
                few = series.n < len(seeds)       # runs in which no flow of the bucket finished
                if few.any():
                    ax.plot(load[few], series.mean[few], linestyle="none", marker=marker,
                            markersize=11, markerfacecolor="none", markeredgecolor=color)
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_title(f"{bucket_name}: {q_name}", fontsize=11)
            ax.grid(True, which="both", alpha=0.3)
            if c == 0:
                ax.set_ylabel(f"{q_name} FCT slowdown\n(FCT / FCT alone on the empty network)")
            if r == 1:
                ax.set_xlabel("offered load (fraction of the 32 hosts' 1 Gb/s links)")
            ax.set_xticks([0.3, 0.5, 0.8])
    axes[0][0].legend(loc="upper left", fontsize=9)
    fig.suptitle("Web search workload on a k = 8 fat tree (32 active hosts, 1 Gb/s, ECMP): "
                 "DCTCP vs CUBIC", fontsize=13)
    fig.text(0.5, 0.008, f"Each point: mean over {len(seeds)} seeds of 0.4 s; error bars: ± one standard "
             f"deviation over the seeds. Slowdown 1 = as fast as alone on the empty network.\n"
             f"Large flows: only those finished within the 0.4 s (0 to 5 per run), so their "
             f"statistics rest on few flows; a ringed point is the value of the seeds in which "
             f"one finished (fewer than {len(seeds)}, no error bar for one).",
             ha="center", fontsize=9)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results_dir", type=Path, help="the sweep's results directory")
    parser.add_argument("out", type=Path, help="the PNG to write")
    args = parser.parse_args(argv)
    draw(args.results_dir, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
