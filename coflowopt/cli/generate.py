"""``coflowopt generate``: synthetic workloads and re-timed arrivals."""

from __future__ import annotations

import argparse
import math
import sys

from .. import io
from ..errors import InputError
from ..instance import MB, Instance
from ..io import generate as gen
from ..io import sincronia
from ._util import (
    add_input_arguments,
    add_json_argument,
    check_outputs,
    emit_json,
    load_instance,
    nonnegative_float,
    nonnegative_int,
    port_rate,
    positive_float,
    positive_int,
    size_text,
    write_instance,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="generate workloads or re-time the arrivals of an instance")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)

    s = kinds.add_parser(
        "synthetic", help="random coflows from the Facebook trace's four bins (SN/LN/SW/LW)",
        description="Random coflows in the four bins of the Facebook trace, with their shares: "
        "short (longest flow below 5 MB) or long, narrow (at most 50 flows) or wide. Limits "
        "on width and length apply to every coflow; a bin they leave no room for is left "
        "out, its share going to the others (--max-width 4: narrow coflows of 1 to 4 flows). "
        "--load is the offered load the arrivals realise; MCS and Sincronia set an expected "
        "one instead (arrival rate x mean coflow size / capacity), which few coflows realise "
        "only roughly (10 coflows at 0.5: 0.68 on average).")
    s.add_argument("--coflows", type=positive_int, required=True, help="number of coflows")
    s.add_argument("--ports", type=positive_int, required=True, help="number of ports")
    s.add_argument(
        "--load",
        type=positive_float,
        default=None,
        help="offered load the arrivals realise, as `coflowopt info` prints it: total bytes / "
        "(span of the release times x total ingress capacity); Poisson inter-arrival gaps "
        "scaled together to give exactly this load (needs 2 or more coflows; default: all "
        "arrive at 0)",
    )
    s.add_argument(
        "--port-rate", type=port_rate, default=1.25e8, help="bytes/s per port (default 1.25e8)"
    )
    s.add_argument(
        "--min-width", type=positive_int, default=1, metavar="N",
        help="fewest flows of a coflow (default 1)",
    )
    s.add_argument(
        "--max-width", "--max-wide", type=positive_int, default=1000, metavar="N",
        help="most flows of a coflow: wide coflows have 51 to N (default 1000); below 51, "
        "none is wide and narrow ones have at most N",
    )
    s.add_argument(
        "--max-length-mb",
        type=positive_float,
        default=1024.0,
        help="largest flow of a coflow in MB: long coflows' longest flows lie in [5, this) "
        "(default 1024); below 5, no coflow is long",
    )
    s.add_argument(
        "--shape", choices=gen.SHAPES, default=None,
        help="flows: independent flows between random ports; shuffle: MapReduce shuffles "
        "(mappers send equal parts of each reducer's data), as in the Facebook trace "
        "(default: shuffle with --to benchmark, which holds only shuffles, else flows)",
    )
    s.set_defaults(func=run_synthetic)

    po = kinds.add_parser("poisson", help="re-time arrivals as a Poisson process at an offered load")
    add_input_arguments(po)
    po.add_argument("--load", type=positive_float, required=True,
                    help="offered load the arrivals realise (as `coflowopt info` prints it): "
                    "Poisson gaps scaled together to give exactly this load (2 or more coflows)")
    po.set_defaults(func=run_retime)

    b = kinds.add_parser("batch", help="arrivals in batches (Poisson batches at a load, or a fixed interval)")
    add_input_arguments(b)
    b.add_argument("--batch-size", type=positive_int, default=10,
                   help="coflows per batch, in file order (default 10; MCS)")
    group = b.add_mutually_exclusive_group(required=True)
    group.add_argument("--load", type=positive_float,
                       help="batches arrive as a Poisson process realising this offered load "
                       "(as `coflowopt info` prints it; 2 or more batches)")
    group.add_argument("--interval", type=nonnegative_float,
                       help="batches arrive every INTERVAL time units")
    b.set_defaults(func=run_retime)

    r = kinds.add_parser("rescale", help="stretch inter-arrival times to a target offered load")
    add_input_arguments(r)
    r.add_argument("--load", type=positive_float, required=True,
                   help="offered load the arrivals realise (as `coflowopt info` prints it): "
                   "total bytes / (span of the release times x total ingress capacity)")
    r.set_defaults(func=run_retime)

    d = kinds.add_parser("deadlines", help="Varys-style deadlines: max(min, Gamma (1 + U(0, slack)))")
    add_input_arguments(d)
    d.add_argument("--slack", type=nonnegative_float, default=1.0, help="U's range (default 1)")
    d.add_argument("--minimum", type=nonnegative_float, default=0.2,
                   help="in the instance's time unit (default 0.2)")
    d.set_defaults(func=run_retime)

    for sp in (s, po, b, r, d):
        sp.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (default 0)")
        sp.add_argument("-o", "--output", required=True, help="file to write")
        sp.add_argument(
            "--to", choices=sorted(io.FORMATS), default="json",
            help="output format (default json)" + (
                "; benchmark holds only full shuffles (--shape shuffle), and sincronia rounds "
                "sizes up to whole MB" if sp is s else "")
        )
        add_json_argument(sp)


