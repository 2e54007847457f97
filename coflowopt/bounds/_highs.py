"""A thin layer over HiGHS (highspy) for the LPs and MILPs of bounds/ and exact/.

Models are assembled as sparse matrices (column blocks and COO row blocks)
and passed to HiGHS in one call: for the per-node LPs of the branch and bound
and for the trace-sized bound LPs, building them through Pyomo would cost
more than solving them (see ``models/README.md``).

Every LP solved to optimality also returns a *safe* dual bound: the value of
the Lagrangian dual at HiGHS's row duals, recomputed here from the data
(``sum_i y_i b_i + sum_j min(z_j l_j, z_j u_j)`` with ``z = c - A^T y``). By weak
duality it is a lower bound for *any* ``y``, so solver tolerances can make it
slightly weaker but never invalid. Lower bounds that coflowopt reports are
these values.

Likewise an LP that HiGHS calls infeasible is *certified* infeasible only when
its dual ray, recomputed the same way with zero costs, proves it (a positive
Lagrangian value of ``min 0``, :func:`certifies_infeasible`); a search that
discards a subtree on an uncertified "infeasible" may discard the optimum.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

import highspy
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._budget import now
from ..result import Status
from ._round import EPS, TINY

__all__ = ["PRESOLVE_SHARE", "LPBuilder", "LPSolution", "certifies_infeasible", "run_time", "safe_dual_bound"]

FloatArray = npt.NDArray[np.float64]
INF = math.inf

_STATUS = {
    "kOptimal": "optimal",
    "kInfeasible": "infeasible",
    "kUnbounded": "unbounded",
    "kUnboundedOrInfeasible": "infeasible",
    "kTimeLimit": "time_limit",
    "kIterationLimit": "time_limit",
    "kInterrupt": "time_limit",
    "kHighsInterrupt": "time_limit",
    "kSolutionLimit": "time_limit",
    "kModelEmpty": "optimal",
}


def quiet_highs() -> highspy.Highs:
    """A HiGHS instance with its output off from the start.

    highspy's ``Highs()`` installs its callbacks in its constructor, while output is
    still on, and HiGHS then writes its banner ("Running HiGHS ...") to the process's
    standard output (highspy 1.16), past Python's ``sys.stdout`` and into, e.g., the
    CLI's ``--json`` output. The compiled class underneath (``highspy._Highs``, the
    same methods without the callbacks and interrupt handling, which nothing here
    uses) prints nothing when ``output_flag`` is switched off first.
    """
    h = getattr(highspy, "_Highs", highspy.Highs)()
    h.setOptionValue("output_flag", False)
    return h


_INTERRUPT_CHECKS = ("kCallbackSimplexInterrupt", "kCallbackIpmInterrupt", "kCallbackMipInterrupt")
"""HiGHS's callbacks that may stop a run."""

INTERRUPTIBLE_NNZ = 100_000
"""Models with at least this many nonzeros run interruptibly (:func:`run`). A thread of
HiGHS's own costs its thread pool's start each run: the branch and bound's node LPs
(hundreds of nonzeros, tens of ms each) took twice the CPU time that way, and an interrupt
reaches Python between them anyway."""


