"""`--check`: compare a run with the analytic predictions of `theory.fluid`.

The run is cut into intervals at the **simulated** joins and departures; each interval is paired
with the predicted equilibrium of the same set of active flows. Within an interval the first
`settle_s` seconds (default 2 s, at most half the interval) are skipped, and so is the last round
trip before a departure (the departing flow has no new data to send then, and its queue drains);
the simulated time-weighted means over the sample rows that lie wholly in what remains are
compared with the prediction:

* per flow: goodput (`rate_mbps`, in the topology's units) and queueing delay (`queue_delay_ms`:
  mean RTT minus the flow's propagation-and-transmission round trip);
* per resource of the links of interest: the backlog (`backlog_kb`: the time-averaged unfinished
  work, bytes waiting plus what is left of the packet in transmission — the quantity the fluid
  model's queueing delay times capacity stands for; for a half-duplex link both directions'
  packets, since they share the buffer). Resources the model ties together (equal-capacity links
  in tandem: only the sum of their queues is determined) are compared as one group, e.g. `L1+L2`.
  By default the links of interest are the bottlenecks: those predicted to hold a queue in some
  interval;
* per finite flow: the completion time.

For Vegas the prediction is an interval (the equilibria at alpha and at beta); a value inside it
has error 0, otherwise the error is measured to the nearest end. The relative error is
|simulated - predicted| / |predicted|. Predicted values below a floor (0.5 % of the link capacity
for rates, 0.5 ms for delays) are compared in absolute terms against that floor. A queue the
fluid model predicts empty agrees with any simulated backlog up to one data packet (the packet in
service, packet-level jitter); beyond that the excess is measured against one data packet.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from theory.fluid import DEFAULT_SETTLE_S, DELAY_BASED, Model, predict
from theory.paths import path_rtt_s
from theory.perflow import (BBR_CWND_GAIN, BBR_PROBE_GAIN, LOSS_BASED, MODEL_NAMES, RATE_BASED, cubic_rate_pps, max_min_rates,
                            padhye_q_rate_pps)

RATE_FLOOR_FRACTION = 0.005
DELAY_FLOOR_MS = 0.5
BBR_RTT_SPREAD = 1.5       # BBR flows on one bottleneck share it fairly when RTprops are this close
SATURATED = 0.9            # a link busier than this limits a loss-based flow, not random loss


def _error_pct(simulated: float, low: float, high: float, floor: float) -> float:
    if low <= simulated <= high:
        return 0.0
    nearest = low if simulated < low else high
    return 100.0 * abs(simulated - nearest) / max(abs(nearest), floor)


def _window_mean(times, values, start_s: float, end_s: float, interval_s: float) -> float | None:
    """Mean of the rows whose sample interval lies in [start_s, end_s], weighted by its length."""
    spans = np.diff(times, prepend=times[0] - interval_s) if len(times) else times
    rows = (times - spans >= start_s - 1e-9) & (times <= end_s + 1e-9) & ~np.isnan(values)
    if not rows.any():
        return None
    return float(np.average(values[rows], weights=spans[rows]))


def _simulated_intervals(summary: dict) -> list:
    """(start, end, active flow ids) between the simulated joins and departures."""
    flows = summary["flows"]
    end_run = summary["end_time_s"]
    marks = sorted({f["start_s"] for f in flows.values()} |
                   {f["finish_s"] for f in flows.values() if f["finish_s"] is not None} | {end_run})
    intervals = []
    for start, end in zip(marks, marks[1:]):
        active = [fid for fid, f in flows.items() if f["start_s"] <= start and
                  (f["finish_s"] is None or f["finish_s"] >= end) and start < end_run]
        if active and end > start:
            intervals.append((start, end, active))
    return intervals


def predict_run(spec, results, duration_s: float | None = None) -> Model:
    """The prediction `--check` compares a run with, made after the run from what it measured:
    the fluid timeline of the FAST and Vegas flows with the baseRTT each flow measured
    (`summary.json` `base_rtt_ms`), and every other flow listed in `model.others` for the per-flow
    models of `theory.perflow` (evaluated by `compare`)."""
    flows = results.summary["flows"]
    base = {fid: f["base_rtt_ms"] / 1e3 for fid, f in flows.items()
            if f.get("base_rtt_ms") is not None and f["algorithm"] in DELAY_BASED}
    return predict(spec, duration_s=duration_s, base_rtts_s=base, others_ok=True)


def models_problem(spec, duration_s: float | None = None) -> str | None:
    """Why `--check` cannot compare `spec` at all (no flow has a model), else None. Raises
    `TheoryError` when the fluid model fails on the spec (no route, a timeline that never ends)."""
    modelled = DELAY_BASED + LOSS_BASED + RATE_BASED
    without = [f"{f.id} ({f.algorithm})" for f in spec.flows if f.algorithm not in modelled]
    if len(without) == len(spec.flows):
        return ("no analytic model for flows " + ", ".join(without) + "; models exist for "
                + ", ".join(modelled))
    predict(spec, duration_s=duration_s, others_ok=True)
    return None


def _route_changes(results, start_s: float, end_s: float) -> int:
    """Forwarding entries whose next hop or link changed (routes.csv rows that do not merely
    update a cost) in [start_s, end_s]."""
    try:
        routes = results.routes
    except (KeyError, OSError):
        return 0
    last, changes = {}, 0
    ecmp = bool((results.summary.get("routing") or {}).get("ecmp"))
    rows = list(zip(routes["time_s"], routes["router"], routes["destination"], routes["link"]))
    merged: list = []                 # ECMP: the rows of one installation's set are one entry
    for t, router, dest, link in rows:
        key = (str(router), str(dest))
        if ecmp and merged and merged[-1][0] == float(t) and merged[-1][1] == key:
            merged[-1][2].append(str(link))
        else:
            merged.append((float(t), key, [str(link)]))
    for t, key, links in merged:
        if key in last and last[key] != links and start_s - 1e-9 <= t <= end_s + 1e-9:
            changes += 1
        last[key] = links
    return changes


def _window_sum(times, values, start_s: float, end_s: float, interval_s: float) -> float:
    spans = np.diff(times, prepend=times[0] - interval_s) if len(times) else times
    rows = (times - spans >= start_s - 1e-9) & (times <= end_s + 1e-9) & ~np.isnan(values)
    return float(values[rows].sum())


def _no_model(kind: str, entity: str, quantity: str, simulated, reason: str) -> dict:
    return {"kind": kind, "id": entity, "quantity": quantity, "predicted": None,
            "simulated": None if simulated is None else float(simulated), "error_pct": None,
            "no_model": reason}


def compare(results, model: Model, *, links=None, settle_s: float = DEFAULT_SETTLE_S,
            tolerance_pct: float | None = None) -> dict:
    """The check report (what `check.json` holds). `model` is `predict(spec)` (FAST and Vegas only)
    or `predict_run(spec, results)` (every flow, measured baseRTTs)."""
    summary = results.summary
    units = results.units
    mbps = 8.0 / units.bits_per_mbit
    kb = float(units.bytes_per_kb)
    flow_models = {f.id: f for f in model.flows}
    other_specs = {fs.id: fs for fs in model.others}
    resources = {r.id: r for r in model.resources}
    resource_list = list(model.resources)
    wanted = set(links) if links else bottleneck_links(model)
    data_bytes = float(model.spec.packet_sizes.data_bytes) if model.spec is not None else (
        model.flows[0].data_bytes if model.flows else 1024.0)
    ack_bytes = float(model.spec.packet_sizes.ack_bytes) if model.spec is not None else 0.0
    packet_kb = data_bytes / kb
    rate_floor = RATE_FLOOR_FRACTION * max(r.capacity_Bps for r in model.resources) * mbps
    by_active = {tuple(iv.flows): iv for iv in model.timeline}
    report = {"settle_s": settle_s, "tolerance_pct": tolerance_pct, "intervals": [],
              "completion": [], "unmatched": []}
    step = summary["interval_s"]
    flow_resources = {}                   # flow -> resource indices of its data and ACK paths
    data_resources = {}                   # flow -> resource indices of its data path, in order
    for fid, (data_path, ack_path) in model.paths.items():
        data_resources[fid] = [model.hop_resource[h] for h in data_path]
        flow_resources[fid] = set(data_resources[fid]) | {model.hop_resource[h] for h in ack_path}
    algorithms = {fid: f["algorithm"] for fid, f in summary["flows"].items()}
    flow_reasons = {}
    for start, end, active in _simulated_intervals(summary):
        skip = min(settle_s, 0.5 * (end - start))
        departing = [f["avg_rtt_ms"] or 0.0 for f in summary["flows"].values()
                     if f["finish_s"] is not None and abs(f["finish_s"] - end) < 1e-9]
        until = max(start + skip, end - max(departing, default=0.0) / 1e3)
        lo_t, hi_t = start + skip, until
        delay_active = [fid for fid in active if fid in flow_models]
        predicted = by_active.get(tuple(delay_active)) if delay_active else None
        changes = _route_changes(results, lo_t, hi_t)
        interval_reason = None
        if hi_t - lo_t < step - 1e-9:
            interval_reason = (f"the compared window ({hi_t - lo_t:.3g} s) is shorter than one "
                               f"sampling interval ({step:g} s): nothing to average")
        elif changes:
            interval_reason = (f"routes changed {changes} times in the compared window (e.g. "
                               f"Bellman-Ford alternating between equal-cost routes): every model "
                               f"assumes fixed routes")
        elif delay_active and predicted is None:
            report["unmatched"].append({"start_s": start, "end_s": end, "flows": delay_active})
            if not any(fid in other_specs for fid in active):
                continue
        rows = []

        def mean(fid, column):
            t, values = results.trace("flows", fid, column)
            return _window_mean(t, values, lo_t, hi_t, step)

        def reason_for(fid):
            """Why no model applies to flow `fid` in this interval (None if one does)."""
            if interval_reason:
                return interval_reason
            f = summary["flows"][fid]
            if (f.get("in_slow_start") and f["retransmissions"] == 0 and f["timeouts"] == 0
                    and algorithms[fid] != "fast"):
                return (f"{fid} never left slow start (no loss, window below ssthresh at the end): "
                        f"no steady state to compare")
            kind = _kind(algorithms[fid])
            if kind == "none":
                return f"no analytic model for {algorithms[fid]}"
            strangers = sorted(other for other in active if other != fid and
                               _kind(algorithms[other]) != kind and
                               flow_resources[fid] & flow_resources[other] & _queued(fid, other))
            if strangers and kind != "loss":
                shared = sorted(flow_resources[fid] & flow_resources[strangers[0]])
                return (f"{fid} shares {resource_list[shared[0]].id} with "
                        + ", ".join(f"{o} ({algorithms[o]})" for o in strangers)
                        + f": the {kind} model assumes every flow there is {kind}")
            return None

        def _queued(fid, other):
            return set(data_resources[fid]) | set(data_resources[other])

        for fid in delay_active:
            reason = reason_for(fid)
            if reason or predicted is None:
                reason = reason or "no predicted equilibrium for this set of flows"
                flow_reasons.setdefault(fid, reason)
                rows.append(_no_model("flow", fid, "rate_mbps", mean(fid, "recv_rate_mbps"), reason))
                continue
            fm = flow_models[fid]
            lo, hi = sorted((predicted.rates_pps[fid] * fm.data_bytes * mbps,
                             predicted.rates_pps_high[fid] * fm.data_bytes * mbps))
            rows.append(_row("flow", fid, "rate_mbps", mean(fid, "recv_rate_mbps"), lo, hi, rate_floor))
            lo, hi = sorted((predicted.queue_delay_s[fid] * 1e3, predicted.queue_delay_s_high[fid] * 1e3))
            mean_rtt = mean(fid, "rtt_ms")
            rows.append(_row("flow", fid, "queue_delay_ms",
                             None if mean_rtt is None else mean_rtt - fm.base_rtt_s * 1e3,
                             lo, hi, DELAY_FLOOR_MS))
        if predicted is not None:
            strangers = {r for fid in active if fid in other_specs for r in flow_resources[fid]}
            for group in predicted.groups:
                members = [resources[rid] for rid in group]
                if not any(m.link in wanted for m in members):
                    continue
                simulated = 0.0
                for member in members:
                    for label in member.directions:
                        t, backlog = results.trace("links", member.link, "backlog_kb", direction=label)
                        simulated += _window_mean(t, backlog, lo_t, hi_t, step) or 0.0
                lo = sum(predicted.backlog_bytes[rid] for rid in group) / kb
                hi = sum(predicted.backlog_bytes_high[rid] for rid in group) / kb
                lo, hi = min(lo, hi), max(lo, hi)
                shared = [rid for rid in group if resource_list.index(resources[rid]) in strangers]
                if interval_reason or (shared and hi > 0.0):
                    reason = interval_reason or (f"{shared[0]} also carries flows outside the "
                                                 f"delay-based model")
                    rows.append(_no_model("link", "+".join(group), "backlog_kb", simulated, reason))
                    continue
                if hi == 0.0:                 # predicted empty: up to one packet agrees
                    lo, hi = 0.0, packet_kb
                rows.append(_row("link", "+".join(group), "backlog_kb", simulated, lo, hi, packet_kb))
        others = [fid for fid in active if fid in other_specs]
        bbr_ok = []
        for fid in others:
            algorithm = algorithms[fid]
            kind = _kind(algorithm)
            simulated_rate = mean(fid, "recv_rate_mbps")
            reason = reason_for(fid)
            if reason is None and kind == "none":
                reason = f"no analytic model for {algorithm}"
            if reason is None and kind == "loss":
                reason, row = _loss_row(results, model, fid, lo_t, hi_t, step, mean, simulated_rate,
                                        rate_floor, mbps, data_bytes)
                if reason is None:
                    rows.append(row)
                    continue
            if reason is None and kind == "bbr":
                bbr_ok.append(fid)
                continue
            flow_reasons.setdefault(fid, reason)
            rows.append(_no_model("flow", fid, "rate_mbps", simulated_rate, reason))
        if bbr_ok:
            rows += _bbr_rows(results, model, bbr_ok, lo_t, hi_t, step, mean, rate_floor, mbps, kb,
                              data_bytes, ack_bytes, packet_kb)
        report["intervals"].append({"start_s": start, "end_s": end, "compared_from_s": lo_t,
                                    "compared_until_s": hi_t, "flows": active, "rows": rows})
    end_s = summary["end_time_s"]
    for fid, predicted_s in model.finish_s.items():
        simulated_s = summary["flows"][fid]["finish_s"]
        if simulated_s is None and predicted_s > end_s:
            continue                      # the run ended before the predicted completion
        if fid in flow_reasons:
            report["completion"].append(_no_model("flow", fid, "finish_s", simulated_s,
                                                  flow_reasons[fid]))
            continue
        row = _row("flow", fid, "finish_s", simulated_s, predicted_s, predicted_s, 1e-9)
        if simulated_s is None:           # predicted done, still running: late by at least this
            row["error_pct"] = 100.0 * (end_s - predicted_s) / predicted_s
            row["unfinished"] = True
        report["completion"].append(row)
    report["warnings"] = buffer_warnings(results, model)
    all_rows = [row for iv in report["intervals"] for row in iv["rows"]] + report["completion"]
    errors = [row["error_pct"] for row in all_rows if row["error_pct"] is not None]
    report["compared"] = len(errors)
    reasons = []
    for row in all_rows:
        if row.get("no_model") and row["no_model"] not in reasons:
            reasons.append(row["no_model"])
    report["not_compared"] = sum(1 for row in all_rows if row.get("no_model"))
    report["no_model_reasons"] = reasons
    report["max_error_pct"] = float(max(errors, default=0.0))
    report["passed"] = None if tolerance_pct is None else bool(
        report["max_error_pct"] <= tolerance_pct and not report["unmatched"])
    return report


def _kind(algorithm: str) -> str:
    if algorithm in DELAY_BASED:
        return "delay-based"
    if algorithm in LOSS_BASED:
        return "loss"
    if algorithm in RATE_BASED:
        return "bbr"
    return "none"


def _path_loss(results, model: Model, fid: str) -> float:
    """Random-loss probability of the flow's data path, measured over the run: 1 - prod(1 - p_hop)
    with p_hop = impairment_drops / packets_transmitted of each link direction it crosses."""
    links = results.summary["links"]
    keep = 1.0
    for hop in model.paths[fid][0]:
        d = links[hop.link.id]["directions"][hop.label]
        if d["packets_transmitted"]:
            keep *= 1.0 - d["impairment_drops"] / d["packets_transmitted"]
    return 1.0 - keep


def _loss_row(results, model, fid, lo_t, hi_t, step, mean, simulated_rate, rate_floor, mbps,
              data_bytes):
    """(reason, None) when the response function does not apply, else (None, row)."""
    summary = results.summary
    f = summary["flows"][fid]
    p = _path_loss(results, model, fid)
    if p <= 0.0:
        return (f"no random loss on the data path of {fid}: its losses are buffer overflows "
                f"(drop-tail synchronisation), which the response functions do not describe"), None
    overflow = random = 0.0
    busiest, busiest_util = None, 0.0
    for hop in model.paths[fid][0]:
        t, drops = results.trace("links", hop.link.id, "drops", direction=hop.label)
        overflow += _window_sum(t, drops, lo_t, hi_t, step)
        t, lost = results.trace("links", hop.link.id, "impairment_drops", direction=hop.label)
        random += _window_sum(t, lost, lo_t, hi_t, step)
        t, rate = results.trace("links", hop.link.id, "rate_mbps",
                                direction=None if hop.link.duplex == "half" else hop.label)
        used = _window_mean(t, rate, lo_t, hi_t, step) or 0.0
        util = used / (hop.link.rate_bps * mbps / 8.0)
        if util > busiest_util:
            busiest, busiest_util = hop.link.id, util
    if overflow > random:
        return (f"buffer overflows ({overflow:.0f}) outnumber random losses ({random:.0f}) on the "
                f"data path of {fid}: the link, not random loss, sets its rate"), None
    if busiest_util > SATURATED:
        return (f"{busiest} is {100 * busiest_util:.0f} % busy: the link, not random loss, sets "
                f"the rate of {fid}"), None
    rtt_ms = mean(fid, "rtt_ms")
    if rtt_ms is None:
        return f"{fid} took no RTT sample in the compared window", None
    rtt_s = rtt_ms / 1e3
    algorithm = f["algorithm"]
    inputs = {"loss_rate": p, "rtt_ms": rtt_ms}
    if algorithm == "cubic":
        rate_pps, region = cubic_rate_pps(p, rtt_s)
        inputs["region"] = region
    else:
        rto_s = (f.get("rto_ms") or 1000.0) / 1e3
        share = f["timeouts"] / f["retransmissions"] if f["retransmissions"] else 0.0
        rate_pps = padhye_q_rate_pps(p, rtt_s, rto_s, share)
        inputs.update({"rto_ms": rto_s * 1e3, "timeout_share": min(1.0, share)})
    predicted = rate_pps * data_bytes * mbps
    row = _row("flow", fid, "rate_mbps", simulated_rate, predicted, predicted, rate_floor)
    row["model"] = MODEL_NAMES[algorithm]
    row["inputs"] = {k: (round(v, 9) if isinstance(v, float) else v) for k, v in inputs.items()}
    return None, row


def _bbr_rows(results, model, fids, lo_t, hi_t, step, mean, rate_floor, mbps, kb, data_bytes,
              ack_bytes, packet_kb):
    """BBR flows: delivery rate = max-min fair share; bottleneck queue <= one BDP (and buffer)."""
    resources = list(model.resources)
    load = np.zeros((len(resources), len(fids)))
    for k, fid in enumerate(fids):
        data_path, ack_path = model.paths[fid]
        for hop in data_path:
            load[model.hop_resource[hop], k] += data_bytes
        for hop in ack_path:
            load[model.hop_resource[hop], k] += ack_bytes
    capacity = np.array([r.capacity_Bps for r in resources])
    rates = max_min_rates(capacity, load)                         # data packets/s
    rows = []
    summary = results.summary
    used = load @ rates
    rtprop = {}
    for fid in fids:
        base_ms = summary["flows"][fid].get("base_rtt_ms")
        rtprop[fid] = base_ms / 1e3 if base_ms else _path_rtt(model, fid)
    unfair = {}
    for r in np.flatnonzero((used >= capacity * (1 - 1e-9)) & load.any(axis=1)):
        sharing = [fid for k, fid in enumerate(fids) if load[r, k]]
        props = [rtprop[fid] for fid in sharing]
        overflow = 0.0
        for label in resources[r].directions:
            t, drops = results.trace("links", resources[r].link, "drops", direction=label)
            overflow += _window_sum(t, drops, lo_t, hi_t, step)
        if len(sharing) > 1 and overflow > 0:
            for fid in sharing:
                unfair.setdefault(fid, (
                    f"{resources[r].id} drops packets from its full buffer ({overflow:.0f} in "
                    f"the compared window): BBR v1 ignores these losses and the shares of the "
                    f"flows there are not fair"))
        if len(sharing) > 1 and max(props) > BBR_RTT_SPREAD * min(props):
            for fid in sharing:
                unfair.setdefault(fid, (
                    f"the BBR flows sharing {resources[r].id} have RTprops from "
                    f"{1e3 * min(props):.1f} to {1e3 * max(props):.1f} ms: BBR v1 favours the "
                    f"longer ones, and its fair-share model assumes RTprops within a factor "
                    f"{BBR_RTT_SPREAD:g}"))
    for k, fid in enumerate(fids):
        if fid in unfair:
            rows.append(_no_model("flow", fid, "rate_mbps", mean(fid, "recv_rate_mbps"), unfair[fid]))
            continue
        predicted = rates[k] * data_bytes * mbps
        row = _row("flow", fid, "rate_mbps", mean(fid, "recv_rate_mbps"), predicted, predicted,
                   rate_floor)
        row["model"] = "bbr"
        rows.append(row)
    for r, resource in enumerate(resources):
        if used[r] < capacity[r] * (1 - 1e-9) or not load[r].any():
            continue
        sharing = [k for k in range(len(fids)) if load[r, k]]
        # inflight <= cwnd_gain x BtlBw x RTprop; with several flows each one's max-filtered BtlBw
        # can be its probing rate (pacing gain 1.25 x its share): queue <= (2 x 1.25 - 1) BDP
        gain = BBR_CWND_GAIN * (BBR_PROBE_GAIN if len(sharing) > 1 else 1.0) - 1.0
        bound = sum(gain * rates[k] * load[r, k] * rtprop[fids[k]] for k in sharing)
        link = summary["links"][resource.link]
        bound_kb = min(bound / kb, link["buffer_kb"])
        simulated = 0.0
        for label in resource.directions:
            t, backlog = results.trace("links", resource.link, "backlog_kb", direction=label)
            simulated += _window_mean(t, backlog, lo_t, hi_t, step) or 0.0
        row = _row("link", resource.id, "backlog_kb", simulated, 0.0, max(bound_kb, packet_kb),
                   max(bound_kb, packet_kb))
        row["model"] = "bbr"
        rows.append(row)
    return rows


def _path_rtt(model, fid) -> float:
    data_path, ack_path = model.paths[fid]
    return path_rtt_s(data_path, ack_path, model.spec.packet_sizes)


def buffer_warnings(results, model: Model) -> list:
    """Predicted backlogs a link's buffers cannot hold (the run will drop, the model then fails)."""
    links = results.summary["links"]
    kb = float(results.units.bytes_per_kb)
    resources = {r.id: r for r in model.resources}
    warnings = []
    for iv in model.timeline:
        for rid, backlog in iv.backlog_bytes_high.items():
            link = links[resources[rid].link]
            buffer_kb = link["buffer_kb"]
            if backlog / kb > buffer_kb:
                warnings.append(f"[{iv.start_s:.2f} s, {iv.end_s:.2f} s]: the predicted backlog of "
                                f"{rid} ({backlog / kb:.1f} KB) exceeds its {buffer_kb:g} KB buffer: "
                                f"packets will be dropped and the equilibrium model does not hold")
    return warnings


