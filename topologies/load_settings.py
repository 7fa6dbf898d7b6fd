"""The top level's settings: `name`, `units`, `packet_bytes`, `routing`, `duration_s`, `seed`
(docs/topology-format.md, "Top level")."""
from __future__ import annotations

from topologies.bounds import MIN_ROUTING_INTERVAL_S
from topologies.load_fields import (
    NON_NEGATIVE,
    NON_NEGATIVE_INT,
    POSITIVE,
    POSITIVE_INT,
    Where,
    as_object,
    check_fields,
    choice,
    number,
    string,
)
from topologies.spec import (
    DEFAULT_SEED,
    DEFAULT_SETTLE_S,
    DEFAULT_UNITS,
    DEFAULT_UPDATE_INTERVAL_S,
    ROUTING_PROTOCOLS,
    UNIT_SYSTEMS,
    PacketSizes,
    RoutingSpec,
    UnitSystem,
)
from topologies.validation import file_name_problem, show

PACKET_FIELDS = {"data": "data_bytes", "ack": "ack_bytes", "routing": "routing_bytes"}
ROUTING_FIELDS = ("protocol", "update_interval_s", "settle_s", "ecmp")
ECMP_VALUES = {False: None, True: "flow", "flow": "flow", "packet": "packet"}


def read_units(top: Where, data: dict) -> UnitSystem:
    return UNIT_SYSTEMS[choice(top, "units", data.get("units", DEFAULT_UNITS), tuple(UNIT_SYSTEMS))]


def read_packet_sizes(top: Where, data: dict) -> PacketSizes:
    if "packet_bytes" not in data:
        return PacketSizes()
    block = as_object(top, "packet_bytes", data["packet_bytes"])
    where = Where(top.source, "packet_bytes")
    check_fields(where, block, PACKET_FIELDS)
    sizes = {PACKET_FIELDS[key]: number(where, key, value, POSITIVE_INT) for key, value in block.items()}
    return PacketSizes(**sizes)


def read_routing(top: Where, data: dict) -> RoutingSpec:
    if "routing" not in data:
        return RoutingSpec()
    block = as_object(top, "routing", data["routing"])
    where = Where(top.source, "routing")
    check_fields(where, block, ROUTING_FIELDS)
    protocol = choice(where, "protocol", block.get("protocol", "static"), ROUTING_PROTOCOLS)
    interval = number(where, "update_interval_s",
                      block.get("update_interval_s", DEFAULT_UPDATE_INTERVAL_S), POSITIVE)
    settle = number(where, "settle_s", block.get("settle_s", DEFAULT_SETTLE_S), NON_NEGATIVE)
    if protocol == "bellman-ford" and interval < MIN_ROUTING_INTERVAL_S:
        raise where.field_error("update_interval_s", f"expected at least {MIN_ROUTING_INTERVAL_S:g} "
                                                     f"s between Bellman-Ford rounds (each router "
                                                     f"sends its vector to every neighbour each "
                                                     f"round), got {show(block['update_interval_s'])}")
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


def read_duration(top: Where, data: dict):
    return number(top, "duration_s", data.get("duration_s"), POSITIVE, nullable=True)


def read_seed(top: Where, data: dict) -> int:
    return number(top, "seed", data.get("seed", DEFAULT_SEED), NON_NEGATIVE_INT)


def read_name(top: Where, data: dict, default_name: str) -> str:
    """The topology's name: it names the results directory, so it must be a plain file name."""
    if "name" in data:
        name = string(top, "name", data["name"])
        problem = file_name_problem(name)
        if problem:
            raise top.field_error("name", problem)
        return name
    problem = file_name_problem(default_name)
    if problem:
        raise top.field_error("name", f"{problem} (the file name without extension; give a "
                                      f'"name")')
    return default_name


