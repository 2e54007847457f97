"""Interval-indexed LP over every routing: a lower bound that no routing beats.

See ``models/bound-free.md``. The time points ``tau_i`` and the completion fractions
``X_ki`` (solved as ``Y_ki = 1 - X_ki``) are those of the interval LP
(:mod:`coflowopt.bounds.interval`); what changes is what must fit by ``tau_i``. A fixed
routing puts each coflow's bytes on known links; here the bytes of the coflows done by
``tau_i`` only have to form, together, a multicommodity flow through the switches that
fits within ``c_e tau_i`` on every link ``e`` (after Jahanjou, Kantor and Rajaraman,
SPAA 2017, and Chowdhury, Khuller, Purohit, Yang and You, SPAA 2019):

    sum_k v_kl X_ki <= tau_i                       every host link and switch cut l
    out_u(z^c_i) - in_u(z^c_i) = sum_k X_ki b^c_k(u)   every commodity c, switch u
    sum_c z^c_{i,e} <= c_e tau_i                   every link e between switches

A host hangs from one switch by one link each way, so its links carry the same bytes
under every routing and keep their rows (with release thresholds); flows between hosts
of one switch never need a switch link. Commodities are the source switches (or the
destination switches, whichever are fewer): a flow of several sinks from one source
loses nothing against one commodity per flow. Any routing (split, changing over time,
along paths of any length) sends the bytes of the coflows done by ``tau_i`` as such a
flow, so the LP is a relaxation of every routing's problem. ``network="cuts"`` keeps only
the switch cuts (the bytes leaving or entering a switch over its link capacity), a
weaker LP the size of the interval LP's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .._budget import TimeBudget, now
from .._text import plural
from ..errors import CoflowoptError
from ..fabric.network import Network
from ..instance import Fabric, Instance
from ..result import Result, Status
from ._highs import LPBuilder, bound_status
from ._round import rescaled
from .interval import BUILD_CHUNK, _link_groups
from .pairwise import _thresholds, scaled_times

__all__ = ["free_bound", "free_lp", "host_image"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MAX_ENTRIES = 30_000_000
"""The largest LP (nonzeros) the free-routing bound builds, as the interval bound's."""

AUTO_FLOW_ENTRIES = 3_000_000
"""``network="auto"`` builds the multicommodity flow while the whole LP stays within this
many nonzeros, and the switch cuts alone above it."""

EARLIEST_ENTRIES = 2_000_000
"""``earliest="auto"`` solves one concurrent-flow LP per coflow while their nonzeros
together stay within this; the cuts give the earliest completions otherwise."""

BIG_SWITCH_NOTE = ("on the big switch every flow has one route, so the free-routing LP is "
                   "the interval LP (the same bound as --method interval)")


def host_image(inst: Instance) -> Instance:
    """The instance on a big switch of the network's host links (its NIC capacities).

    Host links carry the same bytes under every routing (each path starts with its source
    host's uplink and ends with its destination's downlink), so every bound of the image
    bounds the instance under any routing. A big-switch instance is its own image.
    """
    fabric = inst.fabric
    if not isinstance(fabric, Network):
        return inst
    return inst.replace(fabric=Fabric(fabric.ingress, fabric.egress))


@dataclass(frozen=True, slots=True)
class _Switches:
    """The switches of a network instance and the bytes that must cross them.

    Links between switches run ``tail -> head`` (switch indices ``0..n-1``) with capacity
    ``cap``; demand ``j`` is coflow ``k[j]``'s bytes from switch ``a[j]`` to switch ``b[j]``
    (``a != b``), summed over its flows. ``amount / cap`` is in the LP's time unit.
    """

    n: int
    tail: IntArray
    head: IntArray
    cap: FloatArray
    k: IntArray
    a: IntArray
    b: IntArray
    amount: FloatArray


def _switches(inst: Instance, net: Network, tu: float) -> _Switches:
    topo = net.topology
    H = topo.num_hosts
    tail, head, cap = topo.tail, topo.head, topo.capacity
    inner = (tail >= H) & (head >= H)
    cref = float(cap[inner].max()) if inner.any() else 1.0
    n = topo.num_nodes - H
    sw = np.asarray(head[:H], np.int64) - H  # a host's switch: the head of its uplink
    a, b = sw[inst.flow_src], sw[inst.flow_dst]
    cross = a != b
    key = (inst.flow_coflow[cross].astype(np.int64) * n + a[cross]) * n + b[cross]
    ukey, inv = np.unique(key, return_inverse=True)
    amount = np.bincount(inv.reshape(-1), inst.flow_size[cross], minlength=ukey.size) / (tu * cref)
    k, rest = np.divmod(ukey, n * n)
    ua, ub = np.divmod(rest, n)
    return _Switches(n, np.asarray(tail[inner], np.int64) - H, np.asarray(head[inner], np.int64) - H,
                     np.asarray(cap[inner], np.float64) / cref, k, ua, ub, amount)


