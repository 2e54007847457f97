"""Fixtures shared by the tests (the hypothesis profiles are in the repository's conftest)."""

from __future__ import annotations

import pytest

from coflowopt import _budget
from tests.clock import JumpingClock


@pytest.fixture
def locked_dir(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """A directory in which no file can be created (``os.open`` refuses, as a read-only
    file system refuses even root, for whom permission bits do not count)."""
    import os

    locked = tmp_path / "locked"
    locked.mkdir()
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if str(path).startswith(str(locked)):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    return locked


@pytest.fixture
def expired_clock(monkeypatch: pytest.MonkeyPatch) -> JumpingClock:
    """Every time limit is over at the second reading of the solvers' clock."""
    clock = JumpingClock(1e6)
    monkeypatch.setattr(_budget, "_clock", clock)
    return clock
