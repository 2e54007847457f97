"""Dissertation Appendix D.2: work conservation vs. strategy-proofness (Lemmas D.2.1-D.2.9).

Setting (the dissertation's running example, Figure D.1): two unit links and three
coflows with correlation vectors d_A = <1/2, 1>, d_B = <1, 1/6>,
d_C = <1, 0> (``instances/fairness/hug_three_coflows_{elastic,inelastic}.json``).
DRF gives every coflow P* = 1 / max_l sum_k d_kl = 1 / (5/2) = 2/5, fills
link 1 and allocates 2/5 (1 + 1/6) = 7/15 of link 2; the question is who gets
the spare 8/15 of link 2.

Statements (the dissertation's words, abridged).

- D.2.1: "When coflows do not have elastic demands, per-resource equal
  sharing is not work-conserving. Only 11/12th of link-1 and 5/9th of link-2
  will be consumed; i.e., none of the links will be saturated!"
- D.2.2: "When coflows do not have elastic demands, PS-P is not
  work-conserving. If C_B gives up its spare allocation in link-2, C_A can
  increase its progress to P_A = 2/3 and saturate link-1; however, C_B and
  C_C will remain at 1/3. If C_A gives up its spare allocation in link-1,
  C_B and C_C can increase their progress to 3/8 and saturate link-1, but
  C_A will remain at 1/2. Because both C_A and C_B have chances of
  increasing their progress, both will hold off to their allocations even
  with useless traffic - another instance of Prisoner's dilemma."
- D.2.3: "Allocating spare resource to the coflow with the least demand can
  result in zero spare allocation. Although this strategy provides the
  optimal allocation for Figure 7.4, when at least one coflow in a link has
  zero demand, it can trivially result in no additional utilization; e.g.,
  C_C in Figure D.1."
- D.2.4: "Allocating spare resource to the coflow with the least demand is
  not strategyproof. Consider C_A lied and changed its correlation vector to
  <1, 1/10>. The new [DRF] allocation ... a_A = <1/3, 1/30>,
  a_B = <1/3, 1/15>, a_C = <1/3, 0>. ... its final allocation would be
  a'_A = <1/3, 14/15>. As a result, its progress improved from 2/5 to 2/3,
  while the others' decreased to 1/3." Corollary D.2.5: "coflows can lie
  both by increasing and decreasing their demands, or a combination of both."
- D.2.6: "Allocating spare resource to the coflow with the highest demand is
  not strategyproof. If C_A changes its demand vector to <1, 1>, the
  eventual allocation will again result in lower progress (P_B = P_C = 1/3).
  Because C_B is still receiving more than 1/6th of its allocation in link-1
  in link-2, it does not need to lie." Corollary D.2.7: "Allocating spare
  resource randomly to coflows is not strategyproof."
- D.2.8: "Allocating spare resource equally to coflows is not strategyproof.
  If the remaining 8/15th of link-2 is equally divided, the share of C_A will
  increase to 2/3-rd and incentivize it to lie. Again, the isolation
  guarantee will be smaller."
- D.2.9: "Allocating spare resource proportionally to coflows' demands is not
  strategyproof ... the allocation is different than equal division; yet,
  C_A can still increase its progress at the expense of others."

Terms. Progress P_k = min over links with d_kl > 0 of a_kl / d_kl, always
under the coflow's *true* vector. An elastic coflow consumes its whole
allocation on the links it uses; an inelastic one consumes P_k d_k (its
useful traffic); capacity allocated beyond that carries useless traffic.
*Not work-conserving*: some link's capacity is not usefully consumed while
a coflow could use it, i.e. (inelastic) every link the coflow needs has
useful slack, or (elastic) the coflow uses the link. *Not strategy-proof*:
with the others truthful, some report raises the liar's true progress. The
spare policies are the project's ``drf+<policy>`` (DRF on the reports, then
each link's spare by the reported demands); PS-P is the project's per-link
fair-queueing equilibrium (``coflowopt/fairness/sharing.py``, our model: each
inelastic coflow sends r_k times its reported vector, and each has a
saturated link on which its bandwidth is the largest).

What this verifies. Every number below is computed twice: by the project's
mechanism (``allocate``, ``evaluate``, ``progress``) and by closed forms and a
DRF + spare reference written here in ``Fraction`` arithmetic from the
dissertation's definitions (nothing imported from coflowopt).

1. D.2.1 holds: equal shares <1/3, 1/2>, <1/3, 1/2>, <1/3, 0> give progress
   1/2, 1/3, 1/3 and consume 11/12 and 5/9; B and C, limited by link 1,
   could each use the idle 1/12 of it (a feasible allocation gives B 5/12).
   With elastic demands the same shares fill both links (isolation
   guarantee 1/3 < 2/5, §D.2.1).
2. D.2.2 holds in substance; its game is one-sided in our model. The stated
   outcomes are exact: truthful PS-P gives 2/3, 1/3, 1/3 (link 1 saturated;
   the 5/18 left of link 2 is usable by nobody, since every link-2 user
   needs link 1), and C_B "holding" link 2 by reporting <3/4, 1> gives 1/2,
   3/8, 3/8 (link 1 saturated, 7/16 of link 2 useless traffic): a strict
   gain for C_B. C_A has nothing to gain against a truthful C_B (the lie
   search finds no lie; holding with <2/3, 1> drops it to 1/2), so "both
   hold" is not forced; but once C_B holds, C_A's best reply is to hold
   link 1 too: <3/5, 1> lifts it from 1/2 to 5/9 and puts C_B and C_C back
   at 1/3, with 1/18 of link 1 and 7/18 of link 2 carrying useless
   traffic while C_B and C_C, limited by link 1, could use the former: not
   work-conserving. With C_A holding <2/3, 1> instead, the useful
   consumption is exactly Lemma D.2.1's 11/12 and 5/9.
3. D.2.3 holds: with C_C's zero demand counted (policy ``lowest_any``), the
   8/15 of link 2 goes to C_C and is unused (usage 1 and 7/15, DRF's) while
   A and B, elastic, use link 2. On Figure 7.4 (no zero demand) the same
   rule gives C_B the 2/9 and fills both links, progress 2/3 each: HUG's
   allocation, as stated.
4. D.2.4 **fails as stated (arithmetic slip), holds in substance**: after
   C_A reports <1, 1/10>, DRF gives P* = 1/3, so a_B = <1/3, 1/18> (not
   1/15: that is C_B's share before the lie, 2/5 x 1/6) and a'_A =
   <1/3, 17/18> (not 14/15). The progress values are right: C_A 2/5 -> 2/3,
   C_B = C_C = 1/3; every report <1, x> with 0 < x < 1/6 gives C_A 2/3.
   D.2.5 holds: the same lie written as <1/2, 1/20> only lowers a demand
   (the mechanism sees the same normalised vector), Figure 7.4's <1, 1>
   under ``highest`` only raises one (2/3 -> 11/12), and <1, 1/10> against
   <1/2, 1> raises link 1 and lowers link 2.
5. D.2.6 holds: <1, 1> gives P* = 1/3, a'_A = <1/3, 17/18>, C_A 2/5 -> 2/3,
   C_B = C_C = 1/3; the lie search finds no lie for C_B (nor C_C).
   D.2.7 holds for two readings of "randomly" (each link's whole spare to
   one coflow drawn uniformly among those with positive reported demand on
   it, or among all coflows): C_A's expected progress rises from 2/5 to
   1/2, resp. 4/9, by reporting <1, 1>.
6. D.2.8 holds: C_A's truthful link-2 share is 2/5 + 4/15 = 2/3; reporting
   <x, 1> gives it min(2x/(x+2), 1/2 + 5/(12(x+2))), largest at x = 17/18:
   34/53 > 2/5 (the best lie over all reports; <1, 1> gives 23/36), the
   isolation guarantee falls to 18/53.
7. D.2.9 holds: truthful C_A gets 6/7 of link 2 (not equal division's 2/3);
   reporting <x, 1> keeps 6/7 there and gives min(2x/(x+2), 6/7): 2/3 at
   <1, 1>, with B and C at 1/3. No report does better (C_A's link-1 share
   x/(x+2) <= 1/3).

What this does not verify. Only the dissertation's instance and the stated
families (a strategy-proofness failure needs one instance; that the
policies are work-conserving elsewhere is not claimed). PS-P's behaviour
rests on our model of it (the dissertation gives no formula with correlated
demands); the PS-P game is not solved beyond the best replies above (the
lie search is a search, and C_C also has a lie, 18/47). "Randomly" is our
reading. The lemma-by-lemma claims about Figure D.2's drawings are not
checked (the figures are not in the text).
"""

