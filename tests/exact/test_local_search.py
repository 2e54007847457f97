"""Local search over orders: its evaluator, its guarantees, time limits and determinism."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coflowopt import Fabric, check_feasible
from coflowopt.errors import CoflowoptError
from coflowopt.exact import _freelists as fls
from coflowopt.exact.local_search import _moved, local_search
from coflowopt.exact.permutation import best_permutation, permutation_schedule
from coflowopt.exact.wcct import solve_exact
from coflowopt.io.generate import synthetic
from coflowopt.result import Status
from coflowopt.solvers import solve
from tests.strategies import instances

MIXED = Fabric(np.full(4, 1.25e8), np.full(4, 2.5e8))  # egress twice as fast: no 0/c rates
SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def free_list_completion(inst, order) -> np.ndarray:
    la, lb, cap = fls.uniform_two_link(inst)
    L = inst.routes.shape[1]
    S, E, cnt = np.zeros((L, 8)), np.full((L, 8), np.inf), np.ones(L, np.int64)
    comp = np.zeros(inst.num_coflows)
    fls.run_order(S, E, cnt, np.asarray(order, np.int64), 0, inst.num_coflows,
                  inst.ptr.astype(np.int64), la, lb, inst.flow_release.astype(float),
                  inst.flow_size / cap, inst.weight.astype(float), np.zeros(inst.num_coflows),
                  comp, math.inf, False, np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    return comp


def positions(inst, res) -> np.ndarray:
    return np.array([inst.ids.index(i) for i in res.info["order"]], dtype=np.int64)


@SLOW
@given(instances(max_ports=4, max_coflows=5, max_flows=4, delays=True, uniform=True))
def test_free_lists_give_the_simulators_permutation_schedule(inst):
    order = np.random.default_rng(inst.num_flows).permutation(inst.num_coflows)
    _, comp = permutation_schedule(inst, order)
    np.testing.assert_allclose(free_list_completion(inst, order), comp, rtol=1e-9, atol=1e-12)


def test_free_lists_apply_only_to_uniform_two_link_instances():
    inst = synthetic(6, 4, load=0.5, seed=1)
    assert fls.uniform_two_link(inst) is not None
    assert fls.uniform_two_link(inst.replace(fabric=MIXED)) is None


@SLOW
@given(instances(max_ports=3, max_coflows=4, max_flows=3, uniform=True))
def test_local_search_is_feasible_and_between_the_best_permutation_and_its_starts(inst):
    res = local_search(inst, time_limit=600, neighbourhood="all", perturbations=2)
    assert_between_best_permutation_and_starts(inst, res)


def assert_between_best_permutation_and_starts(inst, res) -> None:
    """A search over orders: feasible, never worse than a start it evaluated, never better
    than the best permutation schedule, its bound below the optimum (exact solvers)."""
    assert check_feasible(inst, res.schedule)
    assert res.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert res.objective == pytest.approx(float(inst.weight @ res.completion), rel=1e-12)
    # never worse than any start it evaluated
    assert res.objective <= min(res.info["starts"].values()) * (1 + 1e-9)
    # never better than the best permutation schedule (exact search)
    perm = best_permutation(inst, time_limit=600)
    assert perm.status is Status.OPTIMAL
    assert res.objective >= perm.objective * (1 - 1e-9)
    # the bound is a bound on every schedule
    opt = solve_exact(inst, time_limit=600)
    assert opt.status is Status.OPTIMAL
    assert res.bound <= opt.objective * (1 + 1e-9)


@SLOW
@given(instances(max_ports=3, max_coflows=5, max_flows=3, delays=True, uniform=True))
def test_a_finished_search_ends_at_a_local_optimum_of_insert_moves(inst):
    res = local_search(inst, time_limit=600, neighbourhood="all", perturbations=0)
    assert res.info["local_optimum"]
    order = positions(inst, res)
    K = inst.num_coflows
    for i in range(K):
        for j in range(K):
            if i != j:
                _, comp = permutation_schedule(inst, _moved(order, i, j))
                assert float(inst.weight @ comp) >= res.objective * (1 - 1e-7), (i, j)


def test_the_search_improves_on_its_start_on_a_loaded_instance():
    inst = synthetic(30, 6, load=0.9, seed=4)
    res = local_search(inst, time_limit=600, starts=("sincronia",), perturbations=0)
    assert check_feasible(inst, res.schedule)
    assert res.info["moves_taken"] > 0
    assert res.objective < res.info["start_value"] * (1 - 1e-6)
    # the free lists' value is the simulator's for the returned order
    _, comp = permutation_schedule(inst, positions(inst, res))
    assert res.objective == pytest.approx(float(inst.weight @ comp), rel=1e-9)


def test_progress_hears_each_value_below_every_earlier_one():
    inst = synthetic(30, 6, load=0.9, seed=4)
    heard: list[float] = []
    res = local_search(inst, time_limit=600, starts=("sincronia",), perturbations=2,
                       progress=heard.append)
    assert heard and all(b < a for a, b in itertools.pairwise(heard))
    assert heard[0] < res.info["start_value"]
    assert heard[-1] == res.info["search_value"]  # the best order's value, as evaluated


def test_same_seed_same_result_and_seeds_matter_only_through_perturbations():
    inst = synthetic(20, 5, load=0.9, seed=7)
    a = local_search(inst, time_limit=600, seed=3, perturbations=3)
    b = local_search(inst, time_limit=600, seed=3, perturbations=3)
    assert a.status is b.status is Status.FEASIBLE
    assert a.info["order"] == b.info["order"] and a.objective == b.objective
    c = local_search(inst, time_limit=600, seed=3, perturbations=0)
    d = local_search(inst, time_limit=600, seed=4, perturbations=0)
    assert c.info["order"] == d.info["order"]


def test_instances_off_the_uniform_big_switch_use_the_residual_profiles():
    inst = synthetic(8, 4, load=0.8, seed=2)
    mixed = inst.replace(fabric=MIXED)
    res = local_search(mixed, time_limit=600, neighbourhood="all", perturbations=1)
    assert res.info["evaluator"] == "residual profiles"
    assert check_feasible(mixed, res.schedule)
    _, comp = permutation_schedule(mixed, positions(mixed, res))
    assert res.objective == pytest.approx(float(mixed.weight @ comp), rel=1e-9)
    assert res.objective <= min(res.info["starts"].values()) * (1 + 1e-9)


def test_at_the_time_limit_the_first_order_is_returned(expired_clock):
    inst = synthetic(12, 5, load=0.9, seed=5)
    res = solve(inst, method="local-search", time_limit=5)
    assert res.status is Status.TIME_LIMIT
    assert check_feasible(inst, res.schedule)
    assert res.info["moves_tried"] == 0
    assert list(res.info["starts"]) == ["sincronia"]  # evaluated before the clock is read
    assert 0 < res.bound <= res.objective


def test_options_are_checked():
    inst = synthetic(4, 3, load=0.5, seed=1)
    with pytest.raises(CoflowoptError, match="neighbourhood"):
        local_search(inst, neighbourhood="near")
    with pytest.raises(CoflowoptError, match="start order"):
        local_search(inst, starts=("fifo",))
    with pytest.raises(CoflowoptError, match="stride"):
        local_search(inst, stride=0)
    with pytest.raises(CoflowoptError, match="perturbations"):
        local_search(inst, perturbations=-1)
    with pytest.raises(CoflowoptError, match="lp_share"):
        local_search(inst, lp_share=1.5)
    # through solve, whose option check reads the annotations: starts is a list of names
    res = solve(inst, method="local-search", starts=["smallest", "release"], time_limit=30)
    assert {s.removesuffix(", re-sorted") for s in res.info["starts"]} == {"smallest", "release"}
    for bad in ("smallest", [0, 1], []):
        with pytest.raises(CoflowoptError, match="option starts must be Sequence"):
            solve(inst, method="local-search", starts=bad)


def test_an_empty_instance():
    inst = synthetic(4, 3, load=0.5, seed=1).subset([])
    res = solve(inst, method="local-search")
    assert res.status is Status.OPTIMAL and res.objective == 0.0
