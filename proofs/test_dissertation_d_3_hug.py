"""Dissertation Appendix D.3: properties of HUG (Lemma D.3.1 to Lemma D.3.6).

Statements (the dissertation's words, abridged).

- Lemma D.3.1: "Any work conservation policy that assigns spare resources
  such that the allocation of a coflow in any link including the spare can
  be more than its allocated resource on the bottleneck link based on its
  reported correlation vector is not strategyproof." Sketch: C_A of Figure
  7.4 (d_A = <1/2, 1>, d_B = <1, 1/6>) reports <1/2 + eps, 1>, gets
  <(1/2+eps)/(3/2+eps), 1/(3/2+eps)>, and with delta more of link 2 its
  progress min((1+2eps)/(3/2+eps), 1/(3/2+eps) + delta) beats the truthful
  2/3 "as long as eps < (3/2 delta)/(2/3 - delta) (if delta >= 2/3, we have
  no constraint on eps)". Corollary D.3.2: "Optimal isolation guarantee
  allocations cannot always be work-conserving even in the presence of
  elastic-demand applications."
- Theorem D.3.3: "Algorithm 6 [HUG] is strategyproof." Sketch: with b the
  system bottleneck (D_b = sum_k d_bk largest), a liar either keeps b a
  bottleneck (case 1: if d'_bk <= d_bk its share of b falls and b has no
  spare; if d'_bk > d_bk everyone's first-stage progress falls and the
  second stage caps it there) or moves it to b' (case 2: if D'_b' <= D_b its
  allocation on b is no larger than before; if D'_b' > D_b progress falls
  and the cap holds it). Examples: d'_1A = 1/4 gives C_A 1/5 of link 1 and
  progress 2/5; d'_1A = 1 gives everybody 1/2 and C_A 1/2 of link 2.
- Corollary D.3.4: "Algorithm 6 maximizes isolation guarantee, i.e., the
  minimum progress across coflows."
- Theorem D.3.5: "Algorithm 6 achieves the highest resource utilization
  among all strategyproof algorithms that provide optimal isolation
  guarantee among coflows." Sketch: "Follows from Lemma D.3.1 and Theorem
  D.3.3."
- Lemma D.3.6: "Under some cases, DRF may have utilization arbitrarily close
  to 0, and HUG helps improve the utilization to 1": K links, N coflows,
  each with demand 1 on link 1 and eps on the others; DRF gives
  (1 + (K-1) eps) / K -> 0, HUG 1/N of every link, utilization 1.

Model. The project's ``hug`` (non-cooperative, stage 2 ``local``): DRF on the
reports, P* = 1 / max_l sum_k d_kl (unit weights, unbounded demands), then
each link's spare shared max-min among the elastic coflows using it, none
above P* of any link. Progress and consumption as in the D.2 checks
(``test_dissertation_d_2_work_conservation_lemmas.py``): progress under the
true vector; elastic coflows consume their allocation on the links they
use, inelastic ones P_k d_k. A reference HUG is written here in ``Fraction``
arithmetic from those definitions (the cap makes stage 2 one water-filling
per link) and every project allocation below is compared to it exactly.

What this verifies.

1. D.3.1 on its example: the eps-lie gives C_A exactly the stated
   allocation (<3/8, 5/8> at eps = 1/10), and with delta added on link 2
   its progress is the stated min and beats 2/3 exactly when the stated
   condition holds (both outcomes occur on the eps x delta grid; delta = 0,
   HUG's cap, never gains). Each project rule that lets C_A exceed its
   dominant share (``drf+highest``, ``+equal``, ``+proportional``,
   cooperative HUG) hands it such a delta (13/48, 13/96, 13/56, 13/96 at
   eps = 1/10) and the lie pays, 2/3 -> 3/4; under HUG it costs (5/8).
   The lemma holds on this example; "any policy" is an argument by this
   one example (not checked beyond it).
2. D.3.2 holds: on Figure D.1 (C_C = <1, 0> added) HUG keeps P* = 2/5 and
   can fill only 4/5 of link 2 (A and B each capped at 2/5) while A and B,
   elastic, use link 2: 1/5 idle. Filling it (cooperative HUG, every
   ``drf+`` rule but ``lowest_any``) keeps 2/5 but each of these admits a
   lie (search). On Figure 7.4 HUG fills both links: "not always" is right.
3. D.3.3, bounded check, holds: (a) the dissertation's two examples (1/5 and 2/5;
   1/2, 1/2); (b) every report <j/24, 1>, <1, j/24> of every coflow of the
   four two-link examples, and (c) every report <j/12, 1>, <1, j/12> on
   hypothesis instances (2-3 coflows, 2 links, rational demands, elastic
   or not): the liar's true progress never exceeds P*, and the proof's
   intermediate claims hold in the case it falls in (case 1 with
   d'_bk <= d_bk: its share of b does not grow and b has no spare; case 1
   with d'_bk > d_bk and case 2 with D'_b' > D_b: P*' <= P* and no share
   above P*'; case 2 with D'_b' <= D_b: its share of b does not grow), all
   four cases occurring on the examples; (d) ``lie_search`` (structured
   lies, a grid for <= 3 links, random reports, pattern search) finds no
   lie on hypothesis instances with 2-3 coflows and 2-4 links.
4. D.3.4 holds on the same instances: HUG's isolation guarantee is P*
   (every coflow progresses exactly P*), the largest possible (any
   allocation with min progress t puts t sum_k d_kl <= 1 on each link l, so
   t <= P*), and no project mechanism has a larger one.
5. D.3.5, what is checkable: HUG's utilization equals, exactly, the largest
   utilization of any allocation with the optimal guarantee that keeps
   every coflow at most P* of each link, sum_l min(1, P* (number of
   elastic users of l + sum over inelastic k of d_kl)) (each link is
   independent: an elastic coflow holds between P* d_kl and P*, an
   inelastic one consumes P* d_k), which is >= DRF's; the LP stage 2 gives
   the same. On the dissertation's four examples every project mechanism with a
   higher utilization than HUG either has a lower isolation guarantee
   (PS-P, equal sharing) or admits a lie (the ``drf+`` rules, cooperative
   HUG). Not verified: that *every* strategy-proof mechanism with the
   optimal guarantee is bound by that cap. The dissertation's proof ("follows from
   Lemma D.3.1 and Theorem D.3.3") rests on D.3.1, which shows one exploit
   on one example for rules that always exceed the cap; a mechanism that
   exceeds it only where no lie can profit is not excluded by anything
   checked here, nor by the sketch.
6. D.3.6 holds: for (K, N, eps) in a few cases DRF gives 1/N of link 1 and
   eps/N of the others, utilization fraction (1 + (K-1) eps)/K exactly,
   HUG 1/N of every link and 1; both keep the guarantee 1/N; with K = 2000,
   eps = 10^-6 DRF's fraction is below 1/1000.

What this does not verify. Strategy-proofness in general: the checks are
bounded (two-link grids of resolution 12 and 24, three- and four-link
instances only by the lie search, small instances, unit weights and no
demand bounds); the proof sketch itself is not formalised. Cooperative HUG
is checked only as a non-strategy-proof contrast.
"""

