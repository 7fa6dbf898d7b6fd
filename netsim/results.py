"""The results of a run: the summary, the trace files, and writing them as a results directory.

`Results.summary` is built from cumulative counters at the end of the run (O(entities), whatever
the run's length). The traces were streamed to files while the run went (`netsim.traces`); the
tables `links`, `flows`, `hosts` and `routes` are read back from them only when asked for.
`write` produces a complete results directory atomically (`netsim.results_dir`).
"""
from __future__ import annotations

import shutil
from operator import attrgetter
from pathlib import Path
from typing import Any

from components.direction import unfinished
from components.link import sojourn_quantile
from flows.transport import Flow
from netsim.probes import flow_counters, flow_state
from netsim.results_dir import StagedDirectory, finite, write_indented_json
from netsim.version import __version__ as VERSION
from plot_tool.schema import TABLES
from topologies.spec import config_digest

TRACE_FILES = ("links", "flows", "hosts", "routes")
EXTRA_FILES = ("fct",)      # written only by some runs (fct.csv: workloads)
_ENTITY_KEY = {"links": "link", "flows": "flow", "hosts": "host"}


def known_table(name, names=tuple(TABLES)) -> None:
    """KeyError unless `name` is one of the table names `names` (by default every table of a
    results directory, `plot_tool.schema.TABLES`), listing them, in the words of
    `plot_tool.results.ResultSet.frame`."""
    if not isinstance(name, str) or name not in names:
        raise KeyError(f"no table {name!r}; tables: {', '.join(names)}")


def down_spans(events, end_s: float) -> list:
    """[start_s, end_s] of every span in which a link was down, from its events (the topology's
    `events` naming it, in file order) up to the end of the run; a span still open at the end
    closes at the end."""
    spans, down_at = [], None
    for event in events:
        if event.at_s > end_s:
            continue
        if event.action == "down" and down_at is None:
            down_at = event.at_s
        elif event.action == "up" and down_at is not None:
            spans.append([_round(down_at), _round(event.at_s)])
            down_at = None
    if down_at is not None:
        spans.append([_round(down_at), _round(end_s)])
    return spans


def mean_capacity_bps(link_spec, end_s: float) -> float:
    """Time average over [0, end_s] of the link's rate, following its `rate_schedule` (the
    denominator of `utilization`); the rate itself for a link without schedule."""
    rate, since, area = link_spec.rate_bps, 0.0, 0.0
    for t_s, new_rate in link_spec.rate_schedule:
        if t_s >= end_s:
            break
        area += rate * (t_s - since)
        rate, since = new_rate, t_s
    if end_s <= 0:
        return rate
    return (area + rate * (end_s - since)) / end_s


def _round(value, digits: int = 9):
    return None if value is None else float(f"{value:.{digits}g}")


_INF = float("inf")


class _Rounded(dict):
    """`_round(value)` by value, each computed once: ``rounded[value]``. `_round` depends only on
    the value (equal ints and floats give the same float), except for the sign of zero, which
    equal keys would lose: zero is computed every time, never kept."""

    def __missing__(self, value):
        result = float(f"{value:.9g}")
        if value:
            self[value] = result
        return result


