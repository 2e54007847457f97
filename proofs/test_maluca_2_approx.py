"""Maluca (Jiang et al., §IV-C.3 and §I): largest load first is 2-approximate offline.

Statement (the paper's words): "We can prove that our largest load first
algorithm for inter-link scheduling is 2-approximate for offline cases since
it is a dense schedule [12]. We skip the detailed proof due to the limited
space." (§IV-C.3); "We further prove our algorithm is 2-approximate when all
access links are identical." (§I); "2-approximate in terms of link
utilization" (abstract).

Reading. Offline: every coflow released at 0 (§III's "all coflows arrive at
the same time"). Identical links: every uplink and downlink has the same
capacity (``Fabric.uniform``). Objective: link utilization is Eq. (10),
total load / (total capacity x L) with ``L = max_k T_k`` the makespan, so for
a fixed instance it is inversely proportional to the makespan and "2-approximate
in link utilization" is "makespan <= 2 x the minimum makespan". Model: the
project's fluid big switch (a flow takes any rate its uplink and downlink
leave). With all releases at 0 the minimum makespan is max over links of
load / capacity (§IV-B: "the net processing time of the heaviest loaded
link"); it is computed here by hand and compared with ``min_makespan``.
The algorithm: the simulator's ``maluca`` (Algorithm 1 with the soft
reservation alpha of §IV-C, default 0.1), invoked as the paper says "whenever
a new coflow arrives in, or an old coflow departs" (``reschedule="coflow"``,
the default; between two coflow events the rates are fixed and a finished
flow's bandwidth stays idle), or also at every flow completion
(``reschedule="flow"``).

What this verifies.

1. The claim fails for Maluca as the paper specifies it (and as the project
   implements it by default), with no release times and identical links,
   and the ratio is unbounded. Witness (2 ports, capacity 1):
   A = {1->1: 1, 0->1: 99}, B = {1->1: 1, 1->0: 100}. OPT = 102 (uplink 1
   carries 1 + 1 + 100). The first decision (derived by hand in
   ``test_literal_maluca_is_not_2_approximate``) gives A's big flow and B's
   big flow 0.2 each; the two small flows finish at 5/3 and 5, but no coflow
   departs, so both big flows crawl at 0.2 until A departs at 495; B ends at
   496. Ratio 496/102 = 248/51 = 4.86 (alpha = 0.1), 397/102 = 3.89
   (alpha = 0, Algorithm 1 alone). The schedule passes ``check_feasible``.
   The family A = {n x 1->1: 1, 0->1: K-1}, B = {n x 1->1: 1, 1->0: K}
   gives both big flows rate 1/(n+1)^2 (alpha = 0), so the makespan is
   (K-1)(n+1)^2 + 1 against OPT = K + 2n: ratio -> (n+1)^2. An exact
   event loop written here from the paper's Algorithm 1 alone (alpha = 0,
   backfilling uplinks by index as line 19 says, not the project's order;
   rationals) gives the same values, so the failure is not in the
   simulator's implementation. What breaks density is the invocation rule:
   after a flow finishes, its links keep their freed bandwidth idle until a
   coflow departs. (Both witnesses were first found by a random local search
   maximizing the ratio on 2-5 ports; the search is not part of this file.)
2. The dense version holds: with ``reschedule="flow"`` the decisions are
   re-made at every flow completion, and hypothesis checks on random offline
   instances with identical links (alpha in {0, 0.1, 0.5}) that the schedule
   is feasible, that it is dense (at every instant each unfinished flow has
   a saturated uplink or downlink), and that makespan <= 2 x OPT. (Dense
   implies the bound in the fluid model: the last flow to finish was
   blocked at every instant by one of its two links, each busy at most
   OPT.) The worst ratio found for this version is the family of
   ``test_dense_maluca_ratio_tends_to_2``: coflow A with m flows i -> i+1 of
   size m-1 and coflow B with m flows i -> 0 of size 1. A has the smaller
   T_k and takes every uplink whole until m-1; B then needs m on downlink 0.
   Makespan 2m-1 against OPT m: ratio 2 - 1/m (alpha = 0), exact in the
   simulator and in the exact loop. So 2 is tight for this version.
   (With alpha = 0.1, m = 2 gives 26/9 against 2.)

What this does not verify. The paper gives no proof ("We skip the detailed
proof due to the limited space") and does not say how [12]'s open-shop dense
schedules carry over to rates. The hypothesis check is a finite search on
small instances, not a proof. The bound for the dense version is argued above,
not checked in general. The counterexample is to the algorithm as read here
(line 15's ``n_j^p`` counts the coflow's flows into downlink j from every
uplink; rates are fixed between coflow events). A reading of line 15 that
counts only the flows on the current uplink was not checked. Neither were
online arrivals nor heterogeneous capacities (for the dense version the
argument above does not need identical links).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.exact.makespan import min_makespan
from coflowopt.sim import simulate

# (src, dst, size) rows per coflow; capacity 1 everywhere
Rows = list[list[tuple[int, int, int]]]

WITNESS: Rows = [[(1, 1, 1), (0, 1, 99)], [(1, 1, 1), (1, 0, 100)]]


def build(ports: int, rows: Rows) -> Instance:
    return Instance(
        Fabric.uniform(ports),
        tuple(Coflow.from_flows(f"c{k}", [(s, d, float(z)) for s, d, z in fl]) for k, fl in enumerate(rows)),
    )


def opt_by_hand(inst: Instance) -> float:
    """Minimum makespan with every flow released at 0: max over links of load / capacity."""
    P = inst.num_ports
    up = np.bincount(inst.flow_src, inst.flow_size, minlength=P) / inst.fabric.ingress
    down = np.bincount(inst.flow_dst, inst.flow_size, minlength=P) / inst.fabric.egress
    return float(max(up.max(), down.max()))


def maluca_makespan(inst: Instance, **params: float | str) -> float:
    res = simulate(inst, "maluca", params=params)
    assert res.schedule is not None
    assert check_feasible(inst, res.schedule)
    return float(res.completion.max())


# ---------------------------------------------------------------- the paper's Algorithm 1, exactly


def algorithm1(rows: Rows, ports: int, *, on_flow_completion: bool) -> Fraction:
    """Makespan of Algorithm 1 of the paper (no soft reservation, capacity 1), in rationals.

    Invoked at time 0 and whenever a coflow departs (and also whenever a flow
    finishes if ``on_flow_completion``); the rates are fixed in between.
    """
    flows = [(k, s, d) for k, fl in enumerate(rows) for s, d, _ in fl]
    rem = [Fraction(z) for fl in rows for _, _, z in fl]
    t = Fraction(0)
    while any(rem):
        rate = decide(flows, rem, ports)
        live = [f for f, r in enumerate(rem) if r]
        finish = {f: rem[f] / rate[f] for f in live if rate[f]}
        if on_flow_completion:
            steps = list(finish.values())
        else:  # a coflow departs when its last unfinished flow does
            steps = [max(finish[f] for f in live if flows[f][0] == k)
                     for k in {flows[f][0] for f in live}
                     if all(f in finish for f in live if flows[f][0] == k)]
        assert steps, "no coflow can depart: Algorithm 1 would never be invoked again"
        dt = min(steps)
        for f in live:
            rem[f] = Fraction(0) if f in finish and finish[f] <= dt else rem[f] - rate[f] * dt
        t += dt
    return t


def decide(flows: list[tuple[int, int, int]], rem: list[Fraction], ports: int) -> list[Fraction]:
    live = [f for f, r in enumerate(rem) if r]
    # line 9: T_k, the coflow's largest remaining load on a link
    load: dict[tuple[int, str, int], Fraction] = {}
    for f in live:
        k, s, d = flows[f]
        load[k, "u", s] = load.get((k, "u", s), Fraction(0)) + rem[f]
        load[k, "d", d] = load.get((k, "d", d), Fraction(0)) + rem[f]
    T = {k: max(v for (j, _, _), v in load.items() if j == k) for k in {flows[f][0] for f in live}}
    # lines 1-5: uplinks by decreasing load, ties by index
    uload = [sum((rem[f] for f in live if flows[f][1] == i), Fraction(0)) for i in range(ports)]
    uplinks = sorted((i for i in range(ports) if uload[i]), key=lambda i: (-uload[i], i))
    left = {(side, i): Fraction(1) for side in "ud" for i in range(ports)}
    rate = [Fraction(0)] * len(flows)
    for i in uplinks:  # lines 10-16: coflows by T_k (ties by index), strict priority
        for k in sorted({flows[f][0] for f in live if flows[f][1] == i}, key=lambda k: (T[k], k)):
            mine = [f for f in live if flows[f][0] == k and flows[f][1] == i]
            before = dict(left)  # B_R as it was at this coflow's turn
            for f in mine:
                d = flows[f][2]
                n_j = sum(1 for g in live if flows[g][0] == k and flows[g][2] == d)
                r = min(before["u", i] / len(mine), before["d", d] / n_j)
                rate[f] += r
                left["u", i] -= r
                left["d", d] -= r
    for i in range(ports):  # lines 18-24: backfilling, uplinks by index (line 19)
        for f in sorted((f for f in live if flows[f][1] == i), key=lambda f: (T[flows[f][0]], f)):
            r = min(left["u", i], left["d", flows[f][2]])
            rate[f] += r
            left["u", i] -= r
            left["d", flows[f][2]] -= r
    return rate


# ---------------------------------------------------------------- 1. the paper's Maluca: not 2-approximate


def test_literal_maluca_is_not_2_approximate() -> None:
    inst = build(2, WITNESS)
    assert inst.fabric.is_uniform and not inst.flow_release.any()
    opt = opt_by_hand(inst)
    assert opt == 102.0  # uplink 1: 1 + 1 + 100
    assert min_makespan(inst).objective == opt
    res = simulate(inst, "maluca")  # alpha 0.1, reschedule "coflow": the paper's invocation rule
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    # First decision, by hand. Uplink 1 (load 102) before uplink 0 (99); T_A = 100 < T_B = 101.
    # Uplink 1, strict pass with budget 0.9: A's 1->1 gets min(0.9 / 1, 1 / 2) = 0.5 (A has two
    # flows into downlink 1); B's two flows get min(0.4 / 2, .) = 0.2 each. Uplink 0: A's 0->1
    # gets min(0.9, 0.3 / 2) = 0.15. Backfilling (uplink 1 first): A's 1->1 +0.1 -> 0.6, then
    # A's 0->1 takes downlink 1's last 0.05 -> 0.2.
    first = res.schedule.start == 0.0
    got = dict(zip(res.schedule.flow[first].tolist(), res.schedule.rate[first].tolist(), strict=True))
    np.testing.assert_allclose([got[f] for f in range(4)], [0.6, 0.2, 0.2, 0.2], rtol=1e-12)
    # the small flows end at 5/3 and 5 but no coflow departs: the big ones crawl at 0.2 until
    # A's 99 is sent at 495; B then sends its last 1 at full rate
    np.testing.assert_allclose(res.completion, [495.0, 496.0], rtol=1e-12)
    assert float(res.completion.max()) / opt > 4.86 > 2  # 248/51
    # Algorithm 1 alone (alpha = 0): 397, in the simulator and in the exact loop
    assert abs(maluca_makespan(inst, alpha=0.0) - 397.0) < 1e-9
    assert algorithm1(WITNESS, 2, on_flow_completion=False) == 397
    # re-deciding at every flow completion, the schedule is dense and optimal here
    assert maluca_makespan(inst, reschedule="flow") <= 2 * opt
    assert algorithm1(WITNESS, 2, on_flow_completion=True) == 102


def test_literal_maluca_ratio_is_unbounded() -> None:
    K = 100
    for n in range(1, 5):
        rows: Rows = [[(1, 1, 1)] * n + [(0, 1, K - 1)], [(1, 1, 1)] * n + [(1, 0, K)]]
        inst = build(2, rows)
        want = (K - 1) * (n + 1) ** 2 + 1
        assert opt_by_hand(inst) == K + 2 * n
        assert algorithm1(rows, 2, on_flow_completion=False) == want
        assert abs(maluca_makespan(inst, alpha=0.0) - want) <= 1e-9 * want
        assert maluca_makespan(inst) / (K + 2 * n) > 2  # the default alpha = 0.1 too
    assert want / (K + 2 * n) > 22  # n = 4: 2476 / 108


# ---------------------------------------------------------------- 2. re-decided at flow completions: dense


@st.composite
def offline_uniform(draw: st.DrawFn) -> Instance:
    """Random instances, every coflow released at 0, every link of one capacity (as
    ``tests/strategies.instances(releases=False, uniform=True)``, which plain ``pytest``
    cannot import from here)."""
    P = draw(st.integers(1, 4))
    cap = draw(st.sampled_from([1.0, 2.0]))
    coflows = []
    for k in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 4))
        ports = st.lists(st.integers(0, P - 1), min_size=n, max_size=n)
        sizes = st.lists(st.floats(0.1, 10.0, allow_nan=False), min_size=n, max_size=n)
        coflows.append(Coflow(f"c{k}", draw(ports), draw(ports), draw(sizes)))
    return Instance(Fabric.uniform(P, cap), tuple(coflows))


def assert_dense(inst: Instance, start: np.ndarray, end: np.ndarray, flow: np.ndarray,
                 rate: np.ndarray, done: np.ndarray) -> None:
    """At every instant each unfinished flow has a saturated uplink or downlink."""
    P = inst.num_ports
    cap = inst.fabric.capacity
    cuts = np.unique(np.concatenate([start, end]))
    for t0, t1 in itertools.pairwise(cuts.tolist()):
        if t1 - t0 <= 1e-9 * max(1.0, t1):
            continue
        mid = (t0 + t1) / 2
        on = (start <= mid) & (end > mid)
        use = np.bincount(inst.flow_src[flow[on]], rate[on], minlength=P)
        use = np.concatenate([use, np.bincount(inst.flow_dst[flow[on]], rate[on], minlength=P)])
        full = use >= cap * (1 - 1e-6)
        blocked = full[inst.flow_src] | full[P + inst.flow_dst]
        assert blocked[done > mid].all(), (t0, t1)


@settings(max_examples=80, deadline=None)
@given(inst=offline_uniform(),
       alpha=st.sampled_from([0.0, 0.1, 0.5]))
def test_dense_maluca_is_2_approximate(inst: Instance, alpha: float) -> None:
    opt = opt_by_hand(inst)
    assert abs(min_makespan(inst).objective - opt) <= 1e-9 * opt
    res = simulate(inst, "maluca", params={"alpha": alpha, "reschedule": "flow"})
    s = res.schedule
    assert s is not None and check_feasible(inst, s)
    assert_dense(inst, s.start, s.end, s.flow, s.rate, res.flow_completion)
    assert float(res.completion.max()) <= 2 * opt * (1 + 1e-9)


def test_dense_maluca_ratio_tends_to_2() -> None:
    for m in range(2, 7):
        rows: Rows = [[(i, i + 1, m - 1) for i in range(m)], [(i, 0, 1) for i in range(m)]]
        inst = build(m + 1, rows)
        assert opt_by_hand(inst) == m  # every uplink m-1 + 1, downlink 0: m x 1
        assert algorithm1(rows, m + 1, on_flow_completion=True) == 2 * m - 1
        got = maluca_makespan(inst, alpha=0.0, reschedule="flow")
        assert abs(got - (2 * m - 1)) <= 1e-9 * m
    # with the soft reservation B gets 0.1 of each uplink from the start: 26/9 for m = 2
    two = build(3, [[(0, 1, 1), (1, 2, 1)], [(0, 0, 1), (1, 0, 1)]])
    assert abs(maluca_makespan(two, reschedule="flow") - 26 / 9) < 1e-9
