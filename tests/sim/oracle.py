"""An independent, exact event-driven simulator of ``fair``, ``aalo`` and ``mcs`` (the big switch).

Written from the model's description (``models/simulator.md``, the docstrings
of ``coflowopt/sim/policies/aalo.py``, ``_queues.py`` and ``mcs.py`` with
``MCSParams``' field docstrings, ``Coflow.width``) without the
engine's or the policies' code, in exact rational arithmetic, and without any
tolerance other than the policies' own ``SAT`` rule. The tests compare it
with :func:`coflowopt.sim.simulate` on small random instances: an oracle for
the reference path and the compiled kernels alike.

Inputs are floats converted by their decimal representation
(``Fraction(repr(x))``): the values a user meant. The engine works in binary
floating point and treats events within a relative 1e-12 as simultaneous, so
``0.7 * 3`` reaching ``2.1`` is one event on both sides.

Semantics (re-allocation at every arrival, flow completion and queue-threshold
crossing; crossing times in closed form from the current rates):

- ``fair``: per-flow max-min fairness (progressive filling) over all active flows;
- ``aalo``: queues by bytes sent (upper thresholds ``Q1 * E**i``), FIFO within a
  queue by release (ties: index), max-min within a coflow;
  ``sharing="strict"``: queue by queue, coflow by coflow, each coflow's max-min
  on what is left (a link left with at most ``SAT`` of its capacity is full);
  ``"weighted"``: up to ``MAX_ROUNDS`` rounds in which every link's spare is
  split among the queues with a flow that can still grow on it (both links above
  ``SAT``) by weight, each queue fills its shares coflow by coflow with max-min
  increments (a share at most ``SAT`` is used up), rounds stop when no flow grew
  by more than ``GROW`` of its rate; then a strict pass hands out the rest.
- ``mcs``: the same queues, FIFO, max-min and ``sharing`` (default ``"strict"``,
  weights ``K - i + 1``), with another queue rule. Width ``w`` = the number of
  flows (zero-size ones included). Width class ``i`` (1-based) = 1 + the number
  of ``Δ_j <= w`` (class ``i`` holds ``[Δ_{i-1}, Δ_i)``, the last one unbounded);
  starting queue ``p_i`` (``initial_queues[i-1]``, or ``i`` when empty), 1-based
  and capped at ``K``. Narrow (``w <= narrow_width``): demoted from queue ``i``
  when the coflow's total bytes sent reach ``θ^n_i``; wide: when its longest
  flow's bytes sent (the maximum over all its flows, finished ones included)
  exceed ``θ^w_i`` (Algorithm 2's ``>``): bytes above the threshold by more
  than a relative ``REACH`` = 1e-12, or at it (within ``REACH`` below) while
  still growing (narrow: the coflow sent at a positive rate in the interval
  that just ended and still has unfinished flows; wide: one of its unfinished
  flows at the threshold did), since growing bytes exceed it at once; bytes
  that stopped at the threshold stay. ``aalo`` demotes when the bytes reach its
  threshold (within ``REACH`` below), growing or not. Queues only move down;
  demotions repeat (a coflow moves on while the rule holds for its queue's
  threshold); the last queue, and any queue beyond the given thresholds, has
  none. Thresholds are absolute (a coflow starting in queue 2 leaves it at
  ``θ_2``). Crossing times: narrow, from the coflow's total rate; wide, from each
  running flow's own rate (the first of its flows to reach the threshold).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction

SAT = Fraction(1, 10**9)
SIMULTANEOUS = Fraction(1, 10**12)
"""The engine's documented window (``models/simulator.md``): events closer than this relative
amount are simultaneous, and flows finishing within it of the first completion complete
together at the latest of their times (sizes a few ulps apart otherwise make two events in
exact arithmetic and one in the engine). Applied by :func:`run_decisions`."""
ZERO_F = Fraction(0)
GREEDY_FULL = Fraction(1, 10**12)
"""The greedy allocation's documented rule (``coflowopt.alloc.FULL``), for the oracles of
policies that use it: after a flow takes its rate, a link left with at most this fraction
of what it had before is full (a capacity one ulp above a flow's share would otherwise let
the next flow crawl at 1e-16 until the next decision)."""
MAX_ROUNDS = 8
GROW = Fraction(1, 10**9)
REACH = Fraction(1, 10**12)
"""A threshold counts as reached when the bytes sent are within this relative amount
below it: the byte rule the policies document (``aalo.REACH_TOL``), without which a
coflow stopping one ulp short of a threshold (a flow size like 2.9999999999999996
against a threshold of 3) stays in its queue in exact arithmetic."""

Link = tuple[str, int]
Flow = tuple[int, int, float]  # (ingress port, egress port, size)


def exact(x: float) -> Fraction:
    return Fraction(repr(float(x)))


def max_min(
    flows: Sequence[int], links_of: Sequence[tuple[Link, Link]], residual: dict[Link, Fraction],
    cap: dict[Link, Fraction], sat: bool,
) -> dict[int, Fraction]:
    """Progressive filling of ``flows`` on ``residual``; links at most ``SAT`` full are full."""
    res = dict(residual)
    rate = {f: Fraction(0) for f in flows}
    frozen = {f for f in flows
              if any(res[lk] <= 0 or (sat and res[lk] <= SAT * cap[lk]) for lk in links_of[f])}
    while True:
        act = [f for f in flows if f not in frozen]
        if not act:
            return rate
        count: dict[Link, int] = {}
        for f in act:
            for lk in links_of[f]:
                count[lk] = count.get(lk, 0) + 1
        step = min(res[lk] / n for lk, n in count.items())
        for f in act:
            rate[f] += step
            for lk in links_of[f]:
                res[lk] -= step
        full = {lk for lk in count if res[lk] == 0}
        frozen.update(f for f in act if any(lk in full for lk in links_of[f]))


class Oracle:
    def __init__(
        self, up: Sequence[float], down: Sequence[float],
        coflows: Sequence[tuple[float, Sequence[Flow]]], policy: str,
        params: dict | None = None,
    ) -> None:
        self.cap: dict[Link, Fraction] = {}
        for i, c in enumerate(up):
            self.cap[("u", i)] = exact(c)
        for i, c in enumerate(down):
            self.cap[("d", i)] = exact(c)
        self.release = [exact(r) for r, _ in coflows]
        self.flows = [(k, s, d, exact(z)) for k, (_, fl) in enumerate(coflows) for s, d, z in fl]
        self.links_of = [(("u", s), ("d", d)) for _, s, d, _ in self.flows]
        self.policy = policy
        p = dict(params or {})
        if policy == "aalo":
            self.K = int(p.get("num_queues", 10))
            q1 = exact(p.get("first_threshold", 10 * 2**20))
            e = exact(p.get("multiplier", 10.0))
            self.hi = [q1 * e**i for i in range(self.K - 1)]
            self.sharing = p.get("sharing", "weighted")
            self.weight = [Fraction(self.K - i) for i in range(self.K)]
        elif policy == "mcs":
            self.K = int(p.get("num_queues", 10))
            self.sharing = p.get("sharing", "strict")
            self.weight = [Fraction(self.K - i) for i in range(self.K)]
            delta = [exact(d) for d in p.get("width_thresholds", [10.0**i for i in range(1, 10)])]
            first = list(p.get("initial_queues", ()))
            narrow_thr = [exact(x) for x in p.get("narrow_thresholds",
                                                   [10.0**i * 2**20 for i in range(1, 10)])]
            wide_thr = [exact(x) for x in p.get("wide_thresholds",
                                                 [2.0**i * 2**20 for i in range(9)])]
            self.members: list[list[int]] = [[] for _ in coflows]
            for f, (k, *_) in enumerate(self.flows):
                self.members[k].append(f)
            self.start: list[int] = []
            self.narrow: list[bool] = []
            self.thr: list[list[Fraction]] = []
            for fl in self.members:
                w = len(fl)
                cls = 1 + sum(1 for d in delta if d <= w)
                self.start.append(min(first[cls - 1] if first else cls, self.K) - 1)
                self.narrow.append(w <= int(p.get("narrow_width", 50)))
                self.thr.append(narrow_thr if self.narrow[-1] else wide_thr)

    def progress(self, k: int) -> Fraction:
        """What moves coflow ``k`` down (``aalo`` and narrow ``mcs``: bytes sent; wide: longest flow)."""
        if self.policy == "mcs" and not self.narrow[k]:
            return max((self.fsent[f] for f in self.members[k]), default=Fraction(0))
        return self.sent[k]

    def threshold(self, k: int, q: int) -> Fraction | None:
        """The threshold of coflow ``k`` in queue ``q`` (0-based), ``None`` if there is none."""
        if self.policy == "aalo":
            return self.hi[q] if q < len(self.hi) else None
        thr = self.thr[k]
        return thr[q] if q < self.K - 1 and q < len(thr) else None

    def growing(self, k: int, h: Fraction) -> bool:
        """Whether coflow ``k``'s bytes (narrow) or a flow at ``h`` (wide) were still growing."""
        live = [f for f in self.members[k] if f in self.prev]
        if self.narrow[k]:
            return sum((self.prev[f] for f in live), Fraction(0)) > 0
        return any(self.prev[f] > 0 and self.fsent[f] >= h * (1 - REACH) for f in live)

    def queue(self, k: int) -> int:
        q = self.qs.get(k, self.start[k] if self.policy == "mcs" else 0)
        x = self.progress(k)
        while (h := self.threshold(k, q)) is not None:
            if self.policy == "mcs":
                hit = x > h * (1 + REACH) or (x >= h * (1 - REACH) and self.growing(k, h))
            else:
                hit = x >= h * (1 - REACH)
            if not hit:
                break
            q += 1
        self.qs[k] = q
        return q

    def run(self) -> list[Fraction]:
        """Completion time of each coflow."""
        n, m = len(self.flows), len(self.release)
        rem = [z for *_, z in self.flows]
        self.sent = [Fraction(0)] * m
        self.fsent = [Fraction(0)] * n
        self.qs: dict[int, int] = {}  # queue of each coflow so far (they only move down)
        self.prev: dict[int, Fraction] = {}  # rate of each unfinished flow in the last interval
        left = [0] * m
        for k, *_ in self.flows:
            left[k] += 1
        done = [False] * n
        finish: list[Fraction | None] = [None] * m
        t = Fraction(0)
        while True:
            for k in range(m):
                if self.release[k] <= t and left[k] == 0 and finish[k] is None:
                    finish[k] = self.release[k]
            active = [f for f in range(n) if self.release[self.flows[f][0]] <= t and not done[f]]
            pending = [r for r in self.release if r > t]
            if not active:
                if not pending:
                    return [x if x is not None else Fraction(-1) for x in finish]
                t = min(pending)
                continue
            rate = self.allocate(active)
            load: dict[Link, Fraction] = {}
            for f in active:
                for lk in self.links_of[f]:
                    load[lk] = load.get(lk, Fraction(0)) + rate[f]
            assert all(v <= self.cap[lk] for lk, v in load.items())
            steps = [r - t for r in pending]
            steps += [rem[f] / rate[f] for f in active if rate[f] > 0]
            if self.policy in ("aalo", "mcs"):
                total = [Fraction(0)] * m
                for f in active:
                    total[self.flows[f][0]] += rate[f]
                for k in range(m):
                    h = self.threshold(k, self.queue(k))
                    if h is None:
                        continue
                    if self.policy == "mcs" and not self.narrow[k]:
                        steps += [(h - self.fsent[f]) / rate[f] for f in active
                                  if self.flows[f][0] == k and rate[f] > 0]
                    elif total[k] > 0:
                        steps.append((h - self.sent[k]) / total[k])
            if not steps:
                raise RuntimeError("no flow runs and nothing is pending")
            dt = min(steps)
            t += dt
            for f in active:
                if rate[f] > 0:
                    k = self.flows[f][0]
                    rem[f] -= rate[f] * dt
                    self.sent[k] += rate[f] * dt
                    self.fsent[f] += rate[f] * dt
                    if rem[f] == 0:
                        done[f] = True
                        left[k] -= 1
                        if left[k] == 0:
                            finish[k] = t
            self.prev = {f: rate[f] for f in active if not done[f]}

    def allocate(self, active: list[int]) -> dict[int, Fraction]:
        if self.policy == "fair":
            return max_min(active, self.links_of, self.cap, self.cap, sat=False)
        by_coflow: dict[int, list[int]] = {}
        for f in active:
            by_coflow.setdefault(self.flows[f][0], []).append(f)
        queues: list[list[list[int]]] = [[] for _ in range(self.K)]
        for k in sorted(by_coflow, key=lambda k: (self.release[k], k)):
            queues[self.queue(k)].append(by_coflow[k])
        rate = {f: Fraction(0) for f in active}
        spare = dict(self.cap)
        if self.sharing == "weighted":
            self.weighted_rounds(queues, spare, rate)
        for q in queues:  # strict priority (or the final pass)
            for fl in q:
                self.add(max_min(fl, self.links_of, spare, self.cap, sat=True), spare, rate)
        return rate

    def add(self, inc: dict[int, Fraction], spare: dict[Link, Fraction],
            rate: dict[int, Fraction]) -> None:
        for f, v in inc.items():
            rate[f] += v
            for lk in self.links_of[f]:
                spare[lk] -= v

    def weighted_rounds(self, queues: list[list[list[int]]], spare: dict[Link, Fraction],
                        rate: dict[int, Fraction]) -> None:
        for _ in range(MAX_ROUNDS):
            def grows(f: int) -> bool:
                return all(spare[lk] > SAT * self.cap[lk] for lk in self.links_of[f])

            wsum: dict[Link, Fraction] = {}
            for qi, q in enumerate(queues):
                on = {lk for fl in q for f in fl if grows(f) for lk in self.links_of[f]}
                for lk in on:
                    wsum[lk] = wsum.get(lk, Fraction(0)) + self.weight[qi]
            if not wsum:
                return
            inc: dict[int, Fraction] = {}
            for qi, q in enumerate(queues):
                share = {lk: spare[lk] * self.weight[qi] / w for lk, w in wsum.items()}
                for fl in q:
                    x = max_min([f for f in fl if grows(f)], self.links_of, share, self.cap, sat=True)
                    for f, v in x.items():
                        if v:
                            inc[f] = v
                            for lk in self.links_of[f]:
                                share[lk] -= v
            grew = any(v > GROW * (rate[f] + v) for f, v in inc.items())
            self.add(inc, spare, rate)
            if not grew:
                return


