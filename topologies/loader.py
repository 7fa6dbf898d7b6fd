"""Read, validate and unit-convert a JSON topology file into a `TopologySpec`.

Topology files are untrusted data. They are read with `topologies.validation.read_json` (the
standard `json` module only, never `jsonpickle.decode`; within the input limits of
docs/topology-format.md), checked to be plain JSON data (no jsonpickle ``py/...`` tags, no
duplicate keys, no NaN/Infinity), and validated completely before anything else sees them: the
result is a `topologies.spec.TopologySpec` in base units (bit/s, bytes, seconds), and no
simulation object is created here. The format is documented in docs/topology-format.md.

Every problem raises `TopologyError` with a one-line message of the shape::

    <file>: <entry>: field "<field>": expected <what>, got <found> (did you mean "<name>"?)

where <entry> locates the object (``top level``, ``transport``, ``links[1] "L2"``, ``flows[0] "F1"``,
``events[2]``).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

from flows import ALGORITHMS
from topologies.spec import (
    DEFAULT_ALGORITHM,
    DEFAULT_DUPLEX,
    DEFAULT_SEED,
    DEFAULT_SETTLE_S,
    DEFAULT_UNITS,
    DEFAULT_UPDATE_INTERVAL_S,
    DUPLEX_MODES,
    LINK_ACTIONS,
    NO_IMPAIRMENT,
    ROUTING_PROTOCOLS,
    UNIT_SYSTEMS,
    FlowSpec,
    GilbertElliottSpec,
    ImpairmentSpec,
    LinkEventSpec,
    LinkSpec,
    PacketSizes,
    RoutingSpec,
    TopologySpec,
    TransportSpec,
    UnitSystem,
)
from topologies.spec import WorkloadSpec
from topologies.bounds import MAX_ARRIVALS_PER_S, TIME_RESOLUTION_S, time_problem
from topologies.validation import (InputError, check_plain, file_name_problem, id_problem,
                                   one_line, quote, read_json, show, suggestion)

__all__ = ["TopologyError", "load_topology"]

DICT_SOURCE = "<dict>"
PLAIN_DATA_KIND = "topology files"   # in "jsonpickle tag ... is not allowed; <kind> are plain JSON data"

TOP_LEVEL_FIELDS = ("name", "description", "units", "duplex", "packet_bytes", "routing", "transport",
                    "algorithms", "hosts", "routers", "links", "flows", "events", "duration_s", "seed")
TOP_LEVEL_REQUIRED = ("hosts", "links")
TOP_LEVEL_FIELDS = TOP_LEVEL_FIELDS + ("workloads",)
WORKLOAD_FIELDS = ("id", "src", "dst", "arrivals_per_s", "sizes", "algorithm", "params",
                   "transport", "start_s", "stop_s", "ecn")
WORKLOAD_REQUIRED = ("id", "src", "dst", "arrivals_per_s", "sizes")
SIZE_DISTRIBUTIONS = ("websearch", "datamining")   # topologies/data/<name>.csv
PACKET_FIELDS = {"data": "data_bytes", "ack": "ack_bytes", "routing": "routing_bytes"}
ROUTING_FIELDS = ("protocol", "update_interval_s", "settle_s", "ecmp")
ECMP_VALUES = {False: None, True: "flow", "flow": "flow", "packet": "packet"}
IMPAIRMENT_FIELDS = ("loss_rate", "loss_model", "duplicate_rate", "reorder_rate", "reorder_delay_ms",
                     "jitter_ms", "jitter_reorder")
LINK_FIELDS = ("id", "ends", "rate_mbps", "delay_ms", "buffer_kb", "duplex", "cost") + IMPAIRMENT_FIELDS \
    + ("impairments", "queue")
LINK_REQUIRED = ("id", "ends", "rate_mbps", "delay_ms", "buffer_kb")
LINK_FIELDS = LINK_FIELDS + ("rate_schedule", "delay_schedule")   # time-varying links
FLOW_FIELDS = ("id", "src", "dst", "data_mb", "start_s", "algorithm", "params", "transport",
               "ecn", "delayed_ack")
DELAYED_ACK_FIELDS = ("every", "timeout_ms")
DEFAULT_DELAYED_ACK = (2, 0.040)   # RFC 1122 / RFC 5681 §4.2: every second packet, 40 ms timer
FLOW_REQUIRED = ("id", "src", "dst")
FLOW_KINDS = ("bulk", "cbr", "onoff")
RATE_FLOW_FIELDS = ("rate_mbps", "on_s", "off_s", "periods")   # cbr/onoff only (flows/cbr.py)
BULK_ONLY_FIELDS = ("algorithm", "params", "transport", "ecn", "delayed_ack")
FLOW_FIELDS = FLOW_FIELDS + ("kind",) + RATE_FLOW_FIELDS
EVENT_FIELDS = ("at_s", "link", "action")
LOSS_MODEL_TYPES = ("gilbert-elliott",)
GILBERT_ELLIOTT_FIELDS = ("type", "p_good_to_bad", "p_bad_to_good", "loss_good", "loss_bad")
GILBERT_ELLIOTT_REQUIRED = ("type", "p_good_to_bad", "p_bad_to_good")


class TopologyError(InputError):
    """A topology file (or dict) is unreadable or invalid (an `InputError`, so a `ValueError`).

    The message is one user-facing line naming the file, the entry (``links[1] "L2"``), the field,
    what was expected and what was found, with the closest valid name when a name looks mistyped.
    Input characters that could break the line are escaped.
    """


# -- message helpers -------------------------------------------------------------------------------

def _unknown_algorithm(name) -> str:
    """_unknown for an algorithm name, pointing at --plugin (topologies never load code)."""
    return (_unknown("algorithm", name, ALGORITHMS)
            + "; an algorithm of your own is loaded with --plugin FILE.py")


def _unknown(kind: str, name, known, *, list_known: bool = True) -> str:
    """'unknown field "x" (did you mean "y"?); known: a, b' (the list only when asked or no match)."""
    hint = suggestion(name, known)
    message = f"unknown {kind} {show(name)}{hint}"
    if known and (list_known or not hint):
        message += "; known: " + ", ".join(sorted(str(k) for k in known))
    return message


def _one_of(choices) -> str:
    quoted = [quote(c) for c in choices]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


@dataclass(frozen=True)
class _Where:
    """Where a problem is: the file, the entry, and (inside the entry) the object being read."""

    source: str
    entry: str
    block: str = ""   # dotted field path of a nested object inside the entry ("transport")

    def error(self, message: str) -> TopologyError:
        """A problem with the object itself (unknown/missing field, inconsistency)."""
        head = f"{self.source}: {self.entry}"
        if self.block:
            head += f': field "{self.block}"'
        return TopologyError(f"{head}: {message}")

    def field_error(self, name: str, message: str) -> TopologyError:
        return TopologyError(f'{self.source}: {self.entry}: field "{self.path(name)}": {message}')

    def path(self, name: str) -> str:
        return f"{self.block}.{name}" if self.block else name

    def inner(self, name: str) -> _Where:
        return replace(self, block=self.path(name))


# -- field checks ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Rule:
    """A numeric constraint: value > minimum (or >= when inclusive), optionally an integer, and
    optionally value <= maximum (or < when not max_inclusive)."""

    expected: str
    minimum: float
    inclusive: bool
    integer: bool = False
    maximum: float | None = None
    max_inclusive: bool = True


POSITIVE = _Rule("a positive number", 0, False)
NON_NEGATIVE = _Rule("a number >= 0", 0, True)
POSITIVE_INT = _Rule("a positive integer", 1, True, integer=True)
NON_NEGATIVE_INT = _Rule("an integer >= 0", 0, True, integer=True)
PROBABILITY = _Rule("a number in [0, 1]", 0, True, maximum=1, max_inclusive=True)
LOSS_PROBABILITY = _Rule("a number in [0, 1)", 0, True, maximum=1, max_inclusive=False)
TRANSITION_PROBABILITY = _Rule("a number in (0, 1]", 0, False, maximum=1, max_inclusive=True)

# TransportSpec field -> (rule, null allowed)
TRANSPORT_RULES = {
    "initial_cwnd_pkts": (POSITIVE, False),
    "initial_ssthresh_pkts": (POSITIVE, True),
    "initial_rto_s": (POSITIVE, False),
    "min_rto_s": (POSITIVE, False),
    "max_rto_s": (POSITIVE, False),
    "dupack_threshold": (POSITIVE_INT, False),
}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_finite(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:   # an int too large for a float
        return False


def _number(where: _Where, name: str, value, rule: _Rule, *, nullable: bool = False):
    """Check one numeric field; returns float (int for integer rules) or None."""
    or_null = " or null" if nullable else ""
    if value is None and nullable:
        return None
    if not _is_number(value):
        kind = "an integer" if rule.integer else "a number"
        raise where.field_error(name, f"expected {kind}{or_null}, got {show(value)}")
    if not _is_finite(value):
        raise where.field_error(name, f"expected a finite number{or_null}, got {show(value)}")
    if rule.integer and not isinstance(value, int):
        raise where.field_error(name, f"expected an integer{or_null}, got {show(value)}")
    low_ok = value >= rule.minimum if rule.inclusive else value > rule.minimum
    high_ok = (rule.maximum is None or
               (value <= rule.maximum if rule.max_inclusive else value < rule.maximum))
    if not (low_ok and high_ok):
        raise where.field_error(name, f"expected {rule.expected}{or_null}, got {show(value)}")
    unit = ("s" if name.endswith("_s") and not name.endswith("_per_s") else
            "ms" if name.endswith("_ms") or name == "cost" else None)
    if unit is not None:                     # times stay resolvable (topologies/bounds.py)
        problem = time_problem(value, unit=unit)
        if problem:
            raise where.field_error(name, f"{problem}, got {show(value)}")
    return int(value) if rule.integer else float(value)


def _scaled(where: _Where, name: str, value: float, factor: float) -> float:
    result = value * factor
    if not math.isfinite(result):
        raise where.field_error(name, f"value {show(value)} is too large")
    return result


def _string(where: _Where, name: str, value, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        expected = "a string" if allow_empty else "a non-empty string"
        raise where.field_error(name, f"expected {expected}, got {show(value)}")
    return value


def _boolean(where: _Where, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise where.field_error(name, f"expected true or false, got {show(value)}")
    return value


def _choice(where: _Where, name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise where.field_error(name, f"expected {_one_of(choices)}, got {show(value)}"
                                      f"{suggestion(value, choices)}")
    return value


def _object(where: _Where, name: str, value, what: str = "an object") -> dict:
    if not isinstance(value, dict):
        raise where.field_error(name, f"expected {what}, got {show(value)}")
    return value


def _list(where: _Where, name: str, value, what: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise where.field_error(name, f"expected {what}, got {show(value)}")
    return list(value)


def _check_fields(where: _Where, obj: dict, allowed, required=()) -> None:
    for key in obj:
        if key not in allowed:
            raise where.error(_unknown("field", key, allowed))
    for key in required:
        if key not in obj:
            raise where.error(f'missing field "{key}"')


# -- top-level blocks ------------------------------------------------------------------------------

def _units(top: _Where, data: dict) -> UnitSystem:
    return UNIT_SYSTEMS[_choice(top, "units", data.get("units", DEFAULT_UNITS), tuple(UNIT_SYSTEMS))]


def _packet_sizes(top: _Where, data: dict) -> PacketSizes:
    if "packet_bytes" not in data:
        return PacketSizes()
    block = _object(top, "packet_bytes", data["packet_bytes"])
    where = _Where(top.source, "packet_bytes")
    _check_fields(where, block, PACKET_FIELDS)
    sizes = {PACKET_FIELDS[key]: _number(where, key, value, POSITIVE_INT) for key, value in block.items()}
    return PacketSizes(**sizes)


def _routing(top: _Where, data: dict) -> RoutingSpec:
    if "routing" not in data:
        return RoutingSpec()
    block = _object(top, "routing", data["routing"])
    where = _Where(top.source, "routing")
    _check_fields(where, block, ROUTING_FIELDS)
    protocol = _choice(where, "protocol", block.get("protocol", "static"), ROUTING_PROTOCOLS)
    interval = _number(where, "update_interval_s",
                       block.get("update_interval_s", DEFAULT_UPDATE_INTERVAL_S), POSITIVE)
    settle = _number(where, "settle_s", block.get("settle_s", DEFAULT_SETTLE_S), NON_NEGATIVE)
    if settle >= interval:
        if "settle_s" in block:
            raise where.field_error("settle_s", f"expected a number < update_interval_s "
                                                f"({interval!r}), got {show(block['settle_s'])}")
        raise where.field_error("update_interval_s", f"expected a number > settle_s "
                                                     f"({settle!r}), got {show(block['update_interval_s'])}")
    ecmp = block.get("ecmp", False)
    if not isinstance(ecmp, (bool, str)) or ecmp not in ECMP_VALUES:
        raise where.field_error("ecmp", f'expected true, false, "flow" or "packet", got {show(ecmp)}')
    return RoutingSpec(protocol=protocol, update_interval_s=interval, settle_s=settle,
                       ecmp=ECMP_VALUES[ecmp])


def _transport(where: _Where, block, base: TransportSpec) -> TransportSpec:
    """`base` overridden by the transport block `block` (read at `where`), checked for consistency."""
    _check_fields(where, block, TRANSPORT_RULES)
    overrides = {}
    for key, value in block.items():
        rule, nullable = TRANSPORT_RULES[key]
        overrides[key] = _number(where, key, value, rule, nullable=nullable)
    merged = replace(base, **overrides)
    if merged.max_rto_s < merged.min_rto_s:
        if "max_rto_s" in overrides:
            raise where.field_error("max_rto_s", f"expected a number >= min_rto_s "
                                                 f"({merged.min_rto_s!r}), got {show(block['max_rto_s'])}")
        raise where.field_error("min_rto_s", f"expected a number <= max_rto_s "
                                             f"({merged.max_rto_s!r}), got {show(block['min_rto_s'])}")
    return merged


def _file_transport(top: _Where, data: dict) -> TransportSpec:
    if "transport" not in data:
        return TransportSpec()
    block = _object(top, "transport", data["transport"])
    return _transport(_Where(top.source, "transport"), block, TransportSpec())


def _params(where: _Where, algorithm: str, block) -> dict:
    """Validated parameter overrides of `algorithm` from the params object `block` (at `where`)."""
    cls = ALGORITHMS[algorithm]
    known = tuple(cls.PARAMETERS)
    checked = {}
    for key, value in block.items():
        if key not in cls.PARAMETERS:
            if not known:
                raise where.error(f"unknown parameter {show(key)}: algorithm "
                                  f"{quote(algorithm)} has no parameters")
            raise where.error(f"unknown parameter {show(key)} of algorithm {quote(algorithm)}"
                              f"{suggestion(key, known)}; known: {', '.join(sorted(known))}")
        problem = cls.param_problem(key, value)
        if problem:
            raise where.field_error(key, f"{problem}, got {show(value)}")
        checked[key] = value
    return checked


def _file_algorithms(top: _Where, data: dict) -> dict:
    if "algorithms" not in data:
        return {}
    block = _object(top, "algorithms", data["algorithms"])
    where = _Where(top.source, "algorithms")
    result = {}
    for name, params in block.items():
        if name not in ALGORITHMS:
            raise where.error(_unknown_algorithm(name))
        params = _object(where, name, params, "an object of parameters")
        result[name] = _params(where.inner(name), name, params)
    return result


def _optional_duration(top: _Where, data: dict):
    return _number(top, "duration_s", data.get("duration_s"), POSITIVE, nullable=True)


def _seed(top: _Where, data: dict) -> int:
    return _number(top, "seed", data.get("seed", DEFAULT_SEED), NON_NEGATIVE_INT)


# -- nodes -----------------------------------------------------------------------------------------

def _nodes(top: _Where, data: dict) -> dict:
    """Node id -> "host" or "router", in file order (hosts first)."""
    kinds: dict = {}
    for kind, key in (("host", "hosts"), ("router", "routers")):
        ids = _list(top, key, data.get(key, []), "a list of node ids")
        for index, node in enumerate(ids):
            where = _Where(top.source, f"{key}[{index}]")
            if not isinstance(node, str) or not node:
                raise where.error(f"expected a non-empty string node id, got {show(node)}")
            problem = id_problem(node)
            if problem:
                raise where.error(problem)
            if node in kinds:
                raise where.error(f"duplicate node id {quote(node)} (already a {kinds[node]})")
            kinds[node] = kind
    return kinds


# -- entries of lists (links, flows) ---------------------------------------------------------------

def _entries(top: _Where, data: dict, key: str, kind: str):
    """Yield (where, item) for each object of the list `key`, ids checked present and unique."""
    items = _list(top, key, data.get(key, []), f"a list of {kind} objects")
    first_index: dict = {}
    for index, item in enumerate(items):
        where = _Where(top.source, f"{key}[{index}]")
        if not isinstance(item, dict):
            raise where.error(f"expected a {kind} object, got {show(item)}")
        if "id" not in item:
            raise where.error('missing field "id"')
        item_id = item["id"]
        problem = id_problem(item_id)
        if problem:
            raise where.field_error("id", problem)
        if item_id in first_index:
            raise where.error(f"duplicate {kind} id {quote(item_id)} "
                              f"(already used by {key}[{first_index[item_id]}])")
        first_index[item_id] = index
        yield replace(where, entry=f"{where.entry} {quote(item_id)}"), item


def _node_ref(where: _Where, name: str, value, kinds: dict) -> str:
    if not isinstance(value, str):
        raise where.field_error(name, f"expected a node id, got {show(value)}")
    if value not in kinds:
        raise where.field_error(name, _unknown("node", value, kinds, list_known=False))
    return value


def _ends(where: _Where, value, kinds: dict) -> tuple:
    ends = value if isinstance(value, (list, tuple)) else None
    if ends is None or len(ends) != 2:
        raise where.field_error("ends", f"expected a list of two node ids, got {show(value)}")
    first = _node_ref(where, "ends", ends[0], kinds)
    second = _node_ref(where, "ends", ends[1], kinds)
    if first == second:
        raise where.field_error("ends", f"expected two different nodes, got {quote(first)} twice")
    return (first, second)


# -- link impairments ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Given:
    """An impairment field's checked value and the object (link or direction) that gave it."""

    value: object
    where: _Where


