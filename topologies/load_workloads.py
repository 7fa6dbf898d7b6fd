"""Workloads: flows drawn at random, with Poisson arrivals between sets of hosts and sizes from a
CDF (given, or a shipped distribution of topologies/data/) (docs/topology-format.md, "Workloads")."""
from __future__ import annotations

from pathlib import Path

from flows import ALGORITHMS
from topologies.bounds import (
    BOUND_ROUNDING,
    MAX_ARRIVALS_PER_S,
    MAX_DATA_BYTES,
    TIME_RESOLUTION_S,
)
from topologies.load_algorithms import flow_algorithm
from topologies.load_fields import (
    NON_NEGATIVE,
    POSITIVE,
    Where,
    as_list,
    boolean,
    check_fields,
    choice,
    entries,
    host_ref,
    number,
    one_of,
    seconds,
)
from topologies.load_flows import FlowContext
from topologies.load_transport import flow_transport
from topologies.spec import WorkloadSpec
from topologies.validation import quote, show

WORKLOAD_FIELDS = ("id", "src", "dst", "arrivals_per_s", "sizes", "algorithm", "params",
                   "transport", "start_s", "stop_s", "ecn")
WORKLOAD_REQUIRED = ("id", "src", "dst", "arrivals_per_s", "sizes")
SIZE_DISTRIBUTIONS = ("websearch", "datamining")   # topologies/data/<name>.csv


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


def _cdf(where: Where, value) -> tuple:
    """``[[bytes, cumulative probability], ...]``: both non-decreasing, probabilities in [0, 1],
    the last one 1, some size > 0."""
    pairs = as_list(where, "sizes", value,
                    f"a CDF [[bytes, probability], ...] or {one_of(SIZE_DISTRIBUTIONS)}")
    if not pairs:
        raise where.field_error("sizes", "expected at least one [bytes, probability] point")
    points: list[tuple[float, float]] = []
    for i, entry in enumerate(pairs):
        label = f"sizes[{i}]"
        if not isinstance(entry, list) or len(entry) != 2:
            raise where.field_error(label, f"expected a [bytes, probability] pair, got {show(entry)}")
        size = float(number(where, label, entry[0], NON_NEGATIVE))
        prob = float(number(where, label, entry[1], NON_NEGATIVE))
        if size > MAX_DATA_BYTES:          # (topologies/bounds.py, "Data")
            raise where.field_error(label, f"expected a size of at most {MAX_DATA_BYTES:.0e} "
                                    f"bytes, got {show(entry[0])}")
        if prob > 1:
            raise where.field_error(label, f"expected a probability <= 1, got {show(entry[1])}")
        if points and (size < points[-1][0] or prob < points[-1][1]):
            raise where.field_error(label, "sizes and probabilities must not decrease")
        points.append((size, prob))
    if points[-1][1] != 1 or points[-1][0] <= 0:
        raise where.field_error("sizes", "the last point must have probability 1 and a size > 0")
    return tuple(points)


def _host_list(where: Where, name: str, value, kinds: dict) -> tuple:
    items = as_list(where, name, value, "a list of host ids")
    if not items:
        raise where.field_error(name, "expected at least one host")
    return tuple(dict.fromkeys(host_ref(where, name, item, kinds) for item in items))


def unconnected_pair(src: tuple, dst: tuple, components: dict) -> tuple | None:
    """The first pair (a, b), a in `src` then b in `dst` in their orders, a != b, that is not
    `connected`, or None: in O(|src| + |dst|), not |src| x |dst| (an all-to-all workload of a
    k=32 fat tree's 8 192 hosts spent 10-15 s checking its 67 M pairs one by one). A host's
    first unconnected b is the first of `dst` outside its component: `dst[0]` unless that is in
    it, then the first of `dst` outside dst[0]'s component (a host without a component, which
    reaches nothing, has the first of `dst` other than itself)."""
    label0 = components.get(dst[0])
    first_other = (next((b for b in dst if components.get(b) != label0), None)
                   if label0 is not None else None)
    for a in src:
        label = components.get(a)
        if label is None:
            b = dst[0] if dst[0] != a else (dst[1] if len(dst) > 1 else None)
        elif label != label0:
            b = dst[0]
        else:
            b = first_other
        if b is not None:
            return a, b
    return None


