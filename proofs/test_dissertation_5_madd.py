"""Dissertation §5.5.3 (with Eq. 4.1): the effective bottleneck Γ and MADD.

Statement (the dissertation's words, abridged). "the actual completion time of coflow
(Γ) actually depends on its bottleneck (see Equation (4.1))" (Eq. 4.1: Γ is the
largest, over ingress and egress ports, of the coflow's data through the port
divided by the port's rate); "Given Γ, the minimum completion time of a coflow
can be attained as long as all flows finish at time Γ. We can ensure that by
setting the rates (r_ij) of each flow to d_ij/Γ. We defined this algorithm
(lines 7-10 in Pseudocode 1) as MADD. It allocates the least amount of
bandwidth to complete a coflow in minimum possible time."

Reading. A coflow alone on the big switch, released at 0. Three claims:
(i) no schedule completes it before Γ; (ii) MADD, every flow at the constant
rate d_ij / Γ, is feasible and completes it at Γ; (iii) d_ij / Γ is the least
constant rate with which flow ij finishes by Γ.

What this verifies, on the §3.2 shuffle (``instances/examples/
dissertation_3_2_shuffle.json``: Γ = 4, rates 1/4, 1/4, 1/4, 1/4, 1/2, 1/2) and
on hypothesis single coflows (1-4 ports, capacities 1/2, 1, 2 drawn per port
and direction, 1-6 flows of integer or half-integer sizes, release 0):

- Γ computed here by hand in exact rationals from the flow list;
- (i) and (ii) against the exact solver (``solve(method="exact")``: its optimum
  equals Γ, its schedule passes ``check_feasible``), and against the per-flow
  fair simulator, which never beats Γ;
- (ii) on the simulator: ``varys`` completes the lone coflow at Γ; with
  ``backfill="none"`` (MADD alone, lines 7-10) every flow is served at the
  constant rate d_ij / Γ from 0 to Γ, read from the schedule's pieces; with
  the default backfilling each flow gets at least d_ij / Γ (flows whose ports
  MADD leaves unsaturated get more and end early; the CCT stays Γ);
- (ii)-(iii) in rationals: the rates d_ij / Γ load every port at most to its
  capacity and some port exactly to it, finish every flow exactly at Γ, and a
  flow at any smaller constant rate r has r Γ < d_ij left undone at Γ.

Holds (no exception found). What this does not verify: (iii) is arithmetic
(r Γ >= d_ij), not a claim about time-varying rates, with which a flow can
finish at Γ with a lower average rate only by being faster at other times;
"least amount of bandwidth" among all schedules (any schedule finishing at Γ
moves the same data, so total bandwidth-time is the same). Coflows sharing
the fabric (SEBF's order and iterative MADD) are not covered here.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, check_feasible, io, solve
from coflowopt.sim import simulate

SHUFFLE = Path(__file__).resolve().parents[1] / "instances" / "examples" / "dissertation_3_2_shuffle.json"
TOL = 1e-9

Flow = tuple[int, int, Fraction]


def gamma(flows: list[Flow], ingress: list[Fraction], egress: list[Fraction]) -> Fraction:
    """Eq. 4.1 by hand: the largest port load over the port's capacity."""
    up = [Fraction(0)] * len(ingress)
    down = [Fraction(0)] * len(egress)
    for i, j, d in flows:
        up[i] += d
        down[j] += d
    return max([u / c for u, c in zip(up, ingress, strict=True)]
               + [v / c for v, c in zip(down, egress, strict=True)])


def build(flows: list[Flow], ingress: list[Fraction], egress: list[Fraction]) -> Instance:
    fabric = Fabric(np.array([float(c) for c in ingress]), np.array([float(c) for c in egress]))
    return Instance(fabric, (Coflow.from_flows("C", [(i, j, float(d)) for i, j, d in flows]),))


