"""Speed of the DRF closed form (Eq. 7.2) and of full HUG (issue 5).

Target: P* for 100,000 machines (200,000 links) and 100 coflows in at most
10 ms; the dissertation (§7.7.2) reports 8.6 ms per recomputation.

    python benchmarks/drf_speed.py [--repeat 20] [--output benchmarks/results/fairness.md]

Measures, each as best and median of ``--repeat`` runs (wall clock,
``time.perf_counter``) plus the peak of new allocations during one run
(``tracemalloc``):

1. the closed form on dense float64 and float32 vectors (100 x 200,000);
2. on sparse vectors (each coflow on 1,000 senders and 1,000 receivers);
3. the incremental form (one arrival or departure, then P*);
4. correlation vectors from per-link loads (normalisation);
5. whole mechanisms (DRF, HUG, PS-P, per-flow) on the bundled Facebook trace.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

import coflowopt as co
from coflowopt.fairness import (
    FairnessProblem,
    IncrementalDRF,
    allocate,
    correlation_vectors,
    drf_level,
    evaluate,
)

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
MACHINES = 100_000
COFLOWS = 100


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, float, Any]:
    """(best s, median s, peak MiB of new allocations, result)."""
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return min(times), statistics.median(times), peak / 2**20, out


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{platform.machine()}, {cpu}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
        f"NumPy {np.__version__}"
    )


def ms(x: float) -> str:
    return f"{1e3 * x:.3f}"


def verdict(best: float, median: float, target: float = 0.010) -> str:
    """Target check on the best run (the machine's speed) and on the median (with noise)."""
    def word(x: float) -> str:
        return "met" if x <= target else "MISSED"
    return f"best {word(best)}, median {word(median)} (<= {1e3 * target:g} ms)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--output", type=Path, default=None)
    ap.add_argument("--skip-trace", action="store_true", help="skip the Facebook-trace mechanisms")
    args = ap.parse_args()
    R = args.repeat
    L = 2 * MACHINES
    rng = np.random.default_rng(0)
    lines: list[str] = []
    emit = lines.append

    emit("# Fairness speed (benchmarks/drf_speed.py)\n")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    emit(
        f"Machine: {machine()}; load average at start {load} (shared machine; the dense rows "
        "are memory-bandwidth bound and slow down when other jobs run). "
        f"Command: `python benchmarks/drf_speed.py --repeat {R}`. "
        "Times are wall clock, best and median of the repeats; memory is the peak of new "
        "allocations during one run (tracemalloc), inputs excluded.\n"
    )

    # 1. dense closed form
    emit(
        f"## 1. Closed form P* = 1 / max_i sum_k w_k d^i_k: {MACHINES:,} machines "
        f"({L:,} links) x {COFLOWS} coflows\n"
    )
    emit("| input | input size | best ms | median ms | peak MiB | target |")
    emit("|---|---|---|---|---|---|")
    d64 = rng.random((COFLOWS, L))
    d64 /= d64.max(axis=1, keepdims=True)
    w = rng.integers(1, 4, COFLOWS).astype(float)
    results = {}
    for label, d, ww in (
        ("dense float64, unit weights", d64, None),
        ("dense float64, weights", d64, w),
        ("dense float32, weights", d64.astype(np.float32), w.astype(np.float32)),
    ):
        best, med, peak, level = timed(lambda d=d, ww=ww: drf_level(d, ww), R)
        results[label] = level
        emit(
            f"| {label} | {d.nbytes / 2**20:.0f} MiB | {ms(best)} | {ms(med)} | {peak:.2f} | "
            f"{verdict(best, med)} |"
        )
    assert abs(float(results["dense float64, weights"]) - float(results["dense float32, weights"])) < 1e-5

    # 2. sparse closed form
    span = 1000
    rows = np.repeat(np.arange(COFLOWS), 2 * span)
    cols = np.concatenate(
        [
            np.concatenate(
                [
                    rng.choice(MACHINES, span, replace=False),
                    MACHINES + rng.choice(MACHINES, span, replace=False),
                ]
            )
            for _ in range(COFLOWS)
        ]
    )
    vals = rng.random(rows.size)
    ds = sp.csr_array((vals, (rows, cols)), shape=(COFLOWS, L))
    best, med, peak, level = timed(lambda: drf_level(ds, w), R)
    emit(
        f"| sparse CSR, {2 * span} links per coflow, weights | {ds.nnz:,} nonzeros | {ms(best)} | "
        f"{ms(med)} | {peak:.2f} | {verdict(best, med)} |"
    )
    dense_check = drf_level(ds.toarray(), w)
    assert abs(level - dense_check) <= 1e-12 * dense_check
    emit("")

    # 3. incremental
    emit("## 2. Incremental recomputation (one arrival or departure, then P*)\n")
    emit("| update | best ms | median ms | peak MiB |")
    emit("|---|---|---|---|")
    for label, vec_of in (
        ("dense vector (200,000 links)", lambda k: d64[k]),
        ("sparse vector (2,000 links)", lambda k: ds[[k]]),
    ):
        inc = IncrementalDRF(L)
        for k in range(COFLOWS - 1):
            inc.add(f"c{k}", vec_of(k), float(w[k]))
        last = COFLOWS - 1

        def cycle(inc: IncrementalDRF = inc, vec_of: Any = vec_of, last: int = last) -> float:
            inc.add("new", vec_of(last), float(w[last]))
            level = inc.level
            inc.remove("new")
            return level

        best, med, peak, level = timed(cycle, R)
        full = drf_level(d64 if "dense" in label else ds, w)
        assert abs(level - full) <= 1e-9 * full
        emit(f"| {label}: add + P* + remove | {ms(best)} | {ms(med)} | {peak:.2f} |")
    emit("")

    # 4. normalisation
    loads = rng.random((COFLOWS, L)) * 1e9
    cap = np.full(L, 1.25e8)
    best, med, peak, _ = timed(lambda: correlation_vectors(loads, cap), max(3, R // 4))
    emit("## 3. Correlation vectors from loads (divide by capacity, scale rows to max 1)\n")
    emit("| input | best ms | median ms | peak MiB |")
    emit("|---|---|---|---|")
    emit(f"| dense {COFLOWS} x {L:,} | {ms(best)} | {ms(med)} | {peak:.1f} |\n")

    # 5. whole mechanisms on the trace
    if not args.skip_trace:
        t0 = time.perf_counter()
        inst = co.read(TRACE)
        prob = FairnessProblem.from_instance(inst)
        build = time.perf_counter() - t0
        emit(
            f"## 4. Whole mechanisms on the Facebook trace ({inst.num_coflows} coflows, "
            f"{inst.num_ports} ports, {inst.num_flows:,} flows; all coflows at once, elastic)\n"
        )
        emit(f"Reading the trace and building the correlation vectors: {build:.2f} s.\n")
        emit("| mechanism | wall s | peak MiB | isolation guarantee | utilization (% of capacity) |")
        emit("|---|---|---|---|---|")
        for name, opts in (
            ("drf", {}),
            ("hug", {}),
            ("hug", {"cooperative": True}),
            ("hug", {"stage2": "lp"}),
            ("psp", {}),
            ("perflow", {}),
            ("perendpoint", {}),
        ):
            best, _, peak, alloc = timed(lambda name=name, opts=opts: allocate(prob, name, **opts), 1)
            rep = evaluate(alloc)
            label = name + "".join(f", {k}={v}" for k, v in opts.items())
            emit(
                f"| {label} | {best:.3f} | {peak:.1f} | {float(rep.isolation_guarantee):.4g} | "
                f"{100 * rep.utilization_fraction:.1f} |"
            )
        emit("")

    emit("The long-term comparison with Varys (§7.7.4) is in `fairness_longterm.md` "
         "(`benchmarks/hug_longterm.py`).")
    text = "\n".join(lines)
    print(text)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")


if __name__ == "__main__":
    main()
