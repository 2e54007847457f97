"""An independent, exact simulator of ``fifo``, ``scf``, ``ncf``, ``tcf`` (and ``varys``) and ``baraat``.

Written from the documentation only: the module docstrings of
``coflowopt/sim/policies/{fifo,scf,ncf,tcf,baraat,varys}.py``, the docstrings
of ``backfill_proportional`` / ``backfill_greedy`` and the field docstrings
of ``VarysParams`` / ``BaraatParams``, ``models/simulator.md``, and the
dissertation (§5.5.3 with Pseudocode 1, §5.6.2, §5.7.4, §6.8.2).
It shares no code with the engine, the policies, the kernels or the other
oracles (:mod:`.oracle`, :mod:`.oracle_varys`), and computes in exact
rationals on the big switch. Inputs are floats read by their decimal
representation (``Fraction(repr(x))``), as in :mod:`.oracle`.

The ordered-MADD family (``fifo``, ``scf``, ``ncf``, ``tcf``, ``varys``):

- *decisions* at coflow admissions (= releases here), coflow completions,
  and when admitted flows remain but none has a positive rate (the fabric
  would go idle); ``reschedule="flow"`` adds every flow completion. Between
  decisions the rates are fixed; a finished flow's capacity stays idle;
- *order* of the active coflows, ascending by key, ties in admission order
  (release, then coflow index):

  ==========  ============================================  ========================
  policy      ``order="remaining"`` (default)               ``order="static"``
  ==========  ============================================  ========================
  ``fifo``    none (admission order)                        same
  ``scf``     largest remaining flow                        largest flow (length)
  ``ncf``     number of unfinished flows                    number of flows (width)
  ``tcf``     remaining bytes                               total size
  ``varys``   Γ: max over links of remaining load / cap     Γ of the full coflow
  ==========  ============================================  ========================

  computed at each decision from the data at that instant;
  ``order="coflowsim"`` (coflowsim's list): each coflow is inserted once, when
  admitted (release, then index), before the first listed coflow whose key is
  larger than its own (keys compared at 30 significant bits), and the list is
  never re-sorted. A new coflow's key is its ``static`` one, except ``ncf``'s:
  the smaller of its numbers of distinct ingress and egress ports. A listed
  coflow's key is the one it was inserted with, except ``tcf``'s: its
  remaining bytes when the new coflow is inserted;
- *MADD* (Pseudocode 1, lines 7-10): in that order each coflow's unfinished
  flows get ``remaining / Γ'``, Γ' = max over its links of its remaining load
  there over what the coflows before it left of the link; a coflow that
  needs a link with nothing left gets nothing;
- *backfilling*: ``"proportional"`` (default): ingress port by ingress port
  (ascending), coflows in the order above, each (coflow, ingress) group's
  unfinished flows grow together, each at a speed equal to its remaining
  bytes (the ``d_ij`` ratios), a flow stops when one of its links is full,
  the others grow on (weighted progressive filling on what is left);
  ``"greedy"`` (coflowsim): flows in arrival order (coflows by release, then
  index; flows by index), not in the priority order, each taking the smaller
  spare of its two links; ``"coflowsim"``: first the flows of the coflows
  MADD skipped whose links both have room share what is left, each
  ``min(left / count)`` over its two links (counts of such flows per link,
  lefts as before this step), then the greedy refill in coflowsim's order:
  by ``int(release + deadline - now)`` in milliseconds, ties in the priority
  order, a coflow's deadline being its largest port load / 2^27 * 1000 times
  ``1 + U``, ``U`` from ``java.util.Random(17)`` in release order; ``"none"``.

``baraat`` (FIFO-LM, §6.8.2): on each link the coflows with an unfinished
flow through it, first-in first-out (release, then index); a coflow is heavy
on a link once the bytes it sent through that link (its finished flows
included) reach the threshold. The coflows allowed on a link are those up to
and including the first light one (all of them when none is light); a flow
runs when its coflow is allowed on both its links; the running flows share
the fabric by per-flow max-min fairness. Re-allocation at every admission,
flow completion and heavy crossing, so the rates are a function of the
state. The default threshold is the ``heavy_percentile``-th percentile of
the coflow sizes with linear interpolation (``numpy.percentile``'s default),
computed here exactly.

Two of the engine's documented rounding rules change results, so this oracle
applies them: a link with at most ``SAT`` (1e-9) of its capacity left is full
for MADD, and is emptied after the MADD pass and after each backfilled group
(``kernels.varys.ordered_madd_rates``, ``proportional_backfill``); greedy
backfilling follows the greedy allocation's rule (``coflowopt.alloc.FULL``,
:data:`.oracle.GREEDY_FULL`): a link left with at most 1e-12 of what it had
before a flow took its rate is full. Without them a flow could crawl on such a
remainder until the next coflow event. Likewise the 1e-12 simultaneity window:
flows finishing within it of an event finish together at the latest of their
times, and coflows released within it are admitted then
(:func:`.oracle.simultaneous`; sizes a few ulps apart would otherwise make two
decisions here and one in the engine). The tie window exists to make floating
point behave like exact arithmetic, which this oracle has. Not modelled:
Varys' starvation avoidance (``starvation_period``), batches, dependencies
and multi-wave coflows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from math import floor

from .oracle import SAT, Link, exact, greedy_take, saturate, simultaneous, tie_key

Flow = tuple[int, int, float]  # (ingress port, egress port, size)
ZERO = Fraction(0)

ORDERED = ("fifo", "scf", "ncf", "tcf", "varys")
DEFAULTS: dict[str, dict] = {
    **{name: {"order": "remaining", "backfill": "proportional", "reschedule": "coflow"}
       for name in ORDERED},
    "baraat": {"heavy_threshold": None, "heavy_percentile": 80.0},
}


@dataclass
class World:
    """The fabric, the coflows and the state of their flows."""

    cap: dict[Link, Fraction]
    release: list[Fraction]
    owner: list[int]  # coflow of each flow
    links: list[tuple[Link, Link]]
    size: list[Fraction]
    members: list[list[int]] = field(default_factory=list)
    rem: list[Fraction] = field(default_factory=list)

    @classmethod
    def build(cls, up: Sequence[float], down: Sequence[float],
              coflows: Sequence[tuple[float, Sequence[Flow]]]) -> World:
        cap = {("u", i): exact(c) for i, c in enumerate(up)}
        cap |= {("d", j): exact(c) for j, c in enumerate(down)}
        owner, links, size = [], [], []
        members: list[list[int]] = []
        for k, (_, flows) in enumerate(coflows):
            members.append([])
            for s, d, z in flows:
                members[k].append(len(owner))
                owner.append(k)
                links.append((("u", s), ("d", d)))
                size.append(exact(z))
        return cls(cap, [exact(r) for r, _ in coflows], owner, links, size, members, list(size))

    def unfinished(self, k: int) -> list[int]:
        return [f for f in self.members[k] if self.rem[f] > 0]

    def link_sum(self, flows: Sequence[int], value: Callable[[int], Fraction]) -> dict[Link, Fraction]:
        out: dict[Link, Fraction] = {}
        for f in flows:
            for lk in self.links[f]:
                out[lk] = out.get(lk, ZERO) + value(f)
        return out


def fill(world: World, flows: Sequence[int], speed: Callable[[int], Fraction],
         left: dict[Link, Fraction]) -> dict[int, Fraction]:
    """Weighted progressive filling: ``flows`` grow at ``speed`` until each meets a full link.

    Uses up ``left`` in place and returns each flow's increment.
    """
    inc = {f: ZERO for f in flows}

    def room(f: int) -> bool:
        return all(left[lk] > 0 for lk in world.links[f])

    growing = [f for f in flows if speed(f) > 0 and room(f)]
    while growing:
        demand = world.link_sum(growing, speed)
        step = min(left[lk] / v for lk, v in demand.items())
        for f in growing:
            inc[f] += step * speed(f)
        for lk, v in demand.items():
            left[lk] -= step * v
        growing = [f for f in growing if room(f)]
    return inc


# --- the ordered-MADD family -------------------------------------------------------------

def order_key(world: World, policy: str, static: bool, k: int) -> Fraction:
    """Priority key of coflow ``k`` (smaller first)."""
    flows = world.members[k] if static else world.unfinished(k)
    amount = (lambda f: world.size[f]) if static else (lambda f: world.rem[f])
    if policy == "fifo":
        return ZERO
    if policy == "scf":
        return max((amount(f) for f in flows), default=ZERO)
    if policy == "ncf":
        return Fraction(len(flows))
    if policy == "tcf":
        return sum((amount(f) for f in flows), ZERO)
    if policy == "varys":
        load = world.link_sum(flows, amount)
        return max((v / world.cap[lk] for lk, v in load.items()), default=ZERO)
    raise ValueError(policy)


def coflowsim_insert(world: World, policy: str, listed: list[int], new: list[int]) -> None:
    """coflowsim's list: ``new`` coflows (in admission order) inserted into ``listed``."""
    def inserted_key(k: int) -> Fraction:
        if policy == "ncf":
            ports = [world.links[f] for f in world.members[k]]
            return Fraction(min(len({a for a, _ in ports}), len({b for _, b in ports})))
        return order_key(world, policy, True, k)

    keys = {k: inserted_key(k) for k in listed}
    for k in new:
        mine = tie_key(inserted_key(k))
        if policy == "tcf":  # coflowsim's LCF: the listed coflows' bytes left now
            keys = {j: order_key(world, policy, False, j) for j in listed}
        pos = next((i for i, j in enumerate(listed) if tie_key(keys[j]) > mine), len(listed))
        listed.insert(pos, k)
        keys[k] = inserted_key(k)


