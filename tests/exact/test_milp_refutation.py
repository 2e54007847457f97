"""exact-milp's post-check: HiGHS's "optimal" order is improved by swapping neighbouring events.

The witness (``instances/optima/exact_milp_optimal_above_feasible.json``): HiGHS called an
order of value 1884 optimal, with bound 1884, where swapping the completions of coflows 154
and 155 gives 1875 (the optimum, proven by ``method="exact"``). Here HiGHS is given that
order (its binaries fixed), so the test does not depend on where HiGHS's own search ends;
the slow end-to-end run is ``tests/test_optima_library.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coflowopt import check_feasible
from coflowopt.exact import milp
from coflowopt.exact._events import EventLP, NodeLP
from coflowopt.exact._groups import build_groups
from coflowopt.exact.permutation import order_completion
from coflowopt.exact.wcct import _node_schedule, event_sequence, solve_event_sequence
from coflowopt.instance import Instance
from coflowopt.io import native
from coflowopt.result import Status
from coflowopt.solvers import solve
from tests.exact.test_wcct import brute_force_wcct
from tests.strategies import instances

WITNESS = Path(__file__).parents[2] / "instances" / "optima" / "exact_milp_optimal_above_feasible.json"
OPTIMUM = 1875.0  # method="exact", its schedule checked at 1e-9 (the witness's _description)
CUT_OFF = 1884.0  # HiGHS's "optimal" value and bound
# completion times of the two orders (coflows 150-156): they differ in 154 and 155
HIGHS_COMPLETION = [1, 64, 121, 285, 566, 474, 373]
OPTIMAL_COMPLETION = [1, 64, 121, 285, 465, 566, 373]


@pytest.fixture(scope="module")
def witness() -> tuple[Instance, EventLP]:
    inst = native.read(WITNESS)
    return inst, EventLP(build_groups(inst))


def _order(elp: EventLP, completion: list[int]) -> list[int]:
    return event_sequence(elp, np.asarray(completion, float) / elp.g.time_unit)


def _solved(elp: EventLP, completion: list[int]) -> NodeLP:
    node = solve_event_sequence(elp, _order(elp, completion))
    assert node is not None and node.solution is not None
    return node


def _value(inst: Instance, elp: EventLP, node: NodeLP) -> float:
    """The value of ``node``'s schedule, which must pass ``check_feasible``."""
    sched = _node_schedule(elp, node)
    report = check_feasible(inst, sched, 1e-9)
    assert report, str(report)
    return float(np.dot(inst.weight, sched.coflow_completion(inst)))


def test_the_witness_order_is_1884_and_one_swap_gives_the_optimum(witness):
    inst, elp = witness
    node = _solved(elp, HIGHS_COMPLETION)
    assert _value(inst, elp, node) == pytest.approx(CUT_OFF, rel=1e-9)
    check = milp.post_check(elp, node)
    assert check.improved and check.local_optimum and not check.expired
    assert 0 < check.lps <= milp.POST_CHECK_WORK * len(node.events)
    assert _value(inst, elp, check.node) == pytest.approx(OPTIMUM, rel=1e-9)
    assert list(check.node.events) == _order(elp, OPTIMAL_COMPLETION)


def test_the_post_check_leaves_the_optimal_order_alone(witness):
    inst, elp = witness
    node = _solved(elp, OPTIMAL_COMPLETION)
    assert _value(inst, elp, node) == pytest.approx(OPTIMUM, rel=1e-9)
    check = milp.post_check(elp, node)
    assert not check.improved and check.local_optimum and check.node is node
    assert check.lps > 0


def test_the_post_check_is_bounded_in_work_not_by_the_clock(witness):
    _, elp = witness
    node = _solved(elp, HIGHS_COMPLETION)
    full = milp.post_check(elp, node)
    for budget in range(full.lps):
        check = milp.post_check(elp, node, max_lps=budget)
        assert check.lps == budget and not check.local_optimum and not check.expired
    again = milp.post_check(elp, node, max_lps=full.lps)  # deterministic: the same search
    assert again.lps == full.lps and again.node.events == full.node.events
    stopped = milp.post_check(elp, node, expired=lambda: True)
    assert stopped.expired and stopped.lps == 0 and stopped.node is node