def check_madd(flows: list[Flow], ingress: list[Fraction], egress: list[Fraction]) -> Fraction:
    """Every check of the module docstring on one lone coflow; returns Γ."""
    g = gamma(flows, ingress, egress)
    rates = [d / g for _, _, d in flows]
    # (ii)-(iii) in rationals: feasible, some port exactly full, every flow exactly done at Γ
    up = [sum((r for (i, _, _), r in zip(flows, rates, strict=True) if i == p), Fraction(0))
          for p in range(len(ingress))]
    down = [sum((r for (_, j, _), r in zip(flows, rates, strict=True) if j == p), Fraction(0))
            for p in range(len(egress))]
    assert all(u <= c for u, c in zip(up, ingress, strict=True))
    assert all(v <= c for v, c in zip(down, egress, strict=True))
    assert any(u == c for u, c in zip(up, ingress, strict=True)) or \
        any(v == c for v, c in zip(down, egress, strict=True))
    for (_, _, d), r in zip(flows, rates, strict=True):
        assert r * g == d
        smaller = r * Fraction(999, 1000)
        assert smaller * g < d  # any smaller constant rate misses Γ

    inst = build(flows, ingress, egress)
    # (i): the exact optimum of one coflow is Γ, and per-flow fairness does not beat it
    opt = solve(inst, method="exact")
    assert abs(opt.objective - float(g)) <= TOL * float(g)
    assert opt.schedule is not None and check_feasible(inst, opt.schedule)
    assert simulate(inst, "fair").completion[0] >= float(g) * (1 - TOL)

    # (ii) on the simulator: MADD alone, constant d_ij / Γ on [0, Γ)
    madd = simulate(inst, "varys", backfill="none")
    assert madd.schedule is not None and check_feasible(inst, madd.schedule)
    assert abs(madd.completion[0] - float(g)) <= TOL * float(g)
    s = madd.schedule
    for f, ((_, _, d), r) in enumerate(zip(flows, rates, strict=True)):
        on = s.flow == f
        np.testing.assert_allclose(s.rate[on], float(r), rtol=1e-9)
        covered = float(np.sum(s.end[on] - s.start[on]))
        assert abs(covered - float(g)) <= TOL * float(g) and s.start[on].min() == 0.0
        assert abs(float(np.sum(s.rate[on] * (s.end[on] - s.start[on]))) - float(d)) <= TOL * float(d)

    # the default (with backfilling): CCT Γ, every flow at least its MADD rate from 0
    full = simulate(inst, "varys")
    assert full.schedule is not None and check_feasible(inst, full.schedule)
    assert abs(full.completion[0] - float(g)) <= TOL * float(g)
    s = full.schedule
    for f, r in enumerate(rates):
        first = (s.flow == f) & (s.start == 0.0)
        assert first.sum() == 1 and s.rate[first][0] >= float(r) * (1 - TOL)
    return g


def test_shuffle_of_section_3_2() -> None:
    inst = io.read(SHUFFLE)
    flows = [(int(inst.flow_src[f]), int(inst.flow_dst[f]), Fraction(float(inst.flow_size[f])))
             for f in range(inst.num_flows)]
    assert flows == [(0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 1), (2, 0, 2), (2, 1, 2)]
    ones = [Fraction(1)] * 3
    # by hand: s3 sends 4, each receiver gets 1 + 1 + 2 = 4, all at rate 1
    assert check_madd(flows, ones, ones) == 4
    assert [d / 4 for _, _, d in flows] == [Fraction(1, 4)] * 4 + [Fraction(1, 2)] * 2
    res = simulate(inst, "varys", backfill="none")
    np.testing.assert_allclose(res.schedule.rate, [0.25, 0.25, 0.25, 0.25, 0.5, 0.5])


@st.composite
def lone_coflow(draw: st.DrawFn) -> tuple[list[Flow], list[Fraction], list[Fraction]]:
    P = draw(st.integers(1, 4))
    cap = st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2)])
    ingress = draw(st.lists(cap, min_size=P, max_size=P))
    egress = draw(st.lists(cap, min_size=P, max_size=P))
    n = draw(st.integers(1, 6))
    port = st.integers(0, P - 1)
    size = st.integers(1, 16).map(lambda h: Fraction(h, 2))
    flows = [(draw(port), draw(port), draw(size)) for _ in range(n)]
    return flows, ingress, egress


@settings(max_examples=25, deadline=None)
@given(case=lone_coflow())
def test_madd_attains_gamma_on_random_lone_coflows(case) -> None:
    check_madd(*case)
