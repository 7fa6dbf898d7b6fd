"""The front end of the run figures: which figures a results directory gets, each figure's data
computed once (`plan_figures` -> a list of `FigureData`), for a drawing backend to draw.

links.png, flows.png and hosts.png are written when an entity of theirs is selected; beyond
`MAX_LINES` lines (links: `MAX_TIERED_LINK_LINES` in a tiered network, `MAX_LINK_LINES` in another)
of entities the user did not choose, a figure gets aggregate lines; fct.png when the run had
workloads; routing.png when dynamic routing changed a forwarding table.
"""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

from plot_tool.entity_series import (
    aggregate_series,
    flow_groups,
    flow_series_of,
    host_series_of,
    link_groups,
    link_series_of,
    links_figure_spec,
    normalize_table,
    prediction_series,
)
from plot_tool.fct_data import FCT_FILENAME, normalize_fct
from plot_tool.line_reduction import Unstreamable, reduction_bucket_s, stream_lines
from plot_tool.link_changes import LinkChanges, link_changes
from plot_tool.results import Table, TraceFile
from plot_tool.routes_data import (
    ROUTING_FILENAME,
    RouteSeries,
    known_routers,
    route_series,
    routes_changed,
    routes_to_plot,
)
from plot_tool.series import (
    FLOWS_FIGURE,
    FLOWS_FIGURE_GOODPUT,
    HOSTS_FIGURE,
    PANEL_HEIGHT_IN,
    TITLE_HEIGHT_IN,
    WIDTH_IN,
    FigureData,
    FigureSpec,
    IdSelection,
    PredictionSeries,
    Series,
    figure_size,
    run_end_s,
)

log = logging.getLogger(__name__)

# Beyond this many lines in a figure whose entities the user did not choose (-l / -F), the figure
# draws one aggregate line per group instead: the mean over the group at each sample time, with
# the 10th-90th percentile band (docs/outputs.md, "Aggregate lines"). Flows (grouped by
# algorithm) and hosts (all together): beyond MAX_LINES, the distinct colours of the palette
# (tab20). Links: beyond MAX_TIERED_LINK_LINES in a tiered network (`plot_tool.tiers`: grouped
# by the tiers their ends are in, host-edge, edge-aggregation, ...), beyond MAX_LINK_LINES in
# any other (all links together: the shipped parking lot's 22 directions stay lines).
MAX_LINES = 20


MAX_TIERED_LINK_LINES = 12


MAX_LINK_LINES = 40




AGGREGATE_TITLE = "mean over the {what} of each group\n(band: 10th\u201390th percentile)"


