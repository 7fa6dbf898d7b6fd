"""The command line: outputs, the summary table, and bad input (exit status 2, no traceback)."""
from __future__ import annotations

from pathlib import Path

import copy
import json
import subprocess
import sys

import pytest

from initializer import main

ROOT = Path(__file__).resolve().parent.parent

TC0_PATH = ROOT / "topologies" / "test_case_0.json"
TC0 = json.loads(TC0_PATH.read_text())


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, str(ROOT / "initializer.py"), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_main_job_writes_results_figures_and_a_summary(tmp_path):
    done = cli(ROOT / "topologies" / "test_case_2.json", "-l", "L1", "L3", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = tmp_path / "r"
    for name in ("summary.json", "links.csv", "flows.csv", "hosts.csv", "links.png", "flows.png",
                 "hosts.png"):
        assert (out / name).stat().st_size > 0, name
    table = done.stdout
    assert "all flows completed" in table and "(binary units)" in table
    for flow in ("F1", "F2", "F3"):
        assert f"\n{flow} " in table
    link_rows = [line for line in table.splitlines() if line.startswith(("L1 ", "L2 ", "L3 "))]
    assert [row.split()[0] for row in link_rows] == ["L1", "L1", "L3", "L3"]


def test_default_output_directory_is_results_slash_name(tmp_path):
    done = cli(TC0_PATH, "--no-plots", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert (tmp_path / "results" / "test_case_0" / "summary.json").exists()
    assert not (tmp_path / "results" / "test_case_0" / "links.png").exists()


def test_options_reach_the_run(tmp_path, capsys):
    code = main([str(TC0_PATH), "--duration", "2.5", "--seed", "9", "--interval", "0.5",
                 "--algorithm", "tahoe", "--out", str(tmp_path), "--no-plots", "-F", "F1"])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["end_time_s"] == 2.5 and summary["seed"] == 9 and summary["interval_s"] == 0.5
    assert summary["flows"]["F1"]["algorithm"] == "tahoe"
    times = (tmp_path / "hosts.csv").read_text().splitlines()[1].split(",")[0]
    assert times == "0.5"


def test_log_file_and_verbosity(tmp_path):
    log = tmp_path / "run.log"
    code = main([str(TC0_PATH), "-v", "INFO", "-f", str(log), "--out", str(tmp_path / "o"),
                 "--no-plots", "--quiet"])
    assert code == 0
    assert "flow F1 completed" in log.read_text()


def mutate(change):
    data = copy.deepcopy(TC0)
    change(data)
    return data


BAD_TOPOLOGIES = {
    "unparseable": ('{"name": "x",\n "hosts": [}', "not valid JSON: Expecting value at line 2"),
    "unknown key": (mutate(lambda d: d["links"][0].update(rate_mpbs=3)),
                    'links[0] "L1": unknown field "rate_mpbs" (did you mean "rate_mbps"?)'),
    "missing field": (mutate(lambda d: d["links"][0].pop("delay_ms")),
                      'links[0] "L1": missing field "delay_ms"'),
    "wrong type": (mutate(lambda d: d["links"][0].update(delay_ms="ten")),
                   'field "delay_ms": expected a number'),
    "zero rate": (mutate(lambda d: d["links"][0].update(rate_mbps=0)),
                  'field "rate_mbps": expected a positive number, got 0'),
    "negative rate": (mutate(lambda d: d["links"][0].update(rate_mbps=-5)),
                      'field "rate_mbps": expected a positive number, got -5'),
    "unknown node": (mutate(lambda d: d["flows"][0].update(dst="H3")),
                     'field "dst": unknown node "H3"'),
    "duplicate id": (mutate(lambda d: d["links"].append(dict(d["links"][0]))),
                     'duplicate link id "L1"'),
    "host with two links": (mutate(lambda d: d["links"].append(
        {"id": "L2", "ends": ["H1", "H2"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1})),
        'host "H1" has 2 links (L1, L2)'),
    "endpoint is a router": (mutate(lambda d: (d["routers"].append("R1"), d["links"].append(
        {"id": "L2", "ends": ["R1", "H2"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1}),
        d["links"][0].update(ends=["H1", "R1"]), d["flows"][0].update(dst="R1"))),
        'field "dst": "R1" is a router'),
    "not connected": (mutate(lambda d: (d["hosts"].extend(["H3", "H4"]), d["links"].append(
        {"id": "L2", "ends": ["H3", "H4"], "rate_mbps": 1, "delay_ms": 1, "buffer_kb": 1}),
        d["flows"][0].update(dst="H4"))), 'hosts "H1" and "H4" are not connected'),
    "unknown algorithm": (mutate(lambda d: d["flows"][0].update(algorithm="rneo")),
                          'unknown algorithm "rneo" (did you mean "reno"?)'),
    "unknown parameter": (mutate(lambda d: d["flows"][0].update(params={"alhpa": 1})),
                          'unknown parameter "alhpa" of algorithm "fast" (did you mean "alpha"?)'),
    "bad parameter value": (mutate(lambda d: d["flows"][0].update(params={"gamma": 2})),
                            'field "params.gamma": expected a number in (0, 1], got 2'),
}


@pytest.mark.parametrize("case", sorted(BAD_TOPOLOGIES))
def test_bad_topology_exits_2_with_one_clear_line(tmp_path, capsys, case):
    data, expected = BAD_TOPOLOGIES[case]
    path = write(tmp_path, "bad.json", data)
    code = main([str(path), "--out", str(tmp_path / "out"), "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {path}: ") and expected in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_bad_input_in_a_subprocess_has_no_traceback(tmp_path):
    path = write(tmp_path, "bad.json", BAD_TOPOLOGIES["negative rate"][0])
    done = cli(path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr


def test_jsonpickle_payload_is_rejected_without_running_anything(tmp_path):
    marker = tmp_path / "PWNED"
    payload = {"py/reduce": [{"py/function": "os.system"}, {"py/tuple": [f"touch {marker}"]}]}
    path = write(tmp_path, "evil.json", mutate(lambda d: d["links"][0].update(extra=payload)))
    done = cli(path, "--no-plots")
    assert done.returncode == 2
    assert 'jsonpickle tag "py/reduce" is not allowed' in done.stderr
    assert not marker.exists()


@pytest.mark.parametrize("args, expected", [
    (["-l", "L9"], '-l: unknown id "L9"'),
    (["-F", "F2"], '-F: unknown id "F2"'),
    (["--duration", "-1"], "--duration: expected a positive number"),
    (["--interval", "0"], "--interval: expected a positive number"),
    (["--seed", "-3"], "--seed: expected a non-negative integer"),
    (["--seed", "9" * 21], "--seed: expected a non-negative integer of at most 20 digits (as a "
                           "topology's seed), got " + "9" * 21),
    (["--algorithm", "cubik"], '--algorithm: unknown algorithm "cubik"'),
    (["--check", "--check-settle", "inf"],
     "--check-settle: expected a finite number of seconds >= 0, got inf"),
    (["--check", "--check-settle", "-1"],
     "--check-settle: expected a finite number of seconds >= 0, got -1.0"),
    (["--check", "--check-tolerance", "inf"],
     "--check-tolerance: expected a finite percentage >= 0, got inf"),
    (["--check", "--check-tolerance", "nan"],
     "--check-tolerance: expected a finite percentage >= 0, got nan"),
])
def test_bad_command_line_values_exit_2(tmp_path, capsys, args, expected):
    code = main([str(TC0_PATH), "--out", str(tmp_path), "--no-plots", *args])
    assert code == 2
    assert expected in capsys.readouterr().err


def test_missing_file_and_argparse_errors_exit_2(tmp_path):
    done = cli(tmp_path / "nope.json")
    assert done.returncode == 2 and "cannot read file" in done.stderr
    done = cli(TC0_PATH, "-v", "LOUD")
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_endless_flow_without_duration_exits_2(tmp_path, capsys):
    path = write(tmp_path, "endless.json", mutate(lambda d: d["flows"][0].update(data_mb=None)))
    assert main([str(path), "--no-plots", "--out", str(tmp_path / "o")]) == 2
    assert "pass --duration" in capsys.readouterr().err
    assert main([str(path), "--no-plots", "--quiet", "--duration", "1", "--out", str(tmp_path / "o")]) == 0


def test_unwritable_output_directory_exits_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main([str(TC0_PATH), "--no-plots", "--quiet", "--out", str(blocker / "sub")]) == 2
    assert capsys.readouterr().err == (f"error: --out: {blocker / 'sub'}: {blocker} is a file, "
                                       f"not a directory\n")


# -- small things users tripped over ---------------------------------------------------------
def test_link_list_before_the_topology_does_not_swallow_it(tmp_path):
    done = cli("-l", "L1", TC0_PATH, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert "L1 " in done.stdout


def test_repeated_list_options_add_up_and_give_back_a_bare_name(tmp_path, capsys):
    """`-l L1 -l L3` kept L3 alone (the last list), and `-l L1 L3 test_case_2` took the shipped
    topology's bare name for a link (acceptance test Z18)."""
    from netsim.cli import build_parser, take_topology_from_lists
    parser = build_parser()
    args = parser.parse_args(["test_case_2", "-l", "L1", "-l", "L3", "--trace-links", "L1",
                              "--trace-links", "L2"])
    assert (args.links, args.trace_links) == (["L1", "L3"], ["L1", "L2"])
    args = parser.parse_args(["-l", "L1", "L3", "test_case_2"])
    take_topology_from_lists(args, parser)
    assert (args.topology, args.links) == ("test_case_2", ["L1", "L3"])


def test_log_file_in_a_missing_directory_is_one_line(tmp_path):
    done = cli(TC0_PATH, "-f", tmp_path / "missing" / "log.txt", "--out", tmp_path / "r")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: -f ")
    assert "cannot write the log file" in lines[0]


def test_help_mentions_sweeps():
    done = cli("--help")
    assert done.returncode == 0
    assert "sweep" in done.stdout and "initializer.py sweep --help" in done.stdout


def test_stall_warning_is_printed_once(tmp_path):
    data = copy.deepcopy(TC0)
    data["events"] = [{"at_s": 2.0, "link": "L1", "action": "down"}]
    for quiet in ((), ("--quiet",)):
        done = cli(write(tmp_path, "down.json", data), "--no-plots", "--out", tmp_path / "r", *quiet)
        assert done.returncode == 0, done.stderr
        stall_lines = [line for line in done.stderr.splitlines() if "made no progress" in line]
        assert len(stall_lines) == 1, done.stderr


def test_table_shows_every_loss_by_cause(tmp_path):
    done = cli(ROOT / "topologies" / "lossy_link.json", "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    direction = summary["links"]["L1"]["directions"]["H1->H2"]
    random_losses = direction["impairment_drops"]
    assert random_losses > 0 and direction["drops"] == 0
    assert direction["lost"] == random_losses
    header = next(line for line in done.stdout.splitlines() if line.startswith("link "))
    assert "lost: overflow" in header and header.split()[-2:] == ["random", "failure"]
    row = next(line for line in done.stdout.splitlines() if line.startswith("L1      H1->H2"))
    assert row.split()[-3:] == ["0", str(random_losses), "0"]


def test_table_shows_ecn_cuts_and_the_queue_discipline_when_there_is_one(tmp_path):
    data = copy.deepcopy(TC0)
    data["duplex"] = "full"      # (half duplex: ACK clusters empty the queue every round trip)
    data["links"][0]["queue"] = {"discipline": "codel", "ecn": True}
    for flow in data["flows"]:
        flow["ecn"] = True
        flow["algorithm"] = "reno"
    done = cli(write(tmp_path, "codel.json", data), "--no-plots", "--duration", "10",
               "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    lines = done.stdout.splitlines()
    flow_header = next(line for line in lines if line.startswith("flow "))
    assert "ECN cuts" in flow_header
    flow = summary["flows"]["F1"]
    assert flow["ecn_reactions"] > 0
    assert next(line for line in lines if line.startswith("F1 ")).split()[-2:] == [
        str(flow["ecn_reactions"]), "yes"]
    header = next(line for line in lines if line.startswith("link "))
    assert header.endswith("AQM   marks  sojourn ms   p99 ms")
    d = summary["links"]["L1"]["directions"]["H1->H2"]
    assert d["marks"] > 0
    row = next(line for line in lines if line.startswith("L1      H1->H2"))
    assert row.split()[-4:] == [str(d["aqm_drops"]), str(d["marks"]),
                                f"{d['avg_sojourn_ms']:.2f}", f"{d['p99_sojourn_ms']:.2f}"]


def test_the_classic_table_has_no_ecn_or_discipline_columns(tmp_path):
    done = cli(TC0_PATH, "--no-plots", "--out", tmp_path / "r")
    assert done.returncode == 0, done.stderr
    assert "ECN" not in done.stdout and "marks" not in done.stdout


def test_csv_files_use_lf_line_endings(tmp_path):
    done = cli(TC0_PATH, "--no-plots", "--check", "--out", tmp_path / "r")
    assert done.returncode in (0, 1), done.stderr
    for path in (tmp_path / "r").glob("*.csv"):
        assert b"\r" not in path.read_bytes(), path.name


def test_version():
    done = cli("--version")
    assert done.returncode == 0
    from netsim.results import VERSION
    assert done.stdout.strip() == f"netsim {VERSION}"


def test_run_and_sweep_share_their_six_common_options_written_once():
    from netsim.cli import build_parser
    from netsim.cli_options import add_shared_options
    from netsim.sweep_cli import build_sweep_parser
    import argparse

    alone = argparse.ArgumentParser()
    add_shared_options(alone, "run")
    shared = {s for a in alone._actions for s in a.option_strings} - {"-h", "--help"}
    assert shared == {"--out", "--no-plots", "--show", "--report", "--quiet", "--plugin"}
    for parser in (build_parser(), build_sweep_parser()):
        options = {s: a for a in parser._actions for s in a.option_strings}
        assert shared <= set(options)
        assert options["--plugin"].default == [] and options["--quiet"].default is False


def test_only_the_dispatcher_imports_the_other_commands():
    """netsim.cli dispatches to sweep, convert and generate; none of them imports it or another."""
    import ast
    commands = {"netsim.cli", "netsim.sweep_cli", "netsim.convert", "netsim.generate_cli"}
    for name in ("sweep_cli", "convert", "generate_cli", "cli_options", "cli_output"):
        tree = ast.parse((ROOT / "netsim" / f"{name}.py").read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert imported & (commands - {f"netsim.{name}"}) == set(), name


@pytest.mark.parametrize("name, close", [("lossy_lnk", "lossy_link"),
                                         ("TEST_CASE_0", "test_case_0"),
                                         ("test_case_2.jsn", "test_case_2"),
                                         ("examples/websarch", "examples/websearch"),
                                         ("websarch", "examples/websearch")])
def test_a_mistyped_shipped_name_gets_the_closest_shipped_name(tmp_path, capsys, name, close):
    assert main([name, "--no-plots", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (f'error: {name}: no such file, nor a shipped topology '
                                       f'(did you mean "{close}"?)\n')


@pytest.mark.parametrize("path", ["./lossy_lnk.json", "topologies/lossy_lnk.json",
                                  "/nonexistent/lossy_lnk.json"])
def test_a_missing_path_keeps_the_file_not_found_line(tmp_path, capsys, path):
    assert main([path, "--no-plots", "--out", str(tmp_path / "o")]) == 2
    label = path[2:] if path.startswith("./") else path        # (the loader's label)
    assert capsys.readouterr().err == f"error: {label}: cannot read file: No such file or directory\n"


def test_an_empty_topology_name_is_one_line(tmp_path, capsys):
    assert main(["", "--no-plots", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == ('error: topology: expected a topology file or the name of '
                                       'a shipped one (e.g. test_case_2), got ""\n')


def test_an_id_given_twice_is_listed_once(tmp_path, capsys):
    code = main([str(TC0_PATH), "--out", str(tmp_path), "--no-plots", "--duration", "1",
                 "-l", "L1", "L1", "-F", "F1", "F1"])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert len([line for line in lines if line.startswith("L1 ")]) == 2     # its two directions
    assert len([line for line in lines if line.startswith("F1 ")]) == 1


def _chain(routers: int) -> dict:
    """H1 - r0 - r1 - ... - H2: `routers` + 1 links, ids "r0-r1", ..."""
    link = {"rate_mbps": 10, "delay_ms": 1, "buffer_kb": 100}
    names = [f"r{i}" for i in range(routers)]
    pairs = [(names[i], names[i + 1]) for i in range(routers - 1)]
    ends = [("H1", names[0]), *pairs, (names[-1], "H2")]
    return {"hosts": ["H1", "H2"], "routers": names, "duration_s": 0.1,
            "links": [dict(link, id=f"{a}-{b}", ends=[a, b]) for a, b in ends],
            "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 0.01}]}


@pytest.mark.parametrize("option, typo, meant", [("-l", "r7-r8l", "r7-r8"), ("-F", "F11", "F1")])
def test_an_unknown_id_of_a_large_network_lists_only_what_fits_one_line(tmp_path, capsys, option,
                                                                        typo, meant):
    """10 000 link ids made a 126 KB line; the list stops at about 200 characters."""
    path = write(tmp_path, "big.json", _chain(2000))
    code = main([str(path), "--out", str(tmp_path / "r"), "--no-plots", option, typo])
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400, err
    head = f'error: {option}: unknown id "{typo}" (did you mean "{meant}"?); known: '
    assert err.startswith(head)
    if option == "-l":
        assert err.startswith(head + "H1-r0, r0-r1, r1-r2, ")
        assert err.rstrip("\n").endswith(" more")
    else:
        assert err == head + "F1\n"                  # a short list is whole, as before
