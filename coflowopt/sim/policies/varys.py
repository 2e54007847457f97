"""``varys``: Smallest Effective Bottleneck First with MADD and backfilling.

Dissertation §5.5.3 and Pseudocode 1 (MINCCTOFFLINE / MINCCTONLINE), with
the online rules of §5.6.2:

1. *Order* (SEBF). Active coflows sorted by their effective bottleneck
   Γ (Eq. 4.1): the largest load on any link divided by its capacity.
   ``order="remaining"`` (default) uses the data each coflow still has to
   send, the online reading of "SORT_ASC using SEBF" at every call and of
   SEBF as the coflow analogue of shortest-remaining-time-first;
   ``order="static"`` uses the full coflow, fixed at arrival, as the Varys
   simulator (coflowsim) did; ``order="coflowsim"`` keeps coflowsim's list
   (:meth:`OrderedMADD.coflowsim_order`: for SEBF the static order, for
   ``tcf`` and ``ncf`` coflowsim's LCF and NCF). Ties keep admission order; keys are compared
   at 30 significant bits, so rounding in a served coflow's remaining data
   does not break an exact tie (:func:`coflowopt.kernels.ties.order_with_ties`).
2. *MADD* (lines 7-10). In that order each coflow gets rates
   ``r_ij = remaining_ij / Γ`` with Γ computed on what the coflows before it
   left of each link (``Rem(.)`` in Eq. 4.1); a coflow that needs a link
   with no capacity left gets nothing in this pass.
3. *Backfilling* (line 16, "work conservation"). ``backfill="proportional"``
   (default) follows the text: for each ingress port in turn, and each coflow
   on it in SEBF order, the port's spare capacity "is allocated to C's flows
   in their current r_ij ratios, subject to capacity constraints in
   corresponding P_out_j". MADD's rates are proportional to the remaining
   data ``d_ij``, so the ratios are those of ``d_ij``; a coflow that got no
   MADD rates (it needs a full link) is backfilled in the same ratios. The
   egress constraints cap each flow, not the group: the (coflow, ingress)
   group is water-filled in ``d_ij`` ratios, a flow stops growing when its
   egress is full and the others grow on until the ingress is full or every
   flow is stopped. So right after a decision no flow with room on both its
   ports is idle.

   *Deviation from the previous release (and the other reading).* Until
   this version the group's ratios were kept exactly: the group grew until
   any of its links was full, so a group with one flow to a full egress got
   nothing, and a coflow could sit idle with both ports of some of its flows
   free. That reading contradicts the pass's purpose ("utilize the
   unallocated bandwidth throughout the fabric as much as possible"). On the
   Facebook trace it gave a mean CCT of 54.62 s (fifo 214.7 s); this one
   gives 35.35 s (fifo 121.0 s), i.e. 1.83x better than per-flow fairness
   and 3.42x better than FIFO, against the dissertation's simulated 2.16x
   and 3.33x (§5.7.2, §5.7.4).

   ``backfill="greedy"``: flows in arrival order each take ``min`` of their
   two ports' spare capacity, the refill of coflowsim's work-conservation
   pass, but not all of that pass. ``backfill="coflowsim"`` adds the part
   before it: coflowsim (``CoflowSimulator.updateRatesDynamicAlpha``) first
   gives the coflows MADD skipped a one-pass share (``updateRatesFairShare``):
   their flows whose two ports both have room are counted per port, and each
   takes ``min(free_src / n_src, free_dst / n_dst)`` of what MADD left
   (:func:`coflowsim_fair_share`); then the refill, in coflowsim's order:
   earliest admission time plus a randomised "deadline duration" first
   (:meth:`OrderedMADD.refill_order`; ``"greedy"`` refills in arrival
   order). A comparison with coflowsim
   on the trace: SEBF with ``order="static"``, ``backfill="greedy"``
   had a mean CCT of 48.1 s against coflowsim's 28.5 s, its wide long
   coflows up to 2.9x slower. With ``backfill="coflowsim"`` on the trace as
   coflowsim reads it (format ``coflowsim``: its rounding and 10.24 s
   admission epochs, :func:`coflowopt.io.benchmark.loads_coflowsim`), 27.7 s
   against coflowsim's 28.5 s, 506 of 526 coflows within 1% and 525 within 10%;
   with coflowsim's 8 ms steps as well (``step``, item 4) and completions
   rounded up to the step as coflowsim records them, 512 within 1% and 503 in
   coflowsim's very step. The rest follows from coflowsim counting a rounding
   residue of a saturated port as capacity (``models/simulator.md``, "coflowsim's
   rules"; ``benchmarks/results/simulator.md``). ``backfill="none"`` leaves
   spare capacity idle.
4. *When*: Varys reschedules "upon coflow arrival and completion events"
   (§5.6.2), so the default ``reschedule="coflow"`` re-allocates only then
   (and when the fabric would otherwise go idle); capacity freed by a single
   flow stays unused until the next such event. ``reschedule="flow"`` also
   re-allocates at every flow completion. ``step`` (seconds, default 0) decides
   only at multiples of it, as coflowsim does between its 8 ms steps
   (:data:`COFLOWSIM_STEP`): a decision due inside a step waits for its end, and
   the rates stay as they are until then.
5. *Starvation avoidance* (lines 19-27), off unless ``starvation_period``
   (T) is given: after each T-interval the coflows that received no
   service during it are treated as one coflow and get MADD for
   ``starvation_delta`` (δ) time while all others wait; then the T-interval
   restarts. §5.7.1 uses T = 2 s and δ = 200 ms. When no coflow is starved
   at the end of a T-interval, the next one starts at once: Pseudocode 1
   alternates the two intervals unconditionally, which read literally would
   leave the fabric idle for δ with nothing to serve (a deviation).

6. *Multi-wave coflows* (flows that start later, and a last flow that waits
   for a finishes-before predecessor): SEBF and MADD see the flows admitted so
   far, with their sizes, and nothing of flows yet to come. Each wave is
   scheduled as it arrives while the waves stay one coflow (its CCT runs to
   its last wave): the first of the two approaches of §6.8.3 without splitting
   the coflow. Pseudocode 3's READY barrier (no service before every flow has
   called ``get()``) is not applied here, unlike in ``varys-deadline``, whose
   admission test needs the whole coflow.

The same machinery with another order gives ``fifo``, ``scf``, ``ncf`` and
``tcf`` (their modules).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import alloc
from ...errors import InstanceError
from ...instance import Instance
from ...kernels.ties import order_with_ties, tie_keys
from ..engine import Allocation, SimView, check_time_parameter
from ..kernels import varys as kv
from . import register
from ._base import AnyParams, Params, Policy, check_choice, check_positive
from ._common import madd_flows, saturated

__all__ = [
    "BACKFILLS",
    "COFLOWSIM_STEP",
    "ORDERED_BACKFILLS",
    "OrderedMADD",
    "Varys",
    "VarysParams",
    "backfill_greedy",
    "backfill_proportional",
    "coflowsim_fair_share",
    "in_coflowsim_steps",
    "step_end",
    "steps_up",
]

BACKFILLS = ("proportional", "greedy", "none")
"""The backfilling passes ``varys-deadline`` offers."""

ORDERED_BACKFILLS = (*BACKFILLS, "coflowsim")
"""Those of ``varys`` and the other ordered policies (fifo, scf, ncf, tcf)."""

COFLOWSIM_STEP = 0.008
"""coflowsim's time step in seconds (``SIMULATION_QUANTA``: 8 of its 1,024 ms "seconds", the
time a rack moves 1 MB): it moves data step by step and decides only between steps, so a
coflow completing inside a step leaves its capacity idle until the step ends and is recorded
as completing then."""

GRID_TOL = 1e-3
"""A time within this fraction of a step from a step boundary is on it (event times carry
rounding; coflowsim's sizes are whole megabytes, so many flows end exactly on a boundary)."""


def step_end(t: float, step: float) -> float:
    """The end of the ``step``-long time step that ``t`` falls in: ``t`` itself on a boundary."""
    end = math.ceil(t / step - GRID_TOL) * step
    return t if end - t <= GRID_TOL * step else end


def steps_up(t: np.ndarray, step: float = COFLOWSIM_STEP) -> np.ndarray:
    """Times rounded up to the next step boundary (a time on one stays there): how coflowsim
    records a completion, at the end of the step in which it happened."""
    return np.ceil(np.asarray(t, float) / step - GRID_TOL) * step


def in_coflowsim_steps(inst: Instance) -> Instance:
    """``inst`` in coflowsim's units: its 8 ms step (:data:`COFLOWSIM_STEP`) as the time unit
    and what the slowest port moves in a step as the data unit (a MiB at coflowsim's rack
    rate, :data:`coflowopt.io.benchmark.COFLOWSIM_PORT_RATE`), so capacities become 1 and the
    trace's sizes whole numbers (:meth:`~coflowopt.Instance.rescaled`).

    Releases must lie on the step grid: the trace's are whole milliseconds, multiples of
    8, read as seconds (``ms / 1000``, not binary fractions), so in steps they come out a
    few ulps from whole numbers and are rounded to them. Times of the result are in steps
    (multiply by :data:`COFLOWSIM_STEP` for seconds). Raises
    :class:`~coflowopt.errors.InstanceError` for a release more than 1e-6 of a step off the
    grid.
    """
    rate = float(inst.fabric.capacity.min(initial=np.inf))
    out = inst.rescaled(time_unit=COFLOWSIM_STEP, data_unit=rate * COFLOWSIM_STEP)
    steps = np.rint(out.release)
    off = np.abs(out.release - steps)
    if off.size and off.max() > 1e-6:
        k = int(np.argmax(off))
        raise InstanceError(f"coflow '{inst.ids[k]}' is released at {float(inst.release[k])!r}, "
                            f"{float(off[k]):.3g} of a step off coflowsim's 8 ms grid",
                            coflow=k, field="release")
    return out.with_releases(steps)


@dataclass(frozen=True, slots=True)
class VarysParams(Params):
    order: str = "remaining"
    """Order key on the data still to send ("remaining"), fixed at arrival ("static"), or
    coflowsim's list ("coflowsim": :meth:`OrderedMADD.coflowsim_order`)."""
    backfill: str = "proportional"
    """Spare capacity: "proportional" (dissertation text), "greedy" (coflowsim's refill),
    "coflowsim" (coflowsim's pass for skipped coflows, then its refill), "none"."""
    reschedule: str = "coflow"
    """Re-allocate on coflow arrivals/departures ("coflow", §5.6.2) or every flow event ("flow")."""
    starvation_period: float | None = None
    """T of Pseudocode 1 (seconds); None turns starvation avoidance off."""
    starvation_delta: float = 0.2
    """δ of Pseudocode 1 (seconds); §5.7.1 default 200 ms."""
    step: float = 0.0
    """Decide only at multiples of ``step`` seconds (0: at every event); coflowsim's is
    :data:`COFLOWSIM_STEP`."""

    def __post_init__(self) -> None:
        check_positive(self.step, "step", allow_zero=True)
        check_choice(self.order, "order", ("remaining", "static", "coflowsim"))
        check_choice(self.backfill, "backfill", ORDERED_BACKFILLS)
        check_choice(self.reschedule, "reschedule", ("coflow", "flow"))
        check_positive(self.starvation_period, "starvation_period", allow_none=True)
        check_positive(self.starvation_delta, "starvation_delta")


def _alive(view: SimView, flows: np.ndarray, dead: np.ndarray) -> np.ndarray:
    """Flows none of whose links is full."""
    if view.two_link:
        return ~(dead[view.link_a[flows]] | dead[view.link_b[flows]])
    return (view.usage(flows) @ dead.astype(float)) == 0


_NONE = np.zeros(0, np.int64)
_NONE_F = np.zeros(0)


def _concat(
    flows: list[np.ndarray], values: list[np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flows (and values) of several coflows end to end, and where each coflow starts."""
    if not flows:
        return _NONE, _NONE_F, np.zeros(1, np.int64)
    cptr = np.zeros(len(flows) + 1, np.int64)
    np.cumsum([x.size for x in flows], out=cptr[1:])
    f = np.concatenate(flows).astype(np.int64, copy=False)
    v = np.concatenate(values).astype(float, copy=False) if values is not None else _NONE_F
    return f, v, cptr


def backfill_proportional(
    view: SimView, parts: list[tuple[np.ndarray, np.ndarray]], residual: np.ndarray
) -> list[np.ndarray]:
    """Spare capacity to each (coflow, ingress) group in its flows' ``d_ij`` ratios.

    ``parts`` lists ``(flows, remaining)`` coflow by coflow in priority order.
    Groups are served ingress link by ingress link (the first link of each
    route), coflows in priority order within a link. Each group is
    water-filled in the ratios of its remaining data (:func:`coflowopt.alloc.max_min`
    with weights ``d_ij`` on what is left): its flows grow together, each
    by the same multiple of its remaining data, a flow stops when another
    link it uses is full, and the group stops when its ingress is full.
    After each group, links left with at most ``SAT`` of their capacity are
    full. For a coflow with MADD rates these are "their current r_ij
    ratios" (MADD makes rates proportional to the remaining data); a coflow
    that got no MADD rates grows in the same ratios. Returns the extra rate
    of each flow. Compiled: :func:`coflowopt.sim.kernels.varys.proportional_backfill`
    for the big switch, :func:`~coflowopt.sim.kernels.varys.proportional_backfill_csr`
    for any routes (and for the reference path, ``simulate(..., compiled=False)``).
    """
    if not parts:
        return []
    f, d, cptr = _concat([p[0] for p in parts], [p[1] for p in parts])
    out = np.zeros(f.size)
    if view.compiled_two_link:
        grow = np.ones(len(parts), bool)
        iwork, fwork = kv.workspace(f.size)
        kv.proportional_backfill(
            view.link_a, view.link_b, f, d, cptr, grow, residual, view.capacity, out, iwork, fwork
        )
        return np.split(out, cptr[1:-1])
    kv.proportional_backfill_csr(*view.route_csr, f, d, cptr, residual, view.capacity, out)
    return np.split(out, cptr[1:-1])


def backfill_greedy(
    view: SimView, flows: list[np.ndarray], residual: np.ndarray
) -> list[np.ndarray]:
    """Flows coflow by coflow in the order of ``flows`` (callers pass arrival order), each taking
    what their links have left (coflowsim's work-conservation pass)."""
    if view.compiled_two_link:
        if not flows:
            return []
        f, _, cptr = _concat(flows, None)
        out = np.zeros(f.size)
        every = np.arange(len(flows), dtype=np.int64)
        grow = np.ones(len(flows), bool)
        kv.greedy_backfill(view.link_a, view.link_b, f, cptr, every, grow, residual, out,
                           np.empty(f.size, np.int64))
        return np.split(out, cptr[1:-1])
    alive, cand = _with_room(view, flows, residual)
    if cand.size == 0:
        return [np.zeros(f.size) for f in flows]
    x = alloc.greedy(view.usage(cand), residual, np.arange(cand.size))
    residual -= view.link_sum(cand, x)
    np.maximum(residual, 0.0, out=residual)
    return _per_coflow(flows, alive, x)


def _with_room(view: SimView, flows: list[np.ndarray],
               residual: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """Per coflow, the positions of its flows whose links all have room; those flows end
    to end."""
    dead = residual <= 0
    alive = [np.flatnonzero(_alive(view, f, dead)) for f in flows]
    cand = np.concatenate([f[a] for f, a in zip(flows, alive, strict=True)]) if flows else _NONE
    return alive, cand


def _per_coflow(flows: list[np.ndarray], alive: list[np.ndarray], x: np.ndarray) -> list[np.ndarray]:
    """Values ``x`` of the flows :func:`_with_room` listed, back per coflow (0 elsewhere)."""
    out = [np.zeros(f.size) for f in flows]
    off = 0
    for i, a in enumerate(alive):
        out[i][a] = x[off : off + a.size]
        off += a.size
    return out


def coflowsim_fair_share(
    view: SimView, flows: list[np.ndarray], residual: np.ndarray
) -> list[np.ndarray]:
    """coflowsim's ``updateRatesFairShare``: its pass for the coflows MADD skipped, and
    ``dark``'s rates for one coflow at a time.

    ``flows``: per coflow, the flows to share among (empty for the others). Every flow
    whose links all have room is counted on each of its links; each then
    takes the smallest ``residual / count`` over its links, residuals as
    they were before the pass. ``residual`` loses what is given (links left
    with at most ``SAT`` of their capacity are full). Returns each flow's rate.
    """
    alive, cand = _with_room(view, flows, residual)
    if cand.size == 0:
        return [np.zeros(f.size) for f in flows]
    count = view.link_sum(cand, np.ones(cand.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(count > 0, residual / count, np.inf)
    if view.two_link:
        x = np.minimum(share[view.link_a[cand]], share[view.link_b[cand]])
    else:  # the smallest share over each route (every route has a link)
        use = view.usage(cand).tocsr()
        x = np.minimum.reduceat(share[use.indices], use.indptr[:-1])
    residual -= view.link_sum(cand, x)
    np.maximum(residual, 0.0, out=residual)
    residual[saturated(residual, view.capacity)] = 0.0
    return _per_coflow(flows, alive, x)


def java_random_doubles(seed: int, n: int) -> np.ndarray:
    """The first ``n`` values of ``java.util.Random(seed).nextDouble()``."""
    mask = (1 << 48) - 1
    state = (seed ^ 0x5DEECE66D) & mask

    def bits(k: int) -> int:
        nonlocal state
        state = (state * 0x5DEECE66D + 0xB) & mask
        return state >> (48 - k)

    return np.array([((bits(26) << 27) + bits(27)) * 2.0**-53 for _ in range(n)])


def coflowsim_deadlines(peak: np.ndarray, release: np.ndarray) -> np.ndarray:
    """coflowsim's ``deadlineDuration`` of every coflow, in milliseconds: its full coflow's
    largest port load ``peak`` in bytes over 2^27 (``RACK_BYTES_PER_SEC``), times 1,000,
    times ``1 + U``, ``U`` from ``java.util.Random(17)`` drawn coflow by coflow in
    ``release`` order (ties: index), as its ``Simulator`` does with
    ``deadlineMultRandomFactor`` 1."""
    mult = np.empty(peak.size)
    mult[np.argsort(release, kind="stable")] = 1.0 + java_random_doubles(17, peak.size)
    return np.asarray(peak, float) / 2.0**27 * mult * 1000.0


def _peak_loads(view: SimView) -> np.ndarray:
    """Each coflow's largest link load over all its flows, in bytes."""
    peak = np.zeros(view.num_coflows)
    for k in range(view.num_coflows):
        f = view.all_flows_of(k)
        if f.size:
            peak[k] = float(view.link_sum(f, view.size(f)).max())
    return peak


@dataclass(slots=True)
class _CoflowState:
    """What the policy knows of one coflow, kept while the coflow receives nothing."""

    k: int
    sent: float
    active: int
    flows: np.ndarray
    rem: np.ndarray
    load: np.ndarray
    key: float = math.nan
    links_a: np.ndarray | None = None
    """Two-link fabrics: which first links (uplinks) the coflow's flows use."""
    links_b: np.ndarray | None = None


def _may_grow(st: _CoflowState, open_: np.ndarray) -> bool:
    """False when no flow of the coflow can have room on all its links (a cheap test)."""
    if st.links_a is None or st.links_b is None:
        return bool(np.any(open_ & (st.load > 0)))
    return bool(np.any(open_ & st.links_a)) and bool(np.any(open_ & st.links_b))


class OrderedMADD(Policy):
    """A coflow order, MADD rates in that order, and backfilling (Pseudocode 1).

    Work per decision: the flows of coflows that received data since the
    previous decision or get rates now; a coflow that waited keeps its
    cached remaining data and loads, so waiting costs O(links) for its
    order key and MADD test plus a vectorized check of its flows' links in
    the backfilling pass.
    """

    clairvoyant = True
    Params = VarysParams

    def __init__(self, params: AnyParams) -> None:
        super().__init__(params)
        p: VarysParams = self.params
        self.on_flow_completion = p.reschedule == "flow"
        self.static_key: dict[int, float] = {}
        self.listed: list[int] = []  # order="coflowsim": coflowsim's list of coflows
        self.states: dict[int, _CoflowState] = {}
        self.served: set[int] = set()
        # starvation avoidance state
        self.phase = "T"
        self.phase_end = math.inf
        self.snapshot = np.zeros(0)
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None  # the kernels' (kv.workspace)
        self._deadline_ms: np.ndarray | None = None  # coflowsim's refill deadlines

    def _work(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The compiled allocation's scratch for ``n`` flows, kept across decisions."""
        self._scratch = kv.workspace(n, self._scratch)
        return self._scratch

    # -------------------------------------------------------------- order

    def key(self, view: SimView, st: _CoflowState, rem: np.ndarray, load: np.ndarray) -> float:
        """Sort key of a coflow (smaller first) from the given data and its link loads."""
        raise NotImplementedError

    def state(self, view: SimView, k: int, sent: float) -> _CoflowState:
        st = self.states.get(k)
        n = view.num_active(k)
        if st is not None and st.sent == sent and st.active == n:
            return st
        f = view.flows_of(k)
        rem = view.remaining(f)
        if view.compiled_two_link:
            load, ua, ub = kv.coflow_loads(view.link_a, view.link_b, f, rem, view.num_links)
            st = _CoflowState(k, sent, n, f, rem, load, links_a=ua, links_b=ub)
        else:
            st = _CoflowState(k, sent, n, f, rem, view.link_sum(f, rem))
        if st.links_a is None and view.two_link:
            st.links_a = np.bincount(view.link_a[f], minlength=view.num_links) > 0
            st.links_b = np.bincount(view.link_b[f], minlength=view.num_links) > 0
        p: VarysParams = self.params
        if p.order != "remaining" and k not in self.static_key:
            self.static_key[k] = (self.coflowsim_key(view, st) if p.order == "coflowsim"
                                  else self.whole_key(view, st))
        if p.order == "remaining" or (p.order == "coflowsim" and self.coflowsim_remaining):
            st.key = self.key(view, st, rem, st.load)
        else:
            st.key = self.static_key[k]
        self.states[k] = st
        return st

    def whole_key(self, view: SimView, st: _CoflowState) -> float:
        """The key of the whole coflow: its later waves and a held-back anchor too (not its first
        wave alone)."""
        fa = view.all_flows_of(st.k)
        size = view.size(fa)
        return self.key(view, st, size, view.link_sum(fa, size))

    coflowsim_remaining = False
    """coflowsim's comparator reads a listed coflow's key from its remaining data at a newcomer's
    admission (its LCF) instead of the key fixed at the listed coflow's own admission."""

    def coflowsim_key(self, view: SimView, st: _CoflowState) -> float:
        """The key coflowsim's comparator gives a coflow at its admission: the whole coflow's
        (:meth:`whole_key`) unless the policy reads coflowsim otherwise."""
        return self.whole_key(view, st)

    def order(self, view: SimView) -> list[_CoflowState]:
        """Active coflows in priority order (ties: admission order)."""
        sent = view.coflow_sent()
        live = set(view.active_coflows)
        for k in [k for k in self.states if k not in live]:
            del self.states[k]
        states = [self.state(view, k, float(sent[k])) for k in view.active_coflows]
        if self.params.order == "coflowsim":
            return self.coflowsim_order(states)
        keys = np.array([st.key for st in states], dtype=float)
        return [states[i] for i in order_with_ties(keys)]

    def coflowsim_order(self, states: list[_CoflowState]) -> list[_CoflowState]:
        """coflowsim's list (``CoflowSimulator.addToSortedJobs``): each coflow, once, at its
        admission (in admission order, then index), goes before the first listed coflow whose
        key is greater than its :meth:`coflowsim_key`, and the list is never re-sorted.

        A listed coflow's key is the one fixed at its own admission, or, with
        :attr:`coflowsim_remaining`, its key on the data it has left at that moment (keys
        compared as :func:`coflowopt.kernels.ties.order_with_ties` compares them, so drift
        in remaining data does not break an exact tie). With fixed keys this is the
        ``static`` order up to those ties.
        """
        by_k = {st.k: st for st in states}
        self.listed = [k for k in self.listed if k in by_k]
        known = set(self.listed)
        for st in states:  # admission order (the engine's), then index
            if st.k in known:
                continue
            new = tie_keys(np.array([self.static_key[st.k]]))[0]
            later = tie_keys(np.array([by_k[k].key for k in self.listed], dtype=float))
            after = np.flatnonzero(later > new)
            self.listed.insert(int(after[0]) if after.size else len(self.listed), st.k)
            known.add(st.k)
        return [by_k[k] for k in self.listed]

    # -------------------------------------------------------------- allocation

    def allocate(self, view: SimView, order: list[_CoflowState]) -> tuple[np.ndarray, np.ndarray]:
        p: VarysParams = self.params
        if view.compiled_two_link:
            return self._allocate_compiled(view, order)
        cap = view.capacity
        residual = cap.astype(float).copy()
        rates: list[np.ndarray | None] = []
        for st in order:
            need = st.load > 0
            if not need.any() or np.any(saturated(residual[need], cap[need])):
                rates.append(None)  # a link it needs is full: nothing in this pass
                continue
            x, gamma = madd_flows(view, st.flows, st.rem, residual)
            if not math.isfinite(gamma) or gamma <= 0:
                rates.append(None)
                continue
            rates.append(x)
            residual -= st.load / gamma  # the links' share of x = remaining / gamma
            np.maximum(residual, 0.0, out=residual)
        residual[saturated(residual, cap)] = 0.0
        if p.backfill == "proportional" and not view.two_link:
            return self._backfill_routes(view, order, rates, residual)
        if p.backfill == "proportional":
            open_ = residual > 0
            parts = [
                (st.flows, st.rem) if _may_grow(st, open_) else (_NONE, _NONE_F)
                for st in order
            ]
            extra = backfill_proportional(view, parts, residual)
            extra = [e if e.size else np.zeros(st.flows.size) for e, st in zip(extra, order,
                                                                               strict=True)]
        elif p.backfill in ("greedy", "coflowsim"):
            pre = [np.zeros(st.flows.size) for st in order]
            if p.backfill == "coflowsim":
                pre = coflowsim_fair_share(view, [st.flows if r is None else _NONE
                                                for st, r in zip(order, rates, strict=True)],
                                         residual)
                pre = [e if e.size else np.zeros(st.flows.size) for e, st in zip(pre, order,
                                                                                 strict=True)]
            idx = self.refill_order(view, order)
            ex = backfill_greedy(view, [order[i].flows for i in idx], residual)
            extra = pre
            for j, i in enumerate(idx):
                extra[i] = extra[i] + ex[j]
        else:
            extra = [np.zeros(st.flows.size) for st in order]
        out_f, out_r = [], []
        served = set()
        for st, base, e in zip(order, rates, extra, strict=True):
            total = e if base is None else base + e
            if total.any():
                served.add(st.k)
            elif st.k not in self.served:
                continue  # was idle and stays idle: nothing to tell the engine
            out_f.append(st.flows)
            out_r.append(total)
        self.served = served
        if not out_f:
            return np.zeros(0, np.int64), np.zeros(0)
        return np.concatenate(out_f), np.concatenate(out_r)

    def _backfill_routes(
        self, view: SimView, order: list[_CoflowState], rates: list[np.ndarray | None],
        residual: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The end of :meth:`allocate` with proportional backfilling on any routes, on the
        coflows' flows end to end: :func:`backfill_proportional` and the same rates and
        flows out, without splitting and joining them per coflow (a decision on the
        Facebook trace on spine-leaf has 200,000 flows)."""
        open_ = residual > 0
        f, d, cptr = _concat([st.flows for st in order], [st.rem for st in order])
        base = np.zeros(f.size)
        for c, (st, x) in enumerate(zip(order, rates, strict=True)):
            if x is not None:
                base[cptr[c] : cptr[c + 1]] = x
            if not _may_grow(st, open_):
                # no flow of it has room on every link: none is a candidate
                d[cptr[c] : cptr[c + 1]] = 0.0
        extra = np.zeros(f.size)
        kv.proportional_backfill_csr(*view.route_csr, f, d, cptr, residual, view.capacity, extra)
        total = base + extra
        served = np.zeros(len(order), bool)
        served[np.searchsorted(cptr, np.flatnonzero(total), side="right") - 1] = True
        was = np.array([st.k in self.served for st in order], bool)
        self.served = {order[c].k for c in np.flatnonzero(served).tolist()}
        # coflows that were idle and stay idle are not mentioned
        keep = served | was
        if keep.all():
            return f, total
        mask = np.repeat(keep, np.diff(cptr))
        return f[mask], total[mask]

    def refill_order(self, view: SimView, order: list[_CoflowState]) -> list[int]:
        """Positions in ``order`` in the order the greedy refill serves them.

        ``backfill="greedy"``: arrival order (admission time, then index).
        ``backfill="coflowsim"``: coflowsim's "EDF" (``updateRatesDynamicAlpha``):
        by ``int(admitted + deadline - now)`` in milliseconds, ties in priority order
        (with a ``step``, ``now`` is the start of the step that ended at a departure),
        where a coflow's deadline is its isolation time (its full coflow's largest port
        load over coflowsim's ``RACK_BYTES_PER_SEC`` = 2^27 bytes, times 1,000) times
        ``1 + U`` with ``U`` drawn from ``java.util.Random(17)``, one per coflow in
        release order (``Simulator.mergeTasksByRack``, ``Job.calcAlphaDeadline``).
        """
        adm = view.coflow_admitted
        if self.params.backfill != "coflowsim":
            return sorted(range(len(order)), key=lambda i: (adm[order[i].k], order[i].k))
        if self._deadline_ms is None:
            self._deadline_ms = coflowsim_deadlines(_peak_loads(view), view.coflow_release)
        now = view.t
        if self.params.step > 0 and not view.arrived_coflows:
            # after a departure coflowsim decides with the time of the step it has just run
            now -= self.params.step
        now *= 1000.0
        dl = self._deadline_ms
        return sorted(range(len(order)),
                      key=lambda i: int(adm[order[i].k] * 1000.0 + dl[order[i].k] - now))

    def _allocate_compiled(
        self, view: SimView, order: list[_CoflowState]
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`allocate` in one compiled call (:func:`coflowopt.sim.kernels.varys.ordered_madd_rates`)."""
        p: VarysParams = self.params
        f, rem, cptr = _concat([st.flows for st in order], [st.rem for st in order])
        corder = _NONE
        if p.backfill in ("greedy", "coflowsim"):
            corder = np.array(self.refill_order(view, order), np.int64)
        mode = {"proportional": kv.BACKFILL_PROPORTIONAL, "greedy": kv.BACKFILL_GREEDY,
                "coflowsim": kv.BACKFILL_COFLOWSIM}.get(
            p.backfill, kv.BACKFILL_NONE
        )
        rates, served_now = kv.ordered_madd_rates(
            view.link_a, view.link_b, f, rem, cptr,
            np.stack([st.load for st in order]),
            np.stack([st.links_a for st in order]),  # type: ignore[misc]
            np.stack([st.links_b for st in order]),  # type: ignore[misc]
            view.capacity, mode, corder, view.links_apart, *self._work(f.size),
        )
        # as allocate: coflows that were idle and stay idle are not mentioned
        keep = [c for c, st in enumerate(order) if served_now[c] or st.k in self.served]
        self.served = {order[c].k for c in np.flatnonzero(served_now).tolist()}
        if not keep:
            return np.zeros(0, np.int64), np.zeros(0)
        if len(keep) == len(order):
            return f, rates
        return (
            np.concatenate([f[cptr[c] : cptr[c + 1]] for c in keep]),
            np.concatenate([rates[cptr[c] : cptr[c + 1]] for c in keep]),
        )

    def decide(self, view: SimView) -> Allocation:
        p: VarysParams = self.params
        if not view.active_coflows:
            self.served = set()
            self.phase, self.phase_end = "T", math.inf  # the next T-interval starts on arrival
            return Allocation()
        if p.step > 0:
            end = step_end(view.t, p.step)
            if end > view.t:  # rates stay as they are until the step ends
                return Allocation(wake=end)
        if p.starvation_period is not None:
            return self._decide_starvation(view, p)
        f, r = self.allocate(view, self.order(view))
        return Allocation(f, r)

    def _decide_starvation(self, view: SimView, p: VarysParams) -> Allocation:
        t = view.t
        T, delta = float(p.starvation_period), p.starvation_delta  # type: ignore[arg-type]
        # at once, not after the engine's 1,000 repeated wake-ups at one time
        check_time_parameter(T, "parameter starvation_period", t)
        check_time_parameter(delta, "parameter starvation_delta", t)
        sent = view.coflow_sent()
        tol = 1e-12 * max(1.0, abs(t))
        if self.phase_end == math.inf:
            self.phase, self.phase_end, self.snapshot = "T", t + T, sent.copy()
        if t >= self.phase_end - tol:
            if self.phase == "T":
                # coflows that received nothing during the T-interval: a coflow's running
                # total carries rounding (its rate is a running sum of its flows' rates, so
                # 1e-17 can stay when they all stop), so "nothing" is less than what a
                # link carries in STARVED_SLACK of the interval
                noise = STARVED_SLACK * T * float(view.capacity.max(initial=0.0))
                # (a coflow with no admitted flow left, waiting for a wave, an anchor or a
                # batch boundary, has nothing to be served: it is not starved)
                starved = [k for k in view.active_coflows
                           if view.num_active(k) > 0 and sent[k] <= self.snapshot[k] + noise]
                if starved:
                    self.phase, self.phase_end = "delta", t + delta
                    f = np.concatenate([view.flows_of(k) for k in starved])
                    x, gamma = madd_flows(view, f, view.remaining(f), view.capacity.astype(float))
                    if not (math.isfinite(gamma) and gamma > 0):
                        x = np.zeros(f.size)
                    waiting = set(starved)
                    others = [view.flows_of(k) for k in view.active_coflows if k not in waiting]
                    o = np.concatenate(others) if others else np.zeros(0, np.int64)
                    self.served = set(starved)
                    return Allocation(
                        np.concatenate([f, o]), np.concatenate([x, np.zeros(o.size)]),
                        self.phase_end,
                    )
            self.phase, self.phase_end, self.snapshot = "T", t + T, sent.copy()
            # everything may have changed during the δ-interval: tell the engine all rates
            self.served = set(view.active_coflows)
        if self.phase == "delta":
            # within the δ-interval only the starved coflows run; keep their MADD rates
            return Allocation(wake=self.phase_end)
        f, r = self.allocate(view, self.order(view))
        return Allocation(f, r, self.phase_end)


STARVED_SLACK = 1e-9
"""Starvation avoidance: a coflow sent nothing in a T-interval if it sent less than a link carries
in this fraction of it (rounding in running totals)."""


@register
class Varys(OrderedMADD):
    name = "varys"
    summary = "SEBF order + MADD rates + backfilling (clairvoyant)"

    def key(self, view: SimView, st: _CoflowState, rem: np.ndarray, load: np.ndarray) -> float:
        return float((load / view.capacity).max(initial=0.0))