def _rtt_fields(sending, est, rounded: _Rounded) -> tuple:
    """What the flow measured of its round trip, for `--check` (theory/check.py), in the order
    of its summary fields:

    * `base_rtt_ms`: the base RTT the flow's algorithm used (FAST and Vegas `base_rtt`, BBR's
      RTprop `min_rtt_s`), or, for algorithms without one, the smallest RTT sample;
    * `min_rtt_ms`: the smallest RTT sample;
    * `rto_ms`: the retransmission timeout of the last RTT estimate, without backoff, by the
      flow's estimator (classic: RFC 6298, SRTT + 4 RTTVAR within [min_rto_s, max_rto_s]; Linux
      stack: tcp_set_rto's SRTT + max(mdev, min RTO)), rounded once per value (`rounded`: the
      run's flows mostly share a few, e.g. the minimum RTO);
    * `in_slow_start`: whether the window was still below ssthresh at the end (BBR: in Startup).
    All None/False when the flow took no RTT sample.

    `est` is the flow's RTT estimator, `sending` what has its `cc`, `cwnd` and `ssthresh` (the
    flow, or its sender: see `_flow_summaries`).
    """
    min_rtt = est.min_rtt if est.min_rtt != _INF else None
    base = None
    cc = sending.cc
    for attr in ("base_rtt", "min_rtt_s"):
        value = getattr(cc, attr, None)
        if value is not None and value != _INF:
            base = value
            break
    if base is None:
        base = min_rtt
    rto = est.base_rto_s()              # the estimator's own rule (RFC 6298 or Linux's)
    state = getattr(cc, "state", None)
    if state is not None and isinstance(state, str):
        slow = state == "startup"
    else:
        slow = bool(sending.cwnd < sending.ssthresh)
    return (None if base is None else float(f"{base * 1e3:.9g}"),
            None if min_rtt is None else float(f"{min_rtt * 1e3:.9g}"),
            None if rto is None else rounded[rto * 1e3], slow)


def _rate_flow_fields(flow, end_s: float, mbit: float, mb: float) -> dict:
    """summary.json entry of a "cbr" or "onoff" flow (flows/cbr.py): the bulk flow's fields
    (no window, no RTT: null), its rate, and packets sent, received and lost (lost = sent -
    received, so it includes the packets in flight when the run ended)."""
    done = flow.finish_s is not None
    elapsed = (flow.finish_s if done else end_s) - flow.start_s
    return {
        "algorithm": flow.kind, "kind": flow.kind, "src": flow.src.id, "dst": flow.dst.id,
        "data_mb": None if flow.data_bytes is None else _round(flow.data_bytes / mb),
        "data_bytes": flow.data_bytes, "start_s": flow.start_s,
        "finish_s": _round(flow.finish_s), "completed": done,
        "rate_mbps": _round(flow.rate_bps / mbit), "on_s": flow.on_s, "off_s": flow.off_s,
        "goodput_mbps": _round(flow.arrived_bytes * 8.0 / elapsed / mbit) if elapsed > 0 else 0.0,
        "avg_rtt_ms": None, "avg_window_pkts": None,
        "packets_sent": flow.packets_sent, "packets_received": flow.packets_received,
        "packets_lost": flow.packets_lost, "retransmissions": 0, "timeouts": 0,
        "ecn_echoes": 0, "ecn_reactions": 0, "delivered_bytes": flow.arrived_bytes,
        "in_order": True, "base_rtt_ms": None, "min_rtt_ms": None, "rto_ms": None,
        "in_slow_start": False, "counters": None, "algorithm_state": {},
    }


# summary.json's entry of a link direction that no packet was ever offered to (most of a large
# network's): what `_direction_summary` gives such a direction, built once. Each idle direction
# gets a copy, whose values are this dict's very objects, so that writing the summary encodes
# the entry once (netsim/results_dir.py).
IDLE_DIRECTION = {
    "avg_buffer_kb": 0.0, "avg_buffer_pkts": 0.0, "avg_backlog_kb": 0.0,
    "drops": 0, "impairment_drops": 0, "failure_drops": 0, "lost": 0,
    "duplicated": 0, "reordered": 0, "routing_packets": 0, "routing_drops": 0,
    "packets_transmitted": 0, "marks": 0, "aqm_drops": 0,
    "avg_sojourn_ms": None, "p99_sojourn_ms": None, "avg_rate_mbps": 0.0, "utilization": 0.0,
}


class _Attributes:
    """An object whose attribute dict is `_key_sharing`'s."""


def _key_sharing(template: dict) -> dict:
    """A dict equal to `template` (string keys), in its order and of its very values, whose
    copies share one table of keys: an instance's attribute dict (on CPython a key-sharing
    dict, PEP 412), which ``dict.copy`` copies as one. Such a copy is an ordinary `dict` to its
    reader, and 300 bytes where a copy of `template` is 460 (a 10 000-router network's summary
    makes 40 000: they take half the time)."""
    holder = _Attributes()
    for key, value in template.items():
        setattr(holder, key, value)
    return holder.__dict__


