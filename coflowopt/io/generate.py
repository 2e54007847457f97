"""Seeded workload generators shaped like the published evaluations.

Every generator takes a ``seed`` and is reproducible: the same arguments give
the same instance, bit for bit.

*Offered load* is the load an instance's arrivals realise,
:func:`offered_load` (what ``coflowopt info`` prints): its total data over
the span of its release times and the total ingress capacity ``C``. Every
generator that takes a ``load`` (:func:`synthetic`, :func:`poisson_arrivals`,
:func:`batch_arrivals`, :func:`rescale_load`) makes that realised load equal
to ``load`` (to rounding). The arrivals are still Poisson: exponential gaps
are drawn, then scaled together so that their span gives the load; the
release times are then distributed as a Poisson process's given its number of
arrivals and its span (the inner ones uniform over the span). MCS (§VIII-C)
and Sincronia's generator instead set the arrival rate, ``lambda * E[coflow
size] / C = rho``, an expected load: a sample of ``K`` coflows realises about
``rho * K / (K - 2)``, with a spread of order ``rho / sqrt(K)`` (10 coflows at
0.5 realised 0.68 on average over 40 seeds). The two agree for many coflows;
for few, only the realised load is what was asked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .._files import natural_number
from ..errors import InstanceError
from ..instance import MB, NARROW_WIDTH, SHORT_LENGTH, Coflow, Fabric, Instance
from .benchmark import MAX_PORTS

__all__ = [
    "FACEBOOK_BINS",
    "SHAPES",
    "WorkloadClass",
    "batch_arrivals",
    "deadlines_from_isolation",
    "facebook_bins",
    "offered_load",
    "poisson_arrivals",
    "rescale_load",
    "synthetic",
]


MAX_WIDTH = 1_000_000
"""The widest coflow a :class:`WorkloadClass` may ask for (flows are arrays: a width of 1e9
needs tens of GB; the Facebook trace's widest coflow has 21,170 flows)."""


@dataclass(frozen=True, slots=True)
class WorkloadClass:
    """A class of coflows: its share, width range and length range.

    Widths (flow counts) and lengths (largest flow, bytes) are drawn
    log-uniformly within the closed ranges; the other flows of a coflow get
    sizes uniform in ``[min_share * length, length]``.
    """

    name: str
    fraction: float
    width: tuple[int, int]
    length: tuple[float, float]
    min_share: float = 0.1

    def __post_init__(self) -> None:
        if not self.fraction >= 0:
            raise InstanceError(f"class {self.name}: fraction must be >= 0, got {self.fraction!r}")
        lo, hi = self.width
        if not (1 <= lo <= hi):
            raise InstanceError(
                f"class {self.name}: width range must satisfy 1 <= lo <= hi, got {self.width}"
            )
        if hi > MAX_WIDTH:
            raise InstanceError(f"class {self.name}: widths must be at most {MAX_WIDTH:,}, got {hi:,}")
        a, b = self.length
        if not (0 < a <= b and math.isfinite(b)):
            raise InstanceError(
                f"class {self.name}: length range must be finite with 0 < lo <= hi, got {self.length}"
            )
        if not (0 < self.min_share <= 1):
            raise InstanceError(f"class {self.name}: min_share must be in (0, 1], got {self.min_share!r}")


def facebook_bins(
    *, min_width: int = 1, max_width: int = 1000, max_length: float = 1024 * MB
) -> tuple[WorkloadClass, ...]:
    """The four bins of the Facebook trace as classes, with their published shares.

    Short coflows' longest flows lie in [1 MB, 5 MB), long ones' in [5 MB,
    ``max_length``] (none when ``max_length`` is 5 MB or less); narrow coflows have
    1 to 50 flows, wide ones 51 to ``max_width`` (the bins of
    :meth:`Instance.bins <coflowopt.Instance.bins>`, so every coflow lands in its
    class's bin). Every coflow has ``min_width`` to
    ``max_width`` flows and a longest flow of at most ``max_length`` bytes: a bin
    left with no room (``max_width`` 50 or less: no wide coflows) is left out,
    its share going to the others in proportion, and a range that reaches past a
    limit stops there (``max_width=4``: narrow coflows of 1 to 4 flows only).
    """
    for name, value in (("min_width", min_width), ("max_width", max_width)):
        if isinstance(value, bool) or int(value) != value or not 1 <= value <= MAX_WIDTH:
            raise InstanceError(f"{name} must be an integer in 1..{MAX_WIDTH:,}, got {value!r}")
    if min_width > max_width:
        raise InstanceError(f"min_width ({min_width}) is above max_width ({max_width})")
    if not (math.isfinite(max_length) and max_length > 0):
        raise InstanceError(f"max_length must be finite and > 0, got {max_length!r}")
    narrow = (max(1, int(min_width)), min(NARROW_WIDTH, int(max_width)))
    wide = (max(NARROW_WIDTH + 1, int(min_width)), int(max_width))
    short = (min(1.0 * MB, max_length), min(float(SHORT_LENGTH), max_length))
    long = (float(SHORT_LENGTH), max_length)
    bins = (("SN", 0.52, narrow, short), ("LN", 0.16, narrow, long),
            ("SW", 0.15, wide, short), ("LW", 0.17, wide, long))
    return tuple(WorkloadClass(name, share, width, length)
                 for name, share, width, length in bins
                 if width[0] <= width[1] and length[0] <= length[1]
                 and (length is short or max_length > SHORT_LENGTH))


FACEBOOK_BINS: tuple[WorkloadClass, ...] = facebook_bins()
"""The four bins with their published shares of coflows (the Varys dissertation's Table
5.3, MCS Table IV): short < 5 MB longest flow, narrow <= 50 flows. The upper ends (1000
flows, 1 GB) are our choice: the papers do not state them. Lengths of short coflows stay
below 5 MB (the range's upper end is open)."""


def _rng(seed: int | None) -> np.random.Generator:
    if seed is not None and not natural_number(seed):
        raise InstanceError(f"seed must be an integer >= 0 or None, got {seed!r:.80}")
    return np.random.default_rng(seed)


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    if lo == hi:
        return float(lo)
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def offered_load(instance: Instance) -> float:
    """The load an instance's arrivals realise: data / (release span x ingress capacity).

    What every generator's ``load`` sets (see the module docstring). ``nan`` when all
    coflows arrive at once.
    """
    if instance.num_coflows < 2:
        return float("nan")
    span = float(instance.release.max() - instance.release.min())
    if span <= 0:
        return float("nan")
    # divided one at a time: span x capacity overflowed to inf (a load of 1e-300 read 0)
    return float(instance.size.sum()) / span / float(instance.fabric.ingress.sum())


def _check_load(load: float) -> float:
    if not (math.isfinite(load) and load > 0):
        raise InstanceError(f"load must be finite and > 0, got {load!r}")
    return float(load)


def _retimed(instance: Instance, releases: np.ndarray, what: str) -> Instance:
    """``instance`` with new release times, or an error naming ``what`` made them overflow."""
    if not np.isfinite(releases).all():
        raise InstanceError(f"{what} puts release times beyond float64's range")
    return instance.with_releases(releases)


def _at_load(instance: Instance, offsets: np.ndarray, load: float, first: float = 0.0) -> Instance:
    """``instance`` released at ``first + offsets * c``, ``c`` making the realised offered
    load ``load`` (``offsets``: one per coflow, the smallest 0, the largest positive)."""
    rho = _check_load(load)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        # data / capacity / load: the span the load needs (divided one at a time, as above)
        span = float(instance.size.sum()) / float(instance.fabric.ingress.sum()) / rho
        releases = first + offsets * (span / float(offsets.max()))
    return _retimed(instance, releases, f"a load of {load!r}")


def _needs_two(count: int, what: str) -> None:
    if count < 2:
        raise InstanceError(
            f"a load needs at least 2 {what} (the offered load is the data over the span of "
            f"the release times), got {count}")


SHAPES = ("flows", "shuffle")
"""What :func:`synthetic` makes of a coflow's width: independent flows, or a full shuffle."""

MAX_GENERATED = 10_000_000
"""The most coflows :func:`synthetic` makes (each a Python object: gigabytes beyond)."""


def synthetic(
    num_coflows: int,
    num_ports: int,
    *,
    classes: Sequence[WorkloadClass] = FACEBOOK_BINS,
    load: float | None = None,
    port_rate: float = 1.25e8,
    seed: int | None = 0,
    name: str = "",
    shape: str = "flows",
) -> Instance:
    """Random coflows drawn from classes of width and length (default: the FB bins).

    Each coflow picks a class with the classes' fractions, a width and a
    length in the class's ranges. ``shape="flows"``: that many flows between
    uniformly random ports (pairs may repeat), sizes as the class says.
    ``shape="shuffle"``: a MapReduce shuffle, the structure of the Facebook
    trace (and all the Coflow-Benchmark format can hold): ``m`` mappers on
    random ports (they may share one) send equal parts of each of ``r``
    reducers' data, reducers on distinct ports, ``m * r`` the width (``m`` a
    divisor of it, drawn uniformly among those that leave at most as many
    reducers as ports); the class's size rule applies per reducer (every
    flow into a reducer has its size; the longest is the length). With
    ``load`` set (at least 2 coflows), arrivals are Poisson at that realised
    offered load (:func:`poisson_arrivals`, first arrival at 0); with
    ``load=None`` (the default, as ``coflowopt generate synthetic``) all
    coflows arrive at 0. :func:`facebook_bins` makes classes with other
    width and length limits.
    """
    if shape not in SHAPES:
        raise InstanceError(f"shape must be one of {', '.join(SHAPES)}, got {shape!r}")
    if isinstance(num_coflows, bool) or int(num_coflows) != num_coflows or num_coflows < 1:
        raise InstanceError(f"number of coflows must be a positive integer, got {num_coflows!r}")
    if num_coflows > MAX_GENERATED:
        raise InstanceError(f"number of coflows must be at most {MAX_GENERATED:,}, got {num_coflows:,}")
    if isinstance(num_ports, bool) or int(num_ports) != num_ports or not 1 <= num_ports <= MAX_PORTS:
        raise InstanceError(f"number of ports must be an integer in 1..{MAX_PORTS:,}, got {num_ports!r}")
    if load is not None:
        _check_load(load)
        _needs_two(int(num_coflows), "coflows")
    frac = np.array([c.fraction for c in classes], dtype=float)
    if frac.size == 0 or frac.sum() <= 0:
        raise InstanceError("need at least one class with a positive fraction")
    rng = _rng(seed)
    picks = rng.choice(len(classes), size=int(num_coflows), p=frac / frac.sum())
    coflows = []
    for k, ci in enumerate(picks):
        cls = classes[int(ci)]
        width = round(_log_uniform(rng, cls.width[0], cls.width[1]))
        length = _log_uniform(rng, cls.length[0], cls.length[1])
        if cls.length[1] > cls.length[0]:
            length = min(length, np.nextafter(cls.length[1], 0))
        if shape == "shuffle":
            src, dst, sizes = _shuffle(rng, width, length, cls.min_share, int(num_ports))
        else:
            sizes = rng.uniform(cls.min_share * length, length, size=width)
            sizes[rng.integers(width)] = length
            src = rng.integers(0, num_ports, size=width)
            dst = rng.integers(0, num_ports, size=width)
        coflows.append(Coflow(str(k), src, dst, sizes))
    inst = Instance(Fabric.uniform(num_ports, port_rate), tuple(coflows), name=name or f"synthetic-{seed}")
    if load is None:
        return inst
    return poisson_arrivals(inst, load, seed=None if seed is None else seed + 1)


def _shuffle(
    rng: np.random.Generator, width: int, length: float, min_share: float, num_ports: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flows of a random full shuffle of ``width`` flows (see :func:`synthetic`).

    Flows are listed reducer by reducer, mappers in the same order within each
    (the Coflow-Benchmark format's order, so the instance reads back as written).
    """
    small = [d for d in range(1, math.isqrt(width) + 1) if width % d == 0]
    div = sorted({x for d in small for x in (d, width // d) if width // x <= num_ports})
    m = div[int(rng.integers(len(div)))]
    r = width // m
    per_reducer = rng.uniform(min_share * length, length, size=r)
    per_reducer[rng.integers(r)] = length
    # bytes per flow as the Coflow-Benchmark reader makes them of a reducer's MB (the
    # format's unit), so that a trace written from the instance reads back exactly
    per_reducer = (per_reducer * m / MB) * MB / m
    mappers = rng.integers(0, num_ports, size=m)
    reducers = rng.choice(num_ports, size=r, replace=False)
    return np.tile(mappers, r), np.repeat(reducers, m), np.repeat(per_reducer, m)


def poisson_arrivals(instance: Instance, load: float, *, seed: int | None = 0) -> Instance:
    """Coflows arrive, in their current order, as a Poisson process at offered ``load``.

    Exponential gaps are drawn and scaled together so that the realised offered
    load (:func:`offered_load`) is ``load``: the release times are a Poisson
    process's given its span (see the module docstring). The first coflow
    arrives at 0. Needs at least 2 coflows.
    """
    _check_load(load)
    K = instance.num_coflows
    _needs_two(K, "coflows")
    gaps = _rng(seed).exponential(1.0, size=K)
    gaps[0] = 0.0
    return _at_load(instance, np.cumsum(gaps), load)


def batch_arrivals(
    instance: Instance,
    batch_size: int = 10,
    *,
    load: float | None = None,
    interval: float | None = None,
    seed: int | None = 0,
) -> Instance:
    """Coflows arrive in batches of ``batch_size`` (default 10, MCS's) with identical
    release times.

    Batches arrive either as a Poisson process at offered ``load`` (MCS
    §VII-B: batches of 10 arriving according to the desired load), realised
    as :func:`poisson_arrivals` does (at least 2 batches), or every
    ``interval``; give exactly one. The first batch arrives at 0, so with one
    batch (``batch_size`` at least the number of coflows) and an ``interval``
    every coflow arrives at 0.
    """
    if int(batch_size) != batch_size or batch_size < 1:
        raise InstanceError(f"batch size must be a positive integer, got {batch_size!r}")
    if (load is None) == (interval is None):
        raise InstanceError("give exactly one of load and interval")
    K = instance.num_coflows
    if K == 0:
        return instance  # no coflows, no batches
    batch_size = min(int(batch_size), K)  # one batch at most (a size of 2^63 overflowed NumPy)
    nb = -(-K // batch_size)
    batch = np.arange(K) // batch_size
    if interval is not None:
        if not (math.isfinite(interval) and interval >= 0):
            raise InstanceError(f"interval must be finite and >= 0, got {interval!r}")
        with np.errstate(over="ignore"):
            starts = np.arange(nb) * float(interval)
        return _retimed(instance, starts[batch], f"an interval of {interval!r}")
    _check_load(float(load))  # type: ignore[arg-type]
    _needs_two(nb, f"batches ({K} coflows in batches of {batch_size})")
    gaps = _rng(seed).exponential(1.0, size=nb)
    gaps[0] = 0.0
    return _at_load(instance, np.cumsum(gaps)[batch], float(load))  # type: ignore[arg-type]


def rescale_load(instance: Instance, load: float) -> Instance:
    """Stretch or compress inter-arrival times so that the offered load is ``load``.

    Keeps the order and relative spacing of arrivals and the first release.
    """
    _check_load(load)
    if not math.isfinite(offered_load(instance)):
        raise InstanceError("cannot rescale the load of an instance whose coflows all arrive at once")
    first = float(instance.release.min())
    return _at_load(instance, instance.release - first, load, first)


def deadlines_from_isolation(
    instance: Instance, *, slack: float = 1.0, minimum: float = 0.2, seed: int | None = 0
) -> Instance:
    """Deadlines as in Varys' evaluation (dissertation §5.7.1).

    ``deadline = release + max(minimum, Gamma * (1 + U(0, slack)))`` where
    ``Gamma`` is the coflow's isolation time, its CCT in an empty network:
    its load over capacity when every flow is there at the release, else
    (delayed flows) the minimum makespan of the coflow alone
    (:func:`coflowopt.exact.makespan.min_makespan`; lower bounds were used
    before, and gave deadlines that could not be met even alone).
    ``minimum`` is 200 ms in the dissertation (time units of the instance). A
    deadline is at least the next float after the release.
    """
    if not (math.isfinite(slack) and slack >= 0):
        raise InstanceError(f"slack must be finite and >= 0, got {slack!r}")
    if not (math.isfinite(minimum) and minimum >= 0):
        raise InstanceError(f"minimum must be finite and >= 0, got {minimum!r}")
    u = _rng(seed).uniform(0.0, slack, size=instance.num_coflows)
    rel = np.maximum(_isolation(instance) * (1.0 + u), minimum)
    return instance.replace(
        coflows=tuple(
            replace(c, deadline=max(c.release + float(d), math.nextafter(c.release, math.inf)))
            for c, d in zip(instance.coflows, rel, strict=True)
        )
    )


def _isolation(instance: Instance) -> np.ndarray:
    """Each coflow's CCT alone in the empty fabric (dependencies set aside)."""
    from ..exact.makespan import min_makespan

    alone = instance.gamma.copy()  # exact when every flow is there at the release
    for k, c in enumerate(instance.coflows):
        if c.delay is not None and np.any(c.delay > 0):
            solo = replace(c, deadline=None, starts_after=(), finishes_before=())
            res = min_makespan(Instance(instance.fabric, (solo,)), time_limit=None)
            alone[k] = max(alone[k], res.objective - c.release)
    return alone
