"""``coflowopt convert``: between the native JSON and the trace formats."""

from __future__ import annotations

import argparse
import sys

from .. import io
from ..errors import InputError
from ._util import (
    add_input_arguments,
    add_json_argument,
    add_topology_arguments,
    check_outputs,
    emit_json,
    load_instance,
    size_text,
    write_instance,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("convert", help="convert an instance between file formats")
    add_input_arguments(p)
    add_topology_arguments(p)
    p.add_argument("output", metavar="OUT", help="file to write (written only if everything succeeds)")
    p.add_argument("--to", choices=sorted(io.FORMATS), default=None, help="output format (default: json)")
    p.add_argument(
        "--mb-rounding",
        choices=["ceil", "nearest", "none"],
        default=None,
        help="Sincronia output (--to sincronia) only: how to make sizes whole megabytes "
        "(default ceil)",
    )
    add_json_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    fmt = args.to or "json"
    if args.mb_rounding is not None and fmt != "sincronia":
        # an option that does not apply is a mistake to point out, not to ignore
        raise InputError(f"--mb-rounding applies to Sincronia output only (--to sincronia), "
                         f"not to {fmt}")
    inst = load_instance(args)
    check_outputs(args, [("OUT", args.output)])
    options = {"mb_rounding": args.mb_rounding or "ceil"} if fmt == "sincronia" else {}
    notes = write_instance(args, inst, args.output, fmt, **options)
    if args.json:
        emit_json(
            {
                "input": args.file,
                "output": args.output,
                "format": fmt,
                "coflows": inst.num_coflows,
                "flows": inst.num_flows,
                "notes": notes,
            }
        )
    else:
        print(f"wrote {args.output} ({fmt}): {size_text(inst, ports=False)}")
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    return 0
