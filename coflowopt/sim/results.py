"""What a simulation returns: per-coflow table, summary, and conversions.

:class:`SimulationResult` keeps the absolute times the engine measured and
derives everything else on demand: the per-coflow table (id, release,
admission, start, finish, CCT, width, length, size, bin; :meth:`~SimulationResult.table`
as a pandas DataFrame, :meth:`~SimulationResult.columns` as NumPy arrays), the summary of
:func:`coflowopt.metrics.summarize` plus what the simulator adds (mean flow
completion time, events, wall time, admissions of deadline policies, link
utilization when the schedule was recorded), and JSON, CSV, text and
pandas forms. :meth:`SimulationResult.to_result` gives the
:class:`coflowopt.Result` every solver returns.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from .._frozen import Frozen
from .._text import bin_rule, plural
from ..errors import require
from ..instance import NARROW_WIDTH, SHORT_LENGTH, Instance
from ..io._common import atomic_writer
from ..metrics import Summary, deadlines_met, link_utilization, summarize
from ..result import Result, Status
from ..schedule import LinkLoad, Schedule

__all__ = ["COLUMNS", "SimulationResult"]

FloatArray = npt.NDArray[np.float64]

COLUMNS = ("id", "release", "admitted", "start", "finish", "cct", "width", "length", "size", "bin")
"""Columns of the per-coflow table, in order. An instance with deadlines adds ``deadline``
(absolute; empty for a coflow without one) and ``deadline_met``
(:func:`coflowopt.metrics.deadlines_met`: False for a coflow without a deadline); policies
may add more (e.g. varys-deadline's ``admitted_deadline``)."""


COMMON_EXTRAS = ("mean_fct", "events", "decisions", "runtime_s", "mean_link_utilization")
"""What every simulation adds to :func:`coflowopt.metrics.summarize`'s summary (the last
only with a recorded schedule)."""


def _num(x: Any) -> Any:
    if isinstance(x, (np.floating, float)):
        v = float(x)
        return v if math.isfinite(v) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


@dataclass(frozen=True, slots=True, eq=False)
class SimulationResult(Frozen):
    """Outcome of one simulation run.

    Times are absolute: ``completion[k]`` is ``C_k`` and the coflow
    completion time is ``C_k - r_k`` (from the release in the instance, so
    waiting for a batch boundary counts). ``schedule`` is the recorded
    :class:`~coflowopt.Schedule` (``None`` when recording was off).
    ``admitted[k]`` is the time coflow ``k``'s first flows entered the
    network (a policy's own admission decision, such as varys-deadline's, is
    a column of its own). ``events`` counts the engine's events (the same on
    the compiled and reference paths); ``decisions`` counts calls to the
    policy, which depend on the path: a compiled stretch kernel makes the
    decisions within its stretch itself (strict aalo and mcs: 19 calls on the
    Facebook trace, against about one per event on the reference path).
    """

    instance: Instance
    scheduler: str
    params: Mapping[str, Any]
    batch_interval: float | None
    completion: FloatArray
    start: FloatArray
    admitted: FloatArray
    flow_completion: FloatArray
    schedule: Schedule | None
    events: int
    decisions: int
    runtime: float
    info: Mapping[str, Any] = field(default_factory=dict)
    coflow_columns: Mapping[str, np.ndarray] = field(default_factory=dict)
    """Extra per-coflow columns from the policy (e.g. deadline admission)."""
    background: LinkLoad | None = None
    """Under background traffic: the load it put on every link over time (pass it to
    :func:`coflowopt.check_feasible` as ``background``); ``None`` without."""
    _summary: list[Summary] = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        """One line (the dataclass's own printed four arrays, 21.7 KB on the trace)."""
        mean = float(np.mean(self.cct)) if self.completion.size else math.nan
        return (f"SimulationResult(scheduler={self.scheduler!r}, coflows={self.completion.size}, "
                f"mean_cct={mean!r}, events={self.events}, runtime={self.runtime:.3g}, "
                f"schedule={self.schedule!r})")

    # ------------------------------------------------------------------ derived

    @property
    def cct(self) -> FloatArray:
        """Coflow completion times ``C_k - r_k``."""
        return self.completion - self.instance.release

    @property
    def summary(self) -> Summary:
        if not self._summary:
            self._summary.append(summarize(self.instance, self.completion))
        return self._summary[0]

    @property
    def mean_fct(self) -> float:
        """Mean flow completion time, each flow measured from its release in the instance
        (its coflow's release plus its delay): like a CCT, it counts waiting for a batch
        boundary or a predecessor (``starts_after``, a ``finishes_before`` anchor)."""
        if self.instance.num_flows == 0:
            return float("nan")
        return float(np.mean(self.flow_completion - self.instance.flow_release))

    def extras(self) -> dict[str, Any]:
        """What the simulator adds to the summary."""
        out: dict[str, Any] = {
            "mean_fct": self.mean_fct,
            "events": self.events,
            "decisions": self.decisions,
            "runtime_s": self.runtime,
        }
        if self.schedule is not None and self.schedule.num_pieces:
            out["mean_link_utilization"] = link_utilization(self.instance, self.schedule).mean
        out.update({k: v for k, v in self.info.items() if np.isscalar(v)})
        return out

    def columns(self) -> dict[str, np.ndarray]:
        """The per-coflow table as a dict of columns, one array each (see :data:`COLUMNS`);
        :meth:`table` is the same as a pandas DataFrame."""
        inst = self.instance
        cols: dict[str, np.ndarray] = {
            "id": np.array(inst.ids, dtype=object),
            "release": inst.release,
            "admitted": self.admitted,
            "start": self.start,
            "finish": self.completion,
            "cct": self.cct,
            "width": inst.width,
            "length": inst.length,
            "size": inst.size,
            "bin": inst.bins(),
        }
        if np.isfinite(inst.deadline).any():
            cols["deadline"] = inst.deadline
            cols["deadline_met"] = deadlines_met(inst, self.completion)
        cols.update(self.coflow_columns)
        return cols

    def rows(self) -> list[dict[str, Any]]:
        """The per-coflow table as one dict per coflow (JSON-ready numbers)."""
        cols = self.columns()
        names = list(cols)
        return [
            {n: _num(cols[n][k]) for n in names} for k in range(self.instance.num_coflows)
        ]

    # ------------------------------------------------------------------ conversions

    def to_dict(self, *, coflows: bool = True) -> dict[str, Any]:
        """A JSON-ready dict: run facts, summary, and (optionally) the per-coflow rows."""
        s = self.summary.as_dict()
        s.update(self.extras())
        out: dict[str, Any] = {
            "instance": self.instance.name,
            "scheduler": self.scheduler,
            "params": dict(self.params),
            "batch_interval": self.batch_interval,
            "coflows": self.instance.num_coflows,
            "flows": self.instance.num_flows,
            "summary": {k: _clean(v) for k, v in s.items()},
        }
        if isinstance(self.info.get("background"), Mapping):
            out["background"] = {k: _clean(v) for k, v in self.info["background"].items()}
        if coflows:
            out["coflow_results"] = self.rows()
        return out

    def to_json(self, path: str | None = None, *, coflows: bool = True) -> str:
        text = json.dumps(self.to_dict(coflows=coflows), indent=2, allow_nan=False)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        return text

    def to_csv(self, out: str | os.PathLike[str] | IO[str] | None = None) -> str:
        """The per-coflow table as CSV (written to ``out`` when given: a path, written
        atomically, or an open text stream)."""
        cols = self.columns()
        names = list(cols)
        rows = ([_num(cols[n][k]) for n in names] for k in range(self.instance.num_coflows))
        return _write_csv(names, rows, out)

    def summary_row(self) -> dict[str, Any]:
        """The summary as one flat row: run facts (instance, scheduler, parameters as
        ``key=value, ...``, batch interval, flows), then :meth:`to_dict`'s summary with each
        per-bin entry as its own column (``bin_mean_cct_SN``, ...).

        The columns up to ``mean_link_utilization`` are the same for every run (empty
        where undefined: ``mean_link_utilization`` without a recorded schedule), so rows
        of different runs can share one header; what a policy adds
        (``deadline_admitted``, ...) follows them.
        """
        d = self.to_dict(coflows=False)
        row: dict[str, Any] = {k: d[k] for k in ("instance", "scheduler")}
        row["params"] = _params_text(d["params"])
        row.update({k: d[k] for k in ("batch_interval", "flows")})
        summary = dict(d["summary"])
        for k in [*self.summary.as_dict(), *COMMON_EXTRAS]:
            v = summary.pop(k, None)
            if isinstance(v, Mapping):
                row.update({f"{k}_{b}": x for b, x in v.items()})
            else:
                row[k] = v
        row.update(summary)  # the policy's own, after the common columns
        return row

    def summary_csv(self, out: str | os.PathLike[str] | IO[str] | None = None) -> str:
        """:meth:`summary_row` as CSV, a header and one line (empty cells where a value is
        undefined); written to ``out`` as :meth:`to_csv` does."""
        row = self.summary_row()
        return _write_csv(list(row), [list(row.values())], out)

    def table(self) -> Any:
        """The per-coflow table as a pandas DataFrame indexed by coflow id (needs the
        ``pandas`` extra; :meth:`columns` gives the same columns as NumPy arrays)."""
        pd = require("pandas", "pandas", "SimulationResult.table()")
        cols = self.columns()
        return pd.DataFrame({k: v for k, v in cols.items() if k != "id"}, index=pd.Index(
            list(cols["id"]), name="id"))

    def to_pandas(self) -> Any:
        """The same as :meth:`table` (pandas' usual name)."""
        return self.table()

    def to_result(self) -> Result:
        """The common :class:`coflowopt.Result` (objective: sum of w_k C_k)."""
        s = self.summary
        info = {"summary": s.as_dict(), **self.extras()}
        return Result(
            status=Status.FEASIBLE if np.all(np.isfinite(self.completion)) else Status.NO_SOLUTION,
            objective=s.weighted_completion,
            bound=float("nan"),
            runtime=self.runtime,
            method=f"simulate:{self.scheduler}",
            schedule=self.schedule,
            completion=self.completion,
            info=info,
        )

    # ------------------------------------------------------------------ text

    def format(self, *, coflows: bool = False, unit: str = "s", size_unit: str | None = "B") -> str:
        """A readable report: summary, per-bin means, optionally every coflow.

        ``unit`` names the time unit; ``size_unit`` the size unit, ``"B"`` for bytes
        or ``None`` when the instance states none (the bins' 5 MB threshold is then
        stated in size units)."""
        s = self.summary
        ex = self.extras()
        lines = [
            f"{self.instance.name or 'instance'}: {self.scheduler}"
            + (f" ({_params_text(self.params)})" if self.params else "")
            + (f", batch interval {self.batch_interval:g}" if self.batch_interval else ""),
            f"{plural(s.num_coflows, 'coflow')}, {plural(self.instance.num_flows, 'flow')}; "
            f"{plural(self.events, 'event')}, {plural(self.decisions, 'decision')}, "
            f"{self.runtime:.3g} s wall",
            f"CCT ({unit}): mean {s.mean_cct:.6g}, p50 {s.p50_cct:.6g}, p95 {s.p95_cct:.6g}, "
            f"p99 {s.p99_cct:.6g}, max {s.max_cct:.6g}",
            f"sum of w*C {s.weighted_completion:.6g}, sum of w*CCT {s.weighted_cct:.6g}, "
            f"makespan {s.makespan:.6g}, mean FCT {ex['mean_fct']:.6g}",
            f"utilization (Maluca Eq. 10) {s.utilization:.4g}"
            + (f", mean link utilization {ex['mean_link_utilization']:.4g}"
               if "mean_link_utilization" in ex else ""),
        ]
        if s.deadlines_met is not None:
            n_dl = int(np.isfinite(self.instance.deadline).sum())
            lines.append(f"deadlines met: {s.deadlines_met} of {n_dl}")
        for k, v in self.info.items():
            if np.isscalar(v) and k not in ("mean_fct",):
                lines.append(f"{k.replace('_', ' ')}: {v!s}")
        bg = self.info.get("background")
        if isinstance(bg, Mapping):
            lines.append(f"background: {bg['background']}; the scheduler knows {bg['knowledge']} "
                         f"capacities; {bg['background_flows_arrived']:,} background flows arrived, "
                         f"{bg['background_flows_completed']:,} completed, {bg['background_bytes']:.6g} "
                         "sent")
        from ..cli._util import format_table  # the text table formatter is shared

        rows = [[b, s.bin_count[b], s.bin_mean_cct[b]] for b in s.bin_count]
        lines.append("")
        lines.append(format_table(rows, ["bin", "coflows", "mean CCT"], title="per bin ("
                                  + bin_rule(SHORT_LENGTH, NARROW_WIDTH, size_unit) + ")"))
        if coflows:
            cols = self.columns()
            names = list(cols)
            body = [[cols[n][k] for n in names] for k in range(self.instance.num_coflows)]
            lines.append("")
            lines.append(format_table(body, names))
        return "\n".join(lines)


def _write_csv(names: list[str], rows: Iterable[list[Any]],
               out: str | os.PathLike[str] | IO[str] | None) -> str:
    """A header and rows as CSV (``None`` as an empty cell), written to ``out`` when given
    (a path, atomically, or an open text stream)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for row in rows:
        w.writerow(["" if v is None else v for v in row])
    text = buf.getvalue()
    if isinstance(out, (str, os.PathLike)):
        with atomic_writer(out) as fh:
            fh.write(text)
    elif out is not None:
        out.write(text)
    return text


def _clean(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _clean(x) for k, x in v.items()}
    return _num(v)


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())
