"""The shared allocation primitives: max-min, greedy, MADD."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from coflowopt import Fabric
from coflowopt.alloc import greedy, madd, max_min


def test_max_min_on_the_3x2_shuffle_gives_a_third_each():
    fab = Fabric.uniform(3)
    A = fab.routes([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])
    assert np.allclose(max_min(A, fab.capacity), 1 / 3)


def test_max_min_textbook_example_with_weights_and_caps():
    # links of capacity 1: flow 0 uses both, flows 1 and 2 one each
    A = sp.csr_array(np.array([[1, 1], [1, 0], [0, 1]], float))
    assert np.allclose(max_min(A, [1.0, 1.0]), [0.5, 0.5, 0.5])
    assert np.allclose(max_min(A, [1.0, 2.0]), [0.5, 0.5, 1.5])
    assert np.allclose(max_min(A, [1.0, 1.0], weights=[2, 1, 1]), [2 / 3, 1 / 3, 1 / 3])
    assert np.allclose(max_min(A, [1.0, 1.0], upper=[0.1, 5, 5]), [0.1, 0.9, 0.9])
    free = sp.csr_array((1, 2))
    assert max_min(free, [1.0, 1.0]).tolist() == [np.inf]
    assert max_min(free, [1.0, 1.0], upper=[3.0]).tolist() == [3.0]


@st.composite
def problems(draw):
    n = draw(st.integers(1, 6))
    L = draw(st.integers(1, 4))
    A = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from([0.0, 0.0, 1.0, 0.5, 2.0]), min_size=L, max_size=L),
                min_size=n,
                max_size=n,
            )
        )
    )
    A[A.sum(axis=1) == 0, 0] = 1.0  # every row uses a link
    cap = np.array(draw(st.lists(st.floats(0.5, 3.0), min_size=L, max_size=L)))
    w = np.array(draw(st.lists(st.floats(0.5, 2.0), min_size=n, max_size=n)))
    return A, cap, w


@settings(max_examples=80)
@given(problems())
def test_max_min_is_feasible_and_every_row_is_bottlenecked(prob):
    A, cap, w = prob
    x = max_min(sp.csr_array(A), cap, weights=w)
    load = A.T @ x
    assert np.all(load <= cap * (1 + 1e-9))
    # max-min fairness: each row crosses a saturated link on which its x/w is maximal
    for j in range(len(x)):
        ok = False
        for link in np.flatnonzero(A[j] > 0):
            if load[link] >= cap[link] * (1 - 1e-9):
                users = np.flatnonzero(A[:, link] > 0)
                if x[j] / w[j] >= max(x[users] / w[users]) * (1 - 1e-9):
                    ok = True
        assert ok


@settings(max_examples=60)
@given(problems())
def test_max_min_first_level_equals_the_lp_optimum(prob):
    A, cap, w = prob
    x = max_min(sp.csr_array(A), cap, weights=w)
    # maximise t subject to A^T (w t) <= cap: the smallest share is that t
    res = linprog([-1.0], A_ub=(A.T @ w)[:, None], b_ub=cap, bounds=[(0, None)], method="highs")
    assert (x / w).min() == pytest.approx(res.x[0], rel=1e-9)


def test_greedy_leaves_no_rounding_remainder():
    # link 0 has one ulp more than row 0 can take (row 0 is held to 0.5 by link 2): what
    # is left is rounding, so row 1 gets nothing rather than 1.1e-16 (reference and
    # compiled paths alike)
    usage = np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    cap = np.array([0.5000000000000001, 1.0, 0.5])
    assert greedy(usage, cap, [0, 1]).tolist() == [0.5, 0.0]
    # an explicitly stored zero coefficient sends greedy down its row-wise path
    with_zero = sp.csr_array((np.array([1.0, 1.0, 1.0, 1.0, 0.0]), np.array([0, 2, 0, 1, 2]),
                              np.array([0, 2, 5])), shape=(2, 3))
    assert greedy(with_zero, cap, [0, 1]).tolist() == [0.5, 0.0]


def test_greedy_follows_the_order():
    fab = Fabric.uniform(3)
    A = fab.routes([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])
    assert greedy(A, fab.capacity, [4, 5, 0, 1, 2, 3]).tolist() == [0, 1, 0, 0, 1, 0]
    assert greedy(A, fab.capacity, [0]).tolist() == [1, 0, 0, 0, 0, 0]
    assert greedy(A, fab.capacity, [0, 3], upper=[0.25] * 6).tolist() == [0.25, 0, 0, 0.25, 0, 0]


@settings(max_examples=60)
@given(problems(), st.randoms())
def test_greedy_is_feasible_and_maximal(prob, rnd):
    A, cap, _ = prob
    order = list(range(A.shape[0]))
    rnd.shuffle(order)
    x = greedy(sp.csr_array(A), cap, order)
    load = A.T @ x
    assert np.all(load <= cap * (1 + 1e-9))
    for j in range(len(x)):  # no row could get more: one of its links is full
        links = np.flatnonzero(A[j] > 0)
        assert np.any(load[links] >= cap[links] * (1 - 1e-9))


def test_madd_finishes_everything_at_gamma():
    fab = Fabric.uniform(3)
    A = fab.routes([0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])
    x, gamma = madd(A, [1, 1, 1, 1, 2, 2], fab.capacity)
    assert gamma == 4.0
    assert x.tolist() == [0.25, 0.25, 0.25, 0.25, 0.5, 0.5]
    x, gamma = madd(A, [1, 1, 1, 1, 2, 2], np.r_[fab.capacity[:5], 0.0])
    assert gamma == 4.0  # the link without capacity is not used
    x, gamma = madd(A, [1, 1, 1, 1, 2, 2], np.r_[0.0, fab.capacity[1:]])
    assert gamma == np.inf and not x.any()


def test_greedy_over_all_orders_never_beats_max_min_minimum_share_fairness():
    # flows 0->0, 0->1, 1->1: max-min gives each 1/2; a greedy order serves its first flow at
    # full rate and so starves a flow sharing a link with it (the smallest share is 0), and
    # each allocation is maximal: every flow has a full link (a review: `g.sum() <= 2` alone
    # held for any feasible allocation, zeros included)
    fab = Fabric.uniform(2)
    A = fab.routes([0, 0, 1], [0, 1, 1])
    mm = max_min(A, fab.capacity)
    assert mm == pytest.approx([0.5, 0.5, 0.5])
    for order in itertools.permutations(range(3)):
        g = greedy(A, fab.capacity, order)
        assert g.min() == 0.0 < mm.min()
        assert g[order[0]] == 1.0  # the first flow takes its links' whole capacity
        load = A.T @ g
        full = np.isclose(load, fab.capacity)
        assert all(full[A[[f]].indices].any() for f in range(3))  # maximal
    assert greedy(A, fab.capacity, (0, 1, 2)) == pytest.approx([1.0, 0.0, 1.0])
    assert greedy(A, fab.capacity, (1, 0, 2)) == pytest.approx([0.0, 1.0, 0.0])


def test_max_min_with_weights_twelve_orders_apart_respects_every_link():
    # the bipartite water-filling closes a link whose open weight falls to 1e-12 of its
    # start: here the light row on ingress 1 would escape it (it got 1.118 with 2.295 left
    # for all three rows); such spreads go to progressive filling
    rows = [(1, 3), (1, 2), (1, 2)]
    usage = sp.csr_array((np.ones(6), np.array([link for r in rows for link in r]),
                          np.arange(0, 7, 2)), shape=(3, 4))
    residual = np.array([0.0, 2.294923503537739, 1.8789705337246226, 1.1178614119238586])
    w = np.array([1.6307249643506703e-07, 4712381.986845291, 58707.450385426426])
    x = max_min(usage, residual, weights=w)
    assert np.all(usage.T @ x <= residual * (1 + 1e-12))
    assert x.sum() == pytest.approx(residual[1], rel=1e-9)  # the ingress is the bottleneck
    assert x[1] + x[2] == pytest.approx(residual[2], rel=1e-9)  # egress 2 fills first
