"""The M/M/1 threshold model of MCS Eqs. (4)-(5): hand computations, exact solvers, optimizer."""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt import MB, Status
from coflowopt.mcs import (
    ThresholdModel,
    Workload,
    aalo_thresholds,
    build_model,
    default_thresholds,
    double_model,
    dp_thresholds,
    grid_search,
    initial_queues,
    linear_thresholds,
    mcs_thresholds,
    optimize_thresholds,
    policy_parameters,
    single_model,
    solve_thresholds,
)

from ._strategies import workloads

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def brute_objective(model, theta):
    """Eqs. (4)-(5) coflow by coflow, with plain loops."""
    K, rho, n = model.num_queues, model.load, model.num_coflows
    F = model.num_families
    final = []
    for x, f, p in zip(model.values, model.family, model.initial, strict=True):
        q = K
        for j in range(1, K):
            if x <= theta[f][j - 1]:
                q = j
                break
        final.append(max(int(p), q))
    ending = [[0.0] * (K + 1) for _ in range(F)]
    for f, q in zip(model.family, final, strict=True):
        ending[f][q] += 1.0 / n
    below = [sum(ending[f][j] for f in range(F) for j in range(1, i + 1)) for i in range(K + 1)]

    def s(f, j):
        share = ending[f][j] if model.numerator == "class" else sum(ending[g][j] for g in range(F))
        return rho * share / (1 - rho * below[j - 1])

    return sum(
        sum(s(f, j) for j in range(int(p), q + 1)) / n
        for f, p, q in zip(model.family, model.initial, final, strict=True)
    )


def brute_optimum(model):
    """Minimum over every non-decreasing threshold vector of every family among 0 and the values."""
    K = model.num_queues
    per_family = []
    for f in range(model.num_families):
        cands = [0.0, *sorted(set(model.values[model.family == f].tolist()))]
        per_family.append(list(itertools.combinations_with_replacement(cands, K - 1)))
    return min(brute_objective(model, theta) for theta in itertools.product(*per_family))


models = st.builds(
    lambda w, scheme, k, rho, numerator, wide, initial: build_model(
        w,
        scheme,
        queues=k,
        load=rho,
        numerator=numerator,
        **(
            {}
            if scheme == "single"
            else {"wide_width": wide, "initial": initial}
            if scheme == "double"
            else {"classification": initial}
        ),
    ),
    workloads(max_coflows=6),
    st.sampled_from(["single", "double", "per-class"]),
    st.integers(1, 3),
    st.sampled_from([0.1, 0.5, 0.9]),
    st.sampled_from(["class", "queue"]),
    st.integers(0, 30),
    st.sampled_from(["paper", "exact", "published"]),
)


def test_single_family_by_hand():
    # sizes 1..4 MB, K = 2, theta_1 = 2.5 MB, rho = 1/2: half end in queue 1, half in queue 2
    # S_1 = 1/2 * 1/2 = 1/4; S_2 = 1/2 * 1/2 / (1 - 1/2 * 1/2) = 1/3
    # mean CCT = (2 * 1/4 + 2 * (1/4 + 1/3)) / 4 = 5/12
    w = Workload([1, 1, 1, 1], np.array([1, 2, 3, 4]) * MB, np.array([1, 2, 3, 4]) * MB, np.ones(4))
    model = single_model(w, queues=2, load=0.5)
    assert model.objective([2.5 * MB]) == pytest.approx(5 / 12, rel=1e-15)
    np.testing.assert_allclose(model.sojourn([2.5 * MB]), [[1 / 4, 1 / 3]])
    np.testing.assert_allclose(model.predicted([2.5 * MB]), [1 / 4, 1 / 4, 7 / 12, 7 / 12])


