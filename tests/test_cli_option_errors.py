"""A command-line option of the wrong type or value, an unknown option or a missing argument is
one line naming the option and exit 2, in every subcommand, as netsim's own errors are: never
argparse's usage block."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("args, message", [
    (["test_case_0", "--duration", "abc"], "argument --duration: invalid float value: 'abc'"),
    (["test_case_0", "--seed", "1.5"], "argument --seed: invalid int value: '1.5'"),
    (["test_case_0", "--stack", "bsd"],
     "argument --stack: invalid choice: 'bsd' (choose from 'classic', 'linux')"),
    (["test_case_0", "-v", "LOUD"], "argument -v/--verbosity: invalid choice: 'LOUD'"),
    (["test_case_0", "--bogus"], "unrecognized arguments: --bogus"),
    (["sweep", "x.json", "--jobs", "z"], "argument --jobs: invalid int value: 'z'"),
    (["report", "results", "-l"], "argument -l/--links: expected at least one argument"),
    (["convert"], "the following arguments are required: OLD.json"),
])
def test_an_option_error_is_one_line_and_exit_2(run_cli, tmp_path, args, message):
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    command = "initializer.py" + ("" if args[0] == "test_case_0" else f" {args[0]}")
    assert lines[0].startswith(f"error: {command}: {message}")
    assert lines[0].endswith(f"({command} --help lists the options)")
    assert "usage:" not in done.stderr and "Traceback" not in done.stderr
