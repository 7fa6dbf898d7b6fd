"""Every route of routing.png is visible (issue 9, part 6).

In test_case_2 several routers see the same queues, so their route costs are equal (or equal to a
pixel): drawn one over the other, two of the six lines were hidden. Routes whose lines would
coincide all along are drawn once, labelled with every router and destination they stand for;
a line that later lines cover for part of the run is drawn wider, so it shows around them.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from plot_tool.png.routing import draw_routing_figure
from plot_tool.routes_data import ROUTE_WIDTH, RouteSeries, routes_to_plot

END_S = 20.0
SUMMARY = {"topology": "chain", "end_time_s": END_S, "interval_s": 0.1,
           "units": {"system": "si", "bits_per_mbit": 1000000, "bytes_per_kb": 1000,
                     "bytes_per_mb": 1000000}}


def route(router: str, destination: str, costs, hops=None, times=(0.0, 5.0, 10.0, 15.0)):
    n = len(costs)
    return RouteSeries(router, destination, time=np.array(times[:n], dtype=float),
                       cost_ms=np.array(costs, dtype=float),
                       next_hop=np.array(hops or ["X"] * n), link=np.array(["L"] * n))


def _chain() -> list[RouteSeries]:
    """Cost changes only (no next hop changes), as in test_case_2."""
    return [route("R1", "T1", [40, 55, 90, 110]),
            route("R1", "T3", [40, 55, 90, 110]),            # the same line as R1 -> T1
            route("R2", "S2", [20, 34, 70, 65]),
            route("R4", "S1", [40, 55, 100, 120]),           # R1 -> T1 for half the run
            route("R4", "S2", [40, 55.05, 90.02, 110])]      # R1 -> T1 to a pixel


def _pairs(series) -> set:
    return {pair for s in series for pair in ((s.router, s.destination), *s.also)}


def test_coincident_routes_are_drawn_once_with_every_name() -> None:
    routes = _chain()
    chosen, omitted = routes_to_plot(routes, end_s=END_S)
    assert omitted == 0
    assert [s.label for s in chosen] == ["R1 \u2192 T1, T3\nR4 \u2192 S2", "R2 \u2192 S2",
                                        "R4 \u2192 S1"]
    assert _pairs(chosen) == _pairs(routes)                   # every route is named
    assert chosen[1] is routes[2] and chosen[2] is routes[3]  # the others untouched


def test_every_route_visible_in_the_figure() -> None:
    chosen, omitted = routes_to_plot(_chain(), end_s=END_S)
    fig = Figure()
    draw_routing_figure(fig, [], chosen, omitted, SUMMARY)
    (ax,) = fig.axes
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert [ln.get_label() for ln in lines] == [s.label for s in chosen]
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [s.label for s in chosen]
    title = legend.get_title().get_text()
    assert "several routes on one line" in title and "wider line" in title
    # no two lines drawn with the same data
    data = [(tuple(ln.get_xdata()), tuple(ln.get_ydata())) for ln in lines]
    assert len(set(data)) == len(data)
    # R1 -> T1 (first) lies under R4 -> S1 for half the run: drawn wider, so its edge shows
    widths = [ln.get_linewidth() for ln in lines]
    assert widths[0] > widths[2] == ROUTE_WIDTH and widths[1] == ROUTE_WIDTH


def test_same_costs_but_different_next_hops_stay_apart() -> None:
    a = route("R1", "H2", [30, 30, 31], hops=["R2", "R3", "R2"])
    b = route("R4", "H1", [30, 30, 31], hops=["R2", "R3", "R3"])
    chosen, _ = routes_to_plot([a, b], end_s=END_S)
    assert chosen == [a, b]
    fig = Figure()
    draw_routing_figure(fig, [], chosen, 0, SUMMARY)
    widths = [ln.get_linewidth() for ln in fig.axes[0].get_lines()
              if not ln.get_label().startswith("_")]
    assert widths[0] > widths[1]                      # a is entirely under b: its edge shows


def test_omitted_counts_routes() -> None:
    routes = [route("R1", f"H{k}", [10, 10 + k]) for k in range(1, 9)]
    routes.append(route("R2", "H8", [10, 18]))        # the same line as R1 -> H8
    chosen, omitted = routes_to_plot(routes, end_s=END_S)
    assert len(chosen) == 6 and chosen[-1].label == "R1 \u2192 H8\nR2 \u2192 H8"
    assert omitted == 2                                # R1 -> H1 and R1 -> H2


def test_a_static_runs_routes_are_not_read_for_the_figures(tmp_path, run_cli) -> None:
    """Static routing never changes a table after t = 0: no routing.png, and routes.csv (2
    million rows for a k = 16 fat tree with an all-to-all workload) is not read."""
    import json
    import subprocess
    import sys

    import pytest

    from plot_tool.results import read_results
    from plot_tool.run_data import plan_figures

    topology = tmp_path / "db.json"
    subprocess.run([sys.executable, "-m", "netsim", "generate", "dumbbell", "--pairs", "1",
                    "--duration", "1", "--long-lived", "-o", str(topology)], check=True,
                   capture_output=True)
    assert run_cli(topology, "--no-plots", "--out", tmp_path / "out").returncode == 0
    directory = tmp_path / "out"
    assert json.loads((directory / "summary.json").read_text())["routing"]["protocol"] == \
        "static"
    (directory / "routes.csv").write_text("not,a,routes,table\n")
    jobs = plan_figures(read_results(directory, traces_in_memory=False))
    assert [job.filename for job in jobs] == ["links.png", "flows.png", "hosts.png"]
    with pytest.raises(ValueError, match="routes.csv: missing column"):
        read_results(directory)


def _label_boxes(fig) -> list:
    """The window extents (pixels) of the next-hop labels of routing.png's route panel."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [(t.get_text(), t.get_window_extent(renderer)) for t in fig.axes[-1].texts]


def test_labels_of_changes_at_one_point_do_not_cover_each_other() -> None:
    """Two routes (two routers, two destinations) changing next hop at one instant to one cost:
    their labels were printed one over the other ("via R3" over "via R1", acceptance test Z7's
    routing.png of the two-paths example)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    a = route("R1", "H2", [30, 35, 20], hops=["R2", "R3", "R3"])
    b = route("R3", "H1", [40, 35, 50], hops=["R2", "R1", "R1"])
    c = route("R2", "H3", [10, 12, 14], hops=["R1", "R1", "R3"])   # elsewhere: no conflict
    d = route("R2", "H1", [60, 62, 64], hops=["R1", "R1", "R3"])
    chosen, _ = routes_to_plot([c, a, d, b], end_s=END_S)   # a and b both labelled below
    assert chosen == [c, a, d, b]
    fig = Figure()
    FigureCanvasAgg(fig)
    draw_routing_figure(fig, [], chosen, 0, SUMMARY)
    boxes = _label_boxes(fig)
    assert sorted(text for text, _ in boxes) == ["via R1", "via R3", "via R3", "via R3"]
    for i, (_, one) in enumerate(boxes):
        for _, other in boxes[i + 1:]:
            assert not one.overlaps(other)
    # the first keeps its side (below its point), the second goes to the free one (above)
    _, y = fig.axes[-1].transData.transform((5.0, 35.0))
    at_point = [(text, box) for text, box in boxes if box.x0 < fig.axes[-1].transData.transform(
        (6.0, 0.0))[0]]
    assert sorted((text, box.y0 > y) for text, box in at_point) == [("via R1", True),
                                                                   ("via R3", False)]