from __future__ import annotations

from fractions import Fraction as F
from itertools import product
from pathlib import Path

import numpy as np

from coflowopt.fairness import allocate, drf, evaluate, lie_search, load_problem, progress
from coflowopt.io import read_metadata

ROOT = Path(__file__).resolve().parents[1] / "instances" / "fairness"
THREE = ROOT / "hug_three_coflows_elastic.json"

D_A, D_B, D_C = [F(1, 2), F(1)], [F(1), F(1, 6)], [F(1), F(0)]
FIG_D1 = [D_A, D_B, D_C]
FIG_7_4 = [D_A, D_B]


def elastic():
    return load_problem(THREE, exact=True)


def inelastic():
    return load_problem(ROOT / "hug_three_coflows_inelastic.json", exact=True)


def two():
    return load_problem(ROOT / "hug_two_coflows_elastic.json", exact=True)


# ------------------------------------------------------------------ the reference, in Fractions


def normalised(v: list[F]) -> list[F]:
    top = max(v)
    return [x / top for x in v]


def ref_progress(a: list[F], d: list[F]) -> F:
    """P_k = min over the links the coflow needs of a / d."""
    return min(x / y for x, y in zip(a, d, strict=True) if y > 0)


def ref_drf(d: list[list[F]]) -> tuple[F, list[list[F]]]:
    """Eq. 7.2 for elastic unit-weight coflows: P* = 1 / max_l sum_k d_kl, a_k = P* d_k."""
    level = 1 / max(sum(col) for col in zip(*d, strict=True))
    return level, [[level * x for x in row] for row in d]


