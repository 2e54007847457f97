"""Evaluating priority orders for ``sum w_k C_k`` (permutation schedules), from checkpoints.

The local search (:mod:`.local_search`) and the portfolio (:mod:`.portfolio`) evaluate
many orders with :class:`OrderEvaluator`.

Cheap moves. Strict priority makes the schedule of an order's first ``p`` coflows
independent of the rest, so a move whose first changed position is ``p`` is
evaluated from the state after the first ``p`` coflows. On a uniform big switch
(every flow two links with coefficient 1, one capacity: the Facebook trace) the
state is the list of free intervals of every link (:mod:`._freelists`), kept for
the incumbent every ``stride`` positions; an evaluation starts from the checkpoint
before ``p``, stops as soon as its partial cost plus the coflows' isolation bounds
reaches the incumbent's value, and stops early with the incumbent's remaining cost
when, at a checkpoint after the move, its free lists are those of the incumbent
again from the earliest release of a flow still to come on (the rest of the schedule
is then the incumbent's: with release times a move's effect usually dies out at the
end of a busy period). Other instances are evaluated from scratch by
:func:`~coflowopt.exact.permutation.order_completion`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .._budget import now
from ..instance import Instance
from ..schedule import Schedule
from . import _freelists as fls
from .permutation import PermutationTimeout, order_completion, permutation_schedule

__all__ = ["IMPROVES", "Incumbent", "OrderEvaluator", "OutOfTime", "by_completion", "online_order"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

IMPROVES = 1e-9  # a move must lower the value by this share: rounding is no improvement


class OutOfTime(Exception):
    """The evaluator's deadline passed."""


@dataclass(slots=True)
class _Data:
    """The instance's arrays, as the free-list kernel reads them."""

    ptr: IntArray
    la: IntArray
    lb: IntArray
    frel: FloatArray
    dur: FloatArray
    w: FloatArray
    lbk: FloatArray
    cap: float
    L: int


@dataclass(slots=True)
class Incumbent:
    """An evaluated order: completion times, value and checkpoints."""

    order: IntArray
    comp: FloatArray  # by coflow
    value: float
    snaps: list  # free lists after the first c * stride coflows, c = 0, 1, ...


