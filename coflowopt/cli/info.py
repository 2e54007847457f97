"""``coflowopt info`` and ``coflowopt validate``."""

from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

from .._text import bin_rule, value_text
from ..errors import CoflowoptError, InputError
from ..fabric import ROUTINGS, Network, parse_topology
from ..fabric.network import is_routing_seed
from ..instance import BINS, MB, Instance
from ..io.generate import offered_load
from ..io.schedule_file import read_schedule_file, schedule_format
from ..schedule import MAX_TOL, Schedule, check_feasible, subset_schedule
from ._util import (
    add_input_arguments,
    add_json_argument,
    add_topology_arguments,
    emit_json,
    format_table,
    load_instance,
    placement,
    placement_options,
    placement_record,
    plural,
    positive_float,
    positive_int,
    read_instance,
    size_text,
    size_unit,
    time_unit,
)


def _tolerance(text: str) -> float:
    value = positive_float(text)
    if value > MAX_TOL:
        raise argparse.ArgumentTypeError(f"expected a tolerance of at most {MAX_TOL:g}, got '{text}'")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="describe an instance: sizes, widths, bins, loads")
    add_input_arguments(p)
    add_topology_arguments(p)
    add_json_argument(p)
    p.add_argument(
        "--short-length",
        type=positive_float,
        default=5.0,
        metavar="MB",
        help="a coflow is short if its longest flow is below this many MB (default 5; MB of "
        "2^20 bytes, or of 2^20 size units for a JSON instance, whose format states no unit)",
    )
    p.add_argument(
        "--narrow-width",
        type=positive_int,
        default=50,
        metavar="N",
        help="a coflow is narrow if it has at most N flows (default 50)",
    )
    p.set_defaults(func=run_info)

    v = sub.add_parser("validate", help="check an instance file (and optionally a schedule for it)")
    add_input_arguments(v)
    add_topology_arguments(v)
    add_json_argument(v)
    v.add_argument("--schedule", metavar="SCHEDULE",
                   help="a schedule file to verify: SCHEDULE.json (coflowopt-schedule/1) or "
                   "SCHEDULE.npz (compact binary)")
    v.add_argument("--tol", type=_tolerance, default=1e-6,
                   help=f"relative tolerance, at most {MAX_TOL:g} (default 1e-6)")
    v.add_argument("--deadlines", action="store_true", help="also require every deadline to be met")
    v.set_defaults(func=run_validate)


def describe(inst: Instance, *, short_length: float = 5 * MB, narrow_width: int = 50) -> dict:
    """The facts ``info`` reports, as a JSON-ready dict."""
    labels = inst.bins(short_length=short_length, narrow_width=narrow_width)
    total = float(inst.size.sum())
    bins = {}
    for b in BINS:
        sel = labels == b
        bins[b] = {
            "coflows": int(sel.sum()),
            "fraction_coflows": float(sel.mean()) if inst.num_coflows else 0.0,
            "fraction_bytes": float(inst.size[sel].sum() / total) if total else 0.0,
        }
    cap = inst.fabric.capacity
    span = float(inst.release.max() - inst.release.min()) if inst.num_coflows else 0.0
    port_load = inst.load.sum(axis=0)
    busy = port_load / cap
    return {
        "fabric": _fabric_facts(inst, busy),
        "name": inst.name,
        "ports": inst.num_ports,
        "coflows": inst.num_coflows,
        "flows": inst.num_flows,
        "total_size": total,
        "capacity": {"min": float(cap.min()), "max": float(cap.max()), "uniform": inst.fabric.is_uniform},
        "release": {
            # (min's initial=0 made every first release 0, below releases of 5 and 7)
            "first": float(inst.release.min()) if inst.num_coflows else 0.0,
            "last": float(inst.release.max()) if inst.num_coflows else 0.0,
            "span": span,
        },
        "width": _stats(inst.width),
        "length": _stats(inst.length),
        "size": _stats(inst.size),
        "gamma": _stats(inst.gamma),
        "bins": bins,
        "bin_thresholds": {"short_length": short_length, "narrow_width": narrow_width},
        "bottleneck_time": float((port_load / cap).max(initial=0.0)),
        "offered_load": offered_load(inst) if span > 0 else None,
        "weights": bool(np.any(inst.weight != 1.0)),
        "deadlines": int(np.isfinite(inst.deadline).sum()),
        "dependencies": int(
            sum(a.size for a in inst.starts_after) + sum(b.size for b in inst.finishes_before)
        ),
        "multi_wave": inst.is_multi_wave,
    }


