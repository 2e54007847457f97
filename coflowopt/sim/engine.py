"""Exact event-driven fluid simulation of coflow scheduling policies.

The engine moves time from event to event; between two events every flow's
rate is constant, so the data a flow receives is ``rate * duration`` and the
times at which flows complete or a coflow's bytes cross a threshold follow in
closed form. There is no time step. Events are

- *admissions*: a flow becomes available (its coflow's release plus its
  delay, rounded up to the next multiple of ``batch_interval`` when given,
  and held back by dependencies; see below);
- *flow completions*, and the *coflow completions* they imply;
- *wake-ups* a policy asks for: queue-threshold crossings it computed from the
  current rates, or timers (Varys' starvation avoidance).

At each event the engine asks the policy for new rates when the policy wants
to be asked (every policy on admissions, coflow completions and its own
wake-ups; policies that react to single flows also on flow completions). A
policy returns rates, or a priority order for which the engine computes the
greedy order-preserving rates (:func:`coflowopt.alloc.greedy`) itself, again
after every flow completion. For policies that ignore single flow
completions the engine processes all of them up to the next decision in one
batch. The policy sees only what its information model allows
(:class:`SimView`); with ``check=True`` the engine verifies that the rates
respect every link's capacity and that only admitted, unfinished flows are
served, and raises :class:`PolicyError` otherwise.

Capacity model: links plus routes (:meth:`coflowopt.Fabric.routes`). The
engine never assumes the big switch: link loads are sums over each flow's
route. A fabric whose every route crosses exactly two links gets a faster
code path for those sums, with the same results.

Dependencies: a coflow with ``starts_after`` predecessors has none of its
flows admitted before all of them completed. A coflow with
``finishes_before`` predecessors may run while they run, but its *anchor*
flow (its smallest flow, lowest index on ties) is admitted only after they
all completed, so it cannot complete before them.

Cost: an event costs the engine time proportional to the number of flows
whose rate changes or that complete at it, plus ``O(F / 32 + K + L)`` for
the next-event search over blocks of 32 flows with exact per-block minima;
flows that wait or idle cost the engine nothing. The policy's own work comes
on top (``models/simulator.md`` lists it per policy; several policies look at
all admitted flows at each decision).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._files import finite_number, natural_number
from .._jit import JIT_MODES, for_instance
from .._text import plural
from ..alloc import greedy as alloc_greedy
from ..errors import CoflowoptError, InstanceError
from ..instance import Instance
from ..kernels.rates import csr_link_sum, csr_rows
from ..schedule import Schedule, TiedPieces
from .kernels import state as ks
from .kernels.greedy import (
    greedy_csr_state,
    greedy_csr_stretch,
    greedy_uniform_state,
    greedy_uniform_stretch,
)

if TYPE_CHECKING:  # pragma: no cover
    from .policies._base import Policy

__all__ = [
    "Allocation",
    "Engine",
    "InformationError",
    "PolicyError",
    "RunData",
    "SimView",
    "SimulationError",
    "Stretch",
    "UnresolvableError",
    "check_time_parameter",
    "time_resolution",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_TOL = 1e-12
"""Relative tolerance on times: events closer than this are simultaneous."""
_CAP_TOL = 1e-9
"""Relative slack with which the engine accepts link loads above capacity."""
_BLOCK_BITS = 5
_BLOCK = 1 << _BLOCK_BITS

_EMPTY_I = np.zeros(0, np.int64)
_EMPTY_F = np.zeros(0)


class SimulationError(CoflowoptError):
    """A simulation cannot run or cannot finish (bad options, a starving policy)."""


class UnresolvableError(SimulationError, InstanceError):
    """The instance's transfers are too short for float64 at the times they run (an error of
    the instance: its release times or its sizes and capacities need rescaling)."""


class PolicyError(SimulationError):
    """A policy returned rates the engine cannot accept."""


class InformationError(PolicyError):
    """A policy asked for information its information model does not give it."""


@dataclass(frozen=True, slots=True)
class Allocation:
    """What a policy returns at a decision.

    Either rates: ``flows`` and ``rates`` give new rates for some flows
    (others keep theirs; completed flows drop to 0 by themselves). Or
    priorities: ``order`` lists admitted flows from highest to lowest
    priority, and the engine gives them the greedy order-preserving rates
    (:func:`coflowopt.alloc.greedy`) now and again after every flow
    completion until the next decision; admitted flows not listed get 0.
    ``wake`` asks to be called again at that time even if nothing else
    happens (``inf``: no).
    """

    flows: IntArray = field(default_factory=lambda: _EMPTY_I)
    rates: FloatArray = field(default_factory=lambda: _EMPTY_F)
    wake: float = math.inf
    order: IntArray | None = None
    stretch: Stretch | None = None
    """A compiled rule that runs the listed flows by itself until the next decision."""


@dataclass(frozen=True, slots=True)
class Stretch:
    """A compiled allocation rule the engine runs through flow completions.

    ``kernel`` follows the contract of :mod:`coflowopt.sim.kernels`; it is
    called as ``kernel(t0, t_stop, tol, flows, la, lb, L, cap, size, sent,
    fco, cf_left, start, record, max_pieces, rate_out, done_f, done_t, pc_f,
    pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x, *args)`` and returns ``(t, thr, n_done,
    n_pieces, n_levels, n_events, reason)``. ``flows`` are the admitted flows it governs (for a
    priority rule, in priority order); other admitted flows get rate 0 until
    the next decision. The engine hands control back to the policy at
    admissions (but those the kernel makes itself, ``admits``), wake-ups and
    coflow completions.
    """

    kernel: Callable[..., tuple[float, float, int, int, int, int, int]]
    flows: IntArray
    args: tuple[Any, ...] = ()
    admits: IntArray = field(default_factory=lambda: _EMPTY_I)
    """Coflows not yet admitted whose admission the kernel makes itself (a prefix of
    :meth:`SimView.upcoming`, in that order; their flows are among ``flows``). The
    kernel admits each, with all its flows, at the first event whose time plus the
    engine's tolerance reaches its admission time, after that event's completions, as
    the engine would, and continues; it returns at ``t_stop``, now the first admission
    it does not make."""
    admitted_at: FloatArray = field(default_factory=lambda: _EMPTY_F)
    """Filled in by the kernel: when it admitted each of ``admits`` (``inf``: not yet);
    the admitted ones are a prefix."""
    tied: bool = False
    """The kernel records tied pieces (:class:`coflowopt.schedule.TiedPieces`): its
    pieces are ``(flow, start, end, weight)``, served at the weight times the smaller
    level of the flow's two links, whose changes it logs as ``(link, time, level)``."""
    series: IntArray | None = None
    """With ``tied``: each flow's level series instead of its two links (a tied piece
    then runs at the weight times its series' level; the kernel logs ``(series, time,
    level)``, at most one change per series with flows per event, and returns before its
    log could overflow with as many more)."""


@dataclass(slots=True)
class RunData:
    """Raw outcome of one run, turned into a result by :mod:`coflowopt.sim.results`."""

    completion: FloatArray
    start: FloatArray
    admitted: FloatArray
    flow_completion: FloatArray
    schedule: Schedule | None
    events: int
    decisions: int
    runtime: float
    info: dict[str, Any]


MAX_PIECES = 100_000_000
"""The most rows a run records by default: pieces, tied pieces and level changes (32
bytes each, 3 GiB; the process peaks near twice that: drf's 95 million pieces on the
Facebook trace, 6.1 GiB of resident memory, measured). Per-flow policies on the whole
trace can produce billions (Aalo with weighted sharing changes 1.5 billion rates); the
fair-sharing kernels record tied pieces instead (``fair``: 232 million pieces in 706,397
tied pieces and 1.5 million level changes)."""

LEVEL_LOG = 64
"""Events whose level changes (at most one per link each) a stretch's log holds: a kernel
that fills it returns, and the engine runs it on (as with a full record buffer)."""

PIECE_BYTES = 32
"""Bytes a recorded row takes (a piece: flow index, start, end, rate)."""


def _ceil_to(times: FloatArray, step: float | None) -> FloatArray:
    """Round up to the next multiple of ``step`` (times already on a multiple stay).

    A time within the engine's relative tolerance past a multiple counts as on it
    (rounding in ``q * step``) and is admitted at once, never before itself: a
    release of 0.30000000000000004 with a 0.1 interval starts then, not at 0.4.
    The tolerance is relative to the time, not to ``step`` (a slack of ``1e-9 *
    step`` admitted every release below ``1e-9 * step`` at once: a 1e10 s
    interval did no batching at all).
    """
    if step is None:
        return times
    up = np.ceil(times / step)
    prev = (up - 1.0) * step
    on_prev = times - prev <= _TOL * np.maximum(1.0, np.abs(times))
    return np.maximum(np.where(on_prev, np.maximum(prev, times), up * step), times)