def _loss_model(where: _Where, name: str, value) -> GilbertElliottSpec:
    block = _object(where, name, value)
    inner = where.inner(name)
    if "type" not in block:
        raise inner.error('missing field "type"')
    _choice(inner, "type", block["type"], LOSS_MODEL_TYPES)
    _check_fields(inner, block, GILBERT_ELLIOTT_FIELDS, GILBERT_ELLIOTT_REQUIRED)
    return GilbertElliottSpec(
        p_good_to_bad=_number(inner, "p_good_to_bad", block["p_good_to_bad"], TRANSITION_PROBABILITY),
        p_bad_to_good=_number(inner, "p_bad_to_good", block["p_bad_to_good"], TRANSITION_PROBABILITY),
        loss_good=_number(inner, "loss_good", block.get("loss_good", 0.0), PROBABILITY),
        loss_bad=_number(inner, "loss_bad", block.get("loss_bad", 1.0), PROBABILITY),
    )


IMPAIRMENT_READERS = {
    "loss_rate": lambda where, name, value: _number(where, name, value, LOSS_PROBABILITY),
    "loss_model": _loss_model,
    "duplicate_rate": lambda where, name, value: _number(where, name, value, PROBABILITY),
    "reorder_rate": lambda where, name, value: _number(where, name, value, PROBABILITY),
    "reorder_delay_ms": lambda where, name, value: _number(where, name, value, POSITIVE),
    "jitter_ms": lambda where, name, value: _number(where, name, value, NON_NEGATIVE),
    "jitter_reorder": _boolean,
}


