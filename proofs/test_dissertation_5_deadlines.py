"""Dissertation §5.5.4, Pseudocode 2 (MEETDEADLINE): Varys' deadline admission control.

Statement (the dissertation's words, abridged). "A coflow can meet its deadline using
minimum bandwidth as long as all flows finish exactly at the deadline. We can
achieve that by setting r_ij = d_ij / D_C using MADD. ... We admit a coflow C,
if and only if it can meet its deadline without violating that of any
existing coflow. Specifically, we recalculate the minimum bandwidth required
to complete all existing coflows within their deadlines (line 2) and check if
the minimum CCT of C, Γ_C <= D_C. Otherwise, C is rejected. An admitted coflow
is never preempted, and a coflow is never rejected if it can safely be
admitted."

Reading (``coflowopt/sim/policies/varys_deadline.py``). Deadlines are
absolute. At every decision (coflow arrivals and completions) each admitted
coflow gets its minimum rates remaining_ij / (D - t); an arriving coflow with
a deadline is admitted iff its Γ (Eq. 4.1) on what those rates leave of each
port is at most D - t (coflows arriving together are judged in index order);
spare capacity is backfilled to the admitted coflows; the rest (rejected
coflows, coflows without a deadline) are served best effort, not dropped.
``info["deadline_admitted"]`` counts admissions; the summary's
``deadlines_met`` counts every coflow done by its deadline.

What this verifies.

1. Admitted coflows meet their deadlines (holds): hypothesis instances
   (1-3 ports, capacities 1/2, 1, 2, up to 5 coflows with releases, some
   without deadlines, windows 0.5-4 times the coflow's Γ alone): every
   coflow the ``admitted_deadline`` column marks finishes by its deadline
   (within 1e-9), schedules pass ``check_feasible``.
2. The admission test itself, at one instant: hypothesis instances with
   every coflow released at 0 (integer and half sizes, deadlines in halves):
   the admitted set equals the one computed here in exact rationals by
   Pseudocode 2 in index order (residual = capacity minus d_ij / D of the
   coflows admitted so far; admit iff Γ on the residual <= D), the counts in
   ``info`` match, and ``deadlines_met`` is at least the number admitted.
3. Counts on a 3-coflow example, by hand (2 ports, unit capacities):
   A = {0->0: 2} at 0, D = 4; B = {1->1: 3} at 1, D = 3; C = {0->1: 1} at 1,
   D = 11/4. At 0, A is admitted (Γ 2 <= 4) and backfilling gives it the
   whole port, so at 1 it has 1 left and needs 1/3 of port 0. B: Γ = 3 > 2
   (window), rejected, and it cannot meet its deadline in any schedule.
   C: Γ on the residual = 1 / (2/3) = 3/2 <= 7/4, admitted at the minimum
   rate 4/7; A gets 1/3 plus the spare 2/21 of port 0, B (best effort) the
   3/7 C leaves of egress 1. Admitted 2, met 2 (C at 11/4, A at 3, B at
   5 > 3), which is also the exact deadline
   solver's maximum (``solve(objective="deadlines", method="exact")``).
4. A rejection that is right: A = {0->0: 2} at 0, D = 2 (its minimum rate
   saturates port 0); B = {0->1: 1} at 1, D = 2: the residual of port 0 is
   0, Γ = inf > 1, rejected; indeed A and B need 3 units through ingress 0
   by time 2, so at most one meets (exact solver: 1). Varys: admitted 1,
   met 1 (B ends at 3).
5. **"a coflow is never rejected if it can safely be admitted" fails**:
   A = {0->0: 2} at 0, D = 5; B = {0->1: 1} at 1, D = 2. At 1, A has 1 left
   (backfilled at rate 1 on [0, 1)), minimum rate 1/4, residual 3/4, so B's
   Γ = 4/3 > 1: rejected; backfilling then finishes A at 2 and B (best
   effort) ends at 3, late. Yet the schedule B on [1, 2), A on [0, 1) and
   [2, 3) meets both deadlines (``check_feasible`` with deadlines; the exact
   solver's maximum is 2). Admission control reserves constant minimum
   rates for admitted coflows and does not consider re-planning them, so it
   is sufficient, not necessary.

What this does not verify: multi-wave coflows (the READY barrier),
``backfill="greedy"``, re-submission of rejected coflows (the project serves
them best effort instead), or that admission is optimal in any sense (item 5
shows it is not). Items 1-2 are a finite random search.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from _random_instances import online
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, ScheduleBuilder, check_feasible, solve
from coflowopt.sim import SimulationResult, simulate

TOL = 1e-9


def varys_deadline(inst: Instance) -> SimulationResult:
    res = simulate(inst, "varys-deadline")
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    return res


def admitted(res: SimulationResult) -> np.ndarray:
    return np.asarray(res.coflow_columns["admitted_deadline"], bool)


def best_met(inst: Instance) -> int:
    opt = solve(inst, method="exact", objective="deadlines", rejected="after")
    assert opt.schedule is not None and check_feasible(inst, opt.schedule)
    assert int(np.sum(opt.schedule.coflow_completion(inst) <= inst.deadline * (1 + TOL))) \
        >= round(opt.objective)
    return round(opt.objective)


def alone_gamma(flows: list[tuple[int, int, float]], ingress: list[float], egress: list[float]) -> float:
    up, down = np.zeros(len(ingress)), np.zeros(len(egress))
    for i, j, d in flows:
        up[i] += d
        down[j] += d
    return float(max((up / np.array(ingress)).max(), (down / np.array(egress)).max()))


def random_deadline(draw: st.DrawFn, release: float, flows: list, ingress: list, egress: list
                    ) -> float | None:
    """Three coflows in four get a deadline of 0.5 to 4 times their isolation time."""
    if not draw(st.integers(0, 3)):
        return None
    return release + draw(st.floats(0.5, 4.0)) * alone_gamma(flows, ingress, egress)


@settings(max_examples=30, deadline=None)
@given(inst=online(max_coflows=5, deadline=random_deadline))
def test_every_admitted_coflow_meets_its_deadline(inst: Instance) -> None:
    res = varys_deadline(inst)
    adm = admitted(res)
    assert not adm[~np.isfinite(inst.deadline)].any()
    late = res.completion[adm] - inst.deadline[adm]
    assert (late <= TOL * np.maximum(1.0, inst.deadline[adm])).all()
    assert res.info["deadline_admitted"] == int(adm.sum())
    assert res.info["deadline_coflows"] == int(np.isfinite(inst.deadline).sum())


@st.composite
def at_zero(draw: st.DrawFn) -> tuple[list[list[tuple[int, int, Fraction]]], list[Fraction],
                                      list[Fraction], list[Fraction]]:
    P = draw(st.integers(1, 3))
    cap = st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2)])
    ingress = draw(st.lists(cap, min_size=P, max_size=P))
    egress = draw(st.lists(cap, min_size=P, max_size=P))
    port = st.integers(0, P - 1)
    size = st.integers(1, 8).map(lambda h: Fraction(h, 2))
    K = draw(st.integers(1, 5))
    coflows = [[(draw(port), draw(port), draw(size)) for _ in range(draw(st.integers(1, 3)))]
               for _ in range(K)]
    deadlines = [Fraction(draw(st.integers(1, 16)), 2) for _ in range(K)]
    return coflows, ingress, egress, deadlines


def pseudocode_2_at_zero(coflows, ingress, egress, deadlines) -> list[bool]:
    """Pseudocode 2 for coflows all arriving at 0, in index order, in rationals."""
    up, down = list(ingress), list(egress)
    out = []
    for flows, D in zip(coflows, deadlines, strict=True):
        load_up = [Fraction(0)] * len(up)
        load_down = [Fraction(0)] * len(down)
        for i, j, d in flows:
            load_up[i] += d
            load_down[j] += d
        need = [(u, c) for u, c in zip(load_up, up, strict=True) if u] + \
            [(v, c) for v, c in zip(load_down, down, strict=True) if v]
        ok = all(c > 0 and u / c <= D for u, c in need)  # Γ on the residual <= D
        out.append(ok)
        if ok:  # reserve the minimum rates d_ij / D
            up = [c - u / D for u, c in zip(load_up, up, strict=True)]
            down = [c - v / D for v, c in zip(load_down, down, strict=True)]
    return out


@settings(max_examples=30, deadline=None)
@given(case=at_zero())
def test_admissions_at_one_instant_follow_pseudocode_2(case) -> None:
    coflows, ingress, egress, deadlines = case
    inst = Instance(Fabric(np.array([float(c) for c in ingress]), np.array([float(c) for c in egress])),
                    tuple(Coflow.from_flows(f"c{k}", [(i, j, float(d)) for i, j, d in flows],
                                            deadline=float(D))
                          for k, (flows, D) in enumerate(zip(coflows, deadlines, strict=True))))
    res = varys_deadline(inst)
    expected = pseudocode_2_at_zero(coflows, ingress, egress, deadlines)
    assert admitted(res).tolist() == expected
    assert res.info["deadline_admitted"] == sum(expected)
    assert res.summary.deadlines_met >= sum(expected)
    assert (res.completion[admitted(res)] <= inst.deadline[admitted(res)] * (1 + TOL)).all()


def two_ports(*coflows: Coflow) -> Instance:
    return Instance(Fabric.uniform(2), coflows)


def test_counts_on_a_three_coflow_example() -> None:
    inst = two_ports(Coflow.from_flows("A", [(0, 0, 2.0)], deadline=4.0),
                     Coflow.from_flows("B", [(1, 1, 3.0)], release=1.0, deadline=3.0),
                     Coflow.from_flows("C", [(0, 1, 1.0)], release=1.0, deadline=2.75))
    # by hand: A admitted at 0 and backfilled to rate 1; at 1 it has 1 left, needs 1/(4-1)
    F = Fraction
    a_rate = F(1, 4 - 1)
    gamma_b = F(3, 1)  # ports 1 -> 1 untouched by A
    gamma_c = F(1) / (1 - a_rate)  # ingress 0 is C's bottleneck (egress 1 is free)
    assert gamma_b > F(3) - 1 and gamma_c == F(3, 2) <= F(11, 4) - 1
    # then on [1, 11/4): C at its minimum rate 4/7, A at 1/3 plus ingress 0's spare 2/21 = 3/7;
    # A has 1 - (3/7)(7/4) = 1/4 left at 11/4 and ends at 3; B (best effort) gets what C leaves
    # of egress 1, 3/7, so 9/4 is left at 11/4 and it ends at 5
    c_rate = F(1) / (F(11, 4) - 1)
    a_rate += 1 - a_rate - c_rate
    a_end = F(11, 4) + (1 - a_rate * (F(11, 4) - 1)) / 1
    b_end = F(11, 4) + (3 - (1 - c_rate) * (F(11, 4) - 1)) / 1
    assert (c_rate, a_rate, a_end, b_end) == (F(4, 7), F(3, 7), F(3), F(5))
    res = varys_deadline(inst)
    assert admitted(res).tolist() == [True, False, True]
    assert res.info["deadline_admitted"] == 2 and res.summary.deadlines_met == 2
    np.testing.assert_allclose(res.completion, [float(a_end), float(b_end), 2.75], rtol=1e-12)
    assert best_met(inst) == 2


def test_a_rejected_coflow_that_indeed_cannot_meet_its_deadline() -> None:
    inst = two_ports(Coflow.from_flows("A", [(0, 0, 2.0)], deadline=2.0),
                     Coflow.from_flows("B", [(0, 1, 1.0)], release=1.0, deadline=2.0))
    res = varys_deadline(inst)
    assert admitted(res).tolist() == [True, False]
    assert res.summary.deadlines_met == 1 and res.completion.tolist() == [2.0, 3.0]
    # ingress 0 must carry 2 + 1 by time 2: impossible, so at most one deadline is met
    assert best_met(inst) == 1


def test_a_coflow_rejected_although_it_could_be_admitted_safely() -> None:
    inst = two_ports(Coflow.from_flows("A", [(0, 0, 2.0)], deadline=5.0),
                     Coflow.from_flows("B", [(0, 1, 1.0)], release=1.0, deadline=2.0))
    F = Fraction
    residual = 1 - (F(2) - 1) / (5 - 1)  # A backfilled at rate 1 on [0, 1), min rate 1/4 after
    assert F(1) / residual == F(4, 3) > F(2) - 1
    res = varys_deadline(inst)
    assert admitted(res).tolist() == [True, False]
    assert res.completion.tolist() == [2.0, 3.0] and res.summary.deadlines_met == 1
    # A on [0, 1) and [2, 3), B on [1, 2): both on time
    b = ScheduleBuilder()
    b.add([0], 0.0, 1.0, [1.0])
    b.add([1], 1.0, 2.0, [1.0])
    b.add([0], 2.0, 3.0, [1.0])
    both = b.build()
    assert check_feasible(inst, both, deadlines=True)
    assert (both.coflow_completion(inst) <= inst.deadline).all()
    assert best_met(inst) == 2
