"""Response functions: the closed-form goodput of loss-based algorithms under random loss.

* Mathis, Semke, Mahdavi and Ott (1997), "The macroscopic behavior of the TCP congestion avoidance
  algorithm": Reno's average window sqrt(3 / (2 p)) packets, an ACK per packet, periodic loss.
* Padhye, Firoiu, Towsley and Kurose (1998), "Modeling TCP throughput: a simple model and its
  empirical validation": Reno with timeouts (eq. 31, the "full model" approximation).
* RFC 9438 (CUBIC), Sections 4.3 and 5: the average window of the cubic function and of the
  Reno-friendly AIMD estimate under the deterministic loss model; CUBIC uses the larger.

CUBIC's C and beta are arguments, never defaults here: they belong to the algorithm's class
(flows/cubic.py), and sweeps resolve them from it (sweep.json's theory settings).

Scalars give floats, arrays give arrays; a loss probability p <= 0 gives NaN. Used by sweep
figures (`plot_tool.sweep_figures`), sweeps and the validation tests. Only numpy.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def mathis_goodput_mbps(p: Any, mss_bytes: float, rtt_s: float,
                        bits_per_mbit: float = 1e6) -> Any:
    """Reno goodput predicted by Mathis, Semke, Mahdavi and Ott (1997), in Mbps.

    rate = (MSS / RTT) * C / sqrt(p) with C = sqrt(3/2) (periodic losses, an ACK per packet):
    the sawtooth between W/2 and W packets loses one packet per 3W^2/8 sent, so its average
    window is sqrt(3 / (2 p)) packets. `p` is the loss probability (a fraction; a scalar or an
    array), `mss_bytes` the data bytes per packet, `rtt_s` the round-trip time in seconds;
    bits/s are divided by `bits_per_mbit` (1e6 for SI units, 2^20 for binary). p <= 0 gives NaN.
    """
    window = reno_average_window(p)
    return _as_output(window * mss_bytes * 8.0 / rtt_s / bits_per_mbit, p)


def padhye_rate_pps(p: Any, rtt_s: float, rto_s: float, b: float = 1.0,
                    wmax_pkts: float = float("inf")) -> Any:
    """Reno's send rate in packets/s by Padhye, Firoiu, Towsley and Kurose (1998), eq. (31):

        B(p) = min(Wmax / RTT,
                   1 / (RTT sqrt(2 b p / 3) + T0 min(1, 3 sqrt(3 b p / 8)) p (1 + 32 p^2)))

    `p` the loss probability (a loss indication per packet), `rtt_s` the round trip, `rto_s` the
    timeout T0, `b` packets per ACK, `wmax_pkts` the receiver window. Without the timeout term
    (T0 = 0) and b = 1 it is Mathis's sqrt(3 / (2 p)) / RTT. NaN where p <= 0."""
    prob = _loss_probability(p)
    denominator = (rtt_s * np.sqrt(2.0 * b * prob / 3.0)
                   + rto_s * np.minimum(1.0, 3.0 * np.sqrt(3.0 * b * prob / 8.0))
                   * prob * (1.0 + 32.0 * prob ** 2))
    return _as_output(np.minimum(wmax_pkts / rtt_s, 1.0 / denominator), p)


def reno_average_window(p: Any) -> Any:
    """Average window of Reno, AIMD(1, 0.5), under periodic loss: sqrt(3 / (2 p)) packets."""
    return _as_output(aimd_average_window(p, 1.0, 0.5), p)


def aimd_average_window(p: Any, alpha: float, beta: float) -> Any:
    """Average window, in packets, of AIMD(alpha, beta) under periodic loss of probability p
    (RFC 9438 Section 4.3, after Floyd, Handley and Padhye 2000):
    sqrt(alpha (1 + beta) / (2 (1 - beta) p)). NaN where p <= 0."""
    prob = _loss_probability(p)
    return _as_output(np.sqrt(alpha * (1.0 + beta) / (2.0 * (1.0 - beta) * prob)), p)


def cubic_average_window(p: Any, rtt_s: float, C: float, beta: float) -> Any:
    """Average window of CUBIC's cubic function, in packets (RFC 9438 Section 5, Figure 6):
    (C (3 + beta) / (4 (1 - beta)))^(1/4) * RTT^(3/4) / p^(3/4), RTT in seconds, for the
    deterministic loss model (one loss every 1/p packets). NaN where p <= 0."""
    prob = _loss_probability(p)
    factor = (C * (3.0 + beta) / (4.0 * (1.0 - beta))) ** 0.25
    return _as_output(factor * rtt_s ** 0.75 / prob ** 0.75, p)


def cubic_reno_friendly_window(p: Any, beta: float) -> Any:
    """Average window of CUBIC's Reno-friendly estimate W_est, in packets: AIMD(alpha_cubic,
    beta) with alpha_cubic = 3 (1 - beta) / (1 + beta) (RFC 9438 Section 4.3), which the RFC
    chose so that it equals Reno's sqrt(3 / (2 p))."""
    alpha_cubic = 3.0 * (1.0 - beta) / (1.0 + beta)
    return _as_output(aimd_average_window(p, alpha_cubic, beta), p)


def cubic_goodput_mbps(p: Any, mss_bytes: float, rtt_s: float, C: float, beta: float,
                       bits_per_mbit: float = 1e6) -> Any:
    """CUBIC goodput predicted by RFC 9438 Section 5.1, in Mbps.

    The average window is the larger of the cubic function's average (`cubic_average_window`) and
    the Reno-friendly region's (`cubic_reno_friendly_window`): CUBIC uses whichever of W_cubic and
    W_est is larger (Section 4.2), and the CUBIC-region entries of the RFC's Tables 1 and 2 are
    computed that way (its Reno column rounds Reno's constant sqrt(3/2) to 1.2). The rate is
    that window of `mss_bytes` packets per `rtt_s`, divided by `bits_per_mbit`. NaN where p <= 0.
    """
    window = np.maximum(np.asarray(cubic_average_window(p, rtt_s, C, beta), dtype=float),
                        np.asarray(cubic_reno_friendly_window(p, beta), dtype=float))
    return _as_output(window * mss_bytes * 8.0 / rtt_s / bits_per_mbit, p)


def _loss_probability(p: Any) -> np.ndarray:
    prob = np.asarray(p, dtype=float)
    return np.where(prob > 0, prob, np.nan)


def _as_output(value: Any, like: Any) -> Any:
    """A float when `like` is a scalar, else an array."""
    if np.ndim(like) == 0:
        return float(np.asarray(value, dtype=float))
    return np.asarray(value, dtype=float)
