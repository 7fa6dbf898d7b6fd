"""The optional compiled core (simulator/compiled.py, tools/compile_core.py): without a build the
core is pure Python and nothing is checked; with one, a source changed after the build is refused
with one line that says what to do."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from simulator import compiled

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fake_tree(tmp_path, monkeypatch):
    """A tree with a source of simulator.engine and an (empty) extension module beside it."""
    (tmp_path / "simulator").mkdir()
    source = tmp_path / "simulator" / "engine.py"
    source.write_text("# the engine\n")
    (tmp_path / "simulator" / f"engine{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    monkeypatch.setattr(compiled, "ROOT", tmp_path)
    monkeypatch.setattr(compiled, "MANIFEST", tmp_path / "compiled_core.json")
    return source


def test_the_checked_out_core_passes_the_check():
    # pure Python, or a build of the current sources (importing `simulator` ran the check too)
    assert set(compiled.compiled_modules()) <= set(compiled.COMPILED_MODULES)
    compiled.check()


def test_a_build_without_a_record_of_its_sources_is_refused(fake_tree):
    assert compiled.compiled_modules() == ["simulator.engine"]
    with pytest.raises(compiled.StaleBuildError, match=r"was not built from the current .*engine\.py: "
                                                       r"rebuild it \(python tools/compile_core\.py\)"):
        compiled.check()


def test_a_build_of_the_current_sources_passes_and_an_edit_is_refused(fake_tree):
    digest = hashlib.sha256(fake_tree.read_bytes()).hexdigest()
    compiled.MANIFEST.write_text(json.dumps({"simulator.engine": digest}))
    compiled.check()
    fake_tree.write_text("# the engine, edited after the build\n")
    with pytest.raises(compiled.StaleBuildError, match="--clean"):
        compiled.check()


def test_a_compiled_module_the_list_no_longer_names_is_refused(fake_tree):
    # a build of an earlier, longer list left netsim/results compiled: it would shadow the
    # current source, so the check refuses it even though every listed module is up to date
    digest = hashlib.sha256(fake_tree.read_bytes()).hexdigest()
    compiled.MANIFEST.write_text(json.dumps({"simulator.engine": digest}))
    (compiled.ROOT / "netsim").mkdir()
    (compiled.ROOT / "netsim" / "results.py").write_text("# the summary\n")
    stray = compiled.ROOT / "netsim" / f"results{EXTENSION_SUFFIXES[0]}"
    stray.write_bytes(b"")
    (compiled.ROOT / "netsim" / f"orphan{EXTENSION_SUFFIXES[0]}").write_bytes(b"")  # no source
    assert compiled.shadowing_extensions() == [
        compiled.ROOT / "simulator" / f"engine{EXTENSION_SUFFIXES[0]}", stray]
    with pytest.raises(compiled.StaleBuildError,
                       match=r"results.* is a compiled module the current build does not list"):
        compiled.check()
    stray.unlink()
    compiled.check()


def test_status_lists_every_module_of_the_packet_path():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "compile_core.py"), "--status"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(compiled.COMPILED_MODULES)
    built = set(compiled.compiled_modules())
    for line in lines:
        module, state = line.split(None, 1)
        assert state.startswith("compiled (") if module in built else state == "pure Python"


# how the command is started: initializer.py, python -m netsim, and what the installed `netsim`
# script runs (pyproject.toml's [project.scripts] entry, called with argv[0] a path ending in
# "netsim"), with the name each one's error line starts with
STARTS = {"initializer.py": (["initializer.py"], "initializer.py: "),
          "python -m netsim": (["-m", "netsim"], "netsim: "),
          "netsim": (["-c", "import sys; sys.argv[0] = '/usr/bin/netsim'; "
                            "from netsim.command import entry; entry()"], "netsim: ")}


def test_the_installed_command_starts_where_the_others_do():
    import tomllib
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"netsim": "netsim.command:entry"}


@pytest.mark.parametrize("start", list(STARTS))
def test_the_command_line_refuses_a_stale_build_with_one_line(tmp_path, start):
    # a copy of the checkout whose engine has a compiled module built from no recorded source
    import shutil
    for package in compiled.PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    shutil.copy(ROOT / "initializer.py", tmp_path)
    (tmp_path / "simulator" / f"engine{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    command, prefix = STARTS[start]
    done = subprocess.run([sys.executable, *command, "topologies/test_case_0.json",
                           "--no-plots", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(prefix) and "was not built from the current" in done.stderr
    assert not (tmp_path / "out").exists()
