"""Demotion thresholds under the M/M/1 model of MCS Eqs. (4)-(5).

The model (MCS §VI-A, after PIAS). Coflows arrive as a Poisson stream at
load ``rho``. There are ``K`` priority queues. Each coflow ``c`` belongs to a
threshold *family* ``f`` (a class with its own threshold vector
``theta^f_1 <= ... <= theta^f_{K-1}``, ``theta^f_K = inf``), starts in queue
``p_c`` and is demoted from queue ``j`` when its demotion attribute ``x_c``
(bytes sent, or for wide coflows in the double scheme the bytes of its
longest flow) exceeds ``theta^f_j``. It therefore ends in queue
``q_c = max(p_c, min{j : x_c <= theta^f_j})`` and passes through queues
``p_c .. q_c``. With ``m_{f,j}`` the share of all coflows that belong to
``f`` and end in queue ``j``, and ``L_j`` the share (all families) that end
in a queue ``<= j``, Eq. (4) gives the mean sojourn time of family ``f`` in
queue ``j``

    S^f_j = rho * m_{f,j} / (1 - rho * L_{j-1})

and Eq. (5) the mean CCT ``sum_c (1/N) sum_{l=p_c}^{q_c} S^{f_c}_l``.
Shares count coflows, not bytes, exactly as in the paper (and in PIAS); the
result is dimensionless. ``numerator="queue"`` is our variant in which the
numerator is the share of *all* families ending in queue ``j`` (the queue's
whole traffic); the two agree for one family.

Schemes (:data:`SCHEMES`) build a model from a workload:

- ``single``: one family, demotion by bytes sent, all coflows start in
  queue 1 (Aalo's D-CLAS, PIAS);
- ``double``: MCS's double thresholds: narrow coflows (width <= ``wide_width``)
  by bytes sent, wide ones by their longest flow, with SNCF initial queues;
- ``per-class``: one family per SNCF class, by bytes sent (the general
  problem of Eqs. (4)-(5)).

Solvers (:data:`SOLVERS`): ``optimize`` (SciPy differential evolution over
log-thresholds, then an exact block-coordinate local search), ``grid``
(exhaustive enumeration; over all candidate values it is exact) and ``dp``
(exact dynamic program over the joint threshold positions of the active
families). :func:`policy_parameters` turns thresholds into parameters of the
simulator's ``mcs`` policy. See models/mcs-thresholds.md.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from .._frozen import Frozen
from .._frozen import readonly as _readonly
from ..errors import CoflowoptError, InstanceError
from ..instance import MB, Instance
from ..result import Status
from ._util import lookup
from .classification import Classification, classify, paper_classification
from .stats import Workload, as_workload

__all__ = [
    "NUMERATORS",
    "SCHEMES",
    "SOLVERS",
    "TB",
    "DPTooLarge",
    "ThresholdModel",
    "ThresholdSolution",
    "aalo_thresholds",
    "build_model",
    "default_thresholds",
    "double_model",
    "dp_thresholds",
    "grid_search",
    "initial_queues",
    "linear_thresholds",
    "mcs_thresholds",
    "optimize_thresholds",
    "per_class_model",
    "policy_parameters",
    "single_model",
    "solve_thresholds",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TB = 2**40
"""One terabyte in the trace's units (2^40 bytes)."""

NUMERATORS = ("class", "queue")



MAX_QUEUES = 64
"""The most queues a threshold model takes (MCS and Aalo use 10; the solvers' work grows
quickly with K, and K in the thousands ran for minutes on the Facebook trace)."""


def _queues(queues: int) -> int:
    if isinstance(queues, bool) or int(queues) != queues or queues < 1:
        raise InstanceError(f"the number of queues must be a positive integer, got {queues!r}")
    if queues > MAX_QUEUES:
        raise InstanceError(f"the number of queues must be at most {MAX_QUEUES}, got {queues!r}")
    return int(queues)


# --------------------------------------------------------------------------- default thresholds


def aalo_thresholds(queues: int, *, factor: float = 10.0, first: float = 10 * MB) -> FloatArray:
    """Exponentially spaced thresholds ``Q1 * E^(j-1)``, ``j = 1 .. K-1`` (D-CLAS, dissertation §6.5.4).

    Aalo's defaults: ``E = 10``, ``Q1 = 10`` MB.
    """
    k = _queues(queues)
    if not (factor >= 1 and math.isfinite(factor)):
        raise InstanceError(f"the spacing factor must be finite and >= 1, got {factor!r}")
    if not (first > 0 and math.isfinite(first)):
        raise InstanceError(f"the first threshold must be finite and > 0, got {first!r}")
    return first * factor ** np.arange(k - 1, dtype=np.float64)


def mcs_thresholds(
    queues: int,
    *,
    narrow_first: float = 10 * MB,
    narrow_factor: float = 10.0,
    wide_first: float = 1 * MB,
    wide_factor: float = 2.0,
) -> FloatArray:
    """MCS's double thresholds, rows narrow then wide (MCS §VIII-A).

    ``theta^n_j = 10^j`` MB and ``theta^w_j = 2^(j-1)`` MB by default; the
    first values and factors are those varied in MCS Figure 18.
    """
    return np.vstack(
        [
            aalo_thresholds(queues, factor=narrow_factor, first=narrow_first),
            aalo_thresholds(queues, factor=wide_factor, first=wide_first),
        ]
    )


def linear_thresholds(queues: int, *, maximum: float = 10 * TB) -> FloatArray:
    """Equal-sized queues up to ``maximum``: ``theta_j = j * maximum / K`` (dissertation Fig. 6.12d)."""
    k = _queues(queues)
    if not (maximum > 0 and math.isfinite(maximum)):
        raise InstanceError(f"the maximum must be finite and > 0, got {maximum!r}")
    return maximum * np.arange(1, k, dtype=np.float64) / k


# --------------------------------------------------------------------------- model


