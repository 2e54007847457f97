"""Figures of results (matplotlib, the ``plot`` extra).

Each function takes results and returns a :class:`matplotlib.figure.Figure` built
without pyplot (no global state, no window), which the caller saves or shows; the
command line writes them with ``--plot OUT`` (PNG, SVG or PDF by the suffix).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .errors import InputError, require
from .schedule import check_schedule_of, schedule_of

if TYPE_CHECKING:
    from .fairness import FairnessTimeline
    from .instance import Instance
    from .schedule import Schedule

__all__ = [
    "BIN_NAMES",
    "TIMELINE_MAX_LINKS",
    "cct_cdf_figure",
    "compare_figure",
    "fairness_figure",
    "link_occupancy",
    "sweep_bins_figure",
    "sweep_cdf_figure",
    "sweep_ratio_figure",
    "thresholds_figure",
    "timeline_figure",
]

TIMELINE_MAX_LINKS = 40
"""The most links :func:`timeline_figure` draws unless told which (a row each)."""

BIN_NAMES = ("SN", "LN", "SW", "LW")
"""The Varys and Aalo papers' bins: short/long (longest flow below or above 5 MB) x
narrow/wide (at most or more than 50 flows)."""


def _plain(text: Any) -> str:
    """``text`` as it reads: a ``$`` in a name, an id or a label is not the start of
    matplotlib's mathtext (``"run $x$"`` would be typeset, and a bad macro fails the save)."""
    return str(text).replace("$", r"\$")


def _colours(n: int) -> list[Any]:
    """``n`` colours, all different: the default cycle's 10, ``tab20`` up to 20, else
    evenly spaced on ``turbo``."""
    if n <= 10:
        return [f"C{k}" for k in range(n)]
    from matplotlib import colormaps

    if n <= 20:
        return [colormaps["tab20"](k) for k in range(n)]
    return [colormaps["turbo"](k / (n - 1)) for k in range(n)]


def _figure(width: float, height: float) -> Any:
    """A new figure (a :class:`matplotlib.figure.Figure` that notebooks show as an image)."""
    require("matplotlib", "plot", "figures")
    from ._figure import NotebookFigure

    return NotebookFigure(figsize=(width, height), layout="constrained")


def compare_figure(rows: Sequence[Mapping[str, Any]], *, baseline: str, title: str = "",
                   bin_counts: Mapping[str, int] | None = None) -> Any:
    """The ``compare`` table as a figure: per-bin mean CCTs over the baseline's, and each
    scheduler's sum of weighted CCTs over the proven lower bound (when rows have it).

    ``rows``: as :func:`coflowopt.cli.simulate.compare_rows` makes them (keys
    ``scheduler``, ``norm_mean``, ``norm_SN`` ... ``norm_LW``, ``cct_vs_bound``).
    Ratios are on a log scale: schedulers differ by orders of magnitude in some bins.
    """
    if (isinstance(rows, (Mapping, str, bytes)) or not isinstance(rows, Iterable)
            or not all(isinstance(r, Mapping) for r in rows)):
        raise InputError("compare_figure takes a sequence of rows (mappings with keys "
                         "scheduler, norm_mean, norm_SN ... norm_LW), as compare makes them")
    if not rows:
        raise InputError("no rows to draw")
    _need_keys(rows, ["scheduler", "norm_mean"], "compare_figure")
    has_bound = any(math.isfinite(r.get("cct_vs_bound", math.nan)) for r in rows)
    fig = _figure(11.0 if has_bound else 8.0, 4.2)
    axes = fig.subplots(1, 2, width_ratios=[2.2, 1]) if has_bound else [fig.subplots()]
    names = [_plain(r["scheduler"]) for r in rows]
    groups = [("all", "norm_mean")] + [(b, f"norm_{b}") for b in BIN_NAMES]
    width = 0.8 / len(groups)
    ax = axes[0]
    for g, (label, key) in enumerate(groups):
        if bin_counts is not None and label in bin_counts:
            label = f"{label} ({bin_counts[label]})"
        xs = [i + (g - (len(groups) - 1) / 2) * width for i in range(len(rows))]
        ys = [float(r.get(key, math.nan)) for r in rows]
        ys = [y if math.isfinite(y) else math.nan for y in ys]
        ax.bar(xs, ys, width, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), names, rotation=35, ha="right")
    ax.set_ylabel(f"mean CCT / {_plain(baseline)}'s mean CCT")
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
        fig.suptitle(_plain(title), fontsize=11)
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
    _cdf_lines(ax, ccts, unit)
    if title:
        ax.set_title(_plain(title), fontsize=11)
    return fig


