"""The simulator policies hug, drf and psp, and the long-term comparison (§7.7.4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from coflowopt import Coflow, Fabric, Instance, check_feasible, io
from coflowopt.fairness import compare_over_time
from coflowopt.sim import SimulationError, simulate

from ..strategies import instances

ROOT = Path(__file__).resolve().parents[2]
FABRIC = ROOT / "instances" / "fairness" / "hug_fig7_2_fabric.json"

VARIANTS = [
    ("drf", {}),
    ("hug", {}),
    ("hug", {"cooperative": True}),
    ("hug", {"split": "maxmin"}),
    ("hug", {"reschedule": "flow", "vectors": "flows"}),
    ("psp", {}),
    ("psp", {"elastic": False}),
]


@settings(max_examples=25, deadline=None)
@given(instances(max_ports=3, max_coflows=4, max_flows=3))
def test_every_fairness_schedule_is_feasible_and_complete(inst: Instance) -> None:
    for name, params in VARIANTS:
        res = simulate(inst, name, params)
        report = check_feasible(inst, res.schedule)
        assert report, (name, params, report.violations[:3])
        # nothing beats running alone: CCT >= isolation time
        assert (res.cct >= inst.gamma * (1 - 1e-9)).all()


def test_a_lone_coflow_finishes_in_its_isolation_time() -> None:
    inst = io.read(FABRIC).subset([0])
    for name, params in VARIANTS:
        res = simulate(inst, name, params)
        assert res.cct[0] == pytest.approx(inst.gamma[0], rel=1e-9)


def test_drf_starts_the_figure_7_2_coflows_at_progress_two_thirds() -> None:
    inst = io.read(FABRIC)
    res = simulate(inst, "drf")
    first = res.schedule.start == 0
    rates = dict(zip(res.schedule.flow[first].tolist(), res.schedule.rate[first].tolist(), strict=True))
    # C_A: flows 0->1 (3 units) and 1->0 (6 units), Gamma_A = 6: MADD rates 1/2 and 1 times 2/3
    # C_B: flows 0->1 (6 units) and 1->2 (1 unit), Gamma_B = 6: 1 and 1/6 times 2/3
    assert [rates[f] for f in range(4)] == pytest.approx([1 / 3, 2 / 3, 2 / 3, 1 / 9])


def test_hug_uses_the_spare_capacity_drf_leaves_idle() -> None:
    # two coflows on one uplink; C_b also sends to a receiver nobody else uses
    inst = Instance(
        Fabric.uniform(3),
        (Coflow.from_flows("a", [(0, 1, 4.0)]), Coflow.from_flows("b", [(0, 2, 4.0), (1, 2, 1.0)])),
    )
    drf = simulate(inst, "drf")
    hug = simulate(inst, "hug")
    assert check_feasible(inst, hug.schedule) and check_feasible(inst, drf.schedule)
    assert hug.cct.max() <= drf.cct.max() + 1e-9
    assert hug.cct.mean() <= drf.cct.mean() + 1e-9


def test_compare_over_time_reports_the_section_7_7_4_metrics() -> None:
    inst = io.read(FABRIC).with_releases([0.0, 1.0])
    rows = compare_over_time(inst, ["hug", "drf", "psp", "varys", ("hug", {"cooperative": True})])
    labels = [r.label for r in rows]
    assert labels == ["hug", "drf", "psp", "varys", "hug(cooperative=True)"]
    for r in rows:
        s = r.summary()
        assert s["min_slowdown"] >= 1 - 1e-9
        assert s["max_cct"] >= s["p95_cct"] >= 0
        assert {"mean_cct_vs_baseline", "max_cct_vs_baseline", "std_slowdown"} <= set(s)
    assert rows[0].summary()["mean_cct_vs_baseline"] == 1.0
    assert np.allclose(rows[0].normalized, 1.0)


def test_bad_parameters_are_rejected() -> None:
    inst = io.read(FABRIC)
    with pytest.raises(SimulationError, match="split must be one of"):
        simulate(inst, "hug", {"split": "even"})
    with pytest.raises(SimulationError, match="unknown parameter 'cooperative'"):
        simulate(inst, "drf", {"cooperative": True})
