"""Write ``instances/optima/``: small instances with proven optima of sum w_k C_k.

Each instance is proven optimal by the branch and bound over event orders
(``solve(method="exact")``) and confirmed by the event-position MILP (``exact-milp``),
an independent model solved by HiGHS: both must prove optimality and agree within 1e-9
(relative). The optimal schedule is written beside the instance, read back and checked
by ``check_feasible``; the recorded optimum is that file's sum w_k C_k. A candidate that
the MILP does not confirm is skipped and listed in the manifest (the next seed of its
shape and variant takes its place). Everything is seeded: a rerun on the same machine
writes the same bytes.

Shapes (``SHAPES``): the Facebook trace's coflows subsampled onto a few ports and
rescaled to integer sizes, synthetic MapReduce shuffles, incasts, broadcasts, random
flows, the papers' worked examples, and the adversarial witnesses of the gap search
(``instances/worst_cases/`` and new searches against other targets). Variants: all
coflows at time 0, integer releases, and integer weights.

    python benchmarks/make_optima.py                 # write the library
    python benchmarks/make_optima.py --check         # prove everything, write nothing
    python benchmarks/make_optima.py --table         # heuristics and bounds against OPT (Markdown)

The heuristics and their parameters are declared in :data:`HEURISTICS` and copied into
the manifest, so the tests run the same ones. Size unit: 1 MB, so Aalo's and MCS's
thresholds (bytes in their papers) are given in MB.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import platform
import resource
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.bounds import BOUNDS, compute_bound
from coflowopt.exact.gap_search import exact_ratio, gap_search
from coflowopt.io import native, read_schedule, write_schedule
from coflowopt.io._common import atomic_writer
from coflowopt.io.generate import rescale_load
from coflowopt.io.workloads import facebook_trace
from coflowopt.result import Result, Status
from coflowopt.sim import simulate
from coflowopt.solvers import solve

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "instances" / "optima"
MANIFEST = "MANIFEST.json"
MANIFEST_TAG = "coflowopt-optima/1"

SOLVE_LIMIT = 600.0
"""Seconds for each proof; every instance here is proven in far less (a proof cut short
stops the script: the library never holds an unproven optimum)."""

AGREE = 1e-9
"""Relative agreement required between the two proofs, and between a proof and the
schedule file's value."""

HEURISTICS: dict[str, dict[str, Any]] = {
    "varys": {},
    "sincronia": {},
    "aalo": {"first_threshold": 10.0},
    "mcs": {"narrow_thresholds": [10.0**i for i in range(1, 10)],
            "wide_thresholds": [2.0 ** (i - 1) for i in range(1, 10)]},
    "fifo": {},
    "scf": {},
    "ncf": {},
    "tcf": {},
    "maluca": {},
    "baraat": {},
    "pfp": {},
    "fair": {},
    "wss": {},
    "psp": {},
    "drf": {},
    "hug": {},
}
"""Simulator policies in the table, with their parameters (sizes in MB: Aalo's first
threshold of 10 MB is 10; MCS's thresholds 10^i MB and 2^(i-1) MB). Left out: ``dark``
and ``coflourish``, whose time steps and feedback periods are in seconds; ``creek``,
whose wait threshold is too; ``varys-deadline`` (an admission policy for deadlines);
``static-order`` (the orders come from the solvers below)."""

ORDERS = ("sincronia", "pairwise-order", "local-search")
"""Solver methods that return one priority order's schedule (``solve(method=...)``). Not
``permutation``: its search over all orders runs into its time limit on 7 coflows (23 s
of CPU on one), so what it returns would depend on the machine's load."""


@dataclass(frozen=True, slots=True)
class Entry:
    """An instance to prove: its file name, shape, variant and where it came from."""

    name: str
    shape: str
    variant: str
    source: str
    instance: Instance


# ---------------------------------------------------------------- shapes

VARIANTS = ("zero", "release", "weighted")
"""``zero``: every coflow at time 0, weight 1; ``release``: integer releases, weight 1;
``weighted``: integer releases and weights 1..3."""


