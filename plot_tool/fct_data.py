"""The data of fct.png (runs with workloads): the finished workload flows of fct.csv and, per
workload and size bucket (summary.json's: under 100 KB, 100 KB to 10 MB, over 10 MB, in the run's
units), the median and 99th percentile of their slowdown, computed exactly (front end).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from plot_tool.results import Table

# fct.png (runs with workloads): each finished flow's FCT slowdown against its size, and per
# workload and size bucket (summary.json's: under 100 KB, 100 KB to 10 MB, over 10 MB, in the
# run's units) the median and the 99th percentile, computed exactly from fct.csv.
FCT_FILENAME = "fct.png"


FCT_QUANTILES = (50.0, 99.0)


FCT_BUCKETS = (("under_100kb", "< 100 KB"), ("100kb_to_10mb", "100 KB \u2013 10 MB"),
               ("over_10mb", "> 10 MB"))


@dataclass
class FctBucket:
    """The finished flows of one workload in one size bucket: their count, size range and the
    `FCT_QUANTILES` of their slowdown (numpy's linear percentiles of the fct.csv values)."""

    workload: str
    bucket: str               # "under_100kb", ...
    count: int
    min_size: float
    max_size: float
    p50: float
    p99: float


def normalize_fct(fct: Any) -> Table:
    columns = {str(c): fct[c] for c in fct}
    out: Table = {}
    for name in ("workload", "flow"):
        out[name] = np.asarray(columns[name]).astype(str)
    for name in ("size_bytes", "slowdown", "fct_s"):
        out[name] = np.asarray(columns[name], dtype=np.float64)
    return out


def fct_buckets(fct: Table, summary: dict) -> list[FctBucket]:
    """Per workload (in order of first appearance) and size bucket with flows: `FctBucket`.
    Bucket bounds as the summary's: size < 100 KB, 100 KB <= size <= 10 MB, size > 10 MB (KB and
    MB in the run's units)."""
    units = summary.get("units") or {}
    small = 100 * float(units.get("bytes_per_kb") or 1000)
    large = 10 * float(units.get("bytes_per_mb") or 1_000_000)
    size, slowdown = fct["size_bytes"], fct["slowdown"]
    masks = {"under_100kb": size < small, "100kb_to_10mb": (size >= small) & (size <= large),
             "over_10mb": size > large}
    out = []
    for workload in dict.fromkeys(fct["workload"].tolist()):
        mine = (fct["workload"] == workload) & np.isfinite(slowdown)
        for bucket, _ in FCT_BUCKETS:
            rows = mine & masks[bucket]
            if not rows.any():
                continue
            p50, p99 = np.percentile(slowdown[rows], FCT_QUANTILES)
            out.append(FctBucket(workload, bucket, int(rows.sum()), float(size[rows].min()),
                                 float(size[rows].max()), float(p50), float(p99)))
    return out
