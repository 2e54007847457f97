"""An independent, exact simulator of the engine's admission rules, under ``fair`` and ``fifo``.

Written from ``models/simulator.md``, the docstrings of :class:`coflowopt.instance.Coflow`,
:func:`coflowopt.sim.simulate`, the engine module (``coflowopt/sim/engine.py``: its
docstring and those of ``_ceil_to``, ``SimView.coflow_admitted`` and
``SimView.active_coflows``), ``coflowopt/sim/results.py`` and the policies
``fair``, ``fifo`` and ``varys`` (docstrings only), without the engine's,
the policies' or the kernels' code, in exact rationals (inputs read by their
decimal representation, as in :mod:`.oracle`). It checks what no other
oracle covers: batch arrivals, dependencies and multi-wave coflows.

Admission (per flow; the engine's event table):

- a flow of coflow ``k`` is available at ``r_k + delay_f`` (``delay`` 0 when not
  given);
- ``starts_after``: none of the coflow's flows is admitted before all its
  predecessors completed; ``finishes_before``: only the coflow's *anchor* (its
  smallest flow, lowest index on ties, over all its flows, later waves
  included) waits for the predecessors, the other flows run alongside them;
- ``batch_interval`` ``B``: a flow is admitted at ``ceil_B(max(available,
  completion of the predecessors it waits for))``, the smallest multiple of ``B``
  (counted from time 0) at or after that time (a time on a multiple stays; so does
  one at most ``BATCH_TOL`` of an interval past it: the engine's rule, found by
  probing it and assumed by ``tests/sim/test_properties.py``, not in the model page;
  a completion one rounding error past a boundary must not wait a whole interval).
  Rounding the dependency release as well is the reading of ``simulate``'s
  "admit arrivals only at multiples of this interval": every admission falls on
  a multiple;
- events closer than a relative ``SIMULTANEOUS`` (1e-12) are one: flows finishing
  within that window of an event complete with it, at the latest of their times
  (the model page);
- a coflow's admission (``SimulationResult.admitted``, the FIFO key) is the
  admission of its first flow; a flow not yet admitted is invisible to the
  policies (no rate, not in MADD's loads, not in max-min);
- ``C_k`` is its last flow's completion; ``CCT_k = C_k - r_k``, from the release
  in the instance (waiting for a batch boundary, a wave or a predecessor counts).

Policies:

- ``fair``: per-flow max-min fairness (progressive filling, :func:`.oracle.max_min`) over
  all admitted, unfinished flows, recomputed at every admission and flow completion;
- ``fifo`` (``VarysParams`` defaults: ``backfill="proportional"``,
  ``reschedule="coflow"``): decisions at every flow admission (waves and
  anchors included), every coflow completion, and when admitted flows remain
  but none has a positive rate (the moment the last running flow ends, even with
  an admission pending: the "stall" of the model page's event table); between
  decisions rates stay fixed and a finished flow's capacity idles. At a
  decision the active coflows (with admitted, unfinished flows) are taken in
  admission order (ties: lower index). MADD in that order on the admitted,
  unfinished flows: ``Γ' = max_l load_l / left_l``, rates ``rem / Γ'``; a
  coflow that needs a full link gets nothing. Backfilling: ingress port by
  port (ascending), coflows in FIFO order within a port, each (coflow,
  ingress) group grows in the ratios of its flows' remaining bytes, a flow
  stops when one of its links is full, the others grow on. A link is full
  when what is left is at most ``SAT`` of its capacity (``_common.madd_flows``,
  ``backfill_proportional``); on these small instances only 0 is, in practice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from .oracle import SAT, Link, exact, max_min

BATCH_TOL = Fraction(1, 10**9)
SIMULTANEOUS = Fraction(1, 10**12)
"""Events closer than this, relative, are one (``models/simulator.md``): hypothesis found a
flow that ended 1e-16 s after its coflow's last decision point; a flow with 1e-10 bytes
left then stretched over its coflow's whole MADD time in exact arithmetic."""


