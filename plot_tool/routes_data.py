"""The routes of routing.png, as data: one `RouteSeries` per router and destination from
routes.csv, those whose next hop changed (or, when none did, whose cost varied most), routes whose
lines would coincide merged into one labelled with all of them, and the width of a line that later
lines partly cover (front end; no matplotlib).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from plot_tool.results import Table

ROUTING_FILENAME = "routing.png"


MAX_ROUTE_LINES = 12          # routing.png: at most this many router -> destination lines


MAX_COST_ONLY_LINES = 6       # lines when no next hop changed (costs only: the widest ranges)


# Two route lines closer than this fraction of the panel's range (about one pixel), on both axes,
# at every instant are drawn once, labelled with both routes.
COINCIDENT_FRACTION = 0.003


ROUTE_WIDTH = 1.4             # route line width; a line that a later one covers is drawn wider


ROUTE_HALO = 1.3              # ... by this much per later line covering it (at most 3)


@dataclass
class RouteSeries:
    """The forwarding-table entry of one router for one destination, over the run.

    Row i holds the entry installed at ``time[i]`` (row 0: the static table of t=0), in force
    until ``time[i + 1]``. ``cost_ms`` is inf and ``next_hop`` and ``link`` are "" while the
    destination is unreachable. ``also`` lists other (router, destination) pairs whose line
    coincides with this one (drawn once, labelled with all of them).
    """

    router: str
    destination: str
    time: np.ndarray
    cost_ms: np.ndarray
    next_hop: np.ndarray
    link: np.ndarray
    color: str | None = None
    also: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """"R1 → T1"; for coincident routes one line per router: "R1 → T1, T3\\nR4 → S2"."""
        by_router: dict[str, list[str]] = {}
        for router, destination in ((self.router, self.destination), *self.also):
            by_router.setdefault(router, []).append(destination)
        return "\n".join(f"{router} \u2192 {', '.join(dests)}"
                         for router, dests in by_router.items())

    @property
    def changes(self) -> np.ndarray:
        """Indices of the installations that changed the next hop or the link to it (never 0)."""
        hops, links = self.next_hop, self.link
        return np.flatnonzero((hops[1:] != hops[:-1]) | (links[1:] != links[:-1])) + 1

    def change_label(self, i: int) -> str:
        """"via R3" for change `i`; "via R3 (L7)" when only the link changed (parallel links);
        "no route" when the destination became unreachable."""
        if not np.isfinite(self.cost_ms[i]) or not self.next_hop[i]:
            return "no route"
        if i > 0 and self.next_hop[i] == self.next_hop[i - 1]:
            return f"via {self.next_hop[i]} ({self.link[i]})"
        return f"via {self.next_hop[i]}"


def known_routers(summary: dict, routes: Table | None) -> dict:
    """Router ids: summary["routers"] (newer results), else those of the routes table."""
    known = summary.get("routers")
    if isinstance(known, dict) and known:
        return known
    if routes is None:
        return {}
    return dict.fromkeys(routes["router"].tolist())


def routes_changed(routes: Table | None) -> bool:
    """Whether a forwarding table changed after the static tables of t = 0."""
    return routes is not None and bool(np.any(routes["time_s"] > 0))


def route_series(routes: Table, router_ids: Sequence[str], *,
                  ecmp: bool = False) -> list[RouteSeries]:
    """One `RouteSeries` per (router, destination) of the selected routers, in router order, then
    destinations in order of first appearance (the t = 0 rows list them in the topology's order)."""
    order = np.argsort(routes["time_s"], kind="stable")
    time = routes["time_s"][order]
    router, destination = routes["router"][order], routes["destination"][order]
    cost, hop, link = routes["cost_ms"][order], routes["next_hop"][order], routes["link"][order]
    out: list[RouteSeries] = []
    for router_id in router_ids:
        mine = router == router_id
        for dest in dict.fromkeys(destination[mine].tolist()):
            rows = mine & (destination == dest)
            t, c, h, k = time[rows], cost[rows], hop[rows], link[rows]
            if ecmp:                   # a set's members share a time: one row per set
                t, c, h, k = _ecmp_sets(t, c, h, k)
            out.append(RouteSeries(router=router_id, destination=dest, time=t, cost_ms=c,
                                   next_hop=h, link=k))
    return out


def _ecmp_sets(time, cost, hop, link):
    """One row per installation: with ECMP an installation writes one row per member of the
    equal-cost set (same time); those become one row whose next hop and link are the members
    joined by " | " (docs/outputs.md, routes.csv)."""
    if len(time) < 2 or not np.any(time[1:] == time[:-1]):
        return time, cost, hop, link
    starts = np.flatnonzero(np.r_[True, time[1:] != time[:-1]])
    ends = np.r_[starts[1:], len(time)]
    joined_hops = np.array([" | ".join(hop[a:b].tolist()) for a, b in zip(starts, ends)],
                           dtype=object)
    joined_links = np.array([" | ".join(link[a:b].tolist()) for a, b in zip(starts, ends)],
                            dtype=object)
    return time[starts], cost[starts], joined_hops, joined_links


def routes_to_plot(series: Sequence[RouteSeries], limit: int = MAX_ROUTE_LINES, *,
                    end_s: float | None = None) -> tuple[list[RouteSeries], int]:
    """The route lines of routing.png and how many more routes qualified.

    Those whose next hop changed at least once; when no next hop changed at all, those whose
    cost changed after t = 0 (at most MAX_COST_ONLY_LINES lines). Routes whose lines would be
    drawn on top of each other (`_merge_coincident`) become one line labelled with all of them.
    Beyond the limit, the lines with the most next-hop changes (cost only: whose finite cost
    varied most) are kept. Ties keep the given order, the lines kept are returned in the given
    order, and the count of the others is in routes (a merged line counts each of its routes).
    """
    chosen = [s for s in series if len(s.changes)]
    cost_only = not chosen
    if cost_only:
        chosen = [s for s in series if np.any(s.time > 0)]
        limit = min(limit, MAX_COST_ONLY_LINES)
    chosen = _merge_coincident(chosen, end_s)
    if cost_only:
        weight = [float(np.ptp(c)) if len(c := s.cost_ms[np.isfinite(s.cost_ms)]) else 0.0
                  for s in chosen]
    else:
        weight = [float(len(s.changes)) for s in chosen]
    if len(chosen) <= limit:
        return list(chosen), 0
    keep = sorted(sorted(range(len(chosen)), key=lambda i: -weight[i])[:limit])
    omitted = sum(1 + len(chosen[i].also) for i in range(len(chosen)) if i not in keep)
    return [chosen[i] for i in keep], omitted


def _route_tolerances(series: Sequence[RouteSeries], end_s: float | None
                      ) -> tuple[float, float, float]:
    """(end of the time axis, time tolerance, cost tolerance) for comparing route lines: the
    `COINCIDENT_FRACTION` of the ranges the panel will show. Without `end_s` the axis is taken
    to end a twentieth after the last installation (which then still shows)."""
    times = [float(s.time[-1]) for s in series if len(s.time)]
    last = max(times or [0.0])
    end = max(end_s, last) if end_s is not None else last + max(last / 20, 1e-9)
    costs = np.concatenate([s.cost_ms[np.isfinite(s.cost_ms)] for s in series] or [np.zeros(0)])
    span = float(np.ptp(costs)) if len(costs) else 0.0
    return end, COINCIDENT_FRACTION * max(end, 1e-9), COINCIDENT_FRACTION * max(span, 1e-9)


def _cost_distance(a: RouteSeries, b: RouteSeries, end: float, time_tol: float) -> float:
    """Largest difference between the cost lines of `a` and `b` (steps held from each
    installation until `end`), over the instants where both are defined, leaving out stretches
    shorter than `time_tol` (invisible at the figure's resolution). inf where one route is
    unreachable and the other not."""
    grid = np.union1d(a.time, b.time)
    grid = grid[grid <= end]
    if not len(grid):
        return 0.0
    lengths = np.diff(np.append(grid, end))
    ia = np.searchsorted(a.time, grid, side="right") - 1
    ib = np.searchsorted(b.time, grid, side="right") - 1
    visible = (lengths >= time_tol) & (ia >= 0) & (ib >= 0)
    ca, cb = a.cost_ms[ia[visible]], b.cost_ms[ib[visible]]
    same_inf = np.isinf(ca) & np.isinf(cb)
    with np.errstate(invalid="ignore"):       # inf - inf (unreachable both): masked here
        diff = np.where(same_inf, 0.0, np.abs(ca - cb))
    diff = np.where(np.isnan(diff), math.inf, diff)
    return float(diff.max()) if len(diff) else 0.0


def _same_changes(a: RouteSeries, b: RouteSeries, time_tol: float) -> bool:
    """Whether `a` and `b` change next hop at the same instants (within `time_tol`) to the same
    labelled next hops (their markers and labels would coincide too)."""
    ca, cb = a.changes, b.changes
    if len(ca) != len(cb):
        return False
    if not len(ca):
        return True
    return bool(np.all(np.abs(a.time[ca] - b.time[cb]) <= time_tol)) and \
        [a.change_label(i) for i in ca] == [b.change_label(i) for i in cb]


def _merge_coincident(series: Sequence[RouteSeries], end_s: float | None) -> list[RouteSeries]:
    """`series` with the routes whose lines would coincide drawn once: a route whose cost line is
    within `COINCIDENT_FRACTION` of the panel's cost range of an earlier route's at every visible
    instant, with the same next-hop changes, is merged into it (`RouteSeries.also`). Routes that
    merge with nothing are returned as they are (same objects)."""
    if len(series) < 2:
        return list(series)
    end, time_tol, cost_tol = _route_tolerances(series, end_s)
    groups: list[list[RouteSeries]] = []
    for s in series:
        for group in groups:
            first = group[0]
            if _same_changes(first, s, time_tol) and \
                    _cost_distance(first, s, end, time_tol) <= cost_tol:
                group.append(s)
                break
        else:
            groups.append([s])
    return [group[0] if len(group) == 1 else
            dataclasses.replace(group[0], also=tuple((m.router, m.destination) for m in group[1:]))
            for group in groups]


def route_linewidths(routes: Sequence[RouteSeries], end_s: float | None) -> list[float]:
    """Line width of each route line, in drawing order: a line that later lines cover over at
    least 5 % of the time axis (closer than twice the coincidence tolerance) is drawn wider, by
    `ROUTE_HALO` per covering line (at most 3), so that it shows as a coloured edge around them."""
    if len(routes) < 2:
        return [ROUTE_WIDTH] * len(routes)
    end, _, cost_tol = _route_tolerances(routes, end_s)
    widths = []
    for i, route in enumerate(routes):
        covering = 0
        for later in routes[i + 1:]:
            if _covered_fraction(route, later, end, 2 * cost_tol) >= 0.05:
                covering += 1
        widths.append(ROUTE_WIDTH + ROUTE_HALO * min(covering, 3))
    return widths


def _covered_fraction(a: RouteSeries, b: RouteSeries, end: float, cost_tol: float) -> float:
    """Fraction of [0, end] over which the cost lines of `a` and `b` are within `cost_tol`."""
    grid = np.union1d(a.time, b.time)
    grid = grid[grid < end]
    if not len(grid) or end <= 0:
        return 0.0
    lengths = np.diff(np.append(grid, end))
    ia = np.searchsorted(a.time, grid, side="right") - 1
    ib = np.searchsorted(b.time, grid, side="right") - 1
    both = (ia >= 0) & (ib >= 0)
    ca, cb = a.cost_ms[ia[both]], b.cost_ms[ib[both]]
    with np.errstate(invalid="ignore"):       # inf - inf: not finite, left out here
        close = np.isfinite(ca) & np.isfinite(cb) & (np.abs(ca - cb) <= cost_tol)
    return float(lengths[both][close].sum() / end)
