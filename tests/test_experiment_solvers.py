"""Solvers in an experiment: a solve cell is ``coflowopt.solve`` run on the cell's instance,
cached and recomputed like the other cells, in the tidy tables and in the report.

Only deterministic outcomes are compared: the instances are small enough that the branch
and bound proves its optimum (the objective is then unique), and a local search is
compared only where it ended by itself (``reproducible``), never at its time limit.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import coflowopt
from coflowopt.experiment import Experiment, InstanceSpec, SolverSpec, load, load_experiment, report, sweep
from coflowopt.io.generate import synthetic

from .test_experiment import run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "sweep_optimum.toml"
MEASURED = ["runtime_s", "wall_s"]
SMALL = {"num_coflows": 6, "num_ports": 4, "load": 0.8}


def small(**changes) -> Experiment:
    """2 schedulers, a bound and 3 solvers on a 6-coflow synthetic instance, 2 seeds."""
    spec = {"instances": [InstanceSpec("synthetic", SMALL)], "schedulers": ["varys", "fifo"],
            "seeds": [0, 1], "bounds": ["isolation"],
            "solvers": ["exact", "local-search:time_limit=30", "exact:objective=makespan"]}
    spec.update(changes)
    return Experiment(**spec)


def test_a_solve_cell_is_what_solve_returns_on_its_instance(tmp_path):
    res = sweep(small(), tmp_path)
    assert res.computed == 2 * (2 + 1 + 3) and not res.failures
    runs, coflows = load(tmp_path), load(tmp_path, "coflows")
    solves = runs[runs["kind"] == "solve"]
    assert len(solves) == 6 and set(solves["status"]) == {"ok"}
    for _, row in solves.iterrows():
        inst = synthetic(6, 4, seed=int(row["seed"]), load=0.8)
        cfg = json.loads((tmp_path / "cells" / f"{row['cell']}.json").read_text())["config"]["solver"]
        assert cfg["method"] == row["policy"]
        direct = coflowopt.solve(inst, method=cfg["method"], objective=cfg["objective"],
                                 time_limit=cfg["time_limit"], **cfg["options"])
        assert coflowopt.check_feasible(inst, direct.schedule)
        assert row["solve_status"] == direct.status.value and row["objective_name"] == cfg["objective"]
        if row["policy"] == "exact":  # proven optimal: one value, whatever the machine
            assert direct.status is coflowopt.Status.OPTIMAL and row["reproducible"]
        if not row["reproducible"]:
            continue
        assert row["objective"] == pytest.approx(direct.objective, rel=1e-12)
        assert row["bound"] == pytest.approx(direct.bound, rel=1e-12)
        assert row["gap"] == pytest.approx(direct.gap, abs=1e-12)
        # the per-coflow rows are the schedule's completion times
        mine = coflows[coflows["cell"] == row["cell"]]
        assert list(mine["coflow"]) == list(inst.ids)
        assert np.allclose(mine["finish"], direct.completion, rtol=1e-12)
        assert math.isclose(row["mean_cct"], float(np.mean(direct.completion - inst.release)),
                            rel_tol=1e-12)
        if cfg["objective"] == "wcct":
            assert math.isclose(row["weighted_completion"], row["objective"], rel_tol=1e-9)
            assert math.isclose(row["bound_cct"], row["bound"] - row["released"], rel_tol=1e-12)
        else:  # the makespan's bound is on the makespan, not on sum w C
            assert math.isclose(row["makespan"], row["objective"], rel_tol=1e-9)
            assert math.isnan(row["bound_cct"])
    # the local search draws from the cell's seed when it is given none
    searched = solves[solves["policy"] == "local-search"]
    seeds = {r["seed"]: json.loads((tmp_path / "cells" / f"{r['cell']}.json").read_text())
             ["config"]["solver"]["options"] for _, r in searched.iterrows()}
    assert seeds == {0: {"seed": 0}, 1: {"seed": 1}}
    # theory: bound <= optimum <= every schedule, per seed
    for _, group in runs.groupby("seed"):
        opt = group[group["scheduler"] == "exact"].iloc[0]
        assert opt["solve_status"] == "optimal"
        sims = group[group["kind"] == "run"]
        assert (opt["weighted_cct"] <= sims["weighted_cct"] * (1 + 1e-9)).all()
        found = group[group["scheduler"] == "local-search:time_limit=30"].iloc[0]
        assert opt["weighted_cct"] <= found["weighted_cct"] * (1 + 1e-9)
        assert group.loc[group["kind"] == "bound", "bound_cct"].max() <= opt["weighted_cct"] * (1 + 1e-9)


def test_a_changed_solver_is_solved_again_and_the_rest_found(tmp_path):
    out = tmp_path / "out"
    exp = small(schedulers=["varys"], bounds=[], solvers=["exact", "sincronia"])
    assert sweep(exp, out).computed == 6
    before = load(out).drop(columns=MEASURED)
    again = sweep(exp, out, resume=True)
    assert (again.computed, again.cached) == (0, 6)
    pd.testing.assert_frame_equal(load(out).drop(columns=MEASURED), before)
    # the sincronia solver's time limit changes: its two cells only
    changed = small(schedulers=["varys"], bounds=[], solvers=["exact", "sincronia:time_limit=5"])
    res = sweep(changed, out, resume=True)
    assert (res.computed, res.cached) == (2, 4)
    assert set(load(out)["scheduler"]) == {"varys", "exact", "sincronia:time_limit=5"}


def test_any_change_of_a_solver_changes_its_id(monkeypatch):
    def one(solver, seed=0):
        exp = Experiment([InstanceSpec("synthetic", SMALL)], [], seeds=[seed], solvers=[solver])
        (cell,) = exp.cells()
        assert cell.kind == "solve"
        return cell.id

    ids = {
        "base": one("local-search"),
        "method": one("best"),
        "time limit": one("local-search:time_limit=5"),
        "option": one("local-search:perturbations=3"),
        "given seed": one("local-search:seed=7"),
        "cell seed": one("local-search", seed=1),
        "objective": one("exact:objective=makespan"),
    }
    same = {
        "label": one(SolverSpec("local-search", label="LS")),
        "as a spec": one(SolverSpec("local-search", time_limit=60)),
        "cell seed written out": one("local-search:seed=0"),
    }
    assert len(set(ids.values())) == len(ids)
    assert set(same.values()) == {ids["base"]}
    # a method without a seed does not take the cell's
    assert Experiment([InstanceSpec("file", {"file": ROOT / "tests" / "data" / "good_benchmark.txt"})],
                      [], seeds=[0, 1], solvers=["exact"]).cells()[0].config["solver"]["options"] == {}
    monkeypatch.setattr(coflowopt, "__version__", "0.0.0-other")
    assert one("local-search") != ids["base"]


def test_solvers_read_from_toml_and_written_back(tmp_path):
    path = tmp_path / "exp.toml"
    path.write_text('''
seeds = [0]
schedulers = ["varys"]
solvers = ["exact", "local-search:time_limit=5:neighbourhood=all",
           {method = "best", label = "portfolio", time_limit = [1, 2.5]},
           {method = "exact-milp", rel_gap = 1e-4},
           {method = "exact", objective = "makespan", crossbar = true}]

[[instances]]
generator = "synthetic"
num_coflows = 4
num_ports = 2
''')
    exp = load_experiment(path)
    assert [s.label for s in exp.solvers] == [
        "exact", "local-search:time_limit=5:neighbourhood=all", "portfolio:time_limit=1",
        "portfolio:time_limit=2.5", "exact-milp:rel_gap=0.0001", "exact:objective=makespan:crossbar=True"]
    ls = exp.solvers[1]
    assert (ls.method, ls.time_limit, dict(ls.options)) == ("local-search", 5.0, {"neighbourhood": "all"})
    assert exp.solvers[5].objective == "makespan" and exp.solvers[5].options == {"crossbar": True}
    back = tmp_path / "back.toml"
    back.write_text(exp.to_toml())
    again = load_experiment(back)
    assert again == exp
    assert [c.id for c in again.cells()] == [c.id for c in exp.cells()]
    assert Experiment.from_dict(json.loads(json.dumps(exp.to_dict()))) == exp
    assert [c.kind for c in exp.cells()] == ["run"] + ["solve"] * 6


def test_a_bad_solver_in_python_names_the_item():
    with pytest.raises(coflowopt.InputError, match=r"^solvers\[1\]: unknown method 'exakt'"):
        Experiment([InstanceSpec("synthetic", SMALL)], [], solvers=["exact", "exakt"])
    with pytest.raises(coflowopt.InputError, match=r"^solvers\[0\]: a solver is a string or a SolverSpec"):
        Experiment([InstanceSpec("synthetic", SMALL)], [], solvers=[{"method": "exact"}])
    with pytest.raises(coflowopt.InputError, match="method 'sincronia' does not take option"):
        SolverSpec("sincronia", {"seed": 1})


def test_pool_and_here_give_identical_solver_tables(tmp_path):
    exp = small(schedulers=["varys"], bounds=[], solvers=["exact", "sincronia", "exact:objective=makespan"],
                seeds=[0, 1, 2])
    tables = {}
    for name, how in (("here", {"jobs": 1}), ("pool", {"jobs": 2, "chunk_size": 2})):
        res = sweep(exp, tmp_path / name, **how)
        assert res.computed == 12 and not res.failures
        runs = load(tmp_path / name).drop(columns=MEASURED).sort_values("cell")
        assert runs.loc[runs["kind"] == "solve", "reproducible"].all()
        tables[name] = (runs, load(tmp_path / name, "coflows").sort_values(["cell", "coflow"]))
    pd.testing.assert_frame_equal(tables["pool"][0], tables["here"][0])
    pd.testing.assert_frame_equal(tables["pool"][1], tables["here"][1])


# --------------------------------------------------------------------------- the report


def hand_table() -> pd.DataFrame:
    """varys and an exact solver over three seeds; the solver's third seed stopped at its
    time limit; a bound weaker than the solver's proof."""
    rows = []
    for seed, (v, e, status) in enumerate([(10, 8, "optimal"), (12, 12, "optimal"), (20, 15, "time_limit")]):
        common = {"instance": "i", "fabric": "big-switch", "background": "none", "seed": seed, "status": "ok"}
        rows.append({**common, "kind": "run", "scheduler": "varys", "mean_cct": v / 2, "p95_cct": float(v),
                     "weighted_cct": float(v), "runtime_s": 1.0})
        rows.append({**common, "kind": "bound", "scheduler": "isolation", "bound_cct": 4.0})
        rows.append({**common, "kind": "solve", "scheduler": "exact", "mean_cct": e / 2, "p95_cct": float(e),
                     "weighted_cct": float(e), "runtime_s": 2.0, "objective": e + 100.0,
                     "bound": e + 100.0 if status == "optimal" else 110.0,
                     "bound_cct": float(e) if status == "optimal" else 10.0,
                     "gap": 0.0 if status == "optimal" else 5 / 115, "solve_status": status,
                     "reproducible": status == "optimal"})
    return pd.DataFrame(rows)


