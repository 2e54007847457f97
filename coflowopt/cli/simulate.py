"""``coflowopt simulate`` and ``coflowopt compare``: run the published schedulers."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import math
import sys
import threading
import time
from concurrent.futures import BrokenExecutor
from typing import Any

import numpy as np

from .._text import bin_rule
from ..bounds._round import cct_bound
from ..errors import CoflowoptError, InputError
from ..fabric.background import parse_background
from ..instance import BINS, NARROW_WIDTH, SHORT_LENGTH, Instance
from ..io._common import atomic_writers
from ..io.schedule_file import SCHEDULE_FORMATS, schedule_format, write_schedule
from ..plots import TIMELINE_MAX_LINKS, cct_cdf_figure, compare_figure, timeline_figure
from ..sim import POLICIES, Policy, SimulationResult, engine, get_policy, make_policy, simulate, simulate_many
from ..sim.background import KNOWLEDGE
from ..sim.batch import broken_worker, cpu_count, process_pool, stop_pool
from ._util import (
    Progress,
    add_input_arguments,
    add_topology_arguments,
    check_outputs,
    check_plot,
    emit_json,
    floor_text,
    format_table,
    load_instance,
    naming,
    nonnegative_int,
    parse_params,
    placement_record,
    plural,
    positive_float,
    save_plot,
    size_text,
    size_unit,
    time_unit,
)

DEFAULT_SCHEDULERS = ("varys", "sincronia", "maluca", "pfp", "scf", "tcf", "fifo", "fair", "mcs",
                      "aalo:sharing=strict")
"""What ``compare`` runs when no --schedulers are given: the schedulers that take seconds on the
trace. Aalo with strict priority across its queues (what coflowsim, the Varys/Aalo papers'
simulator, implements); its default weighted sharing takes over two minutes on the trace
(benchmarks/results/simulator.md), several times the rest together."""


SUBMIT_FIRST = ("mcs", "fair", "pfp", "varys", "maluca")
"""The order in which ``compare``'s worker processes take these schedulers before the others:
on a first run they compile their kernels as they go, longest compilation first (on the
trace, 2-core machine: mcs's D-CLAS kernel about 26 s, fair's pair kernel 18 s, pfp 9 s,
varys 4 s, maluca 4 s), so that the two processes' compilations overlap; a scheduler that
shares a kernel with one of them (strict aalo with mcs) starts later and loads it. Only the
order of the work changes, not its results."""


PARALLEL_FLOWS = 20_000
"""``compare`` runs in worker processes by default on instances of more flows than this."""

MAX_JSON_PIECES = 100_000_000
"""The most pieces ``simulate --schedule`` writes as JSON: 10 million took 68 s and 648 MB
(varys on the Facebook trace, measured); ``.npz`` holds any number, tied pieces compact."""


def _policy_help() -> str:
    lines = ["schedulers and their parameters (defaults: the paper's value where it gives one,",
             "else the policy's own choice, stated in its docstring):"]
    for name in sorted(POLICIES):
        spec = POLICIES[name]
        lines.append(f"  {name}: {spec.summary}")
        defaults = spec.defaults()
        if defaults:
            text = ", ".join(f"{k}={_short(v)}" for k, v in defaults.items())
            lines.append(f"      {text}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    if isinstance(value, tuple):
        if len(value) > 3:
            return ",".join(_short(v) for v in value[:3]) + ",..."
        return ",".join(_short(v) for v in value) or "()"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate one scheduler (event-driven fluid model) and report coflow completion times",
        epilog=_policy_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_arguments(p)
    add_topology_arguments(p)
    p.add_argument("--scheduler", "-s", required=True, choices=sorted(POLICIES), metavar="NAME",
                   help="the scheduler (see the list below)")
    p.add_argument("--param", "-p", action="append", metavar="KEY=VALUE",
                   help="a scheduler parameter; repeat for several (tuples: comma-separated)")
    _add_common(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the summary and every coflow as JSON")
    out.add_argument("--csv", metavar="OUT", help="write the per-coflow table as CSV ('-' for stdout)")
    p.add_argument("--summary-csv", metavar="OUT",
                   help="write the summary as CSV, a header and one row ('-' for stdout)")
    p.add_argument("--coflows", action="store_true", help="also print the per-coflow table")
    p.add_argument("--schedule", metavar="OUT",
                   help="record the schedule and write it: OUT.json (coflowopt-schedule/1) or "
                   "OUT.npz (compact binary, for large instances)")
    p.add_argument("--timeline", metavar="OUT",
                   help="also draw the schedule, one row per link, each coflow's share of it "
                   f"(.png, .svg or .pdf; needs the plot extra; for instances whose flows cross "
                   f"at most {TIMELINE_MAX_LINKS} links)")
    p.set_defaults(func=run_simulate)

    c = sub.add_parser(
        "compare",
        help="simulate several schedulers on one instance and compare their CCTs",
        epilog=_policy_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_arguments(c)
    add_topology_arguments(c)
    c.add_argument("--schedulers", metavar="A,B,C", default=",".join(DEFAULT_SCHEDULERS),
                   help="comma-separated schedulers, each NAME or NAME:KEY=VALUE[:KEY=VALUE...] "
                   "(a variant with its own parameters, labelled as written; the same scheduler "
                   "may appear in several variants; a tuple value keeps its commas and goes last: "
                   f"aalo:num_queues=3:weights=4,2,1) (default {','.join(DEFAULT_SCHEDULERS)})")
    c.add_argument("--baseline", metavar="NAME",
                   help="normalize to this scheduler, as listed in --schedulers (default: varys if "
                   "compared, else the first)")
    c.add_argument("--param", "-p", action="append", metavar="NAME.KEY=VALUE",
                   help="a parameter of every compared variant of scheduler NAME, e.g. "
                   "varys.backfill=greedy (a variant's own KEY=VALUE takes precedence)")
    c.add_argument("--bound", choices=["best"], default=None,
                   help="also compute a lower bound on sum w*C (hence on sum w*CCT) and each "
                   "scheduler's ratio of its sum w*CCT to it")
    c.add_argument("--bound-time-limit", type=positive_float, default=60.0, metavar="S",
                   help="time limit of the bound computation (default 60 s)")
    c.add_argument("--jobs", "-j", type=nonnegative_int, default=None, metavar="N",
                   help="run up to N simulations (and the bound) at once, each in its own process "
                   "with its own copy of the instance (0: one per CPU this process may use; 1: "
                   "one after another in this process; default: one per CPU on instances of "
                   f"more than {PARALLEL_FLOWS:,} flows, else 1); the results are the same")
    _add_common(c)
    cout = c.add_mutually_exclusive_group()
    cout.add_argument("--json", action="store_true", help="print machine-readable JSON")
    cout.add_argument("--csv", metavar="OUT",
                      help="write the table as CSV, one row per scheduler ('-' for stdout): "
                      "absolute means, p50/p95/p99, the ratios to the baseline, sums, the "
                      "bound's ratios with --bound, deadlines met, wall time")
    c.add_argument("--plot", metavar="OUT",
                   help="also save the table as a figure (.png, .svg or .pdf; needs the plot "
                   "extra): per-bin mean CCTs over the baseline's and, with --bound, the ratios "
                   "to the bound")
    c.add_argument("--cdf", metavar="OUT",
                   help="also save the distribution of CCTs, one line per scheduler (.png, "
                   ".svg or .pdf; needs the plot extra)")
    c.set_defaults(func=run_compare)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch-interval", type=positive_float, default=None, metavar="S",
                   help="admit arrivals only at multiples of S time units (MCS: 10 s or 1 s)")
    p.add_argument("--background", metavar="SPEC", default=None,
                   help="traffic the schedulers do not see, sharing the links: share:X (X of "
                   "every link's capacity), poisson:load=X[,cdf=web-search|data-mining|FILE]"
                   "[,seed=N][,unit=U][,start=T] (flows between random hosts, arriving from "
                   "time T on; X of the hosts' uplink capacity; sizes from the CDF in bytes "
                   "times U) or file:PATH (a JSON "
                   "background: share, load over time per link, flows); see models/fabrics.md")
    p.add_argument("--knowledge", choices=KNOWLEDGE, default="nominal",
                   help="with --background, what the schedulers know: nominal (the fabric's "
                   "capacities, as deployed; default) or ideal (the capacity the background "
                   "leaves, re-deciding at every change); coflourish builds its own estimate "
                   "from switch feedback and takes nominal only")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _run(inst: Instance, policy: Policy, args: argparse.Namespace, *,
         record: bool = False, label: str | None = None) -> SimulationResult:
    bar = None
    if not args.no_progress:
        bar = Progress(1.0, label or f"simulating {policy.name}")
    try:
        with naming(args.file):
            return simulate(inst, policy, batch_interval=args.batch_interval, record=record,
                            progress=bar.update if bar else None, max_pieces=engine.MAX_PIECES,
                            **background_options(inst, args))
    finally:
        if bar is not None:
            bar.close()


def background_options(inst: Instance, args: argparse.Namespace) -> dict[str, Any]:
    """``simulate``'s ``background`` and ``knowledge`` from --background and --knowledge
    (read once per command)."""
    spec = getattr(args, "background", None)
    if spec is None:
        if getattr(args, "knowledge", "nominal") != "nominal":
            raise InputError("--knowledge goes with --background")
        return {}
    cached = getattr(args, "_background", None)
    if cached is None:
        fab = inst.fabric
        names = [fab.link_name(link) for link in range(fab.num_links)]
        cached = parse_background(spec, fab.capacity, names, num_hosts=inst.num_ports)
        try:
            cached.check(fab.capacity, inst.num_ports, fab)
        except InputError as exc:  # the background does not fit the file's (or --topology's) fabric
            raise InputError(f"--background {spec}: on {args.file}: {exc.message}") from None
        args._background = cached
    return {"background": cached, "knowledge": args.knowledge}


def run_simulate(args: argparse.Namespace) -> int:
    inst = load_instance(args)
    background_options(inst, args)  # a bad background fails before the run
    params = parse_params(args.param)
    requested = [("--schedule", args.schedule), ("--csv", args.csv),
                 ("--summary-csv", args.summary_csv)]
    to_stdout = [opt for opt, on in (("--json", args.json), ("--csv -", args.csv == "-"),
                                     ("--summary-csv -", args.summary_csv == "-")) if on]
    if len(to_stdout) > 1:
        raise InputError(f"{' and '.join(to_stdout)} would both write to standard output; "
                         "send one of them to a file")
    check_outputs(args, [*requested, ("--timeline", args.timeline)])  # before the run
    check_plot(args.timeline, "--timeline", "simulate --timeline")
    if args.timeline:
        crossed = np.unique(inst.routes.indices).size
        if crossed > TIMELINE_MAX_LINKS:
            raise InputError(f"--timeline {args.timeline}: the flows cross {crossed} links, "
                             f"more than the {TIMELINE_MAX_LINKS} a timeline draws (a row "
                             "each); draw a part from Python: coflowopt.plots.timeline_figure("
                             "..., links=[...])")
    outs = [(opt, path) for opt, path in requested if path and path != "-"]  # files to write
    res = _run(inst, make_policy(args.scheduler, params, strings=True), args,
               record=bool(args.schedule or args.timeline))
    if (args.schedule or args.timeline) and res.schedule is None:
        opt = (f"--schedule {args.schedule}" if args.schedule
               else f"--timeline {args.timeline}")
        raise CoflowoptError(
            f"{opt}: the schedule has more than "
            f"{plural(engine.MAX_PIECES, 'piece', thousands=True)}, the "
            "most the simulator records; nothing written (run without --schedule, or record it "
            "from Python: simulate(..., max_pieces=N))")
    fmt = schedule_format(args.schedule) if args.schedule else None
    if (fmt is SCHEDULE_FORMATS["json"] and res.schedule is not None
            and res.schedule.num_pieces > MAX_JSON_PIECES):
        raise CoflowoptError(
            f"--schedule {args.schedule}: the schedule has {res.schedule.num_pieces:,} pieces, more "
            f"than {MAX_JSON_PIECES:,}, the most written as JSON; nothing written (name the "
            "file .npz for the compact binary format)")
    binary = [fmt is not None and opt == "--schedule" and fmt.binary for opt, _ in outs]
    with atomic_writers([path for _, path in outs], binary=binary) as handles:  # all or none
        for (opt, _), fh in zip(outs, handles, strict=True):
            if opt == "--csv":
                res.to_csv(fh)
            elif opt == "--summary-csv":
                res.summary_csv(fh)
            elif res.schedule is not None and fmt is not None:
                made_on = placement_record(args)  # validate checks it on the same network
                write_schedule(res.schedule, inst, fh, format=fmt.name,
                               metadata=None if made_on is None else {"placement": made_on})
    if args.timeline and res.schedule is not None:
        save_plot(timeline_figure(inst, res.schedule, unit=time_unit(args),
                                  title=f"{inst.name or args.file}: {args.scheduler}"),
                  args.timeline)
    if args.json:
        emit_json(res.to_dict())
        return 0
    if args.csv == "-":
        res.to_csv(sys.stdout)
        return 0
    if args.summary_csv == "-":
        res.summary_csv(sys.stdout)
        return 0
    print(res.format(coflows=args.coflows, unit=time_unit(args), size_unit=size_unit(args)))
    if args.csv:
        print(f"\nper-coflow table written to {args.csv}")
    if args.summary_csv:
        print(f"summary written to {args.summary_csv}")
    if args.schedule:
        sched = res.schedule
        tied = sched.tied if sched is not None else None
        how = "" if tied is None or fmt is not SCHEDULE_FORMATS["npz"] else (
            f", as {tied.num_tied:,} tied pieces and {tied.num_levels:,} level changes")
        print(f"schedule ({plural(sched.num_pieces if sched else 0, 'piece')}{how}) "
              f"written to {args.schedule}")
    if args.timeline:
        print(f"figure written to {args.timeline}")
    return 0


def parse_variants(text: str) -> dict[str, tuple[str, dict[str, str]]]:
    """``--schedulers`` entries: label -> (scheduler name, its own parameters).

    An entry is ``NAME`` or ``NAME:KEY=VALUE[:KEY=VALUE...]``; its label is the entry as
    written (spaces around it dropped). A tuple value keeps its commas
    (``aalo:weights=4,2,1``, ``static-order:order=b,a``): a comma-separated piece continues
    the entry before it when it is a number (no scheduler is named by a number), or when
    that entry's last parameter takes a tuple and the piece is no scheduler's name.
    """
    out: dict[str, tuple[str, dict[str, str]]] = {}
    entries: list[str] = []
    for piece in (e.strip() for e in text.split(",")):
        if entries and _continues(entries[-1], piece):
            entries[-1] += "," + piece
        else:
            entries.append(piece)
    for entry in entries:
        if not entry:
            raise InputError(f"--schedulers '{text}' has an empty entry (a comma too many)")
        name, *pairs = (x.strip() for x in entry.split(":"))
        if not name:
            raise InputError(f"--schedulers entry '{entry}' has no scheduler name")
        own: dict[str, str] = {}
        for pair in pairs:
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise InputError(f"--schedulers entry '{entry}': expected NAME:KEY=VALUE, "
                                 f"got '{pair}'")
            if key.strip() in own:
                raise InputError(f"--schedulers entry '{entry}' sets {key.strip()} twice")
            own[key.strip()] = value.strip()
        if entry in out:
            raise InputError(f"--schedulers lists '{entry}' twice")
        out[entry] = (name, own)
    if not out:
        raise InputError("--schedulers needs at least one scheduler name")
    return out


def _continues(entry: str, piece: str) -> bool:
    """Whether ``piece`` (after a comma) is more of ``entry``'s last parameter value."""
    if "=" not in entry:
        return False
    if _is_number(piece):
        return True
    if not piece or ":" in piece or piece in POLICIES:
        return False
    name = entry.partition(":")[0].strip()
    key = entry.rpartition(":")[2].partition("=")[0].strip()
    if name not in POLICIES:
        return False
    kinds = {f.name: str(f.type) for f in dataclasses.fields(POLICIES[name].params)}
    return kinds.get(key, "").startswith("tuple")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _split_params(items: list[str] | None, variants: dict[str, tuple[str, dict[str, str]]],
                  ) -> dict[str, dict[str, str]]:
    """Each variant's parameters: ``--param NAME.KEY=VALUE`` for its scheduler, then its own."""
    shared: dict[str, dict[str, str]] = {}
    names = {name for name, _ in variants.values()}
    for key, value in parse_params(items).items():
        name, dot, k = key.rpartition(".")
        if not dot or not name:
            raise InputError(f"compare's --param expects NAME.KEY=VALUE, got '{key}={value}'")
        if name not in names:
            raise InputError(f"--param names scheduler '{name}', which is not compared")
        shared.setdefault(name, {})[k] = value
    return {label: {**shared.get(name, {}), **own} for label, (name, own) in variants.items()}