def _variant_data(rng: np.random.Generator, K: int, variant: str, span: int) -> tuple[list[int], list[int]]:
    """Releases (integers in 0..span, the first 0) and weights for a variant."""
    if variant == "zero":
        return [0] * K, [1] * K
    rel = sorted(int(x) for x in rng.integers(0, span + 1, K))
    rel = [r - rel[0] for r in rel]
    weights = [int(x) for x in rng.integers(1, 4, K)] if variant == "weighted" else [1] * K
    return rel, weights


def _merged(src: np.ndarray, dst: np.ndarray, size: np.ndarray) -> list[tuple[int, int, float]]:
    """Flows with one port pair merged into one (the fluid model sees the same demand)."""
    out: dict[tuple[int, int], float] = {}
    for s, d, z in zip(src.tolist(), dst.tolist(), size.tolist(), strict=True):
        out[(s, d)] = out.get((s, d), 0.0) + z
    return [(s, d, z) for (s, d), z in sorted(out.items())]


def _seeds(base: int, variant: str) -> Iterator[int]:
    """The seeds of a (shape, variant) stream: ``base + 1000 * variant index + i``."""
    return itertools.count(base + 1000 * VARIANTS.index(variant))


def trace_stream(trace: Instance, variant: str) -> Iterator[Entry]:
    """The trace's coflows, a random window of consecutive arrivals mapped onto a few ports.

    Racks go to ports by a random map; flows of one coflow on the same port pair are
    merged; sizes are rescaled so that the largest flow is 40 units, rounded, at least 1
    (the trace's heavy tail makes most small flows 1). ``release``: the window's arrival
    times kept in proportion and stretched to an offered load of 1, rounded to integers.
    """
    for seed in _seeds(10_000, variant):
        rng = np.random.default_rng(seed)
        K, P = int(rng.integers(4, 7)), int(rng.integers(3, 6))
        first = int(rng.integers(0, trace.num_coflows - K))
        port_of = rng.integers(0, P, trace.num_ports)
        picked = [trace.coflows[k] for k in range(first, first + K)]
        flows = [_merged(port_of[c.src], port_of[c.dst], c.sizes) for c in picked]
        top = max(z for fl in flows for _, _, z in fl)
        scaled = [[(s, d, float(max(1, round(40 * z / top)))) for s, d, z in fl] for fl in flows]
        _, weights = _variant_data(rng, K, variant, 0)
        coflows = tuple(Coflow.from_flows(c.id, fl, weight=float(w))
                        for c, fl, w in zip(picked, scaled, weights, strict=True))
        inst = Instance(Fabric.uniform(P), coflows)
        arrivals = np.array([c.release for c in picked])
        if variant != "zero":
            if not float(np.ptp(arrivals)) > 0:
                continue  # one arrival time: no releases to keep
            inst = rescale_load(inst.with_releases(arrivals - arrivals[0]), 1.0)
            inst = inst.with_releases(np.round(inst.release))
        yield Entry(f"trace_{variant}_{seed}", "trace", variant,
                    f"FB2010-1Hr-150-0.txt coflows {first + 1}..{first + K} (ids "
                    f"{picked[0].id}..{picked[-1].id}) on {P} ports, seed {seed}", inst)


FlowMaker = Callable[[np.random.Generator, int], list[tuple[int, int, float]]]


@dataclass(frozen=True, slots=True)
class Synthetic:
    """A synthetic shape: ``coflows`` and ``ports`` ranges, a coflow's flows."""

    base_seed: int
    make: FlowMaker
    coflows: tuple[int, int]
    ports: tuple[int, int]
    doc: str

    def stream(self, shape: str, variant: str) -> Iterator[Entry]:
        for seed in _seeds(self.base_seed, variant):
            rng = np.random.default_rng(seed)
            K = int(rng.integers(self.coflows[0], self.coflows[1] + 1))
            P = int(rng.integers(self.ports[0], self.ports[1] + 1))
            flows = [self.make(rng, P) for _ in range(K)]
            rel, weights = _variant_data(rng, K, variant, 3 * K)
            coflows = tuple(Coflow.from_flows(f"C{k + 1}", fl, release=float(r), weight=float(w))
                            for k, (fl, r, w) in enumerate(zip(flows, rel, weights, strict=True)))
            yield Entry(f"{shape}_{variant}_{seed}", shape, variant, f"{self.doc}, seed {seed}",
                        Instance(Fabric.uniform(P), coflows))


