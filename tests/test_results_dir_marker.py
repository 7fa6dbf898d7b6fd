"""What marks a single run's results directory (netsim/results_dir.py `is_results_dir`): a
summary.json that is a JSON object with "netsim_version"; one laid out as netsim writes it is
known by its first bytes, so that replacing the results of a large network does not read its
summary (tens of MB) twice."""
from __future__ import annotations

import json

import pytest

from netsim.results_dir import indented_json_text, is_results_dir


def write_summary(directory, content: bytes):
    directory.mkdir()
    (directory / "summary.json").write_bytes(content)
    return directory


@pytest.mark.parametrize("content, marked", [
    (indented_json_text({"netsim_version": "0.1.0", "links": {}}).encode() + b"\n", True),
    (b'{"netsim_version": "0.0.9"}', True),                 # compact: read whole
    (b'{"topology": "x", "netsim_version": "0.1.0"}', True),
    (b'{"topology": "x"}', False),
    (b'["netsim_version"]', False),
    (b"not json", False),
    (b'\xef\xbb\xbf{"netsim_version": "0.1.0"}', False),  # a byte-order mark: not netsim's
    (json.dumps({"netsim_version": "1"}).encode("utf-16"), False),
    (b'{"netsim_version": "\xff"}', False),                 # not UTF-8
])
def test_the_marker(tmp_path, content, marked):
    assert is_results_dir(write_summary(tmp_path / "d", content)) is marked


def test_netsims_own_summary_is_known_by_its_beginning(tmp_path):
    """The beginning netsim writes is enough: the rest is not read (a summary written by netsim
    is complete, results directories being written whole or not at all)."""
    head = indented_json_text({"netsim_version": "0.1.0"}).encode()[:30]
    assert is_results_dir(write_summary(tmp_path / "d", head + b"\x00 the rest is not read"))


def test_a_missing_summary_or_directory_is_no_marker(tmp_path):
    (tmp_path / "empty").mkdir()
    assert not is_results_dir(tmp_path / "empty")
    assert not is_results_dir(tmp_path / "absent")
