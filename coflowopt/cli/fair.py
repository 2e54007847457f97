"""``coflowopt fair``: multi-resource fair allocations (DRF, HUG, PS-P, ...) and lie search."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from ..errors import CoflowoptError, InputError
from ..fairness import (
    MECHANISMS,
    allocate,
    check_allocation,
    evaluate,
    lexicographic_max_min_lp,
    lie_search,
    load_problem,
    max_min_progress_lp,
)
from ..fairness._arith import as_float, fmt
from ..fairness.allocation import FairAllocation, FairnessReport
from ..fairness.problem import FairnessProblem
from ..io import FORMATS
from ._util import (
    add_json_argument,
    emit_json,
    format_table,
    naming,
    nonnegative_int,
    plural,
    port_rate,
    positive_float,
    positive_int,
)

_LEX_LIMIT = 60  # the lexicographic LP solves O(M^2) LPs; skip it for larger problems
_INFO_KEYS = ("method", "level", "policy", "cooperative", "stage2", "converged", "rounds", "phase", "stopped")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fair",
        help="fair sharing among coflows: DRF, HUG, PS-P, per-flow; lie search",
        description=(
            "Allocate links to coflows by a fairness mechanism (Chowdhury's dissertation, ch. 7) "
            "and report each coflow's progress, the isolation guarantee and the utilization. FILE is a "
            "coflowopt-demands/1 file of correlation vectors or any instance file (vectors "
            "from each coflow's per-link load)."
        ),
    )
    p.add_argument("file", metavar="FILE", help="demands JSON (coflowopt-demands/1) or instance file")
    p.add_argument("--format", choices=sorted(FORMATS), default=None,
                   help="instance format (default: detected)")
    p.add_argument("--port-rate", type=port_rate, default=None, metavar="R",
                   help="port capacity for trace formats (default 1.25e8)")
    p.add_argument("--mechanism", default="hug", choices=list(MECHANISMS),
                   help="allocation mechanism (default hug)")
    p.add_argument("--cooperative", action="store_true",
                   help="HUG only: fully work-conserving stage 2 (not strategy-proof)")
    p.add_argument("--stage2", choices=["local", "lp"], default=None,
                   help="HUG only: stage 2 by local max-min with caps (default) or by the LP")
    p.add_argument("--progressive", action="store_true",
                   help="multi-round DRF (progressive filling) instead of Eq. 7.2")
    p.add_argument("--inelastic", action="store_true",
                   help="treat every coflow as inelastic (consumes only P_k d_k)")
    p.add_argument("--exact", action="store_true",
                   help="exact fractions for an instance file (demands files with integer or "
                        "p/q entries are exact already; one of decimals is refused)")
    p.add_argument("--verify", action="store_true",
                   help="cross-check the isolation guarantee with the max-min LP (and the "
                        "lexicographic LP for up to 60 coflows)")
    p.add_argument("--lie-search", metavar="COFLOW", default=None,
                   help="search misreports of COFLOW that raise its progress under --mechanism")
    p.add_argument("--seed", type=nonnegative_int, default=None,
                   help="lie search: random seed (default 0)")
    p.add_argument("--samples", type=positive_int, default=None,
                   help="lie search: random reports (default 400)")
    p.add_argument("--grid", type=nonnegative_int, default=None,
                   help="lie search: grid resolution for <= 3 links (default 48 / 16; 0 = none)")
    p.add_argument("--time-limit", type=positive_float, default=None, metavar="S",
                   help="stop the lie search (or PS-P's equilibrium search) after S seconds")
    add_json_argument(p)
    p.set_defaults(func=run_fair)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    mech = MECHANISMS[args.mechanism]
    opts: dict[str, Any] = {}
    if args.cooperative:
        opts["cooperative"] = True
    if args.stage2 is not None:
        opts["stage2"] = args.stage2
    if args.progressive:
        opts["method"] = "progressive"
    if args.time_limit is not None and args.lie_search is None:
        if "time_limit" not in mech.options:
            raise CoflowoptError(f"--time-limit applies to the lie search and to psp, not to "
                                 f"'{args.mechanism}'")
        opts["time_limit"] = args.time_limit
    bad = sorted(set(opts) - mech.options)
    if bad:
        flag = {"cooperative": "--cooperative", "stage2": "--stage2", "method": "--progressive"}[bad[0]]
        raise CoflowoptError(f"{flag} does not apply to mechanism '{args.mechanism}'")
    return opts


def _load(args: argparse.Namespace) -> FairnessProblem:
    return load_problem(
        args.file, format=args.format, port_rate=args.port_rate,
        elastic=not args.inelastic, exact=args.exact,
    )


def _exact_strings(values: Any) -> Any:
    arr = np.asarray(values, dtype=object)
    return np.vectorize(fmt, otypes=[object])(arr).tolist() if arr.size else []


def run_fair(args: argparse.Namespace) -> int:
    if args.lie_search is None:
        given = [flag for flag, value in (("--seed", args.seed), ("--samples", args.samples),
                                          ("--grid", args.grid)) if value is not None]
        if given:
            raise InputError(f"{given[0]} applies to the lie search only (add --lie-search COFLOW)")
    args.seed = 0 if args.seed is None else args.seed
    args.samples = 400 if args.samples is None else args.samples
    with naming(str(args.file)):  # (what the file holds cannot be a problem, or not this one)
        problem = _load(args)
    opts = _options(args)
    if args.lie_search is not None:
        try:
            problem.index(args.lie_search)
        except CoflowoptError as exc:
            raise InputError(f"--lie-search {args.lie_search}: {exc}", path=args.file) from None
        return _run_lie_search(args, problem, opts)
    with naming(str(args.file)):
        alloc = allocate(problem, args.mechanism, **opts)
    rep = evaluate(alloc)
    violations = check_allocation(alloc)
    checks = _verify(problem, rep) if args.verify else None
    if args.json:
        out = {
            "file": args.file,
            "name": problem.name,
            "mechanism": args.mechanism,
            "options": opts,
            "coflows": list(problem.ids),
            "links": list(problem.link_names),
            "exact": bool(alloc.exact),
            "feasible": not violations,
            "violations": [v.message for v in violations],
            **rep.as_dict(),
            "allocation": as_float(alloc.allocation).tolist(),
        }
        if alloc.exact:
            out["exact_values"] = {
                "progress": _exact_strings(rep.progress),
                "isolation_guarantee": fmt(rep.isolation_guarantee),
                "utilization": fmt(rep.utilization),
                "allocation": _exact_strings(alloc.allocation),
                "consumption": _exact_strings(rep.consumption),
            }
        out["info"] = {key: alloc.info[key] for key in _INFO_KEYS if key in alloc.info}
        if "level" in out["info"]:
            out["info"]["level"] = float(out["info"]["level"])
        if checks is not None:
            out["verify"] = checks
        emit_json(out)
        return 0
    _print_report(args, problem, alloc, rep, violations, checks)
    return 0


_VERIFY_RTOL = 1e-4
"""Relative agreement --verify asks of the mechanism's isolation guarantee and the LP's."""


def _verify(problem: FairnessProblem, rep: FairnessReport) -> dict[str, Any]:
    lp = max_min_progress_lp(problem)
    out: dict[str, Any] = {
        "lp_isolation_guarantee": lp.objective,
        "lp_status": lp.status.value,
        "mechanism_isolation_guarantee": float(rep.isolation_guarantee),
        # relative: an absolute 1e-7 called PS-P's 5e-8 and the LP's 6.7e-8 (weights 1e7) in
        # agreement; 1e-4 leaves room for HiGHS's tolerances on small values
        # (7e-5 relative seen on a DRF guarantee of 0.001 that the closed form gets right)
        "lp_agrees": bool(
            abs(lp.objective - float(rep.isolation_guarantee)) <= _VERIFY_RTOL * abs(lp.objective)
        ),
        "relative_difference": (abs(lp.objective - float(rep.isolation_guarantee)) / abs(lp.objective)
                                if lp.objective else None),
    }
    if problem.num_coflows <= _LEX_LIMIT:
        lex = lexicographic_max_min_lp(problem)
        out["lexicographic_progress"] = None if lex.info["progress"] is None else list(lex.info["progress"])
        out["lexicographic_lps"] = lex.info["lps"]
    return out


def _print_report(
    args: argparse.Namespace,
    problem: FairnessProblem,
    alloc: FairAllocation,
    rep: FairnessReport,
    violations: list[Any],
    checks: dict[str, Any] | None,
) -> None:
    out = sys.stdout
    label = problem.name or args.file
    arith = "exact" if alloc.exact else "float"
    out.write(f"{label}: {plural(problem.num_coflows, 'coflow')}, "
              f"{plural(problem.num_links, 'link')} ({arith})\n")
    opts = "".join(f", {k}={v}" for k, v in sorted(_options(args).items()))
    out.write(f"mechanism {args.mechanism}{opts}\n\n")
    show_links = problem.num_links <= 6
    headers = ["coflow", "weight", "elastic", "progress", "guaranteed", "dominant share"]
    if rep.useful_bandwidth is not None:
        headers.append("useful bw")
    if show_links:
        headers += [f"a[{n}]" for n in problem.link_names]
    rows = []
    for k, cid in enumerate(problem.ids):
        row: list[Any] = [cid, fmt(problem.weights[k]), "yes" if problem.elastic[k] else "no",
                          fmt(rep.progress[k]), fmt(rep.guaranteed_progress[k]), fmt(rep.dominant_share[k])]
        if rep.useful_bandwidth is not None:
            row.append(f"{rep.useful_bandwidth[k]:.6g}")
        if show_links:
            row += [fmt(x) for x in alloc.allocation[k]]
        rows.append(row)
    limit = 40
    out.write(format_table(rows[:limit], headers) + "\n")
    if len(rows) > limit:
        out.write(f"... {plural(len(rows) - limit, 'more coflow', 'more coflows')} (use --json "
                  "for all)\n")
    out.write("\n")
    out.write(f"isolation guarantee (min progress / weight): {fmt(rep.isolation_guarantee)}\n")
    out.write(f"utilization: {fmt(rep.utilization)} of {plural(problem.num_links, 'link')} "
              f"({100 * rep.utilization_fraction:.4g}% of capacity)\n")
    out.write(f"min-cut proportionality (min/max progress per weight): {rep.min_cut_proportionality:.6g}\n")
    if show_links:
        rows = [[n, fmt(rep.link_allocated[i]), fmt(rep.link_usage[i])]
                for i, n in enumerate(problem.link_names)]
        out.write("\n" + format_table(rows, ["link", "allocated", "used"]) + "\n")
    if alloc.info.get("converged") is False:
        out.write(f"\nwarning: equilibrium not reached ({alloc.info.get('stopped')}); the allocation "
                  "is feasible but not the PS-P equilibrium\n")
    out.write("\nfeasible: every link within capacity\n" if not violations
               else "\nINFEASIBLE: " + "; ".join(v.message for v in violations) + "\n")
    if checks is not None:
        if checks["lp_agrees"]:
            verdict = "agrees"
        elif (not args.mechanism.startswith(("drf", "hug"))
              and checks["mechanism_isolation_guarantee"] < checks["lp_isolation_guarantee"]):
            # only DRF and HUG's first stage aim at the largest isolation guarantee (§7.5)
            verdict = f"the mechanism's is lower, as expected: {args.mechanism} does not maximize it"
        else:
            verdict = "DISAGREES"
        out.write(f"max-min LP (HiGHS): isolation guarantee {checks['lp_isolation_guarantee']:.9g} "
                  f"({verdict})\n")
        if checks.get("lexicographic_progress") is not None:
            lex = ", ".join(f"{v:.6g}" for v in checks["lexicographic_progress"][:10])
            more = ", ..." if problem.num_coflows > 10 else ""
            out.write(f"lexicographic max-min LP progress: {lex}{more} "
                      f"({checks['lexicographic_lps']} LPs)\n")


def _run_lie_search(args: argparse.Namespace, problem: FairnessProblem, opts: dict[str, Any]) -> int:
    res = lie_search(
        problem, args.lie_search, args.mechanism, options=opts, grid=args.grid,
        samples=args.samples, seed=args.seed, time_limit=args.time_limit,
    )
    names = [problem.link_names[i] for i in res.links]
    if args.json:
        out: dict[str, Any] = {
            "file": args.file,
            "mechanism": args.mechanism,
            "options": opts,
            "coflow": res.coflow,
            "found": res.found,
            "truthful_progress": float(res.truthful_progress),
            "best_progress": float(res.best_progress),
            "gain": float(res.gain),
            "witness": None if res.witness is None else as_float(res.witness).tolist(),
            "exact": res.exact,
            "links": names,
            "evaluations": res.evaluations,
            "effort": dict(res.effort),
            "grid_resolution": res.grid_resolution,
            "runtime": res.runtime,
            "stopped": res.stopped,
            "seed": res.seed,
        }
        if res.exact and res.witness is not None:
            out["exact_values"] = {
                "witness": _exact_strings(res.witness),
                "truthful_progress": fmt(res.truthful_progress),
                "best_progress": fmt(res.best_progress),
                "gain": fmt(res.gain),
                "all_progress": _exact_strings(res.all_progress),
            }
        emit_json(out)
        return 0
    out_ = sys.stdout
    grid = f"grid {res.grid_resolution}" if res.grid_resolution else "no grid"
    out_.write(f"lie search: coflow {res.coflow} under {args.mechanism} over "
               f"{plural(len(res.links), 'link')} ({grid}, {plural(args.samples, 'random report')}, "
               f"seed {res.seed})\n")
    out_.write(f"truthful progress: {fmt(res.truthful_progress)}\n")
    if res.found:
        assert res.witness is not None
        vec = ", ".join(f"{n}={fmt(res.witness[i])}" for i, n in zip(res.links, names, strict=True))
        out_.write(f"PROFITABLE LIE: report <{vec}> gives progress {fmt(res.best_progress)} "
                   f"(+{fmt(res.gain)}){' [exact]' if res.exact else ''}\n")
        if res.all_progress is not None:
            others = ", ".join(
                f"{cid}={fmt(v)}" for cid, v in zip(problem.ids, res.all_progress, strict=True)
            )
            out_.write(f"everyone's progress under the lie: {others}\n")
    else:
        out_.write("no profitable lie found\n")
    effort = ", ".join(f"{k} {v}" for k, v in res.effort.items())
    out_.write(f"effort: {plural(res.evaluations, 'evaluation')} ({effort}); {res.runtime:.3g} s; "
               f"{res.stopped}\n")
    return 0
