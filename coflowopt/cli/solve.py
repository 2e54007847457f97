"""``coflowopt solve`` and ``coflowopt bound``: optimal schedules and proven lower bounds."""

from __future__ import annotations

import argparse
import inspect
import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..bounds import BOUNDS, check_options
from ..errors import InputError
from ..instance import Instance
from ..io.schedule_file import write_schedule
from ..result import Result
from ..schedule import Schedule
from ..solvers import OBJECTIVES, SOLVERS, bound, solve
from ._util import (
    Progress,
    add_input_arguments,
    add_json_argument,
    add_topology_arguments,
    check_outputs,
    emit_json,
    floor_text,
    format_table,
    load_instance,
    naming,
    parse_params,
    placement_record,
    plural,
    positive_float,
    size_text,
)

_METHODS = sorted({m for ms in SOLVERS.values() for m in ms})
_SHOW = 30  # coflows listed in the readable output before it summarises


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "solve", help="optimal or certified schedules: exact optimum, grid MILP, best permutation",
        description=(
            "Solve FILE for an objective: wcct (sum of weighted completion times w_k C_k, "
            "absolute C_k), makespan, or deadlines (most coflows meeting their deadlines). "
            "Prints the status, the objective, a proven bound and the gap. Solver options go "
            "in --param key=value (e.g. --param step=0.5 for time-indexed; a list of names, "
            "comma-separated: --param starts=pairwise,sincronia for local-search)."
        ),
    )
    add_input_arguments(p)
    add_topology_arguments(p)
    p.add_argument("--method", choices=_METHODS, default="exact",
                   help="solver (default exact); makespan and deadlines take only exact")
    p.add_argument("--objective", choices=list(OBJECTIVES), default="wcct",
                   help="what to optimise (default wcct)")
    p.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S",
                   help="seconds before returning the best schedule and bound (default 60; a "
                        "kernel compiling for the first time finishes first: see coflowopt "
                        "compile)")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="solver option (repeatable), e.g. step=0.5 (time-indexed), weighted=true "
                   "(--objective deadlines)")
    p.add_argument("--schedule", metavar="OUT",
                   help="write the schedule: OUT.json (coflowopt-schedule/1) or OUT.npz (binary)")
    add_json_argument(p)
    p.set_defaults(func=run_solve)

    b = sub.add_parser(
        "bound", help="proven lower bounds on the optimal sum of weighted completion times",
        description=(
            "Lower bounds on min sum w_k C_k for FILE: isolation, per-port single machine, "
            "Sincronia's BSSI dual, the pairwise-order LP, the interval-indexed LP, or the best "
            "of them that finishes within the time limit; on a network, free bounds the optimum "
            "under every routing (a multicommodity flow per time point)."
        ),
    )
    add_input_arguments(b)
    add_topology_arguments(b)
    b.add_argument("--method", choices=[*BOUNDS, "best"], default="best",
                   help="which bound (default best)")
    b.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S",
                   help="seconds (default 60)")
    b.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="bound option (repeatable), e.g. ratio=1.1 for interval")
    add_json_argument(b)
    b.set_defaults(func=run_bound)


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


_OWN_OPTIONS = {"time_limit": "--time-limit", "progress": "the progress bar (not an option)",
                "initial_orders": "the Python API (not the command line)",
                "method": "--method", "objective": "--objective"}
"""Keywords of solve()/bound() that --param must not set, and where they belong."""


def _options(args: argparse.Namespace, fn: Callable[..., Any] | None, what: str) -> dict[str, Any]:
    """``--param`` values as ``fn`` (the solver or bound named ``what``) takes them: an
    option it annotates as names (``Sequence[str]``, the local search's ``starts``) is split
    at commas. Checked here, so that the options an error lists are the command line's."""
    params = inspect.signature(fn).parameters if fn is not None else {}
    opts: dict[str, Any] = {}
    for key, text in parse_params(args.param).items():
        if key in _OWN_OPTIONS:
            raise InputError(f"--param {key}=... is not a solver option here; use {_OWN_OPTIONS[key]}")
        ann = params[key].annotation if key in params else None
        if isinstance(ann, str) and ann.startswith("Sequence[str]"):
            opts[key] = tuple(name.strip() for name in text.split(","))
        else:
            opts[key] = _value(text)
    if fn is not None:
        check_options(fn, opts, what, hidden=_OWN_OPTIONS)
    return opts


def _jsonable_info(info: Any) -> dict[str, Any]:
    out = {}
    for key, value in dict(info).items():
        if isinstance(value, Schedule) or callable(value):
            continue
        if isinstance(value, np.ndarray) and value.size > 10_000:
            continue
        out[key] = value
    return out