def run(h: highspy.Highs, *, min_nnz: int = INTERRUPTIBLE_NNZ) -> Any:
    """``h.run()``, which an interrupt (Ctrl-C) stops at HiGHS's next interrupt check.

    HiGHS runs in a thread of its own (highspy releases the GIL while it runs) and this
    one waits for it, so a KeyboardInterrupt reaches Python at once; HiGHS then stops at
    its next interrupt check and the interrupt is raised again here. The simplex and
    interior-point methods check at every iteration; a MIP less often (the event MILP of
    30 coflows stopped 19 s after an interrupt). Run in this thread, HiGHS would keep the
    interrupt from Python until its own time limit ended. Outside the main thread (which
    alone receives interrupts), for models below ``min_nnz`` nonzeros, or without
    highspy's callbacks, it is ``h.run()``. Returns what ``run`` returns (HiGHS's status).

    A second interrupt does not wait for HiGHS to stop: its thread then ends the run by
    itself, and a next ``run`` of the same object waits for that first.
    """
    plain = type(h).run  # the class's: a caller may have made h.run this function
    earlier = _RUNNING.get(id(h))  # (it holds h: the id is not another object's)
    if earlier is not None:
        # a run that a second interrupt left stopping (below): HiGHS ends it at its next
        # check and then takes its callbacks off; this run starts after that
        earlier[1].wait()
    types = getattr(getattr(highspy, "cb", None), "HighsCallbackType", None)
    if (types is None or not hasattr(h, "setCallback") or h.getNumNz() < min_nnz
            or threading.current_thread() is not threading.main_thread()):
        return plain(h)
    kinds = [getattr(types, name) for name in _INTERRUPT_CHECKS]
    stop = threading.Event()

    def check(_type: object, _message: str, _out: object, data_in: Any, _user: object) -> None:
        data_in.user_interrupt = stop.is_set()

    status: list[Any] = []
    failed: list[BaseException] = []

    def solve() -> None:
        try:
            status.append(plain(h))
        except BaseException as exc:  # raised again in the caller's thread, below
            failed.append(exc)
        finally:
            try:
                for kind in kinds:
                    h.stopCallback(kind)
            finally:
                _RUNNING.pop(id(h), None)
                done.set()

    # waits on an event, not on Thread.join: a join that an interrupt broke off can
    # report the thread ended while it runs (CPython's threading, 3.11)
    done = threading.Event()
    h.setCallback(check, None)
    for kind in kinds:
        h.startCallback(kind)
    _RUNNING[id(h)] = (h, done)
    solver = threading.Thread(target=solve, name="HiGHS", daemon=True)
    try:
        solver.start()
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:
        stop.set()
        # HiGHS stops at its next check; a second interrupt does not wait for it (the
        # thread then ends the run by itself, and a next run of h waits for that)
        done.wait()
        raise
    finally:
        if not solver.is_alive() and not done.is_set():  # it never started
            _RUNNING.pop(id(h), None)
            for kind in kinds:
                h.stopCallback(kind)
        if done.is_set():
            solver.join()
    if failed:
        raise failed[0]
    return status[0] if status else None


_RUNNING: dict[int, tuple[Any, threading.Event]] = {}
"""HiGHS objects whose interruptible run has not ended, by ``id``: ``(object, ended)``."""


def bound_status(bound: float, timed_out: bool) -> Status:
    """A bound LP's status: ``BOUND`` with a value, else ``TIME_LIMIT`` when it ran out of
    time (not ``NO_SOLUTION``, which would hide the cause) or ``NO_SOLUTION``."""
    if math.isfinite(bound):
        return Status.BOUND
    return Status.TIME_LIMIT if timed_out else Status.NO_SOLUTION


@dataclass(frozen=True, slots=True)
class LPSolution:
    """What a solve returned (minimisation unless the builder says otherwise).

    ``status`` is ``optimal``, ``infeasible``, ``unbounded``, ``time_limit`` or
    ``error``. ``objective`` is the value of ``x`` (``nan`` without one);
    ``bound`` a proven bound on the optimum: the safe dual bound of an LP, the
    dual bound of a MILP (``nan`` when there is none). An infeasible LP's
    ``info["certified"]`` tells whether its dual ray proves it
    (:func:`certifies_infeasible`).
    """

    status: str
    x: FloatArray | None
    objective: float
    bound: float
    runtime: float
    row_dual: FloatArray | None = None
    info: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "optimal"

    @property
    def proven_infeasible(self) -> bool:
        """Infeasible, and proven so by a recomputed dual ray (LPs only)."""
        return self.status == "infeasible" and bool(self.info.get("certified"))


def safe_dual_bound(
    c: FloatArray, A: sp.csr_array, row_lo: FloatArray, row_hi: FloatArray,
    col_lo: FloatArray, col_hi: FloatArray, y: FloatArray,
) -> float:
    """Lagrangian lower bound of ``min c x, row_lo <= A x <= row_hi, col_lo <= x <= col_hi`` at ``y``.

    Multipliers whose sign needs an infinite side are set to zero first (the
    bound stays valid for any multipliers), so the result is ``-inf`` only
    when a reduced cost needs an infinite column bound. The value is lowered by a
    bound on its floating-point rounding (a few ulps of the magnitude of the terms it
    sums), so that it stays below the LP's optimum, not just within rounding of it.
    """
    return _lagrangian(c, A, row_lo, row_hi, col_lo, col_hi, y)[0]


