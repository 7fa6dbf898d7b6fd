"""The rows of a check report: a predicted value or interval against the simulated one, and
the per-flow models of `theory.perflow` evaluated over one compared window of a run (loss-based
flows: `loss_row`; BBR flows: `bbr_rows`; DCTCP flows: `dctcp_rows`)."""
from __future__ import annotations

import math

import numpy as np

from theory.models import ROW_LABELS, bbr_gains, cubic_constants, model_of
from theory.paths import path_rtt_s
from theory.perflow import cubic_rate_pps, fair_share_rates, padhye_q_rate_pps
from theory.windows import window_mean, window_sum

BBR_RTT_SPREAD = 1.5       # BBR flows on one bottleneck share it fairly when RTprops are this close
# a BBR flow whose RTprop estimate (flows.csv min_rtt_s) averages more than this times the round
# trip its path takes (propagation and transmission) took a standing queue for propagation: its
# inflight cap is too large, it takes more than its share and keeps more queue
BBR_RTPROP_STALE = 1.1
# A loss-based flow whose data path loses more than this share of its packets to its queues (buffer
# overflows, a discipline's drops and marks) gets no response function: p counts random losses
# only, and leaving out a share s of the losses raises the predicted rate by 1 / sqrt(1 - s) - 1
# (5 % at s = 0.1).
OVERFLOW_SHARE = 0.1
DISCIPLINE_NAMES = {"red": "RED", "codel": "CoDel", "fq_codel": "FQ-CoDel", "pie": "PIE",
                    "step": "step marking"}


def _ms(seconds: float) -> str:
    """A duration in ms with four significant digits: data-center RTprops (0.1234 ms) stay
    distinct from each other as well as WAN ones (81.48 ms)."""
    return f"{1e3 * seconds:.4g} ms"


def error_pct(simulated: float, low: float, high: float, floor: float) -> float:
    """0 inside [low, high], else the distance to the nearest end relative to it (at least
    `floor`), in percent."""
    if low <= simulated <= high:
        return 0.0
    nearest = low if simulated < low else high
    return 100.0 * abs(simulated - nearest) / max(abs(nearest), floor)


def row(kind: str, entity: str, quantity: str, simulated, low: float, high: float, floor: float):
    """A compared row: predicted `low` (== `high`) or [low, high] against `simulated`."""
    low, high = float(low), float(high)
    simulated = None if simulated is None else float(simulated)
    error = None if simulated is None else float(error_pct(simulated, low, high, floor))
    predicted = low if low == high else [low, high]
    return {"kind": kind, "id": entity, "quantity": quantity, "predicted": predicted,
            "simulated": simulated, "error_pct": error}


def no_model(kind: str, entity: str, quantity: str, simulated, reason: str) -> dict:
    """A row outside every model's regime: shown with the reason, not compared."""
    return {"kind": kind, "id": entity, "quantity": quantity, "predicted": None,
            "simulated": None if simulated is None else float(simulated), "error_pct": None,
            "no_model": reason}


# What `Window` asks of the traces, declared for `theory.window_means` to compute in streamed
# passes over them: the means of these flow columns; of every link direction a flow's data
# crosses or a resource holds, the means and sums of these columns (and, on a half-duplex link,
# of its two directions summed).
FLOW_MEANS = ("recv_rate_mbps", "rtt_ms")
BBR_MEANS = ("min_rtt_s",)          # BBR's RTprop estimate (flows.csv), asked when BBR flows run
LINK_MEANS = ("rate_mbps", "backlog_kb")
LINK_SUMS = ("drops", "aqm_drops", "marks", "impairment_drops")
REORDERING_SUMS = ("fast_retransmits",)   # asked when a delay-based flow's path may reorder


def trace_series(model, fids) -> tuple:
    """(flows, link -> directions) whose series `Window` may ask for in a check of `model` on
    the flows `fids` (a direction None: a link's two directions summed)."""
    links: dict = {}
    for data_path, _ in model.paths.values():
        for hop in data_path:
            labels = links.setdefault(hop.link.id, set())
            labels.add(hop.label)
            if getattr(hop.link, "duplex", "full") == "half":
                labels.add(None)
    for resource in model.resources:
        links.setdefault(resource.link, set()).update(resource.directions)
    return list(dict.fromkeys(fids)), links


