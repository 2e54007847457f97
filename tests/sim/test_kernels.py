"""The compiled stretch kernels give the reference path's results, event for event."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import check_feasible, io
from coflowopt.instance import Coflow, Fabric, Instance
from coflowopt.sim import simulate

from ..strategies import instances

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def both(inst, name, **kw):
    fast = simulate(inst, name, **kw)
    ref = simulate(inst, name, compiled=False, **kw)
    return fast, ref


def assert_same(inst, fast, ref, events=True):
    assert np.allclose(fast.completion, ref.completion, rtol=1e-12, atol=0)
    assert np.allclose(fast.start, ref.start, rtol=1e-12, atol=0)
    assert np.allclose(fast.admitted, ref.admitted, rtol=1e-12, atol=0)
    # a kernel counts the events it handles and the one at which it hands back
    if events:
        assert fast.events == ref.events
    # the engine's flow completions (Schedule.flow_completion, which drops a last piece
    # below 1e-9 of the size as rounding, can differ where a stretch boundary split a piece)
    assert np.allclose(fast.flow_completion, ref.flow_completion, rtol=1e-12, atol=1e-12)
    assert check_feasible(inst, fast.schedule).ok
    assert_same_schedule(inst, fast.schedule, ref.schedule)


def assert_same_schedule(inst, a, b, cells=2_000_000):
    """The schedules serve every flow alike: the data each gets between any two of their
    breakpoints agree to rounding (however each splits its pieces, tied or not). Only on
    instances small enough for a dense table of at most ``cells`` entries."""
    t = np.unique(np.concatenate([a.start, a.end, b.start, b.end]))
    F = inst.num_flows
    if t.size * F > cells or t.size < 2:
        return
    tables = []
    for sched in (a, b):
        i0 = np.searchsorted(t, sched.start)
        n = np.searchsorted(t, sched.end) - i0
        rows = np.repeat(i0, n) + np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
        table = np.zeros((t.size - 1, F))
        np.add.at(table, (rows, np.repeat(sched.flow, n)),
                  np.repeat(sched.rate, n) * (t[rows + 1] - t[rows]))
        tables.append(table)
    np.testing.assert_allclose(tables[0], tables[1], rtol=0,
                               atol=1e-9 * float(inst.flow_size.max()))


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


NEAR_TIES = {
    # c4's admission stops the stretch at 3.0; cA completes within the tolerance after it,
    # at 3.000000000002; c2 is due at 3.000000000005: past the event's threshold (3.0 plus
    # the tolerance), within the tolerance of cA's completion. After a
    # stretch the engine once admitted what was due by the latest completion plus the tolerance,
    # so c2 joined c4 at that event (and came first in FIFO); at its own events the engine
    # admits by the event's time plus the tolerance, and c2 gets an event of its own.
    "admission past the event's threshold": Instance(
        Fabric([1.0, 1.0], [1.0, 1.0]),
        (Coflow("c2", [1], [1], [1.0], release=3.000000000005),
         Coflow("cA", [0], [0], [2.000000000002], release=1.0),
         Coflow("c4", [1], [1], [1.0], release=3.0)),
        name="near-tie",
    ),
    # two completions within the tolerance, then an admission past the first one's threshold
    "admission past the first completion's threshold": Instance(
        Fabric([1.0, 1.0], [1.0, 1.0]),
        (Coflow("c0", [0, 1], [0, 1], [1.0, 1.0 + 0.9e-12], release=0.0),
         Coflow("c1", [0], [0], [1.0], release=1.0 + 1.5e-12)),
        name="near-tie",
    ),
}


@pytest.mark.parametrize("case", list(NEAR_TIES))
@pytest.mark.parametrize("name", ["fair", "wss", "pfp", "sincronia", "aalo", "mcs"])
def test_an_admission_near_an_event_is_due_by_the_events_threshold_on_every_path(case, name):
    inst = NEAR_TIES[case]
    fast, ref = both(inst, name)
    assert_same(inst, fast, ref)
    assert np.array_equal(fast.admitted, ref.admitted)
