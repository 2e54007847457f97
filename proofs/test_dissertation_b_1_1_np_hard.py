"""Dissertation Appendix B.1, Theorem B.1.1: offline coflow scheduling is NP-hard, by reduction.

Statement (the dissertation's words): "Even under the assumptions of Section 5.5.1,
optimizing O or Z in the offline case is NP-hard for all P >= 2." (O: the sum
of coflow completion times, (B.1); Z: the number of coflows meeting their
deadlines, (B.5).) Proof sketch, abridged: take P = 2 ports of capacity 1 and
n coflows at time 0 whose only flows are ingress 1 -> egress 2 (d^k_12) and
ingress 2 -> egress 1 (d^k_21); this is concurrent open shop with 2 identical
machines, job k having d^k_12 work on machine 1 and d^k_21 on machine 2,
"Since this is NP-hard [180], the coflow scheduling problem ... is NP-hard
as well."

Why the map preserves values (the argument this file tests). In the fluid
model (the dissertation's (B.2)-(B.4)), flow 1 -> 2 is the only user of ingress 1 and
of egress 2, and flow 2 -> 1 the only user of ingress 2 and egress 1, so the
coflow constraints are exactly "the a-flows share one unit of rate, the
b-flows share another": a coflow schedule is a (preemptive, fractional-rate)
concurrent open shop schedule with the same completion times, and back. For
concurrent open shop a permutation schedule (one job order, the same on
every machine, no idling) is optimal, also among preemptive schedules: a
known fact (e.g. Mastrolilli, Queyranne, Schulz, Svensson, Uhan, "Minimizing
the sum of weighted completion times in a concurrent open shop", Oper. Res.
Lett. 38, 2010; Wagneur and Sriskandarajah, 1993), with a one-line proof:
order the jobs by their completion times in any schedule; in the permutation
schedule of that order, job k's work on machine i ends at the sum of the
machine-i work of the jobs completing no later than k, which the original
schedule had to process by C_k, so no completion moves later. (The same
argument keeps every on-time job on time, so it holds for Z too.) Hence the
optimum is min over the n! orders, computed here in exact rationals.

What this verifies. On 2-port instances with only the two anti-diagonal
flows (a job with zero work on a machine becomes a coflow with one flow), all
at time 0, with weights w_k:

1. the project's exact optimum, ``solve(inst, method="exact")`` (sum of
   w_k C_k, status OPTIMAL), equals the brute-force concurrent open shop
   optimum over all n! orders (``Fraction``), on a fixed family (jobs
   (k, n+1-k) with unit weights, n = 2..6: optimum 5, 13, 27, 48, 78, the
   interleaved order 1, n, 2, n-1, ...), a weighted instance (optimum 43,
   worked out in its test) and hypothesis instances (n <= 6, integer work
   0..6 per machine, integer weights 1..4);
2. forward direction: every order's permutation schedule, built as a
   coflow schedule, passes ``check_feasible`` and has the concurrent open
   shop value;
3. reverse direction: the solver's schedule passes ``check_feasible``;
   read as a concurrent open shop schedule (the a-flow is machine 1, the
   b-flow machine 2; each machine's rates sum to at most 1) it has the
   solver's value, and the permutation schedule of its completion order
   finishes no job later (the argument above);
4. Z: the project's exact deadline solver (``objective="deadlines"``) admits
   as many coflows as the best order meets deadlines, on a fixed instance
   and on hypothesis instances (n <= 6, integer deadlines 1..15).

What it does not verify. NP-hardness itself: it is the cited result on
concurrent open shop (the dissertation's [180]; its chapter 5 adds
"strongly NP-hard for even two machines"), not checked here, and neither is
that the map is polynomial (it is plainly linear). Only that the map
preserves values, on small instances (so it also checks the exact solver
there). Release times, P > 2 and the other flows of a 2-port coflow are
outside the reduction and not checked.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, Schedule, ScheduleBuilder, check_feasible, solve

Job = tuple[int, int]  # (work on machine 1 = flow 0 -> 1, work on machine 2 = flow 1 -> 0)


def coflows(jobs: list[Job], weights: list[int], deadlines: list[int] | None = None) -> Instance:
    """The reduction: job k becomes coflow J{k} with flows 0 -> 1 (a_k) and 1 -> 0 (b_k)."""
    out = []
    for k, (a, b) in enumerate(jobs):
        rows = [(s, d, float(z)) for s, d, z in ((0, 1, a), (1, 0, b)) if z > 0]
        dl = None if deadlines is None else float(deadlines[k])
        out.append(Coflow.from_flows(f"J{k}", rows, weight=float(weights[k]), deadline=dl))
    return Instance(Fabric.uniform(2), tuple(out))


def permutation_completions(jobs: list[Job], order: tuple[int, ...]) -> dict[int, Fraction]:
    """Concurrent open shop, one order on both machines: a job ends when its last positive
    piece of work ends (prefix sums of its machines' work)."""
    done, t = {}, [Fraction(0), Fraction(0)]
    for k in order:
        ends = []
        for i in (0, 1):
            if jobs[k][i]:
                t[i] += jobs[k][i]
                ends.append(t[i])
        done[k] = max(ends)
    return done


def open_shop_optimum(jobs: list[Job], weights: list[int]) -> tuple[Fraction, tuple[int, ...]]:
    """Minimum of sum w_k C_k over all n! orders (optimal: see the docstring)."""
    best = None
    for order in itertools.permutations(range(len(jobs))):
        c = permutation_completions(jobs, order)
        value = sum(weights[k] * c[k] for k in c)
        if best is None or value < best[0]:
            best = (value, order)
    assert best is not None
    return best


def open_shop_on_time(jobs: list[Job], deadlines: list[int]) -> int:
    """Most jobs finishing by their deadlines, over all n! orders."""
    return max(sum(c[k] <= deadlines[k] for k in c)
               for c in (permutation_completions(jobs, o) for o in itertools.permutations(range(len(jobs)))))


def permutation_schedule(inst: Instance, order: tuple[int, ...]) -> Schedule:
    """The permutation schedule of ``order`` as a coflow schedule: each machine (flow
    direction) serves its flows back to back at rate 1 in ``order``."""
    b = ScheduleBuilder()
    t = [0.0, 0.0]
    for k in order:
        for f in range(inst.ptr[k], inst.ptr[k + 1]):
            i = int(inst.flow_src[f])  # flow 0 -> 1 is machine 1, flow 1 -> 0 machine 2
            size = float(inst.flow_size[f])
            b.add([f], t[i], t[i] + size, [1.0])
            t[i] += size
    return b.build()


def check_reduction(jobs: list[Job], weights: list[int]) -> Fraction:
    inst = coflows(jobs, weights)
    opt, _ = open_shop_optimum(jobs, weights)
    # 2. forward: each order's open shop schedule is a feasible coflow schedule of that value
    for order in itertools.permutations(range(len(jobs))):
        c = permutation_completions(jobs, order)
        s = permutation_schedule(inst, order)
        assert check_feasible(inst, s)
        got = s.coflow_completion(inst)
        np.testing.assert_allclose(got, [float(c[k]) for k in range(len(jobs))], rtol=1e-12)
    # 1. the project's exact optimum equals the brute-force open shop optimum
    res = solve(inst, method="exact")
    assert res.status.value == "optimal"
    assert abs(res.objective - float(opt)) <= 1e-6 * float(opt), (res.objective, opt)
    # 3. reverse: the solver's schedule is an open shop schedule of the same value
    s = res.schedule
    assert s is not None and check_feasible(inst, s)
    for i in (0, 1):  # each machine: the rates of its flows never exceed 1
        on = inst.flow_src[s.flow] == i
        for t in np.unique(np.concatenate([s.start[on], s.end[on]])).tolist():
            live = on & (s.start <= t) & (s.end > t)
            assert s.rate[live].sum() <= 1 + 1e-6
    cc = s.coflow_completion(inst)
    assert abs(float(np.dot(inst.weight, cc)) - res.objective) <= 1e-6 * float(opt)
    # its completion order, run as a permutation schedule, finishes no job later
    order = tuple(int(k) for k in np.argsort(cc, kind="stable"))
    c = permutation_completions(jobs, order)
    assert all(float(c[k]) <= cc[k] * (1 + 1e-6) for k in range(len(jobs)))
    return opt


# ---------------------------------------------------------------- the objective O (sum of w_k C_k)


def test_anti_sorted_family() -> None:
    """Jobs (k, n+1-k), k = 1..n, unit weights. The brute force finds the interleaved order
    1, n, 2, n-1, ... optimal: each pair (j, n+1-j) adds n+1 to both machines, its first job
    ends at (j-1)(n+1) + n+1-j and its second at j(n+1) (a middle job (m, m) at
    (m-1)(n+1) + m), so the optimum is 5, 13, 27, 48, 78 for n = 2..6; the solver agrees."""
    for n, want in zip(range(2, 7), (5, 13, 27, 48, 78), strict=True):
        jobs = [(k, n + 1 - k) for k in range(1, n + 1)]
        interleaved = tuple(k for j in range((n + 1) // 2) for k in dict.fromkeys((j, n - 1 - j)))
        assert sum(permutation_completions(jobs, interleaved).values()) == want
        assert check_reduction(jobs, [1] * n) == want


def test_weighted_instance() -> None:
    """Jobs (1, 5), (5, 1), (3, 3), (2, 0), (0, 2) with weights 1, 1, 2, 3, 3. The best order
    is J3, J4, J2, J0, J1: the one-machine jobs end at 2 on their own machines, the balanced
    job at 5, then the skewed ones at max(6, 10) = 10 and 11: 3*2 + 3*2 + 2*5 + 10 + 11 = 43."""
    jobs = [(1, 5), (5, 1), (3, 3), (2, 0), (0, 2)]
    weights = [1, 1, 2, 3, 3]
    assert open_shop_optimum(jobs, weights) == (43, (3, 4, 2, 0, 1))
    assert check_reduction(jobs, weights) == 43


@st.composite
def open_shop(draw: st.DrawFn, max_jobs: int = 6) -> tuple[list[Job], list[int]]:
    n = draw(st.integers(1, max_jobs))
    jobs = draw(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)).filter(lambda j: j[0] + j[1] > 0),
                         min_size=n, max_size=n))
    weights = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    return jobs, weights


