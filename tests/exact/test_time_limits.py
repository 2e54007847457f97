"""exact-milp and time-indexed under tiny time limits: honest status, incumbent and bound.

No wall-clock assertions: a limit that runs out is made to run out by the test's clock
(``tests.clock.expired_clock``: every limit is over at the first look), or by replacing
the step that would take the time; a limit that must not run out is far above the work.
What is checked is the result: status ``TIME_LIMIT`` (or ``OPTIMAL`` when proven), a
feasible schedule when there is one, and a valid bound.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.exact import milp
from coflowopt.exact._events import EventLP
from coflowopt.exact._groups import build_groups
from coflowopt.io.generate import synthetic
from coflowopt.result import Result, Status
from coflowopt.solvers import cheap_wcct_bound, solve


@pytest.fixture(scope="module")
def g40() -> Instance:
    """A synthetic instance: 40 coflows, 10 ports, load 0.6, seed 1."""
    return synthetic(40, 10, load=0.6, seed=1)


@pytest.fixture(scope="module")
def upper(g40: Instance) -> float:
    """The value of a feasible schedule: every valid bound is below it."""
    return solve(g40, method="sincronia").objective


def assert_honest(inst: Instance, res: Result, upper: float) -> None:
    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert math.isfinite(res.bound) and 0 < res.bound <= upper * (1 + 1e-9)
    if math.isfinite(res.objective):
        assert res.schedule is not None and res.completion is not None
        report = check_feasible(inst, res.schedule)
        assert report, str(report)
        assert res.objective == pytest.approx(float(np.dot(inst.weight, res.completion)),
                                              rel=1e-9)
        assert res.bound <= res.objective * (1 + 1e-9)
    else:
        assert res.status is Status.TIME_LIMIT


def test_exact_milp_out_of_time_at_once_returns_the_heuristic_incumbent(g40, upper,
                                                                        expired_clock):
    res = solve(g40, method="exact-milp", time_limit=0.5)
    assert res.status is Status.TIME_LIMIT
    # the first heuristic order is always evaluated: an incumbent exists
    assert math.isfinite(res.objective)
    assert res.info["stopped"] == "time limit reached by the heuristic incumbent"
    assert_honest(g40, res, upper)


def _small(seed: int, width: int) -> Instance:
    """Five random coflows of ``width`` flows on three ports, releases 0-2."""
    rng = np.random.default_rng(seed)
    coflows = [Coflow(f"c{k}", rng.integers(0, 3, width), rng.integers(0, 3, width),
                      rng.uniform(0.5, 3, width), release=float(rng.integers(0, 3)),
                      weight=float(rng.uniform(0.5, 3))) for k in range(5)]
    return Instance(Fabric.uniform(3), tuple(coflows))


@pytest.mark.parametrize("stage", ["_build_model", "_load"])
def test_exact_milp_out_of_time_while_building_keeps_the_incumbent(monkeypatch, stage):
    inst = _small(seed=2, width=3)
    exact = solve(inst, method="exact")
    monkeypatch.setattr(milp, stage, lambda *a, **k: None if stage == "_build_model" else False)
    res = solve(inst, method="exact-milp")
    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert "stopped" in res.info and res.info["termination"] == "not started"
    assert check_feasible(inst, res.schedule)
    assert res.objective >= exact.objective * (1 - 1e-7)
    assert res.bound <= exact.objective * (1 + 1e-7)


def _small_model():
    rng = np.random.default_rng(3)
    coflows = [Coflow(f"c{k}", rng.integers(0, 3, 2), rng.integers(0, 3, 2),
                      rng.uniform(0.5, 3, 2), release=float(rng.integers(0, 3)))
               for k in range(4)]
    inst = Instance(Fabric.uniform(3), tuple(coflows))
    g = build_groups(inst)
    return g, EventLP(g)


def test_model_building_stops_when_the_clock_runs_out(caplog):
    pyo = pytest.importorskip("pyomo.environ")
    g, elp = _small_model()
    calls = 0

    def expired() -> bool:  # runs out in the middle of the constraint rules
        nonlocal calls
        calls += 1
        return calls > 40

    with caplog.at_level(logging.ERROR):
        assert milp._build_model(pyo, g, elp, 100.0, expired=expired) is None
    assert not caplog.records  # rows are skipped, no rule fails
    assert milp._build_model(pyo, g, elp, 100.0, expired=lambda: False) is not None


def test_chunked_loading_stops_between_chunks(monkeypatch):
    pyo = pytest.importorskip("pyomo.environ")
    appsi = pytest.importorskip("pyomo.contrib.appsi.solvers")
    g, elp = _small_model()
    m = milp._build_model(pyo, g, elp, 100.0, expired=lambda: False)
    monkeypatch.setattr(milp, "_CHUNK", 5)
    calls = 0

    def expired() -> bool:
        nonlocal calls
        calls += 1
        return calls > 2

    assert milp._load(pyo, appsi.Highs(), m, expired=expired) is False


def test_exact_milp_generous_limit_is_unchanged():
    # chunked loading hands HiGHS the model solve() would: same optimum as the B&B
    inst = _small(seed=7, width=2)
    a = solve(inst, method="exact")
    b = solve(inst, method="exact-milp", time_limit=120)
    assert b.status is Status.OPTIMAL
    assert b.objective == pytest.approx(a.objective, rel=1e-6)
    # the bound is HiGHS's dual bound (not the objective itself), within rel_gap of it
    assert b.bound <= b.objective and b.bound == pytest.approx(b.objective, rel=1e-6)
    assert check_feasible(inst, b.schedule)


@pytest.mark.parametrize("lower", ["lp", "milp"])
def test_time_indexed_out_of_time_at_once_still_reports_a_bound(g40, upper, lower,
                                                               expired_clock):
    res = solve(g40, method="time-indexed", time_limit=0.3, lower=lower)
    assert_honest(g40, res, upper)
    assert res.status is Status.TIME_LIMIT and math.isnan(res.objective)
    assert res.info["lower_status"] == "not started" and res.info["grid_status"] == "not started"
    assert res.info["lower_isolation"] > 0
    assert res.bound >= res.info["lower_isolation"]


def test_time_indexed_bound_comes_before_the_grid(g40, upper, monkeypatch):
    # a grid MILP that uses up the limit: the LP bound was solved first, and is reported
    from coflowopt.bounds import _highs

    real = _highs.LPBuilder.solve
    calls = []

    def grid_out_of_time(self, **kw):
        calls.append("grid" if "options" in kw else "bound")
        if "options" in kw:  # the grid MILP (the bound's LP takes no options)
            return _highs.LPSolution("time_limit", None, math.nan, math.nan, 0.0)
        return real(self, **kw)

    monkeypatch.setattr(_highs.LPBuilder, "solve", grid_out_of_time)
    res = solve(g40, method="time-indexed", time_limit=600)  # far above the LP's second
    assert calls == ["bound", "grid"]
    assert res.status is Status.TIME_LIMIT and res.info["lower_status"] == "optimal"
    assert_honest(g40, res, upper)
    # solve reports the better of the LP's bound and the cheap ones (Sincronia's here)
    assert res.bound == pytest.approx(max(res.info["lower_lp"], cheap_wcct_bound(g40)[0]))


def test_time_indexed_no_bound_when_asked_for_none(g40, expired_clock):
    res = solve(g40, method="time-indexed", time_limit=0.01, lower="none")
    assert res.status is Status.TIME_LIMIT
    assert not math.isfinite(res.bound) or res.bound <= res.objective


@pytest.mark.parametrize("method", ["exact", "exact-milp"])
def test_event_lps_out_of_time_leave_the_greedy_permutation_incumbent(monkeypatch, method):
    # every event-order LP gets a time limit, the first one included (it used to get none:
    # 40 coflows took 66 s for a 10 s limit, 80 coflows more than 7 minutes); when none of
    # them solves in time the best starting order's permutation schedule is the incumbent
    from coflowopt.exact import wcct

    inst = _small(seed=2, width=3)
    opt = solve(inst, method="exact")
    limits = []

    def out_of_time(elp, events, *, time_limit=None):
        limits.append(time_limit)
        return None

    monkeypatch.setattr(wcct, "solve_event_sequence", out_of_time)
    res = solve(inst, method=method)
    assert limits and all(t is not None and math.isfinite(t) for t in limits)
    assert math.isfinite(res.objective) and res.status in (Status.TIME_LIMIT, Status.OPTIMAL,
                                                           Status.FEASIBLE)
    assert check_feasible(inst, res.schedule)
    assert res.objective >= opt.objective * (1 - 1e-7)
    assert res.bound <= opt.objective * (1 + 1e-7)
    assert res.objective == pytest.approx(float(np.dot(inst.weight, res.completion)), rel=1e-9)


def test_the_polish_leaves_the_search_most_of_the_time_limit(monkeypatch):
    # moving single completions of the incumbent's order used the whole limit on 16
    # coflows over 10 ports (1,025 event LPs in 120 s, no node searched); here a clock
    # that moves 1 ms per reading makes a 0.3 s limit tight for 8 coflows on 4 ports
    from coflowopt import _budget
    from coflowopt.exact import wcct
    from tests.clock import JumpingClock
    from tests.strategies import seeded_instance

    inst = seeded_instance(0, coflows=8, ports=4, max_flows=8, max_size=5.0, max_weight=3.0)
    clock = JumpingClock(1e-3)
    monkeypatch.setattr(_budget, "_clock", clock)
    ends: list[float] = []
    polish = wcct._polish

    def spy(*args):
        polish(*args)
        ends.append(clock.t)

    monkeypatch.setattr(wcct, "_polish", spy)
    limit = 0.3
    res = wcct.solve_exact(inst, time_limit=limit)
    # (the polish's last event LP, started before its share ends, reads the clock a dozen
    # or so times more)
    assert ends and ends[0] <= wcct.POLISH_SHARE * limit + 0.02
    # the search ran (with the bound over completion orders it may also end in time)
    assert res.info["nodes"] > 0 and res.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert check_feasible(inst, res.schedule) and res.bound <= res.objective


def test_deadlines_out_of_time_keeps_a_bound(monkeypatch):
    # with neither the relaxation nor the MILP done in time the bound was
    # min(nan, ...) = nan: no bound at all; admitting every deadline coflow bounds the count
    from coflowopt.bounds import _highs

    def out_of_time(self, **kw):
        return _highs.LPSolution("time_limit", None, math.nan, math.nan, 0.0)

    monkeypatch.setattr(_highs.LPBuilder, "solve", out_of_time)
    inst = Instance(Fabric.uniform(2), (
        Coflow.from_flows("a", [(0, 1, 1.0)], deadline=2.0),
        Coflow.from_flows("b", [(1, 0, 1.0)], deadline=3.0),
        Coflow.from_flows("c", [(0, 0, 1.0)])))
    res = solve(inst, method="exact", objective="deadlines", time_limit=1.0)
    assert res.status is Status.TIME_LIMIT and math.isnan(res.objective)
    assert res.bound == 2.0


def test_certified_orders_keep_a_schedule_and_say_why_at_a_tiny_limit():
    # pairwise-order gave its LP the whole limit, so the fallback order was never
    # evaluated: no schedule, and a note claiming Sincronia's order was used; a bound LP
    # out of time said no_solution
    from coflowopt.bounds.pairwise import pairwise_bound
    from coflowopt.exact.certified import pairwise_order, sincronia_greedy
    from coflowopt.io.generate import synthetic

    inst = synthetic(12, 4, seed=3)
    sincronia_greedy(inst)  # compile the simulator first: the test is about the limit
    for res in (sincronia_greedy(inst, time_limit=1e-9), pairwise_order(inst, time_limit=1e-9)):
        assert check_feasible(inst, res.schedule)
        assert "note" not in res.info
    # Sincronia's order takes no time limit; the pairwise LP was cut by the clock, which the
    # status says (it said "feasible", as though the LP's order had been used)
    assert sincronia_greedy(inst, time_limit=1e-9).status is Status.FEASIBLE
    assert pairwise_order(inst, time_limit=1e-9).status is Status.TIME_LIMIT
    assert pairwise_order(inst).status is Status.FEASIBLE
    assert "Sincronia's order used" in pairwise_order(inst, time_limit=1e-9).info["fallback"]
    assert pairwise_bound(inst, time_limit=1e-9).status is Status.TIME_LIMIT


@pytest.mark.parametrize("method", ["exact", "exact-milp", "time-indexed", "permutation"])
def test_a_relative_gap_of_one_or_more_is_refused(method):
    # rel_gap=1e308 made an unproven schedule "optimal" with a bound of 0
    from coflowopt.errors import CoflowoptError

    inst = _small(seed=2, width=2)
    stated = r"option rel_gap must be float \(numbers: finite and in \[0, 1\); at 1 any"
    with pytest.raises(CoflowoptError, match=stated):
        solve(inst, method=method, rel_gap=1.0)


def test_search_bounds_at_a_time_limit_are_at_least_the_cheap_bounds(g40, upper, expired_clock):
    # the permutation search stopped with 7.4 against an isolation bound of 357,
    # and exact with the isolation bound where Sincronia's was far higher
    cheap, _ = cheap_wcct_bound(g40)
    for method in ("permutation", "exact"):
        res = solve(g40, method=method, time_limit=0.01)
        assert res.status is Status.TIME_LIMIT
        assert res.bound >= cheap * (1 - 1e-12) or res.bound == res.objective
        assert_honest(g40, res, upper)
