"""``solve --method local-search`` (or ``--method lns``) on the Facebook trace: the certified
gap against time.

For each release setting (the trace's, and all 0) and time limit: the sum of CCTs of
the schedule found, the best proven bound on it (``bound --method best``, computed once
per setting in its own process), their ratio (the certified gap), and the run's wall
and CPU seconds and peak memory. Each run is a fresh process (``/usr/bin/time -v``
style numbers from ``RUSAGE_CHILDREN``), so numba's disk cache is the only warm state.

    python benchmarks/local_search_fb.py [--limits 60,300,600] [--releases trace,zero]
    python benchmarks/local_search_fb.py --method lns --releases trace --limits 600
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

_CHILD = """
import json, sys
from coflowopt import read
from coflowopt.solvers import bound, solve
what, zero, limit = sys.argv[1], sys.argv[2] == "zero", float(sys.argv[3])
inst = read(sys.argv[4])
method = sys.argv[5]
if zero:
    inst = inst.with_releases(0.0)
rel = float(inst.weight @ inst.release)
if what == "bound":
    res = bound(inst, method="best", time_limit=limit)
    print(json.dumps({"bound_cct": res.bound - rel, "status": res.status.value,
                      "best": str(res.info.get("best", ""))}))
else:
    res = solve(inst, method=method, time_limit=limit)
    tried, taken = (("windows_searched", "windows_improved") if method == "lns"
                    else ("moves_tried", "moves_taken"))
    res.info["tried"], res.info["taken"] = res.info[tried], res.info[taken]
    keep = ("start", "start_value", "passes", "tried", "taken", "converged_early",
            "local_optimum", "bound_method")
    print(json.dumps({"sum_cct": res.objective - rel, "bound_cct": res.bound - rel,
                      "status": res.status.value, "runtime": res.runtime,
                      "start_cct": res.info["start_value"] - rel,
                      **{k: res.info[k] for k in keep}}))
"""


def _child(what: str, releases: str, limit: float, method: str = "local-search") -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CHILD, what, releases, str(limit), str(TRACE),
                          method],
                         capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    # ru_maxrss of the children is the largest child so far: each run is the largest or not
    row.update(wall=wall, cpu=cpu, peak_mb=after.ru_maxrss / 1024, load=load)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limits", default="60,300,600")
    parser.add_argument("--releases", default="trace,zero")
    parser.add_argument("--bound-limit", type=float, default=120.0)
    parser.add_argument("--method", choices=("local-search", "lns"), default="local-search")
    args = parser.parse_args()
    limits = [float(x) for x in args.limits.split(",")]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python "
          f"{platform.python_version()}")
    print("| releases | limit s | status | start sum CCT | sum CCT | best bound | certified gap "
          f"| {'windows searched / improved' if args.method == 'lns' else 'moves tried / taken'} "
          "| wall s | CPU s | peak RSS MB | load before |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for releases in args.releases.split(","):
        b = _child("bound", releases, args.bound_limit)
        for limit in limits:
            r = _child("solve", releases, limit, args.method)
            best = max(b["bound_cct"], r["bound_cct"])
            print(f"| {releases} | {limit:g} | {r['status']} | {r['start_cct']:,.1f} "
                  f"({r['start']}) | {r['sum_cct']:,.1f} | {best:,.1f} | "
                  f"{r['sum_cct'] / best:.4f} | {r['tried']} / {r['taken']} | "
                  f"{r['wall']:.0f} | {r['cpu']:.0f} | {r['peak_mb']:.0f} | {r['load']:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