def test_two_classes_with_initial_queues_by_hand():
    # family A: sizes 1, 3 start in queue 1; family B: sizes 2, 5 start in queue 2; K = 3, rho = 1/2
    # theta^A = (2, 4), theta^B = (1, 4): A ends in 1 and 2, B in 2 and 3
    # L_0 = 0, L_1 = 1/4, L_2 = 3/4
    # S^A_1 = 1/8, S^A_2 = (1/8) / (7/8) = 1/7; S^B_2 = 1/7, S^B_3 = (1/8) / (5/8) = 1/5
    # sum of CCTs = 1/8 + (1/8 + 1/7) + 1/7 + (1/7 + 1/5) = 123/140 -> mean 123/560
    data = {
        "values": [1.0, 3.0, 2.0, 5.0],
        "family": [0, 0, 1, 1],
        "initial": [1, 1, 2, 2],
        "families": ("A", "B"),
        "num_queues": 3,
        "load": 0.5,
    }
    model = ThresholdModel(**data)
    theta = [[2.0, 4.0], [1.0, 4.0]]
    assert model.objective(theta) == pytest.approx(float(Fraction(123, 560)), rel=1e-14)
    np.testing.assert_array_equal(model.final_queue(theta), [1, 2, 2, 3])
    np.testing.assert_allclose(model.sojourn(theta), [[1 / 8, 1 / 7, 0], [0, 1 / 7, 1 / 5]])
    # the queue-numerator variant: S_1 = 1/8, S_2 = (1/4) / (7/8) = 2/7, S_3 = 1/5 -> 183/560
    pooled = ThresholdModel(**data, numerator="queue")
    assert pooled.objective(theta) == pytest.approx(float(Fraction(183, 560)), rel=1e-14)


def test_one_queue_is_fifo_in_the_model():
    w = Workload([1, 5], [1.0, 9.0], [1.0, 2.0], [1.0, 1.0])
    assert single_model(w, queues=1, load=0.3).objective(np.zeros(0)) == pytest.approx(0.3)


@settings(max_examples=60, deadline=None)
@given(models, st.data())
def test_model_agrees_with_the_loop_version(model, data):
    K = model.num_queues
    theta = [
        sorted(
            data.draw(
                st.lists(st.sampled_from([0.5, 2.0, 4.0, 9.0, 30.0, np.inf]), min_size=K - 1, max_size=K - 1)
            )
        )
        for _ in range(model.num_families)
    ]
    obj = model.objective(theta)
    assert obj == pytest.approx(brute_objective(model, theta), rel=1e-12, abs=1e-15)
    assert model.predicted(theta).mean() == pytest.approx(obj, rel=1e-12, abs=1e-15)
    canon = model.canonical(theta)
    assert model.objective(canon) == pytest.approx(obj, rel=1e-14, abs=1e-16)
    assert np.all(canon[:, 1:] >= canon[:, :-1])
    assert model.queue_shares(theta).sum() == pytest.approx(1.0)


