"""HUG and DRF: the theory as hypothesis properties, and LP cross-checks."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings

from coflowopt.errors import InstanceError
from coflowopt.fairness import (
    MECHANISMS,
    FairnessProblem,
    allocate,
    check_allocation,
    drf,
    evaluate,
    hug,
    hug_stage2_lp,
    lexicographic_max_min_lp,
    max_min_progress_lp,
)
from coflowopt.fairness._arith import as_float
from coflowopt.result import Status

from ._strategies import problems

VECTOR_MECHANISMS = [m for m, mech in MECHANISMS.items() if not mech.needs_flows]
TOL = 1e-7


@settings(max_examples=40, deadline=None)
@given(problems())
def test_every_mechanism_gives_a_feasible_allocation(prob: FairnessProblem) -> None:
    for name in VECTOR_MECHANISMS:
        a = allocate(prob, name)
        assert not check_allocation(a), (name, check_allocation(a))
        assert as_float(a.allocation).min() >= -1e-12
        # the stage-1 guarantee never exceeds the final allocation
        assert (as_float(a.guarantee) <= as_float(a.allocation) + 1e-9).all() or name in ("psp",)
    assert not check_allocation(hug(prob, cooperative=True))
    assert not check_allocation(hug(prob, stage2="lp"))


@settings(max_examples=40, deadline=None)
@given(problems())
def test_drf_and_hug_share_the_isolation_guarantee_of_the_lp(prob: FairnessProblem) -> None:
    lp = max_min_progress_lp(prob)
    assert lp.status is Status.OPTIMAL
    for a in (drf(prob), hug(prob), hug(prob, cooperative=True), hug(prob, stage2="lp")):
        ig = float(evaluate(a).isolation_guarantee)
        assert ig == pytest.approx(lp.objective, rel=TOL, abs=TOL)
    # no allocation at all beats the LP: the guarantee of every mechanism is at most it
    for name in VECTOR_MECHANISMS:
        assert float(evaluate(allocate(prob, name)).isolation_guarantee) <= lp.objective + TOL


@settings(max_examples=40, deadline=None)
@given(problems())
def test_hug_utilization_is_at_least_drf(prob: FairnessProblem) -> None:
    u_drf = float(evaluate(drf(prob)).utilization)
    u_hug = float(evaluate(hug(prob)).utilization)
    u_coop = float(evaluate(hug(prob, cooperative=True)).utilization)
    assert u_hug >= u_drf - TOL
    assert u_coop >= u_hug - TOL


@settings(max_examples=40, deadline=None)
@given(problems())
def test_non_cooperative_hug_never_exceeds_the_dominant_share(prob: FairnessProblem) -> None:
    a = hug(prob)
    p = as_float(a.info["stage1_progress"])
    assert (as_float(a.allocation) <= p[:, None] + 1e-12).all()
    # the progress of every coflow stays its stage-1 progress: spare never buys progress
    assert np.allclose(as_float(evaluate(a).progress), p, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(problems(weights=False, bounds=False, elastic=True))
def test_hug_never_gives_more_than_p_star_of_any_link(prob: FairnessProblem) -> None:
    a = hug(prob)
    level = float(a.info["level"])
    assert as_float(a.allocation).max() <= level + 1e-12


@settings(max_examples=40, deadline=None)
@given(problems())
def test_hug_local_enforcement_and_stage2_lp_reach_the_same_utilization(prob: FairnessProblem) -> None:
    for coop in (False, True):
        local = evaluate(hug(prob, cooperative=coop)).utilization
        lp = evaluate(hug(prob, cooperative=coop, stage2="lp")).utilization
        if coop and not prob.elastic.all():
            # max-min sharing of the spare among inelastic coflows may use less than the optimum
            assert float(lp) >= float(local) - TOL
        else:
            assert float(lp) == pytest.approx(float(local), rel=TOL, abs=TOL)


@settings(max_examples=40, deadline=None)
@given(problems(bounds=False))
def test_cooperative_hug_is_work_conserving(prob: FairnessProblem) -> None:
    a = hug(prob, cooperative=True)
    alloc = as_float(a.allocation)
    d = as_float(prob.vectors)
    load = alloc.sum(axis=0)
    for i in range(prob.num_links):
        elastic_here = prob.elastic & (d[:, i] > 0)
        if elastic_here.any():
            assert load[i] == pytest.approx(1.0, abs=1e-9)
    # no inelastic coflow can raise its progress along its vector
    slack = 1.0 - load
    for k in np.flatnonzero(~prob.elastic):
        used = d[k] > 0
        assert (slack[used] <= 1e-9).any()


@settings(max_examples=30, deadline=None)
@given(problems())
def test_progressive_drf_is_the_lexicographic_max_min_lp(prob: FairnessProblem) -> None:
    pg = as_float(drf(prob, method="progressive").info["stage1_progress"])
    lex = lexicographic_max_min_lp(prob)
    assert lex.status is Status.OPTIMAL
    assert np.allclose(lex.info["progress"], pg, atol=1e-7)
    assert lex.objective == pytest.approx(max_min_progress_lp(prob).objective, abs=TOL)


@settings(max_examples=30, deadline=None)
@given(problems(exact=True))
def test_exact_arithmetic_agrees_with_floats(prob: FairnessProblem) -> None:
    for name in ("drf", "hug", "drf+highest", "drf+proportional", "equal-share"):
        exact = allocate(prob, name)
        fl = allocate(prob.to_float(), name)
        assert exact.exact
        assert np.allclose(as_float(exact.allocation), as_float(fl.allocation), atol=1e-12)
    coop = hug(prob, cooperative=True)
    assert np.allclose(as_float(coop.allocation), as_float(hug(prob.to_float(), cooperative=True).allocation),
                       atol=1e-12)


def test_closed_form_needs_unbounded_demands() -> None:
    prob = FairnessProblem([[1, F(1, 2)], [F(1, 2), 1]], bounds=[F(1, 4), None])
    with pytest.raises(InstanceError, match="bounded demands"):
        drf(prob, method="closed_form")
    a = drf(prob)  # auto: progressive
    assert a.info["method"] == "progressive"
    # the bounded coflow stops at 1/4; the other fills the links: 1 - 1/8 = 7/8 of link 1 ...
    assert list(a.info["stage1_progress"]) == [F(1, 4), F(7, 8)]


def test_bounded_demands_a_single_link_is_max_min_fairness() -> None:
    # one link: multi-round DRF is max-min with demands (§7.6.3)
    prob = FairnessProblem([[1], [1], [1]], bounds=[F(1, 10), None, None])
    assert list(drf(prob).info["stage1_progress"]) == [F(1, 10), F(9, 20), F(9, 20)]


def test_weights_scale_the_dominant_shares() -> None:
    prob = FairnessProblem([[1, 0], [1, 1]], weights=[2, 1])
    a = drf(prob)
    assert a.info["level"] == F(1, 3)
    assert list(a.info["stage1_progress"]) == [F(2, 3), F(1, 3)]
    # HUG lets the light coflow take the spare of link 2 up to its own share 1/3
    h = hug(prob)
    assert list(h.allocation[1]) == [F(1, 3), F(1, 3)]


def test_hug_stage2_lp_reports_size_and_status() -> None:
    prob = FairnessProblem([[F(1, 2), 1], [1, F(1, 6)]])
    base = drf(prob)
    res = hug_stage2_lp(prob, base.guarantee, base.info["stage1_progress"])
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(2.0)
    assert res.info["variables"] == 4 and res.info["constraints"] == 2


def test_unknown_methods_and_options_raise() -> None:
    prob = FairnessProblem([[1, 1]])
    with pytest.raises(InstanceError, match="unknown DRF method 'fast'"):
        drf(prob, method="fast")
    with pytest.raises(InstanceError, match="unknown HUG stage 2 'global'"):
        hug(prob, stage2="global")
    with pytest.raises(InstanceError, match="unknown mechanism 'wfq'"):
        allocate(prob, "wfq")
    with pytest.raises(InstanceError, match="has no option 'cooperative'"):
        allocate(prob, "drf", cooperative=True)


@pytest.mark.parametrize("cooperative", [False, True])
def test_stage2_lp_stays_within_capacity_beside_a_tiny_entry(cooperative: bool) -> None:
    # B's 6e-9 on L0 is below HiGHS's feasibility tolerance: the LP gave A all of
    # L0, 1.000000006 in all, and the CLI called its own allocation infeasible
    from coflowopt.fairness.io import parse_demands

    prob = parse_demands({"format": "coflowopt-demands/1", "coflows": [
        {"id": "A", "vector": [0.2284, 1, 0]}, {"id": "B", "vector": [6e-9, 0, 1]}]})
    a = hug(prob, cooperative=cooperative, stage2="lp")
    assert not check_allocation(a)
    assert as_float(a.allocation).sum(axis=0).max() <= 1.0