def _shuffle(rng: np.random.Generator, P: int) -> list[tuple[int, int, float]]:
    """``m`` mappers (ports may repeat) send equal parts of each of ``r`` reducers' data."""
    m, r = int(rng.integers(1, 4)), int(rng.integers(1, min(3, P) + 1))
    mappers = rng.integers(0, P, m)
    reducers = rng.choice(P, r, replace=False)
    per_flow = rng.integers(1, 6, r)  # a reducer's data is m times this: integer flows
    return _merged(np.tile(mappers, r), np.repeat(reducers, m),
                   np.repeat(per_flow, m).astype(np.float64))


def _incast(rng: np.random.Generator, P: int) -> list[tuple[int, int, float]]:
    """``n`` senders on distinct ports to one receiver, integer sizes 1..10."""
    n = int(rng.integers(2, P + 1))
    dst = int(rng.integers(P))
    return [(int(s), dst, float(rng.integers(1, 11))) for s in sorted(rng.choice(P, n, replace=False))]


def _broadcast(rng: np.random.Generator, P: int) -> list[tuple[int, int, float]]:
    """One sender sends the same data (1..10) to ``n`` receivers on distinct ports."""
    n = int(rng.integers(2, P + 1))
    src, size = int(rng.integers(P)), float(rng.integers(1, 11))
    return [(src, int(d), size) for d in sorted(rng.choice(P, n, replace=False))]


def _flows(rng: np.random.Generator, P: int) -> list[tuple[int, int, float]]:
    """1..4 flows between uniformly random ports, integer sizes 1..10 (pairs merged)."""
    n = int(rng.integers(1, 5))
    return _merged(rng.integers(0, P, n), rng.integers(0, P, n),
                   rng.integers(1, 11, n).astype(np.float64))


SYNTHETIC: dict[str, Synthetic] = {
    "shuffle": Synthetic(20_000, _shuffle, (3, 6), (3, 5),
                         "MapReduce shuffles: 1-3 mappers x 1-3 reducers, 1-5 units per flow"),
    "incast": Synthetic(30_000, _incast, (4, 7), (3, 5),
                        "incast: 2..P senders to one receiver, sizes 1-10"),
    "broadcast": Synthetic(40_000, _broadcast, (4, 7), (3, 5),
                           "broadcast: one sender, the same 1-10 units to 2..P receivers"),
    "random": Synthetic(50_000, _flows, (5, 7), (2, 6),
                        "random flows: 1-4 per coflow, sizes 1-10"),
}
"""The synthetic shapes (releases 0..3K on the release variants)."""

QUOTA: dict[str, int] = {"trace": 10, "shuffle": 8, "incast": 6, "broadcast": 6, "random": 4}
"""Instances per variant of each generated shape."""

MAX_TRIES = 4
"""A stream gives up (and the script stops) after this many times its quota of candidates."""


def streams() -> Iterator[tuple[str, str, Iterator[Entry]]]:
    """(shape, variant, candidates) of every generated shape."""
    trace = facebook_trace()
    for variant in VARIANTS:
        yield "trace", variant, trace_stream(trace, variant)
    for shape, syn in SYNTHETIC.items():
        for variant in VARIANTS:
            yield shape, variant, syn.stream(shape, variant)


def _variant_of(inst: Instance) -> str:
    """The variant an instance's data make: weights differ, else releases, else neither."""
    return ("weighted" if len(set(inst.weight.tolist())) > 1 else
            "release" if float(np.ptp(inst.release)) > 0 else "zero")


def bundled_entries() -> Iterator[Entry]:
    """The worked examples and the witnesses already in ``instances/``."""
    files = [("example", p) for p in sorted((ROOT / "instances" / "examples").glob("*.json"))]
    files += [("example", ROOT / "instances" / "permutation_gap.json"),
              ("example", ROOT / "instances" / "fairness" / "hug_fig7_2_fabric.json")]
    files += [("worst_case", p) for p in sorted((ROOT / "instances" / "worst_cases").glob("*.json"))]
    for shape, path in files:
        inst = native.read(path)
        variant = _variant_of(inst)
        # the deadlines and names stay in the source file; here only sum w_k C_k counts
        coflows = tuple(Coflow(c.id, c.src, c.dst, c.sizes, release=c.release, weight=c.weight)
                        for c in inst.coflows)
        yield Entry(f"{shape}_{path.stem}", shape, variant,
                    str(path.relative_to(ROOT)), Instance(inst.fabric, coflows))