from __future__ import annotations

from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt.fairness import (
    MECHANISMS,
    FairnessProblem,
    allocate,
    drf,
    evaluate,
    hug,
    lie_search,
    load_problem,
    progress,
)

ROOT = Path(__file__).resolve().parents[1] / "instances" / "fairness"
EXAMPLES = ["hug_two_coflows_elastic", "hug_two_coflows_inelastic",
            "hug_three_coflows_elastic", "hug_three_coflows_inelastic"]
VECTOR_MECHANISMS = [m for m, mech in MECHANISMS.items() if not mech.needs_flows]
D_A, D_B = [F(1, 2), F(1)], [F(1), F(1, 6)]


def example(name: str) -> FairnessProblem:
    return load_problem(ROOT / f"{name}.json", exact=True)


def rows(matrix) -> list[list[F]]:
    return [list(r) for r in matrix]


# ------------------------------------------------------------------ the reference, in Fractions


def normalised(v: list[F]) -> list[F]:
    top = max(v)
    return [x / top for x in v]


def ref_progress(a: list[F], d: list[F]) -> F:
    return min(x / y for x, y in zip(a, d, strict=True) if y > 0)


def ref_level(d: list[list[F]]) -> F:
    """P* = 1 / max_l sum_k d_kl: DRF's (and HUG's) isolation guarantee."""
    return 1 / max(sum(col) for col in zip(*d, strict=True))


