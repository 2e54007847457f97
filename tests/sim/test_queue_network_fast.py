"""Strict-priority queues on multi-hop fabrics (``aalo:sharing=strict``, ``creek``): the
compiled strict-priority filling (:func:`coflowopt.sim.kernels.queues.strict_fill`) gives
the reference's rates bit for bit at every decision, resumed from the filling before at
its first changed group as from scratch, and whole runs match ``compiled=False``."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt import check_feasible
from coflowopt.sim import simulate
from coflowopt.sim.policies import _queues, creek
from coflowopt.sim.policies._common import StrictMemo

from ..strategies import network_instances
from .test_kernels import assert_same, both

STRICT = (("aalo", {"sharing": "strict"}), ("creek", {}), ("creek", {"condition": False}),
          ("mcs", {}))


class _Checked:
    """Runs every compiled strict-priority filling beside the reference (``_strict`` on the
    same groups) and asserts the same rates to the last bit; counts the compiled calls."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = _queues.strict_rates

        def spy(view, classes, order):
            flows, x = real(view, classes, order)
            if view.compiled and not view.two_link:
                rates = [np.zeros(f.size) for f in order]
                _queues._strict(view, classes, order, view.capacity.astype(float).copy(), rates)
                ref = np.concatenate(rates) if order else np.zeros(0)
                assert x.tobytes() == (ref + 0.0).tobytes()
                self.calls += 1
            return flows, x

        mp.setattr(_queues, "strict_rates", spy)
        mp.setattr(creek, "strict_rates", spy)


@settings(max_examples=40, deadline=None)
@given(network_instances(max_ports=6, max_coflows=6, max_flows=6, dependencies=True,
                         delays=True),
       st.sampled_from(STRICT))
def test_the_compiled_filling_gives_the_reference_rates_bit_for_bit(inst, policy):
    name, params = policy
    with pytest.MonkeyPatch.context() as mp:
        checked = _Checked(mp)
        res = simulate(inst, name, params, jit="compile")
    assert check_feasible(inst, res.schedule).ok
    # every decision on a fabric with longer routes than two links went through the kernel
    assert checked.calls > 0 or inst.num_flows == 0 or bool((np.diff(inst.routes.indptr) <= 2).all())


@settings(max_examples=30, deadline=None)
@given(network_instances(max_ports=6, max_coflows=6, max_flows=6, integer=True),
       st.sampled_from(STRICT))
def test_the_compiled_filling_gives_the_reference_rates_on_whole_numbers(inst, policy):
    # whole-number sizes and releases: links that saturate together, flows that finish
    # together, groups left nothing by the groups before them
    name, params = policy
    with pytest.MonkeyPatch.context() as mp:
        _Checked(mp)
        res = simulate(inst, name, params, jit="compile")
    assert check_feasible(inst, res.schedule).ok


@settings(max_examples=30, deadline=None)
@given(network_instances(max_ports=6, max_coflows=5, max_flows=6, dependencies=True,
                         delays=True),
       st.sampled_from((*STRICT, ("aalo", {}))), st.sampled_from([None, 0.5]))
def test_compiled_runs_equal_the_reference_path(inst, policy, batch):
    name, params = policy
    fast, ref = both(inst, name, params=params, batch_interval=batch)
    assert_same(inst, fast, ref)


def test_a_group_on_saturated_links_waits_and_later_groups_use_what_is_left():
    """k = 4 fat-tree, ECMP: under strict aalo coflow a (first in FIFO) fills host 0's uplink,
    so coflow b's flow from host 0 waits while its flow from host 4 runs; under creek all
    three share queue 0. Each group's rates are the reference's, bit for bit."""
    inst = co.Instance(
        co.fabric.Network(co.fabric.FatTree(4), "ecmp", 1),
        (co.Coflow("a", [0, 0], [8, 12], [2.0, 2.0]),
         co.Coflow("b", [0, 4], [9, 13], [1.0, 1.0], release=0.25),
         co.Coflow("c", [1], [5], [3.0], release=0.5)),
    )
    for name, params in STRICT:
        with pytest.MonkeyPatch.context() as mp:
            checked = _Checked(mp)
            fast = simulate(inst, name, params, jit="compile")
        assert checked.calls > 0
        ref = simulate(inst, name, params, compiled=False)
        assert_same(inst, fast, ref)
        if name == "aalo":
            # b's flow from host 0 starts only when a's flows are done (at 4: 4 units on host
            # 0's uplink of 1), then runs alone on it
            assert fast.start[1] == pytest.approx(0.25)
            np.testing.assert_allclose(fast.flow_completion[:3], [4.0, 4.0, 5.0])


