"""The LP of an event sequence, exact for complete sequences.

An *event* is a release (a distinct time at which flows become available)
or the completion of a coflow. For a fixed order of events, constant rates
between consecutive events lose nothing (replace the rates inside an interval
by their averages: amounts at every event time, hence all completion times,
stay the same), so one LP per complete order is exact. For a *prefix* of an
order the LP below is a relaxation: the prefix is modelled exactly, the
unfinished coflows get completion-time variables bounded from below by their
remaining work and by valid inequalities (see ``models/exact-wcct.md``).

Events are encoded as integers: ``k >= 0`` is the completion of coflow
``k``, ``-(j + 1)`` the ``j``-th positive release time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..bounds._highs import LPBuilder, LPSolution
from ._groups import Groups, link_rows, spread

__all__ = ["CutPool", "EventLP", "NodeLP"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
INF = math.inf
FB_SHARE = 1e-5
"""Share of a finishes-before successor's data kept for the interval ending at its completion.

The optimum with a finishes-before dependency is an infimum (the successor's last bytes
may arrive just after its predecessors' last ones); this share realizes it within about
``FB_SHARE`` of the successor's transfer time, with a margin above ``check_feasible``'s
default tolerance (1e-6 of a coflow's size), which counts a coflow complete before it."""


class CutPool:
    """Globally valid release-aware parallel inequalities ``sum_S v C >= rhs``.

    For a link ``l`` and a set ``S`` of coflows, all released at or after
    ``rho``: ``sum_{k in S} v_kl C_k >= rho v_l(S) + (v_l(S)^2 + sum v_kl^2) / 2``
    (Queyranne's inequality shifted to the earliest release; valid for the
    fluid model on any single link).
    """

    def __init__(self, v: FloatArray, release: FloatArray) -> None:
        self.v = v
        self.release = release
        self.members: list[IntArray] = []
        self.coefs: list[FloatArray] = []
        self.rhs: list[float] = []
        self._seen: set[tuple[int, bytes]] = set()
        self._links = [np.flatnonzero(v[:, lk] > 0) for lk in range(v.shape[1])]
        self._thresholds = [np.unique(release[ks]) for ks in self._links]

    def __len__(self) -> int:
        return len(self.rhs)

    def separate(self, C: FloatArray, *, tol: float = 1e-7, max_cuts: int | None = None) -> int:
        """Add the most violated inequality of each (link, threshold); returns how many."""
        found: list[tuple[float, int, IntArray, float]] = []
        for lk, ks in enumerate(self._links):
            if ks.size < 2:
                continue
            for rho in self._thresholds[lk]:
                sel = ks[self.release[ks] >= rho]
                if sel.size < 2:
                    continue
                order = sel[np.argsort(C[sel], kind="stable")]
                vv = self.v[order, lk]
                lhs = np.cumsum(vv * C[order])
                sv = np.cumsum(vv)
                rhs = rho * sv + 0.5 * (sv**2 + np.cumsum(vv**2))
                viol = (rhs - lhs) / np.maximum(rhs, 1e-12)
                i = int(np.argmax(viol))
                if viol[i] > tol and i >= 1:
                    found.append((float(viol[i]), lk, order[: i + 1], float(rhs[i])))
        found.sort(key=lambda x: -x[0])
        if max_cuts is not None:
            found = found[:max_cuts]
        added = 0
        for _, lk, members, rhs in found:
            key = (lk, np.sort(members).tobytes())
            if key in self._seen:
                continue
            self._seen.add(key)
            self.members.append(members)
            self.coefs.append(self.v[members, lk])
            self.rhs.append(rhs)
            added += 1
        return added


@dataclass(slots=True)
class NodeLP:
    """A built node LP and how to read its solution."""

    lp: LPBuilder
    events: tuple[int, ...]
    t_cols: IntArray
    x_group: IntArray
    x_interval: IntArray
    x_cols: IntArray
    c_col: IntArray
    """Column holding ``C_k`` for every coflow (an event time for finished ones)."""
    unfinished: IntArray
    served: tuple[IntArray, IntArray, FloatArray, IntArray]
    """Work of unfinished coflows served in the prefix, as entries (coflow, link,
    coefficient, x column): served work of ``k`` on ``l`` in time units is the sum of
    coefficient * x over its entries."""
    pool_used: int
    solution: LPSolution | None = None

    @property
    def is_leaf(self) -> bool:
        return self.unfinished.size == 0


class EventLP:
    """Builds and solves the LP of an event prefix (see the module docstring)."""

    def __init__(self, groups: Groups, *, horizon: float = INF) -> None:
        g = groups
        inst = g.instance
        self.g = g
        self.K = g.num_coflows
        self.L = int(g.cap.size)
        pos = g.release[g.release > 0]
        self.rho = np.unique(pos)
        self.R = int(self.rho.size)
        # release index of each group (-1: available from time 0)
        self.g_rel = np.where(g.release > 0, np.searchsorted(self.rho, g.release), -1)
        last = np.full(self.K, -1, dtype=np.int64)
        np.maximum.at(last, g.coflow, self.g_rel)
        self.last_rel = last
        self.weight = inst.weight
        self.horizon = float(horizon)
        self.starts_after = inst.starts_after
        self.finishes_before = inst.finishes_before
        self.v = g.v
        self.coflow_links = [np.flatnonzero(g.v[k] > 0) for k in range(self.K)]
        self.gamma = g.v.max(axis=1)
        coflow_release = inst.release / g.time_unit
        self.pool = CutPool(g.v, coflow_release)
        self.floor: Callable[[int], float] | None = None
        """Optional: a lower bound on the time the last of a set of coflows (a bit mask)
        completes, in time units; the completion events of a prefix are held above it for
        the set completed so far (:meth:`SubsetTable.floor
        <coflowopt.bounds.subsets.SubsetTable.floor>`)."""

    # ------------------------------------------------------------------ structure

    def ready(self, events: Sequence[int]) -> tuple[list[int], int | None]:
        """Coflows that may complete next, and the next release index (or None)."""
        done = np.zeros(self.K, bool)
        nrel = 0
        for e in events:
            if e >= 0:
                done[e] = True
            else:
                nrel += 1
        out = []
        for k in range(self.K):
            if done[k] or self.last_rel[k] >= nrel:
                continue
            if any(not done[j] for j in self.starts_after[k]):
                continue
            if any(not done[j] for j in self.finishes_before[k]):
                continue
            out.append(k)
        return out, (nrel if nrel < self.R else None)

    # ------------------------------------------------------------------ building

    def build(self, events: Sequence[int], *, horizon: float | None = None) -> NodeLP | None:
        """The LP of a prefix; None when the prefix is structurally infeasible.

        ``horizon``: the latest event time (default: :attr:`horizon`, the search's).
        """
        g = self.g
        K, L = self.K, self.L
        ev = tuple(int(e) for e in events)
        m = len(ev)
        pos_d = np.full(K, -1, dtype=np.int64)  # 1-based position of completion events
        rel_pos = np.full(self.R + 1, m + 1, dtype=np.int64)  # index j+1; [0] = release 0
        rel_pos[0] = 0
        nrel = 0
        fixed = np.full(m, np.nan)
        for i, e in enumerate(ev, start=1):
            if e >= 0:
                pos_d[e] = i
            else:
                j = -e - 1
                rel_pos[j + 1] = i
                fixed[i - 1] = self.rho[j]
                nrel += 1
        done = pos_d > 0
        rho_next = self.rho[nrel] if nrel < self.R else INF

        # first interval in which each coflow may be served (starts-after predecessors)
        dep_start = np.ones(K, dtype=np.int64)
        for k in range(K):
            for j in self.starts_after[k]:
                dep_start[k] = max(dep_start[k], pos_d[j] + 1 if pos_d[j] > 0 else m + 1)
        gk = g.coflow
        start = np.maximum(rel_pos[self.g_rel + 1] + 1, dep_start[gk])
        end = np.where(done[gk], pos_d[gk], m)
        n = np.maximum(end - start + 1, 0)
        if np.any(done[gk] & (n == 0)):
            return None  # a finished coflow never had its flows available

        lp = LPBuilder()
        H = self.horizon if horizon is None else float(horizon)
        # ---- event times
        t_lo = np.zeros(m)
        t_hi = np.full(m, H)
        last_fixed = 0.0
        for i in range(m):
            if not math.isnan(fixed[i]):
                last_fixed = fixed[i]
            t_lo[i] = last_fixed
        nxt = rho_next
        for i in range(m - 1, -1, -1):
            if not math.isnan(fixed[i]):
                t_lo[i] = t_hi[i] = fixed[i]
                nxt = fixed[i]
            else:
                t_hi[i] = min(H, nxt)
        for k in np.flatnonzero(done).tolist():
            i = pos_d[k] - 1
            t_lo[i] = max(t_lo[i], g.earliest[k])
        if self.floor is not None:
            members = 0  # the coflows completed so far, as bits
            for i, e in enumerate(ev):
                if e >= 0:
                    members |= 1 << e
                    t_lo[i] = max(t_lo[i], self.floor(members))
        if np.any(t_lo > t_hi * (1 + 1e-12) + 1e-12):
            return None
        t_hi = np.maximum(t_hi, t_lo)
        t_cost = np.zeros(m)
        t_cost[pos_d[done] - 1] = self.weight[done]
        t_cols = lp.add_cols(m, cost=t_cost, lo=t_lo, hi=t_hi)

        # ---- amounts x[g, e]
        xg, xe = spread(start, n)  # group and interval (1-based) of each amount
        x_cols = lp.add_cols(xg.size, lo=0.0, hi=g.size[xg])

        # ---- completion variables of unfinished coflows
        unfinished = np.flatnonzero(~done)
        c_col = np.empty(K, dtype=np.int64)
        c_col[done] = t_cols[pos_d[done] - 1]
        lo_c = g.earliest[unfinished]
        if lo_c.size and np.any(lo_c > H * (1 + 1e-12)):
            return None
        uc = lp.add_cols(unfinished.size, cost=self.weight[unfinished], lo=lo_c,
                         hi=np.maximum(H, lo_c))
        c_col[unfinished] = uc

        # ---- monotone event times
        if m >= 2:
            r = np.repeat(np.arange(m - 1), 2)
            c = np.stack([t_cols[1:], t_cols[:-1]], axis=1).ravel()
            lp.add_rows(r, c, np.tile([1.0, -1.0], m - 1), 0.0, INF, num=m - 1)

        # ---- capacity per (interval, link)
        row, rep, uval, re, rl = link_rows(g, xg, xe)
        links = rl[row]
        nrow = re.size
        if nrow:
            cap = g.cap[rl]
            rows: list[np.ndarray] = [row, np.arange(nrow)]
            cols: list[np.ndarray] = [x_cols[rep], t_cols[re - 1]]
            vals: list[np.ndarray] = [uval, -cap]
            prev = re >= 2
            rows.append(np.flatnonzero(prev))
            cols.append(t_cols[re[prev] - 2])
            vals.append(cap[prev])
            lp.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                        -INF, 0.0, num=nrow)

        # ---- amount per group: equal to size when finished, at most size otherwise
        ng = g.num_groups
        has = n > 0
        gid = np.flatnonzero(has)
        row_of = np.full(ng, -1)
        row_of[gid] = np.arange(gid.size)
        lo_amt = np.where(done[gk[gid]], g.size[gid], 0.0)
        lp.add_rows(row_of[xg], x_cols, 1.0, lo_amt, g.size[gid], num=gid.size)

        # ---- a finished coflow with finishes-before predecessors still receives data in
        # the interval that ends at its completion (a share FB_SHARE of its size), so its
        # last bytes arrive after theirs; without it the LP may send all of it before a
        # predecessor is even released and the schedule breaks the dependency
        fb = [k for k in np.flatnonzero(done).tolist() if len(self.finishes_before[k])]
        if fb:
            tail = np.flatnonzero(np.isin(gk[xg], fb) & (xe == pos_d[gk[xg]]))
            if tail.size:
                kk = gk[xg[tail]]
                rid = np.searchsorted(np.array(fb), kk)
                need = np.array([FB_SHARE * float(g.size[gk == k].sum()) for k in fb])
                # they realize the infimum, they do not bound it: the node's bound is
                # that of the LP without them (else it could exceed the infimum)
                lp.add_rows(rid, x_cols[tail], 1.0, need, INF, num=len(fb), in_bound=False)

        # ---- remaining work of unfinished coflows per link
        # served work of coflow k on link l (in time units) = sum of x * 1/cap_l
        sk = gk[xg[rep]]
        mask = ~done[sk]
        s_k, s_l, s_col = sk[mask], links[mask], x_cols[rep][mask]
        s_coef = uval[mask] / g.cap[s_l]
        tail_rows_k, tail_rows_l = [], []
        for k in unfinished.tolist():
            for lk in self.coflow_links[k]:
                tail_rows_k.append(k)
                tail_rows_l.append(lk)
        if tail_rows_k:
            tk = np.array(tail_rows_k)
            tl = np.array(tail_rows_l)
            nt = tk.size
            tkey = tk * L + tl
            order = np.argsort(tkey)
            tkey_sorted = tkey[order]
            pos = np.searchsorted(tkey_sorted, s_k * L + s_l)
            hit = (pos < nt) & (tkey_sorted[np.minimum(pos, nt - 1)] == s_k * L + s_l)
            srow = order[pos[hit]]
            rows = [np.arange(nt), srow]
            cols = [c_col[tk], s_col[hit]]
            vals = [np.ones(nt), s_coef[hit]]
            if m >= 1:
                rows.append(np.arange(nt))
                cols.append(np.full(nt, t_cols[m - 1]))
                vals.append(-np.ones(nt))
            lp.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                        self.v[tk, tl], INF, num=nt)

        # ---- dependencies involving unfinished coflows
        dr, dc, dv, dlo = [], [], [], []
        nd = 0
        for k in unfinished.tolist():
            for j in self.starts_after[k]:
                dr += [nd, nd]
                dc += [c_col[k], c_col[j]]
                dv += [1.0, -1.0]
                dlo.append(self.gamma[k])
                nd += 1
            for j in self.finishes_before[k]:
                if done[j]:
                    continue
                dr += [nd, nd]
                dc += [c_col[k], c_col[j]]
                dv += [1.0, -1.0]
                dlo.append(0.0)
                nd += 1
        if nd:
            lp.add_rows(dr, dc, dv, np.array(dlo), INF, num=nd)

        node = NodeLP(lp, ev, t_cols, xg, xe, x_cols, c_col, unfinished,
                      (s_k, s_l, s_coef, s_col), 0)
        self._add_pool_rows(node)
        return node

    def _add_pool_rows(self, node: NodeLP) -> None:
        pool = self.pool
        new = range(node.pool_used, len(pool))
        if not new:
            return
        rows, cols, vals, rhs = [], [], [], []
        for i, p in enumerate(new):
            mem = pool.members[p]
            rows.append(np.full(mem.size, i))
            cols.append(node.c_col[mem])
            vals.append(pool.coefs[p])
            rhs.append(pool.rhs[p])
        node.lp.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                         np.array(rhs), INF, num=len(rhs))
        node.pool_used = len(pool)

    # ------------------------------------------------------------------ solving

    def completion_values(self, node: NodeLP) -> FloatArray:
        assert node.solution is not None and node.solution.x is not None
        return node.solution.x[node.c_col]

    def _local_cuts(self, node: NodeLP, x: FloatArray, tol: float) -> int:
        """Tangent cuts of ``sum_S v (C - t_m) >= g(rem)`` at the current remaining work.

        For unfinished coflows ``S`` and a link, the work ``rem_k`` left after
        the last prefix event ``t_m`` is processed after ``t_m``, so
        ``sum_S rem_k (C_k - t_m) >= g(rem) = ((sum rem)^2 + sum rem^2) / 2``;
        as ``rem_k <= v_k`` and ``C_k >= t_m`` the left side may use ``v_k``.
        ``g`` is convex, so its tangent at the current point is a valid
        linear inequality in (C, t_m, x).
        """
        m = len(node.events)
        U = node.unfinished
        if m == 0 or U.size < 2:
            return 0
        s_k, s_l, s_coef, s_col = node.served
        C = x[node.c_col]
        tcol = node.t_cols[m - 1]
        tm = x[tcol]
        served = np.zeros((self.K, self.L))
        np.add.at(served, (s_k, s_l), x[s_col] * s_coef)
        rows, cols, vals, lo = [], [], [], []
        nr = 0
        for lk in range(self.L):
            ks = U[self.v[U, lk] > 0]
            if ks.size < 2:
                continue
            order = np.argsort(C[ks], kind="stable")
            ks = ks[order]
            vv = self.v[ks, lk]
            rem = np.clip(vv - served[ks, lk], 0.0, None)
            lhs = np.cumsum(vv * (C[ks] - tm))
            sr = np.cumsum(rem)
            gval = 0.5 * (sr**2 + np.cumsum(rem**2))
            viol = (gval - lhs) / np.maximum(gval, 1e-12)
            i = int(np.argmax(viol))
            if i < 1 or viol[i] <= tol:
                continue
            S, vS, rS = ks[: i + 1], vv[: i + 1], rem[: i + 1]
            grad = np.zeros(self.K)
            grad[S] = rS.sum() + rS
            # sum v C - v(S) t_m + sum grad * served >= sum grad * v - g(r*)
            sel = (s_l == lk) & (grad[s_k] > 0)
            c_all = np.concatenate([node.c_col[S], [tcol], s_col[sel]])
            v_all = np.concatenate([vS, [-vS.sum()], grad[s_k[sel]] * s_coef[sel]])
            gr = 0.5 * (rS.sum() ** 2 + (rS**2).sum())
            rows.append(np.full(c_all.size, nr))
            cols.append(c_all)
            vals.append(v_all)
            lo.append(float((grad[S] * vS).sum() - gr))
            nr += 1
        if nr:
            node.lp.add_rows(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
                             np.array(lo), INF, num=nr)
        return nr

    def solve(
        self, node: NodeLP, *, time_limit: float | None = None, rounds: int = 3,
        tol: float = 1e-6, global_cuts: bool = True,
    ) -> LPSolution:
        """Solve with a few rounds of cut separation (global pool and local tangents)."""
        sol = node.lp.solve(time_limit=time_limit)
        for _ in range(rounds):
            if not sol.ok or sol.x is None:
                break
            added = 0
            if global_cuts:
                added = self.pool.separate(sol.x[node.c_col], tol=tol)
                if added:
                    self._add_pool_rows(node)
            added += self._local_cuts(node, sol.x, tol)
            if not added:
                break
            sol = node.lp.solve(time_limit=time_limit)
        node.solution = sol
        return sol
