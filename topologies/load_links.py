"""Links: their ends, rate, delay, buffer, duplex and cost, the `queue` discipline, and the
`rate_schedule`/`delay_schedule` of a time-varying link (docs/topology-format.md, "Link objects").
Impairments are read by `topologies.load_impairments`."""
from __future__ import annotations

from components.link import DUPLEX_MODES
from topologies.bounds import (
    MAX_BUFFER_KB,
    MAX_RATE_MBPS,
    MAX_TIME_S,
    MIN_TIMER_INTERVAL_S,
    min_rate_bps,
    time_problem,
)
from topologies.load_fields import (
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    Fields,
    Rule,
    Where,
    as_list,
    as_object,
    boolean,
    check_fields,
    choice,
    entries,
    node_ref,
    number,
    scaled,
    seconds,
)
from topologies.load_impairments import IMPAIRMENT_FIELDS, read_impairments
from topologies.spec import DEFAULT_DATA_PACKET_BYTES, LinkSpec, UnitSystem
from topologies.validation import quote, show

# ("cost" is the older name of "cost_ms", still read)
LINK_FIELDS = ("id", "ends", "rate_mbps", "delay_ms", "buffer_kb", "duplex", "cost_ms", "cost",
               *IMPAIRMENT_FIELDS, "impairments", "queue", "rate_schedule", "delay_schedule")
LINK_REQUIRED = ("id", "ends", "rate_mbps", "delay_ms", "buffer_kb")


def _cost_ms(where: Where, item: dict):
    """The link's routing cost in ms (`cost_ms`, or its older name `cost`), None if not given."""
    if "cost_ms" in item and "cost" in item:
        raise where.field_error("cost", "the older name of cost_ms, which the link gives too: "
                                        "keep one")
    name = "cost_ms" if "cost_ms" in item else "cost"
    return number(where, name, item[name], POSITIVE) if name in item else None


def _ends(where: Where, value, kinds: dict) -> tuple:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        found = (f"a list of {len(value)}" if isinstance(value, (list, tuple)) and value
                 else show(value))
        raise where.field_error("ends", f"expected a list of two node ids, got {found}")
    first, second = value
    if not (type(first) is str and first in kinds and type(second) is str and second in kinds):
        node_ref(where, "ends", first, kinds)         # (they raise: which end, what is wrong)
        node_ref(where, "ends", second, kinds)
    if first == second:
        raise where.field_error("ends", f"expected two different nodes, got {quote(first)} twice")
    return (first, second)


