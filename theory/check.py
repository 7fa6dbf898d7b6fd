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

from theory.fluid import DEFAULT_SETTLE_S, Model

RATE_FLOOR_FRACTION = 0.005
DELAY_FLOOR_MS = 0.5


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


def compare(results, model: Model, *, links=None, settle_s: float = DEFAULT_SETTLE_S,
            tolerance_pct: float | None = None) -> dict:
    """The check report (what `check.json` holds)."""
    summary = results.summary
    units = results.units
    mbps = 8.0 / units.bits_per_mbit
    kb = float(units.bytes_per_kb)
    flow_models = {f.id: f for f in model.flows}
    resources = {r.id: r for r in model.resources}
    wanted = set(links) if links else bottleneck_links(model)
    packet_kb = model.flows[0].data_bytes / kb if model.flows else 1.0
    rate_floor = RATE_FLOOR_FRACTION * max(r.capacity_Bps for r in model.resources) * mbps
    by_active = {tuple(iv.flows): iv for iv in model.timeline}
    report = {"settle_s": settle_s, "tolerance_pct": tolerance_pct, "intervals": [],
              "completion": [], "unmatched": []}
    for start, end, active in _simulated_intervals(summary):
        predicted = by_active.get(tuple(active))
        if predicted is None:
            report["unmatched"].append({"start_s": start, "end_s": end, "flows": active})
            continue
        skip = min(settle_s, 0.5 * (end - start))
        departing = [f["avg_rtt_ms"] or 0.0 for f in summary["flows"].values()
                     if f["finish_s"] is not None and abs(f["finish_s"] - end) < 1e-9]
        until = max(start + skip, end - max(departing, default=0.0) / 1e3)
        step = summary["interval_s"]
        rows = []
        for fid in active:
            fm = flow_models[fid]
            t, rate = results.trace("flows", fid, "recv_rate_mbps")
            _, rtt = results.trace("flows", fid, "rtt_ms")
            lo, hi = sorted((predicted.rates_pps[fid] * fm.data_bytes * mbps,
                             predicted.rates_pps_high[fid] * fm.data_bytes * mbps))
            rows.append(_row("flow", fid, "rate_mbps", _window_mean(t, rate, start + skip, until, step),
                             lo, hi, rate_floor))
            lo, hi = sorted((predicted.queue_delay_s[fid] * 1e3, predicted.queue_delay_s_high[fid] * 1e3))
            mean_rtt = _window_mean(t, rtt, start + skip, until, step)
            rows.append(_row("flow", fid, "queue_delay_ms",
                             None if mean_rtt is None else mean_rtt - fm.base_rtt_s * 1e3,
                             lo, hi, DELAY_FLOOR_MS))
        for group in predicted.groups:
            members = [resources[rid] for rid in group]
            if not any(m.link in wanted for m in members):
                continue
            simulated = 0.0
            for member in members:
                for label in member.directions:
                    t, backlog = results.trace("links", member.link, "backlog_kb", direction=label)
                    simulated += _window_mean(t, backlog, start + skip, until, step) or 0.0
            lo = sum(predicted.backlog_bytes[rid] for rid in group) / kb
            hi = sum(predicted.backlog_bytes_high[rid] for rid in group) / kb
            lo, hi = min(lo, hi), max(lo, hi)
            if hi == 0.0:                 # predicted empty: up to one packet agrees
                lo, hi = 0.0, packet_kb
            rows.append(_row("link", "+".join(group), "backlog_kb", simulated, lo, hi, packet_kb))
        report["intervals"].append({"start_s": start, "end_s": end, "compared_from_s": start + skip,
                                    "compared_until_s": until, "flows": active, "rows": rows})
    end_s = summary["end_time_s"]
    for fid, predicted_s in model.finish_s.items():
        simulated_s = summary["flows"][fid]["finish_s"]
        if simulated_s is None and predicted_s > end_s:
            continue                      # the run ended before the predicted completion
        row = _row("flow", fid, "finish_s", simulated_s, predicted_s, predicted_s, 1e-9)
        if simulated_s is None:           # predicted done, still running: late by at least this
            row["error_pct"] = 100.0 * (end_s - predicted_s) / predicted_s
            row["unfinished"] = True
        report["completion"].append(row)
    report["warnings"] = buffer_warnings(results, model)
    errors = [row["error_pct"] for iv in report["intervals"] for row in iv["rows"]
              if row["error_pct"] is not None]
    errors += [row["error_pct"] for row in report["completion"] if row["error_pct"] is not None]
    report["max_error_pct"] = float(max(errors, default=0.0))
    report["passed"] = None if tolerance_pct is None else bool(
        report["max_error_pct"] <= tolerance_pct and not report["unmatched"])
    return report


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
    lines = [f"check against the analytic equilibrium (settling time {report['settle_s']:g} s "
             f"skipped after each change)"]
    for iv in report["intervals"]:
        lines.append(f"\n[{iv['start_s']:.2f} s, {iv['end_s']:.2f} s] active: {', '.join(iv['flows'])}"
                     f" (compared {iv['compared_from_s']:.2f}-{iv['compared_until_s']:.2f} s)")
        lines.append(f"  {'':6}{'entity':<18}{'quantity':<16}{'predicted':>18}{'simulated':>12}{'error':>9}")
        for row in iv["rows"]:
            lines.append("  " + _format_row(row))
    if report["completion"]:
        lines.append("\ncompletion times")
        for row in report["completion"]:
            lines.append("  " + _format_row(row))
    for miss in report["unmatched"]:
        lines.append(f"\nno prediction for [{miss['start_s']:.2f} s, {miss['end_s']:.2f} s] with "
                     f"flows {', '.join(miss['flows'])} (the simulated order of joins and "
                     f"departures differs from the predicted one)")
    for warning in report.get("warnings", []):
        lines.append(f"\nwarning: {warning}")
    verdict = f"\nlargest error {report['max_error_pct']:.2f} %"
    if report["tolerance_pct"] is not None:
        verdict += (f" — {'within' if report['passed'] else 'NOT within'} the "
                    f"{report['tolerance_pct']:g} % tolerance")
    lines.append(verdict)
    return "\n".join(lines)


def _format_row(row: dict) -> str:
    predicted = row["predicted"]
    shown = (f"{predicted[0]:.3f}..{predicted[1]:.3f}" if isinstance(predicted, list)
             else f"{predicted:.3f}")
    simulated = "-" if row["simulated"] is None else f"{row['simulated']:.3f}"
    error = "-" if row["error_pct"] is None else f"{row['error_pct']:.2f} %"
    return f"{row['kind']:<6}{row['id']:<18}{row['quantity']:<16}{shown:>18}{simulated:>12}{error:>9}"


def write_check(out_dir, report: dict, model: Model, units) -> None:
    """check.json (the report) and predictions.csv (the predicted timeline, for the figures)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "check.json", "w") as fh:
        json.dump(report, fh, indent=2)
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