GAP_TARGETS: tuple[tuple[str, str, int], ...] = (
    ("scheduler", "sincronia", 0), ("scheduler", "sincronia", 1),
    ("scheduler", "aalo", 1), ("scheduler", "fifo", 1), ("scheduler", "scf", 1),
    ("scheduler", "tcf", 1), ("scheduler", "ncf", 1), ("scheduler", "pfp", 1),
    ("scheduler", "fair", 1), ("scheduler", "maluca", 1),
    ("bound", "port", 1), ("bound", "sincronia", 1), ("bound", "interval", 1),
)
"""New gap searches: (kind, target, seed) on 3 ports, 4 coflows of 1-3 flows."""

GAP_ITERATIONS = 80


def gap_entries() -> Iterator[Entry]:
    """Witnesses of new gap searches, stopped after :data:`GAP_ITERATIONS` candidates.

    The search's schedulers run with their default parameters (bytes: on these unit sizes
    Aalo keeps every coflow in its first queue), unlike the table's (:data:`HEURISTICS`).
    """
    for kind, target, seed in GAP_TARGETS:
        # time_limit far above what the iterations take: the search stops at its
        # iterations, so it is deterministic (its docstring)
        res = gap_search(**{kind: target}, ports=3, coflows=4, max_flows=3,
                         iterations=GAP_ITERATIONS, seed=seed, time_limit=3600.0)
        if res.instance is None or res.stopped != "iterations":
            raise RuntimeError(f"gap search for {kind} {target} stopped early: {res.stopped}")
        flag = "--bound" if kind == "bound" else "--scheduler"
        yield Entry(f"worst_case_gap_{kind}_{target}_s{seed}", "worst_case",
                    _variant_of(res.instance), f"coflowopt search gap {flag} {target} --ports 3 --coflows 4 "
                    f"--max-flows 3 --iterations {GAP_ITERATIONS} --seed {seed} "
                    f"(ratio {res.ratio:.6g})", res.instance.replace(name=""))


SHAPES = ("trace", "shuffle", "incast", "broadcast", "random", "example", "worst_case")


# ---------------------------------------------------------------- proofs

def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def _summary(res: Result) -> dict[str, Any]:
    return {"method": res.method, "status": res.status.value, "objective": res.objective,
            "bound": res.bound}


