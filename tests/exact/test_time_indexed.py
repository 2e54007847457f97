"""Time-indexed MILP: a feasible grid schedule above the optimum, a valid bound below it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.errors import CoflowoptError
from coflowopt.result import Status
from coflowopt.solvers import solve
from tests.strategies import instances, network_instances


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=3, max_flows=2, delays=True))
def test_grid_schedule_and_bounds_sandwich_the_optimum(inst):
    exact = solve(inst, method="exact")
    for lower in ("lp", "milp"):
        res = solve(inst, method="time-indexed", slots=8, lower=lower)
        assert check_feasible(inst, res.schedule)
        assert res.objective >= exact.objective * (1 - 1e-7)
        assert res.bound <= exact.objective * (1 + 1e-7)
        np.testing.assert_allclose(res.schedule.coflow_completion(inst), res.completion)
        # no piece after its flow completed (rounding in later slots is trimmed)
        s = res.schedule
        assert np.all(s.start < s.flow_completion(inst)[s.flow])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_instances(max_ports=3, max_coflows=3, max_flows=2, delays=True))
def test_grid_schedule_and_bounds_sandwich_the_optimum_on_networks(inst):
    """Spine-leaf and the k = 4 fat-tree under ECMP or spray: the grid model constrains
    every link of every route group, as the exact method does."""
    exact = solve(inst, method="exact")
    res = solve(inst, method="time-indexed", slots=8, lower="milp")
    assert check_feasible(inst, res.schedule).ok
    assert res.objective >= exact.objective * (1 - 1e-7)
    assert res.bound <= exact.objective * (1 + 1e-7)
    # HiGHS's MIP bound is not recomputed from the data, as the LP's is
    assert res.info["lower_certified"] is ("lower_milp" not in res.info)
    lp = solve(inst, method="time-indexed", slots=8)
    assert lp.info["lower_certified"] is True
    assert lp.bound <= min(exact.objective, lp.objective)  # proven, not clamped


def test_the_rows_for_work_released_inside_a_slot_weigh_a_sprayed_flow_by_its_share():
    # (found by the property above) k = 4 fat-tree with 0.5 links, spray: c1 (1 unit,
    # released at 2, inside the slot [1.875, 2.5)) sends half on each of two 0.5 links, so
    # it may send 0.5 in that slot; with its share counted as 1 the relaxation let it send
    # only 0.25 there and charged 5.125 against the optimum of 5
    from coflowopt.fabric import FatTree, Network

    net = Network(FatTree(4, 1.0, 0.5), "spray", 0)
    inst = Instance(net, (Coflow("c0", np.array([0]), np.array([1]), np.array([2.0])),
                          Coflow("c1", np.array([0]), np.array([2]), np.array([1.0]), release=2.0)))
    assert solve(inst, method="exact").objective == pytest.approx(5.0, rel=1e-9)
    for lower in ("lp", "milp"):
        res = solve(inst, method="time-indexed", slots=8, lower=lower)
        assert res.info["step"] == pytest.approx(0.625)
        assert res.bound <= 5.0 * (1 + 1e-9)
    assert res.bound == pytest.approx(5.0, rel=1e-9)  # the MILP


def test_finer_grid_never_worse_on_halving():
    rng = np.random.default_rng(4)
    coflows = [Coflow(f"c{k}", rng.integers(0, 2, 2), rng.integers(0, 2, 2),
                      rng.integers(1, 4, 2).astype(float), release=float(rng.integers(0, 3)))
               for k in range(3)]
    inst = Instance(Fabric.uniform(2), tuple(coflows))
    exact = solve(inst, method="exact").objective
    coarse = solve(inst, method="time-indexed", step=1.0, lower="milp")
    fine = solve(inst, method="time-indexed", step=0.5, lower="milp")
    # the 0.5 grid contains every 1.0 grid schedule
    assert fine.objective <= coarse.objective * (1 + 1e-9)
    assert coarse.bound <= exact * (1 + 1e-9) and fine.bound <= exact * (1 + 1e-9)
    assert fine.info["grid_objective"] <= coarse.info["grid_objective"] + 1e-9


def test_time_indexed_options():
    inst = Instance(Fabric.uniform(1), (Coflow.from_flows("a", [(0, 0, 1.0)]),))
    with pytest.raises(CoflowoptError, match="step must be"):
        solve(inst, method="time-indexed", step=-1.0)
    with pytest.raises(CoflowoptError, match="lower must be one of"):
        solve(inst, method="time-indexed", lower="exact")
    with pytest.raises(CoflowoptError, match=r"slots must be int or None \(numbers: finite and >= 1\)"):
        solve(inst, method="time-indexed", slots=0)
    with pytest.raises(CoflowoptError, match="too large"):
        solve(inst, method="time-indexed", step=1e-7)
    # a grid too large for NumPy to index: the size check comes first (was a ValueError
    # traceback, "Maximum allowed size exceeded"), and the count is short
    with pytest.raises(CoflowoptError, match=r"\(1e\+300 slots\) would need 2e\+300 columns"):
        solve(inst, method="time-indexed", step=1e-300)
    # step=-1 was refused as "finite and >= 0", although 0 is refused too
    stated = r"option step must be float or None \(numbers: finite and > 0\), got "
    for step in (0, -1):
        with pytest.raises(CoflowoptError, match=stated + str(step)):
            solve(inst, method="time-indexed", step=step)
    res = solve(inst, method="time-indexed", step=0.5)
    assert res.objective == pytest.approx(1.0)


def test_a_grid_too_fine_for_memory_is_refused_before_building():
    # one flow of 100 time units with a step of 0.01: 10,000 slots and cumulative rows
    # with 5e7 entries; it used to build them (5.2 GB, past its time limit), and finer
    # steps on 30 coflows were killed for memory
    inst = Instance(Fabric.uniform(1), (Coflow.from_flows("a", [(0, 0, 100.0)]),))
    with pytest.raises(CoflowoptError, match=r"50,015,001 constraint entries \(limit 20,000,000\)"):
        solve(inst, method="time-indexed", step=0.01, time_limit=1)
    res = solve(inst, method="time-indexed", step=0.05, time_limit=30)
    assert res.objective == pytest.approx(100.0)


def test_no_time_left_after_the_grid_is_built_gives_an_honest_result():
    # the relaxed model is not even built when the grid model used up the limit; the bound
    # is then the isolation bound and the status says the limit was hit
    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 3.0), (1, 0, 1.0)]),
                                        Coflow.from_flows("b", [(0, 1, 2.0)], release=1.0)))
    res = solve(inst, method="time-indexed", step=0.5, time_limit=1e-9)
    assert res.status.name == "TIME_LIMIT"
    assert res.info["lower_status"] == "not started" and res.info["grid_status"] == "not started"
    assert res.info["lower_isolation"] == pytest.approx(3.0 + (1.0 + 2.0))
    # solve raises it to the best cheap bound: here port 0's single-machine bound, 3 + 5,
    # which the bound over completion orders equals (b completes after 3 + 5 either way)
    assert res.bound == pytest.approx(8.0) and res.info["bound_from"] in ("port", "subsets")


def test_a_result_with_the_milp_bound_is_never_called_optimal():
    # HiGHS's MIP bound of the relaxed model lies 2.9e-5 above this optimum (the lighter
    # coflow's cost within HiGHS's dual tolerance of the scaled costs): it is marked as
    # not proven, and only a proven bound makes a result optimal
    inst = Instance(Fabric.uniform(1, 3.0), (
        Coflow("c0", np.array([0]), np.array([0]), np.array([275.30066667]),
               release=612.793576616517, weight=0.06916972473270207),
        Coflow("c1", np.array([0]), np.array([0]), np.array([0.0907926]),
               release=0.0010172445632865101, weight=738.1202549443965)))
    exact = solve(inst, method="exact")
    milp = solve(inst, method="time-indexed", slots=6, lower="milp")
    assert milp.info["lower_certified"] is False and milp.status is not Status.OPTIMAL
    assert milp.bound > exact.objective  # (what the flag warns of)
    lp = solve(inst, method="time-indexed", slots=6)
    assert lp.info["lower_certified"] is True and lp.bound <= exact.objective
