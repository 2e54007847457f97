"""Running an experiment's cells, cached on disk, in this process, worker processes or Dask.

``sweep(experiment, "out/", jobs=2)`` computes every cell not already in ``out/cells/``
(one JSON file per cell, named by its id, written atomically: a temporary file moved into
place) and then writes the tidy tables (:mod:`coflowopt.experiment.report`). The engine
is a parameter, never a different code path: every engine runs the same function on
chunks of cells (cells of one instance together), each cell built from its configuration
alone, so the results are the same for any number of workers and either engine.

Files a cell reads (a trace) are read once, here, and sent to each worker once: to a
process of the local pool when it starts, to a Dask worker with ``Client.scatter(...,
broadcast=True)``. A worker keeps the last few instances it built (an instance with its
fabric), so the schedulers of one instance do not build it again.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import BrokenExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..bounds._round import cct_bound
from ..errors import CoflowoptError, InputError, interrupted, require
from ..instance import Instance
from ..io._common import atomic_writer, check_writable
from .spec import GENERATORS, Cell, Experiment, canonical_json, source_key

__all__ = ["SweepError", "SweepProgress", "SweepResult", "run_cell", "sweep"]

CELLS = "cells"
"""The folder of the per-cell results, under the output folder."""


class SweepError(CoflowoptError):
    """A sweep stopped: a cell failed with ``fail_fast``, or a worker or the cluster died."""


@dataclass(frozen=True, slots=True)
class SweepProgress:
    """Where a sweep is: cells in all, found on disk, computed (of them failed), running."""

    total: int
    cached: int
    done: int
    failed: int
    running: int
    elapsed: float
    """Seconds since the computing started."""
    eta: float | None
    """Seconds still to go at the pace so far (``None`` before the first cell is done)."""
    damaged: tuple[tuple[str, str], ...] = ()
    """(file, what is wrong) of each stored cell found damaged, which is computed again."""

    @property
    def todo(self) -> int:
        """Cells this sweep computes (those not found on disk)."""
        return self.total - self.cached


@dataclass(frozen=True, slots=True)
class SweepResult:
    """What a sweep did and where its tables are."""

    out: Path
    total: int
    cached: int
    computed: int
    failures: tuple[tuple[str, str], ...]
    """(cell id, error) of each failed cell."""
    tables: tuple[Path, ...]
    damaged: tuple[tuple[str, str], ...] = ()
    """(file, what is wrong) of each stored cell found damaged and computed again."""

    def runs(self) -> Any:
        """The per-run table (a pandas DataFrame)."""
        from .report import load

        return load(self.out, "runs")

    def coflows(self) -> Any:
        """The per-coflow table (a pandas DataFrame)."""
        from .report import load

        return load(self.out, "coflows")


def check_folder(root: Path) -> None:
    """An :class:`InputError` unless the folder ``root`` (and its ``cells`` folder, where
    they exist) can hold a sweep's files: made where it does not exist, written into."""
    top = root
    while not top.exists() and not top.is_symlink() and top.parent != top:
        top = top.parent  # the part of the path that exists
    for link in (top, root / CELLS):
        if link.is_symlink() and not link.exists():
            raise InputError(f"cannot be made: {link} is a link to nothing (or a loop)",
                             path=str(root))
    if not top.is_dir():
        raise InputError("is not a directory" if top == root else
                         f"cannot be made: {top} is not a directory", path=str(root))
    for folder in (top, root / CELLS):
        if folder.is_dir():
            try:
                check_writable(folder / "experiment.json")  # (a file tried there, removed)
            except InputError:
                raise InputError(f"no file can be made in {folder}", path=str(root)) from None


