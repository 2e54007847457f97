"""Every policy on multi-hop fabrics: feasible on every link of every path, compiled or not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings

from coflowopt import Instance, check_feasible
from coflowopt.fabric import FatTree, Network, SpineLeaf
from coflowopt.sim import POLICIES, simulate
from tests.strategies import instances, network_instances, policy_runs_on

NETWORK_POLICIES = sorted(POLICIES)


@pytest.mark.parametrize("name", NETWORK_POLICIES)
@settings(max_examples=15, deadline=None)
@given(inst=network_instances(deadlines=True))
def test_every_policy_is_feasible_on_networks(name, inst):
    assume(policy_runs_on(name, inst))
    for compiled in (True, False):
        res = simulate(inst, name, compiled=compiled)
        report = check_feasible(inst, res.schedule)
        assert report.ok, report
        assert np.all(np.isfinite(res.cct))


@settings(max_examples=10, deadline=None)
@given(inst=network_instances())
def test_compiled_and_reference_paths_agree_on_networks(inst):
    for name in ("fair", "varys", "sincronia", "aalo"):
        a = simulate(inst, name, compiled=True).cct
        b = simulate(inst, name, compiled=False).cct
        assert np.allclose(a, b, rtol=1e-7, atol=1e-9), name


@settings(max_examples=25, deadline=None)
@given(base=instances(uniform=True))
def test_maluca_on_one_leaf_is_maluca_on_the_big_switch(base):
    """All hosts on one leaf: the routes are the big switch's, so the general reference path
    on the network must give the compiled big-switch kernel's completion times."""
    c = float(base.fabric.capacity[0])
    net = Network(SpineLeaf(1, 1, base.num_ports, c, c))
    inst = Instance(net, base.coflows)
    assert _two_link(inst)
    a = simulate(base, "maluca", compiled=True).cct
    b = simulate(inst, "maluca", compiled=False).cct
    assert np.allclose(a, b, rtol=1e-9, atol=1e-12)


def _two_link(inst):
    A = inst.routes
    return bool(np.all(np.diff(A.indptr) == 2) and np.all(A.data == 1.0))


def test_the_check_sees_a_switch_link_over_capacity():
    from coflowopt import Coflow, Instance, Schedule

    net = Network(FatTree(4), "given", paths={"a": (
        ("h0", "edge0", "agg0", "edge1", "h2"), ("h1", "edge0", "agg0", "edge1", "h3"))})
    inst = Instance(net, (Coflow.from_flows("a", [(0, 2, 1.0), (1, 3, 1.0)]),))
    # both flows at full rate: every host link is fine, edge0->agg0 carries 2
    sched = Schedule.from_pieces([(0, 0.0, 1.0, 1.0), (1, 0.0, 1.0, 1.0)])
    report = check_feasible(inst, sched)
    assert not report.ok
    assert "link edge0->agg0 carries 2" in str(report)
