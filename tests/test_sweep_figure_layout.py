"""A sweep figure's text never collides or leaves the figure: the footnote gets as many lines as
it needs below the x label, a long title, x label or y label wraps to the axes, and a plot with
no value to draw still shows the swept values and names what is missing in words
(docs/sweeps.md, "Figures")."""
from __future__ import annotations

import itertools

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from plot_tool.sweep_figures import draw_sweep_plot
from plot_tool.sweep_names import axis_label, quantity_name

X, Y = "links.L1.rate_mbps", "flows.F1.goodput_mbps"


def rows(n_seeds=1, y=True):
    return [{"run_id": f"p{p}-s{s}", "point": str(p), "seed": str(s), X: str(rate),
             Y: str(rate * 0.9) if y else "", "status": "ok"}
            for p, rate in enumerate([10.0, 20.0]) for s in range(1, n_seeds + 1)]


def draw(plot, data):
    fig = Figure(figsize=(8, 5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = draw_sweep_plot(fig, plot, data)
    fig.canvas.draw()
    return fig, ax


def boxes(fig, ax):
    renderer = fig.canvas.get_renderer()
    (note,) = fig.texts
    return (note.get_window_extent(renderer), ax.xaxis.label.get_window_extent(renderer),
            fig.bbox)


def test_a_two_line_footnote_stays_below_the_x_label_and_inside_the_figure():
    fig, ax = draw({"file": "p.png", "x": X, "y": Y}, rows(n_seeds=1))
    note, label, page = boxes(fig, ax)
    assert "\n" in fig.texts[0].get_text()              # (one run: the longer footnote)
    assert note.y1 < label.y0                           # below the x label, not over it
    assert note.x0 >= page.x0 and note.x1 <= page.x1


def test_a_long_x_label_wraps_within_the_figure():
    long = "offered load: flow arrivals per second " + "(701, 1169, 1870 = load 0.3, 0.5, 0.8 " \
           "of the 32 hosts' 1 Gb/s links, measured over the whole run of every seed)"
    fig, ax = draw({"file": "p.png", "x": X, "y": Y, "xlabel": long}, rows(n_seeds=3))
    note, label, page = boxes(fig, ax)
    assert "\n" in ax.xaxis.label.get_text()
    assert label.x0 >= page.x0 and label.x1 <= page.x1
    assert note.y1 < label.y0


def test_a_plot_without_values_shows_the_swept_values_and_names_what_is_missing():
    y = "workloads.W.over_10mb.p50_slowdown"
    data = [dict(row, **{y: ""}) for row in rows(n_seeds=1, y=False)]
    fig, ax = draw({"file": "p.png", "x": X, "y": y}, data)
    low, high = ax.get_xlim()
    assert low < 10 and high > 20
    assert [t.get_text() for t in ax.get_xticklabels() if t.get_text()] == ["10", "20"]
    assert fig.texts[0].get_text().replace("\n", " ") == \
        "2 runs without W flows > 10 MB: median slowdown, left out"


def test_workload_metrics_read_as_words():
    assert quantity_name("workloads.W.under_100kb.p99_slowdown") == \
        "W flows < 100 kB: 99th percentile slowdown"
    assert axis_label("workloads.W.all.mean_fct_s") == "W all flows: mean FCT (s)"
    assert axis_label("workloads.W.arrivals_per_s") == "W arrivals (per s)"
    assert quantity_name("workloads.*.100kb_to_10mb.count") == "flows 100 kB-10 MB: count"


def lines_rows(n_seeds=2):
    return [dict(row, **{"flows.F1.algorithm": algorithm}) for algorithm in ("reno", "cubic")
            for row in rows(n_seeds)]


@pytest.mark.parametrize("label", [
    ("a label of several words " * 8)[:200],
    "W" * 200,                                        # no space to break at, wide letters
])
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_labels_of_the_longest_allowed_length_stay_apart_and_inside_the_figure(label):
    plot = {"file": "p.png", "x": X, "y": Y, "lines": "flows.F1.algorithm",
            "title": label, "xlabel": label, "ylabel": label}
    fig, ax = draw(plot, lines_rows())
    renderer = fig.canvas.get_renderer()
    note, xlabel, page = boxes(fig, ax)
    axes = ax.get_window_extent(renderer)
    title = ax.title.get_window_extent(renderer)
    ylabel = ax.yaxis.label.get_window_extent(renderer)
    (legend,) = fig.legends
    for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
        assert "\n" in text.get_text()
    for box in (note, xlabel, title, ylabel):
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1
    assert axes.x0 - 1 <= title.x0 and title.x1 <= axes.x1 + 1    # never into the legend
    assert axes.x0 - 1 <= xlabel.x0 and xlabel.x1 <= axes.x1 + 1
    assert axes.y0 - 1 <= ylabel.y0 and ylabel.y1 <= axes.y1 + 1  # never into the footnote
    assert not title.overlaps(legend.get_window_extent(renderer))
    assert note.y1 < xlabel.y0 and note.y1 < ylabel.y0


def category_rows(categories, n_seeds=1):
    return [{"run_id": f"p{p}-s{s}", "point": str(p), "seed": str(s), "links.L1.queue": name,
             Y: str(1.0 + p), "status": "ok"}
            for p, name in enumerate(categories) for s in range(1, n_seeds + 1)]


def text_boxes(fig, ax):
    renderer = fig.canvas.get_renderer()
    ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    return renderer, ticks


@pytest.mark.parametrize("categories", [
    ['{"discipline": "droptail"}', '{"discipline": "red", "min_kb": 31, "max_kb": 94}',
     '{"discipline": "codel"}', '{"discipline": "fq_codel", "quantum_bytes": 1514}',
     '{"discipline": "pie", "target_ms": 15}', '{"discipline": "dctcp", "k_kb": 30}'],
    [("a value label of the longest kind " * 8)[:254] + str(i) for i in range(3)],
    ["W" * 254 + str(i) for i in range(12)],          # unbreakable, wide, many: a taller figure
])
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_long_category_labels_stay_apart_and_inside_the_figure(categories):
    fig, ax = draw({"file": "p.png", "x": "links.L1.queue", "y": Y}, category_rows(categories))
    renderer, ticks = text_boxes(fig, ax)
    note, xlabel, page = boxes(fig, ax)
    assert len(ticks) == len(categories)
    assert ["".join(t.get_text().split()) for t in ax.get_xticklabels()] == \
        ["".join(c.split()) for c in categories]                  # wrapped, never cut
    for left, right in itertools.pairwise(ticks):
        assert left.x1 < right.x0                                 # side by side, apart
    for box in [*ticks, xlabel, note]:
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1
    assert max(t.y1 for t in ticks) <= ax.get_window_extent(renderer).y0
    assert xlabel.y1 < min(t.y0 for t in ticks) + 1 and note.y1 < xlabel.y0


def test_a_legend_taller_than_the_figure_makes_it_taller_above_the_footnote():
    names = [f"line {i} " + "x" * 240 for i in range(6)]
    data = [dict(row, **{"flows.F1.algorithm": name}) for name in names for row in rows(2)]
    fig, _ = draw({"file": "p.png", "x": X, "y": Y, "lines": "flows.F1.algorithm"}, data)
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box, (note,) = legend.get_window_extent(renderer), fig.texts
    assert fig.get_figheight() > 5
    assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1
    assert note.get_window_extent(renderer).y1 < box.y0


def test_a_log_axis_starts_below_the_values_drawn_not_at_a_bar_cut_above_zero():
    """9.69 ± 12.3 on a log axis: the bar runs to the axis' edge, which the markers and the
    other bars' ends set (it reached down to 1e-8, the data in the top fifth)."""
    values = {(10.0, 1): 18.38, (10.0, 2): 0.9997, (20.0, 1): 3.0, (20.0, 2): 3.4}
    data = [{"run_id": f"{x}-{seed}", "point": str(x), "seed": str(seed), X: str(x),
             Y: str(y), "status": "ok"} for (x, seed), y in values.items()]
    _, ax = draw({"file": "p.png", "x": X, "y": Y, "logy": True}, data)
    low, high = ax.get_ylim()
    assert low == pytest.approx(2.9 / 1.5, rel=0.02)      # the lowest end above zero: 3.2 - 0.28
    assert high > 9.69


@pytest.mark.parametrize("count, labelled", [(20, True), (80, False)])
def test_many_swept_values_get_ordinary_ticks_and_a_figure_of_its_size(count, labelled):
    """Up to MAX_LABELLED_X values, a labelled tick at each; beyond, matplotlib's own labelled
    ticks and an unlabelled mark at each value (before, 1 600 values stacked 150 rows of labels
    under the plot)."""
    data = [{"run_id": f"p{p}", "point": str(p), "seed": "1", X: str(1 + p / 4),
             Y: str(p), "status": "ok"} for p in range(count)]
    fig, ax = draw({"file": "p.png", "x": X, "y": Y}, data)
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert fig.get_size_inches()[1] == pytest.approx(5.0)        # not grown to fit labels
    if labelled:
        assert len(labels) == count
    else:
        assert 3 <= len(labels) <= 12 and not any("\n" in t for t in labels)
        marks = set(ax.xaxis.get_minorticklocs()) | set(ax.xaxis.get_majorticklocs())
        assert {1 + p / 4 for p in range(count)} <= marks     # (a major tick hides its minor)


@pytest.mark.parametrize("values, expected", [
    ([0.002, 0.00632456, 0.02], ["0.002", "0.00632", "0.02"]),     # log-spaced: 3 digits
    ([1.0, 1.0004, 1.002], ["1", "1.0004", "1.002"]),              # as many as tell them apart
    ([10, 20], ["10", "20"]),
    ([40, 117.713, 346.41, 1019.43, 3000], ["40", "118", "346", "1020", "3000"]),   # no e+03
])
def test_swept_values_are_labelled_with_the_digits_that_tell_them_apart(values, expected):
    """A log-spaced sweep's tick read "0.00632456" (acceptance test Z7)."""
    from plot_tool.sweep_figures import tick_texts

    assert tick_texts(values) == expected


def test_a_log_axis_below_one_is_labelled_with_plain_numbers():
    """matplotlib's LogFormatter wrote a tick of 0.6 as "6e-01" (the AQM sweep's BBR figure)."""
    values = {(10.0, 1): 0.8, (10.0, 2): 0.8, (20.0, 1): 7.0, (20.0, 2): 7.2}
    data = [{"run_id": f"{x}-{seed}", "point": str(x), "seed": str(seed), X: str(x),
             Y: str(y), "status": "ok"} for (x, seed), y in values.items()]
    fig, ax = draw({"file": "p.png", "x": X, "y": Y, "logy": True}, data)
    fig.draw_without_rendering()
    labels = [t.get_text() for t in ax.get_yticklabels(minor=True) + ax.get_yticklabels()
              if t.get_text()]
    assert labels and not any("e" in label for label in labels)
    assert "1" in labels and any(label.startswith("0.") for label in labels)