def _fabric_facts(inst: Instance, busy: np.ndarray) -> dict:
    """The fabric: the big switch's ports, or a network's hosts, switches, links, capacities,
    oversubscription, and the links the instance's flows cross."""
    fab = inst.fabric
    if not isinstance(fab, Network):
        return {"topology": "big switch", "ports": inst.num_ports, "links": fab.num_links}
    out = fab.describe()
    hops = np.diff(inst.routes.indptr)
    out["flow_links"] = _stats(hops)
    top = int(np.argmax(busy)) if busy.size else -1
    out["busiest_link"] = fab.link_name(top) if top >= 0 and busy[top] > 0 else None
    return out


def _fabric_lines(fab: dict) -> list[str]:
    """``info``'s text about a network."""
    if fab["topology"] == "big switch":
        return []
    params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in fab["params"].items()
                       if v is not None and not isinstance(v, list))
    lines = [f"fabric: {fab['topology']}" + (f" ({params})" if params else "")
             + f", routing {fab['routing']}"
             + (f" (seed {fab['routing_seed']})" if "routing_seed" in fab else ""),
             f"  {plural(fab['hosts'], 'host')}, {plural(fab['switches'], 'switch', 'switches')}, "
             f"{plural(fab['links'], 'directed link')}"]
    hc, sc = fab["host_capacity"], fab["switch_capacity"]
    text = f"  host links {hc['min']:g}" + ("" if hc["max"] == hc["min"] else f" to {hc['max']:g}")
    if sc is not None:
        text += f", switch links {sc['min']:g}" + ("" if sc["max"] == sc["min"] else f" to {sc['max']:g}")
    if "oversubscription" in fab:
        text += f"; oversubscription {fab['oversubscription']:.4g}:1"
    lines.append(text)
    if "path_hops" in fab:
        lines.append("  links per path: " + ", ".join(
            f"{k} {v} ({plural(fab['paths'][k], 'equal-cost path')})" for k, v in fab["path_hops"].items()))
    fl = fab["flow_links"]
    if fl["max"] is not None:
        lines.append(f"  the flows cross {fl['min']:g} to {fl['max']:g} links (mean {fl['mean']:.3g})"
                     + (f"; busiest: {fab['busiest_link']}" if fab["busiest_link"] else ""))
    return lines


def _stats(x: np.ndarray) -> dict:
    if x.size == 0:
        return {"min": None, "mean": None, "max": None}
    return {"min": float(x.min()), "mean": float(x.mean()), "p50": float(np.median(x)), "max": float(x.max())}