_IDLE_TEMPLATE = _key_sharing(IDLE_DIRECTION)


def is_idle(d) -> bool:
    """True when no packet was ever offered to link direction `d` (after `settle`): every
    counter and integral the summary reports is zero (0 and +0.0: they start there, and an
    idle direction adds nothing to them)."""
    return not (d.arrived or d.tx_pkts or d.tx_bytes or d.dropped or d.impaired_drops
                or d.failed or d.lost_in_flight or d.aqm_drops or d.duplicated or d.delayed
                or d.routing_pkts or d.routing_dropped or d.marks or d.area_bytes
                or d.area_pkts or d.area_work or d.soj_sum)


# What a direction's summary is made of besides its sojourn histogram (`soj_fine`, `soj_hist`):
# `_direction_summary` reads these counters and nothing else (tests/test_summary_idle_directions.py
# holds it to that), so `_link_summaries` shares the entry of directions whose packets never
# waited among those with equal counters.
SUMMARY_COUNTERS = ("tx_pkts", "tx_bytes", "area_bytes", "area_pkts", "area_work", "soj_sum",
                    "dropped", "impaired_drops", "failed", "lost_in_flight", "aqm_drops",
                    "duplicated", "delayed", "routing_pkts", "routing_dropped", "marks")
_summary_counters = attrgetter(*SUMMARY_COUNTERS)


def _direction_summary(d, end_s: float, capacity_bps: float, mbit: float, kb: float,
                       left: tuple[float, float] = (0.0, 0.0)) -> dict:
    """summary.json's entry of link direction `d` (settled at `end_s`, with `left` what its
    packet in service has still to send: `unfinished`); `_round` spelt out."""
    unsent, work = left[0], d.area_work - left[1]   # (up to end_s: docs/model.md, "Link rates")
    rate_bps = (d.tx_bytes - unsent) * 8.0 / end_s if end_s > 0 else 0.0
    failures = d.failed + d.lost_in_flight
    sent = d.tx_pkts
    return {
        "avg_buffer_kb": float(f"{d.area_bytes / end_s / kb:.9g}") if end_s > 0 else 0.0,
        "avg_buffer_pkts": float(f"{d.area_pkts / end_s:.9g}") if end_s > 0 else 0.0,
        "avg_backlog_kb": float(f"{(d.area_bytes + work) / end_s / kb:.9g}")
        if end_s > 0 else 0.0,
        "drops": d.dropped, "impairment_drops": d.impaired_drops,
        "failure_drops": failures,
        "lost": d.dropped + d.aqm_drops + d.impaired_drops + failures,
        "duplicated": d.duplicated, "reordered": d.delayed,
        "routing_packets": d.routing_pkts, "routing_drops": d.routing_dropped,
        "packets_transmitted": sent,
        "marks": d.marks, "aqm_drops": d.aqm_drops,
        "avg_sojourn_ms": float(f"{d.soj_sum / sent * 1e3:.9g}") if sent else None,
        "p99_sojourn_ms": float(f"{sojourn_quantile(d, 0.99) * 1e3:.9g}") if sent else None,
        "avg_rate_mbps": float(f"{rate_bps / mbit:.9g}"),
        "utilization": float(f"{rate_bps / capacity_bps:.9g}"),
    }


