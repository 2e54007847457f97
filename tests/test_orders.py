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
