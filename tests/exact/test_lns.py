"""Large neighbourhood search over orders: exact windows, its guarantees, time limits."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coflowopt import check_feasible, write
from coflowopt.cli import main
from coflowopt.errors import CoflowoptError
from coflowopt.exact.lns import lns, window_members
from coflowopt.exact.local_search import _neighbours, local_search
from coflowopt.exact.permutation import best_permutation, permutation_schedule
from coflowopt.io.generate import synthetic
from coflowopt.result import Status
from coflowopt.solvers import solve
from tests.exact.test_local_search import assert_between_best_permutation_and_starts, positions
from tests.strategies import instances

SLOW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def value_of(inst, order) -> float:
    _, comp = permutation_schedule(inst, np.asarray(order, dtype=np.int64))
    return float(inst.weight @ comp)


def assert_no_window_improves(inst, res, window: int) -> None:
    """No order of any window of the result's order (brute force) is better than it."""
    order = positions(inst, res)
    near = _neighbours(inst, res.completion)
    for k in range(inst.num_coflows):
        members = window_members(order, k, near, window)
        places = np.flatnonzero(np.isin(order, members))
        for perm in itertools.permutations(members.tolist()):
            cand = order.copy()
            cand[places] = perm
            assert value_of(inst, cand) >= res.objective * (1 - 1e-7), (k, perm)


def test_a_window_is_the_anchor_and_its_nearest_neighbours_in_the_order():
    order = np.array([4, 0, 3, 1, 2, 5], dtype=np.int64)  # positions: 4->0, 0->1, 3->2, ...
    near = np.zeros((6, 6), dtype=bool)
    near[3, [4, 1, 5]] = True  # at distances 2, 1, 3 from coflow 3 (position 2)
    assert window_members(order, 3, near, 2).tolist() == [3, 1]
    assert window_members(order, 3, near, 3).tolist() == [4, 3, 1]  # by position
    assert window_members(order, 3, near, 7).tolist() == [4, 3, 1, 5]
    # every coflow: nearest first, the earlier of two at the same distance
    assert window_members(order, 3, None, 3).tolist() == [0, 3, 1]


@SLOW
@given(instances(max_ports=3, max_coflows=4, max_flows=3, uniform=True))
def test_lns_is_feasible_and_between_the_best_permutation_and_its_starts(inst):
    assert_between_best_permutation_and_starts(inst, lns(inst, time_limit=600, window=3))


@SLOW
@given(instances(max_ports=3, max_coflows=5, max_flows=3, delays=True, uniform=True))
def test_a_finished_search_ends_where_no_window_has_a_better_order(inst):
    res = lns(inst, time_limit=600, window=3, starts=("sincronia", "release"))
    assert res.info["local_optimum"]
    assert_no_window_improves(inst, res, 3)


@SLOW
@given(instances(max_ports=3, max_coflows=5, max_flows=3, delays=True, uniform=True))
def test_one_window_over_every_coflow_is_the_best_permutation(inst):
    res = lns(inst, time_limit=600, window=max(inst.num_coflows, 2), neighbourhood="all",
              starts=("release",))
    perm = best_permutation(inst, time_limit=600)
    assert perm.status is Status.OPTIMAL
    assert res.objective == pytest.approx(perm.objective, rel=1e-7)


def test_the_search_improves_on_its_start_on_a_loaded_instance():
    inst = synthetic(30, 6, load=0.9, seed=4)
    res = lns(inst, time_limit=600, starts=("sincronia",))
    assert check_feasible(inst, res.schedule)
    assert res.info["windows_improved"] > 0 and res.info["local_optimum"]
    assert res.objective < res.info["start_value"] * (1 - 1e-6)
    assert res.objective == pytest.approx(value_of(inst, positions(inst, res)), rel=1e-9)


def test_windows_reach_what_insert_moves_do_not():
    # the local search's local optimum of insert moves, improved by windows of 3 (an
    # instance found by trying seeds: on most small ones windows find nothing more)
    inst = synthetic(25, 3, load=0.9, seed=11)
    ls = local_search(inst, time_limit=600, starts=("sincronia",), perturbations=0)
    assert ls.info["local_optimum"]
    res = lns(inst, time_limit=600, window=3, starts=(), initial_orders=[positions(inst, ls)])
    assert res.objective < ls.objective * (1 - 1e-6)


@pytest.mark.parametrize("seed", [4, 6, 8])
def test_after_improvements_the_search_still_ends_where_no_window_improves(seed):
    # windows searched before an improvement are searched again after it
    inst = synthetic(30, 6, load=0.9, seed=seed)
    res = lns(inst, time_limit=600, window=3, starts=("sincronia",))
    assert res.info["local_optimum"] and res.info["windows_improved"] > 0
    assert_no_window_improves(inst, res, 3)


def test_progress_hears_each_better_value_and_results_repeat():
    inst = synthetic(30, 6, load=0.9, seed=4)
    heard: list[float] = []
    res = lns(inst, time_limit=600, starts=("sincronia",), progress=heard.append)
    assert heard and all(b < a for a, b in itertools.pairwise(heard))
    assert heard[0] < res.info["start_value"] and heard[-1] == res.info["search_value"]
    again = lns(inst, time_limit=600, starts=("sincronia",))
    assert again.info["order"] == res.info["order"] and again.objective == res.objective


def test_at_the_time_limit_the_first_order_is_returned(expired_clock):
    inst = synthetic(12, 5, load=0.9, seed=5)
    res = solve(inst, method="lns", time_limit=5)
    assert res.status is Status.TIME_LIMIT
    assert check_feasible(inst, res.schedule)
    assert res.info["orders_tried"] == 0
    assert list(res.info["starts"]) == ["sincronia"]
    assert 0 < res.bound <= res.objective


def test_options_are_checked():
    inst = synthetic(4, 3, load=0.5, seed=1)
    for bad in (1, 8, True, 2.0):
        with pytest.raises(CoflowoptError, match="window must be an integer from 2 to 7"):
            lns(inst, window=bad)
    with pytest.raises(CoflowoptError, match="neighbourhood"):
        lns(inst, neighbourhood="near")
    with pytest.raises(CoflowoptError, match="start order"):
        lns(inst, starts=("fifo",))
    res = solve(inst.subset([]), method="lns")
    assert res.status is Status.OPTIMAL and res.objective == 0.0


def test_the_command_line_runs_it_with_a_window(capsys, tmp_path):
    path = tmp_path / "w.json"
    write(synthetic(10, 4, load=0.9, seed=3), path)
    assert main(["solve", str(path), "--method", "lns", "--param", "window=3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] in ("feasible", "optimal") and doc["bound"] <= doc["objective"]
    assert main(["solve", str(path), "--method", "lns", "--param", "window=9"]) == 2
    assert "window must be an integer from 2 to 7, got 9" in capsys.readouterr().err
