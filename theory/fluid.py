"""Analytic predictions for delay-based flows, and how far a run is from them.

`theory.equilibrium` solves one equilibrium from matrices; this module builds those matrices from a
topology and chains equilibria over time:

* **Resources** are the transmitters: a full-duplex link has one per direction, a half-duplex link
  one for both directions (they share a FIFO). Capacity = rate / 8 bytes per second.
* **Paths** are the static shortest paths the run starts with (`routing.static`), or the paths
  given (`paths`: after a run, those its flows took, `theory.check.predict_run`): the data path
  from source to destination and the ACK path back. One data packet of flow i puts
  `A[r, i]` = data bytes (+ ACK bytes where its ACK crosses r too) on resource r, and its round
  trip waits `M[r, i]` times in r's queue (2 on a half-duplex link the flow crosses: data and ACK
  both queue in the same FIFO). Predictions assume the routes stay put: with Bellman-Ford on a
  topology with equal-cost alternatives (test case 1) there is no steady state to predict.
* **FAST**: each flow keeps alpha of its packets queued, x_i (q_i - e_i) = alpha_i. **Vegas**: the
  same with each flow's backlog w_i anywhere in [alpha_i, beta_i], independently: every point of
  that box is an equilibrium, and each predicted quantity (a flow's rate, its queueing delay, a
  resource's backlog) is the interval from its smallest to its largest value over the box's
  corners (`_extremes`). Why corners: where every queue is at one resource (one bottleneck), the
  common delay p solves sum_i w_i / (p - e_i) = c, so p, every q_i and the backlog grow with each
  w_j, and x_i = w_i / (p - e_i) grows with w_i and falls with every other w_j: each quantity is
  monotone in each w_j on the whole box, and a function monotone in each coordinate takes its
  extremes at corners. With several bottlenecks the direction differs (in a parking lot a larger
  backlog of the flow on L2 slows the long flow and so *speeds up* the flow on L1 alone: that
  flow's highest rate is where the long flow keeps alpha and both short flows beta, not where
  every other flow keeps alpha), but the quantities stayed monotone in each w_j in every network
  tried (tests/test_vegas_intervals.py samples the inside of the box of a parking lot, a chain of
  three unequal links and one link); that is not proven in general, so the corners are exact
  where it holds and an approximation otherwise. Cost: flows with the same path, alpha, beta and baseRTT error
  are interchangeable, so only how many of each such group keep beta matters: prod(n_g + 1)
  equilibria (FAST flows, alpha = beta, count once). Above `CORNER_LIMIT` the corners are chosen
  by the direction each w_j moves each quantity between alpha and beta with the others at the
  box's centre (2 solves per flow, then at most 2 per quantity): the same corners whenever the
  directions do not change across the box.
* **Late joiners**: a flow that starts while its path holds a queue measures its baseRTT too high
  by that queue; e_i is the queueing delay its round trip had in the equilibrium just before it
  joined, and it keeps it for its lifetime (transients that might let it see a lower RTT later are
  not modelled).
* **Ties**: saturated resources crossed by exactly the same flows the same way (equal-capacity
  links in tandem) have identical constraints, so the model fixes only the sum of their queues;
  the solver puts it on the first along the path, and such resources are reported as one group.
* **Timeline**: from the flows' start times and sizes the equilibria are chained interval by
  interval; a flow departs when the data it still has, sent at the predicted rate, is done.
  Transients (slow start, convergence) are not modelled, which is why `compare` skips a settling
  time after each change.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from theory.equilibrium import solve_equilibrium
from theory.link_changes import LinkTimeline
from theory.models import model_of
from theory.paths import Hop, NoRouteError, Paths, path_rtt_s
from topologies.spec import TopologySpec

DEFAULT_SETTLE_S = 2.0
CORNER_LIMIT = 64        # Vegas: most equilibria (corners, up to symmetry) solved per interval


def is_delay_based(flow) -> bool:
    """Whether the FlowSpec's algorithm declares the fluid model of delay-based flows."""
    return model_of(flow.algorithm) == "delay"