class Window:
    """One compared window of a run: [from_s, until_s] of a simulated interval, the sampling
    interval, and time-weighted means of the traces over it: from `means` (a
    `theory.window_means.TraceMeans` declaring this window: the traces streamed once for every
    window), else from ``results.trace`` (the whole table)."""

    def __init__(self, results, from_s: float, until_s: float, step_s: float, means=None):
        self.results, self.from_s, self.until_s, self.step_s = results, from_s, until_s, step_s
        self.means = means

    def flow_mean(self, fid: str, column: str) -> float | None:
        if self.means is not None:
            return self.means.mean("flows", (self.from_s, self.until_s), fid, column)
        t, values = self.results.trace("flows", fid, column)
        return window_mean(t, values, self.from_s, self.until_s, self.step_s)

    def flow_sum(self, fid: str, column: str) -> float:
        if self.means is not None:
            return self.means.sum("flows", (self.from_s, self.until_s), fid, column)
        t, values = self.results.trace("flows", fid, column)
        return window_sum(t, values, self.from_s, self.until_s, self.step_s)

    def link_mean(self, link: str, column: str, direction) -> float | None:
        if self.means is not None:
            return self.means.mean("links", (self.from_s, self.until_s), link, column, direction)
        t, values = self.results.trace("links", link, column, direction=direction)
        return window_mean(t, values, self.from_s, self.until_s, self.step_s)

    def link_sum(self, link: str, column: str, direction) -> float:
        if self.means is not None:
            return self.means.sum("links", (self.from_s, self.until_s), link, column, direction)
        t, values = self.results.trace("links", link, column, direction=direction)
        return window_sum(t, values, self.from_s, self.until_s, self.step_s)

    def backlog_kb(self, link: str, directions) -> float:
        """The summed mean backlog of the link directions that form one resource."""
        return sum(self.link_mean(link, "backlog_kb", label) or 0.0 for label in directions)


def path_loss(results, model, fid: str) -> float:
    """Random-loss probability of the flow's data path, measured over the run: 1 - prod(1 - p_hop)
    with p_hop = impairment_drops / packets_transmitted of each link direction it crosses."""
    links = results.summary["links"]
    keep = 1.0
    for hop in model.paths[fid][0]:
        d = links[hop.link.id]["directions"][hop.label]
        if d["packets_transmitted"]:
            keep *= 1.0 - d["impairment_drops"] / d["packets_transmitted"]
    return 1.0 - keep


def _path_losses(model, fid: str, window: Window, mbps: float) -> tuple:
    """(congestion signals, random drops, the busiest link, its utilization, the queue
    disciplines on the path, the signals by kind) of the flow's data path in the window.
    Congestion signals are the queues' own: buffer overflows, and a queue discipline's drops
    and CE marks (RED, PIE, CoDel), which the random-loss model does not count; by kind:
    {"buffer overflows": n, "<discipline> drops": n, "CE marks": n}."""
    random = 0.0
    signals: dict = {}
    busiest, busiest_util = None, 0.0
    disciplines: list = []
    for hop in model.paths[fid][0]:
        _add(signals, "buffer overflows", window.link_sum(hop.link.id, "drops", hop.label))
        queue = getattr(hop.link, "queue", None)
        discipline = queue.get("discipline", "droptail") if queue else "droptail"
        if discipline != "droptail":
            name = DISCIPLINE_NAMES.get(discipline, discipline)
            if name not in disciplines:
                disciplines.append(name)
            _add(signals, f"{name} drops", window.link_sum(hop.link.id, "aqm_drops", hop.label))
            _add(signals, "CE marks", window.link_sum(hop.link.id, "marks", hop.label))
        random += window.link_sum(hop.link.id, "impairment_drops", hop.label)
        used = window.link_mean(hop.link.id, "rate_mbps",
                                None if hop.link.duplex == "half" else hop.label) or 0.0
        util = used / (hop.link.rate_bps * mbps / 8.0)
        if util > busiest_util:
            busiest, busiest_util = hop.link.id, util
    return sum(signals.values()), random, busiest, busiest_util, disciplines, signals


def _add(counts: dict, kind: str, n: float) -> None:
    counts[kind] = counts.get(kind, 0.0) + n


def _signals_text(signals: dict) -> str:
    """"561 CE marks, 3 CoDel drops" (the kinds that occurred)."""
    return ", ".join(f"{n:.0f} {kind}" for kind, n in signals.items() if n) or "none"


