"""The portfolio (``method="best"``): its optimum, its bound, its log, its time limits.

No wall-clock assertions: limits that must run out are made to by the test's clock
(``tests.clock``), and the share each phase is given is read from the calls it makes.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coflowopt import Coflow, Fabric, _budget, check_feasible
from coflowopt.cli import main
from coflowopt.errors import CoflowoptError
from coflowopt.exact import portfolio as pf
from coflowopt.exact.permutation import permutation_schedule
from coflowopt.instance import Instance
from coflowopt.io.generate import synthetic
from coflowopt.result import Result, Status
from coflowopt.solvers import solve
from tests.clock import JumpingClock
from tests.strategies import instances

ROOT = Path(__file__).resolve().parents[2]
GAP = ROOT / "instances" / "permutation_gap.json"
SLOW = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def brute_force_permutation(inst: Instance) -> float:
    """The best permutation schedule's value, over every order."""
    return min(float(np.dot(inst.weight, permutation_schedule(inst, o)[1]))
               for o in itertools.permutations(range(inst.num_coflows)))


def assert_sound(inst: Instance, res: Result) -> None:
    assert res.schedule is not None and res.completion is not None
    report = check_feasible(inst, res.schedule)
    assert report, str(report)
    assert res.objective == pytest.approx(float(np.dot(inst.weight, res.completion)), rel=1e-9)
    assert math.isfinite(res.bound) and res.bound <= res.objective
    log = res.info["log"]
    incs = [e["incumbent"] for e in log if math.isfinite(e["incumbent"])]
    lows = [e["bound"] for e in log if math.isfinite(e["bound"])]
    # the incumbent only improves; a search's values on its way ("improving") are its
    # evaluator's, which can sit a rounding below the value of the schedule it returns
    # (an order evaluated from checkpoints against the schedule built again: 1 ulp apart
    # on a 16-coflow instance)
    assert all(a >= b * (1 - 1e-12) for a, b in itertools.pairwise(incs))
    done = [e["incumbent"] for e in log
            if e["event"] != "improving" and math.isfinite(e["incumbent"])]
    assert all(a >= b for a, b in itertools.pairwise(done))
    assert all(a <= b for a, b in itertools.pairwise(lows))  # and so does the bound
    assert all(a["time"] <= b["time"] for a, b in itertools.pairwise(log))
    assert res.info["incumbent_from"] and res.info["bound_from"]


@SLOW
@given(instances(max_ports=3, max_coflows=4, max_flows=3))
def test_on_tiny_instances_the_portfolio_finds_the_exact_optimum(inst):
    res = solve(inst, method="best", time_limit=600)
    opt = solve(inst, method="exact", time_limit=600)
    assert_sound(inst, res)
    assert opt.status is Status.OPTIMAL and res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(opt.objective, rel=3e-6)
    # the fluid optimum is at most the best strict-priority schedule (brute force)
    assert res.objective <= brute_force_permutation(inst) * (1 + 1e-9)


@SLOW
@given(instances(max_ports=4, max_coflows=16, max_flows=3, uniform=True))
def test_the_bound_is_below_the_schedule_which_is_feasible(inst):
    # a short limit keeps the branch and bound on 10-12 coflows from taking minutes; what
    # is checked holds wherever the clock stops a phase
    res = solve(inst, method="best", time_limit=2)
    assert_sound(inst, res)
    if res.status is Status.OPTIMAL:
        assert res.gap <= 1e-6


def test_large_instances_go_to_the_local_search_small_ones_to_the_exact_method(monkeypatch):
    called: list[str] = []
    for name in ("solve_exact", "local_search"):
        fn = getattr(pf, name)
        monkeypatch.setattr(pf, name, lambda *a, _f=fn, _n=name, **k: called.append(_n) or _f(*a, **k))
    big = synthetic(pf.EXACT_MAX_COFLOWS + 8, 6, load=0.9, seed=3)
    res = solve(big, method="best", time_limit=600)
    assert called == ["local_search"] and "exact" not in res.info["phases"]
    assert_sound(big, res)
    called.clear()
    small = synthetic(5, 3, load=0.9, seed=3)
    res = solve(small, method="best", time_limit=600)
    assert called[:1] == ["solve_exact"] and res.status is Status.OPTIMAL
    assert_sound(small, res)


