"""Filters of the event trace (--trace-flows, --trace-links, --trace-nodes, --trace-events,
--trace-window; EventTrace(path, flows=, links=, nodes=, events=, start_s=, end_s=)): a filtered
trace is the unfiltered one with rows left out, row for row; the run's other results do not
change; bad values are one line before the run; hooks go only where rows are wanted."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.link import LinkDirection
from netsim.cli import TRACE_EVENTS, main
from netsim.cli_options import option_error_line, program_name
from netsim.event_trace import EVENTS, FIELDS, EventTrace, TraceFilterError
from netsim.run import Run
from topologies import load_topology

# Every kind of row: Bellman-Ford (routing packets, no flow), a bulk flow, a cbr flow and a
# workload's flows; overflow and CoDel drops on a half-duplex bottleneck (its two directions
# share one discipline), losses of an impairment, a failure (link_down, link_failure).
NETWORK = {
    "name": "filters", "hosts": ["H1", "H2", "H3"], "routers": ["R1", "R2"], "duration_s": 0.8,
    "seed": 3, "routing": {"protocol": "bellman-ford", "update_interval_s": 0.2, "settle_s": 0.05},
    "links": [
        {"id": "A", "ends": ["H1", "R1"], "rate_mbps": 20, "delay_ms": 1, "buffer_kb": 64},
        {"id": "B", "ends": ["R1", "R2"], "rate_mbps": 5, "delay_ms": 5, "buffer_kb": 20,
         "duplex": "half", "queue": {"discipline": "codel"}},
        {"id": "C", "ends": ["R2", "H2"], "rate_mbps": 20, "delay_ms": 1, "buffer_kb": 64,
         "impairments": {"R2->H2": {"loss_rate": 0.02}}},
        {"id": "D", "ends": ["H3", "R1"], "rate_mbps": 20, "delay_ms": 1, "buffer_kb": 64}],
    "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.3},
              {"id": "C1", "src": "H3", "dst": "H2", "kind": "cbr", "rate_mbps": 2}],
    "workloads": [{"id": "W", "src": ["H1", "H3"], "dst": ["H2"], "arrivals_per_s": 20,
                   "sizes": [[1000, 0.0], [20000, 1.0]], "algorithm": "reno"}],
    "events": [{"at_s": 0.5, "link": "B", "action": "down"},
               {"at_s": 0.55, "link": "B", "action": "up"}],
}
LINKS = ("A", "B", "C", "D")
NODES = ("H1", "H2", "H3", "R1", "R2")
FLOWS = ("F1", "C1", "W", "W#2")


def traced(path: Path, **filters):
    """Run NETWORK with an event trace at `path` under `filters`: (its lines, the trace)."""
    run = Run(load_topology(NETWORK))
    with EventTrace(path, **filters) as trace:
        trace.install(run.network)
        run.execute()
    return path.read_text(encoding="utf-8").splitlines(), trace


def expected(lines: list, flows=None, links=None, nodes=None, events=None, start_s=None,
             end_s=None) -> list:
    """The lines of the unfiltered CSV trace `lines` that the filters keep (header first)."""
    kept = [lines[0]]
    for line in lines[1:]:
        row = dict(zip(FIELDS, next(csv.reader([line]))))
        flow = row["flow"]
        if flows is not None and not (flow and (flow in flows
                                                or flow.rpartition("#")[0] in flows)):
            continue
        if links is not None and row["link"] not in links:
            continue
        if nodes is not None and row["node"] not in nodes:
            continue
        if events is not None and row["event"] not in events:
            continue
        time_s = float(row["time_s"])
        if not (start_s or 0.0) <= time_s < (math.inf if end_s is None else end_s):
            continue
        kept.append(line)
    return kept


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> list:
    """The unfiltered trace of NETWORK, with every kind of row in it."""
    lines, _ = traced(tmp_path_factory.mktemp("reference") / "all.csv")
    rows = [dict(zip(FIELDS, row)) for row in csv.reader(lines[1:])]
    assert {(row["event"], row["cause"]) for row in rows} >= {
        ("transmit", ""), ("enqueue", ""), ("receive", ""), ("drop", "overflow"),
        ("drop", "aqm"), ("drop", "impairment"), ("drop", "link_down"),
        ("drop", "link_failure")}
    assert {row["flow"].split("#")[0] for row in rows} == {"", "F1", "C1", "W"}
    assert any(row["kind"] == "routing" for row in rows)
    return lines


# -- a filtered trace is a subset of the unfiltered one, row for row ---------------------------
@pytest.mark.parametrize("filters", [
    {"flows": ["F1"]},
    {"flows": ["W"]},
    {"flows": ["W#2", "C1"]},
    {"links": ["B"]},
    {"nodes": ["R1"]},                      # the sending side of the shared CoDel queue only
    {"events": ["drop"]},
    {"events": ["transmit", "receive"]},
    {"start_s": 0.45, "end_s": 0.6},
    {"start_s": 0.5},
    {"end_s": 0.1},
    {"flows": ["F1"], "links": ["C"], "events": ["receive", "drop"], "start_s": 0.2},
], ids=lambda filters: ",".join(f"{k}={v}" for k, v in filters.items()))
def test_a_filtered_trace_is_the_unfiltered_one_with_rows_left_out(tmp_path, reference,
                                                                    filters):
    lines, trace = traced(tmp_path / "t.csv", **filters)
    want = expected(reference, **filters)
    assert len(want) > 1                                   # (every case keeps some rows)
    assert lines == want
    assert trace.lines == len(want) - 1


@settings(max_examples=25, deadline=None)
@given(flows=st.none() | st.lists(st.sampled_from(FLOWS), min_size=1, max_size=2),
       links=st.none() | st.lists(st.sampled_from(LINKS), min_size=1, max_size=2),
       nodes=st.none() | st.lists(st.sampled_from(NODES), min_size=1, max_size=3),
       events=st.none() | st.lists(st.sampled_from(EVENTS), min_size=1, max_size=3),
       start_s=st.none() | st.sampled_from([0.0, 0.3, 0.5, 0.52]),
       length_s=st.none() | st.sampled_from([0.01, 0.1, math.inf]))
def test_any_combination_of_filters_keeps_exactly_the_rows_that_match(
        tmp_path_factory, reference, flows, links, nodes, events, start_s, length_s):
    end_s = None if length_s is None else (start_s or 0.0) + length_s
    filters = {"flows": flows, "links": links, "nodes": nodes, "events": events,
               "start_s": start_s, "end_s": end_s}
    lines, _ = traced(tmp_path_factory.mktemp("any") / "t.csv", **filters)
    assert lines == expected(reference, **filters)


def test_json_lines_are_filtered_alike(tmp_path):
    every, _ = traced(tmp_path / "all.jsonl")
    lines, _ = traced(tmp_path / "some.jsonl", links=["B"], events=["enqueue", "drop"])
    records = [json.loads(line) for line in every]
    assert lines == [line for line, record in zip(every, records)
                     if record["link"] == "B" and record["event"] in ("enqueue", "drop")]
    assert lines


def test_rows_without_a_flow_are_left_out_by_a_flow_filter_and_kept_by_a_link_filter(
        tmp_path, reference):
    routing = [line for line in reference if ",routing," in line]
    assert routing
    by_flow, _ = traced(tmp_path / "f.csv", flows=["F1", "C1", "W"])
    by_link, _ = traced(tmp_path / "l.csv", links=list(LINKS))
    assert not [line for line in by_flow if ",routing," in line]
    assert len(by_flow) == len(reference) - len(routing)
    assert by_link == reference


# -- the run's other results do not change ------------------------------------------------------
def test_filters_change_nothing_but_the_trace(tmp_path, capsys):
    topology = tmp_path / "filters.json"
    topology.write_text(json.dumps(NETWORK))
    common = [str(topology), "--no-plots", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "all"), "--trace",
                 str(tmp_path / "all.csv")]) == 0
    assert main([*common, "--out", str(tmp_path / "some"), "--trace",
                 str(tmp_path / "some.csv"), "--trace-flows", "W", "--trace-nodes", "R1", "H2",
                 "--trace-events", "enqueue", "receive", "--trace-window", "0.1", "0.7"]) == 0
    assert capsys.readouterr().err == ""
    files = sorted(path.name for path in (tmp_path / "all").iterdir())
    assert "fct.csv" in files and "summary.json" in files
    assert files == sorted(path.name for path in (tmp_path / "some").iterdir())
    for name in files:
        before = (tmp_path / "all" / name).read_bytes().splitlines()
        after = (tmp_path / "some" / name).read_bytes().splitlines()
        if name == "summary.json":            # (the wall-clock time of the run differs)
            before, after = ([line for line in lines if b'"wall_time_s"' not in line]
                             for lines in (before, after))
        assert before == after, name
    every = (tmp_path / "all.csv").read_text().splitlines()
    some = (tmp_path / "some.csv").read_text().splitlines()
    assert len(some) > 1
    assert some == expected(every, flows=["W"], nodes=["R1", "H2"],
                            events=["enqueue", "receive"], start_s=0.1, end_s=0.7)


# -- bad values: one line, before the run ----------------------------------------------------------
KNOWN_LINKS = "A, B, C, D"


@pytest.mark.parametrize("options, line", [
    (["--trace-flows", "F2"], 'error: --trace-flows: unknown id "F2" (did you mean "F1"?); '
                              'known: F1, C1, W, or W#N (workload W\'s Nth flow)'),
    (["--trace-flows", "W#0"], 'error: --trace-flows: unknown id "W#0" (did you mean "W"?); '
                               'known: F1, C1, W, or W#N (workload W\'s Nth flow)'),
    (["--trace-links", "A", "E"], f'error: --trace-links: unknown id "E"; known: {KNOWN_LINKS}'),
    (["--trace-nodes", "R22"], 'error: --trace-nodes: unknown id "R22" (did you mean "R2"?); '
                              'known: H1, H2, H3, R1, R2'),
    (["--trace-events", "recieve"], 'error: --trace-events: unknown event "recieve" (did you '
                                    'mean "receive"?); known: transmit, enqueue, drop, receive'),
    (["--trace-events", "send"], 'error: --trace-events: unknown event "send"; known: '
                                 'transmit, enqueue, drop, receive'),
    (["--trace-window", "0.5", "0.2"], "error: --trace-window END: expected a number of seconds "
                                       "above START (0.5), got 0.2"),
    (["--trace-window", "-1", "2"], "error: --trace-window START: expected a finite number of "
                                    "seconds >= 0, got -1"),
    (["--trace-window", "0", "nan"], "error: --trace-window END: expected a number of seconds, "
                                     "got nan"),
    (["--trace-window", "0.8", "inf"], "error: --trace-window: START (0.8 s) is not before the "
                                       "end of the run (0.8 s): the trace would be empty"),
])
def test_a_bad_filter_is_one_line_before_the_run(tmp_path, capsys, options, line):
    topology = tmp_path / "filters.json"
    topology.write_text(json.dumps(NETWORK))
    code = main([str(topology), "--no-plots", "--quiet", "--out", str(tmp_path / "r"),
                 "--trace", str(tmp_path / "t.csv"), *options])
    assert code == 2
    assert capsys.readouterr().err == line + "\n"
    assert not (tmp_path / "r").exists() and not (tmp_path / "t.csv").exists()
    assert [path.name for path in tmp_path.iterdir()] == ["filters.json"]


@pytest.mark.parametrize("options", [["--trace-flows", "F1"], ["--trace-links", "L1"],
                                     ["--trace-nodes", "X"], ["--trace-events", "drop"],
                                     ["--trace-window", "1", "2"]])
def test_a_filter_without_trace_is_refused(tmp_path, capsys, options):
    code = main(["test_case_0", "--no-plots", "--quiet", "--out", str(tmp_path / "r"), *options])
    assert code == 2
    assert capsys.readouterr().err == f"error: {options[0]}: only meaningful with --trace\n"
    assert not (tmp_path / "r").exists()


def test_an_argument_error_of_the_window_is_argparses_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["test_case_0", "--trace", "t.csv", "--trace-window", "1"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == option_error_line(
        program_name(), "argument --trace-window: expected 2 arguments") + "\n"


@pytest.mark.parametrize("option", ["--trace-flows", "--trace-links", "--trace-nodes",
                                    "--trace-events"])
def test_a_filter_list_before_the_topology_does_not_swallow_it(tmp_path, option):
    values = {"--trace-flows": ["F1", "F1"], "--trace-links": ["L1"], "--trace-nodes": ["H2"],
              "--trace-events": ["receive"]}[option]
    trace = tmp_path / "t.csv"
    code = main(["--trace", str(trace), "--no-plots", "--quiet", "--out", str(tmp_path / "r"),
                 "--duration", "1.2", option, *values,
                 str(Path(__file__).resolve().parent.parent / "topologies" / "test_case_0.json")])
    assert code == 0
    rows = list(csv.DictReader(trace.open(newline="")))
    column = {"--trace-flows": "flow", "--trace-links": "link", "--trace-nodes": "node",
              "--trace-events": "event"}[option]
    assert rows and {row[column] for row in rows} == set(values)


# -- the Python API --------------------------------------------------------------------------------
@pytest.mark.parametrize("filters, message", [
    ({"events": ["send"]}, 'events: unknown event "send"; known: transmit, enqueue, drop, '
                           'receive'),
    ({"flows": []}, "flows: expected at least one value (None: no filter)"),
    ({"links": [1]}, "links: expected ids (strings), got 1"),
    ({"nodes": 3}, "nodes: expected a list of ids, got int"),
    ({"start_s": -0.5}, "start_s: expected a finite number of seconds >= 0, got -0.5"),
    ({"start_s": 2, "end_s": 1}, "end_s: expected a number of seconds above start_s (2), got 1"),
    ({"end_s": 0}, "end_s: expected a number of seconds above 0, got 0"),
    ({"end_s": "1"}, "end_s: expected a number of seconds, got '1'"),
])
def test_the_keyword_arguments_are_checked_before_the_file_is_opened(tmp_path, filters, message):
    with pytest.raises(TraceFilterError) as caught:
        EventTrace(tmp_path / "t.csv", **filters)
    assert str(caught.value) == message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("filters, message", [
    ({"links": ["A", "Z"]}, f'links: unknown id "Z"; known: {KNOWN_LINKS}'),
    ({"flows": "F3"}, 'flows: unknown id "F3" (did you mean "F1"?); known: F1, C1, W, or W#N '
                      '(workload W\'s Nth flow)'),
    ({"nodes": ["h1"]}, 'nodes: unknown id "h1" (did you mean "H1"?); known: H1, H2, H3, R1, '
                        'R2'),
])
def test_ids_the_network_lacks_are_refused_by_install(tmp_path, filters, message):
    run = Run(load_topology(NETWORK))
    with pytest.raises(TraceFilterError) as caught:
        with EventTrace(tmp_path / "t.csv", **filters) as trace:
            trace.install(run.network)
    assert str(caught.value) == message
    assert list(tmp_path.iterdir()) == []             # (the trace begun is removed)


def test_a_string_is_one_id_and_the_events_are_the_commands(tmp_path, reference):
    lines, _ = traced(tmp_path / "t.csv", flows="C1", events="drop")
    assert lines == expected(reference, flows=["C1"], events=["drop"])
    assert TRACE_EVENTS == EVENTS


# -- hooks only where rows are wanted --------------------------------------------------------
def directions(run) -> dict:
    return {d.label: d for link in run.network.links.values() for d in link.directions}


def send_traced(d) -> bool:
    """Whether `d` is of the trace's class whose `send` writes the offers."""
    return type(d).__name__.startswith("Tracing") and "send" in vars(type(d))


