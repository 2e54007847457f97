"""``fair``: per-flow max-min fairness, the TCP baseline of the Varys and Aalo papers.

Dissertation §3.2.1 and §5.7.1: "the flows between senders and receivers
experience unweighted fair sharing due to TCP". Every admitted flow gets its
max-min fair rate over all links (progressive filling), recomputed whenever
a flow arrives or completes; the policy is non-clairvoyant and
work-conserving (not so with ``rates="coflowsim"``, below).

On the big switch the policy keeps the per-pair flow counts between events
and re-rates only the flows whose rate changes (see ``_PairState``); the
rates are the same as recomputing the max-min allocation from scratch (up to
level changes below ``CHANGE_TOL`` relative, which leave rates as they are).
When compiled, the same rule runs through every flow completion in
:mod:`coflowopt.sim.kernels.pairs`, which keeps its state per link and per
pair of links rather than per flow (the reference path, ``simulate(...,
compiled=False)``, runs ``_PairState``; ``tests/sim/test_kernels_fair.py``
checks that both give the same results).

On other fabrics (multi-hop networks) the reference path solves max-min over
the active route classes at every event; compiled, the same rule runs through
flow completions in :mod:`coflowopt.sim.kernels.routes_fair`, per route class,
whose progressive filling restarts at each event from the first step the
event's weight changes can move (the steps below stay). A class's flows are
re-rated when its level moves by more than ``CHANGE_TOL`` relative (the
reference re-rates every flow whose rate changes at all: a level recomputed
from a restart differs from one from scratch by rounding only);
``tests/sim/test_fair_network_fast.py`` checks both paths agree to 1e-12 on
random spine-leaf and fat-tree instances (ECMP and spray). Recorded, the kernel
logs its classes' level changes and one tied piece per flow, the flow's class as
its level series (:class:`coflowopt.schedule.TiedPieces`), as the pair kernel does
with links. The receiver limit and ``rates="coflowsim"`` keep the reference path
there.

Option ``max_flows_per_receiver``: at most that many flows of each coflow
into the same egress port are active at once, as Hadoop's reducers fetch
from a limited number of mappers (§4.5.2 and its footnote 3: five by
default); waiting flows start in flow order as earlier ones complete. A flow
that has started keeps its place until it completes: a flow admitted later
(a later wave, or a coflow released by a dependency) with a lower index
waits behind it, as a reducer does not drop a fetch in progress. Hadoop
picks the next mapper at random (§4.5.2); flow order is the deterministic
stand-in. The default (``None``) has no limit, which is what the dissertation's
simulations use. Compiled, the kernel keeps each (coflow, egress port)'s
waiting flows and gives a freed place to the next of them at the flow
completion that frees it (:func:`coflowopt.sim.kernels.pairs.pair_admit`);
the reference path recomputes the max-min rates of the flows that hold a
place from scratch at every event. Both agree to rounding on random
instances (1e-12), on the trace's first 30 coflows (1e-12) and first 100
(every flow within 1e-9), but with a limit
the schedule amplifies rounding: each flow's start is its predecessor's
completion, and a start moved by δ moves the completion by δ times a ratio
of rates. On the trace's first 250 coflows the two paths' event times drift
from 1e-14 relative at 500 s to 1e-9 at 1,700 s, and the same instance in
units three times larger (the same schedule in exact arithmetic) moves the
mean CCT by 1e-3 in the kernel and 3e-4 in the reference, against 3e-5
between them. On the whole trace with a limit of 1 the kernel gives a mean
CCT of 258.15 s, 255.59 s in the larger units, and the reference 259.68 s.

Option ``rates="coflowsim"``: the per-flow fairness of coflowsim, the Java
simulator behind the Varys and Aalo papers' numbers (``FlowSimulator.fairShare``),
instead of max-min: each flow gets ``min(C_src / n_src, C_dst / n_dst)``, its
ports' capacities over the numbers of admitted, unfinished flows at each (one
pass; capacity a flow cannot use at its other port stays idle, so it is not
work-conserving), recomputed at every arrival and completion (coflowsim: every
8 ms step, with the counts of the step's start). On the Facebook trace as
coflowsim reads it (``--format coflowsim --port-rate 131072000``) 517 of its 526
coflows are within 1% of coflowsim's own FAIR output, all within 1% or 16 ms
(its step), mean CCT 70.590 s against 70.593 s
(``tests/sim/test_coflowsim_reference.py``). On other fabrics a flow gets the
least, over its links, of capacity over flow count. Compiled in the same kernel
(its levels are then ``cap / count`` instead of water levels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import alloc
from ..engine import Allocation, SimulationError, SimView, Stretch
from ..kernels.pairs import new_pair_state, pair_admit, pair_join, pair_stretch
from ..kernels.routes_fair import new_route_state, route_join, route_stretch
from . import register
from ._base import Params, Policy, check_choice
from ._common import RouteClasses, max_min_flows

RATES = ("maxmin", "coflowsim")
"""Values of ``fair``'s ``rates`` (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class FairParams(Params):
    max_flows_per_receiver: int | None = None
    """At most this many concurrent flows per (coflow, egress port); None: no limit."""
    rates: str = "maxmin"
    """``maxmin`` (TCP, the dissertation's text) or ``coflowsim`` (its FAIR: ``min(C_src / n_src,
    C_dst / n_dst)`` per flow, one pass, not work-conserving)."""

    def __post_init__(self) -> None:
        check_choice(self.rates, "rates", RATES)
        n = self.max_flows_per_receiver
        if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1):
            raise SimulationError(f"parameter max_flows_per_receiver must be an integer >= 1, got {n!r}")


