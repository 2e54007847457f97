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
    # each allocation is maximal: every flow has a full link (`g.sum() <= 2` alone
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


def _progressive_reference(a: sp.csr_array, cap, w, ub) -> np.ndarray:
    """Progressive filling in NumPy, one saturation level at a time: the method the
    compiled kernel replaced, kept here as an independent reference."""
    rel = 1e-12
    n = a.shape[0]
    x = np.zeros(n)
    frozen = ub <= 0
    residual = np.maximum(cap, 0.0).astype(np.float64, copy=True)
    at = a.T.tocsr()
    dead_links = residual <= 0
    if dead_links.any():
        frozen |= (a @ dead_links.astype(np.float64)) > 0
    while not frozen.all():
        active = ~frozen
        demand = at @ np.where(active, w, 0.0)
        used = demand > 0
        dt = np.inf
        if used.any():
            dt = float((residual[used] / demand[used]).min())
        room = np.where(active, (ub - x) / w, np.inf)
        dt = min(dt, float(room.min()))
        if not np.isfinite(dt):
            x[active] = np.inf
            break
        x[active] += w[active] * dt
        residual -= demand * dt
        full = used & (residual <= rel * np.maximum(cap, 1e-300) + rel * demand * dt)
        residual[full] = 0.0
        newly = active & (x >= ub * (1 - rel))
        x[newly] = np.minimum(x[newly], ub[newly])
        if full.any():
            newly |= active & ((a @ full.astype(np.float64)) > 0)
        if not newly.any():
            newly = active & (room <= dt * (1 + rel))
            if not newly.any():
                break
        frozen |= newly
    return x


@st.composite
def sparse_problems(draw):
    """Sparse usage (explicit zeros, empty rows), links without capacity, weights far
    apart, upper bounds (none, zero, below and above the fair share), and a selection of
    rows in any order."""
    n = draw(st.integers(1, 10))
    L = draw(st.integers(1, 6))
    coef = st.sampled_from([0.0, 0.0, 0.0, 1.0, 1.0, 0.5, 2.0, 0.3])
    A = np.array(draw(st.lists(st.lists(coef, min_size=L, max_size=L), min_size=n, max_size=n)))
    mask = np.array(draw(st.lists(st.lists(st.booleans(), min_size=L, max_size=L),
                                  min_size=n, max_size=n)))
    usage = sp.coo_array(np.where(mask, 1.0, 0.0))
    usage = sp.csr_array((A[usage.row, usage.col], (usage.row, usage.col)), shape=(n, L))
    cap = np.array(draw(st.lists(st.sampled_from([0.0, 0.3, 1.0, 2.5, 7.0]), min_size=L,
                                 max_size=L)))
    w = 10.0 ** np.array(draw(st.lists(st.floats(-4, 4), min_size=n, max_size=n)))
    ub = np.array(draw(st.lists(st.sampled_from([np.inf, np.inf, 0.0, 0.05, 0.4, 3.0]),
                                min_size=n, max_size=n)))
    rows = np.array(draw(st.permutations(range(n))), np.int64)[: draw(st.integers(1, n))]
    return usage, cap, w, ub, rows


@settings(max_examples=300)
@given(sparse_problems())
def test_compiled_progressive_filling_gives_the_numpy_reference(prob):
    from coflowopt import _jit
    from coflowopt.kernels.maxmin import max_min_rows

    usage, cap, w, ub, rows = prob
    k = rows.size
    want = _progressive_reference(sp.csr_array(usage[rows]), cap, w[:k], ub[:k])
    args = (usage.indptr.astype(np.int64), usage.indices.astype(np.int64), usage.data, rows,
            cap, w[:k], ub[:k])
    got = max_min_rows(*args)
    with _jit.interpreting():
        twin = max_min_rows(*args)
    # the kernel saturates links one at a time from a heap, the reference a level per
    # round: the same allocation up to rounding (and the interpreted twin bit for bit)
    assert np.allclose(got, want, rtol=1e-11, atol=1e-300)
    assert np.array_equal(twin, got)
    load = usage[rows].T @ np.where(np.isfinite(got), got, 0.0)
    assert np.all(load <= cap * (1 + 1e-9))


@settings(max_examples=150)
@given(sparse_problems())
def test_max_min_on_general_usage_is_the_reference(prob):
    usage, cap, w, ub, _ = prob
    got = max_min(usage, cap, weights=w, upper=ub)
    want = _progressive_reference(usage, cap, w, ub)
    # (usage that happens to be bipartite goes to the water-filling; the progressive
    # filling saturates links one at a time: rounding apart). A rate can be what a heavy
    # row leaves of a link, a difference of nearly equal numbers: its rounding is a few
    # ulps of the capacity, not of the rate (weights 1e3 and 1e-3 on a link of 2.5: a rate
    # of 2.5e-5, 1.4e-11 apart relative), hence the absolute term
    assert np.allclose(got, want, rtol=1e-11, atol=1e-13 * float(cap.max()))
    load = usage.T @ np.where(np.isfinite(got), got, 0.0)
    assert np.all(load <= cap * (1 + 1e-9))


def test_progressive_filling_leaves_its_scratch_as_it_found_it():
    from coflowopt.kernels.maxmin import progressive_filling

    A = sp.csr_array(np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]))
    slot = np.full(3, -1, np.int64)
    x = progressive_filling(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data,
                            np.array([2, 0], np.int64), np.array([1.0, 1.0, 1.0]),
                            np.array([1.0, 1.0]), np.array([np.inf, np.inf]), slot)
    assert x.tolist() == [0.5, 0.5]  # rows 2 and 0 share link 0
    assert slot.tolist() == [-1, -1, -1]


def test_max_min_without_capacity_and_without_links():
    A = sp.csr_array(np.array([[1.0, 1.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0]]))
    x = max_min(A, [0.0, 2.0], weights=[1.0, 1.0, 1.0, 1.0], upper=[np.inf, np.inf, 4.0, 1.0])
    assert x.tolist() == [0.0, 2.0, 4.0, 0.0]
    assert max_min(A, [0.0, 2.0])[2] == np.inf
