"""Dissertation Appendix C.1, Theorem C.1.1: schedulers that do not coordinate are Omega(sqrt(n)) off.

Statement (the dissertation's words): "Any coflow scheduling algorithm where
schedulers do not coordinate, has a worst-case approximation ratio of
Omega(sqrt(n)) for n concurrent coflows." Proof sketch, abridged: m <= n
ports; "for all coflows C_k, k in [1, m], let d^k_{k,m-k+1} = 1" (one unit
flow each); the other coflows "have exactly k flows that engage all input
and output ports" (it must mean m flows): "for all coflows C_k, k in
[m+1, n], let d^k_{i,m-i+1} = 1 for all i in [1, m]". "We have constructed an
instance of distributed order scheduling, where n orders must be scheduled
on m facilities [155]. The proof follows from [155, Theorem 5.1]." ([155] is
a paper on distributed order scheduling; it is not used here.)

The family F(m, n). Ports 0-based: ingress i -> egress m-1-i, unit
capacities, all coflows at time 0, objective the sum (average) of CCTs (the
chapter's objective; the theorem does not name one). w = n - m "wide"
coflows. ``instances/examples/dissertation_c_1_1_uncoordinated_m3_n6.json``
is F(3, 6) (checked). The m flows' port pairs (i, m-1-i) are disjoint: ingress
i and egress m-1-i carry nothing else. So the fabric is m independent unit
links ("pairs"), pair p carrying w + 1 unit flows: the singleton C_{p+1} and
one flow of every wide coflow. (No test checks this instance's values: only
``tests/test_instances.py`` loads it, as it loads every instance file.)

(i) The coordinated optimum, OPT(m, n) = m - 1 + (w+1)(w+2)/2. Reached by
singletons first on every pair (end 1), then the wide coflows in one common
order (end 2, ..., w+1): m + (2 + ... + (w+1)). Lower bound: on one pair the
w + 1 unit jobs end, in the fluid model too, at times whose sum is at least
1 + ... + (w+1) (the j-th to end needs j units through the pair), so for
every pair p, C_{p+1} + W >= (w+1)(w+2)/2 with W the wide coflows' sum;
averaging over p and adding (1 - 1/m) sum_p C_{p+1} >= m - 1 gives the sum
>= m - 1 + (w+1)(w+2)/2. Checked: equal to ``solve(method="exact")`` on 17
members (n <= 13), to the simulator's ``static-order`` with singletons first
(also at m = 88, n = 100), and the example file's 12 (m = 3, n = 6).

(ii) Uncoordinated schedulers, the class checked. A scheduler for pair p
sees only its own flows: their labels (coflow ids; they may be global names,
so "FIFO by arrival" and "by id" are allowed), sizes (all 1), releases (all
0), what it has sent so far, its own index p, m and n, and private random
bits; not the other pairs' flows, hence not a coflow's width. Its rates may
be anything (priorities, sharing, idling). The "labeling" is which labels
are the singletons and at which pair. Lemma (proved here by hand; the code
checks instances of it): for any such rule, over a uniformly random labeling
of n labels, the expected sum of CCTs is at least
L(m, w) = m(w+2)/2 + w(w+1)/2, so some labeling costs at least that. Proof:
given the label set V_p pair p sees, its whole trajectory is fixed (up to its
random bits) and the singleton is uniform over V_p (exchangeability of the
random roles), so its expected CCT is the average of the w + 1 local
completions, >= (w+2)/2; and the w wide flows at pair 0 alone end at times
summing to >= 1 + ... + w = w(w+1)/2.

So the worst-case ratio of every uncoordinated scheduler on F(m, n) is at
least L / OPT. **Regime**: the ratio grows like sqrt(n) when the number of
*wide* coflows is about sqrt(n), w = n - m ~ sqrt(2n), i.e. m = n - O(sqrt(n))
ports, *not* for m ~ sqrt(n): then w ~ n and every work-conserving
scheduler (which ends every coflow by w + 1) is within n(w+1)/OPT -> 2 of
the optimum, and L/OPT -> 1. At w = isqrt(2n), exact rationals:

| n | w | m | OPT | L | L/OPT | L/OPT/sqrt(n) | FIFO by label, worst labeling | random orders, mean |
|---|---|---|---|---|---|---|---|---|
| 10 | 4 | 6 | 20 | 28 | 1.400 | 0.443 | 2.000 | 1.837 |
| 100 | 14 | 86 | 205 | 793 | 3.868 | 0.387 | 6.805 | 4.380 |
| 1000 | 44 | 956 | 1990 | 22978 | 11.547 | 0.365 | 22.116 | 12.044 |
| 10^4 | 141 | 9859 | 20011 | 714929.5 | 35.727 | 0.357 | 70.461 | |
| 10^5 | 447 | 99553 | 200128 | 22449776.5 | 112.177 | 0.355 | 223.356 | |
| 10^6 | 1414 | 998586 | 2000405 | 707999293 | 353.928 | 0.354 | 706.857 | |

L/OPT/sqrt(n) -> 1/(2 sqrt 2) = 0.3536. With m = isqrt(n) the same columns
give L/OPT = 1.092, 1.086, 1.030, 1.010, 1.003, 1.001 and the
work-conserving ceiling n(w+1)/OPT = 2.11, 2.17, 2.06, 2.02, 2.01, 2.00. On
the family Theta(sqrt(n)) is also the most a work-conserving scheduler can
lose: n(w+1)/OPT <= 0.8 sqrt(n) at these w (-> 1/sqrt(2)), which FIFO by
label with the singletons labelled last attains: m(w+1) + w(w+1)/2.

What this verifies.

1. F(3, 6) is the example file; OPT's closed form against the exact solver
   and a simulated schedule (above).
2. Uncoordinated rules in the simulator, each pair's order computed from its
   own label set only and served by per-pair priority (a custom priority
   policy; greedy order-preserving rates, so coupled ports would be handled,
   here they are independent): FIFO by label with the singletons labelled
   last = the simulator's ``fifo`` = m(w+1) + w(w+1)/2 (m = 3, n = 6: 15;
   m = 88, n = 100: 1222 against OPT 178); random local orders = the direct
   computation (a singleton ends at its position, a wide coflow at its
   largest position); per-flow ``fair`` (each pair shared equally, a local
   rule) ends everything at w + 1: n(w+1) (the example file's 24).
3. The lemma exhaustively for every deterministic local priority rule that
   is the same function of the label set at every pair, with n labels and
   every labeling: (n, m) = (3, 2), (4, 3), (4, 2), (5, 4) (8, 64, 1296 and
   1024 rules x 6, 24, 12 and 120 labelings). Over the labelings the
   singletons' mean sum is exactly m(w+2)/2, the mean >= L and the worst >=
   the mean; the best rule's worst case is 5, 7, 9, 8 against OPT 4, 5, 7,
   6; for FIFO by label the worst labeling costs m(w+1) + w(w+1)/2
   (singletons labelled last).
4. Random local orders (each pair an independent uniform order): expected
   sum m(w+2)/2 + w * sum_{t=0..w} (1 - (t/(w+1))^m), checked against
   enumeration of all order tuples for (m, w) = (2, 1), (3, 1), (2, 2),
   (3, 2).
5. The table (exact rationals): L/OPT at w = isqrt(2n) grows by about
   sqrt(10) per decade, L/OPT/sqrt(n) stays in [0.35, 0.45] and tends to
   1/(2 sqrt 2); with m = isqrt(n) every work-conserving scheduler stays
   within 2.2 and L/OPT within 1.1.

What this does not verify. "Any algorithm without coordination" is a
quantifier over all algorithms in an informal model; code checks finitely
many rules (3, 4 above: every deterministic priority rule common to all pairs
on n <= 5 labels; particular rules at larger sizes). The general statement
rests on the lemma's hand proof, valid for the class defined in (ii): it
excludes schedulers that learn about other pairs (network feedback, a shared
clock-based protocol seeded by global information about the coflows,
periodic coordination as in Aalo), online arrivals, and rules that know which
labels are wide (that is coordination). The cited Theorem 5.1 of [155] and
its model are not checked; nor that Omega(sqrt(n)) is tight for uncoordinated
schedulers on all instances (only on this family, where every
work-conserving rule is within about 0.71 sqrt(n)).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from fractions import Fraction
from math import isqrt, sqrt
from pathlib import Path

import numpy as np

from coflowopt import Coflow, Fabric, Instance, check_feasible, io, solve
from coflowopt.sim import Allocation, Policy, SimView, simulate
from coflowopt.sim.policies._base import NoParams

EXAMPLE = (Path(__file__).resolve().parents[1] / "instances" / "examples"
           / "dissertation_c_1_1_uncoordinated_m3_n6.json")


def family(m: int, n: int, *, singletons_last: bool = False) -> Instance:
    """F(m, n): coflow k < m is the singleton on pair k (ingress k -> egress m-1-k), the
    others have a unit flow on every pair; ``singletons_last`` lists the wide ones first."""
    single = [[(k, m - 1 - k, 1.0)] for k in range(m)]
    wide = [[(i, m - 1 - i, 1.0) for i in range(m)] for _ in range(n - m)]
    rows = wide + single if singletons_last else single + wide
    return Instance(Fabric.uniform(m), tuple(Coflow.from_flows(f"c{k + 1}", r) for k, r in enumerate(rows)))


def opt(m: int, w: int) -> Fraction:
    return m - 1 + Fraction((w + 1) * (w + 2), 2)


def local_bound(m: int, w: int) -> Fraction:
    """L(m, w): what any uncoordinated rule costs on average over the labelings."""
    return Fraction(m * (w + 2), 2) + Fraction(w * (w + 1), 2)


def fifo_worst(m: int, w: int) -> int:
    return m * (w + 1) + w * (w + 1) // 2


def random_orders(m: int, w: int) -> Fraction:
    """Expected sum with an independent uniform order on every pair."""
    largest = sum((1 - Fraction(t, w + 1) ** m for t in range(w + 1)), Fraction(0))
    return Fraction(m * (w + 2), 2) + w * largest


# ---------------------------------------------------------------- an uncoordinated scheduler


LocalRule = Callable[[int, tuple[int, ...]], Sequence[int]]
"""(pair index, labels of the coflows with a flow at the pair) -> those labels in priority order."""


class LocalPriority(Policy):
    """Each ingress port serves its own flows in the order its rule gives from its own
    label set; the engine's greedy order-preserving rates couple the ports."""

    name = "local-priority"
    clairvoyant = False
    priority = True
    Params = NoParams

    def __init__(self, rule: LocalRule) -> None:
        super().__init__(NoParams())
        self.rule = rule

    def start(self, view: SimView) -> None:
        self.on_flow_completion = False  # the engine re-runs the greedy rates at completions
        self.rank: dict[tuple[int, int], int] = {}
        seen: dict[int, list[int]] = {}
        for k in range(view.num_coflows):  # all released at 0 here: the whole local view
            for f in view.all_flows_of(k).tolist():
                seen.setdefault(int(view.link_a[f]), []).append(k)
        for port, labels in seen.items():  # the rule sees its own port's labels only
            for pos, k in enumerate(self.rule(port, tuple(sorted(labels)))):
                self.rank[port, k] = pos

    def decide(self, view: SimView) -> Allocation:
        keyed = [((self.rank[int(view.link_a[f]), k], f), f)
                 for k in view.active_coflows for f in view.flows_of(k).tolist()]
        return Allocation(order=np.array([f for _, f in sorted(keyed)], dtype=np.int64))


