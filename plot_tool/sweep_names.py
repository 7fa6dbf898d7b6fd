"""Readable names of a sweep's parameters and metrics (front end): what a dotted path measures,
in words, and its unit from the path's suffix, for axis labels, titles and legends.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Axis units from the last part of a dotted path (the first matching suffix wins). Rates and sizes
# are in the topology's units; "binary" is appended to them when the units are binary.
UNIT_SUFFIXES = (("_per_s", "per s"), ("_mbps", "Mbps"), ("_kb", "KB"), ("_mb", "MB"),
                 ("_ms", "ms"), ("_s", "s"), ("_pkts", "packets"), ("_bytes", "bytes"), ("_pct", "%"))
_TOPOLOGY_UNITS = ("Mbps", "KB", "MB")

# Readable names of the parts of a dotted path (docs/sweeps.md, "Figures").
_METRIC_NAMES = {"jain_index": "Jain's fairness index", "total_goodput_mbps": "total goodput",
                 "mean_queue_delay_ms": "mean queueing delay", "mean_rtt_ms": "mean RTT",
                 "power": "power (total goodput / mean RTT)", "end_time_s": "end time",
                 "events": "events", "packet_hops": "packet hops",
                 "check.max_error_pct": "largest error vs the model"}
_WORDS = {"rtt": "RTT", "rto": "RTO", "avg": "average", "pkts": "packets", "cwnd": "cwnd",
          "ssthresh": "ssthresh", "mss": "MSS", "finish": "completion time",
          "data": "data size", "fct": "FCT"}
_ALGORITHM_NAMES = {"fast": "FAST", "bbr": "BBR", "cubic": "CUBIC", "vegas": "Vegas",
                    "reno": "Reno", "tahoe": "Tahoe", "newreno": "NewReno"}
_SUFFIXES = tuple(suffix for suffix, _ in UNIT_SUFFIXES)
# a workload's size buckets and statistics (netsim/workloads.py, docs/outputs.md)
_BUCKETS = {"under_100kb": "flows < 100 kB", "100kb_to_10mb": "flows 100 kB-10 MB",
            "over_10mb": "flows > 10 MB", "all": "all flows"}
_STATISTICS = {"p50": "median", "p99": "99th percentile", "mean": "mean", "count": "count"}


def _unit(path: str, units: Mapping[str, Any] | None) -> str | None:
    """The unit of a path's last part (or of the one before it: check.*.backlog_kb.predicted)."""
    for part in reversed(path.split(".")[-2:]):
        for suffix, unit in UNIT_SUFFIXES:
            if part.endswith(suffix):
                if unit in _TOPOLOGY_UNITS and (units or {}).get("system") == "binary":
                    unit += ", binary"
                return unit
    return None


def _words(name: str) -> str:
    """A path part in words, without its unit suffix: avg_rtt_ms -> average RTT."""
    for suffix in _SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[:-len(suffix)]
            break
    return " ".join(_WORDS.get(word, word) for word in name.split("_") if word)


def quantity_name(path: str) -> str:
    """What a parameter or metric path measures, in words and without unit:
    ``flows.F1.goodput_mbps`` -> "F1 goodput", ``links.L1.loss_rate`` -> "L1 loss rate",
    ``links.L1.impairments.H1->H2.loss_rate`` -> "L1 H1->H2 loss rate",
    ``flows.*.algorithm`` -> "algorithm", ``check.2.L1.backlog_kb.predicted`` -> "L1 backlog,
    predicted", ``jain_index`` -> "Jain's fairness index". Never the raw dotted path (but for
    a single word)."""
    if path in _METRIC_NAMES:
        return _METRIC_NAMES[path]
    parts = path.split(".")
    head = parts[0]
    if head in ("flows", "links") and len(parts) >= 3:
        owner = "" if parts[1] == "*" else parts[1]
        rest = parts[2:]
        if rest[0] in ("impairments", "directions") and len(rest) >= 3:
            owner = f"{owner} {rest[1]}"
            rest = rest[2:]
        elif rest[0] == "params" and len(rest) >= 2:
            rest = rest[1:]
        text = " ".join(_words(part) for part in rest)
        if parts[1] == "*" and head == "links":
            text = f"link {text}"
        return f"{owner} {text}".strip()
    if head == "workloads" and len(parts) >= 3:
        owner = "" if parts[1] == "*" else f"{parts[1]} "
        if len(parts) >= 4 and parts[2] in _BUCKETS:
            return f"{owner}{_BUCKETS[parts[2]]}: {_statistic(parts[3])}"
        return f"{owner}{' '.join(_words(part) for part in parts[2:])}".strip()
    if head == "check" and len(parts) == 5:
        return f"{parts[2]} {_words(parts[3])}, {parts[4].replace('_', ' ')}"
    if head == "algorithms" and len(parts) >= 3:
        return f"{_ALGORITHM_NAMES.get(parts[1], parts[1])} {' '.join(_words(p) for p in parts[2:])}"
    if head in ("transport", "packet_bytes", "routing") and len(parts) >= 2:
        return " ".join(_words(part) for part in parts[1:])
    return " ".join(_words(part) for part in parts)


def _statistic(name: str) -> str:
    """A workload bucket's statistic in words: p99_slowdown -> 99th percentile slowdown."""
    first, _, rest = name.partition("_")
    if first in _STATISTICS:
        return " ".join(filter(None, [_STATISTICS[first], _words(rest) if rest else ""]))
    return _words(name)


def axis_label(path: str, units: Mapping[str, Any] | None = None) -> str:
    """The default axis label of a path: `quantity_name` and the unit of the path's suffix
    (UNIT_SUFFIXES: _mbps -> Mbps, _ms -> ms, _kb -> KB, _s -> s, ...; "binary" added to rates
    and sizes when the units are binary): ``flows.F1.goodput_mbps`` -> "F1 goodput (Mbps)"."""
    unit = _unit(path, units)
    name = quantity_name(path)
    return f"{name} ({unit})" if unit else name


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]
