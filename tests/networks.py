"""Topology builders shared by the tests: one dumbbell, two hosts, and steady-state measures.

Plain functions returning topology dicts (SI units) for `topologies.load_topology`, used by the
unit tests (through the `dumbbell` fixture of tests/conftest.py or directly) and by the
validation tests of tests/validation, which compare whole simulations with published theory
(Mathis et al. 1997, RFC 9438 §5.1, Jain's fairness index). A helper module, not a test module:
``from networks import dumbbell, run``.
"""
from __future__ import annotations

import numpy as np

from netsim import simulate
from topologies import load_topology

DATA_BYTES = 1024      # data packet size (the model's MSS: data_mb counts packet bytes)
ACK_BYTES = 64


def link(link_id, a, b, rate_mbps=100.0, delay_ms=1.0, buffer_kb=1000.0, **extra) -> dict:
    """One link entry, as the topology format writes it (SI); `extra` adds other fields
    (impairments, queue, duplex)."""
    return {"id": link_id, "ends": [a, b], "rate_mbps": rate_mbps, "delay_ms": delay_ms,
            "buffer_kb": buffer_kb, **extra}


def _per_flow(value, n, what):
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{what}: expected {n} values, got {len(value)}")
        return list(value)
    return [value] * n


def dumbbell(n=1, *, rate_mbps=10.0, delay_ms=10.0, buffer_kb=1000.0, loss_rate=0.0,
             loss_on="data", bottleneck_extra=None, access_delay_ms=1.0, access_rate_mbps=None,
             access_buffer_kb=10_000.0, access_jitter_ms=0.0, algorithm="reno", params=None,
             start_s=0.0, data_mb=None, duration_s=None, transport=None, seed=1,
             name="dumbbell"):
    """A dumbbell topology dict: n sender/receiver pairs S_i -> D_i through one bottleneck.

        S_i --A_i-- R1 ==L== R2 --B_i-- D_i

    * L (R1 -> R2 carries the data) has `rate_mbps`, `delay_ms`, `buffer_kb`; `loss_rate` is an
      independent per-packet loss on L, on the data direction only (`loss_on="data"`, so p is
      exactly the data-packet loss probability the models use) or on both directions
      (`loss_on="both"`). `bottleneck_extra` adds link fields (impairments) to L.
    * Access links A_i and B_i have `access_delay_ms` each (a number, or one per pair: pair i's
      base RTT is 2 * (delay_ms + 2 * access_delay_ms[i]) plus transmission times), rate
      `access_rate_mbps` (default 10x the bottleneck, so L is the only bottleneck) and a large
      buffer. `access_jitter_ms` > 0 adds a random delay, uniform in [0, access_jitter_ms], to
      every packet on the sender-side access links A_i (both directions, never reordering): the
      remedy of Floyd and Jacobson ("On traffic phase effects in packet-switched gateways",
      1992) for the phase effects that make drop-tail losses in a deterministic simulation
      single out one flow.
    * Per-pair values: `algorithm`, `params`, `start_s`, `data_mb` accept a list of n values.
    * Full duplex, static routing, SI units, 1024 B data and 64 B ACK packets.
    """
    access_rate = access_rate_mbps if access_rate_mbps is not None else 10.0 * rate_mbps
    delays = _per_flow(access_delay_ms, n, "access_delay_ms")
    algorithms = _per_flow(algorithm, n, "algorithm")
    all_params = _per_flow(params, n, "params")
    starts = _per_flow(start_s, n, "start_s")
    sizes = _per_flow(data_mb, n, "data_mb")
    bottleneck = {"id": "L", "ends": ["R1", "R2"], "rate_mbps": rate_mbps, "delay_ms": delay_ms,
                  "buffer_kb": buffer_kb}
    if loss_rate:
        if loss_on == "data":
            bottleneck["impairments"] = {"R1->R2": {"loss_rate": loss_rate}}
        elif loss_on == "both":
            bottleneck["loss_rate"] = loss_rate
        else:
            raise ValueError(f"loss_on: expected 'data' or 'both', got {loss_on!r}")
    if bottleneck_extra:
        bottleneck.update(bottleneck_extra)
    hosts, links, flows = [], [bottleneck], []
    for i in range(n):
        hosts += [f"S{i}", f"D{i}"]
        access = {"id": f"A{i}", "ends": [f"S{i}", "R1"], "rate_mbps": access_rate,
                  "delay_ms": delays[i], "buffer_kb": access_buffer_kb}
        if access_jitter_ms:
            access["jitter_ms"] = access_jitter_ms
        links.append(access)
        links.append({"id": f"B{i}", "ends": ["R2", f"D{i}"], "rate_mbps": access_rate,
                      "delay_ms": delays[i], "buffer_kb": access_buffer_kb})
        flow = {"id": f"F{i}", "src": f"S{i}", "dst": f"D{i}", "data_mb": sizes[i],
                "start_s": starts[i], "algorithm": algorithms[i]}
        if all_params[i]:
            flow["params"] = dict(all_params[i])
        flows.append(flow)
    topology = {"name": name, "units": "si", "duplex": "full", "seed": seed,
                "packet_bytes": {"data": DATA_BYTES, "ack": ACK_BYTES},
                "hosts": hosts, "routers": ["R1", "R2"], "links": links, "flows": flows,
                "duration_s": duration_s}
    if transport:
        topology["transport"] = dict(transport)
    return topology


