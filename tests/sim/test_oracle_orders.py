"""``fifo``, ``scf``, ``ncf``, ``tcf`` and ``baraat`` against an independent exact simulator.

The oracle (:mod:`.oracle_orders`) is written from the policies' docstrings
and the dissertation and shares no code with the engine, the policies, the
kernels or the other oracles. Random instances are those of
:mod:`.test_oracle` (values on a grid of quarters, with exact ties, or random
floats). The hand-made examples pin each documented choice with values worked
out on paper: what "shortest", "narrowest" and "smallest" measure and when
(remaining vs original), tie order, when a decision happens, the order of
the backfilling passes.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import io
from coflowopt.io.benchmark import COFLOWSIM_PORT_RATE
from coflowopt.sim import simulate
from coflowopt.sim.policies.varys import coflowsim_deadlines, java_random_doubles

from . import oracle_orders, oracle_varys
from .test_oracle import cases, instance

ORDERS = ["fifo", "scf", "ncf", "tcf"]
UNIT = [1.0, 1.0]


def assert_agrees(case: tuple, name: str, params: dict, compiled: bool) -> None:
    up, down, coflows = case
    res = simulate(instance(up, down, coflows), name, params=params, compiled=compiled)
    want = [float(x) for x in oracle_orders.simulate(up, down, coflows, name, params)]
    np.testing.assert_allclose(res.completion, want, rtol=1e-9, atol=1e-12)


def completions(case: tuple, name: str, params: dict | None = None) -> list[list[float]]:
    """The engine's completion times on the compiled and the reference path."""
    up, down, coflows = case
    return [simulate(instance(up, down, coflows), name, params=params or {}, compiled=c)
            .completion.tolist() for c in (True, False)]


def check(case: tuple, name: str, params: dict | None, want: list[float]) -> None:
    """The oracle gives ``want`` exactly, the engine on both paths to 1e-12."""
    assert oracle_orders.simulate(*case, name, params) == [oracle_orders.exact(x) for x in want]
    for got in completions(case, name, params):
        np.testing.assert_allclose(got, want, rtol=1e-12)


# --- random instances ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ORDERS)
@settings(max_examples=40, deadline=None)
@given(case=cases(), order=st.sampled_from(["remaining", "static", "coflowsim"]),
       compiled=st.booleans())
def test_order_policies_agree_with_the_oracle(name, case, order, compiled):
    assert_agrees(case, name, {"order": order}, compiled)


@settings(max_examples=80, deadline=None)
@given(
    case=cases(),
    name=st.sampled_from([*ORDERS, "varys"]),
    params=st.fixed_dictionaries({
        "order": st.sampled_from(["remaining", "static", "coflowsim"]),
        "backfill": st.sampled_from(["proportional", "greedy", "coflowsim", "none"]),
        "reschedule": st.sampled_from(["coflow", "flow"]),
    }),
    compiled=st.booleans(),
)
def test_every_backfilling_and_reschedule_option_agrees_with_the_oracle(case, name, params, compiled):
    assert_agrees(case, name, params, compiled)


@settings(max_examples=40, deadline=None)
@given(cases())
def test_the_two_varys_oracles_agree_exactly(case):
    # independent code for the same documented rules (SEBF + MADD + proportional backfilling)
    assert oracle_orders.simulate(*case, "varys") == oracle_varys.simulate(*case)


@settings(max_examples=80, deadline=None)
@given(
    case=cases(),
    threshold=st.one_of(st.sampled_from([0.25, 0.5, 0.75, 1.0, 1.5, 2.5]), st.floats(0.1, 4.0)),
    compiled=st.booleans(),
)
def test_baraat_agrees_with_the_oracle(case, threshold, compiled):
    assert_agrees(case, "baraat", {"heavy_threshold": threshold}, compiled)


@settings(max_examples=25, deadline=None)
@given(case=cases(), percentile=st.sampled_from([20.0, 50.0, 80.0]))
def test_baraat_default_threshold_is_the_percentile_of_coflow_sizes(case, percentile):
    assert_agrees(case, "baraat", {"heavy_percentile": percentile}, True)


# --- what each order measures --------------------------------------------------------------

def test_scf_measures_the_largest_remaining_flow_or_the_original_length():
    # at t = 1 c0 has 3 left of 4, c1 brings 3.5: remaining keeps c0 first, static puts c1 first
    case = (UNIT, UNIT, [(0.0, [(0, 0, 4.0)]), (1.0, [(0, 0, 3.5)])])
    check(case, "scf", None, [4.0, 7.5])
    check(case, "scf", {"order": "static"}, [7.5, 4.5])