def receiver_limit(
    view: SimView, flows: np.ndarray, limit: int, started: np.ndarray | None = None
) -> np.ndarray:
    """Mask of the flows among ``flows`` that may run: the first ``limit`` per (coflow, egress).

    ``started`` (per flow of the instance): flows that run already come first,
    then the others in flow order.
    """
    key = view.flow_coflow[flows] * view.num_ports + view.flow_dst[flows]
    waiting = np.zeros(flows.size, bool) if started is None else ~started[flows]
    order = np.lexsort((flows, waiting, key))
    sk = key[order]
    start = np.r_[0, np.flatnonzero(sk[1:] != sk[:-1]) + 1]
    rank = np.arange(flows.size) - np.repeat(start, np.diff(np.r_[start, flows.size]))
    ok = np.empty(flows.size, bool)
    ok[order] = rank < limit
    return ok


class _PairState:
    """Per-flow max-min on a bipartite fabric, kept up to date between events.

    Flows are counted per (uplink, downlink) pair in a dense matrix ``W``;
    each event adjusts ``W`` for the flows that arrived or completed,
    recomputes the links' water levels (:func:`coflowopt.alloc.
    max_min_bipartite_levels`, exactly what ``alloc.max_min`` computes) and
    re-rates only the flows that arrived or cross a link whose level
    changed: a flow's max-min rate is the smaller level of its two links.
    """

    def __init__(self, view: SimView, split: int) -> None:
        L = view.num_links
        self.s = split
        self.W = np.zeros((split, L - split))
        self.cap_l = view.capacity[:split]
        self.cap_r = view.capacity[split:]
        self.lam_l = np.full(split, np.inf)
        self.lam_r = np.full(L - split, np.inf)
        self.lists_l: list[np.ndarray] = [_EMPTY] * split
        self.lists_r: list[np.ndarray] = [_EMPTY] * (L - split)

    def _count(self, view: SimView, flows: np.ndarray, sign: float) -> None:
        if flows.size:
            a = view.link_a[flows]
            b = view.link_b[flows] - self.s
            R = self.W.shape[1]
            self.W += sign * np.bincount(a * R + b, minlength=self.W.size).reshape(self.W.shape)

    def _add_lists(self, view: SimView, flows: np.ndarray) -> None:
        for links, lists in (
            (view.link_a[flows], self.lists_l),
            (view.link_b[flows] - self.s, self.lists_r),
        ):
            order = np.argsort(links, kind="stable")
            sl, sf = links[order], flows[order]
            cut = np.flatnonzero(np.diff(sl)) + 1
            for part in np.split(np.arange(sf.size), cut):
                if part.size:
                    i = int(sl[part[0]])
                    lists[i] = np.concatenate([lists[i], sf[part]]) if lists[i].size else sf[part]

    def _gather(self, view: SimView, lists: list[np.ndarray], links: np.ndarray) -> np.ndarray:
        out = []
        for i in links.tolist():
            f = lists[i]
            if f.size:
                f = f[view.is_active(f)]
                lists[i] = f  # drop completed flows for good
                out.append(f)
        return np.concatenate(out) if out else _EMPTY

    def update(self, view: SimView) -> tuple[np.ndarray, np.ndarray]:
        new = view.arrived_flows
        done = view.completed_flows
        self._count(view, new, 1.0)
        self._count(view, done, -1.0)
        np.maximum(self.W, 0.0, out=self.W)
        if new.size:
            self._add_lists(view, new)
        lam_l, lam_r = alloc.max_min_bipartite_levels(self.W, self.cap_l, self.cap_r)
        ch_l = np.flatnonzero(_changed(lam_l, self.lam_l))
        ch_r = np.flatnonzero(_changed(lam_r, self.lam_r))
        self.lam_l, self.lam_r = lam_l, lam_r
        fl = self._gather(view, self.lists_l, ch_l)
        fr = self._gather(view, self.lists_r, ch_r)
        if fr.size and ch_l.size:
            on_changed_l = np.zeros(lam_l.size, bool)
            on_changed_l[ch_l] = True
            fr = fr[~on_changed_l[view.link_a[fr]]]  # already in fl
        parts = [fl, fr]
        if new.size:
            mark_l = np.zeros(lam_l.size, bool)
            mark_l[ch_l] = True
            mark_r = np.zeros(lam_r.size, bool)
            mark_r[ch_r] = True
            fresh = new[view.is_active(new)]
            fresh = fresh[~mark_l[view.link_a[fresh]] & ~mark_r[view.link_b[fresh] - self.s]]
            parts.append(fresh)
        flows = np.concatenate(parts)
        if flows.size == 0:
            return flows, np.zeros(0)
        rates = np.minimum(lam_l[view.link_a[flows]], lam_r[view.link_b[flows] - self.s])
        return flows, np.where(np.isfinite(rates), rates, 0.0)


