"""How the time-indexed gap closes as the step shrinks.

For small random instances (the family of ``exact_random.py`` with 4
coflows on 3 ports) and decreasing steps: the grid schedule's value (upper
bound), the relaxed grid model's LP relaxation and MILP optimum (lower
bounds), each as a relative gap to the exact optimum, and the time.

    python benchmarks/time_indexed_gap.py [--seeds 3] [--slots 10 20 40 80]
"""

from __future__ import annotations

import argparse
import time

from exact_random import family

from coflowopt.solvers import solve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--coflows", type=int, default=4)
    ap.add_argument("--ports", type=int, default=3)
    ap.add_argument("--slots", type=int, nargs="+", default=[10, 20, 40, 80])
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    print("| seed | optimum | slots | step | grid value | gap up | LP lower | gap LP | MILP lower "
          "| gap MILP | grid s | MILP lower s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for seed in range(args.seeds):
        inst = family(seed, args.coflows, args.ports, max_flows=4)
        opt = solve(inst, method="exact").objective
        for slots in args.slots:
            t0 = time.perf_counter()
            lp = solve(inst, method="time-indexed", slots=slots, lower="lp",
                       time_limit=args.time_limit)
            t1 = time.perf_counter()
            mi = solve(inst, method="time-indexed", slots=slots, lower="milp",
                       time_limit=args.time_limit)
            t2 = time.perf_counter()
            lo_lp, lo_mi = lp.info["lower_lp"], mi.info["lower_milp"]
            print(f"| {seed} | {opt:.4f} | {slots} | {lp.info['step']:.4g} | {lp.objective:.4f} "
                  f"| {(lp.objective - opt) / opt:.2%} | {lo_lp:.4f} | {(opt - lo_lp) / opt:.2%} "
                  f"| {lo_mi:.4f} | {(opt - lo_mi) / opt:.2%} | {t1 - t0:.1f} | {t2 - t1:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
