"""SNCF width classification (MCS §V-B, §V-C, Algorithm 1) and its exact optimum.

Problem (MCS Eq. (1)-(3)). Given size thresholds ``0 = T_0 < T_1 < ... <
T_{n-1} < T_n = inf``, choose width thresholds ``0 = Delta_0 <= Delta_1 <=
... <= Delta_{n-1} <= Delta_n = inf``. Class ``i`` holds the coflows with
``Delta_{i-1} <= width < Delta_i``; ``alpha_i`` is its share of all coflows
and ``beta_i`` the share that is in class ``i`` *and* has
``T_{i-1} <= size < T_i``. The accuracy of class ``i`` is ``A_i =
beta_i / alpha_i`` and the objective is ``E = sum_i (1 - A_i)``. The
distribution is the empirical one of the given coflows. An empty class
(``alpha_i = 0``) has accuracy 0 (error 1): the paper leaves ``0/0``
undefined, and this convention charges a wasted class the most.

``T_0 = 0`` and ``T_n = inf`` are our reading. The paper states Eq. (2)'s
``Delta_0 = 0``, ``Delta_n = inf`` for widths but never bounds the size
classes, and writes ``T_i = 10^i`` MB. Taking that formula at ``i = 0`` and
``i = n`` (``T_0 = 1`` MB, ``T_5 = 10^5`` MB) would leave the 21 Facebook
coflows of at least ``10^5`` MB in no size class. Eq. (1) for the
simulation's classes would then be 2.039 instead of 1.472.

Two solvers, looked up by name in :data:`METHODS`:

- ``published``: Algorithm 1 (geometric search, ``Delta_i = Delta_{i-1} *
  Step`` while the accuracy of class ``i`` does not drop) followed by
  ASSIGNPRIORITY;
- ``exact``: dynamic programming over the observed widths. The term of class
  ``i`` depends only on the pair ``(Delta_{i-1}, Delta_i)``, and only the
  position of each threshold among the sorted distinct widths matters, so
  the problem is a shortest path through ``n`` layers of ``m + 1`` positions
  (``m`` distinct widths): ``O(n m^2)`` time. See models/mcs-classification.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from .._frozen import Frozen
from .._frozen import readonly as _readonly
from ..errors import InstanceError
from ..instance import MB, Instance
from ._util import lookup
from .stats import Workload, as_workload

__all__ = [
    "DEFAULT_CLASSES",
    "METHODS",
    "PAPER_WIDTH_THRESHOLDS",
    "Classification",
    "assign_priority",
    "classify",
    "default_size_thresholds",
    "evaluate",
    "optimal_classification",
    "paper_classification",
    "paper_width_thresholds",
    "sncf",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_CLASSES = 5
"""Five classes, as in MCS Figure 8 (``T_i = 10^i`` MB)."""


def default_size_thresholds(
    classes: int = DEFAULT_CLASSES, *, base: float = 10.0, unit: float = MB
) -> FloatArray:
    """``T_i = base^i * unit`` for ``i = 1 .. classes - 1`` (MCS §V-C: ``T_i = 10^i`` MB)."""
    n = _num_classes(classes)
    if not base > 1:
        raise InstanceError(f"the base of the size thresholds must be > 1, got {base!r}")
    with np.errstate(over="ignore"):
        t = base ** np.arange(1, n, dtype=np.float64) * unit
    if not np.isfinite(t[-1:]).all():
        last = int(np.argmin(np.isfinite(t))) + 1
        raise InstanceError(
            f"{n} classes need size thresholds up to {base:g}^{n - 1} x {unit:g} bytes, beyond "
            f"float64 from T_{last}; give fewer classes or the thresholds"
        )
    return t


def _paper_simulation(n: int) -> FloatArray:
    return 10.0 ** np.arange(1, n, dtype=np.float64)


def _paper_figure8(n: int) -> FloatArray:
    return 2.0 ** np.arange(0, n - 1, dtype=np.float64)


def _paper_testbed(n: int) -> FloatArray:
    return 2.0 ** np.arange(1, n, dtype=np.float64)


PAPER_WIDTH_THRESHOLDS: Mapping[str, Callable[[int], FloatArray]] = MappingProxyType(
    {
        "simulation": _paper_simulation,
        "figure8": _paper_figure8,
        "testbed": _paper_testbed,
    }
)
"""The width thresholds the paper states, which disagree with each other:
``simulation`` ``Delta_i = 10^i`` (§VIII-A), ``figure8`` ``Delta_i = 2^(i-1)``
(§V-C text under Fig. 8, said to come from Algorithm 1 with ``T_i = 10^i``
MB, which Step = 10 cannot produce), ``testbed`` ``Delta_i = 2^i``
(§VII-A, scaled down for 8 hosts)."""


def paper_width_thresholds(variant: str = "simulation", classes: int = DEFAULT_CLASSES) -> FloatArray:
    """``Delta_1 .. Delta_{n-1}`` as stated in the paper (see :data:`PAPER_WIDTH_THRESHOLDS`)."""
    return lookup(PAPER_WIDTH_THRESHOLDS, variant, "width-threshold variant")(_num_classes(classes))


def _num_classes(classes: int) -> int:
    if isinstance(classes, bool) or int(classes) != classes or classes < 1:
        raise InstanceError(f"the number of classes must be a positive integer, got {classes!r}")
    return int(classes)


def _size_thresholds(size_thresholds: npt.ArrayLike | None, classes: int | None) -> FloatArray:
    if size_thresholds is None:
        return default_size_thresholds(DEFAULT_CLASSES if classes is None else classes)
    t = np.array(size_thresholds, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(t)) or np.any(t <= 0) or np.any(np.diff(t) <= 0):
        shown = t.tolist() if t.size <= 8 else [*t[:3].tolist(), "...", *t[-2:].tolist()]
        raise InstanceError(
            f"size thresholds (bytes) must be finite, > 0 and strictly increasing, got {shown}"
            + ("" if t.size <= 8 else f" ({t.size} values)")
        )
    if classes is not None and _num_classes(classes) != t.size + 1:
        raise InstanceError(f"{t.size} size thresholds make {t.size + 1} classes, not {classes}")
    return t


# --------------------------------------------------------------------------- result


@dataclass(frozen=True, slots=True)
class Classification(Frozen):
    """Width thresholds, initial priorities and their quality on a workload.

    Classes and priorities are numbered from 1 as in the paper. Sizes are in
    bytes.
    """

    method: str
    size_thresholds: FloatArray
    """``T_1 .. T_{n-1}``; ``T_0 = 0`` and ``T_n = inf`` are implied."""
    width_thresholds: FloatArray
    """``Delta_1 .. Delta_{n-1}``; class ``i`` is ``Delta_{i-1} <= width < Delta_i``."""
    priorities: IntArray
    """``p_i``: the initial queue of class ``i`` (ASSIGNPRIORITY)."""
    error: float
    """Eq. (1): ``sum_i (1 - A_i)``, between 0 and ``n``."""
    accuracy: FloatArray
    """``A_i = beta_i / alpha_i`` (0 for an empty class)."""
    alpha: FloatArray
    beta: FloatArray
    count: IntArray
    """Number of coflows in each class."""
    size_quantiles: FloatArray
    """Per class: min, 25th, 50th, 75th percentile and max size (``nan`` if empty)."""
    misclassified: float
    """Share of all coflows whose width class differs from their size class: ``1 - sum beta_i``."""
    runtime: float
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def num_classes(self) -> int:
        return int(self.size_thresholds.size + 1)

    def classify(self, width: npt.ArrayLike) -> IntArray:
        """Class (1-based) of coflows with these widths."""
        return np.searchsorted(self.width_thresholds, np.asarray(width), side="right").astype(np.int64) + 1

    def initial_queue(self, width: npt.ArrayLike, num_queues: int | None = None) -> IntArray:
        """Initial queue (1-based) of coflows with these widths, capped at ``num_queues``."""
        q = self.priorities[self.classify(width) - 1]
        return q if num_queues is None else np.minimum(q, int(num_queues))

    def as_dict(self, *, unit: float = MB) -> dict[str, Any]:
        """JSON-ready summary; sizes divided by ``unit`` (default MB)."""
        return {
            "method": self.method,
            "classes": self.num_classes,
            "size_thresholds_mb": (self.size_thresholds / unit).tolist(),
            "width_thresholds": self.width_thresholds.tolist(),
            "priorities": self.priorities.tolist(),
            "error": self.error,
            "misclassified": self.misclassified,
            "runtime": self.runtime,
            "per_class": [
                {
                    "class": i + 1,
                    "width_range": [
                        0.0 if i == 0 else float(self.width_thresholds[i - 1]),
                        None if i == self.num_classes - 1 else float(self.width_thresholds[i]),
                    ],
                    "priority": int(self.priorities[i]),
                    "coflows": int(self.count[i]),
                    "alpha": float(self.alpha[i]),
                    "beta": float(self.beta[i]),
                    "accuracy": float(self.accuracy[i]),
                    "size_quantiles_mb": (self.size_quantiles[i] / unit).tolist(),
                }
                for i in range(self.num_classes)
            ],
            "info": dict(self.info),
        }


# --------------------------------------------------------------------------- evaluation


def _size_class(size: FloatArray, t: FloatArray) -> IntArray:
    """0-based size class: ``T_{i-1} <= size < T_i``."""
    return np.searchsorted(t, size, side="right").astype(np.int64)


def _width_class(width: npt.ArrayLike, delta: FloatArray) -> IntArray:
    return np.searchsorted(delta, np.asarray(width), side="right").astype(np.int64)


def assign_priority(
    data: Instance | Workload,
    width_thresholds: npt.ArrayLike,
    *,
    size_thresholds: npt.ArrayLike | None = None,
) -> IntArray:
    """ASSIGNPRIORITY of Algorithm 1: ``p_i = j`` with ``T_{j-1} <= min size in class i < T_j``.

    Deviations from the pseudocode, which loops over classes ``1 .. n-1``
    only and never resets ``minSize``: every class gets a priority, from its
    *own* smallest coflow (a running minimum would make the priorities
    non-increasing). An empty class inherits the priority of the class
    before it (1 for the first); no coflow of the workload lands there.
    """
    w = as_workload(data)
    delta = _width_thresholds(width_thresholds)
    t = _size_thresholds(size_thresholds, delta.size + 1)
    cls = _width_class(w.width, delta)
    n = delta.size + 1
    smallest = np.full(n, np.inf)
    np.minimum.at(smallest, cls, w.size)
    prio = np.empty(n, dtype=np.int64)
    previous = 1
    for i in range(n):
        if np.isfinite(smallest[i]):
            previous = int(np.searchsorted(t, smallest[i], side="right")) + 1
        prio[i] = previous
    return prio


def _width_thresholds(width_thresholds: npt.ArrayLike) -> FloatArray:
    d = np.array(width_thresholds, dtype=np.float64).reshape(-1)
    if np.any(np.isnan(d)) or np.any(d < 0) or np.any(np.diff(d) < 0):
        raise InstanceError(f"width thresholds must be >= 0 and non-decreasing, got {d.tolist()!r}")
    return d


def evaluate(
    data: Instance | Workload,
    width_thresholds: npt.ArrayLike,
    *,
    size_thresholds: npt.ArrayLike | None = None,
    priorities: npt.ArrayLike | None = None,
    method: str = "given",
    runtime: float = 0.0,
    info: Mapping[str, Any] | None = None,
) -> Classification:
    """Quality of given width thresholds: Eq. (1), accuracies and size ranges per class.

    ``priorities`` default to ASSIGNPRIORITY's.
    """
    w = as_workload(data)
    delta = _width_thresholds(width_thresholds)
    n = delta.size + 1
    t = _size_thresholds(size_thresholds, n)
    if w.num_coflows == 0:
        raise InstanceError("cannot classify an empty workload")
    cls = _width_class(w.width, delta)
    right = _size_class(w.size, t) == cls
    count = np.bincount(cls, minlength=n).astype(np.int64)
    hits = np.bincount(cls[right], minlength=n)
    N = w.num_coflows
    alpha = count / N
    beta = hits / N
    accuracy = np.divide(hits, count, out=np.zeros(n), where=count > 0)
    quant = np.full((n, 5), np.nan)
    for i in np.flatnonzero(count):
        quant[i] = np.quantile(w.size[cls == i], [0.0, 0.25, 0.5, 0.75, 1.0])
    if priorities is None:
        prio = assign_priority(w, delta, size_thresholds=t)
    else:
        prio = np.array(priorities, dtype=np.int64).reshape(-1)
        if prio.size != n or np.any(prio < 1):
            raise InstanceError(f"need {n} priorities >= 1, got {prio.tolist()!r}")
    return Classification(
        method=method,
        size_thresholds=_readonly(t.copy()),
        width_thresholds=_readonly(delta.copy()),
        priorities=_readonly(prio),
        error=float(np.sum(1.0 - accuracy)),
        accuracy=_readonly(accuracy),
        alpha=_readonly(alpha),
        beta=_readonly(beta),
        count=_readonly(count),
        size_quantiles=_readonly(quant),
        misclassified=float(1.0 - right.mean()),
        runtime=float(runtime),
        info=MappingProxyType(dict(info or {})),
    )


def paper_classification(
    data: Instance | Workload, *, variant: str = "simulation", scale: float = 1.0
) -> Classification:
    """The paper's classes: ``Delta_i`` of :data:`PAPER_WIDTH_THRESHOLDS` times ``scale``, ``p_i = i``.

    MCS §VIII-A simulates with ``Delta_i = 10^i`` and ``p_i = i``; Figure
    17a scales these thresholds.

    The paper does not say how many classes its simulations use. We use
    :data:`DEFAULT_CLASSES` (5, as in Figure 8): ``Delta_1 .. Delta_4 = 10 ..
    10^4``, so every width of at least ``10^4`` is in class 5. The ``mcs``
    simulator policy's own defaults go on to ``Delta_9 = 10^9``, which is 10
    classes for its 10 queues. The two put a coflow of width at least
    ``10^5`` in different queues: 5 here, 6 or later there. No Facebook
    coflow is that wide (the largest width is 21170).
    """
    if not (scale > 0 and np.isfinite(scale)):
        raise InstanceError(f"the width-threshold scale must be finite and > 0, got {scale!r}")
    delta = paper_width_thresholds(variant) * scale
    return evaluate(data, delta, priorities=np.arange(1, delta.size + 2), method=f"paper-{variant}")


def _prepare(
    data: Instance | Workload, size_thresholds: npt.ArrayLike | None, classes: int | None
) -> tuple[Workload, FloatArray]:
    w = as_workload(data)
    if w.num_coflows == 0:
        raise InstanceError("cannot classify an empty workload")
    return w, _size_thresholds(size_thresholds, classes)


# --------------------------------------------------------------------------- Algorithm 1


MAX_STEPS = 100_000
"""The most boundary moves :func:`sncf` makes (each costs a pass over the coflows)."""


def sncf(
    data: Instance | Workload,
    *,
    size_thresholds: npt.ArrayLike | None = None,
    classes: int | None = None,
    step: float = 10.0,
    start: float | None = None,
    compare: str = "le",
) -> Classification:
    """Algorithm 1 (CLASSIFICATIONTHRESH, then ASSIGNPRIORITY) as published.

    ``Delta_0 = start`` (default: the smallest width); for ``i = 1 .. n-1``:
    ``Delta_i = Delta_{i-1} * step``, then ``Delta_i *= step`` while
    ``A(T_i, Delta_i) <= A(T_i, Delta_i * step)``, where ``A`` is the accuracy
    of class ``i`` = ``[Delta_{i-1}, Delta_i)`` against ``[T_{i-1}, T_i)``.

    ``compare="lt"`` uses ``<`` instead, as the prose ("until the calculated
    percentage stop increasing") suggests; the pseudocode's ``<=`` (default)
    also walks across plateaus. One addition of ours: the loop stops once
    ``Delta_i`` exceeds the largest width, where the accuracy can no longer
    change and the published ``<=`` test would never end.

    ``start`` (not in the paper) is the search's ``Delta_0``: class 1 is
    ``[start, Delta_1)`` *during the search*. The result is still scored
    and applied with ``Delta_0 = 0`` (Eq. (2)), so coflows narrower than a
    ``start`` above the smallest width count in class 1's reported accuracy
    but not in the one the search maximised. With the default ``start``
    (the smallest width, Algorithm 1 line 2) the two agree.
    """
    t0 = time.perf_counter()
    w, t = _prepare(data, size_thresholds, classes)
    n = t.size + 1
    if not step > 1:
        raise InstanceError(f"step must be > 1, got {step!r}")
    try:
        better = {"le": np.less_equal, "lt": np.less}[compare]
    except KeyError:
        raise InstanceError(f"compare must be 'le' or 'lt', got {compare!r}") from None
    width = w.width.astype(np.float64)
    size_cls = _size_class(w.size, t)
    wmax = float(width.max())
    d0 = float(width.min()) if start is None else float(start)
    if not d0 > 0:
        raise InstanceError(f"start must be > 0 (the search multiplies it), got {start!r}")
    steps = (n - 1) * (math.log(max(wmax / d0, 1.0)) / math.log(step) + 2)
    if steps > MAX_STEPS:
        raise InstanceError(f"step {step!r} is too close to 1: Algorithm 1 would take about "
                            f"{steps:,.0f} steps from width {d0:g} to {wmax:g} (at most {MAX_STEPS:,})")

    def accuracy(i: int, lo: float, hi: float) -> float:
        inside = (width >= lo) & (width < hi)
        count = int(np.count_nonzero(inside))
        return float(np.count_nonzero(inside & (size_cls == i))) / count if count else 0.0

    deltas = []
    evaluations = 0
    previous = d0
    for i in range(n - 1):
        d = previous * step
        while d <= wmax:
            evaluations += 2
            if not better(accuracy(i, previous, d), accuracy(i, previous, d * step)):
                break
            d *= step
        deltas.append(d)
        previous = d
    info = {"step": float(step), "start": d0, "compare": compare, "accuracy_evaluations": evaluations}
    return evaluate(
        w,
        deltas,
        size_thresholds=t,
        method="published",
        runtime=time.perf_counter() - t0,
        info=info,
    )


# --------------------------------------------------------------------------- exact


def optimal_classification(
    data: Instance | Workload,
    *,
    size_thresholds: npt.ArrayLike | None = None,
    classes: int | None = None,
    allow_empty: bool = True,
    chunk: int = 2048,
) -> Classification:
    """The width thresholds minimising Eq. (1) exactly, by dynamic programming.

    Only the position of a threshold among the sorted distinct widths
    ``u_0 < ... < u_{m-1}`` matters: cut ``c`` (0..m) puts widths ``u_0 ..
    u_{c-1}`` below it. Class ``i`` between cuts ``a <= b`` has error
    ``1 - (N_i(b) - N_i(a)) / (N(b) - N(a))`` from prefix counts (``N`` all
    coflows, ``N_i`` those of size class ``i``), or 1 when ``a = b`` (empty).
    ``D_i(b) = min_{a <= b} D_{i-1}(a) + e_i(a, b)`` with ``D_0(0) = 0``;
    the answer is ``D_n(m)``. Ties go to the smallest cut. The reported
    ``Delta_i`` is ``u_c`` (the smallest width of the class above; any value
    in ``(u_{c-1}, u_c]`` classifies this workload the same), and
    ``max width + 1`` for ``c = m``.

    ``allow_empty=False`` requires every class to hold at least one coflow
    (raises if there are fewer distinct widths than classes).
    """
    t0 = time.perf_counter()
    w, t = _prepare(data, size_thresholds, classes)
    n = t.size + 1
    u, pos = np.unique(w.width, return_inverse=True)
    m = u.size
    if not allow_empty and m < n:
        raise InstanceError(f"{n} non-empty classes need {n} distinct widths, the workload has {m}")
    size_cls = _size_class(w.size, t)
    total = np.concatenate([[0], np.cumsum(np.bincount(pos, minlength=m))]).astype(np.float64)
    per_class = np.zeros((n, m + 1))
    per_class[:, 1:] = np.cumsum(np.bincount(size_cls * m + pos, minlength=n * m).reshape(n, m), axis=1)
    empty_cost = 1.0 if allow_empty else np.inf
    cuts_a = np.arange(m + 1)
    value = np.full(m + 1, np.inf)
    value[0] = 0.0
    choice = np.zeros((n, m + 1), dtype=np.int64)
    for i in range(n):
        targets = np.array([m]) if i == n - 1 else np.arange(m + 1)
        new = np.full(m + 1, np.inf)
        for s in range(0, targets.size, chunk):
            b = targets[s : s + chunk]
            alpha = total[b][None, :] - total[:, None]  # a x b
            beta = per_class[i][b][None, :] - per_class[i][:, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                err = np.where(alpha > 0, 1.0 - beta / np.where(alpha > 0, alpha, 1.0), empty_cost)
            cost = value[:, None] + err
            cost[cuts_a[:, None] > b[None, :]] = np.inf
            best = np.argmin(cost, axis=0)
            new[b] = cost[best, np.arange(b.size)]
            choice[i, b] = best
        value = new
    if not np.isfinite(value[m]):  # pragma: no cover - guarded by the distinct-width check
        raise InstanceError("no feasible classification")
    cuts = np.empty(n + 1, dtype=np.int64)
    cuts[n] = m
    for i in range(n - 1, -1, -1):
        cuts[i] = choice[i, cuts[i + 1]]
    inner = cuts[1:n]
    upper = np.append(u.astype(np.float64), float(u[-1]) + 1.0)
    deltas = upper[inner]
    info = {
        "distinct_widths": int(m),
        "cuts": inner.tolist(),
        "allow_empty": bool(allow_empty),
        "dp_error": float(value[m]),
        # thresholds in (lower, upper] give the same classes on this workload
        "equivalent_lower": [float(u[c - 1]) if c > 0 else 0.0 for c in inner],
    }
    return evaluate(w, deltas, size_thresholds=t, method="exact", runtime=time.perf_counter() - t0, info=info)


METHODS: Mapping[str, Callable[..., Classification]] = MappingProxyType(
    {"published": sncf, "exact": optimal_classification}
)
"""Classification methods by name."""


def classify(data: Instance | Workload, method: str = "exact", **options: Any) -> Classification:
    """Run a classification method of :data:`METHODS` by name."""
    return lookup(METHODS, method, "classification method")(data, **options)