def test_every_link_saturated_leaves_the_later_groups_at_zero():
    """One route of capacity 1 shared by three coflows' flows: under strict aalo the first
    coflow takes it all and the others get 0 until it is done (the links of its route are
    full; the fabric's other links are not); under creek, one queue, they share it (mcs: as
    strict aalo)."""
    inst = co.Instance(
        co.fabric.Network(co.fabric.SpineLeaf(2, 1, 1), "ecmp", 0),
        (co.Coflow("a", [0], [1], [1.0]),
         co.Coflow("b", [0], [1], [1.0]),
         co.Coflow("c", [0], [1], [1.0])),
    )
    for name, params in STRICT:
        with pytest.MonkeyPatch.context() as mp:
            checked = _Checked(mp)
            res = simulate(inst, name, params, jit="compile")
        assert checked.calls > 0
        assert check_feasible(inst, res.schedule).ok
        want = [3.0, 3.0, 3.0] if name == "creek" else [1.0, 2.0, 3.0]
        np.testing.assert_allclose(np.sort(res.completion), want)


def test_a_link_left_with_a_rounding_residue_counts_as_full():
    """Ten flows of 1 share a link of capacity 1 at 0.1 each and leave about 1e-16 of it:
    the saturation test (``residual <= SAT * capacity``) counts the link full, so coflow b
    (after a in FIFO order) gets 0 there until a is done, as in the reference; a test
    against 0 would give b the residue and end it a few ulps before 11."""
    inst = co.Instance(
        co.fabric.Network(co.fabric.SpineLeaf(2, 1, 1), "ecmp", 0),
        (co.Coflow("a", [0] * 10, [1] * 10, [1.0] * 10),
         co.Coflow("b", [0], [1], [1.0])),
    )
    name, params = STRICT[0]
    with pytest.MonkeyPatch.context() as mp:
        checked = _Checked(mp)
        res = simulate(inst, name, params, jit="compile")
    assert checked.calls > 0
    assert res.completion[1] == 11.0
    assert res.start[1] == 10.0
    assert_same(inst, res, simulate(inst, name, params, compiled=False))


def _view_and_classes(inst):
    """The view and route classes of a strict aalo run on ``inst`` (its first decision)."""
    seen = []
    real = _queues.strict_rates

    def spy(view, classes, order):
        seen.append((view, classes))
        return real(view, classes, order)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_queues, "strict_rates", spy)
        simulate(inst, "aalo", {"sharing": "strict"}, jit="compile")
    view, classes = seen[0]
    assert view.compiled and not view.two_link
    return view, classes


def _many_flows(fabric, hosts, n, seed):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, hosts, n)
    dst = (src + rng.integers(1, hosts, n)) % hosts
    return co.Instance(co.fabric.Network(fabric, "ecmp", seed),
                       (co.Coflow("a", src.tolist(), dst.tolist(), [1.0] * n),))


def _from_scratch(view, classes, order):
    return _queues.strict_rates(view, dataclasses.replace(classes, strict=StrictMemo()), order)[1]


@pytest.mark.parametrize("fabric,hosts", [(co.fabric.FatTree(4), 16),
                                          (co.fabric.SpineLeaf(2, 1, 1), 2)])
