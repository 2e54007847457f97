"""``pfp`` with ``order="coflowsim"``: coflowsim's per-flow prioritization.

Checked against a separate fluid simulation of coflowsim's rule written here
(``FlowSimulator.proceedFlowsInAllRacksInSortedOrder`` with its ``addAscending``
lists, events at arrivals and completions), against the engine's reference path,
and on hand examples. The whole trace against coflowsim's own output is in
``test_coflowsim_reference.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import coflowopt as co
from coflowopt.sim import SimulationError, make_policy, simulate
from coflowopt.sim.policies.pfp import LIST_TIE
from coflowopt.sim.policies.varys import COFLOWSIM_STEP, in_coflowsim_steps

from ..strategies import instances
from .test_kernels import assert_same, both


def coflowsim_pfp(inst: co.Instance) -> np.ndarray:
    """Coflow completion times under coflowsim's PFP on uniform ports, event by event.

    Each receiver keeps a list; an admitted flow goes before the first listed flow
    with more bytes left than its size, "more" by more than half of what a port moves
    in one of coflowsim's 8 ms steps (its remaining bytes are whole steps' worth) and
    ``LIST_TIE`` of the size. At every instant receivers in index order each serve the
    first flow of their list whose sender no earlier receiver serves, at the port rate.
    """
    c = float(inst.fabric.capacity[0])
    half_step = 0.5 * COFLOWSIM_STEP * c
    rem = inst.flow_size.astype(float).copy()
    lists: list[list[int]] = [[] for _ in range(inst.num_ports)]
    order = np.lexsort((np.arange(inst.num_coflows), inst.release))
    done = np.full(inst.num_flows, np.nan)
    t, nxt = 0.0, 0
    while nxt < order.size or any(lists):
        while nxt < order.size and inst.release[order[nxt]] <= t + 1e-12:
            for f in np.flatnonzero(inst.flow_coflow == order[nxt]).tolist():
                lst = lists[int(inst.flow_dst[f])]
                size = float(inst.flow_size[f])
                k = next((i for i, g in enumerate(lst)
                          if rem[g] > size + max(LIST_TIE * size, half_step)), len(lst))
                lst.insert(k, f)
            nxt += 1
        busy: set[int] = set()
        served = []
        for lst in lists:
            for f in lst:
                if int(inst.flow_src[f]) not in busy:
                    busy.add(int(inst.flow_src[f]))
                    served.append(f)
                    break
        t_arr = inst.release[order[nxt]] if nxt < order.size else np.inf
        t_fin = min((t + rem[f] / c for f in served), default=np.inf)
        t_next = min(t_arr, t_fin)
        if not served and t_arr == np.inf:
            break
        for f in served:
            rem[f] -= c * (t_next - t)
        t = t_next
        for f in served:
            if rem[f] <= 1e-9 * inst.flow_size[f]:
                lists[int(inst.flow_dst[f])].remove(f)
                done[f] = t
    out = np.full(inst.num_coflows, -np.inf)
    np.maximum.at(out, inst.flow_coflow, done)
    return out


@settings(max_examples=80, deadline=None)
@given(instances(uniform=True, max_ports=4, max_coflows=5, max_flows=5))
def test_coflowsims_pfp_agrees_with_a_separate_simulation_of_its_rule(inst):
    res = simulate(inst, "pfp", {"order": "coflowsim"})
    assert np.allclose(res.completion, coflowsim_pfp(inst), rtol=1e-9, atol=1e-9)
    assert co.check_feasible(inst, res.schedule).ok


@settings(max_examples=40, deadline=None)
@given(instances(uniform=True, max_ports=4, max_coflows=6, max_flows=6, dependencies=True,
                 delays=True))
def test_coflowsims_pfp_compiled_equals_the_reference(inst):
    fast, ref = both(inst, "pfp", params={"order": "coflowsim"})
    assert_same(inst, fast, ref)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_lower_numbered_receiver_keeps_its_sender(compiled):
    # receiver 0's long flow from sender 1 comes first: the short flow into receiver 1
    # from the same sender waits 10 (shortest-first would run it first and end at 1)
    inst = co.Instance(co.Fabric.uniform(2), (
        co.Coflow("big", [1], [0], [10.0]), co.Coflow("small", [1], [1], [1.0])))
    res = simulate(inst, "pfp", {"order": "coflowsim"}, compiled=compiled)
    assert res.completion == pytest.approx([10.0, 11.0], rel=1e-12)
    assert simulate(inst, "pfp", compiled=compiled).completion == pytest.approx([11.0, 1.0])


@pytest.mark.parametrize("compiled", [True, False])
def test_a_new_flow_goes_before_the_first_listed_flow_with_more_left(compiled):
    # A (size 3) runs from 0; at 1 it has 2 left. B (size 2) joins after it (2 is not
    # more than 2), C (size 1) before it: C 1-2, A 2-4, B 4-6
    inst = co.Instance(co.Fabric.uniform(3), (
        co.Coflow("A", [0], [0], [3.0], release=0.0),
        co.Coflow("B", [1], [0], [2.0], release=1.0),
        co.Coflow("C", [2], [0], [1.0], release=1.0)))
    res = simulate(inst, "pfp", {"order": "coflowsim"}, compiled=compiled)
    assert res.completion == pytest.approx([4.0, 6.0, 2.0], rel=1e-12)


def test_the_order_is_validated():
    with pytest.raises(SimulationError, match="order must be one of remaining, coflowsim"):
        make_policy("pfp", {"order": "sjf"})


@pytest.mark.parametrize(("step", "a_ends", "b_ends"), [
    # A has 9 left when B (8.7) arrives: more by 0.3, above half of an 8 ms step's worth
    # (0.004) but not half of a unit step's (0.5), where B joins the list after A
    (COFLOWSIM_STEP, 18.7, 9.7),
    (1.0, 10.0, 18.7),
])
def test_the_list_margin_is_half_a_step_in_the_instances_time_unit(step, a_ends, b_ends):
    a = co.Coflow.from_flows("A", [(0, 0, 10.0)])
    b = co.Coflow.from_flows("B", [(1, 0, 8.7)], release=1.0)
    inst = co.Instance(co.Fabric.uniform(2, 1.0), (a, b))
    res = simulate(inst, "pfp", {"order": "coflowsim", "step": step})
    assert res.completion.tolist() == pytest.approx([a_ends, b_ends], rel=1e-12)


@pytest.mark.parametrize("step", [0.0, -1.0, float("nan")])
def test_the_step_must_be_positive(step):
    with pytest.raises(co.CoflowoptError, match="parameter step must be a finite number > 0"):
        simulate(co.Instance(co.Fabric.uniform(1), (co.Coflow.from_flows("A", [(0, 0, 1.0)]),)),
                 "pfp", {"order": "coflowsim", "step": step})


def test_coflowsims_units_are_its_steps_and_what_a_port_moves_in_one():
    rate = 2.0**27  # bytes per second: 2^20 bytes in 8 ms would need 131,072,000
    # released at 358.4 s (the trace's coflows admitted then): 44,800 steps, where
    # 358.4 / 0.008 is 44799.99999999999
    a = co.Coflow.from_flows("A", [(0, 1, 3 * rate * COFLOWSIM_STEP)], release=358.4)
    assert a.release / COFLOWSIM_STEP != 44800.0
    steps = in_coflowsim_steps(co.Instance(co.Fabric.uniform(2, rate), (a,)))
    assert steps.fabric.capacity.tolist() == [1.0] * 4
    assert steps.flow_size.tolist() == [3.0]
    assert steps.release.tolist() == [44800.0]
    off = co.Coflow.from_flows("B", [(0, 1, 1.0)], release=0.005)
    with pytest.raises(co.InstanceError, match=r"coflow 'B' is released at 0\.005, 0\.375 of a step"):
        in_coflowsim_steps(co.Instance(co.Fabric.uniform(2, rate), (a, off)))