def java_doubles(seed: int, n: int) -> list[float]:
    """``java.util.Random(seed).nextDouble()``, ``n`` times (its documented 48-bit LCG)."""
    m = (1 << 48) - 1
    x = (seed ^ 0x5DEECE66D) & m
    out = []
    for _ in range(n):
        hi = 0
        for bits in (26, 27):
            x = (x * 0x5DEECE66D + 0xB) & m
            hi = (hi << bits) + (x >> (48 - bits))
        out.append(hi / 2.0**53)
    return out


def coflowsim_deadlines(world: World) -> list[Fraction]:
    """coflowsim's deadlineDuration (ms): the whole coflow's largest port load / 2^27 * 1000,
    times 1 + U, U from java.util.Random(17) drawn in release order (ties: index)."""
    m = len(world.release)
    u = java_doubles(17, m)
    mult = [Fraction(0)] * m
    for i, k in enumerate(sorted(range(m), key=lambda k: (world.release[k], k))):
        mult[k] = 1 + Fraction(u[i])
    alpha = [max(world.link_sum(world.members[k], lambda f: world.size[f]).values())
             for k in range(m)]
    return [alpha[k] / 2**27 * 1000 * mult[k] for k in range(m)]


def allocate_ordered(world: World, policy: str, params: dict, active: list[int],
                     now: Fraction = ZERO, listed: list[int] | None = None) -> dict[int, Fraction]:
    """One decision at time ``now``: order (coflowsim's ``listed`` with ``order="coflowsim"``),
    MADD in that order on what is left, backfilling."""
    static = params["order"] == "static"
    if listed is not None:
        ranked = [k for k in listed if k in active]
    else:
        ranked = sorted(active, key=lambda k: (tie_key(order_key(world, policy, static, k)),
                                               world.release[k], k))
    left = dict(world.cap)
    rate: dict[int, Fraction] = {}
    skipped = []
    for k in ranked:
        flows = world.unfinished(k)
        load = world.link_sum(flows, lambda f: world.rem[f])
        if any(left[lk] <= SAT * world.cap[lk] for lk in load):
            skipped.append(k)
            continue
        gamma = max(v / left[lk] for lk, v in load.items())
        for f in flows:
            rate[f] = world.rem[f] / gamma
        for lk, v in load.items():
            left[lk] -= v / gamma
    saturate(left, world.cap)
    if params["backfill"] == "proportional":
        for port in sorted(lk for lk in world.cap if lk[0] == "u"):
            for k in ranked:
                group = [f for f in world.unfinished(k) if world.links[f][0] == port]
                for f, v in fill(world, group, lambda f: world.rem[f], left).items():
                    rate[f] = rate.get(f, ZERO) + v
                saturate(left, world.cap)
    elif params["backfill"] in ("greedy", "coflowsim"):
        if params["backfill"] == "coflowsim":
            # coflowsim's updateRatesFairShare: the skipped coflows' flows with room on both
            # links, counted per link; each takes min(left / count) of the lefts before it
            room = [f for k in skipped for f in world.unfinished(k)
                    if all(left[lk] > 0 for lk in world.links[f])]
            count: dict[Link, int] = {}
            for f in room:
                for lk in world.links[f]:
                    count[lk] = count.get(lk, 0) + 1
            share = {f: min(left[lk] / count[lk] for lk in world.links[f]) for f in room}
            for f, v in share.items():
                rate[f] = rate.get(f, ZERO) + v
                for lk in world.links[f]:
                    left[lk] -= v
            saturate(left, world.cap)
        if params["backfill"] == "coflowsim":
            # coflowsim's "EDF": int(admission + deadline - now) in ms, ties in priority order
            dl = coflowsim_deadlines(world)
            refill = sorted(ranked, key=lambda k: int(world.release[k] * 1000 + dl[k] - now * 1000))
        else:  # coflowsim's refill order without its deadlines: arrival order
            refill = sorted(active, key=lambda k: (world.release[k], k))
        for k in refill:
            for f in world.unfinished(k):
                take = min(left[lk] for lk in world.links[f])
                if take > 0:
                    rate[f] = rate.get(f, ZERO) + take
                    greedy_take(left, world.links[f], take)  # the greedy rule (docstring)
    elif params["backfill"] != "none":
        raise ValueError(params["backfill"])
    return {f: v for f, v in rate.items() if v > 0}