def water_fill(total: F, caps: dict[int, F]) -> dict[int, F]:
    """Max-min split of ``total`` among ``caps``' keys, none above its cap."""
    out, left = {}, total
    order = sorted(caps, key=caps.__getitem__)
    for i, k in enumerate(order):
        out[k] = min(caps[k], left / (len(order) - i))
        left -= out[k]
    return out


def ref_hug(d: list[list[F]], elastic: list[bool]) -> tuple[F, list[list[F]]]:
    """HUG: a_k = P* d_k, then each link's spare shared max-min among its elastic users, each
    holding at most P* of the link."""
    level = ref_level(d)
    a = [[level * x for x in r] for r in d]
    for link in range(len(d[0])):
        users = {k: level - a[k][link] for k in range(len(d)) if elastic[k] and d[k][link] > 0}
        for k, x in water_fill(1 - sum(r[link] for r in a), users).items():
            a[k][link] += x
    return level, a


def ref_max_utilization(d: list[list[F]], elastic: list[bool]) -> F:
    """The largest utilization with every coflow at progress P* and at most P* of any link."""
    level = ref_level(d)
    return sum(min(F(1), level * sum(F(1) if elastic[k] else d[k][link]
                                     for k in range(len(d)) if d[k][link] > 0))
               for link in range(len(d[0])))


def truth_of(prob: FairnessProblem) -> tuple[list[list[F]], list[bool]]:
    return rows(prob.vectors), [bool(x) for x in prob.elastic]


# ------------------------------------------------------------------ instances


@st.composite
def problems(draw: st.DrawFn, *, links: tuple[int, int] = (2, 4)) -> FairnessProblem:
    """2-3 coflows on 2-4 unit links, rational demands (denominators <= 12), elastic or not."""
    M = draw(st.integers(2, 3))
    L = draw(st.integers(*links))
    entry = st.fractions(min_value=0, max_value=1, max_denominator=12)
    vectors = []
    for _ in range(M):
        row = draw(st.lists(entry, min_size=L, max_size=L))
        if not any(row):
            row[draw(st.integers(0, L - 1))] = F(1)
        vectors.append(normalised(row))
    el = draw(st.lists(st.booleans(), min_size=M, max_size=M))
    prob = FairnessProblem(np.array(vectors, dtype=object), elastic=np.array(el), exact=True)
    assert rows(prob.vectors) == vectors  # the project normalises as we do
    return prob


# ------------------------------------------------------------------ D.3.1, D.3.2


def test_lemma_d_3_1_allocation_after_a_small_lie() -> None:
    eps = F(1, 10)
    lie = example("hug_two_coflows_elastic").with_vector("A", [F(1, 2) + eps, 1])
    a = drf(lie)
    assert list(a.allocation[0]) == [(F(1, 2) + eps) / (F(3, 2) + eps), 1 / (F(3, 2) + eps)]
    assert list(a.allocation[0]) == [F(3, 8), F(5, 8)]
    # its link-1 share (3/8) already exceeds the truthful 1/3
    assert a.allocation[0, 0] > F(1, 3) == drf(example("hug_two_coflows_elastic")).allocation[0, 0]


def stated_condition(eps: F, delta: F) -> bool:
    """Lemma D.3.1's: the lie pays iff delta > 0 and (delta >= 2/3 or eps < (3/2) delta / (2/3 - delta))."""
    return delta > 0 and (delta >= F(2, 3) or eps < F(3, 2) * delta / (F(2, 3) - delta))