def time_resolution(t: float) -> float:
    """The shortest time step the engine can take at time ``t``: two of its relative time
    tolerances (a wake-up closer than this is moved to it). A time parameter (a batch
    interval, a policy's period) no longer than this cannot be simulated at ``t``."""
    return 2 * _TOL * max(1.0, abs(t))


def check_time_parameter(value: float, name: str, t: float) -> None:
    """Raise a :class:`SimulationError` naming ``name`` if ``value`` is below the engine's
    :func:`time_resolution` at time ``t``."""
    res = time_resolution(t)
    if value <= res:
        raise SimulationError(
            f"{name} {value:.6g} is below the engine's time resolution at time {t:.6g} "
            f"({res:.3g}, {2 * _TOL:g} of the time), so it cannot be simulated there; use a "
            "longer one or shift the release times toward 0"
        )


RESOLUTION = 1e-15
"""The shortest flow the engine accepts, relative to the time it is admitted: a flow whose
isolated transfer time (size over its slowest link) is below ``RESOLUTION`` times its
admission time is refused (checked before the run at the release times, and at each
admission). float64 keeps about 4.5 steps for such a flow (flows of 21 steps were still
feasible in fuzzing, to ``check_feasible``'s rounding slack); a
flow of 0.0084 s released at 1e17 (where float64 steps by 16 s) finished "at" its
release with nothing sent, and its schedule failed ``check_feasible``. Only the
admission time is known before the run (a policy may hold a flow longer, and a flow
may run slower than alone, over a longer time: that of a test's 1e-7-byte flow
paced by MADD beside a 1e9-byte one is 1e10)."""


MIN_TIME = 1e-9
"""The shortest time scale the engine accepts: an instance whose every flow takes less than
this alone (in its time units) is refused. Below time 1 the engine's time tolerance is an
absolute ``1e-12`` (``_TOL * max(1, |t|)``), so its times are right to about ``1e-12``,
not to a share of them: three coflows of 1e-12 units released 1e-12 apart were simulated as
if the first came with the second (29% late), and on instances whose flows take 1e-8 units
completions came out up to 5e-5 (relative) off. Choose units in which the transfers take
far longer than 1e-12 (seconds with sizes in bytes and capacities in bytes per second: a
1 KB flow at 10 Gbit/s takes 8e-7). A tiny flow beside longer ones is accepted: its
error is the same 1e-12, small beside the others' times."""


