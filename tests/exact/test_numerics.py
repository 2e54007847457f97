"""Extreme numeric ranges a review of the bounds found: statuses and bounds stay honest.

Each instance here made a solver claim 'optimal' for a schedule or a bound that a
feasible schedule beats, return a schedule that check_feasible rejects, or crash.
"""

from __future__ import annotations

import math

import pytest

from coflowopt import Coflow, CoflowoptError, Fabric, Instance, Status, check_feasible, solve

C = Coflow.from_flows


def honest(inst: Instance, res, better: float | None = None) -> None:
    """A returned schedule is feasible and worth its objective; the bound is below it, and
    below ``better`` (a feasible value found otherwise); 'optimal' means a closed gap."""
    if res.schedule is not None:
        assert check_feasible(inst, res.schedule)
    if math.isfinite(res.objective) and math.isfinite(res.bound):
        assert res.bound <= res.objective * (1 + 1e-9)
    if better is not None and math.isfinite(res.bound):
        assert res.bound <= better * (1 + 1e-9)
    if res.status is Status.OPTIMAL:
        assert res.objective <= res.bound * (1 + 1e-6) + 1e-12


def test_exact_milp_refuses_weights_its_big_m_cannot_carry():
    inst = Instance(Fabric.uniform(1), (C("a", [(0, 0, 1.0)], weight=1e-6),
                                        C("b", [(0, 0, 1.0)], weight=1e6),
                                        C("c", [(0, 0, 1.0)], weight=1e6)))
    with pytest.raises(CoflowoptError, match="weights span more than"):
        solve(inst, method="exact-milp")
    res = solve(inst, method="exact")
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(3e6 + 3e-6)


@pytest.mark.parametrize("method", ["exact", "exact-milp", "time-indexed", "permutation"])
def test_a_flow_lost_below_the_lp_tolerance_is_no_solution_not_optimal(method):
    inst = Instance(Fabric.uniform(2), (C("a", [(0, 0, 1e4)]), C("b", [(1, 1, 1e-4)])))
    res = solve(inst, method=method)
    honest(inst, res, better=1e4 + 1e-4)
    assert res.status is Status.OPTIMAL or res.status is Status.NO_SOLUTION


def test_optimal_only_when_the_bound_closes_the_gap():
    inst = Instance(Fabric([4.0, 0.05], [1000.0, 0.5]), (
        C("a", [(1, 0, 300.0)]), C("b", [(1, 1, 200.0)]),
        C("c", [(1, 0, 2.0)], release=1.000000001)))
    honest(inst, solve(inst, method="exact"))


def test_a_finishes_before_chain_returns_no_infeasible_schedule():
    inst = Instance(Fabric([0.1, 0.5], [0.5, 0.1]), (
        C("c0", [(1, 1, 0.3)]), C("c1", [(0, 0, 0.3)], finishes_before=["c0"]),
        C("c3", [(1, 0, 0.002)], finishes_before=["c1"])))
    honest(inst, solve(inst, method="exact"))


def test_tiny_weights_do_not_close_a_mip_early():
    inst = Instance(Fabric([0.5315694998628754], [1.0]), (C(
        "a", [(0, 0, 0.09952680294226679, 0.0), (0, 0, 5.680045330187666, 1e-9)], weight=1e-6),))
    exact = solve(inst, method="exact")
    res = solve(inst, method="time-indexed", slots=8, lower="milp")
    honest(inst, res, better=exact.objective)
    dl = Instance(Fabric.uniform(1), tuple(C(n, [(0, 0, 1.0)], weight=w, deadline=1.0)
                                           for n, w in [("a", 1e-7), ("b", 2e-7), ("c", 3e-7)]))
    best = solve(dl, method="exact", objective="deadlines", weighted=True)
    assert best.objective == pytest.approx(3e-7)  # admit c alone


def test_rounding_in_the_root_lp_is_no_crash():
    for inst in (
        Instance(Fabric.uniform(3), (C("c0", [(2, 0, 1.5), (0, 0, 1.5)], release=1.8, weight=2.8),
                                     C("c1", [(2, 2, 3.0), (0, 0, 2.0)], release=4.7))),
        Instance(Fabric.uniform(2), (
            C("c0", [(0, 0, 3.0), (0, 1, 0.5), (0, 0, 0.5), (1, 0, 2.0)], weight=1e6),
            C("c1", [(1, 1, 3.0), (0, 1, 3.0), (1, 1, 0.5), (0, 0, 1.0)],
              weight=1.9440806895820817e-05))),
    ):
        honest(inst, solve(inst, method="exact"))
