"""``fair``, ``aalo`` and ``mcs`` against an independent exact simulator (:mod:`.oracle`).

The oracle shares no code with the engine, the policies or the kernels, and
computes in exact rationals. Instances are small: 2-4 ports, up to 5 coflows
of up to 6 flows, either on a grid of quarters (many exact ties: flows and
thresholds reached at the same instant) or random float sizes and capacities
(releases stay on a grid of 1/1000: the engine treats instants closer than a
relative 1e-12 as one, the exact oracle does not); small queue thresholds, so
that coflows cross several queues.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt.instance import Coflow, Fabric, Instance
from coflowopt.sim import simulate

from . import oracle, oracle_varys


def draw_fabric(draw: st.DrawFn) -> tuple[bool, st.SearchStrategy, st.SearchStrategy,
                                           list[float], list[float], st.SearchStrategy]:
    """The part of a random case every oracle test draws alike: ``(grid, size, time, up,
    down, port)``. ``grid``: values on a grid of quarters (exact ties), else random floats;
    ``size``, ``time`` (releases, delays) and ``port``: strategies; ``up``/``down``: the
    ports' capacities (all 1 about half the time)."""
    ports = draw(st.integers(2, 4))
    grid = draw(st.booleans())
    quarter = st.integers(1, 12).map(lambda i: i / 4)
    size = quarter if grid else st.floats(0.1, 3.0)
    # times on a grid even with float sizes: the engine treats times within a relative
    # 1e-12 as one instant (models/simulator.md), an exact oracle does not
    time = st.integers(0, 12).map(lambda i: i / 4) if grid else st.integers(0, 3000).map(
        lambda i: i / 1000)
    cap = st.sampled_from([1.0]) if draw(st.booleans()) else (
        st.integers(8, 32).map(lambda i: i / 16) if grid else st.floats(0.5, 2.0))
    up = [draw(cap) for _ in range(ports)]
    down = [draw(cap) for _ in range(ports)]
    return grid, size, time, up, down, st.integers(0, ports - 1)


@st.composite
def cases(draw: st.DrawFn, *, deadlines: bool = False) -> tuple[list[float], list[float], list[tuple]]:
    """Small instances ``(up, down, coflows)``; ``deadlines``: each coflow gets a third entry,
    its deadline (``None`` for about a quarter of them)."""
    grid, size, release, up, down, port = draw_fabric(draw)
    coflows = draw(st.lists(
        st.tuples(release, st.lists(st.tuples(port, port, size), min_size=1, max_size=6)),
        min_size=1, max_size=5,
    ))
    if deadlines:
        slack = st.integers(1, 32).map(lambda i: i / 4) if grid else st.integers(100, 8000).map(
            lambda i: i / 1000)
        coflows = [(r, fl, None if draw(st.integers(0, 3)) == 0 else r + draw(slack))
                   for r, fl in coflows]
    return up, down, coflows


def instance(up: list[float], down: list[float], coflows: list[tuple]) -> Instance:
    """The instance of a case; a coflow's optional third entry is its deadline."""
    return Instance(Fabric(up, down), tuple(
        Coflow(f"c{k}", [f[0] for f in c[1]], [f[1] for f in c[1]], [f[2] for f in c[1]],
               release=c[0], deadline=c[2] if len(c) > 2 else None)
        for k, c in enumerate(coflows)
    ))


AALO = st.fixed_dictionaries({
    "num_queues": st.sampled_from([2, 3, 4]),
    "first_threshold": st.sampled_from([0.5, 0.7, 0.75, 1.0]),
    "multiplier": st.sampled_from([2.0, 3.0]),
})


@st.composite
def mcs_params(draw: st.DrawFn) -> dict:
    """Small MCS parameters: narrow and wide coflows (1-6 flows), several queues crossed."""
    k = draw(st.sampled_from([3, 4]))
    widths = draw(st.sampled_from([(2.0, 4.0), (3.0,), (1.5, 3.0, 5.0), ()]))
    p = {
        "num_queues": k,
        "width_thresholds": widths,
        "narrow_width": draw(st.sampled_from([1, 2, 3])),
        "narrow_thresholds": draw(st.sampled_from([(0.8, 2.5, 6.0), (0.5, 1.5), (0.7, 2.1)])),
        "wide_thresholds": draw(st.sampled_from([(0.3, 1.0, 2.0), (0.25, 0.75), (0.7,)])),
    }
    if draw(st.booleans()):  # p_i given (1-based, one per width class), else p_i = i capped at K
        p["initial_queues"] = tuple(draw(st.lists(
            st.integers(1, k), min_size=len(widths) + 1, max_size=len(widths) + 1)))
    return p