class Engine:
    """One simulation of one policy on one instance. Use :func:`coflowopt.sim.simulate`."""

    def __init__(
        self,
        instance: Instance,
        policy: Policy,
        *,
        batch_interval: float | None = None,
        record: bool = True,
        progress: Callable[[float], None] | None = None,
        check: bool = True,
        compiled: bool = True,
        max_pieces: int = MAX_PIECES,
        jit: str | None = None,
    ) -> None:
        if jit is not None and jit not in JIT_MODES:
            raise SimulationError(f"jit must be one of {', '.join(JIT_MODES)}, got {jit!r}")
        if batch_interval is not None and not (finite_number(batch_interval) and batch_interval > 0):
            raise SimulationError(f"batch interval must be a finite number > 0, got {batch_interval!r}")
        if not natural_number(max_pieces):
            raise SimulationError(f"max_pieces must be an integer >= 0, got {max_pieces!r}")
        self.instance = inst = instance
        self.policy = policy
        self.batch_interval = batch_interval
        self.record = record
        self.max_pieces = max_pieces
        self.unrecorded: str | None = None
        """Why the schedule was not recorded although asked for (too many pieces)."""
        self.progress = progress
        self.check = check
        self.compiled = compiled
        self.jit = jit
        F, K = inst.num_flows, inst.num_coflows
        self.F, self.K = F, K
        fab = inst.fabric
        self.cap = fab.capacity
        self.L = L = fab.num_links
        self.routes = A = inst.routes
        # the incidence as the kernels take it: rows of it by index, without SciPy
        self.route_csr = (A.indptr.astype(np.int64, copy=False), A.indices.astype(np.int64, copy=False),
                          np.ascontiguousarray(A.data, dtype=np.float64))
        counts = np.diff(A.indptr)
        self.two_link = bool(F == 0 or (np.all(counts == 2) and np.all(A.data == 1.0)))
        if self.two_link:
            pairs = A.indices.reshape(-1, 2).astype(np.int64) if F else np.zeros((0, 2), np.int64)
            self.link_a = np.ascontiguousarray(pairs[:, 0])
            self.link_b = np.ascontiguousarray(pairs[:, 1])
        else:  # what the stretch contract passes to kernels that read the routes instead
            self.link_a = self.link_b = np.zeros(0, np.int64)
        # every first link below every second link (the big switch): a per-link sum
        # over a set of flows adds each link's terms in flow order however it is taken
        self.links_apart = bool(
            self.two_link and (F == 0 or int(self.link_a.max()) < int(self.link_b.min()))
        )
        self.size = inst.flow_size
        self.fco = inst.flow_coflow
        self.ptr = inst.ptr
        nb = max((F + _BLOCK - 1) >> _BLOCK_BITS, 1)
        self.nb = nb
        # per-flow state; rates are constant since tsync, sent is the amount up to tsync
        self.status = np.zeros(F, np.int8)  # 0 waiting, 1 admitted, 2 done
        self.rate = np.zeros(F)
        self.sent = np.zeros(F)
        self.tsync = np.zeros(F)
        self._slot = np.zeros(F, np.int64)  # scratch of _repeats
        self._rate_buf = np.zeros(F)  # rates a stretch kernel reports (zero between stretches)
        self._cf_acc = np.zeros(K)  # scratch of the compiled apply (zero between calls)
        self._cf_mark = np.zeros(K, bool)
        self.fin_pad = np.full(nb << _BLOCK_BITS, np.inf)
        self.fin = self.fin_pad[:F]
        self.fin_blocks = self.fin_pad.reshape(nb, _BLOCK)
        self.bmin = np.full(nb, np.inf)
        self.flow_done_at = np.full(F, np.inf)
        self.usage = np.zeros(L)
        # per-coflow state
        self.cf_left = np.diff(inst.ptr).astype(np.int64)  # flows not completed
        self.cf_active = np.zeros(K, np.int64)  # admitted and not completed
        self.cf_sent = np.zeros(K)
        self.cf_rate = np.zeros(K)
        self.cf_t = 0.0
        self.completion = np.full(K, np.inf)
        # when each coflow would complete at the current rates (inf: a flow waits), and
        # the last completion among its flows that run; used to skip flow-by-flow events
        # for policies that only react to coflows
        self.cf_finish = np.full(K, np.inf)
        self.cf_lastrun = np.full(K, -np.inf)
        self.batch = False
        self.start = np.full(K, np.inf)
        self.admitted = np.full(K, np.inf)
        # position of each coflow in a dependency-respecting order (FIFO tie-break of Aalo, MCS)
        self.topo_rank = np.empty(K, np.int64)
        self.topo_rank[instance.topological_order] = np.arange(K)
        self.topo_rank.setflags(write=False)
        self.dag = _dags(instance)
        self.active_coflows: list[int] = []
        # recording: pieces, tied pieces (flow, start, end, weight, series a, b), level changes
        self._pieces: list[tuple[np.ndarray, ...]] = []
        self._tied: list[tuple[np.ndarray, ...]] = []
        self._levels: list[tuple[np.ndarray, ...]] = []
        self._npieces = 0
        self.t = 0.0
        self.events = 0
        self.decisions = 0
        self._prepare_admissions()
        self._check_resolution()
        self._active_cache: IntArray | None = None
        # what happened since the last decision
        self.new_coflows: list[int] = []
        self.new_flows: list[IntArray] = []
        self.done_flows: list[IntArray] = []
        self.done_coflows: list[int] = []
        self.woke = False
        self.stalled = False
        self.prio: IntArray | None = None
        self.kernel: Callable[..., Any] | None = None
        """The compiled greedy stretch a priority order runs on, if any."""
        self.kernel_args: tuple[Any, ...] = ()
        self.stretch: Stretch | None = None
        self.stretch_thr = 0.0
        self._last_report = 0.0

    def _check_resolution(self) -> None:
        """Refuse flows too short for float64 at the times they run (:data:`RESOLUTION`)."""
        self.took = np.zeros(0)
        if not self.F:
            return
        if self.batch_interval is not None:  # else every release would count as on a boundary
            last = float(self.instance.flow_release.max())
            check_time_parameter(self.batch_interval, "batch interval", last)
        cap = self.cap
        A = self.routes
        slowest = np.minimum.reduceat(cap[A.indices], A.indptr[:-1]) if A.nnz else cap[:0]
        with np.errstate(divide="ignore"):
            self.took = self.size / slowest  # each flow's isolated transfer time
        longest = float(self.took.max())
        if longest < MIN_TIME:
            raise UnresolvableError(
                f"the longest flow takes {longest:.3g} time units alone, shorter than the "
                f"engine resolves ({MIN_TIME:g}: below time 1 it steps by 1e-12); measure time "
                "in a smaller unit: divide the capacities, and multiply the release times and "
                "deadlines, by the same factor")
        self._refuse_unresolvable(np.arange(self.F), _ceil_to(self.instance.flow_release,
                                                              self.batch_interval))

    def _refuse_unresolvable(self, flows: IntArray, due: FloatArray | float) -> None:
        """Raise for the first of ``flows`` (admitted at ``due``) below :data:`RESOLUTION`
        (checked before the run at the release times and again at each admission: a
        dependency's anchor is admitted only when its predecessors end)."""
        took = self.took[flows]
        due = np.broadcast_to(np.asarray(due, float), took.shape)
        bad = np.flatnonzero(took < RESOLUTION * np.abs(due))
        if bad.size:
            i = int(bad[np.argmax(RESOLUTION * np.abs(due[bad]) / took[bad])])
            f, at = int(flows[i]), float(due[i])
            k = int(self.fco[f])
            raise UnresolvableError(
                f"flow {f - int(self.ptr[k])} of coflow '{self.instance.ids[k]}' takes "
                f"{float(took[i]):.3g} time units alone, too short to resolve at its admission "
                f"time {at:.3g} (where float64 steps by {np.spacing(at):.3g}; at least "
                f"{RESOLUTION:g} of the time is needed); shift the release times toward 0 (a "
                "change of units does not help: the ratio is what float64 cannot hold)")

    def _recorded_schedule(self) -> Schedule:
        """The recorded pieces as one schedule, a column at a time, each column's chunks
        released as it is joined: at most about 40 bytes per piece at once (the chunks,
        their joined copy and the schedule's own copy took 96; on the Facebook trace drf's
        95 million pieces peaked at 9 GiB). Tied pieces run on their flows' links' levels."""
        tied = None
        if self._tied:
            f, t0, t1, w, a, b = (np.concatenate(c) for c in zip(*self._tied, strict=True))
            self._tied.clear()
            # (route classes can log tens of millions of level changes)
            tied = TiedPieces(f, t0, t1, w, a, b, *_columns(self._levels, 3))
        f, t0, t1, r = _columns(self._pieces, 4)
        return Schedule._adopt(f, t0, t1, r, tied)

    def _check_recorded(self, schedule: Schedule) -> None:
        """Raise if a flow's recorded pieces fall short of its size beyond float64's resolution.

        A flow held back until a time where its (last) transfer is shorter than the float
        spacing gets pieces of no length: the run completes it, but its schedule cannot say
        so. The resolution check (:data:`RESOLUTION`) sees only admission times; this one
        sees the times the flows ran (it needs the recorded schedule).
        """
        if not self.F:
            return
        # the slack check_feasible grants (its default tolerance and float64's resolution)
        slack = 1e-6 * self.size + schedule.resolution(self.F, float(self.cap.max(initial=0.0)))
        got = schedule.served(self.F)  # (after: tied pieces' sums are taken once, for both)
        bad = np.flatnonzero(self.size - got > slack)
        if bad.size:
            f = int(bad[np.argmax((self.size - got)[bad] / self.size[bad])])
            k = int(self.fco[f])
            t = float(self.flow_done_at[f])
            raise UnresolvableError(
                f"flow {f - int(self.ptr[k])} of coflow '{self.instance.ids[k]}' ran at time "
                f"{t:.3g}, where its transfer ({float(self.took[f]):.3g} time units alone) is "
                f"too short for float64 (spacing {np.spacing(abs(t)):.3g}): its schedule records "
                f"{float(got[f]):.3g} of its {float(self.size[f]):.3g}. Rescaling does not help "
                "(the ratio of its time to the schedule's is what float64 cannot hold): simulate "
                "without recording the schedule (no --schedule; record=False), or leave out or "
                "enlarge flows this short")

    # ------------------------------------------------------------------ admissions

    def _prepare_admissions(self) -> None:
        inst = self.instance
        F, K = self.F, self.K
        held = np.zeros(F, bool)
        self.anchor = np.full(K, -1, np.int64)
        self.wait_sa = [set(map(int, inst.starts_after[k])) for k in range(K)]
        self.wait_fb = [set(map(int, inst.finishes_before[k])) for k in range(K)]
        self.succ: list[list[int]] = [[] for _ in range(K)]
        for k in range(K):
            for j in self.wait_sa[k] | self.wait_fb[k]:
                self.succ[j].append(k)
            sl = inst.flows_of(k)
            if self.wait_sa[k]:
                held[sl] = True
            if self.wait_fb[k]:
                # the smallest flow waits for the finishes-before predecessors
                a = sl.start + int(np.argmin(inst.flow_size[sl]))
                self.anchor[k] = a
                held[a] = True
        self.has_succ = np.array([bool(s) for s in self.succ], bool).reshape(K)
        self.sa_released = np.array([not s for s in self.wait_sa], bool)
        self.anchor_released = self.anchor < 0
        free = np.flatnonzero(~held)
        times = _ceil_to(inst.flow_release[free], self.batch_interval)
        order = np.argsort(times, kind="stable")
        self.adm_flows = free[order]
        self.adm_times = times[order]
        # coflows admitted whole, all flows at one time (one contiguous block of the
        # admission list: times sort stably and a coflow's flows are consecutive)
        first = np.full(K, np.inf)
        last = np.full(K, -np.inf)
        if free.size:
            np.minimum.at(first, self.fco[free], times)
            np.maximum.at(last, self.fco[free], times)
        n_free = np.bincount(self.fco[free], minlength=K)
        self.adm_whole = (n_free == np.diff(self.ptr)) & (first == last) & (n_free > 0)
        self.adm_pos = 0
        self.adm_heap: list[tuple[float, int, IntArray]] = []
        self._adm_seq = 0

    def _next_admission(self) -> float:
        t = self.adm_times[self.adm_pos] if self.adm_pos < self.adm_times.size else math.inf
        if self.adm_heap and self.adm_heap[0][0] < t:
            t = self.adm_heap[0][0]
        return float(t)

    def _schedule_admission(self, flows: IntArray, now: float) -> None:
        if flows.size == 0:
            return
        avail = np.maximum(self.instance.flow_release[flows], now)
        times = _ceil_to(avail, self.batch_interval)
        for t in np.unique(times):
            self._adm_seq += 1
            heapq.heappush(self.adm_heap, (float(t), self._adm_seq, flows[times == t]))

    def upcoming(self, max_coflows: int, max_flows: int) -> tuple[IntArray, FloatArray]:
        """The next coflows to be admitted whole and their times (see :meth:`SimView.upcoming`)."""
        out: list[int] = []
        when: list[float] = []
        j = self.adm_pos
        n = 0
        t_prev = self.t
        k_prev = -1
        heap_t = self.adm_heap[0][0] if self.adm_heap else math.inf
        while j < self.adm_flows.size and len(out) < max_coflows:
            k = int(self.fco[self.adm_flows[j]])
            nk = int(self.ptr[k + 1] - self.ptr[k])
            t = float(self.adm_times[j])
            if not self.adm_whole[k] or t >= heap_t or n + nk > max_flows:
                break  # part of a coflow, or another admission first, or enough
            # Admitted at one event, coflows queue FIFO by (time admitted, dependency rank,
            # index): this list's order for equal times only if the ranks increase; a time
            # the engine's tolerance may merge with the one before ends the list
            if t == t_prev and k_prev >= 0:
                if self.topo_rank[k] < self.topo_rank[k_prev]:
                    break
            elif t <= t_prev + 4 * _TOL * max(1.0, abs(t)):
                break
            out.append(k)
            when.append(t)
            n += nk
            j += nk
            t_prev = t
            k_prev = k
        return np.array(out, np.int64), np.array(when, float)

    def _admit_absorbed(self, spec: Stretch) -> None:
        """Book the admissions a stretch kernel made (``spec.admits``), each at its time."""
        # (a stretch that admitted anything ends with a decision: it never runs again)
        for k, t in zip(spec.admits.tolist(), spec.admitted_at.tolist(), strict=True):
            if t == math.inf:
                break
            lo, hi = int(self.ptr[k]), int(self.ptr[k + 1])
            j = self.adm_pos
            if not (self.adm_whole[k] and j + hi - lo <= self.adm_flows.size
                    and self.adm_flows[j] == lo and self.adm_flows[j + hi - lo - 1] == hi - 1):
                raise PolicyError(
                    f"policy '{self.policy.name}' admitted coflow {k} out of the admission order"
                )
            self.adm_pos = j + hi - lo
            flows = np.arange(lo, hi, dtype=np.int64)
            self.status[lo:hi] = 1
            self.tsync[lo:hi] = t
            self.admitted[k] = t
            self.cf_active[k] += hi - lo
            self.cf_finish[k] = math.inf
            self.active_coflows.append(k)
            self.new_coflows.append(k)
            self.new_flows.append(flows)
            self._active_cache = None

    def _admit(self, thr: float) -> None:
        """Admit every flow due by ``thr`` (the event's time plus the tolerance).

        The event happens at the latest of the times it takes in: a flow due within
        the tolerance after the clock moves the clock to its admission time, so no
        flow starts (and no coflow finishes) before its release. Nothing completes
        in between: the event already took in every completion due by ``thr``.
        """
        parts = []
        latest = self.t
        j = self.adm_pos
        if j < self.adm_times.size and self.adm_times[j] <= thr:
            e = int(np.searchsorted(self.adm_times, thr, side="right"))
            parts.append(self.adm_flows[j:e])
            latest = max(latest, float(self.adm_times[e - 1]))
            self.adm_pos = e
        while self.adm_heap and self.adm_heap[0][0] <= thr:
            due, _, fl = heapq.heappop(self.adm_heap)
            parts.append(fl)
            latest = max(latest, due)
        if not parts:
            return
        flows = parts[0] if len(parts) == 1 else np.concatenate(parts)
        self.t = t = latest
        self._refuse_unresolvable(flows, t)
        self.status[flows] = 1
        self.tsync[flows] = t
        ks = self.fco[flows]
        counts = np.bincount(ks, minlength=self.K)
        touched = np.flatnonzero(counts)
        fresh = touched[self.admitted[touched] == np.inf]
        self.admitted[fresh] = t
        self.cf_active += counts
        self.cf_finish[touched] = np.inf
        if fresh.size:
            self.active_coflows.extend(int(k) for k in fresh)
            self.new_coflows.extend(int(k) for k in fresh)
        self.new_flows.append(flows)
        self._active_cache = None

    def _release_dependents(self, j: int) -> None:
        for k in self.succ[j]:
            self.wait_sa[k].discard(j)
            self.wait_fb[k].discard(j)
            lo, hi = int(self.ptr[k]), int(self.ptr[k + 1])
            a = int(self.anchor[k])
            if not self.sa_released[k]:
                if self.wait_sa[k]:
                    continue
                self.sa_released[k] = True
                flows = np.arange(lo, hi, dtype=np.int64)
                if a >= 0:
                    flows = flows[flows != a]
                self._schedule_admission(flows, self.t)
            if a >= 0 and not self.anchor_released[k] and not self.wait_fb[k]:
                self.anchor_released[k] = True
                self._schedule_admission(np.array([a], np.int64), self.t)

    # ------------------------------------------------------------------ rates

    def _sync_coflows(self) -> None:
        dt = self.t - self.cf_t
        if dt > 0:
            self.cf_sent += self.cf_rate * dt
            self.cf_t = self.t

    def _set_fin(self, flows: IntArray, new: FloatArray) -> None:
        """Set predicted completion times and keep the per-block minima exact."""
        old = self.fin[flows]
        b = flows >> _BLOCK_BITS
        # a block's minimum can only rise if the flow holding it got later
        rise = (new > old) & (old <= self.bmin[b])
        self.fin[flows] = new
        np.minimum.at(self.bmin, b, new)
        if rise.any():
            br = b[rise]
            if br.size > 64:
                mark = np.zeros(self.nb, bool)
                mark[br] = True
                bs = np.flatnonzero(mark)
            else:
                bs = np.unique(br)
            self.bmin[bs] = self.fin_blocks[bs].min(axis=1)

    def _link_sum(self, flows: IntArray, values: FloatArray) -> FloatArray:
        if self.two_link:
            L = self.L
            return np.bincount(self.link_a[flows], values, minlength=L).astype(float) + np.bincount(
                self.link_b[flows], values, minlength=L
            )
        return csr_link_sum(*self.route_csr, np.ascontiguousarray(flows),
                            np.ascontiguousarray(values), self.L)

    def _record(self, flows: IntArray, t0: FloatArray, t1: float | FloatArray, r: FloatArray) -> None:
        keep = (r > 0) & (t1 > t0)
        if keep.all():
            self._keep((flows, t0, np.broadcast_to(t1, flows.shape).copy(), r))
        elif keep.any():
            t1a = np.broadcast_to(t1, flows.shape)
            self._keep((flows[keep], t0[keep], t1a[keep].copy(), r[keep]))

    def _keep(self, piece: tuple[np.ndarray, ...],
              into: list[tuple[np.ndarray, ...]] | None = None) -> None:
        """Store recorded rows (pieces, or ``into`` another list: tied pieces, level
        changes); past ``max_pieces`` rows stop recording (and drop what was kept) instead
        of running out of memory: the run goes on without a schedule."""
        self._npieces += piece[0].size
        if self._npieces <= self.max_pieces:
            (self._pieces if into is None else into).append(piece)
            return
        self.record = False
        for rows in (self._pieces, self._tied, self._levels):
            rows.clear()
        self.unrecorded = (
            "the schedule was not recorded: it has more than "
            f"{plural(self.max_pieces, 'piece', thousands=True)} "
            f"(about {PIECE_BYTES * self.max_pieces / 2**30:.1f} GiB; pass a larger max_pieces, "
            "or record=False)")

    def apply(self, flows: npt.ArrayLike, rates: npt.ArrayLike) -> None:
        """Set new rates for some admitted flows at the current time."""
        f = np.asarray(flows, dtype=np.int64).reshape(-1)
        r = np.asarray(rates, dtype=np.float64).reshape(-1)
        if f.size != r.size:
            raise PolicyError(
                f"policy '{self.policy.name}' gave {f.size} flows but {r.size} rates"
            )
        if f.size == 0:
            return
        if self.check:
            self._validate(f, r)
        if self.compiled:
            self._apply_compiled(f, r)
            return
        cur = self.rate[f]
        ch = r != cur
        if not ch.all():
            f, r, cur = f[ch], r[ch], cur[ch]
            if f.size == 0:
                return
        t = self.t
        t0 = self.tsync[f]
        if self.record:
            self._record(f, t0, t, cur)
        self._sync_coflows()
        self.sent[f] += cur * (t - t0)
        self.tsync[f] = t
        delta = r - cur
        self.cf_rate += np.bincount(self.fco[f], delta, minlength=self.K)
        self.rate[f] = r
        pos = r > 0
        with np.errstate(divide="ignore"):
            left = np.maximum(self.size[f] - self.sent[f], 0.0)
            # at rate 0 a flow with nothing left (its last bytes ran at its last rate) is
            # done now: a policy that shrinks a rate with what is left (MADD re-planned under
            # a background it cannot see) otherwise left it active forever
            self._set_fin(f, np.where(pos, t + left / np.where(pos, r, 1.0),
                                      np.where(left > 0, np.inf, t)))
        if self.check:
            self.usage += self._link_sum(f, delta)
            self._check_usage()
        if pos.any():
            ks = self.fco[f[pos]]
            new = ks[self.start[ks] == np.inf]
            if new.size:
                self.start[new] = t
        if self.batch:
            mark = np.zeros(self.K, bool)
            mark[self.fco[f]] = True
            self._refresh_finish(np.flatnonzero(mark))

    def _apply_compiled(self, f: IntArray, r: FloatArray) -> None:
        """:meth:`apply` with the per-flow work in one compiled pass (:mod:`.kernels.state`)."""
        if not ks.any_change(f, r, self.rate):
            return
        t = self.t
        if self.record or self.check:
            cur = self.rate[f]
            ch = r != cur
            if self.record:
                self._record(f[ch], self.tsync[f[ch]], t, cur[ch])
            if self.check:
                self.usage += self._link_sum(f[ch], r[ch] - cur[ch])
        self._sync_coflows()
        touched = ks.set_rates(
            f, r, t, self.rate, self.sent, self.tsync, self.size, self.fco, self.cf_rate,
            self.start, self.fin_pad, self.bmin, _BLOCK_BITS, self._cf_acc, self._cf_mark,
        )
        if self.check:
            self._check_usage()
        if self.batch:
            ks.refresh_finish(
                touched, self.ptr, self.status, self.fin, self.rate, self.cf_active,
                self.cf_left, self.cf_finish, self.cf_lastrun,
            )

    def _check_usage(self) -> None:
        over = self.usage > self.cap * (1.0 + _CAP_TOL) + 1e-300
        if over.any():
            self._resync_usage()
            over = self.usage > self.cap * (1.0 + _CAP_TOL)
            if over.any():
                link = int(np.flatnonzero(over)[0])
                raise PolicyError(
                    f"policy '{self.policy.name}' exceeds the capacity of "
                    f"{self.instance.fabric.link_name(link)} at time {self.t:.9g}: "
                    f"{self.usage[link]:.9g} > {self.cap[link]:.9g}"
                )

    def _set_priorities(self, order: IntArray) -> None:
        """A new priority order from the policy: zero the unlisted flows, then greedy rates."""
        if self.kernel is not None:
            self._take_stretch(Stretch(self.kernel, order, self.kernel_args))
            return
        if self.check and order.size:
            if self._repeats(order):
                raise PolicyError(f"policy '{self.policy.name}' lists a flow twice in its order")
            bad = order[self.status[order] != 1]
            if bad.size:
                raise PolicyError(
                    f"policy '{self.policy.name}' orders flow {bad[0]}, which is not admitted "
                    "or already complete"
                )
        act = self.active_flows()
        listed = np.zeros(self.F, bool)
        listed[order] = True
        rest = act[~listed[act] & (self.rate[act] > 0)]
        if rest.size:
            self.apply(rest, np.zeros(rest.size))
        self.prio = order
        self._regreedy()

    def _regreedy(self) -> None:
        """Greedy order-preserving rates for the current priority order."""
        o = self.prio
        assert o is not None
        o = o[self.status[o] == 1]
        self.prio = o
        if o.size == 0:
            return
        rates = alloc_greedy(_usage(self, o), self.cap, np.arange(o.size))
        self.apply(o, rates)

    def _take_stretch(self, spec: Stretch) -> None:
        """A policy's stretch: its flows restart from the kernel's rule, the others stop."""
        flows = np.asarray(spec.flows, np.int64).reshape(-1)
        if self.check and flows.size:
            if self._repeats(flows):
                raise PolicyError(f"policy '{self.policy.name}' lists a flow twice in its stretch")
            ok = self.status[flows] == 1
            if spec.admits.size:
                if spec.admitted_at.shape != spec.admits.shape or np.any(spec.admitted_at != np.inf):
                    raise PolicyError(
                        f"policy '{self.policy.name}' gives its stretch {spec.admits.size} "
                        f"admissions but not as many admission times, all inf"
                    )
                nxt, _ = self.upcoming(spec.admits.size, self.F)
                if not np.array_equal(nxt, spec.admits):
                    raise PolicyError(
                        f"policy '{self.policy.name}' hands its kernel admissions that are not "
                        "the next ones"
                    )
                mark = np.zeros(self.K, bool)
                mark[spec.admits] = True
                pending = (self.status[flows] == 0) & mark[self.fco[flows]]
                if np.count_nonzero(pending) != int(np.sum(np.diff(self.ptr)[spec.admits])):
                    raise PolicyError(
                        f"policy '{self.policy.name}' hands its kernel admissions without all "
                        "their flows"
                    )
                ok |= pending
            bad = flows[~ok]
            if bad.size:
                raise PolicyError(
                    f"policy '{self.policy.name}' hands flow {bad[0]} to its kernel, which is not "
                    "admitted or already complete"
                )
        act = self.active_flows()
        run = act[self.rate[act] > 0]
        if run.size:
            self.apply(run, np.zeros(run.size))  # close the pieces; the kernel restarts them
        self.stretch = Stretch(spec.kernel, flows, spec.args, spec.admits, spec.admitted_at,
                               spec.tied, spec.series)

    def _run_stretch(self, wake: float) -> int:
        """Run the current stretch kernel from now to the next admission it does not make,
        ``wake`` or the first coflow completion.

        Takes over the kernel's admissions, completions, pieces and final rates.
        Returns its stop reason (see :mod:`coflowopt.sim.kernels`; 3: nothing
        runs and nothing is due).
        """
        spec = self.stretch
        assert spec is not None
        if spec.admits.size:
            o = spec.flows[self.status[spec.flows] != 2]
            # the first admission after those the kernel makes (none made yet: a stretch
            # that admitted anything ends with a decision)
            j = self.adm_pos + int(np.diff(self.ptr)[spec.admits].sum())
            t_adm = float(self.adm_times[j]) if j < self.adm_times.size else math.inf
            if self.adm_heap:
                t_adm = min(t_adm, self.adm_heap[0][0])
        else:
            o = spec.flows[self.status[spec.flows] == 1]
            t_adm = self._next_admission()
        t_stop = min(t_adm, wake)
        self.stretch = Stretch(spec.kernel, o, spec.args, spec.admits, spec.admitted_at, spec.tied,
                               spec.series)
        t0 = self.t
        run = o[self.rate[o] > 0]
        if run.size:
            self.apply(run, np.zeros(run.size))  # close the pieces at t0; the kernel restarts them
        self._sync_coflows()
        n = o.size
        before = self.sent[o].copy()
        done_f = np.empty(n, np.int64)
        done_t = np.empty(n)
        cap_pieces = 4 * n + 1024 if self.record else 0
        pc_f = np.empty(cap_pieces, np.int64)
        pc_t0 = np.empty(cap_pieces)
        pc_t1 = np.empty(cap_pieces)
        pc_r = np.empty(cap_pieces)
        cap_levels = LEVEL_LOG * self.L + (n if spec.series is not None else 0) if self.record \
            else 0
        lv_u = np.empty(cap_levels, np.int64)
        lv_t = np.empty(cap_levels)
        lv_x = np.empty(cap_levels)
        rate_out = self._rate_buf  # all zeros between stretches (kernels write only o's flows)
        t, thr, nd, npc, nlv, nev, reason = spec.kernel(
            t0, t_stop, _TOL, o, self.link_a, self.link_b, self.L, self.cap, self.size,
            self.sent, self.fco, self.cf_left.copy(), self.start, self.record, cap_pieces,
            rate_out, done_f, done_t, pc_f, pc_t0, pc_t1, pc_r, lv_u, lv_t, lv_x, *spec.args,
        )
        self.events += int(nev)
        self.cf_sent += np.bincount(self.fco[o], self.sent[o] - before, minlength=self.K)
        self.t = self.cf_t = float(t)
        # the last event's threshold (its time plus the tolerance): what it admits (a
        # kernel that stops because nothing is due reports inf)
        thr = float(thr)
        self.stretch_thr = thr if math.isfinite(thr) else self.t + _TOL * max(1.0, abs(self.t))
        if spec.admits.size:
            self._admit_absorbed(spec)
        if npc and self.record:
            rows = (pc_f[:npc].copy(), pc_t0[:npc].copy(), pc_t1[:npc].copy(), pc_r[:npc].copy())
            if spec.tied:
                f = rows[0]
                ab = (self.link_a[f], self.link_b[f]) if spec.series is None else \
                    (spec.series[f], np.full(f.size, -1, np.int64))
                self._keep((*rows, *ab), self._tied)
            else:
                self._keep(rows)
        if nlv and self.record:
            self._keep((lv_u[:nlv].copy(), lv_t[:nlv].copy(), lv_x[:nlv].copy()), self._levels)
        if nd:
            self._finish_flows(done_f[:nd].copy(), done_t[:nd].copy(), self.stretch_thr)
        alive = o[self.status[o] == 1]
        if alive.size:
            self.tsync[alive] = self.t
            self.apply(alive, rate_out[alive])
        rate_out[o] = 0.0
        return int(reason)

    def _refresh_finish(self, ks: IntArray) -> None:
        """Recompute ``cf_finish`` and ``cf_lastrun`` of coflows ``ks``."""
        ptr, st, fin, rate = self.ptr, self.status, self.fin, self.rate
        for k in ks.tolist():
            lo, hi = int(ptr[k]), int(ptr[k + 1])
            act = st[lo:hi] == 1
            if not act.any():
                self.cf_finish[k], self.cf_lastrun[k] = np.inf, -np.inf
                continue
            r = rate[lo:hi][act]
            fk = fin[lo:hi][act]
            run = r > 0
            self.cf_lastrun[k] = fk[run].max() if run.any() else -np.inf
            whole = self.cf_active[k] == self.cf_left[k]
            self.cf_finish[k] = fk.max() if whole and run.all() else np.inf

    def _resync_usage(self) -> None:
        act = self.active_flows()
        self.usage = self._link_sum(act, self.rate[act]) if act.size else np.zeros(self.L)

    def _repeats(self, f: IntArray) -> bool:
        """True when some flow index occurs twice in ``f`` (O(len(f)), unlike sorting).

        Writes each position into the flow's slot: the last write wins, so a
        repeated flow's earlier position reads back a different one.
        """
        pos = np.arange(f.size)
        self._slot[f] = pos
        return bool((self._slot[f] != pos).any())

    def _validate(self, f: IntArray, r: FloatArray) -> None:
        name = self.policy.name
        if f.min() < 0 or f.max() >= self.F:
            raise PolicyError(f"policy '{name}' gave a rate to an unknown flow")
        bad = np.flatnonzero(self.status[f] != 1)
        if bad.size and np.any(r[bad] != 0):
            i = bad[r[bad] != 0][0]
            state = "not admitted yet" if self.status[f[i]] == 0 else "already complete"
            raise PolicyError(
                f"policy '{name}' gave rate {r[i]:.6g} to flow {f[i]}, which is {state} "
                f"at time {self.t:.9g}"
            )
        if not np.all(np.isfinite(r)) or r.min() < 0:
            i = int(np.flatnonzero(~np.isfinite(r) | (r < 0))[0])
            raise PolicyError(f"policy '{name}' gave flow {int(f[i])} the rate {float(r[i])!r}")
        if f.size > 1 and self._repeats(f):
            raise PolicyError(f"policy '{name}' gave two rates to the same flow")

    # ------------------------------------------------------------------ completions

    def _complete(self, thr: float) -> float:
        """Finish every flow predicted to complete by ``thr``; returns the latest such time."""
        bs = np.flatnonzero(self.bmin <= thr)
        if bs.size == 1:
            b = int(bs[0])
            local = np.flatnonzero(self.fin_blocks[b] <= thr)
            flows = local + (b << _BLOCK_BITS)
        else:
            sub = self.fin_blocks[bs]
            rows, cols = np.nonzero(sub <= thr)
            flows = (bs[rows] << _BLOCK_BITS) + cols
        return self._finish_flows(flows, self.fin[flows], thr)

    def _finish_flows(self, flows: IntArray, fin: FloatArray, thr: float) -> float:
        """Complete ``flows`` at times ``fin`` (all within the event at ``thr``)."""
        r = self.rate[flows]
        if self.record:
            self._record(flows, self.tsync[flows], fin, r)
        self._sync_coflows()
        # the coflow totals were synced to now; take back what ran past each flow's end
        self.cf_sent -= np.bincount(self.fco[flows], r * (self.t - fin), minlength=self.K)
        self.cf_rate -= np.bincount(self.fco[flows], r, minlength=self.K)
        if self.check:
            self.usage -= self._link_sum(flows, r)
        self.sent[flows] = self.size[flows]
        self.rate[flows] = 0.0
        self.tsync[flows] = fin
        self._set_fin(flows, np.full(flows.size, np.inf))
        self.status[flows] = 2
        self.flow_done_at[flows] = fin
        ks = self.fco[flows]
        # a flow too short for float64 where it ran completes with a transfer of no length,
        # which a compiled kernel does not count as a start: its coflow started then
        np.minimum.at(self.start, ks, fin)
        counts = np.bincount(ks, minlength=self.K)
        self.cf_left -= counts
        self.cf_active -= counts
        # a coflow with no running flow left forgets the rounding in its rate's differences
        idle_k = np.flatnonzero((counts > 0) & (self.cf_active == 0))
        self.cf_rate[idle_k] = 0.0
        self.done_flows.append(flows)
        self._active_cache = None
        t_last = float(fin.max())
        if self.batch:
            touched = np.flatnonzero(counts)
            idle = touched[self.cf_lastrun[touched] <= thr]
            self.cf_lastrun[idle] = -np.inf
        done = np.flatnonzero((counts > 0) & (self.cf_left == 0))
        if done.size:
            last = np.full(self.K, -np.inf)
            np.maximum.at(last, ks, fin)
            self.cf_finish[done] = np.inf
            self.cf_lastrun[done] = -np.inf
            for k in done.tolist():
                self.completion[k] = last[k]
                self.active_coflows.remove(k)
                self.done_coflows.append(k)
        return t_last

    # ------------------------------------------------------------------ queries

    def active_flows(self) -> IntArray:
        """Admitted, unfinished flows, coflow by coflow in admission order."""
        if self._active_cache is None:
            ptr, st = self.ptr, self.status
            parts = []
            for k in self.active_coflows:
                lo, hi = int(ptr[k]), int(ptr[k + 1])
                if self.cf_active[k] == hi - lo:
                    parts.append(np.arange(lo, hi, dtype=np.int64))
                elif self.cf_active[k]:
                    parts.append(np.flatnonzero(st[lo:hi] == 1) + lo)
            self._active_cache = np.concatenate(parts) if parts else _EMPTY_I
        return self._active_cache

    # ------------------------------------------------------------------ loop

    def _report(self, total: float) -> None:
        """Tell the progress callback the share of data delivered (at most every 0.1 s)."""
        if self.progress is None:
            return
        now = time.perf_counter()
        if now - self._last_report > 0.1:
            self._last_report = now
            self.progress(float(np.dot(self.status == 2, self.size)) / total)

    def run(self) -> RunData:
        """Simulate to the end (kernels compiled or interpreted: :func:`~coflowopt._jit.for_instance`)."""
        with for_instance(self.F, self.jit):
            return self._run()

    def _run(self) -> RunData:
        wall = time.perf_counter()
        policy = self.policy
        view = SimView(self)
        policy.start(view)
        # a policy that ignores single flow completions sees no difference if all of them
        # up to its next decision are processed in one batch
        self.batch = not (policy.on_flow_completion or policy.priority)
        # priority policies that decide only on coflow events get compiled greedy
        # stretches: the incremental matching where the greedy allocation is one, a
        # recomputation per event on other fabrics
        self.kernel = None
        if self.compiled and policy.priority and not policy.on_flow_completion and self.F:
            if self.two_link and np.all(self.cap == self.cap[0]):
                self.kernel = greedy_uniform_stretch
                self.kernel_args = greedy_uniform_state(self.F)  # the flows' history
            elif np.all(self.route_csr[2] > 0) and np.all(np.diff(self.route_csr[0]) > 0):
                # the kernel's structure lives from one stretch to the next (a new order
                # differs little from the last)
                self.kernel = greedy_csr_stretch
                self.kernel_args = (*self.route_csr,
                                    *greedy_csr_state(self.route_csr[0], self.route_csr[1], self.L))
        wake = math.inf
        total = float(self.size.sum()) or 1.0
        t = self._next_admission()
        if not math.isfinite(t):
            t = 0.0
        self.t = self.cf_t = t
        self._admit(t + _TOL * max(1.0, abs(t)))
        need = True
        stalled = False
        bumped = 0
        while True:
            if need:
                alloc = policy.decide(view)
                self.decisions += 1
                self.stretch = None
                self.prio = None
                if alloc.stretch is not None:
                    self._take_stretch(alloc.stretch)
                elif alloc.order is not None:
                    self._set_priorities(np.asarray(alloc.order, np.int64).reshape(-1))
                elif alloc.flows.size:
                    self.apply(alloc.flows, alloc.rates)
                wake = alloc.wake
                if wake != wake:
                    raise PolicyError(f"policy '{policy.name}' asked to wake at time nan")
                # a wake-up within the time tolerance (rounding in a crossing time) is
                # moved just past it, so that time advances and the policy sees the crossing
                floor = self.t + time_resolution(self.t)
                if wake < floor:
                    wake = floor
                    bumped += 1
                    if bumped > 1000:
                        raise PolicyError(
                            f"policy '{policy.name}' keeps asking to wake at the current time "
                            f"{self.t:.12g}: its wake-ups are closer than the engine's time "
                            f"resolution there ({_TOL:g} of the time, "
                            f"{_TOL * max(1.0, abs(self.t)):.3g}); a time parameter this short "
                            "(e.g. starvation_period or starvation_delta) cannot be simulated "
                            "at these times"
                        )
                else:
                    bumped = 0
                self.new_coflows.clear()
                self.new_flows.clear()
                self.done_flows.clear()
                self.done_coflows.clear()
                self.woke = self.stalled = False
            t_adm = self._next_admission()
            if self.stretch is not None:
                reason = self._run_stretch(wake)
                if reason == 3:  # nothing runs and nothing is due: as when the fabric idles
                    if self.active_coflows and not stalled:
                        stalled = self.stalled = need = True
                        continue
                    if self.active_coflows:
                        n = int(self.cf_active.sum())
                        raise SimulationError(
                            f"policy '{policy.name}' leaves {n} admitted flows without service at "
                            f"time {self.t:.9g} and asks for no further event"
                        )
                    if np.any(self.cf_left > 0):
                        raise SimulationError(
                            "some flows can never be admitted (unsatisfiable dependencies)"
                        )
                    break
                stalled = False
                # as at an event of the engine's own: what is due by the event's time plus
                # the tolerance (not by the latest completion it took in plus the tolerance)
                thr = self.stretch_thr
                for k in self.done_coflows:
                    self._release_dependents(k)
                if self._next_admission() <= thr:
                    self._admit(thr)
                if wake <= thr:
                    self.woke = True
                    wake = math.inf
                # the kernel handled the flow completions; the policy decides at admissions,
                # wake-ups and coflow completions (a full record buffer just continues)
                need = bool(self.new_flows or self.done_coflows or self.woke)
                if not need:
                    self.done_flows.clear()
                self._report(total)
                continue
            if self.batch:
                t_fin = float(self.cf_finish.min()) if self.K else math.inf
                idle = float(self.cf_lastrun.max()) if self.K else -math.inf
                if idle > -math.inf and idle < t_fin:
                    t_fin = idle  # every running flow is done by then: the fabric idles
            else:
                t_fin = float(self.bmin.min()) if self.F else math.inf
            t_next = min(t_adm, t_fin, wake)
            if t_next == math.inf:
                if self.active_coflows and not stalled:
                    # the fabric would go idle with work left: ask the policy once more
                    stalled = self.stalled = need = True
                    continue
                if self.active_coflows:
                    n = int(self.cf_active.sum())
                    raise SimulationError(
                        f"policy '{policy.name}' leaves {n} admitted flows without service at "
                        f"time {self.t:.9g} and asks for no further event"
                    )
                if np.any(self.cf_left > 0):
                    raise SimulationError(
                        "some flows can never be admitted (unsatisfiable dependencies)"
                    )
                break
            stalled = False
            t_next = max(t_next, self.t)
            thr = t_next + _TOL * max(1.0, abs(t_next))
            self.events += 1
            self.t = t_next
            if (t_fin if not self.batch else float(self.bmin.min())) <= thr:
                self.t = max(self.t, self._complete(thr))
                for k in self.done_coflows:
                    self._release_dependents(k)
            if t_adm <= thr or (self.adm_heap and self.adm_heap[0][0] <= thr):
                self._admit(thr)
            if wake <= thr:
                self.woke = True
                wake = math.inf
            need = bool(
                self.new_flows
                or self.done_coflows
                or self.woke
                or (self.done_flows and policy.on_flow_completion)
            )
            if not need and self.done_flows and self.prio is not None:
                self._regreedy()
                self.done_flows.clear()
            if not need and self.cf_active.any() and (
                float(self.cf_lastrun.max()) == -math.inf if self.batch
                else self.F > 0 and float(self.bmin.min()) == math.inf
            ):
                # the last running flow ended with work left: the fabric would idle until
                # the next admission or wake-up, so ask the policy once more (a stall)
                stalled = self.stalled = need = True
            if self.events % 1024 == 0:
                self._report(total)
        info = policy.finish(view)
        if self.unrecorded:
            info = {**info, "unrecorded": self.unrecorded}
        schedule = None
        if self.record:
            schedule = self._recorded_schedule()
            self._check_recorded(schedule)
        return RunData(
            completion=self.completion,
            start=self.start,
            admitted=self.admitted,
            flow_completion=self.flow_done_at,
            schedule=schedule,
            events=self.events,
            decisions=self.decisions,
            runtime=time.perf_counter() - wall,
            info=info,
        )


