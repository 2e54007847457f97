"""Progressive filling on scratch the caller keeps (:func:`coflowopt.kernels.maxmin.fill_rows`):
the rates of :func:`~coflowopt.kernels.maxmin.progressive_filling` to the last bit, whatever
the scratch held before, and when the caller leaves out rows that stay at 0 from the start."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import _jit
from coflowopt.kernels.maxmin import fill_rows, fill_scratch, progressive_filling


@st.composite
def usages(draw):
    """A sparse usage matrix with coefficients drawn from a few values (so that links
    saturate at one level), as ``(indptr, indices, data, n_links)``."""
    n = draw(st.integers(1, 12))
    L = draw(st.integers(1, 7))
    coef = st.sampled_from([1.0, 1.0, 1.0, 0.5, 2.0, 0.0])
    ptr, idx, val = [0], [], []
    for _ in range(n):
        links = sorted(draw(st.sets(st.integers(0, L - 1), max_size=min(4, L))))
        idx += links
        val += [draw(coef) for _ in links]
        ptr.append(len(idx))
    return (np.array(ptr, np.int64), np.array(idx, np.int64), np.array(val, float), L)


@st.composite
def calls(draw, n, L):
    """One call's rows (some of the matrix's, in any order), capacities (some 0), weights
    and upper bounds (none, 0, or a few values), from a few values each."""
    rows = np.array(draw(st.permutations(range(n))), np.int64)[: draw(st.integers(1, n))]
    k = rows.size
    cap = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 3.0, 2.0, 0.7, 1e-10]),
                                 min_size=L, max_size=L)))
    w = np.array(draw(st.lists(st.sampled_from([1.0, 1.0, 0.7, 0.1, 3.0, 1e-7, 3e5]),
                               min_size=k, max_size=k)))
    ub = np.array(draw(st.lists(st.sampled_from([np.inf, np.inf, np.inf, 0.0, 0.5, 2.0]),
                                min_size=k, max_size=k)))
    return rows, cap, w, ub


@st.composite
def sequences(draw):
    """A usage matrix and a few calls on it."""
    indptr, indices, data, L = draw(usages())
    n = indptr.size - 1
    return (indptr, indices, data, L), draw(st.lists(calls(n, L), min_size=1, max_size=6))


def _garbage(sc):
    """Scratch as a careless earlier call might leave it: every entry but ``slot`` junk."""
    for name, a in sc._asdict().items():
        if name != "slot":
            a[...] = np.nan if a.dtype.kind == "f" else 7


def _fresh(indptr, indices, data, rows, cap, w, ub):
    slot = np.full(cap.size, -1, np.int64)
    x = progressive_filling(indptr, indices, data, rows, cap, w, ub, slot)
    assert np.all(slot == -1)
    return x


def _run_kept(mat, seq, mode):
    """Every call of ``seq`` on one scratch, kept from call to call; their rates."""
    indptr, indices, data, L = mat
    sc = fill_scratch(np.full(L, -1, np.int64), L, indptr.size - 1, max(data.size, 1))
    _garbage(sc)
    out = []
    with mode():
        for rows, cap, w, ub in seq:
            x = np.full(rows.size + 3, -5.0)  # room to spare: only x[:rows.size] is written
            nl = fill_rows(indptr, indices, data, rows, cap, w, ub, x, rows,
                           np.arange(rows.size), *sc)
            assert np.all(sc.slot == -1)
            assert np.all(x[rows.size:] == -5.0)
            used = np.unique(indices[np.concatenate([np.arange(indptr[j], indptr[j + 1])
                                                     for j in rows])])
            assert sorted(sc.links[:nl].tolist()) == used.tolist()
            out.append(x[: rows.size].copy())
    return out


@settings(max_examples=200)
@given(sequences())
def test_scratch_kept_across_calls_gives_progressive_filling_to_the_last_bit(prob):
    mat, seq = prob
    got = _run_kept(mat, seq, _jit.compiling)
    for x, (rows, cap, w, ub) in zip(got, seq, strict=True):
        want = _fresh(*mat[:3], rows, cap, w, ub)
        assert np.array_equal(x, want)


@settings(max_examples=40)
@given(sequences())
def test_scratch_kept_across_calls_interpreted_is_compiled(prob):
    mat, seq = prob
    compiled = _run_kept(mat, seq, _jit.compiling)
    interpreted = _run_kept(mat, seq, _jit.interpreting)
    for a, b in zip(compiled, interpreted, strict=True):
        assert np.array_equal(a, b)


def _stays_at_zero(indptr, indices, data, rows, cap, ub):
    """The rows progressive filling freezes at 0 from the start."""
    out = np.zeros(rows.size, bool)
    for p, j in enumerate(rows):
        e = slice(indptr[j], indptr[j + 1])
        out[p] = not ub[p] > 0 or bool(np.any((data[e] > 0) & ~(cap[indices[e]] > 0)))
    return out


@settings(max_examples=300)
@given(sequences())
def test_rows_left_out_at_zero_change_no_rate_nor_the_order_of_ties(prob):
    """The caller passes only the rows that can get capacity, and all of them (``every[at]``)
    for numbering links: the rates of the others are those of progressive filling on all
    the rows, bit for bit (links that saturate at one level go in their order there)."""
    mat, seq = prob
    indptr, indices, data, L = mat
    sc = fill_scratch(np.full(L, -1, np.int64), L, indptr.size - 1, max(data.size, 1))
    # the rows, as a caller holds them: positions in a longer list of flows
    every = np.arange(indptr.size - 1, dtype=np.int64)[::-1].copy()
    for rows, cap, w, ub in seq:
        want = _fresh(indptr, indices, data, rows, cap, w, ub)
        left = _stays_at_zero(indptr, indices, data, rows, cap, ub)
        assert np.all(want[left] == 0.0)
        at = (every.size - 1 - rows).astype(np.int64)  # every[at] == rows
        keep = np.flatnonzero(~left)
        x = np.empty(keep.size)
        _garbage(sc)
        fill_rows(indptr, indices, data, rows[keep], cap, w[keep], ub[keep], x, every, at, *sc)
        assert np.array_equal(x, want[keep])
        assert np.all(sc.slot == -1)


def test_a_tie_is_broken_by_the_rows_left_out():
    """Links 0 and 3 saturate at one level (3 / 0.8). Progressive filling on all five rows
    takes link 0 first (row 0 names it first); rows 0 and 4 cross link 2, which has no
    capacity, and numbering the other rows alone would take link 3 first: the rates of
    rows 1 and 3 would then differ in their last bits. Left out, rows 0 and 4 still decide."""
    routes = [[0, 1, 2], [1, 3], [0, 3], [0], [1, 2]]
    ptr = np.cumsum([0] + [len(r) for r in routes]).astype(np.int64)
    A = sp.csr_array((np.ones(ptr[-1]), np.concatenate(routes).astype(np.int64), ptr),
                     shape=(5, 4))
    indptr, indices, data = A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data
    cap = np.array([3.0, 2.0, 0.0, 3.0])
    rows = np.arange(5, dtype=np.int64)
    w = np.array([0.7, 0.1, 0.7, 0.1, 3.0])
    ub = np.full(5, np.inf)
    want = _fresh(indptr, indices, data, rows, cap, w, ub)
    assert want.tolist() == [0.0, 0.3750000000000001, 2.625, 0.37500000000000006, 0.0]
    sc = fill_scratch(np.full(4, -1, np.int64), 4, 5, ptr[-1])
    keep = np.array([1, 2, 3], np.int64)
    x = np.empty(3)
    nl = fill_rows(indptr, indices, data, keep, cap, w[keep], ub[keep], x, rows, rows, *sc)
    assert x.tolist() == want[keep].tolist()
    assert sorted(sc.links[:nl].tolist()) == [0, 1, 3]
    # the open rows alone order the tie the other way
    fill_rows(indptr, indices, data, keep, cap, w[keep], ub[keep], x, keep, np.arange(3), *sc)
    assert x.tolist() == [0.37500000000000006, 2.625, 0.3750000000000001]
