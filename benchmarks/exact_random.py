"""Time to prove optimality: exact branch and bound (and the event-position MILP) on random instances.

Two families of ``K`` coflows on a ``P``-port big switch with unit capacities, seeds 0..n-1:

- ``random`` (the default): each coflow has 1..8 flows with uniform random ingress and
  egress ports, sizes uniform in [0.5, 5], a release time uniform in [0, 3] and a weight
  uniform in [0.5, 3];
- ``trace``: ``K`` consecutive arrivals of the Facebook trace (a random window), its
  racks mapped onto the ports by a random map, a coflow's flows on one port pair merged,
  sizes scaled so that the largest flow is 5, the window's arrival times stretched to an
  offered load of 1 (``rescale_load``), weight 1: the trace's heavy tail and wide
  coflows on a few ports.

    python benchmarks/exact_random.py --coflows 8 --ports 4 --seeds 10 --time-limit 60 [--milp]
    python benchmarks/exact_random.py --coflows 16 --ports 10 --seeds 2 --time-limit 600 --no-permutation
    python benchmarks/exact_random.py --family trace --coflows 16 --ports 10 --seeds 10 --time-limit 600

Prints a Markdown table (one row per instance) and a summary line; wall and
CPU seconds are both given because the benchmark machine is shared. ``best value`` is the
exact method's schedule (the optimum when its status is ``optimal``), ``bound`` and
``gap`` its proven lower bound and the gap between them; ``permutation`` the best
permutation schedule (``method="permutation"``, with the same time limit).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time

import numpy as np

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.io.generate import rescale_load
from coflowopt.io.workloads import facebook_trace
from coflowopt.solvers import solve


def family(seed: int, K: int = 8, P: int = 4, max_flows: int = 8, span: float = 3.0) -> Instance:
    rng = np.random.default_rng(seed)
    coflows = []
    for k in range(K):
        n = int(rng.integers(1, max_flows + 1))
        coflows.append(Coflow(f"c{k}", rng.integers(0, P, n), rng.integers(0, P, n),
                              rng.uniform(0.5, 5.0, n), release=float(rng.uniform(0, span)),
                              weight=float(rng.uniform(0.5, 3.0))))
    return Instance(Fabric.uniform(P), tuple(coflows), name=f"random-{K}x{P}-{seed}")


def trace_family(seed: int, K: int = 8, P: int = 4) -> Instance:
    trace = facebook_trace()
    rng = np.random.default_rng(seed)
    first = int(rng.integers(0, trace.num_coflows - K))
    port_of = rng.integers(0, P, trace.num_ports)
    picked = trace.coflows[first:first + K]
    merged = []
    for c in picked:
        pairs: dict[tuple[int, int], float] = {}
        for s, d, z in zip(port_of[c.src].tolist(), port_of[c.dst].tolist(), c.sizes.tolist(), strict=True):
            pairs[(s, d)] = pairs.get((s, d), 0.0) + z
        merged.append(sorted(pairs.items()))
    top = max(z for fl in merged for _, z in fl)
    coflows = tuple(Coflow.from_flows(c.id, [(s, d, 5.0 * z / top) for (s, d), z in fl])
                    for c, fl in zip(picked, merged, strict=True))
    arrivals = np.array([c.release for c in picked])
    inst = Instance(Fabric.uniform(P), coflows, name=f"trace-{K}x{P}-{seed}")
    return rescale_load(inst.with_releases(arrivals - arrivals[0]), 1.0)


FAMILIES = {"random": family, "trace": trace_family}


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--family", choices=sorted(FAMILIES), default="random")
    ap.add_argument("--coflows", type=int, default=8)
    ap.add_argument("--ports", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--milp", action="store_true", help="also run method='exact-milp'")
    ap.add_argument("--no-permutation", action="store_true",
                    help="skip the best permutation schedule (its own time limit)")
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}")
    methods = ["exact", "exact-milp"] if args.milp else ["exact"]
    header = "| seed | flows | " + " | ".join(
        f"{m} status | {m} wall s | {m} cpu s" for m in methods) + " | best value | bound | gap |" + (
        "" if args.no_permutation else " permutation |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    stats: dict[str, list[float]] = {m: [] for m in methods}
    solved = {m: 0 for m in methods}
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        inst = FAMILIES[args.family](seed, args.coflows, args.ports)
        cells = [str(seed), str(inst.num_flows)]
        value = low = float("nan")
        for m in methods:
            c0, t0 = cpu(), time.perf_counter()
            res = solve(inst, method=m, time_limit=args.time_limit)
            wall, used = time.perf_counter() - t0, cpu() - c0
            assert res.schedule is not None and check_feasible(inst, res.schedule)
            stats[m].append(wall)
            solved[m] += res.status.value == "optimal"
            cells += [res.status.value, f"{wall:.1f}", f"{used:.1f}"]
            if m == "exact":
                value, low = res.objective, res.bound
        cells += [f"{value:.4f}", f"{low:.4f}", f"{100 * (value - low) / value:.2f}%"]
        if not args.no_permutation:
            perm = solve(inst, method="permutation", time_limit=args.time_limit)
            cells.append(f"{perm.objective:.4f}")
        print("| " + " | ".join(cells) + " |", flush=True)
    for m in methods:
        w = np.array(stats[m])
        print(f"\n{m}: proved optimal {solved[m]}/{w.size}; wall s median {np.median(w):.1f}, "
              f"max {w.max():.1f}")
    print(f"{time.strftime('%H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
