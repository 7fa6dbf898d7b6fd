"""README's "Command line" section against the parser: its option table names every option of
`--help` and nothing else, and its usage block only options that exist."""
from __future__ import annotations

import re
from pathlib import Path

from netsim.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def command_line_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Command line")
    return text[start:text.index("\n## ", start + 1)]


def table_options() -> list:
    """The first option string of each row of the option table (`-l LINK ...` gives -l)."""
    rows = [line for line in command_line_section().splitlines()
            if line.startswith("| `-")]
    return [re.match(r"\| `(-[-\w]+)", row).group(1) for row in rows]


def usage_options() -> set:
    block = command_line_section().split("```")[1]
    first = block.split("python initializer.py sweep")[0]        # the single run's usage
    return set(re.findall(r"\[(-[-\w]+)", first))


def parser_options() -> dict:
    """Option string -> the option's name (its longest string), without --help."""
    options = {}
    for action in build_parser()._actions:
        if "--help" in action.option_strings:
            continue
        for string in action.option_strings:
            options[string] = max(action.option_strings, key=len)
    return options


def test_the_table_documents_every_option_of_help_and_nothing_else():
    known = parser_options()
    documented = table_options()
    assert [option for option in documented if option not in known] == []
    assert len(set(documented)) == len(documented)                 # each once
    names = {known[option] for option in documented}
    assert sorted(set(known.values()) - names) == []


def test_the_usage_block_names_only_real_options_and_every_documented_one():
    known = parser_options()
    shown = usage_options()
    assert sorted(shown - set(known)) == []
    assert sorted({known[o] for o in table_options()} - {known[o] for o in shown} - {"--version"}) == []


def test_the_algorithm_row_lists_every_built_in_algorithm():
    from flows import BUILTIN_ALGORITHMS
    row = next(line for line in command_line_section().splitlines()
               if line.startswith("| `--algorithm"))
    assert sorted(name for name in BUILTIN_ALGORITHMS if f"`{name}`" not in row) == []


def test_the_sample_error_message_is_the_one_netsim_prints(tmp_path, monkeypatch, capsys):
    import json

    from netsim.cli import main
    sample = next(line for line in command_line_section().splitlines()
                  if line.startswith("error: my.json"))
    topology = json.loads((ROOT / "topologies" / "test_case_0.json").read_text())
    topology["links"][0]["rate_mpbs"] = topology["links"][0].pop("rate_mbps")
    (tmp_path / "my.json").write_text(json.dumps(topology))
    monkeypatch.chdir(tmp_path)
    assert main(["my.json", "--no-plots", "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == sample
