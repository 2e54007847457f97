"""``coflowopt sweep`` and ``coflowopt report``: run an experiment's grid, and report it."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from ..errors import InputError
from ..experiment import SweepError, SweepProgress, load, load_experiment, report, sweep
from ..experiment.report import SETTING, TABLES
from ..experiment.run import CELLS
from ..instance import BINS
from ..io._common import atomic_writer
from ..sim.batch import cpu_count
from ._util import (
    check_outputs,
    check_plot,
    emit_json,
    format_table,
    nonnegative_int,
    plural,
    save_plot,
)

__all__ = ["register", "run_report", "run_sweep"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run an experiment: a grid of simulations, bounds and solvers declared in a TOML "
        "file (cached per cell, resumable, on local processes or Dask)",
        description="Run every cell of EXPERIMENT.toml (instances x fabrics x schedulers x seeds "
        "x backgrounds, and bounds and solvers) not already in the output folder, then write the "
        "tidy "
        "tables runs.parquet and coflows.parquet (and CSV). See docs/guide.md, 'Experiments "
        "and sweeps', and examples/sweep_small.toml.",
    )
    p.add_argument("experiment", metavar="EXPERIMENT.toml", help="the experiment (TOML)")
    engine = p.add_mutually_exclusive_group()
    engine.add_argument("--jobs", "-j", type=nonnegative_int, default=None, metavar="N",
                        help="cells at once, each in its own process (default and 0: one per CPU "
                        "this process may use; 1: one after another in this process)")
    engine.add_argument("--dask", metavar="ADDR",
                        help="run on Dask: a scheduler's address (tcp://host:8786) or local:N (a "
                        "local cluster of N worker processes); needs the sweep extra")
    p.add_argument("--out", "-o", metavar="DIR",
                   help="output folder (default: the experiment file's name without .toml, in the "
                   "current folder)")
    p.add_argument("--resume", action="store_true",
                   help="reuse the cells already in DIR (a cell whose configuration or coflowopt's "
                   "version changed is computed again); without it, a DIR with results is refused")
    p.add_argument("--fail-fast", action="store_true",
                   help="stop at the first failing cell (default: record its error and go on)")
    p.add_argument("--json", action="store_true", help="print what was done as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    p.set_defaults(func=run_sweep)

    r = sub.add_parser(
        "report",
        help="a sweep's table: means over seeds with confidence intervals, normalized to a "
        "baseline, ratio to the bound",
        description="Per instance, fabric and background, each scheduler's (and each solver's "
        "schedule's) mean and p95 CCT and per-bin means, the same over the baseline's (per seed, "
        "then averaged) and sum w*CCT over the best lower bound run on the same instance, fabric "
        "and seed; each with a Student-t confidence interval over the per-seed values. A solver "
        "adds sum w*CCT over the baseline's and how many seeds it proved optimal.",
    )
    r.add_argument("dir", metavar="DIR", help="a sweep's output folder")
    r.add_argument("--baseline", metavar="NAME",
                   help="the scheduler or solver (as labelled in the sweep) ratios are to "
                   "(default: varys if run, else the first)")
    r.add_argument("--level", type=_level, default=0.95, metavar="P",
                   help="confidence level of the intervals (default 0.95)")
    r.add_argument("--plot", metavar="OUT",
                   help="also draw a figure of the sweep (.png, .svg or .pdf; needs the plot "
                   "extra); which one: --figure")
    r.add_argument("--figure", choices=FIGURES, default=None,
                   help="the --plot figure: bins (mean CCT per bin over the baseline's, pooled; "
                   "the default), cdf (CCT distribution per scheduler, a panel per fabric when "
                   "several) or ratio (sum w*CCT over the bound, else mean CCT, against --x)")
    r.add_argument("--x", default=None, metavar="COLUMN",
                   help="the ratio figure's x axis: a numeric column of the runs table or a "
                   "generator's parameter (default load)")
    out = r.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the table as JSON")
    out.add_argument("--csv", metavar="OUT", help="write the whole table as CSV ('-' for stdout)")
    r.set_defaults(func=run_report)


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a level in (0, 1), got '{text}'")
    return value


class _Line:
    """The sweep's progress on one line of stderr, shown only on a terminal; the first
    report is always said, so that the start of the workers is not a silent wait."""

    def __init__(self, engine: str, out: Path, show: bool, stream: TextIO | None = None) -> None:
        self.engine, self.out = engine, out
        self.stream = sys.stderr if stream is None else stream
        self.live = show and self.stream.isatty()
        self.started = False
        self.last = 0.0
        self.width = 0

    def __call__(self, p: SweepProgress) -> None:
        if not self.started:
            self.started = True
            found = f", {p.cached} found in {self.out}" if p.cached else ""
            what = f"computing {p.todo} on {self.engine}" if p.todo else "nothing to compute"
            print(f"coflowopt: {plural(p.total, 'cell')}{found}; {what}", file=self.stream,
                  flush=True)
            for path, why in p.damaged[:10]:
                print(f"coflowopt: {path}: damaged, {why}; computed again", file=self.stream)
            if len(p.damaged) > 10:
                print(f"coflowopt: ... and {len(p.damaged) - 10} more damaged cells, computed "
                      "again", file=self.stream)
            return
        now = time.perf_counter()
        if not self.live or (now - self.last < 0.2 and p.done < p.todo):
            return
        self.last = now
        eta = "-" if p.eta is None else _clock(p.eta)
        text = (f"{p.done}/{p.todo} cells done, {p.running} running, {p.failed} failed, "
                f"{_clock(p.elapsed)} elapsed, ETA {eta}")
        self.width = max(self.width, len(text))
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()

    def close(self) -> None:
        if self.live and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def run_sweep(args: argparse.Namespace) -> int:
    exp = load_experiment(args.experiment)
    out = Path(args.out) if args.out else Path(Path(args.experiment).stem)
    jobs = args.jobs or cpu_count()
    engine = (f"Dask ({args.dask})" if args.dask else
              "this process" if jobs == 1 else f"{plural(jobs, 'process', 'processes')}")
    line = _Line(engine, out, not args.no_progress)
    try:
        res = sweep(exp, out, jobs=jobs, dask=args.dask, resume=args.resume,
                    fail_fast=args.fail_fast, progress=line)
    except InputError as exc:
        if exc.path != str(out):
            raise
        raise InputError(f"--out {exc}") from None  # (the folder, refused before any work)
    except SweepError as exc:
        line.close()
        print(f"coflowopt: error: {exc} (the cells done are kept: --resume goes on)",
              file=sys.stderr)
        return 1
    finally:
        line.close()
    if args.json:
        emit_json({"out": str(res.out), "cells": res.total, "computed": res.computed,
                   "cached": res.cached,
                   "damaged": [{"file": f, "error": e} for f, e in res.damaged],
                   "failed": [{"cell": c, "error": e} for c, e in res.failures],
                   "tables": [str(t) for t in res.tables]})
    else:
        print(f"{plural(res.total, 'cell')}: {res.computed} computed, {res.cached} found in "
              f"{res.out}, {len(res.failures)} failed")
        print("tables: " + ", ".join(str(t) for t in res.tables))
        print(f"report: coflowopt report {res.out}")
    for cell, error in res.failures[:10]:
        print(f"coflowopt: cell {cell} failed: {error}", file=sys.stderr)
    if len(res.failures) > 10:
        print(f"coflowopt: ... and {len(res.failures) - 10} more (the error column of "
              f"{res.out / 'runs.csv'})", file=sys.stderr)
    return 1 if res.failures else 0


METHOD = ("means over seeds; +- the half-width of the {pct:g}% Student-t interval over the per-seed "
          "values (none with one seed); ratios are per seed, then averaged")


FIGURES = ("bins", "cdf", "ratio")


def _sweep_figure(args: argparse.Namespace) -> Any:
    """The ``--figure`` of the sweep in ``args.dir``."""
    from ..plots import sweep_bins_figure, sweep_cdf_figure, sweep_ratio_figure

    if args.figure == "cdf":
        coflows = load(args.dir, "coflows")
        several = "fabric" in coflows and coflows["fabric"].nunique() > 1
        # as compare --cdf labels them: a native JSON file's times are its own time units,
        # the traces' and the generators' seconds
        files = coflows["instance_file"] if "instance_file" in coflows else None
        native = files is not None and files.dropna().astype(str).str.lower().str.endswith(
            ".json").any()
        return sweep_cdf_figure(coflows, panel="fabric" if several else None,
                                unit="time units" if native else "s")
    runs = load(args.dir, "runs")
    if args.figure == "ratio":
        return sweep_ratio_figure(runs, x=args.x, baseline=args.baseline, level=args.level)
    return sweep_bins_figure(load(args.dir, "coflows"), baseline=args.baseline)


def run_report(args: argparse.Namespace) -> int:
    # options that choose the figure, given without one: a mistake to point out, not to ignore
    if args.plot is None and (args.figure is not None or args.x is not None):
        raise InputError(f"{'--figure' if args.figure is not None else '--x'} chooses the "
                         "--plot figure; give --plot OUT")
    if args.x is not None and args.figure != "ratio":
        raise InputError("--x is the ratio figure's x axis; give --figure ratio")
    args.figure = args.figure or "bins"
    args.x = args.x or "load"
    outputs = [("--csv", args.csv if args.csv != "-" else None), ("--plot", args.plot)]
    check_outputs(args, outputs)
    own = {os.path.realpath(Path(args.dir) / f"{name}.{ext}"): f"table {name}.{ext}"
           for name in TABLES for ext in ("csv", "parquet")}
    own[os.path.realpath(Path(args.dir) / "experiment.json")] = "record experiment.json"
    cells = os.path.realpath(Path(args.dir) / CELLS)
    for option, path in outputs:
        if not path:
            continue
        real = os.path.realpath(path)
        if real in own:
            raise InputError(f"{option} {path} would overwrite the sweep's own {own[real]}")
        if os.path.commonpath([real, cells]) == cells:
            raise InputError(f"{option} {path} would write into the sweep's results ({CELLS}/)")
    check_plot(args.plot, "--plot", "report --plot")
    table = report(args.dir, baseline=args.baseline, level=args.level)
    if args.plot:
        save_plot(_sweep_figure(args), args.plot)
    baseline = table.attrs["baseline"]
    method = METHOD.format(pct=100 * args.level)
    if args.json:
        emit_json({"dir": str(args.dir), "baseline": baseline, "level": args.level,
                   "method": method, "rows": table.to_dict(orient="records")})
        return 0
    if args.csv:
        if args.csv == "-":
            table.to_csv(sys.stdout, index=False)
            return 0
        with atomic_writer(args.csv) as fh:
            table.to_csv(fh, index=False)
    bins = [b for b in BINS if f"norm_{b}" in table]
    bound = "vs_bound" in table
    solves = "optimal" in table  # a solver's rows: its sum w*CCT over the base's, its proofs
    headers = ["scheduler", "runs", "mean CCT", "p95 CCT", "mean/base", "p95/base",
               *[f"{b}/base" for b in bins], *(["sum wCCT/base"] if solves else []),
               *(["sum wCCT/bound"] if bound else []), *(["optimal"] if solves else []),
               "failed"]
    for setting, group in table.groupby(list(SETTING), sort=False):
        body = []
        for _, row in group.iterrows():
            body.append([row["scheduler"], row["seeds"], _pm(row, "mean_cct"), _pm(row, "p95_cct"),
                         _pm(row, "norm_mean", "x"), _pm(row, "norm_p95", "x"),
                         *[_x(row[f"norm_{b}"]) for b in bins],
                         *([_pm(row, "norm_weighted", "x")] if solves else []),
                         *([_pm(row, "vs_bound", "x")] if bound else []),
                         *([_proofs(row)] if solves else []), row["failed"]])
        title = ", ".join(f"{k} {v}" for k, v in zip(SETTING, setting, strict=True))
        print(format_table(body, headers, title=title))
        print()
    print(f"baseline: {baseline} (ratios above 1: slower than it); {method}")
    if bound:
        print("sum wCCT/bound: sum w*CCT over the best lower bound run on the same instance, fabric "
              "and seed (sum w*C bound less sum w*r; of the bounds and the solvers' proofs)")
    if solves:
        print("a solver's row is its schedule's (background none); optimal: the seeds on which it "
              "proved its schedule optimal")
        cut = table[(table["kind"] == "solve") & (table["reproducible"] < table["seeds"])]
        if len(cut):
            print("stopped at the time limit (values depend on the machine): "
                  + ", ".join(f"{r['scheduler']} on {int(r['seeds'] - r['reproducible'])} of "
                              f"{plural(int(r['seeds']), 'seed')}" for _, r in cut.iterrows()))
    if args.csv:
        print(f"table written to {args.csv}")
    if args.plot:
        print(f"figure written to {args.plot}")
    return 0


def _pm(row: Any, name: str, unit: str = "") -> str:
    mean, half = float(row[name]), float(row[f"{name}_ci"])
    if not math.isfinite(mean):
        return "-"
    text = f"{mean:.4g}{unit}"
    return text if not math.isfinite(half) else f"{text} +- {half:.2g}"


def _proofs(row: Any) -> str:
    """``optimal/seeds`` for a solver's row, nothing for a simulation's."""
    if row["kind"] != "solve":
        return ""
    return f"{int(row['optimal'])}/{int(row['seeds'])}"


def _x(v: Any) -> str:
    v = float(v)
    return "-" if not math.isfinite(v) else f"{v:.3g}x"
