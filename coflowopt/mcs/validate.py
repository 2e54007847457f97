"""The M/M/1 threshold model against the simulator (issue 6, item 4).

For one instance, :func:`validate` simulates Aalo and MCS with the published
and the model-optimized thresholds, and puts each run's simulated mean CCT
beside the model's prediction (Eq. (5)). The model is dimensionless, so
the comparison is between *ratios*, each configuration against Aalo with
its defaults:

- ``predicted_vs_aalo`` = model objective / model objective of Aalo's defaults;
- ``simulated_vs_aalo`` = simulated mean CCT / simulated mean CCT of Aalo's defaults.

When the model is right, the two columns agree. :func:`load_sweep` repeats
this on synthetic instances (:func:`coflowopt.io.generate.synthetic`) at
several offered loads. :func:`threshold_sweep` simulates a sensitivity sweep
(the Aalo ``Q1`` or MCS ``theta`` families) beside the model's values.

Configurations (:data:`CONFIGS`):

- ``aalo-default``: the ``aalo`` policy (K queues, ``E = 10``, ``Q1 = 10``
  MB, weighted sharing);
- ``aalo-optimized``: D-CLAS with the single-scheme optimum. It runs on the
  ``mcs`` policy, configured as Aalo: one width class, every coflow
  demoted by bytes sent, weighted sharing. The ``aalo`` policy only takes
  exponential thresholds.
- ``mcs-default``: the ``mcs`` policy with the paper's parameters
  (``Delta_i = 10^i``, ``p_i = i``, ``theta^n_j = 10^j`` MB, ``theta^w_j =
  2^(j-1)`` MB, strict priority);
- ``mcs-optimized``: the same with the double-scheme optimum.

The optimum is exact (the DP) when it is affordable and comes from
:func:`~coflowopt.mcs.thresholds.optimize_thresholds` otherwise; the
``exact`` column says which.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._text import plural
from ..errors import CoflowoptError, InstanceError
from ..instance import BINS, MB, Instance
from ..io.generate import FACEBOOK_BINS, WorkloadClass, offered_load, synthetic
from ..result import Status
from .sweeps import Table
from .thresholds import (
    ThresholdModel,
    ThresholdSolution,
    aalo_thresholds,
    default_thresholds,
    double_model,
    dp_thresholds,
    mcs_thresholds,
    optimize_thresholds,
    policy_parameters,
    single_model,
)

__all__ = ["COLUMNS", "CONFIGS", "SWEEPS", "load_sweep", "optimum", "threshold_sweep", "validate"]

CONFIGS = ("aalo-default", "aalo-optimized", "mcs-default", "mcs-optimized")
"""Configurations by name (the CLI lists the same names)."""

COLUMNS = (
    "workload",
    "load",
    "config",
    "predicted",
    "simulated_cct",
    "predicted_vs_aalo",
    "simulated_vs_aalo",
    "exact",
    *(f"cct_{b}" for b in BINS),
    "sim_seconds",
)
"""Columns of :func:`validate`'s table; ``cct_SN`` ... are the simulated mean CCTs per bin,
``sim_seconds`` the simulation's own wall time (``SimulationResult.runtime``)."""


def optimum(model: ThresholdModel, *, seed: int = 0, max_cells: float = 3e8) -> ThresholdSolution:
    """The exact DP when it visits at most ``max_cells`` cells, else the optimizer."""
    try:
        return dp_thresholds(model, max_cells=max_cells)
    except CoflowoptError:
        return optimize_thresholds(model, seed=seed)


def _simulate_all(instance: Instance, runs: dict[str, tuple[str, dict[str, Any]]],
                  batch_interval: float | None, jobs: int) -> dict[str, Any]:
    """Each run (label -> policy name and parameters), on ``jobs`` processes (:func:`simulate_many`)."""
    from ..sim import make_policy, simulate_many  # the simulator is only needed here

    policies = {label: make_policy(name, params) for label, (name, params) in runs.items()}
    return simulate_many(instance, policies, jobs=jobs, batch_interval=batch_interval,
                         record=False, check=False)


def _bin_means(instance: Instance, cct: np.ndarray) -> list[float]:
    labels = instance.bins()
    return [float(cct[labels == b].mean()) if np.any(labels == b) else math.nan for b in BINS]