class OrderEvaluator:
    """Evaluates orders and moves; on the uniform big switch from checkpoints."""

    def __init__(self, inst: Instance, stride: int, deadline: float) -> None:
        self.inst = inst
        self.K = inst.num_coflows
        self.stride = stride
        self.deadline = deadline
        self.w = np.asarray(inst.weight, dtype=np.float64)
        self.evaluations = 0
        self.converged = 0
        self.first_flow = np.minimum.reduceat(inst.flow_release, inst.ptr[:-1]) if (
            inst.num_flows and np.all(np.diff(inst.ptr) > 0)) else np.asarray(inst.release)
        uni = fls.uniform_two_link(inst)
        self.data: _Data | None = None
        if uni is not None:
            la, lb, cap = uni
            self.data = _Data(
                np.ascontiguousarray(inst.ptr, dtype=np.int64), la, lb,
                np.ascontiguousarray(inst.flow_release, dtype=np.float64),
                np.ascontiguousarray(inst.flow_size, dtype=np.float64) / cap, self.w,
                np.asarray(inst.release + inst.gamma, dtype=np.float64), cap,
                int(inst.routes.shape[1]))

    def _empty(self) -> tuple[FloatArray, FloatArray, IntArray]:
        assert self.data is not None
        L = self.data.L
        return np.zeros((L, 8)), np.full((L, 8), np.inf), np.ones(L, np.int64)

    def _run(self, S, E, cnt, order, q0, q1, comp, limit, record=False, rec=None):
        d = self.data
        assert d is not None
        if rec is None:
            rec = (np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
        return fls.run_order(S, E, cnt, order, q0, q1, d.ptr, d.la, d.lb, d.frel, d.dur, d.w,
                             d.lbk, comp, limit, record, *rec)

    def full(self, order: IntArray, *, timed: bool = True) -> Incumbent:
        """An order's completion times and checkpoints (``timed``: raises
        :class:`OutOfTime` past the deadline)."""
        self.evaluations += 1
        K = self.K
        comp = np.zeros(K)
        if self.data is None:
            left = self.deadline - now() if timed else None
            if left is not None and left <= 0:
                raise OutOfTime
            try:
                comp = order_completion(self.inst, order, time_limit=left)
            except PermutationTimeout:
                raise OutOfTime from None
            return Incumbent(order, comp, float(np.dot(self.w, comp)), [])
        S, E, cnt = self._empty()
        snaps = [fls.pack(S, E, cnt)]
        for q in range(0, K, self.stride):
            if timed and now() > self.deadline:
                raise OutOfTime
            q1 = min(q + self.stride, K)
            _, _, S, E, *_ = self._run(S, E, cnt, order, q, q1, comp, math.inf)
            if q1 < K:
                snaps.append(fls.pack(S, E, cnt))
        return Incumbent(order, comp, float(np.dot(self.w, comp)), snaps)

    def move(self, inc: Incumbent, order: IntArray, p: int, end: int) -> Incumbent | None:
        """``order`` (equal to the incumbent's before position ``p`` and from ``end`` on,
        as a set of coflows) if it is better than the incumbent, else ``None``."""
        self.evaluations += 1
        K = self.K
        target = inc.value * (1 - IMPROVES)
        if self.data is None:
            left = self.deadline - now()
            if left <= 0:
                raise OutOfTime
            try:
                comp = order_completion(self.inst, order, time_limit=left)
            except PermutationTimeout:
                raise OutOfTime from None
            value = float(np.dot(self.w, comp))
            return Incumbent(order, comp, value, []) if value < target else None
        st = self.stride
        c0 = p // st
        S, E, cnt = fls.unpack(*inc.snaps[c0])
        comp = inc.comp.copy()
        wl = self.w[order] * self.data.lbk[order]
        lb_after = np.concatenate([np.cumsum(wl[::-1])[::-1], [0.0]])  # by position
        wc = self.w[inc.order] * inc.comp[inc.order]
        cost_after = np.concatenate([np.cumsum(wc[::-1])[::-1], [0.0]])
        total = float(inc.value - cost_after[c0 * st])  # the unchanged prefix
        # the earliest release of a flow of order[q:]: the lists before it no longer matter
        tmin = np.minimum.accumulate(self.first_flow[inc.order][::-1])[::-1]
        snaps = list(inc.snaps[: c0 + 1])
        q = c0 * st
        while q < K:
            if now() > self.deadline:
                raise OutOfTime
            q1 = min(q + st, K)
            done, part, S, E, *_ = self._run(S, E, cnt, order, q, q1, comp,
                                              target - total - lb_after[q1])
            total += part
            if not done:
                return None
            q = q1
            if q < K:
                fs, fe, c2 = inc.snaps[q // st]
                if q >= end and fls.same(S, E, cnt, fs, fe, c2, float(tmin[q])):
                    # the incumbent's state again: the rest of its schedule follows
                    self.converged += 1
                    rest = inc.order[q:]
                    comp[rest] = inc.comp[rest]
                    total += float(cost_after[q])
                    snaps.extend(inc.snaps[q // st:])
                    break
                snaps.append(fls.pack(S, E, cnt))
        value = float(np.dot(self.w, comp))
        return Incumbent(order, comp, value, snaps) if value < target else None

    def schedule(self, order: IntArray) -> tuple[Schedule, FloatArray]:
        """The schedule of ``order`` (no time limit: every run returns one)."""
        if self.data is None:
            return permutation_schedule(self.inst, order)
        S, E, cnt = self._empty()
        comp = np.zeros(self.K)
        rec = (np.zeros(self.inst.num_flows, np.int64), np.zeros(self.inst.num_flows),
               np.zeros(self.inst.num_flows))
        _, _, S, E, rf, rs, re, n = self._run(S, E, cnt, order, 0, self.K, comp, math.inf,
                                              True, rec)
        sched = Schedule._adopt(rf[:n].copy(), rs[:n].copy(), re[:n].copy(),
                                np.full(n, self.data.cap))
        return sched, comp


def by_completion(comp: FloatArray) -> IntArray:
    return np.lexsort((np.arange(comp.size), comp)).astype(np.int64)


def online_order(inst: Instance, policy: str, deadline: float) -> IntArray | None:
    """The order in which the simulator's ``policy`` completes the coflows, or ``None``
    when the simulation does not finish by ``deadline``."""
    from ..sim import simulate

    def progress(delivered: float) -> None:
        if delivered < 1.0 and now() > deadline:
            raise OutOfTime

    try:
        res = simulate(inst, policy, progress=progress, record=False)
    except OutOfTime:
        return None
    return by_completion(np.asarray(res.completion, dtype=np.float64))