def ref_spare(d: list[list[F]], policy: str) -> list[list[F]]:
    """DRF on ``d``, then each link's spare to the coflows ``policy`` picks (ties split equally)."""
    _, a = ref_drf(d)
    a = [row[:] for row in a]
    for link in range(len(d[0])):
        spare = 1 - sum(row[link] for row in a)
        demand = [row[link] for row in d]
        users = [k for k, x in enumerate(demand) if x > 0]
        if policy == "highest":
            top = max(demand[k] for k in users)
            share = {k: F(1) for k in users if demand[k] == top}
        elif policy == "lowest":
            low = min(demand[k] for k in users)
            share = {k: F(1) for k in users if demand[k] == low}
        elif policy == "lowest_any":
            low = min(demand)
            share = {k: F(1) for k, x in enumerate(demand) if x == low}
        elif policy == "equal":
            share = {k: F(1) for k in users}
        else:  # proportional
            share = {k: demand[k] for k in users}
        total = sum(share.values())
        for k, s in share.items():
            a[k][link] += spare * s / total
    return a


def as_rows(matrix) -> list[list[F]]:
    return [list(row) for row in matrix]


def run(reports: list[list[F]], mechanism: str, truth=None):
    """The project's allocation for ``reports`` (coflows A, B, C...) and its report under the truth."""
    prob = truth if truth is not None else elastic()
    rep = prob
    for k, v in enumerate(reports):
        rep = rep.with_vector(k, v)
    alloc = allocate(rep, mechanism)
    assert alloc.exact
    return alloc, evaluate(alloc, prob)