class TheoryError(ValueError):
    """The topology has no analytic prediction (e.g. a flow whose algorithm has no model)."""


@dataclass
class Resource:
    """A transmitter: one direction of a full-duplex link, or a whole half-duplex link."""

    id: str                  # "L1" for a half-duplex link, "L1 R1->R2" for a direction
    link: str
    directions: tuple        # labels of the link directions that share it
    capacity_Bps: float


@dataclass
class FlowModel:
    """One delay-based flow (FAST, Vegas: `is_delay_based`) as the fluid model sees it: alpha and
    beta in packets, the data packet's size and the flow's data in bytes, start and base RTT in s."""

    id: str
    algorithm: str
    alpha: float             # packets (Vegas: its alpha)
    beta: float              # packets (FAST: = alpha)
    data_bytes: float        # bytes per data packet
    size_bytes: float | None # the flow's data (None: endless)
    start_s: float
    base_rtt_s: float        # propagation + transmission, data path and ACK path


@dataclass
class Interval:
    """One piece of the predicted timeline: which flows are active and their equilibrium."""

    start_s: float
    end_s: float
    flows: list                            # ids of the active flows, file order
    rates_pps: dict                        # flow -> data packets/s (low/high for Vegas)
    rates_pps_high: dict
    queue_delay_s: dict                    # flow -> q_i
    queue_delay_s_high: dict
    backlog_bytes: dict                    # resource id -> bytes
    backlog_bytes_high: dict
    joined_delay_s: dict                   # flow -> e_i
    groups: list                           # tuples of resource ids whose queues are tied


@dataclass
class Model:
    """Resources, flows and the matrices of a topology."""

    resources: list
    flows: list
    A: np.ndarray
    M: np.ndarray
    rank: np.ndarray
    timeline: list = field(default_factory=list)
    finish_s: dict = field(default_factory=dict)   # flow -> predicted completion time
    others: list = field(default_factory=list)     # FlowSpecs of flows outside the fluid model
    paths: dict = field(default_factory=dict)      # flow id -> (data path, ACK path), every flow
    hop_resource: dict = field(default_factory=dict)   # Hop -> resource index
    spec: TopologySpec | None = None
    measured_base_rtt_s: dict = field(default_factory=dict)   # flow -> baseRTT read from a run
    run_paths: dict | None = None   # flow id -> `theory.paths.RunPaths` the run took (predict_run)
    # workload id -> (hops its flows' data may cross, their ACKs'): `theory.paths.workload_hops`
    workload_hops: dict = field(default_factory=dict)
    # the first change of a link on the delay-based flows' paths (`theory.link_changes`): the
    # timeline and the completion times stop there (None: their links never change)
    horizon_s: float | None = None


