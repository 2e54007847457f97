"""The engine's contract: errors, information models, results and conversions."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

import coflowopt as co
from coflowopt import alloc
from coflowopt.sim import (
    Allocation,
    InformationError,
    PolicyError,
    SimulationError,
    get_policy,
    make_policy,
    simulate,
)
from coflowopt.sim.engine import MIN_TIME
from coflowopt.sim.policies import Policy


def two_on_one_link() -> co.Instance:
    return co.Instance(
        co.Fabric.uniform(2),
        (
            co.Coflow("a", [0, 1], [0, 1], [2.0, 1.0], release=0.0),
            co.Coflow("b", [0], [1], [1.0], release=0.5),
        ),
        name="tiny",
    )


def test_unknown_scheduler_and_parameters_are_rejected():
    inst = two_on_one_link()
    with pytest.raises(SimulationError, match="unknown scheduler 'nope'"):
        simulate(inst, "nope")
    with pytest.raises(SimulationError, match="unknown parameter 'K' for scheduler 'aalo'"):
        simulate(inst, "aalo", K=3)
    with pytest.raises(SimulationError, match="backfill must be one of"):
        simulate(inst, "varys", backfill="sideways")
    with pytest.raises(SimulationError, match="num_queues"):
        simulate(inst, "aalo", num_queues=0)
    with pytest.raises(SimulationError, match="batch interval"):
        simulate(inst, "fair", batch_interval=0)
    with pytest.raises(SimulationError, match="expects a number"):
        make_policy("maluca", {"alpha": "lots"}, strings=True)


def test_parameters_from_strings_are_typed():
    p = make_policy("aalo", {"sharing": "weighted", "num_queues": "4", "weights": "4,3,2,1"},
                    strings=True)
    assert p.params.num_queues == 4 and p.params.weights == (4.0, 3.0, 2.0, 1.0)
    q = make_policy("varys", {"starvation_period": "none"}, strings=True)
    assert q.params.starvation_period is None
    assert get_policy("mcs").defaults()["narrow_width"] == 50


class Greedy(Policy):
    name = "test-greedy"
    clairvoyant = False

    def decide(self, view):
        f = view.active_flows()
        return Allocation(f, np.full(f.size, 1.5))  # more than any link has


class Peeker(Policy):
    name = "test-peeker"
    clairvoyant = False

    def decide(self, view):
        view.remaining(view.active_flows())
        return Allocation()


class Lazy(Policy):
    name = "test-lazy"
    clairvoyant = False

    def decide(self, view):
        return Allocation()


class Twice(Policy):
    name = "test-twice"
    clairvoyant = False

    def decide(self, view):
        f = view.active_flows()
        g = np.r_[f, f[-1:], f[:0]]  # the last active flow twice
        return Allocation(g, np.full(g.size, 0.1))


class PrioritiesTwice(Policy):
    name = "test-priorities-twice"
    clairvoyant = False
    priority = True

    def decide(self, view):
        f = view.active_flows()
        return Allocation(order=np.r_[f[:1], f])


def test_the_engine_rejects_a_flow_listed_twice():
    inst = two_on_one_link()
    with pytest.raises(PolicyError, match="two rates to the same flow"):
        simulate(inst, Twice(co.sim.policies.NoParams()))
    with pytest.raises(PolicyError, match="twice"):
        simulate(inst, PrioritiesTwice(co.sim.policies.NoParams()), compiled=False)
    with pytest.raises(PolicyError, match="twice"):
        simulate(inst, PrioritiesTwice(co.sim.policies.NoParams()))


def test_the_engine_enforces_capacities_and_information_models():
    inst = two_on_one_link()
    with pytest.raises(PolicyError, match="exceeds the capacity of"):
        simulate(inst, Greedy(co.sim.policies.NoParams()))
    with pytest.raises(InformationError, match="non-clairvoyant and cannot see remaining"):
        simulate(inst, Peeker(co.sim.policies.NoParams()))
    with pytest.raises(SimulationError, match="without service"):
        simulate(inst, Lazy(co.sim.policies.NoParams()))


def test_result_table_summary_and_conversions(tmp_path):
    inst = two_on_one_link()
    res = simulate(inst, "fair")
    cols = res.columns()
    assert list(cols)[:10] == list(co.sim.COLUMNS)
    assert all(isinstance(v, np.ndarray) and v.shape == (2,) for v in cols.values())
    assert res.cct.tolist() == pytest.approx((res.completion - inst.release).tolist())
    d = json.loads(res.to_json())
    assert d["scheduler"] == "fair" and len(d["coflow_results"]) == 2
    assert d["summary"]["mean_cct"] == pytest.approx(res.summary.mean_cct)
    text = res.to_csv(str(tmp_path / "out.csv"))
    assert text.splitlines()[0].startswith("id,release,admitted,start,finish,cct")
    assert (tmp_path / "out.csv").read_text() == text
    r = res.to_result()
    assert r.status is co.Status.FEASIBLE
    assert r.objective == pytest.approx(float(np.dot(inst.weight, res.completion)))
    assert r.schedule is res.schedule
    assert "mean CCT" in res.format(coflows=True)
    pd = pytest.importorskip("pandas")
    # table() returned a dict of arrays: a method called table returns a table
    df = res.table()
    assert isinstance(df, pd.DataFrame)
    assert list(df.index) == ["a", "b"] and list(df.columns) == list(co.sim.COLUMNS)[1:]
    assert df["cct"].tolist() == res.cct.tolist()
    pd.testing.assert_frame_equal(res.to_pandas(), df)


def test_table_names_the_extra_when_pandas_is_missing(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)  # import fails as if not installed
    res = simulate(two_on_one_link(), "fair")
    for method in (res.table, res.to_pandas):
        with pytest.raises(co.MissingDependencyError,
                           match=r"SimulationResult.table\(\) needs .*coflowopt\[pandas\]"):
            method()
    assert list(res.columns())[:2] == ["id", "release"]  # the columns need no pandas


def test_recording_can_be_switched_off():
    res = simulate(two_on_one_link(), "varys", record=False)
    assert res.schedule is None and np.all(np.isfinite(res.completion))


def test_dependencies_start_and_finish_after_their_predecessors():
    inst = co.Instance(
        co.Fabric.uniform(2),
        (
            co.Coflow("p", [0], [0], [2.0]),
            co.Coflow("s", [1], [1], [1.0], starts_after=("p",)),
            co.Coflow("f", [1, 1], [1, 1], [0.5, 0.25], finishes_before=("p",)),
        ),
    )
    for name in ("fair", "varys", "aalo", "sincronia"):
        res = simulate(inst, name)
        assert co.check_feasible(inst, res.schedule)
        assert res.start[1] >= res.completion[0]
        assert res.completion[2] > res.completion[0]


def test_multi_wave_flows_start_at_their_own_time():
    inst = co.Instance(
        co.Fabric.uniform(1), (co.Coflow("w", [0, 0], [0, 0], [1.0, 1.0], delay=[0.0, 5.0]),)
    )
    res = simulate(inst, "fair")
    assert res.flow_completion.tolist() == [1.0, 6.0]
    assert res.completion[0] == 6.0


def test_alloc_fast_paths_match_the_reference_methods():
    rng = np.random.default_rng(7)
    for _ in range(300):
        P = int(rng.integers(1, 6))
        n = int(rng.integers(1, 30))
        fab = co.Fabric(rng.choice([0.5, 1.0, 3.0], P), rng.choice([0.5, 1.0, 3.0], P))
        A = fab.routes(rng.integers(0, P, n), rng.integers(0, P, n)).tocsr()
        w = rng.choice([0.5, 1.0, 2.0], n)
        fast = alloc.max_min(A, fab.capacity, weights=w)
        ref = alloc._max_min_progressive(alloc._csr(A), fab.capacity, w, np.full(n, np.inf))
        assert np.allclose(fast, ref, rtol=1e-12, atol=1e-14)
        order = rng.permutation(n)
        ub = np.where(rng.random(n) < 0.3, rng.random(n), np.inf)
        for upper in (None, ub):
            u = np.full(n, np.inf) if upper is None else upper
            fast_g = alloc.greedy(A, fab.capacity, order, upper=upper)
            ref_g = alloc._greedy_rowwise(alloc._csr(A), fab.capacity.copy(), order, u)
            assert np.allclose(fast_g, ref_g, rtol=1e-12, atol=1e-14)
        # rows with general coefficients take the chunked scan
        B = sp.csr_array(A.toarray() * rng.choice([0.5, 1.0, 2.0], A.shape))
        assert np.allclose(
            alloc.greedy(B, fab.capacity, order),
            alloc._greedy_rowwise(alloc._csr(B), fab.capacity.copy(), order, np.full(n, np.inf)),
        )


def test_crossing_wakes_make_pfp_exact_with_unequal_capacities():
    # flow 1 (larger, faster) overtakes flow 0 on the shared uplink partway through
    inst = co.Instance(
        co.Fabric([2.0, 2.0], [1.0, 2.0]),
        (co.Coflow("x", [0, 0], [0, 1], [1.0, 1.5]),),
    )
    res = simulate(inst, "pfp")
    assert co.check_feasible(inst, res.schedule)
    assert math.isfinite(res.completion[0])


NEAR = {
    # a completion at 1e6 + 1 and admissions 5e-7 and 9e-7 later (inside the engine's
    # relative tolerance of 1e-12, 1e-6 s at this time), with nothing else running
    "after a completion": co.Instance(co.Fabric.uniform(2), (
        co.Coflow.from_flows("A", [(0, 0, 1.0)], release=1e6),
        co.Coflow.from_flows("B", [(1, 1, 1e-7)], release=1e6 + 1.0 + 5e-7),
        co.Coflow.from_flows("C", [(1, 0, 1e-7)], release=1e6 + 1.0 + 9e-7))),
    # the same while a long flow keeps a compiled stretch running (kernels that admit
    # coflows themselves: aalo strict, mcs)
    "inside a stretch": co.Instance(co.Fabric.uniform(2), (
        co.Coflow.from_flows("A", [(0, 0, 10.0)], release=1e6),
        co.Coflow.from_flows("B", [(1, 1, 1.0)], release=1e6),
        co.Coflow.from_flows("C", [(1, 1, 1e-7)], release=1e6 + 1.0 + 5e-7),
        co.Coflow.from_flows("D", [(1, 1, 1e-7)], release=1e6 + 1.0 + 9e-7))),
    # the first admissions, 5e-7 apart
    "at the start": co.Instance(co.Fabric.uniform(2), (
        co.Coflow.from_flows("A", [(0, 0, 1.0)], release=1e6),
        co.Coflow.from_flows("B", [(1, 1, 1e-7)], release=1e6 + 5e-7))),
}


@pytest.mark.parametrize("case", list(NEAR))
@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("name", [*sorted(co.sim.POLICIES), "aalo:sharing=strict"])
def test_no_flow_starts_before_its_release(case, compiled, name):
    # admissions within the time tolerance of an event used to be made at the event's
    # time: B started 5e-7 s before its release and finished 4e-7 s before it (CCT < 0)
    inst = NEAR[case]
    name, _, param = name.partition(":")
    params = dict([param.split("=")]) if param else None
    res = simulate(inst, name, params, compiled=compiled)
    report = co.check_feasible(inst, res.schedule)
    assert report, str(report)
    assert np.all(res.start >= inst.release)
    assert np.all(res.completion - inst.release > 0)


def test_flows_too_short_for_the_time_they_run_at_are_refused():
    # a 1 MB flow released at 1e17 (float64 steps by 16 s there) used to finish "at" its
    # release with nothing sent: CCT 0 and a schedule check_feasible rejects
    inst = co.Instance(co.Fabric.uniform(2, 1.25e8), (
        co.Coflow.from_flows("1", [(0, 1, 2**20)]),
        co.Coflow.from_flows("2", [(1, 0, 2**20)], release=1e17)))
    with pytest.raises(SimulationError, match=r"flow 0 of coflow '2' takes 0.00839 time units "
                       r"alone, too short to resolve at its admission time 1e\+17"):
        simulate(inst, "varys")


def test_a_long_batch_interval_still_batches():
    # releases within 1e-9 * interval of a multiple used to count as on it: with a 1e10
    # interval every release below 10 was admitted at once
    inst = two_on_one_link()
    for interval in (1e8, 1e10, 1e12):
        res = simulate(inst, "fifo", batch_interval=interval)
        assert res.admitted[1] == interval
        assert co.check_feasible(inst, res.schedule)
    # on a multiple up to rounding: admitted at its release
    inst = co.Instance(co.Fabric.uniform(2), (
        co.Coflow.from_flows("a", [(0, 1, 1.0)], release=0.1 + 0.2),))
    assert simulate(inst, "fifo", batch_interval=0.1).admitted[0] == 0.1 + 0.2


def test_a_deadline_coflow_that_stops_being_ready_stops_sending():
    # c1 is served best effort while its finishes-before anchor
    # waits for c0; when c0 ends, the anchor waits for the next batch and c1 is not
    # READY: its flows were left out of the allocation and kept their rates (2000 > 1000
    # on egress 1, PolicyError on both paths)
    # (found with capacities of 1000, releases at 2 and 3 and batches of 1: its 1e-9 flow
    # took 1e-12 time units, which the engine now refuses (MIN_TIME); here time is
    # measured in a unit 1000 times smaller)
    e = 1.000000000001e-06
    inst = co.Instance(co.Fabric.uniform(2, 1.0), (
        co.Coflow.from_flows("c0", [(0, 0, 1e-07), (1, 1, 1e-06), (0, 0, e)], release=3000.0,
                             weight=2.0),
        co.Coflow.from_flows("c1", [(1, 1, e), (1, 1, e), (0, 0, e)], release=3000.0,
                             deadline=3000.001, finishes_before=("c0",)),
        co.Coflow.from_flows("c2", [(0, 0, e), (0, 0, 1e-06), (1, 0, e), (0, 0, e)],
                             release=2000.0),
        co.Coflow.from_flows("c3", [(0, 0, 1e-09), (0, 1, 1e-07), (0, 0, 1e-06)], release=3000.0,
                             weight=1e-06)))
    for compiled in (True, False):
        res = simulate(inst, "varys-deadline", {"backfill": "none", "reschedule": "flow"},
                       batch_interval=1000.0, compiled=compiled)
        assert co.check_feasible(inst, res.schedule)


@pytest.mark.parametrize("name", ["drf", "hug", "psp", "fair", "varys"])
def test_a_dependent_flow_too_short_for_its_admission_time_is_refused(name):
    # a finishes-before anchor of 1e-7 s admitted when its predecessor
    # ends at 1e9 or 2e9 (float64 steps by 1.2e-7, 2.4e-7): drf, hug and psp recorded it
    # receiving nothing, a schedule check_feasible rejects; only the admission shows it
    inst = co.Instance(co.Fabric.uniform(1, 0.001), (
        co.Coflow.from_flows("A", [(0, 0, 1e6)], release=1.0),
        co.Coflow.from_flows("B", [(0, 0, 1.0), (0, 0, 1e-10)], finishes_before=("A",))))
    with pytest.raises(SimulationError, match=r"flow 1 of coflow 'B' takes 1e-07 time units "
                       r"alone, too short to resolve at its admission time [12]e\+09"):
        simulate(inst, name)


@pytest.mark.parametrize("name", ["fifo", "static-order", "mcs", "varys-deadline", "aalo"])
@pytest.mark.parametrize("compiled", [True, False])
def test_a_flow_held_until_it_is_too_short_to_record_is_an_error(name, compiled):
    # B (2e-9 s) waits behind A until t = 1e8, where float64 steps by 1.5e-8: its
    # transfer had no length, the run reported it complete and its schedule failed
    # check_feasible; the admission-time check cannot see it (found with 1e-17 s at
    # t = 1, which MIN_TIME now refuses up front; aalo's and mcs's thresholds are raised
    # so that A is not demoted behind B)
    inst = co.Instance(co.Fabric.uniform(1), (co.Coflow.from_flows("A", [(0, 0, 1e8)]),
                                              co.Coflow.from_flows("B", [(0, 0, 2e-9)])))
    params = {"static-order": {"order": ("A", "B")}, "aalo": {"first_threshold": 1e9},
              "mcs": {"narrow_thresholds": (1e9,), "wide_thresholds": (1e9,)}}.get(name)
    with pytest.raises(SimulationError, match=r"flow 0 of coflow 'B' ran at time 1e\+08, where "
                       r"its transfer \(2e-09 time units alone\) is too short for float64"):
        simulate(inst, name, params, compiled=compiled)
    res = simulate(inst, name, params, compiled=compiled, record=False)  # no schedule to state
    assert res.completion[1] == 1e8
    assert res.start[1] == 1e8  # the compiled static-order kernel said inf (no piece, no start)


def test_wake_ups_closer_than_the_time_resolution_name_the_cause():
    inst = co.Instance(co.Fabric.uniform(1, 1e-3), (
        co.Coflow.from_flows("a", [(0, 0, 1e-3)], release=123456789.0),
        co.Coflow.from_flows("b", [(0, 0, 1e-3)], release=123456789.0)))
    # refused at the first decision, naming the parameter (it used to take 1,000 repeated
    # wake-ups at one time, then a PolicyError naming two candidates)
    with pytest.raises(SimulationError, match=r"parameter starvation_period 0.0001 is below the "
                       r"engine's time resolution at time 1.23457e\+08 \(0.000247"):
        simulate(inst, "scf", {"starvation_period": 1e-4, "starvation_delta": 1e-5})
    with pytest.raises(SimulationError, match=r"parameter starvation_delta 1e-05 is below"):
        simulate(inst, "scf", {"starvation_period": 1.0, "starvation_delta": 1e-5})
    assert simulate(inst, "scf", {"starvation_period": 1.0, "starvation_delta": 1e-3}).completion[1] > 0


def test_a_batch_interval_below_the_time_resolution_is_refused():
    # at the last release, 1e-6 is within the engine's time tolerance of every time, so every
    # release counted as on a boundary: no batching at all, silently
    inst = co.Instance(co.Fabric.uniform(1), (
        co.Coflow.from_flows("a", [(0, 0, 1.0)], release=0.0),
        co.Coflow.from_flows("b", [(0, 0, 1.0)], release=1e7)))
    with pytest.raises(SimulationError, match=r"batch interval 1e-06 is below the engine's time "
                       r"resolution at time 1e\+07"):
        simulate(inst, "fifo", batch_interval=1e-6)
    assert simulate(inst, "fifo", batch_interval=1e-3).completion[1] == pytest.approx(1e7 + 1)


def test_aalo_weights_are_checked_against_the_seed():
    # increasing weights, weights with strict priority, and weights whose sum
    # overflows (every share 0: strict priority in disguise) were accepted
    for params, match in (({"num_queues": 2, "weights": (1.0, 2.0)}, "must not increase"),
                          ({"num_queues": 2, "weights": (2.0, 1.0), "sharing": "strict"},
                           "applies to sharing=weighted only"),
                          ({"num_queues": 2, "weights": (1e308, 1e308)}, "finite sum")):
        with pytest.raises(SimulationError, match=match):
            make_policy("aalo", params)
    assert make_policy("aalo", {"num_queues": 2, "weights": (2.0, 2.0)}).params.weights == (2.0, 2.0)


class Shrinking(Policy):
    """Each second, every flow's rate is what it has left over 4 (MADD re-planned on a
    bottleneck that does not shrink, as coflourish under a background it cannot see): what
    is left falls by a quarter a second and reaches exactly 0 through rounding, where the
    rate it is given is 0."""

    name = "test-shrinking"
    clairvoyant = True

    def decide(self, view):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls > 2000:  # 131 decisions; the old engine never ended
            raise AssertionError(f"no end at t = {view.t}")
        f = view.active_flows()
        return Allocation(f, view.remaining(f) / 4, view.t + 1.0 if f.size else math.inf)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("record", [True, False])
def test_a_flow_with_nothing_left_at_rate_0_completes(compiled, record):
    inst = co.Instance(co.Fabric.uniform(2), (co.Coflow("a", [0], [1], [1.0]),))
    res = simulate(inst, Shrinking(co.sim.policies.NoParams()), compiled=compiled, record=record)
    # (3/4)^t is below 2^-53, half an ulp of 1, after 128.3 s; the next second's bytes
    # round the flow's total to its size exactly
    assert res.completion.tolist() == [129.0]
    if record:
        assert co.check_feasible(inst, res.schedule).ok
    ref = simulate(inst, Shrinking(co.sim.policies.NoParams()), compiled=False, record=False)
    assert res.completion.tolist() == ref.completion.tolist()


def _three_coflows(scale: float) -> co.Instance:
    F = co.Coflow.from_flows
    return co.Instance(co.Fabric.uniform(3), (
        F("a", [(0, 1, 2 * scale), (1, 2, scale)]),
        F("b", [(0, 2, scale)], release=scale),
        F("c", [(1, 1, 1.5 * scale), (2, 0, scale)], release=2 * scale)))


@pytest.mark.parametrize("name", ["varys", "sincronia", "fair", "pfp", "hug"])
def test_times_scale_down_to_the_shortest_flow_the_engine_resolves(name):
    # below time 1 the engine's tolerance is an absolute 1e-12: at a scale of 1e-12 the
    # three coflows' releases merged (a admitted with b, varys 11 instead of 8.5); an
    # instance whose every flow is that short is refused. On this one the results scale
    # with the unit down to 2 * MIN_TIME (elsewhere they are right to about 1e-12 there)
    base = simulate(_three_coflows(1.0), name, record=False)
    for scale in (1e-3, 1e-6, 2 * MIN_TIME):
        res = simulate(_three_coflows(scale), name, record=False)
        np.testing.assert_allclose(res.completion, base.completion * scale, rtol=1e-9)
    with pytest.raises(co.CoflowoptError, match="shorter than the engine resolves"):
        simulate(_three_coflows(1e-12), name, record=False)


def test_a_tiny_flow_beside_longer_ones_is_accepted():
    # MIN_TIME is about the instance's time scale: a 1e-10 flow beside flows of 2 units is
    # simulated (its error, 1e-12, is nothing beside them), and the solvers that evaluate
    # orders with the engine keep working on it
    F = co.Coflow.from_flows
    inst = co.Instance(co.Fabric.uniform(2), (F("a", [(0, 1, 2.0), (1, 0, 1e-10)]),
                                              F("b", [(0, 1, 2.0)], release=1.0)))
    res = simulate(inst, "varys", record=False)
    assert res.completion.tolist() == pytest.approx([2.0, 4.0])
    order = co.solve(inst, method="sincronia")  # (its order, not the optimum, 6)
    assert order.status.name == "FEASIBLE" and order.objective >= 6.0 * (1 - 1e-9)