# ------------------------------------------------------------------ D.2.1


def test_lemma_d_2_1_equal_sharing_is_not_work_conserving_without_elastic_demand() -> None:
    alloc, r = run([D_A, D_B, D_C], "equal-share", inelastic())
    shares = [[F(1, 3), F(1, 2)], [F(1, 3), F(1, 2)], [F(1, 3), F(0)]]  # per link, among its users
    assert as_rows(alloc.allocation) == shares
    prog = [ref_progress(a, d) for a, d in zip(shares, FIG_D1, strict=True)]
    assert prog == [F(1, 2), F(1, 3), F(1, 3)] == list(r.progress)
    useful = [sum(p * d[link] for p, d in zip(prog, FIG_D1, strict=True)) for link in (0, 1)]
    assert useful == [F(11, 12), F(5, 9)] == list(r.link_usage)  # neither link saturated
    # B needs both links and both have useful slack: it could grow by min(1/12 / 1, (4/9) / (1/6))
    room = min((1 - u) / x for u, x in zip(useful, D_B, strict=True))
    assert room == F(1, 12)
    grown = [u + room * x for u, x in zip(useful, D_B, strict=True)]
    assert grown == [F(1), F(5, 9) + F(1, 72)] and max(grown) <= 1  # B at 5/12, feasible
    # with elastic demands the same shares are consumed whole: both links full, guarantee 1/3 < 2/5
    _, r = run([D_A, D_B, D_C], "equal-share")
    assert list(r.link_usage) == [1, 1] and r.isolation_guarantee == F(1, 3) < ref_drf(FIG_D1)[0]


# ------------------------------------------------------------------ D.2.2


def wfq_equilibrium(reports: list[list[F]], rates: list[F]) -> bool:
    """Per-link fair queueing among inelastic coflows sending r_k along their reports: no link over
    capacity, and every coflow has a saturated link where its bandwidth is the largest."""
    band = [[r * x for x in v] for r, v in zip(rates, reports, strict=True)]
    load = [sum(col) for col in zip(*band, strict=True)]
    if any(x > 1 for x in load):
        return False
    return all(
        any(reports[k][link] > 0 and load[link] == 1 and band[k][link] == max(b[link] for b in band)
            for link in range(len(load)))
        for k in range(len(reports))
    )


def psp_case(reports: list[list[F]], rates: list[F]):
    """The project's PS-P on ``reports`` against the hand-derived equilibrium ``rates``; returns
    the hand-derived true progress and useful link usage, and the project's report."""
    assert wfq_equilibrium(reports, rates)
    alloc, r = run(reports, "psp", inelastic())
    sent = [[x * v for v in rep] for x, rep in zip(rates, reports, strict=True)]
    assert as_rows(alloc.allocation) == sent
    prog = [ref_progress(a, d) for a, d in zip(sent, FIG_D1, strict=True)]
    useful = [sum(p * d[link] for p, d in zip(prog, FIG_D1, strict=True)) for link in (0, 1)]
    sent_load = [sum(col) for col in zip(*sent, strict=True)]
    assert list(r.progress) == prog and list(r.link_usage) == useful
    return prog, useful, sent_load


