"""Weighted max-min with weights spread over more than 1e12 on one link.

``wss`` weighs each flow by its size, so a 1e7-byte and a 3e-7-byte flow share a
downlink with weights 3e13 apart. The water-filling used to close a link once its open
demand fell to 1e-12 of its demand at the start, which dropped the tiny flow's link from
its bound: the flow got its uplink's whole capacity (11 on a downlink of 1.7), the
compiled path recorded infinite rates, and it once left a flow without service.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.errors import InstanceError
from coflowopt.fairness import FairnessProblem
from coflowopt.kernels.maxmin import bipartite_levels
from coflowopt.sim import simulate
from coflowopt.sim.policies import make_policy
from coflowopt.sim.policies._fairness import NAMED, named_vectors

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


class _DecisionView:
    """The part of a :class:`SimView` the fairness policies read, at one decision."""

    def __init__(self, links, remaining, coflow, capacity):
        self.num_links = capacity.size
        self.capacity = capacity
        self.flow_coflow = np.asarray(coflow, np.int64)
        self.coflow_weight = np.ones(int(self.flow_coflow.max()) + 1)
        self._links = links
        self._remaining = np.asarray(remaining, float)

    def active_flows(self):
        return np.arange(self._remaining.size, dtype=np.int64)

    def remaining(self, flows):
        return self._remaining[flows]

    def usage(self, flows):
        rows = np.repeat(np.arange(flows.size), 2)
        cols = np.asarray([self._links[f] for f in flows]).reshape(-1)
        return sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(flows.size, self.num_links))


@pytest.mark.parametrize("name", ["drf", "hug", "psp"])
@pytest.mark.parametrize("split", ["proportional", "maxmin"])
def test_a_flow_whose_remaining_rounds_to_zero_still_names_its_links(name, split):
    # the Facebook trace under psp: at a decision 1,972 flows of one coflow had 0 bytes
    # left (their completion one float step away) on a link while the coflow had 323 s of
    # transfer left on another; the absolute floor of 1e-300 bytes normalised below
    # float64's range and FairnessProblem refused the vectors, stopping the run
    cap = np.full(4, 1.25e8)
    view = _DecisionView([(0, 2), (1, 3), (1, 2)], [323.7 * 1.25e8, 0.0, 1e9], [0, 0, 1], cap)
    alloc = make_policy(name, {"split": split}).decide(view)
    rates = np.asarray(alloc.rates)
    assert np.all(np.isfinite(rates)) and np.all(rates >= 0)
    assert rates[1] > 0  # the finishing flow keeps a (tiny) rate on its links
    load = np.zeros(4)
    for f, (a, b) in enumerate(view._links):
        load[a] += rates[f]
        load[b] += rates[f]
    assert np.all(load <= cap * (1 + 1e-12))


def test_named_vectors_raise_only_demands_below_the_floor():
    vec = np.array([[323.7, 4.48e-307, 0.0, 2.0], [1e-30, 0.0, 1e-30, 5e-31]])
    out = named_vectors(vec)
    assert out[0, 1] == 323.7 * NAMED and out[0, 2] == 0.0
    np.testing.assert_array_equal(out[0, [0, 3]], vec[0, [0, 3]])
    np.testing.assert_array_equal(out[1], vec[1])
    with pytest.raises(InstanceError, match="below float64's range"):
        FairnessProblem(vec, exact=False)
    FairnessProblem(out, exact=False)  # accepted
