"""An adversarial search for small instances on which a lower bound or a heuristic is far
from the optimum of ``sum w_k C_k``.

The target is either a lower bound of :data:`coflowopt.bounds.BOUNDS` (the search
maximizes ``OPT / bound``, the bound's gap on the instance; an integrality gap when the
bound is an LP relaxation) or a scheduler of :data:`coflowopt.sim.POLICIES` (it maximizes
the scheduler's ``sum w_k C_k`` over ``OPT``, the same ratio as ``compare --bound``'s
``vs_bound`` with the optimum in place of the bound). ``OPT`` is proven by
:func:`coflowopt.exact.wcct.solve_exact`, so the instances are small: a few ports and
coflows on a big switch of unit capacities, or those put on a small network (``on``: a
k = 4 fat-tree, a spine-leaf fabric of a few leaves) for the network bounds and optima.

The search is simulated annealing with random restarts over data on an integer grid
(sizes ``1..max_size``, releases ``0..max_release``, weights ``1..max_weight``); a move
changes one flow's size or port, adds or removes a flow, or changes one coflow's release
or weight. The winner is re-checked from scratch: its optimum solved again (status
OPTIMAL required) and the bound or the scheduler recomputed.

Known upper bounds to compare with: the time-indexed LP's integrality gap is at most 4
(Fukunaga, "Integrality gap of time-indexed linear programming relaxation for coflow
scheduling", APPROX 2022); Sincronia's order is within 4 of the optimum (Agarwal et al.,
"Sincronia: near-optimal network design for coflows", SIGCOMM 2018); and for concurrent
open shop, the special case of coflows whose flows each use their own port pair, no
polynomial algorithm is within a factor below 2 in general (under the unique games
conjecture; Bansal and Khot, "Inapproximability of hypergraph vertex cover and
applications to scheduling problems", ICALP 2010), so the LP bounds of this package
cannot all be within less than 2 on every instance unless that conjecture fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._budget import TimeBudget, check_time_limit
from .._files import finite_number, natural_number
from .._frozen import Frozen
from ..bounds import BOUNDS, compute_bound
from ..errors import CoflowoptError
from ..instance import Coflow, Fabric, Instance
from ..result import Status
from .wcct import solve_exact

__all__ = ["GapSearchResult", "exact_ratio", "gap_ratio", "gap_search"]

EXACT_DENOMINATOR = 10**4
"""The largest denominator :func:`exact_ratio` accepts."""

EXACT_TOL = 1e-11
"""How close (relative) a value must be to that rational."""

COOLING = 0.98
"""The annealing's temperature is multiplied by this at each move after a restart."""


@dataclass(frozen=True, slots=True)
class _Point:
    """An instance on the grid: per coflow its release, weight and flows."""

    releases: tuple[int, ...]
    weights: tuple[int, ...]
    flows: tuple[tuple[tuple[int, int, int], ...], ...]

    def instance(self, ports: int, name: str = "",
                 on: Callable[[Instance], Instance] | None = None) -> Instance:
        """The instance on a big switch of ``ports`` unit ports, or put on a fabric by ``on``."""
        coflows = tuple(
            Coflow.from_flows(f"C{k + 1}", [(s, d, float(z)) for s, d, z in fl],
                              release=float(r), weight=float(w))
            for k, (r, w, fl) in enumerate(zip(self.releases, self.weights, self.flows, strict=True)))
        inst = Instance(Fabric.uniform(ports), coflows, name=name)
        return inst if on is None else on(inst).replace(name=name)


@dataclass(frozen=True, slots=True)
class GapSearchResult(Frozen):
    """The worst instance found and its re-checked ratio.

    ``ratio`` is ``numerator / denominator``: ``OPT / bound`` for a bound,
    ``heuristic / OPT`` for a scheduler. ``fraction`` is the same ratio as an exact
    rational where both values are (:func:`exact_ratio`), else ``None``. ``history``
    holds ``(iteration, best ratio so far)`` at each improvement; ``stopped`` says
    why the search ended (``"iterations"`` or ``"time_limit"``). ``instance`` is
    ``None`` (and ``ratio`` nan) if no candidate was evaluated in time.
    """

    target: str
    ratio: float
    numerator: float
    denominator: float
    fraction: Fraction | None
    instance: Instance | None
    iterations: int
    evaluated: int
    history: tuple[tuple[int, float], ...]
    stopped: str
    runtime: float


