"""``sincronia`` (and ``orders.bssi``) against an independent exact simulator (:mod:`.oracle_sincronia`).

The oracle shares no code with the engine, the policies, the kernels or
``coflowopt.orders``, and computes in exact rationals. Instances as in
``test_oracle.py`` (its strategy): 2-4 ports, up to 5 coflows of up to 6
flows, on a grid of quarters (exact ties) or random floats (releases on a grid
of 1/1000: the engine treats instants closer than a relative 1e-12 as one),
here also with coflow weights (BSSI's scaling step only matters when they differ or when a
coflow is placed last on one link and the others meet again on another).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt.instance import Coflow, Fabric, Instance
from coflowopt.orders import bssi
from coflowopt.schedule import check_feasible
from coflowopt.sim import SimulationError, simulate

from . import oracle_sincronia as oracle
from .test_oracle import cases as unweighted_cases

Case = tuple[list[float], list[float], list[tuple[float, list]], list[float] | None]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    up, down, coflows = draw(unweighted_cases())
    weight = st.sampled_from([1.0, 2.0, 3.0]) | st.floats(0.2, 5.0)
    weights = draw(st.none() | st.lists(weight, min_size=len(coflows), max_size=len(coflows)))
    return up, down, coflows, weights


def instance(case: Case) -> Instance:
    up, down, coflows, weights = case
    return Instance(Fabric(up, down), tuple(
        Coflow(f"c{k}", [f[0] for f in fl], [f[1] for f in fl], [f[2] for f in fl], release=r,
               weight=1.0 if weights is None else weights[k])
        for k, (r, fl) in enumerate(coflows)
    ))


def assert_agrees(case: Case, compiled: bool, reschedule: str, reorder: str = "events") -> None:
    """Completion times as the oracle's (and a feasible schedule)."""
    up, down, coflows, weights = case
    inst = instance(case)
    res = simulate(inst, "sincronia", params={"reschedule": reschedule, "reorder": reorder},
                   compiled=compiled)
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    want = [float(x) for x in oracle.simulate(
        up, down, coflows, weights, reschedule=reschedule, stall="idle", reorder=reorder)]
    np.testing.assert_allclose(res.completion, want, rtol=1e-9, atol=1e-12)


@settings(max_examples=250, deadline=None)
@given(cases(), st.booleans())
def test_sincronia_agrees_with_its_oracle(case, compiled):
    assert_agrees(case, compiled, "flow")


@settings(max_examples=150, deadline=None)
@given(cases(), st.booleans())
def test_sincronia_reschedule_coflow_agrees_with_its_oracle(case, compiled):
    assert_agrees(case, compiled, "coflow")


@settings(max_examples=150, deadline=None)
@given(cases(), st.booleans(), st.sampled_from(["flow", "coflow"]))
def test_sincronia_reorder_arrivals_agrees_with_its_oracle(case, compiled, reschedule):
    assert_agrees(case, compiled, reschedule, "arrivals")


def test_reorder_arrivals_keeps_the_order_a_departure_would_change():
    # loads u0 3, u1 7, d0 6, d1 4: BSSI places c2 last on u1 (w/v 1/4 < 1/3), then c1 on d0
    # (residual 1/4 over 3 < 1/3): c0, c1, c2. c0 and c2 run; at t = 3 c0 departs. Re-ordered
    # on what is left (c1: 3 on u1 and d0, c2: 1 on u1 and d1; bottleneck u1 at 4) c2 goes
    # first and ends at 4, c1 at 7; kept, c1 takes u1 from c2, ends at 6 and c2 at 7
    unit = [1.0, 1.0]
    flows = [(0.0, [(0, 0, 3.0)]), (0.0, [(1, 0, 3.0)]), (0.0, [(1, 1, 4.0)])]
    assert oracle.simulate(unit, unit, flows) == [3, 7, 4]
    assert oracle.simulate(unit, unit, flows, reorder="arrivals") == [3, 6, 7]
    for compiled in (True, False):
        assert_agrees((unit, unit, flows, None), compiled, "flow", "arrivals")
        assert_agrees((unit, unit, flows, None), compiled, "flow")


def test_reorder_arrivals_reranks_when_a_departure_admits_a_successor():
    # the example above plus c3 on a port of its own, admitted when c0 departs (starts_after):
    # that admission re-ranks every active coflow on its remaining loads, as "events" does
    # at the departure itself, so both rules give the re-ordered CCTs
    unit = [1.0, 1.0, 1.0]
    flows = [(0, 0, 3.0)], [(1, 0, 3.0)], [(1, 1, 4.0)]
    coflows = [Coflow.from_flows(f"c{k}", fl) for k, fl in enumerate(flows)]
    coflows.append(Coflow.from_flows("c3", [(2, 2, 0.5)], starts_after=["c0"]))
    inst = Instance(Fabric(unit, unit), tuple(coflows))
    for compiled in (True, False):
        for reorder in ("arrivals", "events"):
            res = simulate(inst, "sincronia", params={"reorder": reorder}, compiled=compiled)
            np.testing.assert_allclose(res.completion, [3, 7, 4, 3.5], rtol=1e-12)
            assert check_feasible(inst, res.schedule)
    # without c3 the rules part (the test above)
    res = simulate(inst.subset(range(3)), "sincronia", params={"reorder": "arrivals"})
    np.testing.assert_allclose(res.completion, [3, 6, 7], rtol=1e-12)