class DPTooLarge(CoflowoptError):
    """:func:`dp_thresholds` would visit more than ``max_cells`` cells (``what`` says how
    many, without the advice of the message)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}; raise max_cells, or use grid_search or optimize_thresholds")
        self.what = what


@dataclass(frozen=True, slots=True)
class _Group:
    """Coflows of one family that start in the same queue."""

    family: int
    initial: int
    values: FloatArray  # sorted
    mass: float
    prefix: FloatArray  # share of all coflows in the group with value <= theta, by position of theta


@dataclass(frozen=True, slots=True, eq=False)
class ThresholdModel(Frozen):
    """The M/M/1 threshold model of MCS Eqs. (4)-(5) for a set of coflows.

    Parameters
    ----------
    values
        Demotion attribute of each coflow in bytes (size, or length for the
        wide family of the double scheme).
    family
        Threshold family of each coflow (0-based index into ``families``).
    initial
        Initial queue of each coflow (1-based, at most ``num_queues``).
    families
        Family names.
    num_queues
        ``K``.
    load
        ``rho``, in (0, 1).
    numerator
        ``"class"`` (Eq. (4) as printed) or ``"queue"`` (see the module docs).
    scheme
        The scheme that built the model (picks the default thresholds).
    setting
        Policy parameters besides the thresholds (see :func:`policy_parameters`).
    """

    values: FloatArray
    family: IntArray
    initial: IntArray
    families: tuple[str, ...]
    num_queues: int
    load: float
    numerator: str = "class"
    scheme: str = "custom"
    setting: Mapping[str, Any] = field(default_factory=dict)
    """What a simulator policy needs besides the thresholds: ``width_thresholds``
    and ``initial_queues`` per SNCF class, ``wide_width`` (set by the scheme builders)."""
    _groups: tuple[_Group, ...] = field(init=False, repr=False)
    _candidates: tuple[FloatArray, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        values = np.array(self.values, dtype=np.float64).reshape(-1)
        n = values.size
        if n == 0:
            raise InstanceError("the threshold model needs at least one coflow")
        if np.any(~np.isfinite(values)) or np.any(values <= 0):
            raise InstanceError("demotion attributes must be finite and > 0")
        family = np.array(self.family, dtype=np.int64).reshape(-1)
        initial = np.array(self.initial, dtype=np.int64).reshape(-1)
        families = tuple(str(f) for f in self.families)
        k = _queues(self.num_queues)
        if family.shape != (n,) or initial.shape != (n,):
            raise InstanceError(f"need one family and one initial queue per coflow ({n})")
        if not families or family.min() < 0 or family.max() >= len(families):
            raise InstanceError(f"family indices must lie in 0..{len(families) - 1}")
        if initial.min() < 1 or initial.max() > k:
            raise InstanceError(f"initial queues must lie in 1..{k}, got {initial.min()}..{initial.max()}")
        rho = float(self.load)
        if not 0 < rho < 1:
            raise InstanceError(f"the load rho must be in (0, 1) for the M/M/1 model, got {self.load!r}")
        if self.numerator not in NUMERATORS:
            raise InstanceError(f"numerator must be one of {', '.join(NUMERATORS)}, got {self.numerator!r}")
        groups = []
        candidates = tuple(_readonly(np.unique(values[family == f])) for f in range(len(families)))
        for f in range(len(families)):
            for p in np.unique(initial[family == f]):
                sel = (family == f) & (initial == p)
                vals = np.sort(values[sel])
                prefix = np.concatenate([[0.0], np.searchsorted(vals, candidates[f], side="right") / n])
                groups.append(
                    _Group(
                        int(f), int(p), _readonly(vals), float(np.count_nonzero(sel)) / n, _readonly(prefix)
                    )
                )
        set_(self, "values", _readonly(values))
        set_(self, "family", _readonly(family))
        set_(self, "initial", _readonly(initial))
        set_(self, "families", families)
        set_(self, "num_queues", k)
        set_(self, "load", rho)
        set_(self, "_groups", tuple(groups))
        set_(self, "_candidates", candidates)
        set_(self, "setting", MappingProxyType(dict(self.setting)))

    # ------------------------------------------------------------------ basics

    @property
    def num_coflows(self) -> int:
        return int(self.values.size)

    @property
    def num_families(self) -> int:
        return len(self.families)

    @property
    def shape(self) -> tuple[int, int]:
        """Shape of a threshold matrix: families x (K - 1)."""
        return (self.num_families, self.num_queues - 1)

    def candidates(self, family: int) -> FloatArray:
        """Distinct demotion attributes of a family: only thresholds' positions among them matter."""
        return self._candidates[family]

    def active(self) -> npt.NDArray[np.bool_]:
        """Families whose thresholds can change the objective (some coflow starts below queue K)."""
        out = np.zeros(self.num_families, bool)
        for g in self._groups:
            if g.initial < self.num_queues:
                out[g.family] = True
        return out

    def thresholds(self, theta: npt.ArrayLike) -> FloatArray:
        """Validate a threshold matrix (one row per family; a single row is used for all)."""
        t = np.array(theta, dtype=np.float64)
        if t.ndim == 1:
            t = t[None, :]
        if t.ndim != 2 or t.shape[1] != self.num_queues - 1:
            raise InstanceError(
                f"need {self.num_queues - 1} thresholds per family for {self.num_queues} queues, "
                f"got shape {np.shape(theta)}"
            )
        if t.shape[0] == 1 and self.num_families > 1:
            t = np.repeat(t, self.num_families, axis=0)
        if t.shape[0] != self.num_families:
            raise InstanceError(
                f"need {self.num_families} rows of thresholds (one per family), got {t.shape[0]}"
            )
        if np.any(np.isnan(t)) or np.any(t < 0) or np.any(t[:, 1:] < t[:, :-1]):
            raise InstanceError("thresholds must be >= 0 and non-decreasing within each family")
        return t

    # ------------------------------------------------------------------ evaluation

    def _masses(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Per group: share ending in a queue <= j ``(G, B, K+1)``, share passing through j ``(G, B, K)``."""
        K = self.num_queues
        B = theta.shape[0]
        n = self.num_coflows
        cum = np.zeros((len(self._groups), B, K + 1))
        through = np.zeros((len(self._groups), B, K))
        for gi, g in enumerate(self._groups):
            if K > 1:
                cnt = np.searchsorted(g.values, theta[:, g.family, :], side="right") / n
                cnt[:, : g.initial - 1] = 0.0
                cum[gi, :, 1:K] = cnt
            cum[gi, :, K] = g.mass
            through[gi, :, g.initial - 1 :] = g.mass - cum[gi, :, g.initial - 1 : K]
        return cum, through

    def _sojourn(self, cum: FloatArray) -> FloatArray:
        """``S^f_j`` per family, shape ``(F, B, K)``."""
        K = self.num_queues
        ending = np.diff(cum, axis=2)  # (G, B, K)
        before = cum.sum(axis=0)[:, :K]  # L_{j-1}, (B, K)
        denom = 1.0 - self.load * before
        if self.numerator == "queue":
            share = np.broadcast_to(ending.sum(axis=0), (self.num_families, *ending.shape[1:]))
        else:
            share = np.zeros((self.num_families, *ending.shape[1:]))
            for gi, g in enumerate(self._groups):
                share[g.family] += ending[gi]
        return self.load * share / denom

    def objective_batch(self, theta: npt.ArrayLike) -> FloatArray:
        """Eq. (5) for a batch of threshold matrices of shape ``(B, F, K-1)`` (not validated)."""
        t = np.asarray(theta, dtype=np.float64)
        cum, through = self._masses(t)
        soj = self._sojourn(cum)
        total = np.zeros(t.shape[0])
        for gi, g in enumerate(self._groups):
            total += (through[gi] * soj[g.family]).sum(axis=1)
        return total

    def objective(self, theta: npt.ArrayLike) -> float:
        """Eq. (5): the model's mean CCT (dimensionless) for one threshold matrix."""
        return float(self.objective_batch(self.thresholds(theta)[None])[0])

    def final_queue(self, theta: npt.ArrayLike) -> IntArray:
        """Queue (1-based) in which each coflow ends: ``max(p_c, min{j : x_c <= theta_j})``."""
        t = self.thresholds(theta)
        below = np.array(
            [np.searchsorted(t[f], x, side="left") for f, x in zip(self.family, self.values, strict=True)],
            dtype=np.int64,
        )
        return np.maximum(self.initial, below + 1)

    def sojourn(self, theta: npt.ArrayLike) -> FloatArray:
        """Eq. (4): ``S^f_j``, shape ``(F, K)``."""
        cum, _ = self._masses(self.thresholds(theta)[None])
        return self._sojourn(cum)[:, 0, :]

    def predicted(self, theta: npt.ArrayLike) -> FloatArray:
        """Each coflow's model CCT ``sum_{l=p_c}^{q_c} S^{f_c}_l``; their mean is :meth:`objective`."""
        s = self.sojourn(theta)
        q = self.final_queue(theta)
        cums = np.concatenate([np.zeros((self.num_families, 1)), np.cumsum(s, axis=1)], axis=1)
        return cums[self.family, q] - cums[self.family, self.initial - 1]

    def queue_shares(self, theta: npt.ArrayLike) -> FloatArray:
        """Share of all coflows of each family ending in each queue, shape ``(F, K)``."""
        q = self.final_queue(theta)
        out = np.zeros((self.num_families, self.num_queues))
        np.add.at(out, (self.family, q - 1), 1.0 / self.num_coflows)
        return out

    # ------------------------------------------------------------------ canonical form

    def positions(self, theta: npt.ArrayLike) -> IntArray:
        """Number of distinct family values ``<= theta^f_j``: all that the objective depends on."""
        t = self.thresholds(theta)
        return np.vstack(
            [np.searchsorted(self._candidates[f], t[f], side="right") for f in range(self.num_families)]
        ).astype(np.int64)

    def representative(self, family: int, position: npt.ArrayLike) -> FloatArray:
        """A threshold value for each position: the geometric middle of its interval.

        Position ``c`` stands for ``[u_{c-1}, u_c)``; we report
        ``sqrt(u_{c-1} u_c)``, ``u_0 / 2`` for ``c = 0`` and ``2 u_{m-1}`` for
        ``c = m``, so that a simulator comparing bytes sent with ``>`` is
        not at the mercy of rounding at a coflow's exact size.
        """
        u = self._candidates[family]
        c = np.asarray(position, dtype=np.int64)
        if u.size == 0:
            return np.full(c.shape, np.nan)
        ext = np.concatenate([[u[0] / 4], u, [4 * u[-1]]])
        return np.sqrt(ext[c] * ext[c + 1])

    def canonical(self, theta: npt.ArrayLike) -> FloatArray:
        """Equivalent thresholds (same objective) at the representatives of their positions.

        Rows of inactive families (no coflow starts above the last queue, so
        their thresholds never matter) are kept as given. Thresholds of
        queues above a family's highest initial queue (``theta^f_j`` with ``j``
        below every ``p_c`` of the family) are never consulted and become 0.
        """
        t = self.thresholds(theta)
        pos = self.positions(t)
        out = t.copy()
        for f in np.flatnonzero(self.active()):
            out[f] = self.representative(int(f), pos[f])
            first = int(self.initial[self.family == f].min())
            out[f, : first - 1] = 0.0
        return out


# --------------------------------------------------------------------------- building models


def initial_queues(
    data: Instance | Workload,
    initial: str | Classification | npt.ArrayLike | None,
    num_queues: int,
) -> IntArray:
    """Initial queue of every coflow, capped at ``num_queues``.

    ``initial`` is ``None``/``"top"`` (all in queue 1, as Aalo), ``"paper"``
    (MCS §VIII-A: ``Delta_i = 10^i``, ``p_i = i``), ``"published"`` or
    ``"exact"`` (SNCF computed on this workload with Algorithm 1 or the exact
    classifier and ASSIGNPRIORITY), a :class:`Classification`, or an array.
    """
    w = as_workload(data)
    k = _queues(num_queues)
    if initial is None or (isinstance(initial, str) and initial == "top"):
        return np.ones(w.num_coflows, dtype=np.int64)
    if isinstance(initial, (str, Classification)):
        return _classes(w, initial).initial_queue(w.width, k)
    q = np.array(initial, dtype=np.int64).reshape(-1)
    if q.size != w.num_coflows or q.min(initial=1) < 1:
        raise InstanceError(f"need {w.num_coflows} initial queues >= 1")
    return np.minimum(q, k)


def _setting(w: Workload, initial: str | Classification | npt.ArrayLike | None) -> dict[str, Any]:
    """The SNCF classes behind an initial-queue rule, as policy parameters (empty if per coflow)."""
    if initial is None or (isinstance(initial, str) and initial == "top"):
        return {"width_thresholds": (), "initial_queues": (1,)}
    if isinstance(initial, (str, Classification)):
        cls = _classes(w, initial)
        return {
            "width_thresholds": tuple(float(d) for d in cls.width_thresholds),
            "initial_queues": tuple(int(p) for p in cls.priorities),
        }
    return {}


def _classes(w: Workload, rule: str | Classification) -> Classification:
    """SNCF classes by rule: ``paper`` (``Delta_i = 10^i``, ``p_i = i``), ``published``, ``exact``."""
    if isinstance(rule, Classification):
        return rule
    if rule == "paper":
        return paper_classification(w)
    if rule in ("published", "exact"):
        return classify(w, rule)
    raise InstanceError(
        f"unknown initial-queue rule '{rule}'; use top, paper, published, exact, a Classification or an array"
    )


def single_model(
    data: Instance | Workload,
    *,
    queues: int,
    load: float,
    initial: str | Classification | npt.ArrayLike | None = "top",
    numerator: str = "class",
) -> ThresholdModel:
    """One family demoted by bytes sent (Aalo's D-CLAS and PIAS); all start in queue 1 by default."""
    w = as_workload(data)
    return ThresholdModel(
        values=w.size,
        family=np.zeros(w.num_coflows, dtype=np.int64),
        initial=initial_queues(w, initial, queues),
        families=("all",),
        num_queues=queues,
        load=load,
        numerator=numerator,
        scheme="single",
        setting=_setting(w, initial),
    )


def double_model(
    data: Instance | Workload,
    *,
    queues: int,
    load: float,
    wide_width: int = 50,
    initial: str | Classification | npt.ArrayLike | None = "paper",
    numerator: str = "class",
) -> ThresholdModel:
    """MCS's double thresholds: narrow by bytes sent, wide by longest flow (Algorithm 2).

    ``wide_width`` is Algorithm 2's ``Delta_w``, which the paper never gives
    a value; 50 is the Varys paper's narrow/wide boundary, which the MCS paper
    uses too (its Table IV).
    """
    w = as_workload(data)
    if int(wide_width) != wide_width or wide_width < 0:
        raise InstanceError(f"wide_width must be a non-negative integer, got {wide_width!r}")
    wide = w.width > wide_width
    return ThresholdModel(
        values=np.where(wide, w.length, w.size),
        family=wide.astype(np.int64),
        initial=initial_queues(w, initial, queues),
        families=("narrow", "wide"),
        num_queues=queues,
        load=load,
        numerator=numerator,
        scheme="double",
        setting={**_setting(w, initial), "wide_width": int(wide_width)},
    )


def per_class_model(
    data: Instance | Workload,
    *,
    queues: int,
    load: float,
    classification: str | Classification = "paper",
    numerator: str = "class",
) -> ThresholdModel:
    """One threshold vector per SNCF class, demotion by bytes sent (Eqs. (4)-(5) in general)."""
    w = as_workload(data)
    cls = _classes(w, classification)
    return ThresholdModel(
        values=w.size,
        family=cls.classify(w.width) - 1,
        initial=cls.initial_queue(w.width, queues),
        families=tuple(f"class {i + 1}" for i in range(cls.num_classes)),
        num_queues=queues,
        load=load,
        numerator=numerator,
        scheme="per-class",
        setting=_setting(w, cls),
    )


SCHEMES: Mapping[str, Callable[..., ThresholdModel]] = MappingProxyType(
    {"single": single_model, "double": double_model, "per-class": per_class_model}
)
"""Model builders by scheme name."""


def build_model(data: Instance | Workload, scheme: str = "single", **options: Any) -> ThresholdModel:
    """Build the model of a scheme in :data:`SCHEMES` by name."""
    return lookup(SCHEMES, scheme, "threshold scheme")(data, **options)


def default_thresholds(model: ThresholdModel) -> FloatArray:
    """The published defaults for a model's scheme.

    ``single`` and ``per-class``: Aalo's ``E = 10``, ``Q1 = 10`` MB (every
    class alike); ``double``: MCS's ``theta^n_j = 10^j`` MB and
    ``theta^w_j = 2^(j-1)`` MB.
    """
    k = model.num_queues
    if model.scheme == "double" and model.num_families == 2:
        return mcs_thresholds(k)
    return np.repeat(aalo_thresholds(k)[None, :], model.num_families, axis=0)


# --------------------------------------------------------------------------- solutions


@dataclass(frozen=True, slots=True)
class ThresholdSolution(Frozen):
    """Thresholds for a model with their objective, beside the defaults'.

    ``thresholds[f]`` is family ``f``'s vector ``theta_1 .. theta_{K-1}`` in
    bytes, reported at the representatives of their positions
    (:meth:`ThresholdModel.canonical`). ``bound`` equals ``objective`` when
    the status is OPTIMAL (exhaustive over all candidates, or the DP) and is
    ``nan`` otherwise.
    """

    status: Status
    objective: float
    bound: float
    thresholds: FloatArray
    families: tuple[str, ...]
    method: str
    runtime: float
    evaluations: int
    default_objective: float
    default_thresholds: FloatArray
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def improvement(self) -> float:
        """``1 - objective / default_objective``."""
        return 1.0 - self.objective / self.default_objective if self.default_objective else 0.0

    def family(self, name: str) -> FloatArray:
        return self.thresholds[self.families.index(name)]

    def as_dict(self, *, unit: float = MB) -> dict[str, Any]:
        """JSON-ready summary; thresholds divided by ``unit`` (default MB)."""
        return {
            "status": self.status.value,
            "method": self.method,
            "objective": self.objective,
            "bound": self.bound,
            "default_objective": self.default_objective,
            "improvement": self.improvement,
            "families": list(self.families),
            "thresholds_mb": (self.thresholds / unit).tolist(),
            "default_thresholds_mb": (self.default_thresholds / unit).tolist(),
            "runtime": self.runtime,
            "evaluations": self.evaluations,
            "info": dict(self.info),
        }


def _solution(
    model: ThresholdModel,
    theta: FloatArray,
    *,
    status: Status,
    method: str,
    started: float,
    evaluations: int,
    defaults: FloatArray,
    info: Mapping[str, Any] | None = None,
) -> ThresholdSolution:
    canon = model.canonical(theta)
    obj = model.objective(canon)
    return ThresholdSolution(
        status=status,
        objective=obj,
        bound=obj if status is Status.OPTIMAL else float("nan"),
        thresholds=_readonly(canon),
        families=model.families,
        method=method,
        runtime=time.perf_counter() - started,
        evaluations=int(evaluations),
        default_objective=model.objective(defaults),
        default_thresholds=_readonly(np.array(defaults, dtype=np.float64)),
        info=MappingProxyType(dict(info or {})),
    )


def _defaults(model: ThresholdModel, defaults: npt.ArrayLike | None) -> FloatArray:
    return model.thresholds(default_thresholds(model) if defaults is None else defaults)


# --------------------------------------------------------------------------- exact DP


def _chain_dp(
    model: ThresholdModel, pos: IntArray, free: Sequence[int], *, chunk_cells: int = 2_000_000
) -> tuple[IntArray, float]:
    """Best joint positions of the families in ``free``, every other family fixed at ``pos``.

    Term ``j`` of Eq. (5), summed over all families, depends on the
    thresholds only through ``theta^f_{j-1}`` (shares ending before queue
    ``j`` and passing through it) and ``theta^f_j`` (shares ending in it).
    So Eq. (5) is a chain over consecutive threshold *vectors*: a DP whose
    state at layer ``j`` is the tuple of positions of ``theta^f_j`` over the
    free families (``S = prod_f (m_f + 1)`` states, ``O(K S^2)`` time).
    Returns the positions (``len(free) x (K - 1)``) and the objective.
    """
    K = model.num_queues
    rho = model.load
    free = [int(f) for f in free]
    index = {f: i for i, f in enumerate(free)}
    nf = len(free)
    sizes = [model.candidates(f).size + 1 for f in free]
    S = math.prod(sizes)
    coords = np.array(np.unravel_index(np.arange(S), sizes), dtype=np.int64).reshape(nf, S)
    # c[i][j, c]: share of free family i ending in a queue <= j when theta_j sits at position c
    c = [np.zeros((K + 1, n)) for n in sizes]
    p_free = np.zeros((nf, K + 1))  # share of free family i starting in a queue <= j
    other_l = np.zeros(K + 1)
    other_t = np.zeros((model.num_families, K + 1))
    other_m = np.zeros((model.num_families, K + 1))
    queues = np.arange(1, K + 1)
    for g in model._groups:
        if g.family in index:
            i = index[g.family]
            for j in range(g.initial, K + 1):
                p_free[i, j] += g.mass
                c[i][j] += g.prefix if j < K else g.mass
            continue
        cum = np.zeros(K + 1)
        for j in range(g.initial, K):
            cum[j] = g.prefix[pos[g.family, j - 1]]
        cum[K] = g.mass
        other_l += cum
        other_t[g.family, 1:] += np.where(queues >= g.initial, g.mass - cum[:-1], 0.0)
        other_m[g.family, 1:] += np.diff(cum)
    o_t, o_m, o_tm = other_t.sum(0), other_m.sum(0), (other_t * other_m).sum(0)
    pooled = model.numerator == "queue"

    def shares(j: int, states: IntArray) -> FloatArray:
        return np.stack([c[i][j][coords[i, states]] for i in range(nf)])  # (nf, len(states))

    def term(j: int, a: IntArray, b: IntArray) -> FloatArray:
        """Term ``j`` for every (previous state in ``a``, current state in ``b``)."""
        prev = shares(j - 1, a)
        cur = shares(j, b)
        through = p_free[:, j][:, None] - prev  # (nf, A)
        ending = cur[:, None, :] - prev[:, :, None]  # (nf, A, B)
        factor = rho / (1.0 - rho * (prev.sum(0) + other_l[j - 1]))  # (A,)
        if pooled:
            inner = (through.sum(0)[:, None] + o_t[j]) * (ending.sum(0) + o_m[j])
        else:
            inner = (through[:, :, None] * ending).sum(0) + o_tm[j]
        return factor[:, None] * inner

    zero = np.zeros(1, dtype=np.int64)
    everything = np.arange(S)
    if K == 1:
        return np.zeros((nf, 0), dtype=np.int64), float(term(1, zero, zero)[0, 0])
    value = term(1, zero, everything)[0]
    choice = np.zeros((K, S), dtype=np.int64)
    step = max(1, chunk_cells // max(S * nf, 1))
    for j in range(2, K):
        new = np.empty(S)
        for s0 in range(0, S, step):
            b = everything[s0 : s0 + step]
            cost = value[:, None] + term(j, everything, b)
            cost[np.any(coords[:, :, None] > coords[:, None, b], axis=0)] = np.inf
            best = np.argmin(cost, axis=0)
            choice[j, b] = best
            new[b] = cost[best, np.arange(b.size)]
        value = new
    last = value + term(K, everything, zero)[:, 0]
    state = np.empty(K - 1, dtype=np.int64)
    state[K - 2] = int(np.argmin(last))
    for j in range(K - 1, 1, -1):
        state[j - 2] = choice[j, state[j - 1]]
    return coords[:, state], float(last[state[K - 2]])


def _block_dp(model: ThresholdModel, pos: IntArray, phi: int) -> tuple[IntArray, float]:
    """Best positions of one family's thresholds with every other family fixed (:func:`_chain_dp`)."""
    out, value = _chain_dp(model, pos, [phi])
    return out[0], value


def _theta(model: ThresholdModel, pos: IntArray, base: FloatArray) -> FloatArray:
    theta = base.copy()
    for f in np.flatnonzero(model.active()):
        theta[f] = model.representative(int(f), pos[f])
    return theta


def dp_thresholds(
    model: ThresholdModel, *, defaults: npt.ArrayLike | None = None, max_cells: float = 1e9
) -> ThresholdSolution:
    """Exact optimum by dynamic programming over the positions of all active families jointly.

    Eq. (5) is a chain over consecutive threshold vectors (:func:`_chain_dp`);
    the DP visits about ``K S^2`` cells with ``S = prod_f (m_f + 1)`` over the
    active families (``m_f`` distinct values each). With one family,
    ``O(K m^2)``: ``L_j`` depends on ``theta_j`` alone and Eq. (5) becomes
    ``sum_j (P_j - L_{j-1}) rho (L_j - L_{j-1}) / (1 - rho L_{j-1})``
    (``P_j``: share starting in a queue ``<= j``). Raises when the DP would
    visit more than ``max_cells`` cells. Inactive families (every coflow
    starts in the last queue) keep their defaults.
    """
    started = time.perf_counter()
    base = _defaults(model, defaults)
    active = [int(f) for f in np.flatnonzero(model.active())]
    states = math.prod(model.candidates(f).size + 1 for f in active)
    cells = max(model.num_queues - 2, 1) * states**2 if active else 0
    if cells > max_cells:
        raise DPTooLarge(f"the exact DP would visit {cells:.3g} cells ({len(active)} active "
                         f"families with {states} joint threshold positions)")
    theta = base
    if active:
        pos = model.positions(base)
        pos[active], _ = _chain_dp(model, pos, active)
        theta = _theta(model, pos, base)
    return _solution(
        model,
        theta,
        status=Status.OPTIMAL,
        method="dp",
        started=started,
        evaluations=1,
        defaults=base,
        info={"dp_cells": int(cells), "joint_states": int(states)},
    )


# --------------------------------------------------------------------------- grid search


def _family_grid(model: ThresholdModel, f: int, grid: int | npt.ArrayLike | None,
                 limit: int | None = None) -> tuple[FloatArray, bool]:
    """Values tried for family ``f`` and whether they cover every position; a grid of more
    than ``limit`` points is refused before it is built."""
    u = model.candidates(f)
    if grid is None:
        return model.representative(f, np.arange(u.size + 1)), True
    if np.ndim(grid) == 0:
        g = int(grid)  # type: ignore[arg-type]
        if g < 1:
            raise InstanceError(f"the grid needs at least one point per family, got {grid!r}")
        if limit is not None and g > limit:
            raise CoflowoptError(_too_fine(limit))
        if u.size == 0:
            return np.array([MB]), True
        lo, hi = math.log10(u[0] / 2), math.log10(2 * u[-1])
        return 10.0 ** np.linspace(lo, hi, g), False
    vals = np.unique(np.array(grid, dtype=np.float64).reshape(-1))
    if vals.size == 0 or np.any(vals < 0) or np.any(np.isnan(vals)):
        raise InstanceError("grid values must be >= 0")
    return vals, False


def _too_fine(limit: int) -> str:
    return (f"the grid has more than {limit} threshold combinations; pass a coarser grid "
            "(grid=20; --grid 20 on the command line) or use optimize_thresholds (--solver optimize)")


def grid_search(
    model: ThresholdModel,
    *,
    grid: int | npt.ArrayLike | None = None,
    defaults: npt.ArrayLike | None = None,
    max_evaluations: int = 5_000_000,
    chunk: int = 20_000,
) -> ThresholdSolution:
    """Exhaustive search over non-decreasing threshold vectors on a grid, every family.

    ``grid=None`` tries every position of every threshold among its family's
    distinct values, which is exact (status OPTIMAL). An integer ``G``
    tries ``G`` log-spaced values per family (from half the smallest to
    twice the largest value); an array tries those values for every family.
    Raises if the number of combinations exceeds ``max_evaluations``.
    Inactive families (every coflow starts in the last queue) keep their
    default thresholds.
    """
    started = time.perf_counter()
    base = _defaults(model, defaults)
    F, k1 = model.shape
    active = model.active()
    lists: list[np.ndarray] = []
    values: list[FloatArray] = []
    exact = True
    total = 1
    for f in range(F):
        if not active[f] or k1 == 0:
            continue
        vals, complete = _family_grid(model, f, grid, max_evaluations)
        exact &= complete
        total *= math.comb(vals.size + k1 - 1, k1)
        if total > max_evaluations:
            raise CoflowoptError(_too_fine(max_evaluations))
        combos = np.array(list(itertools.combinations_with_replacement(range(vals.size), k1)), dtype=np.int64)
        lists.append(combos)
        values.append(vals)
    fams = [f for f in range(F) if active[f] and k1 > 0]
    if not fams:
        return _solution(
            model,
            base,
            status=Status.OPTIMAL if exact else Status.FEASIBLE,
            method="grid",
            started=started,
            evaluations=1,
            defaults=base,
            info={"combinations": 1},
        )
    sizes = [c.shape[0] for c in lists]
    best = (np.inf, -1)
    for s in range(0, total, chunk):
        flat = np.arange(s, min(s + chunk, total))
        theta = np.broadcast_to(base, (flat.size, F, k1)).copy()
        rest = flat
        for idx in range(len(fams) - 1, -1, -1):
            rest, pick = np.divmod(rest, sizes[idx])
            theta[:, fams[idx], :] = values[idx][lists[idx][pick]]
        obj = model.objective_batch(theta)
        i = int(np.argmin(obj))
        if obj[i] < best[0]:
            best = (float(obj[i]), int(flat[i]))
    theta = base.copy()
    remaining = best[1]
    for idx in range(len(fams) - 1, -1, -1):
        remaining, chosen = divmod(remaining, sizes[idx])
        theta[fams[idx]] = values[idx][lists[idx][chosen]]
    return _solution(
        model,
        theta,
        status=Status.OPTIMAL if exact else Status.FEASIBLE,
        method="grid",
        started=started,
        evaluations=total,
        defaults=base,
        info={"combinations": int(total), "exhaustive_over_candidates": bool(exact)},
    )


# --------------------------------------------------------------------------- optimizer


def optimize_thresholds(
    model: ThresholdModel,
    *,
    seed: int = 0,
    maxiter: int = 200,
    popsize: int = 15,
    local: bool = True,
    local_starts: int = 5,
    tol: float = 1e-10,
    defaults: npt.ArrayLike | None = None,
) -> ThresholdSolution:
    """SciPy differential evolution over log10-thresholds, then a block-coordinate local search.

    The search variables are ``log10 theta^f_j`` of every active family,
    bounded one decade beyond the family's smallest and largest values
    (outside that range nothing changes); each family's vector is sorted
    before evaluation, so every point is feasible. The initial population
    is a seeded Latin hypercube plus the defaults, so the result is never
    worse than the defaults. The objective is piecewise constant in the
    thresholds, so gradient-based polishing is useless; the local step
    instead re-optimises one family's whole vector at a time, exactly, by
    the DP of :func:`dp_thresholds` with the other families fixed, until no
    family improves, then tries joint moves of two families' ``j``-th
    thresholds (:func:`_block_descent`), from each of the ``local_starts``
    best distinct members of the final population and of the initial one.
    With one active family
    the local step alone is exact. ``tol`` is differential evolution's
    convergence tolerance. Deterministic for a given ``seed``.
    """
    # SciPy's optimizer and sampler take most of a second to import: only here
    from scipy import optimize as _opt
    from scipy.stats import qmc

    started = time.perf_counter()
    base = _defaults(model, defaults)
    F, k1 = model.shape
    active = model.active()
    fams = [f for f in range(F) if active[f]] if k1 else []
    if not fams:
        return _solution(
            model,
            base,
            status=Status.FEASIBLE,
            method="optimize",
            started=started,
            evaluations=1,
            defaults=base,
        )
    lo = np.concatenate([np.full(k1, math.log10(model.candidates(f)[0]) - 1) for f in fams])
    hi = np.concatenate([np.full(k1, math.log10(model.candidates(f)[-1]) + 1) for f in fams])
    dim = lo.size
    count = [0]

    def decode(x: FloatArray) -> FloatArray:
        """``(S, D)`` log-thresholds -> ``(S, F, K-1)`` thresholds."""
        theta = np.broadcast_to(base, (x.shape[0], F, k1)).copy()
        for i, f in enumerate(fams):
            theta[:, f, :] = 10.0 ** np.sort(x[:, i * k1 : (i + 1) * k1], axis=1)
        return theta

    def energy(x: FloatArray) -> FloatArray:
        pts = np.atleast_2d(np.asarray(x).T)  # scipy passes (D, S)
        count[0] += pts.shape[0]
        return model.objective_batch(decode(pts))

    size = max(5, popsize * dim)
    pop = qmc.LatinHypercube(d=dim, seed=seed).random(size - 1)
    start = np.concatenate([np.log10(np.maximum(base[f], 1e-300)) for f in fams])
    pop = np.vstack([np.clip(start, lo, hi), lo + pop * (hi - lo)])
    res = _opt.differential_evolution(
        energy,
        list(zip(lo, hi, strict=True)),
        init=pop,
        seed=seed,
        maxiter=maxiter,
        tol=tol,
        polish=False,
        vectorized=True,
        updating="deferred",
    )
    theta = decode(np.atleast_2d(res.x))[0]
    rounds = cells = 0
    if local:
        # descend from the best few distinct members of the final population, not only the best:
        # with several families one block at a time can stop short of the optimum
        # (the final population often sits on one plateau, so the initial one supplies variety)
        starts: list[FloatArray] = []
        seen: set[bytes] = set()
        initial_energy = model.objective_batch(decode(pop))
        for members, energies in ((res.population, res.population_energies), (pop, initial_energy)):
            taken = 0
            for i in np.argsort(energies, kind="stable"):
                cand = decode(members[i][None, :])[0]
                key = model.positions(cand).tobytes()
                if key not in seen:
                    seen.add(key)
                    starts.append(cand)
                    taken += 1
                if taken >= local_starts:
                    break
        best = np.inf
        for cand in starts:
            out, r, c = _block_descent(model, cand, fams)
            rounds, cells = rounds + r, cells + c
            value = model.objective(out)
            if value < best:
                best, theta = value, out
    return _solution(
        model,
        theta,
        status=Status.FEASIBLE,
        method="optimize",
        started=started,
        evaluations=count[0],
        defaults=base,
        info={
            "seed": seed,
            "de_iterations": int(res.nit),
            "de_objective": float(res.fun),
            "local_rounds": rounds,
            "local_work": cells,
        },
    )


def _block_descent(
    model: ThresholdModel, theta: FloatArray, fams: Sequence[int], *, max_rounds: int = 100
) -> tuple[FloatArray, int, int]:
    """Local search: exact moves of one family's whole vector, then joint moves of two families.

    A round re-optimises each family in turn with the others fixed
    (:func:`_block_dp`); when no family improves, it tries moving the
    ``j``-th thresholds of every pair of families together over all
    positions between their neighbours (with several families, the
    denominators couple them, and single-family moves alone can stall).
    Stops when neither kind of move improves. Returns the thresholds, the
    number of rounds and the number of DP cells and pair evaluations.
    """
    base = theta
    pos = model.positions(theta)
    current = model.objective(model.canonical(theta))
    work = 0
    for rounds in range(1, max_rounds + 1):
        improved = False
        for f in fams:
            trial = pos.copy()
            trial[f], value = _block_dp(model, pos, f)
            work += model.num_queues * (model.candidates(f).size + 1) ** 2
            if value < current - 1e-13 * abs(current):
                current, pos, improved = value, trial, True
        if not improved and len(fams) > 1:
            pos, value, evaluated = _pair_moves(model, pos, base, fams, current)
            work += evaluated
            improved = value < current
            current = value
        if not improved:
            return _theta(model, pos, base), rounds, work
    return _theta(model, pos, base), max_rounds, work


def _pair_moves(
    model: ThresholdModel, pos: IntArray, base: FloatArray, fams: Sequence[int], current: float
) -> tuple[IntArray, float, int]:
    """Best joint move of the ``j``-th thresholds of two families; returns positions, value, evaluations."""
    k1 = pos.shape[1]
    evaluated = 0
    for a, b in itertools.combinations(fams, 2):
        for j in range(k1):
            ranges = []
            for f in (a, b):
                low = pos[f, j - 1] if j > 0 else 0
                high = pos[f, j + 1] if j + 1 < k1 else model.candidates(f).size
                ranges.append(np.arange(low, high + 1))
            pa, pb = (g.ravel() for g in np.meshgrid(*ranges, indexing="ij"))
            batch = np.broadcast_to(_theta(model, pos, base), (pa.size, *pos.shape)).copy()
            batch[:, a, j] = model.representative(a, pa)
            batch[:, b, j] = model.representative(b, pb)
            obj = model.objective_batch(batch)
            evaluated += pa.size
            i = int(np.argmin(obj))
            if obj[i] < current - 1e-13 * abs(current):
                current = float(obj[i])
                pos = pos.copy()
                pos[a, j], pos[b, j] = pa[i], pb[i]
    return pos, current, evaluated


# --------------------------------------------------------------------------- simulator hand-off


def _increasing_widths(deltas: Sequence[float]) -> tuple[float, ...]:
    """Strictly increasing width boundaries that put every coflow in the class ``deltas`` do.

    An exact classification reports an empty class as two equal boundaries; the simulator
    needs them strictly increasing. A coflow of (whole) width ``w`` is in class "number of
    boundaries <= w", so a run of ``m`` boundaries equal to ``v`` is spread over
    ``(max(previous, ceil(v) - 1), v]``, which no whole width falls inside.
    """
    out: list[float] = []
    vals = [float(d) for d in deltas]
    i = 0
    while i < len(vals):
        j = i
        while j + 1 < len(vals) and vals[j + 1] == vals[i]:
            j += 1
        v = vals[i]
        lo = max(out[-1] if out else 0.0, math.ceil(v) - 1.0)
        m = j - i + 1
        out.extend(v - (v - lo) * (m - 1 - r) / m for r in range(m))
        i = j + 1
    return tuple(out)


def _increasing(model: ThresholdModel, f: int, row: FloatArray) -> tuple[float, ...]:
    """Strictly increasing, positive thresholds that send every coflow of family ``f`` where ``row`` does.

    Values already strictly increasing and positive are kept. A run of
    equal values (a queue no coflow of the family ends in), or a zero, is
    spread geometrically inside the same interval between two distinct
    attribute values, so no coflow changes queue. Thresholds of queues
    above every initial queue of the family are never consulted and become
    small values below the first one that is.
    """
    k1 = row.size
    if k1 == 0:
        return ()
    u = model.candidates(f)
    members = model.family == f
    first = int(model.initial[members].min()) - 1 if members.any() else k1  # first consulted index
    out = np.array(row, dtype=np.float64)
    if first >= k1:  # never consulted at all
        if np.any(out <= 0) or np.any(np.diff(out) <= 0):
            out = np.asarray(MB * 2.0 ** np.arange(k1), dtype=np.float64)
        return tuple(float(v) for v in out)
    j = first
    while j < k1:
        r = j
        while r + 1 < k1 and out[r + 1] == out[j]:
            r += 1
        count = r - j + 1
        if count > 1 or out[j] <= 0:
            c = int(np.searchsorted(u, out[j], side="right"))
            lo = u[c - 1] if c > 0 else 0.0
            hi = u[c] if c < u.size else math.inf
            low = max(lo, out[j - 1]) if j > first else lo
            up = min(hi, out[r + 1]) if r + 1 < k1 else hi
            if not math.isfinite(up):
                vals = low * 2.0 ** np.arange(1, count + 1)
            else:
                if low <= 0:
                    low = up * 2.0 ** -(count + 1)
                vals = low * (up / low) ** (np.arange(1, count + 1) / (count + 1))
            out[j : r + 1] = vals
        j = r + 1
    out[:first] = out[first] * 2.0 ** -np.arange(first, 0, -1)
    if np.any(out <= 0) or np.any(np.diff(out) <= 0):  # pragma: no cover - by construction
        raise CoflowoptError(f"could not make family {model.families[f]}'s thresholds strictly increasing")
    return tuple(float(v) for v in out)


def policy_parameters(
    model: ThresholdModel, thresholds: npt.ArrayLike | ThresholdSolution, *, sharing: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The simulator policy, and its parameters, that run a model's scheme with these thresholds.

    Returns ``("mcs", params)`` for :func:`coflowopt.sim.simulate`: the
    ``mcs`` policy takes arbitrary threshold vectors, SNCF classes and
    initial queues. The ``double`` scheme maps to it directly (sharing
    ``"strict"`` by default, as in the paper). The ``single`` scheme is
    Aalo's D-CLAS with arbitrary thresholds: one width class starting in
    queue 1, every coflow narrow (demoted by bytes sent), Aalo's
    ``"weighted"`` sharing by default. Thresholds are made strictly
    increasing without changing which queue any coflow of the model ends
    in (:func:`_increasing`). The ``per-class`` scheme has no policy (MCS
    uses two threshold families) and raises, as does a model whose initial
    queues were given per coflow.
    """
    theta = thresholds.thresholds if isinstance(thresholds, ThresholdSolution) else thresholds
    t = model.thresholds(theta)
    setting = dict(model.setting)
    if model.scheme not in ("single", "double") or "width_thresholds" not in setting:
        raise CoflowoptError(
            f"no simulator policy implements the '{model.scheme}' scheme with these initial queues; "
            "the mcs policy takes one narrow and one wide threshold family and SNCF classes"
        )
    rows = [_increasing(model, f, t[f]) for f in range(model.num_families)]
    params: dict[str, Any] = {
        "num_queues": model.num_queues,
        "width_thresholds": _increasing_widths(setting["width_thresholds"]),
        "initial_queues": tuple(min(int(q), model.num_queues) for q in setting["initial_queues"]),
    }
    if model.scheme == "double":
        if int(setting["wide_width"]) < 1:
            raise CoflowoptError("the mcs policy needs wide_width >= 1 (every coflow has a flow)")
        params.update(
            narrow_width=int(setting["wide_width"]),
            narrow_thresholds=rows[0],
            wide_thresholds=rows[1],
            sharing=sharing or "strict",
        )
    else:
        params.update(
            narrow_width=2**62,  # every coflow is narrow: demoted by bytes sent
            narrow_thresholds=rows[0],
            wide_thresholds=rows[0],
            sharing=sharing or "weighted",
        )
    return "mcs", params


SOLVERS: Mapping[str, Callable[..., ThresholdSolution]] = MappingProxyType(
    {"optimize": optimize_thresholds, "grid": grid_search, "dp": dp_thresholds}
)
"""Threshold solvers by name."""


def solve_thresholds(model: ThresholdModel, method: str = "optimize", **options: Any) -> ThresholdSolution:
    """Run a solver of :data:`SOLVERS` by name."""
    return lookup(SOLVERS, method, "threshold solver")(model, **options)
