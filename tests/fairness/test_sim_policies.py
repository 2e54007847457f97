"""The simulator policies hug, drf and psp, and the long-term comparison (§7.7.4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from coflowopt import Instance, InstanceError, check_feasible, io
from coflowopt.fairness import compare_over_time
from coflowopt.sim import SimulationError, simulate

from ..strategies import instances

ROOT = Path(__file__).resolve().parents[2]
FABRIC = ROOT / "instances" / "fairness" / "hug_fig7_2_fabric.json"
TRACE = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

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
    # Figure 7.2's coflows at t = 0. DRF: progress 2/3 each (above), so uplink 1 carries
    # C_A's 1->0 at 2/3 and C_B's 1->2 at 1/9, and 2/9 of it idles. HUG's second stage gives
    # that spare to C_B's 1->2 (the only flow that can use it; C_B stays within its cap of
    # 2/3 per link): 1/9 + 2/9 = 1/3. (With `hug` running DRF the CCT comparisons
    # that stood here alone still passed: on this fabric both finish at 9.)
    inst = io.read(FABRIC)
    out = {}
    for name in ("drf", "hug"):
        res = simulate(inst, name)
        assert check_feasible(inst, res.schedule)
        first = res.schedule.start == 0
        out[name] = dict(zip(res.schedule.flow[first].tolist(),
                             res.schedule.rate[first].tolist(), strict=True))
    assert out["drf"][3] == pytest.approx(1 / 9) and out["hug"][3] == pytest.approx(1 / 3)
    assert [out["hug"][f] for f in range(3)] == pytest.approx([1 / 3, 2 / 3, 2 / 3])


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
    # the values, from separate simulations (not only labels, keys and
    # orderings): CCTs, slowdown = CCT / isolation time, and the ratios to the baseline's
    base = simulate(inst, "hug", record=False).cct
    for r, (name, params) in zip(rows, [("hug", {}), ("drf", {}), ("psp", {}), ("varys", {}),
                                        ("hug", {"cooperative": True})], strict=True):
        cct = simulate(inst, name, params, record=False).cct
        s = r.summary()
        assert r.cct == pytest.approx(cct, rel=1e-12)
        assert r.slowdown == pytest.approx(cct / inst.gamma, rel=1e-12)
        assert r.normalized == pytest.approx(cct / base, rel=1e-12)
        assert s["mean_cct_vs_baseline"] == pytest.approx(cct.mean() / base.mean(), rel=1e-12)
        assert s["max_cct_vs_baseline"] == pytest.approx(cct.max() / base.max(), rel=1e-12)
        assert s["mean_normalized_cct"] == pytest.approx(np.mean(cct / base), rel=1e-12)
        assert s["median_normalized_cct"] == pytest.approx(np.median(cct / base), rel=1e-12)
        assert s["min_slowdown"] == pytest.approx((cct / inst.gamma).min(), rel=1e-12)


def test_bad_parameters_are_rejected() -> None:
    inst = io.read(FABRIC)
    with pytest.raises(SimulationError, match="split must be one of"):
        simulate(inst, "hug", {"split": "even"})
    with pytest.raises(SimulationError, match="unknown parameter 'cooperative'"):
        simulate(inst, "drf", {"cooperative": True})


@pytest.mark.parametrize(("name", "params"), VARIANTS)
def test_the_smallest_weight_runs_last_without_a_warning(name, params) -> None:
    # weights below the smallest normal float are refused (1e-320 overflowed DRF's 1 / weight);
    # at the smallest normal one the coflow gets nearly nothing until the other is done
    from coflowopt import Coflow, Fabric
    from coflowopt.instance import TINY

    inst = Instance(Fabric.uniform(1), (Coflow.from_flows("a", [(0, 0, 1.0)], weight=TINY),
                                        Coflow.from_flows("b", [(0, 0, 1.0)])))
    res = simulate(inst, name, params)
    assert check_feasible(inst, res.schedule)
    assert res.completion == pytest.approx([2.0, 1.0], rel=1e-12)


def test_fairness_results_print_in_one_line() -> None:
    # the dataclasses' own reprs printed every array (10.8 KB for a report of 40 coflows,
    # 19-28 KB for a row and 9-17 KB for a timeline on the trace)
    from coflowopt.fairness import FairnessProblem, allocate, fairness_timeline

    inst = io.read(TRACE).subset(range(40))
    alloc = allocate(FairnessProblem.from_instance(inst), "hug")
    row = compare_over_time(inst, ["hug", "drf"])[1]
    part = inst.subset(range(10))
    timeline = fairness_timeline(part, simulate(part, "hug", record=True).schedule)
    for obj, start in ((alloc, "FairAllocation(mechanism='hug', problem=FairnessProblem("),
                       (alloc.report(), "FairnessReport(coflows=40, links=300, isolation_guarantee="),
                       (row, "LongTermRow(label='drf', coflows=40, mean_cct="),
                       (timeline, "FairnessTimeline(intervals=")):
        text = repr(obj)
        assert text.startswith(start) and "\n" not in text and len(text) < 200, text


def test_compare_over_time_takes_pairs_as_lists_and_checks_the_baseline_first(monkeypatch) -> None:
    from coflowopt.fairness import longterm

    inst = io.read(TRACE).subset(range(5))
    rows = compare_over_time(inst, ["hug", ["drf", {}]])
    assert [r.label for r in rows] == ["hug", "drf"]
    ran: list[str] = []

    class Spy:
        @staticmethod
        def simulate(*args, **kwargs):
            ran.append(args[1])
            raise AssertionError("no simulation before the baseline is checked")

    monkeypatch.setattr(longterm, "_load_policies", lambda: Spy)
    for bad in ("hug", None, [("hug", {1: 2, "a": 3})]):
        with pytest.raises(InstanceError, match=r"a list of names or|a name or a"):
            compare_over_time(inst, bad)
    with pytest.raises(InstanceError, match=r"baseline 'hug' is not among .*hug\(cooperative=True\)"):
        compare_over_time(inst, [("hug", {"cooperative": True}), "drf"])
    assert ran == []