def _impairment_fields(where: _Where, obj: dict) -> dict:
    """The impairment fields given in `obj` (read at `where`), checked: name -> _Given."""
    return {name: _Given(IMPAIRMENT_READERS[name](where, name, obj[name]), where)
            for name in IMPAIRMENT_FIELDS if name in obj}


def _direction_fields(where: _Where, item: dict, labels: tuple) -> list:
    """Per direction (as `labels`), the fields given by its object in the link's `impairments`."""
    if "impairments" not in item:
        return [{} for _ in labels]
    block = _object(where, "impairments", item["impairments"], "an object of directions")
    if labels[0] == labels[1] and block:
        raise where.field_error("impairments", f"both directions are labelled {quote(labels[0])}; "
                                               f"give the impairments at link level or rename a node")
    for label in block:
        if label not in labels:
            raise where.field_error("impairments", _unknown("direction", label, labels))
    outer = where.inner("impairments")
    given = {}
    for label, obj in block.items():
        inner = outer.inner(label)
        _check_fields(inner, _object(outer, label, obj), IMPAIRMENT_FIELDS)
        given[label] = _impairment_fields(inner, obj)
    return [given.get(label, {}) for label in labels]


def _positive(merged: dict, name: str) -> bool:
    return name in merged and merged[name].value > 0


