"""Windows re-ordered exactly (``method="lns"``) after the local search's insert moves.

For synthetic instances of a few shapes and seeds: the local search from Sincronia's
order without perturbations (``perturbations=0``) runs to its local optimum of insert
moves; the large neighbourhood search then starts from that order with windows of 3, 4
and 5 coflows. Counts the instances where the windows found a better order, and the
largest and mean improvement among those. Deterministic (no time limit decides).

    python benchmarks/lns_small.py [--seeds 1-14]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time

from coflowopt.exact.lns import lns
from coflowopt.exact.local_search import local_search
from coflowopt.io.generate import synthetic

SHAPES = ((20, 4, 0.95), (25, 3, 0.9), (30, 5, 0.95), (40, 6, 0.95), (60, 8, 0.95))
"""(coflows, ports, load) of ``generate synthetic``."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1-14", help="first-last seed")
    args = ap.parse_args()
    first, last = (int(x) for x in args.seeds.split("-"))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python "
          f"{platform.python_version()}; load {os.getloadavg()[0]:.2f} at the start; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print("| coflows, ports, load | instances | window | improved | largest improvement "
          "| mean improvement (improved ones) | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for K, P, load in SHAPES:
        insts = [synthetic(K, P, load=load, seed=s) for s in range(first, last + 1)]
        optima = []
        for inst in insts:
            ls = local_search(inst, time_limit=600, starts=("sincronia",), perturbations=0)
            index = {c: k for k, c in enumerate(inst.ids)}
            optima.append((ls.objective, [index[c] for c in ls.info["order"]]))
        for w in (3, 4, 5):
            cpu0 = time.process_time()
            gains = []
            for inst, (value, order) in zip(insts, optima, strict=True):
                res = lns(inst, time_limit=600, window=w, starts=(), initial_orders=[order])
                if res.objective < value * (1 - 1e-9):
                    gains.append(1 - res.objective / value)
            cpu = time.process_time() - cpu0
            largest = f"{100 * max(gains):.3f}%" if gains else "-"
            mean = f"{100 * sum(gains) / len(gains):.3f}%" if gains else "-"
            print(f"| {K}, {P}, {load} | {len(insts)} | {w} | {len(gains)} | {largest} | {mean} "
                  f"| {cpu:.1f} |", flush=True)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"peak RSS {ru.ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
