"""Extreme numeric ranges: statuses and bounds stay honest.

Each instance here made a solver claim 'optimal' for a schedule or a bound that a
feasible schedule beats, return a schedule that check_feasible rejects, or crash.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from coflowopt import Coflow, CoflowoptError, Fabric, Instance, Status, check_feasible, solve

C = Coflow.from_flows


def honest(inst: Instance, res, better: float | None = None, *, schedule: bool = True) -> None:
    """A returned schedule is feasible and worth its objective; the bound is below it, and
    below ``better`` (a feasible value found otherwise); 'optimal' means a closed gap.
    ``schedule``: a schedule and a finite bound must be there (with every check
    conditional, a solver returning nothing at all passed)."""
    if schedule:
        assert res.schedule is not None and math.isfinite(res.objective), res.status
        assert math.isfinite(res.bound)
        assert res.objective == pytest.approx(
            float((inst.weight * res.schedule.coflow_completion(inst)).sum()), rel=1e-9)
    if res.schedule is not None:
        assert check_feasible(inst, res.schedule)
    if math.isfinite(res.objective) and math.isfinite(res.bound):
        assert res.bound <= res.objective * (1 + 1e-9)
    if better is not None and math.isfinite(res.bound):
        assert res.bound <= better * (1 + 1e-9)
    if res.status is Status.OPTIMAL:
        assert res.objective <= res.bound * (1 + 1e-6) + 1e-12


def test_exact_milp_refuses_weights_its_big_m_cannot_carry():
    inst = Instance(Fabric.uniform(1), (C("a", [(0, 0, 1.0)], weight=1e-6),
                                        C("b", [(0, 0, 1.0)], weight=1e6),
                                        C("c", [(0, 0, 1.0)], weight=1e6)))
    with pytest.raises(CoflowoptError, match="weights span more than"):
        solve(inst, method="exact-milp")
    res = solve(inst, method="exact")
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(3e6 + 3e-6)


@pytest.mark.parametrize("method", ["exact", "exact-milp", "time-indexed", "permutation"])
def test_a_flow_lost_below_the_lp_tolerance_is_no_solution_not_optimal(method):
    inst = Instance(Fabric.uniform(2), (C("a", [(0, 0, 1e4)]), C("b", [(1, 1, 1e-4)])))
    res = solve(inst, method=method)
    # the time-indexed grid's LP leaves the 1e-4 flow at 0: it is served in the last slot it
    # may use (it was dropped, and the result no solution); the others serve it
    honest(inst, res, better=1e4 + 1e-4)
    if method == "time-indexed":
        assert res.status is Status.FEASIBLE and res.bound == pytest.approx(1e4 + 1e-4)
    else:
        assert res.status is Status.OPTIMAL


def test_optimal_only_when_the_bound_closes_the_gap():
    inst = Instance(Fabric([4.0, 0.05], [1000.0, 0.5]), (
        C("a", [(1, 0, 300.0)]), C("b", [(1, 1, 200.0)]),
        C("c", [(1, 0, 2.0)], release=1.000000001)))
    honest(inst, solve(inst, method="exact"))


def test_a_finishes_before_chain_returns_no_infeasible_schedule():
    inst = Instance(Fabric([0.1, 0.5], [0.5, 0.1]), (
        C("c0", [(1, 1, 0.3)]), C("c1", [(0, 0, 0.3)], finishes_before=["c0"]),
        C("c3", [(1, 0, 0.002)], finishes_before=["c1"])))
    honest(inst, solve(inst, method="exact"))


def test_tiny_weights_do_not_close_a_mip_early():
    inst = Instance(Fabric([0.5315694998628754], [1.0]), (C(
        "a", [(0, 0, 0.09952680294226679, 0.0), (0, 0, 5.680045330187666, 1e-9)], weight=1e-6),))
    exact = solve(inst, method="exact")
    res = solve(inst, method="time-indexed", slots=8, lower="milp")
    honest(inst, res, better=exact.objective)
    dl = Instance(Fabric.uniform(1), tuple(C(n, [(0, 0, 1.0)], weight=w, deadline=1.0)
                                           for n, w in [("a", 1e-7), ("b", 2e-7), ("c", 3e-7)]))
    best = solve(dl, method="exact", objective="deadlines", weighted=True)
    assert best.objective == pytest.approx(3e-7)  # admit c alone


def test_rounding_in_the_root_lp_is_no_crash():
    for inst in (
        Instance(Fabric.uniform(3), (C("c0", [(2, 0, 1.5), (0, 0, 1.5)], release=1.8, weight=2.8),
                                     C("c1", [(2, 2, 3.0), (0, 0, 2.0)], release=4.7))),
        Instance(Fabric.uniform(2), (
            C("c0", [(0, 0, 3.0), (0, 1, 0.5), (0, 0, 0.5), (1, 0, 2.0)], weight=1e6),
            C("c1", [(1, 1, 3.0), (0, 1, 3.0), (1, 1, 0.5), (0, 0, 1.0)],
              weight=1.9440806895820817e-05))),
    ):
        honest(inst, solve(inst, method="exact"))


# two instances of a random search (capacities 0.01-1000, sizes and weights 1e-3-1e3) on
# which `exact` returned no schedule and a "bound" 2.5x (first) above a feasible value: the
# incumbent's value equalled the isolation bound, so its own order did not fit under the
# horizon taken from it (1e-9 of slack), its LP said infeasible, polish then took every
# move for an improvement (against an infinite base) until the time limit, and the
# no-solution path reported the root LP's bound, which holds only for schedules better
# than the incumbent
AT_ISOLATION = [
    Instance(Fabric([0.019343706003134765, 0.10619773253161967], [549.2452104543165, 14.84008037334311]), (
        C("c0", [(1, 1, 249.2580869285441), (0, 1, 19.295008005955218)], weight=2.344642864892916),
        C("c1", [(1, 0, 0.004778584713578497)], weight=3.59680421310706),
        C("c2", [(0, 1, 0.011879382357171798)], weight=0.2871127841738952,
          release=2.2661987167678275))),
    Instance(Fabric([0.5550036322102707, 119.52445702365692], [133.09021241048325, 0.08629932802441213]), (
        C("c0", [(0, 0, 2.2874627192082193)], weight=0.007790062616266545),
        C("c1", [(0, 1, 0.29135334196493107), (1, 1, 690.5579194530939), (0, 1, 2.390232333680982)],
          weight=5.113870382396481),
        C("c2", [(0, 1, 0.00598296219171835)], weight=0.002237108653705579))),
]


@pytest.mark.parametrize("inst", AT_ISOLATION)
def test_an_incumbent_at_the_isolation_bound_gives_a_schedule_and_a_valid_bound(inst):
    perm = solve(inst, method="permutation")
    res = solve(inst, method="exact")
    honest(inst, res, better=perm.objective)
    # the LP schedule drops the tiny flows; the greedy schedule of a starting order stands in
    assert res.schedule is not None and res.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert res.objective <= perm.objective * (1 + 1e-9)
    assert res.info["root_bound"] <= perm.objective * (1 + 1e-9)


def test_an_unproven_infeasible_node_keeps_its_parents_bound(monkeypatch):
    """HiGHS's "infeasible" prunes a subtree only with a dual ray that proves it."""
    from coflowopt.bounds._highs import LPSolution
    from coflowopt.exact._events import EventLP

    inst = Instance(Fabric.uniform(2), (
        C("a", [(0, 0, 2.0), (1, 1, 1.0)]), C("b", [(0, 1, 1.0)], weight=2.0),
        C("c", [(1, 0, 1.5), (0, 0, 0.5)], release=0.5), C("d", [(1, 1, 1.0)], weight=3.0)))
    truth = solve(inst, method="exact")
    assert truth.status is Status.OPTIMAL
    root = solve(inst, method="exact", polish=False, time_limit=30)
    real = EventLP.solve

    def unproven(self, node, **kw):
        if not node.events:
            return real(self, node, **kw)
        sol = LPSolution("infeasible", None, math.nan, math.nan, 0.0, None,
                         {"highs_status": "Infeasible", "certified": False})
        node.solution = sol
        return sol

    monkeypatch.setattr(EventLP, "solve", unproven)
    res = solve(inst, method="exact", polish=False, time_limit=30)
    honest(inst, res, better=truth.objective)
    assert res.bound <= truth.objective * (1 + 1e-9)
    assert res.bound == pytest.approx(root.info["root_bound"], rel=1e-9)
    if res.bound < res.objective * (1 - 1e-6):
        assert res.status is Status.FEASIBLE


