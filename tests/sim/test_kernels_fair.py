"""The compiled per-pair max-min kernel (fair, wss) gives the reference path's results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt import io

from ..strategies import instances
from .test_kernels import assert_same, both

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

PAIR_POLICIES = ["fair", "wss"]


@settings(max_examples=60, deadline=None)
@given(
    instances(max_ports=4, max_coflows=5, max_flows=5, dependencies=True, delays=True),
    st.sampled_from(PAIR_POLICIES),
    st.sampled_from([None, 0.5]),
)
def test_pair_kernel_equals_the_reference(inst, name, batch):
    fast, ref = both(inst, name, batch_interval=batch)
    assert_same(inst, fast, ref)


@settings(max_examples=30, deadline=None)
@given(
    instances(uniform=True, max_ports=4, max_coflows=6, max_flows=6, dependencies=True, delays=True),
    st.sampled_from(PAIR_POLICIES),
    st.sampled_from([None, 0.5]),
)
def test_pair_kernel_equals_the_reference_on_uniform_ports(inst, name, batch):
    # uniform capacities make ties: flows that finish together, links that saturate together
    fast, ref = both(inst, name, batch_interval=batch)
    assert_same(inst, fast, ref)


@settings(max_examples=30, deadline=None)
@given(
    instances(integer=True, max_ports=4, max_coflows=6, max_flows=6, dependencies=True, delays=True),
    st.sampled_from(PAIR_POLICIES),
)
def test_pair_kernel_equals_the_reference_on_whole_numbers(inst, name):
    # whole-number sizes and capacities: exact ties between links' levels (a pair's
    # bottleneck side is a tie) and between completions
    fast, ref = both(inst, name)
    assert_same(inst, fast, ref)


@pytest.mark.parametrize("name", PAIR_POLICIES)
def test_pair_kernel_on_a_facebook_prefix(name):
    # the first 100 coflows by arrival (50,000 flows): seconds on the reference path
    trace = io.read(TRACE)
    inst = trace.subset(np.argsort(trace.release, kind="stable")[:100])
    fast, ref = both(inst, name)
    assert_same(inst, fast, ref)
    assert fast.decisions < ref.decisions  # the kernel ran the flow completions


@settings(max_examples=60, deadline=None)
@given(
    instances(max_ports=3, max_coflows=5, max_flows=8, dependencies=True, delays=True),
    st.sampled_from([1, 2]),
    st.sampled_from([None, 0.5]),
)
def test_receiver_limit_in_the_kernel_equals_the_reference(inst, limit, batch):
    # the reference recomputes max-min from scratch among the flows holding a place
    fast, ref = both(inst, "fair", batch_interval=batch, params={"max_flows_per_receiver": limit})
    assert_same(inst, fast, ref)


@settings(max_examples=30, deadline=None)
@given(
    instances(integer=True, max_ports=3, max_coflows=5, max_flows=8, dependencies=True, delays=True),
    st.sampled_from([1, 2]),
)
def test_receiver_limit_in_the_kernel_with_ties(inst, limit):
    # whole numbers: flows of a group that finish together free several places at once
    fast, ref = both(inst, "fair", params={"max_flows_per_receiver": limit})
    assert_same(inst, fast, ref)


def test_receiver_limit_when_the_record_buffer_fills():
    # 30 groups of 40 flows from two senders at random: a completion moves a place from one
    # sender to the other and re-rates about 30 flows, so a stretch fills its record buffer
    # (4 pieces per flow) and the engine runs it on without a decision; the place freed
    # where it stopped must be taken then, not at the next decision
    rng = np.random.default_rng(7)
    n_per, groups = 40, 30
    g = np.repeat(np.arange(groups), n_per)
    src = rng.integers(0, 2, g.size)
    sizes = rng.integers(1, 50, g.size).astype(float)
    inst = co.Instance(co.Fabric.uniform(2 + groups), (co.Coflow("c", src, 2 + g, sizes),))
    fast, ref = both(inst, "fair", params={"max_flows_per_receiver": 1})
    assert_same(inst, fast, ref)
    assert fast.schedule.num_pieces > 4 * g.size + 1024


def test_a_full_level_log_runs_the_kernel_on(monkeypatch):
    # room for the level changes of two events: the kernel returns when its log is full
    # and the engine calls it again at the same time, without a decision between
    from coflowopt.sim import engine

    rng = np.random.default_rng(3)
    n = 200
    inst = co.Instance(co.Fabric.uniform(12), (co.Coflow("c", rng.integers(0, 12, n),
                                                         rng.integers(0, 12, n),
                                                         rng.uniform(1, 50, n)),))
    reasons = []
    run = engine.Engine._run_stretch

    def counted(self, wake):
        reasons.append(run(self, wake))
        return reasons[-1]

    monkeypatch.setattr(engine.Engine, "_run_stretch", counted)
    monkeypatch.setattr(engine, "LEVEL_LOG", 2)
    fast, ref = both(inst, "fair")
    assert reasons.count(2) > 10  # a full log, many times
    assert_same(inst, fast, ref)


def test_receiver_limit_on_a_facebook_prefix():
    trace = io.read(TRACE)
    inst = trace.subset(np.argsort(trace.release, kind="stable")[:30])
    fast, ref = both(inst, "fair", params={"max_flows_per_receiver": 1})
    assert_same(inst, fast, ref)
    assert fast.decisions < ref.decisions / 50  # the kernel ran the flow completions


@settings(max_examples=60, deadline=None)
@given(
    instances(max_ports=4, max_coflows=5, max_flows=6, dependencies=True, delays=True),
    st.sampled_from([None, 1, 2]),
    st.sampled_from([None, 0.5]),
)
def test_coflowsims_one_pass_rates_in_the_kernel_equal_the_reference(inst, limit, batch):
    # the kernel's levels cap / count against the reference's per-flow minimum from scratch
    params = {"rates": "coflowsim", "max_flows_per_receiver": limit}
    fast, ref = both(inst, "fair", batch_interval=batch, params=params)
    assert_same(inst, fast, ref)


@settings(max_examples=30, deadline=None)
@given(instances(integer=True, max_ports=3, max_coflows=5, max_flows=6, dependencies=True))
def test_coflowsims_one_pass_rates_with_ties(inst):
    fast, ref = both(inst, "fair", params={"rates": "coflowsim"})
    assert_same(inst, fast, ref)


@pytest.mark.parametrize("compiled", [True, False])
def test_coflowsims_fair_leaves_what_the_other_port_cannot_use_idle(compiled):
    # a: 0->0; b: 0->1, 1->1, 2->1, unit sizes and capacities. coflowsim: a gets
    # min(1/2, 1/1) = 1/2 (max-min: 2/3, what port 0 has left after b's 1/3), b's
    # flows 1/3 each; a ends at 2, b at 3 (1/3 per flow throughout)
    inst = co.Instance(co.Fabric.uniform(3), (
        co.Coflow("a", [0], [0], [1.0]), co.Coflow("b", [0, 1, 2], [1, 1, 1], [1.0, 1.0, 1.0])))
    one = co.sim.simulate(inst, "fair", {"rates": "coflowsim"}, compiled=compiled)
    assert one.completion == pytest.approx([2.0, 3.0], rel=1e-12)
    assert co.check_feasible(inst, one.schedule).ok
    mm = co.sim.simulate(inst, "fair", compiled=compiled)
    assert mm.completion == pytest.approx([1.5, 3.0], rel=1e-12)


def test_coflowsims_fair_rejects_an_unknown_rule():
    with pytest.raises(co.sim.SimulationError, match="rates must be one of maxmin, coflowsim"):
        co.sim.make_policy("fair", {"rates": "tcp"})
