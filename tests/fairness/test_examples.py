"""The dissertation's numbers for chapter 7 and Appendix D, reproduced exactly (Fractions).

Every scenario in the ``_expected`` block of ``instances/fairness/*.json``
is replayed: the mechanism runs on the (possibly misreported) vectors and
each stated value is compared with ``==`` on ``Fraction``s. The Appendix D
lemmas themselves (D.2.1-D.2.9, D.3.1-D.3.6), with their statements and
witnesses, are checked in ``proofs/test_dissertation_d_2_work_conservation_lemmas.py``
and ``proofs/test_dissertation_d_3_hug.py``.
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import pytest

from coflowopt.fairness import (
    FairnessProblem,
    allocate,
    check_allocation,
    drf,
    evaluate,
    hug,
    load_problem,
    payoffs,
)
from coflowopt.io import read_metadata

ROOT = Path(__file__).resolve().parents[2] / "instances" / "fairness"
FILES = sorted(ROOT.glob("*.json"))


def _scenarios():
    for path in FILES:
        meta = read_metadata(path)
        for i, sc in enumerate(meta["_expected"].get("scenarios", [])):
            yield pytest.param(path, sc, id=f"{path.stem}-{i}")


def _frac(x) -> F:
    return F(str(x))


def _vec(xs) -> list[F]:
    return [_frac(x) for x in xs]


@pytest.mark.parametrize(("path", "sc"), list(_scenarios()))
def test_stated_values_of_every_example(path: Path, sc: dict) -> None:
    truth = load_problem(path, exact=True)
    assert truth.exact
    rep_problem = truth
    for cid, vec in sc.get("reports", {}).items():
        rep_problem = rep_problem.with_vector(cid, _vec(vec))
    alloc = allocate(rep_problem, sc["mechanism"], **sc.get("options", {}))
    assert alloc.exact, f"{sc['where']}: the mechanism did not produce certified fractions"
    assert not check_allocation(alloc)
    r = evaluate(alloc, truth)
    k = truth.index
    link = truth.link_names.index
    for cid, row in sc.get("allocation", {}).items():
        assert list(alloc.allocation[k(cid)]) == _vec(row), sc["where"]
    for cid, row in sc.get("guarantee", {}).items():
        assert list(alloc.guarantee[k(cid)]) == _vec(row), sc["where"]
    for cid, row in sc.get("consumption", {}).items():
        assert list(r.consumption[k(cid)]) == _vec(row), sc["where"]
    for cid, value in sc.get("progress", {}).items():
        assert r.progress[k(cid)] == _frac(value), sc["where"]
    if "isolation_guarantee" in sc:
        assert r.isolation_guarantee == _frac(sc["isolation_guarantee"])
    if "unallocated" in sc:
        assert [1 - x for x in r.link_allocated] == _vec(sc["unallocated"])
    if "unused" in sc:
        assert [1 - x for x in r.link_usage] == _vec(sc["unused"])
    if "link_allocated" in sc:
        assert list(r.link_allocated) == _vec(sc["link_allocated"])
    if "link_usage" in sc:
        assert list(r.link_usage) == _vec(sc["link_usage"])
    for name, value in sc.get("link_usage_link", {}).items():
        assert r.link_usage[link(name)] == _frac(value)
    for cid, links in sc.get("allocation_link", {}).items():
        for name, value in links.items():
            assert alloc.allocation[k(cid), link(name)] == _frac(value), sc["where"]
    for cid, value in sc.get("cap", {}).items():
        assert alloc.info["cap"][k(cid)] == _frac(value)
    if "utilization_fraction" in sc:
        assert F(r.utilization) / truth.num_links == _frac(sc["utilization_fraction"])
    for cid, value in sc.get("truthful_progress", {}).items():
        honest = evaluate(allocate(truth, sc["mechanism"]), truth)
        assert honest.progress[k(cid)] == _frac(value)
    if "utilization_vs_truth" in sc:
        honest = evaluate(allocate(truth, sc["mechanism"]), truth)
        if sc["utilization_vs_truth"] == "higher":
            assert r.utilization > honest.utilization
        else:
            assert r.utilization < honest.utilization
    for pair, value in sc.get("useful_bandwidth_ratio", {}).items():
        a, b = pair.split("/")
        ratio = r.useful_bandwidth[k(a)] / r.useful_bandwidth[k(b)]
        assert ratio == pytest.approx(float(_frac(value)), rel=1e-12)


def two() -> FairnessProblem:
    return load_problem(ROOT / "hug_two_coflows_elastic.json", exact=True)


def test_figure_7_5_payoff_matrix_is_a_prisoners_dilemma() -> None:
    table = payoffs(two(), "drf+highest", {"A": [1, 1], "B": [1, 1]})
    assert {who: list(p) for who, p in table.items()} == {
        (False, False): [F(2, 3), F(2, 3)],
        (True, False): [F(11, 12), F(1, 2)],
        (False, True): [F(1, 2), F(3, 4)],
        (True, True): [F(1, 2), F(1, 2)],
    }
    # lying pays against a truthful opponent and never hurts (weakly dominant),
    # yet when both lie both end worse off than telling the truth
    assert table[(True, False)][0] > table[(False, False)][0]
    assert table[(False, True)][1] > table[(False, False)][1]
    assert table[(True, True)][0] >= table[(False, True)][0]
    assert table[(True, True)][1] >= table[(True, False)][1]
    assert all(x < F(2, 3) for x in table[(True, True)])


def test_figure_7_6_utilization_with_inelastic_demands() -> None:
    inel = load_problem(ROOT / "hug_two_coflows_inelastic.json", exact=True)
    util = {who: None for who in ((False, False), (True, False), (False, True), (True, True))}
    for who in util:
        rep = inel
        if who[0]:
            rep = rep.with_vector("A", [1, 1])
        if who[1]:
            rep = rep.with_vector("B", [1, 1])
        util[who] = evaluate(allocate(rep, "drf+highest"), inel).utilization
    assert util == {
        (False, False): F(16, 9),
        (True, False): F(47, 24),
        (False, True): F(13, 8),
        (True, True): F(4, 3),
    }


def test_figure_7_7_hug_fills_both_links_and_caps_at_two_thirds() -> None:
    a = hug(two())
    assert a.exact
    assert [list(r) for r in a.allocation] == [[F(1, 3), F(2, 3)], [F(2, 3), F(1, 3)]]
    assert evaluate(a).utilization == 2
    assert max(a.allocation.reshape(-1)) == F(2, 3)
    # with inelastic demands HUG cannot do better than DRF (Figure 7.6a): 16/9
    inel = two().replace(elastic=False)
    assert evaluate(hug(inel)).utilization == F(16, 9) == evaluate(drf(inel)).utilization


def test_figure_7_2_vectors_come_from_the_flows() -> None:
    meta = read_metadata(ROOT / "hug_fig7_2_fabric.json")
    prob = load_problem(ROOT / "hug_fig7_2_fabric.json", exact=True)
    for cid, row in meta["_expected"]["correlation_vectors"].items():
        assert list(prob.vectors[prob.index(cid)]) == _vec(row)


def test_min_cut_proportionality_of_figure_7_9() -> None:
    prob = load_problem(ROOT / "hug_fig7_9_min_cut.json", exact=True)
    for mech in ("drf", "hug"):
        r = evaluate(allocate(prob, mech))
        assert list(r.progress) == [F(1, 2), F(1, 2)]
        assert r.min_cut_proportionality == 1.0
        assert list(r.min_cut) == [4.0, 1.0]
    # C_X gets P = 4 times C_Y's bandwidth although both have the same progress
    r = evaluate(drf(prob))
    assert r.useful_bandwidth[0] == 4 * r.useful_bandwidth[1]