def two_hosts(*, rate_mbps, delay_ms, buffer_kb=1000.0, impairment=None, algorithm="reno",
              data_mb=None, duration_s=None, transport=None, seed=1, name="two_hosts"):
    """H1 --L-- H2, one flow F1 from H1 to H2; `impairment` (link fields such as loss_rate,
    duplicate_rate, reorder_rate, reorder_delay_ms, jitter_ms) applies to both directions of L,
    so data and ACKs are impaired alike."""
    link = {"id": "L", "ends": ["H1", "H2"], "rate_mbps": rate_mbps, "delay_ms": delay_ms,
            "buffer_kb": buffer_kb}
    link.update(impairment or {})
    topology = {"name": name, "units": "si", "duplex": "full", "seed": seed,
                "packet_bytes": {"data": DATA_BYTES, "ack": ACK_BYTES},
                "hosts": ["H1", "H2"], "routers": [], "links": [link],
                "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": data_mb,
                           "algorithm": algorithm}],
                "duration_s": duration_s}
    if transport:
        topology["transport"] = dict(transport)
    return topology


def run(topology: dict, **options):
    """Load and simulate a topology dict; returns the `Results`."""
    return simulate(load_topology(topology), **options)


def steady(results, flow_id: str, column: str, after_s: float, before_s: float | None = None):
    """Samples of a flows.csv column of one flow with after_s < time_s <= before_s."""
    t, values = results.trace("flows", flow_id, column)
    keep = t > after_s
    if before_s is not None:
        keep &= t <= before_s
    return values[keep]


def steady_goodput_bps(results, flow_id: str, after_s: float, before_s: float | None = None):
    """Mean in-order delivery rate (bit/s) of a flow over (after_s, before_s] (SI units)."""
    return float(np.mean(steady(results, flow_id, "recv_rate_mbps", after_s, before_s))) * 1e6


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of log(y) against log(x)."""
    return float(np.polyfit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)), 1)[0])


def rel_error(measured: float, predicted: float) -> float:
    return (measured - predicted) / predicted


def base_rtt_s(delay_ms: float, access_delay_ms: float, rate_mbps: float,
               access_rate_mbps: float) -> float:
    """Propagation plus transmission times of one data packet out and its ACK back (no queue)."""
    prop = 2.0 * (delay_ms + 2.0 * access_delay_ms) / 1e3
    tx = (DATA_BYTES + ACK_BYTES) * 8.0 * (1.0 / (rate_mbps * 1e6) + 2.0 / (access_rate_mbps * 1e6))
    return prop + tx


__all__ = ["ACK_BYTES", "DATA_BYTES", "base_rtt_s", "dumbbell", "loglog_slope",
           "rel_error", "run", "steady", "steady_goodput_bps", "two_hosts"]