def reordering(model, fid: str) -> str | None:
    """What reorders the packets of the flow's data path, as its link direction and impairment
    (None if nothing does): packets held back (`reorder_rate`), or jitter that may reorder
    (`jitter_reorder`, or netem's jitter). The response functions assume in-order delivery, so
    that every window cut answers a loss."""
    for hop in model.paths[fid][0]:
        impairment = hop.link.impairments[hop.index]
        where = f"{hop.link.id} {hop.label}"
        if impairment.reorder_rate > 0:
            return f"{where}: reorder_rate {impairment.reorder_rate:g}"
        if impairment.jitter_s > 0 and impairment.jitter_reorder:
            return f"{where}: jitter_reorder"
        if impairment.jitter_s > 0 and impairment.jitter_mode == "netem":
            return f"{where}: netem jitter"
    return None


def random_loss(model, fid: str) -> str | None:
    """Where the flow's data path loses packets at random, as its link direction and impairment
    (None if nowhere): the delay-based equilibrium has no loss term."""
    for hop in model.paths[fid][0]:
        impairment = hop.link.impairments[hop.index]
        where = f"{hop.link.id} {hop.label}"
        if impairment.loss_model is not None:
            return f"{where}: a Gilbert-Elliott loss_model"
        if impairment.loss_rate > 0:
            return f"{where}: loss_rate {impairment.loss_rate:g}"
    return None


def bursty_loss(model, fid: str) -> str | None:
    """Where the flow's data path loses packets in bursts (a Gilbert-Elliott `loss_model` whose
    states lose at different rates and persist), as its link direction and model; None if
    nowhere. The response functions' p is a rate of independent losses (Padhye et al. 1998:
    loss indications; a burst in one window cuts it once, but counts every packet in p)."""
    for hop in model.paths[fid][0]:
        m = hop.link.impairments[hop.index].loss_model
        if m is None or m.loss_good == m.loss_bad or m.p_good_to_bad == 0.0 \
                or math.isclose(m.p_good_to_bad + m.p_bad_to_good, 1.0):
            continue                  # (no model, or one whose losses are independent: the
                                      # states lose alike, never change, or do not persist)
        burst = f", bad spells of {1.0 / m.p_bad_to_good:.3g} packets" if m.p_bad_to_good > 0 else ""
        return (f"{hop.link.id} {hop.label}: Gilbert-Elliott loss_model, loss {m.loss_good:g} "
                f"good and {m.loss_bad:g} bad{burst}")
    return None


def sawtooth_mean_fraction(flow_model: str | None, beta: float, region: str | None) -> float:
    """The mean of the window's sawtooth that the response function assumes, as a fraction of its
    peak W: Padhye/Mathis (Reno halves, the window runs linearly from W/2 to W) 3/4; CUBIC's
    Reno-friendly region (linear from beta W to W) (1 + beta) / 2; its cubic region (the cubic
    curve from beta W to W, whose mean is W - C K^3 / 4 with C K^3 = (1 - beta) W) (3 + beta) / 4."""
    if flow_model == "cubic":
        return (3.0 + beta) / 4.0 if region == "cubic" else (1.0 + beta) / 2.0
    return 0.75


def _saturation_problem(fid: str, busiest, util: float, fraction: float, label: str) -> str | None:
    """Why the link, not random loss, sets the rate: the data path's busiest link carries more than
    `fraction` of its capacity, so the flows' windows at their peaks (mean / `fraction`) would
    send more than it carries."""
    if util <= fraction:
        return None
    return (f"{busiest} is {100 * util:.0f} % busy, more than {100 * fraction:.0f} % (the mean "
            f"of the {label} sawtooth relative to its peak): at their peaks the windows fill the "
            f"link, a queue absorbs each decrease and the link, not random loss, sets the rate "
            f"of {fid}")


