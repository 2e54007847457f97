"""``coflowopt compile``: compile the simulator's kernels now rather than on first use."""

from __future__ import annotations

import argparse
import sys
import time

from .. import _jit
from ..errors import InputError
from ..instance import Fabric
from ..io.generate import facebook_bins, synthetic
from ..sim import POLICIES, make_policy, simulate_many
from ..sim.batch import cpu_count
from ..solvers import bound, solve
from ._util import add_json_argument, emit_json, nonnegative_int, plural

VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "aalo:sharing=strict": ("aalo", {"sharing": "strict"}),
    "mcs:sharing=weighted": ("mcs", {"sharing": "weighted"}),
}
"""Variants that take kernels of their own, compiled beside every registered scheduler."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compile",
        help="compile the simulator's kernels now (once per installation) instead of on first use",
        description="Compile the kernels of every scheduler (and the bounds' and solvers') for "
        "instances like "
        "the Facebook trace (equal port rates, the big switch), in worker processes, into the "
        "kernel cache (coflowopt._jit.cache_dir). Useful before timing runs, or in an image "
        "built for a cluster; without it each kernel compiles the first time a large instance "
        "needs it (5-25 s a scheduler).")
    p.add_argument("--schedulers", metavar="A,B,C", default=None,
                   help="only these schedulers (NAME or NAME:KEY=VALUE as in compare; default: "
                   "all, with Aalo's and MCS's other sharing rule)")
    p.add_argument("--jobs", "-j", type=nonnegative_int, default=0, metavar="N",
                   help="worker processes (default 0: one per CPU)")
    add_json_argument(p)
    p.set_defaults(func=run_compile)


def run_compile(args: argparse.Namespace) -> int:
    from .simulate import parse_variants

    variants: dict[str, tuple[str, dict[str, str]]]
    if args.schedulers is None:
        variants = {n: (n, {}) for n in sorted(POLICIES) if n != "static-order"}
        variants.update(VARIANTS)
    else:
        variants = parse_variants(args.schedulers)
    runs = {}
    for label, (name, params) in variants.items():
        try:
            runs[label] = make_policy(name, params, strings=True)
        except Exception as exc:  # an unknown scheduler or parameter: the user's input
            raise InputError(f"scheduler '{label}': {exc}") from None
    # shuffles on 20 ports of equal rate, with releases: the kernels' signatures on the trace
    classes = facebook_bins(max_width=400)
    inst = synthetic(40, 20, classes=classes, load=0.8, shape="shuffle", seed=1)
    assert isinstance(inst.fabric, Fabric)
    jobs = min(args.jobs or cpu_count(), len(runs))
    where = _jit.cache_dir()
    if not _jit.cache_usable():
        raise InputError(f"the kernel cache {where} cannot be written, so nothing compiled now "
                         "would be kept (set NUMBA_CACHE_DIR to a writable folder)")
    print(f"compiling the kernels of {plural(len(runs), 'scheduler')} on "
          f"{plural(jobs, 'process', 'processes')} into {where} (5-25 s a scheduler)",
          file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    with _jit.compiling():
        bound(inst, method="best")
        # the solvers' kernels (order evaluation, the searches' move lists) on a small instance
        # (12 coflows: on fewer, the order evaluation never compares free lists with a
        # checkpoint's, exact._freelists.same, which the trace then compiles)
        small = inst.subset(range(12))
        for method in ("best", "local-search"):
            solve(small, method=method, time_limit=30.0)
        simulate_many(inst, runs, jobs=jobs, record=False, jit="compile")
    seconds = time.perf_counter() - t0
    if args.json:
        emit_json({"schedulers": list(runs), "processes": jobs, "seconds": seconds,
                   "cache": str(where)})
    else:
        print(f"compiled in {seconds:.1f} s: {where}")
    return 0