def _check_direction(merged: dict, own: dict) -> None:
    """Consistency of one direction's effective fields (`own`: those its direction object gave)."""
    if _positive(merged, "reorder_rate") and "reorder_delay_ms" not in merged:
        raise merged["reorder_rate"].where.field_error("reorder_delay_ms", "required when reorder_rate > 0")
    if "loss_model" in merged and _positive(merged, "loss_rate"):
        model, rate = merged["loss_model"], merged["loss_rate"]
        model_path, rate_path = model.where.path("loss_model"), rate.where.path("loss_rate")
        if "loss_rate" in own and "loss_model" not in own:   # blame the more specific of the two
            raise rate.where.field_error("loss_rate", f"expected 0 when {quote(model_path)} is given "
                                                      f"(use one loss model), got {show(rate.value)}")
        raise model.where.field_error("loss_model", f"not allowed together with a non-zero "
                                                    f"{quote(rate_path)} ({show(rate.value)}); "
                                                    f"use one loss model")
    for name, needs in (("reorder_delay_ms", "reorder_rate"), ("jitter_reorder", "jitter_ms")):
        if name in own and not _positive(merged, needs):
            raise own[name].where.field_error(name, f"not allowed without {needs} > 0")


def _impairment_spec(merged: dict) -> ImpairmentSpec:
    def value(name, default):
        return merged[name].value if name in merged else default

    reorder_rate = value("reorder_rate", 0.0)
    jitter_ms = value("jitter_ms", 0.0)
    spec = ImpairmentSpec(
        loss_rate=value("loss_rate", 0.0),
        loss_model=value("loss_model", None),
        duplicate_rate=value("duplicate_rate", 0.0),
        reorder_rate=reorder_rate,
        reorder_delay_s=value("reorder_delay_ms", 0.0) / 1000.0 if reorder_rate > 0 else 0.0,
        jitter_s=jitter_ms / 1000.0,
        jitter_reorder=value("jitter_reorder", False) if jitter_ms > 0 else False,
    )
    return NO_IMPAIRMENT if spec == NO_IMPAIRMENT else spec


def _impairments(where: _Where, item: dict, ends: tuple) -> tuple:
    """(ImpairmentSpec of ends[0] -> ends[1], of ends[1] -> ends[0]); see docs/topology-format.md.

    Per direction and field: the direction object's value, else the link's, else the default. The
    consistency rules are checked on these effective values.
    """
    link_fields = _impairment_fields(where, item)
    labels = (f"{ends[0]}->{ends[1]}", f"{ends[1]}->{ends[0]}")
    merged = []
    for own in _direction_fields(where, item, labels):
        effective = link_fields | own
        _check_direction(effective, own)
        merged.append(effective)
    for name, needs in (("reorder_delay_ms", "reorder_rate"), ("jitter_reorder", "jitter_ms")):
        if name in link_fields and not any(_positive(effective, needs) for effective in merged):
            raise where.field_error(name, f"not allowed without {needs} > 0")
    return tuple(_impairment_spec(effective) for effective in merged)


# -- links -----------------------------------------------------------------------------------------

# discipline -> {parameter: default (None: required)}; docs/topology-format.md, "Queue disciplines"
QUEUE_PARAMETERS = {
    "droptail": {},
    "red": {"min_kb": None, "max_kb": None, "max_p": 0.1, "weight": 0.002, "gentle": True,
            "ecn": False},
    "codel": {"target_ms": 5.0, "interval_ms": 100.0, "ecn": False},
    "fq_codel": {"target_ms": 5.0, "interval_ms": 100.0, "quantum_bytes": None, "ecn": False},
    "pie": {"target_ms": 15.0, "tupdate_ms": 15.0, "alpha": 0.125, "beta": 1.25,
            "max_burst_ms": 150.0, "ecn": False},
    "step": {"k_kb": None},
}
OPTIONAL_NONE = ("quantum_bytes",)    # default None is "one data packet", not "required"
FRACTION = _Rule("a number in (0, 1]", 0, False, maximum=1, max_inclusive=True)


