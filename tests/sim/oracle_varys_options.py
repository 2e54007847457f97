"""An independent, exact event-driven simulator of ``varys``' options and of ``varys-deadline``.

Written from the docstrings of ``coflowopt/sim/policies/varys.py`` (module,
``VarysParams``, ``backfill_proportional``, ``backfill_greedy``) and
``coflowopt/sim/policies/varys_deadline.py``, ``models/simulator.md`` and the
dissertation (§5.5.3-5.5.4, Pseudocodes 1 and 2), without the
engine's, the policies' or the kernels' code, in exact rationals. Inputs are
floats read by their decimal representation, as in :mod:`.oracle`. It shares
no code with :mod:`.oracle_varys` (the defaults' oracle) either.

The big switch: link ``("u", i)`` is ingress port ``i``, ``("d", j)`` egress port ``j``.

Decisions (both policies): at coflow admissions (= releases), coflow
completions, every flow completion with ``reschedule="flow"``, the policy's
wake-ups (Varys' T/δ timers), and when admitted flows remain but none has a
positive rate (the fabric would otherwise go idle). Between decisions rates
are fixed: a finished flow's capacity stays idle. Admission order = arrival
order = (release, index).

``varys`` (:func:`simulate_varys`):

- order (SEBF): Γ = max over links of load / capacity, on the remaining data
  (``order="remaining"``) or on the full coflow (``"static"``); ascending, ties
  in admission order;
- MADD in that order on what is left of each link (Eq. 4.1 on ``Rem(.)``); a
  coflow needing a link with nothing left gets nothing; else ``r = d / Γ'``;
- backfilling: ``"proportional"``: ingress port by port (ascending), coflows in
  SEBF order, each (coflow, ingress) group grows in its ``d_ij`` ratios, a flow
  stops when its egress is full, until the ingress is full or every flow
  stopped; ``"greedy"``: flow by flow (coflows in ``greedy_order``: admission
  order by default, "flows in arrival order", as coflowsim; or priority order),
  each takes the min of its two links' spare, a link left with at most
  ``GREEDY_FULL`` of what it had before counting as full; ``"none"``;
- starvation avoidance (Pseudocode 1 lines 19-27) when ``starvation_period`` T
  is given: a T-interval starts at a decision with coflows active when none is
  running (the first admission, or after the fabric emptied: a decision that
  finds no active coflow stops the timers). At its end (a wake-up), Czero = the
  active coflows that sent nothing during it (a coflow admitted at that very
  instant included; "nothing": at most what a link carries in 1e-9 of the
  interval, the policy's documented ``STARVED_SLACK``). If Czero is empty the next T-interval starts at once;
  else, for δ (``starvation_delta``), Czero's coflows, as one coflow, get MADD
  on the full capacities (``r = d / Γ_union``, no backfilling) and every other
  coflow, new arrivals included, waits, even after Czero completed; then the
  next T-interval starts.

``varys-deadline`` (:func:`simulate_deadline`), Pseudocode 2: at every decision
the admitted coflows (arrival order) get ``r = d / (D - t)``; a coflow with a
deadline is examined once, when it arrives (simultaneous arrivals one by one in
arrival order, each against what the previous left): admitted iff its Γ on
what is left (Eq. 4.1 on ``Rem(.)``, infinite when a link it needs has
nothing left) is ``<= (D - t)(1 + 1e-12)`` (the policy's documented slack).
Then the admitted coflows are backfilled
(``backfill``, as in ``varys``, in arrival order; ``greedy`` in deadline order,
ties by arrival), then every other coflow
(rejected or without deadline) is served flow by flow in arrival order, each
flow taking the min of its two links' spare (always, whatever ``backfill``; the
greedy rule above, ``GREEDY_FULL`` included).

Both policies: flows finishing within the engine's 1e-12 simultaneity window
of an event finish together at the latest of their times, coflows released
within it are admitted then (:func:`.oracle.simultaneous`); a link with at
most ``SAT`` (1e-9) of its capacity left counts
as full for MADD and admission (Γ), and is emptied after the MADD pass and after
each proportionally backfilled group, as the engine documents (``_common.SAT``,
``backfill_proportional``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from .oracle import SAT, Link, exact, greedy_take, saturate, simultaneous, tie_key

Flow = tuple[int, int, float]  # (ingress port, egress port, size)
ZERO = Fraction(0)
ADMIT_SLACK = exact(1e-12)
"""``varys-deadline``'s documented admission rule: Γ at most the time left to the deadline
within this relative slack (a deadline of release + Γ computed in floating point)."""
STARVED_SLACK = exact(1e-9)
"""``varys``' documented rule for starvation (its ``STARVED_SLACK``): a coflow "sent nothing"
in a T-interval if it sent at most what a link carries in this fraction of it."""


@dataclass
class Fabric:
    """The instance in rationals and the simulation state (remaining bytes per flow)."""

    cap: dict[Link, Fraction]
    release: list[Fraction]
    coflow_of: list[int]
    links: list[tuple[Link, Link]]
    size: list[Fraction]
    members: list[list[int]]
    rem: list[Fraction] = field(default_factory=list)

    @classmethod
    def build(cls, up: Sequence[float], down: Sequence[float], coflows: Sequence[tuple]) -> Fabric:
        cap = {("u", i): exact(c) for i, c in enumerate(up)}
        cap.update({("d", j): exact(c) for j, c in enumerate(down)})
        release = [exact(c[0]) for c in coflows]
        coflow_of, links, size = [], [], []
        members: list[list[int]] = [[] for _ in coflows]
        for k, c in enumerate(coflows):
            for s, d, z in c[1]:
                members[k].append(len(size))
                coflow_of.append(k)
                links.append((("u", s), ("d", d)))
                size.append(exact(z))
        return cls(cap, release, coflow_of, links, size, members, list(size))

    def arrival_order(self, ks: list[int]) -> list[int]:
        return sorted(ks, key=lambda k: (self.release[k], k))

    def live(self, k: int) -> list[int]:
        return [f for f in self.members[k] if self.rem[f] > 0]

    def load(self, flows: list[int], amount: Sequence[Fraction]) -> dict[Link, Fraction]:
        out: dict[Link, Fraction] = {}
        for f in flows:
            for lk in self.links[f]:
                out[lk] = out.get(lk, ZERO) + amount[f]
        return out

    def gamma(
        self, flows: list[int], amount: Sequence[Fraction], left: dict[Link, Fraction]
    ) -> Fraction | None:
        """Eq. 4.1 on ``left``: max over links of load / what is left; None when a needed link is empty."""
        load = self.load(flows, amount)
        if any(self.full(left, lk) for lk in load):
            return None
        return max(v / left[lk] for lk, v in load.items())

    def full(self, left: dict[Link, Fraction], lk: Link) -> bool:
        """The engine's documented rule (``SAT``): at most 1e-9 of the capacity left is full."""
        return left[lk] <= SAT * self.cap[lk]

    def madd(
        self, flows: list[int], tau: Fraction, rate: dict[int, Fraction], left: dict[Link, Fraction]
    ) -> None:
        """``r_f = rem_f / tau`` for ``flows``, taken from ``left``."""
        for f in flows:
            r = self.rem[f] / tau
            rate[f] = rate.get(f, ZERO) + r
            for lk in self.links[f]:
                left[lk] -= r

    def backfill_proportional(
        self, coflows: list[int], rate: dict[int, Fraction], left: dict[Link, Fraction]
    ) -> None:
        """Each (coflow, ingress) group, ingress by ingress, grows in its ``rem`` ratios."""
        ingresses = sorted({lk[1] for lk in self.cap if lk[0] == "u"})
        for port in ingresses:
            for k in coflows:
                group = [f for f in self.live(k) if self.links[f][0] == ("u", port)]
                while True:
                    group = [f for f in group if all(left[lk] > 0 for lk in self.links[f])]
                    if not group:
                        break
                    load = self.load(group, self.rem)
                    theta = min(left[lk] / v for lk, v in load.items())
                    for f in group:
                        rate[f] = rate.get(f, ZERO) + theta * self.rem[f]
                    for lk, v in load.items():
                        left[lk] -= theta * v
                saturate(left, self.cap)

    def greedy(self, coflows: list[int], rate: dict[int, Fraction], left: dict[Link, Fraction]) -> None:
        """Flow by flow (coflows in the given order, flows by index): min of the two links' spare."""
        for k in coflows:
            for f in self.live(k):
                x = min(left[lk] for lk in self.links[f])
                if x > 0:
                    rate[f] = rate.get(f, ZERO) + x
                    greedy_take(left, self.links[f], x)  # GREEDY_FULL: the engine's greedy rule


