"""Lower bounds: never above the optimum, the best permutation or any heuristic schedule."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance
from coflowopt.bounds import BOUNDS, compute_bound
from coflowopt.bounds._highs import LPBuilder, safe_dual_bound
from coflowopt.bounds._round import cct_bound
from coflowopt.bounds.simple import (
    completion_caps,
    earliest_completion,
    makespan_bound,
    sequential_completion,
    single_machine_bound,
)
from coflowopt.bounds.sincronia import bssi_release, sincronia_bound
from coflowopt.errors import CoflowoptError
from coflowopt.exact.permutation import permutation_schedule
from coflowopt.orders import bssi
from coflowopt.result import Status
from coflowopt.solvers import bound, solve
from tests.strategies import instances, network_instances

TOL = 1e-6


def all_bounds(inst: Instance) -> dict[str, float]:
    out = {name: bound(inst, method=name).bound for name in BOUNDS}
    out["interval-fine"] = bound(inst, method="interval", ratio=1.05).bound
    out["pairwise-all-thresholds"] = bound(inst, method="pairwise", thresholds="all").bound
    out["pairwise-every-row"] = bound(inst, method="pairwise", thresholds="all",
                                      rowgen=False).bound
    out["pairwise-lazy-rho-0"] = bound(inst, method="pairwise", thresholds=0, rowgen=True).bound
    out["pairwise-published"] = bound(inst, method="pairwise", rows="published").bound
    return out


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(instances(max_ports=3, max_coflows=3, max_flows=2, delays=True),
                 network_instances(max_ports=3, max_coflows=3, max_flows=2, delays=True)))
def test_bounds_below_optimum_below_best_permutation(inst):
    exact = solve(inst, method="exact")
    perm = solve(inst, method="permutation")
    sinc = solve(inst, method="sincronia")
    pair = solve(inst, method="pairwise-order")
    assert exact.objective <= perm.objective * (1 + 1e-7)
    assert perm.objective <= min(sinc.objective, pair.objective) * (1 + 1e-7)
    found = all_bounds(inst)
    for name, value in found.items():
        assert math.isfinite(value), name
        assert value <= exact.objective * (1 + TOL) + TOL, name
    # and from below: the LPs' objectives telescope to sum w_k e_k plus nonnegative terms
    iso = float(np.dot(inst.weight, earliest_completion(inst)))
    for name in ("interval", "pairwise"):
        assert found[name] >= iso * (1 - 1e-9) - TOL, name
    for res in (sinc, pair):
        assert res.bound <= exact.objective * (1 + TOL)
        # proven below the schedule's own value as it stands (the bound is not clamped)
        assert res.bound <= res.objective and res.info["certified_ratio"] >= 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=4, max_coflows=6, max_flows=4), st.integers(0, 2**31))
def test_bounds_below_any_permutation_schedule(inst, seed):
    order = np.random.default_rng(seed).permutation(inst.num_coflows)
    _, comp = permutation_schedule(inst, order)
    value = float(np.dot(inst.weight, comp))
    for name, b in all_bounds(inst).items():
        assert b <= value * (1 + TOL) + TOL, name
    # the caps derived from the one-at-a-time schedule never cut off a better schedule
    seq = float(np.dot(inst.weight, sequential_completion(inst)))
    if value <= seq:
        assert np.all(comp <= completion_caps(inst))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(0, 4), st.integers(1, 3)),
                min_size=1, max_size=5))
def test_single_machine_bounds(jobs):
    """SRPT equals the preemptive optimum (equal weights); Goemans' bound stays below it."""
    p = np.array([j[0] for j in jobs], float)
    r = np.array([j[1] for j in jobs], float)
    w = np.array([j[2] for j in jobs], float)
    inst = Instance(Fabric.uniform(1), tuple(
        Coflow.from_flows(f"j{i}", [(0, 0, p[i])], release=r[i], weight=w[i])
        for i in range(p.size)))
    opt_w = solve(inst, method="exact").objective
    assert single_machine_bound(p, r, w, unweighted=False) <= opt_w * (1 + TOL)
    ones = np.ones_like(w)
    opt_1 = solve(inst.replace(coflows=tuple(
        Coflow(c.id, c.src, c.dst, c.sizes, release=c.release) for c in inst.coflows)),
        method="exact").objective
    assert single_machine_bound(p, r, ones, unweighted=True) == pytest.approx(opt_1, rel=1e-9)


def test_port_bound_uses_srpt_on_the_busiest_link():
    inst = Instance(Fabric.uniform(1), (Coflow.from_flows("a", [(0, 0, 3.0)]),
                                        Coflow.from_flows("b", [(0, 0, 1.0)], release=1.0)))
    # SRPT: a runs [0,1], b [1,2], a [2,4] -> 2 + 4 = 6 = optimum
    res = bound(inst, method="port")
    assert res.bound == pytest.approx(6.0)
    assert res.info["rule"].startswith("SRPT")


@settings(max_examples=30, deadline=None)
@given(instances(max_ports=4, max_coflows=6, max_flows=4, releases=False))
def test_sincronia_bound_is_the_bssi_dual_without_releases(inst):
    v = inst.load / inst.fabric.capacity
    res = sincronia_bound(inst)
    assert res.bound == pytest.approx(bssi(v, inst.weight).dual, rel=1e-12)
    # and the pairwise LP is at least as strong as the ordering LP's dual
    assert bound(inst, method="pairwise").bound >= res.bound * (1 - 1e-7) - 1e-9


