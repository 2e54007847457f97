"""Every bundled instance file reads; the worked examples carry their sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coflowopt import io
from coflowopt.io.native import FORMAT_TAG

ROOT = Path(__file__).resolve().parents[1]
# instance files only: other bundled JSON (e.g. fairness demand vectors) has its own format tag
JSON_FILES = sorted(
    p for p in (ROOT / "instances").rglob("*.json") if json.loads(p.read_text()).get("format") == FORMAT_TAG
)


def test_there_are_bundled_examples():
    assert len(JSON_FILES) >= 5


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_bundled_json_reads_and_round_trips(path):
    meta = io.read_metadata(path)
    inst = io.read(path)
    assert "_source" in meta and "_description" in meta
    assert io.native.loads(io.native.dumps(inst)) == inst


def test_the_3x2_shuffle_isolation_time_is_the_stated_optimum():
    path = ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json"
    inst = io.read(path)
    expected = io.read_metadata(path)["_expected"]
    # a single coflow released at 0: its optimum CCT is its isolation time
    assert inst.gamma[0] == expected["optimal_cct"] == 4
