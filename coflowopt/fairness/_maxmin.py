"""Weighted max-min (progressive filling) for fairness, exact when asked.

The water-filling itself is :func:`coflowopt.alloc.max_min` (the one
implementation in coflowopt). For exact problems its float64 result is
rationalized and then *certified* in ``Fraction`` arithmetic with the
bottleneck characterisation of weighted max-min fairness: ``x`` is feasible
and every row is either at its upper bound or uses a saturated link on
which its normalised rate ``x_j / w_j`` is the largest. That condition
determines the max-min fair vector uniquely, so a certified vector is the
exact answer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy.typing as npt
import scipy.sparse as sp

from ..alloc import max_min
from ._arith import as_float, rationalize

__all__ = ["max_min_certificate", "solve_max_min"]


def solve_max_min(
    usage: npt.NDArray[Any],
    capacity: npt.NDArray[Any],
    *,
    weights: npt.NDArray[Any],
    upper: npt.NDArray[Any],
    exact: bool,
) -> tuple[npt.NDArray[Any], bool]:
    """Max-min fair rates; returns ``(x, certified_exact)``.

    ``usage`` is a dense ``(n, L)`` array (float or Fraction) or, in float
    mode, a scipy sparse matrix. In exact mode ``x`` holds Fractions when the
    certificate holds, floats otherwise.
    """
    a = sp.csr_array(usage) if sp.issparse(usage) else sp.csr_array(as_float(usage))
    x = max_min(a, as_float(capacity), weights=as_float(weights), upper=as_float(upper))
    if not exact:
        return x, False
    if sp.issparse(usage):
        raise ValueError("exact certification needs a dense usage matrix")
    cand = rationalize(x)
    if not max_min_certificate(usage, capacity, weights, upper, cand):
        return x, False
    return cand, True


def max_min_certificate(
    usage: npt.NDArray[Any],
    capacity: npt.NDArray[Any],
    weights: npt.NDArray[Any],
    upper: npt.NDArray[Any],
    x: npt.NDArray[Any],
    *,
    tol: float = 0.0,
) -> bool:
    """True when ``x`` is *the* weighted max-min fair vector (bottleneck test).

    With ``tol = 0`` and Fraction inputs the test is exact.
    """
    n, L = usage.shape
    load = [
        sum((usage[j, ln] * x[j] for j in range(n) if usage[j, ln] != 0), 0 * capacity[ln])
        for ln in range(L)
    ]

    def le(a: Any, b: Any) -> bool:
        return bool(a <= b + tol * (1 + abs(b))) if tol else bool(a <= b)

    def eq(a: Any, b: Any) -> bool:
        return bool(abs(a - b) <= tol * (1 + abs(b))) if tol else bool(a == b)

    for ln in range(L):
        if not le(load[ln], capacity[ln]):
            return False
    saturated = [eq(load[ln], capacity[ln]) for ln in range(L)]
    level = [x[j] / weights[j] if not _is_inf(x[j]) else math.inf for j in range(n)]
    for j in range(n):
        if _is_inf(x[j]):
            if any(usage[j, ln] != 0 for ln in range(L)) or not _is_inf(upper[j]):
                return False
            continue
        if x[j] < 0 or not le(x[j], upper[j]):
            return False
        if eq(x[j], upper[j]) if not _is_inf(upper[j]) else False:
            continue
        ok = False
        for ln in range(L):
            if usage[j, ln] == 0 or not saturated[ln]:
                continue
            if all(le(level[i], level[j]) for i in range(n) if usage[i, ln] != 0):
                ok = True
                break
        if not ok:
            return False
    return True


def _is_inf(v: Any) -> bool:
    return isinstance(v, float) and math.isinf(v)
