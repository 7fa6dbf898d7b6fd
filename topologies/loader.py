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

Each section of the file is read by its own module: `load_settings` (name, units, packet sizes,
routing, duration, seed), `load_transport`, `load_algorithms`, `load_nodes`, `load_links` with
`load_impairments`, `load_flows`, `load_workloads` and `load_events`; what they share (the error,
`Where` a problem is, the checks of one field) is in `load_fields`.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from components.link import DUPLEX_MODES
from topologies.load_algorithms import check_override, read_file_algorithms
from topologies.load_events import read_events
from topologies.load_fields import TopologyError, Where, check_fields, choice, string
from topologies.load_flows import FlowContext, read_flows
from topologies.load_links import read_links
from topologies.load_nodes import access_rates, check_host_links, node_components, read_nodes
from topologies.load_settings import (
    read_duration,
    read_name,
    read_packet_sizes,
    read_routing,
    read_seed,
    read_units,
)
from topologies.load_transport import (
    TRANSPORT_RULES,
    check_stack,
    read_file_transport,
    with_stack,
)
from topologies.spec import DEFAULT_DUPLEX, TopologySpec
from topologies.validation import check_plain, one_line, read_json, show

__all__ = ["TRANSPORT_RULES", "TopologyError", "load_topology", "shipped_sizes"]


def shipped_sizes(name: str):
    """A shipped flow-size distribution by name (`topologies.load_workloads.shipped_sizes`)."""
    from topologies.load_workloads import shipped_sizes as sizes
    return sizes(name)


DICT_SOURCE = "<dict>"
PLAIN_DATA_KIND = "topology files"   # in "jsonpickle tag ... is not allowed; <kind> are plain JSON data"

TOP_LEVEL_FIELDS = ("name", "description", "units", "duplex", "packet_bytes", "routing", "transport",
                    "algorithms", "hosts", "routers", "links", "flows", "events", "duration_s", "seed",
                    "workloads")
TOP_LEVEL_REQUIRED = ("hosts", "links")


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


def _build(label: str, data, default_name: str, override: str | None,
           stack: str | None = None) -> TopologySpec:
    top = Where(label, "top level")
    if not isinstance(data, dict):
        raise top.error(f"expected a JSON object, got {show(data)}")
    check_fields(top, data, TOP_LEVEL_FIELDS, TOP_LEVEL_REQUIRED)
    name = read_name(top, data, default_name)
    description = string(top, "description", data.get("description", ""), allow_empty=True)
    units = read_units(top, data)
    duplex = choice(top, "duplex", data.get("duplex", DEFAULT_DUPLEX), DUPLEX_MODES)
    packet_sizes = read_packet_sizes(top, data)
    routing = read_routing(top, data)
    transport = with_stack(read_file_transport(top, data, packet_sizes.data_bytes), stack)
    algorithms = read_file_algorithms(top, data)
    duration_s = read_duration(top, data)
    seed = read_seed(top, data)
    kinds = read_nodes(top, data)
    largest = max(packet_sizes.data_bytes, packet_sizes.ack_bytes,
                  packet_sizes.routing_bytes if routing.protocol == "bellman-ford" else 0)
    links = read_links(top, data, kinds, units, duplex, largest)
    check_host_links(top, kinds, links)
    ctx = FlowContext(kinds, node_components(kinds, links), units, transport, algorithms, override,
                      packet_sizes.data_bytes, access_rates(kinds, links))
    flows = read_flows(top, data, ctx)
    events = read_events(top, data, links)
    workloads: list = []
    if "workloads" in data:           # (imported by the files that have some)
        from topologies.load_workloads import check_workload_names, read_workloads
        workloads = read_workloads(top, data, ctx)
        check_workload_names(top, flows, workloads)
    if stack is not None:                         # --stack: every flow, whatever its own block
        flows = [replace(f, transport=with_stack(f.transport, stack)) for f in flows]
        workloads = [replace(w, transport=with_stack(w.transport, stack)) for w in workloads]
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


def load_topology(source, *, algorithm: str | None = None, label: str | None = None,
                  stack: str | None = None) -> TopologySpec:
    """Load and validate a topology from a JSON file path (str or Path) or an already-parsed dict.

    `algorithm` is the CLI's ``--algorithm NAME`` override: every flow runs NAME, with the file's
    ``algorithms[NAME]`` parameters (else NAME's defaults); a flow's own ``params`` are kept only if
    the flow already used NAME. `label` names a dict source in messages (default ``<dict>``; a
    file is named by its path). `stack` is the CLI's ``--stack NAME``: every flow's and
    workload's transport runs on that stack (flows/linux_stack.py). Raises `TopologyError` (one
    line) for any problem.
    """
    override = check_override(algorithm)
    stack = check_stack(stack)
    label, data, default_name = _open(source, label)
    return _build(label, data, default_name, override, stack)
