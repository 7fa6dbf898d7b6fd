"""``initializer.py convert OLD.json [-o NEW.json]``: the 2015 CS/EE 143 simulator's topology
files in this project's format (docs/topology-format.md, "2015 files").

The 2015 files are jsonpickle dumps of that program's objects (``py/object`` class paths with
every instance attribute; /work/shared/legacy-2015-format.md). They are read here as plain JSON
data: ``json`` parses them and the dicts are walked; nothing is ever decoded or imported, and
any jsonpickle tag other than ``py/object`` (a class name, read as a string) and ``py/set`` is
refused — ``py/reduce`` and its relatives would run code under jsonpickle, ``py/id`` references
would need guessing. Every problem is a `LegacyError`: one line naming the file and the entry.

Units: the old files hold bits, bits/s and seconds multiplied out with binary prefixes; the
converted topology uses binary units (10485760 bit/s is 10 "Mbps"), half-duplex links,
1024 B data and 64 B ACK packets, Bellman-Ford routing (5 s period, 0.15 s settling) when there
are routers and static routing otherwise, as the 2015 simulator did.
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from topologies.validation import MAX_FILE_BYTES, InputError, one_line, parse_json, show

MEGA_BIT = 2 ** 20               # binary "M" of the 2015 files
KILO_BYTE_BITS = 8 * 1024
ALLOWED_TAGS = ("py/object", "py/set")
FLOW_CLASSES = {"FlowFast": "fast", "FlowReno": "reno"}
FAST_DEFAULT_RTT_SAMPLES = 40


class LegacyError(InputError):
    """A 2015 file that cannot be converted; one line naming the file and the entry."""


def _number(text: float) -> float | int:
    """`text` as written in a topology: integers without a fraction; 12 significant digits where
    they are the same number (a time of 0.1 s stays 0.1), else the shortest digits that give it
    back exactly (1e7 bit/s in the files' binary Mbps is 9.5367431640625: 9.53674316406 was
    another rate), so that the topology simulates exactly what the 2015 file says."""
    short = float(f"{text:.12g}")
    value = short if short == text else float(text)
    return int(value) if value.is_integer() else value


class _Reader:
    def __init__(self, label: str):
        self.label = label

    def error(self, where: str, message: str) -> LegacyError:
        return LegacyError(f"{self.label}: {where}: {message}" if where else f"{self.label}: {message}")

    def check_tags(self, data, where: str = "") -> None:
        """Refuse every jsonpickle tag but py/object and py/set (iteratively, in document order)."""
        stack = [(data, where)]
        while stack:
            value, path = stack.pop()
            if isinstance(value, dict):
                for key, item in value.items():
                    if key.startswith("py/") and key not in ALLOWED_TAGS:
                        what = ("an object reference (shared or cyclic objects are not supported)"
                                if key in ("py/id", "py/ref") else "a jsonpickle tag that would "
                                "run or import code when decoded")
                        raise self.error(path or "top level", f'"{key}" is {what}; refused '
                                         f"(netsim reads these files as plain data)")
                    stack.append((item, f"{path}.{key}" if path else key))
            elif isinstance(value, list):
                stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))

    def obj(self, where: str, value, cls: str | tuple) -> dict:
        classes = (cls,) if isinstance(cls, str) else cls
        if not isinstance(value, dict):
            raise self.error(where, f"expected a {' or '.join(classes)} object, got {show(value)}")
        tag = value.get("py/object")
        if not isinstance(tag, str) or tag.rsplit(".", 2)[-2:] not in [c.split(".") for c in classes]:
            raise self.error(where, f"expected a {' or '.join(classes)} object "
                             f'("py/object" ending in it), got {show(tag)}')
        return value

    def field(self, where: str, value: dict, key: str):
        if key not in value:
            raise self.error(where, f'missing field "{key}"')
        return value[key]

    def string(self, where: str, value: dict, key: str) -> str:
        item = self.field(where, value, key)
        if not isinstance(item, str) or not item:
            raise self.error(where, f'field "{key}": expected a name, got {show(item)}')
        return item

    def positive(self, where: str, value: dict, key: str, *, zero: bool = False) -> float:
        item = self.field(where, value, key)
        if (isinstance(item, bool) or not isinstance(item, (int, float)) or not math.isfinite(item)
                or item < 0 or (item == 0 and not zero)):
            raise self.error(where, f'field "{key}": expected a {"non-negative" if zero else "positive"} '
                             f"number, got {show(item)}")
        return float(item)

    def entries(self, data: dict, key: str, *, nullable: bool = False) -> list:
        value = self.field("top level", data, key)
        if value is None and nullable:
            return []
        if isinstance(value, dict) and set(value) == {"py/set"}:
            value = value["py/set"]
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, got {show(value)}")
        return value


def convert(data, *, label: str = "<data>", name: str = "converted") -> dict:
    """The topology dict (this project's format) of the parsed 2015 file `data`."""
    r = _Reader(label)
    r.check_tags(data)
    refuse_netsim_file(data, label)
    top = r.obj("top level", data, "network_topology.NetworkTopology")
    hosts = [r.string(f"hosts[{i}]", r.obj(f"hosts[{i}]", h, "host.Host"), "address")
             for i, h in enumerate(r.entries(top, "hosts"))]
    routers = [r.string(f"routers[{i}]", r.obj(f"routers[{i}]", h, "router.Router"), "address")
               for i, h in enumerate(r.entries(top, "routers", nullable=True))]
    links = []
    for i, item in enumerate(r.entries(top, "links")):
        where = f"links[{i}]"
        link = r.obj(where, item, "link.Link")
        buffer = r.obj(f"{where}.link_buffer", r.field(where, link, "link_buffer"), "link.LinkBuffer")
        links.append({
            "id": r.string(where, link, "name"),
            "ends": [r.string(where, link, "end_1_addr"), r.string(where, link, "end_2_addr")],
            "rate_mbps": _number(r.positive(where, link, "capacity_bps") / MEGA_BIT),
            "delay_ms": _number(r.positive(where, link, "static_delay_sec", zero=True) * 1e3),
            "buffer_kb": _number(r.positive(f"{where}.link_buffer", buffer, "max_buffer_size_bits")
                                 / KILO_BYTE_BITS)})
    flows, fast_params = [], []
    for i, item in enumerate(r.entries(top, "flows")):
        where = f"flows[{i}]"
        flow = r.obj(where, item, ("flow.FlowFast", "flow.FlowReno", "flow.FlowDummy"))
        kind = flow["py/object"].rsplit(".", 1)[-1]
        if kind not in FLOW_CLASSES:
            raise r.error(where, f"{kind} (a fixed window of one packet) has no netsim "
                          f"algorithm; change the flow to FlowReno or FlowFast")
        entry: dict = {"id": r.string(where, flow, "flow_id"),
                       "src": r.string(where, flow, "source_addr"),
                       "dst": r.string(where, flow, "dest_addr"),
                       "data_mb": _number(r.positive(where, flow, "data_size_bits") / 8 / MEGA_BIT),
                       "start_s": _number(r.positive(where, flow, "start_time_sec", zero=True)),
                       "algorithm": FLOW_CLASSES[kind]}
        if kind == "FlowFast":
            params = {"alpha": _number(r.positive(where, flow, "alpha")),
                      "gamma": _number(r.positive(where, flow, "gamma"))}
            samples = flow.get("num_packets_ave_for_rtt", FAST_DEFAULT_RTT_SAMPLES)
            if samples is not None and samples != FAST_DEFAULT_RTT_SAMPLES:
                params["rtt_samples"] = _number(r.positive(where, flow, "num_packets_ave_for_rtt"))
            fast_params.append((entry, params))
        ss_thresh = flow.get("ss_thresh")
        if ss_thresh is not None and kind == "FlowReno":
            entry["transport"] = {"initial_ssthresh_pkts": _number(
                r.positive(where, flow, "ss_thresh"))}
        flows.append(entry)
    out: dict = {"name": name,
           "description": f"Converted from the 2015 CS/EE 143 simulator file {Path(label).name} "
                          f"(python initializer.py convert).",
           "units": "binary", "duplex": "half", "packet_bytes": {"data": 1024, "ack": 64},
           "routing": ({"protocol": "bellman-ford", "update_interval_s": 5, "settle_s": 0.15}
                       if routers else {"protocol": "static"})}
    shared = {json.dumps(p, sort_keys=True) for _, p in fast_params}
    if len(shared) == 1:                  # the shipped cases: one setting for every FAST flow
        out["algorithms"] = {"fast": fast_params[0][1]}
    else:
        for entry, params in fast_params:
            entry["params"] = params
    out.update({"seed": 1, "duration_s": None, "hosts": hosts, "routers": routers,
                "links": links, "flows": flows})
    return out


# the 2015 file's fields each field of the converted topology comes from (`convert`): the
# converted lists keep the file's order, so an entry's index is the file's too
LEGACY_FIELDS = {"ends": "end_1_addr, end_2_addr", "rate_mbps": "capacity_bps",
                 "delay_ms": "static_delay_sec", "buffer_kb": "link_buffer.max_buffer_size_bits",
                 "src": "source_addr", "dst": "dest_addr", "data_mb": "data_size_bits",
                 "start_s": "start_time_sec"}


def legacy_field_names(message: str) -> str:
    """A converted topology's error line with the 2015 file's field beside the first field it
    names: 'field "ends" (end_1_addr, end_2_addr in the 2015 file)'."""
    def named(match):
        legacy = LEGACY_FIELDS.get(match[1])
        return match[0] + (f" ({legacy} in the 2015 file)" if legacy else "")
    return re.sub(r'field "([A-Za-z_]+)"', named, message, count=1)


NETSIM_TOPOLOGY_KEYS = ("hosts", "routers", "links", "flows", "workloads")
NETSIM_SWEEP_KEYS = ("parameters", "metrics", "seeds", "plots")


def refuse_netsim_file(data, label: str) -> None:
    """LegacyError when `data` (no jsonpickle "py/object" at its top) is one of netsim's own
    files: a topology (any of its entity lists), even an incomplete one, or a sweep file."""
    if not isinstance(data, dict) or "py/object" in data:
        return
    if "topology" in data and any(key in data for key in NETSIM_SWEEP_KEYS):
        raise LegacyError(f"{label}: a netsim sweep file (no jsonpickle \"py/object\"): nothing "
                          f"to convert; run it with the sweep command (docs/sweeps.md)")
    if any(key in data for key in NETSIM_TOPOLOGY_KEYS):
        raise LegacyError(f"{label}: already a netsim topology (no jsonpickle \"py/object\"): "
                          f"nothing to convert; run it as it is")


def read_legacy(path) -> tuple:
    """(label, parsed data) of a 2015 file: size, UTF-8 and JSON checked; tags are not refused
    here (py/object is how those files name things) but in `convert`."""
    path = Path(path)
    label = one_line(str(path))
    try:
        if not path.is_file():
            raise LegacyError(f"{label}: no such file" if not path.exists() else
                              f"{label}: not a regular file")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise LegacyError(f"{label}: file of {path.stat().st_size} bytes; at most "
                              f"{MAX_FILE_BYTES} are allowed")
        raw = path.read_bytes()
    except OSError as exc:
        raise LegacyError(f"{label}: cannot read file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LegacyError(f"{label}: not valid UTF-8 (byte offset {exc.start})") from None
    return label, parse_json(label, text, error=LegacyError)


def convert_file(source, target=None, force: bool = False) -> dict:
    """Convert the 2015 file `source`; validate the result as a topology; write it to `target`
    (if given; an existing file only with `force`, as `generate -o`). Returns the topology dict.
    Raises LegacyError (one line)."""
    from netsim.output_paths import OutputPathError, check_output_file, write_atomic
    from topologies.loader import TopologyError, load_topology
    if target:                    # never over the input, a device, a link, a results directory
        try:
            check_output_file("-o", target, inputs=[source])
        except OutputPathError as exc:
            raise LegacyError(str(exc)) from None
        if not force and os.path.lexists(target):
            raise LegacyError(f"-o {one_line(str(target))}: exists; pass --force to replace it")
    label, data = read_legacy(source)
    name = Path(target).stem if target else Path(source).stem
    topology = convert(data, label=label, name=name)
    try:
        load_topology(topology, label=label)
    except TopologyError as exc:
        raise LegacyError(f"converted topology is not valid: {legacy_field_names(str(exc))}") \
            from None
    if target:
        try:
            write_atomic(target, dumps(topology))        # whole or not at all
        except OSError as exc:
            raise LegacyError(f"-o {one_line(str(target))}: cannot write: "
                              f"{exc.strerror or exc}") from None
    return topology


def dumps(topology: dict) -> str:
    """The topology as the shipped files are written: one link or flow per line."""
    lines = ["{"]
    items = list(topology.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        if key in ("links", "flows") and value:
            inner = ",\n".join(f"    {json.dumps(v)}" for v in value)
            lines.append(f'  "{key}": [\n{inner}\n  ]{comma}')
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    return "\n".join(lines) + "\n}\n"


def convert_main(argv) -> int:
    """``convert OLD.json [-o NEW.json]``: 0 converted, 2 bad input (one line)."""
    import sys

    from netsim.cli_options import OneLineParser, program_name
    parser = OneLineParser(
        prog=f"{program_name()} convert",
        description="Convert a topology file of the 2015 CS/EE 143 simulator (a jsonpickle dump, "
                    "read as plain data, never decoded) to netsim's format "
                    "(docs/topology-format.md, \"2015 files\").")
    parser.add_argument("old", metavar="OLD.json", help="the 2015 topology file")
    parser.add_argument("-o", "--out", metavar="NEW.json",
                        help="where to write the converted topology (default: standard output)")
    parser.add_argument("--force", action="store_true",
                        help="replace NEW.json if it exists")
    args = parser.parse_args(argv)
    try:
        topology = convert_file(args.old, args.out, force=args.force)
    except (LegacyError, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(dumps(topology))
    else:                                    # (on standard output the topology is all there is)
        print(f"converted {args.old} to {args.out} (netsim's format)")
    return 0