@settings(max_examples=30, deadline=None)
@given(instances(max_ports=4, max_coflows=6, max_flows=4), st.floats(0.1, 10))
def test_release_variant_dual_is_feasible(inst, factor):
    """Residual weights stay non-negative, so the dual point is feasible; the value bounds."""
    v = inst.load / inst.fabric.capacity
    order, dual = bssi_release(v, inst.weight, inst.release, earliest_completion(inst),
                               release_factor=factor)
    assert sorted(order.tolist()) == list(range(inst.num_coflows))
    _, comp = permutation_schedule(inst, order)
    assert dual <= float(np.dot(inst.weight, comp)) * (1 + TOL)


def test_best_is_the_largest_finished_bound():
    rng = np.random.default_rng(1)
    coflows = [Coflow(f"c{k}", rng.integers(0, 3, 3), rng.integers(0, 3, 3),
                      rng.uniform(0.5, 4, 3), release=float(rng.uniform(0, 3))) for k in range(6)]
    inst = Instance(Fabric.uniform(3), tuple(coflows))
    best = compute_bound(inst, "best")
    assert best.status is Status.BOUND
    assert best.bound == pytest.approx(max(best.info["bounds"].values()))
    assert set(best.info["bounds"]) == set(BOUNDS)


def test_bound_options_raise():
    inst = Instance(Fabric.uniform(1), (Coflow.from_flows("a", [(0, 0, 1.0)]),))
    with pytest.raises(CoflowoptError, match="unknown bound 'lagrange'"):
        bound(inst, method="lagrange")
    # a method that cannot be a name, and a progress that cannot be called: TypeErrors
    for method in (["free"], {"x": 1}):
        with pytest.raises(CoflowoptError, match="unknown bound"):
            bound(inst, method=method)
    for progress in ("x", 5):
        with pytest.raises(CoflowoptError, match="progress must be a function"):
            bound(inst, progress=progress)
    with pytest.raises(CoflowoptError, match="does not take option"):
        bound(inst, method="isolation", ratio=2.0)
    with pytest.raises(CoflowoptError, match=r"ratio must be float \(numbers: finite and > 1\)"):
        bound(inst, method="interval", ratio=1.0)
    with pytest.raises(CoflowoptError, match="takes no options"):
        bound(inst, method="best", ratio=2.0)
    with pytest.raises(CoflowoptError, match="thresholds must be"):
        bound(inst, method="pairwise", thresholds=-1)
    with pytest.raises(CoflowoptError, match="solver must be"):
        bound(inst, method="pairwise", solver="gurobi")


def test_safe_dual_bound_is_a_lower_bound_for_any_multipliers():
    lp = LPBuilder()
    lp.add_cols(2, cost=[1.0, 2.0], lo=0.0, hi=10.0)
    lp.add_rows([0, 0, 1], [0, 1, 1], [1.0, 1.0, 1.0], [3.0, 1.0], np.inf, num=2)
    sol = lp.solve()
    assert sol.objective == pytest.approx(4.0) and sol.bound == pytest.approx(4.0)
    c, a, rlo, rhi, lo, hi = lp.arrays()
    for y in itertools.product([0.0, 0.5, 1.0, 2.0, -1.0], repeat=2):
        assert safe_dual_bound(c, a, rlo, rhi, lo, hi, np.array(y)) <= 4.0 + 1e-12


@pytest.mark.parametrize("topology", [None, "fat-tree"])
def test_lp_bounds_stay_below_an_optimum_they_reach_not_an_ulp_above(topology):
    # two coflows on links of their own: the optimum is 3 * 2 + 1 * 3 = 9 and the LPs reach
    # it exactly; their dual bound summed in floating point came out 9.000000000000002
    inst = Instance(Fabric.uniform(5), (
        Coflow.from_flows("c0", [(2, 2, 1.0), (4, 0, 2.0)], weight=3.0),
        Coflow.from_flows("c1", [(3, 1, 3.0)])))
    if topology:
        from coflowopt.fabric import place

        inst = place(inst, topology, {"k": "4"})
    for method, options in (("interval", {}), ("pairwise", {}), ("free", {}),
                            ("pairwise", {"thresholds": "all", "rowgen": False})):
        value = bound(inst, method=method, **options).bound
        assert 9.0 * (1 - 1e-12) <= value <= 9.0, (method, options)


def _alone(cfs, rate):
    """The exact optimum (Fractions of the float data) of coflows of one flow each, on ports of
    their own: each coflow alone."""
    return sum(Fraction(k.weight) * (Fraction(k.release) + Fraction(float(k.sizes[0])) / Fraction(rate))
               for k in cfs)


@pytest.mark.parametrize("rate, cfs", [
    (1.0, (Coflow.from_flows("a", [(0, 0, 0.1)], weight=3.0),)),
    (1.1, (Coflow.from_flows("c0", [(0, 0, 7e-7)], weight=2 / 3, release=1e5),
           Coflow.from_flows("c1", [(1, 1, 1 / 3)], weight=7e-7, release=0.1))),
    (0.7, (Coflow.from_flows("a", [(0, 0, 2 / 3)], weight=3.0, release=1 / 3),)),
    (12.3, (Coflow.from_flows("a", [(0, 0, 0.1)], weight=2.5e-308),)),
])
def test_every_bound_stays_below_the_exact_optimum_of_the_float_data(rate, cfs):
    # every bound, closed form or LP, is rounded down by its floating-point rounding: each of
    # these instances gave bounds one to a few ulps above the optimum they reach (the last one
    # below the normal range)
    inst = Instance(Fabric.uniform(len(cfs), rate), cfs)
    opt = _alone(cfs, rate)
    for name in [*BOUNDS, "best"]:
        assert Fraction(compute_bound(inst, name).bound) <= opt, name
    ti = solve(inst, method="time-indexed", lower="lp")
    assert Fraction(ti.bound) <= opt
    released = sum(Fraction(k.weight) * Fraction(k.release) for k in cfs)
    assert Fraction(cct_bound(compute_bound(inst, "best").bound, inst.weight, inst.release)) <= opt - released