def _lagrangian(
    c: FloatArray, A: sp.csr_array, row_lo: FloatArray, row_hi: FloatArray,
    col_lo: FloatArray, col_hi: FloatArray, y: FloatArray, *, size: bool = False,
) -> tuple[float, float]:
    """``(value, nan)`` of :func:`safe_dual_bound`, less its rounding margin; with ``size``,
    the value as summed and the magnitude of the terms it sums."""
    y = np.array(y, dtype=np.float64, copy=True)
    y[(y > 0) & ~np.isfinite(row_lo)] = 0.0
    y[(y < 0) & ~np.isfinite(row_hi)] = 0.0
    z = c - A.T @ y
    rows = np.where(y > 0, y * np.where(np.isfinite(row_lo), row_lo, 0.0), 0.0) + np.where(
        y < 0, y * np.where(np.isfinite(row_hi), row_hi, 0.0), 0.0
    )
    pos, neg = z > 0, z < 0
    if np.any(pos & ~np.isfinite(col_lo)) or np.any(neg & ~np.isfinite(col_hi)):
        return -INF, INF
    cols = np.where(pos, z * np.where(pos, col_lo, 0.0), 0.0) + np.where(
        neg, z * np.where(neg, col_hi, 0.0), 0.0
    )
    value = float(math.fsum(rows) + math.fsum(cols))
    lo_abs = np.abs(np.where(np.isfinite(col_lo), col_lo, 0.0))
    hi_abs = np.abs(np.where(np.isfinite(col_hi), col_hi, 0.0))
    absA = sp.csr_array((np.abs(A.data), A.indices, A.indptr), shape=A.shape)
    z_mag = np.abs(c) + absA.T @ np.abs(y)
    row_terms = float(np.abs(rows).sum())
    if size:
        return value, row_terms + float(z_mag @ np.maximum(lo_abs, hi_abs))
    # the rounding: a reduced cost sums (its column's nonzeros + 1) products, so it errs by at
    # most ``dz`` (an ulp of its magnitude per product); where that cannot change its sign,
    # its term errs by ``dz`` times the bound it takes, else by ``dz`` times the larger one;
    # each term takes one product more, a row's term one, and the sums one rounding each
    dz = (np.bincount(A.indices, minlength=A.shape[1]) + 1.0) * EPS * z_mag
    taken = np.where(z > dz, lo_abs, np.where(z < -dz, hi_abs, np.maximum(lo_abs, hi_abs)))
    margin = float(dz @ taken) + EPS * (float(np.abs(cols).sum()) + row_terms + 2.0 * abs(value))
    return value - margin - (A.nnz + A.shape[0] + 2 * A.shape[1]) * TINY, math.nan


def _status(h: highspy.Highs) -> str:
    """HiGHS's model status in this module's words (:data:`_STATUS`)."""
    return _STATUS.get(str(h.getModelStatus()).split(".")[-1], "error")


RECHECK_TOL = 1e-10
"""Primal and dual feasibility tolerance of the second solve of an LP that HiGHS called
infeasible without a proof (:meth:`LPBuilder._recheck`)."""

CERTIFY_TOL = 1e-9
"""A dual ray certifies infeasibility when its Lagrangian value exceeds this share of the
magnitude of the terms it sums (a value within rounding of 0 proves nothing)."""


def certifies_infeasible(
    A: sp.csr_array, row_lo: FloatArray, row_hi: FloatArray, col_lo: FloatArray,
    col_hi: FloatArray, ray: FloatArray,
) -> bool:
    """True when ``ray`` (row multipliers, either sign) proves the rows and bounds infeasible.

    Farkas: for any ``y`` the Lagrangian of ``min 0 x`` (:func:`safe_dual_bound` with zero
    costs) is a lower bound on 0 if a feasible ``x`` exists; a clearly positive value
    therefore proves that none does. Both signs of the ray are tried (solvers differ in
    their convention); a value within :data:`CERTIFY_TOL` of the terms' magnitude, or
    one that needs an infinite column bound, certifies nothing.
    """
    y0 = np.asarray(ray, dtype=np.float64)
    if y0.shape != (A.shape[0],) or not np.all(np.isfinite(y0)) or not y0.any():
        return False
    zero = np.zeros(A.shape[1])
    for y in (y0, -y0):
        value, scale = _lagrangian(zero, A, row_lo, row_hi, col_lo, col_hi, y, size=True)
        if math.isfinite(value) and value > CERTIFY_TOL * scale:
            return True
    return False


