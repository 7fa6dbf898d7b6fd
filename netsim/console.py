"""The console table printed after a run: its flows, then the links of interest.

A run of a few flows and links gets one line per flow and per link direction. Beyond `rows` of
them (`TABLE_ROWS` = 20 by default, the command line's ``--table-rows``; 0 shows every one), the
table shows the first `rows`, says how many more there are (every one stays in summary.json and
the trace files), and adds aggregate lines: one per congestion-control algorithm (flows: count,
completed, mean / p50 / p99 of finish time and of goodput), one per workload (flows started and
completed, mean / p50 / p99 flow completion time, from summary.json's "workloads"), and one for
the link directions of interest (count, mean / p50 / p99 / max utilization, losses by cause). A
run's own workloads are listed whenever it has some. Percentiles interpolate linearly between
order statistics, as numpy's default does.
"""
from __future__ import annotations

from itertools import chain, islice, repeat
from operator import itemgetter, methodcaller, ne

TABLE_ROWS = 20     # flows and link directions listed before the table turns to aggregates
MAX_TABLE_ROWS = 10**9   # --table-rows at most this (0 lists every row anyway)


def quantile(values: list, q: float) -> float:
    """The q-quantile (0..1) of a non-empty list, linear between order statistics."""
    return _ordered_quantile(sorted(values), q)


def _ordered_quantile(ordered: list, q: float) -> float:
    """`quantile` of a list already in order."""
    position = q * (len(ordered) - 1)
    low = int(position)
    if low + 1 >= len(ordered):
        return float(ordered[-1])
    return ordered[low] + (ordered[low + 1] - ordered[low]) * (position - low)


def seconds_text(value: float, decimals: int) -> str:
    """A time (in seconds, or the RTT column's ms) with `decimals` decimals, or with 3
    significant digits where those would show fewer (a data center's 50 us completion times
    read 0.0000, and its 24 us RTTs 0.0 ms)."""
    if value and abs(value) < 10.0 ** (2 - decimals):
        return f"{value:#.3g}"
    return f"{value:.{decimals}f}"


def _stats(values: list, fmt: str) -> list:
    """mean, p50 and p99 of `values` as text ('-' each when there are none); the values are
    put in order once for both percentiles. `fmt`: a format, or "s3" for `seconds_text` with
    3 decimals."""
    if not values:
        return ["-", "-", "-"]
    mean = sum(values) / len(values)
    ordered = sorted(values)
    stats = (mean, _ordered_quantile(ordered, 0.5), _ordered_quantile(ordered, 0.99))
    if fmt == "s3":
        return [seconds_text(v, 3) for v in stats]
    return [format(v, fmt) for v in stats]


def format_summary(summary: dict, links: list, rows: int = TABLE_ROWS,
                   busiest: bool = False) -> str:
    """The console table: flows, then links of interest. Runs with ECN echoes get the flows'
    ECN reactions, and runs with a queue discipline the links' discipline drops, CE marks and
    sojourn times (so the classic table is unchanged). At most `rows` flows and `rows` link
    directions are listed (0: all), then aggregate lines (see the module docstring); with
    `busiest` (the links were not chosen by the user), the directions listed when there are more
    are the busiest ones (`link_lines`)."""
    units = summary["units"]["system"]
    suffix = " (binary units)" if units == "binary" else ""
    lines = [f"{summary['topology']}: {summary['stop_detail']} at t={summary['end_time_s']:.3f} s "
             f"({summary['events']} events, {summary['wall_time_s']:.2f} s wall){suffix}", ""]
    flows = summary["flows"]
    ecn = any(map(methodcaller("get", "ecn_echoes"), flows.values()))
    shown = flows if not rows or len(flows) <= rows else dict(islice(flows.items(), rows))
    # the id and algorithm columns fit the longest shown; finish times to the microsecond
    idw = max([8] + [len(fid) + 2 for fid in shown])
    algw = max([10] + [len(str(f["algorithm"])) + 2 for f in shown.values()])
    if flows:                            # (a run of workloads only has no flow table)
        lines.append(f"{'flow':<{idw}}{'algorithm':<{algw}}{'finish s':>13}{'goodput Mbps':>14}"
                     f"{'RTT ms':>9}{'retx':>7}{'RTOs':>6}" + (f"{'ECN cuts':>10}" if ecn else "")
                     + "  in order")
    for fid, f in shown.items():
        finish = f"{f['finish_s']:.6f}" if f["finish_s"] is not None else "-"
        rtt = seconds_text(f["avg_rtt_ms"], 1) if f["avg_rtt_ms"] is not None else "-"
        cuts = f"{f.get('ecn_reactions', 0):>10}" if ecn else ""
        order = "yes" if f["in_order"] else "NO"
        retx, rtos = f["retransmissions"], f["timeouts"]
        if f.get("kind", "bulk") != "bulk":  # a rate source: no transport, its losses instead
            retx = rtos = "-"
            lost = f.get("packets_lost") or 0
            if lost:
                order += f" ({lost} lost)"
        lines.append(f"{fid:<{idw}}{f['algorithm']:<{algw}}{finish:>13}"
                     f"{f['goodput_mbps']:>14.3f}{rtt:>9}"
                     f"{retx:>7}{rtos:>6}{cuts}  {order}")
    if len(shown) < len(flows):
        lines += [f"... {len(flows) - len(shown)} more flows (all {len(flows)} in summary.json, "
                  f"and in flows.csv from their start)", "", *flow_aggregates(flows)]
    workloads = summary.get("workloads") or {}
    if workloads:
        lines += [*([""] if flows else []), *workload_lines(workloads, rows)]
    table = link_lines(summary, links, rows, busiest)
    if table:                            # (no link direction to show: no empty link table)
        lines += ["", *table]
    return "\n".join(lines)


