"""A policy under background traffic it cannot see: what it asks for, and what the network gives.

:class:`UnderBackground` wraps any policy. The policy decides as it always does, on a view
whose capacities are what it *knows* (``knowledge``):

- ``"nominal"``: the fabric's capacities, as Varys is deployed (it estimates bandwidth
  from its NICs and sees no one else);
- ``"ideal"``: the capacity left by the background now, and a new decision whenever the
  background changes (Coflourish's "ideal scheduling framework", §II): the inelastic load
  subtracted, and each link's share taken by background flows when they compete max-min
  with every coflow flow unthrottled (a link the background fills entirely is shown with
  :data:`SEEN_FLOOR` of its capacity, so that the policy's ratios stay finite).

The network then enforces the true capacities: the rates the policy asks for are caps,
and the capacity each link has left after the inelastic background is shared max-min
among the capped coflow flows and the (uncapped) background flows. Where the caps fit,
every coflow flow gets exactly what it asked for (caps that exceed a link's capacity by
rounding alone, :data:`~coflowopt.sim.kernels.capped.FIT`, fit it). A priority order is
turned into the greedy rates on the capacities the policy knows, then capped the same way.
The rates are recomputed at every event: arrivals and completions of coflow flows and of
background flows, the breakpoints of a background load, and the policy's own wake-ups;
the policy is asked again only where it would be without a background (and, ``ideal``,
at every change of the background).
On multi-hop fabrics the sharing is compiled (:mod:`coflowopt.sim.kernels.capped`: the
progressive filling on the links that the caps overload, step for step the one over every
flow); ``simulate(..., compiled=False)`` runs the max-min over every flow.

A policy that builds its own estimate (``coflourish``) declares a
:class:`~coflowopt.fabric.feedback.SwitchFeedback`: the network then keeps, on every link,
the congestion register of Coflourish's ESTCONG (Algorithm 1, a discontinuing rate
estimator), and reports it with each link's load every feedback period
(:class:`~coflowopt.fabric.feedback.FeedbackReport`, ``view.feedback``). Such a policy
runs under this wrapper even without background (``simulate`` wraps it), and its rates
of ``inf`` leave flows unscheduled. The registers count the
traffic the policy does not schedule: the background and the flows it leaves uncapped
(requests of ``inf``). That is what switches that count every packet report once the
scheduler takes out its own flows' share (the register is linear in the traffic, and the
scheduler knows what its flows sent), and it is the bandwidth the ideal framework is
shown.

The wrapped policy runs its reference path (no compiled stretch kernel: those run a rule
through flow completions by themselves, which the network's sharing would change), and
sees the rates and bytes the network actually gave. The background's load on every link
over time is recorded (:class:`LinkLoad`) so that :func:`coflowopt.check_feasible` can
verify coflows plus background against every link's capacity.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ..alloc import greedy, max_min
from ..errors import InputError
from ..fabric.background import Background, poisson_routes
from ..fabric.feedback import FeedbackReport, SwitchFeedback, dre_advance
from ..schedule import LinkLoad
from .engine import Allocation, Engine, PolicyError, SimView, joined, time_resolution
from .kernels.capped import FIT, capped_share
from .policies._base import NoParams, Policy

__all__ = ["KNOWLEDGE", "SEEN_FLOOR", "UnderBackground"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

KNOWLEDGE = ("nominal", "ideal")
"""What a policy under background traffic knows of the capacities (module docstring)."""

SEEN_FLOOR = 1e-6
"""The least fraction of a link's capacity an ``ideal`` policy is shown."""

_DONE = 1e-9
"""A background flow with at most this fraction of its size left is complete."""


class _SeenView(SimView):
    """The wrapped policy's view: the engine's, with the capacities it knows and no kernels."""

    __slots__ = ("_outer",)

    def __init__(self, engine: Engine, outer: UnderBackground) -> None:
        super().__init__(engine)
        self._outer = outer
        self.clairvoyant = bool(outer.inner.clairvoyant)
        self.knows_width = bool(outer.inner.knows_width)

    @property
    def capacity(self) -> FloatArray:
        return self._outer.seen

    @property
    def compiled(self) -> bool:
        return False

    @property
    def compiled_two_link(self) -> bool:
        return False

    @property
    def woke(self) -> bool:
        return self._outer.inner_woke

    @property
    def stalled(self) -> bool:
        """True when the wrapped policy's last running flow ended with work left (or the
        engine found nothing pending), as :attr:`SimView.stalled` says for a policy alone."""
        return self._outer.inner_stalled

    @property
    def completed_flows(self) -> IntArray:
        """Flows completed since the wrapped policy's last decision."""
        return joined(self._outer.done_since)

    @property
    def feedback(self) -> FeedbackReport | None:
        """The switches' latest report (None before the first), for a policy that declares a
        :class:`SwitchFeedback`."""
        return self._outer.report


