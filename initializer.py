"""The command line (a thin entry point; the program is `netsim.cli`):

    python initializer.py topologies/test_case_2.json -l L1 L3
    python initializer.py sweep experiments/goodput_vs_loss.json --jobs 2

The same program is installed as `netsim` and runs as ``python -m netsim``.
"""
import os
import signal


def _stopped_while_starting(signum, frame):   # before netsim is imported: nothing to clean up
    os.write(2, f"interrupted ({signal.Signals(signum).name}) while starting: no results "
                f"written\n".encode())
    os._exit(128 + signum)


if __name__ == "__main__":                    # the handlers first; `entry` installs its own
    for _signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(_signal, _stopped_while_starting)

from netsim.cli import entry, main  # noqa: E402,F401

if __name__ == "__main__":
    entry()