class Policy:
    """What :func:`run` asks: rates (and a wake-up time) at each decision."""

    reschedule = "coflow"

    def decide(self, fab: Fabric, t: Fraction, active: list[int], new: list[int]) -> tuple[
        dict[int, Fraction], Fraction | None
    ]:
        raise NotImplementedError

    def served(self, fab: Fabric, rate: dict[int, Fraction], dt: Fraction) -> None:
        """Called after each stretch of positive length ``dt`` with the rates it ran at."""


def run(fab: Fabric, policy: Policy) -> list[Fraction]:
    """Exact completion times of every coflow under ``policy``."""
    m = len(fab.members)
    finish: list[Fraction | None] = [None] * m
    admitted = [False] * m
    t = min(fab.release)
    due = t  # coflows released by this are admitted (the event's window, .oracle.simultaneous)
    rate: dict[int, Fraction] = {}
    wake: Fraction | None = None
    decide = True
    new: list[int] = []
    while True:
        for k in range(m):  # admissions at t (released by the event's window)
            if not admitted[k] and fab.release[k] <= due:
                admitted[k] = True
                new.append(k)
                decide = True
        active = [k for k in range(m) if admitted[k] and finish[k] is None]
        if decide:
            rate, wake = policy.decide(fab, t, active, fab.arrival_order(new))
            rate = {f: x for f, x in rate.items() if x > 0}
            new = []
        steps = [r - t for k, r in enumerate(fab.release) if not admitted[k]]
        steps += [fab.rem[f] / x for f, x in rate.items()]
        if wake is not None:
            assert wake > t, (wake, t)
            steps.append(wake - t)
        if not steps:
            assert not active, f"coflows {active} stall at t = {t}"
            return [x if x is not None else Fraction(-1) for x in finish]
        due, t_new = simultaneous(t + min(steps), [t + fab.rem[f] / x for f, x in rate.items()])
        dt = t_new - t
        for f, x in rate.items():
            fab.rem[f] = ZERO if t + fab.rem[f] / x <= due else fab.rem[f] - x * dt
        policy.served(fab, rate, dt)
        t = t_new
        flow_done = [f for f in rate if fab.rem[f] == 0]
        rate = {f: x for f, x in rate.items() if fab.rem[f] > 0}
        decide = False
        for k in active:
            if all(fab.rem[f] == 0 for f in fab.members[k]):
                finish[k] = t
                decide = True
        if flow_done and policy.reschedule == "flow":
            decide = True
        if wake is not None and wake <= t:  # due (within the event's window too)
            decide = True
        if not rate:  # the fabric would go idle
            decide = True