def validate(
    instance: Instance,
    *,
    queues: int = 10,
    load: float | None = None,
    configs: Sequence[str] = CONFIGS,
    seed: int = 0,
    numerator: str = "class",
    batch_interval: float | None = None,
    aalo_sharing: str = "weighted",
    workload: str = "",
    progress: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> Table:
    """Model prediction and simulated mean CCT for each configuration of :data:`CONFIGS`.

    ``load`` is the model's ``rho`` (default: the instance's offered load,
    which must lie in (0, 1)); the instance is simulated as given, so pass one
    at that load (:func:`coflowopt.io.generate.rescale_load`; ``coflowopt mcs
    validate --load`` does). Rows follow the order of :data:`CONFIGS`;
    ``simulated_vs_aalo`` is ``nan`` unless ``aalo-default`` is among
    ``configs``. ``progress`` is called with each configuration's name
    before the simulations start. ``jobs``: how many simulations run at once,
    each in its own process (:func:`coflowopt.sim.simulate_many`; the same
    results). ``aalo_sharing`` is how Aalo's queues share the
    fabric: ``"weighted"`` (D-CLAS, the default) or ``"strict"`` priority
    (what CoflowSim, the simulator of the Aalo and MCS papers, does; much
    faster to simulate). ``batch_interval`` defaults to ``None``: arrivals are
    admitted at once. The paper's simulations batch them instead, every 10 s
    by default (§VIII-A, Fig. 14) or every 1 s (§VIII-D, Fig. 15). Pass
    ``batch_interval=10`` for that setting.
    """
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        raise InstanceError(f"unknown configuration '{unknown[0]}'; choose from {', '.join(CONFIGS)}")
    rho = offered_load(instance) if load is None else float(load)
    if not (math.isfinite(rho) and 0 < rho < 1):
        raise InstanceError(f"the model needs a load in (0, 1); the instance's offered load is {rho:g}")
    models = {
        "aalo": single_model(instance, queues=queues, load=rho, numerator=numerator),
        "mcs": double_model(instance, queues=queues, load=rho, numerator=numerator),
    }
    solutions = {name: optimum(m, seed=seed) for name, m in models.items()}
    reference = models["aalo"].objective(default_thresholds(models["aalo"]))
    chosen = [c for c in CONFIGS if c in configs]
    thetas: dict[str, Any] = {}
    runs: dict[str, tuple[str, dict[str, Any]]] = {}
    for config in chosen:
        family, kind = config.split("-")
        model = models[family]
        theta = default_thresholds(model) if kind == "default" else solutions[family].thresholds
        thetas[config] = theta
        if config == "aalo-default":
            runs[config] = (
                "aalo",
                {
                    "num_queues": queues,
                    "multiplier": 10.0,
                    "first_threshold": 10 * MB,
                    "sharing": aalo_sharing,
                },
            )
        else:
            runs[config] = policy_parameters(
                model, theta, sharing=aalo_sharing if family == "aalo" else None
            )
        if progress is not None:
            progress(config)
    results = _simulate_all(instance, runs, batch_interval, jobs)
    rows: list[dict[str, Any]] = []
    for config in chosen:
        family, kind = config.split("-")
        res = results[config]
        cct = res.cct
        rows.append(
            {
                "workload": workload or instance.name,
                "load": rho,
                "config": config,
                "predicted": models[family].objective(thetas[config]),
                "simulated_cct": float(cct.mean()),
                "exact": kind == "default" or solutions[family].status is Status.OPTIMAL,
                **{f"cct_{b}": v for b, v in zip(BINS, _bin_means(instance, cct), strict=True)},
                "sim_seconds": res.runtime,
            }
        )
    # without Aalo's defaults in the run there is no simulated reference (combine runs by hand)
    base = next((r["simulated_cct"] for r in rows if r["config"] == "aalo-default"), math.nan)
    for r in rows:
        r["predicted_vs_aalo"] = r["predicted"] / reference
        r["simulated_vs_aalo"] = r["simulated_cct"] / base
    return Table(
        COLUMNS,
        tuple(tuple(r[c] for c in COLUMNS) for r in rows),
        title=f"model vs simulation, {plural(queues, 'queue')}, load {rho:.3g}",
    )


def load_sweep(
    *,
    loads: Sequence[float] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    num_coflows: int = 100,
    num_ports: int = 10,
    classes: Sequence[WorkloadClass] = FACEBOOK_BINS,
    seed: int = 0,
    **options: Any,
) -> Table:
    """:func:`validate` on synthetic instances at each offered load (MCS §VIII-C: 10% to 80%).

    The instances come from :func:`coflowopt.io.generate.synthetic` with the
    same coflows at every load (same ``seed``); only the Poisson arrivals
    change. The model's ``rho`` is the generator's load. Unlike the paper's
    Fig. 14, which uses 10 s batches, the runs are unbatched unless
    ``batch_interval`` is passed (see :func:`validate`).
    """
    rows: list[tuple[Any, ...]] = []
    for rho in loads:
        inst = synthetic(num_coflows, num_ports, classes=classes, load=rho, seed=seed)
        table = validate(inst, load=rho, workload=f"synthetic-{seed}", seed=seed, **options)
        rows.extend(table.rows)
    return Table(COLUMNS, tuple(rows), title="model vs simulation over offered loads")


def _sweep_point(
    instance: Instance, kind: str, value: float, queues: int, rho: float
) -> tuple[ThresholdModel, Any, str, dict[str, Any]]:
    """Model, thresholds, policy and parameters of one point of a sensitivity sweep."""
    if kind in ("aalo", "aalo-factor", "aalo-queues"):
        k = int(value) if kind == "aalo-queues" else queues
        first = float(value) if kind == "aalo" else 10 * MB
        factor = float(value) if kind == "aalo-factor" else 10.0
        model = single_model(instance, queues=k, load=rho)
        params = {"num_queues": k, "multiplier": factor, "first_threshold": first}
        return model, aalo_thresholds(k, factor=factor, first=first), "aalo", params
    model = double_model(instance, queues=queues, load=rho)
    key = "narrow_first" if kind == "mcs-narrow" else "wide_first"
    theta = mcs_thresholds(queues, **{key: float(value)})
    policy, params = policy_parameters(model, theta)
    return model, theta, policy, params


SWEEPS = ("aalo", "aalo-factor", "aalo-queues", "mcs-narrow", "mcs-wide")
"""Simulated sweeps: Aalo's Q1 (bytes), E, K (Fig. 6.12a-c); MCS theta^n_1, theta^w_1 (bytes, Fig. 18)."""


def threshold_sweep(
    instance: Instance,
    *,
    kind: str = "aalo",
    values: Sequence[float] = (1 * MB, 10 * MB, 100 * MB, 1000 * MB),
    queues: int = 10,
    load: float | None = None,
    batch_interval: float | None = None,
    jobs: int = 1,
) -> Table:
    """Simulated mean CCT beside the model across a sensitivity sweep (Aalo Fig. 6.12, MCS Fig. 18).

    ``kind`` (:data:`SWEEPS`): ``"aalo"`` varies ``Q1`` (bytes) with ``E =
    10``, ``"aalo-factor"`` varies ``E`` with ``Q1 = 10`` MB,
    ``"aalo-queues"`` varies ``K`` (the ``aalo`` policy); ``"mcs-narrow"``
    varies ``theta^n_1`` (bytes, factor 10) and ``"mcs-wide"``
    ``theta^w_1`` (bytes, factor 2), the other family at its default (the
    ``mcs`` policy). Columns: ``value``, ``predicted``, ``simulated_cct``,
    and both relative to the first row. ``jobs``: simulations at once, as in
    :func:`validate`.
    """
    if kind not in SWEEPS:
        raise InstanceError(f"unknown sweep kind '{kind}'; choose from {', '.join(SWEEPS)}")
    rho = offered_load(instance) if load is None else float(load)
    if not (math.isfinite(rho) and 0 < rho < 1):
        raise InstanceError(f"the model needs a load in (0, 1); the instance's offered load is {rho:g}")
    values = list(values)
    points = {f"{i}": _sweep_point(instance, kind, v, queues, rho) for i, v in enumerate(values)}
    results = _simulate_all(instance, {i: (pt[2], pt[3]) for i, pt in points.items()}, batch_interval, jobs)
    rows = []
    for (i, (model, theta, _, _)), v in zip(points.items(), values, strict=True):
        shown = v / MB if kind in ("aalo", "mcs-narrow", "mcs-wide") else v
        rows.append([shown, model.objective(theta), float(results[i].cct.mean())])
    for r in rows:
        r += [r[1] / rows[0][1], r[2] / rows[0][2]]
    unit = "value_mb" if kind in ("aalo", "mcs-narrow", "mcs-wide") else "value"
    return Table(
        (unit, "predicted", "simulated_cct", "predicted_relative", "simulated_relative"),
        tuple(tuple(r) for r in rows),
        title=f"{kind} sweep, {'' if kind == 'aalo-queues' else plural(queues, 'queue') + ', '}"
              f"load {rho:.3g}",
    )
