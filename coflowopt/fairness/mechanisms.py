"""Allocation mechanisms by name, and :func:`allocate` to run one with checked options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..errors import InstanceError
from .allocation import FairAllocation
from .dominant import drf
from .flowlevel import per_endpoint, per_flow
from .guarantees import hug
from .problem import FairnessProblem, check_problem
from .sharing import equal_share, psp
from .spare import SPARE_POLICIES, drf_work_conserving

__all__ = ["MECHANISMS", "Mechanism", "allocate"]


@dataclass(frozen=True, slots=True)
class Mechanism:
    """A named allocation mechanism and the keyword options it accepts."""

    name: str
    description: str
    func: Callable[..., FairAllocation]
    options: frozenset[str] = frozenset()
    needs_flows: bool = False
    """True when it needs an instance's flows (vectors alone do not suffice)."""
    strategyproof: bool | None = None
    """What the dissertation proves or shows (None: not discussed)."""


def _register(*mechs: Mechanism) -> dict[str, Mechanism]:
    return {m.name: m for m in mechs}


MECHANISMS: dict[str, Mechanism] = _register(
    Mechanism("drf", "Dominant Resource Fairness: Eq. 7.2, or multi-round DRF with bounds",
              drf, frozenset({"method"}), strategyproof=True),
    Mechanism("hug", "HUG (Algorithm 6): DRF plus capped (or, cooperative, uncapped) spare",
              hug, frozenset({"cooperative", "stage2", "method"}), strategyproof=True),
    Mechanism("psp", "PS-P: per-link equal shares, work-conserving per-link fair queueing",
              psp, frozenset({"max_rounds", "time_limit"}), strategyproof=False),
    Mechanism("equal-share", "per-resource equal sharing, demand-agnostic (App. D.2.1)",
              equal_share, strategyproof=True),
    Mechanism("perflow", "per-flow max-min fairness (needs flows)", per_flow,
              needs_flows=True, strategyproof=False),
    Mechanism("perendpoint", "per-endpoint (per-source) fairness (needs flows)", per_endpoint,
              needs_flows=True, strategyproof=False),
    *(
        Mechanism(f"drf+{p}", f"DRF, then spare capacity by policy '{p}' (App. D.2)",
                  partial(drf_work_conserving, policy=p), frozenset({"method"}),
                  strategyproof=False)
        for p in SPARE_POLICIES
    ),
)
"""Every mechanism by name (``drf``, ``hug``, ``psp``, ``drf+highest``, ...)."""


def allocate(problem: FairnessProblem, mechanism: str = "hug", **options: Any) -> FairAllocation:
    """Run a mechanism by name (default ``hug``, as ``coflowopt fair``); unknown names or
    options raise ``InstanceError``."""
    problem = check_problem(problem, "allocate")
    try:
        mech = MECHANISMS[mechanism]
    except KeyError:
        raise InstanceError(
            f"unknown mechanism '{mechanism}' (known: {', '.join(MECHANISMS)})"
        ) from None
    unknown = sorted(set(options) - mech.options)
    if unknown:
        allowed = ", ".join(sorted(mech.options)) or "none"
        raise InstanceError(
            f"mechanism '{mechanism}' has no option '{unknown[0]}' (options: {allowed})"
        )
    return mech.func(problem, **options)
