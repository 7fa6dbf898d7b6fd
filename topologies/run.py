"""Running a network: termination, the stall guard, statistics, and the results of a run.

A run ends when every finite flow has completed, when `duration_s` is reached, or when the stall
guard finds that no packet of any unfinished flow (data at the receiver, or ACK at the sender) has
arrived for `stall_timeout_s` of simulated time (it then reports which flows stalled and why). Statistics are sampled every
`interval_s` into long-format tables; see docs/outputs.md for what each column means.
"""
from __future__ import annotations

import csv
import json
import logging
import math
import time
from pathlib import Path

import numpy as np

from simulator.sampling import Sampler
from topologies.build import Network, build_network
from topologies.spec import TopologySpec

log = logging.getLogger(__name__)

VERSION = "0.1.0"
DEFAULT_INTERVAL_S = 0.1
STALL_TIMEOUT_S = 1800.0     # thirty times the RFC 6298 maximum RTO: a flow retransmitting into
                             # 50 % loss gets thirty attempts (odds of all failing ~1e-9) before it
                             # counts as stalled; waiting costs only timer events
STALL_CHECK_S = 1.0

LINK_COLUMNS = ("rate_bps", "buffer_bytes", "buffer_pkts", "backlog_bytes", "drops",
                "failure_drops", "impairment_drops", "routing_rate_bps")
FLOW_COLUMNS = ("send_rate_bps", "recv_rate_bps", "arrival_rate_bps", "window_pkts", "rtt_s")
HOST_COLUMNS = ("send_rate_bps", "recv_rate_bps")


class RunError(ValueError):
    """The topology cannot be run as asked (e.g. a flow without end and no duration)."""


# -- probes: per-interval values from cumulative counters -----------------------------------
class _DirectionProbe:
    __slots__ = ("d", "tx_bytes", "dropped", "area_bytes", "area_pkts", "area_work", "failures",
                 "impaired", "routing_bytes")

    def __init__(self, d):
        self.d = d
        self.tx_bytes = self.dropped = self.failures = self.impaired = self.routing_bytes = 0
        self.area_bytes = self.area_pkts = self.area_work = 0.0

    def __call__(self, now: float, span: float):
        d = self.d
        d.settle(now)
        failures = d.failed + d.lost_in_flight
        waiting = d.area_bytes - self.area_bytes
        row = ((d.tx_bytes - self.tx_bytes) * 8.0 / span, waiting / span,
               (d.area_pkts - self.area_pkts) / span,
               (waiting + d.area_work - self.area_work) / span, float(d.dropped - self.dropped),
               float(failures - self.failures), float(d.impaired_drops - self.impaired),
               (d.routing_bytes - self.routing_bytes) * 8.0 / span)
        self.impaired = d.impaired_drops
        self.tx_bytes, self.dropped, self.failures = d.tx_bytes, d.dropped, failures
        self.area_bytes, self.area_pkts, self.area_work = d.area_bytes, d.area_pkts, d.area_work
        self.routing_bytes = d.routing_bytes
        return row


class _FlowProbe:
    __slots__ = ("f", "bytes_sent", "delivered", "arrived", "rtt_sum", "rtt_count")

    def __init__(self, f):
        self.f = f
        self.bytes_sent = self.delivered = self.arrived = self.rtt_count = 0
        self.rtt_sum = 0.0

    def __call__(self, now: float, span: float):
        f = self.f
        if now <= f.start_s or (f.finish_s is not None and f.finish_s <= now - span):
            return None
        count = f.rtt_count - self.rtt_count
        rtt = (f.rtt_sum - self.rtt_sum) / count if count else math.nan
        row = ((f.bytes_sent - self.bytes_sent) * 8.0 / span,
               (f.delivered_bytes - self.delivered) * 8.0 / span,
               (f.arrived_bytes - self.arrived) * 8.0 / span, f.cwnd, rtt)
        self.bytes_sent, self.delivered, self.arrived = f.bytes_sent, f.delivered_bytes, f.arrived_bytes
        self.rtt_sum, self.rtt_count = f.rtt_sum, f.rtt_count
        return row