def test_a_dual_ray_certifies_infeasibility_only_beyond_rounding():
    from coflowopt.bounds._highs import LPBuilder

    def lp(rhs: float):
        b = LPBuilder()
        b.add_cols(2, lo=0.0, hi=1.0)
        b.add_rows([0, 0], [0, 1], [1.0, 1.0], [rhs], [math.inf])  # x0 + x1 >= rhs
        return b.solve()

    assert lp(3.0).proven_infeasible  # a clear Farkas certificate: 1 * (x0 + x1) >= 3 > 2
    assert lp(2.0).ok
    tight = lp(2.0 + 1e-13)  # within HiGHS's tolerances: solved, or infeasible unproven
    assert tight.ok or (tight.status == "infeasible" and not tight.proven_infeasible)


# a random search with extreme numbers: exact-milp crashed (AssertionError: the MILP's event
# order failed its exact LP, having met its constraints only within HiGHS's tolerances) on
# the first, and on the second reported as its bound the value of the order it chose,
# 1.9e-7 above the best permutation schedule ("optimal" within HiGHS's tolerances)
MILP_TOLERANCES = [
    Instance(Fabric([0.22129661620537422, 4.4223578656744955, 0.5609535081287526],
                    [0.8094781206291545, 961.8584167172105, 2.586390339860625]), (
        C("c0", [(0, 2, 0.0010232818744204185, 1.38), (1, 0, 0.10916441091299392)],
          weight=81.83154805449281, release=0.631),
        C("c1", [(2, 1, 61.27116379743552)], weight=9.381483301119346),
        C("c2", [(1, 0, 9.229695848313222)], weight=5.354410820316358, release=2.914),
        C("c3", [(2, 0, 1.1053148902766572)], weight=3.7655278258774874, release=0.251))),
    Instance(Fabric([1.3945859110176606, 7.770634924614866], [0.10727318140386731, 116.57522350604202]), (
        C("c0", [(1, 1, 0.002861120049330013), (1, 0, 0.3329486065441524, 1.9),
                 (1, 1, 0.050316370626233974)], weight=0.011169237805762263),
        C("c1", [(1, 0, 655.1322252400262), (0, 0, 0.006365538692203987)], weight=42.88770992858423),
        C("c2", [(1, 1, 0.6604558659338161, 0.63)], weight=0.008679875788129735))),
]