def _workload(where: Where, item: dict, ctx: FlowContext) -> WorkloadSpec:
    check_fields(where, item, WORKLOAD_FIELDS, WORKLOAD_REQUIRED)
    src = _host_list(where, "src", item["src"], ctx.kinds)
    dst = _host_list(where, "dst", item["dst"], ctx.kinds)
    if len(src) == 1 and dst == src:
        raise where.field_error("dst", "expected a host other than the only src")
    apart = unconnected_pair(src, dst, ctx.components)
    if apart is not None:
        raise where.error(f"hosts {quote(apart[0])} and {quote(apart[1])} are not connected")
    rate = float(number(where, "arrivals_per_s", item["arrivals_per_s"], POSITIVE))
    # the mean gap would vanish against the clock (1 / 1e-9 is 999999999.9999999: the bound
    # is met within rounding, as every bound given in another unit, topologies/bounds.py)
    if rate > MAX_ARRIVALS_PER_S * (1.0 + BOUND_ROUNDING):
        raise where.field_error("arrivals_per_s",
                                f"expected at most {MAX_ARRIVALS_PER_S:g} arrivals per second (a mean "
                                f"gap of at least {TIME_RESOLUTION_S:g} s), got "
                                f"{show(item['arrivals_per_s'])}")
    sizes = item["sizes"]
    if isinstance(sizes, str):
        name = choice(where, "sizes", sizes, SIZE_DISTRIBUTIONS)
        cdf = shipped_sizes(name)
    else:
        name, cdf = "cdf", _cdf(where, sizes)
    algorithm, params = flow_algorithm(where, item, ctx.override, ctx.algorithms)
    # a workload's flows are drawn, not written: ECN follows the algorithm unless "ecn" says
    # otherwise (dctcp: on), so a sweep can swap dctcp and cubic in one field
    needs_ecn = ALGORITHMS[algorithm].requires_ecn
    ecn = boolean(where, "ecn", item.get("ecn", needs_ecn))
    if needs_ecn and not ecn:
        raise where.field_error("ecn", f"algorithm {quote(algorithm)} needs ECN: expected true, "
                                       f"got {show(item.get('ecn'))}")
    start_s = float(number(where, "start_s", item.get("start_s", 0), NON_NEGATIVE))
    stop_s = number(where, "stop_s", item.get("stop_s"), POSITIVE, nullable=True)
    if stop_s is not None and stop_s <= start_s:
        raise where.field_error("stop_s", f"expected a time after start_s ({seconds(start_s)} s)")
    return WorkloadSpec(id=item["id"], src=src, dst=dst, arrivals_per_s=rate, sizes=cdf,
                        sizes_name=name, algorithm=algorithm, params=params,
                        transport=flow_transport(where, item, ctx.transport, ctx.packet_bytes),
                        start_s=start_s,
                        stop_s=None if stop_s is None else float(stop_s), ecn=ecn)


def read_workloads(top: Where, data: dict, ctx: FlowContext) -> list:
    return [_workload(where, item, ctx)
            for where, item in entries(top, data, "workloads", "workload")]


def check_workload_names(top: Where, flows: list, workloads: list) -> None:
    """A workload names the flows it opens `<its id>#1`, `#2`, ... (netsim/workloads.py): a
    flow of the file may not have such an id, which would then name two flows in fct.csv,
    flows.csv and the event trace."""
    ids = {w.id for w in workloads}
    for index, flow in enumerate(flows):
        owner, _, number = flow.id.rpartition("#")
        if owner in ids and number.isdigit():
            raise Where(top.source, ("flows", index, flow.id)).field_error(
                "id", f"{quote(flow.id)} is the name of one of the flows workload "
                      f"{quote(owner)} opens ({owner}#1, {owner}#2, ...): choose another")
