"""Exact minimum of sum w_k C_k: cross-checked against an independent brute force.

The brute force below enumerates every order of events (coflow completions
interleaved with release times), writes the flow-level LP of each order
from scratch and solves it with scipy's linprog. It shares no code with
``coflowopt.exact``.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from coflowopt import Coflow, Fabric, Instance, check_feasible, read
from coflowopt.errors import CoflowoptError
from coflowopt.result import Status
from coflowopt.solvers import solve
from tests.strategies import instances, network_instances, seeded_instance

EXAMPLES = Path(__file__).resolve().parents[2] / "instances" / "examples"


def brute_force_wcct(inst: Instance) -> float:
    """min sum w_k C_k by enumerating event orders; one flow-level LP per order."""
    K, F = inst.num_coflows, inst.num_flows
    cap = np.asarray(inst.fabric.capacity, dtype=float)  # every link: ports' and switches'
    if isinstance(inst.fabric, Fabric):  # the big switch: uplink src, downlink P + dst
        P = inst.num_ports
        share = np.zeros((F, cap.size))
        share[np.arange(F), inst.flow_src] = 1.0
        share[np.arange(F), P + inst.flow_dst] = 1.0
    else:  # a network: the instance's routing, A_fl the share of flow f's rate on link l
        share = inst.routes.toarray()
    rel = np.asarray(inst.flow_release, dtype=float)
    rhos = sorted({float(r) for r in rel if r > 0})
    R = len(rhos)
    E = K + R
    best = math.inf
    for perm in itertools.permutations(range(K)):
        for rpos in itertools.combinations(range(E), R):
            kinds, it_c, it_r = [], iter(perm), iter(range(R))
            for e in range(E):
                kinds.append(("R", next(it_r)) if e in rpos else ("D", next(it_c)))
            relpos = {j: i + 1 for i, (kd, j) in enumerate(kinds) if kd == "R"}
            done = {k: i + 1 for i, (kd, k) in enumerate(kinds) if kd == "D"}
            if any(done[j] > done[k] for k in range(K) for j in inst.finishes_before[k]):
                continue
            nv = E + F * E
            c = np.zeros(nv)
            for k in range(K):
                c[done[k] - 1] += inst.weight[k]
            bounds = [(0.0, None)] * nv
            for i, (kd, j) in enumerate(kinds):
                if kd == "R":
                    bounds[i] = (rhos[j], rhos[j])
            a_ub, b_ub, a_eq, b_eq = [], [], [], []
            for e in range(1, E):
                row = np.zeros(nv)
                row[e - 1], row[e] = 1.0, -1.0
                a_ub.append(row)
                b_ub.append(0.0)
            possible = True
            for f in range(F):
                k = int(inst.flow_coflow[f])
                first = 1 if rel[f] <= 0 else relpos[rhos.index(float(rel[f]))] + 1
                for j in inst.starts_after[k]:
                    first = max(first, done[int(j)] + 1)
                last = done[k]
                if first > last:
                    possible = False
                for e in range(1, E + 1):
                    if not first <= e <= last:
                        bounds[E + f * E + e - 1] = (0.0, 0.0)
                row = np.zeros(nv)
                row[E + f * E : E + (f + 1) * E] = 1.0
                a_eq.append(row)
                b_eq.append(inst.flow_size[f])
            if not possible:
                continue
            for e in range(1, E + 1):
                for link in range(cap.size):
                    row = np.zeros(nv)
                    for f in range(F):
                        row[E + f * E + e - 1] = share[f, link]
                    if not row.any():
                        continue
                    row[e - 1] -= cap[link]
                    if e >= 2:
                        row[e - 2] += cap[link]
                    a_ub.append(row)
                    b_ub.append(0.0)
            res = linprog(c, A_ub=np.array(a_ub) if a_ub else None, b_ub=b_ub or None,
                          A_eq=np.array(a_eq), b_eq=b_eq, bounds=bounds, method="highs")
            if res.status == 0:
                best = min(best, float(res.fun))
    return best


def assert_result_consistent(inst: Instance, res, tol: float = 1e-6) -> None:
    assert res.schedule is not None and res.completion is not None
    report = check_feasible(inst, res.schedule)
    assert report, str(report)
    np.testing.assert_allclose(res.schedule.coflow_completion(inst), res.completion, rtol=1e-9)
    assert res.objective == pytest.approx(float(np.dot(inst.weight, res.completion)), rel=1e-9)
    assert res.bound <= res.objective * (1 + tol) + tol


def assert_optimal_equals_brute_force(inst: Instance, method: str,
                                      optimum: float | None = None) -> float:
    """``method`` proves an optimum, its schedule is consistent, and the independent brute
    force finds the same value (``optimum``, when already computed); returns it."""
    res = solve(inst, method=method, time_limit=60)
    assert res.status is Status.OPTIMAL
    assert_result_consistent(inst, res)
    if optimum is None:
        optimum = brute_force_wcct(inst)
    assert res.objective == pytest.approx(optimum, rel=1e-6, abs=1e-9)
    return optimum


tiny = instances(max_ports=3, max_coflows=3, max_flows=2, integer=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny)
def test_exact_equals_brute_force_over_event_orders(inst):
    assert_optimal_equals_brute_force(inst, "exact")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_instances(max_ports=3, max_coflows=3, max_flows=2, integer=True))
def test_exact_equals_brute_force_on_networks(inst):
    """Spine-leaf fabrics and the k = 4 fat-tree, ECMP or spray: the exact method's
    optimum is the brute force's over the same routes, every link constrained."""
    assert_optimal_equals_brute_force(inst, "exact")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_instances(max_ports=3, max_coflows=3, max_flows=2, integer=True))
