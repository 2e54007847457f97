"""Priority keys compared up to rounding (compiled helpers shared by the policies and orders)."""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["TIE_BITS", "order_with_ties", "tie_key", "tie_keys"]

TIE_BITS = 30
"""Priority keys computed from remaining data are compared at this many significant bits.

Keys of a coflow, flow or link that has been served carry rounding: Γ =
0.25000000000000006 against a new coflow's exact 0.25, two uplink loads that
are both 5/3 and differ in the last bit, or, late in a long trace, a flow's
remaining 50331648.00005412 bytes against another's exact 50331648 (1.1e-12
relative at t = 38 s of the Facebook trace). Policies order keys by
:func:`tie_key` and then by their documented tie rule, not by the rounding.
Rounding to a fixed number of bits (relative 2**-30, about 9.3e-10) keeps
the order transitive, so sorted structures and heaps stay consistent; two
roundings of one value fall on either side of a rounding boundary with a
probability of about their difference over 2**-30 (1e-3 at the noise above).
"""


_SPLIT = float(2 ** (53 - TIE_BITS) + 1)
"""Veltkamp's splitter for rounding a double to ``TIE_BITS`` significant bits."""


@njit
def tie_key(x):  # type: ignore[no-untyped-def]
    """``x`` rounded to nearest with :data:`TIE_BITS` significant bits (Veltkamp's split).

    Three floating-point operations; exact on values that already fit in
    ``TIE_BITS`` bits, so rounding twice changes nothing. Values of magnitude
    ``1e300`` and more (infinities, NaN) are returned unchanged.
    """
    if not abs(x) < 1e300:
        return x
    g = _SPLIT * x
    return g + (x - g)


@njit
def tie_keys(keys):  # type: ignore[no-untyped-def]
    """:func:`tie_key` of each entry of a 1-D array."""
    out = np.empty(keys.size)
    for i in range(keys.size):
        out[i] = tie_key(keys[i])
    return out


@njit
def order_with_ties(keys):  # type: ignore[no-untyped-def]
    """Indices of ``keys`` by increasing :func:`tie_key`, ties by increasing index."""
    return np.argsort(tie_keys(keys), kind="mergesort")