def _cdf_lines(ax: Any, ccts: Mapping[str, npt.ArrayLike], unit: str) -> None:
    """One step line per label on ``ax`` (see :func:`cct_cdf_figure`): from 0 at the first
    positive CCT (so that a single CCT shows as a rise) up to 1."""
    if not isinstance(ccts, Mapping) or not ccts:
        raise InputError("the CDF takes label -> CCTs (for example {name: result.cct}), "
                         f"got {type(ccts).__name__}" + ("" if ccts else " with none"))
    for label, values in ccts.items():
        if hasattr(values, "cct"):
            raise InputError(f"the CCTs of '{label}' are a {type(values).__name__}: give "
                             "its .cct")
        try:
            c = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
        except (TypeError, ValueError):
            raise InputError(f"the CCTs of '{label}' must be numbers, got "
                             f"{type(values).__name__}") from None
        if c.size == 0:
            raise InputError(f"no CCTs for '{label}'")
        if not np.isfinite(c).all():
            raise InputError(f"CCTs of '{label}' must be finite")
        if c[0] < 0:
            raise InputError(f"CCTs of '{label}' must be >= 0, got {c[0]:g}")
        frac = np.arange(1, c.size + 1) / c.size
        keep = c > 0
        if keep.any():
            below = float(frac[~keep][-1]) if not keep.all() else 0.0
            first = c[keep][0]
            ax.step(np.append(first, c[keep]), np.append(below, frac[keep]), where="post",
                    label=_plain(label))
        else:  # every CCT 0: nothing on the log axis, but the label stays in the legend
            ax.plot([], [], label=_plain(label))
    ax.set_xscale("log")
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel(f"coflow completion time ({unit}, log scale)")
    ax.set_ylabel("fraction of coflows")
    ax.grid(True, which="major", linewidth=0.4)
    ax.legend(fontsize=8)


def _need(frame: Any, columns: Sequence[str], what: str) -> None:
    """An :class:`InputError` naming the first of ``columns`` the table lacks (or saying
    that ``frame`` is no table)."""
    if not hasattr(frame, "columns") or not hasattr(frame, "groupby"):
        raise InputError(f"{what} takes a data frame (a sweep's table: load(out, ...)), got "
                         f"{type(frame).__name__}")
    for col in columns:
        if col not in frame.columns:
            raise InputError(f"{what} needs the column '{col}'; the table has: "
                             f"{', '.join(map(str, frame.columns))}")


def _need_keys(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], what: str) -> None:
    """An :class:`InputError` naming the first row without one of ``keys``."""
    for i, row in enumerate(rows):
        for key in keys:
            if key not in row:
                raise InputError(f"{what}: row {i} has no '{key}'; it has: "
                                 f"{', '.join(map(str, row))}")


def sweep_cdf_figure(coflows: Any, *, by: str = "scheduler", panel: str | None = None,
                     title: str = "", unit: str = "s") -> Any:
    """The CCT distribution of a sweep, one step line per value of ``by``.

    ``coflows``: a sweep's per-coflow table (``load(out, "coflows")``); the CCTs of
    each value of ``by`` are pooled over every other column, or over all but ``panel``
    when given (then one panel per value of ``panel``, for example ``"fabric"``).
    """
    _need(coflows, ["cct", by, *([panel] if panel else [])], "the CDF figure")
    if len(coflows) == 0:
        raise InputError("the table has no coflows to draw")
    groups = list(coflows.groupby(panel, sort=False)) if panel else [(None, coflows)]
    fig = _figure(1.0 + 5.4 * len(groups), 4.2)
    axes = fig.subplots(1, len(groups), sharey=True, squeeze=False)[0]
    for ax, (value, part) in zip(axes, groups, strict=True):
        _cdf_lines(ax, {str(k): g["cct"].to_numpy(np.float64)
                        for k, g in part.groupby(by, sort=False)}, unit)
        if panel:
            ax.set_title(_plain(f"{panel} {value}"), fontsize=10)
    if title:
        fig.suptitle(_plain(title), fontsize=11)
    return fig


