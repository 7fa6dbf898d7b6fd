"""User-defined congestion control: --plugin files, sweep plugins, entry points, the stand-in
flow of flows.testing (docs/algorithms.md, "Write your own")."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flows import ALGORITHMS, BUILTIN_ALGORITHMS, register_algorithm
from flows.congestion import CongestionControl
from flows.testing import StandInFlow

ROOT = Path(__file__).resolve().parent.parent
AIMD = ROOT / "experiments" / "plugins" / "aimd.py"
LOSSY = ROOT / "topologies" / "lossy_link.json"


@pytest.fixture(autouse=True)
def _clean_registry():
    before = dict(ALGORITHMS)
    yield
    ALGORITHMS.clear()
    ALGORITHMS.update(before)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def topology_with(algorithm, **params):
    data = json.loads(LOSSY.read_text())
    data["flows"][0]["algorithm"] = algorithm
    data["flows"][0]["data_mb"] = 1
    if params:
        data["flows"][0]["params"] = params
    return data


def test_a_plugin_file_runs_by_name_with_its_parameters_validated(tmp_path, run_cli):
    topo = tmp_path / "t.json"
    topo.write_text(json.dumps(topology_with("aimd", b=0.5)))
    done = run_cli(topo, "--plugin", AIMD, "--no-plots", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["flows"]["F1"]["algorithm"] == "aimd"
    assert summary["flows"]["F1"]["in_order"]
    topo.write_text(json.dumps(topology_with("aimd", b=1.5)))
    bad = run_cli(topo, "--plugin", AIMD, "--quiet", "--out", tmp_path / "r2")
    assert bad.returncode == 2
    assert "b" in bad.stderr and "(0, 1)" in bad.stderr and len(bad.stderr.splitlines()) == 1
    topo.write_text(json.dumps(topology_with("aimd", gain=2)))
    bad = run_cli(topo, "--plugin", AIMD, "--quiet", "--out", tmp_path / "r3")
    assert bad.returncode == 2 and 'unknown parameter "gain"' in bad.stderr


def test_algorithm_override_with_a_plugin(tmp_path, run_cli):
    assert json.loads(LOSSY.read_text())["flows"][0]["algorithm"] == "reno"
    done = run_cli(LOSSY, "--plugin", AIMD, "--algorithm", "aimd", "--duration", "2",
                   "--no-plots", "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    flow = summary["flows"]["F1"]
    assert flow["algorithm"] == "aimd"          # the topology's reno, overridden by the plugin's
    assert flow["delivered_bytes"] > 0 and flow["in_order"]


def test_a_topology_never_loads_code_and_the_error_mentions_plugin(tmp_path, run_cli):
    topo = tmp_path / "t.json"
    topo.write_text(json.dumps(topology_with("aimd")))
    done = run_cli(topo, "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert 'unknown algorithm "aimd"' in done.stderr and "--plugin" in done.stderr


@pytest.mark.parametrize("source, expected", [
    ("x = 1\ndef broken(:\n    pass\n", "line 2: SyntaxError"),
    ("import math\n\nraise RuntimeError('boom')\n", "line 3: RuntimeError: boom"),
    ("import no_such_module_here\n", "line 1: ModuleNotFoundError"),
    ("x = 1\n", "defines no subclass"),
    ("from flows.congestion import CongestionControl\n\nclass R(CongestionControl):\n"
     "    name = 'reno'\n", "built-in"),
])
def test_a_bad_plugin_is_one_line_naming_the_file(tmp_path, run_cli, source, expected):
    plugin = write(tmp_path, "bad.py", source)
    done = run_cli(LOSSY, "--plugin", plugin, "--quiet", "--out", tmp_path / "r")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "bad.py" in lines[0] and expected in lines[0]
    assert "Traceback" not in done.stderr


def test_two_plugins_with_the_same_name_clash(tmp_path):
    from netsim.plugins import PluginError, load_plugin
    text = ("from flows.congestion import CongestionControl\n\n"
            "class A(CongestionControl):\n    name = 'same'\n"
            "    on_ack = CongestionControl.standard_growth\n")
    load_plugin(write(tmp_path, "one.py", text))
    assert load_plugin(tmp_path / "one.py") == ["same"]          # loading again: a no-op
    with pytest.raises(PluginError) as caught:
        load_plugin(write(tmp_path, "two.py", text))
    one = tmp_path / "one.py"             # (named as it was given, not by its module's name)
    assert str(caught.value) == (f'--plugin {tmp_path / "two.py"}: class A: name "same" is '
                                 f"already taken by class A of {one}")


def test_register_algorithm_refuses_builtins_and_nameless_classes():
    class Nameless(CongestionControl):
        pass

    class Tahoe2(CongestionControl):
        name = "tahoe"

    for cls in (Nameless, Tahoe2, int):
        with pytest.raises(ValueError):
            register_algorithm(cls)
    assert "tahoe" in BUILTIN_ALGORITHMS and ALGORITHMS["tahoe"].__module__ == "flows.tahoe"


def test_sweep_workers_load_the_command_lines_plugins(tmp_path):
    """The shipped example with its plugin given by --plugin, run in worker processes (--jobs 2)."""
    sweep = json.loads((ROOT / "experiments" / "plugin_aimd.json").read_text())
    for key, values in sweep["parameters"].items():
        sweep["parameters"][key] = values[:3]                       # the 1990s profile only
    sweep["plugins"] = [str(AIMD)]
    sweep["topology"] = str(ROOT / "topologies" / "profile_cross_country.json")
    sweep["plots"] = []
    path = tmp_path / "plugin_aimd.json"
    path.write_text(json.dumps(sweep))
    done = subprocess.run([sys.executable, str(ROOT / "initializer.py"), "sweep", str(path),
                           "--plugin", str(AIMD), "--jobs", "2", "--out", str(tmp_path / "out"),
                           "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert len(rows) == 4 and all(",ok," in row for row in rows[1:])
    assert ",aimd," in rows[1]


def test_a_sweep_files_plugins_name_the_plugin_to_add_and_are_never_loaded(tmp_path):
    from netsim.sweep_file import SweepError, load_sweep
    shipped = ROOT / "experiments" / "plugin_aimd.json"
    with pytest.raises(SweepError) as caught:
        load_sweep(shipped)
    message = str(caught.value)
    assert message.startswith(f'{shipped}: field "plugins": unknown algorithm "aimd"')
    assert f"add --plugin {shipped.parent / 'plugins' / 'aimd.py'} to the command line" in message
    assert "aimd" not in ALGORITHMS
    sweep = load_sweep(shipped, plugins=[AIMD])
    assert sweep.plugins == (str(AIMD.resolve()),)
    data = json.loads(shipped.read_text())
    data["topology"] = str(ROOT / "topologies" / "profile_cross_country.json")
    data["plugins"] = ["nowhere.py"]                       # named only: never opened
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    assert load_sweep(path, plugins=[AIMD]).plugins == (str(AIMD.resolve()),)
    with pytest.raises(SweepError, match=r"nowhere\.py: no such file"):
        load_sweep(path, plugins=[tmp_path / "nowhere.py"])


def test_the_hint_leaves_out_files_whose_algorithms_are_installed_already(tmp_path):
    """A sweep listing plugin files whose algorithms an installed entry point already provides
    named them too, and following the hint was a name conflict. The files are parsed for their
    classes' `name`, never run; a file that cannot be read so is named, as before."""
    from netsim.sweep_file import SweepError, load_sweep

    class Installed(CongestionControl):
        name = "installed_cc"

        def on_ack(self, acked_pkts):
            self.standard_growth(acked_pkts)

    register_algorithm(Installed)                       # as an entry point would have
    (tmp_path / "installed.py").write_text(
        "from flows.congestion import CongestionControl\n\n\n"
        "class Installed(CongestionControl):\n    name = 'installed_cc'\n")
    (tmp_path / "aimd_copy.py").write_text(AIMD.read_text())
    sweep = json.loads((ROOT / "experiments" / "plugin_aimd.json").read_text())
    sweep["topology"] = str(ROOT / "topologies" / "profile_cross_country.json")
    sweep["plugins"] = ["installed.py", "aimd_copy.py", "gone.py"]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(sweep))
    with pytest.raises(SweepError) as caught:
        load_sweep(path)
    message = str(caught.value)
    assert message.endswith(f"add --plugin {tmp_path / 'aimd_copy.py'} --plugin "
                            f"{tmp_path / 'gone.py'} to the command line")
    assert "aimd" not in ALGORITHMS                     # parsed, not imported