def compare_rows(results: dict[str, SimulationResult], baseline: str,
                 bound: float | None = None, bound_cct: float | None = None) -> list[dict[str, Any]]:
    """One row per scheduler: absolute mean/p95 and the ratios to the baseline.

    ``bound`` is a lower bound on ``sum w_k C_k`` (absolute completion
    times); ``bound_cct`` the bound it gives on the weighted sum of CCTs
    (:func:`coflowopt.bounds._round.cct_bound`), the ratio the table shows (with release times
    spread over an hour, the ratio of absolute sums would hide every
    difference between schedulers behind the common ``sum w_k r_k``).
    """
    base = results[baseline].summary
    rows = []
    for name, res in results.items():
        s = res.summary
        row: dict[str, Any] = {
            "scheduler": name,
            "mean_cct": s.mean_cct,
            "p95_cct": s.p95_cct,
            "norm_mean": _ratio(s.mean_cct, base.mean_cct),
            "norm_p95": _ratio(s.p95_cct, base.p95_cct),
        }
        for b in BINS:
            row[f"norm_{b}"] = _ratio(s.bin_mean_cct[b], base.bin_mean_cct[b])
        row["weighted_completion"] = s.weighted_completion
        row["weighted_cct"] = s.weighted_cct
        if bound is not None and bound_cct is not None:
            row["vs_bound"] = _ratio(s.weighted_completion, bound)
            row["cct_vs_bound"] = _ratio(s.weighted_cct, bound_cct)
        if s.deadlines_met is not None:
            row["deadlines_met"] = s.deadlines_met
        row["wall_s"] = res.runtime
        rows.append(row)
    return rows


