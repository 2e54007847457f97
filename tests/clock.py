"""A clock for the tests of time limits: limits run out where the test says, not where the
machine's speed or load puts them.

The solvers read the time through :func:`coflowopt._budget.now`; the fixture
``expired_clock`` (``tests/conftest.py``) replaces its clock with one that jumps a long
way ahead at every reading, so that every time limit has run out at the first look after
a solver starts.
(HiGHS keeps its own clock; what it is given stays a real-time limit.)
"""

from __future__ import annotations


class JumpingClock:
    """Each reading is ``step`` seconds after the one before."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.t = 0.0
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.t += self.step
        return self.t
