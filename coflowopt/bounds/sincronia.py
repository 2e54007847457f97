"""Sincronia's ordering LP bound: the BSSI dual, with and without release times.

See ``models/bound-sincronia.md``. The LP (Sincronia, Agarwal et al.,
SIGCOMM 2018, after Queyranne's parallel inequalities) is

    min sum_k w_k C_k
    s.t. C_k >= e_k                                   (alpha_k >= 0)
         sum_{k in S} v_kl C_k >= rho_S v_l(S) + f_l(S)  for every link l, set S  (beta_lS >= 0)

with ``e_k = r_k + Gamma_k``, ``v_kl = load / capacity``, ``rho_S`` the
earliest release in ``S`` and ``f_l(S) = (v_l(S)^2 + sum_{k in S} v_kl^2) / 2``.
Its dual is ``max sum alpha_k e_k + sum beta_lS (rho_S v_l(S) + f_l(S))`` subject
to ``alpha_k + sum_{l, S containing k} beta_lS v_kl <= w_k``. Every dual-feasible
point bounds the optimum from below (weak duality); both procedures here
build one.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from .._budget import now
from ..instance import Instance
from ..kernels.ties import tie_keys
from ..orders import bssi, drop_load
from ..result import Result, Status
from ._round import rounded_down
from .simple import _magnitude, _operations, earliest_completion

__all__ = ["bssi_release", "sincronia_bound", "sincronia_order"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _dual_of_steps(
    v: FloatArray, release: FloatArray, order: IntArray, bottleneck: IntArray, beta: FloatArray,
) -> float:
    """Release-aware dual value of BSSI's steps (its sets are suffixes of the order)."""
    n = order.size
    total = 0.0
    for step in range(n):
        b = int(bottleneck[step])
        if b < 0 or beta[step] <= 0:
            continue
        S = order[: n - step]
        col = v[S, b]
        vs = float(col.sum())
        bs = float(beta[step])  # beta times a load first (see orders.bssi)
        total += bs * float(release[S].min()) * vs + 0.5 * ((bs * vs) * vs
                                                          + float(((bs * col) * col).sum()))
    return total


def bssi_release(
    v: npt.ArrayLike, weights: npt.ArrayLike, release: npt.ArrayLike,
    earliest: npt.ArrayLike, *, release_factor: float = 1.0,
) -> tuple[IntArray, float]:
    """Release-aware Bottleneck-Select-Scale-Iterate; returns ``(order, dual)``.

    Each step looks at the unordered set ``S``, its most loaded link ``b``
    and its latest release ``r_max``. If ``r_max > release_factor * v_b(S)``
    the coflow released last is put last and its whole residual weight goes
    to its ``C_k >= e_k`` constraint (``alpha_k``); otherwise the step is
    BSSI's (``beta`` on the set ``S`` at ``b``, evaluated with the
    release-aware right-hand side). Residual weights never go negative, so
    the dual point is feasible and its value is a lower bound whatever the
    rule; the rule only shapes the order. Ties (links, ratios) go to the lowest
    index, compared as :func:`coflowopt.orders.bssi` compares them.
    """
    load = np.asarray(v, dtype=np.float64)
    n = load.shape[0]
    w = np.asarray(weights, dtype=np.float64)
    rel = np.asarray(release, dtype=np.float64)
    e = np.asarray(earliest, dtype=np.float64)
    resid = w.copy()
    unordered = np.ones(n, bool)
    total = load.sum(axis=0)
    order = np.empty(n, np.int64)
    dual = 0.0
    for step in range(n):
        b = int(np.argmax(tie_keys(total)))  # ties as in orders.bssi: the lowest index
        col = load[:, b]
        live = np.flatnonzero(unordered)
        vb = float(col[live].sum())
        last = int(live[np.argmax(rel[live])])
        cand = unordered & (col > 0)
        if rel[last] > release_factor * vb or not cand.any():
            dual += float(resid[last]) * float(e[last])
            resid[last] = 0.0
            c = last
        else:
            ratio = np.full(n, np.inf)
            ratio[cand] = resid[cand] / col[cand]
            c = int(np.argmin(tie_keys(ratio)))
            beta = max(float(ratio.min()), 0.0)  # the least ratio (see orders.bssi)
            s_col = col[live]
            dual += beta * float(rel[live].min()) * vb + 0.5 * (
                (beta * vb) * vb + float(((beta * s_col) * s_col).sum()))
            resid[live] -= beta * col[live]
            np.maximum(resid, 0.0, out=resid)
        order[n - 1 - step] = c
        unordered[c] = False
        total = drop_load(total, load, c, unordered)
    return order, float(dual)


def _loads(inst: Instance) -> FloatArray:
    return inst.load / inst.fabric.capacity


def sincronia_order(inst: Instance, *, release_factor: float = 1.0) -> IntArray:
    """Sincronia's order: BSSI, or its release-aware variant when releases differ."""
    v = _loads(inst)
    if inst.num_coflows == 0:
        return np.zeros(0, np.int64)
    if np.all(inst.release == inst.release[0]):
        return bssi(v, inst.weight).order
    order, _ = bssi_release(v, inst.weight, inst.release, earliest_completion(inst),
                            release_factor=release_factor)
    return order


def sincronia_bound(
    inst: Instance, *, time_limit: float | None = None, release_factor: float = 1.0
) -> Result:
    """Largest of the BSSI dual (release-aware right-hand sides) and the release-aware variant's."""
    start = now()
    if inst.num_coflows == 0:
        return Result(Status.BOUND, math.nan, 0.0, 0.0, "sincronia")
    v = _loads(inst)
    w = inst.weight
    plain = bssi(v, w)
    rel = inst.release
    e = earliest_completion(inst)
    zero_release = plain.dual
    shifted = _dual_of_steps(v, rel, plain.order, plain.bottleneck, plain.beta)
    values = {"bssi": zero_release, "bssi_release_rhs": shifted}
    if not np.all(rel == rel[0]):
        _, dual_r = bssi_release(v, w, rel, e, release_factor=release_factor)
        values["bssi_release_variant"] = dual_r
    best = rounded_down(float(max(values.values())), _magnitude(inst, e), _operations(inst))
    return Result(Status.BOUND, math.nan, best, now() - start, "sincronia",
                  info={"duals": values})