def _queue(where: _Where, value, units: UnitSystem, buffer_bytes: int, buffer_kb):
    """The link's ``"queue"`` object, checked and resolved to seconds and bytes (None for
    drop-tail): {"discipline": name, "ecn": bool, ...}; see components/queues.py. A threshold
    the buffer can never reach (RED's `min_kb`, step's `k_kb`) is an error: the discipline would
    silently be drop-tail. RED's `max_kb` may exceed the buffer (the profile is then cut off by
    overflow)."""
    if value is None:
        return None
    block = _object(where, "queue", value)
    inner = where.inner("queue")
    if "discipline" not in block:
        raise inner.error('missing field "discipline"')
    name = _choice(inner, "discipline", block["discipline"], tuple(QUEUE_PARAMETERS))
    params = QUEUE_PARAMETERS[name]
    required = tuple(k for k, v in params.items() if v is None and k not in OPTIONAL_NONE)
    _check_fields(inner, block, ("discipline",) + tuple(params), required)
    if name == "droptail":
        return None
    given = {**params, **block}
    out: dict = {"discipline": name, "ecn": False}
    for key, val in given.items():
        if key == "discipline":
            continue
        if key in ("ecn", "gentle"):
            out[key] = _boolean(inner, key, val)
        elif key == "quantum_bytes":
            out[key] = None if val is None else _number(inner, key, val, POSITIVE_INT)
        elif key in ("max_p", "weight"):
            out[key] = _number(inner, key, val, FRACTION)
        elif key in ("alpha", "beta"):
            out[key] = _number(inner, key, val, NON_NEGATIVE)
        elif key.endswith("_kb"):
            kb = _number(inner, key, val, NON_NEGATIVE if key == "k_kb" else POSITIVE)
            out[key[:-3] + "_bytes"] = _scaled(inner, key, kb, units.bytes_per_kb)
        elif key.endswith("_ms"):
            out[key[:-3] + "_s"] = _number(inner, key, val, POSITIVE) / 1000.0
    if name == "red" and not out["min_bytes"] < out["max_bytes"]:
        raise inner.field_error("max_kb", f"expected a number > min_kb ({show(block['min_kb'])}), "
                                          f"got {show(block['max_kb'])}")
    threshold = {"red": "min_kb", "step": "k_kb"}.get(name)
    if threshold is not None and not out[threshold[:-3] + "_bytes"] < buffer_bytes:
        raise inner.field_error(threshold, f"expected a number < the link's buffer_kb "
                                           f"({show(buffer_kb)}): the queue never reaches it, got "
                                           f"{show(block[threshold])}")
    return out


def _schedule(where: _Where, item: dict, name: str, rule: _Rule, factor: float) -> tuple:
    """``[[t_s, value], ...]`` (times >= 0, strictly increasing) -> ((t_s, value * factor), ...)."""
    if name not in item:
        return ()
    entries = _list(where, name, item[name], "a list of [time_s, value] pairs")
    out = []
    for i, entry in enumerate(entries):
        label = f"{name}[{i}]"
        if not isinstance(entry, list) or len(entry) != 2:
            raise where.field_error(label, f"expected a [time_s, value] pair, got {show(entry)}")
        t_s = float(_number(where, label, entry[0], NON_NEGATIVE))
        problem = time_problem(t_s)              # topologies/bounds.py
        if problem:
            raise where.field_error(label, f"{problem}, got {show(entry[0])}")
        value = _number(where, label, entry[1], rule)
        problem = time_problem(value, unit="ms") if name == "delay_schedule" else None
        if problem:
            raise where.field_error(label, f"{problem}, got {show(entry[1])}")
        if out and t_s <= out[-1][0]:
            raise where.field_error(label, f"times must increase: {_seconds(t_s)} s after "
                                           f"{_seconds(out[-1][0])} s")
        out.append((t_s, float(_scaled(where, label, value, factor))))
    return tuple(out)


def _link(where: _Where, item: dict, kinds: dict, units: UnitSystem, duplex: str) -> LinkSpec:
    _check_fields(where, item, LINK_FIELDS, LINK_REQUIRED)
    ends = _ends(where, item["ends"], kinds)
    rate = _number(where, "rate_mbps", item["rate_mbps"], POSITIVE)
    delay = _number(where, "delay_ms", item["delay_ms"], NON_NEGATIVE)
    buffer = _number(where, "buffer_kb", item["buffer_kb"], NON_NEGATIVE)
    buffer_bytes = round(_scaled(where, "buffer_kb", buffer, units.bytes_per_kb))
    cost = _number(where, "cost", item["cost"], POSITIVE) if "cost" in item else None
    link_duplex = _choice(where, "duplex", item.get("duplex", duplex), DUPLEX_MODES)
    return LinkSpec(
        id=item["id"],
        ends=ends,
        rate_bps=float(_scaled(where, "rate_mbps", rate, units.bits_per_mbit)),
        delay_s=delay / 1000.0,
        buffer_bytes=buffer_bytes,
        duplex=link_duplex,
        cost_s=None if cost is None else cost / 1000.0,
        impairments=_impairments(where, item, ends),
        rate_schedule=_schedule(where, item, "rate_schedule", POSITIVE, units.bits_per_mbit),
        delay_schedule=_schedule(where, item, "delay_schedule", NON_NEGATIVE, 1e-3),
        queue=_queue(where, item.get("queue"), units, buffer_bytes, item["buffer_kb"]),
    )


def _links(top: _Where, data: dict, kinds: dict, units: UnitSystem, duplex: str) -> list:
    return [_link(where, item, kinds, units, duplex) for where, item in _entries(top, data, "links", "link")]


def _check_host_links(top: _Where, kinds: dict, links: list) -> None:
    attached: dict = {node: [] for node, kind in kinds.items() if kind == "host"}
    for link in links:
        for end in dict.fromkeys(link.ends):
            if end in attached:
                attached[end].append(link.id)
    where = _Where(top.source, "hosts")
    for host, link_ids in attached.items():
        if len(link_ids) == 0:
            raise where.error(f"host {quote(host)} has no link; a host has exactly one link")
        if len(link_ids) > 1:
            raise where.error(f"host {quote(host)} has {len(link_ids)} links ({', '.join(link_ids)}); "
                              f"a host has exactly one link")


