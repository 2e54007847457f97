"""Dominant Resource Fairness for coflows: the closed form P* and multi-round DRF.

Dissertation §7.6.1, Eq. 7.2: when coflows scale up and down along their
correlation vectors (elastic, unbounded demands), the optimal isolation
guarantee is

    P* = 1 / max_i sum_k w_k d^i_k,

with weights as in §7.6.3 (use ``w_k d_k`` for ``d_k``) and heterogeneous
capacities folded into the vectors (each entry is a fraction of its link).
Every coflow gets ``a^i_k = P* w_k d^i_k`` and progress ``w_k P*``.

With bounded demands one round is wasteful (§7.6.3) and DRF becomes
multi-round progressive filling (Parkes et al., cited as [166, Algorithm
1]): raise every unfinished coflow's progress at rate ``w_k`` until a link
saturates (its coflows stop) or a coflow reaches its bound; that is weighted
max-min on the usage matrix of the vectors, :func:`coflowopt.alloc.max_min`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._files import finite_number, natural_number
from ..errors import InstanceError
from ._arith import as_float, full
from ._maxmin import solve_max_min
from .allocation import FairAllocation
from .problem import FairnessProblem, check_problem

__all__ = ["DRF_METHODS", "IncrementalDRF", "drf", "drf_level", "drf_progress"]


def drf_level(vectors: Any, weights: npt.ArrayLike | None = None) -> Any:
    """Eq. 7.2: ``P* = 1 / max_i sum_k w_k d^i_k`` (a Fraction for exact input).

    ``vectors`` is ``(M, L)``: a dense float or Fraction array, or a scipy
    sparse matrix (rows need not be normalised; the formula takes them as
    given). Vectorised: one weighted column sum and one maximum.
    """
    if sp.issparse(vectors):
        m = sp.csr_array(vectors)
        w = np.ones(m.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
        col = m.T @ w
    else:
        d = np.asarray(vectors)
        if d.ndim != 2 or d.dtype.kind not in "biufO":
            raise InstanceError(f"vectors must be a coflows x links array of numbers, got "
                                f"{d.dtype} of shape {d.shape}")
        if weights is not None and np.shape(weights) != (d.shape[0],):
            raise InstanceError(f"weights need one value per coflow ({d.shape[0]}), got shape "
                                f"{np.shape(weights)}")
        col = d.sum(axis=0) if weights is None else np.asarray(weights) @ d
    top = col.max()
    if not top > 0:
        raise InstanceError("no coflow has demand on any link: P* is unbounded")
    return 1 / top


def drf_progress(vectors: Any, weights: npt.ArrayLike | None = None) -> Any:
    """Progress ``w_k P*`` of every coflow under the closed form (Eq. 7.2)."""
    level = drf_level(vectors, weights)
    n = np.shape(vectors)[0]
    if weights is None:
        return np.full(n, level, dtype=object if not isinstance(level, float) else np.float64)
    return np.asarray(weights) * level


_CANCEL = 1e-4
""":class:`IncrementalDRF`: a link's sum that falls below this share of its largest value since
it was last summed afresh is summed afresh from the coflows left (each addition and
subtraction rounds by about 1e-16 of that largest value: below it, by 1e-12 of what is
left)."""


class IncrementalDRF:
    """Eq. 7.2 kept up to date as coflows arrive, leave or change vectors.

    Holds the weighted column sums ``S_i = sum_k w_k d^i_k``; an arrival or
    departure adds or subtracts one (sparse) vector, and ``level`` is
    ``1 / max_i S_i`` - the recomputation §7.7.2 times at 8.6 ms for
    100,000 machines. Float64 only. Each link also keeps its coflows' entries, so that a
    sum that subtractions left far below its peak (:data:`_CANCEL`) is summed afresh from
    that link's coflows alone, and a link no coflow uses is exactly 0.
    """

    __slots__ = ("_on", "_peak", "_rows", "_sums")

    def __init__(self, num_links: int) -> None:
        if not natural_number(num_links):
            raise InstanceError(f"num_links must be an integer >= 0, got {num_links!r:.60}")
        self._sums = np.zeros(int(num_links))
        self._peak = np.zeros(int(num_links))  # each sum's largest since summed afresh
        self._rows: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]] = {}
        self._on: dict[int, dict[str, float]] = {}  # link -> its coflows' weighted entries

    def _row(self, coflow: str, vector: Any, weight: float) -> tuple[npt.NDArray[np.int64],
                                                                     npt.NDArray[np.float64]]:
        """A coflow's links and weighted entries, checked."""
        if not finite_number(weight) or not weight > 0:
            raise InstanceError(f"the weight of coflow '{coflow}' must be a finite number > 0, "
                                f"got {weight!r:.60}")
        L = self._sums.size
        if sp.issparse(vector):
            if vector.shape[-1] != L or (vector.ndim == 2 and vector.shape[0] != 1):
                raise InstanceError(f"the vector of coflow '{coflow}' must be 1 x {L}, got shape "
                                    f"{vector.shape}")
            v = sp.csr_array(vector, copy=True)  # (summing duplicates must not touch the caller's)
            v.sum_duplicates()
            idx = np.asarray(v.indices, dtype=np.int64)
            val = np.asarray(v.data, dtype=np.float64) * float(weight)
            keep = val != 0
            idx, val = idx[keep], val[keep]
        else:
            try:
                dense = np.asarray(vector, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                raise InstanceError(f"the vector of coflow '{coflow}' must be numbers, got "
                                    f"{vector!r:.60}") from None
            if dense.size != L:
                raise InstanceError(f"the vector of coflow '{coflow}' needs {L} entries (one per "
                                    f"link), got {dense.size}")
            idx = np.flatnonzero(dense)
            val = dense[idx] * float(weight)
        if not (np.all(np.isfinite(val)) and np.all(val >= 0)):
            raise InstanceError(f"the vector of coflow '{coflow}' must be finite and >= 0")
        return idx, val

    def add(self, coflow: str, vector: Any, weight: float = 1.0) -> None:
        """Add a coflow (``vector``: dense array or 1-row sparse matrix)."""
        if coflow in self._rows:
            raise InstanceError(f"coflow '{coflow}' is already present")
        self._insert(coflow, *self._row(coflow, vector, weight))

    def _insert(self, coflow: str, idx: npt.NDArray[np.int64], val: npt.NDArray[np.float64]) -> None:
        np.add.at(self._sums, idx, val)
        self._peak[idx] = np.maximum(self._peak[idx], self._sums[idx])
        for i, x in zip(idx.tolist(), val.tolist(), strict=True):
            self._on.setdefault(i, {})[coflow] = x
        self._rows[coflow] = (idx, val)

    def remove(self, coflow: str) -> None:
        try:
            idx, val = self._rows.pop(coflow)
        except KeyError:
            raise InstanceError(f"no coflow '{coflow}'") from None
        np.subtract.at(self._sums, idx, val)
        for i in idx.tolist():
            entries = self._on[i]
            del entries[coflow]
            if not entries:  # no coflow left on the link: exactly 0
                del self._on[i]
                self._sums[i] = self._peak[i] = 0.0
            elif not self._sums[i] > _CANCEL * self._peak[i]:
                # far below its peak, the sum holds the rounding of what was added and taken
                # away (P* of no coflows was 3.6e16, not inf): summed afresh
                self._sums[i] = self._peak[i] = math.fsum(entries.values())

    def update(self, coflow: str, vector: Any, weight: float = 1.0) -> None:
        """Replace a coflow's vector (a changed report); a refused one changes nothing."""
        if coflow not in self._rows:
            raise InstanceError(f"no coflow '{coflow}'")
        row = self._row(coflow, vector, weight)
        self.remove(coflow)
        self._insert(coflow, *row)

    @property
    def level(self) -> float:
        """The current ``P*`` (``inf`` with no coflows)."""
        top = float(self._sums.max()) if self._sums.size else 0.0
        return 1.0 / top if top > 0 else float("inf")

    def __len__(self) -> int:
        return len(self._rows)


def _closed_form(problem: FairnessProblem) -> tuple[npt.NDArray[Any], bool, dict[str, Any]]:
    if problem.bounded:
        raise InstanceError(
            "the closed form (Eq. 7.2) needs unbounded demands; use method='progressive' "
            "(multi-round DRF) for bounded demands"
        )
    level = drf_level(problem.vectors, problem.weights)
    p = problem.weights * level
    return p, problem.exact, {"level": level}


def _progressive(problem: FairnessProblem) -> tuple[npt.NDArray[Any], bool, dict[str, Any]]:
    cap = full(problem.num_links, 1, exact=problem.exact)  # vectors are fractions of links
    p, certified = solve_max_min(
        problem.vectors, cap, weights=problem.weights, upper=problem.bounds, exact=problem.exact
    )
    norm = as_float(p) / as_float(problem.weights)
    return p, certified, {"level": (p / problem.weights).min(), "levels": np.unique(norm)}


DRF_METHODS: dict[str, Callable[[FairnessProblem], tuple[npt.NDArray[Any], bool, dict[str, Any]]]] = {
    "closed_form": _closed_form,
    "progressive": _progressive,
}
"""Stage-1 methods by name: Eq. 7.2 or multi-round progressive filling."""


def drf(problem: FairnessProblem, *, method: str = "auto") -> FairAllocation:
    """DRF allocation ``a^i_k = P_k d^i_k``.

    ``method``: ``"closed_form"`` (Eq. 7.2; every coflow gets ``w_k P*``),
    ``"progressive"`` (multi-round DRF: coflows that do not cross a
    saturated link keep growing), or ``"auto"`` - the closed form unless a
    coflow has a bounded demand, as §7.6.3 prescribes. The switch applies
    to every coflow: with one bounded coflow anywhere, unbounded coflows
    that avoid the saturated links grow past ``P*`` (multi-round), where
    without it they stop at ``P*`` (Eq. 7.2). E.g. ``<1, 0, 0>``,
    ``<0, 1, 0>``, ``<0, 1, 0>`` give the first coflow 1/2 of link 1;
    adding a coflow ``<0, 0, 1>`` bounded at 1/1000 gives it all of link 1.
    """
    problem = check_problem(problem, "drf")
    if not isinstance(method, str):
        raise InstanceError(f"the DRF method is a name (auto, {', '.join(DRF_METHODS)}), got "
                            f"{method!r:.60}")
    name = method
    if method == "auto":
        name = "progressive" if problem.bounded else "closed_form"
    try:
        fn = DRF_METHODS[name]
    except KeyError:
        raise InstanceError(
            f"unknown DRF method '{method}' (known: auto, {', '.join(DRF_METHODS)})"
        ) from None
    p, exact, info = fn(problem)
    a = p[:, None] * problem.vectors
    info = {"method": name, "stage1_progress": p, **info}
    return FairAllocation("drf", problem, a, a, exact=bool(exact), info=info)
