"""Write ``instances/permutation_gap.json``: the best permutation schedule is worse than the optimum.

Dissertation Theorem B.3.1 says permutation schedules are not optimal for
coupled ports but gives its witness only in a figure (Fig. B.2). This
instance was found by a random search over small integer instances
(3 ports, unit capacities, all coflows at time 0) and is kept because it is
small and the gap does not depend on how flows of one coflow are ordered
among themselves. The values in ``_expected`` are computed here by
coflowopt and checked again by ``tests/exact/test_permutation.py``.

    python benchmarks/make_permutation_gap.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coflowopt import Coflow, Fabric, Instance
from coflowopt.io import native
from coflowopt.solvers import solve

OUT = Path(__file__).resolve().parents[1] / "instances" / "permutation_gap.json"


def build() -> Instance:
    return Instance(
        Fabric.uniform(3),
        (
            Coflow.from_flows("C1", [(1, 0, 5.0), (0, 0, 1.0)]),
            Coflow.from_flows("C2", [(1, 2, 3.0), (2, 0, 2.0)]),
            Coflow.from_flows("C3", [(0, 2, 1.0)]),
        ),
        name="permutation schedules are suboptimal (Theorem B.3.1)",
    )


def main() -> None:
    inst = build()
    exact = solve(inst, method="exact")
    perm = solve(inst, method="permutation")
    assert exact.completion is not None and perm.completion is not None
    meta = {
        "_source": "computed by coflowopt (benchmarks/make_permutation_gap.py); a witness for "
                   "the dissertation's Appendix B.3, Theorem B.3.1, whose own witness "
                   "(Fig. B.2) is drawn only in the figure",
        "_description": (
            "Three coflows at time 0 on a 3x3 big switch with unit capacities. The best "
            "permutation schedule (one coflow priority order, greedy order-preserving rates, "
            "recomputed at every event) has sum of completion times 14; the optimum is 13. "
            "Optimal schedule: in [0,1] C3 sends 0->2 and C1 sends 1->0 at rate 1; in [1,4] C2 "
            "sends 1->2 at rate 1 and 2->0 at rate 2/3 while C1 sends 0->0 at rate 1/3; in "
            "[4,8] C1 finishes 1->0. Completions C3 = 1, C2 = 4, C1 = 8. No single priority "
            "order produces this: C1 must win ingress 1 during [0,1] and lose it during [1,4]."
        ),
        "_expected": {
            "optimum_wcct": round(float(exact.objective), 9),
            "optimum_completion": {i: round(float(c), 9)
                                   for i, c in zip(inst.ids, exact.completion, strict=True)},
            "best_permutation_wcct": round(float(perm.objective), 9),
            "best_permutation_order": perm.info["order"],
            "best_permutation_completion": {i: round(float(c), 9) for i, c in
                                            zip(inst.ids, perm.completion, strict=True)},
        },
        "_notes": (
            "All values computed, not from a paper. The gap stays when the flows of each coflow "
            "are prioritised in any order among themselves (checked by the tests), so it comes "
            "from ordering whole coflows, not from the greedy rule inside a coflow. Isolation "
            "times: C1 6, C2 3, C3 1."
        ),
    }
    assert np.isclose(exact.objective, 13.0) and np.isclose(perm.objective, 14.0)
    native.write(inst, OUT, metadata=meta)
    print(f"wrote {OUT}: optimum {exact.objective:g}, best permutation {perm.objective:g}")


if __name__ == "__main__":
    main()
