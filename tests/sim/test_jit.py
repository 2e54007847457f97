"""Kernels compiled, interpreted or mixed give the same simulation, bit for bit.

The simulator interprets its kernels on small instances while their machine code is not
at hand (``coflowopt._jit.adaptive``), and may switch to machine code in the middle of a
run. That is only sound if a kernel computes exactly the same numbers either way: these
tests compare every completion time and every schedule piece exactly, for every
scheduler and the variants that take other kernels.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt import _jit
from coflowopt.sim import POLICIES, simulate
from tests.strategies import instances

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

RUNS = [(name, {}) for name in sorted(POLICIES) if name != "static-order"] + [
    ("aalo", {"sharing": "strict"}),
    ("mcs", {"sharing": "weighted"}),
    ("fair", {"max_flows_per_receiver": 2}),
    ("baraat", {"spare": "next"}),
    ("varys", {"order": "static", "backfill": "coflowsim"}),
    ("fifo", {"backfill": "coflowsim"}),
    ("pfp", {"order": "coflowsim"}),
    ("fair", {"rates": "coflowsim"}),
    ("static-order", {"order": [0]}),
]


def _params(name: str, params: dict, inst: co.Instance) -> dict:
    if name == "static-order":  # an order of every coflow: reversed
        return {"order": list(range(inst.num_coflows))[::-1]}
    return params


def _fingerprint(res) -> tuple:
    s = res.schedule
    pieces = () if s is None else tuple(a.tobytes() for a in (s.flow, s.start, s.end, s.rate))
    return (res.completion.tobytes(), res.flow_completion.tobytes(), res.events, pieces)


def _run(inst: co.Instance, name: str, params: dict, jit: str):
    return simulate(inst, name, _params(name, params, inst), jit=jit)


@pytest.fixture
def rent_unpaid(monkeypatch):
    """Adaptive contexts start with the whole rent ahead, and keep no account on disk."""
    monkeypatch.setattr(_jit, "_rent_paid", lambda: 0.0)
    monkeypatch.setattr(_jit, "_pay_rent", lambda seconds: None)


@pytest.fixture(scope="module")
def prefix() -> co.Instance:
    """The trace's first 11 coflows (6,213 flows): real ties and wide shuffles (two coflows
    of about 3,000 flows, above aalo's dense water-filling threshold); the 12th alone has
    20,286 flows, which made coflourish interpreted take 30-40 s."""
    return co.read(TRACE).subset(range(11))


@pytest.mark.slow  # every scheduler interpreted on 6,213 flows
@pytest.mark.parametrize(("name", "params"), RUNS, ids=lambda x: str(x))
def test_interpreted_kernels_give_the_compiled_simulation_on_a_trace_prefix(prefix, name, params):
    assert _fingerprint(_run(prefix, name, params, "interpret")) == _fingerprint(
        _run(prefix, name, params, "compile"))


@settings(max_examples=25)
@given(inst=instances(max_ports=4, max_coflows=5, max_flows=5), uniform=st.booleans(),
       run=st.sampled_from(RUNS))
def test_interpreted_kernels_give_the_compiled_simulation(inst, uniform, run):
    if uniform:  # the greedy kernels need equal port capacities
        inst = inst.replace(fabric=co.Fabric.uniform(inst.num_ports))
    name, params = run
    assert _fingerprint(_run(inst, name, params, "interpret")) == _fingerprint(
        _run(inst, name, params, "compile"))


@pytest.mark.parametrize("seed", range(4))
def test_a_run_that_mixes_compiled_and_interpreted_kernels_is_the_same(prefix, seed, rent_unpaid):
    # adaptive runs interpret the kernels it has no machine code for, and compile them once
    # its rent is spent, in the middle of a run: any mixture must give the same numbers
    rng = random.Random(seed)
    for name, params in rng.sample(RUNS, 4):
        expected = _fingerprint(_run(prefix, name, params, "compile"))
        with _jit.adaptive():
            chosen = [k for k in _jit.kernels() if rng.random() < 0.5]
            _jit._state.interpreted.update(chosen)
            got = _fingerprint(_run(prefix, name, params, "auto"))
        assert chosen
        assert got == expected, (name, params)


def _fresh_kernel(tmp_path: Path):
    """A kernel no process has compiled before (its body names a random constant)."""
    const = random.SystemRandom().randrange(1 << 40)
    module = _module(tmp_path, "fresh", "from coflowopt._jit import njit\n\n\n@njit\ndef fresh(a):\n"
                     f"    s = 0.0\n    for x in a:\n        s += x\n    return s + {const}\n", const)
    return module.fresh, const


def _module(tmp_path: Path, stem: str, source: str, tag: int | None = None):
    """A module of kernels written for the test, under a new name (``stem_tag``, a random
    tag by default): a new entry in the kernel cache, which the test's end removes."""
    import importlib.util

    if tag is None:
        tag = random.SystemRandom().randrange(1 << 40)
    path = tmp_path / f"{stem}_{tag}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # (machine code loaded from the cache names its module)
    spec.loader.exec_module(module)
    _made.append(module)
    return module