def _components(kinds: dict, links: list) -> dict:
    """Node -> label of its connected component when hosts do not forward: routers joined by
    router-router links (union-find, computed once), a host with the component of the router at
    the other end of its one link (two hosts linked to each other form their own component).
    Two hosts can reach each other iff their labels are equal."""
    parent = {node: node for node, kind in kinds.items() if kind == "router"}

    def find(node):
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    host_links = []
    for link in links:
        a, b = link.ends
        if a in parent and b in parent:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[rb] = ra
        else:
            host_links.append((a, b))
    component = {router: find(router) for router in parent}
    for a, b in host_links:
        if a in parent:
            component[b] = component[a]
        elif b in parent:
            component[a] = component[b]
        else:                      # host - host: the two of them
            component[a] = component[b] = ("hosts", a, b)
    return component


def _connected(src: str, dst: str, components: dict) -> bool:
    """Is there a path src -> dst whose intermediate nodes are all routers (hosts do not forward)?"""
    label = components.get(src)
    return label is not None and label == components.get(dst)


# -- flows -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _FlowContext:
    kinds: dict
    components: dict          # node -> connected component (`_components`)
    units: UnitSystem
    transport: TransportSpec
    algorithms: dict          # the file's per-algorithm parameter overrides
    override: str | None      # the --algorithm override


def _host_ref(where: _Where, name: str, value, kinds: dict) -> str:
    node = _node_ref(where, name, value, kinds)
    if kinds[node] != "host":
        raise where.field_error(name, f"{quote(node)} is a router; flows run between hosts")
    return node


def _data_bytes(where: _Where, value, units: UnitSystem):
    data_mb = _number(where, "data_mb", value, POSITIVE, nullable=True)
    if data_mb is None:
        return None
    return max(1, round(_scaled(where, "data_mb", data_mb, units.bytes_per_mb)))


def _flow_algorithm(where: _Where, item: dict, ctx: _FlowContext):
    """(effective algorithm, its merged params), following the --algorithm override rules."""
    algorithm = item.get("algorithm", DEFAULT_ALGORITHM)
    if not isinstance(algorithm, str):
        raise where.field_error("algorithm", f"expected an algorithm name, got {show(algorithm)}")
    if algorithm not in ALGORITHMS:
        raise where.field_error("algorithm", _unknown_algorithm(algorithm))
    own = {}
    if "params" in item:
        block = _object(where, "params", item["params"], "an object of parameters")
        own = _params(where.inner("params"), algorithm, block)
    effective = ctx.override or algorithm
    params = dict(ALGORITHMS[effective].PARAMETERS)
    params.update(ctx.algorithms.get(effective, {}))
    if effective == algorithm:
        params.update(own)
    problem = ALGORITHMS[effective].params_problem(params)
    if problem:
        raise where.field_error("params", problem)
    return effective, params


def _flow_transport(where: _Where, item: dict, base: TransportSpec) -> TransportSpec:
    if "transport" not in item:
        return base
    block = _object(where, "transport", item["transport"])
    return _transport(where.inner("transport"), block, base)


def _rate_flow(where: _Where, item: dict, ctx: _FlowContext, kind: str) -> FlowSpec:
    """A "cbr" or "onoff" flow (flows/cbr.py): no algorithm, no transport."""
    for name in BULK_ONLY_FIELDS:
        if name in item:
            raise where.field_error(name, f"not allowed for a {quote(kind)} flow (no transport)")
    if kind == "cbr":
        for name in ("on_s", "off_s", "periods"):
            if name in item:
                raise where.field_error(name, "only for \"onoff\" flows")
    for name in ("rate_mbps",) + (("on_s", "off_s") if kind == "onoff" else ()):
        if name not in item:
            raise where.field_error(name, f"required for a {quote(kind)} flow")
    src = _host_ref(where, "src", item["src"], ctx.kinds)
    dst = _host_ref(where, "dst", item["dst"], ctx.kinds)
    if src == dst:
        raise where.field_error("dst", f"expected a host other than src, got {quote(dst)}")
    if not _connected(src, dst, ctx.components):
        raise where.error(f"hosts {quote(src)} and {quote(dst)} are not connected")
    rate = _number(where, "rate_mbps", item["rate_mbps"], POSITIVE)
    on_s = off_s = None
    if kind == "onoff":
        on_s = float(_number(where, "on_s", item["on_s"], POSITIVE))
        off_s = float(_number(where, "off_s", item["off_s"], NON_NEGATIVE))
    return FlowSpec(id=item["id"], src=src, dst=dst,
                    data_bytes=_data_bytes(where, item.get("data_mb"), ctx.units),
                    start_s=_number(where, "start_s", item.get("start_s", 0), NON_NEGATIVE),
                    algorithm=kind, params={}, transport=ctx.transport, kind=kind,
                    rate_bps=float(_scaled(where, "rate_mbps", rate, ctx.units.bits_per_mbit)),
                    on_s=on_s, off_s=off_s,
                    periods=_choice(where, "periods", item.get("periods", "fixed"),
                                    ("fixed", "exponential")))


def _delayed_ack(where: _Where, value):
    """(every, timeout_s) from ``"delayed_ack"``: true, false or {"every": N, "timeout_ms": T}."""
    if value is False or value is None:
        return None
    if value is True:
        return DEFAULT_DELAYED_ACK
    block = _object(where, "delayed_ack", value, "true, false or an object")
    inner = where.inner("delayed_ack")
    _check_fields(inner, block, DELAYED_ACK_FIELDS)
    every = _number(inner, "every", block.get("every", DEFAULT_DELAYED_ACK[0]), POSITIVE_INT)
    timeout_ms = _number(inner, "timeout_ms", block.get("timeout_ms", DEFAULT_DELAYED_ACK[1] * 1e3),
                         POSITIVE)
    return (every, timeout_ms / 1e3)