def assert_agrees(case: tuple, name: str, params: dict, compiled: bool) -> None:
    up, down, coflows = case
    res = simulate(instance(up, down, coflows), name, params=params, compiled=compiled)
    want = [float(x) for x in oracle.simulate(up, down, coflows, name, params)]
    np.testing.assert_allclose(res.completion, want, rtol=1e-9, atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(cases(), st.booleans())
def test_fair_agrees_with_the_oracle(case, compiled):
    assert_agrees(case, "fair", {}, compiled)


@pytest.mark.parametrize("sharing", ["strict", "weighted"])
@settings(max_examples=150, deadline=None)
@given(case=cases(), params=AALO, compiled=st.booleans())
def test_aalo_agrees_with_the_oracle(sharing, case, params, compiled):
    assert_agrees(case, "aalo", {**params, "sharing": sharing}, compiled)


@pytest.mark.parametrize("sharing", ["strict", "weighted"])
@settings(max_examples=150, deadline=None)
@given(case=cases(), params=mcs_params(), compiled=st.booleans())
def test_mcs_agrees_with_the_oracle(sharing, case, params, compiled):
    assert_agrees(case, "mcs", {**params, "sharing": sharing}, compiled)


@pytest.mark.parametrize("compiled", [False, True])
def test_bytes_one_ulp_short_of_a_threshold_reach_it(compiled):
    # c2 has sent 2.9999999999999996 bytes, 4e-16 short of its queue's threshold of 3,
    # when its big flow finishes: the policies' byte rule (aalo.REACH_TOL) counts the
    # threshold as reached there; the oracle without that rule kept c2 in its queue
    # and finished c1 at 8 instead of 9 (found by the weighted test above)
    case = ([1.0, 0.5], [1.0, 1.0], [
        (0.0, [(1, 0, 1.0), (1, 0, 1.0)]),
        (0.0, [(1, 0, 1.0), (1, 0, 1.0)]),
        (0.0, [(0, 0, 2.9999999999999996), (1, 0, 1.0)]),
    ])
    params = {"num_queues": 3, "first_threshold": 1.0, "multiplier": 3.0, "sharing": "weighted"}
    assert_agrees(case, "aalo", params, compiled)
    res = simulate(instance(*case), "aalo", params=params, compiled=compiled)
    np.testing.assert_allclose(res.completion, [6.0, 9.0, 10.0], rtol=1e-12)


def test_a_threshold_crossed_as_a_flow_finishes_is_one_event():
    # 0.7 * 3 = 2.1 bytes: c1's second threshold falls exactly at its last flow's
    # completion (2.75); in binary floating point 3 * 0.7 lies 4e-17 below it, which
    # must not demote c1 with a crumb left behind c0 (that would finish it at 2.95)
    coflows = [
        (1.0, [(0, 0, 2.0), (1, 1, 1.0), (1, 1, 2.25), (0, 0, 2.5), (1, 1, 1.75), (1, 0, 2.0)]),
        (0.75, [(0, 1, 1.25), (1, 0, 1.0)]),
    ]
    params = {"num_queues": 3, "first_threshold": 0.7, "multiplier": 3.0, "sharing": "strict"}
    want = oracle.simulate([1.0, 1.0], [1.0, 1.0], coflows, "aalo", params)
    assert want == [8.75, 2.75]
    for compiled in (True, False):
        assert_agrees(([1.0, 1.0], [1.0, 1.0], coflows), "aalo", params, compiled)


def test_a_wide_coflow_whose_longest_flow_finishes_at_the_threshold_stays():
    # W's flow 0->0 finishes at t = 1 with exactly theta^w = 1 sent: W's longest flow has
    # not exceeded the threshold (Algorithm 2's ">"; it never will), so W stays in queue 1
    # ahead of Y (W 2.5, Y 3.5). Earlier versions read ">" as ">=" and
    # demoted W here (W 3.5, Y 3), against the paper and the project's own M/M/1 model.
    coflows = [
        (0.0, [(1, 1, 2.0)]),  # A: narrow, holds uplink 1 until t = 2
        (0.0, [(0, 0, 1.0), (1, 0, 0.5)]),  # W: wide
        (0.5, [(0, 0, 2.0)]),  # Y: narrow, queue 1, behind W
    ]
    params = {"num_queues": 2, "width_thresholds": (), "narrow_width": 1,
              "wide_thresholds": (1.0,), "sharing": "strict"}
    assert oracle.simulate([1.0, 1.0], [1.0, 1.0], coflows, "mcs", params) == [2, 2.5, 3.5]
    for compiled in (True, False):
        assert_agrees(([1.0, 1.0], [1.0, 1.0], coflows), "mcs", params, compiled)


@settings(max_examples=150, deadline=None)
@given(cases(), st.booleans())
def test_varys_agrees_with_its_oracle(case, compiled):
    up, down, coflows = case
    res = simulate(instance(up, down, coflows), "varys", compiled=compiled)
    want = [float(x) for x in oracle_varys.simulate(up, down, coflows)]
    np.testing.assert_allclose(res.completion, want, rtol=1e-9, atol=1e-12)


def test_varys_backfills_a_coflow_one_of_whose_flows_meets_a_full_egress():
    # c0 holds downlink 0 until t = 1; c1's flow to downlink 1 grows on its own (it was
    # left idle while its group's other flow waited for downlink 0: c1 finished at 3)
    coflows = [(0.0, [(0, 0, 1.0)]), (0.0, [(1, 0, 1.0), (1, 1, 1.0)])]
    assert oracle_varys.simulate([1.0, 1.0], [1.0, 1.0], coflows) == [1, 2]
    for compiled in (True, False):
        res = simulate(instance([1.0, 1.0], [1.0, 1.0], coflows), "varys", compiled=compiled)
        assert res.completion.tolist() == [1.0, 2.0]


def test_an_exact_sebf_tie_keeps_admission_order_despite_rounding():
    # at t = 2.25 c2 (served since t = 2) and the new c0 both have Γ = 6 exactly; in
    # floating point c2's remaining data rounds either way, which must not reorder them
    coflows = [
        (2.25, [(1, 1, 0.25), (1, 1, 0.25), (0, 0, 0.75), (0, 0, 3.0), (0, 1, 2.25)]),
        (3.0, [(0, 1, 0.25), (0, 1, 3.0), (0, 1, 0.5)]),
        (2.0, [(1, 0, 2.5), (1, 0, 2.0), (0, 1, 3.0), (0, 0, 0.5), (1, 0, 1.25)]),
    ]
    want = [float(x) for x in oracle_varys.simulate([1.0, 1.0], [1.0, 1.0], coflows)]
    for compiled in (True, False):
        res = simulate(instance([1.0, 1.0], [1.0, 1.0], coflows), "varys", compiled=compiled)
        np.testing.assert_allclose(res.completion, want, rtol=1e-9)