def loss_row(results, model, fid: str, window: Window, rate_floor: float, mbps: float,
             data_bytes: float):
    """(reason, None) when the response function does not apply, else (None, row).

    It applies when the losses are random (more than `OVERFLOW_SHARE` of the data path's losses
    being buffer overflows, which the loss rate p leaves out, is outside it), the data path
    delivers in order (`reordering`: reordered packets cut the window too) and the round trip
    does not depend on the window: the busiest link of the data path must carry at most the mean
    of the model's sawtooth as a share of its peak (`sawtooth_mean_fraction`: 3/4 for
    Padhye/Mathis), otherwise the windows' peaks fill the link, a queue forms and absorbs each
    decrease (the rate falls less than the window), and the measured RTT varies with the window."""
    f = results.summary["flows"][fid]
    p = path_loss(results, model, fid)
    if p <= 0.0:
        overflow, _, _, _, disciplines, signals = _path_losses(model, fid, window, mbps)
        if disciplines and overflow:
            return (f"no random loss on the data path of {fid}: its congestion signals come "
                    f"from its queues ({' and '.join(disciplines)}: {_signals_text(signals)} in "
                    f"the compared window), which the response functions' loss rate, of random "
                    f"losses only, does not count"), None
        if overflow:
            return (f"no random loss on the data path of {fid}: its losses are buffer overflows "
                    f"(drop-tail synchronisation), which the response functions do not "
                    f"describe"), None
        return (f"no loss on the data path of {fid} in the compared window: the response "
                f"functions need a rate of random losses"), None
    reordered = reordering(model, fid)
    if reordered is not None:
        return (f"the data path of {fid} reorders packets ({reordered}): duplicate ACKs of "
                f"reordered packets start fast retransmits that cut the window as losses do, "
                f"which the loss rate does not count"), None
    bursts = bursty_loss(model, fid)
    if bursts is not None:
        return (f"the data path of {fid} loses packets in bursts ({bursts}): the response "
                f"functions assume independent losses, and a burst in one window cuts it once "
                f"but counts every lost packet in the loss rate"), None
    overflow, random, busiest, util, disciplines, _ = _path_losses(model, fid, window, mbps)
    if overflow > OVERFLOW_SHARE * (overflow + random):
        what = ("buffer overflows and a queue discipline's drops and marks" if disciplines
                else "buffer overflows")
        return (f"{what} are {100 * overflow / (overflow + random):.0f} % of the losses "
                f"({overflow:.0f} of {overflow + random:.0f}) on the data path of {fid}, more "
                f"than {100 * OVERFLOW_SHARE:.0f} %: the loss rate counts random losses only and "
                f"the link, not random loss, sets its rate"), None
    rtt_ms = window.flow_mean(fid, "rtt_ms")
    if rtt_ms is None:
        return f"{fid} took no RTT sample in the compared window", None
    rtt_s = rtt_ms / 1e3
    flow_model = model_of(f["algorithm"])
    inputs: dict = {"loss_rate": p, "rtt_ms": rtt_ms}
    if flow_model == "cubic":
        c, beta = cubic_constants(_params(model, fid))
        rate_pps, region = cubic_rate_pps(p, rtt_s, c, beta)
        inputs["region"] = region
        problem = _saturation_problem(fid, busiest, util, sawtooth_mean_fraction(
            "cubic", beta, region), f"CUBIC {region}")
    else:
        rto_s = (f.get("rto_ms") or 1000.0) / 1e3
        share = f["timeouts"] / f["retransmissions"] if f["retransmissions"] else 0.0
        rate_pps = padhye_q_rate_pps(p, rtt_s, rto_s, share)
        inputs.update({"rto_ms": rto_s * 1e3, "timeout_share": min(1.0, share)})
        problem = _saturation_problem(fid, busiest, util, sawtooth_mean_fraction(
            flow_model, 0.5, None), "Reno")
    if problem:
        return problem, None
    # the response functions count the packets sent (Padhye et al. 1998 §2: "regardless of
    # their eventual fate"); a fraction p of them is lost, and the goodput compared is the rest
    predicted = rate_pps * (1.0 - p) * data_bytes * mbps
    out = row("flow", fid, "rate_mbps", window.flow_mean(fid, "recv_rate_mbps"), predicted,
              predicted, rate_floor)
    out["model"] = ROW_LABELS[flow_model or "loss"]
    out["inputs"] = {k: (round(v, 9) if isinstance(v, float) else v) for k, v in inputs.items()}
    return None, out


def _params(model, fid: str) -> dict:
    """The algorithm parameters of flow `fid` (defaults merged), from the model's spec."""
    if model.spec is None:
        return {}
    for flow in model.spec.flows:
        if flow.id == fid:
            return dict(flow.params)
    return {}


