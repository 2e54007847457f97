"""Several simulations of one instance, one after another or in parallel processes.

``simulate_many(instance, {"varys": "varys", "aalo strict": make_policy("aalo",
{"sharing": "strict"})}, jobs=2)`` runs each scheduler on the instance and returns
their results by label, in the order given, whatever the order in which they finish.
Each run is the deterministic :func:`coflowopt.sim.simulate`, so the results are the
same with any ``jobs`` and any executor.

Parallel runs take their own processes (``jobs``: a pool of that many, started with
the ``spawn`` method, so nothing of the parent's threads or state is inherited), or
an executor the caller owns (``executor``: any :class:`concurrent.futures.Executor`,
e.g. one of a distributed engine's). The pool of ``jobs`` (an :class:`InstancePool`)
sends each worker the instance once, when the worker starts (pickled: 17 MB and
about 0.15 s for the Facebook trace); a caller's executor is sent it with every run
(unless it is an :class:`InstancePool` of that instance). Results come back without
their instance, and each gets the caller's ``instance`` again (one copy in this
process, not one per run). The first run
that fails raises its error at once: with ``jobs``, the other runs are stopped; a
caller's executor is left to the caller (runs not started are cancelled, but on an
:class:`InstancePool`, which its owner ends with :func:`stop_pool`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

from .. import _jit
from ..instance import Instance
from .engine import SimulationError
from .policies import Policy
from .results import SimulationResult

__all__ = ["InstancePool", "WorkerPool", "broken_worker", "cpu_count", "process_pool",
           "simulate_many", "start_worker", "stop_pool"]

T = TypeVar("T")

OPTIONS = ("batch_interval", "record", "check", "compiled", "max_pieces", "jit", "background",
           "knowledge")
"""The keywords of :func:`coflowopt.sim.simulate` that :func:`simulate_many` passes on."""


def simulate_many(
    instance: Instance,
    runs: Mapping[str, str | Policy],
    *,
    jobs: int = 1,
    executor: Executor | None = None,
    progress: Callable[[str, float], None] | None = None,
    **options: Any,
) -> dict[str, SimulationResult]:
    """Simulate each of ``runs`` (label -> scheduler name or fresh policy object) on ``instance``.

    Parameters
    ----------
    instance
        The instance every run simulates.
    runs
        Labels and what to simulate: a registered name (default parameters) or a
        policy object from :func:`coflowopt.sim.make_policy` (one object per run: a
        policy keeps state while it runs).
    jobs
        How many runs at once, each in its own process (``1``: in this process, in
        order). Each process holds a copy of the instance and its own simulation
        (:func:`cpu_count` tells how many CPUs there are).
    executor
        Run on this executor instead (``jobs`` is then ignored); it must be able to
        pickle the instance and the policies (process pools and distributed engines can).
    progress
        Called in this process with ``(label, fraction)``: during a run in this
        process with the fraction of bytes delivered (below 1), and once with ``1.0``
        when a run's result is in (all that parallel runs report).
    **options
        Passed to :func:`coflowopt.sim.simulate` (:data:`OPTIONS`: ``batch_interval``,
        ``record``, ``check``, ``compiled``, ``max_pieces``, ``jit``, ``background``,
        ``knowledge``). With ``record=True`` every schedule
        travels back from the worker: large traces are better run with ``record=False``.

    Returns
    -------
    dict
        The results by label, in the order of ``runs``.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise SimulationError(f"simulate_many got unknown options {unknown}; it passes on {list(OPTIONS)}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SimulationError(f"jobs must be an integer >= 1, got {jobs!r}")
    if not isinstance(runs, Mapping):
        raise SimulationError(f"runs must map labels to schedulers, e.g. {{'varys': 'varys'}}, "
                              f"got {runs!r:.80}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise SimulationError(f"executor must be a concurrent.futures Executor (or one with "
                              f"its submit), got {type(executor).__name__}")
    labels = list(runs)
    if executor is None and (jobs == 1 or len(labels) <= 1):
        out: dict[str, SimulationResult] = {}
        for label in labels:
            report = None if progress is None else _reporter(progress, label)
            out[label] = _simulate(instance, runs[label], report, options)
            if progress is not None:
                progress(label, 1.0)
        return out
    if executor is not None:
        return _collect(executor, instance, runs, progress, options)
    pool = process_pool(min(jobs, len(labels)), instance)
    try:
        out = _collect(pool, instance, runs, progress, options)
    except BaseException:
        stop_pool(pool)  # a failed run is reported now, not after the others end
        raise
    pool.shutdown()
    return out


class WorkerPool(ProcessPoolExecutor):
    """A pool of worker processes started with ``spawn``, each running ``install(payload)``
    when it starts (:func:`start_worker`).

    ``spawn``: nothing of this process's threads or state is inherited, and scripts
    need the ``if __name__ == "__main__"`` guard. Where this process listens for kernel
    compilations (:func:`coflowopt._jit.on_compile`, as the command line does) when the
    pool is made, the workers' compilations are told to its callbacks too, as they start
    and end (from a thread of this process), so that a worker's compile wait is not silent.
    """

    def __init__(self, workers: int, install: Callable[[Any], None], payload: Any) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._relay = _CompileRelay(ctx) if _jit.listening() else None
        writer = None if self._relay is None else self._relay.writer
        super().__init__(max_workers=workers, mp_context=ctx, initializer=start_worker,
                         initargs=(install, payload, writer))

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """As :meth:`ProcessPoolExecutor.submit`, which starts a worker when one is wanted,
        inside :func:`_interrupt_deferred`: an interrupt while the worker's start data is
        being written to it waits until it is written (the worker would otherwise read a
        truncated pickle and print its traceback), and the worker starts with interrupts
        blocked, so that a Ctrl-C to the whole process group reaches this process alone,
        which stops the workers (a worker interrupted while it started printed the head of
        a traceback)."""
        with _interrupt_deferred():
            return super().submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=wait, cancel_futures=cancel_futures)
        if self._relay is not None:
            self._relay.close()


class _CompileRelay:
    """The workers' compile notices: each worker sends ``(name, seconds)`` down one pipe
    (a message of a few dozen bytes is one atomic write, so the workers need no lock, and a
    worker killed mid-write cannot block the others), and a thread here tells them to
    :func:`coflowopt._jit.announce` until :meth:`close`."""

    def __init__(self, ctx: Any) -> None:
        self.reader, self.writer = ctx.Pipe(duplex=False)
        self.thread = threading.Thread(target=self._run, name="coflowopt-compile-relay",
                                       daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with contextlib.suppress(EOFError, OSError):
            while (message := self.reader.recv()) is not None:
                _jit.announce(*message)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.writer.send(None)
        self.thread.join(timeout=PARENT_CHECK)


class InstancePool(WorkerPool):
    """A :class:`WorkerPool` whose workers are each given ``instance`` once, when they
    start; :meth:`submit_on` then runs work on it without sending it again.
    """

    def __init__(self, workers: int, instance: Instance | None = None) -> None:
        super().__init__(workers, _install, instance)
        self.instance = instance

    def submit_on(self, instance: Instance, fn: Callable[..., T], /, *args: Any) -> Future[T]:
        """``fn(instance, *args)`` in a worker; the pool's own instance is not sent again."""
        if self.instance is not None and instance is self.instance:
            return self.submit(_on_installed, fn, *args)
        return self.submit(fn, instance, *args)


@contextlib.contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Inside: an interrupt (SIGINT) is blocked in this thread, and delivered to its handler
    on leaving; a process started inside inherits the block (main thread only). Where the
    platform has no ``pthread_sigmask`` (Windows), it is held by a Python handler instead,
    which a process started inside does not inherit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if hasattr(signal, "pthread_sigmask"):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return
    handler = signal.getsignal(signal.SIGINT)  # pragma: no cover - no pthread_sigmask
    if not callable(handler):  # (ignored, or the default action: nothing to hold)
        yield
        return
    held: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)
    if held:
        handler(signal.SIGINT, None)


def process_pool(workers: int, instance: Instance | None = None) -> InstancePool:
    """An :class:`InstancePool` of ``workers`` processes (each given ``instance``, if any)."""
    return InstancePool(workers, instance)


_INSTALLED: Instance | None = None
"""A worker's copy of its pool's instance (:class:`InstancePool`)."""


def _install(instance: Instance | None) -> None:
    global _INSTALLED
    _INSTALLED = instance


PARENT_CHECK = 1.0
"""Seconds between a pool worker's looks at whether its parent is still there."""


def start_worker(install: Callable[[Any], None], payload: Any, relay: Any = None) -> None:
    """A spawned pool worker's start: ``install(payload)``, a watch that ends the
    worker once its parent is gone, and (given ``relay``, the write end of a
    :class:`WorkerPool`'s pipe) its compilations sent to the parent. A parent killed
    outright (SIGKILL) cannot stop its pool, and the workers would wait for work forever:
    each holds both ends of the pool's call queue, so the queue never reports the parent's
    end closed."""
    parent = os.getppid()
    if relay is not None:
        def send(name: str, seconds: float | None) -> None:
            with contextlib.suppress(OSError):  # the parent is gone: its watch ends this
                relay.send((name, seconds))

        _jit.listen(send)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK)
        os._exit(1)

    threading.Thread(target=watch, name="coflowopt-parent-watch", daemon=True).start()
    install(payload)