def build_model(spec: TopologySpec, *, others_ok: bool = False,
                paths: dict | None = None) -> Model:
    """Resources, flow models and A/M matrices of `spec`'s delay-based flows.

    A flow with another algorithm raises `TheoryError`, unless `others_ok`: then it is listed in
    `model.others` (its FlowSpec) and left out of the matrices (`--check` compares such flows with
    their own models, `theory.check`). `model.paths` holds every flow's (data path, ACK path) and
    `model.hop_resource` the resource index of each hop. `paths` (flow id -> (data path, ACK
    path) in `Hop`s, e.g. the paths a run's flows took: `theory.paths.run_paths`) replaces the
    static shortest paths of the flows it names."""
    others = [f"{f.id} ({f.algorithm})" for f in spec.flows if not is_delay_based(f)]
    if others and not others_ok:
        from flows import ALGORITHMS
        covered = [name for name in ALGORITHMS if model_of(name) == "delay"]
        raise TheoryError("no analytic equilibrium model for flows " + ", ".join(others)
                          + "; the model covers " + " and ".join(covered))
    resources: list = []
    index: dict = {}
    for link in spec.links:
        hops = (Hop(link, 0), Hop(link, 1))
        groups = [hops] if link.duplex == "half" else [(hop,) for hop in hops]
        for group in groups:
            rid = link.id if link.duplex == "half" else f"{link.id} {group[0].label}"
            for hop in group:
                index[hop] = len(resources)
            resources.append(Resource(rid, link.id, tuple(hop.label for hop in group), link.rate_bps / 8.0))
    sizes = spec.packet_sizes
    delay_based = [fs for fs in spec.flows if is_delay_based(fs)]
    A = np.zeros((len(resources), len(delay_based)))
    M = np.zeros_like(A)
    rank = np.full(len(resources), 10**6, dtype=float)
    flows, all_paths = [], {}
    given = paths or {}
    static = Paths(spec) if any(fs.id not in given for fs in spec.flows) else None
    for fs in spec.flows:
        if fs.id in given:
            all_paths[fs.id] = given[fs.id]
            continue
        try:
            all_paths[fs.id] = static.flow_paths(fs)          # type: ignore[union-attr]
        except NoRouteError as exc:
            raise TheoryError(str(exc)) from None
    for i, fs in enumerate(delay_based):
        data_path, ack_path = all_paths[fs.id]
        for position, d in enumerate(data_path):
            A[index[d], i] += sizes.data_bytes
            M[index[d], i] += 1
            rank[index[d]] = min(rank[index[d]], position)
        for position, d in enumerate(ack_path):
            A[index[d], i] += sizes.ack_bytes
            M[index[d], i] += 1
            rank[index[d]] = min(rank[index[d]], len(data_path) + position)
        base = path_rtt_s(data_path, ack_path, sizes)
        if "alpha" not in fs.params:
            raise TheoryError(f"flow {fs.id} ({fs.algorithm}): the delay model needs the "
                              f"algorithm's parameter alpha (packets kept queued)")
        alpha = float(fs.params["alpha"])
        beta = float(fs.params.get("beta", alpha))
        flows.append(FlowModel(fs.id, fs.algorithm, alpha, beta, float(sizes.data_bytes),
                               None if fs.data_bytes is None else float(fs.data_bytes),
                               fs.start_s, base))
    model = Model(resources, flows, A, M, rank)
    model.others = [fs for fs in spec.flows if not is_delay_based(fs)]
    model.paths = all_paths
    model.hop_resource = index
    model.spec = spec
    return model


def tied_groups(model: Model, active: list, rates: np.ndarray) -> list:
    """Resource ids grouped: saturated resources with identical rows of M over the active flows
    form one group (their queues are not separately determined); every other resource alone."""
    columns = np.array(active, dtype=int)
    load = model.A[:, columns] @ rates
    groups: list = []
    by_row: dict = {}
    for r, resource in enumerate(model.resources):
        if load[r] >= resource.capacity_Bps * (1 - 1e-9):
            key = tuple(np.round(model.M[r, columns], 9))
            if key in by_row:
                groups[by_row[key]].append(resource.id)
                continue
            by_row[key] = len(groups)
        groups.append([resource.id])
    return [tuple(group) for group in groups]


def _solve(model: Model, active: list, targets: np.ndarray, joined: np.ndarray):
    columns = np.array(active, dtype=int)
    capacity = np.array([r.capacity_Bps for r in model.resources])
    return solve_equilibrium(capacity, model.A[:, columns], model.M[:, columns], targets,
                             joined_delay=joined, rank=model.rank)


def _equilibria(model: Model, active: list, joined: dict) -> tuple:
    """(equilibrium with every active flow at alpha, at beta, the extremes of each quantity over
    the box of backlogs [alpha_i, beta_i]: `_extremes`)."""
    flows = model.flows
    e = np.array([joined[i] for i in active])
    alphas = np.array([flows[i].alpha for i in active])
    betas = np.array([flows[i].beta for i in active])
    solved: dict = {}

    def solve(targets: np.ndarray):
        key = tuple(float(t) for t in targets)
        if key not in solved:
            solved[key] = _solve(model, active, np.array(key), e)
        return solved[key]

    low, high = solve(alphas), solve(betas)
    return low, high, _extremes(model, active, alphas, betas, e, solve)