def test_lemma_d_2_2_psp_invites_useless_traffic_and_wastes_capacity() -> None:
    hold_a, hold_b, reply_a = [F(2, 3), F(1)], [F(3, 4), F(1)], [F(3, 5), F(1)]
    # truthful: link 1 shared 1/3 each (A sends <1/3, 2/3>); link 2's 5/18 left is of no use to
    # anybody (A and B need link 1, which is full)
    prog, useful, _ = psp_case([D_A, D_B, D_C], [F(2, 3), F(1, 3), F(1, 3)])
    # (the checker discriminates: equal sharing's rates leave link 1 unsaturated, so they are not one)
    assert not wfq_equilibrium([D_A, D_B, D_C], [F(1, 2), F(1, 3), F(1, 3)])
    assert prog == [F(2, 3), F(1, 3), F(1, 3)] and useful == [1, F(13, 18)]
    # C_B holds link 2 (reports <3/4, 1>): A and B split link 2, C gets 3/8 of link 1
    prog, useful, sent = psp_case([D_A, hold_b, D_C], [F(1, 2), F(1, 2), F(3, 8)])
    assert prog == [F(1, 2), F(3, 8), F(3, 8)] and useful[0] == 1
    assert sent[1] == 1 and 1 - useful[1] == F(7, 16)  # link 2 full, 7/16 of it useless traffic
    # C_A's best reply: hold link 1 too. Everyone's link-1 share is 1/3, B and C are back at 1/3
    prog, useful, sent = psp_case([reply_a, hold_b, D_C], [F(5, 9), F(4, 9), F(1, 3)])
    assert prog == [F(5, 9), F(1, 3), F(1, 3)] and sent == [1, 1]
    assert [1 - u for u in useful] == [F(1, 18), F(7, 18)]
    for d in (D_B, D_C):  # both need only links with useful slack: not work-conserving
        assert min((1 - u) / x for u, x in zip(useful, d, strict=True) if x > 0) == F(1, 18)
    # C_A holding with <2/3, 1> instead: the useful consumption of Lemma D.2.1
    prog, useful, _ = psp_case([hold_a, hold_b, D_C], [F(1, 2), F(4, 9), F(1, 3)])
    assert prog == [F(1, 2), F(1, 3), F(1, 3)] and useful == [F(11, 12), F(5, 9)]
    # ... and against a truthful C_B holding costs C_A (2/3 -> 1/2)
    prog, _, _ = psp_case([hold_a, D_B, D_C], [F(1, 2), F(1, 3), F(1, 3)])
    assert prog[0] == F(1, 2)


def test_lemma_d_2_2_who_gains_by_holding() -> None:
    truth = inelastic()
    b = lie_search(truth, "B", "psp", samples=100)
    assert b.found and b.exact and (b.truthful_progress, b.best_progress) == (F(1, 3), F(3, 8))
    assert list(b.witness) == [F(3, 4), F(1)]
    a = lie_search(truth, "A", "psp", samples=100)
    assert not a.found and a.truthful_progress == F(2, 3)
    # once C_B holds, C_A gains by holding link 1 (A's vector is its truth in this problem)
    a = lie_search(truth.with_vector("B", [F(3, 4), F(1)]), "A", "psp", samples=100)
    assert a.found and a.exact and (a.truthful_progress, a.best_progress) == (F(1, 2), F(5, 9))
    assert list(a.witness) == [F(3, 5), F(1)]


# ------------------------------------------------------------------ D.2.3


def test_lemma_d_2_3_spare_to_the_least_demand_can_be_wasted() -> None:
    alloc, r = run([D_A, D_B, D_C], "drf+lowest_any")
    ref = ref_spare(FIG_D1, "lowest_any")
    assert as_rows(alloc.allocation) == ref
    assert ref[2][1] == F(8, 15)  # C_C, demand 0 on link 2, gets its whole spare ...
    _, base = ref_drf(FIG_D1)
    drf_usage = [sum(row[link] for row in base) for link in (0, 1)]
    assert drf_usage == [1, F(7, 15)] == list(r.link_usage)  # ... and uses none of it
    assert sum(r.link_usage) == sum(evaluate(drf(elastic())).link_usage)  # no additional utilization
    # while A and B, elastic, would consume it: any rule giving it to them fills link 2
    assert list(run([D_A, D_B, D_C], "drf+equal")[1].link_usage) == [1, 1]
    # Figure 7.4 (no zero demand): the 2/9 spare of link 2 goes to C_B; both links full, P = 2/3
    alloc = allocate(two(), "drf+lowest_any")
    ref = ref_spare(FIG_7_4, "lowest_any")
    assert as_rows(alloc.allocation) == ref == [[F(1, 3), F(2, 3)], [F(2, 3), F(1, 3)]]
    assert [ref_progress(a, d) for a, d in zip(ref, FIG_7_4, strict=True)] == [F(2, 3)] * 2
    assert as_rows(allocate(two(), "hug").allocation) == ref  # HUG's allocation


