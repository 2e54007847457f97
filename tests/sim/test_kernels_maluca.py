"""Maluca's compiled allocation gives the reference path's results, to the last bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import io
from coflowopt.kernels.rates import pairwise_sum

from ..strategies import instances
from .test_kernels import assert_same, both

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def assert_identical(inst, fast, ref):
    # the kernel repeats the reference arithmetic operation for operation: equal bits
    assert_same(inst, fast, ref)
    assert np.array_equal(fast.completion, ref.completion)
    assert np.array_equal(fast.start, ref.start)
    assert fast.events == ref.events
    assert fast.decisions == ref.decisions


@settings(max_examples=80, deadline=None)
@given(
    st.one_of(
        instances(uniform=True, max_ports=4, max_coflows=6, max_flows=6, dependencies=True, delays=True),
        instances(max_ports=4, max_coflows=6, max_flows=6, dependencies=True, delays=True),
    ),
    st.sampled_from([0.0, 0.1, 0.5, 0.9]),
    st.sampled_from([None, 0.5]),
    st.sampled_from(["coflow", "flow"]),
)
def test_maluca_kernel_equals_the_reference(inst, alpha, batch, reschedule):
    params = {"alpha": alpha, "reschedule": reschedule}
    fast, ref = both(inst, "maluca", batch_interval=batch, params=params)
    assert_identical(inst, fast, ref)


@settings(max_examples=20, deadline=None)
@given(
    instances(max_ports=3, max_coflows=3, max_flows=40, releases=True),
    st.sampled_from([0.0, 0.1]),
)
def test_maluca_kernel_with_wide_coflows(inst, alpha):
    # many flows of one coflow on one uplink: long segments (NumPy's pairwise sums)
    fast, ref = both(inst, "maluca", params={"alpha": alpha})
    assert_identical(inst, fast, ref)


def test_maluca_kernel_on_a_facebook_prefix():
    # the first coflows by arrival, some with hundreds of flows per uplink
    trace = io.read(TRACE)
    inst = trace.subset(np.argsort(trace.release, kind="stable")[:60])
    fast, ref = both(inst, "maluca")
    assert_identical(inst, fast, ref)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, 136, 255, 256, 1000, 4099, 70001])
def test_pairwise_sum_is_numpys_sum(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n + 5) * 10.0 ** rng.integers(-8, 8, n + 5)
    for lo in (0, 3):
        assert pairwise_sum(a, lo, n) == a[lo : lo + n].sum()
    assert pairwise_sum(-np.zeros(3), 0, 3) == 0.0