def simulate(
    up: Sequence[float], down: Sequence[float], coflows: Sequence[tuple[float, Sequence[Flow]]],
    policy: str, params: dict | None = None,
) -> list[Fraction]:
    """Exact completion times of ``coflows`` (``(release, [(src, dst, size), ...])``)."""
    return Oracle(up, down, coflows, policy, params).run()


TIE_BITS = 30


def tie_key(x: Fraction) -> Fraction:
    """``x`` rounded to nearest (ties to even) with ``TIE_BITS`` significant bits.

    The documented tie rule of the policies' priority keys (``models/simulator.md``,
    "Checks"): keys equal at 30 significant bits are ties, decided by the policy's
    tie rule.
    """
    if x == 0:
        return x
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1  # now 2**e <= a < 2**(e + 1)
    scale = Fraction(2) ** (TIE_BITS - 1 - e)
    r = Fraction(round(a * scale)) / scale
    return r if x > 0 else -r


Decide = Callable[
    [dict[Link, Fraction], list[tuple[int, int, int]], list[tuple[Fraction, int]], list[int],
     list[list[int]], dict[int, Fraction]],
    dict[int, Fraction],
]
"""A policy's decision: ``(cap, flows, order_key, active, members, rem) -> rate per flow``;
``flows[f] = (coflow, ingress, egress)``, ``order_key[k] = (release, k)``."""