def test_report_has_a_row_per_solver_normalized_and_against_the_bound():
    table = report(hand_table()).set_index("scheduler")
    assert list(table.index) == ["varys", "exact"]
    exact, varys = table.loc["exact"], table.loc["varys"]
    assert (exact["kind"], exact["seeds"], exact["optimal"], exact["reproducible"]) == ("solve", 3, 2, 2)
    assert varys["kind"] == "run" and math.isnan(varys["optimal"])
    # sum w CCT over varys's, per seed: 8/10, 12/12, 15/20
    assert math.isclose(exact["norm_weighted"], (0.8 + 1 + 0.75) / 3)
    assert math.isclose(exact["norm_mean"], (0.8 + 1 + 0.75) / 3)
    assert math.isclose(exact["objective"], (108 + 112 + 115) / 3)
    assert math.isclose(exact["gap"], 5 / 115 / 3)
    # the best bound of each seed is the solver's proof where it beats the bound's 4: 8, 12, 10
    assert math.isclose(varys["vs_bound"], (10 / 8 + 12 / 12 + 20 / 10) / 3)
    assert math.isclose(exact["vs_bound"], (1 + 1 + 15 / 10) / 3)
    # a solver can be the baseline
    other = report(hand_table(), baseline="exact").set_index("scheduler")
    assert math.isclose(other.loc["varys", "norm_weighted"], (10 / 8 + 1 + 20 / 15) / 3)