class Varys(Policy):
    """SEBF + MADD + backfilling, with starvation avoidance when ``starvation_period`` is given."""

    def __init__(
        self, *, order: str = "remaining", backfill: str = "proportional", reschedule: str = "coflow",
        starvation_period: float | None = None, starvation_delta: float = 0.2,
        greedy_order: str = "admission",
    ) -> None:
        self.order, self.backfill, self.reschedule = order, backfill, reschedule
        self.greedy_order = greedy_order
        self.T = None if starvation_period is None else exact(starvation_period)
        self.delta = exact(starvation_delta)
        self.static: dict[int, Fraction] = {}
        self.mode: str | None = None  # None (no timer), "T" or "delta"
        self.t0 = ZERO  # start of the current T-interval
        self.t1 = ZERO  # end of the current δ-interval
        self.got: dict[int, Fraction] = {}  # bytes of each coflow in the current T-interval
        self.czero: list[int] = []

    def key(self, fab: Fabric, k: int) -> Fraction:
        if self.order == "static":
            return self.static[k]
        g = fab.gamma(fab.live(k), fab.rem, fab.cap)
        assert g is not None
        return g

    def served(self, fab: Fabric, rate: dict[int, Fraction], dt: Fraction) -> None:
        if self.mode == "T":
            for f, x in rate.items():
                k = fab.coflow_of[f]
                self.got[k] = self.got.get(k, ZERO) + x * dt

    def decide(self, fab, t, active, new):
        for k in new:
            self.static[k] = fab.gamma(fab.members[k], fab.size, fab.cap)
        if self.T is None:
            return self.sebf(fab, active), None
        if not active:
            self.mode = None
            return {}, None
        if self.mode is None:
            self.mode, self.t0, self.got = "T", t, {}
        if self.mode == "delta" and t >= self.t1:
            self.mode, self.t0, self.got = "T", self.t1, {}
        if self.mode == "T" and t >= self.t0 + self.T:
            # the policy's documented rule: "nothing" is less than a link carries in
            # STARVED_SLACK of the interval (rounding in running totals)
            noise = STARVED_SLACK * self.T * max(fab.cap.values())
            czero = [k for k in active if self.got.get(k, ZERO) <= noise]
            if czero:
                self.mode, self.t1, self.czero = "delta", t + self.delta, czero
            else:
                self.t0, self.got = t, {}
        if self.mode == "delta":
            union = [f for k in self.czero for f in fab.live(k)]
            rate: dict[int, Fraction] = {}
            if union:
                left = dict(fab.cap)
                fab.madd(union, fab.gamma(union, fab.rem, left), rate, left)
            return rate, self.t1
        return self.sebf(fab, active), self.t0 + self.T

    def sebf(self, fab: Fabric, active: list[int]) -> dict[int, Fraction]:
        order = sorted(active, key=lambda k: (tie_key(self.key(fab, k)), fab.release[k], k))
        left = dict(fab.cap)
        rate: dict[int, Fraction] = {}
        for k in order:
            g = fab.gamma(fab.live(k), fab.rem, left)
            if g is not None:
                fab.madd(fab.live(k), g, rate, left)
        saturate(left, fab.cap)
        if self.backfill == "proportional":
            fab.backfill_proportional(order, rate, left)
        elif self.backfill == "greedy":
            fab.greedy(fab.arrival_order(active) if self.greedy_order == "admission" else order, rate, left)
        else:
            assert self.backfill == "none"
        return rate