_made: list = []
"""The modules :func:`_module` made in the current test."""


@pytest.fixture(autouse=True)
def _no_cache_entries_left(tmp_path):
    """The kernels of a test's own modules leave nothing in the caches outside ``tmp_path``:
    their compile locks (in :func:`coflowopt._jit.cache_dir`) and, under ``NUMBA_CACHE_DIR``,
    Numba's directory of their machine code."""
    import shutil

    yield
    locks = _jit.cache_dir() / "locks"
    for module in _made:
        for kernel in [v for v in vars(module).values() if isinstance(v, _jit.Kernel)]:
            (locks / f"{module.__name__}.{kernel.py_func.__qualname__}.lock").unlink(
                missing_ok=True)
            where = Path(kernel._cache._cache_path)
            if tmp_path not in where.parents and where != tmp_path:
                shutil.rmtree(where, ignore_errors=True)
        sys.modules.pop(module.__name__, None)
    _made.clear()


def test_adaptive_mode_interprets_what_would_compile_and_compiles_once_the_rent_is_spent(
        monkeypatch, tmp_path, rent_unpaid):
    kernel, const = _fresh_kernel(tmp_path)
    heard: list[tuple[str, float | None]] = []
    a = np.arange(4.0)
    with _jit.on_compile(lambda name, s: heard.append((name, s))):
        with _jit.adaptive():
            assert kernel(a) == 6.0 + const
        assert heard == [] and not kernel.overloads  # interpreted: nothing compiled
        monkeypatch.setattr(_jit, "RENT", 0.0)
        with _jit.adaptive():
            assert kernel(a) == 6.0 + const
    assert kernel.overloads  # compiled now
    assert [s is None for _, s in heard] == [True, False] and heard[1][1] > 0


def test_a_kernel_called_with_constants_and_variables_compiles_once(tmp_path):
    # Numba alone compiles a callee once per constant it is passed (Literal[int](0) and
    # int64 here): every kernel helper called both ways would compile twice
    module = _module(tmp_path, "callee", (
        "from coflowopt._jit import njit\n\n\n@njit\ndef part(a, i, flag):\n"
        "    return a[i] if flag else -a[i]\n\n\n@njit\ndef outer(a, k):\n"
        "    return part(a, 0, True) + part(a, k, False) + part(a, 1, True)\n"))
    a = np.array([1.0, 2.0, 4.0])
    with _jit.compiling():
        assert module.outer(a, 2) == 1.0 - 4.0 + 2.0
    assert len(module.part.signatures) == 1
    assert str(module.part.signatures[0][1]) == "int64"


def test_a_kernel_called_with_frozen_and_writable_arrays_compiles_once(tmp_path):
    # the instance's arrays are read-only, the kernels' scratch is not: Numba alone types
    # the two apart and compiles the kernel, and each kernel it calls, once per mix
    module = _module(tmp_path, "frozen", (
        "from coflowopt._jit import njit\n\n\n@njit\ndef part(a, i):\n    return a[i]\n\n\n"
        "@njit\ndef double(a, out):\n    for i in range(a.size):\n"
        "        out[i] = 2 * part(a, i)\n    return out[0]\n"))
    a, out = np.array([1.0, 2.0]), np.zeros(2)
    frozen = a.copy()
    frozen.setflags(write=False)
    with _jit.compiling():
        assert module.double(a, out) == 2.0
        assert module.double(frozen, out) == 2.0
    assert len(module.double.signatures) == 1 and len(module.part.signatures) == 1
    assert not frozen.flags.writeable
    with _jit.interpreting(), pytest.raises(ValueError, match="read-only"):
        module.double(out, frozen)  # the plain Python still refuses to write into it


def test_interpreting_runs_python_even_with_machine_code_at_hand(tmp_path):
    kernel, const = _fresh_kernel(tmp_path)
    a = np.arange(3.0)
    assert kernel(a) == 3.0 + const  # compiles (default mode)
    calls = []
    real = kernel.py_func

    def spy(*args):
        calls.append(1)
        return real(*args)

    kernel.py_func = spy
    try:
        with _jit.interpreting():
            assert kernel(a) == 3.0 + const
        assert kernel(a) == 3.0 + const
    finally:
        kernel.py_func = real
    assert calls == [1]


def test_an_interpreted_kernel_calls_the_kernels_it_uses_without_the_dispatcher(monkeypatch):
    from coflowopt.alloc import max_min_bipartite_levels
    from coflowopt.kernels import maxmin

    W = np.array([[1.0, 2.0, 0.0], [0.5, 1.0, 3.0]])
    cap_l, cap_r = np.array([1.0, 2.0]), np.array([1.0, 3.0, 1.5])
    with _jit.compiling():
        want = max_min_bipartite_levels(W, cap_l, cap_r)
    entered = []
    real = _jit.Kernel._call

    def counted(self, args):
        entered.append(self)
        return real(self, args)

    monkeypatch.setattr(_jit.Kernel, "_call", counted)
    with _jit.interpreting():
        got = max_min_bipartite_levels(W, cap_l, cap_r)
    assert entered == [maxmin.bipartite_levels]  # waterfill and its helpers: called directly
    for a, b in zip(got, want, strict=True):
        assert a.tobytes() == b.tobytes()


