"""The one result type that every solver, bound and simulation returns."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ._frozen import Frozen
from .schedule import Schedule

__all__ = ["Result", "Status", "proves_optimal"]


class Status(enum.Enum):
    """How a computation ended."""

    OPTIMAL = "optimal"
    """Objective proven optimal: the bound is within the solver's ``rel_gap`` of it (``gap``
    says how close; the default gaps are 1e-6 and below)."""
    FEASIBLE = "feasible"
    """A feasible schedule without a proof of optimality (heuristics, simulations)."""
    TIME_LIMIT = "time_limit"
    """Stopped at the time limit; objective and bound are the best found so far."""
    INFEASIBLE = "infeasible"
    """Proven that no feasible schedule exists (e.g. deadlines that cannot all be met)."""
    BOUND = "bound"
    """Only a lower bound was computed (no schedule)."""
    NO_SOLUTION = "no_solution"
    """Stopped before finding anything usable."""


@dataclass(frozen=True, slots=True, eq=False)
class Result(Frozen):
    """Outcome of a solver, bound or simulation.

    Compared and hashed by identity, as :class:`~coflowopt.sim.SimulationResult` is: its
    arrays and ``info`` have no single notion of equality.

    ``objective`` is the value of the returned schedule (``nan`` if none),
    ``bound`` a proven bound on the optimum (lower for minimisation, upper for
    maximisation; ``nan`` if none) of the class of schedules the method searches: all
    schedules, except where ``info["class"]`` names a smaller one (``method="permutation"``:
    the best permutation schedule, which can lie above the optimum). ``completion`` holds
    absolute completion times ``C_k`` per coflow.
    """

    status: Status
    objective: float
    bound: float
    runtime: float
    method: str
    objective_name: str = "wcct"
    sense: str = "min"
    schedule: Schedule | None = None
    completion: npt.NDArray[np.float64] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float:
        """Relative gap ``|objective - bound| / |objective|`` (``nan`` if unknown)."""
        if not (math.isfinite(self.objective) and math.isfinite(self.bound)):
            return float("nan")
        if self.objective == self.bound:
            return 0.0
        denom = abs(self.objective)
        return abs(self.objective - self.bound) / denom if denom > 0 else float("inf")

    def __repr__(self) -> str:
        """One line (the dataclass's own printed every completion time, 10 KB on the trace)."""
        return (f"Result(method={self.method!r}, status={self.status.value!r}, "
                f"objective={self.objective!r}, bound={self.bound!r}, "
                f"runtime={self.runtime:.3g}, schedule={self.schedule!r})")

    def completion_by_id(self, ids: tuple[str, ...]) -> dict[str, float]:
        if self.completion is None:
            return {}
        return {i: float(c) for i, c in zip(ids, self.completion, strict=True)}


def proves_optimal(value: float, bound: float, rel_gap: float) -> bool:
    """Whether the lower ``bound`` proves a feasible schedule of ``value`` optimal within
    ``rel_gap`` (minimisation).

    Not when the bound lies above the value beyond rounding (``max(rel_gap, 1e-9)``): a lower
    bound above a feasible schedule is wrong, and clamping it to the value would call any
    schedule optimal (a spray instance, whose isolation bound read a flow's slowest
    link instead of its share of each: 8 above an incumbent of 7, reported optimal).
    """
    if not (math.isfinite(value) and math.isfinite(bound)):
        return False
    scale = abs(value) if value != 0 else 1.0
    return -max(rel_gap, 1e-9) * scale <= value - bound <= rel_gap * scale

