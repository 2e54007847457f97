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
  until none can (progressive filling with those weights on what is left);
- "nothing left" is the engine's documented ``SAT`` rule: a link with at most
  1e-9 of its capacity left is full, and is emptied after the MADD pass and
  after each backfilled group (``_common.SAT``, ``backfill_proportional``).
"""

from __future__ import annotations

from fractions import Fraction

from .oracle import SAT, Link, run_decisions, saturate, tie_key


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
    order = sorted(active, key=lambda k: (tie_key(gamma[k]), *order_key[k]))
    left = dict(cap)
    rate = {f: Fraction(0) for k in active for f in live[k]}
    for k in order:
        load = _load(links, live[k], rem)
        if any(left[lk] <= SAT * cap[lk] for lk in load):
            continue
        g = max(v / left[lk] for lk, v in load.items())
        for f in live[k]:
            rate[f] = rem[f] / g
        for lk, v in load.items():
            left[lk] -= v / g
    saturate(left, cap)
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
            saturate(left, cap)
    return rate


def simulate(up: list[float], down: list[float], coflows: list[tuple[float, list]]) -> list[Fraction]:
    """Exact completion times of ``coflows`` (``(release, [(src, dst, size), ...])``)."""

    def varys(cap, flows, key, active, members, rem):  # type: ignore[no-untyped-def]
        links = [(("u", s), ("d", d)) for _, s, d in flows]
        return decide(cap, flows, links, key, active, members, rem, len(up))

    return run_decisions(up, down, coflows, varys)
