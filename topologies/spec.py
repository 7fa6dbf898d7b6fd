"""The validated, unit-converted description of a network.

`topologies.loader` turns a JSON topology file into a `TopologySpec`; `topologies.build` turns a
`TopologySpec` into simulation objects. Everything in a spec is already in base units (bits per
second, bytes, seconds); the `UnitSystem` is kept only so that results can be reported in the units
the topology was written in.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from itertools import chain, repeat
from json.encoder import encode_basestring_ascii
from math import isfinite
from operator import attrgetter, is_


@dataclass(frozen=True)
class UnitSystem:
    """How the topology's Mbps, KB and MB map to bits and bytes."""

    name: str
    bits_per_mbit: int
    bytes_per_kb: int
    bytes_per_mb: int

    def to_dict(self) -> dict:
        return {"system": self.name, "bits_per_mbit": self.bits_per_mbit,
                "bytes_per_kb": self.bytes_per_kb, "bytes_per_mb": self.bytes_per_mb}


SI = UnitSystem("si", 10**6, 1000, 10**6)
BINARY = UnitSystem("binary", 2**20, 1024, 2**20)
UNIT_SYSTEMS = {"si": SI, "binary": BINARY}

ROUTING_PROTOCOLS = ("static", "bellman-ford")
LINK_ACTIONS = ("down", "up")

# Defaults of the model, in one place (documented in docs/model.md).
DEFAULT_UNITS = "si"
DEFAULT_DUPLEX = "full"
DEFAULT_DATA_PACKET_BYTES = 1024
DEFAULT_ACK_PACKET_BYTES = 64
DEFAULT_ROUTING_PACKET_BYTES = 64
DEFAULT_SEED = 1
DEFAULT_ALGORITHM = "reno"
DEFAULT_UPDATE_INTERVAL_S = 5.0     # Bellman-Ford periodic update rounds
DEFAULT_SETTLE_S = 0.15             # hold-down before a new forwarding table is used