def sweep(
    experiment: Experiment,
    out: str | os.PathLike[str],
    *,
    jobs: int = 1,
    dask: str | None = None,
    resume: bool = False,
    fail_fast: bool = False,
    progress: Callable[[SweepProgress], None] | None = None,
    chunk_size: int | None = None,
) -> SweepResult:
    """Compute an experiment's cells and write its tables under ``out``.

    Parameters
    ----------
    experiment
        The grid (:class:`~coflowopt.experiment.Experiment`).
    out
        The output folder: ``cells/`` (one result per cell), ``runs.parquet``,
        ``coflows.parquet`` and their CSV twins, ``experiment.json`` (the experiment's
        :meth:`~coflowopt.experiment.Experiment.to_dict`).
    jobs
        Cells at once, each in a worker process of a local pool (``1``: here, in order).
    dask
        Run on Dask instead: a scheduler's address (``tcp://host:8786``) or ``local:N``
        (a ``LocalCluster`` of ``N`` single-threaded worker processes, closed at the end).
    resume
        Use the cells already in ``out`` (of the same configuration and version) and
        compute the rest; without it, a folder that holds results is refused.
    fail_fast
        Stop at the first failing cell (:class:`SweepError`); otherwise its error is
        recorded (``status`` ``failed``, ``error``) and the sweep goes on.
    progress
        Called with a :class:`SweepProgress` at the start and as cells finish.
    chunk_size
        Cells per task (default: one in this process; else about four tasks per worker, at
        most 16 cells each).
    """
    require("pandas", "sweep", "an experiment's tables")
    require("pyarrow", "sweep", "an experiment's Parquet tables")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs must be an integer >= 1, got {jobs!r}")
    if dask is not None and (not isinstance(dask, str) or not dask.strip()):
        raise InputError(f"dask must be a scheduler address or local:N, got {dask!r}")
    root = Path(out)
    folder = root / CELLS
    cells = experiment.cells()
    check_folder(root)
    if not resume and folder.is_dir() and any(folder.glob("*.json")):
        raise InputError("holds the results of a sweep: resume to reuse them (a cell whose "
                         "configuration changed is computed again), or choose another directory",
                         path=str(root))
    results: dict[str, dict[str, Any]] = {}
    damaged: list[tuple[str, str]] = []
    for cell in cells:
        found = _cached(folder, cell)
        if isinstance(found, str):
            damaged.append((str(folder / f"{cell.id}.json"), found))
        elif found is not None:
            results[cell.id] = found
    todo = [c for c in cells if c.id not in results]
    # cells of one instance together, so that a worker builds it once
    key = {c.id: canonical_json([c.config["instance"], c.config["fabric"]]) for c in todo}
    first = {k: i for i, k in reversed(list(enumerate(key[c.id] for c in todo)))}
    todo.sort(key=lambda c: first[key[c.id]])
    t0 = time.perf_counter()
    done = failed = workers = 0
    failures: list[tuple[str, str]] = []

    def report() -> None:
        if progress is not None:
            elapsed = time.perf_counter() - t0
            eta = elapsed / done * (len(todo) - done) if done else None
            progress(SweepProgress(len(cells), len(cells) - len(todo), done, failed,
                                   min(workers, len(todo) - done), elapsed, eta, tuple(damaged)))

    report()  # before the workers start, which can take seconds
    # the engine first: a Dask address that does not answer leaves nothing written
    engine = _engine(jobs, dask, _sources(experiment, todo) if todo else {})
    workers = engine.workers
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_writer(root / "experiment.json") as fh:  # what was asked, for the record
            json.dump(experiment.to_dict(), fh, indent=1, allow_nan=True)
        if todo:
            # a few tasks per worker: a task's overhead is paid per chunk, the balance needs several
            size = chunk_size or (1 if isinstance(engine, _Here) else
                                  max(1, min(16, len(todo) // (4 * engine.workers))))
            chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
            for i, outputs in engine.run([[c.config for c in ch] for ch in chunks]):
                for cell, res in zip(chunks[i], outputs, strict=True):
                    doc = {"id": cell.id, "config": cell.config, **res}
                    with atomic_writer(folder / f"{cell.id}.json") as fh:
                        json.dump(doc, fh, allow_nan=True)
                    results[cell.id] = doc
                    done += 1
                    if res["status"] != "ok":
                        failed += 1
                        failures.append((cell.id, str(res["error"])))
                        if fail_fast:
                            raise SweepError(f"cell {cell.id} ({_describe(cell)}) failed: "
                                             f"{res['error']}")
                report()
    finally:
        engine.close()
    from .report import write_tables

    tables = write_tables(root, cells, results)
    return SweepResult(root, len(cells), len(cells) - len(todo), done, tuple(failures), tables,
                       tuple(damaged))


def _describe(cell: Cell) -> str:
    lab = cell.labels
    return (f"{lab['scheduler']} on {lab['instance']}, {lab['fabric']}, seed {cell.config['seed']}"
            + (f", background {lab['background']}" if lab["background"] != "none" else ""))


def _cached(folder: Path, cell: Cell) -> dict[str, Any] | str | None:
    """A cell's stored result, if it is whole, of this configuration, and not a failure;
    ``None`` if there is none (or a failure, computed again); what is wrong if the file is
    damaged."""
    path = folder / f"{cell.id}.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    except (ValueError, RecursionError) as exc:
        return f"not a cell's JSON ({str(exc)[:80]})"
    if not isinstance(doc, dict):
        return "not a cell's JSON (not an object)"
    if doc.get("status") != "ok":
        return None
    if not isinstance(doc.get("summary"), dict) or not isinstance(doc.get("coflows") or {}, dict):
        return "its summary or coflows are damaged"
    if canonical_json(doc.get("config")) != canonical_json(cell.config):
        return "it holds another configuration than its name says"
    return doc


def _sources(experiment: Experiment, cells: Sequence[Cell]) -> dict[str, Instance]:
    """The files the cells read, read once (source key -> instance)."""
    from .. import io

    wanted = {source_key(c.config["instance"]["source"]) for c in cells
              if "source" in c.config["instance"]}
    out: dict[str, Instance] = {}
    for key, (path, fmt, rate) in experiment.sources().items():
        if key in wanted:
            out[key] = io.read(path, format=fmt, port_rate=rate)
    return out


# --------------------------------------------------------------------------- engines


class _Engine:
    """Runs chunks of cell configurations; yields (chunk index, results) as they finish."""

    workers = 1

    def run(self, chunks: list[list[Mapping[str, Any]]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the workers (stopping what still runs)."""


class _Here(_Engine):
    def __init__(self, bases: dict[str, Instance]) -> None:
        self.bases = bases

    def run(self, chunks: list[list[Mapping[str, Any]]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        for i, chunk in enumerate(chunks):
            yield i, run_chunk(chunk, self.bases)


class _Pool(_Engine):
    def __init__(self, jobs: int, bases: dict[str, Instance]) -> None:
        self.workers = jobs
        from ..sim.batch import WorkerPool

        self.pool = WorkerPool(jobs, _install, bases)
        self.finished = False

    def run(self, chunks: list[list[Mapping[str, Any]]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        futures = {self.pool.submit(_run_installed, chunk): i for i, chunk in enumerate(chunks)}
        for fut in as_completed(futures):
            try:
                yield futures[fut], fut.result()
            except BrokenExecutor as exc:
                from ..sim.batch import broken_worker

                raise SweepError(str(broken_worker("during the sweep", exc))) from exc
        self.finished = True

    def close(self) -> None:
        from ..sim.batch import stop_pool

        if self.finished:
            self.pool.shutdown()
        else:
            stop_pool(self.pool)


class _Dask(_Engine):
    def __init__(self, address: str, bases: dict[str, Instance]) -> None:
        distributed = require("distributed", "sweep", "a sweep on Dask")
        self.distributed = distributed
        self.cluster = None
        address = address.strip()
        if address.startswith("local:"):
            n = address[6:]
            if not n.isdigit() or int(n) < 1:
                raise InputError(f"dask local:N needs a number of workers >= 1, got '{address}'")
            self.cluster = distributed.LocalCluster(
                n_workers=int(n), threads_per_worker=1, processes=True, dashboard_address=None)
            try:
                self.client = distributed.Client(self.cluster)
            except BaseException:
                self.cluster.close()
                raise
        else:
            self.client = _connect(distributed, address)
        self.futures: list[Any] = []
        try:
            try:
                self.client.wait_for_workers(1, timeout=CONNECT_SECONDS)
            except (OSError, TimeoutError) as exc:
                raise InputError(f"the Dask scheduler at {address} has no workers (none came "
                                 f"within {CONNECT_SECONDS:g} s: {exc})") from None
            self.workers = max(1, sum(w.get("nthreads", 1) for w in
                                      self.client.scheduler_info()["workers"].values()))
            # one copy per worker, not one per task
            self.shared = self.client.scatter([bases], broadcast=True, hash=False)[0]
        except BaseException:
            self.close()
            raise

    def run(self, chunks: list[list[Mapping[str, Any]]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        index = {}
        for i, chunk in enumerate(chunks):
            fut = self.client.submit(run_chunk, chunk, self.shared, pure=False)
            index[fut.key] = i
            self.futures.append(fut)
        for fut in self.distributed.as_completed(self.futures):
            try:
                res = fut.result()
            except Exception as exc:  # a cell's own errors are caught in it: this is Dask's
                raise SweepError(f"the Dask cluster failed a task: {type(exc).__name__}: {exc}") from exc
            yield index[fut.key], res

    def close(self) -> None:
        try:
            if self.futures:
                self.client.cancel(self.futures)
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


CONNECT_SECONDS = 20.0
"""How long a sweep waits for a Dask scheduler to answer, and then for a worker."""


def _connect(distributed: Any, address: str) -> Any:
    """A Dask client of the scheduler at ``address``, or an :class:`InputError` within
    about :data:`CONNECT_SECONDS`: Dask's own connect timeout does not cover a server that
    accepts the connection and then says nothing a Dask scheduler would (any other
    service), and a server that answers with other bytes can fail deep in its handshake."""
    box: dict[str, Any] = {}

    def connect() -> None:
        try:
            box["client"] = distributed.Client(address, timeout=f"{CONNECT_SECONDS:g}s")
        except BaseException as exc:  # given to the caller below
            box["error"] = exc

    thread = threading.Thread(target=connect, name="dask-connect", daemon=True)
    thread.start()
    thread.join(CONNECT_SECONDS + 5)
    if thread.is_alive():
        raise InputError(f"cannot reach the Dask scheduler at {address}: nothing answered as "
                         f"one within {CONNECT_SECONDS + 5:g} s")
    exc = box.get("error")
    if isinstance(exc, KeyboardInterrupt):
        raise exc
    if exc is not None:
        text = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise InputError(f"cannot reach the Dask scheduler at {address} "
                         f"({type(exc).__name__}: {text})") from None
    return box["client"]


def _engine(jobs: int, dask: str | None, bases: dict[str, Instance]) -> _Engine:
    if dask is not None:
        return _Dask(dask, bases)
    return _Pool(jobs, bases) if jobs > 1 else _Here(bases)


# --------------------------------------------------------------------------- in a worker

_INSTALLED: dict[str, Instance] = {}
"""A pool worker's shared inputs (the files the cells read), given when it starts."""

_BUILT: OrderedDict[str, Instance] = OrderedDict()
_BUILT_LOCK = threading.Lock()
KEEP_BUILT = 4
"""Instances (with their fabric) a worker keeps for the next cells."""


def _install(bases: dict[str, Instance]) -> None:
    _INSTALLED.clear()
    _INSTALLED.update(bases)


def _run_installed(chunk: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return run_chunk(chunk, _INSTALLED)


def run_chunk(chunk: Sequence[Mapping[str, Any]], bases: Mapping[str, Instance]) -> list[dict[str, Any]]:
    """:func:`run_cell` on each configuration of ``chunk``."""
    return [run_cell(config, bases) for config in chunk]


def run_cell(config: Mapping[str, Any], bases: Mapping[str, Instance]) -> dict[str, Any]:
    """One cell from its configuration: ``status`` (``ok`` or ``failed``), ``error``,
    ``summary`` (the per-run values) and ``coflows`` (the per-coflow columns).

    ``bases``: the files cells read, by source key. An error of the cell is recorded, not
    raised.
    """
    t0 = time.perf_counter()
    out: dict[str, Any]
    try:
        inst = _instance(config, bases)
        if config["kind"] == "bound":
            out = {"summary": _bound(inst, config), "coflows": {}}
        elif config["kind"] == "solve":
            out = _solve(inst, config)
        else:
            out = _simulate(inst, config)
        out.update(status="ok", error=None)
    except Exception as exc:  # the sweep goes on: the error is the cell's result
        if interrupted(exc):  # not the cell's: the user stops the sweep
            raise KeyboardInterrupt from exc
        out = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "summary": {},
               "coflows": {}}
    out["wall_s"] = time.perf_counter() - t0
    return out


def _instance(config: Mapping[str, Any], bases: Mapping[str, Instance]) -> Instance:
    key = canonical_json([config["instance"], config["fabric"]])
    with _BUILT_LOCK:
        if key in _BUILT:
            _BUILT.move_to_end(key)
            return _BUILT[key]
    icfg, fab = config["instance"], config["fabric"]
    base = bases[source_key(icfg["source"])] if "source" in icfg else None
    inst = GENERATORS[icfg["generator"]].build(icfg["params"], config["seed"], base)
    if fab["topology"] != "big-switch":
        from ..fabric import place

        inst = place(inst, fab["topology"], dict(fab["params"]), routing=fab["routing"],
                     routing_seed=fab["routing_seed"])
    with _BUILT_LOCK:
        _BUILT[key] = inst
        while len(_BUILT) > KEEP_BUILT:
            _BUILT.popitem(last=False)
    return inst


def _simulate(inst: Instance, config: Mapping[str, Any]) -> dict[str, Any]:
    from ..sim import make_policy, simulate

    sched = config["scheduler"]
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in sched["params"].items()}
    options = dict(config["options"])
    bg = config["background"]
    if bg is not None:
        from ..fabric.background import parse_background

        fab = inst.fabric
        background = parse_background(bg["spec"], fab.capacity,
                                      [fab.link_name(link) for link in range(fab.num_links)],
                                      num_hosts=inst.num_ports)
        background.check(fab.capacity, inst.num_ports, fab)
        options["background"] = background
    res = simulate(inst, make_policy(sched["name"], params), record=False, **options)
    row = res.summary_row()
    for k in ("instance", "scheduler", "params", "batch_interval"):
        row.pop(k, None)
    summary = {"released": float(np.dot(inst.weight, inst.release)), **row}
    cols = res.columns()
    coflows = {("coflow" if k == "id" else k): [_value(v) for v in np.asarray(cols[k]).tolist()]
               for k in cols}
    return {"summary": {k: _value(v) for k, v in summary.items()}, "coflows": coflows}


def _bound(inst: Instance, config: Mapping[str, Any]) -> dict[str, Any]:
    from ..solvers import bound

    b = config["bound"]
    res = bound(inst, method=b["name"], time_limit=b["time_limit"], **b["options"])
    released = float(np.dot(inst.weight, inst.release))
    value = float(res.bound)
    return {"released": released, "flows": inst.num_flows, "num_coflows": inst.num_coflows,
            "bound": _value(value), "bound_cct": _value(cct_bound(value, inst.weight, inst.release)),
            "bound_status": res.status.value, "runtime_s": res.runtime}


CLOCK_FREE = frozenset({"optimal", "feasible", "infeasible", "bound"})
"""Solve statuses of a solver that ended by itself, not at its time limit."""


def _solve(inst: Instance, config: Mapping[str, Any]) -> dict[str, Any]:
    """A solve cell: ``coflowopt.solve``'s result in columns, and the per-coflow rows of
    its schedule's completion times.

    ``reproducible`` says whether the values are the same on any machine: the solver
    ended by itself (optimal, feasible, infeasible), not at its time limit, and no step of
    it was cut short by the clock (the local search's pairwise LP has a share of the time
    limit). Each method is deterministic for its instance, options and seed up to where
    the clock stops it; none takes a node or iteration limit instead.
    """
    from ..metrics import summarize
    from ..solvers import solve

    s = config["solver"]
    options = {k: tuple(v) if isinstance(v, list) else v for k, v in s["options"].items()}
    res = solve(inst, method=s["method"], objective=s["objective"], time_limit=s["time_limit"],
                **options)
    released = float(np.dot(inst.weight, inst.release))
    info = res.info
    cut = bool(info.get("lp", {}).get("timed_out")) if isinstance(info.get("lp"), Mapping) else False
    summary: dict[str, Any] = {
        "released": released, "flows": inst.num_flows, "num_coflows": inst.num_coflows,
        "objective_name": res.objective_name, "objective": res.objective, "bound": res.bound,
        "gap": res.gap, "solve_status": res.status.value,
        "reproducible": res.status.value in CLOCK_FREE and not cut,
        "incumbent_from": info.get("incumbent_from") or None,
        "bound_from": info.get("bound_from") or info.get("bound_method") or None,
        "nodes": info.get("nodes"), "runtime_s": res.runtime}
    if res.objective_name == "wcct":  # a bound on sum w C bounds every schedule's sum w CCT
        summary["bound_cct"] = cct_bound(res.bound, inst.weight, inst.release)
    coflows: dict[str, list[Any]] = {}
    if res.completion is not None:
        comp = np.asarray(res.completion, dtype=np.float64)
        for key, value in summarize(inst, comp).as_dict().items():
            if isinstance(value, Mapping):
                summary.update({f"{key}_{b}": x for b, x in value.items()})
            else:
                summary[key] = value
        coflows = {"coflow": list(inst.ids), "release": inst.release.tolist(),
                   "finish": comp.tolist(), "cct": (comp - inst.release).tolist(),
                   "width": inst.width.tolist(), "length": inst.length.tolist(),
                   "size": inst.size.tolist(), "bin": inst.bins().tolist()}
        coflows = {k: [_value(v) for v in col] for k, col in coflows.items()}
    return {"summary": {k: _value(v) for k, v in summary.items()}, "coflows": coflows}


def _value(v: Any) -> Any:
    """A JSON-ready number (``None`` for nan; infinities stay, as JSON's extension)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and np.isnan(v):
        return None
    return v