def sweep_bins_figure(frame: Any, *, baseline: str | None = None, title: str = "") -> Any:
    """A sweep's mean CCT per bin (and over all coflows) over the baseline's, per scheduler.

    ``frame``: the per-coflow table (pooled: the mean CCT of each scheduler's coflows in
    a bin, over the baseline's; its bars are labelled with the baseline's coflow counts)
    or the per-run table (the mean over runs of ``mean_cct`` and ``bin_mean_cct_<bin>``,
    over the baseline's). Every other column is pooled. ``baseline``: as in
    :func:`coflowopt.experiment.report`. Drawn by :func:`compare_figure`.
    """
    from .experiment.report import choose_baseline

    what = "the bins figure"
    _need(frame, [], what)
    per_coflow = "bin" in frame.columns
    if per_coflow:
        _need(frame, ["scheduler", "cct"], what)
    else:
        _need(frame, ["scheduler", "mean_cct", "status"], what)
        if not any(f"bin_mean_cct_{b}" in frame.columns for b in BIN_NAMES):
            raise InputError(f"{what} needs the column 'bin' (per-coflow table) or "
                             f"'bin_mean_cct_SN' ... (per-run table); the table has: "
                             f"{', '.join(map(str, frame.columns))}")
        frame = frame[frame["status"] == "ok"]
        if "kind" in frame.columns:
            frame = frame[frame["kind"] == "run"]
    labels = [str(v) for v in dict.fromkeys(frame["scheduler"])]
    if not labels:
        raise InputError("the table has no simulations to draw")
    baseline = choose_baseline(labels, baseline)
    means: dict[str, dict[str, float]] = {}
    for label, g in frame.groupby("scheduler", sort=False):
        if per_coflow:
            by_bin = g.groupby("bin")["cct"].mean()
            means[str(label)] = {"mean": float(g["cct"].mean()),
                                 **{b: float(by_bin.get(b, math.nan)) for b in BIN_NAMES}}
        else:
            means[str(label)] = {"mean": float(g["mean_cct"].mean()), **{
                b: float(g[f"bin_mean_cct_{b}"].mean()) if f"bin_mean_cct_{b}" in g
                else math.nan for b in BIN_NAMES}}
    base = means[baseline]
    rows = [{"scheduler": label, **{f"norm_{k}": _over(v, base[k]) for k, v in m.items()}}
            for label, m in means.items()]
    counts = None
    if per_coflow:
        mine = frame[frame["scheduler"] == baseline]["bin"].value_counts()
        counts = {b: int(mine.get(b, 0)) for b in BIN_NAMES}
    return compare_figure(rows, baseline=baseline, title=title, bin_counts=counts)


def _over(a: float, b: float) -> float:
    return a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan


RATIO_VALUES = {"mean_cct": "mean CCT", "p95_cct": "p95 CCT",
                "norm_mean": "mean CCT / {baseline}'s", "vs_bound": "sum w*CCT / lower bound"}
"""What :func:`sweep_ratio_figure` can draw: columns of the report and their axis labels."""


