"""Lower bounds lowered by the floating-point rounding of computing them.

A bound summed in double precision can come out a few ulps above the exact value it
stands for, and so above an optimum it reaches (two coflows on links of their own: 9 came
out 9.000000000000002). Every bound coflowopt reports is therefore lowered by a margin for
its rounding: ``operations`` roundings, each of at most an ulp of ``scale`` (the magnitude
of the terms it adds up), plus as many of the smallest subnormal for results that
underflow.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["EPS", "TINY", "cct_bound", "rescaled", "rounded_down"]

EPS = float(np.finfo(np.float64).eps)
"""The distance from 1 to the next float: an ulp of magnitude 1, twice a rounding's error."""

TINY = 5e-324
"""The smallest subnormal: what a rounding may lose below the normal range."""


def rounded_down(value: float, scale: float, operations: int) -> float:
    """``value`` less ``operations`` roundings of magnitude ``scale`` (see the module)."""
    if not math.isfinite(value):
        return value
    return value - operations * (EPS * abs(scale) + TINY)


def rescaled(constant: float, lp_bound: float, unit: float, terms: int) -> float:
    """``(constant + lp_bound) * unit``, rounded down: an LP's bound in scaled time units
    with the constant part its objective leaves out (a sum of ``terms`` products) added back."""
    return rounded_down((constant + lp_bound) * unit, (abs(constant) + abs(lp_bound)) * abs(unit),
                        terms + 3)


def cct_bound(bound: float, weight: npt.ArrayLike, release: npt.ArrayLike) -> float:
    """A bound on ``sum_k w_k (C_k - r_k)`` from one on ``sum_k w_k C_k``."""
    wr = np.asarray(weight, np.float64) * np.asarray(release, np.float64)
    released = math.fsum(wr)
    return rounded_down(bound - released, abs(bound) + released, 2 + wr.size)