def test_ncf_counts_unfinished_flows_or_all_flows():
    # c0's two short flows end at t = 1 (MADD 1/8 each, backfilled to 1/2); at t = 2 it has
    # one unfinished flow against c1's two (remaining: c0 first), three flows against two
    # (static: c1 first); min(senders, receivers) would be 2 against 2
    case = (UNIT, UNIT, [(0.0, [(0, 0, 0.5), (0, 0, 0.5), (1, 1, 4.0)]),
                         (2.0, [(1, 1, 1.0), (0, 0, 1.0)])])
    # remaining: c1's flow 0->0 is backfilled at t = 2 and ends at 3; its 1->1 waits for c0
    check(case, "ncf", None, [4.0, 5.0])
    # static: c1 runs at rate 1 on both; c0's 1->1 resumes at t = 3
    check(case, "ncf", {"order": "static"}, [5.0, 3.0])


def test_tcf_measures_remaining_bytes_or_total_size():
    # c0 (2 + 2 bytes) has 2 left at t = 1 when c1 brings 3.5
    case = (UNIT, UNIT, [(0.0, [(0, 0, 2.0), (1, 1, 2.0)]), (1.0, [(0, 0, 3.5)])])
    check(case, "tcf", None, [2.0, 5.5])
    # static: c1 first; c0's flow 1->1 is backfilled and ends at 2, its 0->0 waits until 4.5
    check(case, "tcf", {"order": "static"}, [5.5, 4.5])


def test_coflowsims_ncf_counts_senders_and_receivers():
    # c0: one sender, two receivers (min 1, 2 flows); c1: one flow (min 1). static: c1 first
    # (1 flow against 2), ends at 1, then c0 at 1/2 on each flow to 5; coflowsim: a tie, c0
    # first in index order: MADD gives c0's flows 1/2 each, ingress 0 is full, c1 waits to 4
    case = (UNIT, UNIT, [(0.0, [(0, 0, 2.0), (0, 1, 2.0)]), (0.0, [(0, 0, 1.0)])])
    check(case, "ncf", {"order": "static"}, [5.0, 1.0])
    check(case, "ncf", {"order": "coflowsim"}, [4.0, 5.0])


def test_coflowsims_lcf_compares_a_newcomer_with_the_bytes_left():
    # at t = 1 c0 has 3 left of 4 and c1 brings 3.5: coflowsim lists c1 after c0 (static:
    # before)
    case = (UNIT, UNIT, [(0.0, [(0, 0, 4.0)]), (1.0, [(0, 0, 3.5)])])
    check(case, "tcf", {"order": "static"}, [7.5, 4.5])
    check(case, "tcf", {"order": "coflowsim"}, [4.0, 7.5])


def test_coflowsims_lcf_never_resorts_its_list():
    # c0 (4 bytes) is listed before c1 (4.25); c1's flows 1->1 and 2->2 are backfilled at
    # rate 1, so at c2's arrival (t = 1) c1 has 2.25 left against c0's 3. The remaining
    # order puts c1 first then (MADD: 1/4 on 0->0, 1 on the others; c0 gets 3/4), c1 ends
    # at 2 and c0 at 4.25; coflowsim's list keeps c0 first, c1 needs its ingress 0 and is
    # skipped by MADD, c2 (10 bytes, last) takes link 1 by MADD: c1's 1->1 waits until c0
    # ends at 4, then c1 (Γ = 1, 0->0 backfilled to 1) ends at 5, and c2 at 12
    three = [1.0, 1.0, 1.0]
    case = (three, three, [(0.0, [(0, 0, 4.0)]),
                           (0.0, [(1, 1, 2.0), (2, 2, 2.0), (0, 0, 0.25)]),
                           (1.0, [(1, 1, 10.0)])])
    check(case, "tcf", None, [4.25, 2.0, 12.0])
    check(case, "tcf", {"order": "coflowsim"}, [4.0, 5.0, 12.0])


@pytest.mark.parametrize("name", ["fifo", "scf", "varys"])
@settings(max_examples=25, deadline=None)
@given(case=cases())
def test_coflowsims_list_is_the_static_order_for_fixed_keys(name, case):
    # coflowsim's FIFO, SCF and SEBF comparators read keys fixed at admission: its list is
    # the static order
    up, down, coflows = case
    runs = [simulate(instance(up, down, coflows), name, params={"order": o}).completion
            for o in ("static", "coflowsim")]
    np.testing.assert_array_equal(*runs)


