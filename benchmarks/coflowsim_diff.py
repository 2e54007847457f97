"""coflowopt's coflowsim-rule variants against coflowsim's own per-coflow output.

coflowsim (the Java simulator of the Varys and Aalo papers) printed, for the bundled
Facebook trace, a line per coflow (``instances/fb2010/coflowsim/*.txt``, provenance in
``instances/README.md``). This script simulates the trace as coflowsim reads it
(``format="coflowsim"`` at its rack rate) with each variant and compares coflow by coflow.
coflowsim records a completion at the end of its 8 ms step, so each coflowopt completion is
rounded up to the step first (:func:`coflowopt.sim.policies.varys.steps_up`). PFP runs in
coflowsim's units, 8 ms steps and MiB (:data:`IN_STEPS`).

    python benchmarks/coflowsim_diff.py [--only FIFO,SEBF] [--list N] [--first N]
        [--trace FILE --reference DIR]

``--list N`` lists each variant's N coflows furthest from coflowsim's, in release order.
``--trace`` and ``--reference`` compare on another trace (a prefix of the bundled one, say)
with coflowsim's outputs for it (``DIR/<NAME>.txt``); ``--first N`` keeps the trace's first
N coflows. coflowsim's SCF, NCF and LCF output for the first 160 coflows is also in
``tests/sim/coflowsim_fb2010_first160/`` (``--first 160 --reference`` that directory).
Prints a Markdown table, the wall and CPU time of each run and the load average.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from coflowopt import Instance, io
from coflowopt.io.benchmark import COFLOWSIM_PORT_RATE, loads_coflowsim
from coflowopt.sim import simulate
from coflowopt.sim.policies.varys import COFLOWSIM_STEP, in_coflowsim_steps, steps_up

ROOT = Path(__file__).resolve().parents[1] / "instances" / "fb2010"

VARIANTS = {
    "SEBF": ("varys", {"order": "static", "backfill": "coflowsim", "step": COFLOWSIM_STEP}),
    "DARK": ("dark", {}),
    "FAIR": ("fair", {"rates": "coflowsim"}),
    "FIFO": ("fifo", {"backfill": "coflowsim", "step": COFLOWSIM_STEP}),
    "PFP": ("pfp", {"order": "coflowsim", "step": 1.0}),
    **{java: (name, {"order": "coflowsim", "backfill": "coflowsim", "step": COFLOWSIM_STEP})
       for java, name in (("SCF", "scf"), ("NCF", "ncf"), ("LCF", "tcf"))},
}
"""coflowsim's name -> coflowopt's policy and parameters that follow its rules."""

IN_STEPS = frozenset({"PFP"})
"""Variants run in coflowsim's units, 8 ms steps and MiB (:func:`in_coflowsim_steps`). Its PFP
moves a whole MiB per rack and step, exact arithmetic that the engine keeps in these units
and not in seconds. The other schedulers' rates are fractions in coflowsim too, computed in
bits per second, as coflowopt computes them in seconds."""


def coflowsim_ccts(path: Path) -> dict[str, float]:
    """coflowsim's CCT in seconds per coflow id, from its printed statistics."""
    out = {}
    for line in path.read_text().splitlines():
        t = line.split()
        if len(t) >= 8 and t[0].startswith("JOB-"):
            out[t[0][4:]] = float(t[7]) / 1000.0
    return out


def read_trace(path: Path, first: int = 0) -> Instance:
    """The trace as coflowsim reads it; with ``first``, its first ``first`` coflows only."""
    if not first:
        return io.read(path, format="coflowsim", port_rate=COFLOWSIM_PORT_RATE)
    head, *lines = path.read_text().splitlines()
    text = "\n".join([f"{head.split()[0]} {first}", *lines[:first]]) + "\n"
    return loads_coflowsim(text, path=f"{path} (first {first})", port_rate=COFLOWSIM_PORT_RATE)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default=",".join(VARIANTS), help="coflowsim names, comma-separated")
    parser.add_argument("--list", type=int, default=0, help="list the N furthest coflows")
    parser.add_argument("--trace", type=Path, default=ROOT / "FB2010-1Hr-150-0.txt")
    parser.add_argument("--reference", type=Path, default=ROOT / "coflowsim")
    parser.add_argument("--first", type=int, default=0, help="the trace's first N coflows only")
    args = parser.parse_args()
    inst = read_trace(args.trace, args.first)
    print(f"{args.trace.name}: {inst.num_coflows} coflows; load average {os.getloadavg()[0]:.2f}")
    print()
    print("| coflowsim | coflowopt | within 1% | within 5% | same 8 ms step | mean CCT ratio "
          "| wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    listed = []
    for java in args.only.split(","):
        name, params = VARIANTS[java]
        ref = coflowsim_ccts(args.reference / f"{java}.txt")
        theirs = np.array([ref[c] for c in inst.ids])
        steps = java in IN_STEPS
        w, c = time.perf_counter(), time.process_time()
        res = simulate(in_coflowsim_steps(inst) if steps else inst, name, params, record=False)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        rel = np.asarray(inst.release, float)
        ours = steps_up(rel + res.cct * (COFLOWSIM_STEP if steps else 1.0)) - rel
        ratio = np.abs(ours / theirs - 1)
        same = np.abs(ours - theirs) <= 1e-3 * COFLOWSIM_STEP
        label = name + (":" + ",".join(f"{k}={v}" for k, v in params.items()) if params else "")
        label += " (in steps)" if steps else ""
        print(f"| {java} | `{label}` | {(ratio <= 0.01).sum()} | {(ratio <= 0.05).sum()} "
              f"| {same.sum()} | {ours.mean() / theirs.mean():.4f} | {wall:.1f} | {cpu:.1f} |")
        if args.list:
            far = np.argsort(-ratio, kind="stable")[: args.list]
            far = far[ratio[far] > 0.01]
            listed.append((java, [(inst.ids[k], rel[k], ours[k], theirs[k])
                                  for k in sorted(far.tolist(), key=lambda k: (rel[k], k))]))
    for java, rows in listed:
        print(f"\n{java}: coflows beyond 1% (id, release s, coflowopt CCT s, coflowsim CCT s)")
        for cid, r, o, t in rows:
            print(f"  {cid:>5} {r:9.2f} {o:11.3f} {t:11.3f}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