@dataclass(frozen=True)
class Spec:
    """One coflow: release, flows ``(src, dst, size)`` or ``(src, dst, size, delay)``,
    and the indices of its ``starts_after`` and ``finishes_before`` predecessors."""

    release: float
    flows: Sequence[tuple]
    starts_after: tuple[int, ...] = ()
    finishes_before: tuple[int, ...] = ()


@dataclass
class Outcome:
    completion: list[Fraction]  # C_k
    cct: list[Fraction]  # C_k - r_k
    admitted: list[Fraction]  # first flow's admission
    flow_completion: list[Fraction]
    flow_admitted: list[Fraction]
    flow_release: list[Fraction]  # r_k + delay_f, what the mean FCT counts from
    decisions: int = field(default=0)


def ceil_to(x: Fraction, step: Fraction | None) -> Fraction:
    """The smallest multiple of ``step`` at or after ``x`` (``x`` itself without a step),
    a multiple at most ``BATCH_TOL * step`` below ``x`` included."""
    if step is None:
        return x
    return math.ceil(x / step - BATCH_TOL) * step


class Oracle:
    def __init__(self, up: Sequence[float], down: Sequence[float], coflows: Sequence[Spec],
                 policy: str, batch_interval: float | None = None) -> None:
        assert policy in ("fair", "fifo")
        self.policy = policy
        self.ports = len(up)
        self.cap: dict[Link, Fraction] = {("u", i): exact(c) for i, c in enumerate(up)}
        self.cap.update({("d", i): exact(c) for i, c in enumerate(down)})
        self.step = None if batch_interval is None else exact(batch_interval)
        self.release = [exact(c.release) for c in coflows]
        self.coflow_of: list[int] = []
        self.src: list[int] = []
        self.size: list[Fraction] = []
        self.available: list[Fraction] = []
        self.members: list[list[int]] = []
        for k, c in enumerate(coflows):
            self.members.append([])
            for row in c.flows:
                self.members[k].append(len(self.size))
                self.coflow_of.append(k)
                self.src.append(int(row[0]))
                self.size.append(exact(row[2]))
                self.available.append(self.release[k] + (exact(row[3]) if len(row) > 3 else 0))
        self.links_of = [(("u", int(row[0])), ("d", int(row[1])))
                         for c in coflows for row in c.flows]
        # the predecessors each flow waits for
        self.waits: list[tuple[int, ...]] = []
        for k, c in enumerate(coflows):
            fl = self.members[k]
            anchor = min(fl, key=lambda f: (self.size[f], f))
            for f in fl:
                self.waits.append(tuple(c.starts_after)
                                  + (tuple(c.finishes_before) if f == anchor else ()))

    # -- admission --------------------------------------------------------------
    def admission_time(self, f: int, finish: list[Fraction | None]) -> Fraction | None:
        """When flow ``f`` is admitted, ``None`` while a predecessor it waits for runs."""
        preds = [finish[j] for j in self.waits[f]]
        if any(c is None for c in preds):
            return None
        return ceil_to(max([self.available[f], *preds]), self.step)  # type: ignore[type-var]

    # -- fifo -----------------------------------------------------------------------
    def full(self, left: dict[Link, Fraction], lk: Link) -> bool:
        return left[lk] <= SAT * self.cap[lk]

    def fifo(self, active: list[int], rem: list[Fraction],
             coflow_admitted: list[Fraction | None]) -> dict[int, Fraction]:
        live: dict[int, list[int]] = {}
        for f in active:
            live.setdefault(self.coflow_of[f], []).append(f)
        order = sorted(live, key=lambda k: (coflow_admitted[k], k))
        left = dict(self.cap)
        rate = {f: Fraction(0) for f in active}
        for k in order:  # MADD
            load: dict[Link, Fraction] = {}
            for f in live[k]:
                for lk in self.links_of[f]:
                    load[lk] = load.get(lk, Fraction(0)) + rem[f]
            if any(self.full(left, lk) for lk in load):
                continue
            gamma = max(v / left[lk] for lk, v in load.items())
            for f in live[k]:
                rate[f] = rem[f] / gamma
            for lk, v in load.items():
                left[lk] -= v / gamma
        for port in range(self.ports):  # proportional backfilling
            for k in order:
                group = [f for f in live[k] if self.src[f] == port
                         and not any(self.full(left, lk) for lk in self.links_of[f])]
                while group:
                    load = {}
                    for f in group:
                        for lk in self.links_of[f]:
                            load[lk] = load.get(lk, Fraction(0)) + rem[f]
                    theta = min(left[lk] / v for lk, v in load.items())
                    for f in group:
                        rate[f] += theta * rem[f]
                    for lk, v in load.items():
                        left[lk] -= theta * v
                    group = [f for f in group if all(left[lk] > 0 for lk in self.links_of[f])]
        return rate

    # -- the run ----------------------------------------------------------------------
    def run(self) -> Outcome:
        n, m = len(self.size), len(self.release)
        rem = list(self.size)
        done = [False] * n
        f_admit: list[Fraction | None] = [None] * n
        f_fin: list[Fraction | None] = [None] * n
        finish: list[Fraction | None] = [None] * m
        c_admit: list[Fraction | None] = [None] * m
        rate: dict[int, Fraction] = {}
        t = Fraction(0)
        event = True  # a decision is due (fifo); fair decides at every event anyway
        decisions = 0
        while True:
            pending: list[Fraction] = []
            for f in range(n):
                if f_admit[f] is None and (a := self.admission_time(f, finish)) is not None:
                    if a <= t:
                        f_admit[f] = t
                        k = self.coflow_of[f]
                        if c_admit[k] is None:
                            c_admit[k] = t
                        event = True
                    else:
                        pending.append(a)
            active = [f for f in range(n) if f_admit[f] is not None and not done[f]]
            if active and (event or self.policy == "fair"
                           or not any(rate.get(f, 0) > 0 for f in active)):
                decisions += 1
                if self.policy == "fair":
                    rate = max_min(active, self.links_of, self.cap, self.cap, False)
                else:
                    rate = self.fifo(active, rem, c_admit)
                self.check(rate)
            event = False
            steps = [a - t for a in pending]
            steps += [rem[f] / rate[f] for f in active if rate.get(f, 0) > 0]
            if not steps:
                assert not active and all(x is not None for x in finish), "stuck"
                return Outcome(
                    completion=finish, cct=[c - r for c, r in zip(finish, self.release, strict=True)],
                    admitted=c_admit, flow_completion=f_fin, flow_admitted=f_admit,
                    flow_release=self.available, decisions=decisions,
                )  # type: ignore[arg-type]
            dt = min(steps)
            # the model's simultaneity rule: flows finishing within a relative SIMULTANEOUS
            # of the event complete with it, at the latest of their times
            ends = {f: t + rem[f] / rate[f] for f in active if rate.get(f, 0) > 0}
            window = t + dt + SIMULTANEOUS * max(1, t + dt)
            ending = {f for f, e in ends.items() if e <= window}
            if ending:
                dt = max(dt, max(ends[f] for f in ending) - t)
            t += dt
            for f in active:
                x = rate.get(f, Fraction(0))
                if x > 0:
                    rem[f] = Fraction(0) if f in ending else rem[f] - x * dt
                    if rem[f] == 0:
                        done[f] = True
                        f_fin[f] = t
                        rate.pop(f)
                        if self.policy == "fair":
                            event = True
            for k in range(m):
                if finish[k] is None and all(done[f] for f in self.members[k]):
                    finish[k] = t
                    event = True

    def check(self, rate: dict[int, Fraction]) -> None:
        load: dict[Link, Fraction] = {}
        for f, x in rate.items():
            assert x >= 0
            for lk in self.links_of[f]:
                load[lk] = load.get(lk, Fraction(0)) + x
        assert all(v <= self.cap[lk] for lk, v in load.items())


def simulate(up: Sequence[float], down: Sequence[float], coflows: Sequence[Spec], policy: str,
             batch_interval: float | None = None) -> Outcome:
    """Exact outcome of ``policy`` (``"fair"`` or ``"fifo"``) on ``coflows``."""
    return Oracle(up, down, coflows, policy, batch_interval).run()
