"""Varys's proportional backfilling on multi-hop fabrics: the compiled pass
(:func:`coflowopt.sim.kernels.varys.proportional_backfill_csr`, which fills only the open
rows of each group on scratch kept for the decision) gives the rates of progressive
filling run on every (coflow, first link) group, to the last bit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import _jit
from coflowopt.kernels.maxmin import progressive_filling
from coflowopt.sim import simulate
from coflowopt.sim.kernels import varys as kv
from tests.strategies import network_instances


def _csr(A: sp.csr_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(float)


def backfill_by_groups(indptr, indices, data, f, d, cptr, residual, cap, extra):
    """The definition: candidates (``d > 0``, no link without room), groups (first link,
    then coflow), each group's weighted max-min by ``progressive_filling`` on every one of
    its rows, its use summed in flow order and taken off (the first processed group
    settles every link, later ones the links their rows use)."""
    L = residual.size
    if not np.any(residual > 0):
        return
    dead = residual <= 0
    cand, first, rank = [], [], []
    for c in range(cptr.size - 1):
        for p in range(cptr[c], cptr[c + 1]):
            j = f[p]
            e = slice(indptr[j], indptr[j + 1])
            if d[p] > 0 and not np.any((data[e] > 0) & dead[indices[e]]):
                cand.append(p)
                first.append(indices[indptr[j]])
                rank.append(c)
    order = np.argsort(np.array(first, np.int64), kind="stable")
    slot = np.full(L, -1, np.int64)
    swept = False
    groups = itertools.groupby(order.tolist(), key=lambda i: (first[i], rank[i]))
    for (link, _), members in groups:
        pos = np.array([cand[i] for i in members], np.int64)
        if not residual[link] > 0:
            continue
        rows = f[pos]
        x = progressive_filling(indptr, indices, data, rows, residual, d[pos],
                                np.full(pos.size, np.inf), slot)
        use = np.zeros(L)
        touched = []
        for r, j in enumerate(rows):
            extra[pos[r]] += x[r]
            for e in range(indptr[j], indptr[j + 1]):
                use[indices[e]] += data[e] * x[r]
                touched.append(indices[e])
        for lk in (range(L) if not swept else sorted(set(touched))):
            v = residual[lk] - use[lk]
            if v <= kv.SAT * cap[lk]:
                v = 0.0
            residual[lk] = max(v, 0.0)
        swept = True


@st.composite
def routed_groups(draw):
    """Random routes (rows of 1-4 links among a few, some coefficients not 1), coflows,
    remaining data and residuals drawn from a few values each, so that many links
    saturate at one level and many rows cross a full link."""
    L = draw(st.integers(2, 9))
    F = draw(st.integers(1, 40))
    ptr, idx, val = [0], [], []
    for _ in range(F):
        links = sorted(draw(st.sets(st.integers(0, L - 1), min_size=1, max_size=min(4, L))))
        idx += links
        val += [draw(st.sampled_from([1.0, 1.0, 1.0, 0.5, 2.0])) for _ in links]
        ptr.append(len(idx))
    A = sp.csr_array((np.array(val), np.array(idx, np.int64), np.array(ptr, np.int64)),
                     shape=(F, L))
    cap = np.array(draw(st.lists(st.sampled_from([1.0, 2.0]), min_size=L, max_size=L)))
    scale = np.array(draw(st.lists(st.sampled_from([0.0, 1e-10, 0.25, 0.5, 1.0]),
                                   min_size=L, max_size=L)))
    f = np.array(draw(st.permutations(range(F))), np.int64)[: draw(st.integers(1, F))]
    d = np.array(draw(st.lists(st.sampled_from([0.0, 1e-7, 0.5, 1.0, 1.0, 2.0, 3e5]),
                               min_size=f.size, max_size=f.size)))
    k = draw(st.integers(1, min(4, f.size)))
    cptr = np.array([0, *sorted(draw(st.lists(st.integers(0, f.size), min_size=k - 1,
                                              max_size=k - 1))), f.size], np.int64)
    return A, f, d, cptr, cap * scale, cap


@st.composite
def network_groups(draw):
    """Flows of a random spine-leaf or k = 4 fat-tree instance (ECMP or spray) in coflows,
    with remaining data and residuals drawn from a few values."""
    inst = draw(network_instances())
    F = inst.num_flows
    f = np.array(draw(st.permutations(range(F))), np.int64)
    d = np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 1.0, 1.0, 2.5, 1e-7, 3e5]),
                               min_size=F, max_size=F)))
    cap = inst.fabric.capacity
    scale = np.array(draw(st.lists(st.sampled_from([0.0, 1e-10, 0.3, 1.0, 1.0]),
                                   min_size=cap.size, max_size=cap.size)))
    k = draw(st.integers(1, min(4, F)))
    cuts = np.linspace(0, F, k + 1).astype(np.int64)
    return inst.routes, f, d, cuts, cap * scale, cap


def _both(A, f, d, cptr, residual, cap):
    want_res, want = residual.copy(), np.zeros(f.size)
    backfill_by_groups(*_csr(A), f, d, cptr, want_res, cap, want)
    got_res, got = residual.copy(), np.zeros(f.size)
    kv.proportional_backfill_csr(*_csr(A), f, d, cptr, got_res, cap, got)
    return (got, got_res), (want, want_res)


def _same(prob):
    """Both passes give the same rates and residuals, bit for bit; returns the rates."""
    (got, got_res), (want, want_res) = _both(*prob)
    assert np.array_equal(got, want)
    assert np.array_equal(got_res, want_res)
    return got


@settings(max_examples=300, deadline=None)
@given(routed_groups())
def test_the_fast_pass_is_progressive_filling_per_group_to_the_last_bit(prob):
    _same(prob)


@settings(max_examples=100, deadline=None)
@given(network_groups())
def test_the_fast_pass_on_fabric_routes_is_progressive_filling_per_group(prob):
    got = _same(prob)
    A, f, _, _, residual, _ = prob
    # and it gives no link more than it had
    assert np.all(A[f].T @ got <= np.maximum(residual, 0) * (1 + 1e-9) + 1e-12)


@settings(max_examples=30, deadline=None)
@given(routed_groups())
def test_the_fast_pass_interpreted_is_the_compiled_one(prob):
    A, f, d, cptr, residual, cap = prob
    outs = []
    for mode in (_jit.compiling, _jit.interpreting):
        res, out = residual.copy(), np.zeros(f.size)
        with mode():
            kv.proportional_backfill_csr(*_csr(A), f, d, cptr, res, cap, out)
        outs.append((out, res))
    assert np.array_equal(outs[0][0], outs[1][0]) and np.array_equal(outs[0][1], outs[1][1])


def test_links_saturating_at_one_level_are_taken_in_progressive_fillings_order():
    """A group whose first row crosses a full link: progressive filling numbers that
    row's links first, so of links 3 and 2, which saturate at one level, it takes link 3
    first, where numbering the open rows alone would take link 2 (the fast pass then
    numbers every row of the group). Here both orders give the same rates."""
    # rows: 0 -> {0, 1, 3} (link 1 full), 1 -> {0, 2}, 2 -> {0, 3}, 3 -> {0, 2, 3}
    routes = [[0, 1, 3], [0, 2], [0, 3], [0, 2, 3]]
    ptr = np.cumsum([0] + [len(r) for r in routes]).astype(np.int64)
    A = sp.csr_array((np.ones(ptr[-1]), np.concatenate(routes).astype(np.int64), ptr),
                     shape=(4, 4))
    cap = np.array([10.0, 1.0, 2.0, 2.0])
    residual = np.array([10.0, 1.0, 2.0, 2.0])
    f = np.arange(4, dtype=np.int64)
    d = np.array([1.0, 1.0, 1.0, 1.0])
    cptr = np.array([0, 4], np.int64)
    (got, got_res), (want, want_res) = _both(A, f, d, cptr, residual, cap)
    assert np.array_equal(got, want) and np.array_equal(got_res, want_res)
    # link 1 is not full at the start: after filling it, row 0 still has room there
    residual[1] = 0.0
    (got, got_res), (want, want_res) = _both(A, f, d, cptr, residual, cap)
    assert np.array_equal(got, want) and np.array_equal(got_res, want_res)
    assert np.array_equal(got, [0.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("name", ["varys", "fifo", "varys-deadline"])
@settings(max_examples=15, deadline=None)
@given(inst=network_instances())
def test_simulations_are_those_of_progressive_filling_per_group(name, inst):
    fast = simulate(inst, name, record=False)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(kv, "proportional_backfill_csr", backfill_by_groups)
        slow = simulate(inst, name, record=False)
    assert np.array_equal(fast.completion, slow.completion)
    assert np.array_equal(fast.flow_completion, slow.flow_completion)