@pytest.mark.parametrize("big", [1e8, 1e12, 1e15])
def test_the_rounding_margins_stay_small_with_large_weights_and_releases(big):
    # a heavy coflow released at 0 beside a light one released late: the margins once charged
    # the heaviest weight times the latest release (the port bound came out at -4.66e15)
    inst = Instance(Fabric.uniform(2), (
        Coflow.from_flows("a", [(0, 0, 1.0)], weight=big),
        Coflow.from_flows("b", [(1, 1, 1.0)], release=big)))
    opt = 2 * big + 1
    for name in [*BOUNDS, "best"]:
        value = compute_bound(inst, name).bound
        assert opt * (1 - 1e-13) <= value <= opt, name


def test_the_sincronia_bound_stays_below_smiths_optimum_on_integer_data():
    # one unit port: Smith's rule is optimal, 2 * 2 + 2 * 12 + 1 * 22 = 50; the dual came out
    # 50.000000000000014
    inst = Instance(Fabric.uniform(1), (
        Coflow.from_flows("a", [(0, 0, 2.0)], weight=2.0), Coflow.from_flows("b", [(0, 0, 10.0)]),
        Coflow.from_flows("c", [(0, 0, 10.0)], weight=2.0)))
    assert solve(inst, method="exact").objective == pytest.approx(50.0)
    for name in ("sincronia", "port", "best"):
        assert compute_bound(inst, name).bound <= 50.0, name


def test_isolation_bound_counts_delays():
    c = Coflow.from_flows("a", [(0, 0, 1.0, 2.0), (1, 1, 1.0)])  # second wave at t = 2
    inst = Instance(Fabric.uniform(2), (c,))
    assert inst.gamma[0] == pytest.approx(1.0)
    assert bound(inst, method="isolation").bound == pytest.approx(3.0)
    assert solve(inst, method="exact").objective == pytest.approx(3.0)


def test_a_sprayed_flow_alone_is_limited_by_its_share_of_each_link_not_the_slowest():
    # spine links have capacity 0.5 but a flow sprayed over both spines puts 1/2 of its
    # rate on each: alone it runs at rate 1 (its host links). Two flows of size 1 from h0
    # to h1, the second released at 1: done at 2 (the first at rate 1 by 1, then the second)
    from coflowopt.fabric import Network, SpineLeaf
    from coflowopt.sim import simulate

    net = Network(SpineLeaf(2, 2, 1, 1.0, 0.5), "spray")
    inst = Instance(net, (Coflow.from_flows("a", [(0, 1, 1.0), (0, 1, 1.0)], delay=[0, 1]),))
    assert earliest_completion(inst)[0] == pytest.approx(2.0)
    assert makespan_bound(inst) == pytest.approx(2.0)
    for name in ("isolation", "port", "interval", "pairwise"):
        assert bound(inst, method=name).bound == pytest.approx(2.0), name
    assert solve(inst, method="exact").objective == pytest.approx(2.0)
    assert simulate(inst, "fair").cct[0] == pytest.approx(2.0)


@pytest.mark.parametrize("args", [
    ["bound", "--method", "best"],
    ["solve", "--method", "time-indexed"],
    ["compare", "--schedulers", "varys", "--bound", "best", "--no-progress"],
])
def test_json_output_of_a_real_process_is_json_alone(args):
    # HiGHS writes its banner to the process's standard output (not Python's sys.stdout,
    # so capsys never sees it) unless its output is off before highspy installs callbacks
    example = Path(__file__).resolve().parents[2] / "instances" / "examples" / (
        "dissertation_5_1_varys_motivating_reconstructed.json")
    cmd, *rest = args
    proc = subprocess.run([sys.executable, "-m", "coflowopt", cmd, str(example), *rest, "--json"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "HiGHS" not in proc.stdout
    json.loads(proc.stdout)


# a heavy coflow that can finish at once beside a long light one:
# the interval LP's objective was a horizon-sized constant minus an LP value of the same
# size, and their difference lost all digits (2.36x the optimum in the first case)
HEAVY_BESIDE_LONG = [
    ((109334011.96584956, 1.7721602072531998e-10), (2.1202364751767232e-09, 1057672.8527857158)),
    ((695092.2164115392, 1.5849396977329365e-06), (1.3998783767125212e-06, 684303.5397384164)),
]


@pytest.mark.parametrize("case", HEAVY_BESIDE_LONG)
def test_lp_bounds_stay_below_the_optimum_with_extreme_weights(case):
    from coflowopt.solvers import solve

    (size_a, w_a), (size_b, w_b) = case
    inst = Instance(Fabric.uniform(4), (Coflow.from_flows("A", [(0, 1, size_a)], weight=w_a),
                                        Coflow.from_flows("B", [(2, 3, size_b)], weight=w_b)))
    # disjoint ports: each coflow alone, C_A = size_a, C_B = size_b
    optimum = w_a * size_a + w_b * size_b
    for ratio in (1.25, 1.05):
        assert compute_bound(inst, "interval", ratio=ratio).bound <= optimum * (1 + 1e-9)
    assert compute_bound(inst, "best").bound <= optimum * (1 + 1e-9)
    lower = solve(inst, method="time-indexed", time_limit=20).info["lower_lp"]
    assert lower <= optimum * (1 + 1e-9)


def test_an_overflowing_objective_is_an_error_not_an_unfinished_bound():
    # weights 1e300 on a 1e10 transfer: sum w_k e_k is beyond float64; every bound came back
    # "not finished" after 0.2 s of a 60 s limit
    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1e10)], weight=1e300),
                                        Coflow.from_flows("b", [(0, 1, 1.0)])))
    for method in ("best", "isolation", "interval"):
        with pytest.raises(CoflowoptError, match="overflow float64"):
            compute_bound(inst, method)


