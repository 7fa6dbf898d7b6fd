"""Per-flow models of the algorithms outside the fluid equilibrium (`--check`, `theory.check`).

Which flows each model applies to is declared by their algorithm's class (`theory.models`).

* **Reno, NewReno** (and Tahoe, and any class declaring the ``"loss"`` model) under random loss:
  Padhye, Firoiu, Towsley and Kurose (1998), eq. (31), which is Mathis et al. (1997) plus the time
  spent in timeouts. The inputs are measured in the run: the loss rate p of the flow's data path
  (random losses / packets transmitted on each of its link directions, over the run), the flow's
  mean RTT over the compared window, its RTO (`rto_ms`) and the share Q of its loss indications
  that were timeouts (`timeouts / retransmissions`, capped at 1) in place of the paper's estimate
  min(1, 3 sqrt(3p/8)), which assumes Reno without SACK-like recovery and predicts ten times more
  timeouts than these flows take. Q = 0 gives Mathis.
* **CUBIC** under random loss: RFC 9438 Section 5.1, the larger of the cubic function's average
  window and the Reno-friendly AIMD(alpha_cubic, beta) one, with the measured p and RTT and the
  flow's C and beta (its class's defaults: flows/cubic.py).
* **BBR (v1)**: the delivery rate is the flow's max-min fair share of its bottleneck
  (`fair_share_rates`: ACKs take their bytes of a link but never make it a flow's bottleneck),
  and with cwnd_gain 2 (the flow's, flows/bbr.py) its inflight stays below
  2 BtlBw x RTprop. One flow
  alone: BtlBw is the bottleneck rate, so the queue is at most one BDP (rate x RTprop, RTprop the
  flow's measured `base_rtt_ms`). Several flows: each one's max-filtered BtlBw can be its
  ProbeBW rate, 1.25 x its share, so the queue is at most (2 x 1.25 - 1) = 1.5 BDP. Never more
  than the buffer. The fair share needs RTprops within a factor 1.5 (BBR v1 gives flows with
  longer RTprops more) and no buffer overflow at the shared bottleneck (BBR v1 ignores loss).

None of these is a timeline: they predict per interval from what the run measured, so they are
evaluated after the run (`theory.check.predict_run`).
"""
from __future__ import annotations

import math

import numpy as np

from theory.response import cubic_average_window, cubic_reno_friendly_window


def padhye_q_rate_pps(p: float, rtt_s: float, rto_s: float, timeout_share: float) -> float:
    """Padhye et al. (1998) eq. (31) with the share of loss indications that are timeouts given:

        1 / (RTT sqrt(2 p / 3) + T0 Q p (1 + 32 p^2))    packets/s (one ACK per packet).

    Q = 0 is Mathis et al.: sqrt(3 / (2 p)) / RTT."""
    if not p > 0:
        return math.nan
    q = min(1.0, max(0.0, timeout_share))
    return 1.0 / (rtt_s * math.sqrt(2.0 * p / 3.0) + rto_s * q * p * (1.0 + 32.0 * p * p))


def cubic_rate_pps(p: float, rtt_s: float, C: float, beta: float) -> tuple:
    """RFC 9438 Section 5.1: (rate in packets/s, region) with region "cubic" or "reno-friendly",
    whichever average window is larger, for CUBIC's constants `C` and `beta` (the flow's)."""
    if not p > 0:
        return math.nan, None
    cubic = float(cubic_average_window(p, rtt_s, C, beta))
    friendly = float(cubic_reno_friendly_window(p, beta))
    if cubic >= friendly:
        return cubic / rtt_s, "cubic"
    return friendly / rtt_s, "reno-friendly"


def max_min_rates(capacity, load) -> np.ndarray:
    """Max-min fair rates (progressive filling). `capacity[r]` bytes/s, `load[r, i]` bytes that one
    unit of flow i's rate puts on resource r. Returns the rates, in units per second."""
    capacity = np.asarray(capacity, dtype=float)
    load = np.asarray(load, dtype=float)
    n = load.shape[1]
    rates = np.zeros(n)
    frozen = np.zeros(n, dtype=bool)
    left = capacity.copy()
    while not frozen.all():
        growing = load[:, ~frozen].sum(axis=1)
        used = growing > 0
        if not used.any():
            break
        step = np.min(left[used] / growing[used])
        rates[~frozen] += step
        left -= growing * step
        saturated = used & (left <= 1e-9 * capacity)
        for i in np.flatnonzero(~frozen):
            if (load[saturated, i] > 0).any():
                frozen[i] = True
    return rates


FAIR_SHARE_ROUNDS = 100     # fixed-point rounds of `fair_share_rates` (each shrinks the change
                            # by about the ACK-to-data byte ratio: a few suffice)


def fair_share_rates(capacity, data_load, ack_load) -> np.ndarray:
    """Max-min fair rates where only data makes a resource a flow's bottleneck: `data_load[r, i]`
    and `ack_load[r, i]` are the bytes one unit of flow i's rate puts on resource r with its data
    and with its ACKs. ACKs are not ECN-capable and a window is not cut for their queueing, so
    a flow whose ACKs alone cross a saturated resource is not held to its share there; they
    still take their bytes of its capacity from the flows whose data crosses it. Computed as the
    fixed point of progressive filling on the data loads over the capacity the ACKs of the
    current rates leave (`max_min_rates`)."""
    capacity = np.asarray(capacity, dtype=float)
    data_load = np.asarray(data_load, dtype=float)
    ack_load = np.asarray(ack_load, dtype=float)
    rates = max_min_rates(capacity, data_load)
    for _ in range(FAIR_SHARE_ROUNDS):
        left = np.maximum(capacity - ack_load @ rates, 0.0)
        new = max_min_rates(left, data_load)
        if np.allclose(new, rates, rtol=1e-13, atol=0.0):
            return new
        rates = new
    return rates