@dataclass
class _Arrivals:
    """Background flows in release order: the listed ones merged with a Poisson stream."""

    listed: tuple[FloatArray, IntArray, IntArray, FloatArray]
    stream: Iterator[tuple[FloatArray, IntArray, IntArray, FloatArray]] | None
    pos: int = 0
    block: tuple[FloatArray, IntArray, IntArray, FloatArray] | None = None
    bpos: int = 0

    def _block(self) -> tuple[FloatArray, IntArray, IntArray, FloatArray] | None:
        if self.stream is None:
            return None
        if self.block is None or self.bpos >= self.block[0].size:
            self.block, self.bpos = next(self.stream), 0
        return self.block

    def next_time(self) -> float:
        t = float(self.listed[0][self.pos]) if self.pos < self.listed[0].size else math.inf
        b = self._block()
        return min(t, float(b[0][self.bpos])) if b is not None else t

    def take(self, until: float) -> tuple[FloatArray, IntArray, IntArray, FloatArray]:
        """Every arrival at or before ``until``, in release order (listed ones first on ties)."""
        rel = self.listed[0]
        hi = int(np.searchsorted(rel, until, side="right"))
        parts = [tuple(a[self.pos:hi] for a in self.listed)]
        self.pos = max(self.pos, hi)
        while True:
            b = self._block()
            if b is None:
                break
            stop = int(np.searchsorted(b[0], until, side="right"))
            parts.append(tuple(a[self.bpos:stop] for a in b))
            if stop < b[0].size:
                self.bpos = stop
                break
            self.bpos = stop
        cat = [np.concatenate([p[i] for p in parts]) for i in range(4)]
        order = np.argsort(cat[0], kind="stable")
        return cat[0][order], cat[1][order], cat[2][order], cat[3][order]