def _cut_loads(g: _Switches, K: int) -> FloatArray:
    """Per coflow, its bytes leaving each switch over the switch's outgoing capacity, then
    entering each switch over its incoming capacity (``(K, cuts)``; used cuts only)."""
    parts = []
    for end, side in ((g.a, g.tail), (g.b, g.head)):
        cap = np.bincount(side, g.cap, minlength=g.n)
        used, col = np.unique(end, return_inverse=True)
        load = np.zeros((K, used.size))
        np.add.at(load, (g.k, col.reshape(-1)), g.amount)
        with np.errstate(divide="ignore"):
            parts.append(load / cap[used])
    return np.hstack(parts) if parts else np.zeros((K, 0))


@dataclass(frozen=True, slots=True)
class _Commodities:
    """Commodities (one per source switch, or per destination switch) and their links.

    ``of[j]`` is demand ``j``'s commodity; ``pc``, ``pe``: the (commodity, link) pairs that
    get a flow variable (a source's commodity never needs a link into its source, nor a
    destination's one a link out of it: such flow only runs in cycles).
    """

    count: int
    by_source: bool
    of: IntArray
    pc: IntArray
    pe: IntArray


def _commodities(g: _Switches, sel: npt.NDArray[np.bool_] | slice) -> _Commodities:
    a, b = g.a[sel], g.b[sel]
    ua, ub = np.unique(a), np.unique(b)
    by_source = ua.size <= ub.size
    nodes, end = (ua, a) if by_source else (ub, b)
    E = g.tail.size
    cc = np.repeat(np.arange(nodes.size, dtype=np.int64), E)
    ee = np.tile(np.arange(E, dtype=np.int64), nodes.size)
    useless = (g.head[ee] if by_source else g.tail[ee]) == nodes[cc]
    return _Commodities(int(nodes.size), bool(by_source), np.searchsorted(nodes, end).astype(np.int64),
                        cc[~useless], ee[~useless])


def _conservation(g: _Switches, com: _Commodities, sel: npt.NDArray[np.bool_] | slice,
                  ) -> tuple[IntArray, IntArray, FloatArray]:
    """The demands' supplies as ``(demand, row, value)`` entries of the conservation rows
    (row ``commodity * n + switch``): ``+amount`` at the source, ``-amount`` at the sink."""
    idx = np.arange(g.k.size, dtype=np.int64)[sel]
    c = com.of
    rows = np.concatenate([c * g.n + g.a[sel], c * g.n + g.b[sel]])
    return np.concatenate([idx, idx]), rows, np.concatenate([g.amount[sel], -g.amount[sel]])


def _flow_time(g: _Switches, sel: npt.NDArray[np.bool_] | slice, lo: float, hi: float,
               time_limit: float | None) -> float:
    """A proven lower bound on the least time in which the demands ``sel`` can all be
    routed (one over their maximum concurrent flow), at least ``lo``; ``nan`` if unsolved.

    ``hi`` must be at least that time (e.g. the time under a feasible routing): the flow
    variables get finite bounds from it, which the safe dual bound needs.
    """
    com = _commodities(g, sel)
    lp = LPBuilder()
    T = int(lp.add_cols(1, cost=1.0, lo=lo, hi=hi)[0])
    z = lp.add_cols(com.pc.size, lo=0.0, hi=g.cap[com.pe] * hi)
    _, srow, sval = _conservation(g, com, sel)
    rhs = np.bincount(srow, sval, minlength=com.count * g.n)
    lp.add_rows(np.concatenate([com.pc * g.n + g.tail[com.pe], com.pc * g.n + g.head[com.pe]]),
                np.concatenate([z, z]), np.concatenate([np.ones(z.size), -np.ones(z.size)]),
                rhs, rhs, num=com.count * g.n)
    E = g.tail.size
    lp.add_rows(np.concatenate([com.pe, np.arange(E)]), np.concatenate([z, np.full(E, T)]),
                np.concatenate([np.ones(z.size), -g.cap]), -math.inf, 0.0, num=E)
    sol = lp.solve(time_limit=time_limit)
    return float(sol.bound) if sol.ok else math.nan


