"""The check report as people and programs read it: the console table (`format_report`),
check.json and predictions.csv (`write_check`). The report itself is made by
`theory.check.compare`.
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np

from theory.check import overflowing
from theory.fluid import Model

TABLE_ROWS = 20    # rows, flows and reasons listed per block (the command line's --table-rows)


def format_report(report: dict, rows: int = TABLE_ROWS) -> str:
    """The console table of a check report. Each interval (and the completion times) lists
    its first `rows` rows and flows (0: all), then how many more there are; the reasons listed
    are those of the rows shown, then how many more (check.json has everything). 1 000 flows
    printed 2 064 lines, each of 1 000 reasons once."""
    lines = [f"check against the analytic models (settling time {report['settle_s']:g} s "
             f"skipped after each change)"]
    all_rows = [row for iv in report["intervals"] for row in iv["rows"]] + report["completion"]
    widths = _widths(all_rows)
    changes = set(report.get("link_changes_s", ()))
    cited: set = set()          # the numbers of the reasons the lines shown refer to
    for run in _runs(report["intervals"]):
        if len(run) > 1:                  # one line for them: every row "no model", one reason
            active = dict.fromkeys(fid for iv in run for fid in iv["flows"])
            cuts = [iv["start_s"] in changes for iv in run[1:]]
            why = ("flows joined or left and links changed" if any(cuts) and not all(cuts) else
                   "links changed" if all(cuts) else "flows joined or left")
            number = reasons_index(report, run[0]['rows'][0]['no_model'])
            cited.add(number)
            lines.append(f"\n[{_s(run[0]['start_s'])}, {_s(run[-1]['end_s'])}] {len(run)} "
                         f"intervals as {why}, none compared: see reason {number} (active: "
                         f"{_names(list(active), rows)})")
            continue
        iv = run[0]
        lines.append(f"\n[{_s(iv['start_s'])}, {_s(iv['end_s'])}] active: "
                     f"{_names(iv['flows'], rows)} ({_compared_part(iv)})")
        lines.append("  " + _columns(("", "entity", "quantity", "predicted", "simulated", "error"),
                                     widths))
        lines += _row_lines(report, iv["rows"], widths, rows, cited)
    if report["completion"]:
        lines.append("\ncompletion times")
        lines += _row_lines(report, report["completion"], widths, rows, cited)
    for miss in report["unmatched"]:
        lines.append(f"\nno prediction for [{_s(miss['start_s'])}, {_s(miss['end_s'])}] with "
                     f"flows {', '.join(miss['flows'])} (the simulated order of joins and "
                     f"departures differs from the predicted one)")
    for warning in report.get("warnings", []):
        lines.append(f"\nwarning: {warning}")
    reasons = report.get("no_model_reasons", [])
    if reasons:
        lines.append("\nno model applies (rows marked \"no model\", not compared):")
        listed = 0
        for numbers, text, kind, ids in _reason_groups(reasons, all_rows):
            if rows and not cited.intersection(numbers):
                continue
            listed += len(numbers)
            if len(numbers) == 1:
                lines.append(f"  {numbers[0]}. {text}")
                continue
            lines.append(f"  {_number_ranges(numbers, rows)}. {text} — <{kind}>: "
                         f"{_names(ids, rows, f'{kind}s')}")
        left = len(reasons) - listed
        if left > 0:
            lines.append(f"  ... {left} more reason{'' if left == 1 else 's'}, of rows not "
                         f"listed (all {len(reasons)} in check.json)")
    lines.append("\n" + format_verdict(report))
    return "\n".join(lines)


def _reason_groups(reasons: list, rows: list) -> list:
    """A report's `reasons`, grouped where they differ only in the id of the row of `rows` they
    are about ("no random loss on the data path of F1: ..." for 1 000 flows): [(their numbers,
    the text with that id, wherever it is a whole word, as "<flow>" or "<link>", the kind, the
    ids)], in the order of their first number; a reason alike no other is a group of its own,
    its text whole."""
    about: dict = {}                    # reason -> (kind, id) of the first row giving it
    for row in rows:
        if row.get("no_model"):
            about.setdefault(row["no_model"], (str(row.get("kind")), str(row.get("id"))))
    groups: dict = {}
    for number, reason in enumerate(reasons, 1):
        kind, ident = about.get(reason, ("", ""))
        key: tuple = (number,)
        # every occurrence of the id a whole word ("F1" inside "F12" is not "F1")
        if (ident and ident in reason and f"<{kind}>" not in reason and reason.count(ident)
                == len(re.findall(rf"(?<!\w){re.escape(ident)}(?!\w)", reason))):
            key = (reason.replace(ident, f"<{kind}>"), kind)
        entry = groups.setdefault(key, ([], key[0] if len(key) == 2 else reason, kind, []))
        entry[0].append(number)
        entry[3].append(ident)
    return [(numbers, text if len(numbers) > 1 else reasons[numbers[0] - 1], kind, ids)
            for numbers, text, kind, ids in groups.values()]


def _number_ranges(numbers: list, rows: int) -> str:
    """Increasing `numbers` as ranges ("1-20, 22"), the first `rows` ranges (0: all)."""
    ranges: list = []
    for number in numbers:
        if ranges and ranges[-1][1] == number - 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    texts = [f"{a}" if a == b else f"{a}-{b}" for a, b in ranges]
    if rows and len(texts) > rows:
        texts = [*texts[:rows], "..."]
    return ", ".join(texts)


def _names(ids: list, rows: int, what: str = "flows") -> str:
    """The first `rows` of `ids` (0: all), then how many `what` there are in all."""
    if not rows or len(ids) <= rows:
        return ", ".join(ids)
    return f"{', '.join(ids[:rows])}, ... ({len(ids)} {what})"


def _row_lines(report: dict, rows_of: list, widths: tuple, rows: int, cited: set) -> list:
    """The lines of the first `rows` of `rows_of` (0: all), each "no model" row with the
    number of its reason (added to `cited`), then how many more rows there are."""
    shown = rows_of if not rows or len(rows_of) <= rows else rows_of[:rows]
    tolerance = report.get("tolerance_pct")
    lines = []
    for row in shown:
        lines.append("  " + _format_row(row, widths))
        if _over(row, tolerance):
            lines[-1] += f"  over {tolerance:g} %"
        if row.get("no_model"):
            number = reasons_index(report, row["no_model"])
            cited.add(number)
            lines[-1] += f"  [{number}]"
    if len(shown) < len(rows_of):
        lines.append(f"  ... {len(rows_of) - len(shown)} more rows (all {len(rows_of)} in "
                     f"check.json)")
    return lines


def format_verdict(report: dict, reasons_at: str = "above") -> str:
    """The last line of the check's table: the largest error (or that nothing was compared)
    and, with a tolerance, whether the run is within it; rows left out are counted, their
    reasons being `reasons_at` ("above": in the table; else where to find them)."""
    reasons = report.get("no_model_reasons", [])
    verdict = f"largest error {report['max_error_pct']:.2f} %"
    nothing = report.get("compared", 1) == 0
    if nothing:
        verdict = "nothing compared"
    if report["tolerance_pct"] is not None and nothing:
        verdict += (f" — NOT within the {report['tolerance_pct']:g} % tolerance: a check that "
                    f"compared nothing does not pass")
    elif report["tolerance_pct"] is not None:
        verdict += (f" — {'within' if report['passed'] else 'NOT within'} the "
                    f"{report['tolerance_pct']:g} % tolerance")
        over = sum(_over(row, report["tolerance_pct"])
                   for row in (*(r for iv in report["intervals"] for r in iv["rows"]),
                               *report["completion"]))
        if over:
            verdict += f" ({over} row{'' if over == 1 else 's'} over it, marked \"over\")"
    if reasons:
        count = report["not_compared"]
        verdict += (f" ({count} row{'' if count == 1 else 's'} outside every model's regime not "
                    f"counted: see the reasons {reasons_at})")
    return verdict


def _runs(intervals: list) -> list:
    """The intervals in order, grouped: consecutive intervals none of whose rows was compared,
    all for one and the same reason (e.g. an incast's flows finishing one by one, each
    interval shorter than the settling time), make one group; every other interval is a group
    of its own."""
    runs: list = []
    previous = None
    for iv in intervals:
        reasons = {row.get("no_model") for row in iv["rows"]}
        reason = reasons.pop() if len(reasons) == 1 and iv["rows"] else None
        if reason is not None and reason == previous:
            runs[-1].append(iv)
        else:
            runs.append([iv])
        previous = reason
    return runs


def _compared_part(interval: dict) -> str:
    """What of the interval was compared: its window, or nothing (every row says why not, e.g.
    an interval too short for the settling time)."""
    if interval["rows"] and all(row.get("no_model") for row in interval["rows"]):
        return "not compared: see the reasons below"
    return (f"compared {interval['compared_from_s']:.6g}-{interval['compared_until_s']:.6g} s")


def _s(seconds: float) -> str:
    """A time of the report in seconds with six significant digits: intervals of a
    data-center run (0.0125 s) and of a long one (1234.56 s) alike stay distinct."""
    return f"{seconds:.6g} s"


def reasons_index(report: dict, reason: str) -> int:
    """1-based number of `reason` in the report's list of reasons."""
    return report.get("no_model_reasons", []).index(reason) + 1


