"""SNCF classification: Algorithm 1 as published, the exact optimum of Eq. (1), ASSIGNPRIORITY."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt.mcs import (
    Workload,
    assign_priority,
    classify,
    evaluate,
    joint_distribution,
    optimal_classification,
    paper_width_thresholds,
    sncf,
)

from ._strategies import size_thresholds, workloads

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def brute_error(width, size, t, delta):
    """Eq. (1) written out coflow by coflow; an empty class has accuracy 0."""
    bounds_w = [0.0, *delta, np.inf]
    bounds_t = [0.0, *t, np.inf]
    total = 0.0
    for i in range(len(t) + 1):
        members = [k for k in range(len(width)) if bounds_w[i] <= width[k] < bounds_w[i + 1]]
        right = [k for k in members if bounds_t[i] <= size[k] < bounds_t[i + 1]]
        total += 1.0 - (len(right) / len(members) if members else 0.0)
    return total


def brute_optimum(w, t, *, nonempty=False):
    """Minimum of Eq. (1) over every non-decreasing choice of boundaries among the observed widths."""
    width, size = w.width.tolist(), w.size.tolist()
    cands = [*sorted(set(width)), max(width) + 1]
    best = np.inf
    for delta in itertools.combinations_with_replacement(cands, len(t)):
        if nonempty:
            bounds = [0, *delta, np.inf]
            if any(not any(bounds[i] <= x < bounds[i + 1] for x in width) for i in range(len(t) + 1)):
                continue
        best = min(best, brute_error(width, size, t, delta))
    return best


@pytest.fixture(scope="module")
def fb() -> Workload:
    return Workload.from_instance(co.read(TRACE))


def test_algorithm_1_on_the_trace_gives_the_papers_simulation_setting(fb):
    # MCS §VIII-A simulates with Delta_i = 10^i and p_i = i; Algorithm 1 finds exactly that
    res = sncf(fb)
    np.testing.assert_array_equal(res.width_thresholds, [10, 100, 1000, 10000])
    np.testing.assert_array_equal(res.priorities, [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(res.count, [259, 157, 36, 44, 30])
    assert res.error == pytest.approx(
        brute_error(fb.width, fb.size, res.size_thresholds, [10, 100, 1000, 10000])
    )
    paper = evaluate(fb, paper_width_thresholds("simulation"))
    assert paper.error == pytest.approx(res.error)


def test_exact_classification_of_the_trace(fb):
    exact = optimal_classification(fb)
    published = sncf(fb)
    assert exact.error < published.error
    assert exact.error == pytest.approx(exact.info["dp_error"])
    np.testing.assert_array_equal(exact.width_thresholds, [10, 110, 182, 9180])
    assert exact.error == pytest.approx(0.80999926, abs=1e-8)
    # the figure-8 claim Delta_i = 2^(i-1) is far worse (and leaves class 1 empty)
    fig8 = evaluate(fb, paper_width_thresholds("figure8"))
    assert fig8.count[0] == 0 and fig8.error > published.error


@settings(max_examples=80, deadline=None)
@given(workloads(), size_thresholds, st.sampled_from([2.0, 3.0, 10.0]), st.sampled_from(["le", "lt"]))
def test_exact_error_is_never_above_algorithm_1(w, t, step, compare):
    exact = optimal_classification(w, size_thresholds=t if t else None, classes=len(t) + 1)
    published = sncf(w, size_thresholds=t if t else None, classes=len(t) + 1, step=step, compare=compare)
    assert exact.error <= published.error + 1e-12
    for variant in ("simulation", "figure8", "testbed"):
        other = evaluate(w, paper_width_thresholds(variant, len(t) + 1), size_thresholds=t if t else None)
        assert exact.error <= other.error + 1e-12


@settings(max_examples=80, deadline=None)
@given(workloads(max_coflows=7, max_width=12), size_thresholds)
def test_exact_error_equals_brute_force(w, t):
    exact = optimal_classification(w, size_thresholds=t if t else None, classes=len(t) + 1)
    assert exact.error == pytest.approx(brute_optimum(w, t), abs=1e-12)
    assert exact.error == pytest.approx(brute_error(w.width, w.size, t, exact.width_thresholds), abs=1e-12)
    assert exact.error == pytest.approx(exact.info["dp_error"], abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(workloads(min_coflows=4, max_coflows=7, max_width=12), size_thresholds)
def test_exact_without_empty_classes_equals_brute_force(w, t):
    n = len(t) + 1
    if np.unique(w.width).size < n:
        with pytest.raises(co.InstanceError, match="non-empty classes need"):
            optimal_classification(w, size_thresholds=t or None, classes=n, allow_empty=False)
        return
    exact = optimal_classification(w, size_thresholds=t or None, classes=n, allow_empty=False)
    assert np.all(exact.count > 0)
    assert exact.error == pytest.approx(brute_optimum(w, t, nonempty=True), abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(workloads(), size_thresholds)
def test_alpha_and_beta_agree_with_the_joint_distribution(w, t):
    res = sncf(w, size_thresholds=t or None, classes=len(t) + 1)  # Delta strictly increasing
    joint = joint_distribution(w, size_edges=[0, *t, np.inf], width_edges=[0, *res.width_thresholds, np.inf])
    np.testing.assert_allclose(res.alpha, joint.fractions.sum(axis=0))
    np.testing.assert_allclose(res.beta, np.diag(joint.fractions))
    assert res.count.sum() == w.num_coflows
    assert res.misclassified == pytest.approx(1 - res.beta.sum())
    # every class's size range holds its coflows
    cls = res.classify(w.width)
    for i in range(res.num_classes):
        sizes = w.size[cls == i + 1]
        if sizes.size:
            assert res.size_quantiles[i, 0] == sizes.min() and res.size_quantiles[i, 4] == sizes.max()


def test_algorithm_1_by_hand():
    # widths 1..4 and 20..40; T_1 = 10: sizes below 10 only for widths < 10
    w = Workload([1, 2, 4, 20, 30, 40], [1.0, 2.0, 3.0, 50, 60, 70], [1.0] * 6, [1.0] * 6)
    res = sncf(w, size_thresholds=[10.0], step=2.0)
    # Delta_0 = 1; Delta_1 = 2: class [1, 2) is all small (A = 1); A at 4 is 1 too (<= continues),
    # at 8 still 1, at 16 still 1, at 32: [1, 32) holds 3 small of 5 -> 0.6 < 1, stop at 16
    np.testing.assert_array_equal(res.width_thresholds, [16])
    assert res.error == 0.0 and res.info["start"] == 1.0
    strict = sncf(w, size_thresholds=[10.0], step=2.0, compare="lt")
    np.testing.assert_array_equal(strict.width_thresholds, [2])  # stops at the first plateau
    assert strict.error == pytest.approx(1 - 3 / 5)  # class 2 = [2, inf): 3 of its 5 are >= 10


def test_algorithm_1_stops_when_every_width_is_below_the_threshold():
    # all widths equal: the accuracy never changes, the published <= test alone would loop forever
    w = Workload([5, 5, 5], [1.0, 20.0, 30.0], [1.0] * 3, [1.0] * 3)
    res = sncf(w, size_thresholds=[10.0, 100.0])
    np.testing.assert_array_equal(res.width_thresholds, [50, 500])
    np.testing.assert_array_equal(res.count, [3, 0, 0])


def test_assign_priority_uses_each_classes_own_smallest_coflow():
    w = Workload([1, 1, 15, 15, 200], [500.0, 5.0, 50.0, 800.0, 5000.0], [1.0] * 5, [1.0] * 5)
    t = [10.0, 100.0, 1000.0]
    # classes [0,10) [10,100) [100,1000) [1000,inf): min sizes 5, 50, 5000, (empty)
    np.testing.assert_array_equal(assign_priority(w, [10, 100, 1000], size_thresholds=t), [1, 2, 4, 4])
    res = evaluate(w, [10, 100, 1000], size_thresholds=t)
    np.testing.assert_array_equal(res.initial_queue([3, 50, 999, 10**6]), [1, 2, 4, 4])
    np.testing.assert_array_equal(res.initial_queue([3, 50, 999], 3), [1, 2, 3])


def test_registry_and_errors():
    w = Workload([1, 2], [1.0, 2.0], [1.0, 1.0], [1.0, 1.0])
    assert classify(w, "published").method == "published"
    with pytest.raises(co.InstanceError, match="unknown classification method 'greedy'"):
        classify(w, "greedy")
    with pytest.raises(TypeError, match="stepp"):
        classify(w, "published", stepp=3)
    with pytest.raises(co.InstanceError, match="strictly increasing"):
        sncf(w, size_thresholds=[10.0, 5.0])
    with pytest.raises(co.InstanceError, match="3 size thresholds make 4 classes, not 2"):
        sncf(w, size_thresholds=[1.0, 2.0, 3.0], classes=2)
    with pytest.raises(co.InstanceError, match="step must be > 1"):
        sncf(w, step=1.0)
    with pytest.raises(co.InstanceError, match="compare must be"):
        sncf(w, compare="ge")
    with pytest.raises(co.InstanceError, match="non-decreasing"):
        evaluate(w, [10, 5])
    with pytest.raises(co.InstanceError, match="unknown width-threshold variant"):
        paper_width_thresholds("fig9")