def _flow_groups(model: Model, active: list, alphas, betas, e) -> list:
    """The active flows (positions in `active`) whose backlog may vary (alpha < beta), in groups
    of interchangeable flows: the same path (columns of A and M), alpha, beta and baseRTT error."""
    groups: dict = {}
    for k, i in enumerate(active):
        if alphas[k] == betas[k]:
            continue
        key = (tuple(model.A[:, i]), tuple(model.M[:, i]), alphas[k], betas[k], e[k])
        groups.setdefault(key, []).append(k)
    return list(groups.values())


def _values(eq) -> np.ndarray:
    """The predicted quantities of one equilibrium: rates, queueing delays, resource backlogs."""
    return np.concatenate([eq.rates, eq.queue_delays, eq.backlog_bytes])


def _extremes(model: Model, active: list, alphas, betas, e, solve) -> tuple:
    """(lowest, highest) of every quantity of `_values` over the equilibria with each flow's
    backlog in [alpha, beta], taken at the box's corners (module docstring): every corner up to
    the symmetry of interchangeable flows when there are at most `CORNER_LIMIT` of them, else the
    corners chosen by the direction each backlog moves each quantity."""
    n = len(active)
    groups = _flow_groups(model, active, alphas, betas, e)
    base = _values(solve(alphas))
    lowest, highest = base.copy(), base.copy()
    if not groups:
        return lowest, highest
    if math.prod(len(g) + 1 for g in groups) <= CORNER_LIMIT:
        for counts in itertools.product(*(range(len(g) + 1) for g in groups)):
            targets = alphas.copy()
            for group, count in zip(groups, counts):
                targets[group[:count]] = betas[group[:count]]
            values = _values(solve(targets))
            lowest = np.minimum(lowest, _symmetric(values, groups, n, np.min))
            highest = np.maximum(highest, _symmetric(values, groups, n, np.max))
        return lowest, highest
    return _directed_extremes(alphas, betas, solve, lowest, highest)


def _symmetric(values: np.ndarray, groups: list, n: int, pick) -> np.ndarray:
    """`values` with each group's rates and queueing delays replaced by `pick` over the group:
    the flows of a group are interchangeable, so what one member has at this corner another has
    at the corner with the two swapped."""
    out = values.copy()
    for group in groups:
        for offset in (0, n):
            members = [offset + k for k in group]
            out[members] = pick(values[members])
    return out


def _directed_extremes(alphas, betas, solve, lowest, highest) -> tuple:
    """Extremes at the corners the directions choose: with every other flow at the centre of
    its range, the quantities are solved with flow k at alpha and at beta; a quantity's highest
    corner puts flow k at beta where that raised it (or left it unchanged), else at alpha, and
    its lowest corner the reverse. Every equilibrium solved on the way counts too."""
    centre = 0.5 * (alphas + betas)
    varying = np.flatnonzero(alphas != betas)
    rises = []
    for k in varying:
        at_alpha, at_beta = centre.copy(), centre.copy()
        at_alpha[k], at_beta[k] = alphas[k], betas[k]
        v_alpha, v_beta = _values(solve(at_alpha)), _values(solve(at_beta))
        lowest = np.minimum(lowest, np.minimum(v_alpha, v_beta))
        highest = np.maximum(highest, np.maximum(v_alpha, v_beta))
        rises.append(v_beta >= v_alpha)
    up = np.array(rises)                 # (varying flow, quantity): beta raises the quantity
    for q in range(len(lowest)):
        top, bottom = alphas.copy(), betas.copy()
        top[varying] = np.where(up[:, q], betas[varying], alphas[varying])
        bottom[varying] = np.where(up[:, q], alphas[varying], betas[varying])
        highest[q] = max(highest[q], _values(solve(top))[q])
        lowest[q] = min(lowest[q], _values(solve(bottom))[q])
    return lowest, highest