def _over(row: dict, tolerance_pct) -> bool:
    """Whether `row`'s error is over `tolerance_pct` (None: no tolerance, nothing is)."""
    return (tolerance_pct is not None and row.get("error_pct") is not None
            and row["error_pct"] > tolerance_pct)


_MIN_WIDTHS = (6, 18, 16, 18, 12, 9)     # kind, entity, quantity, predicted, simulated, error
_RIGHT = (False, False, False, True, True, True)


def _cells(row: dict) -> tuple:
    predicted = row["predicted"]
    if predicted is None:
        shown = "no model"
    elif isinstance(predicted, list):
        shown = f"{predicted[0]:.3f}..{predicted[1]:.3f}"
    else:
        shown = f"{predicted:.3f}"
    simulated = "-" if row["simulated"] is None else f"{row['simulated']:.3f}"
    error = "-" if row["error_pct"] is None else f"{row['error_pct']:.2f} %"
    return row["kind"], row["id"], row["quantity"], shown, simulated, error


def _widths(rows: list) -> tuple:
    """Column widths that fit every cell of `rows` (at least the usual ones)."""
    widths = list(_MIN_WIDTHS)
    for row in rows:
        for k, cell in enumerate(_cells(row)):
            widths[k] = max(widths[k], len(cell) + (2 if k else 1))
    return tuple(widths)