def sum_cct(inst: Instance, scheduler: str | Policy) -> float:
    res = simulate(inst, scheduler)
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    return float(res.completion.sum())


# ---------------------------------------------------------------- 1. the family and its optimum


def test_example_file_is_the_family_and_its_optimum() -> None:
    ex, f = io.read(EXAMPLE), family(3, 6)
    assert ex.fabric == f.fabric and [c.id for c in ex.coflows] == [c.id for c in f.coflows]
    for a in ("flow_src", "flow_dst", "flow_size", "flow_coflow", "flow_release"):
        assert np.array_equal(getattr(ex, a), getattr(f, a))
    assert solve(ex, method="exact").objective == opt(3, 3) == 12  # the file's notes
    assert sum_cct(ex, "fair") == 24.0  # per-pair sharing: all end at w + 1 = 4


def test_optimum_closed_form() -> None:
    members = [(1, 1), (1, 3), (2, 2), (2, 4), (2, 5), (3, 5), (3, 7), (4, 6), (4, 8), (5, 7),
               (3, 8), (5, 10), (6, 9), (6, 10), (7, 10), (8, 11), (10, 13)]
    for m, n in members:
        res = solve(family(m, n), method="exact")
        assert res.status.name == "OPTIMAL" and abs(res.objective - opt(m, n - m)) < 1e-9, (m, n)
    for m, n in [*members, (88, 100)]:  # singletons first, then one common order
        assert sum_cct(family(m, n), "static-order") == opt(m, n - m)