def _columns(rows: list[tuple[np.ndarray, ...]], n: int) -> list[np.ndarray]:
    """Recorded chunks of rows (an index column, then ``n - 1`` float columns) joined a
    column at a time, each column's chunks released as it is joined; ``rows`` is left
    empty."""
    parts: list[list[np.ndarray | None]] = [list(p) for p in rows]
    rows.clear()
    cols = []
    for i in range(n):
        cols.append(np.concatenate([p[i] for p in parts]) if parts
                    else np.zeros(0, np.int64 if i == 0 else np.float64))
        for p in parts:
            p[i] = None
    return cols


def joined(parts: list[IntArray]) -> IntArray:
    """Flow lists gathered between two decisions, as one array (no copy for one list)."""
    if not parts:
        return _EMPTY_I
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _usage(e: Engine, f: IntArray) -> sp.csr_array:
    """Route incidence rows of flows ``f`` (built directly, without SciPy's indexing)."""
    n = f.size
    if not e.two_link:
        ptr, idx, val = csr_rows(*e.route_csr, np.ascontiguousarray(f))
        return sp.csr_array((val, idx, ptr), shape=(n, e.L))
    idx = np.empty(2 * n, np.int64)
    idx[0::2] = e.link_a[f]
    idx[1::2] = e.link_b[f]
    return sp.csr_array(
        (np.ones(2 * n), idx, np.arange(0, 2 * n + 1, 2, dtype=np.int64)), shape=(n, e.L)
    )