# discipline -> {parameter: default (None: required)}; docs/topology-format.md, "Queue disciplines"
QUEUE_PARAMETERS: dict[str, dict[str, object]] = {
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
FRACTION = Rule("a number in (0, 1]", 0, False, maximum=1, max_inclusive=True)


def _queue(where: Where, value, units: UnitSystem, buffer_bytes: int, buffer_kb):
    """The link's ``"queue"`` object, checked and resolved to seconds and bytes (None for
    drop-tail): {"discipline": name, "ecn": bool, ...}; see components/queues.py. A threshold
    the buffer can never reach (RED's `min_kb`, step's `k_kb`) is an error: the discipline would
    silently be drop-tail. RED's `max_kb` may exceed the buffer (the profile is then cut off by
    overflow)."""
    if value is None:
        return None
    block = as_object(where, "queue", value)
    inner = where.inner("queue")
    if "discipline" not in block:
        raise inner.error('missing field "discipline"')
    name = choice(inner, "discipline", block["discipline"], tuple(QUEUE_PARAMETERS))
    params = QUEUE_PARAMETERS[name]
    required = tuple(k for k, v in params.items() if v is None and k not in OPTIONAL_NONE)
    check_fields(inner, block, ("discipline", *params), required)
    if name == "droptail":
        return None
    given = {**params, **block}
    out: dict = {"discipline": name, "ecn": False}
    for key, val in given.items():
        if key == "discipline":
            continue
        if key in ("ecn", "gentle"):
            out[key] = boolean(inner, key, val)
        elif key == "quantum_bytes":
            out[key] = None if val is None else number(inner, key, val, POSITIVE_INT)
        elif key in ("max_p", "weight"):
            out[key] = number(inner, key, val, FRACTION)
        elif key in ("alpha", "beta"):
            out[key] = number(inner, key, val, NON_NEGATIVE)
        elif key.endswith("_kb"):
            kb = number(inner, key, val, NON_NEGATIVE if key == "k_kb" else POSITIVE)
            out[key[:-3] + "_bytes"] = scaled(inner, key, kb, units.bytes_per_kb)
        elif key.endswith("_ms"):
            out[key[:-3] + "_s"] = number(inner, key, val, POSITIVE) / 1000.0
            if key == "tupdate_ms" and out["tupdate_s"] < MIN_TIMER_INTERVAL_S:
                raise inner.field_error(key, f"expected at least {MIN_TIMER_INTERVAL_S * 1e3:g} ms "
                                             f"between updates of the drop probability (a timer "
                                             f"event each while the queue is busy), got {show(val)}")
    if name == "red" and not out["min_bytes"] < out["max_bytes"]:
        raise inner.field_error("max_kb", f"expected a number > min_kb ({show(block['min_kb'])}), "
                                          f"got {show(block['max_kb'])}")
    threshold = {"red": "min_kb", "step": "k_kb"}.get(name)
    if threshold is not None and not out[threshold[:-3] + "_bytes"] < buffer_bytes:
        raise inner.field_error(threshold, f"expected a number < the link's buffer_kb "
                                           f"({show(buffer_kb)}): the queue never reaches it, got "
                                           f"{show(block[threshold])}")
    return out


def _rate_floor(where: Where, name: str, rate: float, bits_per_mbit: float, packet_bytes: int,
                given) -> None:
    """A link rate (`rate_mbps` or a `rate_schedule` entry, `rate` Mbps as read from `given`)
    transmits a packet of `packet_bytes` (the topology's largest) within MAX_TIME_S
    (topologies/bounds.py, "Link rates")."""
    floor_bps = min_rate_bps(packet_bytes)
    if not rate * bits_per_mbit >= floor_bps:
        raise where.field_error(name, f"expected at least {floor_bps / bits_per_mbit:g} (one "
                                      f"{packet_bytes}-byte packet within {MAX_TIME_S:g} s, the "
                                      f"longest a run may simulate), got {show(given)}")


def _schedule(where: Where, item: dict, name: str, rule: Rule, factor: float,
              packet_bytes: int = 0) -> tuple:
    """``[[t_s, value], ...]`` (times >= 0, strictly increasing) -> ((t_s, value * factor), ...);
    with `packet_bytes`, values are rates, at least what transmits such a packet in MAX_TIME_S."""
    if name not in item:
        return ()
    pairs = as_list(where, name, item[name], "a list of [time_s, value] pairs")
    out: list[tuple[float, float]] = []
    for i, entry in enumerate(pairs):
        label = f"{name}[{i}]"
        if not isinstance(entry, list) or len(entry) != 2:
            got = (f"a list of {len(entry)} item{'' if len(entry) == 1 else 's'}"
                   if isinstance(entry, list) else show(entry))
            raise where.field_error(label, f"expected a [time_s, value] pair, got {got}")
        at, of = f"{label}[0]", f"{label}[1]"          # the pair's time, its value
        t_s = float(number(where, at, entry[0], NON_NEGATIVE))
        problem = time_problem(t_s)              # topologies/bounds.py
        if problem:
            raise where.field_error(at, f"{problem}, got {show(entry[0])}")
        value = number(where, of, entry[1], rule)
        problem = time_problem(value, unit="ms") if name == "delay_schedule" else None
        if problem:
            raise where.field_error(of, f"{problem}, got {show(entry[1])}")
        if out and t_s <= out[-1][0]:
            raise where.field_error(at, f"times must increase: {seconds(t_s)} s after "
                                        f"{seconds(out[-1][0])} s")
        if packet_bytes:
            _rate_floor(where, of, value, factor, packet_bytes, entry[1])
        out.append((t_s, float(scaled(where, of, value, factor))))
    return tuple(out)


_NUMBERS = frozenset((int, float))     # (exact types: a bool is not a number here)

# the largest rate and buffer (topologies/bounds.py: every number of summary.json stays within
# its readers' magnitude); a value below the minimum keeps the plain message
_RATE = Rule("a positive number", 0, False, maximum=MAX_RATE_MBPS,
             above=f"at most {MAX_RATE_MBPS:g} (1e18 bit/s)")
_BUFFER = Rule("a number >= 0", 0, True, maximum=MAX_BUFFER_KB,
               above=f"at most {MAX_BUFFER_KB:g} (an exabyte)")
_FIELDS = Fields(LINK_FIELDS, LINK_REQUIRED)


def _link(where: Where, item: dict, kinds: dict, units: UnitSystem, duplex: str,
          known: dict, packet_bytes: int) -> LinkSpec:
    """The LinkSpec of links[i]. `known` holds the converted rate, delay and buffer of the
    (rate_mbps, delay_ms, buffer_kb) already read, by value and type (links of a large network
    share a few): those are not checked and converted again (they passed; zeros of floats,
    whose sign counts, always are). A link of the required fields only (most of a large
    network's) has nothing optional to read: the defaults, without the readers that give them.
    `packet_bytes` is the topology's largest packet: the slowest rate transmits it in MAX_TIME_S."""
    optional = item.keys() != _FIELDS.needed
    if optional:
        _FIELDS.check(where, item)
    ends = _ends(where, item["ends"], kinds)
    rate, delay, buffer = item["rate_mbps"], item["delay_ms"], item["buffer_kb"]
    key = (type(rate), rate, type(delay), delay, type(buffer), buffer)
    cacheable = key[0] in _NUMBERS and key[2] in _NUMBERS and key[4] in _NUMBERS and \
        bool(rate and delay and buffer)
    converted = known.get(key) if cacheable else None
    if converted is None:
        rate = number(where, "rate_mbps", rate, _RATE)
        _rate_floor(where, "rate_mbps", rate, units.bits_per_mbit, packet_bytes, item["rate_mbps"])
        delay = number(where, "delay_ms", delay, NON_NEGATIVE)
        buffer = number(where, "buffer_kb", buffer, _BUFFER)
        buffer_bytes = round(scaled(where, "buffer_kb", buffer, units.bytes_per_kb))
    else:
        rate_bps, delay_s, buffer_bytes = converted
    cost = _cost_ms(where, item)
    link_duplex = choice(where, "duplex", item.get("duplex", duplex), DUPLEX_MODES) \
        if optional else duplex           # (the file's, which `read_links` is given checked)
    if converted is None:       # (in this order: the first problem of a link is reported)
        rate_bps = float(scaled(where, "rate_mbps", rate, units.bits_per_mbit))
        delay_s = delay / 1000.0
        if cacheable:
            known[key] = (rate_bps, delay_s, buffer_bytes)
    if not optional:
        return LinkSpec(id=item["id"], ends=ends, rate_bps=rate_bps, delay_s=delay_s,
                        buffer_bytes=buffer_bytes, duplex=link_duplex)
    impairments = read_impairments(where, item, ends, link_duplex)
    rate_schedule = _schedule(where, item, "rate_schedule", _RATE, units.bits_per_mbit,
                              packet_bytes)
    delay_schedule = _schedule(where, item, "delay_schedule", NON_NEGATIVE, 1e-3)
    # an entry at time 0 is the link's value from the start: the link's rate or delay, so that
    # everything made from them (the sojourn histogram's resolution, routing costs, the
    # analytic models, summary.json) sees the value the link has
    if rate_schedule and rate_schedule[0][0] == 0.0:
        rate_bps, rate_schedule = rate_schedule[0][1], rate_schedule[1:]
    if delay_schedule and delay_schedule[0][0] == 0.0:
        delay_s, delay_schedule = delay_schedule[0][1], delay_schedule[1:]
    return LinkSpec(
        id=item["id"],
        ends=ends,
        rate_bps=rate_bps,
        delay_s=delay_s,
        buffer_bytes=buffer_bytes,
        duplex=link_duplex,
        cost_s=None if cost is None else cost / 1000.0,
        impairments=impairments,
        rate_schedule=rate_schedule,
        delay_schedule=delay_schedule,
        queue=_queue(where, item.get("queue"), units, buffer_bytes, item["buffer_kb"]),
    )


def read_links(top: Where, data: dict, kinds: dict, units: UnitSystem, duplex: str,
               packet_bytes: int = DEFAULT_DATA_PACKET_BYTES) -> list:
    """The LinkSpecs of the file's links; `duplex` is the file's (checked) default, and
    `packet_bytes` its largest packet (the slowest rate transmits it within MAX_TIME_S)."""
    known: dict = {}
    return [_link(where, item, kinds, units, duplex, known, packet_bytes)
            for where, item in entries(top, data, "links", "link")]


