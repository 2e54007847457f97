"""Switch feedback: the congestion registers of Coflourish's ESTCONG, in the fluid model.

Coflourish (§III-B, Algorithm 1) has every switch egress port keep one register that
grows by the size of each packet crossing it and is multiplied by ``1 - alpha`` every
``T_dre`` (a discontinuing rate estimator, after CONGA's DRE). Between two events of the
fluid simulation every link's rate is constant, so the registers follow in closed form
(:func:`dre_advance`) without simulating the ticks. :class:`SwitchFeedback` is what a
policy asks the network for; :class:`FeedbackReport` is what it gets every ``T_FB``
(:class:`coflowopt.sim.background.UnderBackground` keeps the registers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..errors import InputError

__all__ = ["FeedbackReport", "SwitchFeedback", "dre_advance", "steady_ratio"]

FloatArray = npt.NDArray[np.float64]

_SNAP = 1e-9
"""A time within this many periods below a multiple of a period counts as that multiple."""


@dataclass(frozen=True, slots=True)
class SwitchFeedback:
    """What a policy asks the switches for: Coflourish's congestion registers (ESTCONG).

    Every link's register grows by the bytes of unscheduled traffic that cross it and is
    multiplied by ``1 - alpha`` every ``tick`` (the decrease timeout ``T_dre``); the
    registers and the links' loads are reported every ``period`` (``T_FB``), at times
    ``m * period``.
    """

    period: float
    alpha: float
    tick: float

    def reports_until(self, t: float) -> int:
        """The index ``m`` of the last report at or before ``t`` (reports at ``m * period``)."""
        return math.floor(t / self.period + _SNAP)


@dataclass(frozen=True, slots=True)
class FeedbackReport:
    """The switches' report at ``time``: each link's congestion register (read before that
    instant's decrease) and its unscheduled load just before ``time``."""

    time: float
    congestion: FloatArray
    load: FloatArray


def _ticks(t: float, tick: float) -> int:
    """Index of the first tick at or after ``t`` (ticks at multiples of ``tick``)."""
    return math.ceil(t / tick - _SNAP)


def dre_advance(x: FloatArray, t0: float, t1: float, rate: FloatArray, alpha: float,
                tick: float) -> FloatArray:
    """Registers at ``t1`` from registers ``x`` at ``t0`` under constant ``rate`` on ``[t0, t1)``.

    ESTCONG (Coflourish, Algorithm 1) in the fluid model: a register grows by the bytes
    that cross its link and is multiplied by ``q = 1 - alpha`` at every tick ``k * tick``.
    Registers are read before a tick's decrease (so the ticks in ``[t0, t1)`` apply). With
    ``m`` ticks, the first at ``a`` and the last at ``b``, this is exactly
    ``x' = q^m (x + r (a - t0)) + r tick q (1 - q^(m-1)) / (1 - q) + r (t1 - b)``; under a
    constant rate ``r`` a register read at ``t`` settles at ``r steady_ratio(t, alpha, tick)``.
    """
    if t1 <= t0:
        return x
    ka, kb = _ticks(t0, tick), _ticks(t1, tick) - 1
    if kb < ka:
        return x + rate * (t1 - t0)
    q = 1.0 - alpha
    m = kb - ka + 1
    out = (x + rate * (ka * tick - t0)) * q ** m
    if m > 1:
        out = out + rate * (tick * q * (1.0 - q ** (m - 1)) / alpha)
    return out + rate * max(t1 - kb * tick, 0.0)


def steady_ratio(t: float, alpha: float, tick: float) -> float:
    """A register's ratio to its link's constant rate, read at ``t`` once settled.

    Just before a tick it holds ``rate tick / alpha``, just after ``rate tick (1 - alpha)
    / alpha``, and it grows by ``rate`` per unit of time in between: read ``phase`` after
    the last tick before ``t`` (``0 < phase <= tick``; a read at a tick comes before its
    decrease), ``tick (1 - alpha) / alpha + phase``. That is ``tick / alpha`` only when
    ``t`` falls on a tick, as every report does when ``T_FB`` is a multiple of ``T_dre``
    (the paper's settings)."""
    if not (0.0 < alpha < 1.0 and 0.0 < tick < math.inf and math.isfinite(t)):
        raise InputError(f"steady_ratio needs 0 < alpha < 1, a tick above 0 and a finite time, "
                         f"got alpha={alpha!r}, tick={tick!r}, t={t!r}")
    phase = t - (_ticks(t, tick) - 1) * tick
    return tick * (1.0 - alpha) / alpha + phase
