"""The notebooks run: their code cells, executed in order on a prefix of the trace.

Jupyter is not needed: the cells are read from the ``.ipynb`` JSON and executed as one
script (``COFLOWOPT_NOTEBOOK_COFLOWS`` limits the trace to its first 40 coflows).
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
    assert [p.name for p in NOTEBOOKS] == ["fb_trace_tour.ipynb"]


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
