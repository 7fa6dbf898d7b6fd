"""A sweep's records say which code made them (`netsim.code_digest`), and a resume reuses only
those of the same code: resumed after the simulator changed (a fix pulled, a Dask worker
importing another checkout), a sweep gave back the old code's numbers, every record saying
netsim 0.1.0 whatever the commit."""
from __future__ import annotations

import json

from initializer import main
from netsim.code_digest import RESULT_MODULES, RESULT_PACKAGES, ROOT, code_digest

SWEEP = {"name": "code", "topology": "lossy_link", "duration_s": 0.5, "seeds": 1,
         "parameters": {"links.L1.delay_ms": [5, 10]}, "metrics": ["flows.F1.goodput_mbps"]}


def run(tmp_path, capsys) -> tuple:
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(SWEEP))
    capsys.readouterr()
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--jobs", "1",
                 "--no-plots"]) == 0
    return capsys.readouterr()


def test_records_carry_the_code_digest_and_other_code_is_run_again(tmp_path, capsys):
    run(tmp_path, capsys)
    records = sorted((tmp_path / "out" / "runs").glob("*.json"))
    assert len(records) == 2
    assert {json.loads(p.read_text())["code_digest"] for p in records} == {code_digest()}
    out = run(tmp_path, capsys)
    assert "(0 simulated now, 2 reused from earlier" in out.out and "other netsim code" not in out.err
    old = json.loads(records[0].read_text())
    old["code_digest"] = "0" * 64                     # made by other code
    records[0].write_text(json.dumps(old))
    out = run(tmp_path, capsys)
    assert "(1 simulated now, 1 reused from earlier" in out.out
    assert ("code: 1 run records were made by other netsim code (its sources, or the plugins, "
            "changed since): simulated again") in out.err
    assert json.loads(records[0].read_text())["code_digest"] == code_digest()
    del old["code_digest"]                            # a record from before the digest
    records[0].write_text(json.dumps(old))
    assert "(1 simulated now, 1 reused" in run(tmp_path, capsys).out


def test_the_digest_covers_the_sources_of_results_and_the_plugins(tmp_path):
    covered = {p.relative_to(ROOT).as_posix() for package in RESULT_PACKAGES
               for p in (ROOT / package).rglob("*.py")}
    assert {"flows/reno.py", "simulator/engine.py", "theory/check.py"} <= covered
    assert all((ROOT / name).is_file() for name in RESULT_MODULES)
    plugin = tmp_path / "aimd.py"
    plugin.write_text("# version 1\n")
    first = code_digest((str(plugin),))
    assert first != code_digest() and first == code_digest((str(plugin),))
    plugin.write_text("# version 2\n")
    assert code_digest((str(plugin),)) != first


def test_a_damaged_records_warning_reads_as_the_commands_own_lines(tmp_path, capsys):
    """The sweep command's log lines read "warning: ...", as its other warnings do (a damaged
    record's was "WARNING netsim.sweep_store: ...")."""
    run(tmp_path, capsys)
    record = sorted((tmp_path / "out" / "runs").glob("*.json"))[0]
    record.write_text("{")
    err = run(tmp_path, capsys).err.splitlines()
    assert [line for line in err if "simulated again" in line] == [
        f"warning: {record}: Expecting property name enclosed in double quotes: line 1 column 2 "
        f"(char 1); the run is simulated again"]


def test_a_run_loads_no_module_of_the_project_the_digest_leaves_out(tmp_path):
    """Every module a sweep's run imports (its record, the check report included) is covered:
    results_dir, version, sweep_theory and plot_tool's schema shaped records and were not."""
    import subprocess
    import sys
    script = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
from netsim.sweep_execute import run_one
data = json.loads(open({str(ROOT / 'topologies' / 'lossy_link.json')!r}).read())
data["flows"][0]["data_mb"] = 0.05
result = run_one((data, "d" * 64, 1, 0.1, True))
assert result["status"] == "ok", result["error"]
root = {str(ROOT)!r} + "/"
print(json.dumps(sorted(m.__file__[len(root):] for m in list(sys.modules.values())
                        if (getattr(m, "__file__", None) or "").startswith(root))))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = {name for name in json.loads(done.stdout.splitlines()[-1]) if name.endswith(".py")}
    covered = {p.relative_to(ROOT).as_posix() for package in RESULT_PACKAGES
               for p in (ROOT / package).rglob("*.py")} | set(RESULT_MODULES)
    assert "netsim/results_dir.py" in loaded and "plot_tool/schema.py" in loaded
    assert loaded <= covered, sorted(loaded - covered)
