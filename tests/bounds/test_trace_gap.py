"""The certified gaps on the Facebook trace that ``benchmarks/results/`` states: each saved
order's schedule and the pairwise LP's bound, both recomputed (the bound from its saved
certificate where there is one)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import coflowopt as co
from coflowopt import check_feasible
from coflowopt.bounds.pairwise import pairwise_lp
from coflowopt.sim import simulate

pytestmark = pytest.mark.slow  # the whole trace

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"

# saved file, the aim on the certified gap of the sum of CCTs
SAVED = {
    "fb2010_best_order.json": 1.10,  # with the trace's releases
    "fb2010_offline_order.json": 1.05,  # every coflow released at 0 (Sincronia's offline setting)
}


@pytest.mark.parametrize("name", sorted(SAVED))
def test_a_saved_order_of_the_trace_is_within_its_certified_gap(name):
    doc = json.loads((RESULTS / name).read_text())
    inst = co.read(ROOT / doc["instance"])
    if doc.get("releases") == "all 0":
        inst = inst.with_releases(0.0)
    released = float(np.dot(inst.weight, inst.release))
    assert released == pytest.approx(doc["sum_w_release"], rel=1e-12, abs=1e-9)
    res = simulate(inst, "static-order", order=doc["order"], record=True)
    assert check_feasible(inst, res.schedule)
    value = float(np.dot(inst.weight, res.completion))
    assert value == pytest.approx(doc["sum_wC"], rel=1e-9)
    cert = doc["bound"].get("certificate")
    assert cert is not None
    # the LP built, not solved (0.5 s against 10-47 s): its safe dual bound at the saved
    # multipliers, a bound whatever they are (tests/bounds/test_bounds.py solves); with
    # lazily generated rows, on the rows the file names
    saved = np.load(RESULTS / cert["file"])
    dual = saved["row_dual"]
    names = saved["row_names"] if "row_names" in saved else None
    bound, _, info = pairwise_lp(inst, dual=dual, dual_rows=names)
    assert info["certificate"] and info["rows_used"] == dual.size
    assert info["complete"] and info["carry"]
    assert bound == pytest.approx(doc["bound"]["sum_wC_at_least"], rel=1e-9)
    assert bound <= value
    gap = (value - released) / (bound - released)
    assert gap == pytest.approx(doc["certified_gap"], abs=1e-5)
    assert gap <= SAVED[name]


def test_the_trace_gap_needs_the_carried_work():
    # without the carried work the pairwise LP is 10,965.71 on the sum of CCTs: the saved
    # order's gap against it is 1.11, above the aim of 1.10
    doc = json.loads((RESULTS / "fb2010_best_order.json").read_text())
    inst = co.read(ROOT / doc["instance"])
    released = float(np.dot(inst.weight, inst.release))
    plain, _, info = pairwise_lp(inst, time_limit=3600, carry=False)
    assert info["complete"] and not info["carry"]
    assert (doc["sum_wC"] - released) / (plain - released) > 1.10