def saturate(left: dict[Link, Fraction], cap: dict[Link, Fraction]) -> None:
    """The engine's documented ``SAT`` rule: a link with at most ``SAT`` of its capacity left
    is full, and keeps nothing (after a MADD pass and after each backfilled group)."""
    for lk in left:
        if left[lk] <= SAT * cap[lk]:
            left[lk] = Fraction(0)


def greedy_take(left: dict[Link, Fraction], links: Sequence[Link], x: Fraction) -> None:
    """A greedy flow takes ``x`` from each of ``links``; a link left with at most
    :data:`GREEDY_FULL` of what it had before is full (``coflowopt.alloc.FULL``)."""
    for lk in links:
        after = left[lk] - x
        left[lk] = after if after > GREEDY_FULL * left[lk] else Fraction(0)


def simultaneous(t_next: Fraction, ends: list[Fraction]) -> tuple[Fraction, Fraction]:
    """The engine's documented rule for the event at ``t_next`` (``models/simulator.md``):
    returns ``(window, t_new)``. Flows whose ``ends`` are by ``window`` (``t_next`` plus a
    relative :data:`SIMULTANEOUS`) finish together at ``t_new``, the latest of those ends;
    coflows released by ``window`` are admitted then.

    Not modelled (the strategies keep releases on a grid of 1/1000 or
    1/4 and Varys' T on a grid of 1/4, so they do not arise in the tests): releases less
    than the window apart, which the engine admits at one event and orders by index while
    the oracles order them by release; the first admissions' own window; policy timers
    due within an event's window."""
    window = t_next + SIMULTANEOUS * max(Fraction(1), abs(t_next))
    return window, max([t_next, *(e for e in ends if e <= window)])