def test_exact_milp_equals_brute_force_on_networks(inst):
    """The event MILP on networks (links instead of ports): the brute force's optimum."""
    assert_optimal_equals_brute_force(inst, "exact-milp")


def test_exact_on_a_fat_tree_where_the_core_decides():
    """k = 4 fat-tree with unit links, ECMP: four coflows from pod 0 to pod 1 on distinct
    host links, so only switch links they share make them wait, and a fifth, released
    at 1, that shares their senders."""
    from coflowopt.fabric import FatTree, Network

    net = Network(FatTree(4), "ecmp", 0)
    coflows = [Coflow(f"c{k}", [k], [4 + k], [1.0 + k % 2], weight=1.0 + k) for k in range(4)]
    coflows.append(Coflow("c4", [0, 1], [8, 12], [1.0, 2.0], release=1.0))
    inst = Instance(net, coflows, name="fat-tree")
    optimum = assert_optimal_equals_brute_force(inst, "exact")
    assert_optimal_equals_brute_force(inst, "exact-milp", optimum)
    # the same coflows on the big switch never share a link: the core made someone wait
    alone = float(np.dot(inst.weight, [1.0 + k % 2 for k in range(4)] + [3.0]))
    assert optimum > alone + 1e-6


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=3, max_flows=2, integer=True, dependencies=True,
                 delays=True))
def test_exact_with_dependencies_and_delays_equals_brute_force(inst):
    res = solve(inst, method="exact", time_limit=60)
    assert_result_consistent(inst, res)
    # with finishes-before the optimum is an infimum (a successor's last bytes just after its
    # predecessors'); the solver's schedule keeps FB_SHARE of the successor's data for the
    # end, so it is above the brute force's event-order value by at most that much, and the
    # bound is below the infimum (the gap may then exceed rel_gap: 'feasible')
    best = brute_force_wcct(inst)
    assert best * (1 - 1e-9) - 1e-9 <= res.objective <= best * (1 + 1e-4) + 1e-9
    assert res.bound <= best * (1 + 1e-9) + 1e-9
    if any(b.size for b in inst.finishes_before):
        assert res.status in (Status.OPTIMAL, Status.FEASIBLE)
    else:
        assert res.status is Status.OPTIMAL


