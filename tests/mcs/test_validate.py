"""The threshold model against the simulator: configurations, emulation of Aalo, feasibility."""

from __future__ import annotations

import numpy as np
import pytest

import coflowopt as co
from coflowopt import MB
from coflowopt.io.generate import WorkloadClass, synthetic
from coflowopt.mcs import aalo_thresholds, double_model, policy_parameters, single_model
from coflowopt.mcs.validate import COLUMNS, CONFIGS, load_sweep, optimum, threshold_sweep, validate
from coflowopt.sim import simulate

CLASSES = (
    WorkloadClass("SN", 0.5, (1, 5), (1 * MB, 5 * MB)),
    WorkloadClass("LN", 0.2, (1, 5), (5 * MB, 60 * MB)),
    WorkloadClass("SW", 0.15, (12, 30), (1 * MB, 5 * MB)),
    WorkloadClass("LW", 0.15, (12, 30), (5 * MB, 60 * MB)),
)


@pytest.fixture(scope="module")
def small() -> co.Instance:
    return synthetic(16, 4, classes=CLASSES, load=0.5, seed=2)


def test_mcs_policy_configured_as_aalo_is_aalo(small):
    model = single_model(small, queues=4, load=0.5)
    name, params = policy_parameters(model, aalo_thresholds(4))
    emulated = simulate(small, name, params, record=False)
    aalo = simulate(small, "aalo", num_queues=4, record=False)
    np.testing.assert_allclose(emulated.completion, aalo.completion, rtol=1e-12, atol=1e-12)
    name, params = policy_parameters(model, aalo_thresholds(4), sharing="strict")
    emulated = simulate(small, name, params, record=False)
    aalo = simulate(small, "aalo", num_queues=4, sharing="strict", record=False)
    np.testing.assert_allclose(emulated.completion, aalo.completion, rtol=1e-12, atol=1e-12)
    strict = validate(small, queues=4, configs=("aalo-default",), aalo_sharing="strict").as_dicts()[0]
    assert strict["simulated_cct"] == pytest.approx(aalo.cct.mean())


def test_optimized_schedules_are_feasible(small):
    for model in (
        single_model(small, queues=4, load=0.5),
        double_model(small, queues=4, load=0.5, wide_width=10),
    ):
        sol = optimum(model)
        assert sol.status is co.Status.OPTIMAL and sol.objective <= sol.default_objective
        name, params = policy_parameters(model, sol)
        res = simulate(small, name, params)
        assert co.check_feasible(small, res.schedule)
        assert np.all(res.cct >= small.gamma * (1 - 1e-9))


def test_validate_table(small):
    table = validate(small, queues=4, workload="tiny")
    assert table.columns == COLUMNS
    rows = table.as_dicts()
    assert [r["config"] for r in rows] == list(CONFIGS)
    base = rows[0]
    assert base["predicted_vs_aalo"] == pytest.approx(1.0) and base["simulated_vs_aalo"] == pytest.approx(1.0)
    for r in rows:
        assert r["workload"] == "tiny" and r["exact"]
        assert r["simulated_cct"] >= small.gamma.mean() * (1 - 1e-9)
        assert r["simulated_vs_aalo"] == pytest.approx(r["simulated_cct"] / base["simulated_cct"])
    by = {r["config"]: r for r in rows}
    # the optimum is never worse than the defaults in the model (the simulation may disagree)
    assert by["aalo-optimized"]["predicted"] <= by["aalo-default"]["predicted"] + 1e-15
    assert by["mcs-optimized"]["predicted"] <= by["mcs-default"]["predicted"] + 1e-15
    only = validate(small, queues=4, configs=("mcs-default",)).as_dicts()
    assert [r["config"] for r in only] == ["mcs-default"]
    assert only[0]["simulated_cct"] == pytest.approx(by["mcs-default"]["simulated_cct"])
    assert only[0]["predicted_vs_aalo"] == pytest.approx(by["mcs-default"]["predicted_vs_aalo"])
    assert np.isnan(only[0]["simulated_vs_aalo"])  # no Aalo run to compare with