def exact_ratio(numerator: float, denominator: float) -> Fraction | None:
    """``numerator / denominator`` as a fraction, where both are rationals.

    "Exact" here means: each value is within a relative :data:`EXACT_TOL` of a rational
    ``p/q`` with ``q`` at most :data:`EXACT_DENOMINATOR`
    (:meth:`fractions.Fraction.limit_denominator`), and within a thousandth of the
    distance at which such fractions lie near it (``1 / (q * EXACT_DENOMINATOR)``): any
    number is about that close to one of them, so a relative test alone called nearly
    every value above 1,000 a fraction (``1000 * pi`` as 19072609/6071). The ratio of those
    rationals is returned. On integer data the optimum and the bounds are such rationals,
    computed in floating point; the fraction is the value they round to, not a proof.
    ``None`` if either value is no such rational or the denominator is 0.
    """
    parts = []
    for x in (numerator, denominator):
        if not math.isfinite(x):
            return None
        f = Fraction(x).limit_denominator(EXACT_DENOMINATOR)
        err = abs(float(f) - x)
        if err > EXACT_TOL * max(1.0, abs(x)) or err * f.denominator * EXACT_DENOMINATOR > 1e-3:
            return None
        parts.append(f)
    return None if parts[1] == 0 else parts[0] / parts[1]


def _target(bound: str | None, scheduler: str | None) -> tuple[str, str]:
    from ..sim import POLICIES

    if (bound is None) == (scheduler is None):
        raise CoflowoptError("give exactly one target: a bound or a scheduler")
    for what, name in (("bound", bound), ("scheduler", scheduler)):
        if name is not None and not isinstance(name, str):
            raise CoflowoptError(f"the {what} is a name, got {name!r:.60}")
    if bound is not None:
        if bound not in BOUNDS and bound != "best":
            raise CoflowoptError(
                f"unknown bound '{bound}'; choose one of {', '.join([*BOUNDS, 'best'])}")
        return "bound", bound
    assert scheduler is not None
    if scheduler not in POLICIES:
        raise CoflowoptError(
            f"unknown scheduler '{scheduler}'; choose one of {', '.join(POLICIES)}")
    return "scheduler", scheduler


def gap_ratio(
    inst: Instance, *, bound: str | None = None, scheduler: str | None = None,
    time_limit: float = 10.0,
) -> tuple[float, float]:
    """``(numerator, denominator)`` of the target's ratio on ``inst``: ``(OPT, bound)`` or
    ``(heuristic, OPT)``, each a ``sum w_k C_k``.

    Raises :class:`CoflowoptError` if the optimum is not proven within ``time_limit``.
    """
    kind, name = _target(bound, scheduler)
    if not isinstance(inst, Instance):
        raise CoflowoptError(f"gap_ratio takes an Instance, got {type(inst).__name__}")
    check_time_limit(time_limit)
    values = _values(inst, kind, name, time_limit)
    if values is None:
        raise CoflowoptError(f"the optimum was not proven within {time_limit:g} s")
    return values


def _values(inst: Instance, kind: str, name: str, time_limit: float) -> tuple[float, float] | None:
    """:func:`gap_ratio`'s pair, ``None`` if the optimum is not proven in time."""
    opt = solve_exact(inst, time_limit=time_limit)
    if opt.status is not Status.OPTIMAL:
        return None
    if kind == "bound":
        return float(opt.objective), float(compute_bound(inst, name, time_limit=time_limit).bound)
    from ..sim import simulate

    value = simulate(inst, name, record=False).summary.weighted_completion
    return float(value), float(opt.objective)


