"""Weighted max-min with weights spread over more than 1e12 on one link (a review's cases).

``wss`` weighs each flow by its size, so a 1e7-byte and a 3e-7-byte flow share a
downlink with weights 3e13 apart. The water-filling used to close a link once its open
demand fell to 1e-12 of its demand at the start, which dropped the tiny flow's link from
its bound: the flow got its uplink's whole capacity (11 on a downlink of 1.7), the
compiled path recorded infinite rates, and it once left a flow without service.
"""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.kernels.maxmin import bipartite_levels
from coflowopt.sim import simulate

F = Coflow.from_flows

CASES = {
    "shared downlink": Instance(Fabric([1.0, 1.0, 10.0], [1.0, 1.7, 1.0]), (
        F("A", [(0, 1, 1e7 + 0.3)], weight=1e-6), F("B", [(2, 1, 3e-7)], weight=1e6))),
    "spread of 3e11": Instance(Fabric([1.0, 1.0, 10.0], [1.0, 1.7, 1.0]), (
        F("A", [(0, 1, 1e7 + 0.3)], weight=1e-6), F("B", [(2, 1, 3e-5)], weight=1e6))),
    "one pair": Instance(Fabric.uniform(2), (
        F("A", [(0, 1, 1e7)]), F("B", [(0, 1, 3e-5)], release=1e7 - 0.5))),
    "infinite rate": Instance(Fabric.uniform(2), (
        F("c0", [(0, 0, 4.24706589227118), (0, 1, 186527.48977618854),
                 (0, 1, 0.20360864082403143)]),
        F("c1", [(0, 0, 7.206141669931179), (0, 1, 5.743684749072488),
                 (1, 1, 7.306934663863743)]),
        F("c2", [(1, 1, 9.156799487212131), (1, 1, 0.009227665042868363)]),
        F("c3", [(1, 0, 1e-06), (1, 1, 1e6), (0, 1, 1e6)]))),
    "flow left unserved": Instance(
        Fabric([0.05340007773548264, 0.21360031094193055],
               [0.05340007773548264, 0.4272006218838611]), (
            F("c0", [(0, 0, 1e-06), (0, 1, 1e6), (0, 1, 1e6)], weight=5.050242999212993e-06),
            F("c1", [(1, 0, 1.0), (1, 1, 1e-06)], release=0.6236211734442597,
              weight=54.08438184794821),
            F("c2", [(0, 1, 1e-06, 1.1206454009122551e-05)], release=7.77745557068942e-06,
              weight=5.407226849102308e-05, starts_after=("c1",)))),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", ["wss", "fair", "drf", "hug", "psp"])
def test_extreme_weights_keep_capacities_on_both_paths(case, name):
    inst = CASES[case]
    fast = simulate(inst, name)
    ref = simulate(inst, name, compiled=False)
    for res in (fast, ref):
        report = check_feasible(inst, res.schedule)
        assert report, str(report)
    np.testing.assert_allclose(fast.completion, ref.completion, rtol=1e-9)


def test_a_tiny_row_keeps_its_downlink_as_bound():
    # uplink 0 (capacity 1) carries weight 1e7, uplink 1 (capacity 10) weight 3e-7, both
    # into downlink 0 (capacity 1.7): levels 1e-7 (uplink 0), then the downlink's 0.7 left
    # over 3e-7, so the tiny row gets 0.7, not uplink 1's 10
    W = np.array([[1e7], [3e-7]])
    none = np.zeros(0, np.int64)
    lam_l, lam_r = bipartite_levels(W, none, none, np.zeros(0), np.zeros(0),
                                    np.array([1.0, 10.0]), np.array([1.7]))
    rates = W[:, 0] * np.minimum(lam_l, lam_r[0])
    assert rates == pytest.approx([1.0, 0.7], rel=1e-12)
