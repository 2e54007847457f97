"""The compiled stretch kernels give the reference path's results, event for event."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import check_feasible, io
from coflowopt.sim import simulate

from ..strategies import instances

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def both(inst, name, **kw):
    fast = simulate(inst, name, **kw)
    ref = simulate(inst, name, compiled=False, **kw)
    return fast, ref


def assert_same(inst, fast, ref):
    assert np.allclose(fast.completion, ref.completion, rtol=1e-12, atol=0)
    assert np.allclose(fast.start, ref.start, rtol=1e-12, atol=0)
    # the engine's flow completions (Schedule.flow_completion, which drops a last piece
    # below 1e-9 of the size as rounding, can differ where a stretch boundary split a piece)
    assert np.allclose(fast.flow_completion, ref.flow_completion, rtol=1e-12, atol=1e-12)
    assert check_feasible(inst, fast.schedule).ok


@settings(max_examples=60, deadline=None)
@given(
    instances(uniform=True, max_ports=4, max_coflows=5, max_flows=5, dependencies=True, delays=True),
    st.sampled_from(["static-order", "sincronia"]),
    st.sampled_from([None, 0.5]),
    st.randoms(use_true_random=False),
)
def test_greedy_kernel_equals_the_reference_greedy(inst, name, batch, rnd):
    kw = {"batch_interval": batch}
    if name == "static-order":
        order = list(range(inst.num_coflows))
        rnd.shuffle(order)
        kw["order"] = order
    fast, ref = both(inst, name, **kw)
    assert_same(inst, fast, ref)


@pytest.mark.parametrize("name", ["static-order", "sincronia"])
def test_greedy_kernel_on_a_facebook_prefix(name):
    # the first ten coflows (6,212 flows, about 2,800 events): seconds on the reference path
    inst = io.read(TRACE).subset(range(10))
    fast, ref = both(inst, name)
    assert_same(inst, fast, ref)
    assert fast.events == pytest.approx(ref.events, rel=0.01)