def test_interval_bound_of_identical_coflows_on_one_link_by_hand():
    # the interval bound was only checked from above: returning 0 passed. Three
    # unit coflows on one unit link: at most tau_i of them complete by tau_i (tau_1 = 1,
    # ratio 1.25), and one completing in (tau_{i-1}, tau_i] is charged max(tau_{i-1}, 1); the
    # cheapest is to complete as much as possible as early as possible
    inst = Instance(Fabric.uniform(1), tuple(Coflow.from_flows(f"c{k}", [(0, 0, 1.0)])
                                             for k in range(3)))
    tau, done, want = 1.0, 0.0, 0.0
    prev = 1.0
    while done < 3.0:
        now = min(tau, 3.0)
        want += (now - done) * max(prev, 1.0)
        done, prev, tau = now, tau, tau * 1.25
    assert want == pytest.approx(4.5684051513671875, rel=1e-15)
    assert compute_bound(inst, "interval").bound == pytest.approx(want, rel=1e-9, abs=0)


def test_an_lp_whose_pass_to_highs_uses_up_the_limit_is_not_run(monkeypatch):
    # HiGHS's set-up of a large model does not look at the clock (3.9 s on a
    # limit of 1 ms for 680,262 columns): with no time left after the pass it is not run
    import time as _time

    import highspy

    from coflowopt.bounds import _highs

    lp = _highs.LPBuilder()
    cols = lp.add_cols(2, cost=1.0, lo=0.0, hi=10.0)
    lp.add_rows(np.array([0, 0]), cols, 1.0, 1.0, math.inf, num=1)
    real_build = _highs.LPBuilder._build

    def slow_build(self, *args, **kwargs):
        _time.sleep(0.05)
        return real_build(self, *args, **kwargs)

    def no_run(self):
        raise AssertionError("HiGHS was run with no time left")

    monkeypatch.setattr(_highs.LPBuilder, "_build", slow_build)
    monkeypatch.setattr(highspy.Highs, "run", no_run)
    sol = lp.solve(time_limit=0.01)
    assert sol.status == "time_limit" and sol.x is None and sol.info["not_run"]
    monkeypatch.undo()
    assert lp.solve(time_limit=10).ok  # with time left it runs: min x0 + x1 s.t. x0 + x1 >= 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=5, max_flows=3, delays=True))
def test_the_published_pairwise_lp_is_at_least_as_strong(inst):
    # its rows are a superset (every link for every coflow, every pair)
    used = bound(inst, method="pairwise", thresholds="all")
    full = bound(inst, method="pairwise", thresholds="all", rows="published")
    assert full.bound >= used.bound * (1 - 1e-7) - 1e-9
    assert full.info["pairs"] == inst.num_coflows * (inst.num_coflows - 1) // 2


def test_the_published_pairwise_rows_can_be_stronger():
    # rows for links a coflow does not use (C_k >= the work of the coflows before k there),
    # in the published LP only, raise the bound here (56.30 against 56.07; the optimum is 61);
    # found by a random search
    inst = Instance(Fabric.uniform(3), (
        Coflow("0", [2, 2], [1, 2], [1.0, 1.0], weight=2.0),
        Coflow("1", [1, 2, 0], [2, 1, 1], [3.0, 6.0, 1.0], weight=3.0),
        Coflow("2", [1, 0, 0], [0, 0, 1], [3.0, 4.0, 1.0], weight=1.0),
        Coflow("3", [0, 1], [2, 2], [5.0, 3.0], weight=2.0),
    ))
    used = bound(inst, method="pairwise").bound
    full = bound(inst, method="pairwise", rows="published").bound
    assert used == pytest.approx(785 / 14, rel=1e-7)
    assert full == pytest.approx(63061 / 1120, rel=1e-7)
    assert full <= solve(inst, method="exact").objective == pytest.approx(61.0)
    with pytest.raises(CoflowoptError, match="rows must be 'used' or 'published'"):
        bound(inst, method="pairwise", rows="all")


def test_a_time_scale_beyond_floating_point_skips_the_interval_bound_not_best():
    # a release of 1e306 against transfers of 1e-3: the interval LP's
    # geometric time points would overflow (a traceback before); best keeps the others
    inst = Instance(Fabric.uniform(4), (
        Coflow("a", [0], [1], [1e-3], release=0.0), Coflow("b", [0], [1], [1e-3], release=1e306)))
    with pytest.raises(CoflowoptError, match="beyond floating point"):
        compute_bound(inst, "interval")
    res = compute_bound(inst, "best")
    assert res.status is Status.BOUND and math.isfinite(res.bound)
    assert res.bound >= 1e306 * (1 - 1e-12)  # release 1e306 plus 1e-3, rounded down
    assert "interval" in res.info["skipped"]
    assert "beyond floating point" in res.info["skipped_because"]["interval"]


@pytest.mark.parametrize("method", ["pairwise", "interval", "free"])
def test_times_that_highs_reads_as_infinite_are_refused_by_the_lp_bounds(method):
    # a flow delayed by 1e300: HiGHS reads bounds from 1e20 on as infinite, and the pairwise
    # LP came back "optimal" without a solution ("no solution, stopped while solving round 1:
    # HiGHS status optimal"); now each LP says why, and best keeps the others
    inst = Instance(Fabric.uniform(1), (Coflow("a", [0], [0], [1.0], delay=[1e300]),
                                        Coflow("b", [0], [0], [1.0])))
    with pytest.raises(CoflowoptError, match=r"1e\+300 of them, where HiGHS takes 1e\+20"):
        compute_bound(inst, method)
    res = compute_bound(inst, "best")
    assert res.bound == pytest.approx(1e300) and method in res.info["skipped"]

