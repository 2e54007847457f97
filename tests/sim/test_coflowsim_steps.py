"""coflowsim's 8 ms time step in its rule variants: decisions wait for the end of the step.

coflowsim moves data in steps of 8 ms and decides only between steps, so a coflow that
completes inside a step leaves its capacity idle until the step ends. ``step`` reproduces
this in ``dark`` (on by default: it is coflowsim's DARK) and in the ordered MADD policies
(``varys``, ``fifo``, ...; off by default).
"""

from __future__ import annotations

import pytest

import coflowopt as co
from coflowopt.sim import SimulationError, simulate
from coflowopt.sim.policies.varys import COFLOWSIM_STEP, step_end


def test_step_end_is_the_next_boundary_or_the_time_itself():
    assert step_end(0.0, 0.008) == 0.0
    assert step_end(0.012, 0.008) == pytest.approx(0.016)
    assert step_end(0.016, 0.008) == 0.016
    # a completion a few ulps past a boundary is on it (whole-megabyte flows end on one)
    assert step_end(194.56 + 1e-12, 0.008) == 194.56 + 1e-12
    assert step_end(1.5, 1.0) == 2.0


def two_on_one_link() -> co.Instance:
    # A (0.5) and B (1) share uplink 0 and downlink 0; A arrives first
    return co.Instance(co.Fabric.uniform(1), (
        co.Coflow("A", [0], [0], [0.5]),
        co.Coflow("B", [0], [0], [1.0], release=0.0),
    ))


@pytest.mark.parametrize("backfill", ["coflowsim", "greedy", "proportional"])
def test_a_completion_inside_a_step_leaves_the_link_idle_until_the_step_ends(backfill):
    inst = two_on_one_link()
    # FIFO: A runs alone and ends at 0.5; B starts at once (1.5) or at the step's end (2)
    now = simulate(inst, "fifo", backfill=backfill)
    assert now.completion.tolist() == pytest.approx([0.5, 1.5], rel=1e-12)
    stepped = simulate(inst, "fifo", backfill=backfill, step=1.0)
    assert stepped.completion.tolist() == pytest.approx([0.5, 2.0], rel=1e-12)
    assert co.check_feasible(inst, stepped.schedule)
    # a completion on a boundary is decided on at once
    on = simulate(inst, "fifo", backfill=backfill, step=0.25)
    assert on.completion.tolist() == pytest.approx([0.5, 1.5], rel=1e-12)


def test_dark_decides_on_coflowsims_steps_by_default():
    inst = co.Instance(co.Fabric.uniform(1), (
        co.Coflow("A", [0], [0], [0.5 * COFLOWSIM_STEP]),
        co.Coflow("B", [0], [0], [COFLOWSIM_STEP]),
    ))
    # A ends half-way through the first step; B waits for its end
    assert simulate(inst, "dark").completion.tolist() == pytest.approx(
        [0.5 * COFLOWSIM_STEP, 2 * COFLOWSIM_STEP], rel=1e-12)
    assert simulate(inst, "dark", step=0.0).completion.tolist() == pytest.approx(
        [0.5 * COFLOWSIM_STEP, 1.5 * COFLOWSIM_STEP], rel=1e-12)


@pytest.mark.parametrize("name", ["fifo", "dark"])
def test_step_must_be_a_time(name):
    inst = two_on_one_link()
    with pytest.raises(SimulationError, match="step must be a finite number >= 0"):
        simulate(inst, name, step=-1.0)
    with pytest.raises(SimulationError, match="step must be a finite number >= 0"):
        simulate(inst, name, step=float("inf"))


def test_coflowsims_pfp_lists_compare_sizes_to_half_a_step():
    # coflowsim's remaining bytes are whole steps' worth, so a listed flow has "more" left
    # than a new flow only by at least a step: A (0.003 left at 1) and B (0.002, admitted
    # at 1) are a tie at half a step (0.004 at rate 1): B goes after A
    inst = co.Instance(co.Fabric.uniform(1), (
        co.Coflow("A", [0], [0], [1.003]),
        co.Coflow("B", [0], [0], [0.002], release=1.0),
    ))
    res = simulate(inst, "pfp", order="coflowsim")
    assert res.completion.tolist() == pytest.approx([1.003, 1.005], rel=1e-12)
    assert co.check_feasible(inst, res.schedule)
    # more than half a step more: B goes first
    inst = co.Instance(co.Fabric.uniform(1), (
        co.Coflow("A", [0], [0], [1.010]),
        co.Coflow("B", [0], [0], [0.002], release=1.0),
    ))
    assert simulate(inst, "pfp", order="coflowsim").completion.tolist() == pytest.approx(
        [1.012, 1.002], rel=1e-12)
