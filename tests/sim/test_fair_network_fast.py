"""``fair`` on multi-hop fabrics: the compiled route-class stretch with its incremental
progressive filling gives the reference path's results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt import check_feasible
from coflowopt.kernels.maxmin import max_min_rows
from coflowopt.sim import engine, simulate
from coflowopt.sim.kernels import routes_fair
from coflowopt.sim.policies import fair

from ..strategies import network_instances
from .test_kernels import assert_same, assert_same_schedule, both

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


@settings(max_examples=60, deadline=None)
@given(network_instances(max_ports=6, max_coflows=5, max_flows=6, dependencies=True,
                         delays=True),
       st.sampled_from([None, 0.5]))
def test_route_kernel_equals_the_reference(inst, batch):
    fast, ref = both(inst, "fair", batch_interval=batch)
    assert_same(inst, fast, ref)


@settings(max_examples=30, deadline=None)
@given(network_instances(max_ports=6, max_coflows=6, max_flows=6, integer=True))
def test_route_kernel_equals_the_reference_on_whole_numbers(inst):
    # whole-number sizes and releases: links that saturate together, flows that finish
    # together
    fast, ref = both(inst, "fair")
    assert_same(inst, fast, ref)


def test_the_route_kernel_runs_on_networks_and_not_for_options_it_does_not_cover(monkeypatch):
    inst = co.Instance(
        co.fabric.Network(co.fabric.FatTree(4), "spray", 0),
        (co.Coflow("a", [0, 1, 2], [5, 9, 13], [1.0, 2.0, 3.0]),
         co.Coflow("b", [0, 4], [9, 9], [2.0, 1.0], release=0.5)),
    )
    calls = []
    real = fair.route_kernel_state

    def spy(*args, **kwargs):
        state = real(*args, **kwargs)
        calls.append(state is not None)
        return state

    monkeypatch.setattr(fair, "route_kernel_state", spy)
    fast, ref = both(inst, "fair")
    assert calls == [True]
    assert_same(inst, fast, ref)
    for params in ({"max_flows_per_receiver": 1}, {"rates": "coflowsim"}):
        calls.clear()
        fast, ref = both(inst, "fair", params=params)
        assert calls == []
        assert fast.flow_completion.tobytes() == ref.flow_completion.tobytes()


def _rates_at(sched, F, times):
    """Each flow's rate at each of ``times`` (rows), from the schedule's pieces."""
    out = np.zeros((times.size, F))
    for i, t in enumerate(times):
        on = (sched.start <= t) & (t < sched.end)
        np.add.at(out[i], sched.flow[on], sched.rate[on])
    return out


@settings(max_examples=60, deadline=None)
@given(network_instances(max_ports=6, max_coflows=5, max_flows=6, dependencies=True,
                         delays=True),
       st.sampled_from([None, 0.5]))
def test_route_kernel_records_tied_pieces_of_the_reference_schedule(inst, batch):
    """Recorded, the kernel logs its classes' levels and one tied piece per flow: they
    expand to the reference's schedule (data each flow gets between any two breakpoints,
    completions, each flow's rate at instants inside every interval), feasible."""
    fast, ref = both(inst, "fair", batch_interval=batch)
    tied = fast.schedule.tied
    F = inst.num_flows
    ran = np.flatnonzero(ref.schedule.served(F) > 0)
    assert tied is not None and fast.schedule.direct.num_pieces == 0
    # one tied piece per flow that ran (on its class's level; where every flow crosses two
    # links, the pair kernel's, on its links' levels)
    assert np.array_equal(np.sort(tied.flow), ran)
    assert check_feasible(inst, fast.schedule).ok
    assert_same_schedule(inst, fast.schedule, ref.schedule)
    np.testing.assert_allclose(fast.schedule.served(F), ref.schedule.served(F), rtol=1e-9)
    np.testing.assert_allclose(fast.schedule.flow_completion(inst),
                               ref.schedule.flow_completion(inst), rtol=1e-12, atol=1e-12)
    t = np.unique(np.concatenate([ref.schedule.start, ref.schedule.end]))
    if t.size > 1:
        mid = (t[:-1] + t[1:]) / 2
        # (an instant closer to a breakpoint than rounding can move it would compare
        # rates either side of it)
        mid = mid[np.diff(t) > 1e-9 * np.maximum(1.0, np.abs(t[1:]))]
        np.testing.assert_allclose(_rates_at(fast.schedule, F, mid),
                                   _rates_at(ref.schedule, F, mid), rtol=1e-9, atol=1e-12)


