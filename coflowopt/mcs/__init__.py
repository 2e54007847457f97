"""MCS theory: SNCF width classification and demotion thresholds (MCS §V-VI).

- :mod:`.stats`: coflow attributes, their Pearson correlations (Table I) and
  the empirical joint distribution of size and width;
- :mod:`.classification`: Algorithm 1 (SNCF) as published, the exact optimum of
  Eq. (1) by dynamic programming, classification error and size ranges;
- :mod:`.thresholds`: the M/M/1 model of Eqs. (4)-(5) for the single,
  double and per-class threshold schemes, with an optimizer, an exhaustive
  grid and an exact DP;
- :mod:`.sweeps`: sensitivity tables of the model (Aalo Fig. 6.12, MCS
  Fig. 18);
- :mod:`.validate` (imported on demand, it needs the simulator): the model
  against simulated Aalo and MCS runs.
"""

from .classification import (
    METHODS,
    PAPER_WIDTH_THRESHOLDS,
    Classification,
    assign_priority,
    classify,
    default_size_thresholds,
    evaluate,
    optimal_classification,
    paper_classification,
    paper_width_thresholds,
    sncf,
)
from .stats import ATTRIBUTES, Correlations, JointDistribution, Workload, correlations, joint_distribution
from .sweeps import Table, aalo_sweep, linear_sweep, mcs_sweep, plot_sweep
from .thresholds import (
    SCHEMES,
    SOLVERS,
    ThresholdModel,
    ThresholdSolution,
    aalo_thresholds,
    build_model,
    default_thresholds,
    double_model,
    dp_thresholds,
    grid_search,
    initial_queues,
    linear_thresholds,
    mcs_thresholds,
    optimize_thresholds,
    per_class_model,
    policy_parameters,
    single_model,
    solve_thresholds,
)

__all__ = [
    "ATTRIBUTES",
    "METHODS",
    "PAPER_WIDTH_THRESHOLDS",
    "SCHEMES",
    "SOLVERS",
    "Classification",
    "Correlations",
    "JointDistribution",
    "Table",
    "ThresholdModel",
    "ThresholdSolution",
    "Workload",
    "aalo_sweep",
    "aalo_thresholds",
    "assign_priority",
    "build_model",
    "classify",
    "correlations",
    "default_size_thresholds",
    "default_thresholds",
    "double_model",
    "dp_thresholds",
    "evaluate",
    "grid_search",
    "initial_queues",
    "joint_distribution",
    "linear_sweep",
    "linear_thresholds",
    "mcs_sweep",
    "mcs_thresholds",
    "optimal_classification",
    "optimize_thresholds",
    "paper_classification",
    "paper_width_thresholds",
    "per_class_model",
    "plot_sweep",
    "policy_parameters",
    "single_model",
    "sncf",
    "solve_thresholds",
]
