"""The `transport` blocks: the file's (top level) and a flow's or workload's own, which overrides
the file's field by field (docs/topology-format.md, "`transport`")."""
from __future__ import annotations

from dataclasses import replace

from topologies.load_fields import POSITIVE, POSITIVE_INT, Where, as_object, check_fields, number
from topologies.spec import TransportSpec
from topologies.validation import show

# TransportSpec field -> (rule, null allowed)
TRANSPORT_RULES = {
    "initial_cwnd_pkts": (POSITIVE, False),
    "initial_ssthresh_pkts": (POSITIVE, True),
    "initial_rto_s": (POSITIVE, False),
    "min_rto_s": (POSITIVE, False),
    "max_rto_s": (POSITIVE, False),
    "dupack_threshold": (POSITIVE_INT, False),
}


def read_transport(where: Where, block, base: TransportSpec) -> TransportSpec:
    """`base` overridden by the transport block `block` (read at `where`), checked for consistency."""
    check_fields(where, block, TRANSPORT_RULES)
    overrides = {}
    for key, value in block.items():
        rule, nullable = TRANSPORT_RULES[key]
        overrides[key] = number(where, key, value, rule, nullable=nullable)
    merged = replace(base, **overrides)
    if merged.max_rto_s < merged.min_rto_s:
        if "max_rto_s" in overrides:
            raise where.field_error("max_rto_s", f"expected a number >= min_rto_s "
                                                 f"({merged.min_rto_s!r}), got {show(block['max_rto_s'])}")
        raise where.field_error("min_rto_s", f"expected a number <= max_rto_s "
                                             f"({merged.max_rto_s!r}), got {show(block['min_rto_s'])}")
    return merged


def read_file_transport(top: Where, data: dict) -> TransportSpec:
    if "transport" not in data:
        return TransportSpec()
    block = as_object(top, "transport", data["transport"])
    return read_transport(Where(top.source, "transport"), block, TransportSpec())


def flow_transport(where: Where, item: dict, base: TransportSpec) -> TransportSpec:
    if "transport" not in item:
        return base
    block = as_object(where, "transport", item["transport"])
    return read_transport(where.inner("transport"), block, base)


