"""Which schedulers read coflow weights (``models/simulator.md``): ``sincronia``, ``hug``,
``drf`` and ``psp`` do, every other one schedules as if all weights were equal."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from coflowopt import Coflow, Fabric, Instance
from coflowopt.sim import POLICIES, simulate

WEIGHTED = {"sincronia", "hug", "drf", "psp"}
PARAMS = {"static-order": {"order": ["c0", "c1", "c2", "c3", "c4"]}}


def _pair(seed: int) -> tuple[Instance, Instance]:
    rng = np.random.default_rng(seed)
    cfs = []
    for k in range(5):
        n = int(rng.integers(1, 4))
        cfs.append(Coflow(f"c{k}", rng.integers(0, 3, n), rng.integers(0, 3, n),
                          rng.uniform(1, 5, n), release=float(rng.choice([0.0, 0.0, 1.0])),
                          deadline=float(rng.uniform(5, 30))))
    base = Instance(Fabric.uniform(3), tuple(cfs))
    heavy = base.replace(coflows=tuple(
        dataclasses.replace(c, weight=1000.0) if k == 4 else c for k, c in enumerate(cfs)))
    return base, heavy


PAIRS = [_pair(seed) for seed in range(6)]


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_which_schedulers_read_the_weights(name):
    params = PARAMS.get(name, {})
    moved = sum(not np.array_equal(simulate(base, name, params, record=False).completion,
                                   simulate(heavy, name, params, record=False).completion)
                for base, heavy in PAIRS)
    if name in WEIGHTED:
        assert moved > 0  # a coflow of weight 1000 changes some schedule
    else:
        assert moved == 0
