"""The network's sharing under background traffic (``coflourish``, and any policy under a
background) on multi-hop fabrics: the compiled filling on the links the caps overload gives
the reference's max-min over every flow."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Instance, check_feasible
from coflowopt._jit import interpreting
from coflowopt.errors import InputError
from coflowopt.fabric import FatTree, Network, SpineLeaf
from coflowopt.fabric.background import Background, PoissonFlows, load_cdf
from coflowopt.kernels.maxmin import max_min_rows
from coflowopt.sim import simulate
from coflowopt.sim.kernels.capped import FIT, capped_share

from ..strategies import network_instances


def _reference(A, flows, caps, B, avail):
    """The reference: progressive filling over the stacked rows, caps as upper bounds (the
    background uncapped), on the links the caps overload by more than ``FIT`` (the others
    without a capacity), as ``UnderBackground`` runs it with ``compiled=False`` (where
    every row crosses two links, :func:`coflowopt.alloc.max_min` takes the big switch's
    method instead, and so does ``UnderBackground`` without the kernel)."""
    rows = sp.vstack([A[flows], B], format="csr")
    n = rows.shape[0]
    upper = np.concatenate([caps, np.full(B.shape[0], np.inf)])
    ask = np.zeros(avail.size)
    for p in range(n):
        for e in range(rows.indptr[p], rows.indptr[p + 1]):
            ask[rows.indices[e]] += rows.data[e] * max(upper[p], 0.0)
    cap = np.where(ask <= avail * (1 + FIT), np.inf, avail)
    x = max_min_rows(rows.indptr.astype(np.int64), rows.indices.astype(np.int64), rows.data,
                     np.arange(n, dtype=np.int64), cap, np.ones(n), upper)
    n = flows.size
    free = np.where(np.isinf(caps), x[:n], 0.0)
    return x, B.T @ x[n:], A[flows].T @ free


def _kernel(A, flows, caps, B, avail):
    csr = (A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data.astype(np.float64))
    bg = (B.indptr.astype(np.int64), B.indices.astype(np.int64), B.data.astype(np.float64))
    return capped_share(*csr, flows, caps, *bg, avail)


@st.composite
def _problems(draw: st.DrawFn):
    """Flows on a fabric's routes with caps (some without, some 0), background flows on
    routes, and capacities that the caps overload on some links and not on others."""
    inst = draw(network_instances(max_ports=6, max_coflows=4, max_flows=6))
    A = inst.routes.tocsr()
    F, L = A.shape
    flows = np.array(draw(st.permutations(range(F)))[: draw(st.integers(0, F))], np.int64)
    caps = np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 3.0, np.inf]),
                                  min_size=flows.size, max_size=flows.size)), dtype=float)
    k = draw(st.integers(0, 3))
    B = A[np.array(draw(st.lists(st.integers(0, F - 1), min_size=k, max_size=k)), np.int64)]
    scale = np.array(draw(st.lists(st.sampled_from([0.0, 0.3, 1.0, 2.0, 4.0]), min_size=L,
                                   max_size=L)))
    return A, flows, caps, sp.csr_array(B), scale * inst.fabric.capacity


@settings(max_examples=300, deadline=None)
@given(_problems())
def test_the_filling_on_overloaded_links_is_the_reference_max_min(prob):
    A, flows, caps, B, avail = prob
    x, bg_load, free_load = _kernel(A, flows, caps, B, avail)
    rx, rbg, rfree = _reference(A, flows, caps, B, avail)
    np.testing.assert_array_equal(x, rx)
    np.testing.assert_array_equal(bg_load, rbg)
    np.testing.assert_array_equal(free_load, rfree)


@settings(max_examples=40, deadline=None)
@given(_problems())
def test_the_kernel_interpreted_is_the_kernel_compiled(prob):
    A, flows, caps, B, avail = prob
    fast = _kernel(A, flows, caps, B, avail)
    with interpreting():
        slow = _kernel(A, flows, caps, B, avail)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)


def test_caps_over_a_link_are_cut_to_max_min_with_the_background_by_hand():
    # a 4-host spine-leaf fabric, routes given: flows 0, 1 from host 0 to host 2 (one
    # path), flow 2 from host 1 to host 3 over the same spine link, a background flow
    # on flow 2's route
    path = ("h0", "leaf0", "spine0", "leaf1", "h2")
    net = Network(SpineLeaf(2, 1, 2, 10.0, 4.0), "given",
                  paths={"a": (path, path, ("h1", "leaf0", "spine0", "leaf1", "h3"))})
    inst = Instance(net, (Coflow.from_flows("a", [(0, 2, 1.0), (0, 2, 1.0), (1, 3, 1.0)]),))
    A = inst.routes.tocsr()
    avail = np.asarray(inst.fabric.capacity, float)
    caps = np.array([0.5, 3.0, np.inf])
    x, bg_load, free_load = _kernel(A, np.arange(3), caps, A[[2]], avail)
    # the leaf-spine link (4) is the only one overloaded: flow 0 keeps its 0.5, the other
    # three share the 3.5 left
    assert x.tolist() == pytest.approx([0.5, 3.5 / 3, 3.5 / 3, 3.5 / 3], rel=1e-15)
    spine = [k for k in range(A.shape[1]) if A[[2]].toarray()[0, k] and avail[k] == 4.0]
    assert bg_load[spine] == pytest.approx(3.5 / 3)
    assert free_load[spine] == pytest.approx(3.5 / 3)
    # caps that fit are what every flow gets
    x, _, _ = _kernel(A, np.arange(2), np.array([0.5, 1.0]), A[[]], avail)
    assert x.tolist() == [0.5, 1.0]


@pytest.mark.parametrize("bump, cut", [(0.0, False), (1e-11, False), (5e-11, False),
                                       (4e-10, True), (1e-7, True)])
def test_caps_above_a_link_by_rounding_alone_fit_it(bump, cut):
    """Caps whose sum exceeds a link's available capacity by at most ``FIT`` (relative)
    are what every flow gets, in the kernel and in the reference path; beyond that the
    link is shared max-min. Here 100 flows cross the 4.0 leaf-spine link, 99 capped at
    0.04 and one at ``0.04 (1 + bump)``: the link is over by ``bump / 100``, and a filling
    over it would cut the last flow by ``bump`` (relative), far above its slack."""
    from types import SimpleNamespace

    from coflowopt.sim.background import UnderBackground

    path = ("h0", "leaf0", "spine0", "leaf1", "h2")
    net = Network(SpineLeaf(2, 1, 2, 10.0, 4.0), "given", paths={"a": (path,) * 100})
    inst = Instance(net, (Coflow.from_flows("a", [(0, 2, 1.0)] * 100),))
    A = inst.routes.tocsr()
    avail = np.asarray(inst.fabric.capacity, float)
    caps = np.full(100, 0.04)
    caps[-1] *= 1 + bump
    none = sp.csr_array((0, A.shape[1]))
    x, _, _ = _kernel(A, np.arange(100), caps, none, avail)
    ref = UnderBackground._with_background(
        SimpleNamespace(bg_rows=none, bg_left=np.zeros(0)), A, avail, caps)
    np.testing.assert_array_equal(x, ref)
    if cut:
        assert x.sum() <= 4.0 * (1 + 1e-15) and x[-1] < caps[-1] and np.array_equal(x[:-1], caps[:-1])
    else:
        np.testing.assert_array_equal(x, caps)


# --------------------------------------------------------------------------- whole runs


@st.composite
def _backgrounds(draw: st.DrawFn, inst: Instance) -> Background | None:
    cap = inst.fabric.capacity
    H = inst.fabric.num_ports
    kind = draw(st.sampled_from(["none", "share", "mixed", "poisson"]))
    if kind == "none":
        return None
    if kind == "share" or (kind == "poisson" and H < 2):
        return Background(draw(st.sampled_from([0.1, 0.5])))
    if kind == "poisson":
        cdf = load_cdf("web-search", unit=1e-6)  # a mean of 1.7 of the instance's units
        return Background(poisson=PoissonFlows(draw(st.sampled_from([0.1, 0.3])), cdf,
                                               draw(st.integers(0, 3))))
    load = np.array(draw(st.lists(st.sampled_from([0.0, 0.2, 0.4]), min_size=2 * cap.size,
                                  max_size=2 * cap.size))).reshape(2, cap.size) * cap
    k = draw(st.integers(0, 5))
    return Background(
        0.1, np.array([0.0, draw(st.floats(0.2, 3.0)), 5.0]), load,
        release=draw(st.lists(st.floats(0, 4), min_size=k, max_size=k)),
        src=draw(st.lists(st.integers(0, H - 1), min_size=k, max_size=k)),
        dst=draw(st.lists(st.integers(0, H - 1), min_size=k, max_size=k)),
        size=draw(st.lists(st.floats(0.1, 3.0), min_size=k, max_size=k)))


def _carried(bg: Background | None, inst: Instance) -> bool:
    """Whether the fabric takes the background: Poisson flows that arrive faster than a link
    carries them are refused, as the simulator refuses them."""
    if bg is None:
        return True
    try:
        bg.check(inst.fabric.capacity, inst.fabric.num_ports, inst.fabric)
    except InputError:
        return False
    return True


def _both(inst, name, params, bg, knowledge):
    kw = {} if bg is None else {"background": bg, "knowledge": knowledge}
    fast = simulate(inst, name, params, **kw)
    ref = simulate(inst, name, params, compiled=False, **kw)
    return fast, ref


def _assert_same(inst, fast, ref):
    np.testing.assert_allclose(fast.completion, ref.completion, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast.flow_completion, ref.flow_completion, rtol=1e-12, atol=1e-12)
    assert fast.events == ref.events
    assert fast.decisions == ref.decisions
    assert check_feasible(inst, fast.schedule, background=fast.background).ok


def _spine_leaf_instances():
    return network_instances(max_ports=6, max_coflows=5, max_flows=6, routings=("ecmp", "spray"))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_coflourish_on_spine_leaf_runs_as_on_the_reference(data):
    inst = data.draw(_spine_leaf_instances())
    assume(isinstance(inst.fabric.topology, SpineLeaf))  # coflourish's two-layer feedback
    bg = data.draw(_backgrounds(inst))
    assume(_carried(bg, inst))
    params = data.draw(st.sampled_from([{"min_size": 0}, {"min_size": 2.0}, {"min_size": 0,
                                        "table": "leaf", "feedback_period": 0.5}]))
    fast, ref = _both(inst, "coflourish", params, bg, "nominal")
    _assert_same(inst, fast, ref)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_policies_under_background_on_networks_run_as_on_the_reference(data):
    inst = data.draw(network_instances(max_ports=6, max_coflows=5, max_flows=6))
    bg = data.draw(_backgrounds(inst))
    if bg is None:
        bg = Background(0.2)
    assume(_carried(bg, inst))
    name = data.draw(st.sampled_from(["varys", "fair", "sincronia", "aalo"]))
    knowledge = data.draw(st.sampled_from(["nominal", "ideal"]))
    fast, ref = _both(inst, name, None, bg, knowledge)
    _assert_same(inst, fast, ref)


def test_a_run_on_the_k4_fat_tree_with_flows_on_shared_links_goes_through_the_kernel(monkeypatch):
    # the fast path is taken (a run that never reaches it would pass the comparisons above
    # without testing anything)
    from coflowopt.sim import background

    calls = []
    real = background.capped_share

    def spy(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(background, "capped_share", spy)
    net = Network(FatTree(4, 1.0, 1.0), "ecmp", 0)
    inst = Instance(net, (Coflow.from_flows("a", [(0, 5, 2.0), (1, 5, 1.0), (0, 9, 3.0)]),
                          Coflow.from_flows("b", [(4, 5, 2.0)], release=0.5)))
    bg = Background(0.2, release=[0.1, 0.3], src=[0, 4], dst=[5, 12], size=[1.0, 2.0])
    fast, ref = _both(inst, "varys", None, bg, "ideal")
    assert calls
    _assert_same(inst, fast, ref)
    np.testing.assert_array_equal(fast.completion, ref.completion)
