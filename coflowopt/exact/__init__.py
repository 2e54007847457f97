"""Exact and certified schedules: event-order branch and bound, MILPs, permutation search.

Use :func:`coflowopt.solvers.solve` (methods by name); the functions here are
the implementations it dispatches to. Formulations: ``models/``.
"""

from .certified import pairwise_order, sincronia_greedy
from .deadlines import max_deadlines
from .makespan import check_crossbar, crossbar_schedule, min_makespan
from .milp import solve_event_milp
from .permutation import best_permutation, order_completion, permutation_schedule
from .time_indexed import time_indexed
from .wcct import solve_exact

__all__ = [
    "best_permutation",
    "check_crossbar",
    "crossbar_schedule",
    "max_deadlines",
    "min_makespan",
    "order_completion",
    "pairwise_order",
    "permutation_schedule",
    "sincronia_greedy",
    "solve_event_milp",
    "solve_exact",
    "time_indexed",
]
