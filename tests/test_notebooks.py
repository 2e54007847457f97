"""The notebooks run: their code cells, executed in order at a reduced size.

Jupyter is not needed: the cells are read from the ``.ipynb`` JSON and executed as one
script (``COFLOWOPT_NOTEBOOK_COFLOWS=40``: the trace's first 40 coflows, 40-coflow synthetic
instances, fewer seeds). Each test checks what the notebook computed, not only that it ran.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import coflowopt as co
from coflowopt.sim import simulate

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def run_notebook(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    nb = json.loads(path.read_text())
    assert nb["nbformat"] == 4
    src = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    monkeypatch.setenv("COFLOWOPT_NOTEBOOK_COFLOWS", "40")
    monkeypatch.setenv("COFLOWOPT_ROOT", str(ROOT))
    ns: dict = {"__name__": f"notebook_{path.stem}"}
    exec(compile(src, str(path), "exec"), ns)  # our own notebook
    return ns


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS] == [
        "fb_trace_tour.ipynb", "heuristics_across_loads.ipynb", "heuristics_vs_optimum.ipynb",
        "hug_vs_drf.ipynb", "mcs_thresholds.ipynb"]


def test_notebooks_are_stored_without_outputs():
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            assert not cell.get("outputs"), path.name


def test_fb_trace_tour(monkeypatch):
    pytest.importorskip("pandas")
    ns = run_notebook(ROOT / "notebooks" / "fb_trace_tour.ipynb", monkeypatch)
    inst, table, means = ns["inst"], ns["table"], ns["means"]
    assert inst.num_coflows == 40
    assert list(table.index) == list(ns["runs"])
    # the bound bounds every heuristic; the numbers are simulate()'s
    assert (table["sum wCCT / bound"] >= 1 - 1e-9).all()
    varys = simulate(inst, "varys", record=False).summary
    assert table.loc["varys", "mean CCT (s)"] == varys.mean_cct
    assert table.loc["varys", "mean / varys"] == 1.0
    assert ns["lb"].bound == max(ns["bounds"])
    # the sweep: nine settings, normalized to Aalo's defaults
    assert len(means) == 9 and means["E=10, Q1=10 MB"] == 1.0
    strict = simulate(inst, "aalo", sharing="strict", multiplier=2.0, first_threshold=co.MB,
                      record=False).summary.mean_cct
    assert np.isclose(means["E=2, Q1=1 MB"] * ns["default"], strict, rtol=1e-12)


def test_heuristics_vs_optimum(monkeypatch):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    ns = run_notebook(ROOT / "notebooks" / "heuristics_vs_optimum.ipynb", monkeypatch)
    small, heuristics = ns["small"], ns["HEURISTICS"]
    assert len(small) == ns["SMALL"] == 4
    # bound <= optimum <= every heuristic, on every instance (ratios of sums of weighted CCTs)
    assert (small["bound / optimum"] <= 1 + 1e-9).all() and (small["bound / optimum"] > 0).all()
    assert (small[heuristics] >= 1 - 1e-9).all().all()
    for inst, opt, runs in ns["schedules"].values():
        assert opt.status is co.Status.OPTIMAL and inst.num_coflows == 6
        released = float(inst.weight @ inst.release)
        for res in runs.values():
            assert res.summary.weighted_cct >= opt.objective - released - 1e-9 * opt.objective
    assert list(ns["gaps"].columns) == ["mean", "max"]
    assert set(ns["gaps"].index) == set(heuristics)
    # the trace: 40 coflows, every heuristic at least the bound, varys's number is simulate()'s
    fb, on_trace = ns["fb"], ns["on_trace"]
    assert fb.num_coflows == 40 and (on_trace >= 1 - 1e-9).all()
    varys = simulate(fb, "varys", record=False).summary.weighted_cct
    assert on_trace["varys"] == pytest.approx(varys / (ns["fb_bound"].bound - ns["fb_released"]),
                                              rel=1e-12)
    # the drawing: the optimal and the worst heuristic's schedule, feasible, side by side
    fig, name, inst = ns["fig"], ns["name"], ns["inst"]
    assert [ax.get_title() for ax in fig.axes] == ["optimal", name]
    assert small.loc[ns["worst"], name] == small[heuristics].max().max()
    assert co.check_feasible(inst, ns["runs"][name].schedule).ok


def test_heuristics_across_loads(monkeypatch, tmp_path):
    import tempfile

    pytest.importorskip("pandas")
    pytest.importorskip("distributed")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the sweep's folder
    ns = run_notebook(ROOT / "notebooks" / "heuristics_across_loads.ipynb", monkeypatch)
    runs, table, schedulers = ns["runs"], ns["table"], ns["SCHEDULERS"]
    assert ns["COFLOWS"] == 40 and ns["result"].computed == len(runs) == 3 * 6 * 3
    assert (runs["status"] == "ok").all() and set(runs["instance_num_coflows"]) == {40}
    assert ns["cluster"].status.name == "closed" and ns["OUT"].parent == tmp_path
    # one row per load and scheduler over 3 seeds, with the interval's half-width
    assert len(table) == 3 * 6 and (table["seeds"] == 3).all()
    assert {"norm_mean", "norm_mean_ci", "mean_cct", "mean_cct_ci"} <= set(table.columns)
    assert (table["norm_mean_ci"][table["scheduler"] != "varys"] > 0).all()
    assert (table.loc[table["scheduler"] == "varys", "norm_mean"] == 1.0).all()
    # the pivot is the report's, and the ranks order each load's column
    ranked, ranks = ns["ranked"], ns["ranks"]
    assert ranked.shape == (6, 3) and list(ranked.index) == schedulers
    assert list(ranked.columns) == [0.3, 0.6, 0.9]
    for load in ranked.columns:
        order = ranked[load].sort_values().index
        assert list(ranks[load].loc[order]) == sorted(ranks[load])
    # a number of the report from the per-run table by hand: fifo at load 0.9
    by = runs[runs["instance_load"] == 0.9].set_index(["scheduler", "seed"])["mean_cct"]
    mine = np.mean([by["fifo", s] / by["varys", s] for s in range(3)])
    assert ranked.loc["fifo", 0.9] == pytest.approx(mine, rel=1e-12)
    assert len(ns["fig"].axes[0].get_lines()) >= 6


def test_hug_vs_drf(monkeypatch):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    from coflowopt.fairness import FairnessProblem, drf, evaluate

    ns = run_notebook(ROOT / "notebooks" / "hug_vs_drf.ipynb", monkeypatch)
    inst, snap = ns["inst"], ns["snapshot"]
    assert inst.num_coflows == 40 and list(snap.index) == ["HUG", "DRF", "PS-P", "per-flow"]
    star = float(evaluate(drf(FairnessProblem.from_instance(inst))).isolation_guarantee)
    # HUG and DRF: the same optimal isolation guarantee; HUG uses at least as much
    assert snap.loc["HUG", "isolation guarantee"] == pytest.approx(star, rel=1e-9)
    assert snap.loc["DRF", "isolation guarantee"] == pytest.approx(star, rel=1e-9)
    assert snap.loc["DRF", "min progress"] == pytest.approx(snap.loc["DRF", "max progress"])
    assert snap.loc["HUG", "utilization"] >= snap.loc["DRF", "utilization"] - 1e-12
    assert snap.loc["per-flow", "isolation guarantee"] <= star + 1e-12
    assert ns["gain"] >= 1 - 1e-12
    # over time: normalized to HUG, the numbers are simulate()'s
    over = ns["over_time"]
    assert list(over.index) == ["hug", "drf", "psp", "varys", "fair"]
    assert over.loc["hug", "mean_cct_vs_baseline"] == 1.0
    varys = simulate(inst, "varys", record=False)
    assert over.loc["varys", "mean_cct"] == pytest.approx(float(varys.cct.mean()), rel=1e-12)
    hug = simulate(inst, "hug", record=False)
    assert over.loc["varys", "mean_normalized_cct"] == pytest.approx(
        float(np.mean(varys.cct / hug.cct)), rel=1e-12)
    assert (over["min_slowdown"] >= 1 - 1e-9).all()
    # the timelines: at the start both hold the DRF guarantee of the coflows present then
    tls = ns["timelines"]
    assert set(tls) == {"HUG", "DRF"}
    for tl in tls.values():
        assert np.nanmax(tl.progress) <= 1 + 1e-9 and (tl.utilization <= 1 + 1e-9).all()
    lines = ns["fig"].axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["HUG", "DRF"]


def test_mcs_thresholds(monkeypatch):
    pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    from coflowopt.mcs.validate import CONFIGS

    ns = run_notebook(ROOT / "notebooks" / "mcs_thresholds.ipynb", monkeypatch)
    assert ns["inst"].num_coflows == 40
    for label, sol in ns["solutions"].items():
        # the optimum is no worse than the defaults, under the model it optimized
        assert sol.objective <= sol.default_objective + 1e-12, label
        assert ns["models"][label].objective(sol.thresholds) == pytest.approx(sol.objective)
    compared = ns["compared"]
    assert list(compared.index) == list(CONFIGS)
    assert compared.loc["aalo-default", "simulated_vs_aalo"] == 1.0
    assert compared.loc["aalo-default", "predicted_vs_aalo"] == pytest.approx(1.0)
    # model-optimized configurations are predicted no worse than their defaults
    assert (compared.loc["aalo-optimized", "predicted_vs_aalo"]
            <= compared.loc["aalo-default", "predicted_vs_aalo"] + 1e-12)
    assert (compared.loc["mcs-optimized", "predicted_vs_aalo"]
            <= compared.loc["mcs-default", "predicted_vs_aalo"] + 1e-12)
    for sweep, fig in ((ns["aalo_sweep"], ns["fig"]), (ns["mcs_sweep"], ns["fig2"])):
        assert len(sweep.rows) == 5 and sweep.column("value_mb") == [0.1, 1.0, 10.0, 100.0, 1000.0]
        model = fig.axes[0].get_lines()[0]
        assert list(model.get_ydata()) == sweep.column("predicted_relative")
    aalo = simulate(ns["inst"], "aalo", record=False)
    assert ns["aalo_sweep"].column("simulated_cct")[2] == pytest.approx(float(aalo.cct.mean()),
                                                                        rel=1e-12)