def _payload(inst: Instance, res: Result) -> dict[str, Any]:
    comp = res.completion_by_id(inst.ids)
    doc: dict[str, Any] = {
        "status": res.status.value,
        "objective": res.objective,
        "bound": res.bound,
        "gap": res.gap,
        "runtime_s": res.runtime,
        "completion": comp,
        "method": res.method,
        "objective_name": res.objective_name,
        "sense": res.sense,
    }
    if res.completion is not None and res.objective_name == "wcct":
        doc["weighted_completion"] = float(np.dot(inst.weight, res.completion))
        doc["weighted_cct"] = float(np.dot(inst.weight, res.completion - inst.release))
    doc["info"] = _jsonable_info(res.info)
    return doc


def _header(out: Any, inst: Instance, path: str) -> None:
    out.write(f"{inst.name or path}: {size_text(inst)}\n")


def _fmt(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.10g}"


def run_solve(args: argparse.Namespace) -> int:
    inst = load_instance(args)
    check_outputs(args, [("--schedule", args.schedule)])  # before the solve
    opts = _options(args, SOLVERS.get(args.objective, {}).get(args.method), f"method '{args.method}'")
    progress = None
    if args.objective == "wcct" and args.method == "exact" and not args.json:
        progress = Progress(args.time_limit, "branch and bound")

        def report(frac: float, inc: float, low: float) -> None:
            progress.update(frac * progress.total)

        opts.setdefault("progress", report)
    if args.objective == "wcct" and args.method == "best" and not args.json:
        # the portfolio's log, a line per better schedule or bound, as a MIP solver's (its
        # header with the first: nothing is printed when the instance is refused)
        header = [f"{'time s':>8}  {'method':<44} {'incumbent':>16} {'bound':>16} {'gap':>9}"]

        def log_line(entry: Mapping[str, Any]) -> None:
            while header:
                print(header.pop(), flush=True)
            gap = entry["gap"]
            what = entry["method"] if entry["event"] in ("incumbent", "bound") else (
                f"{entry['method']} ({entry['event']})")
            print(f"{entry['time']:8.1f}  {what:<44.44} {_fmt(entry['incumbent']):>16} "
                  f"{floor_text(entry['bound'], 10):>16} "
                  f"{'-' if not math.isfinite(gap) else f'{100 * gap:.4g}%':>9}", flush=True)

        opts.setdefault("progress", log_line)
    try:
        with naming(args.file):
            res = solve(inst, method=args.method, objective=args.objective,
                        time_limit=args.time_limit, **opts)
    finally:
        if progress is not None:
            progress.close()
    # the result still counts (status and bound) when there is no schedule to write: it is
    # printed, the missing file is said, and the exit code is 1 (a script must not go on
    # to read an old file of that name)
    unwritten = 1 if args.schedule and res.schedule is None else 0
    if unwritten:
        print(f"coflowopt: no schedule written to {args.schedule}: {res.method} ended "
              f"{res.status.value} without one", file=sys.stderr)
    elif args.schedule and res.schedule is not None:
        meta = {"method": res.method, "objective": res.objective_name, "value": res.objective}
        made_on = placement_record(args)
        if made_on is not None:  # validate checks it on the same network
            meta["placement"] = made_on
        # a deadline schedule says which coflows it drops, or serves after the admitted ones
        # past their deadlines (validate reads it)
        policy = res.info.get("rejected_policy")
        others = list(res.info.get("rejected", [])) if policy in ("drop", "after") else []
        if others and policy == "drop":
            meta["rejected"] = others
            print(f"coflowopt: note: {args.schedule} serves only the admitted coflows; the "
                  f"{len(others)} rejected ones are listed in its _rejected", file=sys.stderr)
        elif others:
            meta["served_after"] = others
        sched = res.schedule
        crossbar = res.info.get("crossbar_schedule")
        if crossbar is not None:  # crossbar=true asked for the matchings: those are written
            sched = crossbar
            meta["value"] = res.info["crossbar_makespan"]
            meta["crossbar_matchings"] = res.info["crossbar_matchings"]
        write_schedule(sched, inst, args.schedule, metadata=meta)
    if args.json:
        emit_json(_payload(inst, res))
        return unwritten
    out = sys.stdout
    _header(out, inst, args.file)
    out.write(f"{args.objective} by {res.method}: {res.status.value} in {res.runtime:.3g} s\n")
    label = {"wcct": "sum of w_k C_k", "makespan": "makespan"}.get(res.objective_name,
                                                                   res.objective_name)
    rows = [[label, _fmt(res.objective)],
            ["bound (" + ("upper" if res.sense == "max" else "lower")
             + (", over permutation schedules only" if res.method == "permutation" else "") + ")",
             floor_text(res.bound, 10, up=res.sense == "max")],
            ["gap", "-" if not math.isfinite(res.gap) else f"{100 * res.gap:.4g}%"]]
    if res.completion is not None and np.all(np.isfinite(res.completion)):
        rows.append(["sum of w_k (C_k - r_k)",
                     _fmt(float(np.dot(inst.weight, res.completion - inst.release)))])
        if res.method == "best" and math.isfinite(res.bound):  # the gap on the CCTs
            rows.append(["bound on sum of w_k (C_k - r_k)",
                         floor_text(res.bound - float(np.dot(inst.weight, inst.release)), 10)])
    elif res.completion is not None:
        done = np.isfinite(res.completion)
        rows.append(["sum of w_k (C_k - r_k), served coflows",
                     _fmt(float(np.dot(inst.weight[done], (res.completion - inst.release)[done])))])
    for key in ("incumbent_from", "bound_from"):
        if res.method == "best" and res.info.get(key):
            rows.append([key.replace("_", " "), str(res.info[key])])
    for key in ("certified_ratio", "utilization", "crossbar_makespan", "lp_relaxation",
                "lower_lp", "lower_milp", "step", "nodes"):
        if key in res.info:
            rows.append([key.replace("_", " "), _fmt(float(res.info[key]))])
    out.write(format_table(rows, ["quantity", "value"]) + "\n")
    if isinstance(res.info.get("note"), str):
        out.write(f"note: {res.info['note']}\n")
    if res.completion is not None and inst.num_coflows:
        cct = res.completion - inst.release
        if inst.num_coflows <= _SHOW:
            table = [[inst.ids[k], inst.release[k], inst.weight[k], res.completion[k], cct[k]]
                     for k in range(inst.num_coflows)]
            out.write("\n" + format_table(table, ["coflow", "release", "weight", "C_k", "CCT"])
                      + "\n")
        else:
            fin = cct[np.isfinite(cct)]
            if fin.size:
                out.write(f"\nCCT over {plural(fin.size, 'coflow')}: mean {fin.mean():.6g}, median "
                          f"{np.median(fin):.6g}, max {fin.max():.6g} (--json lists all)\n")
    return unwritten