def _ratio(a: float, b: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b)) or b <= 0:
        return math.nan
    return a / b


def _lower_bound(inst: Instance, time_limit: float) -> tuple[float, str]:
    try:
        from ..solvers import bound
    except ImportError as exc:  # pragma: no cover - depends on the installed version
        raise CoflowoptError(
            "--bound needs coflowopt.solvers.bound (the lower bounds), which this installation "
            "does not have; run compare without --bound"
        ) from exc
    res = bound(inst, method="best", time_limit=time_limit)
    if not math.isfinite(res.bound):
        raise CoflowoptError(f"the bound computation returned no bound ({res.status.value})")
    return float(res.bound), str(res.info.get("best", res.method))


def _compare_parallel(
    inst: Instance, policies: dict[str, Policy], args: argparse.Namespace, jobs: int,
) -> tuple[dict[str, SimulationResult], float | None, str | None]:
    """``compare``'s simulations and bound on a pool of ``jobs`` processes (``spawn``ed).

    The bound starts first (it may take its whole time limit); one progress bar counts
    the finished tasks.
    """
    tasks = len(policies) + bool(args.bound)
    bar = None if args.no_progress else Progress(
        tasks, f"{plural(tasks, 'task')} on {plural(min(jobs, tasks), 'process', 'processes')}")
    finished = 0
    bound_done = threading.Event()  # set by the pool's thread when the bound is in

    def tick(label: str, fraction: float) -> None:  # a simulation finished (fraction 1.0)
        nonlocal finished
        finished += 1
        if bar is not None:
            bar.update(finished + bound_done.is_set())

    # the workers' compilations are announced here as they start (WorkerPool)
    pool = process_pool(min(jobs, tasks), inst)  # each worker gets the instance once
    try:
        pending = None
        if args.bound:
            pending = pool.submit_on(inst, _lower_bound, args.bound_time_limit)
            pending.add_done_callback(lambda _: bound_done.set())
        rank = {name: i for i, name in enumerate(SUBMIT_FIRST)}
        order = sorted(policies, key=lambda label: rank.get(policies[label].name, len(rank)))
        done = simulate_many(inst, {label: policies[label] for label in order},
                             executor=pool, progress=tick,
                             batch_interval=args.batch_interval, record=False,
                             max_pieces=engine.MAX_PIECES, **background_options(inst, args))
        results = {label: done[label] for label in policies}  # the table's order
        bound = method = None
        if pending is not None:
            try:
                bound, method = pending.result()
            except BrokenExecutor as exc:
                raise broken_worker("while computing the bound", exc) from exc
            if bar is not None:
                bar.update(tasks)
    except BaseException:
        stop_pool(pool)  # the error now, not after the other tasks (the bound: its time limit)
        raise
    finally:
        if bar is not None:
            bar.close()
    pool.shutdown()
    return results, bound, method


