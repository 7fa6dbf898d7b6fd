"""A shipped topology is found by its bare name only, by the command line and by sweeps alike
(topologies/shipped.py); anything else is a path of the user's (found by fuzzing: a sweep's
"../../../tmp/x.json" walked out of the shipped directory, `spec.py` read the package's own
source as a topology, and a topology name too long for the file system was blamed on --out)."""
from __future__ import annotations

import contextlib
import json

import pytest

from netsim.cli import main
from netsim.cli_options import shipped_topology
from netsim.sweep_file import SweepError, load_sweep
from topologies.shipped import SHIPPED_DIR, is_bare_name, shipped_file, shipped_names


@pytest.mark.parametrize("name, found", [
    ("test_case_0", "test_case_0.json"), ("test_case_0.json", "test_case_0.json"),
    ("examples/websearch", "examples/websearch.json"),
    ("examples/websearch.json", "examples/websearch.json"),
    ("spec.py", None), ("spec", None), ("loader.py", None), ("__init__.py", None),
    ("../test_case_0", None), ("./test_case_0", None), ("test_case_0.json/", None),
    ("examples/../test_case_0", None), ("..", None), (".", None), ("examples/", None),
    ("a\x00b", None), ("x" * 5000, None), ("/etc/passwd", None),
])
def test_only_bare_names_of_shipped_json_files_are_found(name, found):
    path = shipped_file(name)
    assert (None if path is None else path.relative_to(SHIPPED_DIR).as_posix()) == found


def test_the_names_listed_are_the_ones_found():
    names = shipped_names()
    assert "test_case_2" in names and "examples/websearch" in names and "spec" not in names
    assert all(is_bare_name(n) and shipped_file(n) is not None for n in names)


def test_a_file_of_the_users_comes_first_and_a_path_is_never_looked_up_as_shipped(tmp_path):
    with contextlib.chdir(tmp_path):
        (tmp_path / "lossy_link").write_text("{}")
        assert shipped_topology("lossy_link") == "lossy_link"
        assert shipped_topology("spec.py") == "spec.py"           # (the loader: no such file)
        assert shipped_topology("../test_case_0") == "../test_case_0"
        assert shipped_topology("test_case_1").endswith("topologies/test_case_1.json")


def test_a_topology_name_too_long_for_the_file_system_is_the_topologys_error(tmp_path, capsys):
    name = "x" * 300 + ".json"
    assert shipped_topology(name) == name
    assert main([name, "--out", str(tmp_path / "out"), "--no-plots", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {name}: cannot read file: File name too long\n"


def test_a_sweep_topology_with_a_directory_is_not_a_preset(tmp_path):
    target = tmp_path / "elsewhere" / "net.json"
    target.parent.mkdir()
    target.write_text((SHIPPED_DIR / "lossy_link.json").read_text())
    sweep_dir = tmp_path / "a" / "b"
    sweep_dir.mkdir(parents=True)
    sweep = sweep_dir / "s.json"
    walk_out = "../" * len(SHIPPED_DIR.parts) + str(target).lstrip("/")
    sweep.write_text(json.dumps({"name": "s", "topology": walk_out, "seeds": 1,
                                 "parameters": {"links.L1.delay_ms": [5]},
                                 "metrics": ["end_time_s"]}))
    with contextlib.chdir(sweep_dir), pytest.raises(SweepError) as raised:
        load_sweep(sweep)
    assert 'field "topology": no file or preset' in str(raised.value)
    sweep.write_text(json.dumps({"name": "s", "topology": "lossy_link", "seeds": 1,
                                 "parameters": {"links.L1.delay_ms": [5]},
                                 "metrics": ["end_time_s"]}))
    with contextlib.chdir(sweep_dir):
        assert load_sweep(sweep).topology_path == SHIPPED_DIR / "lossy_link.json"
