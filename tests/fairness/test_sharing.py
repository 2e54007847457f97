"""PS-P, per-resource equal sharing and the flow-level comparators."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
from hypothesis import given, settings

from coflowopt import Coflow, Fabric, Instance
from coflowopt.errors import InstanceError
from coflowopt.fairness import (
    FairnessProblem,
    allocate,
    check_allocation,
    equal_share,
    evaluate,
    hug,
    max_min_progress_lp,
    per_endpoint,
    per_flow,
    psp,
)
from coflowopt.fairness._arith import as_float
from coflowopt.fairness.sharing import _sessions, wfq_violations

from ..strategies import instances
from ._strategies import problems


@settings(max_examples=40, deadline=None)
@given(problems())
def test_psp_reaches_the_per_link_fair_equilibrium(prob: FairnessProblem) -> None:
    a = psp(prob)
    assert a.info["converged"]
    assert not check_allocation(a)
    usage, _, w, u, own = _sessions(prob)
    usage = as_float(usage)
    alloc = as_float(a.allocation)
    # recover each session's rate from the allocation and check the equilibrium conditions
    r = np.array([
        alloc[k, np.flatnonzero(row)[0]] if prob.elastic[k]
        else min(alloc[k, i] / row[i] for i in np.flatnonzero(row))
        for k, row in zip(own, usage, strict=True)
    ])
    assert not wfq_violations(usage, as_float(w), as_float(u), r, tol=1e-7)
    # it never beats the optimal isolation guarantee
    assert float(evaluate(a).isolation_guarantee) <= max_min_progress_lp(prob).objective + 1e-7


@settings(max_examples=30, deadline=None)
@given(problems(elastic=True, bounds=False))
def test_psp_with_elastic_demands_is_per_link_equal_sharing(prob: FairnessProblem) -> None:
    assert np.allclose(as_float(psp(prob).allocation), as_float(equal_share(prob).allocation), atol=1e-12)


def test_psp_is_exact_on_rational_inputs() -> None:
    prob = FairnessProblem([[F(1, 2), 1], [1, F(1, 6)]], elastic=False)
    a = psp(prob)
    assert a.exact
    assert list(evaluate(a).progress) == [F(10, 11), F(6, 11)]
    rates = np.array([F(10, 11), F(6, 11)], dtype=object)
    assert not wfq_violations(prob.vectors, prob.weights, prob.bounds, rates, tol=0.0)


def test_psp_keeps_its_time_limit_when_checking_exactly() -> None:
    # the exact check and the exact allocation ran after the search without looking at the
    # limit (33 s for 100 coflows x 200 links, --time-limit 5): out of time, the float
    # equilibrium stands, and info says the exact one was not verified
    prob = FairnessProblem([[F(1, 2), 1, 0], [1, F(1, 6), F(2, 3)], [0, 1, 1]], elastic=True)
    exact = psp(prob)
    assert exact.exact and "exact" not in exact.info
    late = psp(prob, time_limit=1e-9)  # (the independent links' search does not stop early)
    assert late.info["converged"] and not late.exact
    assert late.info["exact"] == "not verified: the time limit ran out"
    assert np.allclose(as_float(late.allocation), as_float(exact.allocation), rtol=1e-12)
    # the exact check itself finds what the float one finds
    usage, _, w, u, _ = _sessions(prob)
    rates = np.array([F(1, 2)] * usage.shape[0], dtype=object)
    assert wfq_violations(usage, w, u, rates, tol=0.0) == wfq_violations(
        as_float(usage), as_float(w), as_float(u), as_float(rates), tol=0.0)


def test_equilibrium_check_names_the_problem() -> None:
    A = np.array([[1.0, 0.5], [0.5, 1.0]])
    w = np.ones(2)
    u = np.full(2, np.inf)
    assert any("no saturated link" in m for m in wfq_violations(A, w, u, np.array([0.1, 0.1])))
    assert any("carries" in m for m in wfq_violations(A, w, u, np.array([1.0, 1.0])))


def _host_level(n_destinations: int) -> Instance:
    # Figure 7.10: A1 and B1 share machine 0's uplink; A1 talks to one
    # machine, B1 to n of them (dissertation §7.7.2, host-level scenario)
    P = n_destinations + 2
    a = Coflow.from_flows("A", [(0, 1, 1.0)])
    b = Coflow.from_flows("B", [(0, 2 + j, 1.0) for j in range(n_destinations)])
    return Instance(Fabric.uniform(P), (a, b))


@pytest.mark.parametrize("n", [1, 4, 32])
def test_figure_7_10_per_flow_fairness_starves_a_while_hug_isolates_it(n: int) -> None:
    prob = FairnessProblem.from_instance(_host_level(n))
    up = 0  # machine 0's uplink
    assert per_flow(prob).allocation[0, up] == pytest.approx(1 / (n + 1))
    assert per_endpoint(prob).allocation[0, up] == pytest.approx(0.5)
    assert hug(prob).allocation[0, up] == pytest.approx(0.5)
    assert float(evaluate(hug(prob)).progress[0]) == pytest.approx(0.5)


@settings(max_examples=30, deadline=None)
@given(instances(max_ports=3, max_coflows=3, max_flows=3))
def test_flow_level_mechanisms_are_feasible_and_below_the_optimal_guarantee(inst: Instance) -> None:
    prob = FairnessProblem.from_instance(inst)
    best = max_min_progress_lp(prob).objective
    for mech in (per_flow, per_endpoint):
        a = mech(prob)
        assert not check_allocation(a)
        rates = a.info["flow_rates"]
        routes = inst.fabric.routes(inst.flow_src, inst.flow_dst)
        assert (routes.T @ rates <= inst.fabric.capacity * (1 + 1e-9)).all()
        assert float(evaluate(a).isolation_guarantee) <= best + 1e-7


def test_flow_level_mechanisms_need_flows() -> None:
    prob = FairnessProblem([[1, F(1, 2)]])
    with pytest.raises(InstanceError, match="needs the coflows' flows"):
        allocate(prob, "perflow")
    with pytest.raises(InstanceError, match="needs the coflows' flows"):
        per_endpoint(prob)