def test_lemma_d_3_1_any_share_above_the_dominant_one_invites_the_lie() -> None:
    truth = example("hug_two_coflows_elastic")
    outcomes = set()
    for eps in (F(1, 100), F(1, 20), F(1, 10), F(1, 4), F(1, 2)):
        a = drf(truth.with_vector("A", [F(1, 2) + eps, 1])).allocation
        assert list(a[0]) == [(F(1, 2) + eps) / (F(3, 2) + eps), 1 / (F(3, 2) + eps)]
        spare = 1 - a[:, 1].sum()
        assert spare == 1 - F(7, 6) / (F(3, 2) + eps)
        for delta in (F(0), F(1, 100), F(1, 20), F(1, 10), F(1, 5), F(2, 9)):
            assert delta <= spare  # a feasible policy could hand it out
            b = a.copy()
            b[0, 1] += delta
            got = progress(b, truth)[0]
            assert got == min((1 + 2 * eps) / (F(3, 2) + eps), 1 / (F(3, 2) + eps) + delta)
            assert (got > F(2, 3)) == stated_condition(eps, delta)
            outcomes.add(got > F(2, 3))
    assert outcomes == {True, False}
    # the project's rules that exceed the cap, with eps = 1/10 (P*' = 5/8, link 2's spare
    # 1 - 5/8 - 5/48 = 13/48): the delta each hands C_A - all of it, half (max-min between A and
    # B, with or without the uncapped cooperative stage 2), or A's 1 : B's 1/6 - and the gain
    eps = F(1, 10)
    lie = truth.with_vector("A", [F(1, 2) + eps, 1])
    spare = F(13, 48)
    rules = {"drf+highest": spare, "drf+equal": spare / 2, "drf+proportional": spare * F(6, 7),
             "hug-cooperative": spare / 2}
    for name, delta in rules.items():
        alloc = hug(lie, cooperative=True) if name == "hug-cooperative" else allocate(lie, name)
        assert alloc.exact
        assert alloc.allocation[0, 1] - 1 / (F(3, 2) + eps) == delta and stated_condition(eps, delta)
        got = progress(alloc.allocation, truth)[0]
        assert got == min((1 + 2 * eps) / (F(3, 2) + eps), 1 / (F(3, 2) + eps) + delta) == F(3, 4)
    # HUG caps C_A at its dominant share 1/(3/2 + eps): delta = 0, and the lie costs it
    alloc = hug(lie)
    assert alloc.allocation[0, 1] == 1 / (F(3, 2) + eps) == max(alloc.allocation[0])
    assert progress(alloc.allocation, truth)[0] == F(5, 8) < F(2, 3)


def test_corollary_d_3_2_optimal_guarantee_and_strategy_proofness_leave_capacity_idle() -> None:
    three = example("hug_three_coflows_elastic")
    d, el = truth_of(three)
    level, ref = ref_hug(d, el)
    alloc = hug(three)
    r = evaluate(alloc)
    assert rows(alloc.allocation) == ref and level == F(2, 5)
    assert list(r.progress) == [level] * 3 and r.isolation_guarantee == level
    assert list(r.link_usage) == [1, F(4, 5)] == [sum(x[link] for x in ref) for link in (0, 1)]
    assert ref[0][1] == ref[1][1] == level  # A and B at the cap on link 2, C does not use it
    # filling link 2 keeps the guarantee, but every rule here that does it admits a lie by C_A
    for name in ("drf+highest", "drf+lowest", "drf+equal", "drf+proportional", "hug-cooperative"):
        coop = name == "hug-cooperative"
        r = evaluate(hug(three, cooperative=True) if coop else allocate(three, name))
        assert list(r.link_usage) == [1, 1] and r.isolation_guarantee == level
        s = lie_search(three, "A", "hug" if coop else name, options={"cooperative": True} if coop else None,
                       samples=60, local_rounds=10)
        assert s.found and s.exact and s.best_progress > level
    # on Figure 7.4 HUG is work-conserving: "cannot *always*"
    two = example("hug_two_coflows_elastic")
    d, el = truth_of(two)
    ref = ref_hug(d, el)[1]
    assert list(evaluate(hug(two)).link_usage) == [1, 1] == [sum(x[i] for x in ref) for i in (0, 1)]


# ------------------------------------------------------------------ D.3.3