PRESOLVE_SHARE = 0.25
"""A freshly built model whose pass to HiGHS took more than this share of the time left is
solved without presolve (:meth:`LPBuilder.solve`)."""


LP_COST_RANGE = 2.0 ** 10
"""An LP whose largest cost lies outside ``[1 / LP_COST_RANGE, LP_COST_RANGE]`` is passed to
HiGHS with its costs divided by a power of two near it (exactly, so the duals read back
are the unscaled LP's up to HiGHS's own rounding). HiGHS's tolerances are absolute and
it takes costs of 1e20 as infinite: with every weight 1e-8 the LP bounds came out weaker
(the pairwise LP 9.667 for 10 per unit weight), with every weight 1e19 HiGHS failed."""


def lp_cost_scale(top: float) -> float:
    """The power of two an LP's costs are divided by, given their largest magnitude."""
    if not (math.isfinite(top) and top > 0) or 1.0 / LP_COST_RANGE <= top <= LP_COST_RANGE:
        return 1.0
    return math.ldexp(1.0, math.frexp(top)[1])


def run_time(left: float, passing: float) -> float:
    """The time limit to give HiGHS's run with ``left`` seconds left after ``passing``
    seconds spent passing it the model: less its presolve, which cannot be interrupted and
    takes about as long as the pass did (a 2.3-million-column makespan LP ran
    4.0 s on a limit of 2.7 s after a 1.4 s pass), but at least half the time left."""
    return float(max(left - passing, left / 2, 1e-3))


def stack_rows(blocks: list[sp.csr_array], ncol: int) -> sp.csr_array:
    """CSR blocks one below the other, each widened to ``ncol`` columns (``scipy.sparse.
    vstack`` took 1.1 s for 28.6 million entries in 14 blocks, this 0.2 s)."""
    if not blocks:
        return sp.csr_array((0, ncol))
    if len(blocks) == 1 and blocks[0].shape[1] == ncol:
        return blocks[0]
    nrow = sum(int(b.shape[0]) for b in blocks)
    nnz = sum(int(b.nnz) for b in blocks)
    itype = np.int32 if max(nnz, ncol) < 2**31 else np.int64
    indptr = np.zeros(nrow + 1, itype)
    row = nz = 0
    for b in blocks:
        m = int(b.shape[0])
        indptr[row + 1: row + m + 1] = b.indptr[1:].astype(itype) + nz
        row, nz = row + m, nz + int(b.nnz)
    data = np.concatenate([b.data for b in blocks])
    indices = np.concatenate([b.indices.astype(itype, copy=False) for b in blocks])
    return sp.csr_array((data, indices, indptr), shape=(nrow, ncol))


def csr_block(rows: list[np.ndarray], cols: list[np.ndarray], vals: list[np.ndarray],
              shape: tuple[int, int], first_row: int = 0) -> sp.csr_array:
    """Triplets given in parts (row numbers from ``first_row``) as one CSR block of
    ``shape``, duplicates summed."""
    r = np.concatenate(rows) - first_row if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    v = np.concatenate(vals) if vals else np.zeros(0)
    a = sp.csr_array((v, (r, c)), shape=shape)
    a.sum_duplicates()
    return a


