"""The closed form (Eq. 7.2), its incremental form, capacities and weights."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings

from coflowopt import Coflow, Fabric, Instance, fairness
from coflowopt.errors import InstanceError
from coflowopt.fairness import (
    FairnessProblem,
    IncrementalDRF,
    correlation_vectors,
    drf,
    drf_level,
    drf_progress,
    evaluate,
    max_min_progress_lp,
    per_flow,
)
from coflowopt.fairness._arith import as_float

from ..strategies import instances
from ._strategies import problems


def test_equation_7_2_on_the_running_example() -> None:
    d = np.array([[F(1, 2), F(1)], [F(1), F(1, 6)]], dtype=object)
    assert drf_level(d) == F(2, 3)
    assert list(drf_progress(d)) == [F(2, 3), F(2, 3)]
    # weights multiply the vectors (§7.6.3)
    assert drf_level(d, [2, 1]) == F(6, 13)  # 1 / max(2/2 + 1, 2 + 1/6)
    assert list(drf_progress(d, np.array([2, 1], dtype=object))) == [F(12, 13), F(6, 13)]


def test_closed_form_on_dense_and_sparse_input_agrees() -> None:
    rng = np.random.default_rng(0)
    d = rng.random((20, 300)) * (rng.random((20, 300)) < 0.1)
    d[:, 0] = 0.5
    w = rng.random(20) + 0.5
    assert drf_level(sp.csr_array(d), w) == pytest.approx(drf_level(d, w), rel=1e-15)
    with pytest.raises(InstanceError, match="unbounded"):
        drf_level(np.zeros((2, 3)))


@settings(max_examples=40, deadline=None)
@given(problems(bounds=False, elastic=True))
def test_closed_form_equals_the_max_min_lp(prob: FairnessProblem) -> None:
    level = float(drf(prob, method="closed_form").info["level"])
    assert level == pytest.approx(max_min_progress_lp(prob).objective, rel=1e-8)


def test_incremental_drf_tracks_arrivals_departures_and_changes() -> None:
    rng = np.random.default_rng(1)
    L = 50
    vecs = {f"c{k}": rng.random(L) * (rng.random(L) < 0.3) + (np.arange(L) == k) for k in range(8)}
    w = {k: float(rng.integers(1, 3)) for k in vecs}
    inc = IncrementalDRF(L)
    assert inc.level == float("inf") and len(inc) == 0
    for k, v in vecs.items():
        inc.add(k, v if k != "c3" else sp.csr_array(v[None, :]), w[k])
    names = list(vecs)
    full = np.array([vecs[k] for k in names])
    assert inc.level == pytest.approx(drf_level(full, [w[k] for k in names]))
    inc.remove("c0")
    inc.update("c1", np.ones(L), 2.0)
    vecs.pop("c0")
    vecs["c1"] = np.ones(L)
    w["c1"] = 2.0
    names = list(vecs)
    assert inc.level == pytest.approx(drf_level(np.array([vecs[k] for k in names]), [w[k] for k in names]))
    with pytest.raises(InstanceError, match="already present"):
        inc.add("c1", np.ones(L))
    with pytest.raises(InstanceError, match="no coflow 'c0'"):
        inc.remove("c0")


def test_incremental_drf_leaves_the_callers_sparse_vector_alone() -> None:
    v = sp.csr_array((np.array([1.0, 2.0, 0.0]), np.array([0, 0, 2]), np.array([0, 3])),
                     shape=(1, 3))
    inc = IncrementalDRF(3)
    inc.add("a", v)
    assert list(v.data) == [1.0, 2.0, 0.0] and list(v.indices) == [0, 0, 2]
    assert inc.level == pytest.approx(1 / 3)


def test_incremental_drf_keeps_a_coflow_whose_new_vector_it_refuses() -> None:
    inc = IncrementalDRF(2)
    inc.add("a", [1.0, 0.5])
    inc.add("b", [0.5, 1.0])
    with pytest.raises(InstanceError, match="must be finite and >= 0"):
        inc.update("a", [1.0, -1.0])
    assert len(inc) == 2 and inc.level == pytest.approx(2 / 3)
    with pytest.raises(InstanceError, match="no coflow 'c'"):
        inc.update("c", [1.0, 1.0])


def test_incremental_drf_forgets_the_rounding_of_coflows_that_left() -> None:
    # 1 + 0.1 - 1 - 0.1 left 1/3.6e16 on a link, and P* of no coflows was 3.6e16, not inf
    inc = IncrementalDRF(2)
    inc.add("a", [1, 0.1])
    inc.add("b", [1, 0.2])
    inc.remove("a")
    inc.remove("b")
    assert inc.level == float("inf") and len(inc) == 0
    inc.add("c", [1e-17, 1e-17])
    assert inc.level == 1e17
    inc.remove("c")
    rng = np.random.default_rng(3)
    present: dict[str, np.ndarray] = {}
    for step in range(400):  # arrivals and departures against the closed form
        name = f"k{rng.integers(6)}"
        if name in present:
            inc.remove(name)
            present.pop(name)
        else:
            present[name] = rng.random(2) * 10.0 ** rng.integers(-12, 3, size=2)
            inc.add(name, present[name])
        want = drf_level(np.array(list(present.values()))) if present else float("inf")
        assert inc.level == pytest.approx(want, rel=1e-9), step


def test_heterogeneous_capacities_normalise_the_vectors() -> None:
    # one 2x1 shuffle on a fabric whose egress port is twice as fast
    inst = Instance(Fabric([1.0, 1.0], [2.0, 2.0]),
                    (Coflow.from_flows("a", [(0, 0, 2.0), (1, 0, 2.0)]),
                     Coflow.from_flows("b", [(1, 1, 1.0)])))
    prob = FairnessProblem.from_instance(inst, exact=True)
    # a loads each uplink with 2 (capacity 1) and downlink 0 with 4 (capacity 2): all equal
    assert list(prob.vectors[0]) == [1, 1, 1, 0]
    assert list(prob.vectors[1]) == [0, 1, 0, F(1, 2)]
    assert drf(prob).info["level"] == F(1, 2)
    assert list(correlation_vectors(inst.load, inst.fabric.capacity)[1]) == [0, 1, 0, 0.5]


def test_a_network_instance_gives_vectors_over_all_its_links() -> None:
    from coflowopt.fabric import Network, SpineLeaf

    # 2 leaves of 2 hosts, one spine of capacity 1: h0->h2 and h1->h3 both cross
    # leaf0->spine0 and spine0->leaf1, where DRF gives each half
    inst = Instance(Network(SpineLeaf(2, 1, 2, 1.0, 1.0)),
                    (Coflow.from_flows("a", [(0, 2, 1.0)]), Coflow.from_flows("b", [(1, 3, 1.0)])))
    prob = FairnessProblem.from_instance(inst, exact=True)
    assert prob.num_links == 12 and prob.num_ports is None
    assert prob.link_names[0] == "link h0->leaf0" and prob.link_names[8] == "link leaf0->spine0"
    assert [i for i, v in enumerate(prob.vectors[0]) if v] == [0, 6, 8, 11]
    assert [i for i, v in enumerate(prob.vectors[1]) if v] == [1, 7, 8, 11]
    assert drf(prob).info["level"] == F(1, 2)
    assert list(evaluate(per_flow(prob)).progress) == pytest.approx([0.5, 0.5])


@settings(max_examples=30, deadline=None)
@given(instances(max_ports=3, max_coflows=3, max_flows=3))
def test_drf_on_instances_matches_the_lp_and_a_lone_coflow_has_progress_one(inst: Instance) -> None:
    prob = FairnessProblem.from_instance(inst)
    a = drf(prob)
    lp = max_min_progress_lp(prob)
    assert float(evaluate(a).isolation_guarantee) == pytest.approx(lp.objective, rel=1e-7)
    # alone, a coflow has progress 1: its bottleneck links run at full speed (MADD)
    alone = FairnessProblem.from_instance(inst.subset([0]))
    assert float(drf(alone).info["stage1_progress"][0]) == pytest.approx(1.0)


def test_bandwidth_in_absolute_units_uses_the_capacities() -> None:
    prob = FairnessProblem([[1, 1]], capacity=[2, 3], num_ports=1)
    r = evaluate(drf(prob))
    assert r.progress[0] == 1
    assert list(r.min_cut) == [2.0]  # min(uplink 2, downlink 3)
    assert r.utilization_fraction == pytest.approx(1.0)
    assert as_float(r.dominant_share)[0] == 1.0


def test_weights_float64_cannot_sum_are_refused() -> None:
    # two coflows of weight 1e308: sum_k w_k d_k overflowed and every mechanism gave
    # progress 0 (equal weights are unit weights: 1/2 each)
    for weights in ([1e308, 1e308], [1e-320, 1e300], [1e-320, 1e-320]):  # (the last: inf)
        with pytest.raises(InstanceError, match="the weights lie beyond what float64 holds"):
            FairnessProblem(np.ones((2, 2)), weights=np.array(weights))
    tiny = FairnessProblem(np.array([[1.0, 0.5], [0.5, 1.0]]), weights=np.array([1e-300, 1e-300]))
    for name in ("drf", "hug", "psp"):
        assert fairness.allocate(tiny, name).report().isolation_guarantee == pytest.approx(
            fairness.allocate(FairnessProblem(np.array([[1.0, 0.5], [0.5, 1.0]])), name)
            .report().isolation_guarantee * 1e300, rel=1e-9)
    for weights in ([F(1, 10**320), F(2, 10**320)], [10**400, 10**400]):  # exact too
        with pytest.raises(InstanceError, match="the weights lie beyond what float64 holds"):
            FairnessProblem(np.ones((2, 2), dtype=int), weights=weights)
    prob = FairnessProblem(np.ones((2, 2)), weights=np.array([1e300, 1e300]))
    assert list(drf(prob).allocation[:, 0]) == [0.5, 0.5]


_P = FairnessProblem([[F(1, 2), 1], [1, F(1, 6)]])
_INELASTIC = FairnessProblem([[F(1, 2), 1], [1, F(1, 6)]], elastic=False)


@pytest.mark.parametrize("call", [
    # accepted before: an all-zero allocation, a search that never finds, an exact problem
    lambda: fairness.psp(_INELASTIC, max_rounds=-1),
    lambda: fairness.psp(_INELASTIC, time_limit=-1),
    lambda: fairness.lie_search(_P, 0, "drf+highest", tol=float("nan")),
    lambda: fairness.lie_search(_P, 0, max_evaluations=-1),
    lambda: fairness.lexicographic_max_min_lp(_P, time_limit=-1),
    lambda: FairnessProblem([[1, 1]], exact="no"),
    lambda: fairness.correlation_vectors([[-1, 2]]),
    lambda: fairness.correlation_vectors([[1, 2]], [0, 1]),
    lambda: drf_level(np.array([1.0, 2.0])),
    # Python errors from inside before
    lambda: fairness.psp(_INELASTIC, max_rounds=2.5),
    lambda: fairness.hug(_P, method=[1]),
    lambda: fairness.consumption(np.zeros((2, 2)), [[1, 1]]),
    lambda: fairness.check_allocation(np.zeros((2, 2))),
    lambda: fairness.lie_search(_P, 0, tol="x"),
    lambda: fairness.payoffs(_P, "drf", [1, 2]),
    lambda: FairnessProblem([[1, 1]], num_ports="a"),
    lambda: FairnessProblem.from_demands([["a", 1]]),
    lambda: fairness.correlation_vectors([["a", 2]]),
    lambda: fairness.max_min_progress_lp([[1]]),
    lambda: fairness.hug_stage2_lp([[1]], np.zeros((1, 1)), np.zeros(1)),
    lambda: fairness.write_demands([[1]], "unused.json"),
    lambda: fairness.evaluate(fairness.drf(_P), FairnessProblem([[1, 1, 0]])),
])
def test_a_bad_argument_is_a_clear_error(call) -> None:
    with pytest.raises(InstanceError):
        call()


def test_weights_near_float64s_top_give_no_warning() -> None:
    # max-min's spread test multiplied the smallest weight by 1e6: an overflow warning on
    # the terminal, from weights the problem accepts
    import warnings

    prob = FairnessProblem(np.array([[1.0, 0.5], [0.5, 1.0], [1.0, 1.0]]),
                           weights=np.array([1e305, 2e305, 3e305]))
    unit = FairnessProblem(np.array([[1.0, 0.5], [0.5, 1.0], [1.0, 1.0]]),
                           weights=np.array([1.0, 2.0, 3.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("hug", "psp"):
            got = fairness.allocate(prob, name).allocation
            assert np.allclose(got, fairness.allocate(unit, name).allocation, rtol=1e-9)
