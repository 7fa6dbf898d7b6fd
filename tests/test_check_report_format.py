"""The --check console table at data-center scales: entity ids longer than the column (a fat
tree's "e_p2_1-a_p2_0 a_p2_0->e_p2_1") never run into the quantity, interval bounds keep six
significant digits (0.0125 s, not 0.01 s), and the reasons give RTprops to four (0.1046 ms and
0.1219 ms, not "from 0.1 to 0.1 ms")."""
from __future__ import annotations

from types import SimpleNamespace

from theory.check_report import format_report
from theory.check_rows import _dctcp_bottleneck, no_model, row

LONG = "e_p2_1-a_p2_0 a_p2_0->e_p2_1"


def report(rows, start=0.01, end=0.0125):
    return {"settle_s": 0.002, "tolerance_pct": None, "unmatched": [], "completion": [],
            "intervals": [{"start_s": start, "end_s": end, "compared_from_s": 0.012,
                           "compared_until_s": 0.0125, "flows": ["F1"], "rows": rows}],
            "no_model_reasons": [r["no_model"] for r in rows if r.get("no_model")],
            "not_compared": sum(1 for r in rows if r.get("no_model")), "compared": len(rows),
            "max_error_pct": 0.0}


def test_long_ids_keep_a_space_before_the_quantity():
    rows = [row("link", LONG, "backlog_kb", 0.203, 24.523, 34.5, 1.5),
            row("flow", "F1", "rate_mbps", 270.8, 333.333, 333.333, 5.0)]
    lines = format_report(report(rows)).splitlines()
    link_line = next(line for line in lines if LONG in line)
    assert f"{LONG}  backlog_kb" in link_line
    flow_line = next(line for line in lines if line.startswith("  flow"))
    header = next(line for line in lines if "entity" in line)
    # every line of the block puts its columns in the same place
    assert link_line.index("backlog_kb") == flow_line.index("rate_mbps") == header.index("quantity")
    assert link_line.index("24.523..34.500") + len("24.523..34.500") == header.index("predicted") + 9


def test_wide_cells_in_every_column_stay_apart():
    wide = row("link", "x" * 40, "q" * 30, 123456789.0, 1e9, 2e9, 1.0)
    line = next(line for line in format_report(report([wide])).splitlines() if "xxx" in line)
    assert "x" * 40 + "  " + "q" * 30 + "  " in line
    assert "1000000000.000..2000000000.000  123456789.000  87.65 %" in line


def test_interval_bounds_keep_their_significant_digits():
    text = format_report(report([row("flow", "F1", "rate_mbps", 1.0, 1.0, 1.0, 0.1)]))
    assert "[0.01 s, 0.0125 s] active: F1 (compared 0.012-0.0125 s)" in text
    text = format_report(report([no_model("flow", "F1", "rate_mbps", 1.0, "why")], 12.5, 1234.5678))
    assert "[12.5 s, 1234.57 s] active: F1 (not compared: see the reasons below)" in text


def test_rtprop_reasons_keep_four_significant_digits():
    spec = SimpleNamespace(link=lambda _: SimpleNamespace(
        queue={"discipline": "step", "k_bytes": 30000}))
    model = SimpleNamespace(spec=spec)
    resource = SimpleNamespace(id=LONG, link="e_p2_1-a_p2_0")
    reason, queue = _dctcp_bottleneck(model, resource, ["F1", "F2"],
                                      {"F1": 0.0001046, "F2": 0.0001719}, 1e5, 1500.0)
    assert queue is None
    assert reason == (f"the DCTCP flows sharing {LONG} have RTprops from 0.1046 ms to 0.1719 ms: "
                      f"the analysis assumes one RTT (within a factor 1.5)")
    reason, _ = _dctcp_bottleneck(model, resource, ["F1", "F2"],
                                  {"F1": 0.0001046, "F2": 0.0001219}, 1e5, 1500.0,
                                  {"F1": 0.0001099, "F2": 0.0003223})
    assert reason.startswith(f"the DCTCP flows sharing {LONG} have round trips from 0.1099 ms to "
                             f"0.3223 ms apart from its queue")
    assert "RTprops from 0.1046 ms to 0.1219 ms" in reason


