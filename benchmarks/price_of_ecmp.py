"""The price of ECMP: the optimum under ECMP against the free-routing bound.

    python benchmarks/price_of_ecmp.py small [--coflows 5] [--seeds 0,1,2,3,4]
    python benchmarks/price_of_ecmp.py large FILE --topology fat-tree:k=8 [--time-limit 600]

``small``: random instances (``--coflows`` coflows of 1-3 flows of 1-4 units between random
hosts, releases 0-2, unit weights; instance seed 100 + s) on the k = 4 fat-tree under
ECMP with routing seed ``s`` and on a spine-leaf fabric (4 leaves of 2 hosts, 2 spines of
half the host rate: 2:1) under ECMP with routing seed ``s``. For each: the exact optimum
under ECMP and under spray (on these topologies spray is the best routing, so the latter
is the optimum over every routing: ``models/bound-free.md``), the free bound and the best
bound for ECMP's routing.

``large``: one instance file placed with ``--topology`` (ECMP, routing seed 0): the free
bound (the flow and the cuts-only LP) with its size and time, the best bound for ECMP's
routing, the best bound of the sprayed instance, and the best of a few heuristics
(simulated) under ECMP.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _small_instances(coflows: int, seed: int) -> dict:
    from coflowopt import Coflow, Instance
    from coflowopt.fabric import FatTree, Network, SpineLeaf

    out = {}
    for name, topo in (("fat-tree k=4", FatTree(4)), ("spine-leaf 4x2, 2:1", SpineLeaf(4, 2, 2, 1.0, 0.5))):
        rng = np.random.default_rng(100 + seed)
        H = topo.num_hosts
        cfs = []
        for k in range(coflows):
            n = int(rng.integers(1, 4))
            cfs.append(Coflow(f"c{k}", rng.integers(0, H, n), rng.integers(0, H, n),
                              rng.integers(1, 5, n).astype(float), release=float(rng.integers(0, 3))))
        out[name] = Instance(Network(topo, "ecmp", seed), tuple(cfs), name=f"{name} seed {seed}")
    return out


def small(args: argparse.Namespace) -> None:
    from coflowopt.fabric import Network
    from coflowopt.solvers import bound, solve

    print("| fabric | seed | OPT(ecmp) | OPT(spray) = OPT(free) | bound(free) | best(spray) | best(ecmp) "
          "| OPT(ecmp)/OPT(spray) | OPT(ecmp)/bound(free) | OPT(ecmp)/best(ecmp) | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for seed in args.seeds:
        for name, inst in _small_instances(args.coflows, seed).items():
            t = time.perf_counter()
            ecmp = solve(inst, method="exact", time_limit=args.time_limit)
            sprayed = inst.replace(fabric=Network(inst.fabric.topology, "spray"))
            spray = solve(sprayed, method="exact", time_limit=args.time_limit)
            free = bound(inst, method="free").bound
            best_spray = bound(sprayed, method="best").bound
            best = bound(inst, method="best").bound
            opt = ecmp.objective
            tag = "" if ecmp.status.value == "optimal" == spray.status.value else " (not proven)"
            print(f"| {name} | {seed} | {opt:.4f}{tag} | {spray.objective:.4f} | {free:.4f} "
                  f"| {best_spray:.4f} | {best:.4f} "
                  f"| {opt / spray.objective:.3f} | {opt / free:.3f} | {opt / best:.3f} "
                  f"| {time.perf_counter() - t:.1f} |", flush=True)


def large(args: argparse.Namespace) -> None:
    import coflowopt as co
    from coflowopt.fabric import Network, parse_topology, place
    from coflowopt.sim import simulate
    from coflowopt.solvers import bound

    name, params = parse_topology(args.topology)
    inst = place(co.io.read(args.file), name, params, routing="ecmp", routing_seed=0)
    print(f"{inst.name}: {inst.num_coflows} coflows, {inst.num_flows} flows on {args.topology} "
          "(ecmp, routing seed 0)")
    rows = []
    for label, target, method, opts in (
            ("free (flow)", inst, "free", {"network": "flow"}),
            ("free (cuts only)", inst, "free", {"network": "cuts"}),
            ("interval (ecmp)", inst, "interval", {}),
            ("best (ecmp)", inst, "best", {}),
            ("best (spray)", inst.replace(fabric=Network(inst.fabric.topology, "spray")), "best", {})):
        t = time.perf_counter()
        res = bound(target, method=method, time_limit=args.time_limit, **opts)
        size = res.info.get("nonzeros", "")
        extra = f"best of {res.info['best']}" if method == "best" else (
            f"{res.info.get('points')} points, {size:,} nonzeros, lp {res.info.get('lp_time_s', 0):.2f} s"
            if method == "free" else "")
        rows.append((label, res.bound, res.status.value, time.perf_counter() - t, extra))
    heur = {}
    sprayed = inst.replace(fabric=Network(inst.fabric.topology, "spray"))
    for routing, target in (("ecmp", inst), ("spray", sprayed)):
        for policy in ("varys", "sincronia", "fair"):
            t = time.perf_counter()
            value = float(np.dot(inst.weight, simulate(target, policy).completion))
            if routing == "ecmp":
                heur[policy] = value
            rows.append((f"{policy} ({routing}, simulated)", value, "feasible", time.perf_counter() - t, ""))
    top = min(heur.values())
    print("| what | sum w_k C_k | status | s | best ECMP heuristic / this | notes |")
    print("|---|---|---|---|---|---|")
    for label, value, status, secs, extra in rows:
        print(f"| {label} | {value:.6g} | {status} | {secs:.2f} | {top / value:.3f} | {extra} |")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("small")
    s.add_argument("--coflows", type=int, default=5)
    s.add_argument("--seeds", type=lambda t: [int(x) for x in t.split(",")], default=[0, 1, 2, 3, 4])
    s.add_argument("--time-limit", type=float, default=300.0)
    g = sub.add_parser("large")
    g.add_argument("file")
    g.add_argument("--topology", default="fat-tree:k=8")
    g.add_argument("--time-limit", type=float, default=600.0)
    args = p.parse_args()
    small(args) if args.what == "small" else large(args)


if __name__ == "__main__":
    main()
