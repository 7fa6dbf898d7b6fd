"""plot_tool.png.agg_text: the figures drawn with each string measured and shaped once per
`make_figures` call are the same pixels as with matplotlib's own Agg text code, every string is
measured once, and what the fast path does not handle (rotated and math text, no active memo)
is matplotlib's. plot_tool.numpy_loader: numpy imported with OpenBLAS's short idle wait leaves
the environment as it was."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure

from plot_tool.figures import make_figures
from plot_tool.layout import is_static
from plot_tool.png import TextMemo, render, save_png
from plot_tool.png.agg_text import FAST_TEXT, Canvas, MemoRenderer
from plot_tool.results import read_results
from plot_tool.run_data import plan_figures

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tc2_results(tmp_path_factory) -> Path:
    """Test case 2's results (the README's command: links L1 and L3), without figures."""
    from netsim.cli import main

    out = tmp_path_factory.mktemp("tc2") / "r"
    assert main([str(ROOT / "topologies" / "test_case_2.json"), "-l", "L1", "L3", "--quiet",
                 "--no-plots", "--out", str(out)]) == 0
    return out


def _pixels(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_the_memo_draws_the_same_pixels_as_matplotlib(tc2_results, tmp_path):
    assert FAST_TEXT          # the matplotlib this project pins has the private API it uses
    written = make_figures(tc2_results, tmp_path / "memo", links=["L1", "L3"])
    assert {p.name for p in written} == {"links.png", "flows.png", "hosts.png", "routing.png"}
    plain = tmp_path / "plain"
    plain.mkdir()
    for job in plan_figures(read_results(tc2_results), links=["L1", "L3"]):
        save_png(render(job), plain / job.filename)      # no memo active: matplotlib's code
    for path in written:
        assert np.array_equal(_pixels(path), _pixels(plain / path.name)), path.name


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_each_string_is_measured_once(tc2_results, tmp_path, monkeypatch):
    measured: list[tuple] = []
    measure = RendererAgg.get_text_width_height_descent

    def counting_measure(self, s, prop, ismath):
        measured.append((s, prop.get_size_in_points(), ismath))
        return measure(self, s, prop, ismath)

    monkeypatch.setattr(RendererAgg, "get_text_width_height_descent", counting_measure)
    make_figures(tc2_results, tmp_path, links=["L1", "L3"])
    assert measured and len(measured) == len(set(measured))


def test_a_string_drawn_again_is_not_shaped_again(tmp_path, monkeypatch):
    prepared: list[str] = []
    prepare = RendererAgg._prepare_font

    def counting_prepare(self, prop):
        prepared.append(prop.get_name())
        return prepare(self, prop)

    monkeypatch.setattr(RendererAgg, "_prepare_font", counting_prepare)
    with TextMemo() as memo:
        for _ in range(2):                          # two figures, five times the same text
            fig = Figure(figsize=(3, 2), dpi=100)
            Canvas(fig)
            for i in range(5):
                fig.text(0.1 + 0.13 * i, 0.5 + 0.07 * i, "10.0")
            save_png(fig, tmp_path / "same.png")
    assert len(prepared) == 2                       # measured once, shaped once
    assert len(memo.extents) == len(memo.layouts) == 1


def test_rotated_and_math_text_and_no_memo_are_matplotlibs(tmp_path):
    def figure() -> Figure:
        fig = Figure(figsize=(3, 2), dpi=100)
        Canvas(fig)
        fig.text(0.1, 0.8, "upright 0.5", fontsize=9)
        fig.text(0.1, 0.5, "rotated", rotation=30)
        fig.text(0.1, 0.2, r"$\alpha^2 + x_i$")
        fig.text(0.6, 0.6, "two\nlines", ha="center")
        return fig

    with TextMemo():
        save_png(figure(), tmp_path / "memo.png")
    save_png(figure(), tmp_path / "plain.png")
    assert np.array_equal(_pixels(tmp_path / "memo.png"), _pixels(tmp_path / "plain.png"))
    fig = figure()
    assert type(fig.canvas.get_renderer()) is MemoRenderer and is_static(fig)


def test_numpy_is_imported_with_a_short_wait_and_the_environment_restored():
    code = ("import os, sys\nfrom plot_tool.numpy_loader import load_numpy\n"
            "np = load_numpy()\nprint('numpy' in sys.modules, np.__name__, "
            "os.environ.get('OPENBLAS_THREAD_TIMEOUT'), os.environ.get('OPENBLAS_NUM_THREADS'))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                        "OMP_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.split() == ["True", "numpy", "None", "None"]
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**env, "OPENBLAS_NUM_THREADS": "2"}, check=True)
    assert done.stdout.split() == ["True", "numpy", "None", "2"]      # the user's choice stands
