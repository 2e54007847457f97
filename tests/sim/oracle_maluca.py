"""An independent, exact event-driven simulator of ``maluca`` (the big switch).

Written from the Maluca paper (Algorithm 1 and §IV-B/C), the module
docstring of ``coflowopt/sim/policies/maluca.py``, ``MalucaParams``' field
docstrings and ``models/simulator.md``, without the engine's, the policy's or
the kernels' code, in exact rationals. Inputs are floats read by their decimal
representation, as in :mod:`.oracle`.

One decision (all data below is what is still to send, over the flows of the
admitted coflows that have not finished):

1. LARGESTLOADFIRST (lines 1-5, Eq. 12): uplinks with data by decreasing
   ``l_i = remaining bytes on uplink i / B_i``; ties by port index.
2. SMALLESTTIMEFIRST (lines 6-17), uplink by uplink in that order: the coflows
   with data on the uplink by ``T_k`` (line 9: the coflow's largest remaining
   load on any uplink or downlink over its capacity); ties in admission order
   (release, then index). In that order coflow ``p``'s ``n_i^p`` flows on
   uplink ``i`` each get ``min(B_R(P_i) / n_i^p, B_R(P_j) / n_j^p)`` (line 15),
   ``n_j^p`` = ``p``'s flows into downlink ``j`` (from any uplink), ``B_R``
   read before ``p``'s turn; the uplink's ``B_R`` here starts at
   ``(1 - alpha) B_i`` (the soft reservation: the strict pass may use only that).
   A remainder below ``SAT`` of a link's capacity counts as nothing.
3. Soft reservation (§IV-C), right after step 2 on the same uplink: what is left
   of the uplink is shared equally among the flows on it whose coflows got
   nothing on it in step 2, each also capped at an equal share of its
   downlink's remainder among those flows into that downlink.
4. BACKFILLING (lines 18-24): uplinks in the order of step 1, coflows in the
   order of step 2, flows by index; each flow adds the smaller of what its
   uplink and its downlink still have (links with at most ``SAT`` of their
   capacity left start at nothing, and a link left with at most ``GREEDY_FULL``
   of what it had before a flow took its rate is full: the greedy allocation's
   documented rule, ``coflowopt.alloc.FULL``).

Decisions (``reschedule="coflow"``, the paper: "invoked whenever a new coflow
arrives in, or an old coflow departs"): at admissions (= releases), coflow
completions, and when active flows remain but none has a positive rate; in
between the rates are fixed and a finished flow's capacity stays idle.
``reschedule="flow"`` also decides at every flow completion.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from .oracle import SAT, Link, exact, greedy_take, run_decisions, tie_key


def _note_ties(ties: list[str] | None, what: str, keys: list[Fraction]) -> None:
    if ties is not None and len(set(keys)) < len(keys):
        ties.append(what)


def decide(
    cap: dict[Link, Fraction], flows: list[tuple[int, int, int]], order_key: list[tuple],
    active: list[int], members: list[list[int]], rem: dict[int, Fraction], alpha: Fraction,
    ties: list[str] | None = None,
) -> dict[int, Fraction]:
    """Rates of one decision; ``flows[f] = (coflow, uplink, downlink)``.

    Every exact tie that a tie rule decides (two uplinks with the same load, two
    coflows on one uplink with the same ``T_k``) is noted in ``ties``.
    """
    live = {k: [f for f in members[k] if rem[f] > 0] for k in active}
    left = dict(cap)

    def room(lk: Link, x: Fraction | None = None) -> Fraction:
        x = left[lk] if x is None else x
        return x if x > SAT * cap[lk] else Fraction(0)

    load: dict[Link, Fraction] = {}
    per_coflow: dict[int, dict[Link, Fraction]] = {}
    for k in active:
        mine: dict[Link, Fraction] = {}
        for f in live[k]:
            _, i, j = flows[f]
            for lk in (("u", i), ("d", j)):
                mine[lk] = mine.get(lk, Fraction(0)) + rem[f]
                load[lk] = load.get(lk, Fraction(0)) + rem[f]
        per_coflow[k] = mine
    t_k = {k: max((v / cap[lk] for lk, v in per_coflow[k].items()), default=Fraction(0))
           for k in active}
    uplinks = sorted((i for kind, i in load if kind == "u"),
                     key=lambda i: (tie_key(-load["u", i] / cap["u", i]), i))
    _note_ties(ties, "uplink load", [load["u", i] / cap["u", i] for i in uplinks])
    rate = {f: Fraction(0) for k in active for f in live[k]}

    def share(group: list[int], u_room: Fraction, into: dict[int, int]) -> Fraction:
        """Line 15: each flow of ``group`` gets min(uplink room / |group|, its downlink's
        room / ``into[downlink]``), rooms read before the group's turn; returns the total."""
        d_room = {j: room(("d", j)) for j in into}
        total = Fraction(0)
        for f in group:
            j = flows[f][2]
            r = min(u_room / len(group), d_room[j] / into[j])
            rate[f] += r
            left["d", j] -= r
            left["u", flows[f][1]] -= r
            total += r
        return total

    orders: dict[int, list[int]] = {}
    for i in uplinks:
        up = ("u", i)
        order = sorted((k for k in active if up in per_coflow[k]),
                       key=lambda k: (tie_key(t_k[k]), *order_key[k]))
        orders[i] = order
        _note_ties(ties, f"T_k on uplink {i}", [t_k[k] for k in order])
        strict = (1 - alpha) * cap[up]  # what the strict pass may still use of the uplink
        starved: list[int] = []
        for p in order:
            mine = [f for f in live[p] if flows[f][1] == i]
            into = Counter(flows[f][2] for f in live[p])  # n_j^p: from every uplink
            got = share(mine, room(up, strict), into)
            strict -= got
            if got == 0:
                starved += mine
        if starved:
            share(starved, room(up), Counter(flows[f][2] for f in starved))
    for lk in left:  # backfilling starts from links with more than SAT of their capacity
        left[lk] = room(lk)
    for i in uplinks:
        for p in orders[i]:
            for f in live[p]:
                if flows[f][1] == i:
                    r = min(left["u", i], left["d", flows[f][2]])
                    if r > 0:
                        rate[f] += r
                        greedy_take(left, (("u", i), ("d", flows[f][2])), r)
    return rate


def simulate(
    up: list[float], down: list[float], coflows: list[tuple[float, list]],
    alpha: float = 0.1, reschedule: str = "coflow", ties: list[str] | None = None,
) -> list[Fraction]:
    """Exact completion times of ``coflows`` (``(release, [(src, dst, size), ...])``).

    ``ties``, if given, collects the exact ties the tie rules decided (see :func:`decide`).
    """

    def maluca(cap, flows, key, active, members, rem):  # type: ignore[no-untyped-def]
        return decide(cap, flows, key, active, members, rem, exact(alpha), ties)

    return run_decisions(up, down, coflows, maluca, reschedule)
