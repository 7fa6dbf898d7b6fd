"""A signal at any moment of the command line ends it with one line and 128 + its number: the
handlers are installed first thing (initializer.py, then netsim.cli.entry)."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TC0 = ROOT / "topologies" / "test_case_0.json"


def caught(pid: int) -> int:
    """The caught-signals mask of process `pid` (/proc/PID/status, SigCgt)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return int(line.split()[1], 16)
    return 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_program_starts_is_one_line(tmp_path, sig):
    child = subprocess.Popen([sys.executable, str(ROOT / "initializer.py"), str(TC0),
                              "--no-plots", "--quiet", "--out", str(tmp_path / "r")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not caught(child.pid) & (1 << (signal.SIGTERM - 1)):     # our handler is in place
        assert child.poll() is None and time.time() < deadline
        time.sleep(0.001)
    child.send_signal(sig)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + sig
    assert "Traceback" not in err
    name = signal.Signals(sig).name
    assert err.strip().splitlines()[-1] in (f"interrupted ({name}) while starting: no results written",
                                            f"interrupted ({name}): no results written")
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_sigterm_outside_a_run_ends_the_cli_like_ctrl_c(tmp_path):
    code = ("import os, signal, time\n"
            "import netsim.cli as cli\n"
            "def main(argv=None):\n"
            "    os.kill(os.getpid(), signal.SIGTERM)\n"
            "    time.sleep(5)\n"
            "    return 0\n"
            "cli.main = main\n"
            "cli.entry()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 143
    assert done.stderr == "interrupted (SIGTERM): no results written\n"


# `entry` with a `main` that has written its results, then a signal as the program exits (in
# the interpreter's finalization: raised in a weakref callback, it was a traceback and exit 0)
LATE = """
import atexit, os, signal, sys
import netsim.cli as cli

def main():
    atexit.register(lambda: os.kill(os.getpid(), signal.{name}))   # as the program exits
    return 0

cli.main = main
cli.entry()
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_as_the_program_exits_is_one_line_and_128_plus_its_number(sig):
    name = signal.Signals(sig).name
    done = subprocess.run([sys.executable, "-c", LATE.replace("{name}", name)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert done.stderr.strip() == (f"interrupted ({name}) as the program exited; what it wrote "
                                   f"is complete")
    assert done.returncode == 128 + sig
