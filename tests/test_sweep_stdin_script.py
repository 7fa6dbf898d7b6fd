"""A sweep with jobs above 1 from a script piped into ``python -``: its main module's
``__file__`` is "<stdin>", which `spawn` made every worker run as a script (no such file: each
died before its first run), and every run was then recorded with the advice to add an
``if __name__ == "__main__":`` guard, which would not have helped (acceptance test z17, finding
5). Its workers now skip the main module, as those of a ``python -c`` script or a notebook do
(`netsim.sweep_execute.unreadable_main_file`), and the runs run."""
from __future__ import annotations

import json
import subprocess
import sys
import types
from multiprocessing import spawn
from pathlib import Path

import pytest

from netsim import sweep_execute

ROOT = Path(__file__).resolve().parent.parent


def _main(monkeypatch, **attributes) -> types.ModuleType:
    module = types.ModuleType("__main__")
    module.__spec__ = None
    for name, value in attributes.items():
        setattr(module, name, value)
    monkeypatch.setitem(sys.modules, "__main__", module)
    return module


def test_a_main_module_read_from_stdin_is_not_imported_by_the_workers(monkeypatch, tmp_path):
    main = _main(monkeypatch, __file__="<stdin>")
    assert sweep_execute.unreadable_main_file() is not None
    assert "init_main_from_path" in spawn.get_preparation_data("w")      # (what failed)
    with sweep_execute._main_file_hidden():
        assert "init_main_from_path" not in spawn.get_preparation_data("w")
    assert main.__file__ == "<stdin>"                                     # put back


def test_a_script_file_is_imported_by_the_workers_as_before(monkeypatch, tmp_path):
    script = tmp_path / "script.py"
    script.write_text("")
    _main(monkeypatch, __file__=str(script))
    assert sweep_execute.unreadable_main_file() is None
    with sweep_execute._main_file_hidden():
        assert spawn.get_preparation_data("w")["init_main_from_path"] == str(script)


def test_a_main_module_without_a_file_has_nothing_to_hide(monkeypatch):
    _main(monkeypatch)                       # python -c, a notebook, the interactive prompt
    assert sweep_execute.unreadable_main_file() is None


@pytest.mark.slow   # spawns Python and two workers (about 2 s)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX: python - and spawn")
def test_a_sweep_piped_into_python_runs_with_two_jobs(tmp_path):
    sweep = {"name": "stdin", "topology": "lossy_link", "duration_s": 0.2, "seeds": 1,
             "parameters": {"links.L1.delay_ms": [5, 10]}, "metrics": ["flows.F1.goodput_mbps"]}
    (tmp_path / "s.json").write_text(json.dumps(sweep))
    script = (f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
              "from netsim.sweep import load_sweep, run_sweep\n"
              "rows = run_sweep(load_sweep('s.json'), 'out', jobs=2)\n"
              "print([(row['status'], row['error']) for row in rows])\n")
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "[('ok', ''), ('ok', '')]\n", "")