@settings(max_examples=25, deadline=None)
@given(case=open_shop())
def test_reduction_on_random_instances(case: tuple[list[Job], list[int]]) -> None:
    check_reduction(*case)


# ---------------------------------------------------------------- the objective Z (deadlines met)


def check_deadlines(jobs: list[Job], deadlines: list[int]) -> int:
    inst = coflows(jobs, [1] * len(jobs), deadlines)
    best = open_shop_on_time(jobs, deadlines)
    res = solve(inst, method="exact", objective="deadlines", rejected="after")
    assert res.status.value == "optimal"
    assert round(res.objective) == best and abs(res.objective - best) < 1e-6
    s = res.schedule
    assert s is not None and check_feasible(inst, s)
    on_time = s.coflow_completion(inst) <= inst.deadline * (1 + 1e-6)
    assert int(on_time.sum()) == best
    return best


def test_deadlines_instance() -> None:
    """Jobs (2, 2), (1, 3), (3, 1), deadline 3 each: any two of them put at least 4 units
    on one machine, and the later of the two ends at or after that sum, so at most one is
    on time (and one is). Jobs (1, 0), (0, 1), (1, 1), (2, 2) with deadlines 1, 1, 2, 4: in
    this order they end at 1, 1, 2, 4, all on time."""
    assert check_deadlines([(2, 2), (1, 3), (3, 1)], [3, 3, 3]) == 1
    assert check_deadlines([(1, 0), (0, 1), (1, 1), (2, 2)], [1, 1, 2, 4]) == 4


@settings(max_examples=30, deadline=None)
@given(case=open_shop(), data=st.data())
def test_deadline_reduction_on_random_instances(case: tuple[list[Job], list[int]],
                                                data: st.DataObject) -> None:
    jobs, _ = case
    deadlines = data.draw(st.lists(st.integers(1, 15), min_size=len(jobs), max_size=len(jobs)))
    check_deadlines(jobs, deadlines)
