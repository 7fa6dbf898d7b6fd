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


@pytest.mark.parametrize("args, message", [
    (["--table-rows", "9223372036854775808"],
     "--table-rows: expected a number from 0 to 1000000000 (0: list all), got "
     "9223372036854775808"),
    (["--check-settle", "1"], "--check-settle: only meaningful with --check"),
    (["--out", ""], "--out: expected a path, got an empty string"),
    (["--trace", ""], "--trace: expected a path, got an empty string"),
    (["-f", ""], "-f: expected a path, got an empty string"),
])
def test_a_value_netsim_cannot_use_is_one_line_before_the_run(tmp_path, capsys, args, message):
    """A huge --table-rows ended in a traceback after the run; --check-settle without --check
    and an empty path were silently ignored (the results went to the default directory)."""
    out = tmp_path / "out"
    given = args + ([] if "--out" in args else ["--out", str(out)])
    with contextlib.chdir(tmp_path):
        assert main(["test_case_0", "--no-plots", "--duration", "1", *given]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert list(tmp_path.iterdir()) == []                 # nothing written, here or in results/


def test_empty_output_paths_of_the_subcommands_are_refused(tmp_path, capsys):
    from netsim.sweep_cli import sweep_main
    sweep = tmp_path / "s.json"
    sweep.write_text('{"name": "s", "topology": "lossy_link", "duration_s": 1, '
                     '"parameters": {"links.L1.delay_ms": [5]}, "metrics": ["events"]}')
    with contextlib.chdir(tmp_path):
        assert sweep_main([str(sweep), "--out", ""]) == 2
        assert generate_main(["dumbbell", "-o", ""]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --out: expected a path, got an empty string\n"
                   "error: -o: expected a path, got an empty string (no -o: the standard "
                   "output)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_a_directory_named_like_a_shipped_topology_does_not_hide_it(tmp_path, capsys):
    """README: a *file* of that name in the working directory comes first."""
    from netsim.cli_options import shipped_topology
    (tmp_path / "test_case_0").mkdir()
    with contextlib.chdir(tmp_path):
        assert shipped_topology("test_case_0").endswith("topologies/test_case_0.json")
        (tmp_path / "lossy_link").write_text("{}")
        assert shipped_topology("lossy_link") == "lossy_link"
