"""coflowopt's ``sincronia`` against Sincronia's own offline simulator, coflow by coflow.

Sincronia's flow-level simulator (github.com/sincronia-coflow/simulator, ``offlinesim``)
releases every coflow at 0, orders them once with BSSI (its ``PD`` ordering) and runs its
greedy allocation (``GREEDY``) through every flow completion. This script writes the
Facebook trace's first N coflows, all released at 0, in the simulator's input format
(:mod:`coflowopt.io.sincronia`: whole megabytes; sizes that are not are rounded up and
coflowopt simulates the rounded instance too), reads the simulator's output log
(:func:`coflowopt.io.sincronia.read_offline_output`) and compares coflow by coflow:

    python benchmarks/sincronia_diff.py --write-trace /tmp/first100.txt
    ./offlinesim /tmp/first100.txt /tmp/PD-GREEDY.txt PD GREEDY
    python benchmarks/sincronia_diff.py --reference /tmp/PD-GREEDY.txt [--list N]
    python benchmarks/sincronia_diff.py --offlinesim ./offlinesim [--first N]

``--offlinesim`` runs the binary itself on a temporary copy of the trace and reports its
CPU time. Without ``--reference`` or ``--offlinesim`` the stored output for the first 100
coflows (``tests/sim/sincronia_fb2010_first100/``, provenance in its README.md) is used.
Units: the simulator sends 1 MB (2^20 bytes) per port per time unit; coflowopt's ports
send ``--port-rate`` bytes per second (default 1.25e8), so a simulator time ``t`` is
``t * 2^20 / port_rate`` seconds. Prints a Markdown table (coflows within 1e-9 and 1%
relative, the mean CCT ratio coflowopt / simulator, wall and CPU seconds of each run),
whether ``sincronia_order`` is the simulator's order, and the load average.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from coflowopt import Instance, io
from coflowopt.bounds.sincronia import sincronia_order
from coflowopt.errors import CoflowoptError
from coflowopt.io import sincronia as sinc
from coflowopt.io.benchmark import DEFAULT_PORT_RATE
from coflowopt.sim import simulate

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
STORED = ROOT / "tests" / "sim" / "sincronia_fb2010_first100" / "PD-GREEDY.txt"


def offline_instance(trace: Path, first: int, port_rate: float) -> tuple[Instance, int]:
    """The trace's first ``first`` coflows released at 0, sizes as the simulator reads them,
    and how many flow sizes were rounded up to whole megabytes for it."""
    inst = io.read(trace, port_rate=port_rate)
    inst = inst.subset(range(min(first, inst.num_coflows))).with_releases(0.0)
    _, rounded = sinc.dumps(inst)
    return sinc.round_sizes(inst), rounded


def run_offlinesim(binary: Path, inst: Instance) -> tuple[sinc.OfflineOutput, float, float]:
    """The simulator's output on ``inst`` (PD ordering, GREEDY rates), its wall and CPU s."""
    with tempfile.TemporaryDirectory() as tmp:
        trace, log = Path(tmp) / "trace.txt", Path(tmp) / "out.txt"
        sinc.write(inst, trace)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w = time.perf_counter()
        try:
            subprocess.run([str(binary), str(trace), str(log), "PD", "GREEDY"], check=True,
                           stdout=subprocess.DEVNULL)
        except OSError as exc:
            fail(f"cannot run --offlinesim {binary}: {exc.strerror or exc}")
        except subprocess.CalledProcessError as exc:
            fail(f"--offlinesim {binary} exited with code {exc.returncode}")
        wall = time.perf_counter() - w
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return sinc.read_offline_output(log), wall, cpu


def fail(message: str) -> NoReturn:
    """Say what is wrong and exit with code 2, as the command line does."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--first", type=int, default=100, help="the trace's first N coflows")
    parser.add_argument("--port-rate", type=float, default=DEFAULT_PORT_RATE,
                        help="coflowopt's port rate in bytes/s (default 1.25e8)")
    parser.add_argument("--reference", type=Path, default=None,
                        help="offlinesim's output log (default: the stored one, first 100)")
    parser.add_argument("--offlinesim", type=Path, default=None, help="run this binary")
    parser.add_argument("--write-trace", type=Path, default=None,
                        help="write the instance in the simulator's format and stop")
    parser.add_argument("--list", type=int, default=0, help="list the N furthest coflows")
    args = parser.parse_args()
    try:
        inst, rounded = offline_instance(args.trace, args.first, args.port_rate)
        if args.write_trace:
            sinc.write(inst, args.write_trace)
            print(f"wrote {args.write_trace}: {inst.num_coflows} coflows, {inst.num_flows} flows, "
                  f"{rounded} sizes rounded up to whole MB")
            return
        if args.offlinesim:
            ref, wall, cpu = run_offlinesim(args.offlinesim, inst)
            print(f"offlinesim: wall {wall:.1f} s, CPU {cpu:.1f} s")
        else:
            ref = sinc.read_offline_output(args.reference or STORED)
    except CoflowoptError as exc:
        fail(str(exc))
    if sorted(ref.ids) != sorted(inst.ids):
        fail(f"the output's {len(ref.ids)} coflows are not the instance's {inst.num_coflows} "
             "(wrong --first or --trace?)")
    theirs = ref.seconds(args.port_rate, inst.ids)
    rank = {cid: i + 1 for i, cid in enumerate(ref.ids)}
    ours_order = [inst.ids[k] for k in sincronia_order(inst)]
    same = sum(a == b for a, b in zip(ours_order, ref.ids, strict=True))
    print(f"{args.trace.name}, first {inst.num_coflows} coflows released at 0: {inst.num_flows} "
          f"flows, {rounded} sizes rounded up to whole MB; port rate {args.port_rate:g} B/s; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"sincronia_order: {same} of {inst.num_coflows} positions as the simulator's order")
    print(f"simulator's mean CCT {theirs.mean():.6g} s ({ref.mean:g} units as printed)")
    print()
    print("| coflowopt | within 1e-9 | within 1% | mean CCT ratio | wall s | CPU s |")
    print("|---|---|---|---|---|---|")
    variants: list[tuple[str, dict[str, Any]]] = [
        ("sincronia", {}), ("sincronia", {"reorder": "arrivals"}),
        ("static-order", {"order": ref.ids})]
    listed = []
    for name, params in variants:
        w, c = time.perf_counter(), time.process_time()
        res = simulate(inst, name, params, record=False)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        ours = np.asarray(res.cct, float)
        ratio = np.abs(ours / theirs - 1)
        label = name + (":reorder=arrivals" if params.get("reorder") else "")
        label += ":order=<the simulator's>" if name == "static-order" else ""
        print(f"| `{label}` | {(ratio <= 1e-9).sum()} | {(ratio <= 0.01).sum()} "
              f"| {ours.mean() / theirs.mean():.12f} | {wall:.2f} | {cpu:.2f} |")
        if args.list:
            far = np.argsort(-ratio, kind="stable")[: args.list]
            far = far[ratio[far] > 1e-9]
            listed.append((label, [(inst.ids[k], rank[inst.ids[k]], ours[k], theirs[k])
                                   for k in sorted(far.tolist())]))
    for label, rows in listed:
        print(f"\n{label}: coflows beyond 1e-9 (id, simulator's rank, coflowopt CCT s, "
              f"simulator CCT s)")
        for cid, rank, o, t in rows:
            print(f"  {cid:>5} {rank:4d} {o:11.6f} {t:11.6f}")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