def _random_instance(*, seed: int, ports: int, width: int, coflows: int, releases: str) -> Instance:
    """Coflows of ``width`` random flows (sizes 1-5) on ``ports`` ports; releases at the
    coflow's index, its index mod 3, or uniform in [0, 20)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(coflows):
        src, dst = rng.integers(0, ports, width), rng.integers(0, ports, width)
        size = rng.uniform(1, 5, width)
        release = {"index": float(k), "mod3": float(k % 3)}.get(releases)
        out.append(Coflow(f"c{k}", src, dst, size,
                          release=float(rng.uniform(0, 20)) if release is None else release))
    return Instance(Fabric.uniform(ports), tuple(out))


def test_the_pairwise_lp_stops_building_when_its_time_is_up():
    # the matrix build ignored the clock: 6 s at a 0.5 s limit on 1,500 coflows.
    # Stopped before its first link's rows, it returns no bound and says where it stopped
    inst = _random_instance(seed=3, ports=6, width=3, coflows=8, releases="index")
    res = compute_bound(inst, "pairwise", time_limit=1e-9)
    assert res.status is Status.TIME_LIMIT and math.isnan(res.bound)
    assert res.info["stopped_while"] == "building the rows"
    assert compute_bound(inst, "pairwise").status is Status.BOUND  # with time, a bound


def test_the_interval_lp_stops_building_when_its_time_is_up(monkeypatch):
    # the interval LP handed HiGHS the whole limit after building: 7 s at a
    # 0.3 s limit on 1,500 coflows. Its rows are built a link group at a time, the clock
    # checked between groups
    from coflowopt.bounds import interval

    inst = _random_instance(seed=5, ports=6, width=3, coflows=8, releases="index")
    res = compute_bound(inst, "interval", time_limit=1e-9)
    assert res.status is Status.TIME_LIMIT and math.isnan(res.bound)
    assert res.info["stopped_while"] == "building the capacity rows"
    full = compute_bound(inst, "interval")
    assert full.status is Status.BOUND
    # groups of one link at a time give the same LP, and the time can run out between them
    monkeypatch.setattr(interval, "BUILD_CHUNK", 1)
    assert compute_bound(inst, "interval").bound == full.bound
    ticks = iter(range(1000))
    monkeypatch.setattr(interval.TimeBudget, "expired", lambda self: next(ticks) >= 3)
    res = compute_bound(inst, "interval", time_limit=10.0)
    assert res.status is Status.TIME_LIMIT and 0 < res.info["capacity_rows"] < full.info["capacity_rows"]
    # out of time once every row is built: said so, with every row counted
    checks = {"n": 0}

    def count(self):
        checks["n"] += 1
        return False

    monkeypatch.setattr(interval.TimeBudget, "expired", count)
    compute_bound(inst, "interval", time_limit=10.0)
    last = checks["n"]
    ticks = iter(range(1000))
    monkeypatch.setattr(interval.TimeBudget, "expired", lambda self: next(ticks) >= last - 1)
    res = compute_bound(inst, "interval", time_limit=10.0)
    assert res.status is Status.TIME_LIMIT
    assert res.info["stopped_while"] == "before solving (every row built)"
    assert res.info["capacity_rows"] == full.info["capacity_rows"]


def test_the_pairwise_lp_can_stop_between_assembled_blocks(monkeypatch):
    from coflowopt.bounds import pairwise

    inst = _random_instance(seed=6, ports=5, width=4, coflows=9, releases="mod3")
    whole = compute_bound(inst, "pairwise", rowgen=False)  # every row built at once
    monkeypatch.setattr(pairwise, "ASSEMBLE_CHUNK", 5)  # a CSR block every few rows
    assert compute_bound(inst, "pairwise", rowgen=False).bound == whole.bound
    budget = pairwise.TimeBudget
    calls = {"n": 0}

    def count(self):
        calls["n"] += 1
        return False

    monkeypatch.setattr(budget, "expired", count)
    compute_bound(inst, "pairwise", time_limit=10.0, rowgen=False)
    last, calls["n"] = calls["n"], 0  # the last look is the solve loop's, the one before it
                                      # after the matrix is assembled

    def expired(self):
        calls["n"] += 1
        return calls["n"] >= last - 1

    monkeypatch.setattr(budget, "expired", expired)
    res = compute_bound(inst, "pairwise", time_limit=10.0, rowgen=False)
    assert res.status is Status.TIME_LIMIT and res.info["stopped_while"] == "assembling the matrix"


def _releases_instance(seed: int, *, ports: int = 4, coflows: int = 7) -> Instance:
    """Coflows of 1-3 random flows with releases among 0-5 (so that several share one)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(coflows):
        w = int(rng.integers(1, 4))
        out.append(Coflow(f"c{k}", rng.integers(0, ports, w), rng.integers(0, ports, w),
                          rng.uniform(1, 5, w), release=float(rng.integers(0, 6)),
                          weight=float(rng.uniform(0.5, 3))))
    return Instance(Fabric.uniform(ports), tuple(out))