def _flow_loads(model, fids: list, data_bytes: float, ack_bytes: float) -> tuple:
    """(data, ACK) bytes per data packet of each flow of `fids` on each resource: two arrays,
    resources x flows, from the data and the ACK paths."""
    data = np.zeros((len(model.resources), len(fids)))
    acks = np.zeros_like(data)
    for k, fid in enumerate(fids):
        data_path, ack_path = model.paths[fid]
        for hop in data_path:
            data[model.hop_resource[hop], k] += data_bytes
        for hop in ack_path:
            acks[model.hop_resource[hop], k] += ack_bytes
    return data, acks


def _bbr_unfair(results, model, fids, load, used, capacity, rtprop, window: Window,
                data_load) -> tuple:
    """(flow -> why the fair-share model does not hold at a saturated resource it crosses,
    resource index -> why its queue bound does not)."""
    resources = list(model.resources)
    unfair: dict = {}
    unbounded: dict = {}
    saturated = (used >= capacity * (1 - 1e-9)) & load.any(axis=1)
    for r in np.flatnonzero(saturated):
        sharing = [fid for k, fid in enumerate(fids) if load[r, k]]
        props = [rtprop[fid] for fid in sharing]
        overflow = sum(window.link_sum(resources[r].link, "drops", label)
                       for label in resources[r].directions)
        if len(sharing) > 1 and overflow > 0:
            for fid in sharing:
                unfair.setdefault(fid, (
                    f"{resources[r].id} drops packets from its full buffer ({overflow:.0f} in "
                    f"the compared window): BBR v1 ignores these losses and the shares of the "
                    f"flows there are not fair"))
        if len(sharing) > 1 and max(props) > BBR_RTT_SPREAD * min(props):
            for fid in sharing:
                unfair.setdefault(fid, (
                    f"the BBR flows sharing {resources[r].id} have RTprops from "
                    f"{_ms(min(props))} to {_ms(max(props))}: BBR v1 favours the "
                    f"longer ones, and its fair-share model assumes RTprops within a factor "
                    f"{BBR_RTT_SPREAD:g}"))
    for k, fid in enumerate(fids):
        # a flow queueing at several saturated transmitters (a parking lot): BBR v1 keeps about
        # an RTprop of queue per flow at each, so such a flow gets less than max-min, the others more
        crossed = np.flatnonzero(saturated & (data_load[:, k] > 0))
        # (links in tandem that the same flows cross are one constraint: tied, one queue)
        distinct = {(load[r] > 0).tobytes() for r in crossed}
        if len(distinct) > 1:
            names = " and ".join(resources[r].id for r in crossed[:2])
            reason = (f"{fid} crosses {len(crossed)} saturated links ({names}): each BBR v1 flow "
                      f"keeps about an RTprop of its own queue at its bottleneck, so a flow "
                      f"with several queues on its path gets less than its max-min share and "
                      f"the flows beside it more (the fair-share model is of one bottleneck "
                      f"per flow)")
            for r in crossed:
                for j in np.flatnonzero(load[r] > 0):
                    unfair.setdefault(fids[j], reason)
        estimate = _rtprop_estimate(window, fid)
        path_s = _path_rtt(model, fid) if model.spec is not None else None
        if estimate is not None and path_s is not None and math.isfinite(estimate) \
                and estimate > BBR_RTPROP_STALE * path_s:
            reason = (f"{fid}'s RTprop estimate averaged {_ms(estimate)} in the compared window, "
                      f"its path {_ms(path_s)}: its RTprop filter took a standing queue "
                      f"for propagation (a queue other flows kept when it sampled, after a join "
                      f"or through a ProbeRTT), so its inflight cap, 2 x BtlBw x RTprop, is too "
                      f"large: it takes more than its share and keeps more queue than the bound")
            for r in np.flatnonzero(saturated & (load[:, k] > 0)):
                unbounded.setdefault(int(r), reason)
                for j in np.flatnonzero(load[r] > 0):
                    unfair.setdefault(fids[j], reason)
    return unfair, unbounded


def _rtprop_estimate(window: Window, fid: str) -> float | None:
    """The mean of BBR's RTprop estimate (flows.csv `min_rtt_s`) in the window; None where the
    flow has none (a plugin declaring the "rate" model)."""
    try:
        return window.flow_mean(fid, "min_rtt_s")
    except (KeyError, ValueError):
        return None