@pytest.mark.parametrize("inst", MILP_TOLERANCES)
def test_exact_milp_survives_its_tolerances_with_a_valid_bound(inst):
    perm = solve(inst, method="permutation")
    res = solve(inst, method="exact-milp", time_limit=30)
    honest(inst, res, better=perm.objective)
    assert res.schedule is not None


def test_exact_milp_prints_nothing(capfd):
    # HiGHS warned on standard output (past sys.stdout, into --json output) about matrix
    # values below 1e-9 while the model was handed over in chunks, outside appsi's capture
    inst = Instance(Fabric([5.511585482370353, 0.07680640793997391, 672.1258373724432],
                           [1.204883680741974, 86.63187565742884, 0.014386253247105414]), (
        C("c0", [(0, 2, 0.6965748277257304), (0, 0, 0.26239255632589714)],
          weight=0.014039745703050902),
        C("c1", [(1, 0, 0.004328314783970545), (2, 2, 398.1547299476432, 1.8),
                 (2, 2, 0.7503398473057782)], weight=0.003462046307269618, release=2.306)))
    res = solve(inst, method="exact-milp", time_limit=2)
    honest(inst, res)
    out = capfd.readouterr()
    assert out.out == "" and out.err == ""


def test_a_complete_order_whose_lp_does_not_solve_keeps_its_bound(monkeypatch):
    """A leaf whose LP ends in 'error' (HiGHS's kUnknown) or a limit has no children to carry
    its parent's bound: it was dropped, and the search called a worse incumbent optimal."""
    from coflowopt.bounds._highs import LPSolution
    from coflowopt.exact._events import EventLP

    inst = Instance(Fabric([2.0, 1.5, 2.0], [1.0, 2.0, 2.0]), (
        C("a", [(0, 1, 1.7), (2, 0, 0.5), (2, 2, 3.0)], release=1.0),
        C("b", [(2, 2, 2.0, 0.5)], weight=2.0),
        C("c", [(0, 1, 3.0, 0.5), (0, 0, 3.0, 0.5)], weight=3.0)))
    truth = solve(inst, method="exact")
    assert truth.status is Status.OPTIMAL
    real = EventLP.solve

    def unsolved(self, node, **kw):
        if not node.is_leaf:
            return real(self, node, **kw)
        sol = LPSolution("error", None, math.nan, math.nan, 0.0, None, {"highs_status": "Unknown"})
        node.solution = sol
        return sol

    monkeypatch.setattr(EventLP, "solve", unsolved)
    res = solve(inst, method="exact", polish=False, time_limit=30)
    honest(inst, res, better=truth.objective)
    assert res.objective > truth.objective * (1 + 1e-6)  # the starting incumbent is not optimal
    assert res.status is Status.FEASIBLE