def check_lie(prob: FairnessProblem, k: int, report: list[F], cases: dict[str, int]) -> None:
    """HUG on ``report`` for coflow ``k`` (the others truthful): the project equals the reference,
    the liar's true progress is at most P*, and the proof's claim for its case holds."""
    d, el = truth_of(prob)
    level, honest = ref_hug(d, el)
    lied = [r[:] for r in d]
    lied[k] = normalised(report)
    level2, a = ref_hug(lied, el)
    alloc = hug(prob.with_vector(k, report))
    assert alloc.exact and rows(alloc.allocation) == a
    got = progress(alloc.allocation, prob)[k]
    assert got == ref_progress(a[k], d[k]) <= level
    load = [sum(col) for col in zip(*d, strict=True)]
    load2 = [sum(col) for col in zip(*lied, strict=True)]
    bottlenecks = [i for i, x in enumerate(load) if x == max(load)]
    kept = [b for b in bottlenecks if load2[b] == max(load2)]
    assert max(a[k]) <= level2  # the stage-2 cap, in every case
    if kept:
        b = kept[0]
        if lied[k][b] <= d[k][b]:  # case 1, lower: its share of b does not grow, b has no spare
            cases["1: d' <= d"] += 1
            assert a[k][b] <= honest[k][b] and sum(x[b] for x in a) == 1
        else:  # case 1, higher: everyone's first-stage progress falls
            cases["1: d' > d"] += 1
            assert level2 <= level
    elif max(load2) <= max(load):  # case 2, D'_b' <= D_b: its share of b does not grow
        cases["2: D' <= D"] += 1
        assert level2 >= level
        assert all(a[k][b] <= honest[k][b] for b in bottlenecks)
    else:  # case 2, D'_b' > D_b
        cases["2: D' > D"] += 1
        assert level2 < level


def two_link_reports(g: int) -> list[list[F]]:
    return [[F(j, g), F(1)] for j in range(g + 1)] + [[F(1), F(j, g)] for j in range(g)]


def test_theorem_d_3_3_the_dissertations_examples() -> None:
    truth = example("hug_two_coflows_elastic")
    low = hug(truth.with_vector("A", [F(1, 4), 1]))
    assert low.allocation[0, 0] == F(1, 5) and progress(low.allocation, truth)[0] == F(2, 5)
    level, a = ref_hug([[F(1, 4), F(1)], D_B], [True, True])
    assert level == F(4, 5) and a[0][0] == F(1, 5) and ref_progress(a[0], D_A) == F(2, 5)
    high = hug(truth.with_vector("A", [1, 1]))
    level, a = ref_hug([[F(1), F(1)], D_B], [True, True])
    assert level == F(1, 2) and rows(high.allocation) == a
    assert list(high.allocation[0]) == [F(1, 2), F(1, 2)]
    assert list(progress(high.allocation, truth)) == [F(1, 2), F(1, 2)]
    assert list(progress(hug(truth).allocation, truth)) == [F(2, 3), F(2, 3)]


def test_theorem_d_3_3_every_two_link_report_on_the_examples() -> None:
    cases = dict.fromkeys(("1: d' <= d", "1: d' > d", "2: D' <= D", "2: D' > D"), 0)
    for name in EXAMPLES:
        prob = example(name)
        for k in range(prob.num_coflows):
            for report in two_link_reports(24):
                check_lie(prob, k, report, cases)
    assert all(n > 0 for n in cases.values()), cases


@settings(max_examples=30, deadline=None)
@given(problems(links=(2, 2)))
def test_theorem_d_3_3_every_two_link_report_on_small_instances(prob: FairnessProblem) -> None:
    cases = dict.fromkeys(("1: d' <= d", "1: d' > d", "2: D' <= D", "2: D' > D"), 0)
    for k in range(prob.num_coflows):
        for report in two_link_reports(12):
            check_lie(prob, k, report, cases)


@settings(max_examples=30, deadline=None)
@given(problems())
def test_theorem_d_3_3_no_lie_found_and_corollary_d_3_4(prob: FairnessProblem) -> None:
    d, el = truth_of(prob)
    level, ref = ref_hug(d, el)
    alloc = hug(prob)
    assert rows(alloc.allocation) == ref
    r = evaluate(alloc)
    # D.3.4: every coflow progresses P*, the largest guarantee any allocation can have
    assert list(r.progress) == [level] * prob.num_coflows and r.isolation_guarantee == level
    for name in VECTOR_MECHANISMS:
        ig = evaluate(allocate(prob, name)).isolation_guarantee
        assert ig <= level if isinstance(ig, F) else ig <= float(level) + 1e-9, name
    # D.3.3: no lie found
    for k in range(prob.num_coflows):
        s = lie_search(prob, k, "hug", grid=8, samples=40, local_rounds=8, starts=2)
        assert not s.found, (k, s.witness, s.best_progress)
        assert s.truthful_progress == level