def sweep_ratio_figure(runs: Any, *, x: str = "load", y: str | None = None,
                       baseline: str | None = None, level: float = 0.95,
                       title: str = "") -> Any:
    """A value of the report against a numeric configuration column, a line per scheduler.

    ``runs``: a sweep's per-run table. ``x``: a column, or a generator's parameter
    (``"load"`` reads ``instance_load``), constant within each instance, fabric and
    background. ``y``: one of :data:`RATIO_VALUES` (default ``vs_bound`` when the
    sweep ran a bound, else ``mean_cct``), as :func:`coflowopt.experiment.report`
    computes it, with its confidence interval over seeds as error bars. Lines are per
    scheduler, and per fabric and background when those vary.
    """
    from .experiment.report import SETTING, report

    what = "the ratio figure"
    _need(runs, [], what)
    # the instance's own column first: a run's summary has some of the same names, and
    # no value where the run failed
    col = f"instance_{x}" if f"instance_{x}" in runs.columns else x
    _need(runs, [col, "kind", "status", "scheduler", *SETTING], what)
    # a solve's setting has background none (a solver sees no background): its x comes from
    # its own rows, as a simulation's does; a failed cell may have none (nan)
    drawn = runs[runs["kind"].isin(("run", "solve"))]
    per = drawn.groupby(list(SETTING), sort=False)[col].unique()
    xs: dict[tuple[Any, ...], float] = {}
    for setting, given in per.items():
        values = [v for v in given if not (isinstance(v, float) and math.isnan(v))] or [math.nan]
        if len(values) != 1:
            raise InputError(f"{what}: the column '{col}' takes several values within one "
                             f"instance, fabric and background ({', '.join(map(str, values))})")
        try:
            xs[setting] = float(values[0])
        except (TypeError, ValueError):
            raise InputError(f"{what}: the column '{col}' must be numeric, got "
                             f"{values[0]!r}") from None
    table = report(runs, baseline=baseline, level=level)
    if y is None:
        y = "vs_bound" if "vs_bound" in table else "mean_cct"
    if y not in RATIO_VALUES:
        raise InputError(f"{what}: y must be one of {', '.join(RATIO_VALUES)}, got {y!r}")
    _need(table, [y], f"{what} of {y}")
    rest = [k for k in SETTING[1:] if table[k].nunique() > 1]
    lines = table.groupby(["scheduler", *rest], sort=False)
    many = lines.ngroups > 6  # then the legend goes beside the axes, not over the lines
    fig = _figure(9.6 if many else 6.8, 4.4 + 0.12 * max(0, lines.ngroups - 24))
    ax = fig.subplots()
    for i, (key, line) in enumerate(lines):
        key = key if isinstance(key, tuple) else (key,)
        at = [xs[tuple(r[k] for k in SETTING)] for _, r in line.iterrows()]
        if len(set(at)) < len(at):
            raise InputError(f"{what}: several instances have the same {col}; draw one "
                             "generator at a time (select its rows first)")
        order = np.argsort(at)
        # the colour cycle has 10 colours: past them, the marker and the dashes tell lines apart
        ax.errorbar(np.asarray(at)[order], line[y].to_numpy(np.float64)[order],
                    yerr=line[f"{y}_ci"].to_numpy(np.float64)[order], color=f"C{i % 10}",
                    marker="osD^vP*X<>"[i // 10 % 10], linestyle=("-", "--", ":", "-.")[i // 10 % 4],
                    capsize=3, label=_plain(", ".join(map(str, key))))
    ax.set_xlabel(_plain(col))
    ax.set_ylabel(_plain(RATIO_VALUES[y].format(baseline=table.attrs["baseline"])))
    ax.grid(True, linewidth=0.4)
    if many:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    else:
        ax.legend(fontsize=8)
    ax.set_title(_plain(title) or f"means over seeds, {100 * level:g}% intervals", fontsize=10)
    return fig


def link_occupancy(instance: Instance, schedule: Schedule, link: int
                   ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """What each coflow uses of one link over time, as shares of its capacity.

    Returns ``(times, share)``: the ``m + 1`` instants where any piece crossing the link
    starts or ends, and an ``(m, K)`` array, ``share[j, k]`` the rate coflow ``k``'s
    flows put on the link over ``[times[j], times[j+1])`` (each flow's rate times its
    share ``A_fl`` of the link, summed) over the link's capacity. A result (of
    :func:`~coflowopt.sim.simulate` or ``solve``) stands for its schedule.
    """
    schedule = schedule_of(schedule)
    check_schedule_of(instance, schedule)
    link = _link(instance, link)
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


def _link(instance: Instance, link: Any) -> int:
    """``link`` as a link index of the instance's fabric, or a clear error."""
    L = instance.fabric.num_links
    if isinstance(link, bool) or not isinstance(link, (int, np.integer)) or not 0 <= link < L:
        raise InputError(f"link {link!r:.40} does not exist (the fabric has links 0..{L - 1})")
    return int(link)


def _crossed(instance: Instance, schedule: Schedule) -> set[int]:
    """The links some piece of ``schedule`` crosses."""
    if not len(schedule.flow):
        return set()
    return {int(x) for x in instance.routes.tocsr()[schedule.flow].indices}


def timeline_figure(instance: Instance, schedule: Schedule | Mapping[str, Schedule], *,
                    links: Sequence[int] | None = None, title: str = "",
                    unit: str = "") -> Any:
    """A schedule as a timeline: one row per link, coloured by coflow.

    Within its row each link's height is its capacity; over each interval where rates
    are constant the coflows' shares (:func:`link_occupancy`) are stacked from the
    bottom in coflow order, so an idle or part-used link shows as white. ``schedule``:
    one schedule, or label -> schedule to draw several side by side (a panel each, with
    the same rows and time axis: an optimal and a heuristic schedule of a small
    instance). ``links``: the rows to draw (default every link some piece crosses, at
    most ``TIMELINE_MAX_LINKS``). A result (of :func:`~coflowopt.sim.simulate` or
    ``solve``) stands for its schedule. ``unit``: the time axis's unit, if any.
    """
    given = dict(schedule) if isinstance(schedule, Mapping) else {"": schedule}
    schedules = {label: schedule_of(s, f"schedule '{label}'" if label else "schedule")
                 for label, s in given.items()}
    if not schedules:
        raise InputError("no schedule to draw")
    for sched in schedules.values():
        check_schedule_of(instance, sched)
    if links is None:
        links = sorted(set().union(*(_crossed(instance, s) for s in schedules.values())))
        if len(links) > TIMELINE_MAX_LINKS:
            raise InputError(f"the schedules cross {len(links)} links; pass at most "
                             f"{TIMELINE_MAX_LINKS} as links=")
    if isinstance(links, (str, bytes)) or not isinstance(links, (Sequence, np.ndarray)):
        raise InputError(f"links must be a sequence of link indices, got {type(links).__name__}")
    if len(links) == 0:
        raise InputError("links is empty: no row to draw")
    links = [_link(instance, link) for link in links]
    n = len(schedules)
    fig = _figure(8.0 if n == 1 else 1.5 + 4.6 * n, 0.9 + 0.45 * max(len(links), 1))
    axes = fig.subplots(1, n, sharex=True, sharey=True, squeeze=False)[0]
    colors = _colours(instance.num_coflows)
    end = max((float(s.end.max()) for s in schedules.values() if len(s.end)), default=1.0)
    for ax, (label, sched) in zip(axes, schedules.items(), strict=True):
        _timeline_rows(ax, instance, sched, links, colors)
        ax.set_xlim(0.0, end * 1.02)
        ax.set_xlabel(f"time ({_plain(unit)})" if unit else "time")
        if label:
            ax.set_title(_plain(label), fontsize=10)
    axes[0].set_yticks(range(len(links)),
                       [_plain(instance.fabric.link_name(int(x))) for x in links], fontsize=8)
    axes[0].set_ylim(len(links) - 0.5, -0.5)
    handles = [_rect(0, 0, 0, 0, colors[k]) for k in range(instance.num_coflows)]
    legend = dict(fontsize=8, ncols=min(instance.num_coflows, 8), frameon=False)
    if n == 1:
        axes[0].legend(handles, [_plain(c.id) for c in instance.coflows], loc="lower center",
                       bbox_to_anchor=(0.5, 1.0), **legend)
    else:
        fig.legend(handles, [_plain(c.id) for c in instance.coflows], loc="outside lower center",
                   **legend)
    if title:
        fig.suptitle(_plain(title), fontsize=11)
    return fig


def _timeline_rows(ax: Any, instance: Instance, schedule: Schedule, links: Sequence[int],
                   colors: Sequence[Any]) -> None:
    """The rows of :func:`timeline_figure` for one schedule, on ``ax``."""
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


def _rect(x: float, y: float, w: float, h: float, color: Any) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((float(x), float(y)), float(w), float(h), facecolor=color,
                     edgecolor="none")


def fairness_figure(timelines: Mapping[str, FairnessTimeline], *, title: str = "") -> Any:
    """Isolation guarantee and utilization over time, a step line per schedule.

    ``timelines``: label -> :func:`coflowopt.fairness.fairness_timeline` (say HUG's and DRF's runs of one
    instance). DRF holds every active coflow at the same progress; HUG guarantees the
    same and uses spare capacity on top (dissertation §7.7.3: equal progress, higher
    utilization).
    """
    if not isinstance(timelines, Mapping):
        raise InputError("fairness_figure takes label -> fairness_timeline(...), got "
                         f"{type(timelines).__name__}")
    if not timelines:
        raise InputError("no timeline to draw")
    fig = _figure(7.2, 5.2)
    top, bottom = fig.subplots(2, 1, sharex=True)
    for label, tl in timelines.items():
        if not hasattr(tl, "isolation"):
            raise InputError(f"the timeline '{label}' is a {type(tl).__name__}, not a "
                             "coflowopt.fairness.fairness_timeline(...)")
        if tl.times.size < 2:
            raise InputError(f"the schedule '{label}' has no piece to draw")
        # a step per interval: the value holds from times[j] to times[j + 1]
        for ax, values in ((top, tl.isolation), (bottom, tl.utilization)):
            ax.step(tl.times, np.append(values, values[-1]), where="post", label=_plain(label))
    top.set_ylabel("isolation guarantee\n(least progress of an active coflow)")
    bottom.set_ylabel("utilization\n(rate / total capacity)")
    bottom.set_xlabel("time")
    bottom.set_ylim(0.0, None)
    top.set_ylim(0.0, None)
    for ax in (top, bottom):
        ax.grid(True, linewidth=0.4)
    top.legend(fontsize=8)
    if title:
        fig.suptitle(_plain(title), fontsize=11)
    return fig


def thresholds_figure(sweep: Any, *, solution: Any = None, default: float | None = None,
                      title: str = "") -> Any:
    """Queue thresholds: the model against the simulation over a sweep, and the model's
    optimal thresholds beside the defaults.

    ``sweep``: a :func:`coflowopt.mcs.validate.threshold_sweep` table; both of its
    relative columns (the M/M/1 model's mean CCT and the simulated mean CCT, each over
    its first row's) are drawn against the swept value, each line's minimum marked: the
    value the model would choose and the one the simulation prefers. ``default``: a
    value to mark (Aalo's ``Q1 = 10`` MB, say). ``solution``: a
    :class:`~coflowopt.mcs.ThresholdSolution`, drawn in a second panel as each family's
    thresholds per queue (MB, log scale), the optimum solid and the defaults dashed.
    """
    if not hasattr(sweep, "columns"):
        raise InputError("the thresholds figure takes a threshold_sweep table, got "
                         f"{type(sweep).__name__}")
    x = next((c for c in ("value_mb", "value") if c in sweep.columns), None)
    if x is None or not {"predicted_relative", "simulated_relative"} <= set(sweep.columns):
        raise InputError("the thresholds figure needs a threshold_sweep table (columns "
                         "value or value_mb, predicted_relative, simulated_relative); it has: "
                         f"{', '.join(sweep.columns)}")
    if not sweep.rows:
        raise InputError("the sweep has no rows to draw")
    fig = _figure(11.0 if solution is not None else 6.4, 4.2)
    axes = fig.subplots(1, 2 if solution is not None else 1, squeeze=False)[0]
    ax = axes[0]
    xs = np.asarray(sweep.column(x), dtype=np.float64)
    order = np.argsort(xs)
    for col, label in (("predicted_relative", "model (M/M/1, Eqs. 4-5)"),
                       ("simulated_relative", "simulation")):
        ys = np.asarray(sweep.column(col), dtype=np.float64)[order]
        (line,) = ax.plot(xs[order], ys, marker="o", label=label)
        best = int(np.nanargmin(ys))
        ax.plot([xs[order][best]], [ys[best]], marker="*", markersize=14, linestyle="none",
                color=line.get_color(), label=f"{label}: best at {xs[order][best]:g}")
    if default is not None:
        ax.axvline(float(default), color="black", linewidth=0.8, linestyle=":",
                   label=f"default {default:g}")
    ax.set_xscale("log")
    ax.set_xlabel(f"{x} (log scale)" if x == "value" else "first threshold (MB, log scale)")
    ax.set_ylabel("mean CCT / the first value's")
    ax.grid(True, which="major", linewidth=0.4)
    ax.legend(fontsize=8)
    ax.set_title(_plain(sweep.title), fontsize=10)
    if solution is not None:
        from .instance import MB

        ax2 = axes[1]
        for f, family in enumerate(solution.families):
            queues = np.arange(1, solution.thresholds.shape[1] + 1)
            (line,) = ax2.step(queues, solution.thresholds[f] / MB, where="mid", marker="o",
                               label=f"{family}: optimum")
            ax2.step(queues, solution.default_thresholds[f] / MB, where="mid", linestyle="--",
                     color=line.get_color(), label=f"{family}: default")
        ax2.set_yscale("log")
        ax2.set_xlabel("queue j (demoted past theta_j)")
        ax2.set_ylabel("threshold theta_j (MB, log scale)")
        ax2.grid(True, which="major", linewidth=0.4)
        ax2.legend(fontsize=8)
        ax2.set_title(f"model objective {solution.objective:.4g} vs "
                      f"{solution.default_objective:.4g} with the defaults", fontsize=10)
    if title:
        fig.suptitle(_plain(title), fontsize=11)
    return fig
