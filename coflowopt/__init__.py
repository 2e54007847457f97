"""coflowopt: optimal schedules, proven bounds and faithful heuristics for coflows.

Data flows one way: instance -> formulation or policy -> result -> report.
"""

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
