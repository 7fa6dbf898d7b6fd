"""The command line (a thin entry point; the program is `netsim.cli`):

    python initializer.py topologies/test_case_2.json -l L1 L3
    python initializer.py sweep experiments/goodput_vs_loss.json --jobs 2

The same program is installed as `netsim` and runs as ``python -m netsim``; all three start in
`netsim.command`, which reports a stale compiled core or an early signal in one line.
"""
if __name__ == "__main__":
    from netsim.command import entry
    entry()
else:                                         # (the tests call `main` directly)
    from netsim.cli import entry, main  # noqa: F401
