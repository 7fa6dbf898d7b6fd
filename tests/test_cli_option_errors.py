"""A command-line option of the wrong type or value, an unknown option or a missing argument is
one line, ``error: PROG: ...`` naming the option with a pointer to ``PROG --help``, and exit 2,
in every subcommand (run, report, sweep, generate, convert, python -m netsim.iperf_json): never
argparse's usage block. netsim's own range errors stay ``error: --option: ...``."""
from __future__ import annotations

import contextlib
import io
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from netsim.cli import main
from netsim.cli_options import option_error_line, program_name
from netsim.generate_cli import generate_main


@pytest.mark.parametrize("args, message", [
    (["test_case_0", "--duration", "abc"], "argument --duration: invalid float value: 'abc'"),
    (["test_case_0", "--seed", "1.5"], "argument --seed: invalid int value: '1.5'"),
    (["test_case_0", "--stack", "bsd"],
     "argument --stack: invalid choice: 'bsd' (choose from 'classic', 'linux')"),
    (["test_case_0", "-v", "LOUD"], "argument -v/--verbosity: invalid choice: 'LOUD' (choose "
                                    "from 'DEBUG', 'INFO', 'WARNING')"),
    (["test_case_0", "--bogus"], "unrecognized arguments: --bogus"),
    (["sweep", "x.json", "--jobs", "z"], "argument --jobs: invalid int value: 'z'"),
    (["report", "results", "-l"], "argument -l/--links: expected at least one argument"),
    (["convert"], "the following arguments are required: OLD.json"),
    (["generate", "dumbbell", "--pairs", "x"], "argument --pairs: invalid int value: 'x'"),
])
def test_an_option_error_is_one_line_and_exit_2(run_cli, tmp_path, args, message):
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2
    command = "initializer.py" + {"test_case_0": "", "generate": " generate dumbbell"}.get(
        args[0], f" {args[0]}")
    assert done.stderr == f"error: {command}: {message} ({command} --help lists the options)\n"


@pytest.mark.parametrize("args, message", [
    (["--interval", "x"], "argument --interval: invalid float value: 'x'"),
    (["--table-rows", "1.5"], "argument --table-rows: invalid int value: '1.5'"),
    (["--check-tolerance", "x"], "argument --check-tolerance: invalid float value: 'x'"),
    (["--check-settle", "2s"], "argument --check-settle: invalid float value: '2s'"),
    (["--seed"], "argument --seed: expected one argument"),
    (["--out"], "argument --out: expected one argument"),
    (["-F"], "argument -F/--flows: expected at least one argument"),
    (["--ch"], "ambiguous option: --ch could match --check, --check-tolerance, --check-settle"),
])
def test_every_option_of_a_run_is_checked_in_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as stop:
        main(["test_case_0", *args])
    assert stop.value.code == 2
    assert capsys.readouterr().err == option_error_line(program_name(), message) + "\n"


def test_the_line_names_the_program_and_points_to_its_help():
    assert option_error_line("netsim report", "argument -o/--out: expected one argument") == (
        "error: netsim report: argument -o/--out: expected one argument (netsim report --help "
        "lists the options)")


def test_what_the_user_typed_stays_on_one_line(capsys):
    with pytest.raises(SystemExit):
        main(["test_case_0", "a\nb"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments: a\\nb" in err


def is_integer(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=12).filter(lambda t: not t.startswith("-")))
def test_any_value_that_is_not_an_integer_is_one_line_for_seed(text):
    assume(not is_integer(text))
    stderr = io.StringIO()
    with pytest.raises(SystemExit) as stop, contextlib.redirect_stderr(stderr):
        main(["test_case_0", "--seed", text])
    assert stop.value.code == 2
    assert stderr.getvalue().count("\n") == 1
    assert stderr.getvalue().startswith(
        f"error: {program_name()}: argument --seed: invalid int value: ")


def test_generate_returns_its_option_error_as_one_line(capsys):
    assert generate_main(["ring"]) == 2
    err = capsys.readouterr().err.splitlines()
    prog = f"{program_name()} generate"
    assert err == [option_error_line(prog, "argument KIND: invalid choice: 'ring' (choose from "
                                           "'fat-tree', 'leaf-spine', 'dumbbell', "
                                           "'parking-lot', 'random')")]


def test_the_iperf_json_module_has_the_same_line(tmp_path, root):
    done = subprocess.run([sys.executable, "-m", "netsim.iperf_json", str(tmp_path), "-i", "x"],
                          capture_output=True, text=True, cwd=root, timeout=60)
    assert done.returncode == 2
    prog = "python -m netsim.iperf_json"
    assert done.stderr == (f"error: {prog}: argument -i/--interval: invalid float value: 'x' "
                           f"({prog} --help lists the options)\n")


@pytest.mark.parametrize("value, line", [
    ("-5", "error: --duration: expected a positive number, got -5.0"),
    ("1e-10", "error: --duration: expected a time from 1e-09 s to 1e+06 s, got 1e-10"),
    ("inf", "error: --duration: expected a time from 1e-09 s to 1e+06 s, got inf"),
])
def test_a_value_out_of_range_keeps_netsims_line_with_the_options_name(capsys, tmp_path, value,
                                                                        line):
    assert main(["test_case_0", "--duration", value, "--no-plots", "--out",
                 str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == line + "\n"
    assert not (tmp_path / "o").exists()
