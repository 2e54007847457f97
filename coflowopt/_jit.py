"""Just-in-time compilation of the simulator's inner loops (Numba), and when to skip it.

The loops are plain Python over NumPy arrays, written in the subset Numba compiles.
:func:`njit` turns one into a :class:`Kernel`: a Numba dispatcher that compiles the
function on its first call and keeps the machine code in a disk cache, or runs it as the
plain Python function it is.

**Compiled or interpreted, a kernel computes the same numbers, bit for bit.** The kernels
avoid every operation that Numba and NumPy round differently (sums go through
:func:`coflowopt.kernels.rates.pairwise_sum`, sorts are stable), and the tests run whole
simulations both ways and compare every completion and schedule piece exactly
(``tests/sim/test_jit.py``). Which of the two runs is therefore a matter of speed alone,
and is decided by how long each would take:

- outside any context below (the default), a kernel compiles on its first call, as
  Numba does;
- inside :func:`adaptive`, a kernel whose machine code is at hand (compiled in this
  process, or in the disk cache) runs compiled; one that would have to be compiled first
  runs interpreted instead, as long as the installation has spent less than :data:`RENT`
  seconds interpreting, and compiles after that (rent or buy). The simulator and the
  solvers use it for small instances (:func:`for_instance`), where interpreting a whole
  run takes less time than compiling its kernels (5-25 s per scheduler);
- inside :func:`interpreting`, every kernel runs as plain Python, and inside
  :func:`compiling` every kernel compiles (for tests and benchmarks; the environment
  variable ``COFLOWOPT_JIT=auto|interpret|compile`` chooses for :func:`for_instance`).
  :func:`adaptive` and :func:`for_instance` inside another context keep the outer one's
  rule; :func:`interpreting` and :func:`compiling` impose theirs wherever they are.

Compiling. :func:`on_compile` registers a callback that hears each compilation (the
command line announces them; a pool of worker processes relays theirs to it:
:class:`coflowopt.sim.batch.WorkerPool`); ``coflowopt compile`` compiles every
scheduler's kernels ahead of time, in worker processes.

The disk cache is one directory per version of the kernels' sources
(:func:`cache_dir`; where it cannot be written, kernels compile in memory, in each process
anew: :func:`cache_usable`): under ``NUMBA_CACHE_DIR`` when that is set, otherwise in the user's
cache directory (``~/.cache/coflowopt`` on Linux). The version is a hash of every module
that defines kernels, so a repository checkout and an installed copy of the same code
share one cache, and an edit to a helper that other modules' kernels call cannot leave
them with stale machine code. The three most recently used versions are kept.

Setting the environment variable ``NUMBA_DISABLE_JIT=1`` makes :func:`njit` return the
plain function (no compiling at all), which is useful for debugging and coverage.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar, cast

import numba
from numba.core import caching, config, event
from numba.core import types as nbtypes
from numba.core.registry import CPUDispatcher

from .errors import InputError

__all__ = [
    "INTERPRET_MAX_FLOWS",
    "JIT_MODES",
    "RENT",
    "Kernel",
    "adaptive",
    "announce",
    "cache_dir",
    "cache_usable",
    "compiling",
    "env_mode",
    "for_instance",
    "interpreting",
    "kernels",
    "listen",
    "listening",
    "njit",
    "on_compile",
]

F = TypeVar("F", bound=Callable[..., Any])

_PACKAGE = Path(__file__).resolve().parent
_KEEP_VERSIONS = 3
_DEFAULT, _COMPILE, _ADAPTIVE, _INTERPRET = range(4)  # _DEFAULT compiles too


class _State(threading.local):
    """How the kernels run in this thread (see the module docstring)."""

    def __init__(self) -> None:
        self.mode = _DEFAULT
        self.until = 0.0  # adaptive: compile from this perf_counter() on
        self.interpreted: set[Kernel] = set()  # adaptive: kernels that would have compiled
        self.forbid = 0  # adaptive: > 0 while a kernel may only run from machine code at hand
        self.inside = 0  # adaptive: > 0 inside a kernel that runs as Python
        self.depth = 0  # nesting of compilations (a kernel compiles the kernels it calls)
        self.started_events: set[int] = set()  # ids of the compile events whose start was let in
        self.started = 0.0  # when the outermost compilation began
        self.lock: Any = None  # the file lock held while this thread compiles a kernel
        self.lock_owner: Any = None  # the kernel it is held for


_state = _State()


class _WouldCompile(Exception):
    """Raised into Numba where it would start compiling while that is forbidden."""


class _CompiledElsewhere(Exception):
    """Raised into Numba where another process has just compiled the kernel (its machine
    code is in the disk cache now: the call is made again and loads it)."""


class Kernel(CPUDispatcher):
    """A Numba dispatcher that can also run its function as plain Python."""

    def __call__(self, *args: Any) -> Any:
        while True:
            try:
                return self._call(args)
            except _CompiledElsewhere:
                continue
            finally:
                _release(None)  # (released when the machine code was saved; or if that failed)

    def typeof_pyval(self, val: Any) -> Any:
        """Numba's type of an argument from Python, with read-only arrays typed as
        writable ones: the instance's arrays are frozen, the kernels' own scratch is not,
        and Numba would otherwise compile a kernel (and every kernel it calls) once per
        mix of the two (37 of the suite's 224 compilations). Machine code cannot tell a
        frozen array apart; the plain Python the kernels also run as can, and the tests
        run every scheduler both ways (``tests/sim/test_jit.py``), so a kernel that wrote
        into its input would fail there."""
        tp = super().typeof_pyval(val)
        if isinstance(tp, nbtypes.Array) and not tp.mutable:
            tp = tp.copy(readonly=False)
        return tp

    def get_call_template(self, args: Any, kws: Any) -> Any:
        """Numba's typing of a call from another kernel, for the arguments' types without
        their literal values: Numba would compile the callee once per constant it is given
        (``pairwise_sum(x, 0, n)`` and ``pairwise_sum(x, i, n)`` twice): some 5% of the
        main job's compile time, for no speed."""
        return super().get_call_template(tuple(nbtypes.unliteral(a) for a in args),
                                         {k: nbtypes.unliteral(v) for k, v in kws.items()})

    def _call(self, args: tuple[Any, ...]) -> Any:
        st = _state
        if st.mode <= _COMPILE:
            return CPUDispatcher.__call__(self, *args)
        if st.mode == _INTERPRET or st.inside:
            return _python(self)(*args)
        # adaptive: machine code at hand, or (while the rent lasts) the function as Python
        if time.perf_counter() < st.until and self not in st.interpreted:
            st.forbid += 1
            try:
                return CPUDispatcher.__call__(self, *args)
            except _WouldCompile:
                st.interpreted.add(self)
            finally:
                st.forbid -= 1
        if self in st.interpreted and time.perf_counter() < st.until:
            # the kernels it calls run as Python too: it may pass them Python objects
            # (an empty list) that machine code cannot take
            st.inside += 1
            try:
                return _python(self)(*args)
            finally:
                st.inside -= 1
        return CPUDispatcher.__call__(self, *args)  # the rent is spent: compile


_kernels: list[Kernel] = []
_twins: dict[Kernel, Callable[..., Any]] = {}
_twin_globals: dict[int, dict[str, Any]] = {}
_twin_lock = threading.RLock()


def _python(kernel: Kernel) -> Callable[..., Any]:
    """``kernel``'s function as plain Python whose calls to kernels go straight to theirs.

    The same code, closure and defaults as ``kernel.py_func``; its globals are a copy of
    its module's in which every kernel is replaced by its plain twin, so an interpreted
    kernel calls the kernels it uses without passing through :meth:`Kernel.__call__`
    each time (up to a third of an interpreted run went there). Like machine code, the
    twin sees the module's globals as they were when it was first needed.
    """
    twin = _twins.get(kernel)
    if twin is None:
        with _twin_lock:
            twin = _twins.get(kernel)
            if twin is None:
                f = kernel.py_func
                twin = types.FunctionType(f.__code__, _python_globals(f.__globals__),
                                          f.__name__, f.__defaults__, f.__closure__)
                twin.__kwdefaults__ = f.__kwdefaults__
                _twins[kernel] = twin
    return twin


def _python_globals(module: dict[str, Any]) -> dict[str, Any]:
    """The globals of a module's plain twins (under ``_twin_lock``)."""
    copy = _twin_globals.get(id(module))
    if copy is None:
        copy = _twin_globals[id(module)] = dict(module)  # registered first: kernels recurse
        for name, value in module.items():
            if isinstance(value, Kernel):
                copy[name] = _python(value)
    return copy


def kernels() -> tuple[Kernel, ...]:
    """Every kernel defined so far (those of the modules imported)."""
    return tuple(_kernels)


def njit(func: F) -> F:
    """Compile ``func`` in nopython mode (caching the result on disk where :func:`cache_dir`
    can be written, see :func:`cache_usable`), or run it as Python."""
    disp = numba.njit(cache=cache_usable(), nogil=True)(func)
    if not isinstance(disp, CPUDispatcher):  # NUMBA_DISABLE_JIT: the function itself
        return disp  # type: ignore[return-value]
    disp.__class__ = Kernel  # same layout: Kernel adds only methods
    kernel = cast(Kernel, disp)
    cache: Any = getattr(kernel, "_cache")  # noqa: B009 (Numba's, not typed)
    save = cache.save_overload

    def save_then_release(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        finally:
            _release(kernel)  # the lock's waiters find the machine code on disk now

    cache.save_overload = save_then_release
    _kernels.append(kernel)
    return disp  # type: ignore[return-value]


@contextlib.contextmanager
def _mode(mode: int, until: float = 0.0) -> Iterator[set[Kernel]]:
    st = _state
    saved = (st.mode, st.until, st.interpreted)
    st.mode, st.until, st.interpreted = mode, until, set()
    try:
        yield st.interpreted
    finally:
        st.mode, st.until, st.interpreted = saved


RENT = 20.0
"""Seconds an installation spends running kernels interpreted in :func:`adaptive` contexts
before it compiles them (rent or buy: compiling a scheduler's kernels takes 5-25 s, so
interpreting costs at most about twice what compiling at once would, and small instances
that finish interpreted within the rent never wait for a compiler). Counted across
processes in the cache directory."""


@contextlib.contextmanager
def adaptive() -> Iterator[None]:
    """Inside: kernels run from machine code at hand, else interpreted while :data:`RENT`
    lasts (see the module docstring); a context inside another keeps the outer one's rule."""
    if _state.mode != _DEFAULT:
        yield
        return
    start = time.perf_counter()
    with _mode(_ADAPTIVE, start + max(RENT - _rent_paid(), 0.0)) as interpreted:
        try:
            yield
        finally:
            if interpreted:
                _pay_rent(min(time.perf_counter(), _state.until) - start)


INTERPRET_MAX_FLOWS = 20_000
"""Instances with at most this many flows run their kernels in :func:`adaptive` mode."""

JIT_MODES = ("auto", "compile", "interpret")


def env_mode() -> str:
    """The mode the environment variable ``COFLOWOPT_JIT`` asks for (``auto`` when unset);
    another value is an :class:`~coflowopt.errors.InputError` naming it."""
    jit = os.environ.get("COFLOWOPT_JIT", "").strip().lower() or "auto"
    if jit not in JIT_MODES:
        raise InputError(f"the environment variable COFLOWOPT_JIT must be one of "
                         f"{', '.join(JIT_MODES)} (or unset), got {os.environ['COFLOWOPT_JIT']!r}")
    return jit


def for_instance(num_flows: int, jit: str | None = None) -> contextlib.AbstractContextManager[Any]:
    """How kernels run for an instance of ``num_flows`` flows: ``jit="auto"`` (default:
    the environment variable ``COFLOWOPT_JIT``, else ``auto``) is :func:`adaptive` up to
    :data:`INTERPRET_MAX_FLOWS` flows and compiling beyond; ``"compile"`` and
    ``"interpret"`` force one way. Results are the same every way; inside another context
    the outer one's rule holds."""
    if jit is None:
        jit = env_mode()
    if jit not in JIT_MODES:
        raise ValueError(f"jit must be one of {', '.join(JIT_MODES)}, got {jit!r}")
    if _state.mode != _DEFAULT or _state.depth:
        return contextlib.nullcontext()
    if jit == "interpret":
        return interpreting()
    if jit == "compile" or num_flows > INTERPRET_MAX_FLOWS:
        return contextlib.nullcontext()
    return adaptive()


def interpreting() -> contextlib.AbstractContextManager[set[Kernel]]:
    """Inside: every kernel runs as plain Python (the same numbers, slower)."""
    return _mode(_INTERPRET)


def compiling() -> contextlib.AbstractContextManager[set[Kernel]]:
    """Inside: every kernel compiles on its first call (the default outside any context)."""
    return _mode(_COMPILE)


_rent_lock = threading.Lock()


def _rent_file() -> Path:
    return cache_dir() / "interpreted-seconds"


def _rent_paid() -> float:
    with _rent_lock, contextlib.suppress(OSError, ValueError):
        return float(_rent_file().read_text())
    return 0.0


def _pay_rent(seconds: float) -> None:
    with _rent_lock, contextlib.suppress(OSError):  # approximate across processes: no harm
        path = _rent_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            paid = float(path.read_text())
        except (OSError, ValueError):
            paid = 0.0
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(f"{paid + max(seconds, 0.0):.3f}")
        tmp.replace(path)


# --------------------------------------------------------------------------- compile notices

_observers: list[Callable[[str, float | None], None]] = []


@contextlib.contextmanager
def on_compile(callback: Callable[[str, float | None], None]) -> Iterator[None]:
    """Inside: ``callback(name, None)`` when a kernel starts compiling in this process,
    ``callback(name, seconds)`` when it is done (only the outermost of nested compilations;
    a kernel compiles the kernels it calls; not when an error or an interrupt ended it).
    Callbacks must not raise, but for a :class:`KeyboardInterrupt` (the command line's
    raises again one that llvmlite swallowed during the compilation)."""
    _observers.append(callback)
    try:
        yield
    finally:
        _observers.remove(callback)


def listening() -> bool:
    """Whether an :func:`on_compile` callback is registered in this process."""
    return bool(_observers)


def listen(callback: Callable[[str, float | None], None]) -> None:
    """Register ``callback`` as :func:`on_compile` does, for the rest of the process (a pool
    worker's relay to its parent: :class:`coflowopt.sim.batch.WorkerPool`)."""
    _observers.append(callback)


def announce(name: str, seconds: float | None) -> None:
    """Tell this process's :func:`on_compile` callbacks of a compilation: one here, or one
    that a worker process relays."""
    for cb in tuple(_observers):
        cb(name, seconds)


class _Listener(event.Listener):
    """Refuses compilations where they are forbidden; makes processes take turns on one
    kernel; tells the observers of the others.

    Two processes that need the same kernel at once (``compare --jobs 2`` on a new
    installation: mcs and Aalo share theirs) would both spend its compile time; the second
    waits for the first's file lock in the cache directory instead (held from the start
    of the compilation until Numba has saved the machine code), then loads that.
    """

    def on_start(self, ev: event.Event) -> None:
        st = _state
        if st.forbid:
            raise _WouldCompile
        if st.depth == 0 and isinstance(ev.data["dispatcher"], Kernel):
            st.lock = _take_turn(_name(ev))  # raises _CompiledElsewhere after a wait
            st.lock_owner = ev.data["dispatcher"]
        st.started_events.add(id(ev.data))
        st.depth += 1
        if st.depth == 1:
            st.started = time.perf_counter()
            announce(_name(ev), None)

    def on_end(self, ev: event.Event) -> None:
        st = _state
        if id(ev.data) not in st.started_events:  # its start was refused (Numba ends it anyway)
            return
        st.started_events.discard(id(ev.data))
        st.depth -= 1
        # an exception ended it (an interrupt): nothing was compiled (Numba's own
        # ``is_failed`` reads the other way round, hence the field)
        failed = getattr(ev, "_exc_details", None) is not None
        if st.depth == 0 and not failed:
            announce(_name(ev), time.perf_counter() - st.started)


def _release(kernel: Kernel | None) -> None:
    """Release this thread's compile lock if it is held for ``kernel`` (``None``: whatever
    it is held for, once no compilation is under way)."""
    st = _state
    if st.lock is None or (kernel is not None and st.lock_owner is not kernel) or (
            kernel is None and st.depth):
        return
    st.lock.close()
    st.lock = st.lock_owner = None


def _take_turn(name: str) -> Any:
    """The open lock file of kernel ``name``, locked; ``None`` where locks are not available.
    Raises :class:`_CompiledElsewhere` once another process that held it is done."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX: every process compiles for itself
        return None
    try:
        path = cache_dir() / "locks" / f"{name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "a")  # held until the machine code is saved
    except OSError:
        return None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fcntl.flock(fh, fcntl.LOCK_EX)  # another process is compiling it: wait for it
        fh.close()
        raise _CompiledElsewhere from None
    except OSError:
        fh.close()
        return None
    return fh


def _name(ev: event.Event) -> str:
    func = ev.data["dispatcher"].py_func
    return f"{func.__module__.removeprefix('coflowopt.')}.{func.__qualname__}"


event.register("numba:compile", _Listener())


# --------------------------------------------------------------------------- the disk cache


@functools.cache
def _version() -> str:
    """A hash of every module of the package that defines kernels (and of this one)."""
    h = hashlib.sha256(numba.__version__.encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        text = path.read_bytes()
        if b"_jit import njit" in text or path.name == "_jit.py":
            h.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + text)
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """Where the kernels' machine code of this version of the package is cached."""
    user = getattr(config, "CACHE_DIR", "")  # NUMBA_CACHE_DIR
    if user:
        root = Path(user) / "coflowopt"
    else:
        from numba.misc.appdirs import AppDirs

        root = Path(AppDirs(appname="coflowopt", appauthor=False).user_cache_dir)
    return root / f"kernels-{_version()}"


@functools.cache
def cache_usable() -> bool:
    """Whether :func:`cache_dir` can be created and written (checked once a process).

    Where it cannot (a read-only file system, ``NUMBA_CACHE_DIR`` naming a file), kernels
    compile in memory only, each process anew: Numba's own fallbacks would cache them next
    to the sources under a stamp of each kernel's own file, which an edit to a helper in
    another file leaves stale, or fail at import when the package's folder is read-only.
    """
    try:
        here = cache_dir()
        here.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=here):
            pass
    except OSError:
        return False
    return True


@functools.cache
def _prune() -> None:
    """Keep the :data:`_KEEP_VERSIONS` most recently used versions' caches (once a process)."""
    here = cache_dir()
    with contextlib.suppress(OSError):
        here.mkdir(parents=True, exist_ok=True)
        here.touch()  # marks it used
        others = sorted((p for p in here.parent.glob("kernels-*") if p != here),
                        key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[_KEEP_VERSIONS - 1:]:
            shutil.rmtree(old, ignore_errors=True)


class _PackageCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Numba's cache for the package's kernels: :func:`cache_dir`, by module path."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        rel = Path(py_file).resolve().parent.relative_to(_PACKAGE)
        self._cache_path = str(cache_dir() / rel)

    def get_cache_path(self) -> str:
        return self._cache_path

    def get_source_stamp(self) -> str:
        return _version()  # the directory holds one version; edits elsewhere count too

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        if not (py_func.__module__ or "").startswith("coflowopt."):
            return None
        if _PACKAGE not in Path(py_file).resolve().parents:
            return None
        _prune()
        return super().from_function(py_func, py_file)


# (Numba 0.68 renamed _CacheImpl to CacheImpl; the locator list is shared by its subclasses)
_impl: Any = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")  # noqa: B009
_impl._locator_classes.insert(0, _PackageCacheLocator)
