"""Schedules at trace scale: record and validate schedules of the bundled Facebook trace.

Target (issue 33, item 6): recording (``coflowopt simulate TRACE -s NAME --schedule
S.npz``) and validating (``coflowopt validate TRACE --schedule S.npz``) the ``varys`` and
``fair`` schedules of the trace each take at most 15 s and 2 GB of resident memory.

    python benchmarks/schedule_fb.py [--policies varys,fair] [--formats npz,json] [--markdown]

Each command runs as a user would, in a fresh process under ``/usr/bin/time -v`` (numba's
on-disk cache is the only warm state; run once before measuring to fill it), and is
reported with its wall time, user and system CPU time, peak resident memory and the size
of the file written; the load average before each command is printed beside it (other
processes on the machine inflate wall times, not CPU times). Files go to a temporary
directory, removed at the end.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TRACE = Path(__file__).resolve().parents[1] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

FIELDS = {
    "wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)",
    "user": r"User time \(seconds\): (\S+)",
    "sys": r"System time \(seconds\): (\S+)",
    "rss": r"Maximum resident set size \(kbytes\): (\d+)",
}


def measure(cmd: list[str]) -> dict[str, float]:
    """Wall, user and system seconds and peak RSS (MiB) of ``cmd`` by ``/usr/bin/time -v``."""
    # from the repository root: ``python -m coflowopt`` runs this checkout's package
    out = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True,
                         check=False, cwd=Path(__file__).resolve().parents[1])
    if out.returncode:
        print(out.stdout + out.stderr, file=sys.stderr)
        raise SystemExit(f"failed: {' '.join(cmd)}")
    got: dict[str, float] = {}
    for key, pattern in FIELDS.items():
        m = re.search(pattern, out.stderr)
        assert m is not None, out.stderr
        text = m.group(1)
        if key == "wall":
            parts = [float(x) for x in text.split(":")]
            got[key] = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
        else:
            got[key] = float(text) / (1024 if key == "rss" else 1)
    return got


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--policies", default="varys,fair")
    parser.add_argument("--formats", default="npz", help="npz, json or both (json: varys only "
                        "is practical; fair's 232 million pieces are refused as JSON)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    py = [sys.executable, "-m", "coflowopt"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for policy in args.policies.split(","):
            for fmt in args.formats.split(","):
                path = Path(tmp) / f"{policy}.{fmt}"
                for step, cmd in (
                    ("record", [*py, "simulate", str(TRACE), "-s", policy, "--schedule",
                                str(path), "--no-progress"]),
                    ("validate", [*py, "validate", str(TRACE), "--schedule", str(path)]),
                ):
                    load = os.getloadavg()[0]
                    got = measure(cmd)
                    size = path.stat().st_size / 2**20
                    rows.append((policy, fmt, step, got, size, load))
                    if not args.markdown:
                        print(f"{policy} {fmt} {step}: wall {got['wall']:.2f} s, user "
                              f"{got['user']:.2f} s, sys {got['sys']:.2f} s, peak RSS "
                              f"{got['rss']:.0f} MiB, file {size:.0f} MiB, load {load:.2f}",
                              flush=True)
    if args.markdown:
        print("| policy | file | step | wall s | user+sys s | peak RSS MiB | file MiB | load before |")
        print("|---|---|---|---|---|---|---|---|")
        for policy, fmt, step, got, size, load in rows:
            print(f"| {policy} | .{fmt} | {step} | {got['wall']:.1f} | "
                  f"{got['user'] + got['sys']:.1f} | {got['rss']:.0f} | {size:.0f} | {load:.2f} |")
    print(f"\nmachine: {platform.machine()}, {os.cpu_count()} cpus, Python "
          f"{platform.python_version()}")


if __name__ == "__main__":
    main()
