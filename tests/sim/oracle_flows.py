"""An independent, exact event-driven simulator of ``pfp``, ``wss`` and ``fair`` with a receiver limit.

Written from the documentation only (the module docstrings of
``coflowopt/sim/policies/pfp.py``, ``wss.py`` and ``fair.py`` with
``FairParams``' field docstring, ``models/simulator.md``) and the dissertation's
text (§3.2.2 and Fig. 3.2e per-flow prioritization,
§5.3 Fig. 5.1c/d per-flow prioritization and WSS, §4.5.2 with its footnote 3
on receivers' connection limits), without the engine's, the policies' or the
kernels' code, in exact rationals. Inputs are floats read by their decimal
representation (``Fraction(repr(x))``), as in :mod:`.oracle`.

The big switch: flow ``(src, dst, size[, delay])`` crosses uplink ``src`` and
downlink ``dst``; it is available at its coflow's release plus its delay.
Flows are numbered in coflow order, then in the order given (the instance's
global flow index). Rates are re-decided at every availability and flow
completion (and, for ``pfp``, whenever two flows' remaining sizes cross).

- ``pfp``: every available, unfinished flow in increasing order of remaining
  size; each in turn takes everything its two links still have (so lower
  priorities get what is left: work-conserving). Ties in remaining size go to
  the lower flow index, *unless* that order contradicts itself: if a tied flow
  later in the order gets a larger rate, it has less left an instant later, so
  it goes first ("at every instant the flows are taken in that order"). The
  order is therefore the fixed point of "sort by (remaining, -rate, index),
  recompute the greedy rates", started from (remaining, index). Events when a
  flow's remaining size reaches another's from above.
- ``wss``: weighted max-min fairness (progressive filling) over all available,
  unfinished flows of every coflow at once, weight = the flow's full size.
- ``fair`` with ``max_flows_per_receiver = n``: per (coflow, egress port) at
  most ``n`` flows have *started* and not finished; a started flow runs until it
  finishes; when a place is free the available waiting flow of lowest index
  starts ("waiting flows start in flow order as earlier ones complete"). The
  started flows share the fabric by (unweighted) max-min fairness; waiting
  flows get nothing. Without the option: per-flow max-min over all flows.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from .oracle import Link, exact, tie_key

Rates = dict[int, Fraction]

MAX_ORDER_ROUNDS = 1000


def bottleneck_max_min(
    flows: Sequence[int], links_of: Sequence[tuple[Link, Link]], cap: dict[Link, Fraction],
    weight: Sequence[Fraction],
) -> Rates:
    """Weighted max-min rates by bottleneck elimination.

    The link with the smallest share per unit of weight of its unfixed flows
    is a bottleneck: its flows get ``weight * share``, leave, and their rates
    come off the capacity of their other links; repeat.
    """
    rate: Rates = {}
    left = dict(cap)
    todo = set(flows)
    while todo:
        wsum: dict[Link, Fraction] = {}
        for f in todo:
            for lk in links_of[f]:
                wsum[lk] = wsum.get(lk, Fraction(0)) + weight[f]
        share = {lk: left[lk] / w for lk, w in wsum.items()}
        low = min(share.values())
        tight = {lk for lk, s in share.items() if s == low}
        fixed = sorted(f for f in todo if tight & set(links_of[f]))
        for f in fixed:
            rate[f] = weight[f] * low
            for lk in links_of[f]:
                left[lk] -= rate[f]
        todo.difference_update(fixed)
    return rate


def greedy(order: Sequence[int], links_of: Sequence[tuple[Link, Link]],
           cap: dict[Link, Fraction]) -> Rates:
    """Each flow in ``order`` takes what both its links have left."""
    left = dict(cap)
    rate: Rates = {}
    for f in order:
        x = min(left[lk] for lk in links_of[f])
        rate[f] = x
        for lk in links_of[f]:
            left[lk] -= x
    return rate


class FlowOracle:
    def __init__(
        self, up: Sequence[float], down: Sequence[float],
        coflows: Sequence[tuple[float, Sequence[tuple]]], policy: str, params: dict | None = None,
    ) -> None:
        if policy not in ("pfp", "wss", "fair"):
            raise ValueError(f"no oracle for {policy!r}")
        p = dict(params or {})
        self.limit: int | None = p.pop("max_flows_per_receiver", None) if policy == "fair" else None
        if p:
            raise ValueError(f"unknown parameters {sorted(p)}")
        self.policy = policy
        self.cap = {("u", i): exact(c) for i, c in enumerate(up)}
        self.cap.update({("d", i): exact(c) for i, c in enumerate(down)})
        self.coflow: list[int] = []
        self.links_of: list[tuple[Link, Link]] = []
        self.size: list[Fraction] = []
        self.avail: list[Fraction] = []
        for k, (release, flows) in enumerate(coflows):
            for src, dst, size, *delay in flows:
                self.coflow.append(k)
                self.links_of.append((("u", src), ("d", dst)))
                self.size.append(exact(size))
                self.avail.append(exact(release) + (exact(delay[0]) if delay else 0))
        self.num_coflows = len(coflows)
        self.started: set[int] = set()

    def run(self) -> tuple[list[Fraction], list[Fraction]]:
        """Absolute completion times of the coflows and of the flows."""
        n = len(self.size)
        rem = list(self.size)
        end: list[Fraction | None] = [None] * n
        t = Fraction(0)
        while True:
            active = [f for f in range(n) if self.avail[f] <= t and end[f] is None]
            later = [a for a in self.avail if a > t]
            if not active:
                if not later:
                    break
                t = min(later)
                continue
            rate, wake = self.decide(t, active, rem)
            load: dict[Link, Fraction] = {}
            for f in active:
                for lk in self.links_of[f]:
                    load[lk] = load.get(lk, Fraction(0)) + rate[f]
            assert all(x <= self.cap[lk] for lk, x in load.items()), "over capacity"
            steps = [a - t for a in later] + [rem[f] / rate[f] for f in active if rate[f] > 0]
            if wake is not None:
                steps.append(wake)
            if not steps:
                raise RuntimeError(f"stall at {t}: no flow runs and nothing is pending")
            dt = min(steps)
            assert dt > 0
            t += dt
            for f in active:
                rem[f] -= rate[f] * dt
                assert rem[f] >= 0
                if rem[f] == 0:
                    end[f] = t
        flow_end = [x if x is not None else Fraction(-1) for x in end]
        done = [Fraction(-1)] * self.num_coflows
        for f, k in enumerate(self.coflow):
            done[k] = max(done[k], flow_end[f])
        return done, flow_end

    def decide(self, t: Fraction, active: list[int], rem: list[Fraction]
               ) -> tuple[Rates, Fraction | None]:
        """Rates of ``active`` and the time to the next policy event (``None``: none)."""
        if self.policy == "wss":
            return bottleneck_max_min(active, self.links_of, self.cap, self.size), None
        if self.policy == "fair":
            run = self.admit(active) if self.limit is not None else active
            rate = dict.fromkeys(active, Fraction(0))
            rate.update(bottleneck_max_min(run, self.links_of, self.cap, [Fraction(1)] * len(rem)))
            return rate, None
        return self.pfp(active, rem)

    def admit(self, active: list[int]) -> list[int]:
        """The started flows: earlier ones keep running, free places go to the lowest indices."""
        limit = self.limit
        assert limit is not None
        live = set(active)
        self.started &= live
        count: dict[tuple[int, Link], int] = {}
        for f in self.started:
            key = (self.coflow[f], self.links_of[f][1])
            count[key] = count.get(key, 0) + 1
        for f in sorted(live - self.started):
            key = (self.coflow[f], self.links_of[f][1])
            if count.get(key, 0) < limit:
                self.started.add(f)
                count[key] = count.get(key, 0) + 1
        return sorted(self.started)

    def pfp(self, active: list[int], rem: list[Fraction]) -> tuple[Rates, Fraction | None]:
        order = sorted(active, key=lambda f: (tie_key(rem[f]), f))
        seen = set()
        for _ in range(MAX_ORDER_ROUNDS):
            rate = greedy(order, self.links_of, self.cap)
            new = sorted(active, key=lambda f: (tie_key(rem[f]), -rate[f], f))
            if new == order:
                break
            seen.add(tuple(order))
            if tuple(new) in seen:
                raise RuntimeError(f"pfp order cycles among ties: {new}")
            order = new
        else:
            raise RuntimeError("pfp order does not settle")
        # next instant a flow with more left catches up with one with less
        wake = None
        for a in active:
            for b in active:
                if rem[a] < rem[b] and rate[b] > rate[a]:
                    dt = (rem[b] - rem[a]) / (rate[b] - rate[a])
                    wake = dt if wake is None else min(wake, dt)
        return rate, wake


def simulate(
    up: Sequence[float], down: Sequence[float], coflows: Sequence[tuple[float, Sequence[tuple]]],
    policy: str, params: dict | None = None,
) -> tuple[list[Fraction], list[Fraction]]:
    """Exact absolute completion times ``(coflows, flows)`` of ``coflows``.

    ``coflows``: ``(release, [(src, dst, size[, delay]), ...])`` each.
    """
    return FlowOracle(up, down, coflows, policy, params).run()
