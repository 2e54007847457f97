"""Sensitivity sweeps of the M/M/1 threshold model (Aalo Figure 6.12, MCS Figure 18).

Each sweep evaluates the model objective of Eqs. (4)-(5) (the model's mean
CCT, dimensionless) over a family of published threshold rules and returns a
:class:`Table`. These are the model's side of the sensitivity studies; the
simulated side needs the simulator (see :mod:`coflowopt.mcs.validate`).

- :func:`aalo_sweep`: D-CLAS with ``K`` queues and thresholds ``Q1 * E^(j-1)``
  over a grid of ``K``, ``E`` and ``Q1`` (Figure 6.12a-c);
- :func:`linear_sweep`: ``K`` equal-sized queues up to 10 TB (Figure 6.12d);
- :func:`mcs_sweep`: MCS's double thresholds ``theta^n_j = theta^n_1 *
  10^(j-1)`` and ``theta^w_j = theta^w_1 * 2^(j-1)`` over ``theta^n_1`` and
  ``theta^w_1`` (Figure 18), optionally over a scale of the SNCF width
  thresholds ``Delta_i = s * 10^i`` (Figure 17a).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._text import plural
from ..errors import InstanceError, require
from ..instance import MB, Instance
from .classification import paper_classification
from .stats import Workload, as_workload
from .thresholds import (
    TB,
    aalo_thresholds,
    double_model,
    linear_thresholds,
    mcs_thresholds,
    single_model,
)

__all__ = ["Table", "aalo_sweep", "linear_sweep", "mcs_sweep", "plot_sweep"]


@dataclass(frozen=True, slots=True)
class Table:
    """Rows of a sweep; every row has one value per column."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    title: str = ""

    def __post_init__(self) -> None:
        for r in self.rows:
            if len(r) != len(self.columns):
                raise InstanceError(f"row {r!r} does not match the columns {self.columns!r}")

    def column(self, name: str) -> list[Any]:
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]

    def to_markdown(self, *, digits: int = 6) -> str:
        def cell(v: Any) -> str:
            return f"{v:.{digits}g}" if isinstance(v, float) else str(v)

        lines = [
            "| " + " | ".join(self.columns) + " |",
            "|" + "|".join("---" for _ in self.columns) + "|",
        ]
        lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in self.rows]
        return "\n".join(lines)


def _positive(values: Iterable[float], what: str) -> list[float]:
    out = [float(v) for v in values]
    if not out or any(not v > 0 for v in out):
        raise InstanceError(f"{what} must be a non-empty list of numbers > 0, got {out!r}")
    return out


def _queue_counts(values: Iterable[int]) -> list[int]:
    out = [int(v) for v in values]
    if not out or any(v < 1 for v in out):
        raise InstanceError(f"queue counts must be integers >= 1, got {out!r}")
    return out


def aalo_sweep(
    data: Instance | Workload,
    *,
    load: float,
    queues: Sequence[int] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10),
    factors: Sequence[float] = (10.0,),
    first: Sequence[float] = (10 * MB,),
) -> Table:
    """Model objective of D-CLAS for every ``(K, E, Q1)`` (Aalo Figure 6.12a-c).

    Columns: ``queues``, ``E``, ``Q1_mb``, ``objective``, ``relative`` (to
    one queue, i.e. FIFO in this model).
    """
    w = as_workload(data)
    ks = _queue_counts(queues)
    es = _positive(factors, "factors")
    q1s = _positive(first, "first thresholds")
    fifo = single_model(w, queues=1, load=load).objective(np.zeros(0))
    rows = []
    for k in ks:
        model = single_model(w, queues=k, load=load)
        for e in es:
            for q1 in q1s:
                obj = model.objective(aalo_thresholds(k, factor=e, first=q1))
                rows.append((k, e, q1 / MB, obj, obj / fifo))
    return Table(
        ("queues", "E", "Q1_mb", "objective", "relative"),
        tuple(rows),
        title=f"D-CLAS model objective at load {load:g}",
    )