def _distribution(root: Path, name: str, entry_points: str | None) -> None:
    """An installed distribution `name` under `root` (a dist-info directory as pip writes it),
    with `entry_points` as its entry_points.txt (none if None)."""
    info = root / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)


def test_entry_points_register_algorithms(tmp_path, monkeypatch):
    import netsim.plugins as plugins
    write(tmp_path, "netsim_ep_demo.py", """
        from flows.congestion import CongestionControl

        class Ep(CongestionControl):
            name = "from_entry_point"
            on_ack = CongestionControl.standard_growth
    """)
    _distribution(tmp_path, "netsim_ep_demo", "[netsim.algorithms]\nep = netsim_ep_demo:Ep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_entry_points_loaded", False)
    assert plugins.load_entry_points() == ["from_entry_point"]
    assert ALGORITHMS["from_entry_point"].__module__ == "netsim_ep_demo"
    assert plugins.load_entry_points() == []                  # once per process


@pytest.fixture
def path_finders_only(monkeypatch):
    """sys.meta_path without finders that provide distributions other than the standard
    library's PathFinder (importing dask adds importlib_metadata's), as in a fresh process, so
    the scan's answer depends on the test's sys.path alone, whatever ran before in this
    worker."""
    from importlib.machinery import PathFinder
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is PathFinder
                                           or not hasattr(f, "find_distributions")])


