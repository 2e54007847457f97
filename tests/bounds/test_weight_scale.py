"""Weights have no unit: multiplying every weight by ``s`` multiplies the optimum and every
bound by ``s``. The LPs pass their costs to HiGHS scaled by a power of two near the
largest (``bounds._highs.lp_cost_scale``); before, every weight 1e-8 weakened the LP bounds
and every weight 1e19 made HiGHS fail."""

from __future__ import annotations

import json
import random

import pytest

import coflowopt as co
from coflowopt.exact import wcct
from coflowopt.io.native import from_document
from coflowopt.result import Status

SCALES = (1e-20, 1e-9, 1e19, 1e50)


def _doc(flows, releases, weights, ports):
    return {"format": "coflowopt-instance/1",
            "ports": {"ingress": [1] * ports, "egress": [1] * ports},
            "coflows": [{"id": f"c{k}", "release": r, "weight": w, "flows": f}
                        for k, (f, r, w) in enumerate(zip(flows, releases, weights, strict=True))]}


def _scaled(doc, s):
    d = json.loads(json.dumps(doc))
    for c in d["coflows"]:
        c["weight"] *= s
    return from_document(d)


THREE = _doc([[[0, 1, 2.0], [1, 0, 1.0]], [[0, 1, 1.0]], [[1, 1, 3.0], [0, 0, 1.0]]],
             [0, 0, 1], [1, 1, 1], 2)


@pytest.mark.parametrize("method", ["interval", "pairwise", "free", "sincronia", "port"])
def test_every_bound_scales_with_the_weights(method):
    base = co.bound(_scaled(THREE, 1.0), method=method)
    assert base.status is Status.BOUND
    for s in SCALES:
        res = co.bound(_scaled(THREE, s), method=method)
        assert res.status is Status.BOUND, (s, res.info)
        assert res.bound / s == pytest.approx(base.bound, rel=1e-7), s


def _five() -> dict:
    rng = random.Random(5)
    flows, releases, weights = [], [], []
    for _ in range(5):
        releases.append(rng.choice([0, 0, 1, 2]))
        weights.append(rng.choice([1, 2, 3]))
        flows.append([[rng.randrange(3), rng.randrange(3), rng.choice([1.0, 2.0, 0.5, 3.0])]
                      for _ in range(rng.randint(1, 3))])
    return _doc(flows, releases, weights, 3)


def test_the_exact_search_proves_the_same_optimum_at_any_scale(monkeypatch):
    # without the bound over completion orders, which proves this optimum at the root
    # (the search's event LPs are what scaled badly: "feasible" at 32 against 30)
    monkeypatch.setattr(wcct, "subset_table", lambda *a, **k: None)
    doc = _five()
    base = co.solve(_scaled(doc, 1.0), method="exact", time_limit=600)
    assert base.status is Status.OPTIMAL
    for s in (1e-9, 1e19):
        res = co.solve(_scaled(doc, s), method="exact", time_limit=600)
        assert res.status is Status.OPTIMAL, s
        assert res.objective / s == pytest.approx(base.objective, rel=1e-9)


def test_the_event_milp_proves_the_same_optimum_at_any_scale():
    # its Pyomo objective took the weights as they were: every weight x1e-30 gave
    # "feasible" 104 against the optimum 98, x1e30 "HiGHS found no solution"
    F = co.Coflow.from_flows

    def inst(s):
        return co.Instance(co.Fabric.uniform(3), (
            F("c0", [(2, 0, 4.0, 2.0)], release=2.0, weight=3.0 * s),
            F("c1", [(0, 0, 3.0), (1, 0, 4.0)], weight=2.0 * s),
            F("c2", [(2, 0, 2.0, 0.0), (2, 1, 6.0, 0.0), (0, 1, 1.0, 2.0)], weight=3.0 * s),
            F("c3", [(0, 0, 5.0), (2, 2, 3.0)], weight=1.0 * s)))

    for s in (1.0, 1e-30, 1e30):
        res = co.solve(inst(s), method="exact-milp", time_limit=600)
        assert res.status is Status.OPTIMAL, s
        assert res.objective / s == pytest.approx(98.0, rel=1e-9)
        assert res.bound / s == pytest.approx(98.0, rel=1e-6)