# ---------------------------------------------------------------- 2. uncoordinated rules simulated


def test_uncoordinated_rules_in_the_simulator() -> None:
    for m, n in [(3, 6), (4, 8), (6, 10), (88, 100)]:
        w = n - m
        worst = family(m, n, singletons_last=True)
        by_label = LocalPriority(lambda _p, labels: labels)  # FIFO by arrival, ties by label
        assert sum_cct(worst, by_label) == sum_cct(worst, "fifo") == fifo_worst(m, w)
        assert sum_cct(family(m, n), "fair") == n * (w + 1)
        rng = random.Random(m * n)
        for _ in range(3):
            orders = {p: rng.sample(range(n), n) for p in range(m)}  # each pair's own shuffle

            def shuffled(p: int, labels: tuple[int, ...], orders: dict[int, list[int]] = orders
                         ) -> list[int]:
                return [k for k in orders[p] if k in labels]

            pos = {(p, k): i + 1 for p in range(m) for i, k in enumerate(shuffled(p, (p, *range(m, n))))}
            direct = sum(pos[k, k] for k in range(m)) + sum(max(pos[p, k] for p in range(m))
                                                            for k in range(m, n))
            assert sum_cct(family(m, n), LocalPriority(shuffled)) == direct
    assert fifo_worst(88, 12) == 1222 and opt(88, 12) == 178


