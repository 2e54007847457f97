"""A sweep of 2,000 simulations on one, two local processes and a local Dask cluster.

    python benchmarks/sweep_scaling.py [--small] [--seeds N] [--coflows N]
        [--output benchmarks/results/sweep_scaling.md]

The experiment: 10 schedulers x 10 offered loads (0.1 ... 1.0) x 20 seeds, each cell one
simulation of a 200-coflow synthetic instance on 20 ports
(:func:`coflowopt.io.generate.synthetic`, the Facebook bins). It is swept three times,
each into a fresh folder, in one run of this script:

1. ``jobs=1`` (every cell in this process, one after another);
2. ``jobs=2`` (a local pool of two worker processes);
3. ``dask="local:2"`` (a Dask ``LocalCluster`` of two single-threaded worker processes).

The three tables must be identical (every column but the measured times ``runtime_s``
and ``wall_s``; the per-coflow table whole), and the speed-up of each parallel run over
``jobs=1`` (the target on the 2-core machine: at least 80% of linear, 1.6x) is reported
with wall and CPU time (user + sys of this process and its children; on a busy machine the
wall-clock speed-up means little, and the CPU time shows what each engine adds).

Then the kill-and-resume check: ``coflowopt sweep --jobs 2`` runs in a child process
(its own process group) and is killed with SIGKILL once about half of the cells are on
disk; ``sweep(..., resume=True)`` finishes it. Every cell found whole on disk must be
reused (the sweep's ``cached`` count), none of those files rewritten (their modification
times), and the resumed tables equal to the first run's.

``--small`` runs 2 seeds (200 cells) instead of 20: the same instances and schedulers,
a tenth of the work; the full run is about ten times as long.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import coflowopt as co
from coflowopt.experiment import Experiment, InstanceSpec, SweepResult, load, sweep

ROOT = Path(__file__).resolve().parents[1]
SCHEDULERS = ("varys", "sincronia", "aalo", "fair", "fifo", "scf", "ncf", "tcf", "mcs", "pfp")
LOADS = tuple(round(0.1 * i, 1) for i in range(1, 11))
TIMED = ("runtime_s", "wall_s")
"""Columns of the runs table that are measured times, not results."""


def experiment(seeds: int, coflows: int, ports: int) -> Experiment:
    insts = [InstanceSpec("synthetic", {"num_coflows": coflows, "num_ports": ports, "load": x})
             for x in LOADS]
    return Experiment(insts, list(SCHEDULERS), seeds=list(range(seeds)), name="sweep-scaling")


def cpu() -> float:
    """User + sys seconds of this process and its finished children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed_sweep(exp: Experiment, out: Path, **engine: object) -> tuple[SweepResult, float, float]:
    c0, t0 = cpu(), time.perf_counter()
    res = sweep(exp, out, **engine)  # type: ignore[arg-type]
    wall, used = time.perf_counter() - t0, cpu() - c0
    if res.failures:
        raise SystemExit(f"{len(res.failures)} cells failed, the first: {res.failures[0]}")
    return res, wall, used


def tables(out: Path) -> tuple[object, object]:
    runs = load(out, "runs").drop(columns=list(TIMED)).sort_values("cell").reset_index(drop=True)
    coflows = load(out, "coflows").sort_values(["cell", "coflow"]).reset_index(drop=True)
    return runs, coflows


def same_tables(a: Path, b: Path) -> str:
    """"identical" or what differs (pandas' message)."""
    import pandas as pd

    for x, y in zip(tables(a), tables(b), strict=True):
        try:
            pd.testing.assert_frame_equal(x, y, check_exact=True)
        except AssertionError as exc:
            return f"differ: {exc}"
    return "identical"


def kill_and_resume(exp: Experiment, work: Path, reference: Path) -> dict[str, object]:
    """Kill a ``coflowopt sweep --jobs 2`` halfway, resume it, count what was recomputed."""
    toml = work / "sweep.toml"
    toml.write_text(exp.to_toml())
    out = work / "killed"
    cells = out / "cells"
    total = len(exp.cells())
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    child = subprocess.Popen(
        [sys.executable, "-m", "coflowopt", "sweep", str(toml), "--jobs", "2", "--out", str(out),
         "--no-progress"], cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while child.poll() is None:
            if cells.is_dir() and len(list(cells.glob("*.json"))) >= total // 2:
                break
            time.sleep(0.05)
        else:
            raise SystemExit(f"the sweep ended before it was killed: {child.stderr.read().decode()}"
                             if child.stderr else "the sweep ended before it was killed")
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)  # the sweep and its pool workers
        child.wait()
    whole = {}
    for path in cells.glob("*.json"):
        try:
            doc = json.loads(path.read_text())
        except ValueError:
            continue  # atomic writes leave none half-written; counted as not finished if so
        if doc.get("status") == "ok":
            whole[path.name] = path.stat().st_mtime_ns
    t0 = time.perf_counter()
    res = sweep(exp, out, jobs=2, resume=True)
    wall = time.perf_counter() - t0
    rewritten = sum((cells / name).stat().st_mtime_ns != m for name, m in whole.items())
    return {"total": total, "finished_when_killed": len(whole), "cached": res.cached,
            "computed": res.computed, "rewritten": rewritten, "resume_wall": wall,
            "tables": same_tables(reference, out)}


