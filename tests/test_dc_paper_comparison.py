"""experiments/dctcp_paper_comparison.py reduces fct.csv rows to the DCTCP paper's quantities:
short messages' (100 kB to 1 MB) mean and 95th-percentile FCT, small flows' timeout share."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parent.parent / "experiments" / "dctcp_paper_comparison.py"
spec = importlib.util.spec_from_file_location("dctcp_paper_comparison", PATH)
comparison = importlib.util.module_from_spec(spec)
spec.loader.exec_module(comparison)


def row(size_bytes, fct_s, ideal_fct_s):
    return {"size_bytes": str(size_bytes), "fct_s": repr(fct_s), "ideal_fct_s": repr(ideal_fct_s)}


def test_short_messages_are_100kb_to_1mb_and_their_p95_interpolates():
    rows = [row(100_000 + i, 0.001 * (i + 1), 0.0005) for i in range(21)]    # 1..21 ms
    rows += [row(99_999, 5.0, 0.0001), row(1_000_001, 5.0, 0.01)]             # outside
    out = comparison.reduce_fct(rows)
    assert out["short_count"] == 21
    assert out["short_mean_ms"] == pytest.approx(11.0)
    assert out["short_p95_ms"] == pytest.approx(20.0)                        # 1 + 0.95 * 20


def test_a_small_flow_counts_as_timed_out_when_it_waited_one_minimum_rto():
    rows = [row(20_000, 0.0107, 0.0002),     # waited 10.5 ms: a timeout
            row(20_000, 0.0101, 0.0002),     # 9.9 ms: queueing only
            row(50_000, 0.0005, 0.0005), row(99_999, 0.03, 0.001)]
    out = comparison.reduce_fct(rows)
    assert out["small_count"] == 4
    assert out["small_timeout_pct"] == pytest.approx(50.0)
    assert out["short_count"] == 0 and math.isnan(out["short_mean_ms"])


def test_percentile_matches_linear_interpolation():
    assert comparison.percentile([3.0, 1.0, 2.0], 50.0) == 2.0
    assert comparison.percentile([1.0, 2.0], 95.0) == pytest.approx(1.95)
    assert math.isnan(comparison.percentile([], 95.0))