# ---------------------------------------------------------------- 3. every deterministic priority rule


def labelings(n: int, m: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(wide labels, the singleton label of each pair)."""
    out = []
    for wide in itertools.combinations(range(n), n - m):
        rest = [x for x in range(n) if x not in wide]
        out.extend((wide, s) for s in itertools.permutations(rest))
    return out


def cost(rule: dict[tuple[int, ...], tuple[int, ...]], wide: tuple[int, ...],
         single: tuple[int, ...]) -> tuple[int, int]:
    """Sum of CCTs and the singletons' part, each pair serving its label set in ``rule``'s order."""
    singles, end = 0, dict.fromkeys(wide, 0)
    for s in single:
        order = rule[tuple(sorted((*wide, s)))]
        singles += order.index(s) + 1
        for x in wide:
            end[x] = max(end[x], order.index(x) + 1)
    return singles + sum(end.values()), singles


def test_every_deterministic_local_priority_rule() -> None:
    best_worst = {}
    for n, m in [(3, 2), (4, 3), (4, 2), (5, 4)]:
        w = n - m
        views = list(itertools.combinations(range(n), w + 1))
        labs = labelings(n, m)
        best = None
        for choice in itertools.product(*(list(itertools.permutations(v)) for v in views)):
            rule = dict(zip(views, choice, strict=True))
            vals = [cost(rule, wide, single) for wide, single in labs]
            assert Fraction(sum(s for _, s in vals), len(vals)) == Fraction(m * (w + 2), 2)
            mean = Fraction(sum(v for v, _ in vals), len(vals))
            worst = max(v for v, _ in vals)
            assert worst >= mean >= local_bound(m, w)
            best = worst if best is None else min(best, worst)
            if all(o == v for o, v in zip(choice, views, strict=True)):  # FIFO by label
                assert worst == fifo_worst(m, w)  # singletons labelled last is a worst labeling
        best_worst[n, m] = (best, opt(m, w))
    assert best_worst == {(3, 2): (5, 4), (4, 3): (7, 5), (4, 2): (9, 7), (5, 4): (8, 6)}


# ---------------------------------------------------------------- 4. random local orders


def test_random_local_orders_expectation() -> None:
    for m, w in [(2, 1), (3, 1), (2, 2), (3, 2)]:
        # pair p serves its singleton (label -1) and the wide labels 0..w-1 in a uniform order
        items = (-1, *range(w))
        total, count = Fraction(0), 0
        for orders in itertools.product(itertools.permutations(items), repeat=m):
            total += sum(o.index(-1) + 1 for o in orders)
            total += sum(max(o.index(x) + 1 for o in orders) for x in range(w))
            count += 1
        assert total / count == random_orders(m, w)
        assert random_orders(m, w) >= local_bound(m, w)


# ---------------------------------------------------------------- 5. the ratio grows like sqrt(n)


def test_ratio_grows_like_sqrt_n_with_about_sqrt_n_wide_coflows() -> None:
    table = {}
    for e in range(1, 7):
        n = 10**e
        w = isqrt(2 * n)
        m = n - w
        ratio = local_bound(m, w) / opt(m, w)
        fifo = fifo_worst(m, w) / opt(m, w)
        rand = random_orders(m, w) / opt(m, w) if n <= 1000 else None
        table[n] = (w, opt(m, w), local_bound(m, w), ratio, fifo, rand)
        assert 0.35 <= float(ratio) / sqrt(n) <= 0.45
        assert float(ratio) / sqrt(n) > 1 / (2 * sqrt(2))
        assert local_bound(m, w) <= fifo_worst(m, w) <= n * (w + 1) <= 0.8 * sqrt(n) * opt(m, w)
        assert rand is None or ratio <= rand <= fifo
        # the other regime, m ~ sqrt(n): no growth
        m2 = isqrt(n)
        w2 = n - m2
        assert n * (w2 + 1) / opt(m2, w2) <= 2.2 and local_bound(m2, w2) / opt(m2, w2) <= 1.1
    ratios = [float(table[10**e][3]) for e in range(1, 7)]
    growth = [b / a for a, b in itertools.pairwise(ratios)]
    assert all(2.7 < g < 3.2 for g in growth)  # sqrt(10) = 3.16 per decade, from below
    assert abs(ratios[-1] / 1000 - 1 / (2 * sqrt(2))) < 1e-3
    assert table[100][:3] == (14, 205, 793) and table[10**6][:3] == (1414, 2000405, 707999293)
    assert [round(float(table[10**e][4]), 3) for e in range(1, 7)] == [
        2.0, 6.805, 22.116, 70.461, 223.356, 706.857]
    assert [round(float(table[10**e][5]), 3) for e in range(1, 4)] == [1.837, 4.380, 12.044]