# ------------------------------------------------------------------ D.2.4, D.2.5


def test_lemma_d_2_4_spare_to_the_least_demand_is_not_strategy_proof() -> None:
    lie = [F(1), F(1, 10)]
    alloc, r = run([lie, D_B, D_C], "drf+lowest")
    level, base = ref_drf([lie, D_B, D_C])
    assert level == F(1, 3) and base == [[F(1, 3), F(1, 30)], [F(1, 3), F(1, 18)], [F(1, 3), F(0)]]
    assert as_rows(alloc.guarantee) == base
    final = ref_spare([lie, D_B, D_C], "lowest")
    assert final[0] == [F(1, 3), F(17, 18)] == list(alloc.allocation[0])
    prog = [ref_progress(a, d) for a, d in zip(final, FIG_D1, strict=True)]
    assert prog == [F(2, 3), F(1, 3), F(1, 3)] == list(r.progress)
    truthful = ref_drf(FIG_D1)[0]  # C_A's truthful progress: the spare never helps it (link 1)
    assert truthful == F(2, 5) == evaluate(allocate(elastic(), "drf+lowest")).progress[0]
    # every <1, x> with 0 < x < 1/6 (C_A the lowest positive demand): P* = 1/3, and link 2 gives
    # C_A x/3 plus the spare 1 - x/3 - 1/18, i.e. 17/18 whatever x
    for x in (F(1, 100), F(1, 10), F(1, 7)):
        _, r = run([[F(1), x], D_B, D_C], "drf+lowest")
        assert r.progress[0] == F(2, 3) == min(F(1, 3) / D_A[0], 1 - F(1, 18))


def test_lemma_d_2_4_stated_allocations_are_an_arithmetic_slip() -> None:
    meta = read_metadata(THREE)
    sc = next(s for s in meta["_expected"]["scenarios"] if "stated_inconsistent" in s)
    stated = sc["stated_inconsistent"]
    lie = elastic().with_vector("A", [F(str(x)) for x in sc["reports"]["A"]])
    a = allocate(lie, "drf+lowest")
    # DRF on the reported vectors: P* = 1/3, so C_B gets 1/3 * 1/6 = 1/18 of link 2 ...
    assert a.guarantee[1, 1] == F(1, 18) != F(stated["guarantee"]["B"][1])
    # ... the stated 1/15 is C_B's share before the lie, 2/5 * 1/6
    assert F(stated["guarantee"]["B"][1]) == drf(elastic()).guarantee[1, 1] == F(2, 5) * F(1, 6)
    # the stated 14/15 is 1 - 1/15; the spare 1 - 1/30 - 1/18 = 41/45 makes 1/30 + 41/45 = 17/18
    assert a.allocation[0, 1] == F(1, 30) + F(41, 45) == F(17, 18) != F(stated["allocation"]["A"][1])
    # the stated progress values hold either way
    assert progress(a.allocation, elastic())[0] == F(2, 3)