def run_info(args: argparse.Namespace) -> int:
    inst = load_instance(args)
    facts = describe(inst, short_length=args.short_length * MB, narrow_width=args.narrow_width)
    facts["bin_thresholds"]["short_length_mb"] = args.short_length
    facts["bin_thresholds"]["size_unit"] = size_unit(args)
    if args.json:
        emit_json(facts)
        return 0
    out = sys.stdout
    out.write(f"{facts['name'] or args.file}: {size_text(inst)}\n")
    for line in _fabric_lines(facts["fabric"]):
        out.write(line + "\n")
    cap = facts["capacity"]
    out.write(f"capacity per link: {cap['min']:g}" + ("" if cap["uniform"] else f" to {cap['max']:g}") + "\n")
    out.write(
        f"total size: {facts['total_size']:.6g}; releases from {facts['release']['first']:g} "
        f"to {facts['release']['last']:g}\n"
    )
    out.write(
        f"busiest link needs {facts['bottleneck_time']:.6g} {time_unit(args)} alone"
        + (f"; offered load {facts['offered_load']:.3g}" if facts["offered_load"] else "")
        + "\n"
    )
    extras = [
        plural(facts["deadlines"], "deadline") if facts["deadlines"] else "",
        plural(facts["dependencies"], "dependency", "dependencies") if facts["dependencies"] else "",
        "weights" if facts["weights"] else "",
        "multi-wave flows" if facts["multi_wave"] else "",
    ]
    if any(extras):
        out.write("has " + ", ".join(e for e in extras if e) + "\n")
    rows = [
        [name, s["min"], s.get("p50"), s["mean"], s["max"]]
        for name, s in (
            ("width", facts["width"]),
            ("length", facts["length"]),
            ("size", facts["size"]),
            ("gamma", facts["gamma"]),
        )
    ]
    out.write("\n" + format_table(rows, ["attribute", "min", "median", "mean", "max"]) + "\n\n")
    rows = [
        [b, v["coflows"], 100 * v["fraction_coflows"], 100 * v["fraction_bytes"]]
        for b, v in facts["bins"].items()
    ]
    unit = size_unit(args)
    title = f"bins ({bin_rule(args.short_length * MB, args.narrow_width, unit)})"
    headers = ["bin", "coflows", "% coflows", "% bytes" if unit == "B" else "% size"]
    out.write(format_table(rows, headers, title=title) + "\n")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    if args.deadlines and not args.schedule:
        raise InputError("--deadlines checks a schedule's deadlines; give one with --schedule")
    base = read_instance(args)
    inst = placement(args)(base)
    result: dict = {"file": args.file, "valid": True, "coflows": inst.num_coflows, "flows": inst.num_flows}
    code = 0
    if args.schedule:
        sched, meta = read_schedule_file(args.schedule, inst)
        made_on, same = _made_on(meta, args, base, inst)
        rejected = meta.get("rejected", [])
        after = set(meta.get("served_after", []))
        checked, sched = _without(inst, sched, rejected, args.schedule)
        if after:  # served once the admitted coflows are done: their deadlines do not count
            checked = checked.replace(coflows=tuple(
                dataclasses.replace(c, deadline=None) if c.id in after else c
                for c in checked.coflows))
        report = check_feasible(checked, sched, args.tol, deadlines=args.deadlines)
        result["schedule"] = {
            "file": args.schedule,
            "rejected": rejected,
            "served_after": sorted(after),
            "feasible": report.ok,
            "counts": {k: v for k, v in report.counts.items() if v},
            "violations": [
                {
                    "kind": v.kind,
                    "message": v.message,
                    "coflow": v.coflow,
                    "flow": v.flow,
                    "link": v.link,
                    "interval": v.interval,
                    "excess": v.excess,
                }
                for v in report.violations
            ],
            "peak_link_utilization": report.max_link_utilization,
        }
        if made_on is not None:
            result["schedule"]["made_on"] = made_on
        code = 0 if report.ok else 1
    if args.json:
        emit_json(result)
        return code
    print(f"{args.file}: valid instance ({size_text(inst)})")
    if args.schedule:
        here = placement_record(args)
        if made_on is not None and here is not None and same is False:
            print(f"coflowopt: note: {args.schedule} was made on {placement_options(made_on)}; "
                  f"checked here on {placement_options(here)}, another network or routing",
                  file=sys.stderr)
        if rejected:
            print(f"{args.schedule}: checked on the {plural(checked.num_coflows, 'coflow')} it "
                  f"serves; the {len(rejected)} it rejects (its _rejected) "
                  f"{'is' if len(rejected) == 1 else 'are'} left out")
        if after and args.deadlines:
            print(f"{args.schedule}: the {len(after)} it serves after the admitted ones (its "
                  f"_served_after) {'is' if len(after) == 1 else 'are'} checked without "
                  f"{'its deadline' if len(after) == 1 else 'their deadlines'}")
        print(f"{args.schedule}: {report}")
    return code


