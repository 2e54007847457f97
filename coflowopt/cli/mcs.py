"""``coflowopt mcs``: MCS workload statistics, SNCF classification, M/M/1 thresholds, sweeps."""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from collections.abc import Callable

import numpy as np

from ..errors import CoflowoptError, InputError
from ..instance import MB, Instance
from ..io.generate import offered_load, rescale_load
from ..mcs import classification as mcs_classify
from ..mcs import stats as mcs_stats
from ..mcs import sweeps as mcs_sweeps
from ..mcs import thresholds as mcs_thr
from ..result import Status
from ._util import (
    add_input_arguments,
    add_json_argument,
    check_outputs,
    check_plot,
    emit_json,
    format_table,
    load_instance,
    naming,
    nonnegative_int,
    plural,
    positive_float,
    positive_int,
    save_plot,
)


def _items(text: str) -> list[str]:
    """The comma-separated items of ``text``; an empty item (a comma too many) is refused."""
    items = [x.strip() for x in text.split(",")]
    if not all(items):
        raise argparse.ArgumentTypeError(f"an empty item in '{text}' (a comma too many)")
    return items


def _increasing(text: str, ok: Callable[[float], bool], wants: str) -> list[float]:
    """Comma-separated numbers, each ``ok``, strictly increasing (else: expected ``wants``)."""
    try:
        values = [float(x) for x in _items(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got '{text}'") from None
    if not values or not all(map(ok, values)):
        raise argparse.ArgumentTypeError(f"expected {wants}, got '{text}'")
    if any(b <= a for a, b in itertools.pairwise(values)):
        raise argparse.ArgumentTypeError(f"expected strictly increasing values, got '{text}'")
    return values


def _mb_list(text: str) -> list[float]:
    return _increasing(text, lambda v: math.isfinite(v * MB) and v > 0,
                       f"numbers > 0 whose bytes (x {MB}) are finite")


def _factor_list(text: str) -> list[float]:
    return _increasing(text, lambda v: math.isfinite(v) and v >= 1,
                       "finite numbers >= 1 (each queue's threshold E times the one before)")


def _scale_list(text: str) -> list[float]:
    return _increasing(text, lambda v: math.isfinite(v) and v > 0, "finite numbers > 0")


def _queue_counts(text: str) -> list[int]:
    try:
        values = [int(x) for x in _items(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got '{text}'") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got '{text}'")
    if len(set(values)) < len(values):
        raise argparse.ArgumentTypeError(f"a value listed twice in '{text}'")
    if max(values) > mcs_thr.MAX_QUEUES:
        raise argparse.ArgumentTypeError(f"at most {mcs_thr.MAX_QUEUES} queues, got {max(values)}")
    return values


def _queue_count(text: str) -> int:
    """``--queues K``: an integer from 1 to :data:`~coflowopt.mcs.thresholds.MAX_QUEUES`."""
    values = _queue_counts(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one integer, got '{text}'")
    return values[0]


def _load(inst: Instance, args: argparse.Namespace) -> float:
    """``--load``, else the offered load of the instance (the file ``args.file``)."""
    value = args.load
    if value is not None:
        if not 0 < value < 1:
            raise CoflowoptError(f"--load must be in (0, 1) for the M/M/1 model, got {value:g}")
        return value
    rho = offered_load(inst)
    if not (math.isfinite(rho) and 0 < rho < 1):
        why = (" (it needs coflows that arrive over time)" if not math.isfinite(rho) else "")
        raise InputError(f"the offered load is {rho:g}{why}, not in (0, 1); pass --load RHO for "
                         "the M/M/1 model", path=str(args.file))
    return rho


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcs",
        help="MCS theory: workload statistics, SNCF classification, M/M/1 demotion thresholds",
        description="Workload statistics (MCS Table I), SNCF width classification (Algorithm 1 and "
        "its exact optimum) and demotion thresholds under the M/M/1 model of MCS Eqs. (4)-(5).",
    )
    msub = p.add_subparsers(dest="mcs_command", metavar="SUBCOMMAND", required=True)

    s = msub.add_parser("stats", help="Pearson correlations of width, size, minimal CCT, length (Table I)")
    add_input_arguments(s)
    add_json_argument(s)
    s.set_defaults(func=run_stats)

    c = msub.add_parser("classify", help="SNCF width thresholds and initial priorities")
    add_input_arguments(c)
    add_json_argument(c)
    c.add_argument(
        "--classes", type=positive_int, default=None, metavar="N", help="number of classes (default 5)"
    )
    c.add_argument(
        "--size-thresholds",
        type=_mb_list,
        default=None,
        metavar="MB,...",
        help="size thresholds T_1..T_{N-1} in MB (default 10^i MB)",
    )
    c.add_argument("--method", choices=sorted(mcs_classify.METHODS), default="exact", help="default: exact")
    c.add_argument("--step", type=positive_float, default=10.0,
                   help="Algorithm 1's Step, for the published method (both methods run; the other "
                   "one is printed for comparison) (default 10)")
    c.add_argument(
        "--compare",
        choices=["le", "lt"],
        default="le",
        help="Algorithm 1's loop test: 'le' as printed (default) or 'lt' as the prose says",
    )
    c.set_defaults(func=run_classify)

    t = msub.add_parser("thresholds", help="demotion thresholds under the M/M/1 model (Eqs. 4-5)")
    add_input_arguments(t)
    add_json_argument(t)
    t.add_argument("--queues", type=_queue_count, required=True, metavar="K", help="number of queues")
    t.add_argument("--load", type=positive_float, default=None, metavar="RHO", help="default: offered load")
    t.add_argument("--scheme", choices=list(mcs_thr.SCHEMES), default="single", help="default: single")
    t.add_argument("--solver", choices=list(mcs_thr.SOLVERS), default="optimize", help="default: optimize")
    t.add_argument(
        "--initial",
        choices=["top", "paper", "published", "exact"],
        default=None,
        help="initial queues: all in queue 1 (top), Delta_i = 10^i with p_i = i (paper), or SNCF "
        "computed here (default: top for single, paper otherwise)",
    )
    t.add_argument("--wide-width", type=nonnegative_int, default=None, metavar="N",
                   help="double scheme: wide if > N flows (default 50)")
    t.add_argument("--numerator", choices=list(mcs_thr.NUMERATORS), default="class", help="default: class")
    t.add_argument("--seed", type=nonnegative_int, default=None,
                   help="optimize solver: its seed (default 0)")
    t.add_argument(
        "--grid", type=positive_int, default=None, metavar="G", help="grid solver: G points per family"
    )
    t.add_argument(
        "--no-check",
        action="store_true",
        help="skip the exact check (DP or exhaustive grid) that runs when it is small enough",
    )
    t.set_defaults(func=run_thresholds)

    v = msub.add_parser(
        "validate", help="simulate Aalo and MCS with default and model-optimized thresholds beside the model"
    )
    add_input_arguments(v)
    add_json_argument(v)
    v.add_argument(
        "--queues", type=_queue_count, default=10, metavar="K", help="number of queues (default 10)"
    )
    v.add_argument("--load", type=positive_float, default=None, metavar="RHO",
                   help="the model's load; the simulations run on the instance with its arrivals "
                   "rescaled to it (default: the instance's offered load, arrivals as they are)")
    v.add_argument(
        "--configs",
        default=",".join(_CONFIGS),
        metavar="NAME,...",
        help=f"configurations (default: all of {', '.join(_CONFIGS)})",
    )
    v.add_argument("--seed", type=nonnegative_int, default=0, help="optimizer seed (default 0)")
    v.add_argument(
        "--aalo-sharing",
        choices=["weighted", "strict"],
        default="weighted",
        help="how Aalo's queues share links: weighted (D-CLAS, default) or strict priority (CoflowSim)",
    )
    v.add_argument("--jobs", "-j", type=nonnegative_int, default=1, metavar="N",
                   help="run up to N simulations at once, each in its own process (0: one per CPU "
                   "this process may use; default 1); the results are the same")
    v.set_defaults(func=run_validate)

    w = msub.add_parser("sweep", help="model objective over published threshold rules (sensitivity)")
    add_input_arguments(w)
    add_json_argument(w)
    w.add_argument("--kind", choices=["aalo", "linear", "mcs"], default="aalo", help="default: aalo")
    w.add_argument("--load", type=positive_float, default=None, metavar="RHO", help="default: offered load")
    w.add_argument("--queues", type=_queue_counts, default=None, metavar="K,...", help="queue counts")
    w.add_argument("--factors", type=_factor_list, default=None, metavar="E,...",
                   help="aalo: spacing factors E")
    w.add_argument("--first", type=_mb_list, default=None, metavar="MB,...", help="aalo: Q1 values in MB")
    w.add_argument("--theta-n", type=_mb_list, default=None, metavar="MB,...", help="mcs: theta^n_1 values")
    w.add_argument("--theta-w", type=_mb_list, default=None, metavar="MB,...", help="mcs: theta^w_1 values")
    w.add_argument("--delta-scale", type=_scale_list, default=None, metavar="S,...", help="mcs: Delta scales")
    w.add_argument("--plot", metavar="OUT", default=None,
                   help="also save a plot: PNG, SVG or PDF by the suffix (needs matplotlib)")
    w.set_defaults(func=run_sweep)


# --------------------------------------------------------------------------- stats


def run_stats(args: argparse.Namespace) -> int:
    inst = load_instance(args)
    with naming(str(args.file)):
        corr = mcs_stats.correlations(inst)
        joint = mcs_stats.joint_distribution(inst)
    if args.json:
        emit_json(
            {
                "attributes": list(corr.attributes),
                "pearson": corr.pearson,
                "pearson_log10": corr.pearson_log,
                "ci_log10": corr.ci_log,
                "confidence": corr.confidence,
                "coflows": corr.num_coflows,
                "joint": {
                    "size_edges_mb": joint.size_edges / MB,
                    "width_edges": joint.width_edges,
                    "counts": joint.counts,
                },
            }
        )
        return 0
    out = sys.stdout
    title = (
        f"Pearson correlation, raw/log10 ({100 * corr.confidence:g}% interval of the log value), "
        f"{plural(corr.num_coflows, 'coflow')}"
    )
    out.write(format_table(corr.rows(), corr.headers(), title=title) + "\n\n")
    out.write(format_table(joint.rows(), joint.headers(), title="coflows by size and width") + "\n")
    return 0


# --------------------------------------------------------------------------- classify


def _class_rows(cls: mcs_classify.Classification) -> list[list[object]]:
    rows = []
    for i in range(cls.num_classes):
        lo = 0.0 if i == 0 else cls.width_thresholds[i - 1]
        hi = math.inf if i == cls.num_classes - 1 else cls.width_thresholds[i]
        q = cls.size_quantiles[i] / MB
        rows.append(
            [
                i + 1,
                f"[{lo:.12g}, {hi:.12g})",  # not %g's 6 digits: 3.0000003 printed as 3
                int(cls.priorities[i]),
                int(cls.count[i]),
                100 * cls.accuracy[i],
                q[0],
                q[2],
                q[4],
            ]
        )
    return rows


def run_classify(args: argparse.Namespace) -> int:
    if not args.step > 1:  # Algorithm 1 multiplies the width threshold by Step
        raise InputError(f"--step must be > 1, got {args.step:g}")
    given = args.size_thresholds
    if given is not None and args.classes is not None and len(given) + 1 != args.classes:
        raise InputError(f"--classes {args.classes} needs {args.classes - 1} --size-thresholds, "
                         f"got {len(given)}")
    if given is None and args.classes is not None:
        try:
            mcs_classify.default_size_thresholds(args.classes)
        except CoflowoptError as exc:
            raise InputError(f"--classes {args.classes}: {exc}") from None
    inst = load_instance(args)
    sizes = None if given is None else np.array(given) * MB
    common = {"size_thresholds": sizes, "classes": args.classes}
    options = {
        "published": {**common, "step": args.step, "compare": args.compare},
        "exact": common,
    }
    try:
        results = {name: mcs_classify.classify(inst, name, **opts)
                   for name, opts in options.items()}
    except CoflowoptError as exc:
        if str(exc).startswith("step "):  # (Algorithm 1's count of steps, from the widths)
            raise InputError(f"--{exc}") from None
        raise
    chosen = results[args.method]
    if args.json:
        emit_json(
            {
                "classification": chosen.as_dict(),
                "comparison": {
                    name: {"error": r.error, "width_thresholds": r.width_thresholds}
                    for name, r in results.items()
                },
            }
        )
        return 0
    out = sys.stdout
    t = ", ".join(f"{x:g}" for x in chosen.size_thresholds / MB) or "none"
    out.write(f"{inst.name or args.file}: {plural(inst.num_coflows, 'coflow')}, size thresholds "
              f"T (MB): {t}\n")
    out.write(
        format_table(
            _class_rows(chosen),
            ["class", "width", "priority", "coflows", "accuracy %", "min MB", "median MB", "max MB"],
            title=f"method {chosen.method}: error (Eq. 1) {chosen.error:.4f}, "
            f"misclassified {100 * chosen.misclassified:.1f}% of coflows, {1000 * chosen.runtime:.1f} ms",
        )
        + "\n"
    )
    for name, r in results.items():
        if name != args.method:
            d = ", ".join(f"{x:.12g}" for x in r.width_thresholds) or "none"
            out.write(f"{name}: Delta = {d}, error {r.error:.4f}\n")
    return 0


# --------------------------------------------------------------------------- thresholds


def run_thresholds(args: argparse.Namespace) -> int:
    # an option that does not apply is a mistake to point out, not to ignore
    for option, value, applies, when in (
        ("--seed", args.seed, args.solver == "optimize", "--solver optimize"),
        ("--grid", args.grid, args.solver == "grid", "--solver grid"),
        ("--wide-width", args.wide_width, args.scheme == "double", "--scheme double"),
    ):
        if value is not None and not applies:
            raise InputError(f"{option} applies only with {when}")
    args.seed = 0 if args.seed is None else args.seed
    args.wide_width = 50 if args.wide_width is None else args.wide_width
    inst = load_instance(args)
    rho = _load(inst, args)
    options: dict[str, object] = {"queues": args.queues, "load": rho, "numerator": args.numerator}
    initial = args.initial or ("top" if args.scheme == "single" else "paper")
    if args.scheme == "per-class":
        if initial == "top":
            raise CoflowoptError("--initial top does not apply to --scheme per-class (classes start in p_i)")
        options["classification"] = initial
    else:
        options["initial"] = initial
    if args.scheme == "double":
        options["wide_width"] = args.wide_width
    model = mcs_thr.build_model(inst, args.scheme, **options)
    solver_opts: dict[str, object] = {}
    if args.solver == "optimize":
        solver_opts["seed"] = args.seed
    if args.solver == "grid" and args.grid is not None:
        solver_opts["grid"] = args.grid
    try:
        sol = mcs_thr.solve_thresholds(model, args.solver, **solver_opts)
    except mcs_thr.DPTooLarge as exc:
        raise CoflowoptError(f"--solver dp: {exc.what}; use --solver optimize, or --solver grid "
                             "with few points (--grid G)") from None
    check = skipped = None
    if not args.no_check and sol.status is not Status.OPTIMAL:
        check, skipped = _exact_check(model)
    if args.json:
        emit_json(
            {
                "scheme": args.scheme,
                "queues": args.queues,
                "load": rho,
                "initial": initial,
                "numerator": args.numerator,
                "solution": sol.as_dict(),
                "exact_check": None if check is None else check.as_dict(),
                "exact_check_skipped": skipped,
            }
        )
        return 0
    out = sys.stdout
    out.write(
        f"{inst.name or args.file}: {args.scheme} scheme, K = {plural(args.queues, 'queue')}, "
        f"load {rho:.4g}, "
        f"initial queues: {initial}\n"
    )
    rows = []
    for f, name in enumerate(sol.families):
        rows.append([name, "default", *(sol.default_thresholds[f] / MB)])
        rows.append([name, sol.method, *(sol.thresholds[f] / MB)])
    headers = ["family", "thresholds", *(f"theta_{j} MB" for j in range(1, args.queues))]
    out.write(format_table(rows, headers) + "\n")
    out.write(
        f"model objective (Eq. 5): default {sol.default_objective:.6g}, {sol.method} {sol.objective:.6g} "
        f"({100 * abs(sol.improvement):.2f}% {'lower' if sol.improvement >= 0 else 'higher'}), "
        f"status {sol.status.value}, {sol.runtime:.3f} s\n"
    )
    if check is not None:
        # relative: the model's objective scales with the load (1e-300 at a load of 1e-300)
        agree = ("agrees" if sol.objective <= check.objective + 1e-12 * abs(check.objective)
                 else "DOES NOT agree")
        out.write(f"exact check ({check.method}): {check.objective:.6g}; the {sol.method} result {agree}\n")
    elif skipped:
        out.write(f"exact check skipped: {skipped}\n")
    return 0


_DP_LIMIT = 3e8
_GRID_LIMIT = 2_000_000


def _exact_check(model: mcs_thr.ThresholdModel) -> tuple[mcs_thr.ThresholdSolution | None, str | None]:
    """The exact optimum when it is affordable: the DP, else the exhaustive grid over all candidates."""
    try:
        return mcs_thr.dp_thresholds(model, max_cells=_DP_LIMIT), None
    except CoflowoptError:
        pass
    try:
        return mcs_thr.grid_search(model, max_evaluations=_GRID_LIMIT), None
    except CoflowoptError:
        return None, (
            f"the exact DP would visit more than {_DP_LIMIT:.0e} cells and the exhaustive grid "
            f"has more than {_GRID_LIMIT:,} combinations"
        )


# --------------------------------------------------------------------------- validate

_CONFIGS = ("aalo-default", "aalo-optimized", "mcs-default", "mcs-optimized")


def run_validate(args: argparse.Namespace) -> int:
    from ..mcs import validate as mcs_validate  # imports the simulator

    inst = load_instance(args)
    configs = tuple(c.strip() for c in args.configs.split(","))
    if not any(configs):
        raise InputError(f"--configs names no configuration, got '{args.configs}'")
    if not all(configs):
        raise InputError(f"--configs '{args.configs}' has an empty entry (a comma too many)")
    if len(set(configs)) < len(configs):
        raise InputError(f"--configs '{args.configs}' names a configuration twice")
    if inst.num_coflows < 2 or np.ptp(inst.release) == 0:
        # (no offered load to take, and --load rescales arrival times, which it cannot here)
        raise InputError("mcs validate simulates the instance's own arrivals, and its coflows "
                         f"all arrive at once{' (--offline)' if args.offline else ''}: give an "
                         "instance whose coflows arrive over time", path=args.file)
    rho = _load(inst, args)
    if args.load is not None:  # simulate at the load the model assumes
        inst = rescale_load(inst, rho)
    from ..sim.batch import cpu_count

    table = mcs_validate.validate(
        inst, queues=args.queues, load=rho, configs=configs, seed=args.seed, aalo_sharing=args.aalo_sharing,
        jobs=args.jobs or cpu_count(),
    )
    if args.json:
        emit_json({"title": table.title, "columns": list(table.columns), "rows": table.as_dicts()})
        return 0
    sys.stdout.write(format_table(table.rows, list(table.columns), title=table.title) + "\n")
    return 0


# --------------------------------------------------------------------------- sweeps


_SWEEP_OPTIONS = {"aalo": ("factors", "first"), "mcs": ("theta_n", "theta_w", "delta_scale"),
                  "linear": ()}
"""The options of each ``--kind`` beyond ``--queues`` (the others would be ignored)."""


def run_sweep(args: argparse.Namespace) -> int:
    for kind, names in _SWEEP_OPTIONS.items():
        for name in names:
            if kind != args.kind and getattr(args, name) is not None:
                raise InputError(f"--{name.replace('_', '-')} applies to --kind {kind}, "
                                 f"not {args.kind}")
    inst = load_instance(args)
    check_outputs(args, [("--plot", args.plot)])
    check_plot(args.plot, "--plot", "mcs sweep --plot")  # before the sweep
    rho = _load(inst, args)
    if args.kind == "aalo":
        opts: dict[str, object] = {}
        if args.queues:
            opts["queues"] = args.queues
        if args.factors:
            opts["factors"] = args.factors
        if args.first:
            opts["first"] = [v * MB for v in args.first]
        table = mcs_sweeps.aalo_sweep(inst, load=rho, **opts)  # type: ignore[arg-type]
        x = "Q1_mb" if args.first and not args.factors else "queues"
    elif args.kind == "linear":
        table = mcs_sweeps.linear_sweep(inst, load=rho, **({"queues": args.queues} if args.queues else {}))
        x = "queues"
    else:
        opts = {}
        if args.queues:
            if len(args.queues) != 1:
                raise CoflowoptError("--kind mcs takes one queue count")
            opts["queues"] = args.queues[0]
        for key, val in (("narrow_first", args.theta_n), ("wide_first", args.theta_w)):
            if val:
                opts[key] = [v * MB for v in val]
        if args.delta_scale:
            opts["delta_scale"] = args.delta_scale
        table = mcs_sweeps.mcs_sweep(inst, load=rho, **opts)  # type: ignore[arg-type]
        x = "theta_w1_mb" if args.theta_w else ("delta_scale" if args.delta_scale else "theta_n1_mb")
    if args.plot:
        # a line per combination of the other swept parameters (one line through all the
        # points mixed their series)
        swept = [c for c in ("queues", "E", "Q1_mb", "delta_scale", "theta_n1_mb", "theta_w1_mb")
                 if c in table.columns and c != x and len(set(table.column(c))) > 1]
        save_plot(mcs_sweeps.plot_sweep(table, x, group=swept), args.plot)
    if args.json:
        emit_json({"title": table.title, "columns": list(table.columns), "rows": table.as_dicts()})
        return 0
    sys.stdout.write(format_table(table.rows, list(table.columns), title=table.title) + "\n")
    return 0
