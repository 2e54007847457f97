"""Just-in-time compilation of the simulator's inner loops (Numba).

The loops are plain Python over NumPy arrays, written in the subset Numba
compiles; :func:`njit` compiles them (and caches the machine code next to
the module). Setting the environment variable ``NUMBA_DISABLE_JIT=1`` runs
the very same functions as ordinary Python, which is slow but useful for
debugging and coverage.

Numba's cache checks only the source file of the function it compiled: after an edit to a
helper that kernels in other modules call (``sim/kernels/_common.py``), delete the caches
(``find coflowopt -name '*.nb[ic]' -delete``) or those kernels keep the old helper.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from numba import njit as _njit

__all__ = ["njit"]

F = TypeVar("F", bound=Callable[..., Any])


def njit(func: F) -> F:
    """Compile ``func`` in nopython mode, caching the result on disk."""
    return _njit(cache=True, nogil=True)(func)  # type: ignore[return-value]
