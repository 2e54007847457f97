"""Every lower bound on the Facebook trace, with and without its release times.

For each bound: the value (sum of w_k C_k, absolute completion times, in
seconds), wall and CPU seconds, and peak memory. Each bound runs in a fresh
process so that the peak resident set size (``ru_maxrss``, which includes
HiGHS's own allocations) is the bound's own; the table also gives the
increase over the process after loading the trace.

    python benchmarks/bounds_fb.py [--time-limit 60] [--only pairwise] [--output FILE]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import platform
import resource
import time
from pathlib import Path

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

VARIANTS: list[tuple[str, str, dict]] = [
    ("isolation", "isolation", {}),
    ("port", "port", {}),
    ("sincronia", "sincronia", {}),
    ("interval (ratio 2)", "interval", {"ratio": 2.0}),
    ("interval (ratio 1.25)", "interval", {"ratio": 1.25}),
    ("interval (ratio 1.1)", "interval", {"ratio": 1.1}),
    ("pairwise", "pairwise", {}),
    ("best", "best", {}),
]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _run(args: tuple[str, dict, bool, float]) -> dict:
    method, options, zero, time_limit = args
    from coflowopt import read
    from coflowopt.solvers import bound

    inst = read(TRACE)
    if zero:
        inst = inst.with_releases(0.0)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c0, t0 = _cpu(), time.perf_counter()
    res = bound(inst, method=method, time_limit=time_limit, **options)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    info = {k: v for k, v in res.info.items()
            if k in ("best", "complete", "rounds", "rows_used", "points", "solver", "lp_time_s",
                     "link", "rule", "thresholds", "pairs", "nonzeros")}
    return {"value": res.bound, "status": res.status.value, "wall": wall, "cpu": cpu,
            "peak_mb": peak / 1024, "extra_mb": (peak - base) / 1024, "info": info}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--only", default=None, help="run only the variants whose name contains this")
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {mp.cpu_count()} cores, python "
          f"{platform.python_version()}; trace {TRACE.name}; time limit {args.time_limit:g} s")
    print("| releases | bound | value (sum w_k C_k) | status | wall s | cpu s | peak RSS MB "
          "| +MB over loaded trace | notes |")
    print("|---|---|---|---|---|---|---|---|---|")
    ctx = mp.get_context("spawn")
    for zero in (False, True):
        for name, method, options in VARIANTS:
            if args.only and args.only not in name:
                continue
            with ctx.Pool(1) as pool:
                r = pool.apply(_run, ((method, options, zero, args.time_limit),))
            notes = ", ".join(f"{k}={v}" for k, v in r["info"].items())
            print(f"| {'all 0' if zero else 'trace'} | {name} | {r['value']:.8g} | {r['status']} "
                  f"| {r['wall']:.2f} | {r['cpu']:.2f} | {r['peak_mb']:.0f} | {r['extra_mb']:.0f} "
                  f"| {notes} |", flush=True)


if __name__ == "__main__":
    main()