@pytest.mark.parametrize("thresholds", [0, 2, "all"])
def test_the_pairwise_lps_first_threshold_is_the_earliest_release(thresholds):
    # two unit coflows on one unit link, both released at 5: one ends at 6 at
    # the earliest, the other at 7, so the optimum is 13; the rows at rho = 0 alone give 12
    inst = Instance(Fabric.uniform(1), tuple(
        Coflow.from_flows(f"c{k}", [(0, 0, 1.0)], release=5.0) for k in range(2)))
    assert solve(inst, method="exact").objective == pytest.approx(13.0, rel=1e-9)
    for rowgen in (True, False):
        b = bound(inst, method="pairwise", thresholds=thresholds, rowgen=rowgen)
        assert b.bound == pytest.approx(13.0, rel=1e-9)


def test_the_pairwise_rows_carry_what_an_earlier_coflow_still_has():
    # one unit link: A (10 units) released at 0, B (1 unit) at 5. The optimum lets B
    # overtake A: 6 + 11 = 17. Without the carried work the rows at rho = 5 count B alone,
    # and delta = 1/2 between them gives 16.5; with it, B's row at 5 counts the 5 units A
    # has left then at the least, which closes the gap
    inst = Instance(Fabric.uniform(1), (
        Coflow.from_flows("A", [(0, 0, 10.0)], release=0.0),
        Coflow.from_flows("B", [(0, 0, 1.0)], release=5.0)))
    assert solve(inst, method="exact").objective == pytest.approx(17.0, rel=1e-9)
    for rowgen in (True, False):
        plain = compute_bound(inst, "pairwise", rowgen=rowgen, carry=False)
        carried = compute_bound(inst, "pairwise", rowgen=rowgen)
        assert plain.bound == pytest.approx(16.5, rel=1e-9)
        assert carried.bound == pytest.approx(17.0, rel=1e-9)
        assert carried.info["carry"] and not plain.info["carry"]
    with pytest.raises(CoflowoptError, match="carry must be"):
        compute_bound(inst, "pairwise", carry="yes")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=5, max_flows=3, delays=True),
       st.sampled_from([1, 3, "all"]))
def test_the_carried_work_never_weakens_the_pairwise_lp_and_stays_below_the_optimum(
        inst, thresholds):
    plain = bound(inst, method="pairwise", thresholds=thresholds, carry=False).bound
    carried = bound(inst, method="pairwise", thresholds=thresholds).bound
    assert carried >= plain * (1 - 1e-7) - 1e-9
    opt = solve(inst, method="exact", time_limit=120)
    if opt.status is Status.OPTIMAL:
        assert carried <= opt.objective * (1 + TOL) + TOL


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=5, max_flows=3), st.sampled_from([0, 2]),
       st.integers(0, 2**32 - 1))
def test_the_pairwise_lps_dual_certifies_its_bound_and_any_other_bounds_below(
        inst, thresholds, seed):
    from coflowopt.bounds.pairwise import pairwise_lp

    solved, _, info = pairwise_lp(inst, thresholds=thresholds, rowgen=False, certificate=True)
    y = info["row_dual"]
    again, C, checked = pairwise_lp(inst, thresholds=thresholds, rowgen=False, dual=y)
    assert again == solved and C is None and checked["rounds"] == 0  # built, not solved
    # any multipliers give a bound, below the LP's optimum (and so below every schedule)
    other, _, _ = pairwise_lp(inst, thresholds=thresholds, rowgen=False,
                              dual=np.random.default_rng(seed).uniform(-1, 2, y.size) * y.max(initial=1))
    assert other <= solved * (1 + 1e-9) + 1e-9
    with pytest.raises(CoflowoptError, match=f"does not fit the LP: {y.size + 1} multipliers for "
                       f"{y.size} rows"):
        pairwise_lp(inst, thresholds=thresholds, rowgen=False, dual=np.zeros(y.size + 1))
    with pytest.raises(CoflowoptError, match="needs their names"):
        pairwise_lp(inst, thresholds=thresholds, rowgen=True, dual=y)


@pytest.mark.parametrize("rows", ["used", "published"])
@pytest.mark.parametrize("seed", range(8))
def test_lazily_generated_rows_are_certified_by_their_names_and_multipliers(rows, seed):
    from coflowopt.bounds.pairwise import pairwise_lp

    inst = _releases_instance(seed)
    solved, _, info = pairwise_lp(inst, rows=rows, certificate=True)
    assert info["rowgen"] and info["complete"]
    assert "row_dual" not in pairwise_lp(inst, rows=rows)[2]  # only when asked
    y, names = info["row_dual"], info["row_names"]
    assert names.shape == (y.size, 3) and y.size == info["rows_used"]
    k, _, q = names.T
    assert np.all(inst.release[q] <= inst.release[k])  # each a row at a release
    again, C, checked = pairwise_lp(inst, rows=rows, dual=y, dual_rows=names)
    assert again == pytest.approx(solved, rel=1e-9, abs=1e-9) and C is None
    assert checked["rounds"] == 0 and checked["rows_used"] == y.size
    # any multipliers, on any named rows, give a bound below the LP's optimum, and the
    # rows named in another order with their multipliers give the same bound
    rng = np.random.default_rng(seed)
    other, _, _ = pairwise_lp(inst, rows=rows, dual=rng.uniform(0, 2, y.size) * y.max(initial=1),
                              dual_rows=names)
    assert other <= solved * (1 + 1e-9) + 1e-9
    perm = rng.permutation(y.size)
    shuffled, _, _ = pairwise_lp(inst, rows=rows, dual=y[perm], dual_rows=names[perm])
    assert shuffled == pytest.approx(solved, rel=1e-9, abs=1e-9)
    late = int(np.argmax(inst.release))
    early = int(np.argmin(inst.release))
    own = names[names[:, 0] == early]  # a row of the earliest coflow: its link
    if inst.release[late] > inst.release[early] and own.size:
        bad = names.copy()
        bad[0] = (early, own[0, 1], late)
        with pytest.raises(CoflowoptError, match=r"dual_rows\[0\] = .* is no row of this LP: "
                           f"coflow {late} is released after coflow {early}"):
            pairwise_lp(inst, rows=rows, dual=y, dual_rows=bad)
    with pytest.raises(CoflowoptError, match="no such coflow"):
        pairwise_lp(inst, rows=rows, dual=y[:1], dual_rows=[(inst.num_coflows, 0, 0)])
    with pytest.raises(CoflowoptError, match="does not fit the LP: 2 multipliers for 1 rows"):
        pairwise_lp(inst, rows=rows, dual=y[:2], dual_rows=names[:1])
    with pytest.raises(CoflowoptError, match="give dual too"):
        pairwise_lp(inst, rows=rows, dual_rows=names)