def run_compare(args: argparse.Namespace) -> int:
    inst = load_instance(args)
    variants = parse_variants(args.schedulers)
    labels = list(variants)
    for name, _ in variants.values():
        get_policy(name)
    if args.baseline is not None and not args.baseline.strip():
        raise InputError("--baseline is empty; name one of the compared schedulers")
    baseline = (args.baseline.strip() if args.baseline is not None
                else ("varys" if "varys" in labels else labels[0]))
    if baseline not in labels:
        raise InputError(f"the baseline '{baseline}' is not among the compared schedulers")
    params = _split_params(args.param, variants)
    background_options(inst, args)
    # before hours of simulation
    check_outputs(args, [("--csv", args.csv), ("--plot", args.plot), ("--cdf", args.cdf)])
    check_plot(args.plot, "--plot", "compare --plot")
    check_plot(args.cdf, "--cdf", "compare --cdf")
    policies: dict[str, Policy] = {}
    for n in labels:  # fail on a bad parameter before hours of simulation
        try:
            policies[n] = make_policy(variants[n][0], params[n], strings=True)
        except CoflowoptError as exc:
            raise InputError(f"scheduler '{n}': {exc}") from None
    if args.jobs is None:  # worker processes take a second or two to start: for large instances
        jobs = cpu_count() if inst.num_flows > PARALLEL_FLOWS else 1
    else:
        jobs = args.jobs or cpu_count()
    bound = method = None
    results: dict[str, SimulationResult] = {}
    t0 = time.perf_counter()
    if jobs > 1 and len(labels) + bool(args.bound) > 1:
        results, bound, method = _compare_parallel(inst, policies, args, jobs)
    else:
        if args.bound:
            bound, method = _lower_bound(inst, args.bound_time_limit)
        for i, n in enumerate(labels, 1):
            results[n] = _run(inst, policies[n], args, label=f"[{i}/{len(labels)}] {n}")
    bound_cct = None if bound is None else cct_bound(bound, inst.weight, inst.release)
    rows = compare_rows(results, baseline, bound, bound_cct)
    heading = f"{inst.name or args.file}: {size_text(inst)}"
    if args.plot:
        save_plot(compare_figure(rows, baseline=baseline, bin_counts=inst.bin_counts(),
                                 title=heading), args.plot)
    if args.cdf:
        save_plot(cct_cdf_figure({n: results[n].cct for n in labels}, unit=time_unit(args),
                                 title=heading), args.cdf)
    if args.json:
        emit_json({
            "instance": inst.name or args.file,
            "coflows": inst.num_coflows,
            "flows": inst.num_flows,
            "baseline": baseline,
            "batch_interval": args.batch_interval,
            "bound": bound,
            "bound_cct": bound_cct,
            "bound_method": method,
            "schedulers": [
                {**row, "params": dict(results[row["scheduler"]].params),
                 "summary": results[row["scheduler"]].to_dict(coflows=False)["summary"]}
                for row in rows
            ],
        })
        return 0
    if args.csv:
        text = compare_csv(rows, results)
        if args.csv == "-":
            sys.stdout.write(text)
            return 0
        with atomic_writers([args.csv]) as (fh,):
            fh.write(text)
    unit = time_unit(args)
    counts = inst.bin_counts()
    headers = ["scheduler", f"mean CCT ({unit})", "p95 CCT", "mean/base", "p95/base",
               *[f"{b}/base ({counts[b]})" for b in BINS]]
    if bound is not None:
        headers.append("sum wCCT / bound")
    deadlines = any("deadlines_met" in row for row in rows)
    if deadlines:
        headers.append(f"deadlines met (of {int(np.isfinite(inst.deadline).sum())})")
    headers.append("wall s")
    body = []
    for row in rows:
        line = [row["scheduler"], row["mean_cct"], row["p95_cct"],
                _x(row["norm_mean"]), _x(row["norm_p95"]), *[_x(row[f"norm_{b}"]) for b in BINS]]
        if bound is not None:
            line.append(_x(row["cct_vs_bound"]))
        if deadlines:
            line.append(row.get("deadlines_met", "-"))
        line.append(f"{row['wall_s']:.1f}")
        body.append(line)
    title = (f"{heading}; ratios are scheduler / {baseline} "
             "(above 1: slower than the baseline)")
    print(format_table(body, headers, title=title))
    print(f"bins: {bin_rule(SHORT_LENGTH, NARROW_WIDTH, size_unit(args))}")
    extras = []
    if bound is not None and bound_cct is not None:
        extras.append(f"lower bound on sum w*CCT: {floor_text(bound_cct, 6)} "
                      f"(sum w*C >= {floor_text(bound, 6)}, method {method})")
    if args.batch_interval:
        extras.append(f"arrivals batched every {args.batch_interval:g}")
    if args.background:
        extras.append(f"background {background_options(inst, args)['background'].describe()}, "
                      f"{args.knowledge} knowledge")
    extras.append(f"total wall time {time.perf_counter() - t0:.1f} s")
    print("; ".join(extras))
    if args.csv:
        print(f"table written to {args.csv}")
    for figure in (args.plot, args.cdf):
        if figure:
            print(f"figure written to {figure}")
    return 0


def compare_csv(rows: list[dict[str, Any]], results: dict[str, SimulationResult]) -> str:
    """The compare table as CSV: :func:`compare_rows`' columns (full precision, ratios as
    numbers, empty where undefined) with each scheduler's p50 and p99 CCT after its p95."""
    table = []
    for row in rows:
        s = results[row["scheduler"]].summary
        out: dict[str, Any] = {}
        for k, v in row.items():
            out[k] = v
            if k == "p95_cct":
                out["p50_cct"], out["p99_cct"] = s.p50_cct, s.p99_cct
        table.append(out)
    names = list(table[0])
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for out in table:
        w.writerow(["" if isinstance(v, float) and not math.isfinite(v) else v
                    for v in (out[n] for n in names)])
    return buf.getvalue()


def _x(v: float) -> str:
    return "-" if not math.isfinite(v) else f"{v:.2f}x"