def _interval(model: Model, active: list, joined: dict, span: tuple, low,
              extremes: tuple) -> Interval:
    """The timeline piece [span] of the active flows: each quantity's (lowest, highest) from
    `extremes` (`_extremes`); the tied resource groups from the equilibrium `low` (all alpha)."""
    flows = model.flows
    ids = [flows[i].id for i in active]
    rid = [r.id for r in model.resources]
    n = len(active)
    lowest, highest = extremes
    return Interval(span[0], span[1], ids,
                    dict(zip(ids, lowest[:n])), dict(zip(ids, highest[:n])),
                    dict(zip(ids, lowest[n:2 * n])), dict(zip(ids, highest[n:2 * n])),
                    dict(zip(rid, lowest[2 * n:])), dict(zip(rid, highest[2 * n:])),
                    {flows[i].id: joined[i] for i in active}, tied_groups(model, active, low.rates))


def predict(spec: TopologySpec, duration_s: float | None = None, *,
            base_rtts_s: dict | None = None, others_ok: bool = False,
            paths: dict | None = None) -> Model:
    """The model of `spec` with its predicted timeline and completion times.

    Without `base_rtts_s` a flow's baseRTT error e_i is the queueing delay its path had when it
    joined (the late-joiner rule). `base_rtts_s` (flow id -> the baseRTT the flow measured, s, as
    `summary.json` `base_rtt_ms` reports it after a run) replaces that guess by the measurement:
    e_i = measured - propagation-and-transmission round trip (at least 0), so flows whose first
    packets met another flow's slow-start queue are predicted as well as late joiners.
    `others_ok`, `paths`: see `build_model`."""
    model = build_model(spec, others_ok=others_ok, paths=paths)
    measured = {} if base_rtts_s is None else {
        f.id: max(0.0, float(base_rtts_s[f.id]) - f.base_rtt_s) for f in model.flows
        if base_rtts_s.get(f.id) is not None}
    model.measured_base_rtt_s = {fid: (base_rtts_s or {})[fid] for fid in measured}
    end_s = duration_s if duration_s is not None else spec.duration_s
    flows = model.flows
    used = {hop.link.id for f in flows for path in model.paths[f.id] for hop in path}
    model.horizon_s = LinkTimeline(spec).first_change_s(used)
    if model.horizon_s is not None and (end_s is None or model.horizon_s < end_s):
        end_s = model.horizon_s          # (beyond it the links are not the model's)
    pending = sorted(range(len(flows)), key=lambda i: (flows[i].start_s, i))
    remaining = {i: flows[i].size_bytes for i in range(len(flows))}
    joined: dict = {}
    active: list = []
    prices = np.zeros(len(model.resources))
    now = flows[pending[0]].start_s if pending else 0.0
    while pending or active:
        if end_s is not None and now >= end_s:
            break
        while pending and flows[pending[0]].start_s <= now:
            i = pending.pop(0)
            joined[i] = measured.get(flows[i].id, float(model.M[:, i] @ prices))
            active.append(i)
        active.sort()
        mid_rate: dict = {}
        if active:
            low, high, extremes = _equilibria(model, active, joined)
            prices = low.prices
            mid_rate = {i: 0.5 * (low.rates[k] + high.rates[k]) * flows[i].data_bytes
                        for k, i in enumerate(active)}
        next_start = flows[pending[0]].start_s if pending else math.inf
        finishes = {i: now + remaining[i] / mid_rate[i] for i in active if remaining[i] is not None}
        next_finish = min(finishes.values(), default=math.inf)
        nxt = min(next_start, next_finish, end_s if end_s is not None else math.inf)
        if math.isinf(nxt):
            raise TheoryError("the predicted timeline never ends: a flow without data_mb and no "
                              "duration")
        if active:
            model.timeline.append(_interval(model, active, joined, (now, nxt), low, extremes))
        for i in active:
            if remaining[i] is not None:
                remaining[i] = max(0.0, remaining[i] - mid_rate[i] * (nxt - now))
        done = [i for i in active if i in finishes and finishes[i] <= nxt * (1 + 1e-12)]
        for i in done:
            model.finish_s[flows[i].id] = finishes[i]
            active.remove(i)
        if not active:
            prices = np.zeros(len(model.resources))
        now = nxt
        if end_s is not None and now >= end_s:
            break
    return model