def test_a_finishes_before_successor_really_finishes_after_its_predecessor():
    # c2 could send all its data before c0 is even released; the event order's value (7) is
    # an infimum that the schedule must approach with c2's last bytes after c0's (found by
    # hypothesis: the LP sent all of c2 at [1, 2] and the schedule broke the dependency)
    def one(k, release, **kw):
        return Coflow(id=f"c{k}", src=np.array([0]), dst=np.array([0]), sizes=np.array([1.0]),
                      release=release, **kw)

    inst = Instance(Fabric([1.0], [1.0]), (one(0, 2.0), one(1, 0.0),
                                           one(2, 0.0, finishes_before=("c0",))))
    res = solve(inst, method="exact", time_limit=60)
    assert_result_consistent(inst, res)
    assert res.objective == pytest.approx(brute_force_wcct(inst), rel=1e-4)
    assert res.completion[2] >= res.completion[0]
    # 7 is an infimum, not attained: the bound is 7 (it was 7.00001, the realized value,
    # above the infimum, before the tails were left out of the bound), the gap 1.4e-6
    assert res.bound == pytest.approx(7.0, rel=1e-9) and res.bound <= 7.0 * (1 + 1e-12)
    assert res.status is Status.FEASIBLE


@settings(max_examples=25, deadline=None)
@given(instances(max_ports=4, max_coflows=1, max_flows=5))
def test_single_coflow_optimum_is_release_plus_isolation_time(inst):
    res = solve(inst, method="exact")
    k = 0
    assert res.objective == pytest.approx(inst.weight[k] * (inst.release[k] + inst.gamma[k]),
                                          rel=1e-7)
    assert_result_consistent(inst, res)


def shuffle() -> Instance:
    path = EXAMPLES / "dissertation_3_2_shuffle.json"
    if path.exists():
        return read(path)
    flows = [(0, 0, 1.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 1.0), (2, 0, 2.0), (2, 1, 2.0)]
    return Instance(Fabric.uniform(3), (Coflow.from_flows("shuffle", flows),))


def test_dissertation_3_2_shuffle_optimum_is_4():
    inst = shuffle()
    for method in ("exact", "exact-milp", "time-indexed"):
        res = solve(inst, method=method)
        assert res.objective == pytest.approx(4.0, rel=1e-7), method
        assert_result_consistent(inst, res)
    assert solve(inst, method="exact", objective="makespan").objective == pytest.approx(4.0)


def test_exact_on_8_coflows_with_releases_is_optimal_and_feasible():
    inst = seeded_instance(3, coflows=6, ports=3, max_flows=3, max_size=3.0, max_weight=2.0)
    res = solve(inst, method="exact", time_limit=120)
    assert res.status is Status.OPTIMAL
    assert_result_consistent(inst, res)
    milp = solve(inst, method="exact-milp", time_limit=120)
    assert milp.objective == pytest.approx(res.objective, rel=1e-6)


def test_time_limit_returns_incumbent_and_bound(expired_clock):
    rng = np.random.default_rng(11)
    coflows = [Coflow(f"c{k}", rng.integers(0, 4, 4), rng.integers(0, 4, 4),
                      rng.uniform(0.5, 5, 4), release=float(rng.uniform(0, 2)),
                      weight=float(rng.uniform(0.5, 3))) for k in range(12)]
    inst = Instance(Fabric.uniform(4), tuple(coflows))
    res = solve(inst, method="exact", time_limit=1e-3)
    assert res.status is Status.TIME_LIMIT
    assert 0 < res.bound < res.objective
    assert_result_consistent(inst, res)


def test_bad_options_raise():
    inst = shuffle()
    with pytest.raises(CoflowoptError, match="does not take option"):
        solve(inst, method="exact", cuts=3)
    with pytest.raises(CoflowoptError, match="not available for objective 'wcct'"):
        solve(inst, method="branch-and-price")
    with pytest.raises(CoflowoptError, match="unknown objective"):
        solve(inst, method="exact", objective="tardiness")
    with pytest.raises(CoflowoptError, match="time_limit must be"):
        solve(inst, method="exact", time_limit=0)
    with pytest.raises(CoflowoptError, match="expected an Instance"):
        solve("shuffle.json", method="exact")  # type: ignore[arg-type]