def test_the_cli_reports_a_solver_and_says_which_seeds_stopped_at_the_limit(tmp_path, capsys):
    hand_table().to_csv(tmp_path / "runs.csv", index=False)
    code, text, _ = run(capsys, "report", tmp_path)
    assert code == 0
    header = next(line for line in text.splitlines() if line.startswith("scheduler"))
    assert header.split("  ")[0] == "scheduler" and "sum wCCT/base" in header and "optimal" in header
    exact = next(line for line in text.splitlines() if line.startswith("exact"))
    assert " 2/3 " in exact
    assert "stopped at the time limit (values depend on the machine): exact on 1 of 3 seeds" in text


def test_the_cli_sweeps_the_solver_example(tmp_path, capsys):
    out = tmp_path / "optimum"
    code, text, _ = run(capsys, "sweep", EXAMPLE, "--out", out, "--jobs", "1", "--json")
    done = json.loads(text)
    assert code == 0 and (done["cells"], done["computed"], done["failed"]) == (36, 36, [])
    runs = load(out)
    exact = runs[runs["scheduler"] == "exact"]
    assert len(exact) == 6 and set(exact["solve_status"]) == {"optimal"} and exact["reproducible"].all()
    code, text, _ = run(capsys, "report", out, "--baseline", "exact", "--json")
    rows = json.loads(text)["rows"]
    assert code == 0 and len(rows) == 2 * 5
    for r in rows:
        if r["scheduler"] == "exact":
            assert (r["optimal"], r["norm_weighted"]) == (3, 1.0)
            assert r["vs_bound"] == pytest.approx(1.0, rel=1e-12)
        else:  # no schedule beats a proven optimum
            assert r["norm_weighted"] >= 1 - 1e-9 and r["vs_bound"] >= 1 - 1e-9
    code, text, _ = run(capsys, "report", out, "--baseline", "exact")
    assert code == 0 and "optimal" in text and "3/3" in text