def bottleneck_links(model: Model) -> set:
    """Links with a resource the model predicts to hold a queue in some interval."""
    links = {r.id: r.link for r in model.resources}
    return {links[rid] for iv in model.timeline for rid, backlog in iv.backlog_bytes.items()
            if backlog > 0.0}


def _row(kind: str, entity: str, quantity: str, simulated, low: float, high: float, floor: float):
    low, high = float(low), float(high)
    simulated = None if simulated is None else float(simulated)
    error = None if simulated is None else float(_error_pct(simulated, low, high, floor))
    predicted = low if low == high else [low, high]
    return {"kind": kind, "id": entity, "quantity": quantity, "predicted": predicted,
            "simulated": simulated, "error_pct": error}


def format_report(report: dict) -> str:
    """The console table of a check report."""
    lines = [f"check against the analytic models (settling time {report['settle_s']:g} s "
             f"skipped after each change)"]
    for iv in report["intervals"]:
        lines.append(f"\n[{iv['start_s']:.2f} s, {iv['end_s']:.2f} s] active: {', '.join(iv['flows'])}"
                     f" (compared {iv['compared_from_s']:.2f}-{iv['compared_until_s']:.2f} s)")
        lines.append(f"  {'':6}{'entity':<18}{'quantity':<16}{'predicted':>18}{'simulated':>12}{'error':>9}")
        for row in iv["rows"]:
            lines.append("  " + _format_row(row))
            if row.get("no_model"):
                lines[-1] += f"  [{reasons_index(report, row['no_model'])}]"
    if report["completion"]:
        lines.append("\ncompletion times")
        for row in report["completion"]:
            lines.append("  " + _format_row(row))
            if row.get("no_model"):
                lines[-1] += f"  [{reasons_index(report, row['no_model'])}]"
    for miss in report["unmatched"]:
        lines.append(f"\nno prediction for [{miss['start_s']:.2f} s, {miss['end_s']:.2f} s] with "
                     f"flows {', '.join(miss['flows'])} (the simulated order of joins and "
                     f"departures differs from the predicted one)")
    for warning in report.get("warnings", []):
        lines.append(f"\nwarning: {warning}")
    reasons = report.get("no_model_reasons", [])
    if reasons:
        lines.append("\nno model applies (rows marked \"no model\", not compared):")
        lines += [f"  {number}. {reason}" for number, reason in enumerate(reasons, 1)]
    verdict = f"\nlargest error {report['max_error_pct']:.2f} %"
    if report.get("compared", 1) == 0:
        verdict = "\nnothing compared"
    if report["tolerance_pct"] is not None:
        verdict += (f" — {'within' if report['passed'] else 'NOT within'} the "
                    f"{report['tolerance_pct']:g} % tolerance")
    if reasons:
        verdict += (f" ({report['not_compared']} rows outside every model's regime not counted: "
                    f"see the reasons above)")
    lines.append(verdict)
    return "\n".join(lines)


