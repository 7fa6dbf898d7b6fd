"""A run shorter than one sampling interval: its one sample covers the whole run, the figures
say so in their per-interval labels, and the command line warns that they have one sample; a
run of fewer than 10 intervals is warned about too (the shipped data-center preset lasts 0.115 s
and drew two samples at the default 0.1 s: acceptance test Z7)."""
from __future__ import annotations

import pytest

from plot_tool.png.common import unit_labels


def test_the_per_interval_label_gives_the_length_of_the_one_sample():
    assert unit_labels({"interval_s": 0.1, "end_time_s": 0.05})["interval"] == "0.05 s"
    assert unit_labels({"interval_s": 0.1, "end_time_s": 2.0})["interval"] == "0.1 s"
    assert unit_labels({"interval_s": 0.1, "end_time_s": 0.1})["interval"] == "0.1 s"


# (test case 0's flow starts at 1 s: these runs end before it)
NEVER = ("warning: 1 flow never started: the run ended at 0.05 s, before F1 at 1 s (its goodput "
         "reads 0)\n")


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_the_command_line_warns_that_the_figures_have_one_sample(run_cli, root, tmp_path):
    topology = root / "topologies" / "test_case_0.json"
    done = run_cli(topology, "--duration", "0.05", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 0
    assert done.stderr.strip() == NEVER + (
        "warning: the run lasted 0.05 s, less than one sampling interval (0.1 s): its figures "
        "have one sample each; a shorter --interval, e.g. 0.0025, shows how it went")
    quiet = run_cli(topology, "--duration", "0.05", "--quiet", "--no-plots", "--out",
                    tmp_path / "r2")
    assert quiet.returncode == 0 and quiet.stderr == NEVER
    few = run_cli(topology, "--duration", "0.05", "--interval", "0.01", "--quiet", "--out",
                  tmp_path / "r3")
    assert few.returncode == 0 and few.stderr.strip() == NEVER + (
        "warning: the run lasted 0.05 s, 5 sampling intervals of 0.01 s: its figures have 5 "
        "samples each; a shorter --interval, e.g. 0.0025, shows how it went")
    exact = run_cli(topology, "--duration", "0.05", "--interval", "0.05", "--quiet", "--out",
                    tmp_path / "r4")
    assert exact.returncode == 0 and exact.stderr.strip() == NEVER + (
        "warning: the run lasted 0.05 s, one sampling interval of 0.05 s: its figures have one "
        "sample each; a shorter --interval, e.g. 0.0025, shows how it went")
    enough = run_cli(topology, "--duration", "0.05", "--interval", "0.005", "--quiet", "--out",
                     tmp_path / "r5")
    assert enough.returncode == 0 and enough.stderr == NEVER


def test_a_flow_figure_with_no_sample_says_why(tmp_path, root):
    """flows.png of a run that ended before its flow started had four empty panels and a legend
    entry for a line that is not there (acceptance test Z7): it now says so."""
    from matplotlib.figure import Figure

    from netsim.cli import main
    from plot_tool import png, read_results, run_data

    out = tmp_path / "r"
    assert main([str(root / "topologies" / "test_case_0.json"), "--duration", "0.01",
                 "--no-plots", "--quiet", "--out", str(out)]) == 0
    rs = read_results(out)
    notes = {}
    for job in run_data.plan_figures(rs):
        fig = Figure(figsize=job.figsize)
        png.draw(fig, job)
        notes[job.filename] = [t.get_text() for t in fig.axes[0].texts]
    assert notes["flows.png"] == ["no samples: the run ended at 0.01 s,\nbefore F1 started (at 1 s)"]
    assert notes["hosts.png"] == []        # the hosts were sampled: idle, a line at 0