def test_a_solver_alone_and_a_solver_beside_backgrounds_are_reported_and_drawn(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    alone = Experiment([InstanceSpec("synthetic", SMALL)], [], seeds=[0, 1], solvers=["exact", "sincronia"])
    sweep(alone, tmp_path / "alone")
    table = report(tmp_path / "alone").set_index("scheduler")
    assert table.attrs["baseline"] == "exact" and list(table["optimal"]) == [2, 0]
    assert (table.loc["sincronia", "norm_weighted"] >= 1 - 1e-9) and table.loc["exact", "norm_weighted"] == 1
    # simulations under background only: a solve's setting (background none) reads the
    # figure's x from its own rows and is drawn beside them
    beside = small(solvers=["exact"], bounds=[], backgrounds=["share:0.2"], seeds=[0])
    sweep(beside, tmp_path / "beside")
    code, text, err = run(capsys, "report", tmp_path / "beside", "--plot", tmp_path / "r.png",
                          "--figure", "ratio")
    assert code == 0 and (tmp_path / "r.png").stat().st_size > 0
    assert all(line.startswith("coflowopt: compil") for line in err.splitlines())
    assert "background none" in text and "background share:0.2" in text


@pytest.mark.parametrize(("status", "info", "reproducible"), [
    ("optimal", {}, True), ("feasible", {}, True), ("time_limit", {}, False), ("no_solution", {}, False),
    ("feasible", {"lp": {"timed_out": True}}, False), ("feasible", {"lp": {"timed_out": False}}, True),
])
def test_a_solve_the_clock_stopped_is_marked_not_reproducible(monkeypatch, status, info, reproducible):
    """The marking itself, on results made up (a real time-out depends on the machine)."""
    import dataclasses

    import coflowopt.solvers
    from coflowopt.experiment import run_cell

    real = coflowopt.solvers.solve

    def stopped(inst, **kwargs):
        res = real(inst, **kwargs)
        return dataclasses.replace(res, status=coflowopt.Status(status), info={**res.info, **info})

    monkeypatch.setattr(coflowopt.solvers, "solve", stopped)
    (cell,) = Experiment([InstanceSpec("synthetic", SMALL)], [], solvers=["sincronia"]).cells()
    out = run_cell(cell.config, {})
    assert out["status"] == "ok" and out["summary"]["solve_status"] == status
    assert out["summary"]["reproducible"] is reproducible
