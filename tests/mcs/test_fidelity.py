"""Fidelity to the MCS paper: pinned readings where code and paper could be compared
by an independent implementation (Eqs. (4)-(5) as printed; "exceed" in Algorithm 2)."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import Coflow, Fabric, Instance
from coflowopt.mcs import classification as C
from coflowopt.mcs import thresholds as T
from coflowopt.mcs.stats import Workload
from coflowopt.sim import simulate


def literal_eq5(w, cls, K, rho, theta):
    """Eqs. (4)-(5) transcribed: ``F^i(theta^i_j) = 0`` for ``j < p_i``, sums over all classes."""
    n, N = cls.num_classes, w.num_coflows
    ci = cls.classify(w.width) - 1
    p = np.minimum(cls.priorities, K)
    G = np.zeros((n, K + 1))
    for i in range(n):
        th = np.r_[0.0, theta[i], np.inf]
        for j in range(p[i], K + 1):
            G[i, j] = np.sum((ci == i) & (w.size <= th[j])) / N
    S = np.zeros((n, K + 1))
    for i in range(n):
        for j in range(1, K + 1):
            S[i, j] = rho * (G[i, j] - G[i, j - 1]) / (1 - rho * G[:, j - 1].sum())
    return sum((G[i, j] - G[i, j - 1]) * S[i, : j + 1].sum() for i in range(n) for j in range(1, K + 1))


@pytest.mark.parametrize("seed", range(40))
def test_the_per_class_model_is_eqs_4_and_5_as_printed(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 25))
    width = rng.integers(1, 60, n)
    size = rng.choice([1.0, 2.0, 3.0, 5.0, 8.0], n) * rng.choice([1, 10, 100], n)
    w = Workload(width, size, size, size)
    K, rho = int(rng.integers(1, 6)), float(rng.uniform(0.05, 0.95))
    delta = np.sort(rng.choice([2.0, 5.0, 10.0, 20.0, 40.0], 2, replace=False))
    cls = C.evaluate(w, delta, size_thresholds=[5.0, 50.0], priorities=rng.integers(1, 4, 3))
    model = T.per_class_model(w, queues=K, load=rho, classification=cls)
    # thresholds at coflow sizes too: a size equal to theta_j stays in queue j
    theta = np.sort(rng.choice(np.r_[size, 1.5 * size], (3, K - 1)), axis=1)
    assert model.objective(theta) == pytest.approx(literal_eq5(w, cls, K, rho, theta), abs=1e-14)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_wide_coflow_whose_longest_flow_stops_at_the_threshold_stays(compiled):
    # Algorithm 2 demotes a wide coflow when its longest flow's bytes *exceed* theta^w_i.
    # A's longest flow (1.0) finishes at t = 1 exactly at theta^w_1 = 1 while its two 0.9
    # flows still share port 1: A stays in queue 1, ahead of B (queue 1, arrived at 0.5):
    # A at 1.8, B at 2.8. Read as "reach" (before), A moved to queue 2 and B took port 1
    # (A at 2.8, B at 2.0).
    a = Coflow.from_flows("A", [(0, 0, 1.0), (1, 1, 0.9), (1, 1, 0.9)], release=0.0)
    b = Coflow.from_flows("B", [(1, 1, 1.0)], release=0.5)
    inst = Instance(fabric=Fabric(np.ones(2), np.ones(2)), coflows=(a, b))
    params = {"num_queues": 2, "width_thresholds": (10.0,), "narrow_width": 2,
              "narrow_thresholds": (100.0,)}
    res = simulate(inst, "mcs", {**params, "wide_thresholds": (1.0,)}, compiled=compiled)
    assert res.completion == pytest.approx([1.8, 2.8])
    # a flow still sending when it reaches the threshold exceeds it at once: demoted then
    # (A's longest flow of 1.5 reaches 1 at t = 1; B then runs alone on port 1 from 1 to 2)
    a2 = Coflow.from_flows("A", [(0, 0, 1.5), (1, 1, 0.9), (1, 1, 0.9)], release=0.0)
    inst2 = Instance(fabric=Fabric(np.ones(2), np.ones(2)), coflows=(a2, b))
    res2 = simulate(inst2, "mcs", {**params, "wide_thresholds": (1.0,)}, compiled=compiled)
    assert res2.completion == pytest.approx([2.8, 2.0])
    # the M/M/1 model counts the same way: A (length 1.0 = theta^w_1) ends in queue 1
    model = T.double_model(inst, queues=2, load=0.5, wide_width=2, initial="top")
    assert model.final_queue([[100.0], [1.0]]).tolist() == [1, 1]


@pytest.mark.parametrize("compiled", [True, False])
def test_a_narrow_coflow_at_its_threshold_is_demoted_when_it_sends_again(compiled):
    # N (narrow) sends exactly theta^n_1 = 1 with its first wave and stops: it has not
    # exceeded theta^n_1 and stays in queue 1. Its second wave (admitted at 2) sends, so N
    # exceeds the threshold at once and goes to queue 2, behind M (queue 1, since 1.5):
    # M ends at 2.5, N at 3.5 (the oracle of tests/sim/oracle.py agrees).
    n = Coflow.from_flows("N", [(0, 0, 1.0, 0.0), (0, 0, 1.0, 2.0)], release=0.0)
    m = Coflow.from_flows("M", [(0, 0, 1.0)], release=1.5)
    inst = Instance(fabric=Fabric(np.ones(1), np.ones(1)), coflows=(n, m))
    params = {"num_queues": 2, "width_thresholds": (10.0,), "narrow_width": 5,
              "narrow_thresholds": (1.0,), "wide_thresholds": (100.0,)}
    res = simulate(inst, "mcs", params, compiled=compiled)
    assert res.completion == pytest.approx([3.5, 2.5], rel=1e-9)
