"""Experiments as data: a declared grid of simulations, bounds and solves, swept and reported.

``exp = load_experiment("sweep.toml")`` (or an :class:`Experiment` built in Python);
``sweep(exp, "out/", jobs=2)`` (or ``dask="local:2"``, ``dask="tcp://host:8786"``)
computes every cell not already cached in ``out/`` and writes the tidy tables;
``load("out/")`` reads the per-run table (``load("out/", "coflows")``: the per-coflow
one) as a pandas DataFrame; ``report("out/", baseline="varys")`` gives the means over
seeds with confidence intervals. The tables need the ``sweep`` extra (pandas, pyarrow),
Dask its ``distributed``.
"""

from .report import load, report
from .run import SweepError, SweepProgress, SweepResult, run_cell, sweep
from .spec import (
    GENERATORS,
    BoundSpec,
    Cell,
    Experiment,
    FabricSpec,
    InstanceSpec,
    SchedulerSpec,
    SolverSpec,
    load_experiment,
)

__all__ = [
    "GENERATORS",
    "BoundSpec",
    "Cell",
    "Experiment",
    "FabricSpec",
    "InstanceSpec",
    "SchedulerSpec",
    "SolverSpec",
    "SweepError",
    "SweepProgress",
    "SweepResult",
    "load",
    "load_experiment",
    "report",
    "run_cell",
    "sweep",
]
