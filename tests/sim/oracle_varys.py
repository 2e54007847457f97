"""An independent, exact event-driven simulator of ``varys`` with its defaults (the big switch).

Written from the documentation (the module docstring of
``coflowopt/sim/policies/varys.py``, ``VarysParams``' field docstrings,
``backfill_proportional``'s docstring, ``models/simulator.md``) without the
engine's, the policies' or the kernels' code, in exact rationals. Inputs are
floats read by their decimal representation, as in :mod:`.oracle`.

Rules (``order="remaining"``, ``backfill="proportional"``, ``reschedule="coflow"``,
no starvation avoidance):

- decisions at coflow admissions (= releases), coflow completions, and when
  active flows remain but none has a positive rate; between decisions the rates
  are fixed, and a finished flow's capacity stays idle;
- order (SEBF): Γ_k = max over links of the coflow's remaining bytes there over
  the link's capacity, ascending; ties in admission order (release, then index);
- MADD: in that order, Γ'_k = max over its links of its load over what is left
  of the link; a coflow that needs a link with nothing left gets nothing; else
  every flow runs at remaining / Γ'_k;
- backfilling: groups (coflow, ingress port), ingress port by port (ascending),
  coflows in SEBF order within a port; each group grows in the ratios of its
  flows' remaining bytes; a flow whose link fills stops, the others grow on,
  until none can (progressive filling with those weights on what is left).
"""

from __future__ import annotations

from fractions import Fraction

Link = tuple[str, int]


def exact(x: float) -> Fraction:
    return Fraction(repr(float(x)))


def _load(
    links: list[tuple[Link, Link]], flows: list[int], amount: dict[int, Fraction]
) -> dict[Link, Fraction]:
    out: dict[Link, Fraction] = {}
    for f in flows:
        for lk in links[f]:
            out[lk] = out.get(lk, Fraction(0)) + amount[f]
    return out


def decide(
    cap: dict[Link, Fraction], flows: list[tuple[int, int, int]], links: list[tuple[Link, Link]],
    order_key: list[tuple], active: list[int], members: list[list[int]],
    rem: dict[int, Fraction], ports: int,
) -> dict[int, Fraction]:
    live = {k: [f for f in members[k] if rem[f] > 0] for k in active}
    gamma = {k: max(v / cap[lk] for lk, v in _load(links, live[k], rem).items()) for k in active}
    order = sorted(active, key=lambda k: (gamma[k], *order_key[k]))
    left = dict(cap)
    rate = {f: Fraction(0) for k in active for f in live[k]}
    for k in order:
        load = _load(links, live[k], rem)
        if any(left[lk] <= 0 for lk in load):
            continue
        g = max(v / left[lk] for lk, v in load.items())
        for f in live[k]:
            rate[f] = rem[f] / g
        for lk, v in load.items():
            left[lk] -= v / g
    for port in range(ports):
        for k in order:
            group = [f for f in live[k] if flows[f][1] == port]
            group = [f for f in group if all(left[lk] > 0 for lk in links[f])]
            while group:  # grow in rem ratios until a link fills; drop its flows; repeat
                load = _load(links, group, rem)
                theta = min(left[lk] / v for lk, v in load.items())
                for f in group:
                    rate[f] += theta * rem[f]
                for lk, v in load.items():
                    left[lk] -= theta * v
                group = [f for f in group if all(left[lk] > 0 for lk in links[f])]
    return rate


def simulate(up: list[float], down: list[float], coflows: list[tuple[float, list]]) -> list[Fraction]:
    """Exact completion times of ``coflows`` (``(release, [(src, dst, size), ...])``)."""
    cap: dict[Link, Fraction] = {("u", i): exact(c) for i, c in enumerate(up)}
    cap.update({("d", i): exact(c) for i, c in enumerate(down)})
    release = [exact(r) for r, _ in coflows]
    flows = [(k, s, d) for k, (_, fl) in enumerate(coflows) for s, d, _ in fl]
    rem = {f: exact(z) for f, z in enumerate(z for _, fl in coflows for _, _, z in fl)}
    links: list[tuple[Link, Link]] = [(("u", s), ("d", d)) for _, s, d in flows]
    members: list[list[int]] = [[] for _ in coflows]
    for f, (k, _, _) in enumerate(flows):
        members[k].append(f)
    key = [(release[k], k) for k in range(len(coflows))]
    m = len(coflows)
    finish: list[Fraction | None] = [None] * m
    admitted = [False] * m
    t = min(release)
    rate: dict[int, Fraction] = {}

    def admit() -> bool:
        new = False
        for k in range(m):
            if not admitted[k] and release[k] <= t:
                admitted[k] = new = True
                if all(rem[f] == 0 for f in members[k]):
                    finish[k] = release[k]
        return new

    admit()
    event = True
    while True:
        active = [k for k in range(m) if admitted[k] and finish[k] is None]
        if event and active:
            rate = decide(cap, flows, links, key, active, members, rem, len(up))
        event = False
        steps = [r - t for k, r in enumerate(release) if not admitted[k]]
        steps += [rem[f] / x for f, x in rate.items() if x > 0 and rem[f] > 0]
        if not steps:
            return [x if x is not None else Fraction(-1) for x in finish]
        dt = min(steps)
        t += dt
        for f, x in rate.items():
            if x > 0 and rem[f] > 0:
                rem[f] -= x * dt
        for k in active:
            if all(rem[f] == 0 for f in members[k]):
                finish[k] = t
                event = True
        event = admit() or event
        rate = {f: x for f, x in rate.items() if rem[f] > 0}
        if any(admitted[k] and finish[k] is None for k in range(m)) and not any(
            x > 0 for x in rate.values()
        ):
            event = True