def run_ordered(world: World, policy: str, params: dict) -> list[Fraction]:
    m = len(world.release)
    finish: list[Fraction | None] = [None] * m
    admitted = [False] * m
    rate: dict[int, Fraction] = {}
    t = min(world.release)
    decide = True
    due = t  # coflows released by this are admitted (the event's window, :func:`.oracle.simultaneous`)
    listed: list[int] | None = [] if params["order"] == "coflowsim" else None
    while True:
        new = []
        for k in range(m):
            if not admitted[k] and world.release[k] <= due:  # flow sizes are positive
                admitted[k] = decide = True
                new.append(k)
        active = [k for k in range(m) if admitted[k] and finish[k] is None]
        if listed is not None:
            listed[:] = [k for k in listed if finish[k] is None]
            coflowsim_insert(world, policy, listed, sorted(new, key=lambda k: (world.release[k], k)))
        if decide and active:
            rate = allocate_ordered(world, policy, params, active, t, listed)
        decide = False
        steps = [world.release[k] - t for k in range(m) if not admitted[k]]
        steps += [world.rem[f] / v for f, v in rate.items()]
        if not steps:
            assert not active, "admitted coflows left without service"
            return [x if x is not None else Fraction(-1) for x in finish]
        due, t_new = simultaneous(t + min(steps), [t + world.rem[f] / v for f, v in rate.items()])
        for f, v in rate.items():
            end = t + world.rem[f] / v
            world.rem[f] = ZERO if end <= due else world.rem[f] - v * (t_new - t)
        t = t_new
        ended = [f for f in rate if world.rem[f] == 0]
        for f in ended:
            del rate[f]
        if ended and params["reschedule"] == "flow":
            decide = True
        for k in active:
            if not world.unfinished(k):
                finish[k] = t
                decide = True
        if not rate:  # the fabric would go idle
            decide = True


