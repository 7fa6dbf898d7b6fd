"""Aggregate lines of links.png / flows.png / hosts.png beyond MAX_LINES entities
(plot_tool.entity_series.aggregate_series): the mean and the 10th-90th percentiles of the CSV
values, the groups (tier pairs of a fat tree, algorithms), and the user's -l / -F choices drawn one by one;
fct.png's per-size-bucket median and 99th percentile of the workload flows' slowdown."""
from __future__ import annotations

import numpy as np
import pytest

from plot_tool import entity_series, fct_data, figures, png, run_data, series
from plot_tool.png import common
from plot_tool.png import fct as png_fct
from plot_tool.results import read_results


@pytest.fixture(scope="module")
def fat_tree_run(tmp_path_factory):
    from netsim.cli import main

    tmp = tmp_path_factory.mktemp("agg")
    topology = tmp / "ft.json"
    assert main(["generate", "fat-tree", "--k", "6", "-o", str(topology)]) == 0   # 27 flows
    out = tmp / "ft"
    assert main([str(topology), "--out", str(out), "--quiet", "--duration", "0.3",
                 "--interval", "0.05"]) == 0
    return out


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_links_grouped_by_tier_pair_with_mean_and_quantiles_of_the_csv(fat_tree_run):
    rs = read_results(fat_tree_run)
    links_job = run_data.plan_figures(rs)[0]
    keys = [s.label for s in links_job.series]
    assert keys == ["host\u2013edge links (108 link directions): mean",
                    "edge\u2013aggregation links (108 link directions): mean",
                    "aggregation\u2013core links (108 link directions): mean"]
    core = links_job.series[2]
    ids = [lid for lid, info in rs.summary["links"].items() if info["ends"][1].startswith("c_")]
    assert len(ids) == 54
    t = rs.links["time_s"]
    for i, time in enumerate(core.time):
        values = np.zeros(108)          # idle directions (no row) count as 0
        k = 0
        for lid in ids:
            for d in rs.summary["links"][lid]["directions"]:
                rows = (rs.links["link"] == lid) & (rs.links["direction"] == d) & (t == time)
                values[k] = rs.links["rate_mbps"][rows].sum()
                k += 1
        assert core.values["rate_mbps"][i] == pytest.approx(values.mean())
        assert core.low["rate_mbps"][i] == pytest.approx(np.percentile(values, 10))
        assert core.high["rate_mbps"][i] == pytest.approx(np.percentile(values, 90))
    assert "10th" in links_job.spec.legend_title and "mean" in links_job.spec.legend_title


@pytest.mark.parametrize("cells", [1, 7, 250])
def test_aggregates_made_a_few_sample_times_at_a_time_are_the_same(fat_tree_run, monkeypatch,
                                                                   cells):
    """The members x times matrix is made AGGREGATE_CELLS at a time (a k = 24 fat tree's made
    83 MB matrices): every mean and quantile is bit for bit the one of the whole matrix."""
    rs = read_results(fat_tree_run)
    whole = run_data.plan_figures(rs)
    monkeypatch.setattr(entity_series, "AGGREGATE_CELLS", cells)
    chunked = run_data.plan_figures(rs)
    for job_whole, job_chunked in zip(whole, chunked):
        for a, b in zip(job_whole.series, job_chunked.series):
            assert a.label == b.label and np.array_equal(a.time, b.time)
            for part in ("values", "low", "high"):
                mine, theirs = getattr(a, part) or {}, getattr(b, part) or {}
                assert mine.keys() == theirs.keys()
                for column in mine:
                    assert np.array_equal(mine[column], theirs[column], equal_nan=True), column


def test_flows_grouped_by_algorithm_missing_rows_left_out(fat_tree_run):
    rs = read_results(fat_tree_run)
    flows_job = run_data.plan_figures(rs)[1]
    (reno,) = flows_job.series
    assert reno.label == "reno (27 flows): mean" and reno.members == 27
    t = rs.flows["time_s"]
    for i, time in enumerate(reno.time):
        values = rs.flows["window_pkts"][t == time]
        assert reno.values["window_pkts"][i] == pytest.approx(np.nanmean(values))
        assert reno.high["window_pkts"][i] == pytest.approx(np.nanpercentile(values, 90))


def test_hosts_aggregated_and_user_choices_drawn_individually(fat_tree_run):
    rs = read_results(fat_tree_run)
    hosts_job = run_data.plan_figures(rs)[2]
    assert [s.label for s in hosts_job.series] == ["all hosts (54 hosts): mean"]
    chosen = list(rs.summary["links"])[:14]
    jobs = run_data.plan_figures(rs, links=chosen, flows=list(rs.summary["flows"]))
    assert len(jobs[0].series) == 28 and all(s.members == 1 for s in jobs[0].series)
    assert [s.label for s in jobs[1].series] == list(rs.summary["flows"])


def test_tiered_links_beyond_12_lines_untiered_beyond_40():
    """The thresholds: a k=4 fat tree's 96 link directions are grouped by tier pair, but 12 of
    them are lines; a non-tiered network's links are grouped (all together) beyond 40 lines."""
    from topologies.generate import dumbbell, fat_tree

    def summary_of(topology):
        return {"hosts": {h: {} for h in topology["hosts"]},
                "routers": {r: {} for r in topology["routers"]},
                "links": {lk["id"]: {"ends": lk["ends"]} for lk in topology["links"]}}

    def lines(summary, n):
        return [series.Series(key=f"{lid} {d}", label="", time=np.zeros(0), values={},
                               entity=lid, directions=(d,))
                for lid in list(summary["links"])[:n] for d in ("a", "b")][:n]

    tree = summary_of(fat_tree(4))
    kw = dict(at_most=run_data.MAX_TIERED_LINK_LINES, untiered_at_most=run_data.MAX_LINK_LINES)
    assert entity_series.link_groups(tree, lines(tree, 12), **kw) is None
    groups = entity_series.link_groups(tree, lines(tree, 13), **kw)
    assert groups is not None and set(groups.values()) == {"host\u2013edge links"}
    bell = summary_of(dumbbell(30))                 # 61 links: R1-R2 inside a tier
    assert entity_series.link_groups(bell, lines(bell, 40), **kw) is None
    assert set(entity_series.link_groups(bell, lines(bell, 41), **kw).values()) == {"all links"}


