"""The compiled per-pair max-min kernel (fair, wss) gives the reference path's results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import check_feasible, io

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


@settings(max_examples=10, deadline=None)
@given(instances(max_ports=3, max_coflows=4, max_flows=6, dependencies=True, delays=True))
def test_fair_with_a_receiver_limit_runs_its_python_path(inst):
    # the limit is not in the kernel: both paths run the same Python code
    fast, ref = both(inst, "fair", params={"max_flows_per_receiver": 1})
    assert np.array_equal(fast.completion, ref.completion)
    assert (fast.events, fast.decisions) == (ref.events, ref.decisions)
    assert check_feasible(inst, fast.schedule).ok
    assert np.all(np.isfinite(fast.completion))
