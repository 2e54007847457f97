"""HUG: High Utilization with Guarantees (dissertation §7.5.2, Algorithm 6).

Stage 1 is DRF (:func:`coflowopt.fairness.dominant.drf`): every coflow gets its
optimal-isolation-guarantee allocation ``a_k = P_k d_k``. Stage 2 hands out
the spare capacity of every link:

- *non-cooperative* (default): a coflow may never hold more than its
  stage-1 dominant share ``max_i a^i_k`` (= ``P_k``, = ``P*`` with unit
  weights and elastic demands) of any link - the restriction that keeps HUG
  strategy-proof (Lemma D.3.1, Theorem D.3.3). An inelastic coflow cannot
  gain anything under this cap, so only elastic coflows take spare.
- *cooperative*: no cap (full work conservation, §7.5.3 property 2);
  inelastic coflows also raise their progress along their vectors.

Two ways to do stage 2:

``local``  what the machines run (§7.6.1 "Local Enforcement"): the spare of
           each link is shared by max-min fairness (weights ``w_k``) subject
           to the per-coflow upper bounds - :func:`coflowopt.alloc.max_min`
           on one row per (elastic coflow, link) pair plus, in cooperative
           mode, one row per inelastic coflow along its vector.
``lp``     the utilisation-maximising LP of Eq. 7.1 / (D.3) with the HUG cap,
           solved by HiGHS (:func:`coflowopt.fairness.lp.hug_stage2_lp`).

With elastic demands both reach the same utilisation on every link (each
link either fills up or every coflow on it reaches its cap); the split
among coflows can differ because the LP optimum is not unique.

Cooperative mode with inelastic coflows is where they part. Appendix D.1
states cooperative HUG as (D.3) without the cap, i.e. maximum utilisation;
§7.5.3 only asks for work conservation, and ``local`` (the default) gives
just that: max-min among the elastic (coflow, link) rows and the inelastic
coflows, which can leave capacity that (D.3) would use. Example: ``A =
<0, 0, 1>`` and ``B = <0, 1, 1>`` elastic, ``C = <1, 1/2, 0>`` inelastic;
DRF gives ``P* = 1/2``; ``local`` splits link 2's spare 1/4 between B
(useless to B's progress) and C, utilisation 8/3 and ``P_C = 2/3``; ``lp``
gives it all to C, utilisation 3 and ``P_C = 1``. Use ``stage2="lp"`` for
the (D.3) reading.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ..errors import InstanceError
from ._arith import as_float, full
from ._maxmin import solve_max_min
from .allocation import FairAllocation
from .dominant import drf
from .problem import FairnessProblem, check_problem

__all__ = ["HUG_STAGE2", "hug", "hug_caps"]

Matrix = npt.NDArray[Any]


def hug_caps(
    problem: FairnessProblem, progress: Matrix, *, cooperative: bool
) -> tuple[Matrix, Matrix]:
    """Stage-2 limits: (largest share of any link per coflow, largest progress per coflow).

    Non-cooperative: both are the stage-1 progress (dominant share) ``P_k``.
    Cooperative: a link's capacity (or the coflow's bound) and the bound.
    """
    if not cooperative:
        return progress, progress
    one = full(problem.num_coflows, 1, exact=problem.exact)
    return np.minimum(problem.bounds, one), problem.bounds


def _stage2_local(
    problem: FairnessProblem, guarantee: Matrix, progress: Matrix, cooperative: bool
) -> tuple[Matrix, bool, dict[str, Any]]:
    d = problem.vectors
    M, L = d.shape
    exact = problem.exact
    link_cap, prog_cap = hug_caps(problem, progress, cooperative=cooperative)
    fd = as_float(d)
    ks, ls = np.nonzero(problem.elastic[:, None] & (fd > 0))
    room = prog_cap - progress
    inel = np.flatnonzero(~problem.elastic & (as_float(room) > 0))
    n_pairs = ks.size
    n = n_pairs + inel.size
    upper = np.concatenate([link_cap[ks] - guarantee[ks, ls], room[inel]])
    weights = np.concatenate([problem.weights[ks], problem.weights[inel]])
    residual = 1 - guarantee.sum(axis=0)
    if exact:
        usage: Any = full((n, L), 0, exact=True)
        usage[np.arange(n_pairs), ls] = 1
        usage[n_pairs:] = d[inel]
    else:
        # one entry per (elastic coflow, link) row, then the inelastic coflows' vectors
        ri, ci = np.nonzero(fd[inel])
        counts = np.concatenate([np.ones(n_pairs, dtype=np.int64), np.bincount(ri, minlength=inel.size)])
        indptr = np.concatenate([[0], np.cumsum(counts)])
        usage = sp.csr_array(
            (np.concatenate([np.ones(n_pairs), fd[inel][ri, ci]]), np.concatenate([ls, ci]), indptr),
            shape=(n, L),
        )
    x, certified = solve_max_min(usage, residual, weights=weights, upper=upper, exact=exact)
    if exact and not certified:
        exact = False
    extra = full((M, L), 0, exact=exact)
    xe = x[:n_pairs]
    extra[ks, ls] = xe
    if inel.size:
        dd = d[inel] if exact else fd[inel]
        extra[inel] = extra[inel] + x[n_pairs:, None] * dd
    return extra, exact, {"stage2_rows": n}


def _stage2_lp(
    problem: FairnessProblem, guarantee: Matrix, progress: Matrix, cooperative: bool
) -> tuple[Matrix, bool, dict[str, Any]]:
    from .lp import hug_stage2_lp

    res = hug_stage2_lp(problem, guarantee, progress, cooperative=cooperative)
    if res.info.get("extra") is None:
        raise InstanceError(f"the HUG stage-2 LP ended with status {res.status.value}")
    return np.asarray(res.info["extra"], dtype=np.float64), False, {"stage2_lp": res}


Stage2 = Callable[[FairnessProblem, Matrix, Matrix, bool], tuple[Matrix, bool, dict[str, Any]]]

HUG_STAGE2: dict[str, Stage2] = {
    "local": _stage2_local,
    "lp": _stage2_lp,
}
"""Stage-2 implementations by name."""


def hug(
    problem: FairnessProblem,
    *,
    cooperative: bool = False,
    stage2: str = "local",
    method: str = "auto",
) -> FairAllocation:
    """HUG allocation (Algorithm 6).

    Parameters
    ----------
    cooperative
        Fully work-conserving stage 2 (no per-coflow cap); not strategy-proof.
    stage2
        ``"local"`` (max-min with caps, as enforced by the machines) or
        ``"lp"`` (utilisation-maximising LP).
    method
        Stage-1 DRF method (see :func:`coflowopt.fairness.dominant.drf`).
    """
    problem = check_problem(problem, "hug")
    if not isinstance(cooperative, (bool, np.bool_)):
        raise InstanceError(f"cooperative must be True or False, got {cooperative!r:.60}")
    try:
        fn = HUG_STAGE2[stage2]
    except KeyError:
        raise InstanceError(
            f"unknown HUG stage 2 '{stage2}' (known: {', '.join(HUG_STAGE2)})"
        ) from None
    base = drf(problem, method=method)
    g = base.guarantee
    p = base.info["stage1_progress"]
    extra, exact, info = fn(problem, g, p, cooperative)
    exact = bool(exact and base.exact)
    if exact:
        a = g + extra
    else:
        g = as_float(g)
        a = g + as_float(extra)
    return FairAllocation(
        "hug-cooperative" if cooperative else "hug",
        problem,
        a,
        g,
        exact=exact,
        info={**base.info, **info, "cooperative": cooperative, "stage2": stage2,
              "cap": hug_caps(problem, p, cooperative=cooperative)[0]},
    )
