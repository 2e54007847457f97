"""``coflowopt compile``: the kernels compiled ahead, into the cache later runs load from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from coflowopt.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # two fresh processes, one compiling from nothing
def test_after_compile_a_run_compiles_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "COFLOWOPT_JIT": "compile"}
    inst = tmp_path / "w.json"
    subprocess.run([sys.executable, "-m", "coflowopt", "generate", "synthetic", "--coflows", "30",
                    "--ports", "10", "--shape", "shuffle", "--load", "0.7", "-o", str(inst)],
                   check=True, capture_output=True, cwd=ROOT)
    first = subprocess.run([sys.executable, "-m", "coflowopt", "compile", "--schedulers", "fifo",
                            "--jobs", "1", "--json"], env=env, capture_output=True, text=True,
                           cwd=ROOT)
    assert first.returncode == 0, first.stderr
    assert "compiling the kernels of 1 scheduler on 1 process" in first.stderr
    done = json.loads(first.stdout)
    assert done["schedulers"] == ["fifo"] and done["processes"] == 1 and done["seconds"] > 0
    assert Path(done["cache"]).is_relative_to(tmp_path / "cache")
    assert list((tmp_path / "cache").rglob("*.nbi"))
    run = subprocess.run([sys.executable, "-m", "coflowopt", "simulate", str(inst), "-s", "fifo"],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "compil" not in run.stderr  # every kernel it needed was in the cache
    # and the solvers' (exact._freelists.same compiled on the first solve of 30 coflows)
    run = subprocess.run([sys.executable, "-m", "coflowopt", "solve", str(inst), "--method",
                          "best", "--time-limit", "5"], env=env, capture_output=True, text=True,
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "compil" not in run.stderr


@pytest.mark.parametrize(("option", "message"), [
    ("nope", "scheduler 'nope'"),
    ("varys:backfill=sideways", "scheduler 'varys:backfill=sideways'"),
])
def test_compile_refuses_unknown_schedulers(capsys, option, message):
    assert main(["compile", "--schedulers", option]) == 2
    assert message in capsys.readouterr().err


def test_compile_refuses_a_cache_it_cannot_write(tmp_path):
    # kernels then compile in memory only: a compile run would keep nothing
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = subprocess.run([sys.executable, "-m", "coflowopt", "compile"], capture_output=True,
                          text=True, check=False, env={**os.environ, "NUMBA_CACHE_DIR": str(blocker)})
    assert proc.returncode == 2
    assert "cannot be written, so nothing compiled now would be kept" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
