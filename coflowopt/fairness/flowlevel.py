"""Flow-level comparators: per-flow and per-endpoint fairness (§7.4.1, §7.7).

Both need the flows of an instance (a problem built by
:meth:`FairnessProblem.from_instance`). Flow rates come from
:func:`coflowopt.alloc.max_min` on the route incidence; a coflow's
allocation on a link is the sum of its flows' rates there, as a fraction of
the link's capacity, and its progress is measured against its correlation
vector like every other mechanism.

- per-flow fairness: every flow has weight 1 (TCP-like), so coflows with
  many flows crowd out the others;
- per-endpoint fairness (Seawall-style, per source): each sending endpoint
  of a coflow (a coflow's flows leaving one ingress port) has the coflow's
  weight, split equally among its flows. Our reading of [179, 184]; the
  dissertation does not define it further.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..alloc import max_min
from ..errors import InstanceError
from ..instance import Instance
from .allocation import FairAllocation
from .problem import FairnessProblem, check_problem

__all__ = ["per_endpoint", "per_flow"]


def _instance(problem: FairnessProblem, what: str) -> Instance:
    if problem.instance is None:
        raise InstanceError(
            f"{what} needs the coflows' flows; build the problem from an instance "
            "(FairnessProblem.from_instance; on the command line, an instance file), "
            "not from correlation vectors (a demands file)"
        )
    return problem.instance


def _allocate(problem: FairnessProblem, name: str, flow_weights: npt.NDArray[np.float64]) -> FairAllocation:
    inst = _instance(problem, name)
    routes = inst.routes
    cap = inst.fabric.capacity
    rates = max_min(routes, cap, weights=flow_weights)
    coo = routes.tocoo()
    K, L = inst.num_coflows, inst.fabric.num_links
    a = np.bincount(
        inst.flow_coflow[coo.row] * L + coo.col,
        weights=rates[coo.row] * coo.data / cap[coo.col],
        minlength=K * L,
    ).reshape(K, L)
    alloc = a.astype(np.float64)
    return FairAllocation(name, problem.to_float(), alloc, alloc, info={"flow_rates": rates})


def per_flow(problem: FairnessProblem) -> FairAllocation:
    """Max-min fairness among flows (every flow weight 1)."""
    problem = check_problem(problem, "per_flow")
    inst = _instance(problem, "per-flow fairness")
    return _allocate(problem, "perflow", np.ones(inst.num_flows))


def per_endpoint(problem: FairnessProblem) -> FairAllocation:
    """Max-min among flows, each coflow's sending endpoint sharing its weight equally."""
    problem = check_problem(problem, "per_endpoint")
    inst = _instance(problem, "per-endpoint fairness")
    key = inst.flow_coflow * inst.num_ports + inst.flow_src
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    w = inst.weight[inst.flow_coflow] / counts[inverse]
    return _allocate(problem, "perendpoint", w)
