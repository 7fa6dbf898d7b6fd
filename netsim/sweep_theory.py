"""Theory curves of a sweep's plots (docs/sweeps.md, "Theory curves"): their fields checked
(`check_theory`) and every setting resolved from the topology at every point of the sweep
(`resolve_theory`): packet size, base RTT, units, link rates, and CUBIC's C and beta from the
algorithm's class (flows/cubic.py) unless the plot gives them.
"""
from __future__ import annotations

import math

from netsim.sweep_parameters import SweepError
from netsim.sweep_points import Sweep, point_spec
from topologies.validation import suggestion

THEORY_MODELS = {
    "mathis": ("model", "flow", "rtt_ms", "mss_bytes", "units_bits_per_mbit"),
    "cubic": ("model", "flow", "rtt_ms", "mss_bytes", "units_bits_per_mbit", "C", "beta"),
    "capacity": ("model", "link", "flow", "mbps", "label"),
    "fair_share": ("model", "link", "flow", "mbps", "label"),
    "column": ("model", "y"),
    "band": ("model", "low", "high"),
}



def path_facts(spec, flow_id: str) -> dict:
    """What theory curves need to know of one flow's path in `spec`: data packet size (bytes),
    base RTT (ms: propagation and transmission of a data packet and its ACK, no queueing, along
    the static routes the run starts with), the bottleneck link (smallest rate on the data path)
    and, per link of the data path, its rate in the topology's Mbps and the flows that cross it."""
    from theory.paths import Paths
    paths = Paths(spec)
    flow = spec.flow(flow_id)
    mbit = spec.units.bits_per_mbit
    crossing: dict = {}
    for other in spec.flows:
        for hop in paths.path(other.src, other.dst):
            crossing.setdefault(hop.link.id, []).append(other.id)
    links = {}
    for hop in paths.path(flow.src, flow.dst):
        links[hop.link.id] = {"mbps": hop.link.rate_bps / mbit, "flows": crossing[hop.link.id]}
    bottleneck = min(links, key=lambda lid: links[lid]["mbps"])
    return {"mss_bytes": spec.packet_sizes.data_bytes,
            "base_rtt_ms": paths.base_rtt_s(flow) * 1e3,
            "bits_per_mbit": mbit, "links": links, "bottleneck": bottleneck}


def base_rtts_ms(spec) -> dict:
    """Flow id -> base RTT (ms) of `spec`, from the spec alone (no run needed)."""
    from theory.paths import base_rtts_s
    return {fid: rtt * 1e3 for fid, rtt in base_rtts_s(spec).items()}


def _theory_flow(where: str, theory: dict, plot: dict, sweep: Sweep) -> str:
    flows = [f.get("id") for f in sweep.base.get("flows", [])]
    flow = theory.get("flow")
    if flow is None:
        parts = str(plot.get("y", "")).split(".")
        if parts[0] == "flows" and len(parts) == 3:
            flow = parts[1]
        elif len(flows) == 1:
            flow = flows[0]
        else:
            raise SweepError(f'{where}: field "theory.flow": name the flow whose path the model '
                             f"describes (flows: {', '.join(map(str, flows))})")
    if flow not in flows:
        raise SweepError(f'{where}: field "theory.flow": no flow "{flow}"{suggestion(flow, flows)}')
    return flow


def _same(values: list, what: str, where: str, unit: str):
    """The one value all points share; SweepError when they differ."""
    low, high = min(values), max(values)
    if not math.isclose(low, high, rel_tol=1e-9, abs_tol=1e-12):
        raise SweepError(f"{where}: {what} differs between the points of the sweep ({low:.4g} to "
                         f"{high:.4g} {unit}); a theory curve needs one value: vary it in another "
                         f"sweep or draw the points without theory")
    return values[0]


def resolve_theory(where: str, plot: dict, sweep: Sweep) -> dict | None:
    """The plot's ``theory`` with every setting taken from the topology (docs/sweeps.md, "Theory
    curves"): packet size, base RTT, units and link rates at every point of the sweep, which must
    agree; optional overrides are checked against them. Raises SweepError."""
    theory = plot.get("theory")
    if theory is None or theory.get("model") in ("column", "band"):
        return theory
    specs = [point_spec(sweep, point) for point in sweep.points()]
    if theory["model"] in ("mathis", "cubic"):
        return _resolve_response(where, theory, plot, sweep, specs)
    return _resolve_rate_line(where, theory, plot, sweep, specs)


