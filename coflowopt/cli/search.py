"""``coflowopt search gap``: small instances on which a bound or a scheduler is far from the
optimum (:func:`coflowopt.exact.gap_search.gap_search`)."""

from __future__ import annotations

import argparse
import inspect
import sys

from ..exact.gap_search import GapSearchResult, gap_search
from ..instance import Coflow, Fabric, Instance
from ._util import (
    add_json_argument,
    add_topology_arguments,
    check_outputs,
    emit_json,
    format_table,
    nonnegative_float,
    nonnegative_int,
    placement,
    positive_float,
    positive_int,
    size_text,
    write_instance,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="adversarial searches: worst cases of bounds and schedulers")
    ss = p.add_subparsers(dest="search_command", metavar="SEARCH", required=True)
    g = ss.add_parser(
        "gap", help="a small instance maximizing OPT / bound or heuristic / OPT",
        description="Simulated annealing with restarts over small integer instances (unit-"
        "capacity big switch, or its ports put on a network with --topology) for the largest "
        "OPT / bound (--bound) or scheduler / OPT (--scheduler), both of sum w_k C_k; OPT is "
        "proven by the exact solver and the winner re-checked.")
    target = g.add_mutually_exclusive_group(required=True)
    target.add_argument("--bound", metavar="NAME", help="a lower bound (coflowopt bound --method "
                        "names them, or best): maximize OPT / bound")
    target.add_argument("--scheduler", metavar="NAME",
                        help="a simulator policy: maximize its sum w_k C_k / OPT")
    d = {k: v.default for k, v in inspect.signature(gap_search).parameters.items()}
    options = (  # name, type, metavar, help, note after the default (the defaults: gap_search's)
        ("ports", positive_int, "P", "ports", ""),
        ("coflows", positive_int, "K", "coflows", ""),
        ("max_flows", positive_int, "F", "most flows per coflow", ""),
        ("max_size", positive_int, "N", "flow sizes are integers 1..N", ""),
        ("max_release", nonnegative_int, "N", "releases are integers 0..N", "; 0: all at time 0"),
        ("max_weight", positive_int, "N", "weights are integers 1..N", "; 1: unweighted"),
        ("iterations", positive_int, "N", "candidates to evaluate", ""),
        ("restart", positive_int, "N", "a new random instance after N moves without improvement",
         ""),
        ("temperature", nonnegative_float, "T", "the annealing's temperature at each restart, in "
         "units of the ratio", "; 0: hill climbing"),
        ("seed", nonnegative_int, None, "random seed", ""),
        ("time_limit", positive_float, "S", "seconds for the whole search (the best instance's "
         f"re-check takes at most {d['eval_limit']:g} s more)", ""),
    )
    for name, kind, metavar, text, note in options:
        g.add_argument("--" + name.replace("_", "-"), type=kind, default=d[name], metavar=metavar,
                       help=f"{text} (default {d[name]:g}{note})")
    g.add_argument("--out", metavar="FILE", default=None,
                   help="write the worst instance found (native JSON, the ratio in its name)")
    add_topology_arguments(g)
    add_json_argument(g)
    g.set_defaults(func=run_gap)


def run_gap(args: argparse.Namespace) -> int:
    check_outputs(args, [("--out", args.out)])
    on = placement(args)
    if args.topology is not None:  # a bad fabric for this many ports: now, not in the search
        on(Instance(Fabric.uniform(args.ports),
                    (Coflow.from_flows("C1", [(args.ports - 1, 0, 1.0)]),)))

    live = not args.json and sys.stderr is not None and sys.stderr.isatty()
    shown: list[int] = []

    def progress(iteration: int, ratio: float) -> None:
        # on a terminal, each improvement as it comes; the table of them all follows the search
        if live:
            if not shown:
                print(f"{'iteration':>9}  best ratio", file=sys.stderr)
            shown.append(iteration)
            print(f"{iteration:>9}  {ratio:.6g}", file=sys.stderr, flush=True)
    res = gap_search(
        bound=args.bound, scheduler=args.scheduler, ports=args.ports, coflows=args.coflows,
        max_flows=args.max_flows, max_size=args.max_size, max_release=args.max_release,
        max_weight=args.max_weight, iterations=args.iterations, restart=args.restart,
        temperature=args.temperature, seed=args.seed, time_limit=args.time_limit,
        on=None if args.topology is None else on, progress=progress)
    if res.instance is not None and args.out:
        write_instance(args, res.instance, args.out, "json", metadata=_metadata(args, res))
    if args.json:
        emit_json(_to_json(res, args))
    else:
        print(_report(res, args))
    return 0 if res.instance is not None else 1


