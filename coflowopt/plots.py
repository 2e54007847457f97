"""Figures of results (matplotlib, the ``plot`` extra).

Each function takes results and returns a :class:`matplotlib.figure.Figure` built
without pyplot (no global state, no window), which the caller saves or shows; the
command line writes them with ``--plot OUT`` (PNG, SVG or PDF by the suffix).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .errors import InputError, require

if TYPE_CHECKING:
    from .instance import Instance
    from .schedule import Schedule

__all__ = [
    "BIN_NAMES",
    "TIMELINE_MAX_LINKS",
    "cct_cdf_figure",
    "compare_figure",
    "link_occupancy",
    "timeline_figure",
]

TIMELINE_MAX_LINKS = 40
"""The most links :func:`timeline_figure` draws unless told which (a row each)."""

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


def cct_cdf_figure(ccts: Mapping[str, npt.ArrayLike], *, title: str = "",
                   unit: str = "s") -> Any:
    """The empirical distribution of coflow completion times, one step line per scheduler.

    ``ccts``: label -> the CCT of every coflow (for example ``{name: result.cct}`` of
    :func:`coflowopt.sim.simulate` results). The line of ``n`` CCTs rises by ``1/n`` at
    each, so it reads "the fraction of coflows done within x"; x on a log scale (CCTs span
    orders of magnitude on traces). Non-positive CCTs (a coflow of nothing) are left out
    of the log axis and counted in the fraction.
    """
    fig = _figure(6.4, 4.2)
    ax = fig.subplots()
    for label, values in ccts.items():
        c = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
        if c.size == 0:
            raise InputError(f"no CCTs for '{label}'")
        if not np.isfinite(c).all():
            raise InputError(f"CCTs of '{label}' must be finite")
        frac = np.arange(1, c.size + 1) / c.size
        keep = c > 0
        ax.step(c[keep], frac[keep], where="post", label=label)
    ax.set_xscale("log")
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel(f"coflow completion time ({unit}, log scale)")
    ax.set_ylabel("fraction of coflows")
    ax.grid(True, which="major", linewidth=0.4)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=11)
    return fig


def link_occupancy(instance: Instance, schedule: Schedule, link: int
                   ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """What each coflow uses of one link over time, as shares of its capacity.

    Returns ``(times, share)``: the ``m + 1`` instants where any piece crossing the link
    starts or ends, and an ``(m, K)`` array, ``share[j, k]`` the rate coflow ``k``'s
    flows put on the link over ``[times[j], times[j+1])`` (each flow's rate times its
    share ``A_fl`` of the link, summed) over the link's capacity.
    """
    on = instance.routes[:, [link]].toarray()[:, 0]  # A_fl of every flow f
    flow, start, end, rate = schedule.flow, schedule.start, schedule.end, schedule.rate
    mine = (on[flow] > 0) & (end > start)
    flow, start, end = flow[mine], start[mine], end[mine]
    load = rate[mine] * on[flow] / float(instance.fabric.capacity[link])
    times = np.unique(np.concatenate([start, end]))
    share = np.zeros((max(times.size - 1, 0), instance.num_coflows))
    if times.size > 1:
        first = np.searchsorted(times, start)
        last = np.searchsorted(times, end)
        coflow = instance.flow_coflow[flow]
        for i in range(flow.size):
            share[first[i]:last[i], coflow[i]] += load[i]
    return times, share


def timeline_figure(instance: Instance, schedule: Schedule, *,
                    links: Sequence[int] | None = None, title: str = "") -> Any:
    """A schedule as a timeline: one row per link, coloured by coflow.

    Within its row each link's height is its capacity; over each interval where rates
    are constant the coflows' shares (:func:`link_occupancy`) are stacked from the
    bottom in coflow order, so an idle or part-used link shows as white. ``links``: the
    rows to draw (default every link some piece crosses, at most
    ``TIMELINE_MAX_LINKS``). Meant for small
    instances, to put an optimal and a heuristic schedule side by side.
    """
    L = instance.fabric.num_links
    if links is None:
        used = np.unique(instance.routes.tocsr()[schedule.flow].indices) if len(
            schedule.flow) else np.zeros(0, np.int64)
        links = [int(x) for x in used]
        if len(links) > TIMELINE_MAX_LINKS:
            raise InputError(f"the schedule crosses {len(links)} links; pass at most "
                             f"{TIMELINE_MAX_LINKS} as links=")
    for link in links:
        if not 0 <= int(link) < L:
            raise InputError(f"link {link} does not exist (the fabric has {L} links)")
    fig = _figure(8.0, 0.9 + 0.45 * max(len(links), 1))
    ax = fig.subplots()
    colors = [f"C{k % 10}" for k in range(instance.num_coflows)]
    for row, link in enumerate(links):
        times, share = link_occupancy(instance, schedule, int(link))
        base = np.zeros(share.shape[0])
        for k in range(instance.num_coflows):
            h = share[:, k]
            for j in np.flatnonzero(h > 0):
                # rows grow downwards on the axis: a link's bottom is at row + 0.4
                ax.add_patch(_rect(times[j], row + 0.4 - (base[j] + h[j]) * 0.8,
                                   times[j + 1] - times[j], h[j] * 0.8, colors[k]))
            base += h
    ax.set_yticks(range(len(links)), [instance.fabric.link_name(int(x)) for x in links],
                  fontsize=8)
    ax.set_ylim(len(links) - 0.5, -0.5)
    end = float(schedule.end.max()) if len(schedule.end) else 1.0
    ax.set_xlim(0.0, end * 1.02)
    ax.set_xlabel("time")
    handles = [_rect(0, 0, 0, 0, colors[k]) for k in range(instance.num_coflows)]
    ax.legend(handles, [c.id for c in instance.coflows], fontsize=8, ncols=min(
        instance.num_coflows, 8), loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def _rect(x: float, y: float, w: float, h: float, color: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((float(x), float(y)), float(w), float(h), facecolor=color,
                     edgecolor="none")
