"""The `transport` blocks: the file's (top level) and a flow's or workload's own, which overrides
the file's field by field (docs/topology-format.md, "`transport`")."""
from __future__ import annotations

from flows.linux_stack import RWND_BYTES_PER_KB, STACKS
from topologies.bounds import MAX_INITIAL_CWND_PKTS, MAX_RWND_KB
from topologies.load_fields import (
    POSITIVE,
    POSITIVE_INT,
    Rule,
    TopologyError,
    Where,
    as_object,
    boolean,
    check_fields,
    choice,
    number,
    one_of,
)
from topologies.spec import TransportSpec
from topologies.validation import show, suggestion

BOOLEAN = "true or false"        # a rule: a JSON boolean
STACK = "a stack name"           # a rule: one of flows.linux_stack.STACKS
# a receive window: at most MAX_RWND_KB (topologies/bounds.py, "Data")
RWND = Rule(f"a positive number of at most {MAX_RWND_KB:g} (1e+18 bytes, the largest flow)", 0,
            False, maximum=MAX_RWND_KB)

# an initial window: at most MAX_INITIAL_CWND_PKTS (topologies/bounds.py)
INITIAL_CWND = Rule("a positive number", 0, False, maximum=MAX_INITIAL_CWND_PKTS,
                    above=f"at most {MAX_INITIAL_CWND_PKTS:g} packets (sent at once when the "
                          f"flow starts)")

# TransportSpec field -> (rule, null allowed); the stack and the mechanisms: flows/linux_stack.py
TRANSPORT_RULES: dict[str, tuple[object, bool]] = {
    "initial_cwnd_pkts": (INITIAL_CWND, False),
    "initial_ssthresh_pkts": (POSITIVE, True),
    "initial_rto_s": (POSITIVE, False),
    "min_rto_s": (POSITIVE, False),
    "max_rto_s": (POSITIVE, False),
    "dupack_threshold": (POSITIVE_INT, False),
    "stack": (STACK, False),
    "rwnd_kb": (RWND, False),
    "sack": (BOOLEAN, False),
    "rack": (BOOLEAN, False),
    "tlp": (BOOLEAN, False),
    "prr": (BOOLEAN, False),
    "undo": (BOOLEAN, False),
    "integer_window": (BOOLEAN, False),
    "linux_rto": (BOOLEAN, False),
    "linux_acks": (BOOLEAN, False),
}


def _field(where: Where, key: str, value):
    rule, nullable = TRANSPORT_RULES[key]
    if rule is BOOLEAN:
        return boolean(where, key, value)
    if rule is STACK:
        return choice(where, key, value, STACKS)
    assert isinstance(rule, Rule)
    return number(where, key, value, rule, nullable=nullable)


def read_transport(where: Where, block, base: TransportSpec,
                   packet_bytes: int | None = None) -> TransportSpec:
    """`base` overridden by the transport block `block` (read at `where`), checked for consistency.
    Numeric fields neither block sets take the defaults of the merged `stack`. With
    `packet_bytes` (a data packet's size), a receive window must hold one such packet."""
    check_fields(where, block, TRANSPORT_RULES)
    overrides = {key: _field(where, key, value) for key, value in block.items()}
    rwnd_kb = overrides.get("rwnd_kb")
    if packet_bytes is not None and rwnd_kb is not None and \
            rwnd_kb * RWND_BYTES_PER_KB < packet_bytes:
        raise where.field_error("rwnd_kb", f"expected a receive window of at least one "
                                           f"{packet_bytes}-byte data packet "
                                           f"({packet_bytes / RWND_BYTES_PER_KB:g} kB of "
                                           f"{RWND_BYTES_PER_KB:g} bytes), got {show(block['rwnd_kb'])}")
    merged = base.overridden(**overrides)
    low, high = merged.min_rto_s, merged.max_rto_s      # numbers once resolved
    assert low is not None and high is not None
    if high < low:
        if "max_rto_s" in overrides:
            raise where.field_error("max_rto_s", f"expected a number >= min_rto_s "
                                                 f"({merged.min_rto_s!r}), got {show(block['max_rto_s'])}")
        raise where.field_error("min_rto_s", f"expected a number <= max_rto_s "
                                             f"({merged.max_rto_s!r}), got {show(block['min_rto_s'])}")
    return merged


def read_file_transport(top: Where, data: dict, packet_bytes: int | None = None) -> TransportSpec:
    if "transport" not in data:
        return TransportSpec()
    block = as_object(top, "transport", data["transport"])
    return read_transport(Where(top.source, "transport"), block, TransportSpec(), packet_bytes)


def check_stack(stack, named: str = "stack") -> str | None:
    """`stack` (every flow's, overriding the file's: `load_topology(stack=...)`), if a known
    one, else TopologyError in the words of the file's "stack" field; `named` is how the caller
    gave it."""
    if stack is None or (isinstance(stack, str) and stack in STACKS):
        return stack
    raise TopologyError(f"{named}: expected {one_of(STACKS)}, got {show(stack)}"
                        f"{suggestion(stack, STACKS)}")


def with_stack(transport: TransportSpec, stack: str | None) -> TransportSpec:
    """`transport` on `stack` (the command line's ``--stack``; None: as it is)."""
    return transport if stack is None else transport.overridden(stack=stack)


def flow_transport(where: Where, item: dict, base: TransportSpec,
                   packet_bytes: int | None = None) -> TransportSpec:
    if "transport" not in item:
        return base
    block = as_object(where, "transport", item["transport"])
    return read_transport(where.inner("transport"), block, base, packet_bytes)


