"""Where the command starts, before the simulator is imported: ``initializer.py``, the installed
``netsim`` and ``python -m netsim`` all begin here.

Importing the program (`netsim.cli`) imports the simulator, which refuses a compiled core older
than its sources (`simulator.compiled.StaleBuildError`, raised while importing). That refusal,
and a signal arriving while the program is still being imported, end the command with one line
on standard error (exit status 2, or 128 + the signal's number) instead of a traceback. Once
imported, `netsim.cli.entry` installs its own handlers and runs the command.
"""
import os
import signal


def _stopped_while_starting(signum, frame) -> None:   # nothing is written yet: nothing to undo
    os.write(2, f"interrupted ({signal.Signals(signum).name}) while starting: no results "
                f"written\n".encode())
    os._exit(128 + signum)


def install_starting_handlers() -> None:
    """SIGINT and SIGTERM end the program at once with one line, until `netsim.cli.entry`
    installs the handlers of a run."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stopped_while_starting)


def entry() -> None:
    """Console entry point: import the program, then run it (`netsim.cli.entry`). Nothing but
    `os` and `signal` is imported before the handlers are in place."""
    install_starting_handlers()
    try:
        from netsim.cli import entry as run_command
    except ImportError as exc:    # a compiled core older than its sources (simulator/compiled.py)
        if type(exc).__name__ != "StaleBuildError":
            raise                 # (its class cannot be imported: `simulator` refuses to load)
        from netsim.cli_options import EXIT_BAD_INPUT, program_name
        os.write(2, f"{program_name()}: {exc}\n".encode())
        os._exit(EXIT_BAD_INPUT)
    run_command()