def _finish(args: argparse.Namespace, inst: Instance) -> int:
    notes = write_instance(args, inst, args.output, args.to)
    if args.to != "json":  # the summary is of the file: a trace rounds sizes (and bins)
        inst = io.read(args.output, format=args.to, port_rate=float(inst.fabric.capacity[0]))
    load = gen.offered_load(inst)
    if args.json:
        emit_json(
            {
                "output": args.output,
                "format": args.to,
                "coflows": inst.num_coflows,
                "flows": inst.num_flows,
                "ports": inst.num_ports,
                "offered_load": load,
                "bins": inst.bin_counts(),
                "notes": notes,
            }
        )
    else:
        print(
            f"wrote {args.output}: {size_text(inst)}"
            + (f", offered load {load:.3g}" if load == load else "")
        )
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    return 0


def run_synthetic(args: argparse.Namespace) -> int:
    check_outputs(args, [("--output", args.output)])
    if args.max_width > gen.MAX_WIDTH:
        raise InputError(f"--max-width must be at most {gen.MAX_WIDTH:,}, got {args.max_width:,}")
    if args.min_width > args.max_width:
        raise InputError(f"--min-width {args.min_width} is above --max-width {args.max_width}")
    if not math.isfinite(args.max_length_mb * MB):
        raise InputError(f"--max-length-mb is too large for bytes in float64, got {args.max_length_mb:g}")
    if args.load is not None and args.coflows < 2:
        raise InputError("--load needs at least 2 coflows (the offered load is the data over "
                         "the span of the release times)")
    classes = gen.facebook_bins(min_width=args.min_width, max_width=args.max_width,
                                max_length=args.max_length_mb * MB)
    shape = args.shape or ("shuffle" if args.to == "benchmark" else "flows")
    if shape != "shuffle" and args.to == "benchmark":
        raise InputError("--to benchmark holds only full shuffles: use --shape shuffle")
    inst = gen.synthetic(
        args.coflows, args.ports, classes=classes, load=args.load, port_rate=args.port_rate,
        seed=args.seed, shape=shape,
    )
    if args.to == "sincronia" and args.load is not None:
        # the file holds whole megabytes: its load, not the unrounded one, is what was asked
        inst = gen.rescale_load(sincronia.round_sizes(inst), args.load)
    return _finish(args, inst)


def run_retime(args: argparse.Namespace) -> int:
    check_outputs(args, [("--output", args.output)])
    inst = load_instance(args)
    if args.kind == "poisson":
        inst = gen.poisson_arrivals(inst, args.load, seed=args.seed)
    elif args.kind == "batch":
        inst = gen.batch_arrivals(
            inst, args.batch_size, load=args.load, interval=args.interval, seed=args.seed
        )
    elif args.kind == "rescale":
        inst = gen.rescale_load(inst, args.load)
    else:
        inst = gen.deadlines_from_isolation(inst, slack=args.slack, minimum=args.minimum, seed=args.seed)
    return _finish(args, inst)