def test_empty_instance():
    inst = Instance(Fabric.uniform(2), ())
    for method in ("exact", "permutation", "time-indexed"):
        res = solve(inst, method=method)
        assert res.objective == 0.0


@pytest.mark.parametrize("weights", [False, True])
def test_exact_milp_matches_branch_and_bound(weights):
    rng = np.random.default_rng(5 + weights)
    coflows = [Coflow(f"c{k}", rng.integers(0, 3, 2), rng.integers(0, 3, 2),
                      rng.uniform(0.5, 3, 2), release=float(rng.integers(0, 3)),
                      weight=float(rng.uniform(0.5, 3)) if weights else 1.0) for k in range(4)]
    inst = Instance(Fabric.uniform(3), tuple(coflows))
    a = solve(inst, method="exact")
    b = solve(inst, method="exact-milp")
    assert a.objective == pytest.approx(b.objective, rel=1e-6)
    assert_result_consistent(inst, b)


def test_exact_milp_rejects_dependencies():
    a = Coflow.from_flows("a", [(0, 0, 1.0)])
    b = Coflow.from_flows("b", [(0, 0, 1.0)], starts_after=("a",))
    inst = Instance(Fabric.uniform(1), (a, b))
    with pytest.raises(CoflowoptError, match="dependencies"):
        solve(inst, method="exact-milp")
    res = solve(inst, method="exact")  # the branch and bound models them
    assert res.objective == pytest.approx(3.0)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6))
def test_exact_never_above_a_permutation_schedule(seed):
    from coflowopt.exact.permutation import permutation_schedule

    rng = np.random.default_rng(seed)
    coflows = [Coflow(f"c{k}", rng.integers(0, 3, 2), rng.integers(0, 3, 2),
                      rng.uniform(0.5, 3, 2), release=float(rng.uniform(0, 2)),
                      weight=float(rng.uniform(0.5, 2))) for k in range(4)]
    inst = Instance(Fabric.uniform(3), tuple(coflows))
    res = solve(inst, method="exact")
    _, comp = permutation_schedule(inst, rng.permutation(4))
    assert res.objective <= float(np.dot(inst.weight, comp)) * (1 + 1e-9)


def test_the_event_milp_keeps_the_optimum_with_a_tiny_wave_delay():
    # (a random search) a wave 1.4e-8 after its coflow's release: with HiGHS's
    # presolve the event MILP called 62.66 optimal, bound included, where the optimum is 60.16
    inst = Instance(Fabric(np.array([6.410779777544326]), np.array([29.560783890515182])), (
        Coflow("c0", [0], [0], [28.432722771702778], release=0.0, weight=1.0),
        Coflow("c1", [0, 0, 0], [0, 0, 0], [23.0, 12.602760087437696, 19.0], release=2.0,
               weight=2.0),
        Coflow("c2", [0, 0], [0, 0], [6.237760546624205, 19.345516343696726],
               release=6.931035528053933, weight=2.0, delay=[1.3918260817761068e-08, 0.0]),
    ))
    optimum = brute_force_wcct(inst)
    assert optimum == pytest.approx(60.16483083753526, rel=1e-9)
    res = solve(inst, method="exact-milp")
    assert res.status is Status.OPTIMAL and check_feasible(inst, res.schedule)
    assert res.objective == pytest.approx(optimum, rel=1e-7)
    assert res.bound <= optimum * (1 + 1e-9)


