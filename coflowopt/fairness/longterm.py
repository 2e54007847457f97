"""Long-term comparison of fair and efficient schedulers (dissertation §7.7.4).

Runs the simulator (:mod:`coflowopt.sim`) with the fairness policies
``hug``, ``drf``, ``psp`` and any other registered scheduler (``varys``,
``fair``, ...) on one instance and reports, per scheduler, the metrics of
§7.7.4: CCTs (mean, 95th percentile, maximum), *slowdown* = CCT divided by
the minimum CCT the coflow would have alone (its isolation time
``Gamma_k``, Eq. 4.1, exact when every flow is available at the release),
min / max / mean / standard deviation of the slowdown (Table 7.3), and the
CCTs normalised by a baseline scheduler's (HUG in the dissertation:
"Normalized Comp. Time = Compared Duration / HUG's Duration").

The dissertation reports §7.7.4 as a cooperative environment (§7.2: "In
cooperative environments, HUG outperforms PS-P and per-flow fairness by
1.49x and 45.75x"; §7.7's highlights: "even in cooperative environments
(§7.7.4)"). The default ``hug`` here is the non-cooperative HUG; pass
``("hug", {"cooperative": True})`` (and ``baseline="hug(cooperative=True)"``)
to compare against the variant the dissertation used.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InstanceError
from ..instance import Instance

__all__ = ["LongTermRow", "compare_over_time", "slowdown"]

def _load_policies() -> Any:
    # imported late: the simulator's hug/drf/psp policies import this package
    return importlib.import_module("coflowopt.sim")


def slowdown(instance: Instance, completion: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``CCT_k / Gamma_k``: completion time over the coflow's isolation time."""
    if instance.is_multi_wave:
        raise InstanceError("slowdown uses the isolation time, which ignores per-flow delays")
    cct = np.asarray(completion, dtype=np.float64) - instance.release
    return cct / instance.gamma


@dataclass(frozen=True, slots=True)
class LongTermRow:
    """One scheduler's long-term metrics."""

    scheduler: str
    params: Mapping[str, Any]
    cct: npt.NDArray[np.float64]
    slowdown: npt.NDArray[np.float64]
    runtime: float
    normalized: npt.NDArray[np.float64] | None = None
    """CCT divided by the baseline scheduler's CCT, per coflow."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line (the dataclass's own printed every coflow's CCT, slowdown and ratio)."""
        return (f"LongTermRow(label={self.label!r}, coflows={self.cct.size}, "
                f"mean_cct={float(np.mean(self.cct)) if self.cct.size else math.nan!r}, "
                f"runtime={self.runtime:.3g})")

    @property
    def label(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.scheduler}({opts})" if opts else self.scheduler

    def summary(self) -> dict[str, float]:
        s = self.slowdown
        out = {
            "mean_cct": float(self.cct.mean()),
            "p95_cct": float(np.percentile(self.cct, 95)),
            "max_cct": float(self.cct.max()),
            "min_slowdown": float(s.min()),
            "max_slowdown": float(s.max()),
            "mean_slowdown": float(s.mean()),
            "std_slowdown": float(s.std()),
            "runtime": self.runtime,
        }
        if self.normalized is not None:
            out["mean_cct_vs_baseline"] = out["mean_cct"] / float(self.extra["baseline_mean_cct"])
            out["max_cct_vs_baseline"] = out["max_cct"] / float(self.extra["baseline_max_cct"])
            out["share_faster_than_baseline"] = float(np.mean(self.normalized < 1 - 1e-9))
            # coflow by coflow (the dissertation's "Compared Duration / HUG's Duration"),
            # where the two above are ratios of a mean and of a maximum
            out["mean_normalized_cct"] = float(self.normalized.mean())
            out["median_normalized_cct"] = float(np.median(self.normalized))
        return out


def compare_over_time(
    instance: Instance,
    schedulers: Sequence[str | tuple[str, Mapping[str, Any]]] = ("hug", "drf", "psp", "varys", "fair"),
    *,
    baseline: str | None = "hug",
    record: bool = False,
) -> list[LongTermRow]:
    """Simulate each scheduler and collect the §7.7.4 metrics.

    ``schedulers`` holds names or ``(name, params)`` pairs; ``baseline`` (a
    label among them, e.g. ``"hug"``) normalises the CCTs.
    """
    sim = _load_policies()
    if isinstance(schedulers, str) or not isinstance(schedulers, Sequence):
        raise InstanceError(f"schedulers is a list of names or (name, params) pairs, got "
                            f"{schedulers!r:.60}")
    runs: list[tuple[str, dict[str, Any]]] = []
    for item in schedulers:
        if not (isinstance(item, str) or (isinstance(item, (tuple, list)) and len(item) == 2
                                          and isinstance(item[0], str)
                                          and isinstance(item[1], Mapping)
                                          and all(isinstance(k, str) for k in item[1]))):
            raise InstanceError(f"a scheduler is a name or a (name, params) pair, got {item!r:.60}")
        runs.append((item, {}) if isinstance(item, str) else (item[0], dict(item[1])))
    none = np.zeros(0)
    labels = [LongTermRow(name, params, none, none, 0.0).label for name, params in runs]
    if baseline is not None and baseline not in labels:  # (before the simulations)
        raise InstanceError(f"baseline '{baseline}' is not among the schedulers compared "
                            f"({', '.join(labels)})")
    rows: list[LongTermRow] = []
    for name, params in runs:
        res = sim.simulate(instance, name, params, record=record)
        rows.append(LongTermRow(name, params, np.asarray(res.cct, dtype=np.float64),
                                slowdown(instance, res.completion), float(res.runtime)))
    if baseline is not None:
        base = next(r for r in rows if r.label == baseline)
        extra = {"baseline": baseline, "baseline_mean_cct": float(base.cct.mean()),
                 "baseline_max_cct": float(base.cct.max())}
        with np.errstate(divide="ignore", invalid="ignore"):
            rows = [
                LongTermRow(r.scheduler, r.params, r.cct, r.slowdown, r.runtime,
                            np.where(base.cct > 0, r.cct / base.cct, 1.0), extra)
                for r in rows
            ]
    return rows
