"""What a plain (non-editable) ``pip install .`` ships: every package of the project (a
subpackage left out of pyproject.toml's list, plot_tool.png, made every run with figures fail
after simulating, under such an install only; an editable install hides it), and every data file
the code reads."""
from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("simulator", "components", "flows", "routing", "topologies", "theory", "netsim",
       "plot_tool")


def _setuptools() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["tool"]["setuptools"]


def _tracked(directory: str) -> list:
    out = subprocess.run(["git", "ls-files", directory], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def test_every_package_directory_is_listed():
    found = {".".join(path.parent.relative_to(ROOT).parts)
             for top in TOP for path in (ROOT / top).rglob("__init__.py")
             if "__pycache__" not in path.parts}
    assert set(_setuptools()["packages"]) == found


def test_every_data_file_is_package_data():
    import fnmatch
    data = _setuptools()["package-data"]
    for top in TOP:
        for name in _tracked(top):
            if name.endswith(".py"):
                continue
            package, _, rest = name.partition("/")
            assert any(fnmatch.fnmatch(rest, pattern) for pattern in data.get(package, ())), name


@pytest.mark.slow
def test_a_plain_install_runs_the_default_command_with_figures(tmp_path):
    """``pip install --no-deps .`` into a directory of its own, then the default command from
    elsewhere, figures included, with that directory (and not the checkout) on the path."""
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--target", str(target), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    env = {**os.environ, "PYTHONPATH": str(target), "MPLBACKEND": "Agg"}
    work = tmp_path / "work"
    work.mkdir()
    code = ("import sys, netsim, netsim.cli\n"
            f"assert netsim.__file__.startswith({str(target)!r}), netsim.__file__\n"
            "sys.exit(netsim.cli.main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-s", "-c", code, "test_case_0", "--duration", "2",
                           "--out", "out", "--quiet"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert {p.name for p in (work / "out").glob("*.png")} >= {"links.png", "flows.png"}
