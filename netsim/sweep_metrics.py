"""What a sweep can collect (`check_metrics` validates a sweep file's "metrics") and how each
metric of one run is computed from its record (`compute_metrics`: summary values, derived
metrics such as Jain's index, and --check values).
"""
from __future__ import annotations

from netsim.sweep_parameters import SweepError
from netsim.sweep_points import Sweep
from topologies.validation import quote, show, suggestion

DERIVED_METRICS = ("jain_index", "total_goodput_mbps", "mean_queue_delay_ms", "mean_rtt_ms",
                   "power")
# why a derived metric has no value in a run (its row then gives the reason, not an empty cell)
DERIVED_MISSING = {
    "jain_index": "the run has no flows (a workload's are measured by workloads.<id>...)",
    "total_goodput_mbps": "the run has no flows (a workload's are measured by workloads.<id>...)",
    "mean_rtt_ms": "no flow of the run had an RTT sample",
    "mean_queue_delay_ms": "no flow of the run had an RTT sample and a base round trip",
    "power": "no flow of the run had an RTT sample",
}
JAIN_ALL_ZERO = ("every flow's goodput is 0: Jain's index is 0/0 (1 would read as perfectly "
                 "fair)")
SUMMARY_TOP = ("end_time_s", "events", "packet_hops", "stop_reason")
FLOW_METRICS = ("finish_s", "goodput_mbps", "avg_rtt_ms", "avg_window_pkts", "packets_sent",
                "retransmissions", "timeouts", "delivered_bytes")
DIRECTION_METRICS = ("avg_buffer_kb", "avg_buffer_pkts", "avg_backlog_kb", "drops",
                     "failure_drops", "impairment_drops", "packets_transmitted", "avg_rate_mbps",
                     "utilization", "marks", "aqm_drops", "avg_sojourn_ms", "p99_sojourn_ms")
WORKLOAD_METRICS = ("flows_started", "flows_completed", "flows_unfinished", "offered_mbps")
WORKLOAD_BUCKETS = ("all", "under_100kb", "100kb_to_10mb", "over_10mb")   # netsim/workloads.py
BUCKET_METRICS = ("count", "unfinished", "mean_fct_s", "p50_fct_s", "p99_fct_s", "mean_slowdown",
                  "p50_slowdown", "p99_slowdown")



class RerunNeeded(Exception):
    """A stored record cannot give a metric (e.g. a check.* value it did not keep)."""


class MetricUnavailable(KeyError):
    """A metric the run's record cannot give (a check interval the run did not reach...); its
    message is the one line results.csv records."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


CHECK_TOTALS = ("max_error_pct", "compared")       # check.<this>
FLOW_CHECK_QUANTITIES = ("rate_mbps", "queue_delay_ms")
LINK_CHECK_QUANTITIES = ("backlog_kb",)
CHECK_QUANTITIES = FLOW_CHECK_QUANTITIES + LINK_CHECK_QUANTITIES
CHECK_FIELDS = ("predicted", "simulated", "error_pct", "predicted_low", "predicted_high")


def metric_values(record: dict, metrics: list) -> tuple:
    """(values, problems) of one run's metrics, each computed apart: a metric the record cannot
    give (a check interval the run does not have, a derived value without an input) is left out
    of `values`, and `problems` maps it to the one line that says why; the others keep their
    values. `RerunNeeded` when only a new run can give one."""
    derived = _derived(record)
    values, problems = {}, {}
    for metric in metrics:
        try:
            values[metric] = _metric(record, derived, metric)
        except RerunNeeded:
            raise
        except MetricUnavailable as exc:
            problems[metric] = str(exc)
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            problems[metric] = f"{metric}: {type(exc).__name__}: {exc}"
    return values, problems


def compute_metrics(record: dict, metrics: list) -> dict:
    """The metrics of one run from its record (its summary, base RTTs and check report).

    KeyError when the summary has no such value; `RerunNeeded` when only a new run can give it."""
    derived = _derived(record)
    return {metric: _metric(record, derived, metric) for metric in metrics}


def _derived(record: dict) -> dict:
    """The derived metrics of one run's record (`DERIVED_METRICS`) that it can give."""
    flows = record["summary"]["flows"]
    goodputs = [f["goodput_mbps"] for f in flows.values()]
    derived = {}
    if goodputs:
        total = sum(goodputs)
        squares = sum(g * g for g in goodputs)
        derived["total_goodput_mbps"] = total
        if squares:                # (every goodput 0: 0/0, no fairness to measure, not 1)
            derived["jain_index"] = total * total / (len(goodputs) * squares)
        else:
            derived["_missing"] = {"jain_index": JAIN_ALL_ZERO}
    rtts = [f["avg_rtt_ms"] for f in flows.values() if f["avg_rtt_ms"] is not None]
    if rtts:
        derived["mean_rtt_ms"] = sum(rtts) / len(rtts)
    bases = record.get("base_rtt_ms")
    if bases:
        delays = [f["avg_rtt_ms"] - bases[fid] for fid, f in flows.items()
                  if f["avg_rtt_ms"] is not None and fid in bases]
        derived["mean_queue_delay_ms"] = sum(delays) / len(delays) if delays else None
    if derived.get("mean_rtt_ms"):
        derived["power"] = derived["total_goodput_mbps"] / (derived["mean_rtt_ms"] / 1e3)
    return derived