class Deadline(Policy):
    """Admission control, minimum rates at the deadline, backfilling, then best effort."""

    def __init__(self, deadline: list[Fraction | None], *, backfill: str = "proportional",
                 reschedule: str = "coflow") -> None:
        self.deadline, self.backfill, self.reschedule = deadline, backfill, reschedule
        self.admitted: list[int] = []  # in arrival order

    def decide(self, fab, t, active, new):
        left = dict(fab.cap)
        rate: dict[int, Fraction] = {}
        adm = [k for k in self.admitted if k in active]
        for k in adm:
            fab.madd(fab.live(k), self.deadline[k] - t, rate, left)
        for k in new:
            dl = self.deadline[k]
            if dl is None or k not in active:
                continue
            g = fab.gamma(fab.live(k), fab.rem, left)
            if g is not None and g <= (dl - t) * (1 + ADMIT_SLACK):
                self.admitted.append(k)
                adm.append(k)
                fab.madd(fab.live(k), dl - t, rate, left)
        saturate(left, fab.cap)
        if self.backfill == "proportional":
            fab.backfill_proportional(adm, rate, left)
        elif self.backfill == "greedy":  # earliest deadline first (coflowsim's refill)
            fab.greedy(sorted(adm, key=lambda k: self.deadline[k]), rate, left)
        else:
            assert self.backfill == "none"
        fab.greedy([k for k in fab.arrival_order(active) if k not in adm], rate, left)
        return rate, None


def simulate_varys(up: Sequence[float], down: Sequence[float], coflows: Sequence[tuple[float, list[Flow]]],
                   **params) -> list[Fraction]:
    """Exact completion times of ``varys`` with ``params`` on ``(release, [(src, dst, size), ...])``."""
    return run(Fabric.build(up, down, coflows), Varys(**params))


@dataclass(frozen=True)
class DeadlineOutcome:
    completion: list[Fraction]
    admitted: list[bool]
    met: list[bool]  # finished by the deadline (admitted or not); False without one


def simulate_deadline(up: Sequence[float], down: Sequence[float],
                      coflows: Sequence[tuple[float, list[Flow], float | None]], **params) -> DeadlineOutcome:
    """``varys-deadline`` on ``(release, [(src, dst, size), ...], deadline or None)``."""
    fab = Fabric.build(up, down, coflows)
    deadline = [None if c[2] is None else exact(c[2]) for c in coflows]
    pol = Deadline(deadline, **params)
    done = run(fab, pol)
    admitted = [k in pol.admitted for k in range(len(coflows))]
    met = [d is not None and c <= d for c, d in zip(done, deadline, strict=True)]
    return DeadlineOutcome(done, admitted, met)