def test_fifo_blocks_a_small_late_coflow_behind_a_large_one():
    case = (UNIT, UNIT, [(0.0, [(0, 0, 4.0)]), (1.0, [(0, 0, 1.0)])])
    check(case, "fifo", None, [4.0, 5.0])
    check(case, "scf", None, [5.0, 2.0])


@pytest.mark.parametrize(("name", "want"), [("fifo", [2.0, 3.0]), ("ncf", [2.0, 3.0]),
                                            ("tcf", [3.0, 1.0]), ("scf", [3.0, 1.0])])
def test_simultaneous_coflows_with_equal_keys_go_in_index_order(name, want):
    check((UNIT, UNIT, [(0.0, [(0, 0, 2.0)]), (0.0, [(0, 0, 1.0)])]), name, None, want)


@pytest.mark.parametrize("name", ["scf", "tcf"])
def test_a_remaining_key_equal_to_a_new_coflows_keeps_admission_order(name):
    # exact ties: at t = 1, 2 - 1 = 1 against 1; at t = 0.1, 0.3 - 0.1 against 0.2 (in
    # binary floating point 0.19999999999999998 against 0.2: still a tie)
    check((UNIT, UNIT, [(0.0, [(0, 0, 2.0)]), (1.0, [(0, 0, 1.0)])]), name, None, [2.0, 3.0])
    check((UNIT, UNIT, [(0.0, [(0, 0, 0.3)]), (0.1, [(0, 0, 0.2)])]), name, None, [0.3, 0.5])


# --- when decisions happen and how spare capacity is handed out ----------------------------

def test_a_flow_completion_is_a_decision_only_with_reschedule_flow():
    # c0: MADD 1/2 on 0->0, backfilled to 1, done at t = 1; c1 needs uplink 1 (full until 2)
    case = (UNIT, UNIT, [(0.0, [(0, 0, 1.0), (1, 1, 2.0)]), (0.0, [(0, 0, 2.0), (1, 1, 0.5)])])
    check(case, "fifo", None, [2.0, 4.0])  # uplink 0 idles from 1 to 2
    check(case, "fifo", {"reschedule": "flow"}, [2.0, 3.0])  # c1's 0->0 is backfilled at 1
    check(case, "fifo", {"backfill": "none"}, [2.0, 4.0])


def test_proportional_backfilling_goes_ingress_port_by_ingress_port():
    # MADD: c0 (Γ = 4 on 2->2) runs 1->0 at 1/4, c1 needs the full downlink 2; backfilling
    # serves uplink 0 (c1's 0->0 takes the 3/4 left of downlink 0) before uplink 1 (c0's 1->0
    # finds it full). Coflow by coflow, c0's 1->0 would take it and c1 end at 8
    case = ([1.0] * 3, [1.0] * 3, [(0.0, [(1, 0, 1.0), (2, 2, 4.0)]), (0.0, [(0, 0, 3.0), (0, 2, 1.0)])])
    check(case, "fifo", None, [4.0, 5.0])
    check(case, "fifo", {"backfill": "none"}, [4.0, 8.0])


def test_greedy_backfilling_serves_flows_in_arrival_order_not_priority_order():
    # scf puts c1 (length 3) first: MADD 1 on 1->1, 2/3 on 0->0; c0 needs the full downlink 1.
    # The 1/3 left on uplink/downlink 0 goes to c0's 0->0 (arrival order: c0 first), which has
    # 2 left at t = 3 and ends with c0 at 9; in priority order c1's 0->0 would take it and
    # c0 end at 10
    case = (UNIT, UNIT, [(0.0, [(0, 0, 3.0), (0, 1, 4.0)]), (0.0, [(1, 1, 3.0), (0, 0, 2.0)])])
    check(case, "scf", {"backfill": "greedy"}, [9.0, 3.0])