class _HostProbe:
    __slots__ = ("h", "sent", "received")

    def __init__(self, h):
        self.h = h
        self.sent = self.received = 0

    def __call__(self, now: float, span: float):
        h = self.h
        row = ((h.sent_bytes - self.sent) * 8.0 / span, (h.received_bytes - self.received) * 8.0 / span)
        self.sent, self.received = h.sent_bytes, h.received_bytes
        return row


# -- the run ----------------------------------------------------------------------------------
class Run:
    """One simulation of a topology; `execute()` returns its `Results`."""

    def __init__(self, spec: TopologySpec, *, duration_s: float | None = None,
                 seed: int | None = None, interval_s: float = DEFAULT_INTERVAL_S,
                 stall_timeout_s: float = STALL_TIMEOUT_S, progress=None):
        self.spec = spec
        self.duration_s = spec.duration_s if duration_s is None else duration_s
        self.seed = spec.seed if seed is None else seed
        if not interval_s > 0:
            raise RunError(f"--interval: expected a positive number of seconds, got {interval_s}")
        if self.duration_s is not None and not self.duration_s > 0:
            raise RunError(f"duration: expected a positive number of seconds, got {self.duration_s}")
        endless = [f.id for f in spec.flows if f.data_bytes is None]
        if self.duration_s is None and (endless or not spec.flows):
            what = f"flow {endless[0]} has no data_mb" if endless else "the topology has no flows"
            raise RunError(f"{spec.source}: {what}, so nothing ends the run: "
                           f"set duration_s in the file or pass --duration")
        self.interval_s = interval_s
        self.stall_timeout_s = stall_timeout_s
        self.progress = progress
        self.network: Network = build_network(spec, self.seed)
        self.sim = self.network.sim
        self.sampler = Sampler(self.sim, interval_s)
        self._unfinished = sum(1 for f in spec.flows if f.data_bytes is not None)
        self._endless = bool(endless)
        self._stall_detail = None
        self._register_probes()

    def _register_probes(self) -> None:
        net, sampler = self.network, self.sampler
        links = sampler.table("links", ("link", "direction"), LINK_COLUMNS)
        for link in net.links.values():
            for d in link.directions:
                sampler.register(links, (link.id, d.label), _DirectionProbe(d))
        flows = sampler.table("flows", ("flow",), FLOW_COLUMNS)
        for flow in net.flows.values():
            sampler.register(flows, (flow.id,), _FlowProbe(flow))
            flow.on_finish = self._on_flow_finish
        hosts = sampler.table("hosts", ("host",), HOST_COLUMNS)
        for host in net.hosts.values():
            sampler.register(hosts, (host.id,), _HostProbe(host))

    def _on_flow_finish(self, flow) -> None:
        log.info("t=%.4f s: flow %s completed", self.sim.now, flow.id)
        self._unfinished -= 1
        if self._unfinished == 0 and not self._endless:
            self.sim.stop("completed")

    def _check_stall(self, _=None) -> None:
        now = self.sim.now
        active = [f for f in self.network.flows.values() if f.started and not f.finished]
        if active and all(now - f.last_progress_s >= self.stall_timeout_s for f in active):
            self._stall_detail = "; ".join(self._why_stalled(f) for f in active)
            log.warning("stall guard: %s", self._stall_detail)
            self.sim.stop("stalled")
            return
        self.sim.schedule(STALL_CHECK_S, self._check_stall)

    def _why_stalled(self, f) -> str:
        no_route = sum(r.no_route_drops for r in self.network.routers.values())
        total = "unbounded" if f.data_bytes is None else str(f.n_packets)
        reason = (f"{f.id} made no progress since t={f.last_progress_s:.3f} s (no packet of it "
                  f"arrived at either end): packet {f.snd_una} "
                  f"of {total} unacknowledged after {f.timeouts} timeouts (RTO {f.rto:.3g} s, "
                  f"state {f.state})")
        if no_route:
            reason += f"; routers dropped {no_route} packets for lack of a route"
        return reason

    def _report_progress(self, _=None) -> None:
        self.progress(self.sim.now, self._fraction_done())
        self.sim.schedule(self._progress_step_s, self._report_progress)

    def _fraction_done(self):
        fractions = []
        if self.duration_s:
            fractions.append(self.sim.now / self.duration_s)
        finite = [f for f in self.network.flows.values() if f.data_bytes is not None]
        if finite and not self._endless:
            fractions.append(sum(f.delivered_bytes for f in finite) / sum(f.data_bytes for f in finite))
        return min(1.0, max(fractions)) if fractions else None

    def execute(self) -> "Results":
        sim = self.sim
        self.sampler.start()
        sim.schedule(STALL_CHECK_S, self._check_stall)
        if self.progress is not None:
            self._progress_step_s = max(self.interval_s, (self.duration_s or 10.0) / 500.0)
            sim.schedule(0.0, self._report_progress)
        wall_start = time.perf_counter()
        sim.run(until=self.duration_s)
        wall_s = time.perf_counter() - wall_start
        reason = sim.stop_reason or "duration"
        if reason == "completed":
            detail = "all flows completed"
        elif reason == "stalled":
            detail = f"stall guard: {self._stall_detail}"
        else:
            detail = f"simulated time reached {self.duration_s} s"
        self.sampler.finish()
        if self.progress is not None:
            self.progress(sim.now, 1.0 if reason == "completed" else self._fraction_done())
        return Results(self, reason, detail, wall_s)


