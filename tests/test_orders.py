"""Sincronia's BSSI ordering and its dual bound."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt.orders import bssi


def order_value(v: np.ndarray, w: np.ndarray, order) -> float:
    """sum w_k C_k with C_k the cumulative load, in this order, on k's busiest link.

    These completion times satisfy every parallel inequality of the ordering
    LP, so the LP optimum (and the BSSI dual below it) is at most this value.
    """
    done = np.zeros(v.shape[1])
    total = 0.0
    for k in order:
        done = done + v[k]
        total += w[k] * float(done[v[k] > 0].max(initial=0.0))
    return total


@st.composite
def loads(draw):
    n = draw(st.integers(1, 5))
    L = draw(st.integers(1, 4))
    v = np.array(
        draw(
            st.lists(
                st.lists(st.sampled_from([0.0, 1.0, 2.0, 0.5, 3.0]), min_size=L, max_size=L),
                min_size=n,
                max_size=n,
            )
        )
    )
    v[v.sum(axis=1) == 0, 0] = 1.0
    w = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 0.5]), min_size=n, max_size=n)))
    return v, w


def test_single_link_is_smith_rule():
    v = np.array([[3.0], [1.0], [2.0]])
    w = np.array([1.0, 1.0, 4.0])
    r = bssi(v, w)
    # Smith's rule: decreasing w / p -> 2 (4/2), 1 (1/1), 0 (1/3)
    assert r.order.tolist() == [2, 1, 0]
    # on one machine the parallel inequalities are exact: dual = optimum
    assert r.dual == pytest.approx(4 * 2 + 1 * 3 + 1 * 6)


@settings(max_examples=80)
@given(loads())
def test_dual_is_below_every_order_on_every_link(prob):
    v, w = prob
    r = bssi(v, w)
    assert sorted(r.order.tolist()) == list(range(len(w)))
    # any schedule's completion times satisfy C_k >= (load before and including k on
    # each link); the best order by that estimate is still >= the dual
    best = min(order_value(v, w, p) for p in itertools.permutations(range(len(w))))
    assert r.dual <= best * (1 + 1e-9)


# ---- Sincronia's order at numeric extremes and ties


def _scaled_case(scale: float):
    from coflowopt import Coflow, Fabric, Instance

    rows = [(3.0, [(1, 0, 2.0), (1, 0, 3.0), (1, 1, 1.0)]), (2.0, [(1, 0, 2.0), (1, 0, 1.0)]),
            (1.0, [(0, 1, 2.0), (0, 1, 4.0), (1, 1, 2.0)])]
    return Instance(Fabric.uniform(2), tuple(
        Coflow.from_flows(f"c{k}", [(a, b, z * scale) for a, b, z in fl], weight=w)
        for k, (w, fl) in enumerate(rows)))


def test_bounds_of_loads_near_1e160_stay_finite_and_below_the_optimum():
    # loads beyond 1.34e154 squared to inf: the Sincronia and port bounds were inf and the
    # certified solver called its order (sum 47, optimum 44) optimal
    from coflowopt.bounds.simple import port_bound
    from coflowopt.bounds.sincronia import sincronia_bound
    from coflowopt.solvers import solve

    small, big = _scaled_case(1.0), _scaled_case(1e160)
    assert solve(small, method="exact").objective == pytest.approx(44.0, rel=1e-9)
    for bound in (sincronia_bound, port_bound):
        b0, b1 = bound(small).bound, bound(big).bound
        assert np.isfinite(b1) and b1 == pytest.approx(b0 * 1e160, rel=1e-12)
        assert b1 <= 44e160 * (1 + 1e-12)
    res = solve(big, method="sincronia")
    assert res.info["certified_ratio"] == pytest.approx(47 / 44, rel=1e-9)


def test_a_near_tie_does_not_lift_the_dual_above_the_optimum():
    # ratios (1 + 1e-10) / 1 and 1 / 1 tie at 30 bits; beta was the winner's larger ratio,
    # which left the other weight at -1e-10: a dual of 3.0000000003 above the optimum
    # 3.0000000001 (the heavier coflow first)
    res = bssi(np.array([[1.0], [1.0]]), np.array([1 + 1e-10, 1.0]))
    assert res.dual <= 3.0000000001
    assert res.dual == pytest.approx(3.0, rel=1e-9)


def test_removing_a_huge_load_leaves_the_small_ones_counted():
    # X = 1e20 and Y = 1 on up0/down0, Z = 0.6 on up1/down0 (links up0, up1, down0, down1):
    # after X, down0 (1.6) must be the bottleneck, not up1 (0.6); its running total read 0
    v = np.array([[1e20, 0, 1e20, 0], [1.0, 0, 1.0, 0], [0, 0.6, 0.6, 0]])
    res = bssi(v)
    assert res.order.tolist() == [2, 1, 0]
    assert res.bottleneck[1] == 2


def test_release_variant_breaks_exact_ties_by_index():
    from coflowopt.bounds.sincronia import bssi_release

    v = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    w = np.array([1.0, 1.0, 1.0])
    rel = np.array([0.0, 0.0, 0.0])
    order, dual = bssi_release(v, w, rel, np.ones(3))
    assert order.tolist() == bssi(v, w).order.tolist()
    assert dual == pytest.approx(bssi(v, w).dual, rel=1e-12)