def _link_summaries(spec, net, end_s: float, units) -> dict:
    """summary.json's "links": one object per link, with one per direction (an idle direction's
    is a copy of IDLE_DIRECTION; the rounded rate, delay and buffer of links that share them
    are computed once)."""
    mbit, kb = units.bits_per_mbit, units.bytes_per_kb
    links = {}
    queues = {ls.id: ls.queue["discipline"] for ls in spec.links if ls.queue}
    link_specs = {ls.id: ls for ls in spec.links}          # O(1) lookups, not a scan per link
    link_events: dict = {}
    for event in spec.events:
        link_events.setdefault(event.link, []).append(event)
    rounded = _Rounded()
    idle_entry = _IDLE_TEMPLATE.copy      # (IDLE_DIRECTION's copy, sharing its keys)
    made: dict = {}                       # counters of a direction whose packets never waited
    for link in net.links.values():       # -> its entry (`_direction_summary`)
        directions = {}
        ls = link_specs[link.id]
        varying = ls.rate_schedule or ls.delay_schedule       # a time-varying link
        capacity_bps = mean_capacity_bps(ls, end_s) if ls.rate_schedule else None
        # an idle direction's entry is IDLE_DIRECTION only where its utilization, 0 / the
        # capacity, is 0.0 (not NaN, nor -0.0)
        idle_fits = (ls.rate_bps if capacity_bps is None else capacity_bps) > 0
        for d in link.directions:
            d.settle(end_s)
            if idle_fits and is_idle(d):
                directions[d.label] = idle_entry()
                continue
            if capacity_bps is None:
                capacity_bps = mean_capacity_bps(ls, end_s)
            left = unfinished(d, end_s)
            if left[0] or d.soj_fine is not None or d.soj_hist is not None:   # (in service at
                directions[d.label] = _direction_summary(d, end_s, capacity_bps, mbit, kb,  # the
                                                         left)        # end, or some waited)
                continue
            # without a sojourn histogram the entry is a function of these counters: directions
            # that carried the same packets alike (a routing protocol's, on links of one rate)
            # share it, as a copy whose values are the very objects of the first (so that writing
            # the summary encodes it once, netsim/results_dir.py). Equal counters give equal
            # texts: the integrals start at +0.0 and only grow (never -0.0), the counts are ints.
            key = (capacity_bps, _summary_counters(d))
            entry = made.get(key)
            if entry is None:
                directions[d.label] = made[key] = _direction_summary(
                    d, end_s, capacity_bps, mbit, kb)
            else:
                directions[d.label] = entry.copy()
        events = link_events.get(link.id)
        a, b = link.ends                                    # (a link has two)
        entry = links[link.id] = {
            "ends": [a.id, b.id], "rate_mbps": rounded[link.rate_bps / mbit],
            "delay_ms": rounded[link.delay_s * 1e3], "buffer_kb": rounded[link.buffer_bytes / kb],
            "duplex": link.duplex, "down_s": down_spans(events, end_s) if events else [],
            "queue": queues.get(link.id, "droptail"), "directions": directions}
        if varying:
            if capacity_bps is None:
                capacity_bps = mean_capacity_bps(ls, end_s)
            entry.update(
                rate_mbps=_round(ls.rate_bps / mbit), delay_ms=_round(ls.delay_s * 1e3),
                mean_capacity_mbps=_round(capacity_bps / mbit),
                rate_schedule_mbps=[[t, _round(r / mbit)] for t, r in ls.rate_schedule],
                delay_schedule_ms=[[t, _round(x * 1e3)] for t, x in ls.delay_schedule])
    return links


def _host_summaries(net, end_s: float, mbit: float) -> dict:
    """summary.json's "hosts": each host's mean send and receive rates."""
    hosts = {}
    for host in net.hosts.values():
        scale = 8.0 / end_s / mbit if end_s > 0 else 0.0
        hosts[host.id] = {"avg_send_rate_mbps": _round(host.sent_bytes * scale),
                          "avg_recv_rate_mbps": _round(host.received_bytes * scale)}
    return hosts