def test_corollary_d_2_5_lies_by_increasing_decreasing_or_both() -> None:
    # decreasing only: <1/2, 1/20> keeps link 1's 1/2 and lowers link 2 from 1; normalised it is <1, 1/10>
    down = [F(1, 2), F(1, 20)]
    assert all(x <= y for x, y in zip(down, D_A, strict=True)) and normalised(down) == [F(1), F(1, 10)]
    _, r = run([down, D_B, D_C], "drf+lowest")
    assert r.progress[0] == F(2, 3) > F(2, 5)
    # increasing only (Figure 7.4b): <1, 1> raises link 1 from 1/2, spare to the highest demand
    up = [F(1), F(1)]
    assert all(x >= y for x, y in zip(up, D_A, strict=True))
    a = allocate(two().with_vector("A", up), "drf+highest")
    ref = ref_spare([up, D_B], "highest")
    assert as_rows(a.allocation) == ref == [[F(1, 2), F(11, 12)], [F(1, 2), F(1, 12)]]
    assert ref_progress(ref[0], D_A) == F(11, 12) == progress(a.allocation, two())[0] > F(2, 3)
    # both, as the dissertation writes it: <1, 1/10> raises link 1 and lowers link 2 (2/5 -> 2/3 above)
    both = [F(1), F(1, 10)]
    assert both[0] > D_A[0] and both[1] < D_A[1]


# ------------------------------------------------------------------ D.2.6, D.2.7


def test_lemma_d_2_6_spare_to_the_highest_demand_is_not_strategy_proof() -> None:
    lie = [F(1), F(1)]
    alloc, r = run([lie, D_B, D_C], "drf+highest")
    ref = ref_spare([lie, D_B, D_C], "highest")
    assert as_rows(alloc.allocation) == ref
    assert ref[0] == [F(1, 3), F(1, 3) + F(11, 18)] == [F(1, 3), F(17, 18)]
    prog = [ref_progress(a, d) for a, d in zip(ref, FIG_D1, strict=True)]
    assert prog == [F(2, 3), F(1, 3), F(1, 3)] == list(r.progress)
    assert evaluate(allocate(elastic(), "drf+highest")).progress[0] == F(2, 5)
    # "C_B does not need to lie": the search finds no lie for B or C
    for cid in ("B", "C"):
        s = lie_search(elastic(), cid, "drf+highest", samples=100)
        assert not s.found and s.truthful_progress == F(2, 5)


def random_spare(reports: list[list[F]], among_all: bool) -> F:
    """C_A's expected true progress when each link's whole spare goes to one coflow drawn uniformly
    (among those with positive reported demand on the link, or among all coflows)."""
    prob = elastic()
    rep = prob
    for k, v in enumerate(reports):
        rep = rep.with_vector(k, v)
    guarantee = np.array(drf(rep).guarantee)  # the project's DRF on the reports
    _, ref = ref_drf(reports)
    assert as_rows(guarantee) == ref
    links = range(len(reports[0]))
    pools = [list(range(len(reports))) if among_all else [k for k, v in enumerate(reports) if v[link] > 0]
             for link in links]
    outcomes = list(product(*pools))
    total = F(0)
    for winners in outcomes:
        a = guarantee.copy()
        for link, k in zip(links, winners, strict=True):
            a[k, link] += 1 - sum(ref[j][link] for j in range(len(reports)))
        got = progress(a, prob)[0]
        assert got == ref_progress(list(a[0]), D_A)
        total += got
    return total / len(outcomes)


def test_corollary_d_2_7_spare_given_at_random_is_not_strategy_proof() -> None:
    lie = [F(1), F(1)]
    for among_all, gain in ((False, F(1, 2)), (True, F(4, 9))):
        assert random_spare(FIG_D1, among_all) == F(2, 5)  # truthful: link 1 binds C_A
        # lying: C_A draws link 2's 11/18 (progress 2/3) or not (1/3 of link 2: progress 1/3)
        assert random_spare([lie, D_B, D_C], among_all) == gain > F(2, 5)
    # by hand: among A and B (1/2 each): (2/3 + 1/3) / 2; among A, B, C: (2/3 + 1/3 + 1/3) / 3
    assert (F(2, 3) + F(1, 3)) / 2 == F(1, 2) and (F(2, 3) + 2 * F(1, 3)) / 3 == F(4, 9)


# ------------------------------------------------------------------ D.2.8, D.2.9