def link_lines(summary: dict, links: list, rows: int, busiest: bool = False) -> list:
    """The link table: one line per direction of the `links` of interest, at most `rows` of
    them (0: all), then how many more and their aggregate line; none without a direction.
    With `busiest` and more directions than `rows`, the `rows` listed are those that lost the
    most packets, then the most utilized (a fabric's first links in file order are mostly idle
    host links), in that order."""
    lines: list = []
    entries = [*map(summary["links"].__getitem__, links)]
    aqm = any(map(ne, map(methodcaller("get", "queue", "droptail"), entries), repeat("droptail")))
    every = [*map(itemgetter("directions"), entries)]          # each link's directions
    count = sum(map(len, every))
    everything = ((lid, label, d) for lid, directions in zip(links, every)
                  for label, d in directions.items())
    chosen = busiest and rows and count > rows
    if chosen:
        listed = sorted(everything, key=_busy, reverse=True)[:rows]
    else:                   # the listed directions only are made (lid, label, entry)
        listed = [*islice(everything, rows or None)]
    if not listed:
        return lines
    lw = max([8] + [len(lid) + 2 for lid, _, _ in listed])      # columns that fit the ids
    dw = max([14] + [len(label) + 2 for _, label, _ in listed])
    lines.append(f"{'link':<{lw}}{'direction':<{dw}}{'rate Mbps':>10}{'util':>7}{'buffer KB':>11}"
                 f"{'buf pkts':>10}   {'lost: overflow':>14}{'random':>8}{'failure':>9}"
                 + (f"{'AQM':>7}{'marks':>8}{'sojourn ms':>12}{'p99 ms':>9}" if aqm else ""))
    for lid, label, d in listed:
        extra = ""
        if aqm:
            avg, p99 = d.get("avg_sojourn_ms"), d.get("p99_sojourn_ms")
            extra = (f"{d.get('aqm_drops', 0):>7}{d.get('marks', 0):>8}"
                     f"{'-' if avg is None else f'{avg:.2f}':>12}"
                     f"{'-' if p99 is None else f'{p99:.2f}':>9}")
        lines.append(f"{lid:<{lw}}{label:<{dw}}{d['avg_rate_mbps']:>10.3f}{d['utilization']:>7.2f}"
                     f"{d['avg_buffer_kb']:>11.2f}{d['avg_buffer_pkts']:>10.2f}   "
                     f"{d['drops']:>14}{d['impairment_drops']:>8}{d['failure_drops']:>9}{extra}")
    if len(listed) < count:
        most = "lost or CE-marked the most packets" if aqm else "lost the most packets"
        which = f"the {len(listed)} that {most}, then the busiest, are listed; " if chosen else ""
        lines += [f"... {count - len(listed)} more link directions ({which}all "
                  f"{count} in summary.json and links.csv)", ""]
        lines += link_aggregate([*chain.from_iterable(map(dict.values, every))])
    return lines


