"""topologies.spec.plain_data: the validated spec as JSON-like data, exactly as dataclasses.asdict
gives it (config_digest, hence run keys and resumed sweeps, depend on it)."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from topologies import load_topology
from topologies.generate import Common, fat_tree
from topologies.spec import plain_data

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "topologies").glob("*.json")) + sorted((ROOT / "topologies" / "examples").glob("*.json"))


def canonical(data) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=repr)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_same_as_asdict_on_every_shipped_topology(path):
    spec = load_topology(path)
    assert canonical(plain_data(spec)) == canonical(asdict(spec))


def test_same_as_asdict_on_a_generated_fabric_with_ecn_and_workload_fields():
    spec = load_topology(fat_tree(4, common=Common(flows=8, data_mb=0.1, algorithm="dctcp", seed=3)))
    assert canonical(plain_data(spec)) == canonical(asdict(spec))


def test_containers_are_copies():
    spec = load_topology(ROOT / "topologies" / "test_case_2.json")
    data = plain_data(spec)
    data["links"][0]["id"] = "changed"
    assert spec.links[0].id != "changed"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_config_digest_is_the_sha256_of_the_canonical_resolved_config(path):
    """config_digest converts an instance shared by many links or flows (NO_IMPAIRMENT, the file's
    TransportSpec) once; its text must stay that of resolved_config, which converts each place."""
    import hashlib

    from topologies.spec import config_digest, resolved_config
    spec = load_topology(path, algorithm="cubic")
    options = {"duration_s": 2.5, "seed": 7, "interval_s": 0.1}
    text = json.dumps(resolved_config(spec, **options), sort_keys=True, separators=(",", ":"),
                      default=repr, allow_nan=True)
    assert config_digest(spec, **options) == hashlib.sha256(text.encode("utf-8")).hexdigest()
