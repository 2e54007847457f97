"""Coflourish's Fig. 2 and Fig. 4b at a reduced scale: Varys under hidden background traffic.

    python benchmarks/coflourish.py [--coflows 100] [--hosts 300] [--weights 0.1,0.9]
        [--mixes regular,large] [--seeds 1] [--load X] [--background share] [--jobs 2]
        [--runs varys,varys-ideal,...]

The paper (§II, §IV-A): 1,000 coflows among 3,000 hosts, 50 a leaf, 10:1
oversubscription; a weight of the generated load (10% to 90%) is stripped of its coflow
attributes and becomes background traffic; five runs a point. Here: ``generate
coflourish`` (``coflowopt.io.workloads.coflourish``) with ``--coflows`` and ``--hosts``,
placed on ``spine-leaf`` with 50 hosts a leaf, 4 spines, 10:1 and ECMP (routing seed 0),
and a background of weight ``w``:

- ``--background share`` (the default): a constant ``w`` of every link's capacity. The
  paper's construction does not scale down: on a few dozen coflows of the Facebook
  trace's heavy tail one coflow may carry nearly all the bytes, so no set of whole
  coflows holds 10% or 90% of them, and a background of flows costs two events and a
  share of every max-min each;
- ``--background coflows`` or ``bytes``: the paper's construction,
  ``coflows_to_background`` (whole coflows in a seeded random order: that share of the
  coflows, or coflows while their bytes stay below the share); the share of the bytes it
  reached is printed.

Each point runs:

- ``varys`` with ``nominal`` knowledge (the fabric's capacities, as deployed) and with
  ``ideal`` knowledge (what the background leaves, re-deciding at every change: the
  paper's ideal framework), both scheduling every coflow;
- ``coflourish`` (the estimate from switch feedback) and ``coflourish:estimate=nominal``
  (the same rules, the 25 MB threshold and the stages, on the fabric's capacities: Varys
  as the paper simulates it), each with the table per host (the paper's Table II) and
  per leaf (``table=leaf``).

It prints the mean CCT of each and the paper's ratios: ideal / Varys (Fig. 2) and
Coflourish / Varys (Fig. 4b), Varys read both ways (ours, and Coflourish's rules on the
fabric's capacities). The runs go to a pool of ``--jobs`` worker processes; wall and
CPU times are each run's own. ``--runs`` chooses which of them each point makes.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor

RUNS = (("varys", "varys", {}, "nominal"), ("varys-ideal", "varys", {}, "ideal"),
        ("coflourish", "coflourish", {}, "nominal"),
        ("coflourish-nominal", "coflourish", {"estimate": "nominal"}, "nominal"),
        ("coflourish-leaf", "coflourish", {"table": "leaf"}, "nominal"),
        ("coflourish-leaf-nominal", "coflourish", {"table": "leaf", "estimate": "nominal"}, "nominal"))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def point(mix: str, weight: float, seed: int, coflows: int, hosts: int, kind: str,
          load: float | None = None) -> tuple:
    """The instance and background of one point (deterministic in its arguments)."""
    from coflowopt.fabric import place
    from coflowopt.fabric.background import Background, coflows_to_background
    from coflowopt.io.workloads import coflourish

    inst = coflourish(mix, num_coflows=coflows, num_hosts=hosts, seed=seed, load=load)
    if kind == "share":
        rest, bg = inst, Background(share=weight)
    else:
        rest, bg = coflows_to_background(inst, weight, seed, by=kind)
    net = place(rest, "spine-leaf", {"spines": 4, "oversub": 10, "hosts_per_leaf": 50})
    return net, bg


def one(args: tuple) -> dict:
    mix, weight, seed, coflows, hosts, kind, load, label = args
    import numpy as np

    from coflowopt import check_feasible
    from coflowopt.sim import simulate

    net, bg = point(mix, weight, seed, coflows, hosts, kind, load)
    _, name, params, knowledge = next(r for r in RUNS if r[0] == label)
    t0, c0 = time.perf_counter(), _cpu()
    res = simulate(net, name, params, background=bg, knowledge=knowledge)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    # (a run that would record more than MAX_PIECES pieces goes on without a schedule)
    ok = (check_feasible(net, res.schedule, background=res.background).ok
          if res.schedule is not None else "not recorded")
    return {"mix": mix, "weight": weight, "seed": seed, "label": label,
            "mean_cct": float(np.mean(res.cct)), "coflows": net.num_coflows,
            "flows": net.num_flows, "background_flows": int(bg.release.size),
            "background_bytes": (weight if kind == "share" else
                                 float(bg.size.sum()) / (float(bg.size.sum()) + float(net.flow_size.sum()))),
            "wall": wall, "cpu": cpu, "feasible": ok}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coflows", type=int, default=100)
    ap.add_argument("--hosts", type=int, default=300)
    ap.add_argument("--weights", default="0.1,0.9")
    ap.add_argument("--mixes", default="regular,large")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--load", type=float, default=None,
                    help="offered load of the coflows on the host links (default: the trace's "
                    "arrival rate, about 1%%)")
    ap.add_argument("--background", choices=("share", "coflows", "bytes"), default="share")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", default=",".join(r[0] for r in RUNS),
                    help="which runs of each point (default: all); the table leaves the others blank")
    a = ap.parse_args(argv)
    weights = [float(w) for w in a.weights.split(",")]
    seeds = [int(s) for s in a.seeds.split(",")]
    runs = a.runs.split(",")
    unknown = sorted(set(runs) - {r[0] for r in RUNS})
    if unknown:
        ap.error(f"--runs: unknown run {unknown[0]!r} (known: {', '.join(r[0] for r in RUNS)})")
    tasks = [(m, w, s, a.coflows, a.hosts, a.background, a.load, r)
             for m in a.mixes.split(",") for w in weights for s in seeds for r in runs]
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"load average at start {os.getloadavg()[0]:.2f}; {len(tasks)} runs, {a.jobs} at a time",
          flush=True)
    out = {}
    with ProcessPoolExecutor(a.jobs) as pool:
        for r in pool.map(one, tasks):
            out[(r["mix"], r["weight"], r["seed"], r["label"])] = r
            print(f"  {r['mix']} {r['weight']:.1f} seed {r['seed']} {r['label']}: mean CCT "
                  f"{r['mean_cct']:.4g} s ({r['coflows']} coflows, {r['flows']} flows, "
                  f"{r['background_flows']} background flows, {r['background_bytes']:.1%} of the "
                  f"bytes), {r['wall']:.1f} s wall, "
                  f"{r['cpu']:.1f} s CPU, feasible {r['feasible']}", file=sys.stderr, flush=True)
    print(f"# load average at end {os.getloadavg()[0]:.2f}")
    print("| mix | background | seed | varys | varys ideal | coflourish | coflourish nominal "
          "| coflourish leaf | coflourish leaf nominal | ideal / varys | coflourish / its nominal "
          "| coflourish leaf / its nominal | coflourish / varys |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    def cell(x: float | None) -> str:
        return "" if x is None else f"{x:.3f}"

    def ratio(v: dict, a: str, b: str) -> str:
        return cell(v[a] / v[b] if v.get(a) is not None and v.get(b) is not None else None)

    for m in a.mixes.split(","):
        for w in weights:
            for s in seeds:
                got = {lab: r for (mm, ww, ss, lab), r in out.items() if (mm, ww, ss) == (m, w, s)}
                v = {lab: got[lab]["mean_cct"] if lab in got else None for lab, *_ in RUNS}
                b = next(iter(got.values()))["background_bytes"]
                print(f"| {m} | {w:.0%} ({b:.1%} of the bytes) | {s} | "
                      + " | ".join(cell(v[lab]) for lab, *_ in RUNS) + " | "
                      + " | ".join(ratio(v, x, y) for x, y in (
                          ("varys-ideal", "varys"), ("coflourish", "coflourish-nominal"),
                          ("coflourish-leaf", "coflourish-leaf-nominal"), ("coflourish", "varys")))
                      + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