@settings(max_examples=35, deadline=None)
@given(models)
def test_optimizer_grid_and_brute_force_agree(model):
    best = brute_optimum(model)
    grid = grid_search(model)
    opt = optimize_thresholds(model, maxiter=30, popsize=8)
    assert grid.status is Status.OPTIMAL and grid.bound == grid.objective
    assert grid.objective == pytest.approx(best, rel=1e-12, abs=1e-15)
    assert opt.objective == pytest.approx(best, rel=1e-12, abs=1e-15)
    # the returned thresholds really have the returned objective
    assert brute_objective(model, opt.thresholds) == pytest.approx(opt.objective, rel=1e-12, abs=1e-15)
    assert opt.objective <= opt.default_objective + 1e-15
    exact = dp_thresholds(model)
    assert exact.status is Status.OPTIMAL
    assert exact.objective == pytest.approx(best, rel=1e-12, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(workloads(max_coflows=8), st.integers(2, 6), st.sampled_from([0.2, 0.6, 0.95]), st.integers(0, 3))
def test_optimizer_is_never_above_the_defaults(w, k, rho, seed):
    for model in (single_model(w, queues=k, load=rho), double_model(w, queues=k, load=rho)):
        opt = optimize_thresholds(model, seed=seed, maxiter=20, popsize=5)
        assert opt.default_objective == pytest.approx(model.objective(default_thresholds(model)))
        assert opt.objective <= opt.default_objective + 1e-15
        assert opt.improvement >= -1e-12


@settings(max_examples=40, deadline=None)
@given(workloads(max_coflows=7), st.integers(2, 4), st.sampled_from([0.3, 0.8]))
def test_dp_is_exact_for_one_family(w, k, rho):
    model = single_model(w, queues=k, load=rho, initial=[1 + i % k for i in range(w.num_coflows)])
    assert dp_thresholds(model).objective == pytest.approx(brute_optimum(model), rel=1e-12, abs=1e-15)


@pytest.fixture(scope="module")
def fb() -> Workload:
    return Workload.from_instance(co.read(TRACE))


def test_facebook_single_scheme(fb):
    rho = 0.5475476927059871  # the trace's offered load on 1 Gbit/s ports
    for k in (2, 3, 10):
        model = single_model(fb, queues=k, load=rho)
        exact = dp_thresholds(model)
        opt = optimize_thresholds(model, maxiter=50)
        assert exact.status is Status.OPTIMAL
        assert opt.objective == pytest.approx(exact.objective, rel=1e-12)
        assert exact.objective < exact.default_objective  # Aalo's E = 10, Q1 = 10 MB is not optimal
        if k <= 3:
            assert grid_search(model).objective == pytest.approx(exact.objective, rel=1e-12)
    assert single_model(fb, queues=2, load=rho).objective(aalo_thresholds(2)) == pytest.approx(
        0.470844320, rel=1e-8
    )


def test_facebook_double_scheme(fb):
    model = double_model(fb, queues=2, load=0.5475476927059871)
    np.testing.assert_array_equal(model.active(), [True, False])  # wide coflows start in queue 2
    grid = grid_search(model)
    opt = optimize_thresholds(model, maxiter=30)
    assert opt.objective == pytest.approx(grid.objective, rel=1e-12)
    assert dp_thresholds(model).objective == pytest.approx(grid.objective, rel=1e-12)
    assert opt.objective < opt.default_objective
    np.testing.assert_allclose(opt.default_thresholds, [[10 * MB], [1 * MB]])
    # three queues: both families active, the joint DP (5828 states per layer) is exact
    model = double_model(fb, queues=3, load=0.5475476927059871)
    exact = dp_thresholds(model)
    assert exact.info["joint_states"] == 94 * 62
    assert optimize_thresholds(model).objective == pytest.approx(exact.objective, rel=1e-12)
    assert exact.objective < exact.default_objective


def test_the_optimizer_finds_the_optimum_at_any_load_scale(fb):
    # its local step counted an improvement only beyond an absolute 1e-13: at a load of
    # 1e-300 (objective ~1e-300) it stopped 0.7% above the DP optimum, and the CLI's check
    # (absolute 1e-12 too) said it agreed
    first60 = co.read(TRACE).subset(range(60))
    for load in (0.5475476927059871, 1e-300):
        model = build_model(first60, "single", queues=3, load=load, initial="top")
        exact = dp_thresholds(model)
        assert optimize_thresholds(model).objective == pytest.approx(
            exact.objective, rel=1e-12, abs=0.0)


def test_default_threshold_families():
    np.testing.assert_allclose(aalo_thresholds(4) / MB, [10, 100, 1000])
    np.testing.assert_allclose(mcs_thresholds(4) / MB, [[10, 100, 1000], [1, 2, 4]])
    np.testing.assert_allclose(mcs_thresholds(3, wide_first=4 * MB) / MB, [[10, 100], [4, 8]])
    np.testing.assert_allclose(linear_thresholds(4, maximum=8.0), [2.0, 4.0, 6.0])
    assert aalo_thresholds(1).size == 0


def test_initial_queue_rules():
    w = Workload([1, 9, 10, 150, 5000, 10**5], [1.0] * 6, [1.0] * 6, [1.0] * 6)
    np.testing.assert_array_equal(initial_queues(w, "paper", 10), [1, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(initial_queues(w, "paper", 3), [1, 1, 2, 3, 3, 3])
    np.testing.assert_array_equal(initial_queues(w, None, 3), [1] * 6)
    np.testing.assert_array_equal(initial_queues(w, [1, 2, 3, 4, 5, 6], 4), [1, 2, 3, 4, 4, 4])
    with pytest.raises(co.InstanceError, match="unknown initial-queue rule 'last'"):
        initial_queues(w, "last", 3)


def test_solution_reports_and_registry():
    w = Workload([1, 2, 80], [1.0 * MB, 50.0 * MB, 900.0 * MB], [1.0 * MB, 20 * MB, 30 * MB], [1.0] * 3)
    model = double_model(w, queues=3, load=0.5)
    sol = solve_thresholds(model, "grid")
    d = sol.as_dict()
    assert d["status"] == "optimal" and d["families"] == ["narrow", "wide"]
    assert np.shape(d["thresholds_mb"]) == (2, 2)
    assert sol.family("wide").shape == (2,)
    with pytest.raises(co.InstanceError, match="unknown threshold solver 'anneal'"):
        solve_thresholds(model, "anneal")
    assert dp_thresholds(model).objective == pytest.approx(sol.objective)
    with pytest.raises(co.CoflowoptError, match="the exact DP would visit"):
        dp_thresholds(model, max_cells=10)
    with pytest.raises(co.CoflowoptError, match="more than 3 threshold combinations"):
        grid_search(model, max_evaluations=3)
    # refused before the points are built (a grid of 10^9 points took 7.8 GB first)
    with pytest.raises(co.CoflowoptError, match="more than 5000000 threshold combinations"):
        grid_search(model, grid=10**12)
    coarse = grid_search(model, grid=4)
    assert coarse.status is Status.FEASIBLE and coarse.objective >= sol.objective


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"load": 1.0}, "rho must be in"),
        ({"load": 0.0}, "rho must be in"),
        ({"numerator": "bytes"}, "numerator must be one of"),
        ({"initial": [1, 4]}, "initial queues must lie in 1..3"),
        ({"family": [0, 2]}, "family indices"),
        ({"values": [1.0, -1.0]}, "finite and > 0"),
    ],
)
def test_bad_models_are_rejected(kwargs, match):
    args = {
        "values": [1.0, 2.0],
        "family": [0, 1],
        "initial": [1, 2],
        "families": ("a", "b"),
        "num_queues": 3,
        "load": 0.5,
    }
    args.update(kwargs)
    with pytest.raises(co.InstanceError, match=match):
        ThresholdModel(**args)


