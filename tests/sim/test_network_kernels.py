"""Kernels over rows of a general route incidence (multi-hop fabrics): the same numbers as
the SciPy and NumPy code they replaced, compiled or interpreted."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import _jit
from coflowopt.alloc import max_min
from coflowopt.kernels.rates import csr_link_sum, csr_rows, madd_csr
from coflowopt.sim import simulate
from coflowopt.sim.kernels.varys import SAT, proportional_backfill_csr
from tests.strategies import network_instances


def _csr(A: sp.csr_array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(float)


@st.composite
def network_rows(draw):
    """A random network instance's routes, some of its flows (repeats allowed, any order),
    values per flow and residual capacities (some links full)."""
    inst = draw(network_instances())
    F = inst.num_flows
    rows = np.array(draw(st.lists(st.integers(0, F - 1), min_size=1, max_size=2 * F)), np.int64)
    values = np.array(draw(st.lists(st.sampled_from([0.0, 0.1, 1.0, 2.5, 1e-7, 3e5]),
                                    min_size=rows.size, max_size=rows.size)))
    cap = inst.fabric.capacity
    scale = np.array(draw(st.lists(st.sampled_from([0.0, 1e-10, 0.3, 1.0]), min_size=cap.size,
                                   max_size=cap.size)))
    return inst.routes, rows, values, cap, cap * scale


@settings(max_examples=60)
@given(network_rows())
def test_link_sums_rows_and_madd_over_rows_are_scipys(prob):
    A, rows, values, cap, residual = prob
    L = cap.size
    for mode in (_jit.compiling, _jit.interpreting):
        with mode():
            got = csr_link_sum(*_csr(A), rows, values, L)
            ptr, idx, val = csr_rows(*_csr(A), rows)
            x = np.empty(rows.size)
            gamma = madd_csr(*_csr(A), rows, values, residual, x)
        assert np.array_equal(got, A[rows].T @ values)
        sub = A[rows]
        assert np.array_equal(ptr, sub.indptr) and np.array_equal(idx, sub.indices)
        assert np.array_equal(val, sub.data)
        # MADD: the largest load over capacity; nothing where a loaded link has none
        need = got > 0
        with np.errstate(divide="ignore"):
            want = (np.max(np.where(residual[need] > 0, got[need] / residual[need], np.inf))
                    if need.any() else 0.0)
        assert gamma == want
        assert np.array_equal(x, values / want if 0 < want < np.inf else np.zeros(rows.size))


def _backfill_reference(A, parts, residual, cap):
    """Varys's proportional backfilling as NumPy and SciPy computed it on networks: groups
    (coflow, first link of the route), each water-filled by ``alloc.max_min``."""
    extra = [np.zeros(f.size) for f, _ in parts]
    dead = residual <= 0
    if dead.all():
        return extra
    groups = []
    for rank, (f, d) in enumerate(parts):
        pos = np.flatnonzero(((A[f] @ dead.astype(float)) == 0) & (d > 0))
        first = A.indices[A.indptr[f[pos]]]
        for link in np.unique(first).tolist():
            groups.append((link, rank, pos[first == link]))
    groups.sort(key=lambda g: (g[0], g[1]))
    for link, rank, pos in groups:
        if residual[link] <= 0:
            continue
        f, d = parts[rank][0][pos], parts[rank][1][pos]
        x = max_min(A[f], residual, weights=d)
        extra[rank][pos] += x
        residual -= A[f].T @ x
        residual[residual <= SAT * cap] = 0.0
        np.maximum(residual, 0.0, out=residual)
    return extra


@settings(max_examples=80)
@given(network_rows(), st.integers(1, 4))
def test_proportional_backfill_over_routes_is_the_water_filling_per_group(prob, ncoflows):
    A, rows, d, cap, residual = prob
    rows = np.unique(rows)  # a flow belongs to one coflow
    cuts = np.linspace(0, rows.size, ncoflows + 1).astype(int)
    parts = [(rows[a:b], d[a:b]) for a, b in itertools.pairwise(cuts)]
    f = np.concatenate([p[0] for p in parts])
    dd = np.concatenate([p[1] for p in parts])
    cptr = cuts.astype(np.int64)
    want_res = residual.copy()
    want = np.concatenate(_backfill_reference(A, parts, want_res, cap))
    for mode in (_jit.compiling, _jit.interpreting):
        res = residual.copy()
        out = np.zeros(f.size)
        with mode():
            proportional_backfill_csr(*_csr(A), f, dd, cptr, res, cap, out)
        # groups whose routes are two links with coefficient 1 took the bipartite water-filling
        assert np.allclose(out, want, rtol=1e-12, atol=1e-15)
        assert np.allclose(res, want_res, rtol=1e-12, atol=1e-12)
        assert np.all(A[f].T @ out <= residual * (1 + 1e-9) + 1e-12)


@settings(max_examples=15)
@given(inst=network_instances(), name=st.sampled_from(["varys", "fifo", "fair", "sincronia",
                                                        "aalo", "varys-deadline"]))
def test_network_simulations_are_the_same_interpreted_and_compiled(inst, name):
    runs = [simulate(inst, name, jit=jit) for jit in ("interpret", "compile")]
    a, b = (r.completion.tobytes() + r.flow_completion.tobytes() for r in runs)
    assert a == b


GREEDY_ORDERS = ("sincronia", "static-order")
"""The policies that hand the engine a priority order and decide only at coflow events."""


@settings(max_examples=20)
@given(network_instances(deadlines=True))
def test_the_greedy_stretch_over_routes_is_the_engines_greedy(inst):
    """Priority policies on multi-hop fabrics run ``greedy_csr_stretch`` through flow
    completions; the engine's reference path recomputes ``alloc.greedy`` at each of them.
    The same arithmetic, so the same completion times, and a feasible schedule."""
    from coflowopt import check_feasible

    for name in GREEDY_ORDERS:
        a = simulate(inst, name, compiled=True)
        b = simulate(inst, name, compiled=False)
        assert np.allclose(a.flow_completion, b.flow_completion, rtol=1e-12, atol=1e-12), name
        report = check_feasible(inst, a.schedule)
        assert report.ok, (name, report)


