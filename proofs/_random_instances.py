"""Random small instances for the hypothesis checks in ``proofs/`` (``tests/strategies``
is not importable from here under plain ``pytest``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance

Flows = list[tuple[int, int, float]]


@st.composite
def online(
    draw: st.DrawFn, *, max_coflows: int = 6, max_size: float = 5.0,
    deadline: Callable[[st.DrawFn, float, Flows, list[float], list[float]], float | None]
    | None = None,
) -> Instance:
    """1-3 ports with capacities 0.5, 1 or 2, up to ``max_coflows`` coflows of 1-3 flows of
    0.1 to ``max_size``, released at 0 or up to 6; ``deadline(draw, release, flows, ingress,
    egress)`` gives each coflow's deadline (none by default)."""
    P = draw(st.integers(1, 3))
    caps = st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=P, max_size=P)
    ingress, egress = draw(caps), draw(caps)
    coflows = []
    for k in range(draw(st.integers(1, max_coflows))):
        n = draw(st.integers(1, 3))
        port = st.integers(0, P - 1)
        flows = [(draw(port), draw(port), draw(st.floats(0.1, max_size))) for _ in range(n)]
        release = draw(st.one_of(st.just(0.0), st.floats(0.0, 6.0)))
        due = None if deadline is None else deadline(draw, release, flows, ingress, egress)
        coflows.append(Coflow.from_flows(f"c{k}", flows, release=release, deadline=due))
    return Instance(Fabric(np.array(ingress), np.array(egress)), tuple(coflows))