def bbr_rows(results, model, fids: list, window: Window, rate_floors: dict, mbps: float,
             kb: float, data_bytes: float, ack_bytes: float, packet_kb: float) -> list:
    """BBR flows: delivery rate = max-min fair share; bottleneck queue <= one BDP (and buffer)."""
    resources = list(model.resources)
    data_load, ack_load = _flow_loads(model, fids, data_bytes, ack_bytes)
    load = data_load + ack_load
    capacity = np.array([r.capacity_Bps for r in resources])
    rates = fair_share_rates(capacity, data_load, ack_load)       # data packets/s
    summary = results.summary
    used = load @ rates
    rtprop = _rtprops(results, model, fids)
    unfair, unbounded = _bbr_unfair(results, model, fids, load, used, capacity, rtprop, window,
                                    data_load)
    rows = []
    for k, fid in enumerate(fids):
        simulated = window.flow_mean(fid, "recv_rate_mbps")
        if fid in unfair:
            rows.append(no_model("flow", fid, "rate_mbps", simulated, unfair[fid]))
            continue
        predicted = rates[k] * data_bytes * mbps
        rows.append(dict(row("flow", fid, "rate_mbps", simulated, predicted, predicted,
                             rate_floors[fid]), model=ROW_LABELS["rate"]))
    for r, resource in enumerate(resources):
        if used[r] < capacity[r] * (1 - 1e-9) or not load[r].any():
            continue
        sharing = [k for k in range(len(fids)) if load[r, k]]
        # inflight <= cwnd_gain x BtlBw x RTprop; with several flows each one's max-filtered BtlBw
        # can be its probing rate (pacing gain 1.25 x its share): queue <= (2 x 1.25 - 1) BDP
        bound = 0.0
        for k in sharing:
            cwnd_gain, probe_gain = bbr_gains(_params(model, fids[k]))
            gain = cwnd_gain * (probe_gain if len(sharing) > 1 else 1.0) - 1.0
            bound += gain * rates[k] * load[r, k] * rtprop[fids[k]]
        buffer_kb = summary["links"][resource.link]["buffer_kb"]
        simulated = window.backlog_kb(resource.link, resource.directions)
        if r in unbounded:                # (a flow there with a stale RTprop: no cap of its own)
            rows.append(no_model("link", resource.id, "backlog_kb", simulated, unbounded[r]))
            continue
        if bound / kb >= buffer_kb:       # a bound the buffer enforces anyway: nothing to test
            rows.append(no_model("link", resource.id, "backlog_kb", simulated, (
                f"BBR's queue bound at {resource.id} ({bound / kb:.3f} KB) is at least its "
                f"buffer ({buffer_kb:g} KB): no backlog can exceed it")))
            continue
        bound_kb = bound / kb
        rows.append(dict(row("link", resource.id, "backlog_kb", simulated, 0.0,
                             max(bound_kb, packet_kb), max(bound_kb, packet_kb)),
                         model=ROW_LABELS["rate"]))
    return rows


def _rtprops(results, model, fids: list) -> dict:
    """Flow -> its round-trip propagation time: the base RTT it measured, else its path's."""
    rtprop = {}
    for fid in fids:
        base_ms = results.summary["flows"][fid].get("base_rtt_ms")
        rtprop[fid] = base_ms / 1e3 if base_ms else _path_rtt(model, fid)
    return rtprop


def dctcp_queue_pkts(n_flows: int, bdp_pkts: float, k_pkts: float) -> tuple:
    """(Q_min, Q_max) of the bottleneck queue, in packets, by the sawtooth analysis of DCTCP
    (Alizadeh et al., SIGCOMM 2010, Section 3.3; N synchronized flows, small g): the queue peaks
    at Q_max = K + N and falls by A = (1/2) sqrt(2 N (C RTT + K)) each cycle."""
    q_max = k_pkts + n_flows
    return q_max - 0.5 * math.sqrt(2.0 * n_flows * (bdp_pkts + k_pkts)), q_max


