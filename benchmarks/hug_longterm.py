"""HUG, DRF and PS-P over time against Varys and per-flow fairness (dissertation §7.7.4).

    python benchmarks/hug_longterm.py [--coflows N] [--output benchmarks/results/fairness_longterm.md]

Simulates the bundled Facebook trace (all 526 coflows, or the first N) with
each scheduler and prints the metrics of §7.7.4: slowdown (CCT over the
isolation time, Table 7.3: min, max, mean, standard deviation), average,
95th-percentile and maximum CCT, and the average and maximum CCT relative
to HUG's. The dissertation's numbers come from its own simulator and
correlation vectors; the table quotes them next to ours for orientation,
not as a target.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

import coflowopt as co
from coflowopt.fairness import compare_over_time

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

# Table 7.3 (slowdown) and §7.7.4 text (HUG vs others) of the dissertation
PAPER = {
    "fair": "slowdown 1 / 1281 / 15.52 / 65.54; HUG 1.49x better avg CCT, 1.12x better max CCT",
    "psp": "slowdown 1 / 35 / 2.22 / 2.97; HUG 1.14x better avg CCT, 1.21x better max CCT",
    "hug": "slowdown 1 / 28 / 1.86 / 2.25",
    "drf": "slowdown 1 / 29 / 2.11 / 2.66; HUG 1.14x better avg CCT, 1.34x better max CCT",
    "varys": "slowdown 1 / 18 / 1.43 / 0.99; Varys 1.45x better avg CCT, HUG 1.77x better max CCT",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coflows", type=int, default=None, help="only the first N coflows")
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args()
    inst = co.read(TRACE)
    if args.coflows is not None:
        inst = inst.subset(range(min(args.coflows, inst.num_coflows)))
    schedulers = ["hug", "drf", "psp", "varys", "fair", ("hug", {"cooperative": True})]
    t0 = time.perf_counter()
    rows = compare_over_time(inst, schedulers, baseline="hug")
    total = time.perf_counter() - t0
    out = [
        "# Fair schedulers over time (benchmarks/hug_longterm.py)\n",
        f"Machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"NumPy {np.__version__}. Command: `python benchmarks/hug_longterm.py"
        + (f" --coflows {args.coflows}" if args.coflows else "") + "`.\n",
        f"Instance: {inst.name or TRACE.name}, {inst.num_coflows} coflows, {inst.num_ports} ports, "
        f"{inst.num_flows:,} flows, 1 Gbit/s ports; coflows arrive at their trace times. Policies "
        "re-allocate on coflow arrivals and completions (Varys' rule; HUG, DRF and PS-P with their "
        "default parameters: correlation vectors from remaining bytes, elastic coflows, shares split "
        f"among flows in proportion to remaining bytes). Total wall time {total:.0f} s.\n",
        "Slowdown = CCT / isolation time Gamma_k (the CCT alone on the fabric).\n",
        "| scheduler | slowdown min / max / mean / std | mean CCT s | p95 CCT s | max CCT s "
        "| mean CCT / HUG | max CCT / HUG | coflows faster than HUG | wall s | dissertation (§7.7.4) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s = r.summary()
        out.append(
            f"| {r.label} | {s['min_slowdown']:.2f} / {s['max_slowdown']:.2f} / {s['mean_slowdown']:.2f} / "
            f"{s['std_slowdown']:.2f} | {s['mean_cct']:.3f} | {s['p95_cct']:.3f} | {s['max_cct']:.2f} | "
            f"{s['mean_cct_vs_baseline']:.3f} | {s['max_cct_vs_baseline']:.3f} | "
            f"{100 * s['share_faster_than_baseline']:.0f}% | {s['runtime']:.1f} | "
            f"{PAPER.get(r.label, '')} |"
        )
    text = "\n".join(out)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")


if __name__ == "__main__":
    main()