def plan_figures(results: Any, *, links: IdSelection = None, flows: IdSelection = None,
                  hosts: IdSelection = None, routers: IdSelection = None,
                  predictions: bool | None = None) -> list[FigureData]:
    """The figures `make_figures` writes for `results` (an object with the result attributes),
    in order, with their data prepared; arguments as for `make_figures`."""
    summary = dict(results.summary)
    link_ids = _choose("link", links, summary.get("links", {}))
    flow_ids = _choose("flow", flows, summary.get("flows", {}))
    host_ids = _choose("host", hosts, summary.get("hosts", {}))
    raw_routes = getattr(results, "routes", None)
    if (summary.get("routing") or {}).get("protocol") == "static":
        # a static run's tables never change: no routing.png (its rows after t = 0 are a
        # workload's pairs, logged as first drawn), and its routes.csv is not read
        raw_routes = None if isinstance(raw_routes, TraceFile) else raw_routes
        routes_fixed = True
    else:
        routes_fixed = False
    if isinstance(raw_routes, TraceFile):
        raw_routes = raw_routes.read()
    routes = None if raw_routes is None else normalize_table(raw_routes, "routes")
    router_ids = _choose("router", routers, known_routers(summary, routes))
    raw_predictions = getattr(results, "predictions", None)
    if predictions and raw_predictions is None:
        raise ValueError("predictions=True, but the results have no predictions "
                         "(predictions.csv is written by a run with --check)")
    prediction_table = (None if raw_predictions is None or predictions is False
                        else normalize_table(raw_predictions, "predictions"))

    bucket_s = reduction_bucket_s(summary)
    jobs: list[FigureData] = []
    link_series: list[Series] = []
    changes: list[LinkChanges] = []      # of the link lines: drawn by links.png and routing.png
    if link_ids:
        grouped: list[dict[str, str]] = []     # the groups of the link lines, when aggregated

        def link_lines(table: Table) -> list[Series]:
            series = link_series_of(summary, table, link_ids)
            groups = None
            if links is None and len(series) > MAX_TIERED_LINK_LINES:
                groups = link_groups(summary, series,
                                     at_most=MAX_TIERED_LINK_LINES, untiered_at_most=MAX_LINK_LINES)
            if groups is None:
                return series
            grouped[:] = [groups]
            return aggregate_series(series, groups, summary, idle_is_zero=True)

        link_series, link_columns = _lines(results.links, "links", link_lines, bucket_s)
        link_predictions: list[PredictionSeries] = []
        if grouped:
            spec = dataclasses.replace(links_figure_spec(link_series),
                                       legend_title=AGGREGATE_TITLE.format(what="link directions"))
            jobs.append(_spec_job(spec, link_series, summary))
        elif prediction_table is not None and "backlog_kb" in link_columns:
            link_predictions = prediction_series(prediction_table, link_series, "link",
                                                  ("backlog_kb",))
        if not any(s.members > 1 for s in link_series):
            notes = tied_link_notes(getattr(results, "check", None)) if link_predictions else []
            changes = link_changes(summary, link_series)
            jobs.append(dataclasses.replace(
                _spec_job(links_figure_spec(link_series, backlog=bool(link_predictions)),
                          link_series, summary, link_predictions), notes=notes,
                link_changes=changes))
    if flow_ids:
        aggregated: list[bool] = []

        def flow_lines(table: Table) -> list[Series]:
            series = flow_series_of(table, flow_ids)
            if flows is None and len(series) > MAX_LINES:
                aggregated[:] = [True]
                return aggregate_series(series, flow_groups(summary, series), summary,
                                        idle_is_zero=False)
            return series

        flow_series, flow_columns = _lines(results.flows, "flows", flow_lines, bucket_s)
        flow_predictions: list[PredictionSeries] = []
        spec = FLOWS_FIGURE if "arrival_rate_mbps" in flow_columns else FLOWS_FIGURE_GOODPUT
        if aggregated:
            spec = dataclasses.replace(spec, legend_title=AGGREGATE_TITLE.format(what="flows"))
        elif prediction_table is not None:
            flow_predictions = prediction_series(prediction_table, flow_series, "flow",
                                                  ("rate_mbps", "rtt_ms"))
        notes = model_notes(getattr(results, "check", None)) if flow_predictions else []
        jobs.append(dataclasses.replace(_spec_job(spec, flow_series, summary, flow_predictions),
                                        notes=notes))
    if host_ids:
        host_aggregated: list[bool] = []

        def host_lines(table: Table) -> list[Series]:
            series = host_series_of(table, host_ids)
            if hosts is None and len(series) > MAX_LINES:
                host_aggregated[:] = [True]
                return aggregate_series(series, {s.key: "all hosts" for s in series}, summary,
                                        idle_is_zero=True)
            return series

        host_series, _ = _lines(results.hosts, "hosts", host_lines, bucket_s)
        spec = HOSTS_FIGURE
        if host_aggregated:
            spec = dataclasses.replace(spec, legend_title=AGGREGATE_TITLE.format(what="hosts"))
        jobs.append(_spec_job(spec, host_series, summary))
    fct = getattr(results, "fct", None)
    if fct is not None and len(fct.get("slowdown", ())):
        jobs.append(_fct_job(normalize_fct(fct), summary))
    if router_ids and routes is not None and not routes_fixed and routes_changed(routes):
        ecmp = bool((summary.get("routing") or {}).get("ecmp"))
        chosen, omitted = routes_to_plot(route_series(routes, router_ids, ecmp=ecmp),
                                          end_s=run_end_s(summary))
        jobs.append(_routing_job(link_series, chosen, omitted, summary, changes))
    return jobs