# --- baraat ------------------------------------------------------------------------------

def percentile(values: Sequence[Fraction], q: Fraction) -> Fraction:
    """``numpy.percentile(values, q)`` (linear interpolation), exactly."""
    xs = sorted(values)
    h = (len(xs) - 1) * q / 100
    lo = floor(h)
    if lo + 1 >= len(xs):
        return xs[-1]
    return xs[lo] + (h - lo) * (xs[lo + 1] - xs[lo])


def run_baraat(world: World, params: dict) -> list[Fraction]:
    m = len(world.release)
    if params["heavy_threshold"] is not None:
        thr = exact(params["heavy_threshold"])
    else:
        sizes = [sum((world.size[f] for f in world.members[k]), ZERO) for k in range(m)]
        thr = percentile(sizes, exact(params["heavy_percentile"]))
    sent: dict[tuple[int, Link], Fraction] = {}  # bytes coflow k sent through link l
    finish: list[Fraction | None] = [None] * m
    fifo = sorted(range(m), key=lambda k: (world.release[k], k))
    t = min(world.release)
    while True:
        admitted = [k for k in fifo if world.release[k] <= t]
        pending = [world.release[k] - t for k in range(m) if world.release[k] > t]
        live = [f for k in admitted for f in world.unfinished(k)]
        if not live:
            if not pending:
                return [x if x is not None else Fraction(-1) for x in finish]
            t += min(pending)
            continue
        allowed: dict[Link, set[int]] = {}
        for lk in world.cap:
            here = [k for k in admitted if any(lk in world.links[f] for f in world.unfinished(k))]
            light = [i for i, k in enumerate(here) if sent.get((k, lk), ZERO) < thr]
            allowed[lk] = set(here[: light[0] + 1] if light else here)
        running = [f for f in live if all(world.owner[f] in allowed[lk] for lk in world.links[f])]
        rate = fill(world, running, lambda f: Fraction(1), dict(world.cap))
        rate = {f: v for f, v in rate.items() if v > 0}
        through: dict[tuple[int, Link], Fraction] = {}
        for f, v in rate.items():
            for lk in world.links[f]:
                key = (world.owner[f], lk)
                through[key] = through.get(key, ZERO) + v
        steps = pending + [world.rem[f] / v for f, v in rate.items()]
        steps += [(thr - sent.get(key, ZERO)) / v for key, v in through.items()
                  if sent.get(key, ZERO) < thr]
        if not steps:
            raise RuntimeError("baraat: flows wait and nothing is pending")
        dt = min(steps)
        t += dt
        for f, v in rate.items():
            world.rem[f] -= v * dt
        for key, v in through.items():
            sent[key] = sent.get(key, ZERO) + v * dt
        for k in admitted:
            if finish[k] is None and not world.unfinished(k):
                finish[k] = t


def simulate(
    up: Sequence[float], down: Sequence[float], coflows: Sequence[tuple[float, Sequence[Flow]]],
    policy: str, params: dict | None = None,
) -> list[Fraction]:
    """Exact completion times of ``coflows`` (``(release, [(src, dst, size), ...])``) under ``policy``."""
    unknown = set(params or {}) - set(DEFAULTS[policy])
    if unknown:
        raise ValueError(f"unknown parameters for {policy}: {sorted(unknown)}")
    full = {**DEFAULTS[policy], **(params or {})}
    world = World.build(up, down, coflows)
    if policy == "baraat":
        return run_baraat(world, full)
    return run_ordered(world, policy, full)
