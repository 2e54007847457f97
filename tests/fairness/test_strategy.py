"""Strategy-proofness search: the dissertation's lies are found, none against DRF or HUG."""

from __future__ import annotations

import itertools
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from coflowopt.errors import InstanceError
from coflowopt.fairness import FairnessProblem, lie_search, load_problem

from ._strategies import problems

ROOT = Path(__file__).resolve().parents[2] / "instances" / "fairness"


def example(name: str) -> FairnessProblem:
    return load_problem(ROOT / f"{name}.json", exact=True)


def test_finds_the_lie_of_figure_7_4b_against_spare_to_the_highest_demand() -> None:
    r = lie_search(example("hug_two_coflows_elastic"), "A", "drf+highest")
    assert r.found and r.exact
    assert (r.truthful_progress, r.best_progress) == (F(2, 3), F(11, 12))
    assert list(r.witness) == [1, 1]  # the dissertation's <1, 1>
    assert list(r.all_progress) == [F(11, 12), F(1, 2)]


def test_finds_the_lie_of_lemma_d_2_2_against_psp() -> None:
    r = lie_search(example("hug_three_coflows_inelastic"), "B", "psp")
    assert r.found and r.exact
    assert (r.truthful_progress, r.best_progress) == (F(1, 3), F(3, 8))
    assert list(r.all_progress) == [F(1, 2), F(3, 8), F(3, 8)]


@pytest.mark.parametrize(
    ("policy", "best"),
    [("drf+highest", F(2, 3)), ("drf+lowest", F(2, 3)), ("drf+equal", F(34, 53)),
     ("drf+proportional", F(2, 3))],
)
def test_finds_lies_against_every_naive_policy_of_appendix_d_2(policy: str, best: F) -> None:
    r = lie_search(example("hug_three_coflows_elastic"), "A", policy, samples=100)
    assert r.found and r.exact
    assert r.truthful_progress == F(2, 5)
    assert r.best_progress >= best


def test_cooperative_hug_is_not_strategy_proof() -> None:
    # Lemma D.3.1: full work conservation invites lies, even with optimal guarantees
    r = lie_search(example("hug_two_coflows_elastic"), "A", "hug", options={"cooperative": True})
    assert r.found and r.best_progress > F(2, 3)


@pytest.mark.parametrize("name", ["hug_two_coflows_elastic", "hug_two_coflows_inelastic",
                                  "hug_three_coflows_elastic", "hug_three_coflows_inelastic"])
@pytest.mark.parametrize("mechanism", ["drf", "hug"])
def test_no_lie_against_drf_or_hug_on_the_examples(name: str, mechanism: str) -> None:
    prob = example(name)
    for cid in prob.ids:
        r = lie_search(prob, cid, mechanism, samples=150, local_rounds=20)
        assert not r.found, (cid, r.witness, r.best_progress)
        assert r.evaluations > 100 and r.stopped == "completed"
        assert r.witness is None and r.gain <= 1e-9


def test_psp_with_elastic_demands_is_strategy_proof_on_figure_7_3() -> None:
    # demand-agnostic per-link shares (App. D.2.1): only the links used matter
    prob = example("hug_two_coflows_elastic")
    assert not lie_search(prob, "A", "psp", samples=100).found


@settings(max_examples=25, deadline=None)
@given(problems(max_coflows=3, max_links=3))
def test_no_lie_against_drf_or_hug_on_random_instances(prob: FairnessProblem) -> None:
    for mechanism in ("drf", "hug"):
        for k in range(prob.num_coflows):
            r = lie_search(prob, k, mechanism, grid=6, samples=30, local_rounds=8, starts=2)
            assert not r.found, (mechanism, k, r.witness, r.truthful_progress, r.best_progress)


def test_search_effort_limits_and_determinism() -> None:
    prob = example("hug_three_coflows_elastic")
    r = lie_search(prob, "B", "hug", max_evaluations=25)
    assert r.stopped == "max_evaluations" and r.evaluations == 25
    r = lie_search(prob, "B", "hug", time_limit=1e-9)
    assert r.stopped == "time_limit"
    a = lie_search(prob, "A", "drf+equal", samples=50, seed=3)
    b = lie_search(prob, "A", "drf+equal", samples=50, seed=3)
    assert a.witness is not None and b.witness is not None
    assert (a.best_progress, list(a.witness), a.evaluations) == (
        b.best_progress, list(b.witness), b.evaluations)
    assert a.effort["grid"] > 0 and a.grid_resolution == 48


def test_lie_search_rejects_flow_level_mechanisms_and_unknown_names() -> None:
    prob = example("hug_two_coflows_elastic")
    with pytest.raises(InstanceError, match="allocates flows"):
        lie_search(prob, "A", "perflow")
    with pytest.raises(InstanceError, match="unknown mechanism"):
        lie_search(prob, "A", "maxmin")
    with pytest.raises(InstanceError, match="no coflow with id 'Z'"):
        lie_search(prob, "Z", "hug")


def test_an_equilibrium_search_gets_the_time_left_and_one_cut_short_is_no_evaluation(
        monkeypatch) -> None:
    # PS-P's equilibrium search ran without a limit inside the lie search, which looked at
    # the clock only between evaluations (6.5 s for --time-limit 5 on 100 coflows)
    from coflowopt.fairness import strategy

    limits: list[float | None] = []
    real = strategy.allocate

    def allocate(problem, mechanism, **options):
        limits.append(options.get("time_limit"))
        alloc = real(problem, mechanism, **options)
        if len(limits) == 3:  # the third evaluation runs out of time
            alloc.info.update(converged=False, stopped="time_limit")
        return alloc

    monkeypatch.setattr(strategy, "allocate", allocate)
    r = lie_search(example("hug_three_coflows_inelastic"), "B", "psp", time_limit=1000.0)
    assert r.stopped == "time_limit" and r.evaluations == 2  # the cut one is not counted
    assert limits[0] is None  # the truthful report is always evaluated in full
    assert all(0 < t <= 1000.0 for t in limits[1:3])  # (then the exact confirmation, in full)


def test_past_the_time_limit_no_exact_confirmation_is_started() -> None:
    r = lie_search(example("hug_two_coflows_elastic"), "A", "drf+highest", time_limit=1e-9)
    assert r.stopped == "time_limit" and not r.exact
    assert isinstance(r.truthful_progress, float)  # the float search's value, not F(2, 3)


def test_the_grid_is_the_vectors_with_largest_entry_one_and_is_capped():
    from coflowopt.fairness.strategy import MAX_GRID_POINTS, _grid, _grid_points

    for n in (1, 2, 3):
        for g in (1, 2, 5):
            ref = [np.array(c, float) / g for c in itertools.product(range(g + 1), repeat=n)
                   if max(c) == g]
            got = list(_grid(n, g))
            assert len(got) == len(ref) == _grid_points(n, g)
            assert all(np.array_equal(a, b) for a, b in zip(got, ref, strict=True))
    # --grid 100000 ran for hours (every (g + 1)^n vector enumerated): now refused at once
    g = 100_000 * 10
    assert _grid_points(2, g) > MAX_GRID_POINTS
    with pytest.raises(InstanceError, match="use a coarser grid"):
        lie_search(example("hug_two_coflows_elastic"), "A", "hug", grid=g)
