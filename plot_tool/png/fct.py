"""Drawing fct.png from its `FigureData` (matplotlib): per workload, a dot per finished flow (size
against slowdown, both on log axes) and each size bucket's median and 99th percentile.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from plot_tool.fct_data import FCT_BUCKETS, fct_buckets
from plot_tool.layout import finish_layout, shortened, stacked_axes
from plot_tool.png.common import SIDE_LEGEND, STYLE
from plot_tool.results import Table

FCT_MEDIAN_LABEL = "median slowdown of a size bucket"


FCT_P99_LABEL = "99th percentile of a size bucket"
P99_MIN_FLOWS = 100   # a bucket's 99th percentile is drawn from this many flows on: below, the
                      # interpolation between its two largest slowdowns claims a tail it lacks
WORKLOAD_ID_CHARS = 48         # a panel's workload id is shortened beyond this (ids: 255)


def draw_fct_figure(fig: Figure, fct: Table, summary: dict, workloads: Sequence[str]) -> None:
    """fct.png: one panel per workload, flow size (log) against FCT slowdown (log): a dot per
    finished flow, and per size bucket its median and 99th percentile as horizontal segments
    over the sizes of its flows, with their values written beside them."""
    buckets = fct_buckets(fct, summary)
    names = dict(FCT_BUCKETS)
    axes = list(stacked_axes(fig, len(workloads), style=STYLE))
    drawn_p99 = False
    info = summary.get("workloads") or {}
    units = summary.get("units") or {}
    small = 100 * float(units.get("bytes_per_kb") or 1000)
    large = 10 * float(units.get("bytes_per_mb") or 1_000_000)
    for ax, workload in zip(axes, workloads):
        ax.set_xscale("log")
        ax.set_yscale("log")
        rows = fct["workload"] == workload
        n = int(rows.sum())
        ax.scatter(fct["size_bytes"][rows], fct["slowdown"][rows], s=5, linewidths=0,
                   color="0.45", alpha=0.35 if n > 500 else 0.7, zorder=2)
        ax.axhline(1.0, color="0.2", linestyle=(0, (4, 2.5)), linewidth=1.0, zorder=1.8)
        for bound in (small, large):
            ax.axvline(bound, color="0.5", linestyle=":", linewidth=1.0, zorder=1.7)
        for b in (b for b in buckets if b.workload == workload):
            low, high = b.min_size / 1.15, b.max_size * 1.15
            tail = b.count >= P99_MIN_FLOWS
            drawn_p99 = drawn_p99 or tail
            for value, color, gid in ((b.p50, "tab:blue", "p50"), (b.p99, "tab:red", "p99"))[
                    :2 if tail else 1]:
                ax.plot([low, high], [value, value], color=color, linewidth=2.2, zorder=3,
                        solid_capstyle="butt", gid=f"{gid} {b.bucket}")
                above = gid == "p99"          # p50 below its segment: apart when they meet
                ax.annotate(f"{gid} {value:.3g}", xy=(low, value), xytext=(2, 2 if above else -2),
                            textcoords="offset points", va="bottom" if above else "top",
                            fontsize="x-small", color=color, zorder=4)
            counted = f"{b.count} flow" + ("s" if b.count != 1 else "") + (
                "" if tail else f" (no p99 under {P99_MIN_FLOWS})")
            ax.annotate(f"{names[b.bucket]}: {counted}", xy=(b.min_size / 1.15, 0.0),
                        xycoords=("data", "axes fraction"), xytext=(2, 3),
                        textcoords="offset points", va="bottom", fontsize="x-small", color="0.3")
        details = info.get(workload) or {}
        unfinished = details.get("flows_unfinished")
        text = f"workload {shortened(workload, WORKLOAD_ID_CHARS)}"
        if details.get("algorithm"):
            text += f" ({details['algorithm']})"
        text += f": {n} finished flows"
        if unfinished:
            text += f", {unfinished} unfinished (not drawn)"
        ax.text(0.99, 0.97, text, transform=ax.transAxes, ha="right", va="top",
                fontsize="small", bbox=dict(boxstyle="round,pad=0.2", facecolor="white",
                                            edgecolor="none", alpha=0.8), zorder=5)
        ax.set_ylabel("FCT slowdown")
        values = fct["slowdown"][rows]
        values = values[np.isfinite(values) & (values > 0)]
        if len(values):           # room below for the labels, above for the workload's text
            ax.set_ylim(min(float(values.min()), 1.0) / 4, max(float(values.max()), 1.0) * 4)
    axes[-1].set_xlabel("flow size (bytes)")
    if len(axes) > 1:                    # one size axis: the same limits in every panel
        low = min(ax.dataLim.x0 for ax in axes)
        high = max(ax.dataLim.x1 for ax in axes)
        for ax in axes:
            ax.set_xlim(low / 1.5, high * 3)
    else:
        axes[0].set_xlim(axes[0].dataLim.x0 / 1.5, axes[0].dataLim.x1 * 3)
    fig.suptitle((str(summary.get("topology", "")) or "netsim results") +
                 ": flow completion time slowdown (FCT / FCT on an empty network)")
    handles = [
        Line2D([], [], linestyle="none", marker="o", markersize=3, color="0.45",
               label="one finished flow"),
        Line2D([], [], color="tab:blue", linewidth=2.2, label=FCT_MEDIAN_LABEL),
        *([Line2D([], [], color="tab:red", linewidth=2.2,
                  label=f"{FCT_P99_LABEL}\n(of {P99_MIN_FLOWS} flows or more)")]
          if drawn_p99 else []),
        Line2D([], [], color="0.2", linestyle=(0, (4, 2.5)), linewidth=1.0,
               label="slowdown 1: the FCT on\nan empty network"),
        Line2D([], [], color="0.5", linestyle=":", linewidth=1.0,
               label="size bucket bounds\n(100 KB, 10 MB)"),
    ]
    legend = fig.legend(handles=handles, title="fct.csv; percentiles: linear\ninterpolation "
                        "over the bucket's flows", **SIDE_LEGEND)
    finish_layout(fig, axes, figure_legends=[legend])