def _metric(record: dict, derived: dict, metric: str):
    """One metric of a run's record (`_derived`: its derived metrics)."""
    parts = metric.split(".")
    if metric in DERIVED_METRICS:
        value = derived.get(metric)
        if value is None:
            reason = derived.get("_missing", {}).get(metric, DERIVED_MISSING[metric])
            raise MetricUnavailable(f"{metric}: {reason}")
        return value
    if parts[0] == "check":
        if record.get("check") is None:
            raise RerunNeeded(metric)
        return _check_value(record["check"], parts)
    value = record["summary"]
    for part in parts:
        value = value[part]
    return value


def _check_value(report: dict, parts: list):
    if parts[1] == "compared":
        return report["compared"]
    if parts[1] == "max_error_pct":
        if not report.get("compared"):        # 0 would read as perfect agreement
            raise MetricUnavailable("check.max_error_pct: the run's --check compared nothing "
                                    "(check.compared is 0; its check report gives the reasons)")
        return report["max_error_pct"]
    metric = ".".join(parts)
    try:
        index = int(parts[1])
    except ValueError:
        raise MetricUnavailable(f"{metric}: expected a check interval number (0, 1, ...) or "
                                f"max_error_pct, got {parts[1]!r}") from None
    entity, quantity, field = parts[2], parts[3], parts[4]
    intervals = report.get("intervals") or []
    if not 0 <= index < len(intervals):
        have = (f"only intervals 0 to {len(intervals) - 1}" if intervals
                else "no interval long enough to compare")
        raise MetricUnavailable(f"{metric}: the run's --check comparison has {have} (the run is "
                                f"too short for interval {index}: lengthen duration_s, or collect "
                                f"an earlier interval)")
    row = _check_row(metric, intervals[index]["rows"], index, entity, quantity, field)
    if field == "simulated":
        return row["simulated"]
    if row.get("no_model"):                       # shown, not compared: no prediction
        raise MetricUnavailable(f"{metric}: no model: {row['no_model']}")
    value = row["predicted"] if field in ("predicted_low", "predicted_high") else row[field]
    if isinstance(value, list):                   # Vegas: an interval, not one value
        if field == "predicted_low":
            return value[0]
        if field == "predicted_high":
            return value[-1]
        raise MetricUnavailable(f"{metric}: the prediction is an interval "
                                f"[{value[0]:.6g}, {value[-1]:.6g}] (Vegas); collect "
                                f"{'.'.join(parts[:4])}.predicted_low and .predicted_high")
    return value


