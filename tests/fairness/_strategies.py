"""Hypothesis strategies for fairness problems."""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
from hypothesis import strategies as st

from coflowopt.fairness import FairnessProblem

_EXACT = [F(0), F(0), F(1, 6), F(1, 4), F(1, 3), F(1, 2), F(2, 3), F(1)]


@st.composite
def problems(
    draw: st.DrawFn,
    *,
    max_coflows: int = 4,
    max_links: int = 4,
    exact: bool = False,
    weights: bool = True,
    bounds: bool = True,
    elastic: bool | None = None,
) -> FairnessProblem:
    """Small random problems; ``elastic=None`` mixes elastic and inelastic coflows."""
    M = draw(st.integers(1, max_coflows))
    L = draw(st.integers(1, max_links))
    if exact:
        entry = st.sampled_from(_EXACT)
    else:
        entry = st.one_of(st.just(0.0), st.floats(0.05, 1.0, allow_nan=False))
    rows = []
    for _ in range(M):
        row = draw(st.lists(entry, min_size=L, max_size=L))
        if not any(row):
            row[draw(st.integers(0, L - 1))] = F(1) if exact else 1.0
        rows.append(row)
    w = None
    if weights:
        choices = [F(1), F(2), F(1, 2)] if exact else [1.0, 2.0, 0.5]
        w = draw(st.lists(st.sampled_from(choices), min_size=M, max_size=M))
    b = None
    if bounds:
        choices = (
            [math.inf, math.inf, F(1, 4), F(1, 2), F(1)] if exact else [math.inf, math.inf, 0.25, 0.5, 1.0]
        )
        b = draw(st.lists(st.sampled_from(choices), min_size=M, max_size=M))
    el: bool | list[bool] = elastic if elastic is not None else draw(
        st.lists(st.booleans(), min_size=M, max_size=M)
    )
    vectors = np.array(rows, dtype=object) if exact else np.array(rows, dtype=float)
    return FairnessProblem(
        vectors,
        weights=None if w is None else np.array(w, dtype=object),
        bounds=None if b is None else np.array(b, dtype=object),
        elastic=np.asarray(el),
        exact=exact,
    )
