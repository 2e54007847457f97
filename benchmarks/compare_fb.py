"""The README's main job: ``coflowopt compare`` on the bundled Facebook trace (issue 4, item 5).

Target: the comparison table prints in under 2 minutes on the project's
2-core machine.

    python benchmarks/compare_fb.py [--schedulers a,b,c] [--no-bound] [--jobs N]

Runs the command exactly as a user would (``python -m coflowopt compare
TRACE --bound best``, in a fresh process, so numba's on-disk cache is the
only warm state) and reports its wall time, the CPU time and peak resident
memory of the child process, and the load average before and after (other
processes on the machine inflate wall times). With ``--jobs N`` the command
runs its simulations and the bound on N worker processes; the peak resident
memory is then that of the largest single process (``RUSAGE_CHILDREN``), not
their sum.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedulers", default=None, help="passed to --schedulers (default: the CLI's)")
    parser.add_argument("--no-bound", action="store_true", help="leave out --bound best")
    parser.add_argument("--jobs", type=int, default=None, help="passed to --jobs (default: the CLI's, 1)")
    args = parser.parse_args()
    cmd = [sys.executable, "-m", "coflowopt", "compare", str(TRACE), "--no-progress"]
    if not args.no_bound:
        cmd += ["--bound", "best"]
    if args.schedulers:
        cmd += ["--schedulers", args.schedulers]
    if args.jobs is not None:
        cmd += ["--jobs", str(args.jobs)]
    load0 = os.getloadavg()[0]
    w = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - w
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(out.stdout, end="")
    if out.returncode:
        print(out.stderr, end="", file=sys.stderr)
        raise SystemExit(out.returncode)
    print()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}")
    print(f"command: {' '.join(cmd[1:])}")
    print(f"wall {wall:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s, "
          f"peak RSS {usage.ru_maxrss / 1024:.0f} MiB, "
          f"load average {load0:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