def _flow_time_entries(g: _Switches, sel: npt.NDArray[np.bool_] | slice) -> int:
    """Nonzeros of :func:`_flow_time`'s LP (flow variables three times, the time once per link)."""
    a, b = g.a[sel], g.b[sel]
    count = min(np.unique(a).size, np.unique(b).size)
    return 3 * count * g.tail.size + g.tail.size


def _too_large(entries: int, points: int, ratio: float, what: str,
               at_least: bool = False) -> CoflowoptError:
    return CoflowoptError(
        f"the free-routing LP would have {'at least ' if at_least else ''}{entries:,} nonzeros "
        f"({points:,} time points for ratio "
        f"{ratio!r}, {what}), more than {MAX_ENTRIES:,}; use a larger ratio, network='cuts' or "
        "fewer thresholds")


def free_lp(
    inst: Instance, *, ratio: float = 1.25, thresholds: int | str = "auto",
    network: str = "auto", earliest: str = "auto", solver: str = "auto",
    time_limit: float | None = None,
) -> tuple[float, dict]:
    """Solve the free-routing interval LP; returns ``(bound, info)``.

    ``network``: ``"flow"`` (a multicommodity flow through the switches at every time
    point), ``"cuts"`` (each switch's outgoing and incoming capacity only) or ``"auto"``
    (the flow up to :data:`AUTO_FLOW_ENTRIES` nonzeros). ``earliest``: each coflow's
    earliest completion from ``"flow"`` (its own concurrent-flow LP), ``"cuts"`` or
    ``"auto"`` (the LPs when the flow is built and they are small). ``solver``:
    ``"auto"`` (HiGHS's interior point method without crossover above a million
    nonzeros, its choice otherwise), ``"choose"``, ``"simplex"`` or ``"ipm"``.
    ``time_limit`` covers building as well, as for the interval LP.
    """
    if not (isinstance(ratio, (int, float)) and math.isfinite(ratio) and ratio > 1):
        raise CoflowoptError(f"ratio must be a number > 1, got {ratio!r}")
    for name, value, known in (("network", network, ("auto", "flow", "cuts")),
                               ("earliest", earliest, ("auto", "flow", "cuts")),
                               ("solver", solver, ("auto", "choose", "simplex", "ipm"))):
        if value not in known:
            raise CoflowoptError(f"{name} must be " + ", ".join(f"'{a}'" for a in known[:-1])
                                 + f" or '{known[-1]}', got {value!r}")
    budget = TimeBudget(time_limit)
    K = inst.num_coflows
    tu, v, r, e = scaled_times(host_image(inst), "the free-routing LP")
    w = inst.weight
    info: dict[str, Any] = {"ratio": ratio}
    g = _switches(inst, inst.fabric, tu) if isinstance(inst.fabric, Network) else None
    if g is None:
        info["note"] = BIG_SWITCH_NOTE
    elif g.k.size:
        cuts = _cut_loads(g, K)
        v = np.hstack([v, cuts])
        e = np.maximum(e, r + cuts.max(axis=1, initial=0.0))
    flows = g is not None and g.k.size > 0
    # the time under the instance's own routing: no coflow (nor all together) needs longer
    fixed = inst.load / inst.fabric.capacity / tu
    horizon_work = float(v.sum(axis=0).max(initial=0.0))
    if thresholds == "auto":
        thresholds = 10 if np.unique(r).size > 1 else 0
    th = _thresholds(r, thresholds)

    # the grid depends on e and on the work, which the flow LPs below may raise: size first
    # with the cuts' values (a lower estimate of the points), decide what to build, then refine
    def grid(e_: FloatArray, work: float) -> tuple[FloatArray, int]:
        t1 = float(e_.min())
        span = (float(e_.max()) + work) / t1
        if not math.isfinite(span):
            raise CoflowoptError(
                f"the free-routing LP's time points would run from {t1 * tu!r} to "
                f"{(float(e_.max()) + work) * tu!r}, a ratio beyond floating point; the other "
                "bounds (coflowopt bound --method port) do not need it")
        N_ = max(1, math.ceil(math.log(max(span, 1.0)) / math.log(ratio)) + 1)
        if 2 * K * (N_ - 1) > MAX_ENTRIES:
            raise _too_large(2 * K * (N_ - 1), N_, ratio, "the monotone rows alone", at_least=True)
        return np.asarray(t1 * ratio ** np.arange(N_), np.float64), N_

    def cut_entries(tau_: FloatArray, e_: FloatArray) -> int:
        first_ = np.searchsorted(tau_, e_ * (1 - 1e-12), side="left")
        kk_, _ = np.nonzero(v > 0)
        out = 0
        for rho in np.concatenate([[0.0], th]):
            ks = kk_[r[kk_] >= rho] if rho > 0 else kk_
            after = int(np.searchsorted(tau_, rho, side="right"))
            out += int((tau_.size - np.maximum(first_[ks], after)).clip(min=0).sum())
        return out

    def flow_entries(tau_: FloatArray, e_: FloatArray, com_: _Commodities, dk: IntArray) -> int:
        first_ = np.searchsorted(tau_, e_ * (1 - 1e-12), side="left")
        start = int(first_[g.k].min()) if g is not None else tau_.size
        return (tau_.size - start) * 3 * com_.pc.size + int((tau_.size - first_[dk]).sum())

    tau, N = grid(e, horizon_work)
    com: _Commodities | None = None
    dk = drow = np.zeros(0, np.int64)
    dval: npt.NDArray[Any] = np.zeros(0)
    mode = "none"
    if flows:
        assert g is not None
        if network in ("auto", "flow"):
            com = _commodities(g, slice(None))
            dem, srow, sval = _conservation(g, com, slice(None))
            # one entry per (coflow, row): a source's commodity meets it once per sink
            key, inv = np.unique(g.k[dem] * (com.count * g.n) + srow, return_inverse=True)
            dval = np.bincount(inv.reshape(-1), sval, minlength=key.size)
            dk, drow = np.divmod(key, com.count * g.n)
            size = 2 * K * (N - 1) + cut_entries(tau, e) + flow_entries(tau, e, com, dk)
            if network == "auto" and size > AUTO_FLOW_ENTRIES:
                info["flow_skipped"] = (f"the flow would make the LP {size:,} nonzeros (more than "
                                        f"{AUTO_FLOW_ENTRIES:,}): switch cuts only")
                com = None
            elif size > MAX_ENTRIES:
                raise _too_large(size, N, ratio, "with the multicommodity flow")
        mode = "flow" if com is not None else "cuts"
    info["network"] = mode

    # earliest completions and the horizon from concurrent flows, when asked and small
    solved = 0
    if flows and earliest != "cuts" and (earliest == "flow" or com is not None):
        assert g is not None
        per = [(int(k), g.k == k) for k in np.unique(g.k)]
        cost = sum(_flow_time_entries(g, sel) for _, sel in per)
        if earliest == "flow" or cost <= EARLIEST_ENTRIES:
            for k, sel in per:
                if budget.expired():
                    break
                hi = max(float(fixed[k].max()), e[k] - r[k]) * (1 + 1e-9) + 1e-12
                t = _flow_time(g, sel, e[k] - r[k], hi, budget.left())
                if math.isfinite(t):
                    e[k] = max(e[k], r[k] + t)
                    solved += 1
            if not budget.expired():
                hi = max(float(fixed.sum(axis=0).max()), horizon_work) * (1 + 1e-9) + 1e-12
                t = _flow_time(g, slice(None), horizon_work, hi, budget.left())
                if math.isfinite(t):
                    horizon_work = max(horizon_work, t)
        else:
            info["earliest_skipped"] = (f"{plural(len(per), 'concurrent-flow LP')} of {cost:,} "
                                        f"nonzeros together (more than {EARLIEST_ENTRIES:,})")
    info["earliest"] = {"coflows_between_switches": int(np.unique(g.k).size) if flows and g else 0,
                        "from_flow_lp": solved}
    tau, N = grid(e, horizon_work)
    first = np.searchsorted(tau, e * (1 - 1e-12), side="left")
    entries = 2 * K * (N - 1) + cut_entries(tau, e)
    if com is not None:
        entries += flow_entries(tau, e, com, dk)
    if entries > MAX_ENTRIES:
        raise _too_large(entries, N, ratio, "with the multicommodity flow" if com else "switch cuts")
    info.update(points=N, thresholds=int(th.size), columns=int(K * N), nonzeros=int(entries),
                cut_rows=0, horizon=float(tau[-1] * tu))

    def out_of_time(stage: str) -> tuple[float, dict[str, Any]]:
        info.update(lp_status="time_limit", stopped_while=stage)
        return math.nan, info

    tau_prev = np.concatenate([[0.0], tau])
    c = np.maximum(tau_prev[None, :], e[:, None])
    allowed = tau[None, :] >= e[:, None] * (1 - 1e-12)
    lp = LPBuilder()
    cost = w[:, None] * (c[:, 1:] - c[:, :-1])
    Y = lp.add_cols(K * N, cost=cost.ravel(), lo=(~allowed).ravel().astype(float), hi=1.0)
    Ym = Y.reshape(K, N)
    if N > 1:
        nk = K * (N - 1)
        lp.add_rows(np.repeat(np.arange(nk), 2),
                    np.stack([Ym[:, :-1].ravel(), Ym[:, 1:].ravel()], axis=1).ravel(),
                    np.tile([1.0, -1.0], nk), 0.0, math.inf, num=nk)
    # host links and switch cuts, as the interval LP's link rows (Y form)
    kk, ll = np.nonzero(v > 0)
    for rho in np.concatenate([[0.0], th]):
        sel = r[kk] >= rho if rho > 0 else np.ones(kk.size, bool)
        order = np.argsort(ll[sel], kind="stable")
        ks, ls = kk[sel][order], ll[sel][order]
        pts = np.flatnonzero(tau > rho)
        for a, b in _link_groups(ls, max(1, BUILD_CHUNK // max(pts.size, 1))):
            if budget.expired():
                return out_of_time("building the cut rows")
            ent_k, ent_l = np.repeat(ks[a:b], pts.size), np.repeat(ls[a:b], pts.size)
            ent_i = np.tile(pts, b - a)
            ok = allowed[ent_k, ent_i]
            ent_k, ent_l, ent_i = ent_k[ok], ent_l[ok], ent_i[ok]
            ukey, row = np.unique(ent_l * N + ent_i, return_inverse=True)
            vals = v[ent_k, ent_l]
            need = np.bincount(row, vals, minlength=ukey.size) - (tau[ukey % N] - rho)
            lp.add_rows(row, Ym[ent_k, ent_i], vals, need, math.inf, num=ukey.size)
            info["cut_rows"] += int(ukey.size)
    if com is not None:
        assert g is not None
        nrow, E = com.count * g.n, g.tail.size
        zrows = np.concatenate([com.pc * g.n + g.tail[com.pe], com.pc * g.n + g.head[com.pe]])
        zvals = np.concatenate([np.ones(com.pc.size), -np.ones(com.pc.size)])
        flow_points = 0
        for i in range(int(first[g.k].min()), N):
            if budget.expired():
                info.update(flow_points=flow_points)
                return out_of_time("building the flow rows")
            z = lp.add_cols(com.pc.size, lo=0.0, hi=g.cap[com.pe] * tau[i])
            live = allowed[dk, i]
            # out - in = sum_k X_ki b_k = sum_k b_k - sum_k b_k Y_ki (the coflows allowed at i)
            rhs = np.bincount(drow[live], dval[live], minlength=nrow)
            lp.add_rows(np.concatenate([zrows, drow[live]]),
                        np.concatenate([z, z, Ym[dk[live], i]]),
                        np.concatenate([zvals, dval[live]]), rhs, rhs, num=nrow)
            lp.add_rows(com.pe, z, 1.0, -math.inf, g.cap * tau[i], num=E)
            flow_points += 1
        info.update(commodities=com.count,
                    commodity="source switch" if com.by_source else "destination switch",
                    flow_points=flow_points, flow_columns=flow_points * int(com.pc.size),
                    conservation_rows=flow_points * nrow, link_rows=flow_points * E)
    constant = float(np.dot(w, c[:, 0]))
    if budget.expired():
        return out_of_time("before solving (every row built)")
    if solver == "auto":
        # the flow's LP at 1.5 million nonzeros (k = 8 fat-tree, 40 coflows): 6 s by simplex,
        # not done in 60 s by the interior point method
        solver = "choose"
    opts: dict[str, Any] = {} if solver == "choose" else {"solver": solver}
    if solver == "ipm":
        opts["run_crossover"] = "off"
    sol = lp.solve(time_limit=budget.left(), options=opts)
    info.update(solver=solver, lp_status=sol.status, lp_time_s=sol.runtime)
    if not sol.ok:
        return math.nan, info
    return rescaled(constant, float(sol.bound), tu, w.size), info


def free_bound(
    inst: Instance, *, time_limit: float | None = None, ratio: float = 1.25,
    thresholds: int | str = "auto", network: str = "auto", earliest: str = "auto",
    solver: str = "auto",
) -> Result:
    """The free-routing interval LP's optimum (safe dual bound): a lower bound on the
    optimum under every routing, the instance's own included."""
    start = now()
    if inst.num_coflows == 0:
        return Result(Status.BOUND, math.nan, 0.0, 0.0, "free")
    bound, info = free_lp(inst, ratio=ratio, thresholds=thresholds, network=network,
                          earliest=earliest, solver=solver, time_limit=time_limit)
    status = bound_status(bound, info.get("lp_status") == "time_limit")
    return Result(status, math.nan, bound, now() - start, "free", info=info)