def _sprayed_two_waves() -> Instance:
    # spine links of capacity 0.5, each sprayed flow putting 1/2 of its rate on each of the
    # two: alone a flow runs at 1. Coflow a: h0->h1, sizes 1 and 1, the second released at 1
    # (done at 2 at the earliest); b: h1->h0, size 1, weight 5 (done at 1). Optimum 2 + 5 = 7.
    from coflowopt.fabric import Network, SpineLeaf

    net = Network(SpineLeaf(2, 2, 1, 1.0, 0.5), "spray")
    return Instance(net, (Coflow.from_flows("a", [(0, 1, 1.0), (0, 1, 1.0)], delay=[0, 1]),
                          Coflow.from_flows("b", [(1, 0, 1.0)], weight=5.0)))


def test_the_groups_earliest_completions_read_each_links_share_under_spray():
    from coflowopt.exact._groups import build_groups

    inst = _sprayed_two_waves()
    g = build_groups(inst)
    assert np.allclose(g.earliest * g.time_unit, [2.0, 1.0])
    for method in ("exact", "exact-milp"):
        res = solve(inst, method=method)
        assert res.status is Status.OPTIMAL and check_feasible(inst, res.schedule).ok, method
        assert res.objective == pytest.approx(7.0), method
    assert "optimal" in solve(inst, method="exact-milp").info["termination"]


def test_a_bound_above_the_incumbent_does_not_make_it_optimal(monkeypatch):
    # earliest completions above the optimum's (as the slowest link gave them under spray:
    # 3 for coflow a) make the MILP infeasible and the isolation bound (8) exceed the
    # incumbent (7): a lower bound above a feasible schedule is wrong, and clamped to the
    # incumbent's value it called the incumbent optimal
    from coflowopt.bounds import simple
    from coflowopt.exact import _groups

    inst = _sprayed_two_waves()
    wrong = np.array([3.0, 1.0])
    monkeypatch.setattr(simple, "earliest_completion", lambda _inst: wrong)
    monkeypatch.setattr(_groups, "earliest_completion", lambda _inst: wrong)
    res = solve(inst, method="exact-milp")
    assert "infeasible" in res.info["termination"]
    assert res.status is not Status.OPTIMAL
    assert res.objective == pytest.approx(7.0) and check_feasible(inst, res.schedule).ok
    assert res.bound <= res.objective


def test_the_milp_solves_again_where_its_tight_tolerance_calls_it_infeasible():
    # a graph fabric with a flow from host h2 to itself (through its switch) and per-flow
    # delays: at a MIP feasibility tolerance of 1e-9 HiGHS called the model infeasible,
    # which it is not (it holds the incumbent's order), and exact-milp returned the
    # incumbent as feasible with a 4.5% gap; exact proves 41.45
    from coflowopt.fabric import GraphTopology, Network

    links = (("h0", "s0", 0.5), ("s0", "h0", 0.5), ("h1", "s0", 0.5), ("s0", "h1", 2.0),
             ("h2", "s3", 0.5), ("s3", "h2", 3.0), ("h3", "s1", 0.5), ("s1", "h3", 2.0),
             ("s0", "s1", 1.0), ("s1", "s0", 0.5), ("s1", "s3", 3.0), ("s3", "s1", 0.5),
             ("s0", "s2", 2.0), ("s2", "s0", 3.0), ("s2", "s3", 2.0), ("s3", "s2", 0.5))
    topo = GraphTopology(("h0", "h1", "h2", "h3", "s0", "s1", "s2", "s3"),
                         ("h0", "h1", "h2", "h3"), links)
    inst = Instance(Network(topo, "ecmp"), (
        Coflow.from_flows("c0", [(2, 0, 2.3, 0.5), (2, 2, 0.6, 1.0), (2, 3, 0.9, 2.0)],
                          release=1.0, weight=3.0),
        Coflow.from_flows("c1", [(0, 3, 3.9, 0.0)], release=0.0, weight=1.0),
        Coflow.from_flows("c2", [(0, 3, 1.5, 0.0), (2, 3, 2.3, 0.5)], release=0.0, weight=0.5)))
    exact = solve(inst, method="exact")
    res = solve(inst, method="exact-milp")
    assert exact.status is Status.OPTIMAL and res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(exact.objective, rel=1e-9)
    assert res.objective == pytest.approx(41.45, rel=1e-9)
