"""First use of each scheduler, and the main job's first run, as a new installation sees them.

Each run is a fresh ``coflowopt`` process with an empty kernel cache of its own
(``NUMBA_CACHE_DIR`` pointing to a new directory), so nothing compiled before helps it:
what a user meets on the first run after ``pip install``. Prints a Markdown table of
wall and CPU seconds per run, with the machine and its load.

    python benchmarks/first_use.py                      # every scheduler on s8, s50, s50w
    python benchmarks/first_use.py --main-job           # the README's main job, cold then warm
    python benchmarks/first_use.py --schedulers varys,fair --sizes s50

``s8``: 8 coflows on 4 ports (``generate synthetic --coflows 8 --ports 4 --max-width 120``:
338 flows); ``s50``: 50 coflows on 20 ports (``--max-width 200``: 2,031 flows); ``s50w``:
the same with wider coflows (``--max-width 800``: 4,799 flows), near the largest "small"
instance (50 coflows, 5,000 flows) on which a first use must take at most 3 s.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
SCHEDULERS = ("varys", "sincronia", "maluca", "pfp", "scf", "tcf", "ncf", "fifo", "fair", "wss",
              "mcs", "aalo", "aalo:sharing=strict", "dark", "baraat", "hug", "drf", "psp",
              "varys-deadline")
SIZES = {"s8": ("8", "4", "120"), "s50": ("50", "20", "200"), "s50w": ("50", "20", "800")}
"""Instance name: (coflows, ports, --max-width)."""


def _run(cmd: list[str], cache: str) -> tuple[float, float, int, str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache}
    env.pop("COFLOWOPT_JIT", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stdout + proc.stderr


def _instance(name: str, workdir: Path) -> Path:
    coflows, ports, width = SIZES[name]
    out = workdir / f"{name}.json"
    subprocess.run([sys.executable, "-m", "coflowopt", "generate", "synthetic", "--coflows", coflows,
                    "--ports", ports, "--max-width", width, "--load", "0.6", "--seed", "1",
                    "-o", str(out)], check=True, capture_output=True)
    return out


def _scheduler_args(spec: str) -> list[str]:
    name, *params = spec.split(":")
    return ["-s", name, *[a for p in params for a in ("--param", p)]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schedulers", default=",".join(SCHEDULERS))
    ap.add_argument("--sizes", default=",".join(SIZES), help=f"instances ({', '.join(SIZES)})")
    ap.add_argument("--main-job", action="store_true", help="the README's main job, cold then warm")
    args = ap.parse_args()
    coflowopt = [sys.executable, "-m", "coflowopt"]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"load average at start {os.getloadavg()[0]:.2f}; {when}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.main_job:
            cache = str(work / "cache-main")
            cmd = [*coflowopt, "compare", str(TRACE), "--bound", "best", "--no-progress"]
            print("\n| main job run | wall s | CPU s |\n|---|---|---|")
            for what in ("first (empty cache)", "second (cache warm)"):
                wall, cpu, code, out = _run(cmd, cache)
                assert code == 0, out
                print(f"| {what} | {wall:.1f} | {cpu:.1f} |", flush=True)
            print(f"\nload average at end {os.getloadavg()[0]:.2f}")
            return
        sizes = args.sizes.split(",")
        files = {k: _instance(k, work) for k in sizes}
        print("\n| scheduler | " + " | ".join(f"{k} first use: wall s (CPU s)" for k in sizes)
              + " |\n|---|" + "---|" * len(sizes))
        for spec in args.schedulers.split(","):
            cells = []
            for k in sizes:
                cache = tempfile.mkdtemp(dir=work)  # empty: a new installation's
                wall, cpu, code, out = _run([*coflowopt, "simulate", str(files[k]),
                                             *_scheduler_args(spec)], cache)
                assert code == 0, out
                cells.append(f"{wall:.1f} ({cpu:.1f})")
            print(f"| {spec} | " + " | ".join(cells) + " |", flush=True)
        print(f"\nload average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