def test_the_recorded_route_kernel_returns_when_its_level_log_fills(monkeypatch):
    """A level log with room for little more than one event's changes: the kernel hands
    back to the engine, which runs it on, and the schedule is the same."""
    inst = co.Instance(
        co.fabric.Network(co.fabric.FatTree(4), "ecmp", 0),
        tuple(co.Coflow(f"c{k}", [k, (k + 3) % 16, (k + 7) % 16], [(k + 5) % 16, (k + 9) % 16, k],
                        [1.0 + k, 2.0 + 0.5 * k, 3.0], release=0.25 * k) for k in range(6)),
    )
    ref = simulate(inst, "fair")
    monkeypatch.setattr(engine, "LEVEL_LOG", 0)
    small = simulate(inst, "fair")
    assert small.events == ref.events
    np.testing.assert_array_equal(small.flow_completion, ref.flow_completion)
    assert check_feasible(inst, small.schedule).ok
    assert_same_schedule(inst, small.schedule, ref.schedule)


@st.composite
def weight_changes(draw):
    """Route classes (random rows over a few links, coefficients 1, 1/2 or 1/3), link
    capacities and a sequence of class weights, each a few changes from the last (classes
    appearing, growing, shrinking and leaving)."""
    C = draw(st.integers(1, 12))
    L = draw(st.integers(1, 7))
    rows = []
    for _ in range(C):
        links = draw(st.lists(st.integers(0, L - 1), min_size=1, max_size=min(L, 4), unique=True))
        coef = draw(st.lists(st.sampled_from([1.0, 0.5, 1 / 3]), min_size=len(links),
                             max_size=len(links)))
        rows.append((sorted(links), coef))
    cap = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 1e-3]), min_size=L,
                                 max_size=L)))
    steps = []
    n = np.zeros(C, np.int64)
    for _ in range(draw(st.integers(1, 12))):
        for c in draw(st.lists(st.integers(0, C - 1), min_size=1, max_size=4)):
            n[c] = max(0, n[c] + draw(st.sampled_from([-3, -1, 1, 2, 5])))
        steps.append(n.copy())
    return rows, cap, steps


@settings(max_examples=150, deadline=None)
@given(weight_changes())
def test_incremental_filling_equals_progressive_filling_from_scratch(prob):
    """The record rolled back to the first step a change can move, then continued: the
    levels of a progressive filling from scratch, to rounding, after every change."""
    rows, cap, steps = prob
    C, L = len(rows), cap.size
    indptr = np.r_[0, np.cumsum([len(r[0]) for r in rows])].astype(np.int64)
    indices = np.concatenate([r[0] for r in rows]).astype(np.int64)
    data = np.concatenate([r[1] for r in rows]).astype(float)
    usage = sp.csr_array((data, indices, indptr), shape=(C, L))
    # one flow per unit of weight, the flows of each class together
    most = np.max(steps, axis=0)
    fcls = np.repeat(np.arange(C), np.maximum(most, 1)).astype(np.int64)
    state = routes_fair.new_route_state(fcls, usage.indptr, usage.indices, usage.data, cap,
                                        np.ones(fcls.size), 0.0, np.zeros(1, bool))
    named = dict(zip(routes_fair.STATE, state, strict=True))
    cn, cw, cchg, chl, cx, meta = (named[k] for k in ("cn", "cw", "cchg", "chl", "cx", "meta"))
    args = [named[k] for k in _REFILL]
    for n in steps:
        for c in np.flatnonzero(n != cn):
            cn[c] = n[c]
            cw[c] = float(n[c])
            routes_fair._mark(c, cchg, chl, meta)
        routes_fair._refill(*args)
        act = np.flatnonzero(n > 0)
        if act.size == 0:
            continue
        x = max_min_rows(indptr, indices, data, act, cap, n[act].astype(float),
                         np.full(act.size, np.inf))
        np.testing.assert_allclose(cx[act], x / n[act], rtol=1e-12, atol=0)


_REFILL = (
    "fcls", "cptr", "clink", "ccoef", "lptr", "lcls", "lcoef", "lcap", "cn", "cw", "cnf", "cwf",
    "cstep", "cx", "copen", "cchg", "chl", "lfro", "ldem", "lfresh", "lcnt", "llev", "llast",
    "ldel", "ldc", "lmark", "ltl", "luse", "lg_k", "lg_prev", "lg_step", "lg_fro", "lg_dem",
    "lg_fresh", "lg_cnt", "fz_c", "st_lev", "st_fz", "st_lg", "meta",
)
"""The state's entries ``routes_fair._refill`` takes, in its order."""


@pytest.mark.slow  # the trace, and the engine's reference path
def test_route_kernel_on_a_facebook_prefix_on_spine_leaf():
    # the first 10 coflows (6,212 flows) on the oversubscribed spine-leaf fabric: many
    # classes share each leaf's uplinks, so most completions move levels elsewhere
    trace = co.read(TRACE)
    inst = co.fabric.place(trace.subset(range(10)), "spine-leaf",
                           {"spines": "4", "oversub": "10"})
    fast = simulate(inst, "fair", record=False)
    ref = simulate(inst, "fair", record=False, compiled=False)
    np.testing.assert_allclose(fast.flow_completion, ref.flow_completion, rtol=1e-12)
    np.testing.assert_allclose(fast.completion, ref.completion, rtol=1e-12)