def test_reorder_rejects_an_unknown_rule():
    with pytest.raises(SimulationError, match="reorder"):
        simulate(instance(([1.0], [1.0], [(0.0, [(0, 0, 1.0)])], None)), "sincronia",
                 params={"reorder": "departures"})


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_bssi_order_and_dual_agree_with_the_oracle(n, links, seed):
    # random floats without repeats: with exact ties (equal link sums, equal residual
    # ratios) the two sides must agree on the tie rule: see the regression tests below
    rng = np.random.default_rng(seed)
    v = rng.uniform(0.05, 3.0, (n, links)) * (rng.random((n, links)) < 0.7)
    v[v.sum(axis=1) == 0, 0] = 1.0  # every coflow has some load
    w = rng.uniform(0.2, 5.0, n)
    res = bssi(v, w)
    rows = [{j: oracle.exact(x) for j, x in enumerate(row) if x > 0} for row in v]
    order, dual = oracle.bssi(rows, [oracle.exact(x) for x in w], list(range(links)))
    assert list(res.order) == order
    assert res.dual == pytest.approx(float(dual), rel=1e-9)


TIE = [(0.0, [(0, 0, 3.0)]), (0.0, [(0, 0, 1.0)]), (0.0, [(0, 0, 1.5)])]


def test_the_oracle_on_examples_worked_by_hand():
    unit = [1.0, 1.0]
    # loads: uplink 0 and downlink 0 both 3 (tie: uplink 0); w/v there: c0 1/2, c1 1 -> c0 last
    two = [(0.0, [(0, 0, 2.0)]), (0.0, [(0, 1, 1.0), (1, 0, 1.0)])]
    assert oracle.simulate(unit, unit, two) == [3, 1]
    # w0 = 3: c0 3/2 against c1 1 -> c1 last; c0 holds uplink 0 and downlink 0 until t = 2
    assert oracle.simulate(unit, unit, two, [3.0, 1.0]) == [2, 3]
    # the scaling step: uplink 0 (2, tied with downlink 1) places c1 last (tied with c2:
    # lowest index), beta = 1 leaves c2 with weight 0, so on downlink 1 c2 goes last, not c0
    # (beta = 0), then c0 (beta = 1); dual 1 * (2**2 + 2) / 2 + 0 + 1 * (1 + 1) / 2 = 4
    three = [(0.0, [(1, 1, 1.0)]), (0.0, [(0, 0, 1.0)]), (0.0, [(0, 1, 1.0)])]
    assert oracle.bssi(
        [{"u1": Fraction(1), "d1": Fraction(1)}, {"u0": Fraction(1), "d0": Fraction(1)},
         {"u0": Fraction(1), "d1": Fraction(1)}],
        [Fraction(1)] * 3, ["u0", "u1", "d0", "d1"],
    ) == ([0, 2, 1], 4)
    assert oracle.simulate(unit, unit, three) == [1, 1, 2]
    # reschedule="coflow": the first flow takes uplink 0; when it ends nothing runs, and
    # the second flow is started at once (also when an admission is pending)
    one = [(0.0, [(0, 1, 0.25), (0, 0, 1.25)])]
    assert oracle.simulate(unit, unit, one, reschedule="coflow") == [1.5]
    assert oracle.simulate(unit, unit, [*one, (1.25, [(1, 1, 1.0)])], reschedule="coflow") == [
        Fraction(3, 2), Fraction(9, 4)]
    # an exact tie after scaling: one link, w/v = 2/3, 2, 2 -> c0 last, beta = 2/3; residual
    # ratios (2 - 2/3) / 1 = (3 - 1) / 1.5 = 4/3 -> c1 (lowest index) last: c2, c1, c0
    assert oracle.bssi([{0: Fraction(3)}, {0: Fraction(1)}, {0: Fraction(3, 2)}],
                       [Fraction(2), Fraction(2), Fraction(3)], [0])[0] == [2, 1, 0]
    assert oracle.simulate([1.0], [1.0], TIE, [2.0, 2.0, 3.0]) == [
        Fraction(11, 2), Fraction(5, 2), Fraction(3, 2)]
    # links tied at 10/3 (uplink 1: 2/3 + 8/3, downlink 0: 2.5/0.75): uplink 1 is lower, c1
    # (w/v = 3/8 against 3/2) goes last; c0's 1->0 runs first, then 0->0 and c1 side by side
    seen: list[str] = []
    assert oracle.simulate([0.75, 0.75], [0.75, 1.25], [
        (0.0, [(1, 0, 0.5), (0, 0, 2.0)]), (0.0, [(1, 1, 2.0)])], seen=seen) == [
        Fraction(10, 3), Fraction(10, 3)]
    assert seen == ["links tied with ('u', 1)"]
    for case in ((unit, unit, two, None), (unit, unit, two, [3.0, 1.0]),
                 (unit, unit, three, None), (unit, unit, one, None)):
        for compiled in (True, False):
            assert_agrees(case, compiled, "flow")
            assert_agrees(case, compiled, "coflow")