def test_same_seed_same_result():
    inst = synthetic(pf.EXACT_MAX_COFLOWS + 10, 6, load=0.9, seed=5)
    a = solve(inst, method="best", time_limit=600, seed=3)
    b = solve(inst, method="best", time_limit=600, seed=3)
    assert a.status is not Status.TIME_LIMIT  # the clock decided nothing
    assert a.objective == b.objective and a.bound == b.bound
    assert np.array_equal(a.completion, b.completion)
    strip = [[(e["method"], e["incumbent"], e["bound"]) for e in r.info["log"]] for r in (a, b)]
    assert strip[0] == strip[1]


def test_progress_gets_each_log_entry_as_it_is_made():
    inst = synthetic(pf.EXACT_MAX_COFLOWS + 4, 5, load=0.9, seed=2)
    seen: list[dict] = []
    res = solve(inst, method="best", time_limit=600, progress=seen.append)
    assert seen == res.info["log"] and seen
    assert {"time", "method", "event", "incumbent", "bound", "gap"} <= set(seen[0])
    last = seen[-1]
    assert last["incumbent"] >= res.objective * (1 - 1e-9) or last["event"] == "bound"


@pytest.mark.parametrize("step", [0.0, 1e-5])
def test_the_local_search_is_logged_on_its_way(monkeypatch, step):
    monkeypatch.setattr(pf, "SEARCH_LOG_STEP", step)  # (0.1% by default: few steps here)
    inst = synthetic(60, 6, load=0.9, seed=2)
    res = solve(inst, method="best", time_limit=600)
    log = res.info["log"]
    steps = [e for e in log if e["event"] == "improving"]
    assert steps, [(e["method"], e["event"]) for e in log]
    start = log.index(next(e for e in log if e["event"].startswith("started")))
    before = log[start]["incumbent"]
    for e in steps:
        assert e["method"] == "local-search" and log.index(e) > start
        assert e["incumbent"] < before * (1 - pf.SEARCH_LOG_STEP)
        assert e["gap"] == pytest.approx((e["incumbent"] - e["bound"]) / e["incumbent"])
        before = e["incumbent"]
    # the search's schedule is the incumbent once it returns, logged as such (before the
    # large neighbourhood search starts from it, which improves nothing here)
    lns_start = next(i for i, e in enumerate(log) if e["method"] == "lns")
    assert log[lns_start]["event"].startswith("started") and lns_start == len(log) - 1
    last = log[lns_start - 1]
    assert last["event"] == "incumbent" and last["method"].startswith("local-search")
    assert last["incumbent"] == res.objective <= steps[-1]["incumbent"] * (1 + 1e-9)


def test_the_local_searchs_local_optimum_goes_to_the_large_neighbourhood_search(monkeypatch):
    seen: dict = {}
    real_ls, real_lns = pf.local_search, pf.lns

    def spy_ls(inst, **kw):
        seen["local-search"] = real_ls(inst, **kw)
        return seen["local-search"]

    def spy_lns(inst, **kw):
        seen["lns start"] = kw["initial_orders"]
        return real_lns(inst, **kw)

    monkeypatch.setattr(pf, "local_search", spy_ls)
    monkeypatch.setattr(pf, "lns", spy_lns)
    inst = synthetic(pf.EXACT_MAX_COFLOWS + 8, 6, load=0.9, seed=3)
    res = solve(inst, method="best", time_limit=600)
    assert res.info["phases"]["local-search"] == res.info["phases"]["lns"] == "feasible"
    (start,) = seen["lns start"]
    assert [inst.ids[k] for k in start] == seen["local-search"].info["order"]
    assert_sound(inst, res)


def test_every_phase_ends_before_the_reserve(monkeypatch):
    # the clock moves 1 ms at every reading: the phases take "time" in proportion to the
    # work they do, the same on any machine; each sub-method must be given no more than
    # what is left before (1 - RESERVE_SHARE) * T
    clock = JumpingClock(1e-3)
    monkeypatch.setattr(_budget, "_clock", clock)
    T = 2.0
    calls: list[tuple[str, float, float]] = []

    def spy(name):
        fn = getattr(pf, name)

        def wrapped(*a, time_limit, **k):
            calls.append((name, clock.t, time_limit))
            return fn(*a, time_limit=time_limit, **k)
        return wrapped

    for name in ("solve_exact", "local_search", "lns", "pairwise_lp", "interval_bound"):
        monkeypatch.setattr(pf, name, spy(name))
    for inst in (synthetic(6, 3, load=0.9, seed=1), synthetic(30, 8, load=0.9, seed=1)):
        calls.clear()
        t0 = clock.t
        res = pf.portfolio(inst, time_limit=T)
        end = t0 + clock.step + (1 - pf.RESERVE_SHARE) * T  # from the portfolio's first reading
        assert calls
        for name, at, limit in calls:
            assert limit > 0 and at + limit <= end + 1e-9, (name, at, limit)
        assert_sound(inst, res)