def test_entry_point_scan_is_skipped_only_when_nothing_declares_the_group(tmp_path,
                                                                          monkeypatch,
                                                                          path_finders_only):
    from importlib.metadata import entry_points

    from netsim.plugins import ENTRY_POINT_GROUP, _may_declare
    # this environment: "nothing declares it" must agree with importlib.metadata
    if not _may_declare(ENTRY_POINT_GROUP):
        assert not [p for p in entry_points().select(group=ENTRY_POINT_GROUP)]
    other, declaring = tmp_path / "other", tmp_path / "declaring"
    _distribution(other, "console_thing", "[console_scripts]\nthing = thing:main\n")
    _distribution(other, "plain", None)
    (other / "notes.egg-info").write_text("Name: notes\n")   # an egg-info file, not a directory
    _distribution(declaring, "algos", "[netsim.algorithms]\nx = algos:X\n")
    monkeypatch.setattr(sys, "path", [str(other), str(tmp_path / "missing")])
    assert not _may_declare(ENTRY_POINT_GROUP)
    monkeypatch.setattr(sys, "path", [str(other), str(declaring)])
    assert _may_declare(ENTRY_POINT_GROUP)
    egg = tmp_path / "algos-1.0.egg"                            # an egg directory's EGG-INFO
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "entry_points.txt").write_text("[netsim.algorithms]\nx = algos:X\n")
    monkeypatch.setattr(sys, "path", [str(other), str(egg)])
    assert _may_declare(ENTRY_POINT_GROUP)
    archive = tmp_path / "bundle.zip"                           # not read here: counts as "may"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))
    monkeypatch.setattr(sys, "path", [str(other), str(archive)])
    assert _may_declare(ENTRY_POINT_GROUP)


def test_entry_point_scan_asks_finders_that_provide_distributions(monkeypatch,
                                                                   path_finders_only):
    from netsim.plugins import ENTRY_POINT_GROUP, _may_declare

    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "path", [])
    assert not _may_declare(ENTRY_POINT_GROUP)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert _may_declare(ENTRY_POINT_GROUP)


def test_the_stand_in_flow_unit_tests_hooks_without_a_network():
    sys.path.insert(0, str(AIMD.parent))
    try:
        from netsim.plugins import load_plugin
        load_plugin(AIMD)
        cls = ALGORITHMS["aimd"]
    finally:
        sys.path.remove(str(AIMD.parent))
    flow = StandInFlow(cwnd=10.0, ssthresh=5.0)
    cc = cls(flow, {"a": 2.0})
    cc.init()
    for _ in range(10):
        cc.on_ack(1)
    assert 11.8 < flow.cwnd < 12.0          # two packets per window of ACKs
    flow.flight = 20
    assert cc.ssthresh() == pytest.approx(16.0)   # b = 0.8 of the flight size
