"""Fixtures shared by the tests (the hypothesis profiles are in the repository's conftest)."""

from __future__ import annotations

import pytest

from coflowopt import _budget
from tests.clock import JumpingClock


@pytest.fixture
def expired_clock(monkeypatch: pytest.MonkeyPatch) -> JumpingClock:
    """Every time limit is over at the second reading of the solvers' clock."""
    clock = JumpingClock(1e6)
    monkeypatch.setattr(_budget, "_clock", clock)
    return clock
