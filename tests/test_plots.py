"""Figures: the compare table as a figure, from Python and from ``compare --plot``."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

import coflowopt as co
from coflowopt.cli import main
from coflowopt.plots import BIN_NAMES, compare_figure

ROOT = Path(__file__).resolve().parents[1]
SHUFFLE = ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json"


def _rows(bound: bool) -> list[dict]:
    rows = []
    for name, scale in (("varys", 1.0), ("fair", 2.5), ("fifo", math.nan)):
        row = {"scheduler": name, "norm_mean": scale,
               **{f"norm_{b}": scale * (i + 1) for i, b in enumerate(BIN_NAMES)}}
        if bound:
            row["cct_vs_bound"] = 1.5 * scale
        rows.append(row)
    return rows


@pytest.mark.parametrize("bound", [True, False])
def test_the_compare_figure_has_a_bar_per_scheduler_and_bin(bound):
    fig = compare_figure(_rows(bound), baseline="varys", title="t", bin_counts={"SN": 3})
    axes = fig.axes
    assert len(axes) == (2 if bound else 1)
    bars = axes[0].patches
    assert len(bars) == 3 * (1 + len(BIN_NAMES))  # a NaN ratio draws a bar of no height
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["varys", "fair", "fifo"]
    assert axes[0].get_yscale() == "log"
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == ["all", "SN (3)", "LN", "SW", "LW"]
    if bound:
        widths = [p.get_width() for p in axes[1].patches]
        assert widths[:2] == [1.5, 3.75] and math.isnan(widths[2])


def test_compare_writes_its_figure(tmp_path, capsys):
    out = tmp_path / "cmp.png"
    code = main(["compare", str(SHUFFLE), "--schedulers", "varys,fair", "--bound", "best",
                 "--plot", str(out), "--no-progress"])
    assert code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"figure written to {out}" in capsys.readouterr().out


def test_a_plot_of_an_unknown_type_is_refused_before_any_work(tmp_path, capsys):
    code = main(["compare", str(SHUFFLE), "--plot", str(tmp_path / "cmp.gif")])
    assert code == 2
    assert "the file name must end in one of .png, .pdf, .svg" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_figures_without_matplotlib_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(co.MissingDependencyError, match=r"coflowopt\[plot\]"):
        compare_figure(_rows(False), baseline="varys")