_EMPTY = np.zeros(0, np.int64)

CHANGE_TOL = 1e-13
"""Relative change of a link's water level below which its flows keep their rates."""


def _changed(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    both = np.isfinite(new) & np.isfinite(old)
    diff = np.zeros(new.size, bool)
    diff[both] = np.abs(new[both] - old[both]) > CHANGE_TOL * np.maximum(np.abs(old[both]), 1e-300)
    return np.where(both, diff, np.isfinite(new) != np.isfinite(old))


@register
class Fair(Policy):
    name = "fair"
    summary = "per-flow max-min fairness (TCP)"
    clairvoyant = False
    Params = FairParams

    def start(self, view: SimView) -> None:
        self.classes = RouteClasses.build(view)
        self.pairs = None
        self.kernel: tuple[object, ...] | None = None
        self.on_routes = False  # the kernel is routes_fair's (else the pair kernel's)
        self.started = np.zeros(view.num_flows, bool)  # flows that got a place (receiver limit)
        split = split_links(view)
        limit = self.params.max_flows_per_receiver
        self.one_pass = self.params.rates == "coflowsim"
        if split is not None and view.compiled:
            group = None if limit is None else receiver_groups(view)
            self.kernel = pair_kernel_state(view, split, np.ones(view.num_flows), CHANGE_TOL,
                                            group, limit or 0, one_pass=self.one_pass)
        elif split is not None and limit is None and not self.one_pass:
            self.pairs = _PairState(view, split)
        elif view.compiled and limit is None and not self.one_pass:
            self.kernel = route_kernel_state(view, self.classes, np.ones(view.num_flows),
                                             CHANGE_TOL)
            self.on_routes = self.kernel is not None

    def decide(self, view: SimView) -> Allocation:
        if self.on_routes:
            assert self.kernel is not None
            return route_kernel_stretch(view, self.kernel, self.classes)
        if self.kernel is not None:
            return pair_kernel_stretch(view, self.kernel, self.params.max_flows_per_receiver is not None)
        if self.pairs is not None:
            flows, rates = self.pairs.update(view)
            return Allocation(flows, rates)
        flows = view.active_flows()
        if flows.size == 0:
            return Allocation()
        rule = one_pass_flows if self.one_pass else max_min_flows
        limit = self.params.max_flows_per_receiver
        if limit is None:
            return Allocation(flows, rule(view, self.classes, flows, view.capacity))
        ok = receiver_limit(view, flows, limit, self.started)
        self.started[flows[ok]] = True
        rates = np.zeros(flows.size)
        rates[ok] = rule(view, self.classes, flows[ok], view.capacity)
        return Allocation(flows, rates)


def one_pass_flows(view: SimView, classes: RouteClasses, flows: np.ndarray,
                   cap: np.ndarray) -> np.ndarray:
    """coflowsim's per-flow fair share: each flow gets the least, over its links, of the
    link's capacity over the number of ``flows`` crossing it (``classes`` unused: the
    signature of :func:`._common.max_min_flows`)."""
    use = view.usage(flows)
    count = view.link_sum(flows, np.ones(flows.size))
    with np.errstate(divide="ignore"):
        level = np.where(count > 0, cap / np.maximum(count, 1.0), np.inf)
    return np.minimum.reduceat(level[use.indices], use.indptr[:-1])


def receiver_groups(view: SimView) -> np.ndarray:
    """Each flow's (coflow, egress port) as a group id ``0..G-1`` (the receiver limit's unit)."""
    key = view.flow_coflow * view.num_ports + view.flow_dst
    return np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)


