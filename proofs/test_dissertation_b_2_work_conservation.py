"""Dissertation Appendix B.2 (Figure B.1), work conservation vs. CCT; and Remark B.3.2.

Statement, §B.2 (the dissertation's words): "Consider Figure B.1a. Coflows C1 and C2
arrive at time 0 with one and two flows, respectively. Each flow transfers
unit data. C3 arrives one time unit later and uses a single flow to send 0.5
data unit. Figure B.1b shows the work-conserving solution, which finishes in
2 time units for an average CCT of 1.67 time units. The optimal solution
(Figure B.1c), however, takes 2.5 time units for the same amount of data
(i.e., it lowers utilization); still, it has a 1.11x lower average CCT (1.5
time units)." Caption: "... on a 2 x 2 datacenter fabric ... Although the
former schedule is work-conserving and achieves higher utilization, the
latter has a lower average CCT."

Remark B.3.2: "In Varys, SEBF would schedule C1 before C2 (arbitrarily
breaking the tie); iterative MADD will allocate the minimum bandwidth to
quickly finish C1, and then give the remaining bandwidth to C2 (Figure
B.2c). The average CCT will be the same as the optimal for this example."

Model and terms. The dissertation's own formulation (B.1)-(B.4): fluid rates, unit
port capacities; the CCT of a coflow is its completion less its arrival
(with absolute times the numbers are out of reach: a sum of 4.5 with the
last end at 2.5 needs C3 at 2.5 and C1, C2 at 1, but C1 and C2 carry 3
units over two ingress ports). Work-conserving: at every instant every
arrived, unfinished flow has a saturated ingress or egress port (nothing
could be added).

Which ports. The text does not say (the figure is not in the text). Over all
port assignments of the four flows on a 2 x 2 fabric, one assignment, up to
relabeling the ports, and no other, has the simulator's ``fair`` reproduce
(b)'s numbers and its ``fifo`` (arrival order C1, C2, C3) reproduce (c)'s:
C1 = in1 -> out1, C2 = {in1 -> out2, in2 -> out1}, C3 = in2 -> out2 (0-based
below: C1 0->0, C2 0->1 and 1->0, C3 1->1). On it per-flow max-min fair
sharing (``fair``, work-conserving) gives every flow rate 1/2 throughout
(in [0, 1] C1 and C2's 0->1 share ingress 0, C1 and C2's 1->0 share egress
0; in [1, 2] the four flows form a cycle of four ports): all finish at 2,
average CCT (2 + 2 + 1)/3 = 5/3, the text's (b). Serving C1, then C2, then
C3 (``fifo``) gives ends 1, 2, 2.5, average (1 + 2 + 1.5)/3 = 1.5 with
makespan 2.5, the text's (c).

What this verifies.

1. Both stated schedules, built by hand on that assignment, pass
   ``check_feasible`` with the stated numbers, and the simulator's ``fair``
   and ``fifo`` reproduce them. But (c) is itself work-conserving: in
   [0, 1] C2's flows are blocked by C1 (ingress 0, egress 0), in [1, 2] C3
   by C2 (ingress 1, egress 1); the idle ports could not be used.
2. **The claim fails in the fluid model**: 1.5 is not the optimum. Serving
   C2 first ([0, 1]: its two flows use disjoint ports), then C1 in [1, 2]
   and C3 in [1, 1.5] gives CCTs 2, 1, 0.5, average 7/6, makespan 2: a
   work-conserving schedule that beats (c) and has the higher utilization.
   It is optimal (by hand: C3's CCT >= 0.5; C1 and C2 both need ingress 0
   for a unit each, so one ends at 2 or later and C1 + C2 >= 3; sum >= 3.5),
   and the exact solver agrees (absolute sum 4.5, ends C1 2, C2 1, C3 1.5;
   its schedule is work-conserving). So the best work-conserving schedule
   has average 7/6, not 5/3: nothing is traded off here.
3. On every port assignment (160 up to swapping C2's flows), the exact
   optimum equals the best of the six priority-order schedules computed
   here in rationals (each flow in order takes what its two ports have left,
   recomputed at every arrival and completion): these are work-conserving
   by construction, so on no reading does work conservation cost anything.
   The optimum average CCT is 1.5 only where a port carries 3 units, so no
   schedule there finishes within 2.5: no reading of the text gives the
   stated optimum. (Whether work conservation can cost anything in the fluid
   model in general is not claimed here.)
4. Remark B.3.2 on ``instances/permutation_gap.json``. That file is not
   Figure B.2: the figure (drawn, not in the text) has two coflows, C1 and
   C2 (the only ones Theorem B.3.1's proof names), with equal bottlenecks
   (the Remark's tie); the file, computed by the project as a
   witness for Theorem B.3.1, has three coflows with bottlenecks 6, 3, 1.
   On it ``simulate(inst, "varys")`` (SEBF + MADD + backfilling) ends C1,
   C2, C3 at 8, 4, 1: sum 13, average CCT 13/3, the optimum (exact solver;
   and, independently, the minimum over the 3! completion orders of an
   event LP solved with SciPy). Its schedule is derived by hand below and
   interleaves C1 and C2 on egress 0 in [1, 4] (MADD gives C2 just enough
   to end at 4, backfilling gives C1 the 1/3 left), which no greedy
   priority order does: their best is 14.

What it does not verify. That the reading above is the figure's (it is the
only one reproducing both schedules' numbers by the simulator's fair and
fifo policies, an inference); the figure itself; any model but the fluid one
(e.g. non-preemptible flows, where waiting for an arrival can pay off); any
instance but these; Figure B.2's own instance.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.optimize import linprog

from coflowopt import Coflow, Fabric, Instance, Schedule, ScheduleBuilder, check_feasible, io, solve
from coflowopt.sim import simulate

GAP = Path(__file__).resolve().parents[1] / "instances" / "permutation_gap.json"

Port = tuple[int, int]
READING: tuple[Port, Port, Port, Port] = ((0, 0), (0, 1), (1, 0), (1, 1))  # C1, C2's two, C3


def figure_b1(c1: Port, c2a: Port, c2b: Port, c3: Port) -> Instance:
    return Instance(Fabric.uniform(2), (
        Coflow.from_flows("C1", [(*c1, 1.0)]),
        Coflow.from_flows("C2", [(*c2a, 1.0), (*c2b, 1.0)]),
        Coflow.from_flows("C3", [(*c3, 0.5)], release=1.0),
    ))


def mean_cct(inst: Instance, completion: np.ndarray) -> float:
    return float(np.mean(completion - inst.release))


def unblocked(inst: Instance, s: Schedule, tol: float = 1e-6) -> list[tuple[float, float, list[int]]]:
    """Intervals where an arrived, unfinished flow has spare capacity on both its ports."""
    P = inst.num_ports
    cap = inst.fabric.capacity
    done = s.flow_completion(inst)
    cuts = np.unique(np.concatenate([s.start, s.end, inst.release]))
    out = []
    for t0, t1 in itertools.pairwise(cuts.tolist()):
        if t1 - t0 <= 1e-9 * max(1.0, t1):
            continue
        mid = (t0 + t1) / 2
        on = (s.start <= mid) & (s.end > mid)
        use = np.concatenate([np.bincount(inst.flow_src[s.flow[on]], s.rate[on], minlength=P),
                              np.bincount(inst.flow_dst[s.flow[on]], s.rate[on], minlength=P)])
        full = use >= cap * (1 - tol)
        live = (inst.flow_release <= mid) & (done > mid)
        free = live & ~(full[inst.flow_src] | full[P + inst.flow_dst])
        if free.any():
            out.append((t0, t1, np.flatnonzero(free).tolist()))
    return out


def priority_completions(inst: Instance, order: tuple[int, ...]) -> list[Fraction]:
    """Absolute completions of the priority schedule of ``order``, exactly: at every arrival and
    flow completion each arrived, unfinished flow (coflow by coflow in ``order``, by index
    within one) takes the smaller of what its ingress and egress have left. Every flow ends a
    decision with a saturated port, so the schedule is work-conserving."""
    P = inst.num_ports
    size = [Fraction(float(z)) for z in inst.flow_size]
    rel = [Fraction(float(r)) for r in inst.flow_release]
    rank = {k: i for i, k in enumerate(order)}
    flows = sorted(range(inst.num_flows), key=lambda f: (rank[int(inst.flow_coflow[f])], f))
    left = dict(enumerate(size))
    t, done = Fraction(0), {}
    while left:
        free = [Fraction(1)] * (2 * P)
        rate = {}
        for f in (f for f in flows if f in left and rel[f] <= t):
            a, b = int(inst.flow_src[f]), P + int(inst.flow_dst[f])
            rate[f] = min(free[a], free[b])
            free[a] -= rate[f]
            free[b] -= rate[f]
        steps = [left[f] / r for f, r in rate.items() if r > 0] + [r - t for r in rel if r > t]
        dt = min(steps)
        t += dt
        for f, r in rate.items():
            left[f] -= r * dt
            if left[f] == 0:
                del left[f]
                done[f] = t
    return [max(done[f] for f in range(inst.ptr[k], inst.ptr[k + 1])) for k in range(inst.num_coflows)]


# ---------------------------------------------------------------- 1. the two stated schedules


def test_stated_schedules_on_the_reading() -> None:
    inst = figure_b1(*READING)
    c1, c2a, c2b, c3 = 0, 1, 2, 3  # flow indices
    # (b), per-flow max-min fair: every flow at 1/2 from its arrival to 2
    b = ScheduleBuilder()
    b.add([c1, c2a, c2b], 0.0, 1.0, [0.5, 0.5, 0.5])
    b.add([c1, c2a, c2b, c3], 1.0, 2.0, [0.5, 0.5, 0.5, 0.5])
    fair_by_hand = b.build()
    # (c), C1 then C2 then C3
    b = ScheduleBuilder()
    b.add([c1], 0.0, 1.0, [1.0])
    b.add([c2a, c2b], 1.0, 2.0, [1.0, 1.0])
    b.add([c3], 2.0, 2.5, [1.0])
    fifo_by_hand = b.build()
    for s, ends, mean in ((fair_by_hand, [2.0, 2.0, 2.0], 5 / 3), (fifo_by_hand, [1.0, 2.0, 2.5], 1.5)):
        assert check_feasible(inst, s)
        np.testing.assert_allclose(s.coflow_completion(inst), ends, rtol=1e-12)
        assert abs(mean_cct(inst, s.coflow_completion(inst)) - mean) < 1e-12
        assert unblocked(inst, s) == []  # both are work-conserving
    assert abs((5 / 3) / 1.5 - 1.11) < 0.005  # the text's "1.11x"
    for policy, s in (("fair", fair_by_hand), ("fifo", fifo_by_hand)):
        res = simulate(inst, policy)
        assert res.schedule is not None and check_feasible(inst, res.schedule)
        np.testing.assert_allclose(res.completion, s.coflow_completion(inst), rtol=1e-9)
        assert unblocked(inst, res.schedule) == []


# ---------------------------------------------------------------- 2. the optimum: 7/6, work-conserving


def test_optimum_is_7_6_and_work_conserving() -> None:
    inst = figure_b1(*READING)
    # by hand: C2 first on its two disjoint pairs, then C1 and C3 on theirs
    b = ScheduleBuilder()
    b.add([1, 2], 0.0, 1.0, [1.0, 1.0])
    b.add([0, 3], 1.0, 1.5, [1.0, 1.0])
    b.add([0], 1.5, 2.0, [1.0])
    best = b.build()
    assert check_feasible(inst, best)
    np.testing.assert_allclose(best.coflow_completion(inst), [2.0, 1.0, 1.5], rtol=1e-12)
    assert unblocked(inst, best) == []
    # lower bound by hand: CCT_3 >= 1/2; C1, C2 >= 1 and one of them >= 2 (ingress 0 carries 2)
    assert inst.ingress_load[:, 0].sum() == 2.0  # C1 and C2's 0->1
    lower = Fraction(1, 2) + 1 + 2
    assert Fraction(float(np.sum(best.coflow_completion(inst) - inst.release))) == lower
    assert lower / 3 == Fraction(7, 6) < Fraction(3, 2) < Fraction(5, 3)
    # the project's exact optimum agrees; its schedule is work-conserving too
    res = solve(inst, method="exact")
    assert res.status.value == "optimal"
    assert abs(res.objective - 4.5) < 1e-6  # absolute: 2 + 1 + 1.5
    assert abs(mean_cct(inst, res.completion) - 7 / 6) < 1e-6
    np.testing.assert_allclose(res.completion, [2.0, 1.0, 1.5], atol=1e-6)
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    assert unblocked(inst, res.schedule) == []
    # priority C2, C1, C3 (work-conserving) is optimal; Varys breaks the C1/C2 tie to C1: 4/3
    assert priority_completions(inst, (1, 0, 2)) == [2, 1, Fraction(3, 2)]
    assert abs(mean_cct(inst, simulate(inst, "varys").completion) - 4 / 3) < 1e-9


# ---------------------------------------------------------------- 3. every reading of the text


def test_no_port_assignment_makes_work_conservation_cost() -> None:
    ports = [(s, d) for s in (0, 1) for d in (0, 1)]
    optima, matches = set(), []
    for c1, c2a, c2b, c3 in itertools.product(ports, repeat=4):
        if c2a > c2b:  # C2's two flows are interchangeable
            continue
        inst = figure_b1(c1, c2a, c2b, c3)
        res = solve(inst, method="exact")
        assert res.status.value == "optimal"
        greedy = min(sum(priority_completions(inst, o)) for o in itertools.permutations(range(3)))
        assert abs(res.objective - float(greedy)) <= 1e-6 * float(greedy), (c1, c2a, c2b, c3)
        avg = (greedy - 1) / 3  # CCT: C3 arrives at 1
        optima.add(avg)
        if avg == Fraction(3, 2):  # only where some port must carry 3 units
            assert max(inst.ingress_load.sum(0).max(), inst.egress_load.sum(0).max()) >= 3
        fair = simulate(inst, "fair").completion
        fifo = simulate(inst, "fifo").completion
        if (np.allclose(fair, [2, 2, 2]) and np.isclose(fifo.max(), 2.5)
                and np.isclose(mean_cct(inst, fifo), 1.5)):
            matches.append((c1, c2a, c2b, c3))
    assert optima == {Fraction(7, 6), Fraction(4, 3), Fraction(3, 2), Fraction(5, 3)}
    # the reading is the only one up to relabeling the ingress ports and the egress ports
    orbit = set()
    for si, sd in itertools.product((0, 1), repeat=2):
        c1, c2a, c2b, c3 = (((s ^ si), (d ^ sd)) for s, d in READING)
        orbit.add((c1, *sorted((c2a, c2b)), c3))
    assert set(matches) == orbit and len(orbit) == 4


# ---------------------------------------------------------------- 4. Remark B.3.2


def event_lp_optimum(inst: Instance) -> float:
    """Minimum of sum w_k C_k with every coflow at time 0: over all completion orders, an LP
    with one interval per coflow (lengths tau_j, amounts x_fi of flow f in interval i, none
    after its coflow's interval). Constant rates within an interval lose nothing, so the
    minimum over orders is the optimum."""
    assert not inst.release.any()
    K, F, P = inst.num_coflows, inst.num_flows, inst.num_ports
    best = np.inf
    for order in itertools.permutations(range(K)):
        pos = {k: j for j, k in enumerate(order)}
        cols = [(f, i) for f in range(F) for i in range(pos[int(inst.flow_coflow[f])] + 1)]
        n = K + len(cols)
        c = np.zeros(n)
        for j, k in enumerate(order):
            c[: j + 1] += inst.weight[k]  # C_k = tau_0 + ... + tau_j
        a_ub, b_ub = [], []
        for i in range(K):
            for side, port in itertools.product((0, 1), range(P)):
                row = np.zeros(n)
                row[i] = -inst.fabric.capacity[side * P + port]
                for col, (f, ii) in enumerate(cols):
                    if ii == i and (inst.flow_src, inst.flow_dst)[side][f] == port:
                        row[K + col] = 1.0
                a_ub.append(row)
                b_ub.append(0.0)
        a_eq = np.zeros((F, n))
        for col, (f, _) in enumerate(cols):
            a_eq[f, K + col] = 1.0
        lp = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, A_eq=a_eq, b_eq=inst.flow_size, method="highs")
        assert lp.status == 0
        best = min(best, lp.fun)
    return float(best)


def test_remark_b_3_2_varys_reaches_the_optimum() -> None:
    inst = io.read(GAP)
    # not Figure B.2: three coflows, and no SEBF tie to break
    assert inst.ids == ("C1", "C2", "C3")
    np.testing.assert_allclose(inst.gamma, [6.0, 3.0, 1.0])
    res = simulate(inst, "varys")
    s = res.schedule
    assert s is not None and check_feasible(inst, s)
    np.testing.assert_allclose(res.completion, [8.0, 4.0, 1.0], rtol=1e-9)
    assert abs(float(res.completion.sum()) - 13.0) < 1e-9
    assert abs(mean_cct(inst, res.completion) - 13 / 3) < 1e-9
    # by hand. Flows: C1 0: 1->0 (5), 1: 0->0 (1); C2 2: 1->2 (3), 3: 2->0 (2); C3 4: 0->2 (1).
    # t = 0, SEBF order C3 (1), C2 (3), C1 (6). MADD: C3 gets 0->2 at 1; C2 needs egress 2,
    # now full, and C1 needs ingress 0, now full: nothing. Backfilling, ingress by ingress:
    # on ingress 1 C2's 1->2 finds egress 2 full and C1's 1->0 takes ingress 1 and egress 0
    # whole; on ingress 2 C2's 2->0 then finds egress 0 full. t = 1 (C3 done), order C2 (3),
    # C1 (5). MADD: C2 at 3/3 = 1 and 2/3 to end both flows at 4; C1's 1->0 finds ingress 1
    # full. Backfilling: C1's 0->0 takes the 1/3 left on egress 0 and sends its 1 unit by 4.
    # t = 4: C1's 1->0 sends its last 4 alone, ending at 8.
    want = {(4, 0.0, 1.0, 1.0), (0, 0.0, 1.0, 1.0), (2, 1.0, 4.0, 1.0), (3, 1.0, 4.0, 2 / 3),
            (1, 1.0, 4.0, 1 / 3), (0, 4.0, 8.0, 1.0)}
    got = sorted(zip(s.flow.tolist(), s.start.tolist(), s.end.tolist(), s.rate.tolist(), strict=True))
    assert len(got) == len(want)
    for g, w in zip(got, sorted(want), strict=True):
        assert g[0] == w[0]
        np.testing.assert_allclose(g[1:], w[1:], rtol=1e-9, atol=1e-12)
    # optimal: the exact solver, and an event LP over the 3! completion orders
    opt = solve(inst, method="exact")
    assert opt.status.value == "optimal" and abs(opt.objective - 13.0) < 1e-6
    assert abs(event_lp_optimum(inst) - 13.0) < 1e-7
    # no greedy priority order interleaves C1 and C2 like this: their best is 14
    assert min(sum(priority_completions(inst, o)) for o in itertools.permutations(range(3))) == 14
