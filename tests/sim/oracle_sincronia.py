"""An independent, exact event-driven simulator of ``sincronia`` (the big switch).

Written from Sincronia's definition of Bottleneck-Select-Scale-Iterate
(Agarwal et al., SIGCOMM 2018, Algorithm 1; THEORY.md, "Lower bounds") and
from the documentation (the module docstring of
``coflowopt/sim/policies/sincronia.py`` and ``SincroniaParams``, the
docstrings of ``coflowopt.orders.bssi``, ``coflowopt.alloc.greedy`` and
``SimView.active_coflows`` and ``SimView.stalled``, ``models/simulator.md``),
without the engine's, the kernels', ``alloc``'s or ``orders.bssi``'s code, in
exact rationals (the short policy module was read once in full; every rule
below is one its docstrings or the pages named state). Inputs are floats read
by their decimal representation, as in :mod:`.oracle`.

Rules:

- order (BSSI) on the active coflows, listed in admission order (release,
  then index): ``v[k, l]`` = coflow ``k``'s remaining bytes on link ``l``
  over the link's capacity, ``w`` = the coflows' weights (default 1). While
  coflows are unordered: ``b`` = the link with the largest ``sum_k v[k, b]``
  over them (ties: lowest link, uplinks 0..P-1 before downlinks 0..P-1);
  place last, among those with ``v[c, b] > 0``, the coflow minimising
  ``w_c / v[c, b]`` (ties: lowest position in the list); ``beta`` = that
  minimum; ``w_c -= beta * v[c, b]`` for every unordered ``c`` (a result within
  a relative 1e-12 of ``c``'s weight is 0, the policy's documented rule);
- the order is recomputed when a coflow arrives or departs (not at single
  flow completions, nor at a stall); with ``reorder="arrivals"`` only when a
  coflow arrives, and the order is kept through departures;
- rates: greedy order-preserving: the flows of the ordered coflows, within a
  coflow by flow index, each take ``min`` of what is left on its uplink and
  its downlink; a link left with at most ``FULL`` of what it had before a
  flow took its share counts as full;
- ``reschedule="flow"`` (default): the greedy rates are recomputed at every
  event (arrival, flow completion); ``"coflow"``: only at arrivals, coflow
  departures and stalls; in between a finished flow's capacity stays idle. A
  stall is ``stall="idle"`` (default): active flows, none with a positive rate
  ("the moment the last running flow ends", models/simulator.md), or
  ``stall="last"``: moreover no admission pending (``SimView.stalled``: "nothing
  else is pending"; what the engine does).

Exact ties decide BSSI steps where floating point may round either way; ``seen``
reports them and ``ties="high"`` breaks them the other way (see :func:`bssi`).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import TypeVar

from .oracle import Link, exact, tie_key

ZERO_WEIGHT = exact(1e-12)
"""``orders.bssi``'s documented rule: a residual weight within this share of its coflow's
weight counts as 0 (in exact arithmetic it only matters for residues that small)."""

FULL = Fraction(1, 10**12)

Flow = tuple[int, int, float]  # (ingress port, egress port, size)
L = TypeVar("L", bound=Hashable)


def bssi(v: Sequence[dict[L, Fraction]], weights: Sequence[Fraction],
         links: Sequence[L], ties: str = "low", seen: list[str] | None = None,
         ) -> tuple[list[int], Fraction]:
    """Positions of the rows of ``v`` (loads in time units) first to last, and the dual value.

    ``ties="low"`` is the documented rule (lowest link, lowest row); ``"high"`` breaks
    both kinds of ties the other way. ``seen`` collects the steps at which the rule
    decided: several coflows with the smallest ratio, or several links with the largest
    load that differ in the coflows' loads on them.
    """
    sign = 1 if ties == "low" else -1
    w = list(weights)
    unordered = list(range(len(v)))
    last_first: list[int] = []
    dual = Fraction(0)
    while unordered:
        def on(lk: L) -> list[Fraction]:
            return [v[i].get(lk, Fraction(0)) for i in unordered]

        b = max(links, key=lambda lk: (tie_key(sum(on(lk))), -sign * links.index(lk)))
        c = min((i for i in unordered if v[i].get(b, 0) > 0),
                key=lambda i: (tie_key(w[i] / v[i][b]), sign * i))
        if seen is not None:
            if any(sum(on(lk)) == sum(on(b)) and on(lk) != on(b) for lk in links):
                seen.append(f"links tied with {b!r}")
            if any(i != c and v[i].get(b, 0) > 0 and w[i] / v[i][b] == w[c] / v[c][b]
                   for i in unordered):
                seen.append(f"coflows tied with row {c}")
        beta = w[c] / v[c][b]
        dual += beta * (sum(on(b)) ** 2 + sum(x * x for x in on(b))) / 2
        for i in unordered:
            w[i] -= beta * v[i].get(b, Fraction(0))
            if abs(w[i]) <= ZERO_WEIGHT * weights[i]:
                w[i] = Fraction(0)  # the documented rule (orders.ZERO_WEIGHT)
        unordered.remove(c)
        last_first.append(c)
    return last_first[::-1], dual


def greedy(flows: Sequence[int], links_of: Sequence[tuple[Link, Link]],
           cap: dict[Link, Fraction]) -> dict[int, Fraction]:
    """Strict-priority rates: each flow in turn takes what its two links have left."""
    left = dict(cap)
    rate: dict[int, Fraction] = {}
    for f in flows:
        x = min(left[lk] for lk in links_of[f])
        rate[f] = x
        for lk in links_of[f]:
            before = left[lk]
            left[lk] = before - x
            if left[lk] <= FULL * before:
                left[lk] = Fraction(0)
    return rate


def simulate(
    up: Sequence[float], down: Sequence[float], coflows: Sequence[tuple[float, Sequence[Flow]]],
    weights: Sequence[float] | None = None, reschedule: str = "flow", stall: str = "idle",
    ties: str = "low", seen: list[str] | None = None, reorder: str = "events",
) -> list[Fraction]:
    """Exact completion times of ``coflows`` (``(release, [(src, dst, size), ...])``).

    ``stall`` (``reschedule="coflow"`` only): ``"idle"`` re-allocates as soon as no
    flow runs; ``"last"`` only when, moreover, no admission is pending. ``ties`` and
    ``seen``: see :func:`bssi`.
    """
    assert reschedule in ("flow", "coflow") and stall in ("idle", "last")
    assert reorder in ("events", "arrivals")
    assert ties in ("low", "high")
    cap: dict[Link, Fraction] = {("u", i): exact(c) for i, c in enumerate(up)}
    cap.update({("d", i): exact(c) for i, c in enumerate(down)})
    links = list(cap)  # uplinks, then downlinks: the fabric's link order
    m = len(coflows)
    release = [exact(r) for r, _ in coflows]
    weight = [exact(x) for x in weights] if weights is not None else [Fraction(1)] * m
    flows = [(k, s, d) for k, (_, fl) in enumerate(coflows) for s, d, _ in fl]
    rem = [exact(z) for _, fl in coflows for _, _, z in fl]
    links_of = [(("u", s), ("d", d)) for _, s, d in flows]
    members: list[list[int]] = [[] for _ in range(m)]
    for f, (k, _, _) in enumerate(flows):
        members[k].append(f)

    admitted = [False] * m
    finish: list[Fraction | None] = [None] * m
    t = min(release)
    order: list[int] = []
    rate: dict[int, Fraction] = {}
    while True:
        arrived = [k for k in range(m) if not admitted[k] and release[k] <= t]
        for k in arrived:
            admitted[k] = True
        departed = [k for k in range(m) if admitted[k] and finish[k] is None
                    and all(rem[f] == 0 for f in members[k])]
        for k in departed:
            finish[k] = t
        active = sorted((k for k in range(m) if admitted[k] and finish[k] is None),
                        key=lambda k: (release[k], k))
        live = [f for k in active for f in members[k] if rem[f] > 0]
        if arrived or (departed and reorder == "events"):
            v = []
            for k in active:
                load: dict[Link, Fraction] = {}
                for f in members[k]:
                    for lk in links_of[f]:
                        load[lk] = load.get(lk, Fraction(0)) + rem[f] / cap[lk]
                v.append(load)
            order = [active[i] for i in bssi(v, [weight[k] for k in active], links, ties, seen)[0]]
        rate = {f: x for f, x in rate.items() if rem[f] > 0}
        stalled = bool(live) and not any(x > 0 for x in rate.values()) and (
            stall == "idle" or all(admitted))
        if reschedule == "flow" or arrived or departed or stalled:
            rate = greedy([f for k in order for f in members[k] if rem[f] > 0], links_of, cap)
        steps = [r - t for k, r in enumerate(release) if not admitted[k]]
        steps += [rem[f] / x for f, x in rate.items() if x > 0]
        if not steps:
            return [x if x is not None else Fraction(-1) for x in finish]
        dt = min(steps)
        t += dt
        for f, x in rate.items():
            rem[f] -= x * dt