def test_coflowsim_refills_in_its_edf_order_ties_in_priority_order():
    # four coflows at time 0 (found by a random search): their deadlines (sizes / 2^27 ms)
    # are below a millisecond, so coflowsim's refill keys tie and the refill follows the
    # SEBF order; by coflow index it would give 103/7 and 9 for the first and third
    case = ([1.0] * 3, [1.0] * 3, [
        (0.0, [(0, 1, 5.0), (1, 2, 2.0), (2, 1, 5.0)]),
        (0.0, [(1, 2, 4.0), (1, 1, 4.0), (1, 0, 5.0)]),
        (0.0, [(0, 2, 3.0), (0, 1, 3.0), (1, 0, 2.0)]),
        (0.0, [(1, 2, 2.0), (2, 2, 2.0)]),
    ])
    want = [Fraction(307, 21), Fraction(19), Fraction(26, 3), Fraction(4)]
    assert oracle_orders.simulate(*case, "varys", {"backfill": "coflowsim"}) == want
    for got in completions(case, "varys", {"backfill": "coflowsim"}):
        np.testing.assert_allclose(got, [float(x) for x in want], rtol=1e-12)


def test_coflowsims_refill_deadlines_use_its_random_numbers():
    # java.util.Random(17).nextDouble(): 0.7323115139597316, 0.6973704783607497,
    # 0.08295611145017068 (printed by a JVM); drawn in release order, so coflow 1 (released
    # first) takes the first; a deadline is the largest port load / 2^27 * 1000 ms
    peak = np.array([2.0**27, 2.0**27, 3 * 2.0**25])
    got = coflowsim_deadlines(peak, np.array([1.0, 0.0, 2.0]))
    want = [1000 * 1.6973704783607497, 1000 * 1.7323115139597316, 750 * 1.08295611145017068]
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert java_random_doubles(17, 3).tolist() == [0.7323115139597316, 0.6973704783607497,
                                                   0.08295611145017068]


def test_coflowsim_backfilling_gives_coflowsims_completion_times(tmp_path):
    # a three-coflow trace in the benchmark format, run through coflowsim's SEBF (its Java
    # simulator, rebuilt from its public repository): CCTs 1.2, 2.2 and 4.8 s.
    # MADD serves coflow 1 and then one of 2 and 3 (both need rack 3's downlink); coflowsim
    # first shares what is left among the skipped coflow's flows, then refills greedily
    path = tmp_path / "tiny.txt"
    path.write_text("4 3\n1 0 1 0 1 1:150.0\n2 0 2 0 2 1 3:200.0\n3 0 2 0 2 1 3:400.0\n")
    inst = io.read(path, port_rate=COFLOWSIM_PORT_RATE)
    for compiled in (True, False):
        got = simulate(inst, "varys", order="static", backfill="coflowsim", compiled=compiled)
        assert got.completion.tolist() == pytest.approx([1.2, 2.2, 4.8], rel=1e-9)
    # the refill alone (backfill="greedy") differs
    greedy = simulate(inst, "varys", order="static", backfill="greedy")
    assert greedy.completion.tolist() == pytest.approx([1.2, 2.0, 5.2], rel=1e-9)


# --- baraat --------------------------------------------------------------------------------

def test_baraat_lets_the_next_coflow_in_when_the_first_turns_heavy():
    # uplink 0: c0 first; c1 waits until c0 has sent 1.5 there (t = 1.5), then the two
    # flows share the uplink
    case = (UNIT, UNIT, [(0.0, [(0, 0, 3.0)]), (0.0, [(0, 1, 1.0)])])
    assert oracle_orders.simulate(*case, "baraat", {"heavy_threshold": 1.5}) == [4, Fraction(7, 2)]
    for got in completions(case, "baraat", {"heavy_threshold": 1.5}):
        np.testing.assert_allclose(got, [4.0, 3.5], rtol=1e-12)


# regression: the engine forgot a finished flow's bytes (c0 4.5 instead of 5.5), and counted a
# coflow heavy about 1e-9 * threshold before its bytes reached the threshold
def test_baraat_counts_the_bytes_of_finished_flows():
    # c0 sends 1 + 1 bytes through uplink 0 by t = 2 (both flows at 1/2; 0->0 ends), then
    # 0->1 alone: 2.5 bytes at t = 2.5, c0 is heavy there and c1 shares the uplink:
    # c0 ends at 5.5, c1 at 6. Forgetting 0->0's byte delays that to t = 3.5 (c0 4.5)
    case = (UNIT, UNIT, [(0.0, [(0, 0, 1.0), (0, 1, 3.0)]), (0.0, [(0, 0, 2.0)])])
    assert oracle_orders.simulate(*case, "baraat", {"heavy_threshold": 2.5}) == [Fraction(11, 2), 6]
    for got in completions(case, "baraat", {"heavy_threshold": 2.5}):
        np.testing.assert_allclose(got, [5.5, 6.0], rtol=1e-12)


