"""Lower bounds on the optimal ``sum w_k C_k`` (fluid model, releases, weights).

Every bound here is valid for every instance the data model allows
(dependencies and per-flow delays only add constraints); ``models/`` states
each one's validity argument. Look them up by name in :data:`BOUNDS` or call
:func:`compute_bound`; ``"best"`` runs them all within the time limit and
returns the largest (the bounds over every routing, :data:`EVERY_ROUTING`, it does not
run: see there).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Collection
from typing import Any

from .._budget import now
from ..errors import CoflowoptError
from ..instance import Instance
from ..result import Result, Status
from .free import free_bound
from .interval import interval_bound
from .pairwise import pairwise_bound
from .simple import check_objective_range, isolation_bound, port_bound
from .sincronia import sincronia_bound
from .subsets import subsets_bound

__all__ = [
    "BOUNDS",
    "compute_bound",
    "free_bound",
    "interval_bound",
    "isolation_bound",
    "pairwise_bound",
    "port_bound",
    "sincronia_bound",
    "subsets_bound",
]

BoundFn = Callable[..., Result]

BOUNDS: dict[str, BoundFn] = {
    "isolation": isolation_bound,
    "port": port_bound,
    "subsets": subsets_bound,
    "sincronia": sincronia_bound,
    "interval": interval_bound,
    "pairwise": pairwise_bound,
    "free": free_bound,
}
"""Lower bounds by name, cheapest first (``best`` runs them in this order)."""

EVERY_ROUTING: dict[str, str] = {"free": "interval"}
"""Bounds over every routing, each with the bound of the instance's own routing that it
relaxes. ``best`` does not solve them: on the big switch (every link a host link) their LP
is that bound's LP, whose value they take; on a network, on the same time grid, that
bound is at least as strong for the instance's routing, and theirs is a far larger LP
(``models/bound-free.md``). Ask for them by name."""


def check_options(fn: Callable[..., Any], options: dict[str, Any], what: str,
                  hidden: Collection[str] = ("time_limit",)) -> None:
    """Raise if ``options`` names a keyword that ``fn`` does not take, or gives one a value
    its annotation does not allow (:func:`_allowed`): numbers must be finite and >= 0,
    integers whole, flags booleans, callbacks callable, orders sequences of integers, names
    sequences of strings. The error lists the keywords ``fn`` takes but those in ``hidden``
    (set another way: the time limit, or on the command line the progress callback)."""
    params = inspect.signature(fn).parameters
    allowed = sorted(p for p, v in params.items() if v.kind is inspect.Parameter.KEYWORD_ONLY
                     and p not in hidden)
    bad = sorted(set(options) - set(allowed))
    if bad:
        raise CoflowoptError(
            f"{what} does not take option(s) {', '.join(bad)}; "
            f"it takes: {', '.join(allowed) if allowed else 'none'}"
        )
    for name, value in options.items():
        annotation = params[name].annotation
        if not isinstance(annotation, str):
            continue
        numeric = "int" in annotation or "float" in annotation
        text, within = NUMBER_RANGES.get(name, (">= 0", None))
        if not _allowed(annotation, value) or (
                within is not None and _count(value, whole=False) and not within(value)):
            numbers = f" (numbers: finite and {text})" if numeric else ""
            raise CoflowoptError(
                f"{what}: option {name} must be {annotation.replace(' | ', ' or ')}{numbers}, "
                f"got {value!r:.60}")


NUMBER_RANGES: dict[str, tuple[str, Callable[[float], bool]]] = {
    "step": ("> 0", lambda v: v > 0),
    "slots": (">= 1", lambda v: v >= 1),
    "ratio": ("> 1", lambda v: v > 1),
    "rel_gap": ("in [0, 1); at 1 any schedule would count as optimal", lambda v: v < 1),
}
"""Options (by name, in every solver and bound that takes them) whose numbers must lie in
a narrower range than the usual finite and ``>= 0``: the range as text, and its test."""


def _allowed(annotation: str, value: Any) -> bool:
    """Whether ``value`` fits one of the alternatives of a (string) annotation."""
    for kind in (a.strip() for a in _alternatives(annotation)):
        if kind == "Sequence[str]":  # names (local search's starting orders)
            fits: Callable[[Any], bool] | None = _names
        else:
            fits = _FITS.get(kind.split("[")[0])
        if fits is None or fits(value):  # a kind not checked here: the function checks it
            return True
    return False


_FITS: dict[str, Callable[[Any], bool]] = {
    "None": lambda v: v is None,
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "int": lambda v: _count(v, whole=True),
    "float": lambda v: _count(v, whole=False),
    "Callable": callable,
    "Sequence": lambda v: _orders(v),  # Sequence[Sequence[int]]: orders (Sequence[str]: names)
}
"""Per annotation kind (its name before any ``[``), whether a value fits it."""


def _alternatives(annotation: str) -> list[str]:
    """``a | b[c | d]`` -> ``["a", "b[c | d]"]`` (splits on top-level ``|`` only)."""
    out, depth, cur = [], 0, ""
    for ch in annotation:
        depth += (ch == "[") - (ch == "]")
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur]


def _count(value: Any, *, whole: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, float) and (whole or not math.isfinite(value)):
        return False
    return value >= 0


def _names(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) > 0
            and all(isinstance(v, str) for v in value))


def _orders(value: Any) -> bool:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        return False
    return all(isinstance(o, (list, tuple)) and all(isinstance(k, int) and not isinstance(k, bool)
                                                    for k in o) for o in value)


def compute_bound(
    inst: Instance, method: str = "best", *, time_limit: float = 60.0,
    progress: Callable[[str, float], None] | None = None, **options: Any,
) -> Result:
    """A lower bound by name (see :data:`BOUNDS`), or ``"best"`` of them all.

    ``progress(name, fraction_done)`` is called before each bound that
    ``best`` starts.
    """
    if not (isinstance(time_limit, (int, float)) and time_limit > 0):
        raise CoflowoptError(f"time_limit must be a number > 0, got {time_limit!r}")
    if progress is not None and not callable(progress):
        raise CoflowoptError(f"progress must be a function of (bound name, fraction done), "
                             f"got {progress!r:.80}")
    check_objective_range(inst, "the lower bounds")
    if method == "best":
        if options:
            raise CoflowoptError("method='best' takes no options; name a single bound to pass "
                                 f"options (got {', '.join(sorted(options))})")
        return _best(inst, time_limit, progress)
    try:
        fn = BOUNDS[method]
    except (KeyError, TypeError):  # (TypeError: a list, a dict)
        raise CoflowoptError(
            f"unknown bound {method!r:.80}; choose one of {', '.join([*BOUNDS, 'best'])}"
        ) from None
    check_options(fn, options, f"bound '{method}'")
    return fn(inst, time_limit=time_limit, **options)


def _best(
    inst: Instance, time_limit: float, progress: Callable[[str, float], None] | None
) -> Result:
    start = now()
    values: dict[str, float] = {}
    skipped: list[str] = []
    reasons: dict[str, str] = {}
    best_name, best = "", -math.inf
    for i, (name, fn) in enumerate(BOUNDS.items()):
        if progress is not None:
            progress(name, i / len(BOUNDS))
        if name in EVERY_ROUTING:
            twin = EVERY_ROUTING[name]
            big_switch = inst.fabric.num_links == 2 * inst.num_ports
            if big_switch and twin in values:
                values[name] = values[twin]
                continue
            skipped.append(name)
            reasons[name] = (
                f"on the big switch its LP is the {twin} bound's, which gave none" if big_switch
                else f"not run by best: it bounds every routing, and for this instance's routing "
                f"the {twin} bound is at least as strong on the same time grid, at a fraction of "
                f"the cost (--method {name} runs it)")
            continue
        left = time_limit - (now() - start)
        if left <= 0 and name != "isolation":  # the isolation bound is O(flows): always there
            skipped.append(name)
            continue
        try:
            res = fn(inst, time_limit=max(left, 1e-3))
        except CoflowoptError as exc:  # too large for this bound: the others still stand
            skipped.append(name)
            reasons[name] = str(exc)
            continue
        if res.status is not Status.BOUND or not math.isfinite(res.bound):
            skipped.append(name)
            continue
        values[name] = res.bound
        if res.bound > best:
            best_name, best = name, res.bound
    return Result(Status.BOUND, math.nan, best, now() - start, "best",
                  info={"bounds": values, "best": best_name, "skipped": skipped,
                        "skipped_because": reasons})
