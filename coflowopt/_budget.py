"""A time limit counted from a start: what is left of it, and whether it has run out."""

from __future__ import annotations

import time

__all__ = ["TimeBudget"]


class TimeBudget:
    """``limit`` seconds (``None``: no limit) from the moment of creation.

    Building a model counts against a solver's time limit: a bound whose matrix takes
    3 s to assemble must not then hand the solver the whole limit again.
    """

    __slots__ = ("limit", "start")

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float | None:
        """Seconds left (may be negative), ``None`` without a limit."""
        return None if self.limit is None else self.limit - self.elapsed()

    def expired(self) -> bool:
        left = self.left()
        return left is not None and left <= 0
