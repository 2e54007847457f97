"""``dark``: coflowsim's DARK (the Aalo paper's simulated D-CLAS), on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pytest

import coflowopt as co
from coflowopt.sim import SimulationError, simulate


def test_one_pass_split_is_not_max_min_and_flow_completions_are_not_decisions():
    # one coflow: 0->0, 0->1, 0->2 of 1 and 1->0 of 2. Uplink 0 counts 3 flows, downlink 0
    # two: 1->0 gets min(1/1, 1/2) = 1/2 (max-min would give it 2/3, aalo's rule), and keeps
    # it after the others finish at 3 (no coflow event): it ends at 4; aalo ends at 3
    inst = co.Instance(co.Fabric.uniform(3), (
        co.Coflow("a", [0, 0, 0, 1], [0, 1, 2, 0], [1.0, 1.0, 1.0, 2.0]),))
    dark = simulate(inst, "dark")
    assert dark.completion.tolist() == pytest.approx([4.0], rel=1e-12)
    assert dark.flow_completion.tolist() == pytest.approx([3.0, 3.0, 3.0, 4.0], rel=1e-12)
    assert simulate(inst, "aalo").completion.tolist() == pytest.approx([3.0], rel=1e-12)
    assert co.check_feasible(inst, dark.schedule)


def test_demotions_wait_for_a_coflow_event_and_go_to_the_tail():
    # thresholds 1, 2, 4 bytes. A = {0->0: 10} alone at 0; B = {0->0: 10} at 0.5: A has sent
    # 0.5, stays in queue 0 ahead of B. C = {0->0: 1} at 3: A has sent 3 > 1 and > 2, so the
    # sweep moves it to the tail of queue 1, then of queue 2; queue 0 is [B, C]: B runs to
    # 13, C to 14, A (7 left) to 21
    inst = co.Instance(co.Fabric.uniform(1), (
        co.Coflow("A", [0], [0], [10.0]),
        co.Coflow("B", [0], [0], [10.0], release=0.5),
        co.Coflow("C", [0], [0], [1.0], release=3.0),
    ))
    res = simulate(inst, "dark", first_threshold=1.0, multiplier=2.0)
    assert res.completion.tolist() == pytest.approx([21.0, 13.0, 14.0], rel=1e-12)
    # aalo demotes A at its first byte and shares by weights: another schedule
    assert not np.allclose(simulate(inst, "aalo", first_threshold=1.0, multiplier=2.0).completion,
                           res.completion)


def test_parameters_are_checked():
    inst = co.Instance(co.Fabric.uniform(1), (co.Coflow("A", [0], [0], [1.0]),))
    with pytest.raises(SimulationError, match="multiplier must be > 1"):
        simulate(inst, "dark", multiplier=1.0)
    with pytest.raises(SimulationError, match="num_queues must be an integer >= 1"):
        simulate(inst, "dark", num_queues=0)
