"""What changed on a link, drawn alike in links.png and routing.png (acceptance test 30).

routing.png's rate panel is documented as links.png's, but only links.png shaded a link's down
spans: routing.png's route flips showed with nothing saying a link had failed. And no figure
marked a `rate_schedule` change: on a link that is not saturated a rate step was invisible. Both
figures now take the same `LinkChanges` from the front end (`plot_tool.link_changes`, computed
once by `plan_figures`) and draw them with the same code (`plot_tool.png.link_changes`): the down
spans shaded in the link's colour across the panels, the capacity of a time-varying link a
dashed step line in the rate panel, each with a legend entry. A `delay_schedule` is not drawn.
Figures of runs without failures or schedules are unchanged (no artist, no legend entry more).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from plot_tool.entity_series import aggregate_series, link_series_of, normalize_table
from plot_tool.link_changes import capacity_steps, link_changes
from plot_tool.png import draw
from plot_tool.png.link_changes import capacity_color
from plot_tool.run_data import plan_figures

END_S = 3.0
TIMES = np.round(np.arange(1, 31) * 0.1, 9)
UNITS = {"system": "si", "bits_per_mbit": 1000000, "bytes_per_kb": 1000, "bytes_per_mb": 1000000}


def _summary(changes: bool = True) -> dict:
    """L1 (full duplex) down 1-2 s, L2 (half duplex) 10 Mb/s, 4 from 1.5 s, 6 from 2.5 s, and
    L3 with a delay_schedule only; `changes` False: the same links, fixed and never down."""
    link = {"rate_mbps": 10.0, "delay_ms": 10.0, "buffer_kb": 64.0, "queue": "droptail",
            "directions": {}}
    links = {"L1": {**link, "ends": ["R1", "R2"], "duplex": "full", "down_s": []},
             "L2": {**link, "ends": ["R1", "R3"], "duplex": "half", "down_s": []},
             "L3": {**link, "ends": ["R3", "R2"], "duplex": "full", "down_s": []}}
    if changes:
        links["L1"]["down_s"] = [[1.0, 2.0]]
        links["L2"].update(mean_capacity_mbps=6.5, rate_schedule_mbps=[[1.5, 4.0], [2.5, 6.0]],
                           delay_schedule_ms=[])
        links["L3"].update(mean_capacity_mbps=10.0, rate_schedule_mbps=[],
                           delay_schedule_ms=[[2.0, 30.0]])
    return {"topology": "changes", "units": UNITS, "interval_s": 0.1, "end_time_s": END_S,
            "routing": {"protocol": "bellman-ford"}, "links": links, "flows": {}, "hosts": {},
            "routers": {"R1": {}, "R2": {}, "R3": {}}}


def _links_table() -> dict:
    """Every direction 2 Mb/s (well under every capacity) in every interval, 0 while L1 is down."""
    rows: dict[str, list] = {c: [] for c in ("time_s", "link", "direction", "rate_mbps",
                                             "buffer_kb", "buffer_pkts", "drops")}
    for t in TIMES:
        for link, direction in (("L1", "R1->R2"), ("L1", "R2->R1"), ("L2", "R1->R3"),
                                ("L2", "R3->R1"), ("L3", "R3->R2"), ("L3", "R2->R3")):
            rate = 0.0 if link == "L1" and 1.0 < t <= 2.0 else 2.0
            for column, value in (("time_s", t), ("link", link), ("direction", direction),
                                  ("rate_mbps", rate), ("buffer_kb", 0.0),
                                  ("buffer_pkts", 0.0), ("drops", 0.0)):
                rows[column].append(value)
    return rows


class Run:
    """In-memory results (as the simulator's): R1's route to R2 moves to R3 when L1 fails."""

    def __init__(self, changes: bool = True):
        self.summary = _summary(changes)
        self.links = _links_table()
        self.flows = {"time_s": [], "flow": [], "send_rate_mbps": [], "recv_rate_mbps": [],
                      "window_pkts": [], "rtt_ms": []}
        self.hosts = {"time_s": [], "host": [], "send_rate_mbps": [], "recv_rate_mbps": []}
        self.routes = {"time_s": [0.0, 1.1, 2.1], "router": ["R1"] * 3,
                       "destination": ["R2"] * 3, "next_hop": ["R2", "R3", "R2"],
                       "link": ["L1", "L2", "L1"], "cost_ms": [10.0, 20.0, 10.0]}


def _jobs(changes: bool = True) -> dict:
    jobs = plan_figures(Run(changes), flows=[], hosts=[])
    return {job.filename: job for job in jobs}


def _drawn(job) -> Figure:
    fig = Figure(figsize=job.figsize)
    draw(fig, job)
    return fig


def _spans(ax) -> list:
    return sorted((round(p.get_x(), 9), round(p.get_x() + p.get_width(), 9), p.get_facecolor()[:3])
                  for p in ax.patches if isinstance(p, Rectangle) and p.get_alpha() == 0.12)


def _capacity_lines(ax) -> list:
    return [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"
            and ln.get_drawstyle() == "steps-post"]


# --- the front end -----------------------------------------------------------------------------


def test_capacity_steps_follow_the_schedule_until_the_run_ended() -> None:
    info = {"rate_mbps": 10.0, "rate_schedule_mbps": [[1.5, 4.0], [2.5, 6.0], [3.0, 1.0],
                                                      [7.0, 2.0]]}
    time, mbps = capacity_steps(info, END_S)
    # each rate held from its time on, the last one to the end; changes at or after it left out
    assert time.tolist() == [0.0, 1.5, 2.5, 3.0] and mbps.tolist() == [10.0, 4.0, 6.0, 6.0]
    time, mbps = capacity_steps({"rate_mbps": 10.0, "rate_schedule_mbps": [[0.0, 8.0]]}, 2.0)
    assert time.tolist() == [0.0, 2.0] and mbps.tolist() == [8.0, 8.0]
    assert capacity_steps({"rate_mbps": 10.0}, END_S) is None             # fixed, or older results
    assert capacity_steps({"rate_mbps": 10.0, "rate_schedule_mbps": []}, END_S) is None  # delay only


def test_the_changes_of_the_plotted_links() -> None:
    summary = _summary()
    table = normalize_table(_links_table(), "links")
    series = link_series_of(summary, table, ["L1", "L2", "L3"])
    changes = link_changes(summary, series)
    # L1: its spans, in the colour of its first line; L2 (half duplex, one summed line): its
    # capacity; L3 changes only its delay: nothing
    assert [(c.link, c.key, c.down_s, c.capacity_time is None) for c in changes] == [
        ("L1", "L1 R1->R2", ((1.0, 2.0),), True), ("L2", "L2", (), False)]
    assert changes[1].capacity_mbps.tolist() == [10.0, 4.0, 6.0, 6.0]
    assert changes[0].down_label == "L1 down: 1\u20132 s (shaded)"
    assert changes[1].capacity_label == "L2 capacity (rate_schedule)"
    # only the lines drawn count, the first of a link giving its colour
    assert [c.key for c in link_changes(summary, series[1:])] == ["L1 R2->R1", "L2"]
    assert [c.link for c in link_changes(summary, series[2:])] == ["L2"]
    assert link_changes(_summary(changes=False), series) == []
    aggregate = aggregate_series(series, {s.key: "all" for s in series}, summary,
                                 idle_is_zero=True)
    assert link_changes(summary, aggregate) == []      # an aggregate line is no one link


def test_links_png_and_routing_png_share_the_changes_computed_once() -> None:
    jobs = _jobs()
    assert jobs["links.png"].link_changes is jobs["routing.png"].link_changes
    assert [c.link for c in jobs["links.png"].link_changes] == ["L1", "L2"]
    jobs = _jobs(changes=False)
    assert list(jobs["links.png"].link_changes) == list(jobs["routing.png"].link_changes) == []


# --- the drawings -------------------------------------------------------------------------------


def test_links_png_draws_the_capacity_in_the_rate_panel_and_the_outage_across_the_panels() -> None:
    job = _jobs()["links.png"]
    fig = _drawn(job)
    colors = {s.key: s.color for s in job.series}
    buffer_ax, drops_ax, rate_ax = fig.axes
    (capacity,) = _capacity_lines(rate_ax)
    assert capacity.get_xdata().tolist() == [0.0, 1.5, 2.5, END_S]
    assert capacity.get_ydata().tolist() == [10.0, 4.0, 6.0, 6.0]
    assert capacity.get_color() == capacity_color(colors["L2"])   # L2's, darker
    assert np.allclose(to_rgb(capacity.get_color()), 0.6 * np.array(to_rgb(colors["L2"])), atol=0.01)
    assert not _capacity_lines(buffer_ax) and not _capacity_lines(drops_ax)
    # the 2 Mb/s lines under it: the panel reaches up to the capacity, so its steps show
    assert rate_ax.get_ylim()[1] >= 10.0
    for ax in fig.axes:
        assert _spans(ax) == [(1.0, 2.0, to_rgb(colors["L1 R1->R2"]))]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == [s.label for s in job.series] + ["L2 capacity (rate_schedule)",
                                                      "L1 down: 1\u20132 s (shaded)"]
    entry = fig.legends[0].legend_handles[len(job.series)]
    assert entry.get_linestyle() == "--" and entry.get_color() == capacity.get_color()


def test_routing_png_shows_the_outage_and_the_capacity_as_links_png_does() -> None:
    job = _jobs()["routing.png"]
    fig = _drawn(job)
    colors = {s.key: s.color for s in job.series}
    rate_ax, route_ax = fig.axes
    (capacity,) = _capacity_lines(rate_ax)
    assert capacity.get_xdata().tolist() == [0.0, 1.5, 2.5, END_S]
    assert capacity.get_ydata().tolist() == [10.0, 4.0, 6.0, 6.0]
    assert capacity.get_color() == capacity_color(colors["L2"])
    assert not _capacity_lines(route_ax)
    # the outage shaded over both panels: the route flips at 1.1 and 2.1 s fall in and after it
    for ax in (rate_ax, route_ax):
        assert _spans(ax) == [(1.0, 2.0, to_rgb(colors["L1 R1->R2"]))]
    legend = [t.get_text() for t in rate_ax.get_legend().get_texts()]
    assert legend == [s.label for s in job.series] + ["L2 capacity (rate_schedule)",
                                                      "L1 down: 1\u20132 s (shaded)"]
    # drawn as in links.png
    (in_links,) = _capacity_lines(_drawn(_jobs()["links.png"]).axes[2])
    assert (in_links.get_color(), in_links.get_linewidth()) == (capacity.get_color(),
                                                               capacity.get_linewidth())


def test_without_failures_or_schedules_nothing_more_is_drawn() -> None:
    jobs = _jobs(changes=False)
    links = _drawn(jobs["links.png"])
    for ax in links.axes:
        assert not _spans(ax) and not _capacity_lines(ax)
    assert [t.get_text() for t in links.legends[0].get_texts()] == [
        s.label for s in jobs["links.png"].series]
    routing = _drawn(jobs["routing.png"])
    for ax in routing.axes:
        assert not _spans(ax) and not _capacity_lines(ax)
    assert [t.get_text() for t in routing.axes[0].get_legend().get_texts()] == [
        s.label for s in jobs["routing.png"].series]


# --- a run --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_run_with_a_rate_step_and_an_outage_draws_them(tmp_path: Path) -> None:
    """A real run, redrawn from its directory: a CBR flow at 3 Mb/s (never saturating) over
    a link whose rate steps 10 -> 5 -> 10 Mb/s, with another link down and back up."""
    from netsim.cli import main
    from plot_tool import read_results
    from plot_tool.png import draw as draw_job

    topology = {
        "name": "rate_step_outage", "routing": {"protocol": "bellman-ford"},
        "hosts": ["H1", "H2"], "routers": ["R1", "R2", "R3"],
        "links": [
            {"id": "A", "ends": ["H1", "R1"], "rate_mbps": 100, "delay_ms": 1, "buffer_kb": 100},
            {"id": "L", "ends": ["R1", "R2"], "rate_mbps": 10, "delay_ms": 5, "buffer_kb": 60,
             "rate_schedule": [[1, 5], [2, 10]]},
            {"id": "M", "ends": ["R1", "R3"], "rate_mbps": 10, "delay_ms": 10, "buffer_kb": 60},
            {"id": "N", "ends": ["R3", "R2"], "rate_mbps": 10, "delay_ms": 10, "buffer_kb": 60},
            {"id": "B", "ends": ["R2", "H2"], "rate_mbps": 100, "delay_ms": 1, "buffer_kb": 100}],
        "flows": [{"id": "F", "src": "H1", "dst": "H2", "kind": "cbr", "rate_mbps": 3}],
        "events": [{"at_s": 1.2, "link": "L", "action": "down"},
                   {"at_s": 1.6, "link": "L", "action": "up"}],
        "duration_s": 3}
    path = tmp_path / "rate_step_outage.json"
    path.write_text(json.dumps(topology))
    out = tmp_path / "run"
    assert main([str(path), "--out", str(out), "--quiet"]) == 0
    assert {"links.png", "routing.png"} <= {p.name for p in out.iterdir()}
    jobs = {j.filename: j for j in plan_figures(read_results(out))}
    (change,) = jobs["links.png"].link_changes
    assert change.link == "L" and change.down_s == ((1.2, 1.6),)
    assert change.capacity_mbps.tolist() == [10.0, 5.0, 10.0, 10.0]
    for name, rate_panel in (("links.png", 2), ("routing.png", 0)):
        fig = Figure(figsize=jobs[name].figsize)
        draw_job(fig, jobs[name])
        assert len(_capacity_lines(fig.axes[rate_panel])) == 1
        assert all(len(_spans(ax)) == 1 for ax in fig.axes)