@pytest.mark.parametrize("rows", ["used", "published"])
@pytest.mark.parametrize("thresholds", [0, 1, 2, 3, "all"])
def test_lazy_pairwise_rows_give_the_lp_of_every_row(rows, thresholds):
    # rows generated from the implicit candidates (every coflow, link and threshold) reach
    # the optimum of the LP with every row built, though they skip the rows another row
    # of the same link implies
    for seed in range(12):
        inst = _releases_instance(seed)
        lazy = compute_bound(inst, "pairwise", thresholds=thresholds, rowgen=True, rows=rows)
        full = compute_bound(inst, "pairwise", thresholds=thresholds, rowgen=False, rows=rows)
        assert lazy.info["complete"] and full.info["complete"]
        assert lazy.bound == pytest.approx(full.bound, rel=1e-7), seed
        assert lazy.info["rows_used"] <= lazy.info["rows"] <= full.info["rows"]


def test_lazy_pairwise_rows_in_chunks_of_coflows_give_the_same_lp(monkeypatch):
    from coflowopt.bounds import pairwise

    for seed in range(4):
        inst = _releases_instance(seed, coflows=9)
        # a limit far above the work (well under a second): a separation that kept
        # offering rows already in the LP would stop there, incomplete, not hang
        whole = compute_bound(inst, "pairwise", thresholds="all", rows="published",
                              time_limit=120)
        monkeypatch.setattr(pairwise, "SEPARATION_CHUNK", 1)  # one coflow's rows at a time
        assert compute_bound(inst, "pairwise", thresholds="all", rows="published",
                             time_limit=120).bound == whole.bound
        monkeypatch.undo()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=5, max_flows=3, delays=True),
       st.sampled_from([0, 1, 2, 3, "all"]), st.sampled_from(["used", "published"]))
def test_lazy_pairwise_rows_equal_every_row_on_random_instances(inst, thresholds, rows):
    # counts of thresholds leave releases between them: the candidates on either side
    lazy = bound(inst, method="pairwise", thresholds=thresholds, rowgen=True, rows=rows)
    full = bound(inst, method="pairwise", thresholds=thresholds, rowgen=False, rows=rows)
    assert lazy.bound == pytest.approx(full.bound, rel=1e-7, abs=1e-9)


def test_more_thresholds_never_weaken_the_pairwise_lp():
    # nested thresholds give nested rows: the median (1) is among the quartiles (3), and
    # every quantile threshold is a release time, so among "all"
    for seed in range(8):
        inst = _releases_instance(seed, coflows=8)
        values = [compute_bound(inst, "pairwise", thresholds=t).bound for t in (0, 1, 3, "all")]
        assert all(a <= b * (1 + 1e-7) for a, b in itertools.pairwise(values)), seed


def test_pairwise_auto_thresholds_follow_the_row_generation():
    inst = _random_instance(seed=2, ports=5, width=3, coflows=20, releases="uniform")
    lazy = compute_bound(inst, "pairwise")
    assert lazy.info["rowgen"] and lazy.info["thresholds"] == np.unique(inst.release).size - 1
    assert lazy.bound == compute_bound(inst, "pairwise", thresholds="all").bound
    every = compute_bound(inst, "pairwise", rowgen=False)
    assert not every.info["rowgen"] and every.info["thresholds"] == 10
    zero = compute_bound(inst.with_releases(0.0), "pairwise")
    assert not zero.info["rowgen"] and zero.info["thresholds"] == 0


def test_lazy_pairwise_rows_out_of_time_keep_the_last_solved_round(monkeypatch):
    from coflowopt.bounds import pairwise

    inst = _random_instance(seed=4, ports=5, width=3, coflows=12, releases="uniform")
    whole = compute_bound(inst, "pairwise")
    assert whole.info["rounds"] >= 3 and whole.info["complete"]
    rounds = {"n": 0}
    real = pairwise._most_violated

    def separate(*args, budget=None, **kwargs):  # out of time in the second search for rows
        rounds["n"] += 1
        if rounds["n"] == 3:
            return None
        return real(*args, budget=budget, **kwargs)

    monkeypatch.setattr(pairwise, "_most_violated", separate)
    res = compute_bound(inst, "pairwise", time_limit=10.0)
    assert res.status is Status.BOUND and res.info["timed_out"] and not res.info["complete"]
    assert res.info["rounds"] == 2
    assert iso_bound(inst) <= res.bound <= whole.bound * (1 + 1e-9)
    # out of time while choosing the first rows: no bound, and said where
    monkeypatch.setattr(pairwise, "_most_violated", lambda *a, **k: None)
    res = compute_bound(inst, "pairwise", time_limit=10.0)
    assert res.status is Status.TIME_LIMIT and math.isnan(res.bound)
    assert res.info["stopped_while"] == "choosing the first rows"


def iso_bound(inst: Instance) -> float:
    return float(np.dot(inst.weight, earliest_completion(inst))) * (1 - 1e-9)


