"""plot_tool.matplotlib_loader: matplotlib imported without the generated docstrings of
``Artist.set`` draws the same figures, byte for byte, and leaves matplotlib as it found it for
everything defined later. Each check runs in a fresh interpreter (the loader acts only on the
first import of matplotlib's figure module)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str, *args) -> str:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def tc0_results(tmp_path_factory) -> Path:
    """The results directory of test case 0 (every link), written without figures."""
    out = tmp_path_factory.mktemp("tc0") / "r"
    run_python("import sys\nfrom netsim.cli import main\n"
               "assert main([sys.argv[1], '--quiet', '--no-plots', '--out', sys.argv[2]]) == 0\n"
               "print('ok')", ROOT / "topologies" / "test_case_0.json", out)
    return out


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_the_figures_are_the_same_bytes_with_and_without_the_loader(tc0_results, tmp_path):
    draw = ("import sys\n{first}\nfrom plot_tool import make_figures\n"
            "from plot_tool import matplotlib_loader\n"
            "paths = make_figures(sys.argv[1], sys.argv[2])\n"
            "import matplotlib.artist as a\nfrom matplotlib.lines import Line2D\n"
            "print(len(paths), a.Artist.__dict__['_update_set_signature_and_docstring']"
            ".__func__.__module__, Line2D.set.__doc__ is None)")
    with_loader = run_python(draw.format(first=""), tc0_results, tmp_path / "loader")
    plain = run_python(draw.format(first="import matplotlib.figure"), tc0_results,
                       tmp_path / "plain")
    assert with_loader == "3 matplotlib.artist True"      # skipped, matplotlib's method back
    assert plain == "3 matplotlib.artist False"
    for name in ("links.png", "flows.png", "hosts.png"):
        assert ((tmp_path / "loader" / name).read_bytes()
                == (tmp_path / "plain" / name).read_bytes()), name


def test_set_still_works_and_only_its_docstrings_are_skipped():
    code = """
import json, inspect
from plot_tool.matplotlib_loader import load_matplotlib
skipped = load_matplotlib()
from matplotlib.lines import Line2D
from matplotlib.axes import Axes
from matplotlib.artist import Artist
line = Line2D([0, 1], [0, 1])
line.set(lw=3, color="red")      # an alias, as matplotlib accepts it
class Later(Artist):      # defined after the import: generated as usual
    def set_speed(self, value):
        '''Set the speed.'''
print(json.dumps({"skipped": skipped, "width": line.get_linewidth(), "color": line.get_color(),
                  "line_doc": Line2D.set.__doc__, "later_doc": "speed" in (Later.set.__doc__ or ""),
                  "later_signature": "speed" in str(inspect.signature(Later.set)),
                  "plot_doc": "antialiased" in Axes.plot.__doc__}))
"""
    result = json.loads(run_python(code))
    assert result["skipped"] is True
    assert result["width"] == 3 and result["color"] == "red"
    assert result["line_doc"] is None            # what the loader skipped, nothing more
    assert result["later_doc"] and result["later_signature"]
    assert result["plot_doc"]                    # Axes.plot's property table is kept


def test_nothing_is_changed_when_matplotlib_was_imported_before():
    code = """
import json
import matplotlib.figure
from matplotlib.lines import Line2D
from plot_tool.matplotlib_loader import load_matplotlib
print(json.dumps({"skipped": load_matplotlib(),
                  "line_doc": "linewidth" in (Line2D.set.__doc__ or "")}))
"""
    assert json.loads(run_python(code)) == {"skipped": False, "line_doc": True}


def test_make_figures_imports_the_backend_only_when_it_draws():
    code = """
import sys
import plot_tool.figures
print(sorted(m for m in ("numpy", "matplotlib", "PIL") if m in sys.modules))
"""
    assert run_python(code) == "[]"
