"""Flows: bulk transfers (an algorithm, its parameters, transport, ECN, delayed ACKs) and the
"cbr"/"onoff" rate flows (docs/topology-format.md, "Flow objects")."""
from __future__ import annotations

from dataclasses import dataclass

from flows import ALGORITHMS
from topologies.bounds import MAX_DATA_BYTES, MAX_TIME_S, TIME_RESOLUTION_S, max_data_bytes
from topologies.load_algorithms import flow_algorithm
from topologies.load_fields import (
    NON_NEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    Fields,
    Where,
    as_object,
    boolean,
    check_fields,
    choice,
    entries,
    host_ref,
    number,
    scaled,
)
from topologies.load_nodes import connected
from topologies.load_transport import flow_transport
from topologies.spec import FlowSpec, TransportSpec, UnitSystem
from topologies.validation import quote, show

RATE_FLOW_FIELDS = ("rate_mbps", "on_s", "off_s", "periods")   # cbr/onoff only (flows/cbr.py)
FLOW_FIELDS = ("id", "src", "dst", "data_mb", "start_s", "algorithm", "params", "transport",
               "ecn", "delayed_ack", "kind", *RATE_FLOW_FIELDS)
FLOW_REQUIRED = ("id", "src", "dst")
FLOW_KINDS = ("bulk", "cbr", "onoff")
BULK_ONLY_FIELDS = ("algorithm", "params", "transport", "ecn", "delayed_ack")
DELAYED_ACK_FIELDS = ("every", "timeout_ms")
DEFAULT_DELAYED_ACK = (2, 0.040)   # RFC 1122 / RFC 5681 §4.2: every second packet, 40 ms timer
_FIELDS = Fields(FLOW_FIELDS, FLOW_REQUIRED)


@dataclass(frozen=True)
class FlowContext:
    """What reading a flow or a workload needs from the rest of the file, and the --algorithm
    override."""

    kinds: dict
    components: dict          # node -> connected component (`node_components`)
    units: UnitSystem
    transport: TransportSpec
    algorithms: dict          # the file's per-algorithm parameter overrides
    override: str | None      # the --algorithm override
    packet_bytes: int         # a data packet's size (a cbr or onoff flow sends these)
    access_bps: dict          # host -> the fastest rate of its link over its rate schedule


def _data_bytes(where: Where, value, ctx: FlowContext, src: str, dst: str):
    data_mb = number(where, "data_mb", value, POSITIVE, nullable=True)
    if data_mb is None:
        return None
    data_bytes = max(1, round(scaled(where, "data_mb", data_mb, ctx.units.bytes_per_mb)))
    slower = min((src, dst), key=ctx.access_bps.__getitem__)
    limit = max_data_bytes(ctx.access_bps[slower])
    if data_bytes > limit:      # it could not end within the clock's range (bounds.py, "Data")
        limit_mb = limit / ctx.units.bytes_per_mb
        if limit == MAX_DATA_BYTES:
            why = f"{MAX_DATA_BYTES:.0e} bytes, the largest flow"
        else:
            rate_mbps = ctx.access_bps[slower] / ctx.units.bits_per_mbit
            why = (f"what host {quote(slower)}'s link carries at {rate_mbps:g} Mbps in "
                   f"{MAX_TIME_S:g} s, the longest a run may simulate")
        raise where.field_error("data_mb", f"expected at most {limit_mb:.6g} ({why}), got "
                                f"{show(value)}")
    return data_bytes


