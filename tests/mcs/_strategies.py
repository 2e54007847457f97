"""Random workloads for the MCS tests (small, with repeated values to create ties)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from coflowopt.mcs import Workload

SIZES = (1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 89.0)
"""Coflow sizes in arbitrary units; the tests use size thresholds among them."""


@st.composite
def workloads(
    draw: st.DrawFn, *, min_coflows: int = 1, max_coflows: int = 8, max_width: int = 40
) -> Workload:
    n = draw(st.integers(min_coflows, max_coflows))
    width = draw(st.lists(st.integers(1, max_width), min_size=n, max_size=n))
    size = draw(st.lists(st.sampled_from(SIZES), min_size=n, max_size=n))
    share = draw(st.lists(st.sampled_from((0.1, 0.25, 0.5, 1.0)), min_size=n, max_size=n))
    length = [s * f for s, f in zip(size, share, strict=True)]
    return Workload(np.array(width), np.array(size), np.array(length), np.array(size))


size_thresholds = st.lists(
    st.sampled_from((2.0, 4.0, 6.0, 10.0, 30.0, 60.0)), min_size=0, max_size=3, unique=True
).map(sorted)
