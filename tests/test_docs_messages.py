"""The error messages docs/topology-format.md quotes are the program's own, word for word: each
example is produced here (by the loader, or by the command line for the lines it quotes with
`error:`) and must be a line of the document, and every quoted line must be produced here, so a
new field, algorithm or wording cannot leave the document stale."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from topologies.loader import TopologyError, load_topology

DOC = Path(__file__).resolve().parent.parent / "docs" / "topology-format.md"

# L1 joins the routers, so that its directions are R1->R2 and R2->R1; links[i] is L{i+1}.
BASE = {"hosts": ["H1", "H2", "T1"], "routers": ["R1", "R2"],
        "links": [{"id": f"L{i}", "ends": ends, "rate_mbps": 10, "delay_ms": 1, "buffer_kb": 10}
                  for i, ends in enumerate([["R1", "R2"], ["H1", "R1"], ["R2", "H2"],
                                            ["R2", "T1"]], 1)],
        "flows": [{"id": "F1", "src": "H1", "dst": "H2", "data_mb": 1}]}


def events(*entries):
    """A change adding `events` (at_s, link, action)."""
    return lambda d: d.update(events=[{"at_s": at_s, "link": link, "action": action}
                                      for at_s, link, action in entries])


def unconnected(d):
    d["routers"].append("R3")
    d["links"][2]["ends"] = ["R3", "H2"]


def two_links_on_h1(d):
    d["links"][0]["ends"] = ["H1", "R2"]


CHANGES = [
    lambda d: d["links"][1].update(rate_mbps=-5),
    lambda d: d["links"][0].update(rate_mpbs=1),
    lambda d: d["links"][0].pop("delay_ms"),
    lambda d: d["links"][0].update(delay_ms="ten"),
    lambda d: d["links"][3].update(id="L1"),
    lambda d: d["flows"][0].update(dst="T9"),
    lambda d: d["flows"][0].update(src="R1"),
    unconnected,
    lambda d: d["flows"][0].update(params={"beta": 1}),
    two_links_on_h1,
    lambda d: d.update(units="bianry"),
    lambda d: d.update(transport={"max_rto_s": 0.5}),
    lambda d: d.update(routing={"protocol": "rip"}),
    lambda d: d.update(routing={"protocol": "bellman-ford", "settle_s": 6}),
    lambda d: d.update(routing={"protocol": "bellman-ford", "update_interval_s": 0.1}),
    lambda d: d["links"][2].update(cost_ms=0),
    lambda d: d["links"][0].update(loss_rate=1.5),
    lambda d: d["links"][0].update(impairments={"R1->R3": {"loss_rate": 0.01}}),
    lambda d: d["links"][0].update(impairments={"R1->R2": {"reorder_rate": 0.1}}),
    lambda d: d["links"][0].update(loss_rate=0.01, loss_model={
        "type": "gilbert-elliott", "p_good_to_bad": 0.01, "p_bad_to_good": 0.25}),
    events((12, "L9", "down")),
    events((4, "L3", "down"), (10, "L2", "down"), (12, "L2", "down")),
    events((1, "L1", "down"), (4, "L3", "up")),
    events((1, "L1", "down"), (12, "L2", "down"), (20, "L2", "up"), (12, "L2", "up")),
    lambda d: d["links"][0].update({"py/object": "x.Y"}),
    lambda d: d.update(name="../../x"),
    lambda d: d["links"][0].update(id="L1\nerror: forged line"),
]

RAW_FILES = [
    b'{"links": [{"rate_mbps": 1, "rate_mbps": 2}]}',
    b'{\n "a": 1\n    "b": 2}',
    b'{"a": NaN}',
    b'{\n"a": 123456,\n "b": "x\xff"}',
    b"[]",
]


def quoted_lines() -> list:
    """The lines of the document's code blocks that quote a message."""
    lines, inside = [], False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and line.startswith(("topologies/x.json: ", "error: ", "--algorithm: ")):
            lines.append(line)
    return lines


def loader_message(source) -> str:
    with pytest.raises(TopologyError) as info:
        load_topology(source)
    return str(info.value)


@pytest.fixture(scope="module")
def produced(tmp_path_factory) -> list:
    """Every message the document quotes, as the program prints it now."""
    work = tmp_path_factory.mktemp("docs")
    (work / "topologies").mkdir()
    path = work / "topologies" / "x.json"
    messages = []
    here = os.getcwd()
    os.chdir(work)
    try:
        for change in CHANGES:
            data = copy.deepcopy(BASE)
            change(data)
            path.write_text(json.dumps(data))
            messages.append(loader_message("topologies/x.json"))
        for raw in RAW_FILES:
            path.write_bytes(raw)
            messages.append(loader_message("topologies/x.json"))
        path.unlink()
        messages.append(loader_message("topologies/x.json"))
        path.mkdir()
        messages.append(loader_message("topologies/x.json"))
    finally:
        os.chdir(here)
    messages.append(loader_message_for_algorithm("rneo"))
    queue = copy.deepcopy(BASE)
    queue["links"][0]["queue"] = {"discipline": "codle"}
    (work / "my.json").write_text(json.dumps(queue))
    (work / "ft.json").write_text("{}")
    initializer = str(DOC.parent.parent / "initializer.py")
    for args in (["my.json", "--out", "out"], ["generate", "fat-tree", "--k", "5"],
                 ["generate", "fat-tree", "-o", "ft.json"],
                 ["generate", "dumbbell", "--mark-k-kb", "60"]):
        done = subprocess.run([sys.executable, initializer, *args], capture_output=True,
                              text=True, cwd=work, timeout=120)
        assert done.returncode == 2 and done.stdout == "", (args, done.stdout)
        messages.append(done.stderr.rstrip("\n"))
    return messages


def loader_message_for_algorithm(name: str) -> str:
    """The command line's message for --algorithm NAME (netsim/cli.py checks it so named)."""
    from topologies.load_algorithms import check_override
    with pytest.raises(TopologyError) as info:
        check_override(name, "--algorithm")
    return str(info.value)


def test_every_produced_message_is_quoted_word_for_word(produced):
    document = DOC.read_text(encoding="utf-8").splitlines()
    stale = [message for message in produced if message not in document]
    assert stale == []


def test_every_quoted_message_is_produced(produced):
    quoted = quoted_lines()
    assert [line for line in quoted if line not in produced] == []
    assert len(quoted) == len(produced)             # one quoted line per example, none twice


def test_each_message_is_one_line(produced):
    assert all("\n" not in message for message in produced)
