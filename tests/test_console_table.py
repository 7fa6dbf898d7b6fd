"""The console table (netsim/console.py): a few flows and links one line each; beyond
--table-rows, the first rows, how many more, and aggregate lines per algorithm, workload and for
the links, with the values asserted here."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from netsim.console import TABLE_ROWS, format_summary, quantile


def flow(algorithm, finish_s, goodput):
    return {"algorithm": algorithm, "finish_s": finish_s, "goodput_mbps": goodput,
            "avg_rtt_ms": 10.0, "retransmissions": 0, "timeouts": 0, "in_order": True}


def direction(util, drops=0, random=0, failure=0):
    return {"avg_rate_mbps": util * 10, "utilization": util, "avg_buffer_kb": 0.0,
            "avg_buffer_pkts": 0.0, "drops": drops, "impairment_drops": random,
            "failure_drops": failure}


def summary(flows, links, workloads=None):
    out = {"topology": "t", "units": {"system": "si"}, "stop_detail": "all flows completed",
           "end_time_s": 30.0, "events": 1, "wall_time_s": 0.1, "flows": flows,
           "links": {lid: {"queue": "droptail", "directions": dirs} for lid, dirs in links.items()}}
    if workloads:
        out["workloads"] = workloads
    return out


def many():
    """20 Reno flows finishing at 1..20 s with goodput 1..20 Mb/s, then 10 CUBIC flows of which
    the last 4 never finish (goodput 0.5 each, finish 2, 4, ..., 12 s for the others)."""
    flows = {f"F{i}": flow("reno", float(i), float(i)) for i in range(1, 21)}
    flows.update({f"F{20 + i}": flow("cubic", 2.0 * i if i <= 6 else None, 0.5)
                  for i in range(1, 11)})
    links = {f"L{i}": {"a->b": direction(i / 100, drops=i), "b->a": direction(0.0, random=1)}
             for i in range(1, 16)}
    return summary(flows, links)


def lines_after(text, header_start):
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(header_start))
    return lines[i + 1:]


def test_a_small_run_lists_everything_and_has_no_aggregates():
    s = summary({"F1": flow("reno", 1.5, 2.0)}, {"L1": {"a->b": direction(0.5)}})
    text = format_summary(s, ["L1"])
    assert "more flows" not in text and "algorithm   flows" not in text
    assert "more link directions" not in text and "util: mean" not in text
    assert [line.split()[0] for line in text.splitlines()[3:] if line] == ["F1", "link", "L1"]


def test_many_flows_list_the_first_rows_then_one_line_per_algorithm():
    text = format_summary(many(), [f"L{i}" for i in range(1, 16)], rows=5)
    listed = [line.split()[0] for line in text.splitlines() if line.startswith("F")]
    assert listed == ["F1", "F2", "F3", "F4", "F5"]
    assert "... 25 more flows (all 30 in summary.json, and in flows.csv from their start)" in text
    reno, cubic = lines_after(text, "algorithm   flows")[:2]
    # Reno: finish 1..20 -> mean 10.5, p50 10.5, p99 = 19 + 0.81 = 19.81; goodput the same
    assert reno.split() == ["reno", "20", "20", "10.500", "10.500", "19.810",
                            "10.500", "10.500", "19.810"]
    # CUBIC: 6 of 10 done, finish 2..12 -> mean 7, p50 7, p99 = 10 + 0.95 * 2 = 11.9
    assert cubic.split() == ["cubic", "10", "6", "7.000", "7.000", "11.900",
                             "0.500", "0.500", "0.500"]


def test_many_link_directions_list_the_first_rows_then_one_aggregate_line():
    text = format_summary(many(), [f"L{i}" for i in range(1, 16)], rows=4)
    listed = [line.split()[:2] for line in text.splitlines() if line.startswith("L")]
    assert listed == [["L1", "a->b"], ["L1", "b->a"], ["L2", "a->b"], ["L2", "b->a"]]
    assert "... 26 more link directions (all 30 in summary.json and links.csv)" in text
    values = lines_after(text, "directions")[0].split()
    util = [i / 100 for i in range(1, 16)] + [0.0] * 15
    assert values == ["30", f"{np.mean(util):.2f}", f"{np.percentile(util, 50):.2f}",
                      f"{np.percentile(util, 99):.2f}", "0.15", str(sum(range(1, 16))), "15", "0"]


def test_links_nobody_chose_list_those_that_lost_most_then_the_busiest():
    """Without -l, a fabric's first link directions in file order were mostly idle host links:
    the listed ones are those that lost the most packets, then the most utilized."""
    s = many()
    s["links"]["L3"]["directions"]["b->a"] = direction(0.9)          # busy, lost nothing
    text = format_summary(s, [f"L{i}" for i in range(1, 16)], rows=4, busiest=True)
    listed = [line.split()[:2] for line in text.splitlines() if line.startswith("L")]
    # drops 15, 14, 13 on a->b (+0 random), then random 1 on every b->a: the busiest of those
    assert listed == [["L15", "a->b"], ["L14", "a->b"], ["L13", "a->b"], ["L12", "a->b"]]
    assert ("... 26 more link directions (the 4 that lost the most packets, then the busiest, "
            "are listed; all 30 in summary.json and links.csv)") in text
    quiet = summary({"F1": flow("reno", 1.0, 1.0)},
                    {f"L{i}": {"a->b": direction(i / 10)} for i in range(1, 6)})
    text = format_summary(quiet, [f"L{i}" for i in range(1, 6)], rows=2, busiest=True)
    assert [line.split()[0] for line in text.splitlines() if line.startswith("L")] == ["L5", "L4"]


def test_zero_rows_lists_everything():
    text = format_summary(many(), [f"L{i}" for i in range(1, 16)], rows=0)
    assert sum(line.startswith("F") for line in text.splitlines()) == 30
    assert sum(line.startswith("L") for line in text.splitlines()) == 30
    assert "more" not in text
    assert TABLE_ROWS == 20


def test_workloads_get_one_line_each():
    workloads = {"web": {"flows_started": 120, "flows_completed": 118,
                         "all": {"mean_fct_s": 0.0123, "p50_fct_s": 0.005, "p99_fct_s": None}}}
    s = summary({"F1": flow("reno", 1.0, 1.0)}, {"L1": {"a->b": direction(0.5)}}, workloads)
    assert lines_after(format_summary(s, ["L1"]), "workload")[0].split() == [
        "web", "120", "118", "0.0123", "0.00500", "-"]


def test_unfinished_workload_flows_are_said_under_the_table():
    """FCT percentiles of finished flows only, printed without a word: the k=8 websearch example
    left 58 of its 521 flows (11 %) unfinished, 13 of them over 10 MB (acceptance test Z14)."""
    bucket = {"mean_fct_s": 0.0164, "p50_fct_s": 0.0015, "p99_fct_s": 0.18}
    workloads = {"W": {"flows_started": 521, "flows_completed": 463, "flows_unfinished": 58,
                       "all": {**bucket, "unfinished": 58},
                       "over_10mb": {**bucket, "unfinished": 13}},
                 "X": {"flows_started": 9, "flows_completed": 9, "flows_unfinished": 0,
                       "all": {**bucket, "unfinished": 0}}}
    s = summary({"F1": flow("reno", 1.0, 1.0)}, {"L1": {"a->b": direction(0.5)}}, workloads)
    assert lines_after(format_summary(s, ["L1"]), "workload")[2] == (
        "FCTs are of finished flows only: 58 of 530 flows (10.9 %) were unfinished at the end, "
        "13 of them over 10 MB (by size bucket: workloads.<id>.<bucket>.unfinished in "
        "summary.json)")
    workloads["W"].update(flows_completed=521, flows_unfinished=0)
    text = format_summary(s, ["L1"])
    assert "unfinished" not in text


def test_data_center_times_keep_three_significant_digits():
    """Workload FCTs of about 50 us printed 0.0000 (acceptance testing at scale)."""
    workloads = {"dc": {"flows_started": 40, "flows_completed": 40,
                        "all": {"mean_fct_s": 4.986e-05, "p50_fct_s": 4.8e-05,
                                "p99_fct_s": 0.000123}}}
    s = summary({"F1": flow("reno", 5e-05, 1.0), "F2": flow("reno", 6e-05, 1.0)},
                {"L1": {"a->b": direction(0.5)}}, workloads)
    text = format_summary(s, ["L1"], rows=1)
    assert lines_after(text, "workload")[0].split() == [
        "dc", "40", "40", "4.99e-05", "4.80e-05", "0.000123"]
    assert lines_after(text, "algorithm")[0].split()[3:6] == ["5.50e-05", "5.50e-05",
                                                              "5.99e-05"]   # (p99: interpolated)


def test_data_center_rtts_keep_three_significant_digits():
    """A leaf-spine's 24 us RTT read 0.0 ms in the flow table (acceptance test Z5 LOW-3)."""
    flows = {fid: flow("reno", 1.0, 1.0) for fid in ("F1", "F2", "F3", "F4")}
    for fid, rtt_ms in zip(flows, (0.02418, 5.3, 182.94, None)):
        flows[fid]["avg_rtt_ms"] = rtt_ms
    text = format_summary(summary(flows, {"L1": {"a->b": direction(0.5)}}), ["L1"], rows=0)
    header = lines_after(text, "flow")
    assert [line.split()[4] for line in header[:4]] == ["0.0242", "5.30", "182.9", "-"]