def _lines(source: Any, name: str, build: Callable[[Table], list[Series]],
           bucket_s: float | None) -> tuple[list[Series], frozenset[str]]:
    """The lines `build` makes of the trace `name` ("links", "flows", "hosts"), and the columns
    of the trace. `source` is a Table (or table-like), or a `TraceFile` left on disk: a long
    run's (`bucket_s` not None) is streamed and its lines reduced (`plot_tool.line_reduction`),
    so that the memory does not grow with its length; a shorter run's is read whole."""
    if isinstance(source, TraceFile):
        if bucket_s is not None:
            columns: set[str] = set()

            def build_chunk(chunk: Table) -> list[Series]:
                table = normalize_table(chunk, name)
                columns.update(table)
                return build(table)

            try:
                return stream_lines(source.chunks(), build_chunk, bucket_s), frozenset(columns)
            except Unstreamable as exc:
                log.info("%s: read whole, not streamed (%s)", source.path, exc)
        source = source.read()
    table = normalize_table(source, name)
    return build(table), frozenset(table)


MODEL_NAMES = {None: "the fluid equilibrium\n(FAST, Vegas)",
               "padhye": "Padhye et al. 1998\n(Reno's response)",
               "rfc9438": "RFC 9438 \u00a75.1 (CUBIC)", "bbr": "BBR's fair share",
               "dctcp": "DCTCP's sawtooth"}


def _check_rows(check: dict | None):
    """(interval, row) of every row of a check.json (none without one)."""
    for iv in (check or {}).get("intervals") or ():
        for row in iv.get("rows") or ():
            yield iv, row


def model_notes(check: dict | None) -> list[str]:
    """A legend line naming the models of a check's flow predictions (check.json rows' "model";
    the fluid equilibrium's rows have none): a dashed line says what it is."""
    models = dict.fromkeys(row.get("model") for _, row in _check_rows(check)
                           if row.get("kind") == "flow" and row.get("predicted") is not None)
    names = [MODEL_NAMES.get(m, str(m)) for m in models]
    return ["model: " + ";\n".join(names)] if names else []


def tied_link_notes(check: dict | None) -> list[str]:
    """Legend lines for the tied links of a check (check.json rows of a link group "L1+L2+L3"):
    the model predicts only their summed backlog, and predictions.csv puts it on the first."""
    spans: dict[str, list] = {}
    for iv, row in _check_rows(check):
        group = str(row.get("id"))
        if row.get("kind") == "link" and "+" in group:
            ranges = spans.setdefault(group, [])
            if ranges and ranges[-1][1] == iv["start_s"]:
                ranges[-1][1] = iv["end_s"]
            elif not ranges or ranges[-1] != [iv["start_s"], iv["end_s"]]:
                ranges.append([iv["start_s"], iv["end_s"]])
    notes = []
    for group, ranges in spans.items():
        when = ", ".join(f"{start:g}\u2013{end:g} s" for start, end in ranges)
        notes.append(f"{group} ({when}): tied links,\ntheir sum predicted, dashed on "
                     f"{group.split('+')[0]}")
    return notes


def _spec_job(spec: FigureSpec, series: list[Series], summary: dict,
              predictions: Sequence[PredictionSeries] = ()) -> FigureData:
    return FigureData("panels", spec.filename, figure_size(spec), summary, spec=spec,
                      series=series, predictions=list(predictions))


def _fct_job(fct: Table, summary: dict) -> FigureData:
    workloads = list(dict.fromkeys(fct["workload"].tolist()))
    height = TITLE_HEIGHT_IN + 1.3 * PANEL_HEIGHT_IN * len(workloads)
    return FigureData("fct", FCT_FILENAME, (WIDTH_IN, height), summary, fct=fct,
                      workloads=workloads)


def _routing_job(link_series: list[Series], routes: list[RouteSeries], omitted: int,
                 summary: dict, changes: Sequence[LinkChanges] = ()) -> FigureData:
    height = TITLE_HEIGHT_IN + (PANEL_HEIGHT_IN if link_series else 0.0) + 1.4 * PANEL_HEIGHT_IN
    return FigureData("routing", ROUTING_FILENAME, (WIDTH_IN, height), summary,
                      series=link_series, routes=routes, omitted=omitted, link_changes=changes)


def _choose(kind: str, requested: IdSelection, known: dict) -> list[str]:
    known_ids = [str(k) for k in known]
    if requested is None:
        return known_ids
    if isinstance(requested, str):
        requested = [requested]
    chosen: list[str] = []
    for item in requested:
        if item not in known_ids:
            raise ValueError(f"unknown {kind} {item!r}; known: {', '.join(known_ids) or 'none'}")
        if item not in chosen:
            chosen.append(item)
    return chosen