def _fix_order(monkeypatch, elp: EventLP, completion: list[int]) -> None:
    """Make HiGHS answer with this event order: its binaries fixed in the model."""
    seq = _order(elp, completion)
    build = milp._build_model

    def fixed(pyo, g, elp_, M, *, expired):
        m = build(pyo, g, elp_, M, expired=expired)
        for e, ev in enumerate(seq, start=1):
            for k in range(elp_.K):
                m.y[k, e].fix(1.0 if ev == k else 0.0)
            for j in range(elp_.R):
                m.z[j, e].fix(1.0 if ev == -(j + 1) else 0.0)
        return m

    monkeypatch.setattr(milp, "_build_model", fixed)


def test_exact_milp_refutes_an_optimal_answer_a_swap_improves(monkeypatch, witness):
    from coflowopt.exact import certified

    inst, elp = witness
    _fix_order(monkeypatch, elp, HIGHS_COMPLETION)  # HiGHS: "optimal" 1884, bound 1884
    # without the bound over completion orders, which proves this optimum by itself (below)
    monkeypatch.setattr(certified, "CHEAP_SUBSETS", 0)
    res = solve(inst, method="exact-milp", time_limit=600.0)
    assert res.info["termination"].lower().endswith("optimal")
    assert res.info["refuted_bound"] == pytest.approx(CUT_OFF, rel=1e-6)
    assert res.info["post_check"]["from_lp_value"] == pytest.approx(CUT_OFF, rel=1e-9)
    assert res.status is Status.FEASIBLE
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)
    assert res.bound <= OPTIMUM and check_feasible(inst, res.schedule, 1e-9)
    # with it, the refuted answer's schedule is proved optimal by that bound
    monkeypatch.setattr(certified, "CHEAP_SUBSETS", 16)
    res = solve(inst, method="exact-milp", time_limit=600.0)
    assert res.status is Status.OPTIMAL and res.info["bound_from"] == "subsets"
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9) and res.bound <= OPTIMUM


def test_exact_milp_keeps_an_optimal_answer_the_post_check_cannot_improve(monkeypatch,
                                                                          witness):
    inst, elp = witness
    _fix_order(monkeypatch, elp, OPTIMAL_COMPLETION)
    res = solve(inst, method="exact-milp", time_limit=600.0)
    assert res.status is Status.OPTIMAL and "refuted_bound" not in res.info
    assert res.info["post_check"]["local_optimum"]
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)
    assert res.bound == pytest.approx(OPTIMUM, rel=1e-6)


def test_an_unfinished_post_check_does_not_call_the_answer_optimal(monkeypatch, witness):
    inst, elp = witness
    _fix_order(monkeypatch, elp, OPTIMAL_COMPLETION)
    real = milp.post_check
    monkeypatch.setattr(milp, "post_check",
                        lambda elp_, node, **kw: real(elp_, node, **{**kw, "expired": lambda: True}))
    res = solve(inst, method="exact-milp", time_limit=600.0)
    assert res.info["post_check"]["stopped_by_time"]
    assert res.status is Status.TIME_LIMIT  # HiGHS's bound is unchecked
    assert res.objective == pytest.approx(OPTIMUM, rel=1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=3, max_flows=2, integer=True))
def test_the_post_check_only_improves_and_stays_above_the_brute_force(inst):
    """From the event order of a poor permutation schedule (largest coflow first): a valid
    order, no worse, checked, and never below the independent brute force's optimum."""
    elp = EventLP(build_groups(inst))
    comp = order_completion(inst, np.argsort(-np.asarray(inst.gamma), kind="stable"))
    node = solve_event_sequence(elp, event_sequence(elp, comp / elp.g.time_unit))
    assert node is not None and node.solution is not None
    check = milp.post_check(elp, node)
    assert check.local_optimum and check.lps <= milp.POST_CHECK_WORK * len(node.events)
    events = list(check.node.events)
    for p, e in enumerate(events):  # every completion after what it needs, releases in order
        ready, nxt = elp.ready(events[:p])
        assert e in ready if e >= 0 else -e - 1 == nxt
    assert check.node.solution.objective <= node.solution.objective
    value = _value(inst, elp, check.node)
    assert value >= brute_force_wcct(inst) * (1 - 1e-6) - 1e-9