def test_consecutive_intervals_not_compared_for_one_reason_are_one_line():
    """An incast's flows finish one by one, each interval shorter than the settling time: one
    line for them (check.json keeps each), not a table and a numbered reason per interval."""
    short = "the interval is not one sampling interval (0.1 s) longer than the settling time"

    def interval(start, end, flows, rows):
        return {"start_s": start, "end_s": end, "compared_from_s": end, "compared_until_s": end,
                "flows": flows, "rows": rows}
    ivs = [interval(0.01, 0.012, ["F1", "F2", "F3"],
                    [no_model("flow", f, "rate_mbps", None, short) for f in ("F1", "F2", "F3")]),
           interval(0.012, 0.013, ["F1", "F3"],
                    [no_model("flow", f, "rate_mbps", None, short) for f in ("F1", "F3")]),
           interval(0.013, 0.02, ["F3"], [no_model("flow", "F3", "rate_mbps", None, "other")]),
           interval(0.02, 0.5, ["F3", "F4"], [row("flow", "F3", "rate_mbps", 1.0, 1.0, 1.0, 0.1),
                                              no_model("flow", "F4", "rate_mbps", 1.0, short)])]
    text = format_report({"settle_s": 2.0, "tolerance_pct": None, "unmatched": [],
                          "completion": [], "intervals": ivs,
                          "no_model_reasons": [short, "other"], "not_compared": 6,
                          "compared": 1, "max_error_pct": 0.0})
    lines = text.splitlines()
    assert ("[0.01 s, 0.013 s] 2 intervals as flows joined or left, none compared: see reason 1 "
            "(active: F1, F2, F3)") in lines
    # a lone interval, and one with a row compared, keep their tables
    assert "[0.013 s, 0.02 s] active: F3 (not compared: see the reasons below)" in lines
    assert "[0.02 s, 0.5 s] active: F3, F4 (compared 0.5-0.5 s)" in lines
    assert sum(line.strip().startswith("flow") for line in lines) == 3
    assert "  1. " + short in lines and "  2. other" in lines


def test_many_flows_list_the_first_rows_flows_and_their_reasons():
    """1 000 flows printed 2 064 lines: every row, every flow id on the interval's line, and
    1 000 reasons (acceptance testing at scale). The first N of each (--table-rows), then how
    many more; check.json keeps everything."""
    rows = [no_model("flow", f"F{i}", "rate_mbps", 1.0, f"why number {i}") for i in range(1, 31)]
    data = report(rows)
    data["intervals"][0]["flows"] = [f"F{i}" for i in range(1, 31)]
    lines = format_report(data, rows=5).splitlines()
    assert [line.split()[1] for line in lines if line.startswith("  flow")] == [
        "F1", "F2", "F3", "F4", "F5"]
    assert "  ... 25 more rows (all 30 in check.json)" in lines
    assert any(line.startswith("[0.01 s, 0.0125 s] active: F1, F2, F3, F4, F5, ... (30 flows)")
               for line in lines)
    listed = [line for line in lines if line[:4].strip().rstrip(".").isdigit()]
    assert listed == [f"  {i}. why number {i}" for i in range(1, 6)]
    assert "  ... 25 more reasons, of rows not listed (all 30 in check.json)" in lines
    every = format_report(data, rows=0).splitlines()
    assert sum(line.startswith("  flow") for line in every) == 30
    assert not any("more" in line for line in every)
    assert format_report(data, rows=30) == format_report(data, rows=0)