def test_jit_modes_are_checked():
    inst = co.Instance(co.Fabric.uniform(1), (co.Coflow.from_flows("a", [(0, 0, 1.0)]),))
    with pytest.raises(co.CoflowoptError, match="jit must be one of auto, compile, interpret"):
        simulate(inst, "fair", jit="fast")


def test_a_bad_coflowopt_jit_variable_is_named(monkeypatch, tmp_path):
    inst = co.Instance(co.Fabric.uniform(1), (co.Coflow.from_flows("a", [(0, 0, 1.0)]),))
    monkeypatch.setenv("COFLOWOPT_JIT", "fast")
    with pytest.raises(co.CoflowoptError, match=r"environment variable COFLOWOPT_JIT .* got 'fast'"):
        simulate(inst, "fair")
    path = tmp_path / "one.json"
    co.write(inst, path)
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-m", "coflowopt", "simulate", str(path), "-s", "fair",
                           "--schedule", str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "coflowopt: error: the environment variable COFLOWOPT_JIT must be one of auto, compile, "
        "interpret (or unset), got 'fast'"]
    assert not out.exists()


def test_the_cache_is_per_version_of_the_kernel_sources():
    from coflowopt.kernels.maxmin import waterfill

    disp_cache = waterfill._cache._cache_path
    assert Path(disp_cache).is_relative_to(_jit.cache_dir())
    assert Path(disp_cache) == _jit.cache_dir() / "kernels"
    assert _jit.cache_dir().name == f"kernels-{_jit._version()}"


def test_a_kernel_another_process_is_compiling_is_waited_for_and_loaded(tmp_path):
    # two processes that need one kernel at once (compare --jobs 2 on a new installation):
    # the second waits for the first's lock, then loads the machine code it left on disk
    import subprocess

    if not Path("/proc/locks").exists():
        pytest.skip("needs /proc/locks to see the second process wait")
    kernel, const = _fresh_kernel(tmp_path)
    # the first process holds the kernel's lock until the kernel's lock file has a waiter
    # (the second process, blocked in flock, as /proc/locks shows it), however loaded the
    # machine is; the 600 s only keep a broken lock from hanging the test
    other = subprocess.Popen([sys.executable, "-c", f"""
import os, sys, time, importlib.util
from coflowopt import _jit
spec = importlib.util.spec_from_file_location("fresh_{const}", {str(tmp_path / f"fresh_{const}.py")!r})
m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m
spec.loader.exec_module(m)
import numpy as np
def waited_for(ino):
    with open("/proc/locks") as fh:
        return any("->" in line and line.split()[-3].endswith(f":{{ino}}") for line in fh)
def hold(name, seconds):
    if seconds is None:
        print("compiling", flush=True)
        ino = os.stat(_jit.cache_dir() / "locks" / f"{{name}}.lock").st_ino
        until = time.monotonic() + 600
        while not waited_for(ino) and time.monotonic() < until:
            time.sleep(0.01)
with _jit.on_compile(hold):
    m.fresh(np.arange(2.0))
print("done", flush=True)
"""], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
    assert other.stdout.readline().strip() == "compiling"  # it holds the kernel's lock now
    heard = []
    with _jit.on_compile(lambda name, s: heard.append(name)):
        assert kernel(np.arange(2.0)) == 1.0 + const
    assert other.stdout.readline().strip() == "done" and other.wait(60) == 0
    assert heard == [] and kernel.overloads  # loaded from the disk cache, not compiled here


def test_a_cache_that_cannot_be_written_compiles_in_memory_not_beside_the_sources(tmp_path):
    # Numba's own fallback cached the kernels in the package's __pycache__ under a stamp of
    # each kernel's own file, which an edit to a helper elsewhere left stale (wrong numbers),
    # and failed at import where the package's folder is read-only
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code = ("from coflowopt import _jit\n"
            "from coflowopt.kernels import rates\n"
            "print(_jit.cache_usable(), type(rates.madd_gamma._cache).__name__)\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(blocker)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "NullCache"]


def test_a_compile_an_error_ends_is_not_reported_as_compiled(tmp_path):
    # an interrupt inside Numba ends its compile event with the exception; the command line
    # printed "compiled ... in 0.4 s" for machine code that was never made
    module = _module(tmp_path, "broken", "from coflowopt._jit import njit\n\n\n@njit\n"
                     "def broken(a):\n    return a.no_such_attribute\n")
    heard = []
    with _jit.on_compile(lambda name, seconds: heard.append(seconds)), _jit.compiling():
        with pytest.raises(Exception, match="no_such_attribute"):
            module.broken(np.zeros(2))
    assert heard == [None]