def pair_kernel_state(
    view: SimView, split: int, weight: np.ndarray, change_tol: float,
    group: np.ndarray | None = None, limit: int = 0, gate: tuple[float, float] | None = None,
    *, one_pass: bool = False,
) -> tuple[object, ...]:
    """State of :func:`coflowopt.sim.kernels.pairs.pair_stretch` for this simulation.

    ``weight``: per flow; ``change_tol``: relative change of a link's level
    below which its flows keep their rates. Shared with ``wss`` and ``baraat``.
    ``group``, ``limit``: at most ``limit`` flows of a group hold a place at
    once (0: no limit). ``gate = (threshold, reach)``: FIFO gates per link with
    this heavy threshold, reached within ``reach`` relative (``baraat``). ``one_pass``:
    coflowsim's one-pass levels instead of max-min (``fair:rates=coflowsim``).
    """
    # hand back at every coflow completion: the engine releases dependent coflows then
    stop = np.ones(view.num_coflows, bool)
    gates = None if gate is None else (view.flow_coflow, view.num_coflows, *gate)
    return new_pair_state(view.link_a, view.link_b, split, view.capacity, weight, change_tol, stop,
                          group, limit, gates, one_pass)


def pair_kernel_stretch(view: SimView, state: tuple[object, ...], limited: bool = False) -> Allocation:
    """Admit the flows that arrived into the pair state; run the kernel until the next decision.

    ``limited``: the state has a limit per group (:func:`pair_kernel_state`).
    """
    new = view.arrived_flows
    if limited:
        # this also gives the places freed at the end of the last stretch
        pair_admit(new, view.t, view.link_a, view.link_b, *state)
    elif new.size:
        pair_join(new, view.t, view.link_a, view.link_b, view.sent(new), *state)
    return Allocation(stretch=Stretch(pair_stretch, view.active_flows(), state, tied=True))


def route_kernel_state(view: SimView, classes: RouteClasses, weight: np.ndarray,
                       change_tol: float, gate: tuple[float, float] | None = None,
                       ) -> tuple[object, ...] | None:
    """State of :func:`coflowopt.sim.kernels.routes_fair.route_stretch` for this simulation,
    or None where it does not apply (the caller keeps its reference path): the big switch
    (the pair kernel), no flows, a link without capacity, a route without links or with a
    coefficient that is not positive.

    ``weight``: per flow; ``change_tol``: relative change of a class's level below which
    its flows keep their rates. ``gate = (threshold, reach)``: FIFO gates per link with
    this heavy threshold, reached within ``reach`` relative (``baraat``).
    """
    u = classes.usage
    if (classes.split is not None or view.num_flows == 0 or not np.all(view.capacity > 0)
            or not np.all(u.data > 0) or not np.all(np.diff(u.indptr) > 0)):
        return None
    # hand back at every coflow completion: the engine releases dependent coflows then
    stop = np.ones(view.num_coflows, bool)
    gates = None if gate is None else (view.flow_coflow, view.num_coflows, *gate)
    return new_route_state(classes.of, u.indptr, u.indices, u.data, view.capacity, weight,
                           change_tol, stop, gates)


def route_kernel_stretch(view: SimView, state: tuple[object, ...],
                         classes: RouteClasses) -> Allocation:
    """Admit the flows that arrived into the route-class state (of ``classes``); run the
    kernel until the next decision. Recorded, a flow's tied piece runs on its class's level."""
    new = view.arrived_flows
    if new.size:
        route_join(new, view.t, view.sent(new), *state)
    return Allocation(stretch=Stretch(route_stretch, view.active_flows(), state, tied=True,
                                      series=classes.of))


def split_links(view: SimView) -> int | None:
    """The first downlink index if every flow goes from a link below it to one above it."""
    if not view.two_link or view.num_flows == 0:
        return None
    s = int(view.link_a.max()) + 1
    if int(view.link_b.min()) < s:
        return None
    return s
