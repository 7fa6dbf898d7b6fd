"""A topology named as a shipped one (`netsim test_case_2`) is found from any directory; a
mistyped shipped name gets a did-you-mean, a missing file of the user's the loader's line."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("name, close", [("lossy_lnk", "lossy_link"),
                                         ("lossy_lnk.json", "lossy_link"),
                                         ("examples/websearc", "examples/websearch")])
def test_a_mistyped_shipped_name_gets_a_did_you_mean(run_cli, tmp_path, name, close):
    done = run_cli(name, "--no-plots", "--out", tmp_path / "o", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (f'error: {name}: no such file, nor a shipped topology (did you mean '
                           f'"{close}"?)\n')


def test_a_missing_file_unlike_any_shipped_name_is_the_loaders_error(run_cli, tmp_path):
    done = run_cli("my_network.json", "--no-plots", "--out", tmp_path / "o", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == "error: my_network.json: cannot read file: No such file or directory\n"