# random search (capacities 0.01-100, sizes 1e-3-1e3) with dependencies, where there is no
# greedy schedule to fall back on: HiGHS met "sum x = size" of a flow far smaller than the
# rest (first two), or a successor's finishes-before tail (third), only within its tolerance,
# the LP schedule dropped the flow or completed the successor before its predecessor, and
# the result was no_solution; the optimum is known (brute force over event orders)
WITH_DEPENDENCIES = [
    (Instance(Fabric([51.405655413089626, 0.2971998603641431], [3.611630291734369, 0.18612125293798987]), (
        C("c0", [(0, 1, 191.2986676311619), (1, 1, 827.2630870000779)], weight=3.2854972496037345),
        C("c1", [(0, 1, 33.118353451499296), (0, 0, 0.003055138936073107)], weight=2.706474326969209,
          finishes_before=["c0"]))), 33273.07848161702),
    (Instance(Fabric([42.16041528332701, 9.331348568462527], [47.96831155742087, 0.12798196859785738]), (
        C("c0", [(1, 0, 0.002214118021150791), (1, 1, 49.79811864044919)], weight=2.7754700630358107),
        C("c1", [(0, 1, 878.1556745973816), (1, 1, 0.5068077245464923)], weight=8.445145143914894,
          starts_after=["c0"]))), 62346.264949931254),
    (Instance(Fabric([0.024907016747678593, 0.226910890913055], [0.01258148266265423, 1.9863736027015304]), (
        C("c0", [(1, 1, 59.485809768559676)], weight=0.3547853518730371),
        C("c1", [(1, 0, 0.628253218720529), (0, 1, 4.961848830027334)], weight=3.554955123357455,
          finishes_before=["c0"]),
        C("c2", [(0, 1, 0.16755411224529318), (0, 1, 0.00498914354990287)], weight=0.4735685557789472,
          finishes_before=["c1"]))), 1161.2422573572276),
]


@pytest.mark.parametrize("inst,best", WITH_DEPENDENCIES)
def test_a_flow_below_the_lp_tolerance_is_served_with_dependencies(inst, best):
    res = solve(inst, method="exact")
    honest(inst, res, better=best)
    assert res.schedule is not None and res.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert res.objective <= best * (1 + 1e-4)


