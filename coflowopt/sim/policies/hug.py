"""``hug``: High Utilization with Guarantees over time (dissertation §7.5.2, §7.7.4).

At every decision the active coflows get HUG's allocation (Algorithm 6) for
the correlation vectors of what they still have to send: DRF's optimal
isolation guarantee first, then each link's spare capacity shared by
max-min fairness with every coflow capped at its dominant share
(non-cooperative, the default) or without the cap (``cooperative=true``,
the work-conserving variant of §7.5.3 used for the cooperative comparison
of §7.7.4; work-conserving in link shares, not at flow level, as
:mod:`.psp` explains). See :mod:`coflowopt.sim.policies._fairness` for how coflow shares
become flow rates and for the common parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import register
from ._base import check_bool
from ._fairness import CoflowFairness, FairnessParams


@dataclass(frozen=True, slots=True)
class HugParams(FairnessParams):
    cooperative: bool = False
    """Stage 2 without the per-coflow cap (work-conserving at the level of link shares)."""

    def __post_init__(self) -> None:
        FairnessParams.__post_init__(self)
        check_bool(self.cooperative, "cooperative")


@register
class Hug(CoflowFairness):
    name = "hug"
    summary = "HUG: DRF guarantees plus capped spare capacity (coflow-level fairness)"
    mechanism = "hug"
    Params = HugParams

    def mechanism_options(self) -> dict[str, Any]:
        return {"cooperative": bool(self.params.cooperative)}