def receive_traced(d) -> bool:
    """Whether the innermost receive callback of `d` is the trace's (not the node's method)."""
    inner = d.dst_receive
    while hasattr(inner, "receive") and not hasattr(inner, "__self__"):
        inner = inner.receive
    return not hasattr(inner, "__self__")


def installed(tmp_path, **filters):
    run = Run(load_topology(NETWORK))
    trace = EventTrace(tmp_path / "t.csv", **filters)
    trace.install(run.network)
    trace.discard()
    return run, trace


def test_without_filters_the_hooks_call_the_writer_itself(tmp_path):
    for filters in ({}, {"links": ["A"]}, {"nodes": ["R1"]}, {"events": ["receive"]},
                    {"events": ["transmit", "enqueue", "drop"]}):
        _, trace = installed(tmp_path, **filters)
        assert trace.hook == trace.emit and trace.keep is None, filters
    for filters in ({"flows": ["F1"]}, {"start_s": 1.0}, {"events": ["transmit"]}):
        _, trace = installed(tmp_path, **filters)
        assert trace.hook != trace.emit, filters


def test_links_and_nodes_not_selected_get_no_hook(tmp_path):
    run, _ = installed(tmp_path, links=["B"])
    for label, d in directions(run).items():
        on_b = d.link.id == "B"
        assert send_traced(d) == on_b and receive_traced(d) == on_b, label
        assert on_b or type(d) is LinkDirection
    run, _ = installed(tmp_path, nodes=["H1"])
    sends = {label for label, d in directions(run).items() if send_traced(d)}
    receives = {label for label, d in directions(run).items() if receive_traced(d)}
    assert sends == {"H1->R1"} and receives == {"R1->H1"}


def test_event_kinds_not_wanted_get_no_hook(tmp_path):
    run, _ = installed(tmp_path, events=["receive"])
    assert all(type(d) is LinkDirection and receive_traced(d)
               for d in directions(run).values() if d.link.id != "B")
    run, _ = installed(tmp_path, events=["transmit"])
    assert not any(receive_traced(d) for d in directions(run).values())
    assert run.network.links["B"].transmitters[0].on_queued_drop is None


def test_a_flow_filter_names_only_the_flows_it_keeps(tmp_path):
    _, trace = traced(tmp_path / "t.csv", flows=["F1"])
    assert set(trace.flow_of.values()) == {"F1"}