def _columns(cells, widths) -> str:
    """`cells` in columns of `widths`; a cell too wide for its column still gets a space after
    (left-aligned) or before (right-aligned) it, so columns never run together."""
    out = ""
    for cell, width, right in zip(cells, widths, _RIGHT):
        if right:
            out += " " + cell.rjust(width - 1) if len(cell) >= width else cell.rjust(width)
        else:
            out += cell.ljust(width - 1) + " " if len(cell) >= width else cell.ljust(width)
    return out


def _format_row(row: dict, widths: tuple = _MIN_WIDTHS) -> str:
    line = _columns(_cells(row), widths)
    return line + (f"  {row['model']}" if row.get("model") else "")


def _finite(value):
    """`value` with every NaN or infinite float (numpy's too) as None."""
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def write_check(out_dir, report: dict, model: Model, units, links: dict | None = None) -> None:
    """check.json (the report) and predictions.csv (the predicted timeline, for the figures; the
    per-flow models of Reno, NewReno, CUBIC and BBR add their rows per simulated interval).
    With `links` (summary.json's), an interval of the timeline whose predicted backlog a buffer
    cannot hold has no rows: the equilibrium does not hold there (the run drops packets), and
    the check compares none of its rows, so the figures draw no prediction either. Likewise the
    report's `no_equilibrium` spans (random loss or reordering cut the windows there) are cut
    out of the timeline's intervals."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "check.json", "w") as fh:
        json.dump(_finite(report), fh, indent=2, allow_nan=False)    # strict JSON: NaN is null
        fh.write("\n")
    mbps = 8.0 / units.bits_per_mbit
    kb = float(units.bytes_per_kb)
    flows = {f.id: f for f in model.flows}
    resources = {r.id: r for r in model.resources}
    withdrawn = [(span["start_s"], span["end_s"]) for span in report.get("no_equilibrium", ())]
    with open(out / "predictions.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["start_s", "end_s", "kind", "id", "direction", "quantity", "low", "high"])
        for iv in model.timeline:
            if links is not None and next(overflowing(iv, links, resources, kb, low=True), None):
                continue
            for start_s, end_s in uncovered(iv.start_s, iv.end_s, withdrawn):
                _write_interval(writer, iv, start_s, end_s, flows, resources, mbps, kb)
        for iv in report["intervals"]:
            for row in iv["rows"]:
                if not row.get("model") or row["predicted"] is None:
                    continue
                low, high = (row["predicted"] if isinstance(row["predicted"], list)
                             else (row["predicted"], row["predicted"]))
                if row["kind"] == "flow":
                    entity, direction = row["id"], ""
                else:
                    entity, direction = resources[row["id"]].link, "+".join(resources[row["id"]].directions)
                writer.writerow([f"{iv['start_s']:.9g}", f"{iv['end_s']:.9g}", row["kind"], entity,
                                 direction, row["quantity"], f"{low:.9g}", f"{high:.9g}"])


def _write_interval(writer, iv, start_s: float, end_s: float, flows: dict, resources: dict,
                    mbps: float, kb: float) -> None:
    """predictions.csv's rows of the timeline's interval `iv`, over [start_s, end_s] (all of it,
    or a part that check.json's `no_equilibrium` left)."""
    bounds = [f"{start_s:.9g}", f"{end_s:.9g}"]
    for fid in iv.flows:
        rate = (iv.rates_pps[fid] * flows[fid].data_bytes * mbps,
                iv.rates_pps_high[fid] * flows[fid].data_bytes * mbps)
        delay = (iv.queue_delay_s[fid] * 1e3, iv.queue_delay_s_high[fid] * 1e3)
        base_ms = flows[fid].base_rtt_s * 1e3
        rtt = (base_ms + delay[0], base_ms + delay[1])
        window = (iv.rates_pps[fid] * rtt[0] / 1e3, iv.rates_pps_high[fid] * rtt[1] / 1e3)
        for quantity, (low, high) in (("rate_mbps", rate), ("queue_delay_ms", delay),
                                      ("rtt_ms", rtt), ("window_pkts", window)):
            writer.writerow([*bounds, "flow", fid, "", quantity, f"{min(low, high):.9g}",
                             f"{max(low, high):.9g}"])
    for rid, backlog in iv.backlog_bytes.items():
        resource = resources[rid]
        high = iv.backlog_bytes_high[rid]
        writer.writerow([*bounds, "link", resource.link, "+".join(resource.directions),
                         "backlog_kb", f"{min(backlog, high) / kb:.9g}",
                         f"{max(backlog, high) / kb:.9g}"])


def uncovered(start_s: float, end_s: float, spans) -> list:
    """The parts of [start_s, end_s] that no (start, end) pair of `spans` covers, in order."""
    parts = []
    for span_start, span_end in sorted(spans):
        if span_end <= start_s or span_start >= end_s:
            continue
        if span_start > start_s:
            parts.append((start_s, span_start))
        start_s = max(start_s, span_end)
    if end_s > start_s:
        parts.append((start_s, end_s))
    return parts
