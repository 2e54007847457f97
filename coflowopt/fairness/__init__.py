"""Multi-resource fairness for coflows (Chowdhury's dissertation, chapter 7 and Appendix D).

Data flows one way: :class:`FairnessProblem` (correlation vectors, from a
file, arrays or an instance) -> a mechanism (:func:`drf`, :func:`hug`,
:func:`psp`, ... or :func:`allocate` by name) -> :class:`FairAllocation` ->
:func:`evaluate` (progress, isolation guarantee, utilisation, consumption,
min-cut proportionality); :func:`fairness_timeline` measures the same along a
simulated run. :mod:`~coflowopt.fairness.lp` cross-checks the
closed forms with HiGHS; :func:`lie_search` looks for profitable lies.
Inputs given as integers, ``Fraction`` or ``"p/q"`` strings are computed
exactly where the method allows: DRF's closed form always; PS-P's equilibrium, HUG's stage 2
and progressive filling solve in floats and keep a result as fractions only when its
rationalisation (denominators up to ``_arith.MAX_DENOMINATOR``, 10^6) is certified
exact, else they return the float result with ``exact=False`` (the command line's
header then says "(float)"); with denominators near 1,000 that is the usual case.
"""

from .allocation import (
    AllocationViolation,
    FairAllocation,
    FairnessReport,
    check_allocation,
    consumption,
    evaluate,
    progress,
)
from .dominant import DRF_METHODS, IncrementalDRF, drf, drf_level, drf_progress
from .flowlevel import per_endpoint, per_flow
from .guarantees import HUG_STAGE2, hug
from .io import DEMANDS_FORMAT, load_problem, read_demands, write_demands
from .longterm import compare_over_time
from .lp import hug_stage2_lp, lexicographic_max_min_lp, max_min_progress_lp
from .mechanisms import MECHANISMS, Mechanism, allocate
from .problem import FairnessProblem, correlation_vectors
from .sharing import equal_share, psp, wfq_equilibrium
from .spare import SPARE_POLICIES, drf_work_conserving
from .strategy import LieSearchResult, lie_search, payoffs
from .timeline import FairnessTimeline, fairness_timeline

__all__ = [
    "DEMANDS_FORMAT",
    "DRF_METHODS",
    "HUG_STAGE2",
    "MECHANISMS",
    "SPARE_POLICIES",
    "AllocationViolation",
    "FairAllocation",
    "FairnessProblem",
    "FairnessReport",
    "FairnessTimeline",
    "IncrementalDRF",
    "LieSearchResult",
    "Mechanism",
    "allocate",
    "check_allocation",
    "compare_over_time",
    "consumption",
    "correlation_vectors",
    "drf",
    "drf_level",
    "drf_progress",
    "drf_work_conserving",
    "equal_share",
    "evaluate",
    "fairness_timeline",
    "hug",
    "hug_stage2_lp",
    "lexicographic_max_min_lp",
    "lie_search",
    "load_problem",
    "max_min_progress_lp",
    "payoffs",
    "per_endpoint",
    "per_flow",
    "progress",
    "psp",
    "read_demands",
    "wfq_equilibrium",
    "write_demands",
]