def reasons_index(report: dict, reason: str) -> int:
    """1-based number of `reason` in the report's list of reasons."""
    return report.get("no_model_reasons", []).index(reason) + 1


def _format_row(row: dict) -> str:
    predicted = row["predicted"]
    if predicted is None:
        shown = "no model"
    elif isinstance(predicted, list):
        shown = f"{predicted[0]:.3f}..{predicted[1]:.3f}"
    else:
        shown = f"{predicted:.3f}"
    simulated = "-" if row["simulated"] is None else f"{row['simulated']:.3f}"
    error = "-" if row["error_pct"] is None else f"{row['error_pct']:.2f} %"
    line = f"{row['kind']:<6}{row['id']:<18}{row['quantity']:<16}{shown:>18}{simulated:>12}{error:>9}"
    return line + (f"  {row['model']}" if row.get("model") else "")


def _finite(value):
    """`value` with every NaN or infinite float (numpy's too) as None."""
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def write_check(out_dir, report: dict, model: Model, units) -> None:
    """check.json (the report) and predictions.csv (the predicted timeline, for the figures; the
    per-flow models of Reno, NewReno, CUBIC and BBR add their rows per simulated interval)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "check.json", "w") as fh:
        json.dump(_finite(report), fh, indent=2, allow_nan=False)    # strict JSON: NaN is null
        fh.write("\n")
    mbps = 8.0 / units.bits_per_mbit
    kb = float(units.bytes_per_kb)
    flows = {f.id: f for f in model.flows}
    resources = {r.id: r for r in model.resources}
    with open(out / "predictions.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["start_s", "end_s", "kind", "id", "direction", "quantity", "low", "high"])
        for iv in model.timeline:
            for fid in iv.flows:
                rate = (iv.rates_pps[fid] * flows[fid].data_bytes * mbps,
                        iv.rates_pps_high[fid] * flows[fid].data_bytes * mbps)
                delay = (iv.queue_delay_s[fid] * 1e3, iv.queue_delay_s_high[fid] * 1e3)
                base_ms = flows[fid].base_rtt_s * 1e3
                rtt = (base_ms + delay[0], base_ms + delay[1])
                window = (iv.rates_pps[fid] * rtt[0] / 1e3, iv.rates_pps_high[fid] * rtt[1] / 1e3)
                for quantity, (low, high) in (("rate_mbps", rate), ("queue_delay_ms", delay),
                                              ("rtt_ms", rtt), ("window_pkts", window)):
                    writer.writerow([f"{iv.start_s:.9g}", f"{iv.end_s:.9g}", "flow", fid, "",
                                     quantity, f"{min(low, high):.9g}", f"{max(low, high):.9g}"])
            for rid, backlog in iv.backlog_bytes.items():
                resource = resources[rid]
                high = iv.backlog_bytes_high[rid]
                writer.writerow([f"{iv.start_s:.9g}", f"{iv.end_s:.9g}", "link", resource.link,
                                 "+".join(resource.directions), "backlog_kb",
                                 f"{min(backlog, high) / kb:.9g}", f"{max(backlog, high) / kb:.9g}"])
        resources = {r.id: r for r in model.resources}
        for iv in report["intervals"]:
            for row in iv["rows"]:
                if not row.get("model") or row["predicted"] is None:
                    continue
                low, high = (row["predicted"] if isinstance(row["predicted"], list)
                             else (row["predicted"], row["predicted"]))
                if row["kind"] == "flow":
                    entity, direction = row["id"], ""
                else:
                    entity, direction = resources[row["id"]].link, "+".join(resources[row["id"]].directions)
                writer.writerow([f"{iv['start_s']:.9g}", f"{iv['end_s']:.9g}", row["kind"], entity,
                                 direction, row["quantity"], f"{low:.9g}", f"{high:.9g}"])