class UnderBackground(Policy):
    """``inner`` under ``background``, knowing ``knowledge`` of it (see the module docstring)."""

    name = "under-background"
    clairvoyant = False

    def __init__(self, inner: Policy, background: Background, knowledge: str = "nominal") -> None:
        if knowledge not in KNOWLEDGE:
            raise InputError(f"knowledge must be one of {', '.join(KNOWLEDGE)}, got {knowledge!r}")
        if not isinstance(background, Background):
            raise InputError(f"background must be a Background, got {type(background).__name__}")
        super().__init__(NoParams())
        self.inner = inner
        self.background = background
        self.knowledge = knowledge
        self.on_flow_completion = True
        self.seen = np.zeros(0)
        self.inner_woke = self.inner_stalled = False
        self.done_since: list[IntArray] = []
        self.fb: SwitchFeedback | None = getattr(inner, "feedback", None)
        if self.fb is not None and knowledge != "nominal":
            raise InputError(f"policy '{inner.name}' builds its own estimate of the available "
                             f"bandwidth; knowledge '{knowledge}' does not apply to it")
        self.report: FeedbackReport | None = None

    # ------------------------------------------------------------------ set-up

    def start(self, view: SimView) -> None:
        e = view._e  # the wrapped policy's view reads the same engine
        fabric = e.instance.fabric
        self.fabric = fabric
        self.cap = np.asarray(view.capacity, dtype=np.float64)
        bg = self.background
        H = view.num_ports
        bg.check(self.cap, H, fabric)
        stream = None
        if bg.poisson is not None:
            stream = bg.poisson.arrivals(H, float(np.sum(fabric.ingress)))
        self.arrivals = _Arrivals((bg.release, bg.src, bg.dst, bg.size), stream)
        self.n_bg = 0  # background flows arrived so far (their names for ECMP)
        L = self.cap.size
        self.bg_rows = sp.csr_array((0, L))
        self.bg_csr: tuple[IntArray, IntArray, FloatArray] | None = None  # bg_rows, for the kernel
        self.net = view  # the engine's view: the network's rates go by every route
        self.compiled = bool(view.compiled)
        self.routes = e.route_csr
        self.route_len = np.diff(e.route_csr[0])
        self.bg_left = np.zeros(0)
        self.bg_size = np.zeros(0)
        self.bg_rate = np.zeros(0)
        self.bg_done = 0
        self.bg_bytes = 0.0
        self.load_prev = np.zeros(L)
        self.unseen_prev = np.zeros(L)  # load of the background and of uncapped coflow flows
        self.registers = np.zeros(L)
        self.pieces: list[tuple[IntArray, float, float, FloatArray]] = []
        self.changed = True  # the background changed since the wrapped policy last decided
        # the background runs on its own from time 0 (or its first flow, or the first
        # coflow, if earlier) until the first coflow: its inelastic load from the start, so
        # that the switches' registers and reports count it before the first decision
        self.t_prev = min(self.arrivals.next_time(), view.t, 0.0)
        # the last report made (none at the start instant itself)
        self.reported = self.fb.reports_until(self.t_prev) if self.fb is not None else 0
        self.running = False  # coflow flows were admitted at the last decision
        self._share(np.zeros(0), np.zeros(0, np.int64), self._available(self.t_prev))
        self._catch_up(view.t)
        self.req = np.zeros(view.num_flows)
        self.order: IntArray | None = None
        self.inner_wake = math.inf
        self.seen = self.cap.copy()
        self.view = _SeenView(e, self)
        self.inner.start(self.view)

    # ------------------------------------------------------------------ background flows

    def _advance(self, t: float) -> None:
        """Background flows and the record up to ``t``; completions and arrivals at ``t``."""
        dt = t - self.t_prev
        if dt > 0 and self.load_prev.any():
            on = np.flatnonzero(self.load_prev)
            last = self.pieces[-1] if self.pieces else None
            if (last is not None and last[2] == self.t_prev and np.array_equal(last[0], on)
                    and np.array_equal(last[3], self.load_prev[on])):
                # the same load as over the last piece (a constant share between changes
                # of the background's flows): one piece, not one per event and link
                self.pieces[-1] = (last[0], last[1], t, last[3])
            else:
                self.pieces.append((on, self.t_prev, t, self.load_prev[on]))
        if dt > 0 and self.fb is not None:
            self._registers(t)
        if self.bg_left.size:
            before = self.bg_left
            sent = np.minimum(self.bg_rate * dt, before) if dt > 0 else np.zeros(before.size)
            self.bg_bytes += float(sent.sum())
            self.bg_left = before - sent
            due = self.t_prev + np.divide(before, self.bg_rate,
                                          out=np.full(self.bg_rate.size, np.inf), where=self.bg_rate > 0)
            done = (self.bg_left <= _DONE * self.bg_size) | (due <= t + time_resolution(t))
            if done.any():
                keep = ~done
                self.bg_bytes += float(self.bg_left[done].sum())
                self.bg_done += int(done.sum())
                self.bg_rows = self.bg_rows[np.flatnonzero(keep)]
                self.bg_csr = None
                self.bg_left, self.bg_size = self.bg_left[keep], self.bg_size[keep]
                self.bg_rate = self.bg_rate[keep]
                self.changed = True
        rel, src, dst, size = self.arrivals.take(t + time_resolution(t))
        if rel.size:
            n0 = self.n_bg
            n = rel.size
            ids = [f"~background-{i}" for i in range(n0, n0 + n)]
            rows = sp.csr_array(poisson_routes(self.fabric, src, dst, ids=ids,
                                               ptr=np.arange(n + 1)))
            self.bg_rows = sp.vstack([self.bg_rows, rows], format="csr")
            self.bg_csr = None
            self.bg_left = np.concatenate([self.bg_left, size])
            self.bg_size = np.concatenate([self.bg_size, size])
            self.bg_rate = np.concatenate([self.bg_rate, np.zeros(n)])
            self.n_bg += n
            self.changed = True
        if self.background.times.size and self.background.next_change(self.t_prev) <= t + time_resolution(t):
            self.changed = True
        self.t_prev = t

    def _registers(self, t: float) -> None:
        """The congestion registers up to ``t``, and the report at the last feedback time
        in ``(t_prev, t]`` (the load was ``unseen_prev`` all along)."""
        fb = self.fb
        assert fb is not None
        t0, load = self.t_prev, self.unseen_prev
        m = fb.reports_until(t)
        at = min(m * fb.period, t)
        # (once each: an event at a multiple of the period that rounds below m * period
        # makes report m at the event, and the next event must not make it again)
        if m > self.reported and at > t0:
            self.reported = m
            self.registers = dre_advance(self.registers, t0, at, load, fb.alpha, fb.tick)
            self.report = FeedbackReport(at, self.registers.copy(), load.copy())
            t0 = at
        self.registers = dre_advance(self.registers, t0, t, load, fb.alpha, fb.tick)

    def _catch_up(self, t: float) -> None:
        """The background on its own up to ``t``, event by event, while no coflow flow was
        admitted (the policy is not woken for background events then)."""
        if self.running:
            return
        none = np.zeros(0, np.int64)
        while (nxt := self._next_background_event(self.t_prev)) < t - time_resolution(t):
            self._advance(nxt)
            self._share(np.zeros(0), none, self._available(nxt))

    def _next_background_event(self, t: float) -> float:
        nxt = min(self.arrivals.next_time(), self.background.next_change(t))
        run = self.bg_rate > 0
        if run.any():
            nxt = min(nxt, t + float(np.min(self.bg_left[run] / self.bg_rate[run])))
        return nxt

    # ------------------------------------------------------------------ deciding

    def _available(self, t: float) -> FloatArray:
        """Capacity left by the inelastic background at ``t``."""
        return self.cap - self.background.inelastic(t, self.cap)

    def _knows(self, view: SimView, avail: FloatArray) -> FloatArray:
        """The capacities the wrapped policy is shown."""
        if self.knowledge == "nominal":
            return self.cap
        seen = avail
        if self.bg_left.size:
            active = view.active_flows()
            _, bg_load, _ = self._shared(np.full(active.size, np.inf), active, avail, free=False)
            seen = avail - bg_load
        return np.maximum(seen, SEEN_FLOOR * self.cap)

    def decide(self, view: SimView) -> Allocation:
        t = view.t
        self._catch_up(t)
        self._advance(t)
        if view.completed_flows.size:
            self.done_since.append(view.completed_flows.copy())
        avail = self._available(t)
        self.inner_woke = self.inner_wake <= t + time_resolution(t)
        # the engine's stall rule for the wrapped policy: its last running flow ended with
        # work left. The engine cannot see it when the background's events keep it busy (a
        # Poisson background never ends), and a policy that waits for coflow completions
        # would otherwise leave its flows without a rate forever
        self.inner_stalled = bool(view.stalled or (
            view.completed_flows.size and not self._inner_runs(view)))
        due = bool(
            view.arrived_flows.size or view.completed_coflows or self.inner_stalled
            or self.inner_woke
            or (self.done_since and self.inner.on_flow_completion)
            or (self.changed and self.knowledge == "ideal")
        )
        if due:
            self.seen = self._knows(view, avail)
            alloc = self.inner.decide(self.view)
            if alloc.stretch is not None:  # pragma: no cover - the view offers no kernels
                raise PolicyError(f"policy '{self.inner.name}' returned a compiled stretch under background")
            if alloc.order is not None:
                self.order = np.asarray(alloc.order, np.int64).reshape(-1)
            else:
                self.order = None
                if alloc.flows.size:
                    self.req[np.asarray(alloc.flows, np.int64)] = alloc.rates
            self.inner_wake = alloc.wake
            self.done_since.clear()
            self.changed = False
        active = view.active_flows()
        if self.order is not None:
            on = self.order[view.is_active(self.order)]
            caps = np.zeros(view.num_flows)
            if on.size:
                caps[on] = greedy(view.usage(on), self.seen, np.arange(on.size))
            caps = caps[active]
        else:
            caps = self.req[active]
        rates = self._share(caps, active, avail)
        # while no coflow flow is admitted, background events need no decision (_catch_up)
        self.running = bool(active.size)
        wake = self.inner_wake
        if self.running:
            wake = min(wake, self._next_background_event(t))
        return Allocation(flows=active, rates=rates, wake=wake)

    def _inner_runs(self, view: SimView) -> bool:
        """Whether the wrapped policy's last decision still has an active flow running."""
        if self.order is not None:
            return bool(view.is_active(self.order).any())
        return bool(np.any(self.req[view.active_flows()] > 0))

    def _share(self, caps: FloatArray, flows: IntArray, avail: FloatArray) -> FloatArray:
        """The network's rates: the coflow flows ``flows`` (capped at ``caps``) and the
        background flows share ``avail`` max-min; returns the coflow flows' rates."""
        x, bg_load, free_load = self._shared(caps, flows, avail, free=self.fb is not None)
        n = caps.size
        self.bg_rate = x[n:]
        self.load_prev = (self.cap - avail) + bg_load
        if free_load is not None:
            self.unseen_prev = self.load_prev + free_load
        return x[:n]

    def _shared(self, caps: FloatArray, flows: IntArray, avail: FloatArray, *, free: bool
                ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """Max-min rates of ``flows`` (capped at ``caps``), then of the background flows,
        sharing ``avail``; the background flows' load on every link; with ``free``, the
        load of the flows without a cap (else None).

        Compiled (:func:`~coflowopt.sim.kernels.capped.capped_share`: the filling on the
        links the caps overload only, step for step the reference's) unless the engine
        runs its reference path (``simulate(..., compiled=False)``), or every row crosses
        two links, where :func:`coflowopt.alloc.max_min` takes the big switch's method.
        """
        n = caps.size
        bg = self.bg_rows
        if self.compiled and not (np.all(self.route_len[flows] == 2)
                                  and np.all(np.diff(bg.indptr) == 2)):
            if self.bg_csr is None:
                self.bg_csr = (bg.indptr.astype(np.int64), bg.indices.astype(np.int64),
                               bg.data.astype(np.float64))
            x, bg_load, free_load = capped_share(
                *self.routes, np.ascontiguousarray(flows, np.int64),
                np.ascontiguousarray(caps, np.float64), *self.bg_csr,
                np.ascontiguousarray(avail, np.float64))
            return x, bg_load, free_load if free else None
        usage = self.net.usage(flows)
        x = self._with_background(usage, avail, caps)
        bg_load = bg.T @ x[n:]
        if not free:
            return x, bg_load, None
        return x, bg_load, usage.T @ np.where(np.isinf(caps), x[:n], 0.0)

    def _with_background(self, usage: sp.csr_array, avail: FloatArray, caps: FloatArray) -> FloatArray:
        """Max-min rates of the coflow flows of ``usage`` (capped at ``caps``), then of the
        background flows (uncapped), sharing ``avail`` (the reference path).

        Links whose caps fit (their sum within :data:`~coflowopt.sim.kernels.capped.FIT`
        of what the link has left; never a link that a background flow or a flow without a
        cap crosses) cut no rate: they enter the filling without a capacity."""
        rows = sp.vstack([usage, self.bg_rows], format="csr")
        if not rows.shape[0]:
            return np.zeros(0)
        upper = np.concatenate([caps, np.full(self.bg_left.size, np.inf)])
        free = np.isinf(upper)
        ask = rows.T @ np.where(free, 0.0, np.maximum(upper, 0.0))
        fits = (ask <= avail * (1.0 + FIT)) & ~(rows.T @ free.astype(np.float64) > 0)
        if fits.all():
            # max-min gives every flow its cap (progressive filling freezes each at its
            # bound); a policy that plans on the true capacities asks for rates that fit
            return np.maximum(caps, 0.0)
        return max_min(rows, np.where(fits, np.inf, avail), upper=upper)

    def finish(self, view: SimView) -> dict[str, Any]:
        self._advance(view.t)
        info = dict(self.inner.finish(self.view))
        info["background"] = {
            "background": self.background.describe(),
            "knowledge": self.knowledge,
            "background_flows_arrived": self.n_bg,
            "background_flows_completed": self.bg_done,
            "background_bytes": self.bg_bytes,
        }
        if self.pieces:
            links = np.concatenate([p[0] for p in self.pieces])
            n = np.array([p[0].size for p in self.pieces])
            t0 = np.repeat([p[1] for p in self.pieces], n)
            t1 = np.repeat([p[2] for p in self.pieces], n)
            load = np.concatenate([p[3] for p in self.pieces])
        else:
            links, t0, t1, load = np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0)
        info["background_load"] = LinkLoad(links, t0, t1, load)
        return info