def _made_on(meta: dict, args: argparse.Namespace, base: Instance,
             inst: Instance) -> tuple[dict | None, bool | None]:
    """The network a schedule file says it was made on (its ``placement``: the options of
    :func:`placement_record`), checked, and whether it is ``inst``'s (``base`` put where the
    options say; ``None``: not asked, or the file has its own fabric). A schedule made on a
    network is not checked on the big switch, where that network's links would go
    unchecked."""
    made = meta.get("placement")
    if made is None:
        return None, None
    where = "$._placement" if schedule_format(args.schedule).name == "json" else "metadata.placement"

    def bad(key: str, what: str) -> InputError:
        return InputError(f"{what}, got {value_text(made[key]) if key else value_text(made)}",
                          path=args.schedule, json_path=f"{where}.{key}" if key else where)
    if not isinstance(made, dict):
        raise bad("", 'a placement is {"topology": SPEC, "routing": "ecmp" or "spray", '
                      '"routing_seed": N (ecmp only)}')
    for key in made:
        if key not in ("topology", "routing", "routing_seed"):
            raise bad(key, "not a key of a placement (topology, routing, routing_seed)")
    for key in ("topology", "routing"):
        if key not in made:
            raise InputError(f"a placement needs its {key}", path=args.schedule, json_path=where)
    if not isinstance(made["topology"], str):
        raise bad("topology", "the topology is a --topology SPEC")
    if made["routing"] not in ROUTINGS[:2]:
        raise bad("routing", "the routing is \"ecmp\" or \"spray\"")
    if "routing_seed" in made and made["routing"] != "ecmp":
        raise bad("routing_seed", "a routing seed is ECMP's; spray has none")
    if "routing_seed" in made and not is_routing_seed(made["routing_seed"]):
        raise bad("routing_seed", "the routing seed is an integer from 0 to 2**64 - 1")
    try:
        parse_topology(made["topology"])
    except InputError as exc:
        raise InputError(exc.message, path=args.schedule, json_path=f"{where}.topology") from None
    if placement_record(args) is None:
        if not isinstance(inst.fabric, Network):
            raise InputError(f"was made on a network ({placement_options(made)}): give those "
                             "options to check it there (on the big switch, that network's "
                             "links would go unchecked)", path=args.schedule)
        return made, None  # (the file's own network: the options cannot be put on it)
    # the recorded network rebuilt (the options as written may differ from the ones given
    # here: defaults, a graph file's path) and compared with the one checked on
    try:
        other = placement(argparse.Namespace(topology=made["topology"], routing=made["routing"],
                                             routing_seed=made.get("routing_seed")))(base)
    except CoflowoptError as exc:
        raise InputError(f"cannot be rebuilt: {exc}", path=args.schedule,
                         json_path=f"{where}.topology") from None
    return made, _same_links_and_routes(inst, other)


def _same_links_and_routes(a: Instance, b: Instance) -> bool:
    """Whether two placements of one file have the same links (by name, with the same
    capacities) and route every flow over the same links with the same shares, whatever
    order their graph files list the links in."""
    fa, fb = a.fabric, b.fabric
    if fa.num_links != fb.num_links or a.routes.shape != b.routes.shape:
        return False
    names_a = np.array([fa.link_name(i) for i in range(fa.num_links)])
    names_b = np.array([fb.link_name(i) for i in range(fb.num_links)])
    pa, pb = np.argsort(names_a, kind="stable"), np.argsort(names_b, kind="stable")
    if not (np.array_equal(names_a[pa], names_b[pb])
            and np.array_equal(np.asarray(fa.capacity)[pa], np.asarray(fb.capacity)[pb])):
        return False
    return bool((a.routes[:, pa] != b.routes[:, pb]).nnz == 0)


def _without(inst: Instance, sched: Schedule, rejected: list[str],
             path: str) -> tuple[Instance, Schedule]:
    """The instance without the coflows a (deadline) schedule rejects, and the schedule's
    flows renumbered for it; a piece of a rejected coflow is an error."""
    if not rejected:
        return inst, sched
    out = set(rejected)
    keep = [k for k in range(inst.num_coflows) if inst.ids[k] not in out]
    flows = [sched.direct.flow] + ([sched.tied.flow] if sched.tied is not None else [])
    k_of = inst.flow_coflow[np.concatenate(flows)]
    served = [inst.ids[k] for k in np.unique(k_of) if inst.ids[k] in out]
    if served:
        raise InputError(f"coflow '{served[0]}' is listed in _rejected but has pieces", path=path)
    return subset_schedule(inst, sched, keep)