def lie_family(policy: str, x: F) -> F:
    """C_A's true progress, by hand, when it reports <x, 1> (x <= 1) and link 2's spare
    1 - (7/6) / (x + 2) is split equally or proportionally (A's 1 : B's 1/6)."""
    level = 1 / (x + 2)  # link 1 carries x + 1 + 1 >= link 2's 7/6
    spare = 1 - level * F(7, 6)
    link2 = level + (spare / 2 if policy == "equal" else spare * F(6, 7))
    return min(level * x / D_A[0], link2)


def test_lemma_d_2_8_equal_split_of_the_spare_is_not_strategy_proof() -> None:
    alloc, _ = run([D_A, D_B, D_C], "drf+equal")
    assert alloc.allocation[0, 1] == F(2, 5) + F(8, 15) / 2 == F(2, 3) == ref_spare(FIG_D1, "equal")[0][1]
    assert lie_family("equal", D_A[0]) == F(2, 5)
    # the best <x, 1>: 2x / (x + 2) = 1/2 + 5 / (12 (x + 2)), i.e. 24 x = 6 x + 17
    best = F(17, 18)
    assert 2 * best / (best + 2) == F(1, 2) + F(5, 12) / (best + 2) == F(34, 53)
    for x in (F(1, 2), F(3, 4), best, F(1)):
        _, r = run([[x, F(1)], D_B, D_C], "drf+equal")
        assert r.progress[0] == lie_family("equal", x)
        assert [ref_progress(a, d) for a, d in zip(ref_spare([[x, F(1)], D_B, D_C], "equal"),
                                                   FIG_D1, strict=True)] == list(r.progress)
    assert lie_family("equal", F(1)) == F(23, 36)
    _, r = run([[best, F(1)], D_B, D_C], "drf+equal")
    assert r.progress[0] == F(34, 53) and r.isolation_guarantee == F(18, 53) < F(2, 5)
    # <1, y>: P* = 1/3 and link 2 gives y/6 + 17/36 <= 23/36, so 34/53 is the best lie of all
    for y in (F(1, 6), F(1, 2), F(1)):
        _, r = run([[F(1), y], D_B, D_C], "drf+equal")
        assert r.progress[0] == min(F(2, 3), y / 6 + F(17, 36)) <= F(23, 36)
    s = lie_search(elastic(), "A", "drf+equal", samples=100)
    assert s.found and s.exact and s.best_progress == F(34, 53)


def test_lemma_d_2_9_proportional_split_of_the_spare_is_not_strategy_proof() -> None:
    alloc, _ = run([D_A, D_B, D_C], "drf+proportional")
    six_sevenths = F(2, 5) + F(8, 15) * 1 / (1 + F(1, 6))
    assert six_sevenths == F(6, 7) == alloc.allocation[0, 1] == ref_spare(FIG_D1, "proportional")[0][1]
    assert six_sevenths != ref_spare(FIG_D1, "equal")[0][1]  # not equal division's 2/3
    for x in (F(1, 2), F(3, 4), F(1)):
        alloc, r = run([[x, F(1)], D_B, D_C], "drf+proportional")
        assert alloc.allocation[0, 1] == F(6, 7)  # whatever x
        assert r.progress[0] == lie_family("proportional", x)
        assert [ref_progress(a, d) for a, d in zip(ref_spare([[x, F(1)], D_B, D_C], "proportional"),
                                                   FIG_D1, strict=True)] == list(r.progress)
    _, r = run([[F(1), F(1)], D_B, D_C], "drf+proportional")
    assert list(r.progress) == [F(2, 3), F(1, 3), F(1, 3)]  # at the others' expense
    # C_A's link-1 share is x / (x + 2) <= 1/3 for every report <x, 1> or <1, y>, so 2/3 is the most
    # it can get: no report on a grid does better
    grid = [F(j, 12) for j in range(13)]
    best = max(run([v, D_B, D_C], "drf+proportional")[1].progress[0]
               for v in [[x, F(1)] for x in grid] + [[F(1), y] for y in grid])
    assert best == F(2, 3)
