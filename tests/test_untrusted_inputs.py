"""Input files are data: a sweep file never runs code, whatever it names, and ids that a
spreadsheet would run as formulas are refused (docs/outputs.md, "Bounds and rules")."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
AIMD = ROOT / "experiments" / "plugins" / "aimd.py"
PAYLOAD = 'import pathlib\npathlib.Path(__file__).with_name("PWNED").write_text("ran")\n'


def sweep_file(tmp_path, **fields):
    data = {"topology": "lossy_link", "parameters": {"flows.F1.data_mb": [0.1]}, "duration_s": 0.5}
    data.update(fields)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("topology", ["no_such_topology", "lossy_link"])
@pytest.mark.parametrize("where", ["payload.py", "../up/payload.py", "ABSOLUTE"])
def test_a_sweep_files_plugins_are_never_imported(tmp_path, run_cli, topology, where):
    (tmp_path / "up").mkdir()
    folder = tmp_path / "shared"
    folder.mkdir()
    payload = (tmp_path / "up" / "payload.py") if where.startswith("..") else folder / "payload.py"
    payload.write_text(PAYLOAD)
    named = str(payload) if where == "ABSOLUTE" else where
    path = sweep_file(folder, topology=topology, plugins=[named])
    done = run_cli("sweep", path, "--out", tmp_path / "out", "--quiet", "--jobs", "1")
    assert not (payload.parent / "PWNED").exists()
    if topology == "no_such_topology":
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "no file or preset" in done.stderr
        assert "--plugin" not in done.stderr           # none was given, none is needed
    else:                                             # a sweep that needs no plugin just runs
        assert done.returncode == 0, done.stderr


def test_a_sweep_needing_a_named_plugin_says_which_plugin_option_to_add(tmp_path, run_cli):
    folder = tmp_path / "shared"
    (folder / "plugins").mkdir(parents=True)
    plugin = folder / "plugins" / "aimd.py"
    plugin.write_text(AIMD.read_text() + "\n" + PAYLOAD.replace(
        'with_name("PWNED")', 'parent.with_name("PWNED")'))
    path = sweep_file(folder, plugins=["plugins/aimd.py"],
                      parameters={"flows.*.algorithm": ["reno", "aimd"]})
    done = run_cli("sweep", path, "--out", tmp_path / "out", "--quiet", "--jobs", "1")
    assert done.returncode == 2
    assert not (folder / "PWNED").exists() and not (tmp_path / "out").exists()
    line, = done.stderr.splitlines()
    assert line == (f'error: {path}: field "plugins": unknown algorithm "aimd"; the sweep file '
                    f"names the plugin files it needs, but a sweep file never loads code: add "
                    f"--plugin {folder / 'plugins' / 'aimd.py'} to the command line")
    done = run_cli("sweep", path, "--plugin", plugin, "--out", tmp_path / "out", "--quiet",
                   "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert (folder / "PWNED").exists()                # the command line asked for it


@pytest.mark.parametrize("start", ["=", "+", "-", "@"])
@pytest.mark.parametrize("where", ["hosts", "links", "flows"])
def test_ids_a_spreadsheet_would_run_as_formulas_are_refused(tmp_path, run_cli, start, where):
    data = {"hosts": ["H1", "H2"], "duration_s": 1,
            "links": [{"id": "L1", "ends": ["H1", "H2"], "rate_mbps": 10, "delay_ms": 5,
                       "buffer_kb": 100}],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.1}]}
    bad = f'{start}HYPERLINK("http://x","y")'
    if where == "hosts":
        data["hosts"][0] = bad
        data["links"][0]["ends"][0] = data["flows"][0]["src"] = bad
    else:
        data[where][0]["id"] = bad
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    done = run_cli(path, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    line, = done.stderr.splitlines()
    assert f'expected an id not starting with "{start}" (a spreadsheet opening the CSV files would ' \
           f"run it as a formula)" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("bad", ["\tL1", "\rL1"])
def test_ids_starting_with_a_tab_or_carriage_return_are_refused(bad):
    from topologies.validation import id_problem
    assert "expected an id" in id_problem(bad)


def test_sweep_labels_follow_the_same_rule(tmp_path):
    from netsim.sweep_file import SweepError, load_sweep
    path = sweep_file(tmp_path, parameters={"links.L1.delay_ms": {"values": [1, 2],
                                                                   "labels": ["ok", "=1+1"]}})
    with pytest.raises(SweepError, match='field "labels": expected an id not starting with "="'):
        load_sweep(path)