def linear_sweep(
    data: Instance | Workload,
    *,
    load: float,
    queues: Sequence[int] = (1, 2, 5, 10, 20, 50, 64),
    maximum: float = 10 * TB,
) -> Table:
    """Model objective with ``K`` equal-sized queues up to ``maximum`` (Aalo Figure 6.12d).

    Deviation: the figure goes up to ``K = 10,000``; the threshold models stop at
    :data:`~coflowopt.mcs.thresholds.MAX_QUEUES` (64), so the default sweep does too (an
    earlier version asked for 100, 1,000 and 10,000 and failed, taking ``benchmarks/mcs_fb.py``
    with it).
    """
    w = as_workload(data)
    rows = []
    fifo = single_model(w, queues=1, load=load).objective(np.zeros(0))
    for k in _queue_counts(queues):
        obj = single_model(w, queues=k, load=load).objective(linear_thresholds(k, maximum=maximum))
        rows.append((k, maximum / MB, obj, obj / fifo))
    return Table(
        ("queues", "maximum_mb", "objective", "relative"),
        tuple(rows),
        title=f"equal-sized queues, model objective at load {load:g}",
    )


def mcs_sweep(
    data: Instance | Workload,
    *,
    load: float,
    queues: int = 10,
    narrow_first: Sequence[float] = (10 * MB,),
    wide_first: Sequence[float] = (1 * MB,),
    delta_scale: Sequence[float] = (1.0,),
    wide_width: int = 50,
) -> Table:
    """Model objective of MCS's double thresholds (MCS Figures 17a and 18).

    For every width-threshold scale ``s`` the initial queues come from
    ``Delta_i = s * 10^i``, ``p_i = i`` (the paper's simulation setting at
    ``s = 1``); ``theta^n`` and ``theta^w`` are exponential with factors 10
    and 2 from the given first values. Columns: ``delta_scale``,
    ``theta_n1_mb``, ``theta_w1_mb``, ``objective``, ``relative`` (to the
    paper's defaults).
    """
    w = as_workload(data)
    ns = _positive(narrow_first, "narrow first thresholds")
    ws = _positive(wide_first, "wide first thresholds")
    scales = _positive(delta_scale, "width-threshold scales")

    def model_for(scale: float) -> Any:
        cls = paper_classification(w, scale=scale)
        return double_model(w, queues=queues, load=load, wide_width=wide_width, initial=cls)

    reference = model_for(1.0).objective(mcs_thresholds(queues))
    rows = []
    for s in scales:
        model = model_for(s)
        for tn in ns:
            for tw in ws:
                obj = model.objective(mcs_thresholds(queues, narrow_first=tn, wide_first=tw))
                rows.append((s, tn / MB, tw / MB, obj, obj / reference))
    return Table(
        ("delta_scale", "theta_n1_mb", "theta_w1_mb", "objective", "relative"),
        tuple(rows),
        title=f"MCS double-threshold model objective, {plural(queues, 'queue')}, load {load:g}",
    )


def plot_sweep(
    table: Table,
    x: str,
    *,
    y: str = "objective",
    group: str | Sequence[str] | None = None,
    logx: bool = True,
    ax: Any = None,
) -> Any:
    """Plot ``y`` against ``x``, one line per value of ``group`` (a column, or several: a
    line per combination of their values); needs matplotlib (extra ``plot``).

    Returns the matplotlib Figure: a new one, built without pyplot (no global state, so a
    notebook shows it once, where it is returned), unless ``ax`` is given.
    """
    require("matplotlib", "plot", "plotting a sweep")
    from ..plots import _figure

    groups = (group,) if isinstance(group, str) else tuple(group or ())
    for name in (x, y, *groups):
        if name not in table.columns:
            raise InstanceError(f"the table has no column '{name}'; columns: {', '.join(table.columns)}")
    if ax is None:
        fig = _figure(5, 3.5)
        ax = fig.subplots()
    else:
        fig = ax.figure
    rows_of: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in table.as_dicts():
        rows_of.setdefault(tuple(r[g] for g in groups), []).append(r)
    for key in sorted(rows_of):
        rows = sorted(rows_of[key], key=lambda r: r[x])
        ax.plot(
            [r[x] for r in rows],
            [r[y] for r in rows],
            marker="o",
            label=", ".join(f"{g}={v:g}" for g, v in zip(groups, key, strict=True)) or None,
        )
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if table.title:
        ax.set_title(table.title, fontsize="small")
    if groups:
        ax.legend(fontsize="small")
    return fig