def test_a_tiny_successor_completes_in_the_schedule():
    # b (1e-4) runs after a (1e4): its interval is 2e-8 of the time unit, and rates computed
    # in scaled time lost that many digits when the pieces' times were scaled back, so b
    # received 1 - 2e-8 of its size, never completed (value inf) and the result was
    # no_solution; rates now come from the pieces' own times
    inst = Instance(Fabric.uniform(2), (C("a", [(0, 0, 1e4)]),
                                        C("b", [(1, 1, 1e-4)], starts_after=["a"])))
    res = solve(inst, method="exact")
    honest(inst, res)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(2e4 + 1e-4, rel=1e-12)


def test_exact_milp_optimal_holds_with_slow_ports_and_tiny_weights():
    # capacities 1e-3 make the big-M 24,068 time units: with HiGHS's default 1e-6
    # integrality tolerance its "optimal" was 0.2% above the optimum and its bound above
    # exact's feasible schedule
    F = Coflow.from_flows
    inst = Instance(Fabric.uniform(3, 0.001), (
        F("c0", [(2, 2, 2.349828900177519)], weight=1e-06),
        F("c1", [(1, 0, 5.5788646495583505), (1, 2, 0.262025221330333)], weight=1e-06),
        F("c2", [(1, 1, 5.29838169515902)], weight=1e-06),
        F("c3", [(1, 1, 1.4210731710858147), (2, 1, 5.0435017246858225)],
          weight=6.012302634439899e-06)))
    exact = solve(inst, method="exact")
    milp = solve(inst, method="exact-milp")
    assert exact.status is Status.OPTIMAL and check_feasible(inst, exact.schedule)
    assert milp.bound <= exact.objective * (1 + 1e-7)
    assert milp.objective == pytest.approx(exact.objective, rel=1e-6)


@pytest.mark.parametrize("method", ["exact", "exact-milp", "time-indexed"])
def test_out_of_range_instances_get_a_clear_error(method):
    # release 1e20 beside a transfer of 1 crashed exact (AssertionError) and
    # exact-milp (IndexError inside Pyomo, from 1e15); weights 1e308 overflowed
    one = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0)], release=1e20),))
    with pytest.raises(CoflowoptError, match="horizon is 1e\\+20 times"):
        solve(one, method=method)
    heavy = Instance(Fabric.uniform(2), tuple(
        Coflow.from_flows(c, [(0, 1, 1.0 + i)], weight=1e308) for i, c in enumerate("ab")))
    with pytest.raises(CoflowoptError, match="overflow"):
        solve(heavy, method=method)
    # within the range the answer is exact
    near = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0)], release=1e13),))
    res = solve(near, method=method if method != "time-indexed" else "exact")
    assert res.objective == pytest.approx(1e13 + 1, rel=1e-15)


def test_makespan_and_deadlines_keep_their_range():
    # the range check of the sum-of-weighted-completion methods is theirs alone: weights
    # 1e308 and releases 1e15 do not concern a makespan
    from coflowopt.exact import min_makespan

    inst = Instance(Fabric.uniform(2), tuple(
        Coflow.from_flows(c, [(0, 1, 1.0)], weight=1e308, release=1e15 * i)
        for i, c in enumerate("ab")))
    res = min_makespan(inst)
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(1e15 + 1, rel=1e-12)


# ports 1e-3 and 1e6 with flows from 2e-3 to 478: HiGHS calls exact-milp's MILP infeasible
# after 0.2 s, and the exact search falls back to a greedy order; the port bound equals that
# schedule's value (statuses time_limit, then feasible, were reported with a gap of 0)
SPREAD_PORTS = Instance(Fabric([1e-3, 1e6], [1e6, 1e-3]), (
    C("c0", [(0, 1, 0.010625724000871717), (1, 0, 0.0020091969769605077),
             (0, 1, 477.6559898903466)]),
    C("c1", [(0, 0, 0.0019631713285267107)]),
    C("c2", [(0, 1, 0.05826843499099569), (0, 1, 0.051293490872974745),
             (1, 1, 0.006664961216236467), (0, 1, 14.994397856337038)]),
    C("c3", [(1, 1, 0.007163469272737323)]),
    C("c4", [(1, 0, 9.530813520785513), (1, 1, 0.12394402708425423),
             (0, 1, 1.4894511683825344), (0, 0, 0.009404789931812946),
             (0, 0, 0.016495464805191942)]),
))