def check_row_links(row_id: str) -> list:
    """The link ids a check row of a link names: "L1", "L1 H1->H2" (one direction of a full-duplex
    link) or "L1+L2" (links whose queues the model ties together)."""
    return [part.split(" ", 1)[0] for part in row_id.split("+")]


def _check_row(metric: str, rows: list, index: int, entity: str, quantity: str, field: str):
    """The row of interval `index` that `entity` names: its id, or a link id alone for the one
    row of that link (a direction of a full-duplex link, a group it is tied into)."""
    for row in rows:
        if row["id"] == entity and row["quantity"] == quantity:
            return row
    found = [row for row in rows if row["quantity"] == quantity and row["kind"] == "link"
             and entity in check_row_links(row["id"])]
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(f"check.{index}.{row['id']}.{quantity}.{field}" for row in found)
        raise MetricUnavailable(f"{metric}: {entity} has a {quantity} row for each of "
                                f"{len(found)} directions or groups; collect one: {names}")
    known = sorted({row["id"] for row in rows if row["quantity"] == quantity})
    raise MetricUnavailable(f"{metric}: check interval {index} has no {quantity} row for "
                            f"{entity}" + (f" (it has {', '.join(known)})" if known else ""))



def check_metrics(label: str, sweep: Sweep) -> None:
    base = sweep.base
    flows = [f.get("id") for f in base.get("flows", [])]
    links = {link.get("id"): link for link in base.get("links", [])}
    workloads = [w.get("id") for w in base.get("workloads", []) if isinstance(w, dict)]
    if not isinstance(sweep.raw.get("metrics", []), list) or not sweep.metrics:
        raise SweepError(f'{label}: field "metrics": expected a list of metric names')
    for index, metric in enumerate(sweep.metrics):
        if not isinstance(metric, str):
            raise SweepError(f'{label}: field "metrics": expected metric names, got {show(metric)}')
        if metric in sweep.metrics[:index]:          # one results.csv column per name
            raise SweepError(f'{label}: field "metrics[{index}]": metric {quote(metric)} is '
                             f"already listed")
        problem = (_workload_metric_problem(metric, workloads)
                    if metric.startswith("workloads.") else _metric_problem(metric, flows, links))
        if problem:
            raise SweepError(f'{label}: field "metrics": {problem}')


def _workload_metric_problem(metric: str, workloads: list):
    """None if `metric` is workloads.<id>.<field> or workloads.<id>.<bucket>.<statistic> of a
    workload of the topology (summary.json "workloads"), else what is wrong."""
    parts = metric.split(".")
    shown = quote(metric)
    if len(parts) not in (3, 4):
        return (f"{shown}: expected workloads.<id>.<field> or "
                f"workloads.<id>.<bucket>.<statistic>")
    if parts[1] not in workloads:
        return f"{shown}: no workload {quote(parts[1])}{suggestion(parts[1], workloads)}"
    if len(parts) == 3:
        if parts[2] not in WORKLOAD_METRICS:
            return (f"{shown}: unknown workload metric {quote(parts[2])}"
                    f"{suggestion(parts[2], WORKLOAD_METRICS)}")
        return None
    if parts[2] not in WORKLOAD_BUCKETS:
        return (f"{shown}: unknown size bucket {quote(parts[2])}"
                f"{suggestion(parts[2], WORKLOAD_BUCKETS)}; known: {', '.join(WORKLOAD_BUCKETS)}")
    if parts[3] not in BUCKET_METRICS:
        return (f"{shown}: unknown statistic {quote(parts[3])}"
                f"{suggestion(parts[3], BUCKET_METRICS)}; known: {', '.join(BUCKET_METRICS)}")
    return None


def _link_part_ok(part: str, links: dict) -> bool:
    """Whether `part` names a link, or one direction of it ("L1 A->B")."""
    link, _, direction = part.partition(" ")
    if link not in links:
        return False
    if not direction:
        return True
    ends = links[link].get("ends", ["?", "?"])
    return direction in (f"{ends[0]}->{ends[1]}", f"{ends[1]}->{ends[0]}")


