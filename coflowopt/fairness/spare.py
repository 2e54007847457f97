"""Naive work conservation on top of DRF (dissertation §7.4.3 and Appendix D.2).

Stage 1 is DRF on the *reported* vectors; then each link's spare capacity
``1 - sum_k a^i_k`` is handed out among the coflows by a policy that looks
only at the reported demands ``w_k d^i_k`` on that link:

``highest``      all to the coflow(s) with the highest demand (§7.4.3, Lemma D.2.6)
``lowest``       all to the coflow(s) with the lowest positive demand (Lemma D.2.4)
``lowest_any``   all to the coflow(s) with the lowest demand, zero included - a
                 coflow that does not use the link gets it and wastes it (Lemma D.2.3)
``equal``        split equally (by weight) among the coflows using the link (Lemma D.2.8)
``proportional`` split in proportion to the demands (Lemma D.2.9)

Ties split the spare equally. None of these is strategy-proof (Lemma
D.3.1); :func:`coflowopt.fairness.strategy.lie_search` finds the lies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InstanceError
from ._arith import as_float
from .allocation import FairAllocation
from .dominant import drf
from .problem import FairnessProblem, check_problem

__all__ = ["SPARE_POLICIES", "drf_work_conserving", "split_spare"]

Matrix = npt.NDArray[Any]


def _ints(mask: npt.NDArray[np.bool_]) -> Matrix:
    # Python ints keep Fraction arithmetic exact (np.bool_ * Fraction gives a float)
    return np.where(mask, 1, 0).astype(object)


def _extreme(key: Matrix, present: npt.NDArray[np.bool_], *, highest: bool) -> Matrix:
    fk = as_float(key)
    masked = np.where(present, fk, -np.inf if highest else np.inf)
    target = masked.max(axis=0) if highest else masked.min(axis=0)
    # ties are decided on the exact values: compare each candidate to the best exactly
    best = present & np.isclose(fk, target[None, :], rtol=1e-12, atol=0.0)
    if key.dtype == object:
        exact_best = np.zeros_like(best)
        for i in range(key.shape[1]):
            rows = np.flatnonzero(best[:, i])
            if rows.size:
                top = max(key[r, i] for r in rows) if highest else min(key[r, i] for r in rows)
                exact_best[rows, i] = [key[r, i] == top for r in rows]
        best = exact_best
    return _ints(best)


def _highest(wd: Matrix, w: Matrix, present: npt.NDArray[np.bool_]) -> Matrix:
    return _extreme(wd, present, highest=True)


def _lowest(wd: Matrix, w: Matrix, present: npt.NDArray[np.bool_]) -> Matrix:
    return _extreme(wd, present, highest=False)


def _lowest_any(wd: Matrix, w: Matrix, present: npt.NDArray[np.bool_]) -> Matrix:
    everyone = np.ones_like(present)
    everyone[:, ~present.any(axis=0)] = False  # a link nobody uses keeps its spare
    return _extreme(wd, everyone, highest=False)


def _equal(wd: Matrix, w: Matrix, present: npt.NDArray[np.bool_]) -> Matrix:
    return np.where(present, w[:, None], 0 * w[:, None])


def _proportional(wd: Matrix, w: Matrix, present: npt.NDArray[np.bool_]) -> Matrix:
    return np.where(present, wd, 0 * wd)


SPARE_POLICIES: dict[str, Callable[[Matrix, Matrix, npt.NDArray[np.bool_]], Matrix]] = {
    "highest": _highest,
    "lowest": _lowest,
    "lowest_any": _lowest_any,
    "equal": _equal,
    "proportional": _proportional,
}
"""Spare-capacity policies by name: each returns per-link shares (columns are normalised)."""


def split_spare(problem: FairnessProblem, guarantee: Matrix, policy: str) -> Matrix:
    """The extra allocation ``policy`` gives on top of ``guarantee``."""
    try:
        fn = SPARE_POLICIES[policy]
    except KeyError:
        raise InstanceError(
            f"unknown spare policy '{policy}' (known: {', '.join(SPARE_POLICIES)})"
        ) from None
    d = problem.vectors
    w = problem.weights
    present = as_float(d) > 0
    share = fn(w[:, None] * d, w, present)
    total = share.sum(axis=0)
    spare = 1 - guarantee.sum(axis=0)
    ftotal = as_float(total)
    safe = np.where(ftotal > 0, total, 1)
    return np.where(ftotal[None, :] > 0, share * (spare / safe)[None, :], 0 * share)


def drf_work_conserving(
    problem: FairnessProblem, *, policy: str, method: str = "auto"
) -> FairAllocation:
    """DRF, then every link's spare capacity handed out by ``policy`` (App. D.2)."""
    problem = check_problem(problem, "drf_work_conserving")
    base = drf(problem, method=method)
    extra = split_spare(problem, base.guarantee, policy)
    return FairAllocation(
        f"drf+{policy}",
        problem,
        base.guarantee + extra,
        base.guarantee,
        exact=base.exact,
        info={**base.info, "policy": policy},
    )