@pytest.mark.parametrize("seed", range(4))
def test_a_resumed_filling_equals_a_filling_from_scratch(fabric, hosts, seed):
    """Sequences of random changes to the groups (flows leave a group; groups are inserted,
    swapped, removed; nothing changes): each filling resumed from the one before gives the
    rates of a filling from scratch, bit for bit (on the small spine-leaf every link fills
    up, so later groups meet a fabric with no capacity left)."""
    inst = _many_flows(fabric, hosts, 60, seed)
    view, classes = _view_and_classes(inst)
    rng = np.random.default_rng(seed)
    pool = list(rng.permutation(inst.num_flows))
    order = [np.array(sorted(pool.pop() for _ in range(rng.integers(1, 5))), np.int64)
             for _ in range(4)]
    resumed = full = 0
    for _ in range(60):
        op = rng.integers(0, 5)
        if op == 0 and order:  # flows leave a group
            g = rng.integers(len(order))
            keep = rng.random(order[g].size) < 0.6
            order[g] = order[g][keep]
        elif op == 1 and len(pool) >= 3:  # a group comes in
            new = np.array(sorted(pool.pop() for _ in range(rng.integers(1, 4))), np.int64)
            order.insert(int(rng.integers(len(order) + 1)), new)
        elif op == 2 and len(order) >= 2:  # two groups swap
            i, j = rng.choice(len(order), 2, replace=False)
            order[i], order[j] = order[j], order[i]
        elif op == 3 and order:  # a group leaves
            order.pop(int(rng.integers(len(order))))
        before = int(classes.strict.gptr.size - 1)
        flows, x = _queues.strict_rates(view, classes, order)
        if order:
            assert flows.tobytes() == np.concatenate(order).astype(np.int64).tobytes()
            assert x.tobytes() == _from_scratch(view, classes, order).tobytes()
            resumed += before > 0
            full += int(classes.strict.alv[-1] == 0)  # no link left with capacity
    assert resumed > 0
    assert full > 0 or hosts > 2


def test_the_filling_resumes_at_the_group_that_changed():
    """Groups on one route of capacity 1 (spine-leaf, host 0 to host 1), each change made
    to the first group: the resumed filling starts there. One group later would keep that
    group's rates from the filling before (0.5 for flow 1 once flow 2 has left its group,
    1.0 for it once a group has come in front of it)."""
    inst = co.Instance(co.fabric.Network(co.fabric.SpineLeaf(2, 1, 1), "ecmp", 0),
                       (co.Coflow("a", [0] * 5, [1] * 5, [1.0] * 5),))
    view, classes = _view_and_classes(inst)
    a, b, c = np.array([0]), np.array([1, 2]), np.array([3])
    assert _queues.strict_rates(view, classes, [b, c])[1].tolist() == [0.5, 0.5, 0.0]
    # b loses flow 2: flow 1 takes the link alone; c still gets 0
    assert _queues.strict_rates(view, classes, [np.array([1]), c])[1].tolist() == [1.0, 0.0]
    # a group in front: it takes the link, the groups after it get 0
    assert _queues.strict_rates(view, classes, [a, np.array([1]), c])[1].tolist() == [1.0, 0.0, 0.0]
    # the first group leaves: the second takes the link again
    x = _queues.strict_rates(view, classes, [np.array([1]), c])[1]
    assert x.tolist() == [1.0, 0.0]
    assert x.tobytes() == _from_scratch(view, classes, [np.array([1]), c]).tobytes()


def test_a_filling_resumes_past_the_group_that_left_no_capacity():
    """Flows both ways between two hosts (spine-leaf, one route each way): the first group
    fills both links, so the groups after it are not filled, and a later filling resumes
    after them; its undo log and counts of links with capacity must be those of the
    groups that were passed over (left unset, the third call read
    them)."""
    inst = co.Instance(co.fabric.Network(co.fabric.SpineLeaf(2, 1, 1), "ecmp", 0),
                       (co.Coflow("a", [0, 1] * 4, [1, 0] * 4, [1.0] * 8),))
    view, classes = _view_and_classes(inst)

    def a(*f):
        return np.array(f, np.int64)

    for order in ([a(0, 1), a(2), a(3), a(4)], [a(0, 1), a(2), a(3), a(5)],
                  [a(0, 1), a(2), a(3), a(5), a(6)], [a(6, 7), a(2)], [a(6), a(2)]):
        x = _queues.strict_rates(view, classes, order)[1]
        assert x.tobytes() == _from_scratch(view, classes, order).tobytes()
        if order[0].size == 2:  # one flow each way: both links full after the first group
            assert x[:2].tolist() == [1.0, 1.0] and not x[2:].any()
            assert classes.strict.alv[1] == 0


def test_a_filling_whose_log_grows_first_undoes_the_filling_before():
    """A small filling, then a larger one that starts from scratch: the log grows while
    the small filling's entries still have to be undone (a log grown
    without them left the undo reading beyond its entries)."""
    inst = _many_flows(co.fabric.FatTree(4), 16, 80, 0)
    view, classes = _view_and_classes(inst)
    for t in range(6):
        for order in ([np.arange(t, t + 2)], [np.arange(10, 80)]):
            x = _queues.strict_rates(view, classes, order)[1]
            assert x.tobytes() == _from_scratch(view, classes, order).tobytes()
        classes = dataclasses.replace(classes, strict=StrictMemo())