def _dctcp_bottleneck(model, resource, sharing: list, rtprop: dict, rate_pps: float,
                      data_bytes: float, elsewhere: dict | None = None):
    """(reason the model does not hold at this resource or None, (Q_min, Q_max) in packets).
    `elsewhere`: flow -> its measured mean RTT less this resource's queueing delay (its round
    trip apart from this queue, queues on its other links included)."""
    queue = model.spec.link(resource.link).queue if model.spec is not None else None
    if not queue or queue.get("discipline") != "step":
        return (f"{resource.id} does not mark at a threshold (no step queue discipline): DCTCP's "
                f"model needs step marking at K"), None
    props = [rtprop[fid] for fid in sharing]
    if max(props) > BBR_RTT_SPREAD * min(props):
        return (f"the DCTCP flows sharing {resource.id} have RTprops from {_ms(min(props))} "
                f"to {_ms(max(props))}: the analysis assumes one RTT (within a factor "
                f"{BBR_RTT_SPREAD:g})"), None
    others = [(elsewhere or {}).get(fid, rtprop[fid]) for fid in sharing]
    if max(others) > BBR_RTT_SPREAD * min(others):
        return (f"the DCTCP flows sharing {resource.id} have round trips from {_ms(min(others))} "
                f"to {_ms(max(others))} apart from its queue (their mean RTTs less its queueing "
                f"delay: queues on their other links, e.g. on an ACK path, count), RTprops from "
                f"{_ms(min(props))} to {_ms(max(props))}: the analysis assumes one RTT (within "
                f"a factor {BBR_RTT_SPREAD:g})"), None
    bdp_pkts = rate_pps * sum(props) / len(props)
    k_pkts = queue["k_bytes"] / data_bytes
    q_min, q_max = dctcp_queue_pkts(len(sharing), bdp_pkts, k_pkts)
    if q_min <= 0.0:
        return (f"K = {k_pkts:.1f} packets at {resource.id} is too small for its C x RTT of "
                f"{bdp_pkts:.1f} packets (Q_min {q_min:.1f} < 0): the sawtooth may empty the "
                f"queue, a regime the analysis (which needs Q_min > 0) does not describe"), None
    return None, (q_min, q_max)


def paced_upstream(model, fids: list, r: int, saturated, capacity) -> dict | None:
    """Flow -> the saturated resource nearest before `r` on its data path whose capacity is at
    most r's, for every flow of `fids` whose data crosses resource `r`; None when a flow reaches r
    without one (its packets may arrive faster than r drains: r can hold a standing queue)."""
    paced: dict = {}
    for fid in fids:
        indices = [model.hop_resource[hop] for hop in model.paths[fid][0]]
        if r not in indices:
            continue
        before = [u for u in indices[:indices.index(r)]
                  if saturated[u] and capacity[u] <= capacity[r] * (1 + 1e-9)]
        if not before:
            return None
        paced[fid] = before[-1]
    return paced


