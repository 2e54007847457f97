"""Strategy-proofness search: can a coflow raise its progress by misreporting?

A mechanism is strategy-proof when no coflow can increase its *true*
progress by reporting a correlation vector other than its own (§7.1,
Theorem D.3.3). :func:`lie_search` looks for a counterexample: with every
other coflow truthful, it evaluates the mechanism on many reports of one
coflow and measures that coflow's progress under its true vector.

Reports are non-negative vectors scaled to a maximum of 1 over the links
some coflow uses. The search, in order:

1. structured lies: the truth; all ones on the coflow's links and on all
   links (the default vector of §7.6.1 and the lie of Figure 7.4); each
   entry raised to 1, set to 0, halved or doubled; blends with all ones;
2. an exhaustive grid (entries ``j / g``) when there are at most 3 links;
3. random reports (uniform, sparse, and multiplicative perturbations of
   the truth), seeded for reproducibility;
4. pattern search (coordinate steps that shrink) from the best reports.

The answer is the best lie found as a witness, or "none found" with the
effort spent - a search, not a proof. For exact problems the witness is
re-evaluated in ``Fraction`` arithmetic.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._budget import check_time_limit, now
from .._files import finite_number, natural_number
from ..errors import InstanceError
from ._arith import as_float, rationalize
from .allocation import progress
from .mechanisms import MECHANISMS, allocate
from .problem import FairnessProblem, check_problem

__all__ = ["LieSearchResult", "lie_search", "payoffs"]


@dataclass(frozen=True, slots=True)
class LieSearchResult:
    """Outcome of :func:`lie_search`."""

    mechanism: str
    coflow: str
    truthful_progress: Any
    """The coflow's progress when everyone reports the truth."""
    best_progress: Any
    """Its true progress under the best report found."""
    found: bool
    """True when a report beats the truth by more than the tolerance."""
    witness: npt.NDArray[Any] | None
    """The best profitable report (``None`` if none found)."""
    evaluations: int
    effort: Mapping[str, int]
    """Evaluations per phase: structured, grid, random, local."""
    grid_resolution: int | None
    runtime: float
    stopped: str
    """``"completed"``, ``"time_limit"`` or ``"max_evaluations"``."""
    seed: int
    exact: bool
    """True when the witness's gain was confirmed in exact arithmetic."""
    links: tuple[int, ...]
    """The links the reports range over."""
    options: Mapping[str, Any] = field(default_factory=dict)
    all_progress: npt.NDArray[Any] | None = None
    """Every coflow's true progress under the witness (None if none found)."""

    @property
    def gain(self) -> Any:
        return self.best_progress - self.truthful_progress


def _structured(truth: npt.NDArray[np.float64]) -> Iterator[npt.NDArray[np.float64]]:
    n = truth.size
    yield truth
    yield (truth > 0).astype(float)
    yield np.ones(n)
    for j in range(n):
        for op in ("one", "zero", "half", "double"):
            v = truth.copy()
            if op == "one":
                v[j] = 1.0
            elif op == "zero":
                v[j] = 0.0
            elif op == "half":
                v[j] *= 0.5
            else:
                v[j] *= 2.0
            yield v
    for t in (0.25, 0.5, 0.75):
        yield t * truth + (1 - t) * np.ones(n)
        yield t * truth + (1 - t) * (truth > 0)


MAX_GRID_POINTS = 1_000_000
"""The most grid reports :func:`lie_search` tries (each one an allocation)."""


def _grid_points(n: int, g: int) -> int:
    """How many vectors :func:`_grid` yields: ``(g + 1)^n - g^n``."""
    return (g + 1) ** n - g ** n


def _grid(n: int, g: int) -> Iterator[npt.NDArray[np.float64]]:
    """Every vector with entries in {0, 1/g, ..., 1} whose largest entry is 1, in
    lexicographic order, without visiting the ``g^n`` vectors below 1 (a product of
    all ``(g + 1)^n`` took 15 s to filter at ``g = 10,000``)."""
    combo = [0] * n

    def fill(i: int, top: bool) -> Iterator[npt.NDArray[np.float64]]:
        if i == n:
            yield np.array(combo, dtype=float) / g
            return
        for x in range(g + 1) if (top or i < n - 1) else (g,):
            combo[i] = x
            yield from fill(i + 1, top or x == g)

    if n:
        yield from fill(0, False)


def _normalise(v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64] | None:
    v = np.clip(v, 0.0, None)
    top = float(v.max()) if v.size else 0.0
    if not np.isfinite(top) or top <= 0:
        return None
    return v / top


