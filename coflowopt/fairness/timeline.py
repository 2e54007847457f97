"""Fairness along a simulated run: progress, isolation guarantee and utilization over time
(the dissertation's §7.7.3 metrics, measured on every interval of a recorded schedule;
drawn by :func:`coflowopt.plots.fairness_figure`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ..instance import Instance
from ..schedule import Schedule, check_schedule_of, schedule_of
from .allocation import progress
from .problem import FairnessProblem, correlation_vectors

__all__ = ["FairnessTimeline", "fairness_timeline"]


@dataclass(frozen=True, slots=True)
class FairnessTimeline:
    """How fair and how full a schedule is over time (the dissertation's §7.7.3 metrics,
    measured along a run instead of on one snapshot).

    Over each interval ``[times[j], times[j+1])`` rates are constant; a coflow is active
    there when it has a released flow with bytes left at ``times[j]``. Its correlation
    vector is that of its remaining bytes (MADD's view, as the simulator's ``hug``,
    ``drf`` and ``psp`` policies build them) and its allocation is what its flows use of
    each link, so ``progress[j, k]`` is :func:`coflowopt.fairness.progress` of the two.
    """

    times: npt.NDArray[np.float64]
    """``m + 1`` instants where some rate changes."""
    progress: npt.NDArray[np.float64]
    """``(m, K)``: each active coflow's progress ``P_k`` over the interval (nan: not active)."""
    isolation: npt.NDArray[np.float64]
    """``(m,)``: the isolation guarantee ``min_k P_k / w_k`` over the active coflows (nan: none)."""
    utilization: npt.NDArray[np.float64]
    """``(m,)``: the rate on all links over their total capacity."""

    def __repr__(self) -> str:
        """One line (the dataclass's own printed every array)."""
        span = f"[{self.times[0]:.6g}, {self.times[-1]:.6g}]" if self.times.size else "[]"
        return (f"FairnessTimeline(intervals={self.isolation.size}, "
                f"coflows={self.progress.shape[1] if self.progress.ndim == 2 else 0}, times={span})")

    def __post_init__(self) -> None:
        for name in ("times", "progress", "isolation", "utilization"):
            getattr(self, name).setflags(write=False)


def fairness_timeline(instance: Instance, schedule: Schedule) -> FairnessTimeline:
    """The :class:`FairnessTimeline` of a recorded schedule (``simulate(..., record=True)``).

    Each interval between rate changes costs a pass over the flows and their links: meant
    for instances of up to a few hundred coflows (a prefix of a trace), not whole traces.
    A result (of :func:`~coflowopt.sim.simulate` with ``record=True``) stands for its
    schedule.
    """
    schedule = schedule_of(schedule)
    check_schedule_of(instance, schedule)
    mine = schedule.end > schedule.start
    flow, start, end = schedule.flow[mine], schedule.start[mine], schedule.end[mine]
    rate = schedule.rate[mine]
    times = np.unique(np.concatenate([start, end]))
    m, K, F = max(times.size - 1, 0), instance.num_coflows, instance.num_flows
    first, last = np.searchsorted(times, start), np.searchsorted(times, end)
    by_first, by_last = np.argsort(first, kind="stable"), np.argsort(last, kind="stable")
    cut_first = np.searchsorted(first[by_first], np.arange(m + 1))
    cut_last = np.searchsorted(last[by_last], np.arange(m + 1))
    cap = np.asarray(instance.fabric.capacity, dtype=np.float64)
    routes = instance.routes.tocsr()
    per_coflow = sp.csr_array((np.ones(F), (instance.flow_coflow, np.arange(F))), shape=(K, F))
    size = np.asarray(instance.flow_size, dtype=np.float64)
    left = size.copy()
    now = np.zeros(F)  # each flow's rate over the current interval
    prog = np.full((m, K), np.nan)
    isolation = np.full(m, np.nan)
    util = np.zeros(m)
    for j in range(m):
        on = by_first[cut_first[j]:cut_first[j + 1]]
        off = by_last[cut_last[j]:cut_last[j + 1]]
        np.add.at(now, flow[off], -rate[off])
        np.add.at(now, flow[on], rate[on])
        util[j] = float((routes.T @ now).sum() / cap.sum())
        # a flow within rounding of its size is done: its last piece ended here
        waiting = (left > 1e-9 * size) & (instance.flow_release <= times[j])
        load = (per_coflow @ routes.multiply(np.where(waiting, left, 0.0)[:, None])).toarray()
        active = np.flatnonzero(load.max(axis=1) > 0)
        if active.size:
            use = (per_coflow @ routes.multiply(now[:, None])).toarray()[active] / cap
            truth = FairnessProblem(correlation_vectors(load[active], cap), capacity=cap,
                                    weights=instance.weight[active], exact=False)
            prog[j, active] = progress(use, truth)
            isolation[j] = float(np.min(prog[j, active] / instance.weight[active]))
        left -= now * (times[j + 1] - times[j])
    return FairnessTimeline(times, prog, isolation, util)
