"""An experiment's tables: the tidy results, and the report of means over seeds.

A sweep's folder holds two tidy tables, as Parquet and as CSV, both with the
configuration in columns (``cell``, ``kind``, ``instance``, ``fabric``, ``scheduler``,
``policy``, ``params``, ``background``, ``seed``, ``generator``, ``instance_<param>``,
``topology``, ``routing``, ``routing_seed``):

- ``runs``: one row per cell: ``status`` (``ok`` or ``failed``), ``error``, and the
  run's summary (``mean_cct``, ``p50_cct``, ``p95_cct``, ``p99_cct``, ``max_cct``,
  ``bin_mean_cct_SN`` ..., ``weighted_cct``, ``weighted_completion``, ``makespan``,
  ``utilization``, ``mean_fct``, ``events``, ``decisions``, ``runtime_s``, ``released``
  = sum of w_k r_k); a bound's row has ``bound`` (on sum w_k C_k), ``bound_cct`` (on
  sum w_k CCT_k) and ``bound_status``. A solve's row has what ``coflowopt.solve``
  returned: ``objective_name``, ``objective``, ``bound`` (on the objective), ``gap``,
  ``solve_status`` (optimal, feasible, time_limit, ...), ``reproducible``,
  ``incumbent_from`` and ``bound_from`` (the methods that found the schedule and the
  bound, where the solver says), ``nodes`` (the branch and bound's), ``bound_cct``
  (objective wcct) and the summary of its schedule's completion times (``mean_cct``
  ... ``weighted_cct``, as a simulation's). ``runtime_s`` and ``wall_s`` are times
  measured; every other column is the same whatever ran the sweep, except in the rows of
  a solve that is not ``reproducible`` (it stopped at its time limit: a faster machine
  finds more).
- ``coflows``: one row per coflow of each simulation: ``coflow`` (its id), ``release``,
  ``admitted``, ``start``, ``finish``, ``cct``, ``width``, ``length``, ``size``, ``bin``
  (:data:`coflowopt.sim.COLUMNS`); and of each solve's schedule (without ``admitted``
  and ``start``).

:func:`report` makes the table of means over seeds: per instance, fabric, background and
scheduler or solver, the mean CCT, p95 CCT, per-bin means and sum w_k CCT_k, each with a
confidence interval, the same normalized to a baseline (per seed, then averaged) and the
ratio of sum w_k CCT_k to the best bound run for that instance, fabric and seed (of the
bounds, and of the bounds the wcct solves proved). A solver's row (``kind`` ``solve``,
background ``none``) is its schedule's; it adds its mean ``objective`` and ``gap``,
``optimal`` (the seeds on which it proved its schedule optimal) and ``reproducible``
(the seeds on which it ended by itself, not at its time limit). Intervals are
Student-t intervals over the per-seed values (``mean +- t_{(1+level)/2, n-1} s /
sqrt(n)``, 95% by default); with one seed there is none.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, require
from ..instance import BINS
from ..io._common import atomic_writer
from .spec import Cell

__all__ = ["CONFIG_COLUMNS", "SETTING", "choose_baseline", "load", "report", "write_tables"]

TABLES = ("runs", "coflows")

CONFIG_COLUMNS = ("cell", "kind", "instance", "fabric", "scheduler", "policy", "params",
                  "background", "seed", "generator", "topology", "routing", "routing_seed")
"""Configuration columns of both tables (and ``instance_<param>`` for the generator's)."""

SETTING = ("instance", "fabric", "background")
"""What the report compares schedulers within (its rows are per setting and scheduler)."""

COMPARED = ("run", "solve")
"""The kinds of cell the report has rows for: simulations and solves, each a schedule."""


def write_tables(out: Path, cells: Sequence[Cell], results: Mapping[str, Mapping[str, Any]],
                 ) -> tuple[Path, ...]:
    """Write ``runs`` and ``coflows`` (Parquet and CSV) for ``cells`` from their results."""
    pd = require("pandas", "sweep", "an experiment's tables")
    runs = []
    coflows = []
    for cell in cells:
        res = results[cell.id]
        cols = cell.columns()
        runs.append({**cols, "status": res["status"], "error": res["error"], **res["summary"],
                     "wall_s": res.get("wall_s")})
        per = res.get("coflows") or {}
        if per:
            frame = pd.DataFrame(per)
            for k, v in reversed(cols.items()):
                frame.insert(0, k, [v] * len(frame))
            coflows.append(frame)
    tables = {"runs": _tidy(pd.DataFrame(runs)),
              "coflows": _tidy(pd.concat(coflows, ignore_index=True) if coflows
                               else pd.DataFrame(columns=list(CONFIG_COLUMNS)))}
    written = []
    for name, frame in tables.items():
        parquet, csv = out / f"{name}.parquet", out / f"{name}.csv"
        with atomic_writer(parquet, binary=True) as fh:
            frame.to_parquet(fh, index=False)
        with atomic_writer(csv) as fh:
            frame.to_csv(fh, index=False)
        written += [parquet, csv]
    return tuple(written)


def _tidy(frame: Any) -> Any:
    """Columns of mixed kinds (a number in some rows, text in others) as text, which
    Parquet can store."""
    for name in frame.columns:
        col = frame[name]
        if col.dtype != object:
            continue
        kinds = {type(v) for v in col if v is not None and not (isinstance(v, float) and math.isnan(v))}
        if len(kinds) > 1:
            frame[name] = [None if v is None else str(v) for v in col]
    return frame


def load(out: str | os.PathLike[str], rows: str = "runs") -> Any:
    """A sweep's table as a pandas DataFrame: ``rows`` is ``"runs"`` (one row per cell)
    or ``"coflows"`` (one per coflow of each simulation); Parquet when pyarrow is there,
    else the CSV."""
    pd = require("pandas", "pandas", "coflowopt.experiment.load()")
    if rows not in TABLES:
        raise InputError(f"rows must be one of {', '.join(TABLES)}, got {rows!r}")
    root = Path(out)
    parquet, csv = root / f"{rows}.parquet", root / f"{rows}.csv"
    try:
        import pyarrow
    except ImportError:
        pyarrow = None
    for path, read in ((parquet, pd.read_parquet), (csv, pd.read_csv)):
        if path.is_file() and (pyarrow is not None or path is csv):
            try:
                return read(path)
            except Exception as exc:  # pyarrow's and pandas' errors for a damaged table
                raise InputError(f"cannot read the {rows} table: {type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0][:200] if str(exc) else ''}",
                                 path=str(path)) from None
    raise InputError(f"holds no {rows} table ({rows}.parquet or {rows}.csv): not the output of "
                     "a sweep, or one that has not finished", path=str(root))


def t_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float, int]:
    """Mean, half-width of the Student-t interval at ``level`` (nan with fewer than 2), and
    how many finite values there were."""
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, 0
    if n < 2:
        return float(x.mean()), math.nan, 1
    from scipy.stats import t

    half = float(t.ppf((1 + level) / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return float(x.mean()), half, n


def choose_baseline(labels: Sequence[str], baseline: str | None) -> str:
    """The scheduler (or solver) ratios are to: ``baseline`` if one of ``labels``, by
    default varys if there, else the first."""
    if baseline is None:
        return "varys" if "varys" in labels else labels[0]
    if baseline not in labels:
        raise InputError(f"the baseline '{baseline}' is not a scheduler of the sweep "
                         f"(they are: {', '.join(labels)})")
    return baseline


def report(runs: Any, *, baseline: str | None = None, level: float = 0.95) -> Any:
    """The means over seeds, per setting (:data:`SETTING`) and scheduler or solver (see
    the module docstring), as a DataFrame; ``runs`` is the per-run table or a sweep's folder.

    ``baseline``: the scheduler or solver (its label) that ratios are to; default varys if
    run, else the first of the table. Failed cells count in ``failed`` and nowhere else; a
    ratio needs both cells of its seed.
    """
    pd = require("pandas", "pandas", "coflowopt.experiment.report()")
    where = ""
    if isinstance(runs, (str, os.PathLike)):
        where = f"{os.fspath(runs)}: "
        runs = load(runs, "runs")
    if not isinstance(runs, pd.DataFrame):
        raise InputError(f"report takes a sweep's folder or its runs table (load(out)), got "
                         f"{type(runs).__name__}")
    missing = [c for c in ("kind", "status", "scheduler", *SETTING, "seed") if c not in runs]
    if missing:
        raise InputError(f"{where}the runs table has no column '{missing[0]}': not a sweep's "
                         "runs table")
    if not 0 < level < 1:
        raise InputError(f"level must be in (0, 1), got {level!r}")
    sims = runs[runs["kind"].isin(COMPARED)]
    labels = list(dict.fromkeys(sims["scheduler"]))
    if not labels:
        raise InputError("the table has no simulations or solves to report")
    baseline = choose_baseline(labels, baseline)
    ok = sims[sims["status"] == "ok"]
    key = [*SETTING, "seed"]
    base = {tuple(r[k] for k in key): r for _, r in ok[ok["scheduler"] == baseline].iterrows()}
    # a bound cell's, or a wcct solve's proven bound: both bound every schedule's sum w CCT
    bounds = runs[runs["kind"].isin(("bound", "solve")) & (runs["status"] == "ok")]
    best = None
    if "bound_cct" in bounds and bounds["bound_cct"].notna().any():
        best = bounds.groupby(["instance", "fabric", "seed"])["bound_cct"].max()
    bins = [b for b in BINS if f"bin_mean_cct_{b}" in sims]
    rows = []
    for setting, group in sims.groupby(list(SETTING), sort=False):
        for label in labels:
            mine = group[group["scheduler"] == label]
            if not mine.empty:
                rows.append(_row(dict(zip(SETTING, setting, strict=True)), label, mine, base,
                                 best, bins, level))
    table = pd.DataFrame(rows)
    table.attrs.update(baseline=baseline, level=level)
    return table


def _row(setting: dict[str, Any], label: str, mine: Any, base: Mapping[tuple[Any, ...], Any],
         best: Any, bins: list[str], level: float) -> dict[str, Any]:
    """One row of :func:`report`: one scheduler in one setting, over its seeds."""
    good = mine[mine["status"] == "ok"]
    kind = str(mine["kind"].iloc[0])
    row: dict[str, Any] = {**setting, "scheduler": label, "kind": kind, "seeds": len(good),
                           "failed": len(mine) - len(good)}

    def stat(name: str, values: Sequence[float]) -> None:
        mean, half, _ = t_interval(values, level)
        row[name], row[f"{name}_ci"] = mean, half

    stat("mean_cct", list(good["mean_cct"]))
    stat("p95_cct", list(good["p95_cct"]))
    if "weighted_cct" in good:
        stat("weighted_cct", list(good["weighted_cct"]))
    for b in bins:
        row[f"mean_cct_{b}"] = _mean(good[f"bin_mean_cct_{b}"])
    pairs = [(r, base.get((*setting.values(), r["seed"]))) for _, r in good.iterrows()]

    def ratio(col: str) -> list[float]:
        return [math.nan if b is None else _ratio(r[col], b[col]) for r, b in pairs]

    stat("norm_mean", ratio("mean_cct"))
    stat("norm_p95", ratio("p95_cct"))
    if "weighted_cct" in good:
        stat("norm_weighted", ratio("weighted_cct"))
    for b in bins:
        row[f"norm_{b}"] = _mean(ratio(f"bin_mean_cct_{b}"))
    if best is not None:
        stat("vs_bound", [_ratio(r["weighted_cct"], best.get((r["instance"], r["fabric"], r["seed"]),
                                                             math.nan)) for r, _ in pairs])
    if kind == "solve":
        stat("objective", list(good["objective"]))
        row["gap"] = _mean(good["gap"])
        row["optimal"] = int((good["solve_status"] == "optimal").sum())
        # True, or "True" read back from the CSV twin
        row["reproducible"] = sum(str(v) == "True" for v in good["reproducible"])
    row["runtime_s"] = _mean(good["runtime_s"])
    return row


def _mean(values: Any) -> float:
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    return float(x.mean()) if x.size else math.nan


def _ratio(a: Any, b: Any) -> float:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return math.nan
    if not (math.isfinite(a) and math.isfinite(b)) or b <= 0:
        return math.nan
    return a / b
