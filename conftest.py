"""Pytest configuration shared by ``tests/`` and ``proofs/``.

With ``CI`` set (the landing runs ``.ci/run`` with ``CI=true``; ``false`` and ``0``
count as unset), hypothesis draws the same examples on every run (``derandomize``: a
seed derived from each test), so a landing is decided by the code, not by the draw;
elsewhere it explores new examples on each run. Neither profile has a per-example
deadline or the health check on slow data generation: both measure the machine's speed
that hour, and the tests must pass on a busy machine. A failure prints the example and
its reproduction blob either way.

A shell that starts the suite in the background (``pytest ... &`` in a script) hands it
SIGINT ignored; the tests of interrupts need Python's own handler, which is put back.

The tests marked ``slow`` are collected first, so that ``-n auto`` (pytest-xdist, as the
README's test command runs them) starts the long ones while the short ones still wait:
otherwise one worker would finish a trace-scale check alone at the end of the run.
"""

from __future__ import annotations

import os
import signal
import threading

import pytest
from hypothesis import HealthCheck, settings

_timeless = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow], "print_blob": True}
settings.register_profile("ci", derandomize=True, **_timeless)
settings.register_profile("dev", **_timeless)
_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
settings.load_profile("ci" if _ci else "dev")

# the tests exercise the kernels' machine code; interpreted and adaptive runs have their own
# tests (tests/sim/test_jit.py), which give the same numbers bit for bit
os.environ.setdefault("COFLOWOPT_JIT", "compile")


if (threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.SIG_IGN):
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first, each group in its collected order."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