class Results:
    """What a run produced: `summary` (dict), and the `links`, `flows`, `hosts`, `routes` tables.

    Tables map column names to numpy arrays, in the topology's units, exactly as written to the
    CSV files (docs/outputs.md): links and hosts have no rows for the intervals in which they were
    idle (`trace` fills those in). `directory` holds the trace files; `network` is the simulated
    network, for inspection. `failure`: the exception that ended the run, if one did.
    """

    failure: BaseException | None = None

    def __init__(self, run, stop_reason: str, stop_detail: str, wall_s: float):
        self.network = run.network
        self.units = run.spec.units
        self.interval_s = run.interval_s
        self.directory = run.trace_dir
        self._tempdir = run._tempdir          # keeps a temporary trace directory alive
        self._closed = False                  # `close` removed it
        self._tables: dict[str, dict] = {}
        self._grid_s = None                   # the sampling instants, once a trace asked
        self.cpu_s: dict = run.cpu_s          # CPU seconds by phase (netsim/run.py), not saved
        self.summary = self._summarize(run, stop_reason, stop_detail, wall_s)

    # -- the temporary trace directory ------------------------------------------------------
    def close(self) -> None:
        """Remove the temporary directory the run wrote its traces to (a run given `trace_dir`
        keeps it). Tables read before stay readable; `summary` always is. Idempotent; also the
        end of ``with simulate(spec) as results:``. Without it the directory goes when the
        results are garbage collected or Python exits normally (docs/notebook.md)."""
        self._closed = self._tempdir is not None
        if self._tempdir is not None:
            self._tempdir.cleanup()

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise ValueError(f"{what} cannot be read: close() removed the run's trace files "
                             f"(read tables, write() or draw figures before closing)")

    def __enter__(self) -> Results:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- tables, read back on demand -------------------------------------------------------
    def table(self, name: str) -> dict:
        """The trace `name` ("links", "flows", "hosts" or "routes"; "fct" for a run with
        workloads) as column -> numpy array, read by the one reader of results
        (`plot_tool.results.read_table`); KeyError, listing the tables, for a name that is none
        (`known_table`)."""
        known_table(name)
        if name not in self._tables:
            self._check_open(f"the {name} table")
            from plot_tool.results import read_table
            self._tables[name] = read_table(self.directory / f"{name}.csv", name)
        return self._tables[name]

    def trace_chunks(self, name: str):
        """The trace `name` ("links", "flows" or "hosts") as consecutive tables of a few
        thousand rows each, in file order (`plot_tool.results.iter_table`, with `read_table`'s
        checks), the file read as they are asked for: for a reader whose memory must not grow
        with the run (`--check`'s means, theory/window_means.py). The rows are the file's, not
        filled in as `trace` fills them."""
        known_table(name)
        self._check_open(f"the {name} table")
        from plot_tool.results import iter_table
        return iter_table(self.directory / f"{name}.csv", name)

    def frame(self, name: str):
        """The table `name` as a pandas DataFrame when pandas is installed (the ``pandas``
        extra), else as a list of row dicts (docs/notebook.md); the names and answers of
        `plot_tool.results.ResultSet.frame`: None for an optional table the run did not write
        ("predictions", which only the command line's --check writes; "fct" without workloads),
        KeyError, listing the names, for another name."""
        from plot_tool.results import as_frame
        known_table(name)
        if name not in self._tables:
            self._check_open(f"the {name} table")
            if TABLES[name].optional and not (self.directory / f"{name}.csv").exists():
                return None
        return as_frame(self.table(name))

    links = property(lambda self: self.table("links"))
    flows = property(lambda self: self.table("flows"))
    hosts = property(lambda self: self.table("hosts"))
    routes = property(lambda self: self.table("routes"))

    def trace(self, table: str, entity: str, column: str, direction: str | None = None):
        """(time_s, values) numpy arrays of one column for one link, flow or host.

        `table` is "links", "flows" or "hosts"; for links, `direction` ("A->B") selects one
        direction, else the two directions are summed (rates, occupancy, drops all add up).
        Links and hosts get a value at every sampling instant: intervals in which they were idle
        (no rows in the file) are filled in with zeros.
        """
        import numpy as np
        known_table(table, tuple(_ENTITY_KEY))
        data = self.table(table)
        key = _ENTITY_KEY[table]
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
        if table == "flows":
            order = np.argsort(times, kind="stable")
            return times[order], values[order]
        grid = self._grid(np)
        if table == "links" and direction is None:
            unique, index = np.unique(times, return_inverse=True)
            times, values = unique, np.bincount(index, weights=values, minlength=len(unique))
        else:
            order = np.argsort(times, kind="stable")
            times, values = times[order], values[order]
        # idle intervals: zero at every sampling instant between the entity's first and last row
        inside = grid[(grid >= times[0]) & (grid <= times[-1])]
        filled = np.union1d(times, inside)
        out = np.zeros(len(filled))
        out[np.searchsorted(filled, times)] = values
        return filled, out

    def _grid(self, np):
        """Every sampling instant of the run: k * interval_s, and the end time (computed once:
        every link and host trace uses the same instants)."""
        if self._grid_s is not None:
            return self._grid_s
        end_s = self.summary["end_time_s"]
        ticks = int(end_s / self.interval_s) + 1
        grid = np.arange(1, ticks + 1, dtype=float) * self.interval_s
        grid = np.append(grid[grid < end_s], end_s)
        grid = np.char.mod("%.9g", grid).astype(float)    # as the trace files write times
        self._grid_s = grid
        return grid

    # -- the summary ------------------------------------------------------------------------
    def _summarize(self, run, stop_reason: str, stop_detail: str, wall_s: float) -> dict:
        spec, net, units = run.spec, self.network, self.units
        end_s = run.sim.now
        flows = self._flow_summaries(run, end_s, stop_reason)
        if spec.routing.ecmp == "flow" and spec.routing.protocol == "static":
            from routing.ecmp import hashed_path_links  # (the tables never change)
            for flow_id, flow in net.flows.items():
                flows[flow_id]["path_links"] = hashed_path_links(flow)
        links = _link_summaries(spec, net, end_s, units)
        hosts = _host_summaries(net, end_s, units.bits_per_mbit)
        return {
            "netsim_version": VERSION, "topology": spec.name, "source": spec.source,
            "description": spec.description, "seed": run.seed, "units": units.to_dict(),
            "packet_bytes": {"data": spec.packet_sizes.data_bytes,
                             "ack": spec.packet_sizes.ack_bytes,
                             "routing": spec.packet_sizes.routing_bytes},
            "config_digest": config_digest(spec, duration_s=run.duration_s, seed=run.seed,
                                           interval_s=run.interval_s),
            "interval_s": run.interval_s, "end_time_s": _round(end_s),
            "stop_reason": stop_reason, "stop_detail": stop_detail,
            "wall_time_s": round(wall_s, 4), "events": run.sim.events,
            "packet_hops": sum(d.tx_pkts for link in net.links.values() for d in link.directions),
            "trace_rows": {name: len(trace) for name, trace in run.traces.items()},
            "routing": {"protocol": spec.routing.protocol,
                        "update_interval_s": spec.routing.update_interval_s,
                        "settle_s": spec.routing.settle_s,
                        "rounds": max((a.rounds for a in net.agents), default=0),
                        "routing_packets": sum(a.packets_sent for a in net.agents),
                        "seqno_requests": sum(a.requests_sent for a in net.agents),
                        "route_changes": len(net.route_log),
                        **({"ecmp": spec.routing.ecmp} if spec.routing.ecmp else {})},
            "flows": flows, "links": links, "hosts": hosts,
            "routers": {r.id: {"no_route_drops": r.no_route_drops, "loop_drops": r.loop_drops}
                        for r in net.routers.values()},
            **({"workloads": {w.spec.id: w.summary(units.bits_per_mbit) for w in run.workloads}}
               if getattr(run, "workloads", None) else {}),
        }

    def _flow_summaries(self, run, end_s: float, stop_reason: str = "") -> dict:
        """summary.json's "flows": one object per flow (docs/outputs.md, `flows.<id>`).

        Each bulk flow's figures are read once each: those of a transport `Flow` straight from
        its parts (the sender, the receiver, the RTT estimator), which its properties of the
        same names read, as its probe does (netsim/probes.py); any other flow's from the flow.
        A rounding is spelt out rather than called (`_round` of a value that is not None), and
        the values many flows share (sizes, mean windows, RTOs) are rounded once per value
        (`_Rounded`)."""
        units = self.units
        mbit, mb = units.bits_per_mbit, units.bytes_per_mb
        probes = run.flow_probes
        rounded = _Rounded()
        flows = {}
        for flow in self.network.flows.values():
            if getattr(flow, "kind", "bulk") != "bulk":
                flows[flow.id] = _rate_flow_fields(flow, end_s, mbit, mb)
                continue
            sending: Any
            receiving: Any
            est: Any
            timing: Any
            if type(flow) is Flow:
                sending, receiving = flow.sender, flow.receiver
                est = timing = sending.rtt
            else:
                sending = receiving = timing = flow
                est = getattr(flow, "rtt", None)
                if est is None:
                    est = flow.sender.rtt
            finish_s = sending.finish_s
            done = finish_s is not None
            elapsed = (finish_s if done else end_s) - flow.start_s
            data_bytes, delivered = flow.data_bytes, receiving.delivered_bytes
            rtt_count = timing.rtt_count
            window = probes[flow.id].mean_window_pkts()
            base_ms, min_ms, rto_ms, slow = _rtt_fields(sending, est, rounded)
            state = _final_state(flow, stop_reason)
            flows[flow.id] = {
                "algorithm": flow.algorithm, "src": flow.src.id, "dst": flow.dst.id,
                "data_mb": None if data_bytes is None else rounded[data_bytes / mb],
                "data_bytes": data_bytes, "start_s": flow.start_s,
                "finish_s": float(f"{finish_s:.9g}") if done else None, "completed": done,
                "goodput_mbps": float(f"{delivered * 8.0 / elapsed / mbit:.9g}")
                if elapsed > 0 else 0.0,
                "avg_rtt_ms": float(f"{timing.rtt_sum / rtt_count * 1e3:.9g}")
                if rtt_count else None,
                "avg_window_pkts": None if window is None else rounded[window],
                "packets_sent": sending.packets_sent,
                "retransmissions": sending.retransmissions, "timeouts": sending.timeouts,
                "ecn_echoes": sending.ecn_echoes, "ecn_reactions": sending.ecn_reactions,
                "delivered_bytes": delivered,
                "in_order": receiving.in_order and (not done or flow.delivered_all()),
                "base_rtt_ms": base_ms, "min_rtt_ms": min_ms, "rto_ms": rto_ms,
                "in_slow_start": slow, "counters": flow_counters(flow),
                "algorithm_state": finite(state) if state else state,   # ({} is a new dict)
            }
        return flows

    # -- output files ---------------------------------------------------------------------
    def write_summary(self, out_dir=None) -> Path:
        """Write summary.json into `out_dir` (default: the trace directory)."""
        out = Path(out_dir) if out_dir is not None else self.directory
        write_indented_json(out / "summary.json", self.summary)    # strict JSON: NaN is null
        return out / "summary.json"

    def write(self, out_dir) -> Path:
        """Write a complete results directory at `out_dir`: summary.json and the four CSV files,
        replacing (atomically) whatever run was there before."""
        self._check_open("the traces")
        out = Path(out_dir)
        if out.exists() and out.resolve() == Path(self.directory).resolve():
            self.write_summary(out)
            return out
        staged = StagedDirectory(out)
        with staged:
            for name in TRACE_FILES + tuple(n for n in EXTRA_FILES
                                            if (self.directory / f"{n}.csv").exists()):
                shutil.copyfile(self.directory / f"{name}.csv", staged.path / f"{name}.csv")
            self.write_summary(staged.path)
            staged.commit()
        return out


def _final_state(flow, reason: str) -> dict:
    """The flow's algorithm's report() at the end (checked: netsim/probes.py `flow_state`); after
    a failure, {} if the report fails too (the failure is what is reported). A run that did not
    fail checked it as its last step (`Run._check_algorithms`)."""
    if reason != "error":
        return flow_state(flow)
    try:
        return flow_state(flow)
    except Exception:
        return {}