def _labels(res: GapSearchResult) -> tuple[str, str]:
    kind, name = res.target.split(" ", 1)
    return ("OPT", name) if kind == "bound" else (name, "OPT")


def _metadata(args: argparse.Namespace, res: GapSearchResult) -> dict[str, object]:
    top, bottom = _labels(res)
    exact = "" if res.fraction is None else f" = {res.fraction}"
    return {
        "_source": "coflowopt search gap " + " ".join(_command(args)),
        "_description": f"A worst case found by the gap search: {top} / {bottom} of sum w_k C_k "
        f"is {res.numerator:.10g} / {res.denominator:.10g}{exact} = {res.ratio:.6g}, with the "
        "optimum proven by the exact solver and the other side recomputed on this instance.",
        "_ratio": {"what": f"{top} / {bottom} of sum w_k C_k", "ratio": res.ratio,
                   "fraction": None if res.fraction is None else str(res.fraction),
                   top: res.numerator, bottom: res.denominator},
    }


def _command(args: argparse.Namespace) -> list[str]:
    target = ["--bound", args.bound] if args.bound else ["--scheduler", args.scheduler]
    return [*target, "--ports", str(args.ports), "--coflows", str(args.coflows),
            "--max-flows", str(args.max_flows), "--max-size", str(args.max_size),
            "--max-release", str(args.max_release), "--max-weight", str(args.max_weight),
            "--iterations", str(args.iterations), "--restart", str(args.restart),
            "--temperature", repr(float(args.temperature)), "--seed", str(args.seed),
            "--time-limit", f"{args.time_limit:g}",
            *(["--topology", args.topology] if args.topology else []),
            *(["--routing", args.routing] if args.routing else []),
            *(["--routing-seed", str(args.routing_seed)] if args.routing_seed is not None else [])]


def _to_json(res: GapSearchResult, args: argparse.Namespace) -> dict[str, object]:
    return {
        "target": res.target, "ratio": res.ratio, "numerator": res.numerator,
        "denominator": res.denominator,
        "fraction": None if res.fraction is None else str(res.fraction),
        "iterations": res.iterations, "evaluated": res.evaluated, "stopped": res.stopped,
        "runtime": res.runtime, "history": [list(h) for h in res.history],
        "instance": None if res.instance is None else res.instance.name,
        "out": None if res.instance is None else args.out,  # (nothing found: nothing written)
    }


def _report(res: GapSearchResult, args: argparse.Namespace) -> str:
    if res.instance is None:
        return (f"no candidate evaluated within the time limit ({res.iterations} iterations, "
                f"{res.runtime:.3g} s): nothing found")
    top, bottom = _labels(res)
    lines = [format_table(res.history, ["iteration", "best ratio"],
                          title=f"search for the worst {top} / {bottom} ({res.target})"), ""]
    exact = "" if res.fraction is None else f" = {res.fraction}"
    lines.append(f"{top} / {bottom} = {res.numerator:.10g} / {res.denominator:.10g}{exact} "
                 f"= {res.ratio:.6g}")
    checked = bottom if top == "OPT" else top
    lines.append(f"on {size_text(res.instance)}; re-checked: optimum proven, {checked} recomputed")
    lines.append(f"{res.iterations} iterations ({res.evaluated} evaluated), stopped by "
                 f"{res.stopped.replace('_', ' ')}, {res.runtime:.3g} s")
    if args.out:
        lines.append(f"wrote {args.out}")
    return "\n".join(lines)