def prove(entry: Entry, directory: Path | None) -> tuple[dict[str, Any] | None, str]:
    """Prove the optimum twice; if both proofs agree, write the instance and its optimal
    schedule and return the manifest entry, else ``None`` and why.

    Raises where the primary proof is wrong: exact's value above exact-milp's optimum, or
    its schedule failing the check or having another value once written. exact-milp's
    "optimal" above exact's checked schedule is exact-milp's error: skipped, with why.
    """
    inst = entry.instance
    res = solve(inst, method="exact", time_limit=SOLVE_LIMIT)
    if res.status is not Status.OPTIMAL or res.schedule is None:
        return None, f"exact: {res.status.value}"
    milp = solve(inst, method="exact-milp", time_limit=SOLVE_LIMIT)
    if not check_feasible(inst, res.schedule):
        raise RuntimeError(f"{entry.name}: exact's schedule fails the check")
    if milp.status is not Status.OPTIMAL:
        return None, (f"exact-milp: {milp.status.value} (value {milp.objective!r}, bound "
                      f"{milp.bound!r}; exact: {res.objective!r})")
    if res.objective > milp.objective * (1 + AGREE):  # the primary proof is wrong: stop
        raise RuntimeError(f"{entry.name}: exact {res.objective!r} above exact-milp's "
                           f"{milp.objective!r}")
    if _rel(res.objective, milp.objective) > AGREE:  # exact's schedule is checked below
        return None, (f"exact-milp: optimal {milp.objective!r} above exact's "
                      f"{res.objective!r}")
    inst_file = f"{entry.shape}/{entry.name}.json"
    sched_file = f"{entry.shape}/{entry.name}.schedule.json"
    sched = res.schedule
    if directory is not None:
        (directory / entry.shape).mkdir(parents=True, exist_ok=True)
        frac = exact_ratio(res.objective, 1.0)
        description = (
            f"An instance of the library of proven optima (shape {entry.shape}, variant "
            f"{entry.variant}): the optimal sum w_k C_k is {res.objective:.12g}"
            f"{'' if frac is None else f' (= {frac})'}, proven by method='exact' and "
            f"confirmed by method='exact-milp'; an optimal schedule is "
            f"{entry.name}.schedule.json (instances/optima/README.md)")
        native.write(inst.replace(name=entry.name), directory / inst_file,
                     metadata={"_source": entry.source, "_description": description})
        write_schedule(sched, inst, directory / sched_file,
                       metadata={"_proved_by": "coflowopt solve --method exact"})
        inst = native.read(directory / inst_file)
        sched = read_schedule(directory / sched_file, inst)
    report = check_feasible(inst, sched)
    if not report:
        raise RuntimeError(f"{entry.name}: the optimal schedule fails the check: {report}")
    value = float(np.dot(inst.weight, sched.coflow_completion(inst)))
    if _rel(value, res.objective) > AGREE:
        raise RuntimeError(f"{entry.name}: the schedule's value {value!r} is not the "
                           f"optimum {res.objective!r}")
    frac = exact_ratio(value, 1.0)
    return {
        "name": entry.name, "shape": entry.shape, "variant": entry.variant,
        "instance": inst_file, "schedule": sched_file, "source": entry.source,
        "coflows": inst.num_coflows, "ports": inst.num_ports, "flows": inst.num_flows,
        "optimum": value, "optimum_exact": None if frac is None else str(frac),
        "proof": _summary(res),
        "confirmation": {**_summary(milp),
                         "relative_difference": _rel(res.objective, milp.objective)},
    }, ""


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def build(directory: Path | None) -> None:
    """Prove the fixed instances and fill each generated shape's quota, then write the
    manifest. Candidates not proven twice are skipped, and listed in the manifest."""
    c0, t0 = cpu(), time.perf_counter()
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    seen: dict[Instance, str] = {}

    def attempt(e: Entry) -> bool:
        c1 = cpu()
        if any(r["name"] == e.name for r in rows):
            raise RuntimeError(f"two instances named {e.name}")
        if e.instance in seen:
            row, why = None, f"the same instance as {seen[e.instance]}"
        else:
            row, why = prove(e, directory)
        if row is None:
            skipped.append({"name": e.name, "source": e.source, "reason": why})
            print(f"  skipped {e.name}: {why}", file=sys.stderr, flush=True)
            return False
        seen[e.instance] = e.name
        rows.append(row)
        print(f"[{len(rows)}] {e.name}: K={row['coflows']} P={row['ports']} F={row['flows']} "
              f"OPT={row['optimum']:.6g} ({row['optimum_exact']}) {cpu() - c1:.1f} cpu s",
              file=sys.stderr, flush=True)
        return True

    for e in [*bundled_entries(), *gap_entries()]:
        attempt(e)
    for shape, variant, stream in streams():
        got = 0
        for n, e in enumerate(stream):
            if n >= MAX_TRIES * QUOTA[shape]:
                raise RuntimeError(f"{shape} {variant}: fewer than {QUOTA[shape]} proven in "
                                   f"{n} candidates")
            got += attempt(e)
            if got == QUOTA[shape]:
                break
    if directory is not None:
        doc = {"format": MANIFEST_TAG,
               "unit": "sizes in MB (2^20 bytes), every port 1 MB per time unit",
               "heuristics": HEURISTICS, "orders": list(ORDERS), "bounds": list(BOUNDS)}
        lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in doc.items())
                 + ', "instances": [']
        lines += [" " + json.dumps(r) + ("," if j < len(rows) - 1 else "")
                  for j, r in enumerate(rows)]
        lines.append('], "skipped": [')
        lines += [" " + json.dumps(r) + ("," if j < len(skipped) - 1 else "")
                  for j, r in enumerate(skipped)]
        lines.append("]}")
        with atomic_writer(directory / MANIFEST) as fh:
            fh.write("\n".join(lines) + "\n")
        listed = {f for r in rows for f in (r["instance"], r["schedule"])}
        stale = sorted(q for q in (p.relative_to(directory).as_posix()
                                   for p in directory.glob("*/*.json")) if q not in listed)
        if stale:
            print(f"not in the manifest (left alone): {', '.join(stale)}", file=sys.stderr)
    print(f"{len(rows)} proven, {len(skipped)} skipped, in {time.perf_counter() - t0:.0f} s "
          f"wall, {cpu() - c0:.0f} s cpu", file=sys.stderr)