def _flow(where: _Where, item: dict, ctx: _FlowContext) -> FlowSpec:
    _check_fields(where, item, FLOW_FIELDS, FLOW_REQUIRED)
    kind = _choice(where, "kind", item.get("kind", "bulk"), FLOW_KINDS)
    if kind != "bulk":
        return _rate_flow(where, item, ctx, kind)
    for name in RATE_FLOW_FIELDS:
        if name in item:
            raise where.field_error(name, "only for \"cbr\" and \"onoff\" flows")
    src = _host_ref(where, "src", item["src"], ctx.kinds)
    dst = _host_ref(where, "dst", item["dst"], ctx.kinds)
    if src == dst:
        raise where.field_error("dst", f"expected a host other than src, got {quote(dst)}")
    data_bytes = _data_bytes(where, item.get("data_mb"), ctx.units)
    start_s = _number(where, "start_s", item.get("start_s", 0), NON_NEGATIVE)
    algorithm, params = _flow_algorithm(where, item, ctx)
    transport = _flow_transport(where, item, ctx.transport)
    needs_ecn = ALGORITHMS[algorithm].ecn_mode == "dctcp"
    # --algorithm dctcp turns ECN on where the file does not say (as Linux's TCP_CONG_NEEDS_ECN
    # and ns-3's TcpDctcp do); a file that names dctcp itself must say "ecn": true
    implied = needs_ecn and ctx.override is not None and "ecn" not in item
    ecn = _boolean(where, "ecn", item.get("ecn", implied))
    if needs_ecn and not ecn:
        raise where.field_error("ecn", f"algorithm {quote(algorithm)} needs ECN: expected true, "
                                       f"got {show(item.get('ecn', False))}")
    delayed_ack = _delayed_ack(where, item.get("delayed_ack", False))
    if not _connected(src, dst, ctx.components):
        raise where.error(f"hosts {quote(src)} and {quote(dst)} are not connected")
    return FlowSpec(id=item["id"], src=src, dst=dst, data_bytes=data_bytes, start_s=start_s,
                    algorithm=algorithm, params=params, transport=transport, ecn=ecn,
                    delayed_ack=delayed_ack)


def _flows(top: _Where, data: dict, ctx: _FlowContext) -> list:
    return [_flow(where, item, ctx) for where, item in _entries(top, data, "flows", "flow")]


# -- link events -----------------------------------------------------------------------------------

def _seconds(value: float) -> str:
    """A time in a message: 12 for 12.0, else the shortest float spelling."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _event(where: _Where, item, link_ids: dict) -> LinkEventSpec:
    if not isinstance(item, dict):
        raise where.error(f"expected an event object, got {show(item)}")
    _check_fields(where, item, EVENT_FIELDS, EVENT_FIELDS)
    at_s = _number(where, "at_s", item["at_s"], NON_NEGATIVE)
    link = item["link"]
    if not isinstance(link, str):
        raise where.field_error("link", f"expected a link id, got {show(link)}")
    if link not in link_ids:
        raise where.field_error("link", _unknown("link", link, link_ids, list_known=False))
    action = _choice(where, "action", item["action"], LINK_ACTIONS)
    return LinkEventSpec(at_s=at_s, link=link, action=action)


# -- workloads -------------------------------------------------------------------------------------

def shipped_sizes(name: str) -> tuple:
    """The CDF of a shipped size distribution (topologies/data/<name>.csv, sources cited there)."""
    path = Path(__file__).resolve().parent / "data" / f"{name}.csv"
    points = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line and not line.startswith("#") and not line.startswith("bytes"):
                size, prob = line.split(",")
                points.append((float(size), float(prob)))
    return tuple(points)


def _cdf(where: _Where, value) -> tuple:
    """``[[bytes, cumulative probability], ...]``: both non-decreasing, probabilities in [0, 1],
    the last one 1, some size > 0."""
    entries = _list(where, "sizes", value, f"a CDF [[bytes, probability], ...] or {_one_of(SIZE_DISTRIBUTIONS)}")
    if not entries:
        raise where.field_error("sizes", "expected at least one [bytes, probability] point")
    points = []
    for i, entry in enumerate(entries):
        label = f"sizes[{i}]"
        if not isinstance(entry, list) or len(entry) != 2:
            raise where.field_error(label, f"expected a [bytes, probability] pair, got {show(entry)}")
        size = float(_number(where, label, entry[0], NON_NEGATIVE))
        prob = float(_number(where, label, entry[1], NON_NEGATIVE))
        if prob > 1:
            raise where.field_error(label, f"expected a probability <= 1, got {show(entry[1])}")
        if points and (size < points[-1][0] or prob < points[-1][1]):
            raise where.field_error(label, "sizes and probabilities must not decrease")
        points.append((size, prob))
    if points[-1][1] != 1 or points[-1][0] <= 0:
        raise where.field_error("sizes", "the last point must have probability 1 and a size > 0")
    return tuple(points)


def _host_list(where: _Where, name: str, value, kinds: dict) -> tuple:
    items = _list(where, name, value, "a list of host ids")
    if not items:
        raise where.field_error(name, "expected at least one host")
    return tuple(dict.fromkeys(_host_ref(where, name, item, kinds) for item in items))


def _workload(where: _Where, item: dict, ctx: _FlowContext) -> WorkloadSpec:
    _check_fields(where, item, WORKLOAD_FIELDS, WORKLOAD_REQUIRED)
    src = _host_list(where, "src", item["src"], ctx.kinds)
    dst = _host_list(where, "dst", item["dst"], ctx.kinds)
    if len(src) == 1 and dst == src:
        raise where.field_error("dst", "expected a host other than the only src")
    for a in src:
        for b in dst:
            if a != b and not _connected(a, b, ctx.components):
                raise where.error(f"hosts {quote(a)} and {quote(b)} are not connected")
    rate = float(_number(where, "arrivals_per_s", item["arrivals_per_s"], POSITIVE))
    if rate > MAX_ARRIVALS_PER_S:            # the mean gap would vanish against the clock
        raise where.field_error("arrivals_per_s", f"expected at most {MAX_ARRIVALS_PER_S:g} "
                                                  f"arrivals per second (a mean gap of at least "
                                                  f"{TIME_RESOLUTION_S:g} s), got {show(item['arrivals_per_s'])}")
    sizes = item["sizes"]
    if isinstance(sizes, str):
        name = _choice(where, "sizes", sizes, SIZE_DISTRIBUTIONS)
        cdf = shipped_sizes(name)
    else:
        name, cdf = "cdf", _cdf(where, sizes)
    algorithm, params = _flow_algorithm(where, item, ctx)
    # a workload's flows are drawn, not written: ECN follows the algorithm unless "ecn" says
    # otherwise (dctcp: on), so a sweep can swap dctcp and cubic in one field
    needs_ecn = ALGORITHMS[algorithm].ecn_mode == "dctcp"
    ecn = _boolean(where, "ecn", item.get("ecn", needs_ecn))
    if needs_ecn and not ecn:
        raise where.field_error("ecn", f"algorithm {quote(algorithm)} needs ECN: expected true, "
                                       f"got {show(item.get('ecn'))}")
    start_s = float(_number(where, "start_s", item.get("start_s", 0), NON_NEGATIVE))
    stop_s = _number(where, "stop_s", item.get("stop_s"), POSITIVE, nullable=True)
    if stop_s is not None and stop_s <= start_s:
        raise where.field_error("stop_s", f"expected a time after start_s ({_seconds(start_s)} s)")
    return WorkloadSpec(id=item["id"], src=src, dst=dst, arrivals_per_s=rate, sizes=cdf,
                        sizes_name=name, algorithm=algorithm, params=params,
                        transport=_flow_transport(where, item, ctx.transport), start_s=start_s,
                        stop_s=None if stop_s is None else float(stop_s), ecn=ecn)


def _workloads(top: _Where, data: dict, ctx: _FlowContext) -> list:
    return [_workload(where, item, ctx)
            for where, item in _entries(top, data, "workloads", "workload")]


def _events(top: _Where, data: dict, links: list) -> list:
    """The link events sorted by (time, file order), each link alternating down, up, down, ..."""
    items = _list(top, "events", data.get("events", []), "a list of event objects")
    link_ids = {link.id: None for link in links}
    events = [_event(_Where(top.source, f"events[{index}]"), item, link_ids)
              for index, item in enumerate(items)]
    first_at: dict = {}   # (link id, time) -> index of its first event
    for index, event in enumerate(events):
        previous = first_at.setdefault((event.link, event.at_s), index)
        if previous != index:
            raise _Where(top.source, f"events[{index}]").field_error(
                "at_s", f"link {quote(event.link)} already has an event at "
                        f"{_seconds(event.at_s)} s (events[{previous}])")
    order = sorted(range(len(events)), key=lambda index: events[index].at_s)   # stable: file order
    state = {link_id: "up" for link_id in link_ids}   # every link starts up
    for index in order:
        event = events[index]
        if event.action == state[event.link]:
            raise _Where(top.source, f"events[{index}]").field_error(
                "action", f"link {quote(event.link)} is already {event.action} at "
                          f"{_seconds(event.at_s)} s")
        state[event.link] = event.action
    return [events[index] for index in order]


# -- entry point -----------------------------------------------------------------------------------

def _check_override(algorithm) -> str | None:
    if algorithm is None:
        return None
    if not isinstance(algorithm, str):
        raise TopologyError(f"--algorithm: expected an algorithm name, got {show(algorithm)}")
    if algorithm not in ALGORITHMS:
        raise TopologyError(f"--algorithm: {_unknown_algorithm(algorithm)}")
    return algorithm


def _open(source, label: str | None):
    """(label for messages, parsed and plain-checked data, default name)."""
    if isinstance(source, dict):
        label = DICT_SOURCE if label is None else one_line(str(label))
        check_plain(label, source, error=TopologyError, kind=PLAIN_DATA_KIND)
        return label, source, "topology"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label, data = read_json(path, error=TopologyError, kind=PLAIN_DATA_KIND)
        return label, data, path.stem
    raise TypeError(f"load_topology: expected a file path or a dict, got {type(source).__name__}")


def _name(top: _Where, data: dict, default_name: str) -> str:
    """The topology's name: it names the results directory, so it must be a plain file name."""
    if "name" in data:
        name = _string(top, "name", data["name"])
        problem = file_name_problem(name)
        if problem:
            raise top.field_error("name", problem)
        return name
    problem = file_name_problem(default_name)
    if problem:
        raise top.field_error("name", f"{problem} (the file name without extension; give a "
                                      f'"name")')
    return default_name