def test_lp_builder_blocks_give_the_same_model(monkeypatch):
    # rows kept as CSR blocks (every few entries), columns added after rows, sparse rows,
    # and rows added after a solve: the same matrix and optimum as one set of triplets
    from coflowopt.bounds import _highs

    def build(add_sparse: bool) -> LPBuilder:
        lp = LPBuilder()
        lp.add_cols(3, cost=[1.0, 2.0, 3.0], lo=0.0, hi=10.0)
        lp.add_rows([0, 0, 1, 1, 1], [0, 1, 1, 2, 1], [1.0, 1.0, 1.0, 1.0, 0.5], [2.0, 3.0], np.inf)
        lp.add_cols(1, cost=0.5, lo=0.0, hi=1.0)
        block = sp.csr_array(([1.0, 1.0], ([0, 0], [0, 3])), shape=(1, 4))
        if add_sparse:
            lp.add_sparse_rows(block, 1.5, np.inf)
        else:
            lp.add_rows([0, 0], [0, 3], [1.0, 1.0], 1.5, np.inf)
        return lp

    ref = build(False)
    ref_sol = ref.solve()
    monkeypatch.setattr(_highs, "COMPACT_ENTRIES", 2)
    for add_sparse in (False, True):
        lp = build(add_sparse)
        assert (lp.arrays()[1] != ref.arrays()[1]).nnz == 0
        sol = lp.solve()
        assert sol.objective == pytest.approx(ref_sol.objective)
        # after a solve, new rows go to the kept HiGHS model as well
        lp.add_sparse_rows(sp.csr_array(([1.0], ([0], [2])), shape=(1, 3)), 1.0, np.inf)
        ref2 = build(False)
        ref2.add_rows([0], [2], [1.0], 1.0, np.inf)
        assert (lp.arrays()[1] != ref2.arrays()[1]).nnz == 0
        assert lp.solve().objective == pytest.approx(ref2.solve().objective)
        assert lp.solve().objective > sol.objective


def test_bound_option_ranges_are_stated_as_checked():
    # ratio=-2 was refused as "finite and >= 0", ratio=0.5 by another message
    inst = Instance(Fabric.uniform(2), (Coflow("a", [0], [1], [1.0]),))
    stated = r"option ratio must be float \(numbers: finite and > 1\), got "
    for ratio in (-2, 0.5, 1):
        with pytest.raises(CoflowoptError, match=stated + str(ratio)):
            bound(inst, method="interval", ratio=ratio)
    assert bound(inst, method="interval", ratio=1.5).bound == pytest.approx(1.0)


def test_the_interval_lps_size_limit_counts_its_nonzeros_exactly(monkeypatch):
    # the limit used to count (coflow, link) pairs times all points times thresholds, 40%
    # above the LP's real size, and refused the trace at ratio 1.1 (2.4 million nonzeros,
    # counted as 34.5 million)
    from coflowopt.bounds import _highs, interval

    inst = _random_instance(seed=8, ports=5, width=3, coflows=12, releases="uniform")
    built = {}
    real_solve = _highs.LPBuilder.solve

    def solve(self, **kw):
        built["nnz"] = self.arrays()[1].nnz
        return real_solve(self, **kw)

    monkeypatch.setattr(_highs.LPBuilder, "solve", solve)
    full = compute_bound(inst, "interval", ratio=1.1)
    nnz = built["nnz"]
    monkeypatch.setattr(interval, "MAX_ENTRIES", nnz)
    assert compute_bound(inst, "interval", ratio=1.1).bound == full.bound
    monkeypatch.setattr(interval, "MAX_ENTRIES", nnz - 1)
    with pytest.raises(CoflowoptError, match=f"would have {nnz:,} nonzeros"):
        compute_bound(inst, "interval", ratio=1.1)
    # a ratio this close to 1 is refused before its time points are made
    with pytest.raises(CoflowoptError, match="would have at least"):
        compute_bound(inst, "interval", ratio=1 + 1e-9)


def test_lp_builder_keeps_nothing_of_a_refused_row_batch():
    # the entries of a call whose bounds did not fit were kept and joined the
    # next call's row
    lp = LPBuilder()
    lp.add_cols(2, cost=[1.0, 1.0], lo=0.0, hi=10.0)
    with pytest.raises(ValueError):
        lp.add_rows([0], [0], [1.0], [1.0, 2.0], np.inf)
    with pytest.raises(ValueError):
        lp.add_sparse_rows(sp.csr_array(([1.0], ([0], [0])), shape=(1, 2)), 1.0, [np.inf] * 3)
    lp.add_rows([0], [1], [1.0], 4.0, np.inf)
    assert lp.arrays()[1].toarray().tolist() == [[0.0, 1.0]] and lp.num_rows == 1
    assert lp.solve().objective == pytest.approx(4.0)


def test_a_weight_near_zero_leaves_its_coflow_uncapped_without_a_warning():
    # w_k C_k <= V - ...: over a weight of 2.3e-308 the cap overflows to inf, which is no cap
    import warnings

    from coflowopt.bounds.simple import completion_caps

    inst = Instance(Fabric.uniform(3), (
        Coflow.from_flows("a", [(0, 1, 10.0), (1, 2, 1.0)], weight=2.3e-308),
        Coflow.from_flows("b", [(0, 2, 100.0)]),
        Coflow.from_flows("c", [(2, 1, 3.0)], weight=2.3e-308, release=0.5)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        caps = completion_caps(inst)
        assert np.isinf(caps[0]) and np.isinf(caps[2]) and np.isfinite(caps[1])
        best = bound(inst, method="best")
    opt = solve(inst, method="exact")
    assert opt.status is Status.OPTIMAL and best.bound <= opt.objective * (1 + TOL) + TOL
