"""Compiled rate kernels (pfp's matching, the MADD family's rates) equal the reference path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import io
from coflowopt.instance import Coflow, Fabric, Instance

from ..strategies import instances
from .test_kernels import assert_same, both

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

MADD_FAMILY = ["varys", "fifo", "scf", "ncf", "tcf"]


@settings(max_examples=40, deadline=None)
@given(
    instances(uniform=True, max_ports=4, max_coflows=5, max_flows=5, dependencies=True, delays=True),
    st.sampled_from([None, 0.5]),
)
def test_pfp_kernel_equals_the_reference(inst, batch):
    fast, ref = both(inst, "pfp", batch_interval=batch)
    assert_same(inst, fast, ref)


@settings(max_examples=60, deadline=None)
@given(
    instances(max_ports=4, max_coflows=5, max_flows=5, dependencies=True, delays=True),
    st.sampled_from(MADD_FAMILY),
    st.sampled_from(["proportional", "greedy", "coflowsim", "none"]),
    st.sampled_from([None, 0.5]),
)
def test_madd_kernels_equal_the_reference(inst, name, backfill, batch):
    fast, ref = both(inst, name, batch_interval=batch, params={"backfill": backfill})
    assert_same(inst, fast, ref)


@pytest.mark.parametrize(("name", "n"), [("pfp", 8), ("varys", 40), ("fifo", 40)])
def test_rate_kernels_on_a_facebook_prefix(name, n):
    # the first n coflows by arrival: seconds on the reference path (pfp's is the slowest)
    trace = io.read(TRACE)
    inst = trace.subset(np.argsort(trace.release, kind="stable")[:n])
    fast, ref = both(inst, name)
    assert_same(inst, fast, ref)


@pytest.mark.parametrize("name", ["varys", "fifo", "scf"])
def test_proportional_backfilling_with_remaining_data_sixteen_orders_apart(name):
    # one (coflow, ingress) group with remaining data 1e6 and 1e-7: the reference path's
    # weighted max-min once let the light flow escape its ingress (3 > 2 on ingress 0)
    inst = Instance(Fabric([2.0, 0.1, 1.0], [1.0, 2.0, 1.0]),
                    (Coflow("a", [0, 0, 1], [0, 1, 2], [1e6, 1e-7, 1e9]),))
    fast, ref = both(inst, name)
    assert_same(inst, fast, ref)