def dctcp_rows(results, model, fids: list, window: Window, rate_floors: dict, mbps: float,
               kb: float, data_bytes: float, ack_bytes: float) -> list:
    """DCTCP flows: at each saturated resource with step marking, the fair share (full
    throughput while Q_min > 0) and the queue between Q_min and Q_max (`dctcp_queue_pkts`).
    A saturated resource whose every flow arrives through a saturated resource of the same or a
    lower rate earlier on its data path (equal links in tandem: the queue forms at the first)
    holds no standing queue: its backlog is compared with [0, one data packet per such upstream
    resource] (`paced_upstream`)."""
    resources = list(model.resources)
    data_load, ack_load = _flow_loads(model, fids, data_bytes, ack_bytes)
    load = data_load + ack_load
    capacity = np.array([r.capacity_Bps for r in resources])
    rates = fair_share_rates(capacity, data_load, ack_load)       # data packets/s
    used = load @ rates
    saturated = (used >= capacity * (1 - 1e-9)) & load.any(axis=1)
    rtprop = _rtprops(results, model, fids)
    data_on = {fid: {model.hop_resource[hop] for hop in model.paths[fid][0]} for fid in fids}
    unfit: dict = {}
    link_rows = []
    pacing = {}                           # saturated resource -> paced_upstream of its flows
    for index in np.flatnonzero(saturated):
        sharing = [fid for fid in fids if index in data_on[fid]]
        if sharing:                       # (saturated by ACKs alone: no data queue to predict)
            pacing[int(index)] = (sharing, paced_upstream(model, sharing, int(index), saturated,
                                                          capacity))
    # where a standing queue forms, in the order of each flow's data path
    queues_of = {fid: [model.hop_resource[hop] for hop in model.paths[fid][0]
                       if pacing.get(model.hop_resource[hop], (None, True))[1] is None]
                 for fid in fids}
    for r, (sharing, paced) in pacing.items():
        resource = resources[r]
        simulated = window.backlog_kb(resource.link, resource.directions)
        if paced is not None:
            feeders = sorted({resources[u].id for u in paced.values()})
            out = row("link", resource.id, "backlog_kb", simulated, 0.0,
                      len(feeders) * data_bytes / kb, data_bytes / kb)
            out.update(model=ROW_LABELS["dctcp"], inputs={"paced_by": feeders})
            link_rows.append(out)
            continue
        rate_pps = float(sum(rates[k] for k, fid in enumerate(fids) if fid in sharing))
        queue_s = simulated * kb / resource.capacity_Bps
        elsewhere = {}
        for fid in sharing:
            mean_ms = window.flow_mean(fid, "rtt_ms")
            if mean_ms is not None:
                elsewhere[fid] = max(rtprop[fid], mean_ms / 1e3 - queue_s)
        reason, queue = _parking_lot(sharing, queues_of, resources), None
        if reason is None:
            reason, queue = _dctcp_bottleneck(model, resource, sharing, rtprop, rate_pps,
                                              data_bytes, elsewhere)
        if reason is not None or queue is None:
            for fid in sharing:
                unfit.setdefault(fid, reason)
            link_rows.append(no_model("link", resource.id, "backlog_kb", simulated, str(reason)))
            continue
        compressed = _acks_queued(fids, sharing, int(r), saturated, data_load, ack_load)
        if compressed is not None:
            fid, u = compressed
            link_rows.append(no_model(
                "link", resource.id, "backlog_kb", simulated,
                f"the ACKs of {fid} wait in the standing queue of {resources[u].id} (ACK "
                f"compression): they arrive in bursts, and the sawtooth model needs evenly "
                f"clocked flows"))
            continue
        low, high = (q * data_bytes / kb for q in queue)
        link_rows.append(dict(row("link", resource.id, "backlog_kb", simulated, low, high,
                                  data_bytes / kb), model=ROW_LABELS["dctcp"]))
    rows = []
    for k, fid in enumerate(fids):
        simulated_rate = window.flow_mean(fid, "recv_rate_mbps")
        if fid in unfit:
            rows.append(no_model("flow", fid, "rate_mbps", simulated_rate, unfit[fid]))
            continue
        predicted = rates[k] * data_bytes * mbps
        rows.append(dict(row("flow", fid, "rate_mbps", simulated_rate, predicted, predicted,
                             rate_floors[fid]), model=ROW_LABELS["dctcp"]))
    return rows + link_rows


def _parking_lot(sharing: list, queues_of: dict, resources: list) -> str | None:
    """Why DCTCP's analysis does not hold where `sharing` meet, when one of them queues at two
    or more saturated resources on its data path (a parking lot), else None. Such a flow is
    marked at each, so it cuts its window for either queue, and it gets less than the fair
    share that both the analysis (one bottleneck per flow) and max-min fairness give it; its
    minimum RTT then holds the other queue too, which is why this is asked before the RTTs."""
    for fid in sharing:
        queues = queues_of[fid]
        if len(queues) > 1:
            names = " and ".join(resources[u].id for u in queues[:2])
            return (f"{fid} queues at {len(queues)} bottlenecks on its path ({names}): DCTCP "
                    f"marks it at each, and the analysis (Alizadeh et al. 2010, Section 3.3) "
                    f"is of flows with one bottleneck")
    return None


def _acks_queued(fids: list, sharing: list, r: int, saturated, data_load, ack_load):
    """(flow, resource) where a flow of `sharing` (at saturated resource `r`) has its ACKs
    wait in another saturated resource's data queue, or None. Such ACKs leave that queue in
    bursts (ACK compression: Zhang, Shenker and Clark, SIGCOMM 1991), and so do the flow's
    packets after them."""
    for k, fid in enumerate(fids):
        if fid not in sharing:
            continue
        for u in np.flatnonzero(saturated & (ack_load[:, k] > 0) & data_load.any(axis=1)):
            if u != r:
                return fid, int(u)
    return None


def _path_rtt(model, fid) -> float:
    data_path, ack_path = model.paths[fid]
    return path_rtt_s(data_path, ack_path, model.spec.packet_sizes)