def test_bad_thresholds_are_rejected():
    model = ThresholdModel([1.0, 2.0], [0, 1], [1, 1], ("a", "b"), 3, 0.5)
    with pytest.raises(co.InstanceError, match="need 2 thresholds per family"):
        model.objective([1.0])
    with pytest.raises(co.InstanceError, match="non-decreasing"):
        model.objective([[2.0, 1.0], [1.0, 2.0]])
    with pytest.raises(co.InstanceError, match="need 2 rows"):
        model.objective([[1.0, 2.0]] * 3)
    with pytest.raises(co.InstanceError, match="unknown threshold scheme"):
        build_model(Workload([1], [1.0], [1.0], [1.0]), "triple", queues=2, load=0.5)


@settings(max_examples=60, deadline=None)
@given(workloads(max_coflows=8), st.integers(1, 5), st.sampled_from(["single", "double"]), st.data())
def test_policy_parameters_keep_every_coflows_queue(w, k, scheme, data):
    opts = {} if scheme == "single" else {"wide_width": data.draw(st.integers(1, 30))}
    model = build_model(w, scheme, queues=k, load=0.5, **opts)
    grid = [0.5, 2.0, 4.0, 9.0, 30.0, 100.0]
    theta = model.canonical(
        [
            sorted(data.draw(st.lists(st.sampled_from(grid), min_size=k - 1, max_size=k - 1)))
            for _ in model.families
        ]
    )
    name, params = policy_parameters(model, theta)
    assert name == "mcs" and params["num_queues"] == k
    rows = [params["narrow_thresholds"], params["wide_thresholds"]][: model.num_families]
    for row in rows:
        assert all(v > 0 for v in row) and all(b > a for a, b in itertools.pairwise(row))
    np.testing.assert_array_equal(model.final_queue(rows), model.final_queue(theta))
    assert model.objective(rows) == pytest.approx(model.objective(theta))
    assert len(params["initial_queues"]) == len(params["width_thresholds"]) + 1


def test_policy_parameters_for_the_paper_setting():
    w = Workload([1, 20, 300], [1.0 * MB, 30 * MB, 900 * MB], [1.0 * MB, 5 * MB, 9 * MB], [1.0] * 3)
    _, params = policy_parameters(double_model(w, queues=4, load=0.5), mcs_thresholds(4))
    assert params["width_thresholds"] == (10.0, 100.0, 1000.0, 10000.0)
    assert params["initial_queues"] == (1, 2, 3, 4, 4) and params["narrow_width"] == 50  # p_5 = 5 capped at K
    assert params["sharing"] == "strict"
    np.testing.assert_allclose(params["narrow_thresholds"], [10 * MB, 100 * MB, 1000 * MB])
    _, aalo = policy_parameters(single_model(w, queues=3, load=0.5), aalo_thresholds(3))
    assert aalo["width_thresholds"] == () and aalo["initial_queues"] == (1,)
    assert aalo["sharing"] == "weighted" and aalo["narrow_width"] > 10**9
    with pytest.raises(co.CoflowoptError, match="no simulator policy implements the 'per-class'"):
        policy_parameters(build_model(w, "per-class", queues=3, load=0.5), aalo_thresholds(3))
