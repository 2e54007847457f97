"""The bound over completion orders (``coflowopt.bounds.subsets``): below the optimum of
the independent brute force (``tests/exact/test_wcct.py``), and equal to it where the
theory says so (concurrent open shop without releases)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance
from coflowopt.bounds.subsets import subset_table
from coflowopt.result import Status
from coflowopt.solvers import solve
from tests.exact.test_wcct import brute_force_wcct
from tests.strategies import instances, network_instances


def _value_of(table, order) -> float:
    mask, total = 0, 0.0
    for k in order:
        total += table.step(mask, k)
        mask |= 1 << k
    return total


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=3, max_flows=3, integer=True, delays=True))
def test_below_the_optimum(inst):
    table = subset_table(inst)
    assert table is not None
    assert table.bound <= brute_force_wcct(inst) * (1 + 1e-9) + 1e-9


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(network_instances(max_ports=3, max_coflows=3, max_flows=2, integer=True))
def test_below_the_optimum_on_networks(inst):
    table = subset_table(inst)
    assert table is not None
    assert table.bound <= brute_force_wcct(inst) * (1 + 1e-9) + 1e-9


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(max_ports=3, max_coflows=3, max_flows=2, integer=True, dependencies=True,
                 delays=True))
def test_below_the_optimum_with_dependencies(inst):
    table = subset_table(inst)
    assert table is not None
    assert table.bound <= brute_force_wcct(inst) * (1 + 1e-9) + 1e-9


@st.composite
def open_shops(draw: st.DrawFn) -> Instance:
    """Concurrent open shop, every release 0: each flow's egress port is 1,000 times
    faster than any ingress load, so each flow needs its ingress port alone."""
    P = draw(st.integers(1, 3))
    K = draw(st.integers(1, 4))
    coflows = []
    for k in range(K):
        n = draw(st.integers(1, 3))
        src = draw(st.lists(st.integers(0, P - 1), min_size=n, max_size=n))
        size = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
        coflows.append(Coflow(f"c{k}", np.array(src), np.zeros(n, np.int64),
                              np.array(size, float), weight=float(draw(st.integers(1, 4)))))
    return Instance(Fabric(np.ones(P), np.full(P, 1000.0)), tuple(coflows))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(open_shops())
def test_equals_the_best_permutation_and_the_optimum_of_an_open_shop(inst):
    """Without releases a permutation schedule is optimal for concurrent open shop, and
    it completes the k-th coflow when the busiest port has served the first k: the bound
    is the optimum. Checked against every permutation (no table) and the brute force."""
    K = inst.num_coflows
    load = np.zeros((K, inst.num_ports))
    for k, c in enumerate(inst.coflows):
        np.add.at(load[k], c.src, c.sizes)
    best = min(sum(inst.weight[k] * load[list(perm[: i + 1])].sum(axis=0).max()
                   for i, k in enumerate(perm))
               for perm in itertools.permutations(range(K)))
    table = subset_table(inst)
    assert table.bound == pytest.approx(best, rel=1e-9)
    assert _value_of(table, table.order()) == pytest.approx(best, rel=1e-9)
    assert brute_force_wcct(inst) == pytest.approx(best, rel=1e-6, abs=1e-9)


def test_the_order_attains_the_bound_and_times_scale():
    inst = Instance(Fabric.uniform(2), (
        Coflow("a", [0, 1], [1, 0], [2.0, 1.0], release=1.0, weight=2.0),
        Coflow("b", [0], [0], [3.0], weight=1.0),
        Coflow("c", [1], [1], [1.0], release=0.5, weight=3.0),
    ))
    table = subset_table(inst)
    assert _value_of(table, table.order()) == pytest.approx(float(table.q[0]), rel=1e-12)
    half = subset_table(inst, time_unit=2.0)
    assert half.bound == pytest.approx(table.bound / 2, rel=1e-12)
    # f of one coflow: its release plus isolation time; of all three: uplink 0 carries
    # 2 + 3 units from time 0 (no later release gives more)
    assert table.f[1] == pytest.approx(3.0)  # a: released at 1, 2 units on port 0
    assert table.f[0b111] == pytest.approx(5.0)  # uplink 0: 2 + 3 from time 0


def test_not_built_for_too_many_coflows():
    coflows = tuple(Coflow(f"c{k}", [0], [0], [1.0]) for k in range(5))
    inst = Instance(Fabric.uniform(1), coflows)
    assert subset_table(inst, max_coflows=4) is None
    assert subset_table(inst, max_coflows=5) is not None


def test_the_exact_search_starts_from_the_bound():
    """The branch and bound's root bound is at least the table's, and where the table's
    order is optimal (an open shop without releases) it proves the optimum at once."""
    coflows = tuple(Coflow(f"c{k}", [k % 3, (k + 1) % 3], [0, 0], [1.0 + k, 2.0],
                           weight=1.0 + (k % 2)) for k in range(6))
    inst = Instance(Fabric(np.ones(3), np.full(3, 1000.0)), coflows)
    table = subset_table(inst)
    res = solve(inst, method="exact", time_limit=600)
    assert res.status is Status.OPTIMAL
    assert res.info["root_bound"] >= table.bound
    assert res.objective == pytest.approx(table.bound, rel=1e-9)
    assert res.info["nodes"] == 0


def test_refused_above_its_size_with_an_instance_error_and_cheap_only_when_small(monkeypatch):
    from coflowopt.bounds.subsets import subsets_bound
    from coflowopt.errors import InstanceError
    from coflowopt.exact import certified

    many = Instance(Fabric.uniform(1), tuple(Coflow(f"c{k}", [0], [0], [1.0]) for k in range(21)))
    with pytest.raises(InstanceError, match="at most 20 coflows"):  # the CLI names the file
        subsets_bound(many)
    assert subsets_bound(Instance(Fabric.uniform(1), ())).bound == 0.0
    # the cheap bounds (no time limit) take it only when its sums are few: 16 coflows over
    # 200 links with 640 distinct availability times took 10-20 s
    small = Instance(Fabric.uniform(2), tuple(
        Coflow(f"c{k}", [k % 2], [0], [1.0], release=float(k)) for k in range(6)))
    assert "subsets" in certified.cheap_bounds(small)
    monkeypatch.setattr(certified, "CHEAP_WORK", 64 * 4 * 5)  # 2^6 sets, 4 links, 6 times
    assert "subsets" not in certified.cheap_bounds(small)