@pytest.mark.parametrize("method", ["exact", "exact-milp", "permutation"])
def test_a_schedule_at_a_proven_bound_is_optimal_whichever_way_it_was_found(method):
    # (time-indexed's grid LP loses the large flows below its tolerance here: no_solution,
    # as test_a_flow_lost_below_the_lp_tolerance_is_no_solution_not_optimal expects)
    res = solve(SPREAD_PORTS, method=method, time_limit=20)
    assert res.schedule is not None and check_feasible(SPREAD_PORTS, res.schedule)
    assert res.bound <= res.objective
    if res.objective - res.bound <= 1e-6 * res.objective:
        assert res.status is Status.OPTIMAL, (res.status, res.info)


def test_the_cheap_bound_closing_the_gap_makes_a_feasible_result_optimal():
    from coflowopt.solvers import _with_cheap_bound, cheap_wcct_bound

    value, _ = cheap_wcct_bound(SPREAD_PORTS)
    res = solve(SPREAD_PORTS, method="sincronia")
    at_bound = dataclasses.replace(res, objective=value, bound=0.0, status=Status.FEASIBLE)
    assert _with_cheap_bound(SPREAD_PORTS, at_bound, 1e-9).status is Status.OPTIMAL
    above = dataclasses.replace(at_bound, objective=value * 1.01)
    kept = _with_cheap_bound(SPREAD_PORTS, above, 1e-9)
    assert kept.status is Status.FEASIBLE and kept.bound == value
    no_schedule = dataclasses.replace(at_bound, schedule=None, status=Status.TIME_LIMIT)
    assert _with_cheap_bound(SPREAD_PORTS, no_schedule, 1e-9).status is Status.TIME_LIMIT


def test_a_schedule_worse_than_its_search_is_improved_by_nearby_orders(monkeypatch):
    # capacities from 1e-3 to 1e3: the best event order's LP schedule, stretched where the
    # LP met the 1e-3 links only within its tolerance, and its greedy permutation schedule
    # were 3.4 units worse than the best permutation schedule, and exact returned them
    ingress, egress = [1e-3, 1.0, 1e3], [1e3, 1.0, 1e-3]
    flows = {
        "c0": (0.0, [(1, 2, 0.5427351523734667), (2, 0, 0.7318071592364644), (1, 2, 4.066489488489509)]),
        "c1": (1.0, [(0, 0, 1.4044598890714337), (2, 0, 3.669388455201489), (1, 0, 3.3909821985849855)]),
        "c2": (0.0, [(0, 1, 2.494202744729337), (1, 2, 2.7284416104243414), (2, 2, 1.5016616494648503)]),
        "c3": (1.0, [(0, 1, 4.129904521292084), (2, 1, 3.9409381381482946), (2, 1, 3.3546491565901206)]),
        "c4": (0.0, [(1, 0, 2.4719713977139053), (0, 2, 3.0697976884752234), (1, 0, 3.812442767268356)]),
    }
    inst = Instance(Fabric(np.array(ingress), np.array(egress)),
                    tuple(C(k, fl, release=r) for k, (r, fl) in flows.items()))
    perm = solve(inst, method="permutation", time_limit=60)
    res = solve(inst, method="exact", time_limit=60)
    honest(inst, res, perm.objective)
    assert res.objective <= perm.objective * (1 + 1e-9)
    assert res.status is Status.FEASIBLE  # the local search ended by itself
    # and when the clock stops that local search, the status says so
    from coflowopt.exact import local_search as ls

    real = ls.local_search

    def stopped(*args, **kwargs):
        found = real(*args, **kwargs)
        return dataclasses.replace(found, status=Status.TIME_LIMIT)

    monkeypatch.setattr(ls, "local_search", stopped)
    res = solve(inst, method="exact", time_limit=60)
    honest(inst, res, perm.objective)
    assert res.status is Status.TIME_LIMIT
