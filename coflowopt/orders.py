"""Coflow orderings shared by the solvers, the bounds and the simulator's policies."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .kernels.ties import tie_keys

__all__ = ["BSSIResult", "bssi", "drop_load"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BSSIResult:
    """Outcome of Bottleneck-Select-Scale-Iterate.

    ``order`` lists coflow positions (of the rows given) first to last.
    ``dual`` is the value of the dual solution built along the way: a lower
    bound on ``sum w_k C_k`` of the ordering LP with parallel inequalities
    (all coflows present at time 0), hence on the optimum.
    """

    order: npt.NDArray[np.int64]
    dual: float
    bottleneck: npt.NDArray[np.int64]
    """Bottleneck link chosen at each step (step ``t`` fixes position ``n - 1 - t``)."""
    beta: FloatArray
    """Dual variable of each step's (link, set) inequality."""


ZERO_WEIGHT = 1e-12
"""BSSI: a residual weight within this share of its coflow's weight is 0 (see :func:`bssi`)."""


def bssi(v: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> BSSIResult:
    """Sincronia's Bottleneck-Select-Scale-Iterate (Agarwal et al., SIGCOMM 2018).

    Parameters
    ----------
    v
        ``(n, L)`` loads in time units: ``v[k, l]`` = load of coflow ``k`` on
        link ``l`` divided by the link's capacity.
    weights
        ``(n,)`` positive weights (default 1).

    Each step takes the unordered set ``S`` and its most loaded link ``b``
    (largest ``sum_{k in S} v[k, b]``), places last the coflow minimising
    ``w'_c / v[c, b]`` (residual weights ``w'``; coflows without load on ``b``
    are never chosen), sets ``beta`` to that minimum and subtracts
    ``beta * v[c, b]`` from every ``w'_c``, ``c`` in ``S``. The dual objective
    adds ``beta * f_b(S)`` with ``f_b(S) = 1/2 [(sum v_b)^2 + sum v_b^2]``.
    Ties go to the lowest index (link or coflow); loads and ratios are
    compared at 30 significant bits (:func:`coflowopt.kernels.ties.tie_key`),
    so rounding in the running totals and residual weights does not break an
    exact tie. A residual weight within a relative :data:`ZERO_WEIGHT` of the
    coflow's weight counts as 0: relative bits cannot tie a rounding crumb of
    1e-17 with an exact 0 (two coflows whose weights a step used up exactly
    would otherwise be ordered by the crumbs).
    """
    load = np.asarray(v, dtype=np.float64)
    if load.ndim != 2:
        raise ValueError(f"v must be a 2-D (coflows x links) array, got shape {load.shape}")
    n = load.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64).copy()
    if w.shape != (n,) or (n and w.min() <= 0):
        raise ValueError("weights must be positive, one per coflow")
    resid = w.astype(np.float64, copy=True)
    unordered = np.ones(n, bool)
    total = load.sum(axis=0)
    order = np.empty(n, np.int64)
    bott = np.empty(n, np.int64)
    betas = np.empty(n)
    dual = 0.0
    for step in range(n):
        b = int(np.argmax(tie_keys(total)))
        col = load[:, b]
        cand = unordered & (col > 0)
        if not cand.any():
            # remaining coflows carry no load at all: any order, no dual value
            rest = np.flatnonzero(unordered)
            order[: rest.size] = rest
            bott[step:] = -1
            betas[step:] = 0.0
            break
        ratio = np.full(n, np.inf)
        ratio[cand] = resid[cand] / col[cand]
        c = int(np.argmin(tie_keys(ratio)))
        # beta is the least ratio, not the tie's winner's (which may lie 2^-30 above it
        # and drive another residual weight 1e-10 below 0: a dual bound above the optimum);
        # the winner keeps a crumb of weight, which only lowers the bound
        beta = max(float(ratio.min()), 0.0)
        s_col = col[unordered]
        # beta times a load first: loads near 1e154 square to inf, while beta is a
        # weight over a load and the products stay the size of a weighted completion time
        vs = float(s_col.sum())
        dual += 0.5 * ((beta * vs) * vs + float(((beta * s_col) * s_col).sum()))
        resid[unordered] -= beta * col[unordered]
        resid[np.abs(resid) <= ZERO_WEIGHT * w] = 0.0
        order[n - 1 - step] = c
        bott[step] = b
        betas[step] = beta
        unordered[c] = False
        total = drop_load(total, load, c, unordered)
    return BSSIResult(order, float(dual), bott, betas)


def drop_load(total: FloatArray, load: FloatArray, c: int, rest: npt.NDArray[np.bool_]) -> FloatArray:
    """``total`` (link sums over the coflows ``rest`` and ``c``) less coflow ``c``'s loads.

    Links whose sum falls below 1e-3 of what it was are summed afresh over ``rest``: the
    difference keeps the rounding of the larger sum (a load of 1e20 removed left a link's
    1.6 at 0, and BSSI chose another bottleneck).
    """
    before = total.copy()
    total -= load[c]
    fresh = np.flatnonzero(total < 1e-3 * before)
    if fresh.size:
        total[fresh] = load[np.ix_(rest, fresh)].sum(axis=0)
    return total