def test_reasons_that_differ_only_in_their_rows_id_are_one_line():
    """1 000 flows gave 1 000 reasons differing only in the flow's id: one line for them,
    the text with the id as <flow>, then the ids (the first N); a reason that differs otherwise
    keeps its line. The numbers are those of check.json's list."""
    def why(fid):
        return f"no random loss on the data path of {fid}: its losses are overflows"
    ids = [f"F{i}" for i in range(1, 31)]
    rows = [no_model("flow", fid, "rate_mbps", 1.0, why(fid)) for fid in ids[:12]]
    rows.append(no_model("flow", "F13", "rate_mbps", 1.0, "F13 started too late"))
    rows += [no_model("flow", fid, "rate_mbps", 1.0, why(fid)) for fid in ids[13:]]
    rows.append(no_model("flow", "F1", "rtt_ms", 1.0, why("F1")))     # a reason cited twice
    data = report(rows)
    data["no_model_reasons"] = [*[why(f) for f in ids[:12]], "F13 started too late",
                                *[why(f) for f in ids[13:]]]
    data["intervals"][0]["flows"] = ids
    lines = format_report(data, rows=5).splitlines()
    listed = [line for line in lines if line[:4].strip()[:1].isdigit()]
    assert listed == [
        "  1-12, 14-30. no random loss on the data path of <flow>: its losses are overflows — "
        "<flow>: F1, F2, F3, F4, F5, ... (29 flows)"]
    assert "  ... 1 more reason, of rows not listed (all 30 in check.json)" in lines
    every = format_report(data, rows=0).splitlines()
    assert "  13. F13 started too late" in every
    assert any(line.endswith("<flow>: " + ", ".join(ids[:12] + ids[13:])) for line in every)


def test_an_id_inside_a_longer_one_keeps_its_reason_whole():
    """F1's reason names F12 and F2's names F22: grouped on the id they would read
    "<flow> shares its queue with <flow>2", so each keeps its line. Whole-word ids group."""
    reasons = {"F1": "F1 shares its queue with F12", "F2": "F2 shares its queue with F22",
               "F3": "F3 shares its queue with F4", "F4": "F4 shares its queue with F4"}
    rows = [no_model("flow", fid, "rate_mbps", 1.0, text) for fid, text in reasons.items()]
    data = report(rows)
    data["no_model_reasons"] = list(reasons.values())
    data["intervals"][0]["flows"] = list(reasons)
    lines = format_report(data, rows=0).splitlines()
    listed = [line for line in lines if line[:4].strip()[:1].isdigit()]
    assert listed == ["  1. F1 shares its queue with F12", "  2. F2 shares its queue with F22",
                      "  3. F3 shares its queue with F4", "  4. F4 shares its queue with F4"]


def test_rows_over_the_tolerance_are_marked():
    """A grader sees which rows failed --check-tolerance: each is marked "over T %", and the
    verdict counts them (the table read the same whether it passed or not)."""
    rows = [row("flow", "F1", "rate_mbps", 10.0, 9.8, 9.8, 0.05),       # 2.04 %
            row("flow", "F2", "rate_mbps", 10.0, 9.95, 9.95, 0.05),     # 0.50 %
            row("link", "L1", "backlog_kb", 30.0, 25.0, 25.0, 0.1)]     # 20.00 %
    failing = {**report(rows), "tolerance_pct": 1.0, "passed": False, "max_error_pct": 20.0}
    lines = format_report(failing).splitlines()
    marked = [line.split()[1] for line in lines if line.endswith("over 1 %")]
    assert marked == ["F1", "L1"]
    assert lines[-1] == ('largest error 20.00 % — NOT within the 1 % tolerance (2 rows over '
                         'it, marked "over")')
    passing = {**failing, "tolerance_pct": 25.0, "passed": True}
    text = format_report(passing)
    assert "over" not in text and text.endswith("within the 25 % tolerance")
    assert "over" not in format_report(report(rows))                    # no tolerance: no marks