def simulate(spec: TopologySpec, **options) -> "Results":
    """Run `spec` to its end and return the `Results` (options: see `Run`)."""
    return Run(spec, **options).execute()


# -- results ---------------------------------------------------------------------------------
def _mean(values) -> float | None:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else None


def _round(value, digits: int = 9):
    return None if value is None else float(f"{value:.{digits}g}")


class Results:
    """What a run produced: `summary` (dict) and the `links`, `flows`, `hosts` tables.

    Tables map column names to numpy arrays, in the topology's units, exactly as written to the
    CSV files (docs/outputs.md). `network` is the simulated network, for inspection.
    """

    def __init__(self, run: Run, stop_reason: str, stop_detail: str, wall_s: float):
        self.network = run.network
        units = run.spec.units
        self.units = units
        mbit, kb = float(units.bits_per_mbit), float(units.bytes_per_kb)
        tables = run.sampler.tables
        self.links = self._columns(tables["links"], {"rate_bps": ("rate_mbps", mbit),
                                                     "buffer_bytes": ("buffer_kb", kb),
                                                     "buffer_pkts": ("buffer_pkts", 1.0),
                                                     "backlog_bytes": ("backlog_kb", kb),
                                                     "drops": ("drops", 1.0),
                                                     "failure_drops": ("failure_drops", 1.0),
                                                     "impairment_drops": ("impairment_drops", 1.0),
                                                     "routing_rate_bps": ("routing_rate_mbps", mbit)})
        self.flows = self._columns(tables["flows"], {"send_rate_bps": ("send_rate_mbps", mbit),
                                                     "recv_rate_bps": ("recv_rate_mbps", mbit),
                                                     "arrival_rate_bps": ("arrival_rate_mbps", mbit),
                                                     "window_pkts": ("window_pkts", 1.0),
                                                     "rtt_s": ("rtt_ms", 1e-3)})
        self.hosts = self._columns(tables["hosts"], {"send_rate_bps": ("send_rate_mbps", mbit),
                                                     "recv_rate_bps": ("recv_rate_mbps", mbit)})
        log = self.network.route_log
        self.routes = {
            "time_s": np.array([row[0] for row in log], dtype=float),
            "router": np.array([row[1] for row in log], dtype=str),
            "destination": np.array([row[2] for row in log], dtype=str),
            "next_hop": np.array([row[3] for row in log], dtype=str),
            "link": np.array([row[4] for row in log], dtype=str),
            "cost_ms": np.array([row[5] * 1e3 for row in log], dtype=float),
        }
        self.summary = self._summarize(run, stop_reason, stop_detail, wall_s)

    @staticmethod
    def _columns(table, renames: dict) -> dict:
        out = {"time_s": np.asarray(table.time_s, dtype=float)}
        for name, column in zip(table.key_columns, table.keys):
            out[name] = np.asarray(column, dtype=str)
        for name, column in zip(table.value_columns, table.values):
            new_name, scale = renames[name]
            out[new_name] = np.asarray(column, dtype=float) / scale
        return out

    def _summarize(self, run: Run, stop_reason: str, stop_detail: str, wall_s: float) -> dict:
        spec, net, units = run.spec, self.network, self.units
        end_s = run.sim.now
        mbit, kb, mb = units.bits_per_mbit, units.bytes_per_kb, units.bytes_per_mb
        flows = {}
        for flow in net.flows.values():
            done = flow.finish_s is not None
            elapsed = (flow.finish_s if done else end_s) - flow.start_s
            windows = self.flows["window_pkts"][self.flows["flow"] == flow.id]
            flows[flow.id] = {
                "algorithm": flow.algorithm, "src": flow.src.id, "dst": flow.dst.id,
                "data_mb": None if flow.data_bytes is None else _round(flow.data_bytes / mb),
                "data_bytes": flow.data_bytes, "start_s": flow.start_s,
                "finish_s": _round(flow.finish_s), "completed": done,
                "goodput_mbps": _round(flow.delivered_bytes * 8.0 / elapsed / mbit) if elapsed > 0 else 0.0,
                "avg_rtt_ms": _round(flow.rtt_sum / flow.rtt_count * 1e3) if flow.rtt_count else None,
                "avg_window_pkts": _round(float(windows.mean())) if len(windows) else None,
                "packets_sent": flow.packets_sent, "retransmissions": flow.retransmissions,
                "timeouts": flow.timeouts, "delivered_bytes": flow.delivered_bytes,
                "in_order": flow.in_order and (not done or flow.delivered_all()),
            }
        links = {}
        for link in net.links.values():
            directions = {}
            for d in link.directions:
                d.settle(end_s)
                rate_bps = d.tx_bytes * 8.0 / end_s if end_s > 0 else 0.0
                directions[d.label] = {
                    "avg_buffer_kb": _round(d.area_bytes / end_s / kb) if end_s > 0 else 0.0,
                    "avg_buffer_pkts": _round(d.area_pkts / end_s) if end_s > 0 else 0.0,
                    "avg_backlog_kb": _round((d.area_bytes + d.area_work) / end_s / kb) if end_s > 0 else 0.0,
                    "drops": d.dropped, "failure_drops": d.failed + d.lost_in_flight,
                    "impairment_drops": d.impaired_drops, "duplicated": d.duplicated,
                    "reordered": d.delayed,
                    "routing_packets": d.routing_pkts, "routing_drops": d.routing_dropped,
                    "packets_transmitted": d.tx_pkts,
                    "avg_rate_mbps": _round(rate_bps / mbit),
                    "utilization": _round(rate_bps / link.rate_bps),
                }
            links[link.id] = {"ends": [n.id for n in link.ends], "rate_mbps": _round(link.rate_bps / mbit),
                              "delay_ms": _round(link.delay_s * 1e3), "buffer_kb": _round(link.buffer_bytes / kb),
                              "duplex": link.duplex, "directions": directions}
        hosts = {}
        for host in net.hosts.values():
            scale = 8.0 / end_s / mbit if end_s > 0 else 0.0
            hosts[host.id] = {"avg_send_rate_mbps": _round(host.sent_bytes * scale),
                              "avg_recv_rate_mbps": _round(host.received_bytes * scale)}
        return {
            "netsim_version": VERSION, "topology": spec.name, "source": spec.source,
            "description": spec.description, "seed": run.seed, "units": units.to_dict(),
            "interval_s": run.interval_s, "end_time_s": _round(end_s),
            "stop_reason": stop_reason, "stop_detail": stop_detail,
            "wall_time_s": round(wall_s, 4), "events": run.sim.events,
            "packet_hops": sum(d.tx_pkts for link in net.links.values() for d in link.directions),
            "routing": {"protocol": spec.routing.protocol,
                        "update_interval_s": spec.routing.update_interval_s,
                        "settle_s": spec.routing.settle_s,
                        "rounds": max((a.rounds for a in net.agents), default=0),
                        "routing_packets": sum(a.packets_sent for a in net.agents),
                        "route_changes": len(net.route_log)},
            "flows": flows, "links": links, "hosts": hosts,
            "routers": {r.id: {"no_route_drops": r.no_route_drops} for r in net.routers.values()},
        }

    def trace(self, table: str, entity: str, column: str, direction: str | None = None):
        """(time_s, values) numpy arrays of one column for one link, flow or host.

        `table` is "links", "flows" or "hosts"; for links, `direction` ("A->B") selects one
        direction, else the two directions are summed (rates, occupancy, drops all add up).
        """
        data = getattr(self, table)
        key = {"links": "link", "flows": "flow", "hosts": "host"}[table]
        if column not in data or column in ("time_s", key, "direction"):
            raise KeyError(f"{table} has no value column {column!r}")
        rows = data[key] == entity
        if not rows.any():
            raise KeyError(f"no {key} {entity!r} in the results")
        if table == "links" and direction is not None:
            rows &= data["direction"] == direction
            if not rows.any():
                raise KeyError(f"link {entity!r} has no direction {direction!r}")
        times, values = data["time_s"][rows], data[column][rows]
        if table == "links" and direction is None:
            unique, index = np.unique(times, return_inverse=True)
            return unique, np.bincount(index, weights=values, minlength=len(unique))
        return times, values

    # -- output files ---------------------------------------------------------------------
    def write(self, out_dir) -> Path:
        """Write summary.json, links.csv, flows.csv and hosts.csv into `out_dir`."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "summary.json", "w") as fh:
            json.dump(self.summary, fh, indent=2)
            fh.write("\n")
        for name in ("links", "flows", "hosts", "routes"):
            _write_csv(out / f"{name}.csv", getattr(self, name))
        return out


def _format(value) -> str:
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else f"{value:.9g}"
    return str(value)


def _write_csv(path: Path, columns: dict) -> None:
    names = list(columns)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(names)
        for row in zip(*(columns[n].tolist() for n in names)):
            writer.writerow([_format(v) for v in row])


def check_conservation(network: Network) -> list:
    """Violations of packet and byte conservation (empty when everything adds up).

    Per link direction: packets offered = transmitted (begun) + dropped by the full buffer +
    failure drops that were never transmitted + waiting in the buffer.
    Per completed flow: bytes delivered in order = bytes the application sent.
    """
    problems = []
    now = network.sim.now
    for link in network.links.values():
        for d in link.directions:
            d.settle(now)
            if d.arrived != d.tx_pkts + d.dropped + d.failed + d.q_pkts:
                problems.append(f"link {link.id} {d.label}: {d.arrived} offered != {d.tx_pkts} "
                                f"transmitted + {d.dropped} dropped + {d.failed} failed + "
                                f"{d.q_pkts} queued")
    for flow in network.flows.values():
        if flow.finished and not flow.delivered_all():
            problems.append(f"flow {flow.id}: delivered {flow.delivered_bytes} of {flow.data_bytes} "
                            f"bytes (in order: {flow.in_order})")
        if not flow.in_order:
            problems.append(f"flow {flow.id}: delivered data out of order")
    return problems