def _check_metric_problem(parts: list, shown: str, flows: list, links: dict):
    """What is wrong with a check.* metric's name, or None (the interval and the entity's
    quantity are known only once a run is compared: their absence is the row's error)."""
    expected = (f"expected check.max_error_pct, check.compared or check.<interval>.<id>."
                f"<{'|'.join(CHECK_QUANTITIES)}>.<{'|'.join(CHECK_FIELDS)}>")
    if len(parts) == 2:
        if parts[1] in CHECK_TOTALS:
            return None
        return f"{shown}: {expected}{suggestion(parts[1], list(CHECK_TOTALS))}"
    if len(parts) != 5:
        return f"{shown}: {expected}"
    interval, entity, quantity, field = parts[1:]
    if not (interval.isdigit() and interval.isascii()):
        return f"{shown}: the interval {quote(interval)} is not a number (0, 1, ...); {expected}"
    allowed: tuple
    if entity in flows:
        kind, allowed = "a flow", FLOW_CHECK_QUANTITIES
    elif all(_link_part_ok(part, links) for part in entity.split("+")):
        kind, allowed = "a link", LINK_CHECK_QUANTITIES
    else:
        known = [*flows, *links]
        return (f"{shown}: no flow or link {quote(entity)}{suggestion(entity, known)} (a link "
                f"row is named by the link, \"L1 A->B\" for one direction, or \"L1+L2\" for "
                f"links the model ties together, as in check.json)")
    if quantity not in CHECK_QUANTITIES:
        return (f"{shown}: unknown quantity {quote(quantity)}"
                f"{suggestion(quantity, list(CHECK_QUANTITIES))}; known: "
                f"{', '.join(CHECK_QUANTITIES)}")
    if quantity not in allowed:
        return (f"{shown}: {kind} has no {quote(quantity)} row; its quantities: "
                f"{', '.join(allowed)}")
    if field not in CHECK_FIELDS:
        return (f"{shown}: unknown field {quote(field)}{suggestion(field, list(CHECK_FIELDS))}; "
                f"known: {', '.join(CHECK_FIELDS)}")
    return None


def _metric_problem(metric: str, flows: list, links: dict):
    parts = metric.split(".")
    shown = quote(metric)
    if metric in DERIVED_METRICS:
        return None if flows else (f"{shown}: a metric of the topology's flows, and it has none "
                                   f"(a workload's flows are measured by "
                                   f"workloads.<id>.<bucket>.<statistic>)")
    if metric in SUMMARY_TOP:
        return None
    if parts[0] == "check":
        return _check_metric_problem(parts, shown, flows, links)
    if parts[0] == "flows" and len(parts) == 3:
        if parts[1] not in flows:
            return f"{shown}: no flow {quote(parts[1])}{suggestion(parts[1], flows)}"
        if parts[2] not in FLOW_METRICS:
            return (f"{shown}: unknown flow metric {quote(parts[2])}"
                    f"{suggestion(parts[2], FLOW_METRICS)}")
        return None
    if parts[0] == "links" and len(parts) == 5 and parts[2] == "directions":
        if parts[1] not in links:
            return f"{shown}: no link {quote(parts[1])}{suggestion(parts[1], list(links))}"
        ends = links[parts[1]].get("ends", ["?", "?"])
        labels = [f"{ends[0]}->{ends[1]}", f"{ends[1]}->{ends[0]}"]
        if parts[3] not in labels:
            return (f"{shown}: link {parts[1]} has no direction {quote(parts[3])}; "
                    f"known: {', '.join(labels)}")
        if parts[4] not in DIRECTION_METRICS:
            return (f"{shown}: unknown link metric {quote(parts[4])}"
                    f"{suggestion(parts[4], DIRECTION_METRICS)}")
        return None
    known = DERIVED_METRICS + SUMMARY_TOP
    return (f"unknown metric {shown}{suggestion(metric, known)}; metrics are {', '.join(known)}, "
            f"flows.<id>.<field>, links.<id>.directions.<A->B>.<field> or check.<...>")