def test_table_rows_caps_the_workload_lines():
    """500 workloads printed 500 lines whatever --table-rows said."""
    workloads = {f"W{i}": {"flows_started": 1, "flows_completed": 1,
                           "all": {"mean_fct_s": 0.5, "p50_fct_s": 0.5, "p99_fct_s": 0.5}}
                 for i in range(30)}
    s = summary({"F1": flow("reno", 1.0, 1.0)}, {"L1": {"a->b": direction(0.5)}}, workloads)
    text = format_summary(s, ["L1"], rows=5)
    assert [line.split()[0] for line in lines_after(text, "workload")[:6]] == [
        "W0", "W1", "W2", "W3", "W4", "..."]
    assert "... 25 more workloads (all 30 in summary.json)" in text
    assert sum(line.startswith("W") for line in format_summary(s, ["L1"], rows=0)
               .splitlines()) == 30


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40), st.floats(0, 1))
def test_quantile_is_numpys_linear_percentile(values, q):
    assert quantile(values, q) == pytest.approx(np.percentile(values, 100 * q), rel=1e-9, abs=1e-6)


def test_the_command_line_cuts_the_table(run_cli, tmp_path, dumbbell):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(dumbbell(4, total_mb=0.2)))
    done = run_cli(path, "--no-plots", "--table-rows", "2", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert "... 2 more flows (all 4 in summary.json, and in flows.csv from their start)" in done.stdout
    reno = lines_after(done.stdout, "algorithm   flows")[0].split()
    assert reno[:3] == ["reno", "4", "4"]
    saved = json.loads((tmp_path / "r" / "summary.json").read_text())
    finish = [f["finish_s"] for f in saved["flows"].values()]
    assert reno[3] == f"{np.mean(finish):.3f}" and reno[5] == f"{np.percentile(finish, 99):.3f}"
    assert ("... 16 more link directions (the 2 that lost the most packets, then the busiest, "
            "are listed; all 18 in summary.json and links.csv)") in done.stdout
    chosen = run_cli(path, "--no-plots", "--table-rows", "2", "-l", "A0", "L", "--out",
                     tmp_path / "r1")
    assert [line.split()[:2] for line in chosen.stdout.splitlines()
            if line.startswith(("A0 ", "L "))] == [["A0", "S0->R1"], ["A0", "R1->S0"]]
    bad = run_cli(path, "--no-plots", "--table-rows", "-1", "--out", tmp_path / "r2")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].endswith("--table-rows: expected a number from 0 to 1000000000 (0: list all), got -1")


