"""Figures of results (matplotlib, the ``plot`` extra).

Each function takes results and returns a :class:`matplotlib.figure.Figure` built
without pyplot (no global state, no window), which the caller saves or shows; the
command line writes them with ``--plot OUT`` (PNG, SVG or PDF by the suffix).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import require

__all__ = ["BIN_NAMES", "compare_figure"]

BIN_NAMES = ("SN", "LN", "SW", "LW")
"""The Varys and Aalo papers' bins: short/long (longest flow below or above 5 MB) x
narrow/wide (at most or more than 50 flows)."""


def _figure(width: float, height: float) -> Any:
    require("matplotlib", "plot", "figures")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def compare_figure(rows: Sequence[Mapping[str, Any]], *, baseline: str, title: str = "",
                   bin_counts: Mapping[str, int] | None = None) -> Any:
    """The ``compare`` table as a figure: per-bin mean CCTs over the baseline's, and each
    scheduler's sum of weighted CCTs over the proven lower bound (when rows have it).

    ``rows``: as :func:`coflowopt.cli.simulate.compare_rows` makes them (keys
    ``scheduler``, ``norm_mean``, ``norm_SN`` ... ``norm_LW``, ``cct_vs_bound``).
    Ratios are on a log scale: schedulers differ by orders of magnitude in some bins.
    """
    has_bound = any(math.isfinite(r.get("cct_vs_bound", math.nan)) for r in rows)
    fig = _figure(11.0 if has_bound else 8.0, 4.2)
    axes = fig.subplots(1, 2, width_ratios=[2.2, 1]) if has_bound else [fig.subplots()]
    names = [str(r["scheduler"]) for r in rows]
    groups = [("all", "norm_mean")] + [(b, f"norm_{b}") for b in BIN_NAMES]
    width = 0.8 / len(groups)
    ax = axes[0]
    for g, (label, key) in enumerate(groups):
        if bin_counts is not None and label in bin_counts:
            label = f"{label} ({bin_counts[label]})"
        xs = [i + (g - (len(groups) - 1) / 2) * width for i in range(len(rows))]
        ys = [float(r[key]) if math.isfinite(float(r[key])) else math.nan for r in rows]
        ax.bar(xs, ys, width, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), names, rotation=35, ha="right")
    ax.set_ylabel(f"mean CCT / {baseline}'s mean CCT")
    ax.set_title("mean CCT by bin over the baseline's (log scale; lower is better)", fontsize=10)
    ax.legend(fontsize=8, ncols=len(groups), loc="lower center", bbox_to_anchor=(0.5, 1.07),
              frameon=False)
    if has_bound:
        ax2 = axes[1]
        ratios = [float(r.get("cct_vs_bound", math.nan)) for r in rows]
        ax2.barh(range(len(rows)), ratios, color="tab:gray")
        ax2.axvline(1.0, color="black", linewidth=0.8)
        ax2.set_yticks(range(len(rows)), names)
        ax2.invert_yaxis()
        finite = [v for v in ratios if math.isfinite(v)]
        ax2.set_xlim(0, 1.25 * max(finite, default=1.0))
        ax2.set_xlabel("sum of weighted CCTs / lower bound")
        ax2.set_title("at most this far above the optimum", fontsize=10)
        for i, v in enumerate(ratios):
            if math.isfinite(v):
                ax2.text(v, i, f" {v:.2f}x", va="center", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig
