"""The M/M/1 threshold model against the simulator (issue 6, item 4 and the simulated side of item 5).

    python benchmarks/mcs_validate.py [--coflows 100] [--ports 10] [--queues 10]
        [--fb] [--output benchmarks/results/mcs-validation.md]

1. Synthetic loads 10%-80% (:func:`coflowopt.mcs.validate.load_sweep`: the
   same coflows from ``coflowopt.io.generate.synthetic``, with Poisson
   arrivals at each offered load). Each load has four configurations:
   Aalo and MCS, each with its default and its model-optimized thresholds.
   Each row has the model's prediction and the simulated mean CCT, both as
   ratios to Aalo with its defaults.
2. Simulated sensitivity sweeps beside the model, at load 0.5: Aalo's Q1
   (Fig. 6.12b), MCS theta^w_1 and theta^n_1 (Fig. 18).
3. With ``--fb``: the same four configurations on the bundled Facebook
   trace (slow: 706,397 flows).

The report ends with agreement statistics: the correlation between the
predicted and the simulated ratios, and how often the model predicts the
right direction (better or worse than Aalo's defaults).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import coflowopt as co
from coflowopt.io.generate import synthetic
from coflowopt.mcs.sweeps import Table
from coflowopt.mcs.validate import COLUMNS, CONFIGS, load_sweep, threshold_sweep, validate

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
MB = co.MB


def agreement(rows: list[dict]) -> str:
    others = [r for r in rows if r["config"] != "aalo-default"]
    if not others:
        return "no rows to compare"
    p = np.array([r["predicted_vs_aalo"] for r in others])
    s = np.array([r["simulated_vs_aalo"] for r in others])
    direction = np.mean(np.sign(p - 1) == np.sign(s - 1))
    corr = float(np.corrcoef(p, s)[0, 1]) if p.size > 2 and p.std() > 0 and s.std() > 0 else float("nan")
    err = np.abs(p - s) / s
    lines = [
        f"- rows compared: {p.size} (every configuration except Aalo's defaults)",
        f"- Pearson correlation of predicted and simulated ratios: {corr:.3f}",
        f"- the model predicts the right direction (better or worse than Aalo's defaults) "
        f"in {100 * direction:.0f}%",
        f"- mean |predicted - simulated| / simulated ratio: {100 * err.mean():.1f}% "
        f"(max {100 * err.max():.1f}%)",
    ]
    for config in ("aalo-optimized", "mcs-default", "mcs-optimized"):
        sel = [r for r in others if r["config"] == config]
        if sel:
            worse = sum(r["simulated_vs_aalo"] > 1 for r in sel)
            pred = np.mean([r["predicted_vs_aalo"] for r in sel])
            sim = np.mean([r["simulated_vs_aalo"] for r in sel])
            lines.append(
                f"- {config}: predicted ratio {pred:.3f} on average, simulated {sim:.3f}; "
                f"simulated worse than Aalo's defaults in {worse} of {len(sel)}"
            )
    opt_vs_def = []
    for load in sorted({r["load"] for r in rows}):
        by = {r["config"]: r for r in rows if r["load"] == load}
        for fam in ("aalo", "mcs"):
            if f"{fam}-default" in by and f"{fam}-optimized" in by:
                opt_vs_def.append(
                    by[f"{fam}-optimized"]["simulated_cct"]
                    <= by[f"{fam}-default"]["simulated_cct"] * (1 + 1e-9)
                )
    if opt_vs_def:
        lines.append(
            f"- optimized thresholds simulate no worse than their defaults in {sum(opt_vs_def)} of "
            f"{len(opt_vs_def)} (load, scheduler) pairs"
        )
    return "\n".join(lines)


def synthetic_section(args: argparse.Namespace, loads: tuple[float, ...], say: Callable[[str], None]) -> None:
    say(
        f"## 1. Synthetic loads (synthetic({args.coflows} coflows, {args.ports} ports, FB bins), "
        f"seed {args.seed})\n"
    )
    table = load_sweep(
        loads=loads, num_coflows=args.coflows, num_ports=args.ports, seed=args.seed, queues=args.queues
    )
    say(table.to_markdown(digits=4))
    say("\nAgreement over all loads:\n")
    say(agreement(table.as_dicts()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--coflows", type=int, default=100)
    parser.add_argument("--ports", type=int, default=10)
    parser.add_argument("--queues", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loads", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8")
    parser.add_argument("--fb", action="store_true", help="also validate on the Facebook trace (slow)")
    parser.add_argument("--no-sweeps", action="store_true")
    parser.add_argument("--no-synthetic", action="store_true", help="skip the synthetic load sweep")
    parser.add_argument(
        "--fb-from",
        nargs="+",
        type=Path,
        default=None,
        metavar="JSON",
        help="instead of simulating the trace here, combine `coflowopt mcs validate FB --configs C --json` "
        "outputs (one configuration each, run in parallel)",
    )
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    loads = tuple(float(x) for x in args.loads.split(","))
    lines: list[str] = []

    def say(text: str = "") -> None:
        lines.append(text)
        print(text, flush=True)
        if args.output:  # keep what is done if a long run is interrupted
            args.output.write_text("\n".join(lines) + "\n")

    say("# MCS threshold model vs simulation (benchmarks/mcs_validate.py)\n")
    say(
        f"Machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}. "
        f"Command: `python benchmarks/mcs_validate.py {' '.join(sys.argv[1:])}`. K = {args.queues} "
        "queues; the optimized thresholds are exact model optima (the DP) unless `exact` says False. "
        "CCTs in seconds (1 Gbit/s ports).\n"
    )
    t0 = time.perf_counter()
    if not args.no_synthetic:
        synthetic_section(args, loads, say)
        say(f"\n(section time {time.perf_counter() - t0:.0f} s)\n")

    if not args.no_sweeps:
        inst = synthetic(args.coflows, args.ports, load=0.5, seed=args.seed)
        say("## 2. Simulated sensitivity sweeps beside the model (same coflows, load 0.5)\n")
        for kind, values in (
            ("aalo-queues", [1, 2, 3, 5, 10]),
            ("aalo", [x * MB for x in (1, 10, 100, 1000)]),
            ("aalo-factor", [2, 10, 100]),
            ("mcs-wide", [x * MB for x in (1, 2, 4, 8, 16)]),
            ("mcs-narrow", [x * MB for x in (1, 10, 100, 1000)]),
        ):
            t1 = time.perf_counter()
            sweep = threshold_sweep(inst, kind=kind, values=values, queues=args.queues, load=0.5)
            say(f"{sweep.title} ({time.perf_counter() - t1:.0f} s):\n")
            say(sweep.to_markdown(digits=4))
            say()

    if args.fb_from:
        say("## 3. Facebook trace (526 coflows, 706,397 flows; offered load on 1 Gbit/s ports)\n")
        say(
            "Each configuration was simulated in its own process with `coflowopt mcs validate "
            "instances/fb2010/FB2010-1Hr-150-0.txt --queues 10 --configs NAME --json`; the rows are "
            "combined here.\n"
        )
        rows = []
        for path in args.fb_from:
            rows.extend(json.loads(path.read_text())["rows"])
        rows.sort(key=lambda r: CONFIGS.index(r["config"]))
        base = next(r["simulated_cct"] for r in rows if r["config"] == "aalo-default")
        for r in rows:
            r["simulated_vs_aalo"] = r["simulated_cct"] / base
        table = Table(COLUMNS, tuple(tuple(r[c] for c in COLUMNS) for r in rows))
        say(table.to_markdown(digits=4))
        say("\nAgreement:\n")
        say(agreement(rows))
        say()

    if args.fb:
        t2 = time.perf_counter()
        inst = co.read(TRACE)
        say("## 3. Facebook trace (526 coflows, 706,397 flows; offered load on 1 Gbit/s ports)\n")
        fb = validate(
            inst, queues=args.queues, workload="FB2010", progress=lambda c: print(f"  {c}", flush=True)
        )
        say(fb.to_markdown(digits=4))
        say("\nAgreement:\n")
        say(agreement(fb.as_dicts()))
        say(f"\n(section time {time.perf_counter() - t2:.0f} s)\n")


if __name__ == "__main__":
    main()
