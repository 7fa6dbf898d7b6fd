"""README's "Checking a run against theory" examples are real output: each command of the section
is run, and every line the README shows for it (the `#` lines after a command, or the output
block that follows its code block; `...` elides lines) appears in the real output, in order.
The BBR example once ran without `--check-settle 0.5` (its 10 MB end at 0.89 s, before the 2 s
settling time: nothing was compared), and the intervals were shown as [20.00 s, 29.77 s] where the
program prints [20 s, 29.7665 s]."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from initializer import main

ROOT = Path(__file__).resolve().parent.parent


def examples() -> list:
    """(command arguments, the lines shown for it) of the README's --check section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Checking a run against theory"):text.index("## Parameter sweeps")]
    blocks = re.findall(r"```(sh)?\n(.*?)```", section, flags=re.S)
    found: list = []
    for k, (kind, body) in enumerate(blocks):
        if kind != "sh":
            continue
        shown: list = []
        for line in body.splitlines():
            if line.startswith("python initializer.py"):
                shown = []
                found.append((shlex.split(line)[2:], shown))
            elif line.startswith("# "):
                shown.append(line[2:])
        if not shown and k + 1 < len(blocks) and blocks[k + 1][0] != "sh":
            shown += blocks[k + 1][1].splitlines()
    return found


def test_the_section_has_its_examples():
    commands = [" ".join(args) for args, _ in examples()]
    assert len(commands) == 5 and all("--check" in c for c in commands)
    assert any("--algorithm bbr" in c and "--check-settle 0.5" in c for c in commands)


@pytest.mark.parametrize("args, shown", examples(),
                         ids=[" ".join(args) for args, _ in examples()])
@pytest.mark.slow   # an end-to-end run of over 1.5 s: CI runs it with -m slow
def test_readme_check_output_is_reproduced(tmp_path, capsys, args, shown):
    argv = [str(ROOT / args[0])] + args[1:] + ["--out", str(tmp_path), "--no-plots"]
    code = main(argv)
    out = capsys.readouterr().out.splitlines()
    expect_fail = "NOT within" in "\n".join(shown)
    assert code == (1 if expect_fail else 0)
    position = 0
    for line in shown:
        if not line.strip() or line.strip() == "...":
            continue
        matches = [i for i in range(position, len(out)) if out[i].rstrip() == line.rstrip()]
        assert matches, f"README line not in the output (in order): {line!r}\n" + "\n".join(out)
        position = matches[0] + 1