def _busy(entry: tuple) -> tuple:
    """How busy a listed direction was: packets lost (every cause and the discipline's drops
    and marks), then utilization. Sorting is stable: ties keep file order."""
    d = entry[2]
    lost = (d["drops"] + d["impairment_drops"] + d["failure_drops"] + d.get("aqm_drops", 0)
            + d.get("marks", 0))
    return (lost, d["utilization"])


def flow_aggregates(flows: dict) -> list:
    """One line per algorithm, in order of first appearance: flows, completed, finish time and
    goodput (mean, p50, p99; finish times of the completed flows only)."""
    by_algorithm: dict = {}
    for f in flows.values():
        by_algorithm.setdefault(f["algorithm"], []).append(f)
    nw = max([10] + [len(str(name)) + 2 for name in by_algorithm])
    lines = [f"{'algorithm':<{nw}}{'flows':>7}{'done':>7}  {'finish s: mean':>14}{'p50':>9}"
             f"{'p99':>9}  {'goodput Mbps: mean':>18}{'p50':>9}{'p99':>9}"]
    for name, group in by_algorithm.items():
        finish = [f["finish_s"] for f in group if f["finish_s"] is not None]
        goodput = [f["goodput_mbps"] for f in group]
        f_mean, f_p50, f_p99 = _stats(finish, "s3")
        g_mean, g_p50, g_p99 = _stats(goodput, ".3f")
        lines.append(f"{name:<{nw}}{len(group):>7}{len(finish):>7}  {f_mean:>14}{f_p50:>9}"
                     f"{f_p99:>9}  {g_mean:>18}{g_p50:>9}{g_p99:>9}")
    return lines


def workload_lines(workloads: dict, rows: int = TABLE_ROWS) -> list:
    """One line per workload, the first `rows` of them (0: all): flows started and completed,
    and their completion times (mean, p50, p99 over every size, as summary.json's "all"
    bucket); then how many more there are."""
    shown = (workloads if not rows or len(workloads) <= rows
             else dict(islice(workloads.items(), rows)))
    nw = max([10] + [len(str(wid)) + 2 for wid in shown])
    lines = [f"{'workload':<{nw}}{'flows':>7}{'done':>7}  {'FCT s: mean':>14}{'p50':>9}{'p99':>9}"]
    for wid, w in shown.items():
        every = w.get("all", {})
        fields = [every.get(k) for k in ("mean_fct_s", "p50_fct_s", "p99_fct_s")]
        text = ["-" if v is None else seconds_text(v, 4) for v in fields]
        lines.append(f"{wid:<{nw}}{w['flows_started']:>7}{w['flows_completed']:>7}  "
                     f"{text[0]:>14}{text[1]:>9}{text[2]:>9}")
    if len(shown) < len(workloads):
        lines.append(f"... {len(workloads) - len(shown)} more workloads (all "
                     f"{len(workloads)} in summary.json)")
    left = sum(w.get("flows_unfinished") or 0 for w in workloads.values())
    if left:
        started = sum(w.get("flows_started") or 0 for w in workloads.values())
        large = sum((w.get("over_10mb") or {}).get("unfinished") or 0 for w in workloads.values())
        lines.append(f"FCTs are of finished flows only: {left} of {started} flows "
                     f"({100.0 * left / started:.3g} %) were unfinished at the end"
                     + (f", {large} of them over 10 MB" if large else "")
                     + " (by size bucket: workloads.<id>.<bucket>.unfinished in summary.json)")
    return lines


def link_aggregate(directions: list) -> list:
    """One line for all listed link directions: utilization (mean, p50, p99, max) and the
    losses by cause, summed."""
    util = [*map(itemgetter("utilization"), directions)]
    mean, p50, p99 = _stats(util, ".2f")
    return [f"{'directions':<12}{'util: mean':>12}{'p50':>9}{'p99':>9}{'max':>9}   "
            f"{'lost: overflow':>14}{'random':>8}{'failure':>9}",
            f"{len(directions):<12}{mean:>12}{p50:>9}{p99:>9}{max(util):>9.2f}   "
            f"{sum(map(itemgetter('drops'), directions)):>14}"
            f"{sum(map(itemgetter('impairment_drops'), directions)):>8}"
            f"{sum(map(itemgetter('failure_drops'), directions)):>9}"]