def _dags(instance: Instance) -> IntArray:
    """Connected components of the coflows' dependencies, by smallest member (union-find)."""
    parent = np.arange(instance.num_coflows, dtype=np.int64)
    if not instance.has_dependencies:
        parent.setflags(write=False)
        return parent

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = int(parent[k])
        return k

    for k in range(instance.num_coflows):
        for j in np.concatenate([instance.starts_after[k], instance.finishes_before[k]]):
            a, b = root(k), root(int(j))
            if a != b:
                parent[max(a, b)] = min(a, b)
    out = np.array([root(k) for k in range(instance.num_coflows)], np.int64)
    out.setflags(write=False)
    return out

class SimView:
    """What a policy sees of the running simulation.

    Structure (ports, routes, which flow belongs to which coflow, which flows
    are admitted or complete) is visible to every policy; flow sizes and
    remaining amounts only to clairvoyant policies; coflow widths before all
    flows are admitted only to policies whose paper assumes them known.
    Bytes sent so far are visible to all.
    """

    __slots__ = ("_e", "clairvoyant", "knows_width")

    def __init__(self, engine: Engine) -> None:
        self._e = engine
        self.clairvoyant = bool(engine.policy.clairvoyant)
        self.knows_width = bool(engine.policy.knows_width)

    # -------------------------------------------------------------- structure

    @property
    def t(self) -> float:
        return self._e.t

    @property
    def instance_name(self) -> str:
        return self._e.instance.name

    @property
    def coflow_ids(self) -> tuple[str, ...]:
        return self._e.instance.ids

    def route_keys(self) -> IntArray:
        """Equal for two flows exactly when they share their route (:meth:`Instance.route_keys`)."""
        return self._e.instance.route_keys()

    def workload_coflow_sizes(self) -> FloatArray:
        """Sizes of all coflows of the workload, for parameters set offline.

        The papers tune some non-clairvoyant policies on the workload's size
        distribution beforehand (Baraat's heavy threshold at its 80th
        percentile, §6.8.2); this is that offline input, not knowledge of a
        running coflow.
        """
        return self._e.instance.size

    @property
    def num_ports(self) -> int:
        return self._e.instance.num_ports

    @property
    def num_flows(self) -> int:
        return self._e.F

    @property
    def num_coflows(self) -> int:
        return self._e.K

    @property
    def num_links(self) -> int:
        return self._e.L

    @property
    def capacity(self) -> FloatArray:
        return self._e.cap

    @property
    def routes(self) -> sp.csr_array:
        """Flows x links incidence of every flow's route."""
        return self._e.routes

    @property
    def route_csr(self) -> tuple[IntArray, IntArray, FloatArray]:
        """:attr:`routes` as ``(indptr, indices, data)`` in int64 and float64: the arrays
        the kernels that take flows of the incidence by index read (``coflowopt.kernels``)."""
        return self._e.route_csr

    @property
    def compiled(self) -> bool:
        """True when the policy may hand its flows to a compiled stretch kernel.

        ``simulate(..., compiled=False)`` makes it False: the reference path.
        """
        return bool(self._e.compiled)

    @property
    def two_link(self) -> bool:
        """True when every route crosses exactly two links (the big switch)."""
        return self._e.two_link

    @property
    def compiled_two_link(self) -> bool:
        """:attr:`compiled` on a :attr:`two_link` fabric: where the pair kernels apply."""
        return self.compiled and self.two_link

    @property
    def links_apart(self) -> bool:
        """:attr:`two_link`, and no link is a first link of one flow and a second of another."""
        return self._e.links_apart

    @property
    def link_a(self) -> IntArray:
        """First link of each flow's route (two-link fabrics: the uplink)."""
        return self._e.link_a

    @property
    def link_b(self) -> IntArray:
        """Second link of each flow's route (two-link fabrics: the downlink)."""
        return self._e.link_b

    @property
    def flow_coflow(self) -> IntArray:
        return self._e.fco

    @property
    def flow_src(self) -> IntArray:
        return self._e.instance.flow_src

    @property
    def flow_dst(self) -> IntArray:
        return self._e.instance.flow_dst

    @property
    def ptr(self) -> IntArray:
        return self._e.ptr

    @property
    def coflow_weight(self) -> FloatArray:
        return self._e.instance.weight

    @property
    def coflow_release(self) -> FloatArray:
        return self._e.instance.release

    @property
    def coflow_admitted(self) -> FloatArray:
        """Time each coflow's first flow was admitted (``inf`` before)."""
        return self._e.admitted

    @property
    def topological_rank(self) -> IntArray:
        """Position of each coflow in a dependency-respecting order (computed once per run)."""
        return self._e.topo_rank

    @property
    def dag(self) -> IntArray:
        """Each coflow's DAG: its connected component under the dependencies (either kind),
        labelled by the component's smallest coflow index; a coflow without any is its own."""
        return self._e.dag

    @property
    def has_dependents(self) -> npt.NDArray[np.bool_]:
        """Coflows some other coflow depends on (its completion admits flows)."""
        return self._e.has_succ

    def link_sum(self, flows: IntArray, values: FloatArray) -> FloatArray:
        """Per-link sums of ``values`` over the routes of ``flows``."""
        return self._e._link_sum(np.asarray(flows, np.int64), np.asarray(values, float))

    def usage(self, flows: IntArray) -> sp.csr_array:
        """Route incidence rows of ``flows`` (a usage matrix for :mod:`coflowopt.alloc`)."""
        return _usage(self._e, np.asarray(flows, np.int64))

    # -------------------------------------------------------------- state

    @property
    def active_coflows(self) -> list[int]:
        """Coflows with admitted flows that are not complete, in admission order."""
        return self._e.active_coflows

    def active_flows(self) -> IntArray:
        """Admitted, unfinished flows, grouped by coflow in admission order."""
        return self._e.active_flows()

    def flows_of(self, k: int) -> IntArray:
        """Admitted, unfinished flows of coflow ``k``."""
        e = self._e
        lo, hi = int(e.ptr[k]), int(e.ptr[k + 1])
        if e.cf_active[k] == hi - lo:
            return np.arange(lo, hi, dtype=np.int64)
        return np.flatnonzero(e.status[lo:hi] == 1) + lo

    def all_flows_of(self, k: int) -> IntArray:
        """Every flow of coflow ``k``: finished ones (which keep the bytes they sent) included."""
        return np.arange(self._e.ptr[k], self._e.ptr[k + 1], dtype=np.int64)

    def is_active(self, flows: IntArray) -> npt.NDArray[np.bool_]:
        """Which of ``flows`` are admitted and not complete."""
        return self._e.status[flows] == 1

    def num_active(self, k: int) -> int:
        """Number of admitted, unfinished flows of coflow ``k``."""
        return int(self._e.cf_active[k])

    @property
    def staggered(self) -> bool:
        """True when some coflow's flows are admitted at different times: multi-wave
        coflows, or an anchor held back by ``finishes_before`` predecessors."""
        e = self._e
        return bool(e.instance.is_multi_wave or (e.anchor >= 0).any())

    def fully_admitted(self, k: int) -> bool:
        """True when every flow of coflow ``k`` has been admitted."""
        e = self._e
        return bool(e.cf_active[k] == e.cf_left[k])

    def ready(self, k: int) -> bool:
        """True when every flow of coflow ``k`` has been admitted, except an anchor held
        back by ``finishes_before`` predecessors (the engine's device for that relation,
        not a flow yet to come): Varys's READY, once every flow has called ``get()``."""
        e = self._e
        held = 1 if e.anchor[k] >= 0 and not e.anchor_released[k] else 0
        return bool(e.cf_left[k] - e.cf_active[k] - held <= 0)

    def rate(self, flows: IntArray) -> FloatArray:
        return self._e.rate[flows]

    def sent(self, flows: IntArray) -> FloatArray:
        """Bytes each flow has received up to now."""
        e = self._e
        f = np.asarray(flows)
        if e.compiled and f.ndim == 1 and f.dtype == np.int64:
            return ks.sent_now(f, e.t, e.sent, e.rate, e.tsync)
        return e.sent[flows] + e.rate[flows] * (e.t - e.tsync[flows])

    def coflow_sent(self) -> FloatArray:
        """Bytes each coflow has received up to now (all coflows)."""
        e = self._e
        return e.cf_sent + e.cf_rate * (e.t - e.cf_t)

    def coflow_rate(self) -> FloatArray:
        """Current total rate of each coflow (all coflows)."""
        return self._e.cf_rate

    @property
    def completed_flows(self) -> IntArray:
        """Flows completed since the last decision."""
        return joined(self._e.done_flows)

    @property
    def completed_coflows(self) -> list[int]:
        """Coflows completed since the last decision."""
        return self._e.done_coflows

    def upcoming(self, max_coflows: int, max_flows: int) -> tuple[IntArray, FloatArray]:
        """The next coflows to be admitted, each whole at one time, and their admission times.

        At most ``max_coflows`` of them with at most ``max_flows`` flows in all;
        the list ends before any other admission (part of a coflow, a coflow
        released by a dependency) and before a time within the engine's
        tolerance of the one before; in admission order. A stretch kernel may make these
        admissions itself (:attr:`Stretch.admits`); the policy must not let
        the kernel act on a listed coflow before its admission.
        """
        return self._e.upcoming(max_coflows, max_flows)

    @property
    def arrived_coflows(self) -> list[int]:
        """Coflows whose first flows were admitted since the last decision."""
        return self._e.new_coflows

    @property
    def arrived_flows(self) -> IntArray:
        """Flows admitted since the last decision."""
        return joined(self._e.new_flows)

    @property
    def woke(self) -> bool:
        """True when this decision was triggered (also) by the policy's wake-up."""
        return self._e.woke

    @property
    def stalled(self) -> bool:
        """True when no flow has a positive rate with work left.

        The engine then asks the policy once more: when nothing else is
        pending, and, for policies that do not react to single flow
        completions, as soon as their last running flow ends (they would
        otherwise leave the fabric idle until the next admission or wake-up).
        """
        return self._e.stalled

    # -------------------------------------------------------------- clairvoyant

    def _need(self, what: str) -> None:
        if not self.clairvoyant:
            raise InformationError(
                f"policy '{self._e.policy.name}' is non-clairvoyant and cannot see {what}"
            )

    def size(self, flows: IntArray) -> FloatArray:
        """Flow sizes (clairvoyant policies only)."""
        self._need("flow sizes")
        return self._e.size[flows]

    def remaining(self, flows: IntArray) -> FloatArray:
        """Bytes each flow still has to receive (clairvoyant policies only)."""
        self._need("remaining flow sizes")
        e = self._e
        f = np.asarray(flows)
        if e.compiled and f.ndim == 1 and f.dtype == np.int64:
            return ks.remaining_now(f, e.t, e.size, e.sent, e.rate, e.tsync)
        return np.maximum(e.size[flows] - self.sent(flows), 0.0)

    def deadline(self) -> FloatArray:
        """Absolute deadline of each coflow (``nan`` for none; clairvoyant only)."""
        self._need("deadlines")
        return self._e.instance.deadline

    def width(self, ks: Sequence[int] | IntArray) -> IntArray:
        """Total number of flows of coflows ``ks`` (policies that know widths)."""
        if not (self.clairvoyant or self.knows_width):
            raise InformationError(
                f"policy '{self._e.policy.name}' cannot see coflow widths"
            )
        return self._e.instance.width[np.asarray(ks, np.int64)]
