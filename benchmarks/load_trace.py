"""Load time and memory of the bundled Facebook trace (issue: foundation, item 3).

Target: loads in under 2 s and fits in under 200 MB.

    python benchmarks/load_trace.py [--repeat 5]

Measures wall time of ``coflowopt.read`` (best and median of the repeats),
peak Python-heap allocations during one load (tracemalloc: the instance and
everything built on the way), the size of the finished instance's arrays,
and the process's peak RSS (which includes the interpreter, NumPy and SciPy).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import statistics
import time
import tracemalloc
from pathlib import Path

import coflowopt as co

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def instance_bytes(inst: co.Instance) -> int:
    total = 0
    for name in type(inst).__dataclass_fields__:
        value = getattr(inst, name)
        if hasattr(value, "nbytes"):
            total += value.nbytes
    for c in inst.coflows:
        total += c.src.nbytes + c.dst.nbytes + c.sizes.nbytes
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    inst = co.read(TRACE)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del inst
    times = []
    for _ in range(args.repeat):
        gc.collect()
        t = time.perf_counter()
        inst = co.read(TRACE)
        times.append(time.perf_counter() - t)
    gc.collect()
    tracemalloc.start()
    inst = co.read(TRACE)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}")
    print(f"instance: {inst.num_coflows} coflows, {inst.num_flows} flows, {inst.num_ports} ports")
    print(f"load time: best {min(times):.3f} s, median {statistics.median(times):.3f} s over {args.repeat}")
    print(f"peak allocations while loading (tracemalloc): {peak / 2**20:.1f} MiB")
    print(f"arrays of the finished instance: {instance_bytes(inst) / 2**20:.1f} MiB")
    print(
        f"process peak RSS: {rss0:.1f} MiB after imports, {rss1:.1f} MiB after the first load "
        f"({rss1 - rss0:.1f} MiB for the trace)"
    )


if __name__ == "__main__":
    main()
