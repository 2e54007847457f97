"""Maximum number (or weight) of coflows meeting deadlines, against a brute force over subsets."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.bounds.simple import earliest_completion
from coflowopt.errors import CoflowoptError
from coflowopt.result import Status
from coflowopt.solvers import solve
from tests.strategies import instances


def feasible_subset(inst: Instance, subset) -> bool:
    """Can every coflow in ``subset`` finish by its deadline? One flow-level LP."""
    if not subset:
        return True
    flows = [f for k in subset for f in range(inst.ptr[k], inst.ptr[k + 1])]
    pts = sorted({float(inst.flow_release[f]) for f in flows}
                 | {float(inst.deadline[k]) for k in subset})
    J = len(pts) - 1
    if J < 1:
        return False
    n = len(flows) * J
    P = inst.num_ports
    cap = np.concatenate([inst.fabric.ingress, inst.fabric.egress])
    bounds, a_eq, b_eq = [], [], []
    for i, f in enumerate(flows):
        k = int(inst.flow_coflow[f])
        for j in range(J):
            ok = pts[j] >= inst.flow_release[f] - 1e-12 and pts[j + 1] <= inst.deadline[k] + 1e-12
            bounds.append((0.0, None if ok else 0.0))
        row = np.zeros(n)
        row[i * J:(i + 1) * J] = 1.0
        a_eq.append(row)
        b_eq.append(inst.flow_size[f])
    a_ub, b_ub = [], []
    for j in range(J):
        for link in range(2 * P):
            row = np.zeros(n)
            for i, f in enumerate(flows):
                on = inst.flow_src[f] == link if link < P else inst.flow_dst[f] == link - P
                if on:
                    row[i * J + j] = 1.0
            if row.any():
                a_ub.append(row)
                b_ub.append(cap[link] * (pts[j + 1] - pts[j]))
    res = linprog(np.zeros(n), A_ub=np.array(a_ub), b_ub=b_ub, A_eq=np.array(a_eq), b_eq=b_eq,
                  bounds=bounds, method="highs")
    return res.status == 0


def brute_force_deadlines(inst: Instance, weighted: bool) -> float:
    ks = [k for k in range(inst.num_coflows) if np.isfinite(inst.deadline[k])]
    best = 0.0
    for r in range(len(ks), 0, -1):
        for subset in itertools.combinations(ks, r):
            value = float(sum(inst.weight[k] if weighted else 1.0 for k in subset))
            if value > best and feasible_subset(inst, subset):
                best = value
    return best


def admitted_part(inst: Instance, res):
    """The admitted coflows as an instance and the schedule restricted to them."""
    adm = [inst.index(i) for i in res.info["admitted"]]
    sub = inst.subset(adm)
    flows = np.concatenate([np.arange(inst.ptr[k], inst.ptr[k + 1]) for k in adm]) if adm \
        else np.zeros(0, np.int64)
    keep = np.isin(res.schedule.flow, flows)
    remap = np.full(inst.num_flows, -1)
    remap[flows] = np.arange(flows.size)
    from coflowopt import Schedule

    sched = Schedule(remap[res.schedule.flow[keep]], res.schedule.start[keep],
                     res.schedule.end[keep], res.schedule.rate[keep])
    return sub, sched


def with_a_deadline(inst: Instance) -> Instance:
    if inst.has_deadlines:
        return inst
    c = inst.coflows[0]
    first = Coflow(c.id, c.src, c.dst, c.sizes, release=c.release, weight=c.weight,
                   deadline=c.release + 3.0)
    return inst.replace(coflows=(first, *inst.coflows[1:]))


def tight_deadlines(inst: Instance, factors: list[float]) -> Instance:
    """Every coflow gets a deadline ``factor`` times its isolation time after its release,
    so that coflows sharing ports compete for their deadlines (with deadlines on
    about one coflow in two, 13 of 200 drawn instances left the solver a real choice; with
    these, 22 of 100)."""
    alone = earliest_completion(inst) - inst.release
    return inst.replace(coflows=tuple(
        dataclasses.replace(c, deadline=c.release + float(a) * f)
        for c, a, f in zip(inst.coflows, alone, factors, strict=False)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=4, max_flows=2, deadlines=True, delays=True),
       st.lists(st.floats(1.0, 2.5), min_size=4, max_size=4), st.booleans())
def test_deadline_milp_equals_brute_force(inst, factors, tight):
    inst = tight_deadlines(inst, factors) if tight else with_a_deadline(inst)
    weighted = inst.num_flows % 2 == 1
    res = solve(inst, method="exact", objective="deadlines", weighted=weighted)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(brute_force_deadlines(inst, weighted), abs=1e-9)
    assert res.bound >= res.objective - 1e-9
    assert res.info["lp_relaxation"] >= res.objective - 1e-6
    sub, sched = admitted_part(inst, res)
    assert check_feasible(sub, sched, deadlines=True)


@pytest.mark.parametrize(("sizes", "release"), [([1.0, 2.0], 1.0), ([1.0, 1.0], 0.0)])
def test_a_tiny_wave_delay_with_exactly_tight_deadlines(sizes, release):
    # (hypothesis) a second wave 1e-5 s after the first, against 6 s transfers:
    # at HiGHS's default tolerance (1e-6) presolve called 1 of 2 coflows optimal where both
    # fit exactly (first case), and a solution 1e-6 over capacity made c0 end 5e-6 s after
    # its deadline (second case)
    inst = Instance(Fabric(np.array([1.0]), np.array([0.5])), (
        Coflow("c0", [0, 0], [0, 0], sizes, release=release, delay=np.array([0.0, 1e-5])),
        Coflow("c1", [0], [0], [3.0], release=0.0)))
    inst = tight_deadlines(inst, [1.0, 2.0])
    res = solve(inst, method="exact", objective="deadlines")
    assert brute_force_deadlines(inst, False) == 2.0
    assert res.status is Status.OPTIMAL and res.objective == 2.0
    sub, sched = admitted_part(inst, res)
    assert check_feasible(sub, sched, deadlines=True)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=4, max_flows=2, deadlines=True))
def test_rejected_coflows_served_after_give_a_complete_schedule(inst):
    inst = with_a_deadline(inst)
    res = solve(inst, method="exact", objective="deadlines", rejected="after")
    assert check_feasible(inst, res.schedule)
    assert np.all(np.isfinite(res.completion))
    sub, sched = admitted_part(inst, res)
    assert check_feasible(sub, sched, deadlines=True)


def test_two_coflows_one_deadline_slot():
    # two coflows with a common deadline on one link; only one can make it
    a = Coflow.from_flows("a", [(0, 0, 2.0)], deadline=2.0)
    b = Coflow.from_flows("b", [(0, 0, 1.5)], deadline=2.0)
    res = solve(Instance(Fabric.uniform(1), (a, b)), method="exact", objective="deadlines")
    assert res.objective == 1.0
    # LP: b whole (1.5 of the 2 units of capacity), a a quarter (0.5 of its 2)
    assert res.info["lp_relaxation"] == pytest.approx(1.25)
    assert res.bound == 1.0
    assert np.isinf(res.completion).sum() == 1


def test_deadline_options_and_inputs():
    a = Coflow.from_flows("a", [(0, 0, 1.0)])
    inst = Instance(Fabric.uniform(1), (a,))
    with pytest.raises(CoflowoptError, match="at least one coflow with a deadline"):
        solve(inst, method="exact", objective="deadlines")
    b = Coflow.from_flows("b", [(0, 0, 1.0)], deadline=5.0)
    with pytest.raises(CoflowoptError, match="rejected must be one of"):
        solve(Instance(Fabric.uniform(1), (b,)), method="exact", objective="deadlines",
              rejected="later")


def test_deadlines_far_from_time_zero_are_solved_from_the_first_release():
    # breakpoints near 1e16 lost their differences: coflows of 1 and 1,024 units
    # with deadline 1,024 on one unit port were both admitted, "optimal"
    for shift in (0.0, 1e9, 1e16, 3e16):
        d = 1024.0
        inst = Instance(Fabric([1.0], [1.0]), (
            Coflow("a", [0], [0], [1.0], release=shift, deadline=shift + d),
            Coflow("b", [0], [0], [d], release=shift, deadline=shift + d)))
        res = solve(inst, method="exact", objective="deadlines")
        assert res.status is Status.OPTIMAL and res.objective == 1, shift
        assert res.info["admitted"] == ["a"]
        assert res.completion[0] >= shift and res.completion[0] <= shift + d


def test_rejected_after_does_not_wait_a_delay_twice():
    # x's flow is there at 3; a finishes at 4; x was served from 4 + 3 = 7
    inst = Instance(Fabric([1.0, 1.0], [1.0, 1.0]), (
        Coflow("a", [0], [0], [4.0], deadline=4.0),
        Coflow("x", [1], [1], [1.0], delay=[3.0])))
    res = solve(inst, method="exact", objective="deadlines", rejected="after")
    assert res.info["admitted"] == ["a"]
    assert res.completion.tolist() == [4.0, 5.0]
    assert check_feasible(inst, res.schedule)


def test_a_coflow_without_room_for_itself_before_its_deadline_is_never_admitted():
    # c1 alone needs 7.3e-4 s for its bytes and has 7.0e-4 s (releases near 1000, sizes
    # from 7e-4 to 2e4): the MILP admitted it within its tolerance, and no LP fits it (a
    # brute force over subsets, an LP each, gives 2)
    from pathlib import Path

    import coflowopt as co
    from coflowopt.exact.deadlines import check_admitted

    inst = co.read(Path(__file__).parents[1] / "data" / "deadlines_no_room_alone.json")
    for rejected in ("drop", "after"):
        res = solve(inst, objective="deadlines", rejected=rejected)
        assert res.status is Status.OPTIMAL and res.objective == 2 == res.bound
        assert res.info["admitted"] == ["c0", "c2"] and check_admitted(inst, res)


def test_a_coflow_whose_data_arrives_after_its_deadline_is_never_admitted():
    # a's only flow is there from t = 1, after a's deadline 0.5; its 5e-5 bytes met the
    # amount row "sum x = s a" within HiGHS's tolerance with no x at all, so a was counted
    # (2 coflows, above the LP relaxation's 1) and never served
    fab = Fabric.uniform(2, 1.0)
    a = Coflow("a", [0], [1], [5e-5], release=0.0, deadline=0.5, delay=[1.0])
    b = Coflow("b", [0], [1], [20000.0], release=0.0, deadline=40000.0)
    c = Coflow("c", [1], [0], [3.0], release=0.0)
    for rejected in ("drop", "after"):  # (after: served past the admitted, at a finite time)
        res = solve(Instance(fab, (a, b, c)), objective="deadlines", rejected=rejected)
        assert res.status is Status.OPTIMAL and res.objective == 1 == res.bound
        assert res.info["admitted"] == ["b"]
        assert np.isfinite(res.completion).all() == (rejected == "after")


def test_a_schedule_that_misses_an_admitted_deadline_is_solved_again_or_not_returned(
        monkeypatch):
    # Sizes from 1e-4 to 2e4: HiGHS fills intervals over capacity within its tolerance, and
    # the schedule lengthens them, which moved every admitted coflow 2e-5 past its deadline;
    # it was returned as optimal. The admitted coflows' LP alone, solved again, fits them
    # (4 is the optimum: a brute force over subsets, each an LP)
    from pathlib import Path

    import coflowopt as co
    from coflowopt.exact import deadlines
    from coflowopt.exact.deadlines import check_admitted

    inst = co.read(Path(__file__).parents[1] / "data" / "deadlines_milp_tolerance_late.json")
    for rejected in ("drop", "after"):
        res = solve(inst, objective="deadlines", rejected=rejected)
        assert res.status is Status.OPTIMAL and res.objective == 4 == res.bound
        assert res.info["refit"] and check_admitted(inst, res)
    # when that second LP has no solution, the coflows that end late beyond the check's
    # tolerance are turned away (here c1): a feasible result below the bound, not a late
    # schedule
    monkeypatch.setattr(deadlines, "_model", _without_refit(deadlines._model))
    res = solve(inst, objective="deadlines")
    assert res.status is Status.FEASIBLE and res.objective == 3 and res.bound == 4
    assert res.info["turned_away"] == ["c1"] and check_admitted(inst, res)


def test_a_tiny_flow_the_milp_leaves_unserved_is_served_or_its_coflow_turned_away(monkeypatch):
    # c1's 1.07e-6-byte flow beside 1,024 bytes: the MILP admits c1 and leaves that flow at
    # 0 (its amount row met within HiGHS's tolerance); with rejected="after" the infinite
    # completion became c0's release and raised an InstanceError
    from pathlib import Path

    import coflowopt as co
    from coflowopt.exact import deadlines
    from coflowopt.exact.deadlines import check_admitted

    inst = co.read(Path(__file__).parents[1] / "data" / "deadlines_tiny_flow_unserved.json")
    for rejected in ("drop", "after"):
        res = solve(inst, objective="deadlines", rejected=rejected)
        assert res.status is Status.OPTIMAL and res.objective == 1 == res.bound
        assert res.info["admitted"] == ["c1"] and check_admitted(inst, res)
    # the flow the MILP leaves at 0 is served in its last interval before the deadline,
    # without the second LP too
    monkeypatch.setattr(deadlines, "_model", _without_refit(deadlines._model))
    for rejected in ("drop", "after"):
        res = solve(inst, objective="deadlines", rejected=rejected)
        assert res.status is Status.OPTIMAL and res.objective == 1 and not res.info["refit"]
        assert check_admitted(inst, res)


def _without_refit(model, first: int | None = None):
    """``deadlines._model`` whose fixed-admission LPs have no solution (the ``first`` ones
    only, if given)."""
    made_lps = []

    def made(*args, **kwargs):
        lp, a, x = model(*args, **kwargs)
        if not kwargs["integer"]:
            made_lps.append(lp)
            if first is None or len(made_lps) <= first:
                lp.add_rows([0], a[:1], [1.0], 2.0, 2.0, num=1)  # a_k = 2: infeasible
        return lp, a, x
    return made


def test_coflows_turned_away_are_taken_back_one_at_a_time_where_they_fit(monkeypatch):
    # the turned-away coflows are each tried again with those admitted, the most valuable
    # first: an LP of the admitted ones and it, kept if its schedule meets every deadline
    from pathlib import Path

    import coflowopt as co
    from coflowopt.exact import deadlines
    from coflowopt.exact.deadlines import check_admitted

    inst = co.read(Path(__file__).parents[1] / "data" / "deadlines_milp_tolerance_late.json")
    # the LP of the MILP's admitted set fails once: c1 ends late and is turned away, and
    # the LP of the others and c1 fits them all
    monkeypatch.setattr(deadlines, "_model", _without_refit(deadlines._model, first=1))
    res = solve(inst, objective="deadlines")
    assert res.status is Status.OPTIMAL and res.objective == 4 == res.bound
    assert res.info["turned_away"] == [] and res.info["taken_back"] == ["c1"]
    assert check_admitted(inst, res)


def test_an_instance_without_deadlines_is_refused_as_the_instances_fault(tmp_path, capsys):
    import coflowopt as co
    from coflowopt.cli import main

    path = tmp_path / "none.json"
    co.write(Instance(Fabric.uniform(2, 1.0), (Coflow("a", [0], [1], [1.0]),)), path)
    with pytest.raises(CoflowoptError, match="needs at least one coflow with a deadline"):
        solve(co.read(path), objective="deadlines")
    assert main(["solve", str(path), "--objective", "deadlines"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"coflowopt: error: {path}: objective='deadlines' needs")


def _data(name):
    from pathlib import Path

    import coflowopt as co

    return co.read(Path(__file__).parents[1] / "data" / name)


def test_a_coflow_due_exactly_when_its_delayed_flow_can_end_is_admitted():
    # c0's one flow comes 1e-5 after a release near 5.6e5 and its deadline is its end alone
    # (3.5e-11 s to spare): moved to the origin, (release - o) + delay rounded later than
    # (release + delay) - o, the moved coflow did not fit, and the result said 1 = bound
    from coflowopt.exact.deadlines import check_admitted

    inst = _data("deadlines_due_exactly_after_a_delay.json")
    for rejected in ("drop", "after"):
        res = solve(inst, objective="deadlines", rejected=rejected)
        assert res.status is Status.OPTIMAL and res.objective == 2 == res.bound
        assert check_admitted(inst, res)


def test_rejected_coflows_with_a_tiny_flow_are_all_served_after():
    # the makespan LP left a 3.7e-6-byte flow at 0 beside flows of 1e4: no schedule, for
    # objective="makespan" too; it is served in its last interval now
    inst = _data("makespan_tiny_flow_beside_large.json")
    res = solve(inst, objective="deadlines", rejected="after")
    assert res.status is Status.OPTIMAL and res.objective == 0 == res.bound
    assert check_feasible(inst, res.schedule)
    res = solve(inst, objective="makespan")
    assert res.status is Status.OPTIMAL and check_feasible(inst, res.schedule)


def test_optimal_means_the_value_is_the_bound():
    # weighted: HiGHS's dual bound 7.0000000017 within its mip_rel_gap was the bound of an
    # "optimal" 7
    res = solve(_data("deadlines_weighted_bound_within_gap.json"), objective="deadlines",
                weighted=True)
    assert res.status is Status.OPTIMAL and res.bound == res.objective == 7


@pytest.mark.parametrize("suffix", [".json", ".npz"])
def test_a_schedule_serving_rejected_coflows_after_validates_with_deadlines(tmp_path, capsys,
                                                                             suffix):
    # validate --deadlines flagged c2, served after the admitted coflows (past its deadline,
    # as rejected="after" says): the file now lists it in _served_after
    from pathlib import Path

    from coflowopt.cli import main

    inst = str(Path(__file__).parents[1] / "data" / "deadlines_one_served_after.json")
    out = tmp_path / f"s{suffix}"
    assert main(["solve", inst, "--objective", "deadlines", "--param", "rejected=after",
                 "--schedule", str(out)]) == 0
    capsys.readouterr()
    assert main(["validate", inst, "--schedule", str(out), "--deadlines"]) == 0
    text = capsys.readouterr().out
    assert "the 1 it serves after the admitted ones (its _served_after) is checked without its " \
           "deadline" in text and ": feasible" in text


def test_served_after_must_name_the_instances_coflows(tmp_path, capsys):
    import json
    from pathlib import Path

    from coflowopt.cli import main

    inst = str(Path(__file__).parents[1] / "data" / "deadlines_one_served_after.json")
    bad = tmp_path / "s.json"
    bad.write_text(json.dumps({"format": "coflowopt-schedule/1", "_served_after": ["zz"],
                               "pieces": []}))
    assert main(["validate", inst, "--schedule", str(bad), "--deadlines"]) == 2
    err = capsys.readouterr().err
    assert "$._served_after[0]" in err and "served_after names coflow 'zz'" in err


def test_a_coflow_due_at_its_isolation_time_is_admitted_where_all_fit():
    # c1 (1.3e-3 bytes beside 1.9e3 and 15.8) is due at its release plus its time alone:
    # the LP of the admitted coflows in bytes missed it by HiGHS's absolute tolerance and
    # c1 was turned away (2 of 3); in fractions of each flow it fits, as a brute force over
    # subsets (an LP each) says: all 3
    from pathlib import Path

    import coflowopt as co
    from coflowopt.exact.deadlines import check_admitted

    inst = co.read(Path(__file__).parents[1] / "data" / "deadlines_due_at_isolation_time.json")
    res = solve(inst, objective="deadlines")
    assert res.status is Status.OPTIMAL and res.objective == 3 == res.bound
    assert res.info["turned_away"] == [] and check_admitted(inst, res)


def test_the_lp_in_fractions_keeps_its_coefficients_finite_on_an_interval_of_1e_32(
        monkeypatch):
    # a capacity row divided by its right-hand side, c * 1.6e-32, had coefficients of 6e31,
    # which HiGHS takes as infinite: the LP of the admitted coflows had no solution
    from coflowopt.exact import deadlines

    inst = Instance(Fabric.uniform(1, 1.0), (
        Coflow("c0", [0], [0], [1.0], release=1.5816866168779855e-32, deadline=2.0),
        Coflow("c1", [0], [0], [1.0], release=0.0, deadline=1.0)))
    checked = []
    real = deadlines._meets_deadlines

    def once_late(*args):  # the MILP's schedule is taken as late: the LP solves again
        checked.append(1)
        return real(*args) and len(checked) > 1

    monkeypatch.setattr(deadlines, "_meets_deadlines", once_late)
    res = solve(inst, objective="deadlines")
    assert res.status is Status.OPTIMAL and res.objective == 2 == res.bound
    assert res.info["refit"] and res.info["turned_away"] == []


def test_optimal_only_where_the_bound_meets_the_value():
    # HiGHS stops at its absolute gap (1e-6): 2.0 admitted against a bound of
    # 2.0000000021, which is 1.05e-9 relative (rel_gap 1e-9), and this was called optimal
    from pathlib import Path

    import coflowopt as co
    from coflowopt.exact.deadlines import check_admitted

    inst = co.read(Path(__file__).parents[1] / "data" / "deadlines_highs_absolute_gap.json")
    res = solve(inst, objective="deadlines", weighted=True)
    assert res.objective == 2.0 and check_admitted(inst, res)
    assert (res.status is Status.OPTIMAL) == (res.bound == res.objective)


def test_coflows_the_milp_left_out_are_tried_again_and_refute_its_optimum():
    # HiGHS answered "optimal" below sets that fit (within its tolerances): c4 fits beside
    # the two it admitted (each far below capacity); and c0 alone (3) is worth more than
    # the two it admitted (2.5). Both are found by the LPs tried after it, and the status
    # is then feasible under the LP relaxation's bound
    from coflowopt.exact.deadlines import check_admitted

    three = Instance(Fabric.uniform(3), (
        Coflow("c0", [1, 2], [2, 0], [0.5, 1.0], release=9.71161478899387,
               deadline=12.59654121433675),
        Coflow("c1", [0, 0, 0], [0, 2, 0], [1246.4078527911445, 0.0001578249333201795,
                                            3.6358610297641043],
               release=1.0, deadline=1251.0438716458418, weight=0.5),
        Coflow("c2", [2], [0], [2.0], release=2.0, deadline=6.541548666785111, weight=2.0),
        Coflow("c3", [0, 1, 2], [0, 1, 2], [0.13280063583602766, 0.04031396403548932,
                                            597.6177976176823],
               release=1.0, deadline=598.6177976176823, weight=0.5),
        Coflow("c4", [0], [0], [0.5], release=1.0, deadline=1.6466303827423605, weight=3.0)))
    res = solve(three, objective="deadlines")
    assert res.objective == 3 and set(res.info["admitted"]) == {"c0", "c2", "c4"}
    assert res.status is Status.FEASIBLE and res.bound >= 3 and check_admitted(three, res)
    swap = Instance(Fabric([1.0, 2.0], [2.0, 4.0]), (
        Coflow("c0", [1, 0, 0], [0, 1, 0], [2.0, 2.0, 2.0], release=560000.0,
               deadline=560004.0, weight=3.0),
        Coflow("c1", [0, 1], [1, 1], [1.0, 3.0], release=560000.000000001,
               deadline=560002.2469038605, weight=2.0),
        Coflow("c2", [1, 0, 1], [0, 1, 0], [0.1087339108278769, 1.402297324331973e-06,
                                            0.01454459950813739],
               release=560000.2919421041, deadline=560000.4976474659, weight=0.5)))
    res = solve(swap, objective="deadlines", weighted=True)
    assert res.objective == 3 and "c0" in res.info["admitted"] and check_admitted(swap, res)
    assert res.status is Status.FEASIBLE and res.bound >= 3