def lie_search(
    problem: FairnessProblem,
    coflow: str | int,
    mechanism: str = "hug",
    *,
    options: Mapping[str, Any] | None = None,
    grid: int | None = None,
    samples: int = 400,
    local_rounds: int = 40,
    starts: int = 3,
    seed: int = 0,
    tol: float = 1e-9,
    time_limit: float | None = None,
    max_evaluations: int | None = None,
) -> LieSearchResult:
    """Search misreports of ``coflow`` that raise its true progress under ``mechanism``.

    Parameters
    ----------
    options
        Keyword options of the mechanism (e.g. ``{"cooperative": True}``).
    grid
        Grid resolution ``g`` (entries ``j / g``) when the reports span at most
        3 links; default 48 for 2 links, 16 for 3. ``0`` skips the grid.
    samples
        Random reports to try.
    local_rounds
        Pattern-search rounds per start; ``starts`` best reports are refined.
    tol
        A lie counts when it beats the truth by more than
        ``tol * max(1, truthful progress)``.
    time_limit, max_evaluations
        Stop early; the result says so in ``stopped``. The exact confirmation of
        the truthful progress and of a witness (exact problems) is made only while
        time is left (the last exact allocation started may still end after it).
    """
    problem = check_problem(problem, "lie_search")
    for name, given in (("seed", seed), ("samples", samples), ("local_rounds", local_rounds),
                        ("starts", starts)):
        if not natural_number(given):
            raise InstanceError(f"{name} must be an integer >= 0, got {given!r:.60}")
    if grid is not None and not natural_number(grid):
        raise InstanceError(f"grid must be an integer >= 0 (0: no grid), got {grid!r:.60}")
    if time_limit is not None:
        check_time_limit(time_limit, InstanceError)
    if not (finite_number(tol) and tol >= 0):
        raise InstanceError(f"tol must be a finite number >= 0, got {tol!r:.60}")
    if max_evaluations is not None and not (natural_number(max_evaluations) and max_evaluations >= 1):
        raise InstanceError(f"max_evaluations must be an integer >= 1 (or None), got "
                            f"{max_evaluations!r:.60}")
    if options is not None and not isinstance(options, Mapping):
        raise InstanceError(f"options must be a mapping of the mechanism's options (say "
                            f"{{'cooperative': True}}), got {options!r:.60}")
    opts = dict(options or {})
    if mechanism not in MECHANISMS:
        raise InstanceError(f"unknown mechanism '{mechanism}' (known: {', '.join(MECHANISMS)})")
    if MECHANISMS[mechanism].needs_flows:
        raise InstanceError(
            f"'{mechanism}' allocates flows, not correlation vectors: a lie there is a change of "
            "flows, which this search does not model"
        )
    k = problem.index(coflow)
    fp = problem.to_float()
    d = as_float(fp.vectors)
    links = tuple(int(i) for i in np.flatnonzero(d.sum(axis=0) > 0))
    n = len(links)
    truth_k = d[k, list(links)]
    rng = np.random.default_rng(seed)
    t0 = now()
    effort = {"structured": 0, "grid": 0, "random": 0, "local": 0}
    stopped = "completed"
    seen: dict[bytes, float] = {}

    class _Stop(Exception):
        pass

    def value(v: npt.NDArray[np.float64], phase: str) -> float:
        nonlocal stopped
        w = _normalise(v)
        if w is None:
            return -np.inf
        w = np.round(w, 12)
        key = w.tobytes()
        if key in seen:
            return seen[key]
        # the truthful report (the first evaluation) is always made
        if seen and time_limit is not None and now() - t0 > time_limit:
            stopped = "time_limit"
            raise _Stop
        if seen and max_evaluations is not None and len(seen) >= max_evaluations:
            stopped = "max_evaluations"
            raise _Stop
        full_v = np.zeros(fp.num_links)
        full_v[list(links)] = w
        limited = dict(opts)
        if seen and time_limit is not None and "time_limit" in MECHANISMS[mechanism].options:
            # an equilibrium search (PS-P) gets the time left; one it leaves unfinished is no
            # evaluation (its allocation is not the mechanism's): the search stops there
            limited["time_limit"] = max(time_limit - (now() - t0), 1e-3)
        alloc = allocate(fp.with_vector(k, full_v), mechanism, **limited)
        if "time_limit" in limited and alloc.info.get("stopped") == "time_limit":
            stopped = "time_limit"
            raise _Stop
        val = float(progress(alloc.allocation, fp)[k])
        seen[key] = val
        effort[phase] += 1
        return val

    base = value(truth_k, "structured")
    best_v, best = truth_k.copy(), base

    def better(val: float) -> bool:
        # a strictly better report, beyond float noise: keeps the first (simplest) witness
        return val > best + 1e-12 * max(1.0, abs(best))

    gsize = grid if grid is not None else {1: 1, 2: 48, 3: 16}.get(n, 0)
    if n <= 3 and gsize > 0 and _grid_points(n, gsize) > MAX_GRID_POINTS:
        raise InstanceError(
            f"grid {gsize} on {n} links has {_grid_points(n, gsize):,} reports to try (limit "
            f"{MAX_GRID_POINTS:,}); use a coarser grid")
    try:
        for v in _structured(truth_k):
            val = value(v, "structured")
            if better(val):
                best_v, best = v, val
        if n <= 3 and gsize > 0:
            for v in _grid(n, gsize):
                val = value(v, "grid")
                if better(val):
                    best_v, best = v, val
        for i in range(samples):
            kind = i % 3
            if kind == 0:
                v = rng.random(n)
            elif kind == 1:
                v = rng.random(n) * (rng.random(n) < 0.6)
            else:
                v = truth_k * np.exp(rng.normal(0.0, 0.7, n)) + (truth_k == 0) * rng.random(n) * 0.3
            val = value(v, "random")
            if better(val):
                best_v, best = _normalise(v), val  # type: ignore[assignment]
        ranked = sorted(
            ((val, key) for key, val in seen.items()), key=lambda t: -t[0]
        )[: max(starts, 1)]
        for _, key in ranked:
            x = np.frombuffer(key, dtype=np.float64).copy()
            fx = seen[key]
            step = 0.25
            for _ in range(local_rounds):
                improved = False
                for j in range(n):
                    for sgn in (1.0, -1.0):
                        y = x.copy()
                        y[j] = min(max(y[j] + sgn * step, 0.0), 1.0)
                        y_n = _normalise(y)
                        if y_n is None:
                            continue
                        fy = value(y_n, "local")
                        if fy > fx:
                            x, fx, improved = y_n, fy, True
                if better(fx):
                    best_v, best = x.copy(), fx
                if not improved:
                    step /= 2
                    if step < 1e-6:
                        break
    except _Stop:
        pass

    found = best > base + tol * max(1.0, abs(base))
    witness = None
    exact = False
    truthful: Any = base
    best_out: Any = best
    all_prog = None
    exact_truth = None

    def in_time() -> bool:
        return time_limit is None or now() - t0 <= time_limit

    # the exact confirmations only within the time limit (on big problems an exact
    # allocation takes seconds); past it the float results stand, with exact False
    if problem.exact and in_time():
        honest = allocate(problem, mechanism, **opts)
        if honest.exact:
            exact_truth = progress(honest.allocation, problem)
            truthful = exact_truth[k]
            if not found:
                best_out = truthful
    if found:
        wv = np.zeros(fp.num_links)
        wv[list(links)] = _normalise(np.asarray(best_v))
        witness = wv
        rep = fp.with_vector(k, wv)
        all_prog = progress(allocate(rep, mechanism, **opts).allocation, fp)
        if exact_truth is not None:
            # the float witness may sit on a boundary (a tie); try nearby simple fractions
            for ew in (rationalize(wv, 100), rationalize(wv, 10**4), rationalize(wv, 10**6)):
                if not in_time():
                    break
                alloc = allocate(problem.with_vector(k, ew), mechanism, **opts)
                if not alloc.exact:
                    continue
                exact_prog = progress(alloc.allocation, problem)
                if exact_prog[k] > exact_truth[k]:
                    witness, truthful, best_out, all_prog = ew, exact_truth[k], exact_prog[k], exact_prog
                    exact = True
                    break
    return LieSearchResult(
        mechanism=mechanism,
        coflow=problem.ids[k],
        truthful_progress=truthful,
        best_progress=best_out,
        found=bool(found),
        witness=witness,
        evaluations=sum(effort.values()),
        effort=effort,
        grid_resolution=gsize if n <= 3 else None,
        runtime=now() - t0,
        stopped=stopped,
        seed=seed,
        exact=exact,
        links=links,
        options=opts,
        all_progress=all_prog,
    )


def payoffs(
    problem: FairnessProblem,
    mechanism: str,
    lies: Mapping[str, npt.ArrayLike],
    **options: Any,
) -> dict[tuple[bool, ...], npt.NDArray[Any]]:
    """True progress of every coflow for each combination of who lies (Figure 7.5).

    ``lies`` maps coflow ids to their misreports; the keys of the result are
    tuples of booleans (does each listed coflow lie), in the order of ``lies``.
    """
    problem = check_problem(problem, "payoffs")
    if not isinstance(lies, Mapping):
        raise InstanceError(f"lies maps coflow ids to their misreported vectors, got "
                            f"{type(lies).__name__}")
    names = list(lies)
    out: dict[tuple[bool, ...], npt.NDArray[Any]] = {}
    for who in itertools.product((False, True), repeat=len(names)):
        rep = problem
        for name, lying in zip(names, who, strict=True):
            if lying:
                rep = rep.with_vector(name, lies[name])
        out[who] = progress(allocate(rep, mechanism, **options).allocation, problem)
    return out
