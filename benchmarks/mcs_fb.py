"""MCS theory on the bundled Facebook trace (issue 6): classification and thresholds.

Targets: Algorithm 1 and the exact classification side by side in under 5 s
(including reading the trace); optimized demotion thresholds with a model
objective below the published defaults'.

    python benchmarks/mcs_fb.py [--repeat 5] [--output benchmarks/results/mcs.md]

Prints (and with ``--output`` writes) Markdown tables:

1. Table I (Pearson correlations) against the paper's values;
2. Algorithm 1, the exact DP and the paper's stated width thresholds: the
   thresholds, priorities, error of Eq. (1), share misclassified, wall time;
3. the M/M/1 model objective (Eq. 5) of the defaults and of the optimized
   thresholds for the single (Aalo), double (MCS) and per-class schemes and
   several K, with the exact optimum (DP or exhaustive grid) where it is
   affordable, and the optimizer's wall time;
4. the model's sensitivity sweeps (Aalo Fig. 6.12, MCS Fig. 18).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time
import tracemalloc
from pathlib import Path

import numpy as np

import coflowopt as co
from coflowopt.io.generate import offered_load
from coflowopt.mcs import (
    Workload,
    aalo_sweep,
    build_model,
    correlations,
    dp_thresholds,
    evaluate,
    grid_search,
    linear_sweep,
    mcs_sweep,
    optimal_classification,
    optimize_thresholds,
    paper_width_thresholds,
    sncf,
)

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
MB = co.MB

TABLE_I = {
    ("width", "size"): "0.54/0.91 (0.89,0.92)",
    ("width", "gamma"): "0.5/0.81 (0.77,0.83)",
    ("width", "length"): "0.22/0.37 (0.29,0.44)",
    ("size", "gamma"): "0.97/0.96 (0.96,0.97)",
    ("size", "length"): "0.46/0.71 (0.67,0.75)",
    ("gamma", "length"): "0.51/0.82 (0.78,0.84)",
}


def best_of(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times), statistics.median(times)


def fmt(values, digits=4):
    return ", ".join(f"{v:.{digits}g}" for v in np.asarray(values).ravel())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    lines: list[str] = []
    say = lines.append

    cpu = "unknown"
    try:
        for row in Path("/proc/cpuinfo").read_text().splitlines():
            if row.startswith("model name"):
                cpu = row.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    say("# MCS theory on the Facebook trace (benchmarks/mcs_fb.py)\n")
    say(
        f"Machine: {platform.machine()}, {cpu}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"NumPy {np.__version__}. Command: `python benchmarks/mcs_fb.py --repeat {args.repeat}`.\n"
    )

    # ---------------------------------------------------------------- end to end (target < 5 s)
    t0 = time.perf_counter()
    inst = co.read(TRACE)
    w = Workload.from_instance(inst)
    pub = sncf(w)
    ex = optimal_classification(w)
    end_to_end = time.perf_counter() - t0
    _, load_best, _ = best_of(lambda: co.read(TRACE), args.repeat)
    pub, pub_best, pub_med = best_of(lambda: sncf(w), args.repeat)
    ex, ex_best, ex_med = best_of(lambda: optimal_classification(w), args.repeat)
    tracemalloc.start()
    optimal_classification(w)
    sncf(w)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    say("## 1. Table I: Pearson correlations (raw/log10, 95% interval of the log value)\n")
    corr = correlations(w)
    say("| pair | coflowopt | paper Table I |")
    say("|---|---|---|")
    for (a, b), paper in TABLE_I.items():
        p = corr.pair(a, b)
        lo, hi = p["ci_log"]
        say(f"| {a}-{b} | {p['pearson']:.2f}/{p['pearson_log']:.2f} ({lo:.2f},{hi:.2f}) | {paper} |")
    say("")

    say("## 2. SNCF classification, T_i = 10^i MB, 5 classes\n")
    say(
        f"End to end (read the trace, build the workload, Algorithm 1, exact DP) in one process: "
        f"**{end_to_end:.3f} s** (target < 5 s). Best of {args.repeat}: reading {load_best:.3f} s, "
        f"Algorithm 1 {1000 * pub_best:.2f} ms (median {1000 * pub_med:.2f}), exact DP "
        f"{1000 * ex_best:.2f} ms (median {1000 * ex_med:.2f}); peak allocations of both "
        f"(tracemalloc) {peak / 2**20:.2f} MiB.\n"
    )
    rows = [("Algorithm 1 (published, Step 10, <=)", pub), ("exact DP", ex)]
    rows.append(("Algorithm 1 with '<' (prose)", sncf(w, compare="lt")))
    for variant in ("simulation", "figure8", "testbed"):
        rows.append((f"paper `{variant}`", evaluate(w, paper_width_thresholds(variant))))
    say("| method | Delta_1..Delta_4 | priorities | coflows per class | E (Eq. 1) | misclassified |")
    say("|---|---|---|---|---|---|")
    for name, r in rows:
        say(
            f"| {name} | {fmt(r.width_thresholds)} | {' '.join(map(str, r.priorities))} | "
            f"{' '.join(map(str, r.count))} | {r.error:.4f} | {100 * r.misclassified:.1f}% |"
        )
    say("\nPer-class accuracy and size ranges (MB: min / median / max):\n")
    say("| class | published accuracy | published sizes | exact accuracy | exact sizes |")
    say("|---|---|---|---|---|")
    for i in range(5):
        cells = []
        for r in (pub, ex):
            q = r.size_quantiles[i] / MB
            cells += [f"{100 * r.accuracy[i]:.1f}%", f"{q[0]:.4g} / {q[2]:.4g} / {q[4]:.4g}"]
        say(f"| {i + 1} | " + " | ".join(cells) + " |")
    say("")

    # ---------------------------------------------------------------- thresholds
    rho = offered_load(inst)
    say(f"## 3. Demotion thresholds, M/M/1 model (Eqs. 4-5), load rho = {rho:.4f} (offered load)\n")
    say(
        "Defaults: single = Aalo (E = 10, Q1 = 10 MB), double = MCS (theta^n_j = 10^j MB, theta^w_j = "
        "2^(j-1) MB, wide if > 50 flows), per-class = Aalo's vector for each class. Initial queues: all in "
        "queue 1 (single), the paper's SNCF Delta_i = 10^i, p_i = i (double, per-class). Objective = the "
        "model's mean CCT (dimensionless). `exact` is the joint DP over all active families (`dp`) or, "
        "where that is too large, the exhaustive grid over all candidate thresholds (`grid`); `-` where "
        "both are too large.\n"
    )
    say("| scheme | numerator | K | default | optimized | exact | lower by | optimizer time | exact time |")
    say("|---|---|---|---|---|---|---|---|---|")
    for scheme in ("single", "double", "per-class"):
        for numerator in ("class", "queue") if scheme != "single" else ("class",):
            for k in (2, 3, 5, 10):
                model = build_model(w, scheme, queues=k, load=rho, numerator=numerator)
                opt = optimize_thresholds(model)
                exact, exact_time = None, float("nan")
                t = time.perf_counter()
                try:
                    exact = dp_thresholds(model, max_cells=1e9)
                except co.CoflowoptError:
                    try:
                        exact = grid_search(model, max_evaluations=10_000_000)
                    except co.CoflowoptError:
                        exact = None
                exact_time = time.perf_counter() - t
                ex_cell = "-" if exact is None else f"{exact.objective:.6f} ({exact.method})"
                flag = ""
                if exact is not None and opt.objective > exact.objective + 1e-12:
                    flag = " (optimizer above exact!)"
                say(
                    f"| {scheme} | {numerator} | {k} | {opt.default_objective:.6f} | "
                    f"{opt.objective:.6f}{flag} | {ex_cell} | {100 * opt.improvement:.2f}% | "
                    f"{opt.runtime:.2f} s | {'-' if exact is None else f'{exact_time:.2f} s'} |"
                )
    say("\nOptimized thresholds (MB) for K = 5:\n")
    say("| scheme | family | default | optimized |")
    say("|---|---|---|---|")
    for scheme in ("single", "double", "per-class"):
        model = build_model(w, scheme, queues=5, load=rho)
        opt = optimize_thresholds(model)
        for f, name in enumerate(opt.families):
            say(
                f"| {scheme} | {name} | {fmt(opt.default_thresholds[f] / MB)} | "
                f"{fmt(opt.thresholds[f] / MB)} |"
            )
    say("")

    # ---------------------------------------------------------------- sweeps
    say("## 4. Model sensitivity sweeps\n")
    say("Aalo Fig. 6.12a-c: model objective relative to one queue (FIFO); rows K, columns (E, Q1 MB):\n")
    factors, firsts = (2.0, 10.0, 100.0), (1.0, 10.0, 100.0, 1000.0)
    t = aalo_sweep(w, load=rho, queues=(1, 2, 3, 5, 10), factors=factors, first=[x * MB for x in firsts])
    cols = [(e, q) for e in factors for q in firsts]
    say("| K | " + " | ".join(f"E={e:g}, Q1={q:g}" for e, q in cols) + " |")
    say("|---|" + "---|" * len(cols))
    by_key = {(r["queues"], r["E"], r["Q1_mb"]): r["relative"] for r in t.as_dicts()}
    for k in (1, 2, 3, 5, 10):
        say(f"| {k} | " + " | ".join(f"{by_key[(k, e, q)]:.3f}" for e, q in cols) + " |")
    say("\nAalo Fig. 6.12d (equal-sized queues up to 10 TB):\n")
    say(linear_sweep(w, load=rho).to_markdown(digits=4))
    say("\nMCS Fig. 18 (double thresholds, K = 10, relative to the paper's defaults):\n")
    say(
        mcs_sweep(
            w,
            load=rho,
            narrow_first=[x * MB for x in (1, 10, 100, 1000)],
            wide_first=[x * MB for x in (1, 2, 4, 8, 16)],
        ).to_markdown(digits=4)
    )
    say("\nMCS Fig. 17a (width thresholds Delta_i = s * 10^i, default theta):\n")
    say(mcs_sweep(w, load=rho, delta_scale=(0.1, 0.5, 1.0, 5.0, 10.0)).to_markdown(digits=4))
    say(
        "\nThe model against the simulator (item 4): `benchmarks/mcs_validate.py`, results in "
        "`mcs-validation.md` (synthetic loads, simulated sweeps) and `mcs-validation-fb.md` (this trace)."
    )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        args.output.write_text(text)
    assert math.isfinite(end_to_end)


if __name__ == "__main__":
    main()