def test_out_of_time_at_once_still_returns_the_first_order_and_the_cheap_bounds(expired_clock):
    inst = synthetic(30, 8, load=0.9, seed=4)
    res = solve(inst, method="best", time_limit=1.0)
    assert res.status is Status.TIME_LIMIT
    assert res.info["incumbent_from"] == "sincronia order"
    assert res.info["phases"]["local-search"].startswith("skipped")
    assert_sound(inst, res)


def test_an_exact_schedule_that_fails_the_check_is_dropped_with_its_bounds(monkeypatch):
    real = pf.check_feasible
    monkeypatch.setattr(pf, "check_feasible", lambda inst, sched: False)  # as if LPs lost a flow
    inst = synthetic(6, 3, load=0.9, seed=3)  # the bounds leave a gap: the exact phase runs
    res = pf.portfolio(inst, time_limit=600)
    assert "failed the feasibility check" in res.info["phases"]["exact"]
    assert "exact" not in res.info["bounds"] and res.info["bound_from"] != "exact"
    assert res.info["incumbent_from"] != "exact"
    assert real(inst, res.schedule) and res.bound <= res.objective


def test_refusals():
    inst = synthetic(4, 3, load=0.5, seed=1)
    with pytest.raises(CoflowoptError, match="supports only objective 'wcct'"):
        solve(inst, method="best", objective="makespan")
    with pytest.raises(CoflowoptError, match="option seed must be int"):
        solve(inst, method="best", seed=-1)
    with pytest.raises(CoflowoptError, match="does not take option"):
        solve(inst, method="best", neighbourhood="all")
    a = Coflow.from_flows("a", [(0, 0, 1.0)])
    b = Coflow.from_flows("b", [(0, 0, 1.0)], starts_after=("a",))
    dep = Instance(Fabric.uniform(1), (a, b))
    with pytest.raises(CoflowoptError, match=r"portfolio .*dependencies"):
        solve(dep, method="best")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_has_the_log_and_the_methods(capsys):
    code, out, _ = run(capsys, "solve", GAP, "--method", "best", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["method"] == "best" and doc["status"] == "optimal"
    assert doc["objective"] == pytest.approx(13.0) and doc["bound"] <= doc["objective"]
    assert doc["info"]["log"] and doc["info"]["incumbent_from"] and doc["info"]["bound_from"]


def test_cli_prints_a_line_per_improvement(capsys):
    code, out, _ = run(capsys, "solve", GAP, "--method", "best")
    head, *lines = out.splitlines()
    assert code == 0 and head.split() == ["time", "s", "method", "incumbent", "bound", "gap"]
    assert any("sincronia order" in line for line in lines)  # the first schedule's line
    assert "incumbent from" in out and "bound from" in out and "optimal" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["--objective", "makespan"], "supports only objective 'wcct'"),
    (["--param", "seed=-2"], "seed must be"),
    (["--param", "progress=1"], "not a solver option"),
    (["--param", "stride=2"], "does not take option(s) stride"),
])
def test_cli_bad_options_exit_2(capsys, argv, message):
    code, _, err = run(capsys, "solve", GAP, "--method", "best", *argv)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("options", [{"time_limit": math.nan}, {"time_limit": -5.0},
                                     {"rel_gap": math.nan}, {"rel_gap": 1.0}, {"seed": -1}])
def test_the_portfolio_function_checks_its_arguments(options):
    # solve(method="best") refused these; the function itself ran (rel_gap=nan: "feasible"
    # with the bound 1e-16 below the value)
    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0)]),))
    with pytest.raises(CoflowoptError, match=r"time_limit|rel_gap|seed"):
        pf.portfolio(inst, **options)