def test_load_sweep_and_threshold_sweep():
    table = load_sweep(loads=(0.2, 0.7), num_coflows=10, num_ports=3, classes=CLASSES, queues=3)
    assert sorted({r["load"] for r in table.as_dicts()}) == [0.2, 0.7]
    assert len(table.rows) == 2 * len(CONFIGS)
    # each load's rows are validate() on synthetic(..., load, seed 0), as documented
    for rho in (0.2, 0.7):
        inst = synthetic(10, 3, classes=CLASSES, load=rho, seed=0)
        want = validate(inst, load=rho, queues=3, workload="synthetic-0", seed=0).as_dicts()
        got = [r for r in table.as_dicts() if r["load"] == rho]
        for a, b in zip(got, want, strict=True):
            assert a["config"] == b["config"]
            assert a["simulated_cct"] == pytest.approx(b["simulated_cct"], rel=1e-12)
            assert a["predicted"] == pytest.approx(b["predicted"], rel=1e-12)
    inst = synthetic(10, 3, classes=CLASSES, load=0.5, seed=4)
    sweep = threshold_sweep(inst, kind="mcs-wide", values=(1 * MB, 4 * MB), queues=3, load=0.5)
    assert sweep.column("value_mb") == [1.0, 4.0]
    assert sweep.column("simulated_relative")[0] == pytest.approx(1.0)
    queues = threshold_sweep(inst, kind="aalo-queues", values=(1, 3), load=0.5)
    assert queues.column("value") == [1, 3]
    assert queues.column("predicted")[0] == pytest.approx(0.5)  # one queue: rho
    # what was simulated, from runs made here (the first row's ratios of 1 hold by
    # construction, so they alone check nothing)
    for k, cct in zip((1, 3), queues.column("simulated_cct"), strict=True):
        assert cct == pytest.approx(simulate(inst, "aalo", num_queues=k, record=False).cct.mean(),
                                    rel=1e-12)
    q1 = threshold_sweep(inst, kind="aalo", values=(2 * MB,), queues=3, load=0.5)
    direct = simulate(inst, "aalo", num_queues=3, first_threshold=2 * MB, record=False)
    assert q1.column("simulated_cct")[0] == pytest.approx(direct.cct.mean(), rel=1e-12)
    model = single_model(inst, queues=3, load=0.5)
    assert q1.column("predicted")[0] == pytest.approx(
        model.objective(np.array([2 * MB, 20 * MB])), rel=1e-12)


def test_validate_errors(small):
    with pytest.raises(co.InstanceError, match="unknown configuration 'varys'"):
        validate(small, configs=("varys",))
    with pytest.raises(co.InstanceError, match="needs a load in"):
        validate(small, load=1.2)
    with pytest.raises(co.InstanceError, match="unknown sweep kind"):
        threshold_sweep(small, kind="pias")


def test_validate_and_sweeps_on_worker_processes_give_the_same_table(small):
    def drop_times(rows):
        return [{k: v for k, v in r.items() if k != "sim_seconds"} for r in rows]

    seen: list[str] = []
    one = validate(small, queues=4, workload="tiny")
    two = validate(small, queues=4, workload="tiny", jobs=2, progress=seen.append)
    assert drop_times(two.as_dicts()) == drop_times(one.as_dicts())
    assert seen == list(CONFIGS)
    inst = synthetic(10, 3, classes=CLASSES, load=0.5, seed=4)
    a = threshold_sweep(inst, kind="aalo-factor", values=(2.0, 10.0, 100.0), queues=3, load=0.5)
    b = threshold_sweep(inst, kind="aalo-factor", values=(2.0, 10.0, 100.0), queues=3, load=0.5, jobs=2)
    assert a.rows == b.rows
    gen = threshold_sweep(inst, kind="aalo-factor", values=(v for v in (2.0, 10.0, 100.0)), queues=3,
                          load=0.5)
    assert gen.rows == a.rows  # any iterable of values, read once