@dataclass(frozen=True)
class TransportSpec:
    """Transport (not congestion-control) settings of a flow; see docs/model.md.

    `stack` ("classic" or "linux", flows/linux_stack.py) gives the defaults of the fields left
    None: the numbers below (classic RFC 6298 / RFC 5681, Linux include/net/tcp.h), and the
    mechanisms (None: the stack's choice). `defaulted` names the numeric fields that took their
    stack's default, so that `overridden` can move them to another stack's."""

    initial_cwnd_pkts: float | None = None         # classic 1, linux 10 (TCP_INIT_CWND)
    initial_ssthresh_pkts: float | None = None     # None: arbitrarily high (RFC 5681)
    initial_rto_s: float | None = None             # 1 s: RFC 6298 (2.1), TCP_TIMEOUT_INIT
    min_rto_s: float | None = None                 # classic 1 s RFC 6298 (2.4), linux 200 ms
    max_rto_s: float | None = None                 # classic 60 s RFC 6298 (2.5), linux 120 s
    dupack_threshold: int = 3                      # RFC 5681 fast retransmit
    stack: str = "classic"                         # flows/linux_stack.py STACKS
    rwnd_kb: float | None = None                   # receive window, kB (None: the stack's)
    sack: bool | None = None                       # SACK recovery for every algorithm
    rack: bool | None = None                       # RFC 8985 RACK loss detection
    tlp: bool | None = None                        # RFC 8985 tail loss probes
    prr: bool | None = None                        # RFC 6937 proportional rate reduction
    undo: bool | None = None                       # undo of spurious retransmissions
    integer_window: bool | None = None             # send while in flight < floor(cwnd)
    linux_rto: bool | None = None                  # Linux tcp_rtt_estimator / tcp_set_rto
    linux_acks: bool | None = None                 # Linux delayed ACKs (quick-ACK, every 2nd)
    defaulted: tuple = field(default=(), init=False, compare=False, repr=False)

    def __post_init__(self):
        from flows.linux_stack import numeric_defaults
        defaults = numeric_defaults(self.stack)
        taken = []
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
                taken.append(name)
        object.__setattr__(self, "defaulted", tuple(taken))

    def overridden(self, **changes) -> TransportSpec:
        """This spec with `changes`; the numeric fields that took this spec's stack defaults
        take the defaults of the (possibly new) stack unless `changes` sets them."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.init}
        for name in self.defaulted:
            values[name] = None
        values.update(changes)
        return TransportSpec(**values)


TRANSPORT_FIELDS = tuple(f.name for f in fields(TransportSpec) if f.init)
# the fields the Linux stack added (None: the stack's choice)
STACK_FIELDS = ("rwnd_kb", "sack", "rack", "tlp", "prr", "undo", "integer_window", "linux_rto",
                "linux_acks")


@dataclass(frozen=True)
class PacketSizes:
    """The packet sizes of a run in bytes, headers included: data, ACK and routing packets."""

    data_bytes: int = DEFAULT_DATA_PACKET_BYTES
    ack_bytes: int = DEFAULT_ACK_PACKET_BYTES
    routing_bytes: int = DEFAULT_ROUTING_PACKET_BYTES


@dataclass(frozen=True)
class GilbertElliottSpec:
    """Two-state burst-loss model: a Markov chain stepped once per packet."""

    p_good_to_bad: float         # per-packet probability of moving from good to bad
    p_bad_to_good: float         # per-packet probability of moving from bad to good
    loss_good: float = 0.0       # loss probability in the good state
    loss_bad: float = 1.0        # loss probability in the bad state


@dataclass(frozen=True)
class ImpairmentSpec:
    """What happens to packets of one link direction after transmission (see docs/model.md)."""

    loss_rate: float = 0.0                        # independent per-packet loss
    loss_model: GilbertElliottSpec | None = None   # burst loss (instead of loss_rate)
    duplicate_rate: float = 0.0                   # probability a packet arrives twice
    reorder_rate: float = 0.0                     # probability a packet is held back ...
    reorder_delay_s: float = 0.0                  # ... by this much extra delay
    jitter_s: float = 0.0                         # extra delay uniform in [0, jitter_s]
    jitter_reorder: bool = False                  # may jitter reorder packets? (default: no)
    jitter_mode: str = "added"                    # "added": [0, jitter] on top; "netem": delay +- jitter

    @property
    def active(self) -> bool:
        return bool(self.loss_rate or self.loss_model or self.duplicate_rate or self.reorder_rate
                    or self.jitter_s)


NO_IMPAIRMENT = ImpairmentSpec()


@dataclass(frozen=True)
class LinkSpec:
    """One link as loaded (the topology's units converted): rate in bit/s, delay and static
    routing cost in s, buffer in bytes; its impairments per direction, its queue discipline and
    its schedules of rate and delay changes."""

    id: str
    ends: tuple          # (node id, node id); direction 0 is ends[0] -> ends[1]
    rate_bps: float
    delay_s: float
    buffer_bytes: int
    duplex: str          # "full" or "half"
    cost_s: float | None = None   # static routing cost; None: the propagation delay
    impairments: tuple = (NO_IMPAIRMENT, NO_IMPAIRMENT)   # per direction (ends[0]->ends[1], back)
    queue: dict | None = field(default=None, hash=False)   # discipline (load_links._queue); None: drop-tail
    rate_schedule: tuple = ()    # ((t_s, rate_bps), ...): rate changes, sorted by time
    delay_schedule: tuple = ()   # ((t_s, delay_s), ...): propagation delay changes


@dataclass(frozen=True)
class FlowSpec:
    """One flow as loaded: its ends, data in bytes (None: endless), start in s, algorithm with its
    parameters and transport; a cbr/onoff source's rate in bit/s and on/off periods in s."""

    id: str
    src: str
    dst: str
    data_bytes: int | None   # None: runs until the end of the simulation
    start_s: float
    algorithm: str
    params: dict                # algorithm parameters, defaults already merged in
    transport: TransportSpec
    ecn: bool = False           # RFC 3168 ECN (docs/model.md, "ECN, DCTCP and delayed ACKs")
    delayed_ack: tuple | None = None   # (every, timeout_s) for delayed ACKs; None: off
    kind: str = "bulk"          # "bulk" (reliable transfer), "cbr" or "onoff" (flows/cbr.py)
    rate_bps: float | None = None   # cbr/onoff: sending rate (while on)
    on_s: float | None = None       # onoff: (mean) on period
    off_s: float | None = None      # onoff: (mean) off period
    periods: str = "fixed"             # onoff: "fixed" or "exponential" periods


@dataclass(frozen=True)
class RoutingSpec:
    """The routing of a run: static or Bellman-Ford, the distance-vector update interval and
    settling time in s, and ECMP (None, per flow or per packet)."""

    protocol: str = "static"
    update_interval_s: float = DEFAULT_UPDATE_INTERVAL_S
    settle_s: float = DEFAULT_SETTLE_S
    ecmp: str | None = None         # None, "flow" or "packet" (routing/ecmp.py)


@dataclass(frozen=True)
class LinkEventSpec:
    """A scheduled change of a link: at `at_s` the link goes "down" or comes back "up"."""

    at_s: float
    link: str
    action: str


@dataclass(frozen=True)
class WorkloadSpec:
    """Short bulk flows opened at Poisson arrivals between random hosts (netsim/workloads.py)."""

    id: str
    src: tuple                  # host ids the sender is drawn from
    dst: tuple                  # host ids the receiver is drawn from (never the sender)
    arrivals_per_s: float       # Poisson rate of flow arrivals
    sizes: tuple                # CDF ((bytes, cumulative probability), ...), last probability 1
    sizes_name: str             # the shipped distribution's name, or "cdf"
    algorithm: str
    params: dict
    transport: TransportSpec
    start_s: float = 0.0
    stop_s: float | None = None   # None: until the end of the run
    ecn: bool = False                # RFC 3168 ECN on its flows (dctcp: always)


@dataclass
class TopologySpec:
    """A whole topology as loaded and checked (topologies/loader.py), in bit/s, bytes and s (the
    file's units converted, `units` says which they were): nodes, links, flows, workloads, link
    events, routing, duration and seed."""

    name: str
    description: str
    units: UnitSystem
    packet_sizes: PacketSizes
    routing: RoutingSpec
    hosts: list
    routers: list
    links: list                 # of LinkSpec, in file order
    flows: list                 # of FlowSpec, in file order
    duration_s: float | None
    seed: int
    source: str = "<dict>"      # file path, for messages
    algorithms: dict = field(default_factory=dict)   # the file's per-algorithm defaults
    events: list = field(default_factory=list)       # of LinkEventSpec, sorted by time
    workloads: list = field(default_factory=list)    # of WorkloadSpec, in file order

    def link(self, link_id: str) -> LinkSpec:
        return _by_id(self, "links", link_id)

    def flow(self, flow_id: str) -> FlowSpec:
        return _by_id(self, "flows", flow_id)


def _by_id(spec: TopologySpec, name: str, ident: str):
    """The entry of `spec`'s list `name` ("links", "flows") with id `ident`, through an index
    made once per list (`--check` looks up a link per hop of every flow's paths: a scan of the
    links each time cost 211 s on a k = 48 fat tree), remade if the list was changed since."""
    entries = getattr(spec, name)
    index = spec.__dict__.get("_index_" + name)
    if index is None or index[0] is not entries or index[1] != len(entries):
        index = (entries, len(entries), {entry.id: i for i, entry in enumerate(entries)})
        spec.__dict__["_index_" + name] = index
    i = index[2].get(ident)
    if i is None or entries[i].id != ident:
        for entry in entries:          # (an entry replaced in place: look as before)
            if entry.id == ident:
                return entry
        raise KeyError(ident)
    return entries[i]


_FIELDS: dict = {}       # dataclass -> (names of its fields, a getter of their values as a tuple)
_SCALARS = frozenset((str, int, float, bool, type(None)))


def _fields_of(value):
    names = tuple(f.name for f in fields(value))
    getter = attrgetter(*names) if len(names) > 1 else (lambda v: tuple(getattr(v, n) for n in names))
    return names, getter


def plain_data(value):
    """`value` with every dataclass instance turned into a dict of its fields, recursively, as
    `dataclasses.asdict` gives it (lists, tuples and dicts are rebuilt; anything else is shared,
    not deep-copied): the spec as JSON-like data, in about a third of asdict's time."""
    return _plain(value, None)


def _plain(value, converted: dict | None):
    """`plain_data`; with a dict `converted` (id -> dict), a dataclass instance met again (the
    links' shared NO_IMPAIRMENT, the flows' shared TransportSpec) gives the same dict again, for
    data that is only serialized."""
    cls = type(value)
    described = _FIELDS.get(cls)
    if described is None and is_dataclass(value) and not isinstance(value, type):
        described = _FIELDS[cls] = _fields_of(value)
    if described is not None:
        if converted is not None and id(value) in converted:
            return converted[id(value)]
        names, getter = described
        out = {name: item if type(item) in _SCALARS else _plain(item, converted)
               for name, item in zip(names, getter(value))}
        if converted is not None:
            converted[id(value)] = out
        return out
    if cls is list:
        return [item if type(item) in _SCALARS else _plain(item, converted) for item in value]
    if cls is tuple:
        return tuple(item if type(item) in _SCALARS else _plain(item, converted) for item in value)
    if cls is dict:
        return {_plain(key, converted): item if type(item) in _SCALARS else _plain(item, converted)
                for key, item in value.items()}
    if isinstance(value, (list, tuple, dict)):      # subclasses (e.g. named tuples): asdict's way
        return asdict_value(value)
    return value


def asdict_value(value):
    """A container of a type `plain_data` does not rebuild itself, converted as asdict does."""
    from dataclasses import asdict

    @dataclass
    class _Box:
        value: object
    return asdict(_Box(value))["value"]


def resolved_config(spec: TopologySpec, *, duration_s: float | None, seed: int,
                    interval_s: float) -> dict:
    """Everything that determines a run's results, as plain JSON data: the validated topology
    (base units, defaults filled in, `--algorithm` applied) and the run settings. The file's path
    (`source`) and its `description` are left out: the same network read from another place, or
    described in other words, is the same run. The topology's `duration_s` is the run's
    (`_with_duration`): a duration given on the command line is the same as one in the file."""
    return _resolved_config(spec, duration_s, seed, interval_s, None)


def _with_duration(spec: TopologySpec, duration_s: float | None) -> TopologySpec:
    """`spec` with the run's duration as its own, so that a run of a file whose `duration_s` is
    null given `--duration 2` is the run of the same file saying 2 (a sweep's, whose points
    carry the sweep's duration): one configuration, one digest."""
    if spec.duration_s == duration_s:
        return spec
    from dataclasses import replace
    return replace(spec, duration_s=duration_s)


def _resolved_config(spec: TopologySpec, duration_s: float | None, seed: int, interval_s: float,
                     converted: dict | None) -> dict:
    topology = _plain(_with_duration(spec, duration_s), converted)
    topology.pop("source", None)
    topology.pop("description", None)      # free text: fixing a typo re-runs nothing
    # fields added later, at their defaults, leave the digests of earlier runs unchanged
    if topology["routing"].get("ecmp") is None:
        topology["routing"].pop("ecmp", None)
    for workload in topology.get("workloads") or ():
        if not workload.get("ecn"):
            workload.pop("ecn", None)
    for link in topology.get("links") or ():
        for impairment in link.get("impairments") or ():
            if impairment.get("jitter_mode") == "added":     # (dicts may be shared: pop once)
                del impairment["jitter_mode"]
    for entry in [*(topology.get("flows") or ()), *(topology.get("workloads") or ())]:
        if isinstance(entry.get("transport"), dict):
            _drop_default_stack_fields(entry["transport"])
    return {"topology": topology, "duration_s": duration_s, "seed": seed, "interval_s": interval_s}


def _drop_default_stack_fields(transport: dict) -> None:
    """The transport fields added with the Linux stack, left out at their classic defaults (and
    the bookkeeping `defaulted`), so that earlier runs keep their digests."""
    transport.pop("defaulted", None)
    if transport.get("stack") == "classic":
        del transport["stack"]
    for name in STACK_FIELDS:
        if name in transport and transport[name] is None:
            del transport[name]


def config_digest(spec: TopologySpec, *, duration_s: float | None, seed: int,
                  interval_s: float) -> str:
    """SHA-256 (hex) of `resolved_config`, serialized canonically (sorted keys, no spaces).

    Two runs with the same digest simulate the same thing and give identical results; recorded in
    summary.json as ``config_digest`` and used by sweeps to key resumed rows."""
    import hashlib
    digest = hashlib.sha256()
    pieces = config_pieces(spec, duration_s, seed, interval_s)   # that text, without the dicts
    for start in range(0, len(pieces), _PIECES_PER_UPDATE):
        digest.update("".join(pieces[start:start + _PIECES_PER_UPDATE]).encode("utf-8"))
    return digest.hexdigest()


# `config_digest` hashes the text a part at a time (of about 100 kB for a network's links): the
# megabytes of a large network's text, and of its encoding, are never made at once (each fresh
# megabyte of memory costs its page faults; the parts reuse the same memory)
_PIECES_PER_UPDATE = 2048


# -- the digest's text, written directly ---------------------------------------------------------
# The text is by definition ``json.dumps(resolved_config(...), sort_keys=True, separators=(",",
# ":"), default=repr, allow_nan=True)``. `config_text` writes that same text without building
# `resolved_config`'s dicts first: each dataclass of the spec is written straight from its fields
# (in name order, leaving out what `resolved_config` leaves out), a dataclass instance met again
# (the links' shared impairments, the flows' shared transport) is the text written the first
# time, and what holds no dataclass is written as the json module writes it with those options.
# A list is written a column at a time (`_Writer.form`): the links' ids, their rates, ... each
# converted by one C function mapped over the column, a column of one text throughout (a field
# every link leaves at its default) folded into the constant text between the others, and the
# whole list then the constant texts and the columns, interleaved, for one join (20 000 links:
# 0.02 s, where a %-format per link of its fields' texts took 0.035 s, and writing the links one
# at a time 0.12 s); tests/test_config_digest.py checks the two texts equal.

_INF = float("inf")


def _leave_out_transport(name: str, value) -> bool:
    return name == "defaulted" or (name == "stack" and value == "classic") or \
        (name in STACK_FIELDS and value is None)


# What `resolved_config` leaves out of a dataclass's fields (so that earlier runs keep their
# digests), by class: (field name, value) -> left out. Each of these classes appears only where
# `_resolved_config` applies its rule (the topology, its routing, its workloads, its links'
# impairments, its flows' and workloads' transports).
_LEFT_OUT = {
    TopologySpec: lambda name, value: name in ("source", "description"),
    RoutingSpec: lambda name, value: name == "ecmp" and value is None,
    WorkloadSpec: lambda name, value: name == "ecn" and not value,
    ImpairmentSpec: lambda name, value: name == "jitter_mode" and value == "added",
    TransportSpec: _leave_out_transport,
}


def config_text(spec: TopologySpec, duration_s, seed, interval_s) -> str:
    """``json.dumps(resolved_config(spec, ...), sort_keys=True, separators=(",", ":"),
    default=repr, allow_nan=True)``, written directly."""
    return "".join(config_pieces(spec, duration_s, seed, interval_s))


def config_pieces(spec: TopologySpec, duration_s, seed, interval_s) -> list:
    """`config_text` in pieces (strings) to be joined: a large network's are many (a few per
    link), and its text megabytes."""
    writer = _Writer()
    pieces = [f'{{"duration_s":{writer.text(duration_s)},"interval_s":{writer.text(interval_s)},'
              f'"seed":{writer.text(seed)},"topology":']
    spec = _with_duration(spec, duration_s)
    pieces += writer.instance_pieces(spec, type(spec))
    pieces.append("}")
    return pieces


class _Writer:
    """One `config_text`: the texts of dataclass instances by identity (valid while the spec
    is alive, i.e. for this call), field names and getters by class."""

    def __init__(self):
        self.done: dict = {}
        self.classes: dict = {}
        self.dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr,
                                      allow_nan=True).encode      # json.dumps with those options

    def text(self, value) -> str:
        kind = type(value)
        if kind is str:
            return encode_basestring_ascii(value)
        if kind is int:
            return int.__repr__(value)
        if kind is float:                 # as the json module writes floats (allow_nan)
            if value != value:
                return "NaN"
            if value in (_INF, -_INF):
                return "Infinity" if value > 0 else "-Infinity"
            return float.__repr__(value)
        if value is None:
            return "null"
        if kind is bool:
            return "true" if value else "false"
        if kind is list or kind is tuple:
            return "".join(self.list_pieces(value)) if value else "[]"
        if kind is dict:
            if not all(type(key) is str for key in value):
                return self.dumps(plain_data(value))
            return "{" + ",".join([encode_basestring_ascii(key) + ":" + self.text(item)
                                   for key, item in sorted(value.items())]) + "}"
        text = self.done.get(id(value))         # a dataclass instance met again
        if text is None:
            text = self.done[id(value)] = "".join(self.instance_pieces(value, kind))
        return text

    def list_pieces(self, values):
        """The text of `values` (a non-empty list or tuple), in pieces to be joined: their
        `form` written out once per item, between "[", "," and "]", its constant segments and
        its columns interleaved."""
        segments, columns = self.form(values)
        if not columns:                       # one text throughout
            return ("[", ",".join(repeat(segments[0], len(values))), "]")
        sources = [chain(("[",), repeat(",", len(values) - 1)), repeat(segments[0])]
        for column, segment in zip(columns, segments[1:]):
            sources += (column, repeat(segment))
        return chain(chain.from_iterable(zip(*sources)), ("]",))     # (item by item)

    def form(self, values) -> tuple:
        """The texts of `values` (a non-empty list or tuple) as (segments, columns): the text of
        item i is segments[0] + columns[0][i] + segments[1] + ... + columns[-1][i] +
        segments[-1] (one segment more than columns, each column a list of texts). Made a
        column at a time where the items are of one kind: the same object every time (a
        default: no column, one segment, its text), strings, integers or finite floats (one C
        function mapped over them), lists of one length (the forms of their positions, between
        "[", "," and "]"), or instances of one dataclass whose fields all stay (the forms of
        their fields, after their keys); else one by one."""
        first = values[0]
        if len(values) == 1 or all(map(is_, values, repeat(first))):
            return [self.text(first)], []
        kinds = set(map(type, values))
        if len(kinds) == 1:
            kind = type(first)
            if kind is str:
                return ["", ""], [[*map(encode_basestring_ascii, values)]]
            if kind is int:
                return ["", ""], [[*map(int.__repr__, values)]]
            if kind is float and all(map(isfinite, values)):
                return ["", ""], [[*map(float.__repr__, values)]]
            if kind is list or kind is tuple:
                size = len(first)
                if size and all(map(size.__eq__, map(len, values))):
                    return self.joined(zip(*values), ["["] + [","] * (size - 1), "]")
            elif kind is not dict:
                described = self.classes.get(kind)
                if described is None and is_dataclass(first) and not isinstance(first, type):
                    described = self.classes[kind] = _described(first)
                if described is not None and described[3] is None and described[1]:
                    keys = described[1]
                    leads = ["{" + keys[0], *["," + key for key in keys[1:]]]
                    return self.joined(zip(*map(described[2], values)), leads, "}")
        return ["", ""], [[self.text(item) for item in values]]

    def joined(self, parts, leads: list, end: str) -> tuple:
        """The `form` of items made of parts (a column of values per part, `parts`): each
        part's form after its lead text (`leads`), `end` after the last. A part of one text
        throughout (a field left at its default) becomes constant text."""
        segments = [""]
        columns: list = []
        for lead, part in zip(leads, parts):
            part_segments, part_columns = self.form(part)
            segments[-1] += lead + part_segments[0]
            segments += part_segments[1:]
            columns += part_columns
        segments[-1] += end
        return segments, columns

    def instance_pieces(self, value, kind) -> list:
        """The text of a dataclass instance (or, of any other object, json.dumps's), in pieces
        to be joined; those of a list field among them, not joined first (a large network's
        links are most of the text, and each copy of megabytes costs)."""
        described = self.classes.get(kind)
        if described is None:
            if not is_dataclass(value) or isinstance(value, type):
                return [self.dumps(plain_data(value))]
            described = self.classes[kind] = _described(value)
        names, keys, getter, left_out = described
        pieces = ["{"]
        separator = ""
        text = self.text
        for name, key, item in zip(names, keys, getter(value)):
            if left_out is not None and left_out(name, item):
                continue
            item_kind = type(item)
            if item_kind is str:
                pieces.append(separator + key + encode_basestring_ascii(item))
            elif item_kind is int:
                pieces.append(separator + key + int.__repr__(item))
            elif item is None:
                pieces.append(separator + key + "null")
            elif item_kind is tuple or item_kind is list:
                if item:
                    pieces.append(separator + key)
                    pieces += self.list_pieces(item)
                else:
                    pieces.append(separator + key + "[]")
            else:
                pieces.append(separator + key + text(item))
            separator = ","
        pieces.append("}")
        return pieces


def _described(value) -> tuple:
    """(field names in name order, their JSON keys, a getter of their values in that order,
    the class's rule of what is left out or None)."""
    names = sorted(f.name for f in fields(value))
    getter = attrgetter(*names) if len(names) > 1 else (lambda v: tuple(getattr(v, n) for n in names))
    keys = tuple(encode_basestring_ascii(name) + ":" for name in names)
    return tuple(names), keys, getter, _LEFT_OUT.get(type(value))
