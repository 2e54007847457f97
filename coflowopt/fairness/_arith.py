"""Arithmetic that works on float64 arrays and on exact ``Fraction`` arrays alike.

A :class:`~coflowopt.fairness.FairnessProblem` is *exact* when every input
is rational (integers, ``Fraction``, or strings such as ``"1/6"``); its
arrays then hold :class:`fractions.Fraction` objects (NumPy ``object``
dtype) and the closed forms (Eq. 7.2, the work-conservation policies) are
evaluated without rounding. Steps that need a water-filling or an LP run in
float64 through :mod:`coflowopt.alloc`; their results are turned back into
fractions by :func:`rationalize` and accepted only after an exact
certificate check (see ``_certify`` in the modules that use it).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from numbers import Rational
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "MAX_DENOMINATOR",
    "as_float",
    "fmt",
    "full",
    "is_rational",
    "rationalize",
    "to_fraction",
    "to_number_array",
]

MAX_DENOMINATOR = 10**6
"""Largest denominator :func:`rationalize` tries; float64 results of
water-filling are accurate to ~1e-15, far below the 1/(2 q^2) = 5e-13 gap
that makes the nearest such fraction unique."""


MAX_TEXT = 200
"""The longest fraction string read (digits, sign, point, slash and exponent)."""
MAX_EXPONENT = 400
"""The largest decimal exponent a fraction string may carry (``1e1000000000`` would build
an integer of a billion digits)."""


def parse_fraction(text: str) -> Fraction:
    """``Fraction(text)`` for strings of at most :data:`MAX_TEXT` characters and exponents up
    to :data:`MAX_EXPONENT`; ``ValueError`` otherwise."""
    t = text.strip()
    if len(t) > MAX_TEXT:
        raise ValueError(f"a number of {len(t)} characters (at most {MAX_TEXT})")
    m = re.search(r"[eE]([+-]?\d+)", t)
    if m and abs(int(m.group(1))) > MAX_EXPONENT:
        raise ValueError(f"exponent {m.group(1)} out of range (at most {MAX_EXPONENT})")
    return Fraction(t)


def is_rational(value: Any) -> bool:
    """True for exact inputs: ``int`` (not ``bool``), ``Fraction`` and fraction strings."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, np.integer, Rational)):
        return True
    if isinstance(value, str):
        try:
            parse_fraction(value)
        except (ValueError, ZeroDivisionError):
            return False
        return True
    return False


def to_fraction(value: Any) -> Fraction:
    """An exact ``Fraction`` from an int, Fraction, float or string (``"1/6"``, ``"0.25"``)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, str):
        return parse_fraction(value)
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"expected a finite number, got {value!r}")
    return Fraction(v)


def to_number_array(values: Any, *, exact: bool) -> npt.NDArray[Any]:
    """A float64 array, or an object array of ``Fraction`` when ``exact``.

    Infinite entries stay ``math.inf`` (a float) in exact arrays: Python
    compares and takes minima of ``Fraction`` and ``inf`` correctly.
    """
    if not exact:
        if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
            return np.array(values, dtype=np.float64)
        arr = np.asarray(values, dtype=object)
        if arr.size == 0:
            return arr.astype(np.float64)
        return np.vectorize(_float_of, otypes=[np.float64])(arr)
    arr = np.asarray(values, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = v if (isinstance(v, float) and math.isinf(v)) else to_fraction(v)
    return out


def full(shape: int | tuple[int, ...], value: int, *, exact: bool) -> npt.NDArray[Any]:
    """An array filled with an integer ``value``, as floats or Fractions."""
    if not exact:
        return np.full(shape, float(value))
    out = np.empty(shape, dtype=object)
    out.fill(Fraction(value))
    return out


def _float_of(value: Any) -> float:
    if isinstance(value, str):
        return float(parse_fraction(value))
    return float(value)


def as_float(values: Any) -> npt.NDArray[np.float64]:
    """Float64 copy of a float or Fraction array (or scalar, as a 0-d array)."""
    arr = np.asarray(values)
    if arr.dtype == object:
        return np.vectorize(float, otypes=[np.float64])(arr) if arr.size else arr.astype(float)
    return np.array(arr, dtype=np.float64)


def rationalize(values: npt.ArrayLike, max_denominator: int = MAX_DENOMINATOR) -> npt.NDArray[Any]:
    """Nearest fractions (denominator <= ``max_denominator``) to float results.

    Only a candidate: callers must verify it exactly before trusting it.
    Infinities are kept as ``math.inf``.
    """
    arr = np.asarray(values, dtype=np.float64)
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        fv = float(v)
        out[idx] = fv if math.isinf(fv) else Fraction(fv).limit_denominator(max_denominator)
    return out


def fmt(value: Any) -> str:
    """A number as text: fractions as ``p/q``, floats with 6 significant digits."""
    if isinstance(value, Fraction):
        return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    v = float(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.6g}"
