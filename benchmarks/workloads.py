"""The Creek and Coflourish workloads at the papers' sizes: how long they take to build,
and that schedulers simulate them feasibly on the big switch.

    python benchmarks/workloads.py [--policies varys,fair] [--markdown]

Each workload (``creek`` tpcds and tao on 3,456 hosts, ``coflourish`` regular and large
on 3,000 hosts, defaults otherwise, seed 0) is built in its own fresh process (``--one``),
so that its peak resident memory (``ru_maxrss``, interpreter and trace included) is its
own; then each policy simulates it with the schedule recorded, and ``check_feasible``
checks the schedule. Times are of the calls alone, wall and CPU; the load average is
printed because other processes inflate wall times.
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

WORKLOADS = ("creek:tpcds", "creek:tao", "coflourish:regular", "coflourish:large")


def one(spec: str, policies: list[str]) -> dict:
    import coflowopt as co
    from coflowopt.io import workloads as wl
    from coflowopt.io.generate import offered_load
    from coflowopt.sim import simulate

    kind, variant = spec.split(":")
    trace = wl.facebook_trace()
    w, c = time.perf_counter(), time.process_time()
    inst = wl.creek(variant, trace=trace) if kind == "creek" else wl.coflourish(variant, trace=trace)
    row: dict = {"workload": spec, "build_wall_s": time.perf_counter() - w,
                 "build_cpu_s": time.process_time() - c, "coflows": inst.num_coflows,
                 "flows": inst.num_flows, "hosts": inst.num_ports,
                 "offered_load": offered_load(inst), "runs": []}
    for name in policies:
        w, c = time.perf_counter(), time.process_time()
        res = simulate(inst, name)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        assert res.schedule is not None
        ok = bool(co.check_feasible(inst, res.schedule))
        row["runs"].append({"policy": name, "wall_s": wall, "cpu_s": cpu,
                            "mean_cct": res.summary.mean_cct, "feasible": ok})
    row["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default="varys,fair")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    if args.one:
        print(json.dumps(one(args.one, policies)))
        return
    print(f"# {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()}")
    rows = []
    for spec in WORKLOADS:
        out = subprocess.run([sys.executable, __file__, "--one", spec, "--policies", args.policies],
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    if not args.markdown:
        for r in rows:
            print(json.dumps(r))
        return
    print("| workload | coflows | flows | offered load | build wall / CPU | policy | simulate "
          "wall / CPU | mean CCT | feasible | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for i, run in enumerate(r["runs"]):
            head = (f"{r['workload']} | {r['coflows']:,} | {r['flows']:,} | {r['offered_load']:.3g} | "
                    f"{r['build_wall_s']:.2f} / {r['build_cpu_s']:.2f} s" if i == 0 else " | | | | ")
            print(f"| {head} | {run['policy']} | {run['wall_s']:.1f} / {run['cpu_s']:.1f} s | "
                  f"{run['mean_cct']:.4g} s | {run['feasible']} | "
                  + (f"{r['peak_rss_mib']:.0f} MiB |" if i == 0 else " |"))
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