# ---------------------------------------------------------------- the table

def load(directory: Path = OUT) -> tuple[dict[str, Any], list[tuple[dict[str, Any], Instance]]]:
    """The manifest and every (entry, instance) of the library."""
    doc = json.loads((directory / MANIFEST).read_text())
    return doc, [(r, native.read(directory / r["instance"])) for r in doc["instances"]]


def ratios(directory: Path = OUT) -> dict[str, list[tuple[str, float]]]:
    """Per heuristic, order or bound: (shape, ratio) over the library; heuristics and
    orders value / OPT, bounds OPT / bound."""
    doc, lib = load(directory)
    out: dict[str, list[tuple[str, float]]] = {}
    for r, inst in lib:
        opt = r["optimum"]
        for name, params in doc["heuristics"].items():
            v = simulate(inst, name, params, record=False).summary.weighted_completion
            out.setdefault(name, []).append((r["shape"], v / opt))
        for m in doc["orders"]:
            res = solve(inst, method=m, time_limit=60.0)
            out.setdefault(f"order:{m}", []).append((r["shape"], res.objective / opt))
        for b in doc["bounds"]:
            low = compute_bound(inst, b, time_limit=60.0).bound
            out.setdefault(f"bound:{b}", []).append((r["shape"], opt / low))
    return out


def table(directory: Path = OUT) -> None:
    _, lib = load(directory)
    counts = {s: sum(r["shape"] == s for r, _ in lib) for s in SHAPES}
    c0, t0 = cpu(), time.perf_counter()
    rat = ratios(directory)
    zero = [float(np.ptp(inst.release)) == 0 for _, inst in lib]  # Sincronia's factor 4
    print(f"machine: {platform.machine()}, python {platform.python_version()}; "
          f"{len(lib)} instances; {time.perf_counter() - t0:.1f} s wall, {cpu() - c0:.1f} s cpu\n")
    cols = [s for s in SHAPES if counts[s]]
    print("| | all (" + str(len(lib)) + ") worst / mean | at OPT | at time 0 (" + str(sum(zero))
          + ") | " + " | ".join(f"{s} ({counts[s]})" for s in cols) + " |")
    print("|---" * (4 + len(cols)) + "|")
    for name, vals in rat.items():
        x = np.array([v for _, v in vals])
        z = x[np.array(zero)]
        cells = [f"{x.max():.3f} / {x.mean():.3f}", str(int(np.sum(x <= 1 + 1e-6))),
                 f"{z.max():.3f} / {z.mean():.3f}"]
        for s in cols:
            y = np.array([v for sh, v in vals if sh == s])
            cells.append(f"{y.max():.3f} / {y.mean():.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    worst = {n: max(range(len(v)), key=lambda i: v[i][1]) for n, v in rat.items()}
    print("\nworst instances: " + "; ".join(f"{n} {lib[i][0]['name']}" for n, i in worst.items()))
    if any(math.isnan(v) for vals in rat.values() for _, v in vals):
        print("some ratio is nan", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="prove everything, write nothing")
    ap.add_argument("--table", action="store_true", help="print the ratio table of the library")
    ap.add_argument("--out", type=Path, default=OUT, help="the library's directory")
    args = ap.parse_args()
    if args.table:
        table(args.out)
    else:
        build(None if args.check else args.out)


if __name__ == "__main__":
    main()