def _bounds_of(n: int, lo: npt.ArrayLike, hi: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """``lo`` and ``hi`` as ``n`` values each (an error if they do not broadcast)."""
    return (np.broadcast_to(np.asarray(lo, np.float64), (n,)).copy(),
            np.broadcast_to(np.asarray(hi, np.float64), (n,)).copy())


COMPACT_ENTRIES = 2_000_000
"""Matrix entries :class:`LPBuilder` keeps as triplets before it turns them into a CSR block."""


class LPBuilder:
    """Collects columns and rows, then solves with HiGHS.

    Columns are added in blocks (``add_cols`` returns their indices); rows in
    COO blocks (``add_rows``: local row number, column, value, plus bounds
    per row). ``solve`` may be called again after more rows are added: HiGHS
    then starts from the previous basis.
    """

    def __init__(self, *, sense: str = "min") -> None:
        if sense not in ("min", "max"):
            raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
        self.sense = sense
        self._cost: list[FloatArray] = []
        self._lo: list[FloatArray] = []
        self._hi: list[FloatArray] = []
        self._int: list[npt.NDArray[np.bool_]] = []
        self._ncol = 0
        self._r: list[np.ndarray] = []
        self._c: list[np.ndarray] = []
        self._v: list[np.ndarray] = []
        self._pending = 0  # entries in _r, _c, _v (rows from _block_rows on)
        self._blocks: list[sp.csr_array] = []  # rows [0, _block_rows) as CSR blocks
        self._block_rows = 0
        self._rlo: list[FloatArray] = []
        self._unbounding: list[npt.NDArray[np.int64]] = []  # rows left out of the bound
        self._rhi: list[FloatArray] = []
        self._nrow = 0
        self._highs: highspy.Highs | None = None
        self._scale = 1.0  # the objective scale of the kept model
        self._solved_rows = 0
        self._matrix: sp.csr_array | None = None

    # ------------------------------------------------------------------ building

    @property
    def num_cols(self) -> int:
        return self._ncol

    @property
    def num_rows(self) -> int:
        return self._nrow

    def add_cols(
        self, n: int, *, cost: npt.ArrayLike = 0.0, lo: npt.ArrayLike = 0.0,
        hi: npt.ArrayLike = INF, integer: bool = False,
    ) -> npt.NDArray[np.int64]:
        if self._highs is not None:
            raise RuntimeError("columns cannot be added after the first solve")
        n = int(n)
        self._cost.append(np.broadcast_to(np.asarray(cost, np.float64), (n,)).copy())
        self._lo.append(np.broadcast_to(np.asarray(lo, np.float64), (n,)).copy())
        self._hi.append(np.broadcast_to(np.asarray(hi, np.float64), (n,)).copy())
        self._int.append(np.full(n, bool(integer)))
        idx = np.arange(self._ncol, self._ncol + n, dtype=np.int64)
        self._ncol += n
        return idx

    def add_rows(
        self, rows: npt.ArrayLike, cols: npt.ArrayLike, vals: npt.ArrayLike,
        lo: npt.ArrayLike, hi: npt.ArrayLike, *, num: int | None = None, in_bound: bool = True,
    ) -> npt.NDArray[np.int64]:
        """Add ``num`` rows (default ``max(rows) + 1``); ``rows`` are local (0-based).

        ``in_bound=False``: the rows shape the solution but not the bound, which is then
        the safe dual bound of the LP without them (their multipliers set to 0; valid for
        any multipliers). For rows that only make a solution realizable, such as
        finishes-before tails (:mod:`coflowopt.exact._events`).
        """
        r = np.asarray(rows, dtype=np.int64).reshape(-1)
        c = np.asarray(cols, dtype=np.int64).reshape(-1)
        v = np.broadcast_to(np.asarray(vals, dtype=np.float64), r.shape).copy()
        n = int(num) if num is not None else (int(r.max()) + 1 if r.size else 0)
        if n == 0:
            return np.zeros(0, np.int64)
        bounds = _bounds_of(n, lo, hi)  # checked before anything is kept
        self._r.append(r + (self._nrow - self._block_rows))
        self._c.append(c)
        self._v.append(v)
        self._pending += r.size
        idx = self._count_rows(bounds, in_bound)
        if self._pending >= COMPACT_ENTRIES:
            self._compact()
        if self._highs is not None:
            self._pass_rows(sp.csr_array((v, (r, c)), shape=(n, self._ncol)), idx)
        return idx

    def add_sparse_rows(
        self, a: sp.sparray, lo: npt.ArrayLike, hi: npt.ArrayLike, *, in_bound: bool = True,
    ) -> npt.NDArray[np.int64]:
        """Add the rows of the sparse matrix ``a`` (columns: the model's first
        ``a.shape[1]``), as :meth:`add_rows` does with triplets, without converting them.

        The builder keeps a CSR ``a`` as it is, without a copy (the pairwise LP's matrix
        has tens of millions of entries): the caller must not change it afterwards.
        """
        a = sp.csr_array(a)
        n = int(a.shape[0])
        if a.shape[1] > self._ncol:
            raise ValueError(f"a has {a.shape[1]} columns, the model {self._ncol}")
        if n == 0:
            return np.zeros(0, np.int64)
        bounds = _bounds_of(n, lo, hi)
        if a.dtype != np.float64 or not a.has_canonical_format:
            a = sp.csr_array(a, dtype=np.float64, copy=True)
            a.sum_duplicates()
        self._compact()
        self._blocks.append(a)
        self._block_rows += n
        idx = self._count_rows(bounds, in_bound)
        if self._highs is not None:
            self._pass_rows(a, idx)
        return idx

    def _count_rows(self, bounds: tuple[FloatArray, FloatArray],
                    in_bound: bool) -> npt.NDArray[np.int64]:
        """Keep the bounds of new rows whose entries are already kept; their indices."""
        n = bounds[0].size
        self._rlo.append(bounds[0])
        self._rhi.append(bounds[1])
        idx = np.arange(self._nrow, self._nrow + n, dtype=np.int64)
        if not in_bound:
            self._unbounding.append(idx)
        self._nrow += n
        self._matrix = None
        return idx

    def _pass_rows(self, a: sp.csr_array, idx: npt.NDArray[np.int64]) -> None:
        """New rows to the kept HiGHS model (after the first solve)."""
        assert self._highs is not None
        a = sp.csr_array((a.data, a.indices, a.indptr), shape=(a.shape[0], self._ncol))
        a.sum_duplicates()
        self._highs.addRows(
            idx.size, self._rlo[-1], self._rhi[-1], int(a.nnz), a.indptr.astype(np.int32),
            a.indices.astype(np.int32), a.data,
        )

    def set_col_bounds(self, cols: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike) -> None:
        c = np.asarray(cols, dtype=np.int64).reshape(-1)
        lo_a, hi_a = _bounds_of(c.size, lo, hi)
        lo_all, hi_all = self._concat_bounds()
        lo_all[c] = lo_a
        hi_all[c] = hi_a
        self._lo, self._hi = [lo_all], [hi_all]
        if self._highs is not None:
            self._highs.changeColsBounds(c.size, c.astype(np.int32), lo_a, hi_a)

    def _concat_bounds(self) -> tuple[FloatArray, FloatArray]:
        lo = np.concatenate(self._lo) if self._lo else np.zeros(0)
        hi = np.concatenate(self._hi) if self._hi else np.zeros(0)
        return lo, hi

    def _compact(self) -> None:
        """The rows added since the last call as one CSR block (in :meth:`add_rows` once
        ``COMPACT_ENTRIES`` entries wait, so a caller's build loop pays for the conversion
        where it watches its clock, not in :meth:`solve`)."""
        if self._nrow == self._block_rows:
            return
        self._blocks.append(csr_block(self._r, self._c, self._v,
                                      (self._nrow - self._block_rows, self._ncol)))
        self._r, self._c, self._v, self._pending = [], [], [], 0
        self._block_rows = self._nrow

    def arrays(self) -> tuple[FloatArray, sp.csr_array, FloatArray, FloatArray, FloatArray, FloatArray]:
        """``(c, A, row_lo, row_hi, col_lo, col_hi)`` of the model as built so far."""
        c = np.concatenate(self._cost) if self._cost else np.zeros(0)
        if self._matrix is None:
            self._compact()
            self._matrix = stack_rows(self._blocks, self._ncol)
        rlo = np.concatenate(self._rlo) if self._rlo else np.zeros(0)
        rhi = np.concatenate(self._rhi) if self._rhi else np.zeros(0)
        lo, hi = self._concat_bounds()
        return c, self._matrix, rlo, rhi, lo, hi

    # ------------------------------------------------------------------ solving

    def _build(self, options: dict, scale: float = 1.0) -> highspy.Highs:
        c, a, rlo, rhi, lo, hi = self.arrays()
        h = quiet_highs()
        for key, value in options.items():
            h.setOptionValue(key, value)
        lp = highspy.HighsLp()
        csc = sp.csc_array(a)
        lp.num_col_ = int(a.shape[1])
        lp.num_row_ = int(a.shape[0])
        lp.col_cost_ = (-c if self.sense == "max" else c) / scale
        lp.col_lower_ = lo
        lp.col_upper_ = hi
        lp.row_lower_ = rlo
        lp.row_upper_ = rhi
        m = lp.a_matrix_
        m.format_ = highspy.MatrixFormat.kColwise
        m.num_col_ = lp.num_col_
        m.num_row_ = lp.num_row_
        m.start_ = csc.indptr.astype(np.int32)
        m.index_ = csc.indices.astype(np.int32)
        m.value_ = csc.data
        integ = np.concatenate(self._int) if self._int else np.zeros(0, bool)
        if integ.any():
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                for i in integ
            ]
        h.passModel(lp)
        return h

    @property
    def is_mip(self) -> bool:
        return bool(self._int and np.concatenate(self._int).any())

    def solve(
        self, *, time_limit: float | None = None, options: dict | None = None,
        relax: bool = False,
    ) -> LPSolution:
        """Solve (or re-solve after new rows); ``relax`` drops integrality."""
        opts = dict(options or {})
        # HiGHS stops a MIP within an absolute gap of 1e-6 by default, which is the whole
        # objective when weights are tiny: only the relative gap the caller asks for counts
        opts.setdefault("mip_abs_gap", 0.0)
        if time_limit is not None:
            opts["time_limit"] = float(max(time_limit, 1e-3))
        start = now()
        mip = self.is_mip and not relax
        if self._highs is None or relax:
            # a MIP's objective is scaled to a largest cost of 1: HiGHS's MIP tolerances are
            # absolute, so tiny weights (1e-6) would make its "optimal" and its dual bound
            # mean nothing (both were seen 12% above the optimum); an LP's, by a power of two
            # when its largest cost is far from 1 (:func:`lp_cost_scale`), and its bound is
            # recomputed from the data (safe_dual_bound)
            scale = self._cost_scale() if mip else lp_cost_scale(self._cost_scale())
            h = self._build(opts, scale)
            if relax and self.is_mip:
                n = self._ncol
                h.changeColsIntegrality(
                    n, np.arange(n, dtype=np.int32),
                    np.array([highspy.HighsVarType.kContinuous] * n),
                )
            if not relax:
                self._highs, self._scale = h, scale
            if time_limit is not None:  # HiGHS's clock starts at run(): deduct the build
                built = now() - start
                left = time_limit - built
                if left <= 0:
                    # passing the model used up the limit: not run (HiGHS's set-up of a large
                    # model does not look at the clock: 3.9 s on a limit of 1 ms, 680,262
                    # columns)
                    return LPSolution("time_limit", None, math.nan, math.nan, built,
                                      info={"not_run": True})
                h.setOptionValue("time_limit", run_time(left, built))
                if built > left * PRESOLVE_SHARE:
                    # a model this large for the time left: no presolve, which cannot stop
                    # (200 coflows, 2.3 million columns: 4.7 s on a limit of 1.5 s with it,
                    # on time without it)
                    h.setOptionValue("presolve", "off")
        else:
            h, scale = self._highs, self._scale
            if time_limit is not None:
                h.setOptionValue("time_limit", float(max(time_limit, 1e-3)))
        run(h)
        certified = False
        if not mip and _status(h) == "infeasible":
            certified = self._certified(h)
            if not certified:
                self._recheck(h)
                certified = _status(h) == "infeasible" and self._certified(h)
        runtime = now() - start
        return self._collect(h, runtime, mip=mip, scale=scale, certified=certified)

    def _recheck(self, h: highspy.Highs) -> None:
        """Solve an LP called infeasible without proof once more: no presolve, tight tolerances.

        Presolve can find infeasibility without a dual ray, and an LP with a group far
        smaller than the rest can look infeasible at HiGHS's default tolerance (1e-7): five
        such node LPs of the exact search, re-solved at 1e-10, were all feasible. The new
        status (and solution, or ray) is what :meth:`_collect` reads;
        the model's options are restored afterwards.
        """
        keys = ("presolve", "primal_feasibility_tolerance", "dual_feasibility_tolerance")
        saved = {k: h.getOptionValue(k)[1] for k in keys}
        h.setOptionValue("presolve", "off")
        h.setOptionValue("primal_feasibility_tolerance", RECHECK_TOL)
        h.setOptionValue("dual_feasibility_tolerance", RECHECK_TOL)
        try:
            run(h)
        finally:
            for k, v in saved.items():
                h.setOptionValue(k, v)

    def _certified(self, h: highspy.Highs) -> bool:
        """Whether HiGHS's dual ray proves this LP infeasible (:func:`certifies_infeasible`).

        Rows added with ``in_bound=False`` take no part in the proof.
        """
        _, has_ray, ray = h.getDualRay()  # type: ignore[attr-defined]
        if not has_ray:
            return False
        _, a, rlo, rhi, lo, hi = self.arrays()
        y = np.array(ray, dtype=np.float64)
        if self._unbounding:  # the proof must hold for the LP without them, as the bound does
            y[np.concatenate(self._unbounding)] = 0.0
        return certifies_infeasible(a, rlo, rhi, lo, hi, y)

    def _cost_scale(self) -> float:
        c = np.concatenate(self._cost) if self._cost else np.zeros(0)
        top = float(np.abs(c).max(initial=0.0))
        return top if top > 0 and math.isfinite(top) else 1.0

    def _collect(self, h: highspy.Highs, runtime: float, *, mip: bool, scale: float = 1.0,
                 certified: bool = False) -> LPSolution:
        name = h.modelStatusToString(h.getModelStatus())
        status = _status(h)
        info = h.getInfo()
        sol = h.getSolution()
        sign = -1.0 if self.sense == "max" else 1.0
        x = np.array(sol.col_value, dtype=np.float64) if sol.value_valid else None
        if mip:
            has_x = x is not None and info.primal_solution_status == 2  # kSolutionStatusFeasible
            obj = sign * scale * float(info.objective_function_value) if has_x else math.nan
            db = float(info.mip_dual_bound)
            bound = sign * scale * db if math.isfinite(db) else math.nan
            if status == "optimal" and math.isfinite(obj):
                bound = obj if not math.isfinite(bound) else bound
            return LPSolution(status, x if has_x else None, obj, bound, runtime, None,
                              {"highs_status": name, "mip_gap": float(info.mip_gap),
                               "nodes": int(info.mip_node_count)})
        if status == "infeasible":
            return LPSolution(status, None, math.nan, math.nan, runtime, None,
                              {"highs_status": name, "certified": certified})
        if status != "optimal":
            return LPSolution(status, None, math.nan, math.nan, runtime, None,
                              {"highs_status": name})
        obj = sign * scale * float(info.objective_function_value)
        y = np.array(sol.row_dual, dtype=np.float64) * scale if sol.dual_valid else None
        bound = math.nan if y is None else self.bound_at(y)
        return LPSolution(status, x, obj, bound, runtime, y, {"highs_status": name})

    def bound_at(self, y: npt.ArrayLike) -> float:
        """The LP's safe dual bound at the row multipliers ``y`` (any ``y``, one per row:
        weak duality makes it a bound on the LP's optimum, hence on every problem the LP
        relaxes; at the optimum's duals it is the optimum, up to rounding)."""
        yb = np.array(y, dtype=np.float64, copy=True).reshape(-1)
        if yb.size != self.num_rows:
            raise ValueError(f"{yb.size} multipliers for {self.num_rows} rows")
        if self._unbounding:
            yb[np.concatenate(self._unbounding)] = 0.0
        c, a, rlo, rhi, lo, hi = self.arrays()
        if self.sense == "max":  # max c x = -min (-c) x: bound the min problem, flip the sign
            return -safe_dual_bound(-c, a, rlo, rhi, lo, hi, yb)
        return safe_dual_bound(c, a, rlo, rhi, lo, hi, yb)