# ------------------------------------------------------------------ D.3.5


@settings(max_examples=30, deadline=None)
@given(problems())
def test_theorem_d_3_5_hug_reaches_the_capped_maximum_utilization(prob: FairnessProblem) -> None:
    d, el = truth_of(prob)
    level, ref = ref_hug(d, el)
    top = ref_max_utilization(d, el)
    alloc = hug(prob)
    assert rows(alloc.allocation) == ref
    u = evaluate(alloc).utilization
    assert u == top
    drf_use = sum(level * x for r in d for x in r)
    assert evaluate(drf(prob)).utilization == drf_use <= u
    assert float(evaluate(hug(prob, stage2="lp")).utilization) == pytest.approx(float(top), abs=1e-9)


ABOVE_HUG = {  # the mechanisms with a higher utilization than HUG, and why each is out of the class
    "hug_two_coflows_elastic": {},  # HUG fills both links
    "hug_two_coflows_inelastic": {"psp": "guarantee"},
    "hug_three_coflows_elastic": {"psp": "guarantee", "equal-share": "guarantee", "drf+highest": "lie",
                                  "drf+lowest": "lie", "drf+equal": "lie", "drf+proportional": "lie",
                                  "hug-cooperative": "lie"},
    "hug_three_coflows_inelastic": {"psp": "guarantee", "equal-share": "guarantee"},
}


@pytest.mark.parametrize("name", EXAMPLES)
def test_theorem_d_3_5_higher_utilization_costs_the_guarantee_or_invites_a_lie(name: str) -> None:
    prob = example(name)
    d, el = truth_of(prob)
    level = ref_level(d)
    h = evaluate(hug(prob))
    assert h.utilization == ref_max_utilization(d, el) and h.isolation_guarantee == level
    why = {}
    for mech in [*VECTOR_MECHANISMS, "hug-cooperative"]:
        coop = mech == "hug-cooperative"
        r = evaluate(hug(prob, cooperative=True) if coop else allocate(prob, mech))
        if not r.utilization > h.utilization:
            continue
        if r.isolation_guarantee < level:
            why[mech] = "guarantee"
            continue
        lies = [lie_search(prob, k, "hug" if coop else mech,
                           options={"cooperative": True} if coop else None, samples=60, local_rounds=10)
                for k in range(prob.num_coflows)]
        if any(s.found and s.exact for s in lies):
            why[mech] = "lie"
        else:
            why[mech] = "none found"
    assert why == ABOVE_HUG[name]


# ------------------------------------------------------------------ D.3.6


@pytest.mark.parametrize(("K", "N", "eps"), [(2, 2, F(1, 2)), (10, 4, F(1, 100)), (50, 3, F(1, 1000))])
def test_lemma_d_3_6_drf_utilization_tends_to_zero_hug_is_one(K: int, N: int, eps: F) -> None:
    vec = [[F(1)] + [eps] * (K - 1) for _ in range(N)]
    prob = FairnessProblem(vec)
    # by hand: link 1 carries N, the others N eps < N, so P* = 1/N
    level = ref_level(vec)
    assert level == F(1, N)
    a, h = drf(prob), hug(prob)
    assert rows(a.allocation) == [[level] + [level * eps] * (K - 1)] * N
    assert rows(h.allocation) == [[level] * K] * N == ref_hug(vec, [True] * N)[1]
    d, u = evaluate(a), evaluate(h)
    assert F(d.utilization) / K == (1 + (K - 1) * eps) / K
    assert F(u.utilization) / K == 1
    assert d.isolation_guarantee == u.isolation_guarantee == level


def test_lemma_d_3_6_drf_utilization_falls_below_any_threshold() -> None:
    # (1 + (K - 1) eps) / K < 1/K + eps: K = 2000 and eps = 10^-6 give less than 1/1000
    K, eps = 2000, F(1, 10**6)
    vec = np.empty((2, K), dtype=object)
    vec[:] = eps
    vec[:, 0] = F(1)
    prob = FairnessProblem(vec)
    util = evaluate(drf(prob)).utilization / K
    assert util == (1 + (K - 1) * eps) / K < F(1, 1000)