def _rate_flow(where: Where, item: dict, ctx: FlowContext, kind: str) -> FlowSpec:
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
    src = host_ref(where, "src", item["src"], ctx.kinds)
    dst = host_ref(where, "dst", item["dst"], ctx.kinds)
    if src == dst:
        raise where.field_error("dst", f"expected a host other than src, got {quote(dst)}")
    if not connected(src, dst, ctx.components):
        raise where.error(f"hosts {quote(src)} and {quote(dst)} are not connected")
    rate = number(where, "rate_mbps", item["rate_mbps"], POSITIVE)
    rate_bps = float(scaled(where, "rate_mbps", rate, ctx.units.bits_per_mbit))
    if not ctx.packet_bytes * 8.0 / rate_bps >= TIME_RESOLUTION_S:
        # packets closer together than the clock resolves would never let time advance (as a
        # workload's arrivals: docs/outputs.md, "Bounds")
        limit = ctx.packet_bytes * 8.0 / TIME_RESOLUTION_S / ctx.units.bits_per_mbit
        raise where.field_error("rate_mbps", f"expected at most {limit:g} (one {ctx.packet_bytes}"
                                f"-byte packet every {TIME_RESOLUTION_S:g} s, the clock's "
                                f"resolution), got {show(item['rate_mbps'])}")
    on_s = off_s = None
    if kind == "onoff":
        on_s = float(number(where, "on_s", item["on_s"], POSITIVE))
        off_s = float(number(where, "off_s", item["off_s"], NON_NEGATIVE))
    return FlowSpec(id=item["id"], src=src, dst=dst,
                    data_bytes=_data_bytes(where, item.get("data_mb"), ctx, src, dst),
                    start_s=number(where, "start_s", item.get("start_s", 0), NON_NEGATIVE),
                    algorithm=kind, params={}, transport=ctx.transport, kind=kind,
                    rate_bps=rate_bps,
                    on_s=on_s, off_s=off_s,
                    periods=choice(where, "periods", item.get("periods", "fixed"),
                                   ("fixed", "exponential")))


def _delayed_ack(where: Where, value):
    """(every, timeout_s) from ``"delayed_ack"``: true, false or {"every": N, "timeout_ms": T}."""
    if value is False or value is None:
        return None
    if value is True:
        return DEFAULT_DELAYED_ACK
    block = as_object(where, "delayed_ack", value, "true, false or an object")
    inner = where.inner("delayed_ack")
    check_fields(inner, block, DELAYED_ACK_FIELDS)
    every = number(inner, "every", block.get("every", DEFAULT_DELAYED_ACK[0]), POSITIVE_INT)
    timeout_ms = number(inner, "timeout_ms", block.get("timeout_ms", DEFAULT_DELAYED_ACK[1] * 1e3),
                        POSITIVE)
    return (every, timeout_ms / 1e3)


def _flow(where: Where, item: dict, ctx: FlowContext) -> FlowSpec:
    _FIELDS.check(where, item)
    kind = choice(where, "kind", item.get("kind", "bulk"), FLOW_KINDS)
    if kind != "bulk":
        return _rate_flow(where, item, ctx, kind)
    for name in RATE_FLOW_FIELDS:
        if name in item:
            raise where.field_error(name, "only for \"cbr\" and \"onoff\" flows")
    src = host_ref(where, "src", item["src"], ctx.kinds)
    dst = host_ref(where, "dst", item["dst"], ctx.kinds)
    if src == dst:
        raise where.field_error("dst", f"expected a host other than src, got {quote(dst)}")
    data_bytes = _data_bytes(where, item.get("data_mb"), ctx, src, dst)
    start_s = number(where, "start_s", item.get("start_s", 0), NON_NEGATIVE)
    algorithm, params = flow_algorithm(where, item, ctx.override, ctx.algorithms)
    transport = flow_transport(where, item, ctx.transport, ctx.packet_bytes)
    needs_ecn = ALGORITHMS[algorithm].requires_ecn
    # --algorithm dctcp turns ECN on where the file does not say (as Linux's TCP_CONG_NEEDS_ECN
    # and ns-3's TcpDctcp do); a file that names dctcp itself must say "ecn": true
    implied = needs_ecn and ctx.override is not None and "ecn" not in item
    ecn = boolean(where, "ecn", item.get("ecn", implied))
    if needs_ecn and not ecn:
        raise where.field_error("ecn", f"algorithm {quote(algorithm)} needs ECN: expected true, "
                                       f"got {show(item.get('ecn', False))}")
    delayed_ack = _delayed_ack(where, item.get("delayed_ack", False))
    if not connected(src, dst, ctx.components):
        raise where.error(f"hosts {quote(src)} and {quote(dst)} are not connected")
    return FlowSpec(id=item["id"], src=src, dst=dst, data_bytes=data_bytes, start_s=start_s,
                    algorithm=algorithm, params=params, transport=transport, ecn=ecn,
                    delayed_ack=delayed_ack)


def read_flows(top: Where, data: dict, ctx: FlowContext) -> list:
    return [_flow(where, item, ctx) for where, item in entries(top, data, "flows", "flow")]