def test_small_runs_are_not_aggregated(tmp_path, root):
    from netsim.cli import main

    out = tmp_path / "tc2"
    assert main([str(root / "topologies" / "test_case_2.json"), "--out", str(out), "--no-plots",
                 "--quiet", "--duration", "2"]) == 0
    jobs = run_data.plan_figures(read_results(out))
    assert all(s.members == 1 and s.low is None for job in jobs for s in job.series)
    assert jobs[0].spec.legend_title == series.HALF_DUPLEX_TITLE


def test_aggregate_pngs_are_written(fat_tree_run):
    written = figures.make_figures(fat_tree_run)
    assert {p.name for p in written} >= {"links.png", "flows.png", "hosts.png"}


@pytest.fixture(scope="module")
def workload_run(tmp_path_factory):
    from netsim.cli import main

    root = __import__("pathlib").Path(__file__).resolve().parent.parent
    out = tmp_path_factory.mktemp("fct") / "ws"
    assert main([str(root / "topologies" / "examples" / "websearch.json"), "--out", str(out),
                 "--quiet", "--duration", "8"]) == 0
    return out


def test_fct_buckets_are_the_percentiles_of_fct_csv(workload_run):
    rs = read_results(workload_run)
    assert rs.fct is not None and len(rs.fct["slowdown"]) > 20
    buckets = fct_data.fct_buckets(fct_data.normalize_fct(rs.fct), rs.summary)
    small, large = 100 * 1000, 10 * 1000 * 1000            # SI units
    size, slowdown = rs.fct["size_bytes"], rs.fct["slowdown"]
    masks = {"under_100kb": size < small, "100kb_to_10mb": (size >= small) & (size <= large),
             "over_10mb": size > large}
    assert [b.bucket for b in buckets] == [k for k, m in masks.items() if m.any()]
    for b in buckets:
        values = slowdown[masks[b.bucket]]
        assert b.count == len(values)
        assert b.p50 == pytest.approx(np.percentile(values, 50))
        assert b.p99 == pytest.approx(np.percentile(values, 99))
        reported = rs.summary["workloads"]["W"][b.bucket]
        assert reported["count"] == b.count
    assert (workload_run / "fct.png").is_file()


@pytest.mark.parametrize("threshold", ["default", "lowered"])
def test_fct_figure_draws_those_values(workload_run, monkeypatch, threshold):
    """The median of every bucket, and its 99th percentile only from P99_MIN_FLOWS flows on: of
    fewer, the interpolation between the two largest slowdowns claims a tail the bucket does not
    have (a one-flow bucket read "p99 1.7": acceptance test Z7). The run's buckets all hold
    fewer than 100 flows; "lowered" sets the threshold at their smallest count to see them
    drawn."""
    from matplotlib.figure import Figure

    rs = read_results(workload_run)
    buckets = fct_data.fct_buckets(fct_data.normalize_fct(rs.fct), rs.summary)
    counts = sorted(b.count for b in buckets)
    assert counts[-1] < png_fct.P99_MIN_FLOWS
    if threshold == "lowered":
        monkeypatch.setattr(png_fct, "P99_MIN_FLOWS", counts[0])
    minimum = png_fct.P99_MIN_FLOWS
    jobs = run_data.plan_figures(rs)
    (job,) = [j for j in jobs if j.filename == "fct.png"]
    fig = Figure(figsize=job.figsize)
    png.draw(fig, job)
    drawn = {line.get_gid(): line.get_ydata()[0] for line in fig.axes[0].lines if line.get_gid()}
    texts = [t.get_text() for t in fig.axes[0].texts]
    for b in buckets:
        assert drawn[f"p50 {b.bucket}"] == pytest.approx(b.p50)
        plural = "s" if b.count != 1 else ""
        if b.count >= minimum:
            assert drawn[f"p99 {b.bucket}"] == pytest.approx(b.p99)
            assert any(t.endswith(f": {b.count} flow{plural}") for t in texts)
        else:
            assert f"p99 {b.bucket}" not in drawn
            assert any(t.endswith(f": {b.count} flow{plural} (no p99 under {minimum})")
                       for t in texts)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert png_fct.FCT_MEDIAN_LABEL in labels
    p99_label = f"{png_fct.FCT_P99_LABEL}\n(of {minimum} flows or more)"
    assert (p99_label in labels) == (counts[-1] >= minimum)


def test_hundreds_of_chosen_lines_list_the_first_ones(fat_tree_run):
    """-l with 150 links (300 lines): drawn one by one; the legend, at most two columns, lists
    the first lines and says how many more there are (it used to be wider than the figure:
    ValueError 'left cannot be >= right')."""
    from matplotlib.figure import Figure

    rs = read_results(fat_tree_run)
    (job,) = run_data.plan_figures(rs, links=list(rs.summary["links"])[:150], flows=[], hosts=[])
    assert len(job.series) == 300
    fig = Figure(figsize=job.figsize)
    png.draw(fig, job)
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    listed = [t for t in texts if t in {s.label for s in job.series}]
    assert texts[len(listed)] == f"\u2026 and {300 - len(listed)} more lines (not listed)"
    assert legend._ncols <= common.MAX_LEGEND_COLUMNS