def _resolve_response(where: str, theory: dict, plot: dict, sweep: Sweep, specs: list) -> dict:
    """A response function's settings (Mathis, RFC 9438) from the path of the plot's flow."""
    model = theory["model"]
    flow = _theory_flow(where, theory, plot, sweep)
    facts = [path_facts(spec, flow) for spec in specs]
    mss = _same([f["mss_bytes"] for f in facts], f"flow {flow}'s data packet size", where, "B")
    base = _same([f["base_rtt_ms"] for f in facts], f"the base RTT of flow {flow}'s path",
                 where, "ms")
    bits = _same([f["bits_per_mbit"] for f in facts], "the units", where, "bits per Mbit")
    given = theory.get("mss_bytes")
    if given is not None and not math.isclose(float(given), mss):
        raise SweepError(f'{where}: field "theory.mss_bytes": {given!r} disagrees with the '
                         f"topology, whose data packets are {mss} B; remove it (the packet "
                         f"size is taken from the topology)")
    given = theory.get("units_bits_per_mbit")
    if given is not None and not math.isclose(float(given), bits):
        raise SweepError(f'{where}: field "theory.units_bits_per_mbit": {given!r} disagrees '
                         f"with the topology's units ({bits} bits per Mbit); remove it")
    rtt = theory.get("rtt_ms")
    if rtt is None:
        rtt = base
    elif float(rtt) < base * (1 - 1e-6):
        raise SweepError(f'{where}: field "theory.rtt_ms": {rtt!r} is below the base RTT of '
                         f"flow {flow}'s path ({base:.4g} ms); the model's RTT is the base RTT "
                         f"plus the queueing delay it expects (leave it out to use the base RTT)")
    resolved = {"model": model, "flow": flow, "mss_bytes": mss, "rtt_ms": float(rtt),
                "base_rtt_ms": base, "units_bits_per_mbit": bits}
    if model == "cubic":
        from flows import ALGORITHMS  # the constants are the class's (flows/cubic.py)
        defaults = ALGORITHMS["cubic"].PARAMETERS
        resolved.update(C=theory.get("C", defaults["C"]),
                        beta=theory.get("beta", defaults["beta"]))
    return resolved


def _resolve_rate_line(where: str, theory: dict, plot: dict, sweep: Sweep, specs: list) -> dict:
    """capacity / fair_share: a horizontal line at a rate the topology gives."""
    model = theory["model"]
    link = theory.get("link")
    flow = None
    if link is None:
        if model == "capacity" and theory.get("mbps") is not None:
            label = theory.get("label") or f"capacity {float(theory['mbps']):g} Mbps"
            return {"model": model, "mbps": float(theory["mbps"]), "label": label}
        flow = _theory_flow(where, theory, plot, sweep)
    links = {entry.get("id") for entry in sweep.base.get("links", [])}
    if link is not None and link not in links:
        raise SweepError(f'{where}: field "theory.link": no link "{link}"{suggestion(link, links)}')
    rates, counts = [], []
    for spec in specs:
        if flow is not None:
            facts = path_facts(spec, flow)
            link = facts["bottleneck"]
            info = facts["links"][link]
        else:
            info = _link_info(spec, str(link))
        rates.append(info["mbps"])
        counts.append(len(info["flows"]))
    rate = _same(rates, f"the rate of link {link}", where, "Mbps")
    if model == "capacity":
        mbps = rate
        label = f"{link} capacity {rate:g} Mbps"
    else:
        count = int(_same(counts, f"the number of flows crossing {link}", where, "flows"))
        if count == 0:
            raise SweepError(f'{where}: field "theory.link": no flow crosses link {link}')
        mbps = rate / count
        label = f"fair share {mbps:g} Mbps ({link} {rate:g} Mbps / {count} flows)"
    given = theory.get("mbps")
    if given is not None and not math.isclose(float(given), mbps, rel_tol=1e-9):
        raise SweepError(f'{where}: field "theory.mbps": {given!r} disagrees with the topology '
                         f"({label}); remove it")
    return {"model": model, "link": link, "mbps": mbps, "label": theory.get("label") or label}


def _link_info(spec, link_id: str) -> dict:
    from theory.paths import Paths
    paths = Paths(spec)
    crossing = [f.id for f in spec.flows
                if any(hop.link.id == link_id for hop in paths.path(f.src, f.dst))]
    return {"mbps": spec.link(link_id).rate_bps / spec.units.bits_per_mbit, "flows": crossing}


def check_theory(where: str, theory, sweep: Sweep) -> None:
    if not isinstance(theory, dict) or not isinstance(theory.get("model"), str) \
            or theory["model"] not in THEORY_MODELS:
        raise SweepError(f'{where}: field "theory": expected an object with "model" one of '
                         f"{', '.join(THEORY_MODELS)}")
    model = theory["model"]
    for key in theory:
        if key not in THEORY_MODELS[model]:
            raise SweepError(f'{where}: field "theory.{key}": not a field of the {model} model'
                             f"{suggestion(key, THEORY_MODELS[model])}; its fields: "
                             f"{', '.join(THEORY_MODELS[model])}")
    if model == "column" and theory.get("y") not in sweep.metrics:
        raise SweepError(f'{where}: field "theory.y": expected a collected metric')
    for key in ("low", "high") if model == "band" else ():
        if theory.get(key) not in sweep.metrics:
            raise SweepError(f'{where}: field "theory.{key}": expected a collected metric'
                             f"{suggestion(theory.get(key), sweep.metrics)}")
    for key in ("rtt_ms", "mss_bytes", "units_bits_per_mbit", "C", "beta", "mbps"):
        value = theory.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value <= 0):
            raise SweepError(f'{where}: field "theory.{key}": expected a positive number, '
                             f"got {value!r}")
    if model == "cubic" and "beta" in theory and not 0 < theory["beta"] < 1:
        raise SweepError(f'{where}: field "theory.beta": expected a number between 0 and 1')
    for key in ("flow", "link", "label"):
        value = theory.get(key)
        if value is not None and (not isinstance(value, str) or not value
                                  or any(ord(c) < 32 for c in value)):
            raise SweepError(f'{where}: field "theory.{key}": expected a name, got {value!r}')
