"""Creek's C-SJF: hand-computed cases of its thresholds, its condition and its starvation mitigation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.sim import SimulationError, simulate
from tests.strategies import instances, network_instances


def _one_link(*coflows: Coflow) -> Instance:
    return Instance(Fabric.uniform(1, 1.0), coflows)


def _served(res, flow: int, t0: float, t1: float) -> float:
    s = res.schedule
    a, b = np.maximum(s.start, t0), np.minimum(s.end, t1)
    return float(np.sum(np.where((s.flow == flow) & (b > a), (b - a) * s.rate, 0.0)))


def test_a_coflow_is_demoted_when_its_bytes_cross_a_threshold():
    # A (4) alone from 0 crosses 1 at t = 1; B (0.5), arriving at 2 in the top queue, takes the
    # link: done at 2.5 (per-flow fairness shares it: 3.0)
    inst = _one_link(Coflow.from_flows("A", [(0, 0, 4.0)]),
                     Coflow.from_flows("B", [(0, 0, 0.5)], release=2.0))
    res = simulate(inst, "creek", first_threshold=1.0, wait_threshold=None)
    assert res.completion.tolist() == pytest.approx([4.5, 2.5], rel=1e-12)
    assert simulate(inst, "fair").completion[1] == pytest.approx(3.0)


def test_flows_of_one_queue_share_max_min():
    # B arrives at 0.1 while A (0.1 sent) is still in the top queue: 0.5 each, B done at 1.1
    inst = _one_link(Coflow.from_flows("A", [(0, 0, 4.0)]),
                     Coflow.from_flows("B", [(0, 0, 0.5)], release=0.1))
    res = simulate(inst, "creek", first_threshold=1.0, wait_threshold=None)
    assert res.completion.tolist() == pytest.approx([4.5, 1.1], rel=1e-12)


def test_a_completed_sub_coflow_places_its_coflow_by_the_estimated_size():
    # A: one sub-coflow of 3 into receiver 1 and three of 30 from one uplink. When the first
    # completes (t = 3) A has 6 bytes but an estimated 3 x 4 = 12 >= 10: third queue at once,
    # so E (5 into receiver 2, from 3.5) runs alone after its first byte: done at 8.5.
    # Without the condition A stays in the second queue until its bytes reach 10 at t = 7 and
    # shares receiver 2's link with E from 4.5 (E gets 2/3): E done at 9 1/3.
    inst = Instance(Fabric.uniform(6, 1.0), (
        Coflow.from_flows("A", [(0, 1, 3.0), (1, 2, 30.0), (1, 3, 30.0), (1, 4, 30.0)]),
        Coflow.from_flows("E", [(5, 2, 5.0)], release=3.5)))
    kw = {"first_threshold": 1.0, "wait_threshold": None}
    assert simulate(inst, "creek", condition=True, **kw).completion[1] == pytest.approx(8.5, rel=1e-12)
    assert simulate(inst, "creek", condition=False, **kw).completion[1] == pytest.approx(28 / 3, rel=1e-12)


def test_sub_coflows_done_before_the_last_wave_count_once_the_coflow_is_admitted():
    # A: 0->0 (1, done at 1) and a second wave 1->1 (4, delay 2); B: 1->1 (1) at 2. At 2 A
    # is fully admitted, its receiver-0 sub-coflow complete: estimate 1 x 2 receivers = 2
    # >= 1.5, so A goes to queue 1 and B runs alone on port 1 (done at 3, not 3.5)
    A = Coflow.from_flows("A", [(0, 0, 1.0, 0.0), (1, 1, 4.0, 2.0)])
    B = Coflow.from_flows("B", [(1, 1, 1.0)], release=2.0)
    inst = Instance(Fabric.uniform(2, 1.0), (A, B))
    res = simulate(inst, "creek", num_queues=3, first_threshold=1.5, wait_threshold=None)
    assert res.completion.tolist() == pytest.approx([7.0, 3.0], rel=1e-12)
    res = simulate(inst, "creek", num_queues=3, first_threshold=1.5, wait_threshold=None,
                   condition=False)
    assert res.completion.tolist() == pytest.approx([7.0, 3.5], rel=1e-12)


def test_a_smaller_estimate_later_does_not_promote_a_coflow():
    # uplinks 1, 0.1, 0.2, 1. A: 0->0 (1), 1->1 (0.2), 2->2 (10); D: 2->3 (1.5) at 1. At 1
    # A's first sub-coflow is done: estimate 1 x 3 = 3 >= 2, A drops to queue 1 (bytes
    # 1.3) and D takes uplink 2 alone (0.2). At 2 the estimate falls to 1.2 / 2 x 3 = 1.8:
    # A stays in queue 1, and D ends at 1 + 1.5 / 0.2 = 8.5
    A = Coflow.from_flows("A", [(0, 0, 1.0), (1, 1, 0.2), (2, 2, 10.0)])
    D = Coflow.from_flows("D", [(2, 3, 1.5)], release=1.0)
    inst = Instance(Fabric(np.array([1, 0.1, 0.2, 1.0]), np.ones(4)), (A, D))
    res = simulate(inst, "creek", num_queues=3, first_threshold=2.0, wait_threshold=None)
    assert res.completion[1] == pytest.approx(8.5, rel=1e-12)
    assert check_feasible(inst, res.schedule).ok


def test_thresholds_beyond_the_largest_float_are_never_reached_silently():
    inst = Instance(Fabric.uniform(2, 1.0), (Coflow.from_flows("A", [(0, 0, 3.0)]),
                                             Coflow.from_flows("B", [(1, 0, 1.0)])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, want in (("creek", [4.0, 2.0]), ("aalo", [3.0, 4.0])):  # (aalo: FIFO)
            for first in (1e300, 1e308):
                res = simulate(inst, name, first_threshold=first, multiplier=1e10)
                assert res.completion.tolist() == pytest.approx(want, rel=1e-12)


def test_thresholds_whose_power_alone_overflows_stay_finite():
    from coflowopt.sim.policies.aalo import ladder

    assert ladder(1e-300, 1e100, 6).tolist() == [1e-300, 1e-200, 1e-100, 1.0, 1e100]
    assert ladder(1e300, 1e10, 3).tolist() == [1e300, np.inf]
    assert ladder(10 * 2**20, 10.0, 8).tolist() == [10 * 2**20 * 10.0**k for k in range(7)]
    # A's bytes pass the last threshold (1e100) at 1, so B (from 2) runs alone on the port
    inst = Instance(Fabric.uniform(2, 1e100), (Coflow.from_flows("A", [(0, 0, 3e100)]),
                                               Coflow.from_flows("B", [(1, 0, 1e100)], release=2.0)))
    res = simulate(inst, "creek", num_queues=6, first_threshold=1e-300, multiplier=1e100,
                   wait_threshold=None, condition=False)
    assert res.completion.tolist() == pytest.approx([4.0, 3.0], rel=1e-12)


def test_a_starving_flow_raises_its_coflow_after_the_waiting_threshold():
    # A (10) is in the second queue from t = 1; B (5) arrives at 1.5 in the first and takes the
    # link. Without mitigation A gets nothing until B's bytes reach 1 at 2.5; with a waiting
    # threshold of 0.5, A rises to the first queue at 2.0 and shares (0.5 each) until 2.5.
    inst = _one_link(Coflow.from_flows("A", [(0, 0, 10.0)]),
                     Coflow.from_flows("B", [(0, 0, 5.0)], release=1.5))
    off = simulate(inst, "creek", first_threshold=1.0, wait_threshold=None)
    on = simulate(inst, "creek", first_threshold=1.0, wait_threshold=0.5)
    assert _served(off, 0, 1.5, 2.5) == 0.0
    assert _served(on, 0, 1.5, 2.0) == 0.0
    assert _served(on, 0, 2.0, 2.5) == pytest.approx(0.25, rel=1e-12)
    assert off.completion.max() == on.completion.max() == pytest.approx(15.0)


def test_parameters_are_checked():
    inst = _one_link(Coflow.from_flows("A", [(0, 0, 1.0)]))
    with pytest.raises(SimulationError, match="num_queues must be at most 8"):
        simulate(inst, "creek", num_queues=9)
    with pytest.raises(SimulationError, match="wait_threshold must be a finite number > 0"):
        simulate(inst, "creek", wait_threshold=0.0)


@settings(max_examples=30, deadline=None)
@given(inst=instances(deadlines=True))
def test_creek_on_the_big_switch_is_feasible_and_work_conserving_enough_to_finish(inst):
    res = simulate(inst, "creek", first_threshold=0.5)
    assert check_feasible(inst, res.schedule).ok
    assert np.all(np.isfinite(res.completion))


@settings(max_examples=20, deadline=None)
@given(inst=network_instances())
def test_creek_on_networks_is_feasible(inst):
    res = simulate(inst, "creek", first_threshold=0.5, wait_threshold=0.3)
    assert check_feasible(inst, res.schedule).ok