def gap_search(
    *,
    bound: str | None = None,
    scheduler: str | None = None,
    ports: int = 3,
    coflows: int = 3,
    max_flows: int = 3,
    max_size: int = 10,
    max_release: int = 3,
    max_weight: int = 3,
    iterations: int = 200,
    restart: int = 40,
    temperature: float = 0.05,
    seed: int = 0,
    time_limit: float = 60.0,
    eval_limit: float = 10.0,
    on: Callable[[Instance], Instance] | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> GapSearchResult:
    """Search for an instance that maximizes the target's ratio (see the module).

    Parameters
    ----------
    bound, scheduler
        The target: a bound's name (or ``"best"``) or a scheduler's; exactly one.
    ports, coflows, max_flows
        The shape: a big switch of ``ports`` unit ports, ``coflows`` coflows of 1 to
        ``max_flows`` flows each.
    max_size, max_release, max_weight
        The grid: integer sizes in ``1..max_size``, releases in ``0..max_release`` and
        weights in ``1..max_weight`` (1 only: unweighted).
    iterations
        Candidates to evaluate (the first is a random instance).
    restart
        A new random instance after this many moves without improving the current one.
    temperature
        The annealing's temperature (in units of the ratio) at each restart, multiplied
        by :data:`COOLING` at each move; 0 is hill climbing.
    seed
        The random seed; the search is deterministic for a seed when no time limit
        cuts it short, and its first ``N`` iterations are the same for every
        ``iterations >= N``.
    time_limit
        Seconds for the whole search (read through :func:`coflowopt._budget.now`); the
        re-check of the best instance found takes at most ``eval_limit`` more.
    eval_limit
        Seconds for each exact solve, and at most what is left of ``time_limit``; a
        candidate whose optimum is not proven is skipped.
    on
        Puts each candidate (a big switch of ``ports`` unit ports) on a fabric before it
        is evaluated, for example ``lambda inst: place(inst, "fat-tree", {"k": 4})``
        (:func:`coflowopt.fabric.place`): the search is then over the instances that
        placement makes, the optimum and the bound are the fabric's, and the witness
        carries its fabric. Default: the big switch itself.
    progress
        Called with ``(iteration, best ratio)`` at each improvement of the best.
    """
    kind, name = _target(bound, scheduler)
    for what, value, low in (("ports", ports, 1), ("coflows", coflows, 1),
                             ("max_flows", max_flows, 1), ("max_size", max_size, 1),
                             ("max_release", max_release, 0), ("max_weight", max_weight, 1),
                             ("iterations", iterations, 1), ("restart", restart, 1),
                             ("seed", seed, 0)):
        if not natural_number(value) or value < low:
            raise CoflowoptError(f"{what} must be an integer >= {low}, got {value!r}")
    for what, x in (("time_limit", time_limit), ("eval_limit", eval_limit)):
        if not (finite_number(x) and x > 0):
            raise CoflowoptError(f"{what} must be a finite number > 0, got {x!r}")
    if not (finite_number(temperature) and temperature >= 0):
        raise CoflowoptError(f"temperature must be a finite number >= 0, got {temperature!r}")
    for what, fn in (("on", on), ("progress", progress)):
        if fn is not None and not callable(fn):
            raise CoflowoptError(f"{what} must be a function (or None), got {fn!r:.60}")

    ports, coflows, max_flows, max_size, max_release, max_weight, iterations, restart = (
        int(v) for v in (ports, coflows, max_flows, max_size, max_release, max_weight,
                         iterations, restart))
    budget = TimeBudget(time_limit)
    rng = np.random.default_rng(seed)
    grid = _Grid(ports, coflows, max_flows, max_size, max_release, max_weight)

    def evaluate(point: _Point) -> float | None:
        left = budget.left()
        limit = eval_limit if left is None else min(eval_limit, left)
        if limit <= 0:
            return None
        values = _values(point.instance(ports, on=on), kind, name, limit)
        if values is None or not (math.isfinite(values[1]) and values[1] > 0):
            return None  # not proven in time (or no bound): skipped
        return values[0] / values[1]

    best: _Point | None = None
    best_ratio = -math.inf
    history: list[tuple[int, float]] = []
    current, current_ratio, stale = None, -math.inf, 0
    done = evaluated = moves = 0
    stopped = "iterations"
    for it in range(1, iterations + 1):
        if budget.expired():
            stopped = "time_limit"
            break
        if current is None or stale >= restart:
            candidate, stale = grid.random(rng), 0
            fresh = True
        else:
            candidate, fresh = grid.move(current, rng), False
        ratio = evaluate(candidate)
        done = it
        if ratio is None:
            if budget.expired():
                stopped = "time_limit"
                break
            continue
        evaluated += 1
        if fresh:
            moves = 0
        moves += 1
        # cooling per restart, not over the whole run: the first N iterations are the same
        # for every --iterations >= N, so a witness is reproduced by stopping where it was found
        temp = temperature * COOLING**moves
        if fresh or ratio > current_ratio or (
                temp > 0 and rng.random() < math.exp((ratio - current_ratio) / temp)):
            stale = 0 if ratio > current_ratio or fresh else stale + 1
            current, current_ratio = candidate, ratio
        else:
            stale += 1
        if ratio > best_ratio:
            best, best_ratio = candidate, ratio
            history.append((it, ratio))
            if progress is not None:
                progress(it, ratio)

    if best is None:
        return GapSearchResult(f"{kind} {name}", math.nan, math.nan, math.nan, None, None, done,
                               evaluated, (), "time_limit" if budget.expired() else stopped,
                               budget.elapsed())
    # the re-check: everything recomputed on the instance as it will be written
    inst = best.instance(ports, on=on)
    num, den = gap_ratio(inst, bound=bound, scheduler=scheduler,
                         time_limit=eval_limit)
    fraction = exact_ratio(num, den)
    ratio_text = str(fraction) if fraction is not None else f"{num / den:.6g}"
    label = "OPT / " + name if kind == "bound" else name + " / OPT"
    inst = best.instance(ports, name=f"gap witness: {label} = {ratio_text} ({num / den:.6g})",
                         on=on)
    return GapSearchResult(f"{kind} {name}", num / den, num, den, fraction, inst, done,
                           evaluated, tuple(history), stopped, budget.elapsed())


@dataclass(frozen=True, slots=True)
class _Grid:
    """The instances the search may visit, and its moves between them."""

    ports: int
    coflows: int
    max_flows: int
    max_size: int
    max_release: int
    max_weight: int

    def _flow(self, rng: np.random.Generator) -> tuple[int, int, int]:
        return (int(rng.integers(self.ports)), int(rng.integers(self.ports)),
                int(rng.integers(1, self.max_size + 1)))

    def random(self, rng: np.random.Generator) -> _Point:
        flows = tuple(tuple(self._flow(rng) for _ in range(int(rng.integers(1, self.max_flows + 1))))
                      for _ in range(self.coflows))
        releases = tuple(int(x) for x in rng.integers(0, self.max_release + 1, self.coflows))
        weights = tuple(int(x) for x in rng.integers(1, self.max_weight + 1, self.coflows))
        return _Point(releases, weights, flows)

    def move(self, p: _Point, rng: np.random.Generator) -> _Point:
        """A neighbour of ``p`` (one change; a change that would do nothing is redrawn)."""
        while True:
            q = self._change(p, rng)
            if q != p:
                return q

    def _change(self, p: _Point, rng: np.random.Generator) -> _Point:
        k = int(rng.integers(self.coflows))
        flows = [list(map(list, fl)) for fl in p.flows]
        releases, weights = list(p.releases), list(p.weights)
        kind = int(rng.integers(6))
        fl = flows[k]
        f = int(rng.integers(len(fl)))
        if kind == 0:  # a size: a small step or a new value
            step = int(rng.integers(-2, 3)) if rng.random() < 0.7 else 0
            fl[f][2] = (min(self.max_size, max(1, fl[f][2] + step)) if step
                        else int(rng.integers(1, self.max_size + 1)))
        elif kind == 1:  # a port, ingress or egress
            fl[f][int(rng.integers(2))] = int(rng.integers(self.ports))
        elif kind == 2:  # add or remove a flow
            if len(fl) < self.max_flows and (len(fl) == 1 or rng.random() < 0.5):
                fl.append(list(self._flow(rng)))
            elif len(fl) > 1:
                del fl[f]
        elif kind == 3:
            releases[k] = int(rng.integers(0, self.max_release + 1))
        elif kind == 4:
            weights[k] = int(rng.integers(1, self.max_weight + 1))
        else:  # a whole flow redrawn
            fl[f] = list(self._flow(rng))
        return _Point(tuple(releases), tuple(weights),
                      tuple(tuple((a, b, c) for a, b, c in g) for g in flows))