# regression (fixed): orders.bssi breaks an exact tie by rounding: after c0 (w/v = 2/3) is
# placed last the residual ratios of c1 and c2 are both 4/3, and the documented rule (lowest
# index) places c1 last; in floating point c1's is 2 - 0.666...6 = 1.3333333333333335, one ulp
# above c2's 2.0 / 1.5, and c2 goes last
def test_an_exact_bssi_tie_goes_to_the_lowest_index():
    assert list(bssi(np.array([[3.0], [1.0], [1.5]]), np.array([2.0, 2.0, 3.0])).order) == [
        2, 1, 0]


EXACT_TIES = {
    # the tie of orders.bssi above, in a simulation: c2 before c1 on the one port (the
    # weighted sum is the same, the completion times are not)
    "ratios": ([1.0], [1.0], TIE, [2.0, 2.0, 3.0]),
    # uplink 1 and downlink 0 both carry 10/3 (2/3 + 8/3 against 2.5/0.75); in floating
    # point 0.666...6 + 2.666...5 = 3.333...3 < 3.333...5, so downlink 0 is the bottleneck
    # and c0 goes last (c0 10/3 and c1 8/3 instead of both 10/3)
    "link loads": ([0.75, 0.75], [0.75, 1.25],
                   [(0.0, [(1, 0, 0.5), (0, 0, 2.0)]), (0.0, [(1, 1, 2.0)])], None),
}


# regression (fixed): an exact BSSI tie (of residual ratios, of link loads) broken by floating-
# point rounding instead of the documented rule (lowest index)
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("tie", list(EXACT_TIES))
def test_sincronia_follows_the_tie_rule_on_exact_ties(tie, compiled):
    assert_agrees(EXACT_TIES[tie], compiled, "flow")


# regression (fixed): reschedule='coflow': when the last running flow ends while an admission is
# pending, the engine waits for the admission (SimView.stalled: 'nothing else is pending') and
# leaves c0's second flow idle on an empty fabric from 0.25 to 1.25; models/simulator.md names
# 'the moment the last running flow ends' as a decision point
@pytest.mark.parametrize("compiled", [True, False])
def test_reschedule_coflow_re_decides_when_the_last_running_flow_ends(compiled):
    coflows = [(0.0, [(0, 1, 0.25), (0, 0, 1.25)]), (1.25, [(1, 1, 1.0)])]
    assert_agrees(([1.0, 1.0], [1.0, 1.0], coflows, None), compiled, "coflow")


@pytest.mark.parametrize("compiled", [True, False])
def test_weights_used_up_exactly_tie_at_zero(compiled):
    # hypothesis found it: at BSSI's third step c3 and c4 have residual weight exactly 0
    # (both took the same share of the step before), a tie that goes to the lowest index
    # (c3 last); in floating point their residues were 1e-17-size crumbs, which relative
    # tie keys cannot tie with each other, and the order came out [0, 3, 4, 2, 1]
    case = ([1.0, 1.0], [1.0, 0.5], [
        (0.0, [(0, 1, 0.25)]), (0.0, [(0, 1, 0.5), (0, 1, 0.5), (0, 1, 0.1015625)]),
        (0.0, [(0, 1, 0.109375)] * 3), (0.0, [(0, 0, 0.25)] + [(0, 1, 0.109375)] * 3),
        (0.0, [(0, 1, 0.109375)] * 3 + [(1, 0, 1.0)] * 2)], None)
    v = np.array([[0.25, 0, 0, 0.5], [1.1015625, 0, 0, 2.203125], [0.328125, 0, 0, 0.65625],
                  [0.578125, 0, 0.25, 0.65625], [0.328125, 2.0, 2.0, 0.65625]])
    assert list(bssi(v, np.ones(5)).order) == [0, 4, 3, 2, 1]
    assert_agrees(case, compiled, "coflow")


@pytest.mark.parametrize("compiled", [True, False])
def test_a_later_wave_reorders(compiled):
    # the order was recomputed only at first admissions: A's second wave (10
    # units at 0.5) kept A ahead of B (2 units) with 10.5 units left; BSSI on what is
    # left at 0.5 puts B first
    inst = Instance(Fabric.uniform(1), (
        Coflow.from_flows("A", [(0, 0, 1.0, 0.0), (0, 0, 10.0, 0.5)]),
        Coflow.from_flows("B", [(0, 0, 2.0)])))
    res = simulate(inst, "sincronia", compiled=compiled)
    assert res.completion == pytest.approx([13.0, 2.5], rel=1e-12)
