"""The Facebook trace on multi-hop fabrics: building the routes, then simulating.

    python benchmarks/fabrics.py [--fabrics spine-leaf,fat-tree] [--policies varys,fair] [--markdown]
        [--timeout SECONDS]

Two fabrics: the trace's 150 racks as the leaves of a spine-leaf fabric with 4 spines
and 10:1 leaf uplinks (``--topology spine-leaf:spines=4,oversub=10``), and the racks
spread over the k = 24 fat-tree's 3,456 hosts (``--topology fat-tree:k=24``), both
with ECMP, routing seed 0 and placement seed 0, port rate 1 Gbit/s (the trace
reader's default). Each (fabric, policy) runs in its own fresh process, so that its
peak resident memory (``ru_maxrss``: interpreter, trace, routes and the recorded
schedule) is its own: the trace is read, placed on the fabric (the instance builds its
incidence: "routes"), simulated with the schedule recorded, and the schedule checked
by ``check_feasible``. Times are of the calls alone, wall and CPU (user+sys of the
process); the load average is printed because other processes inflate wall times.
``--timeout``: a run still going after that many seconds (wall, the whole process) is
stopped and reported as not finished.
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

FABRICS = {"spine-leaf": ("spine-leaf", {"spines": "4", "oversub": "10"}),
           "fat-tree": ("fat-tree", {"k": "24"})}
POLICIES = ("varys", "sincronia", "fair", "aalo:sharing=strict")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(fabric: str, policy: str) -> dict:
    import coflowopt as co
    from coflowopt.fabric import place
    from coflowopt.sim import simulate

    trace = co.read(os.path.join(os.path.dirname(__file__), "..", "instances", "fb2010",
                                 "FB2010-1Hr-150-0.txt"))
    rss_trace = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    name, params = FABRICS[fabric]
    w, c = time.perf_counter(), _cpu()
    inst = place(trace, name, params)
    row: dict = {"fabric": fabric, "policy": policy, "routes_wall_s": time.perf_counter() - w,
                 "routes_cpu_s": _cpu() - c, "flows": inst.num_flows, "hosts": inst.num_ports,
                 "links": inst.fabric.num_links, "nnz": int(inst.routes.nnz),
                 "rss_after_trace_mib": rss_trace,
                 "rss_after_routes_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    pname, _, rest = policy.partition(":")
    params = dict(kv.split("=") for kv in rest.split(",")) if rest else {}
    w, c = time.perf_counter(), _cpu()
    res = simulate(inst, pname, params)
    row.update(sim_wall_s=time.perf_counter() - w, sim_cpu_s=_cpu() - c,
               mean_cct=res.summary.mean_cct)
    if res.schedule is not None:
        w = time.perf_counter()
        row["feasible"] = bool(co.check_feasible(inst, res.schedule))
        row["check_wall_s"] = time.perf_counter() - w
    else:
        row["feasible"] = None
    row["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fabrics", default=",".join(FABRICS))
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--timeout", type=float, default=None,
                    help="stop a run after this many seconds (reported as not finished)")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()}", flush=True)
    rows = []
    for fabric in args.fabrics.split(","):
        for policy in args.policies.split(";") if ";" in args.policies else _split(args.policies):
            try:
                out = subprocess.run([sys.executable, __file__, "--one", fabric, policy],
                                     capture_output=True, text=True, check=True,
                                     timeout=args.timeout)
            except subprocess.TimeoutExpired:
                rows.append({"fabric": fabric, "policy": policy, "timeout_s": args.timeout})
            else:
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            if not args.markdown:
                print(json.dumps(rows[-1]), flush=True)
    print(f"# load average after {os.getloadavg()}")
    if not args.markdown:
        return
    print("| fabric | routes wall / CPU | policy | simulate wall / CPU | mean CCT | feasible "
          "| peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "timeout_s" in r:
            print(f"| {r['fabric']} | | {r['policy']} | not finished in {r['timeout_s']:.0f} s "
                  "(whole process) | | | |")
            continue
        print(f"| {r['fabric']} | {r['routes_wall_s']:.1f} / {r['routes_cpu_s']:.1f} s | {r['policy']} "
              f"| {r['sim_wall_s']:.1f} / {r['sim_cpu_s']:.1f} s | {r['mean_cct']:.4g} s "
              f"| {r['feasible']} | {r['peak_rss_mib']:.0f} MiB |")


def _split(text: str) -> list[str]:
    """Policies separated by commas; a comma inside a policy's parameters stays (none has one
    here: ``aalo:sharing=strict``)."""
    return [p for p in text.split(",") if p]


if __name__ == "__main__":
    main()
