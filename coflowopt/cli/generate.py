"""``coflowopt generate``: synthetic workloads, the papers' workloads, re-timed arrivals."""

from __future__ import annotations

import argparse
import math
import sys

from .. import io
from .._files import read_text
from ..errors import InputError
from ..instance import MB, Instance
from ..io import generate as gen
from ..io import sincronia
from ..io import workloads as wl
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
        help="largest flow of a coflow in MB: long coflows' longest flows lie in [5, this] "
        "(default 1024); at 5 or below, no coflow is long",
    )
    s.add_argument(
        "--shape", choices=gen.SHAPES, default=None,
        help="flows: independent flows between random ports; shuffle: MapReduce shuffles "
        "(mappers send equal parts of each reducer's data), as in the Facebook trace "
        "(default: shuffle with --to benchmark or coflowsim, which hold only shuffles, else flows)",
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

    cr = kinds.add_parser(
        "creek", help="the Creek paper's many-to-many coflows: the trace reshaped (TPC-DS, TAO)",
        description="Many-to-many coflows as the Creek paper's simulation makes them (§V-B): "
        "each coflow of the Facebook trace, in arrival order, keeps its id, arrival time and "
        "bytes (raised to --min-size-mb) and becomes a coflow of one pattern between hosts. "
        "tpcds: the first stage of TPC-DS query 42 (the shuffles of its three tables into "
        "the join, one coflow): senders in three groups carrying the tables' shares (their rows at scale "
        "factor 1), every receiver fed by every sender. tao: TAO's tiers (Creek's Figure 4): "
        "web servers each read from --min-fanin to --max-fanin followers of a shared pool; "
        "followers fetch --miss-ratio of what they serve from their leader, leaders that "
        "ratio again from their database. A coflow has as many receivers (web servers) and "
        "senders (followers) as the trace coflow has reducer and mapper racks, within the "
        "limits below; its receivers take its bytes in the proportions of the trace's "
        "reducers; every role is on its own host, drawn uniformly. Hosts are the ports of "
        "a big switch, numbered as a fabric's hosts.")
    cr.add_argument("--pattern", choices=wl.CREEK_PATTERNS, required=True,
                    help="tpcds: TPC-DS query 42's join shuffle; tao: TAO's read fan-out")
    cr.add_argument("--coflows", type=positive_int, metavar="N", default=None,
                    help="replay the trace's first N coflows by arrival (default all: 526, §V-B)")
    cr.add_argument("--hosts", type=positive_int, metavar="N", default=3456,
                    help="number of hosts (default 3456: the k = 24 fat-tree of §V-B)")
    cr.add_argument("--host-rate", type=port_rate, metavar="R", default=1.25e9,
                    help="bytes/s of each host's links (default 1.25e9: 10 Gbit/s, §V-B)")
    cr.add_argument("--min-size-mb", type=nonnegative_float, metavar="MB", default=6.0,
                    help="smallest coflow in MB; smaller trace coflows are raised to it "
                    "(default 6: the lower end of Table 2's size groups)")
    cr.add_argument("--min-receivers", type=positive_int, metavar="N", default=2,
                    help="fewest receivers of a coflow (default 2: the fewest of Creek's "
                    "testbed, §V-A, and of any many-to-many coflow)")
    cr.add_argument("--max-receivers", type=positive_int, metavar="N", default=None,
                    help="most receivers of a coflow (default: as many as the trace coflow's "
                    "reducers)")
    cr.add_argument("--min-senders", type=positive_int, metavar="N", default=2,
                    help="fewest senders (followers for tao) of a coflow (default 2; tpcds "
                    "takes at least 3, one per table)")
    cr.add_argument("--max-senders", type=positive_int, metavar="N", default=None,
                    help="most senders of a coflow (default: as many as the trace coflow's "
                    "mappers)")
    cr.add_argument("--min-fanin", type=positive_int, metavar="N", default=2,
                    help="tao: fewest followers a web server reads from (default 2: Creek's "
                    "testbed receivers serve 2 to 5 flows, §V-A)")
    cr.add_argument("--max-fanin", type=positive_int, metavar="N", default=5,
                    help="tao: most followers a web server reads from (default 5, §V-A)")
    cr.add_argument("--miss-ratio", type=_ratio, metavar="X", default=1 - wl.TAO_HIT_RATE,
                    help="tao: share of a follower's bytes it fetches from its leader, and of "
                    "a leader's from its database (default 0.036: TAO's 96.4%% hit rate, the "
                    "TAO paper; 0: web servers and followers only)")
    cr.add_argument("--load", type=positive_float, metavar="X", default=None,
                    help="offered load the arrivals realise (as `coflowopt info` prints it): "
                    "the trace's gaps scaled together, order and proportions kept (default: "
                    "the trace's own times)")
    _add_trace(cr)
    cr.set_defaults(func=run_creek)

    cf = kinds.add_parser(
        "coflourish", help="the Coflourish paper's Regular and Large loads from the trace",
        description="The Regular and Large traffic loads of the Coflourish paper (§II, §IV-A): "
        "regular coflows are the Facebook trace's, drawn uniformly with replacement (so "
        "their sizes and widths follow the trace's distribution), each mapper and reducer "
        "rack on its own host; large coflows have a size uniform in --large-min-mb to "
        "--large-max-mb and the structure of a trace coflow of that size. Arrivals are "
        "Poisson, at the trace's mean rate unless --rate or --load says otherwise; the "
        "first arrives at 0. The paper's background traffic (part of the load stripped of "
        "its coflows) and its spine-leaf fabric are not part of the workload.")
    cf.add_argument("--mix", choices=wl.COFLOURISH_MIXES, required=True,
                    help="regular: the trace's coflows only; large: a share of large coflows "
                    "(--large-share)")
    cf.add_argument("--large-share", type=_ratio, metavar="X", default=None,
                    help="with --mix large: share of the coflows that are large (default 0.5: "
                    "§II's Large load, read as half the coflows; §IV-C also runs 0.25 and 0.75)")
    cf.add_argument("--coflows", type=positive_int, metavar="N", default=1000,
                    help="number of coflows (default 1000, §IV-A)")
    cf.add_argument("--hosts", type=positive_int, metavar="N", default=3000,
                    help="number of hosts (default 3000, §IV-A)")
    cf.add_argument("--host-rate", type=port_rate, metavar="R", default=1.25e8,
                    help="bytes/s of each host's links (default 1.25e8 = 1 Gbit/s, the machines "
                    "of the trace's cluster; the paper does not say)")
    cf.add_argument("--large-min-mb", type=positive_float, metavar="MB", default=25.0,
                    help="smallest large coflow in MB (default 25, §IV-A)")
    cf.add_argument("--large-max-mb", type=positive_float, metavar="MB", default=1024.0,
                    help="largest large coflow in MB (default 1024: 1 GB, §IV-A)")
    timing = cf.add_mutually_exclusive_group()
    timing.add_argument("--rate", type=positive_float, metavar="R", default=None,
                        help="Poisson arrivals per second (per time unit of a JSON trace; "
                        "default: the trace's mean rate, about 0.145; the paper gives none)")
    timing.add_argument("--load", type=positive_float, metavar="X", default=None,
                        help="offered load the arrivals realise (as `coflowopt info` prints it): "
                        "Poisson gaps scaled together to give exactly this load (2 or more "
                        "coflows)")
    _add_trace(cf)
    cf.set_defaults(func=run_coflourish)

    d = kinds.add_parser("deadlines", help="Varys-style deadlines: max(min, Gamma (1 + U(0, slack)))")
    add_input_arguments(d)
    d.add_argument("--slack", type=nonnegative_float, default=1.0, help="U's range (default 1)")
    d.add_argument("--minimum", type=nonnegative_float, default=0.2,
                   help="in the instance's time unit (default 0.2)")
    d.set_defaults(func=run_retime)

    for sp in (s, cr, cf, po, b, r, d):
        sp.add_argument("--seed", type=nonnegative_int, default=0, help="random seed (default 0)")
        sp.add_argument("-o", "--output", required=True, help="file to write")
        sp.add_argument(
            "--to", choices=sorted(io.FORMATS), default="json",
            help="output format (default json)" + (
                "; benchmark holds only full shuffles (--shape shuffle), and sincronia rounds "
                "sizes up to whole MB" if sp is s else "")
        )
        add_json_argument(sp)


def _ratio(text: str) -> float:
    value = nonnegative_float(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got '{text}'")
    return value


def _load_needs_two(load: float | None, coflows: int | None) -> None:
    if load is not None and coflows is not None and coflows < 2:
        raise InputError("--load needs at least 2 coflows (the offered load is the data over "
                         "the span of the release times)")


def _add_trace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--trace", metavar="FILE", default=None,
                        help="the trace the workload is built from (default: the bundled "
                        "Facebook trace, instances/fb2010/FB2010-1Hr-150-0.txt)")


def _trace(args: argparse.Namespace) -> Instance:
    if args.trace is None:
        return wl.facebook_trace()
    return io.loads(read_text(args.trace), path=args.trace)[0]


def _finish(args: argparse.Namespace, inst: Instance) -> int:
    load = getattr(args, "load", None)
    if args.to == "sincronia" and load is not None:
        # the file holds whole megabytes: its load, not the unrounded one, is what was asked
        # (sizes far below a megabyte made 0.5 a load of 122,706)
        inst = gen.rescale_load(sincronia.round_sizes(inst), load)
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
    _load_needs_two(args.load, args.coflows)
    classes = gen.facebook_bins(min_width=args.min_width, max_width=args.max_width,
                                max_length=args.max_length_mb * MB)
    trace = args.to in ("benchmark", "coflowsim")  # one format, coflowsim's units aside
    shape = args.shape or ("shuffle" if trace else "flows")
    if shape != "shuffle" and trace:
        raise InputError(f"--to {args.to} holds only full shuffles: use --shape shuffle")
    inst = gen.synthetic(
        args.coflows, args.ports, classes=classes, load=args.load, port_rate=args.port_rate,
        seed=args.seed, shape=shape,
    )
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


def run_creek(args: argparse.Namespace) -> int:
    check_outputs(args, [("--output", args.output)])
    for what in ("receivers", "senders", "fanin"):
        lo, hi = getattr(args, f"min_{what}"), getattr(args, f"max_{what}")
        if hi is not None and lo > hi:
            raise InputError(f"--min-{what} {lo} is above --max-{what} {hi}")
    if args.pattern == "tpcds" and args.max_senders is not None and args.max_senders < 3:
        raise InputError(f"--pattern tpcds needs 3 senders or more (one per table), got "
                         f"--max-senders {args.max_senders}")
    if args.miss_ratio >= 1:
        raise InputError("--miss-ratio must be below 1 (a follower cannot fetch all it serves "
                         "and more)")
    _load_needs_two(args.load, args.coflows)
    trace = _trace(args)
    if args.coflows is not None and args.coflows > trace.num_coflows:
        raise InputError(f"--coflows {args.coflows} is more than the trace's "
                         f"{trace.num_coflows} coflows")
    if not math.isfinite(args.min_size_mb * MB * (args.coflows or trace.num_coflows)):
        raise InputError(f"--min-size-mb is too large: the coflows' bytes would overflow "
                         f"float64, got {args.min_size_mb:g}")
    inst = wl.creek(
        args.pattern, trace=trace, num_coflows=args.coflows, num_hosts=args.hosts,
        host_rate=args.host_rate, min_size=args.min_size_mb * MB,
        receivers=(args.min_receivers, args.max_receivers),
        senders=(args.min_senders, args.max_senders), fanin=(args.min_fanin, args.max_fanin),
        miss_ratio=args.miss_ratio, load=args.load, seed=args.seed)
    return _finish(args, inst)


def run_coflourish(args: argparse.Namespace) -> int:
    check_outputs(args, [("--output", args.output)])
    if args.mix == "regular" and args.large_share:
        raise InputError("--large-share needs --mix large (a regular load has no large coflows)")
    if args.large_min_mb > args.large_max_mb:
        raise InputError(f"--large-min-mb {args.large_min_mb:g} is above --large-max-mb "
                         f"{args.large_max_mb:g}")
    if not math.isfinite(args.large_max_mb * MB):
        raise InputError(f"--large-max-mb is too large for bytes in float64, got {args.large_max_mb:g}")
    _load_needs_two(args.load, args.coflows)
    inst = wl.coflourish(
        args.mix, trace=_trace(args), num_coflows=args.coflows, num_hosts=args.hosts,
        host_rate=args.host_rate, large_share=args.large_share,
        large_size=(args.large_min_mb * MB, args.large_max_mb * MB), rate=args.rate,
        load=args.load, seed=args.seed)
    return _finish(args, inst)