def _build(label: str, data, default_name: str, override: str | None) -> TopologySpec:
    top = _Where(label, "top level")
    if not isinstance(data, dict):
        raise top.error(f"expected a JSON object, got {show(data)}")
    _check_fields(top, data, TOP_LEVEL_FIELDS, TOP_LEVEL_REQUIRED)
    name = _name(top, data, default_name)
    description = _string(top, "description", data.get("description", ""), allow_empty=True)
    units = _units(top, data)
    duplex = _choice(top, "duplex", data.get("duplex", DEFAULT_DUPLEX), DUPLEX_MODES)
    packet_sizes = _packet_sizes(top, data)
    routing = _routing(top, data)
    transport = _file_transport(top, data)
    algorithms = _file_algorithms(top, data)
    duration_s = _optional_duration(top, data)
    seed = _seed(top, data)
    kinds = _nodes(top, data)
    links = _links(top, data, kinds, units, duplex)
    _check_host_links(top, kinds, links)
    ctx = _FlowContext(kinds, _components(kinds, links), units, transport, algorithms, override)
    flows = _flows(top, data, ctx)
    events = _events(top, data, links)
    workloads = _workloads(top, data, ctx)
    return TopologySpec(
        name=name, description=description, units=units, packet_sizes=packet_sizes,
        routing=routing,
        hosts=[n for n, k in kinds.items() if k == "host"],
        routers=[n for n, k in kinds.items() if k == "router"],
        links=links, flows=flows, duration_s=duration_s, seed=seed, source=label,
        algorithms={alg: dict(params) for alg, params in algorithms.items()},
        events=events,
        workloads=workloads,
    )


def load_topology(source, *, algorithm: str | None = None, label: str | None = None) -> TopologySpec:
    """Load and validate a topology from a JSON file path (str or Path) or an already-parsed dict.

    `algorithm` is the CLI's ``--algorithm NAME`` override: every flow runs NAME, with the file's
    ``algorithms[NAME]`` parameters (else NAME's defaults); a flow's own ``params`` are kept only if
    the flow already used NAME. `label` names a dict source in messages (default ``<dict>``; a
    file is named by its path). Raises `TopologyError` (one line) for any problem.
    """
    override = _check_override(algorithm)
    label, data, default_name = _open(source, label)
    return _build(label, data, default_name, override)