def warm_up() -> None:
    """Compile (or load from the kernel cache) every scheduler's kernels in this process,
    so that ``jobs=1`` does not pay them inside its measured time."""
    from coflowopt.io.generate import synthetic
    from coflowopt.sim import simulate

    inst = synthetic(20, 6, load=0.5, seed=0)
    for name in SCHEDULERS:
        simulate(inst, name, record=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--small", action="store_true", help="2 seeds instead of 20 (200 cells)")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per load and scheduler")
    ap.add_argument("--coflows", type=int, default=200)
    ap.add_argument("--ports", type=int, default=20)
    ap.add_argument("--keep", type=Path, default=None, help="keep the sweep folders here")
    ap.add_argument("--output", type=Path, default=None, help="write the report (Markdown)")
    args = ap.parse_args()
    seeds = args.seeds or (2 if args.small else 20)
    exp = experiment(seeds, args.coflows, args.ports)
    n = len(exp.cells())
    work = Path(tempfile.mkdtemp(prefix="sweep-scaling-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()
    warm_up()
    runs: dict[str, tuple[float, float, Path]] = {}
    for label, engine in (("--jobs 1", {"jobs": 1}), ("--jobs 2", {"jobs": 2}),
                          ("--dask local:2", {"dask": "local:2"})):
        out = work / label.strip("-").replace(" ", "").replace(":", "")
        res, wall, used = timed_sweep(exp, out, **engine)
        assert res.computed == n and res.cached == 0
        runs[label] = (wall, used, out)
        print(f"{label}: {n} cells, wall {wall:.1f} s, CPU {used:.1f} s", flush=True)
    base = runs["--jobs 1"]
    compute = float(np.nansum(load(base[2], "runs")["wall_s"]))
    rows = []
    same_as_base = {}
    for label, (wall, used, out) in runs.items():
        speed = base[0] / wall
        same = same_as_base[label] = "-" if label == "--jobs 1" else same_tables(base[2], out)
        rows.append(f"| `{label}` | {wall:.1f} | {used:.1f} | {used / base[1]:.2f} | {speed:.2f}x | "
                    f"{100 * speed / (1 if label == '--jobs 1' else 2):.0f}% | {same} |")
        print(rows[-1], flush=True)
    kr = kill_and_resume(exp, work, base[2])
    print(kr, flush=True)
    speedups = [base[0] / runs[k][0] for k in ("--jobs 2", "--dask local:2")]
    sames = [same_as_base[k] for k in ("--jobs 2", "--dask local:2")]
    verdict = [
        f"- identical tables (`--jobs 2`, `--dask local:2`, resumed): "
        f"{'yes' if sames == ['identical'] * 2 and kr['tables'] == 'identical' else 'NO'}",
        f"- at least 80% of linear speed-up on 2 cores (1.6x): "
        f"{'yes' if min(speedups) >= 1.6 else 'NO'} ({speedups[0]:.2f}x, {speedups[1]:.2f}x)",
        f"- no finished cell recomputed on resume: "
        f"{'yes' if kr['cached'] == kr['finished_when_killed'] and kr['rewritten'] == 0 else 'NO'}",
    ]
    load1 = os.getloadavg()
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    cmd = " ".join(["python benchmarks/sweep_scaling.py", *sys.argv[1:]])
    report = "\n".join([
        "# A sweep of simulations on 1 and 2 processes and on Dask (benchmarks/sweep_scaling.py)\n",
        f"Date {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC. Machine: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"coflowopt {co.__version__}. Load average (1, 5, 15 min) {load0[0]:.2f} / "
        f"{load0[1]:.2f} / {load0[2]:.2f} at the start, {load1[0]:.2f} / {load1[1]:.2f} / "
        f"{load1[2]:.2f} at the end. Command: `{cmd}`.\n",
        f"Experiment: {len(SCHEDULERS)} schedulers ({', '.join(SCHEDULERS)}) x {len(LOADS)} loads "
        f"({LOADS[0]:g} ... {LOADS[-1]:g}) x {seeds} seeds = {n} simulations, each of a "
        f"{args.coflows}-coflow synthetic instance on {args.ports} ports. The cells' own "
        f"simulation time (sum of `wall_s` under `--jobs 1`): {compute:.1f} s.\n",
        "| engine | wall (s) | CPU user+sys (s) | CPU / `--jobs 1`'s | speed-up over `--jobs 1` "
        "| of linear (2 cores) | tables vs `--jobs 1` |",
        "|---|---:|---:|---:|---:|---:|---|",
        *rows,
        "",
        f"Killed halfway and resumed (`coflowopt sweep --jobs 2`, SIGKILL to its process group "
        f"once {kr['total'] // 2} of {kr['total']} cells were on disk): "
        f"{kr['finished_when_killed']} cells were finished when killed; the resumed sweep "
        f"reused {kr['cached']}, computed {kr['computed']}, rewrote {kr['rewritten']} of the "
        f"finished cells' files, took {kr['resume_wall']:.1f} s; its tables vs `--jobs 1`: "
        f"{kr['tables']}.",
        "",
        "Targets:",
        "",
        *verdict,
        "",
    ])
    print(report)
    if args.output:
        args.output.write_text(report)


if __name__ == "__main__":
    main()