def test_a_run_of_workloads_only_has_no_flow_table():
    workloads = {"web": {"flows_started": 2, "flows_completed": 1,
                         "all": {"mean_fct_s": 0.0028, "p50_fct_s": 0.0028, "p99_fct_s": 0.0028}}}
    lines = format_summary(summary({}, {}, workloads), []).splitlines()
    assert lines[1] == "" and lines[2].startswith("workload") and lines[3].startswith("web")
    assert not any(line.startswith("flow ") for line in lines)


def test_a_rate_source_shows_its_losses_not_a_transports_counters():
    cbr = dict(flow("cbr", 30.0, 3.988), kind="cbr", packets_lost=40)
    clean = dict(flow("cbr", 30.0, 4.0), kind="cbr", packets_lost=0)
    lines = format_summary(summary({"CBR": cbr, "C2": clean}, {}), []).splitlines()
    assert lines[3].split()[5:] == ["-", "-", "yes", "(40", "lost)"]
    assert lines[4].split()[5:] == ["-", "-", "yes"]


def test_long_algorithm_and_workload_names_widen_their_column():
    """A plugin's or a workload's long name ran into the count beside it ("my_long_cc_name20")."""
    s = many()
    for f in s["flows"].values():
        if f["algorithm"] == "cubic":
            f["algorithm"] = "a_plugin_with_a_long_name"
    s["workloads"] = {"web_search_to_rack_two": {"flows_started": 7, "flows_completed": 5,
                                                 "all": {"mean_fct_s": 0.5, "p50_fct_s": 0.25,
                                                         "p99_fct_s": 1.0}}}
    text = format_summary(s, ["L1"], rows=5)
    plugin = next(line for line in text.splitlines() if line.startswith("a_plugin"))
    assert plugin.split()[:3] == ["a_plugin_with_a_long_name", "10", "6"]
    workload = lines_after(text, "workload")[0]
    assert workload.split()[:3] == ["web_search_to_rack_two", "7", "5"]
    headers = [line for line in text.splitlines() if line.startswith(("algorithm", "workload"))]
    for header, row in zip(headers, [plugin, workload]):
        assert header.index("flows") + len("flows") == row.index(row.split()[1]) + len(row.split()[1])