def test_the_oracle_rejects_unknown_parameters():
    with pytest.raises(ValueError, match="unknown parameters for scf"):
        oracle_orders.simulate(UNIT, UNIT, [(0.0, [(0, 0, 1.0)])], "scf", {"sharing": "x"})


def test_keys_equal_at_thirty_bits_are_ties_in_both_oracle_and_engine():
    # 3 and 2.9999999999999996 bytes are one key at 30 significant bits: a tie, so admission
    # order (c0 first), not c1's one-ulp-shorter flow (hypothesis found the oracle comparing
    # exactly: [6, 3])
    case = (UNIT, UNIT, [(0.0, [(0, 0, 3.0)]), (0.0, [(0, 0, 2.9999999999999996)])])
    want = oracle_orders.simulate(*case, "scf", {"order": "remaining"})
    assert want[0] == 3 and want[1] == 3 + Fraction("2.9999999999999996")
    for got in completions(case, "scf", {"order": "remaining"}):
        np.testing.assert_allclose(got, [3.0, 6.0], rtol=1e-12)


@pytest.mark.parametrize("backfill", ["proportional", "greedy"])
@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("name", "size", "want"), [("fifo", 1.0, 1010.0), ("varys", 101.0, 2010.0)])
def test_a_link_within_sat_of_full_gives_nothing_more(backfill, compiled, name, size, want):
    # a corner case: MADD leaves 9e-10 of egress 0, which the engine's SAT rule counts as
    # full; in exact arithmetic B's first flow would crawl on it while A runs (C_B 1009.999991
    # for fifo, 2009.999991 for varys)
    case = ([1.0, 0.1], [1.0 + 9e-10, 1.0],
            [(0.0, [(0, 0, 1000.0)]), (0.0, [(1, 0, size), (0, 1, 1e-3)])])
    assert_agrees(case, name, {"backfill": backfill}, compiled)
    got = oracle_orders.simulate(*case, name, {"backfill": backfill})
    assert float(got[1]) == pytest.approx(want, rel=1e-12)
    if name == "varys" and backfill == "proportional":  # the defaults' oracle too
        assert float(oracle_varys.simulate(*case)[1]) == pytest.approx(want, rel=1e-12)


# ---- the simpler policies


@pytest.mark.parametrize("name", ["scf", "tcf", "varys"])
def test_static_keys_count_the_later_waves(name):
    # A: 1 unit now and 10 at 0.5; B: 3 units. With A's whole size B goes first;
    # the key was taken from A's first wave alone (1 < 3) and A went first
    from coflowopt import Coflow, Fabric, Instance

    inst = Instance(Fabric.uniform(1), (
        Coflow.from_flows("A", [(0, 0, 1.0, 0.0), (0, 0, 10.0, 0.5)]),
        Coflow.from_flows("B", [(0, 0, 3.0)])))
    res = simulate(inst, name, order="static")
    assert res.completion[1] == pytest.approx(3.0, rel=1e-12)  # B from 0, alone
    assert res.completion[0] == pytest.approx(14.0, rel=1e-12)


def test_ncf_static_key_is_the_full_width():
    from coflowopt import Coflow, Fabric, Instance

    inst = Instance(Fabric.uniform(3), (
        Coflow.from_flows("A", [(0, 0, 1.0, 0.0), (1, 1, 1.0, 0.5), (2, 2, 1.0, 0.5)]),
        Coflow.from_flows("B", [(0, 0, 1.0), (1, 1, 1.0)])))
    res = simulate(inst, "ncf", order="static")  # B (2 flows) before A (3)
    assert res.completion.tolist() == pytest.approx([2.0, 1.0], rel=1e-12)


def test_flags_and_orders_are_checked_in_the_api():
    from coflowopt.sim import SimulationError, make_policy

    for name, key in (("hug", "cooperative"), ("psp", "elastic"), ("drf", "elastic")):
        with pytest.raises(SimulationError, match=f"parameter {key} must be true or false"):
            make_policy(name, {key: "false"})
    assert make_policy("static-order", {"order": "c2"}).params.order == ("c2",)
    assert make_policy("static-order", {"order": 5}).params.order == (5,)
    with pytest.raises(SimulationError, match="must list coflow ids or indices"):
        make_policy("static-order", {"order": 5.5})
