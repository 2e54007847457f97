"""The free-routing bound: below the optimum under every routing, equal to the interval
bound where routing cannot matter, and by hand where ECMP's choice does."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance
from coflowopt.bounds import BOUNDS, compute_bound, free
from coflowopt.errors import CoflowoptError
from coflowopt.fabric import FatTree, GraphTopology, Network, SpineLeaf
from coflowopt.result import Status
from coflowopt.sim import simulate
from coflowopt.solvers import bound, solve
from tests.strategies import instances, network_instances

TOL = 1e-6


def spray_twin(inst: Instance) -> Instance:
    """The instance with its flows sprayed over all their equal-cost paths."""
    return inst.replace(fabric=Network(inst.fabric.topology, "spray"))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_instances(max_ports=3, max_coflows=3, max_flows=2, delays=True))
def test_free_bound_is_below_the_optimum_under_ecmp_and_spray(inst):
    """The instance is drawn with ECMP or spray; the free bound is below the optimum of
    both routings, whichever it was drawn with."""
    res = bound(inst, method="free")
    assert res.status is Status.BOUND and res.method == "free"
    for twin in (inst, spray_twin(inst)):
        assert res.bound <= solve(twin, method="exact").objective * (1 + TOL) + TOL
    iso = float(np.dot(inst.weight, inst.release))
    assert res.bound >= iso  # the LP's constant alone is sum w_k e_k >= sum w_k r_k


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_instances(max_ports=4, max_coflows=6, max_flows=4, delays=True),
       st.sampled_from(["varys", "sincronia", "fair"]))
def test_free_bound_is_below_heuristic_schedules(inst, policy):
    value = float(np.dot(inst.weight, simulate(inst, policy).completion))
    for network in ("flow", "cuts"):
        assert bound(inst, method="free", network=network).bound <= value * (1 + TOL) + TOL


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=4, max_coflows=5, max_flows=3, delays=True))
def test_on_the_big_switch_the_free_bound_is_the_interval_bound(inst):
    res = bound(inst, method="free")
    assert res.bound == pytest.approx(bound(inst, method="interval").bound, rel=1e-9, abs=1e-12)
    assert res.info["network"] == "none" and "big switch" in res.info["note"]
    # best takes the interval bound's value for it instead of solving the same LP again
    best = compute_bound(inst, "best")
    assert best.info["bounds"]["free"] == best.info["bounds"]["interval"]
    assert set(best.info["bounds"]) == set(BOUNDS)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_instances(routings=("spray",), max_ports=4, max_coflows=5, max_flows=3))
def test_on_spine_leaf_and_fat_tree_spraying_is_the_best_routing(inst):
    """One capacity per tier: spraying loads each link of a switch's cut by the cut's share,
    so it meets every routing's cut bounds; the free LP, the cuts-only LP and the interval
    LP under spray are one LP (the same time points, without per-flow delays)."""
    ref = bound(inst, method="interval").bound
    for network in ("flow", "cuts"):
        got = bound(inst, method="free", network=network).bound
        assert got == pytest.approx(ref, rel=1e-7, abs=1e-9), network


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([0.5, 1.0, 2.0]),
       st.sampled_from([0.5, 1.0, 2.0]),
       instances(max_ports=6, max_coflows=5, max_flows=3), st.integers(0, 3))
def test_with_one_path_per_pair_the_free_bound_is_the_interval_bound(leaves, per_leaf, host, spine,
                                                                      base, seed):
    """A spine-leaf fabric with one spine is a tree: every routing is the same."""
    topo = SpineLeaf(leaves, 1, per_leaf, host, spine)
    H = topo.num_hosts
    coflows = tuple(Coflow(c.id, c.src % H, c.dst % H, c.sizes, release=c.release, weight=c.weight)
                    for c in base.coflows)
    inst = Instance(Network(topo, "ecmp", seed), coflows)
    ref = bound(inst, method="interval").bound
    assert bound(inst, method="free").bound == pytest.approx(ref, rel=1e-7, abs=1e-9)


def test_two_flows_hashed_onto_one_core_path_by_hand():
    """k = 4 fat-tree, unit links: h0 -> h4 and h2 -> h6 (pod 0 to pod 1, different edge
    switches), one unit each. ECMP seed 1 sends both through agg1 -> core2 -> agg3, so one
    waits: OPT(ecmp) = 1 + 2 = 3. Routed apart both finish at 1; the free LP has
    tau_1 = 1 and completes both there: 2, the price of ECMP 3 / 2 here."""
    net = Network(FatTree(4), "ecmp", 1)
    inst = Instance(net, (Coflow("a", [0], [4], [1.0]), Coflow("b", [2], [6], [1.0])))
    A = inst.routes.toarray()
    shared = [net.link_name(int(x)) for x in np.flatnonzero((A[0] > 0) & (A[1] > 0))]
    assert shared == ["link agg1->core2", "link core2->agg3"]
    assert solve(inst, method="exact").objective == pytest.approx(3.0)
    assert bound(inst, method="free").bound == pytest.approx(2.0, rel=1e-9)
    # the interval bound of ECMP's routing sees the shared link, the free one does not
    assert bound(inst, method="interval").bound > 2.0 + 1e-6
    assert solve(spray_twin(inst), method="exact").objective == pytest.approx(2.0)


def test_an_oversubscribed_edge_switch_by_hand():
    """k = 4 fat-tree, switch links of 0.5: h0 -> h4 and h1 -> h5 (both from edge switch 0),
    one unit each. Any routing takes both units through edge 0's two uplinks (1 together),
    each alone needs 1, so tau_1 = 1, points 1.25^i, and by tau_i at most tau_i units are
    through: the cheapest completes tau_i - tau_{i-1} more at each point, each unit charged
    max(tau_{i-1}, 1). The optimum over routings: split over both uplinks, one after the
    other, 1 + 2 = 3 (spray does it); ECMP (seed 0) gives each flow one uplink of 0.5, so
    both finish at 2 at best: 4."""
    inst = Instance(Network(FatTree(4, 1.0, 0.5), "ecmp", 0),
                    (Coflow("a", [0], [4], [1.0]), Coflow("b", [1], [5], [1.0])))
    tau, done, want, prev = 1.0, 0.0, 0.0, 1.0
    while done < 2.0:
        now = min(tau, 2.0)
        want += (now - done) * max(prev, 1.0)
        done, prev, tau = now, tau, tau * 1.25
    assert want == pytest.approx(2.342529296875, rel=1e-15)
    res = bound(inst, method="free")
    assert res.bound == pytest.approx(want, rel=1e-9)
    assert res.bound <= solve(spray_twin(inst), method="exact").objective == pytest.approx(3.0)
    assert solve(inst, method="exact").objective == pytest.approx(4.0)
    assert bound(inst, method="free", network="cuts").bound == pytest.approx(want, rel=1e-9)


def _graph(links, hosts=("h0", "h1")):
    nodes = sorted({u for u, _, _ in links} | {v for _, v, _ in links})
    return GraphTopology(tuple(nodes), hosts, tuple(links), directed=False)


def test_a_bottleneck_inside_the_network_needs_the_flow_not_the_cuts():
    """A line h0 - s0 - s1 - s2 - s3 - h1 whose middle link has capacity 0.5: no switch
    cut sees it (s0 sends 1, s3 receives 1), the multicommodity flow does."""
    topo = _graph([("h0", "s0", 1), ("s0", "s1", 1), ("s1", "s2", 0.5), ("s2", "s3", 1),
                   ("s3", "h1", 1)])
    inst = Instance(Network(topo, "ecmp", 0), (Coflow("a", [0], [1], [1.0]),))
    assert solve(inst, method="exact").objective == pytest.approx(2.0)
    assert bound(inst, method="free").bound == pytest.approx(2.0, rel=1e-9)
    assert bound(inst, method="free", network="cuts", earliest="cuts").bound == pytest.approx(1.0)
    assert bound(inst, method="free", network="flow").info["earliest"]["from_flow_lp"] == 1


def test_free_routing_may_use_longer_paths_than_ecmp_and_spray():
    """A ring of four switches, h0 on s0 and h1 on s1 (host links 2): ECMP and spray use
    the one shortest path s0 -> s1 (capacity 1), a free routing also s0 -> s3 -> s2 -> s1."""
    topo = _graph([("h0", "s0", 2), ("h1", "s1", 2), ("s0", "s1", 1), ("s1", "s2", 1),
                   ("s2", "s3", 1), ("s3", "s0", 1)])
    inst = Instance(Network(topo, "ecmp", 0), (Coflow("a", [0], [1], [2.0]),))
    assert solve(inst, method="exact").objective == pytest.approx(2.0)
    assert solve(spray_twin(inst), method="exact").objective == pytest.approx(2.0)
    res = bound(inst, method="free")
    assert res.bound == pytest.approx(1.0, rel=1e-9)
    assert res.info["network"] == "flow" and res.info["commodities"] == 1


def _wide(num: int, seed: int = 0) -> Instance:
    rng = np.random.default_rng(seed)
    topo = FatTree(4)
    coflows = tuple(Coflow(f"c{k}", rng.integers(0, 16, 3), rng.integers(0, 16, 3),
                           rng.uniform(1, 4, 3), release=float(k % 3)) for k in range(num))
    return Instance(Network(topo, "ecmp", seed), coflows)


def test_too_large_an_lp_is_refused_naming_its_size(monkeypatch):
    inst = _wide(8)
    full = bound(inst, method="free", network="flow")
    nnz = full.info["nonzeros"]
    monkeypatch.setattr(free, "MAX_ENTRIES", nnz - 1)
    with pytest.raises(CoflowoptError, match=f"would have {nnz:,} nonzeros .*network='cuts'"):
        bound(inst, method="free", network="flow")
    # auto leaves the flow out above its own limit, and says so
    monkeypatch.setattr(free, "MAX_ENTRIES", 30_000_000)
    monkeypatch.setattr(free, "AUTO_FLOW_ENTRIES", 10)
    res = bound(inst, method="free")
    assert res.info["network"] == "cuts" and "switch cuts only" in res.info["flow_skipped"]
    assert res.bound <= full.bound * (1 + 1e-9)
    with pytest.raises(CoflowoptError, match="would have at least"):
        bound(inst, method="free", ratio=1 + 1e-9)


def test_bad_options_are_refused():
    inst = _wide(2)
    for option, value, message in (("network", "paths", "network must be 'auto', 'flow' or 'cuts'"),
                                   ("earliest", "lp", "earliest must be"),
                                   ("solver", "gurobi", "solver must be"),
                                   ("thresholds", -1, "thresholds must be")):
        with pytest.raises(CoflowoptError, match=message):
            bound(inst, method="free", **{option: value})
    with pytest.raises(CoflowoptError, match=r"ratio must be float \(numbers: finite and > 1\)"):
        bound(inst, method="free", ratio=1.0)


def test_out_of_time_is_reported_not_a_bound(monkeypatch):
    inst = _wide(6)
    res = bound(inst, method="free", network="flow", earliest="cuts", time_limit=1e-9)
    assert res.status is Status.TIME_LIMIT and math.isnan(res.bound)
    assert res.info["stopped_while"] == "building the cut rows"
    ticks = iter(range(10_000))
    calls = {"n": 0}

    def count(self):
        calls["n"] += 1
        return False

    monkeypatch.setattr(free.TimeBudget, "expired", count)
    whole = bound(inst, method="free", network="flow", earliest="cuts", time_limit=10.0)
    assert whole.status is Status.BOUND
    # out of time among the flow's time points: said so
    last = calls["n"]
    monkeypatch.setattr(free.TimeBudget, "expired", lambda self: next(ticks) >= last - 3)
    res = bound(inst, method="free", network="flow", earliest="cuts", time_limit=10.0)
    assert res.status is Status.TIME_LIMIT and res.info["stopped_while"] == "building the flow rows"


def test_best_leaves_the_free_bound_out_on_a_network():
    inst = _wide(3)
    best = compute_bound(inst, "best")
    assert "free" in best.info["skipped"] and "free" not in best.info["bounds"]
    assert "every routing" in best.info["skipped_because"]["free"]


def test_the_command_line_bounds_a_network_instance(tmp_path, capsys):
    from coflowopt.cli import main
    from coflowopt.io import write

    path = tmp_path / "inst.json"
    write(Instance(Fabric.uniform(16), _wide(3).coflows), path)
    assert main(["bound", str(path), "--method", "free", "--topology", "fat-tree:k=4"]) == 0
    out = capsys.readouterr().out
    assert "lower bound on sum of w_k C_k (free):" in out and "note:" not in out
    assert main(["bound", str(path), "--method", "free"]) == 0
    assert "the free-routing LP is the interval LP" in capsys.readouterr().out
