"""coflowopt: optimal schedules, proven bounds and faithful heuristics for coflows.

Data flows one way: instance -> formulation or policy -> result -> report.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .errors import (
        CoflowoptError,
        InputError,
        InstanceError,
        MissingDependencyError,
        ScheduleError,
    )
    from .instance import BINS, MB, Coflow, Fabric, Instance
    from .io import read, write
    from .metrics import Summary, cct, link_utilization, summarize, utilization
    from .result import Result, Status
    from .schedule import (
        FeasibilityReport,
        LinkLoad,
        Schedule,
        ScheduleBuilder,
        TiedPieces,
        Violation,
        check_feasible,
    )
    from .solvers import bound, solve

_EXPORTS = {
    **dict.fromkeys(("CoflowoptError", "InputError", "InstanceError", "MissingDependencyError",
                     "ScheduleError"), ".errors"),
    **dict.fromkeys(("BINS", "MB", "Coflow", "Fabric", "Instance"), ".instance"),
    **dict.fromkeys(("read", "write"), ".io"),
    **dict.fromkeys(("Summary", "cct", "link_utilization", "summarize", "utilization"), ".metrics"),
    **dict.fromkeys(("Result", "Status"), ".result"),
    **dict.fromkeys(("FeasibilityReport", "LinkLoad", "Schedule", "ScheduleBuilder", "TiedPieces",
                     "Violation", "check_feasible"), ".schedule"),
    **dict.fromkeys(("bound", "solve"), ".solvers"),
}
"""The public names and the modules they come from: imported on first use (PEP 562), so
that ``import coflowopt`` and the command line start at once (NumPy, SciPy and Numba load
with the first name that needs them, where the command line's interrupt handling is)."""


def __getattr__(name: str) -> Any:
    where = _EXPORTS.get(name)
    if where is not None:
        value = getattr(importlib.import_module(where, __name__), name)
    else:
        try:  # a subpackage, as eager imports made it an attribute (coflowopt.sim)
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__version__ = "0.1.0"

__all__ = [
    "BINS",
    "MB",
    "Coflow",
    "CoflowoptError",
    "Fabric",
    "FeasibilityReport",
    "InputError",
    "Instance",
    "InstanceError",
    "LinkLoad",
    "MissingDependencyError",
    "Result",
    "Schedule",
    "ScheduleBuilder",
    "ScheduleError",
    "Status",
    "Summary",
    "TiedPieces",
    "Violation",
    "__version__",
    "bound",
    "cct",
    "check_feasible",
    "link_utilization",
    "read",
    "solve",
    "summarize",
    "utilization",
    "write",
]
