"""CUBIC against the response function of RFC 9438 §5.1, and CUBIC against Reno on a long fat pipe.

RFC 9438 §5 (Discussion): with a deterministic loss model (exactly 1/p packets between losses)
CUBIC's average window, in segments, is

    AVG_W_cubic = (C (3 + beta) / (4 (1 - beta)))^(1/4) * RTT^(3/4) / p^(3/4)

which with C = 0.4, beta = 0.7 is 1.054 RTT^(3/4) / p^(3/4) (§5.1, RTT in seconds). §4.3: in the
Reno-friendly region CUBIC behaves as AIMD(alpha_cubic, beta), whose average window is

    AVG_AIMD(alpha, beta) = sqrt(alpha (1 + beta) / (2 (1 - beta) p)),
    alpha_cubic = 3 (1 - beta) / (1 + beta)   (the same average as Reno's AIMD(1, 0.5)).

The §5.1 tables give CUBIC the larger of the two: the Reno-friendly region applies where
AVG_AIMD > AVG_W_cubic (short RTT, higher p), the CUBIC region elsewhere.

Setup: one CUBIC flow, 100 Mbps, random independent loss p on the data direction of the
bottleneck (ACKs not lost), a buffer far above the window so no queue forms, and
``initial_ssthresh_pkts`` = 64 so the first slow start does not overflow the buffer (its loss
burst would take minutes to forget; the RFC formula is about the steady state). Default CUBIC
parameters (C = 0.4, beta = 0.7, fast convergence on). The average window is the mean of the
flows.csv ``window_pkts`` samples (every 0.1 s) after a warm-up; RTT is the mean of the measured
RTT samples over the same span (the base RTT plus transmission times: no queue).

Random vs deterministic loss: the formula assumes a loss every 1/p packets. Under random loss the
time between losses varies and long epochs reach the fast-growing convex part of the curve, so the
average window comes out higher: a fluid model of RFC 9438 fed with Poisson losses gives +14 % at
RTT 100-300 ms and p = 0.01-0.1 %. The simulator agrees (200 ms / 0.1 %: +4 % over 1500 s; 100 ms
/ 0.01 %: +17 % over 1500 s), but at 100 ms / 0.01 % a loss comes only every ~5 s, so even a
1000 s run varies by +-15 % from seed to seed (+20 % and +34 % seen): too few loss events for
a +-30 % check in a test. The CUBIC-region checks therefore use RTTs of 200 and 300 ms at
p = 0.1 % (a loss every ~3 s of a 0.6-MB-per-second flow: long fat pipes with BDPs of 2441 and
3662 packets), where a 600 s run sees ~200 losses; the 100 ms / 0.01 % case is used for the
CUBIC-vs-Reno goodput comparison the brief asks for.

Minimum RTO: the RFC 6298 default of 1 s for the long-RTT runs (200 ms would be below the RTT
plus variance and fire spuriously); 0.2 s (Linux) for the 20 ms Reno-friendly runs, as in the
Mathis test, so that the few timeouts do not dominate a model that has none.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from networks import dumbbell, rel_error, run, steady, steady_goodput_bps

C = 0.4
BETA = 0.7
ALPHA_CUBIC = 3.0 * (1.0 - BETA) / (1.0 + BETA)
TOLERANCE = 0.30
RATE_MBPS = 100.0
ACCESS_DELAY_MS = 1.0
SEED = 1
WARMUP_S = 20.0


def cubic_avg_window(rtt_s: float, p: float, c: float = C, beta: float = BETA) -> float:
    """RFC 9438 §5: average window of CUBIC (segments) under deterministic loss rate p."""
    return (c * (3.0 + beta) / (4.0 * (1.0 - beta))) ** 0.25 * rtt_s ** 0.75 / p ** 0.75


def aimd_avg_window(alpha: float, beta: float, p: float) -> float:
    """RFC 9438 §4.3 (eq. 3): average window of AIMD(alpha, beta) at loss rate p."""
    return math.sqrt(alpha * (1.0 + beta) / (2.0 * (1.0 - beta) * p))


def test_the_closed_forms_match_the_rfc():
    # §5.1: with C = 0.4 and beta = 0.7 the constant is 1.054
    assert cubic_avg_window(1.0, 1.0) == pytest.approx(1.054, abs=5e-4)
    # §4.3: alpha_cubic makes AIMD(alpha_cubic, 0.7) as large on average as Reno's AIMD(1, 0.5)
    assert aimd_avg_window(ALPHA_CUBIC, BETA, 1e-3) == pytest.approx(aimd_avg_window(1.0, 0.5, 1e-3))
    # Table 1 (RTT 0.1 s, C = 0.4): 187 at p = 1e-4, 1054 at p = 1e-5; Reno 120 and 379
    assert cubic_avg_window(0.1, 1e-4) == pytest.approx(187, abs=1)
    assert cubic_avg_window(0.1, 1e-5) == pytest.approx(1054, abs=1)
    assert aimd_avg_window(1.0, 0.5, 1e-4) == pytest.approx(122.5, abs=0.1)


def one_flow(algorithm: str, delay_ms: float, p: float, duration_s: float, min_rto_s=None):
    """One flow of `algorithm`; the base RTT is 2 * (delay_ms + 2 ms)."""
    transport = {"initial_ssthresh_pkts": 64}
    if min_rto_s is not None:
        transport["min_rto_s"] = min_rto_s
    topology = dumbbell(1, rate_mbps=RATE_MBPS, delay_ms=delay_ms, buffer_kb=5000,
                        access_delay_ms=ACCESS_DELAY_MS, loss_rate=p, loss_on="data",
                        algorithm=algorithm, duration_s=duration_s, seed=SEED,
                        transport=transport, name=f"{algorithm}_{delay_ms}_{p}")
    results = run(topology)
    assert results.summary["stop_reason"] == "duration"
    return {"window": float(np.mean(steady(results, "F0", "window_pkts", WARMUP_S))),
            "rtt_s": float(np.nanmean(steady(results, "F0", "rtt_ms", WARMUP_S))) / 1e3,
            "goodput_bps": steady_goodput_bps(results, "F0", WARMUP_S)}


# (one-way bottleneck delay ms, p, duration s): base RTTs 200 and 300 ms
CUBIC_REGION = [(98.0, 0.001, 600.0), (148.0, 0.001, 600.0)]
# base RTT 20 ms
RENO_FRIENDLY_REGION = [(8.0, 0.002, 100.0), (8.0, 0.005, 100.0)]


@pytest.mark.parametrize("delay_ms, p, duration_s", CUBIC_REGION)
def test_cubic_region_average_window_matches_rfc_9438(delay_ms, p, duration_s):
    r = one_flow("cubic", delay_ms, p, duration_s)
    cubic = cubic_avg_window(r["rtt_s"], p)
    aimd = aimd_avg_window(ALPHA_CUBIC, BETA, p)
    assert cubic > 1.3 * aimd            # the RFC puts this case in the CUBIC region
    error = rel_error(r["window"], cubic)
    assert abs(error) <= TOLERANCE, (
        f"RTT {r['rtt_s'] * 1e3:.1f} ms, p={p}: average window {r['window']:.1f} vs RFC 9438 "
        f"{cubic:.1f} ({error:+.1%}); Reno-friendly prediction {aimd:.1f}")
    # and the flow is really in the CUBIC region: the AIMD prediction is far off
    assert r["window"] > (1.0 + TOLERANCE) * aimd


@pytest.mark.parametrize("delay_ms, p, duration_s", RENO_FRIENDLY_REGION)
def test_reno_friendly_region_average_window_matches_aimd(delay_ms, p, duration_s):
    r = one_flow("cubic", delay_ms, p, duration_s, min_rto_s=0.2)
    cubic = cubic_avg_window(r["rtt_s"], p)
    aimd = aimd_avg_window(ALPHA_CUBIC, BETA, p)
    assert aimd > 2.0 * cubic            # the RFC puts this case in the Reno-friendly region
    error = rel_error(r["window"], aimd)
    assert abs(error) <= TOLERANCE, (
        f"RTT {r['rtt_s'] * 1e3:.1f} ms, p={p}: average window {r['window']:.1f} vs "
        f"AIMD(alpha_cubic, beta) {aimd:.1f} ({error:+.1%}); CUBIC-region formula {cubic:.1f}")


@pytest.mark.slow
def test_cubic_beats_reno_on_a_long_fat_pipe():
    """100 Mbps, base RTT 100 ms (BDP 1221 packets), p = 0.01 %: RFC 9438 Table 1 gives CUBIC
    187 packets and Reno 120 on average; the goodput ratio must exceed 1.2."""
    p = 0.0001
    cubic = one_flow("cubic", 48.0, p, 300.0)
    reno = one_flow("reno", 48.0, p, 300.0)
    ratio = cubic["goodput_bps"] / reno["goodput_bps"]
    assert ratio > 1.2, (f"CUBIC {cubic['goodput_bps'] / 1e6:.2f} Mbps vs Reno "
                         f"{reno['goodput_bps'] / 1e6:.2f} Mbps (ratio {ratio:.2f})")
    # neither is limited by the link: the comparison is between the two response functions
    assert cubic["goodput_bps"] < 0.5 * RATE_MBPS * 1e6