def run_bound(args: argparse.Namespace) -> int:
    inst = load_instance(args)
    bar = Progress(1.0, "bounds") if args.method == "best" and not args.json else None

    def report(name: str, frac: float) -> None:
        if bar is not None:
            bar.label = f"bound: {name}"
            bar.update(frac)

    try:
        with naming(args.file):
            res = bound(inst, method=args.method, time_limit=args.time_limit,
                        progress=report if bar is not None else None,
                        **_options(args, BOUNDS.get(args.method), f"bound '{args.method}'"))
    finally:
        if bar is not None:
            bar.close()
    if args.json:
        emit_json(_payload(inst, res))
        return 0
    out = sys.stdout
    _header(out, inst, args.file)
    why = "" if math.isfinite(res.bound) else f" ({res.status.value.replace('_', ' ')})"
    if not math.isfinite(res.bound) and res.info.get("stopped_while"):
        why = f" ({res.status.value.replace('_', ' ')}, stopped while {res.info['stopped_while']})"
    if math.isfinite(res.bound) and res.info.get("complete") is False:
        why = " (time limit: a bound from the rows added so far, weaker than the LP's)"
    out.write(f"lower bound on sum of w_k C_k ({res.method}): {floor_text(res.bound, 10)}{why} "
              f"in {res.runtime:.3g} s\n")
    shift = float(np.dot(inst.weight, inst.release))
    out.write(f"lower bound on sum of w_k (C_k - r_k): {floor_text(res.bound - shift, 10)}\n")
    if res.info.get("note"):
        out.write(f"note: {res.info['note']}\n")
    if res.method == "best":
        # each bound rounded down, as the line above (rounded to nearest, 782522.52 read 782523 here)
        rows = [[name, floor_text(val, 10), "best" if name == res.info["best"] else ""]
                for name, val in res.info["bounds"].items()]
        why_not = res.info.get("skipped_because", {})
        rows += [[name, "-", "not applicable (below)" if name in why_not else "not finished"]
                 for name in res.info["skipped"]]
        out.write("\n" + format_table(rows, ["bound", "sum w_k C_k", ""]) + "\n")
        for name, reason in why_not.items():
            out.write(f"{name}: {reason}\n")
    return 0