def run_decisions(
    up: list[float], down: list[float], coflows: list[tuple[float, list]], decide: Decide,
    reschedule: str = "coflow",
) -> list[Fraction]:
    """Exact completion times when rates stay fixed between a policy's decisions.

    Decisions at coflow admissions (= releases), coflow completions, every flow
    completion with ``reschedule="flow"``, and when admitted flows remain but
    none has a positive rate; a finished flow's capacity stays idle until then.
    Flows finishing within the engine's simultaneity window end together
    (:func:`simultaneous`).
    Shared by the oracles of the policies that decide on coflow events
    (:mod:`.oracle_varys`, :mod:`.oracle_maluca`).
    """
    cap: dict[Link, Fraction] = {("u", i): exact(c) for i, c in enumerate(up)}
    cap.update({("d", i): exact(c) for i, c in enumerate(down)})
    release = [exact(r) for r, _ in coflows]
    flows = [(k, s, d) for k, (_, fl) in enumerate(coflows) for s, d, _ in fl]
    rem = {f: exact(z) for f, z in enumerate(z for _, fl in coflows for _, _, z in fl)}
    members: list[list[int]] = [[] for _ in coflows]
    for f, (k, _, _) in enumerate(flows):
        members[k].append(f)
    key = [(release[k], k) for k in range(len(coflows))]
    m = len(coflows)
    finish: list[Fraction | None] = [None] * m
    admitted = [False] * m
    t = min(release)
    rate: dict[int, Fraction] = {}

    def admit(due: Fraction) -> bool:
        """Admit the coflows released by ``due`` (an event's time plus the window)."""
        new = False
        for k in range(m):
            if not admitted[k] and release[k] <= due:
                admitted[k] = new = True
                if all(rem[f] == 0 for f in members[k]):
                    finish[k] = release[k]
        return new

    admit(t)
    event = True
    while True:
        active = [k for k in range(m) if admitted[k] and finish[k] is None]
        if event and active:
            rate = decide(cap, flows, key, active, members, rem)
        event = False
        steps = [r - t for k, r in enumerate(release) if not admitted[k]]
        steps += [rem[f] / x for f, x in rate.items() if x > 0 and rem[f] > 0]
        if not steps:
            return [x if x is not None else Fraction(-1) for x in finish]
        window, t_new = simultaneous(t + min(steps),
                                     [t + rem[f] / x for f, x in rate.items() if x > 0 and rem[f] > 0])
        for f, x in rate.items():
            if x > 0 and rem[f] > 0:
                end = t + rem[f] / x
                rem[f] = ZERO_F if end <= window else rem[f] - x * (t_new - t)
                if rem[f] == 0 and reschedule == "flow":
                    event = True
        t = t_new
        for k in active:
            if all(rem[f] == 0 for f in members[k]):
                finish[k] = t
                event = True
        event = admit(window) or event
        rate = {f: x for f, x in rate.items() if rem[f] > 0}
        if any(admitted[k] and finish[k] is None for k in range(m)) and not any(
            x > 0 for x in rate.values()
        ):
            event = True
