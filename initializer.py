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

try:
    from netsim.cli import entry, main  # noqa: F401
except ImportError as _exc:       # a compiled core older than its sources (simulator/compiled.py)
    if __name__ != "__main__" or type(_exc).__name__ != "StaleBuildError":
        raise                         # (its class cannot be imported: `simulator` refuses to load)
    os.write(2, f"initializer.py: {_exc}\n".encode())
    os._exit(2)

if __name__ == "__main__":
    entry()