def _on_installed(fn: Callable[..., T], *args: Any) -> T:
    if _INSTALLED is None:  # pragma: no cover - submit_on sends it only to such a pool
        raise SimulationError("this worker was given no instance")
    return fn(_INSTALLED, *args)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """End the worker processes without waiting for them; what has not run fails with
    ``BrokenProcessPool``.

    Nothing is cancelled: once its workers end, the pool's own thread sets the broken
    pool's exception on every future it holds, and on a cancelled one that raises
    ``InvalidStateError`` in that thread, printed as a traceback (Python 3.11's
    ``terminate_broken``; a pool to be stopped so is not given to
    :func:`simulate_many` to cancel, see there)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14+
    if terminate is not None:
        terminate()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        proc.terminate()
    pool.shutdown(wait=False)


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity where the platform tells it)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def _collect(
    pool: Executor, instance: Instance, runs: Mapping[str, str | Policy],
    progress: Callable[[str, float], None] | None, options: dict[str, Any],
) -> dict[str, SimulationResult]:
    def submit(label: str) -> Future[SimulationResult]:
        if isinstance(pool, InstancePool):
            return pool.submit_on(instance, _worker, runs[label], options)
        return pool.submit(_worker, instance, runs[label], options)

    futures = {submit(label): label for label in runs}
    position = {label: i for i, label in enumerate(runs)}
    done: dict[str, SimulationResult] = {}
    pending = set(futures)
    try:
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(finished, key=lambda f: position[futures[f]]):
                label = futures[fut]
                try:
                    res = fut.result()
                except BrokenExecutor as exc:
                    # every unfinished run fails alike: which one's process died is not known
                    left = [lb for lb in runs if lb not in done]
                    raise broken_worker(f"while running one of {', '.join(map(repr, left))}",
                                        exc) from exc
                done[label] = dataclasses.replace(res, instance=instance)
                if progress is not None:
                    progress(label, 1.0)
    finally:
        if not isinstance(pool, InstancePool):  # coflowopt's own pools end by stop_pool
            for fut in pending:
                fut.cancel()
    return {label: done[label] for label in runs}


def broken_worker(what: str, exc: BaseException) -> SimulationError:
    """The error for a pool whose worker process died (``what``: the work it was doing)."""
    return SimulationError(
        f"a worker process ended abruptly {what} ({exc}); out of memory, or a script without "
        "the 'if __name__ == \"__main__\":' guard? jobs=1 runs in this process and shows the error"
    )


def _reporter(progress: Callable[[str, float], None], label: str) -> Callable[[float], None]:
    """The engine's progress for ``label``, short of 1.0 (reported once, when the result is in)."""

    def report(fraction: float) -> None:
        if fraction < 1.0:
            progress(label, fraction)

    return report


def _simulate(instance: Instance, spec: str | Policy, report: Callable[[float], None] | None,
              options: dict[str, Any]) -> SimulationResult:
    from . import simulate

    return simulate(instance, spec, progress=report, **options)


def _worker(instance: Instance, spec: str | Policy, options: dict[str, Any]) -> SimulationResult:
    """One run in a worker process; the result goes back without the instance."""
    res = _simulate(instance, spec, None, options)
    return dataclasses.replace(res, instance=None)  # type: ignore[arg-type]
