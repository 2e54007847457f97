"""The clock that time limits read, and a time limit counted from a start.

Every solver, bound and search reads the time through :func:`now`, never from
:mod:`time` directly, so that tests can put a clock of their own in its place
(``coflowopt._budget._clock``) and check what happens when a limit runs out, at a
chosen point, whatever the machine's speed or load.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ._files import finite_number
from .errors import CoflowoptError

__all__ = ["TimeBudget", "check_time_limit", "now"]

_clock: Callable[[], float] = time.perf_counter


def now() -> float:
    """Seconds on the solvers' clock (:func:`time.perf_counter` unless a test replaced it)."""
    return _clock()


def check_time_limit(value: Any, error: type[CoflowoptError] = CoflowoptError) -> float:
    """``value`` as a time limit in seconds: a finite number > 0 (NumPy's too), else
    ``error`` saying so."""
    if not (finite_number(value) and value > 0):
        raise error(f"time_limit must be a finite number > 0, got {value!r:.60}")
    return float(value)


class TimeBudget:
    """``limit`` seconds (``None``: no limit) from the moment of creation.

    Building a model counts against a solver's time limit: a bound whose matrix takes
    3 s to assemble must not then hand the solver the whole limit again.
    """

    __slots__ = ("limit", "start")

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.start = now()

    def elapsed(self) -> float:
        return now() - self.start

    def left(self) -> float | None:
        """Seconds left (may be negative), ``None`` without a limit."""
        return None if self.limit is None else self.limit - self.elapsed()

    def expired(self) -> bool:
        left = self.left()
        return left is not None and left <= 0
