"""--trace FILE: every packet event of a run, streamed as CSV or JSON Lines (netsim/event_trace.py)."""
from __future__ import annotations

import csv
import json
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from components.link import LinkDirection
from netsim.run import Run
from netsim.event_trace import FIELDS, EventTrace
from topologies import load_topology

ROOT = Path(__file__).resolve().parent.parent


def offered(summary) -> int:
    return sum(d["packets_transmitted"] + d["drops"] + d["failure_drops"]
               for link in summary["links"].values() for d in link["directions"].values())


def traced_run(spec, path, **options):
    run = Run(spec, **options)
    with EventTrace(path) as trace:
        trace.install(run.network)
        results = run.execute()
    return results, trace


def small_buffer(dumbbell):
    data = dumbbell(2, total_mb=2.0)
    data["links"][0]["buffer_kb"] = 15          # overflow drops at the bottleneck
    return load_topology(data)


def test_line_count_is_offers_plus_receives_and_drops_carry_their_cause(tmp_path, dumbbell):
    results, trace = traced_run(small_buffer(dumbbell), tmp_path / "t.csv")
    summary = results.summary
    assert summary["stop_reason"] == "completed"
    with open(tmp_path / "t.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(FIELDS)
    events = Counter(row["event"] for row in rows)
    assert len(rows) == trace.lines
    # every packet offered to a link is one line, every delivery at a node one more; with no
    # loss in transit and a completed run, every transmitted packet was delivered
    transmitted = sum(d["packets_transmitted"] for link in summary["links"].values()
                      for d in link["directions"].values())
    assert events["transmit"] + events["enqueue"] + events["drop"] == offered(summary)
    assert events["receive"] == transmitted
    assert len(rows) == offered(summary) + transmitted
    drops = [row for row in rows if row["event"] == "drop"]
    buffer_drops = sum(d["drops"] for link in summary["links"].values()
                       for d in link["directions"].values())
    assert buffer_drops > 0 and len(drops) == buffer_drops
    assert {row["cause"] for row in drops} == {"overflow"}
    assert all(row["flow"] and row["seq"] for row in drops)
    times = [float(row["time_s"]) for row in rows]
    assert times == sorted(times)
    enqueued = [row for row in rows if row["event"] == "enqueue"]
    assert enqueued and all(float(r["start_s"]) > float(r["time_s"]) for r in enqueued)


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_failure_drops_are_link_down(tmp_path):
    data = json.loads((ROOT / "topologies" / "test_case_1.json").read_text())
    data["events"] = [{"at_s": 2.0, "link": "L1", "action": "down"},
                      {"at_s": 4.0, "link": "L1", "action": "up"}]
    run = Run(load_topology(data), duration_s=7.0)
    with EventTrace(tmp_path / "t.jsonl") as trace:
        trace.install(run.network)
        run.execute()
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    directions = [d for link in run.network.links.values() for d in link.directions]
    # one line per packet offered to a link (the links' own count) and one per delivery
    offers = [r for r in records if r["event"] in ("transmit", "enqueue")
              or r.get("cause") == "link_down"]
    assert len(offers) == sum(d.arrived for d in directions)
    down = [r for r in records if r.get("cause") == "link_down"]
    lost = [r for r in records if r.get("cause") == "link_failure"]
    assert down and lost
    assert all(r["link"] == "L1" and 2.0 <= r["time_s"] < 4.0 for r in down)
    # every failure drop of summary.json (offered while down, waiting or in flight when the
    # link failed: failed + lost_in_flight) is one drop line
    assert len(down) + len(lost) == sum(d.failed + d.lost_in_flight for d in directions)
    # a repaired link keeps tracing its deliveries
    assert any(r["event"] == "receive" and r["link"] == "L1" and r["time_s"] > 4.0 for r in records)


def test_losses_in_transit_are_impairment_drops(tmp_path):
    run = Run(load_topology(ROOT / "topologies" / "lossy_link.json"), duration_s=3.0)
    with EventTrace(tmp_path / "t.csv") as trace:
        trace.install(run.network)
        run.execute()
    with open(tmp_path / "t.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    lost = [row for row in rows if row["cause"] == "impairment"]
    directions = [d for link in run.network.links.values() for d in link.directions]
    assert lost and len(lost) == sum(d.impaired_drops for d in directions)
    assert all(row["event"] == "drop" and row["node"] == "H2" for row in lost)


def test_the_command_line_option(tmp_path, run_cli):
    done = run_cli(ROOT / "topologies" / "test_case_0.json", "--trace", tmp_path / "t.csv",
                   "--no-plots", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    lines = (tmp_path / "t.csv").read_text().count("\n") - 1          # without the header
    assert lines == offered(summary) + summary["packet_hops"]          # nothing lost: all arrive


def test_without_trace_nothing_is_swapped_in(dumbbell):
    run = Run(load_topology(dumbbell(1, total_mb=0.1)))
    for link in run.network.links.values():
        for d in link.directions:
            assert type(d) is LinkDirection
            assert getattr(d.dst_receive, "__self__", None) is d.dst


@pytest.mark.slow
def test_memory_stays_bounded_on_a_long_run(tmp_path):
    spec = load_topology(ROOT / "topologies" / "test_case_2.json")
    tracemalloc.start()
    try:
        _, trace = traced_run(spec, tmp_path / "t.csv", duration_s=20.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert trace.lines > 300_000
    size = (tmp_path / "t.csv").stat().st_size
    assert size > 15e6
    assert peak < size / 4, (peak, size)        # the trace is streamed, not kept


def test_an_unwritable_trace_is_one_line(tmp_path, run_cli):
    done = run_cli(ROOT / "topologies" / "test_case_0.json", "--trace",
                   tmp_path / "no" / "such" / "t.csv", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 2 and "--trace" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_drops_a_queue_discipline_makes_of_queued_packets_are_traced(tmp_path, dumbbell):
    """CoDel drops at dequeue and FQ-CoDel drops the head of its fattest queue on overflow:
    packets that were traced as enqueued; each such drop gets its own line with its cause."""
    for queue, cause in (({"discipline": "codel"}, "aqm"),
                         ({"discipline": "fq_codel"}, None)):
        data = dumbbell(3, total_mb=3.0)
        data["links"][0]["buffer_kb"] = 150 if queue["discipline"] == "codel" else 12
        data["links"][0]["queue"] = queue
        path = tmp_path / f"{queue['discipline']}.csv"
        results, trace = traced_run(load_topology(data), path)
        with open(path, newline="") as fh:
            drops = Counter(row["cause"] for row in csv.DictReader(fh) if row["event"] == "drop")
        directions = [d for link in results.summary["links"].values()
                      for d in link["directions"].values()]
        aqm = sum(d["aqm_drops"] for d in directions)
        overflow = sum(d["drops"] for d in directions)
        assert drops["aqm"] == aqm and drops["overflow"] == overflow
        assert aqm + overflow > 0
        if cause:
            assert aqm > 0


@pytest.mark.parametrize("queue", [None, {"discipline": "red", "min_kb": 20, "max_kb": 40},
                                   {"discipline": "step", "k_kb": 20}, {"discipline": "pie"}])
def test_enqueue_start_is_when_the_transmission_begins_on_fifo_queues(tmp_path, dumbbell, queue):
    """On a FIFO queue (drop-tail, or a discipline that decides at enqueue) the transmission of a
    waiting packet begins once the ones before it are sent: `start_s` is that time. On RED it
    was the end of the packet in service, the same for every packet waiting behind it."""
    data = dumbbell(2, total_mb=1.0)
    if queue is not None:
        data["links"][0]["queue"] = queue
    path = tmp_path / "t.csv"
    results, _ = traced_run(load_topology(data), path)
    link = results.network.links[data["links"][0]["id"]]
    d = link.directions[0]
    tail_s = d.link.delay_s
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["link"] == link.id and r["direction"] == d.label]
    receive = {}
    for r in rows:
        if r["event"] == "receive":
            receive.setdefault((r["flow"], r["kind"], r["seq"]), float(r["time_s"]))
    checked = 0
    for r in rows:
        if r["event"] != "enqueue":
            continue
        arrival = receive.get((r["flow"], r["kind"], r["seq"]))
        if arrival is None:
            continue
        began = arrival - tail_s - int(r["size_bytes"]) * 8.0 / link.rate_bps
        assert float(r["start_s"]) == pytest.approx(began, abs=1e-9)
        checked += 1
    assert checked > 50


def test_enqueue_start_is_empty_where_the_discipline_decides_later(tmp_path, dumbbell):
    data = dumbbell(2, total_mb=1.0)
    data["links"][0]["queue"] = {"discipline": "codel"}
    path = tmp_path / "t.csv"
    traced_run(load_topology(data), path)
    with open(path, newline="") as fh:
        enqueued = [r for r in csv.DictReader(fh) if r["event"] == "enqueue" and r["link"] == "L"]
    assert enqueued and all(r["start_s"] == "" for r in enqueued)


@pytest.mark.parametrize("queue", [{"discipline": "step", "k_kb": 20},
                                   {"discipline": "red", "min_kb": 20, "max_kb": 40},
                                   {"discipline": "pie"}, {"discipline": "codel"},
                                   {"discipline": "fq_codel"}])
def test_packets_waiting_in_a_discipline_when_its_link_fails_are_link_failure_drops(
        tmp_path, dumbbell, queue):
    """A discipline holds its waiting packets itself; when the link fails, each is a failure
    drop with a line of its own, so the drop lines still add up to failure_drops, as with
    drop-tail, and every enqueued packet has its outcome."""
    data = dumbbell(3, total_mb=3.0)
    data["links"][0]["buffer_kb"] = 150
    data["links"][0]["queue"] = queue
    data["events"] = [{"at_s": 0.4, "link": "L", "action": "down"},     # 120-150 queued
                      {"at_s": 0.9, "link": "L", "action": "up"}]
    path = tmp_path / "t.csv"
    results, _ = traced_run(load_topology(data), path, duration_s=3.0)
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    lost = [r for r in rows if r["cause"] == "link_failure"]
    down = [r for r in rows if r["cause"] == "link_down"]
    directions = results.summary["links"]["L"]["directions"]
    waiting = sum(d.failed for d in results.network.links["L"].directions) - len(down)
    assert waiting > 0                                   # the failure found packets queued
    assert len(lost) + len(down) == sum(d["failure_drops"] for d in directions.values())
    at_failure = [r for r in lost if float(r["time_s"]) == 0.4]
    assert len(at_failure) == waiting and all(r["node"] == "R1" for r in at_failure)


def test_enqueue_start_is_known_on_a_time_varying_discipline_only_after_its_last_change(
        tmp_path, dumbbell):
    """A discipline times every packet that begins after a rate change at the new rate, so
    before the last scheduled change the moment a waiting packet begins is not known at
    enqueue; after it, `start_s` is again exact."""
    data = dumbbell(2, total_mb=2.0)
    data["links"][0]["queue"] = {"discipline": "step", "k_kb": 50}
    data["links"][0]["rate_schedule"] = [[0.5, 5.0], [1.0, 20.0]]
    path = tmp_path / "t.csv"
    results, _ = traced_run(load_topology(data), path)
    link = results.network.links["L"]
    d = link.directions[0]
    with open(path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["link"] == "L" and r["direction"] == d.label]
    receive = {}
    for r in rows:
        if r["event"] == "receive":
            receive.setdefault((r["flow"], r["kind"], r["seq"]), float(r["time_s"]))
    enqueued = [r for r in rows if r["event"] == "enqueue"]
    before = [r for r in enqueued if float(r["time_s"]) <= 1.0]
    after = [r for r in enqueued if float(r["time_s"]) > 1.0]
    assert before and all(r["start_s"] == "" for r in before)
    checked = 0
    for r in after:
        arrival = receive.get((r["flow"], r["kind"], r["seq"]))
        if arrival is not None:
            began = arrival - link.delay_s - int(r["size_bytes"]) * 8.0 / link.rate_bps
            assert float(r["start_s"]) == pytest.approx(began, abs=1e-9)
            checked += 1
    assert checked > 50


def test_every_packet_of_a_flow_names_it_cbr_and_workload_flows_too(tmp_path):
    """The `flow` column is empty for routing packets only (docs/outputs.md): a cbr flow's
    packets are delivered to the flow itself, and a workload's flows are opened as the run goes
    (each was left unnamed)."""
    data = {"hosts": ["H1", "H2"], "routers": ["R1"], "duration_s": 0.5,
            "routing": {"protocol": "bellman-ford", "update_interval_s": 0.2, "settle_s": 0.1},
            "links": [{"id": "A", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 64},
                      {"id": "B", "ends": ["R1", "H2"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 64}],
            "flows": [{"id": "C1", "src": "H1", "dst": "H2", "kind": "cbr", "rate_mbps": 1},
                      {"id": "F1", "src": "H2", "dst": "H1", "data_mb": 0.05}],
            "workloads": [{"id": "W", "src": ["H1"], "dst": ["H2"], "arrivals_per_s": 20,
                           "sizes": [[1000, 0.0], [20000, 1.0]], "algorithm": "reno"}]}
    results, _ = traced_run(load_topology(data), tmp_path / "t.csv")
    with open(tmp_path / "t.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    named = Counter(row["flow"].split("#")[0] for row in rows if row["kind"] != "routing")
    assert "" not in named and set(named) == {"C1", "F1", "W"}
    assert all(row["flow"] == "" for row in rows if row["kind"] == "routing")
    workload_flows = {row["flow"] for row in rows if row["flow"].startswith("W#")}
    assert len(workload_flows) == results.summary["workloads"]["W"]["flows_started"]


def test_workload_flows_names_are_kept_while_their_packets_may_be_on_their_way(tmp_path):
    """A finished workload flow's name is dropped once none of its packets can still arrive
    (`cut_off_wait_s` after it finished, here 1 s): the trace's memory follows the flows alive,
    not every flow the run opened, and every packet is still named."""
    data = {"hosts": ["H1", "H2"], "routers": ["R1"], "duration_s": 20.0,
            "links": [{"id": "A", "ends": ["H1", "R1"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 64},
                      {"id": "B", "ends": ["R1", "H2"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 64}],
            "workloads": [{"id": "W", "src": ["H1"], "dst": ["H2"], "arrivals_per_s": 50,
                           "sizes": [[1000, 0.0], [5000, 1.0]], "algorithm": "reno"}]}
    results, trace = traced_run(load_topology(data), tmp_path / "t.csv")
    started = results.summary["workloads"]["W"]["flows_started"]
    assert started > 900
    assert trace.forget_after_s == 1.0
    assert len(trace.flow_of) <= 3 * 150         # the last second's flows, three ids each
    with open(tmp_path / "t.csv", newline="") as fh:
        named = {row["flow"] for row in csv.DictReader(fh)}
    assert "" not in named and len(named) == started


def test_ids_with_commas_and_quotes_are_quoted_as_the_other_csv_files_quote_them(tmp_path):
    """Ids may hold commas, quotes and any letter (docs/outputs.md, "Ids"): the trace quotes
    them as the csv module does, so every line reads back as 11 fields with the ids as given
    (they were written bare: 8 022 of 118 579 lines of a fat tree read as 13 or 14 fields)."""
    router, link, flow = 'core,"zero"é', 'a,"1"', 'F,"x"'
    data = {"hosts": ["H1", "H2"], "routers": [router], "duration_s": 0.3,
            "links": [{"id": link, "ends": ["H1", router], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 64},
                      {"id": "B", "ends": [router, "H2"], "rate_mbps": 10, "delay_ms": 1,
                       "buffer_kb": 64}],
            "flows": [{"id": flow, "src": "H1", "dst": "H2", "data_mb": 0.02}],
            "workloads": [{"id": "W,1", "src": ["H2"], "dst": ["H1"], "arrivals_per_s": 20,
                           "sizes": [[1000, 0.0], [5000, 1.0]], "algorithm": "reno"}]}
    traced_run(load_topology(data), tmp_path / "t.csv")
    with open(tmp_path / "t.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == list(FIELDS) and all(len(row) == len(FIELDS) for row in rows)
    table = [dict(zip(FIELDS, row)) for row in rows[1:]]
    assert {row["node"] for row in table} == {"H1", "H2", router}
    assert {row["link"] for row in table} == {link, "B"}
    assert f'H1->{router}' in {row["direction"] for row in table}
    flows = {row["flow"] for row in table}
    assert flow in flows and any(name.startswith("W,1#") for name in flows)
