"""The MCS tools at their edges: empty exact classes, bounds on K and steps,
empty workloads, and validate's load."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from coflowopt import Coflow, Fabric, Instance, InstanceError
from coflowopt.cli import main
from coflowopt.mcs import classification as C
from coflowopt.mcs import stats as S
from coflowopt.mcs import thresholds as T
from coflowopt.sim import simulate


def test_empty_exact_classes_still_give_a_policy_the_simulator_runs():
    # three coflows of width 1: the exact classes leave some empty (equal boundaries)
    inst = Instance(Fabric.uniform(2, 1e8), tuple(
        Coflow.from_flows(f"c{i}", [(0, 1, 1e6 * (i + 1))], release=float(i)) for i in range(3)))
    m = T.double_model(inst, queues=4, load=0.5, initial="exact")
    raw = m.setting["width_thresholds"]
    assert len(set(raw)) < len(raw)
    pol, par = T.policy_parameters(m, T.dp_thresholds(m))
    d = par["width_thresholds"]
    assert all(a < b for a, b in itertools.pairwise(d))
    # every whole width lands in the same class as with the reported boundaries
    for w in range(1, 200):
        assert sum(x <= w for x in d) == sum(x <= w for x in raw)
    assert simulate(inst, pol, par).summary.mean_cct > 0


def test_the_model_size_and_algorithm_1_step_are_bounded():
    inst = Instance(Fabric.uniform(2), tuple(
        Coflow.from_flows(f"c{i}", [(0, 1, 1.0)] * (i + 1)) for i in range(3)))
    with pytest.raises(InstanceError, match="at most 64"):
        T.single_model(inst, queues=1000, load=0.5)
    with pytest.raises(InstanceError, match="too close to 1"):
        C.sncf(inst, classes=3, step=1.0000001)
    with pytest.raises(InstanceError, match="at least 2 coflows"):
        S.correlations(Instance(Fabric.uniform(2), ()))


def test_validate_simulates_at_the_load_it_models(tmp_path, capsys):
    path = tmp_path / "g.json"
    assert main(["generate", "synthetic", "--coflows", "12", "--ports", "4", "--load", "0.4",
                 "--seed", "3", "-o", str(path)]) == 0
    capsys.readouterr()
    runs = {}
    for load in ("0.4", "0.9"):
        assert main(["mcs", "validate", str(path), "--load", load, "--configs", "mcs-default",
                     "--json"]) == 0
        runs[load] = json.loads(capsys.readouterr().out)["rows"][0]
    # a busier fabric (arrivals compressed to load 0.9) gives longer CCTs
    assert runs["0.9"]["simulated_cct"] > runs["0.4"]["simulated_cct"]


@pytest.mark.parametrize(("extra", "why"), [
    (["--solver", "dp", "--seed", "3"], "--seed applies only with --solver optimize"),
    (["--grid", "5"], "--grid applies only with --solver grid"),
    (["--wide-width", "10"], "--wide-width applies only with --scheme double"),
])
def test_thresholds_options_that_do_not_apply_are_refused(extra, why, capsys):
    gap = str(Path(__file__).resolve().parents[2] / "instances" / "permutation_gap.json")
    assert main(["mcs", "thresholds", gap, "--queues", "3", "--load", "0.5", *extra]) == 2
    assert why in capsys.readouterr().err
