"""``coflowopt mcs``: stats, classify, thresholds and sweep on the Facebook trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coflowopt.cli import main

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_stats_prints_table_one(capsys):
    code, out, _ = run(capsys, "mcs", "stats", TRACE)
    assert code == 0
    assert "0.54/0.91 (0.89,0.92)" in out and "0.22/0.37 (0.29,0.44)" in out
    code, out, _ = run(capsys, "mcs", "stats", TRACE, "--json")
    data = json.loads(out)
    assert data["coflows"] == 526 and round(data["pearson"][0][1], 2) == 0.54
    assert sum(map(sum, data["joint"]["counts"])) == 526


def test_classify_both_methods(capsys):
    code, out, _ = run(capsys, "mcs", "classify", TRACE, "--method", "published")
    assert code == 0 and "error (Eq. 1) 1.4720" in out and "exact: Delta = 10, 110, 182, 9180" in out
    code, out, _ = run(
        capsys, "mcs", "classify", TRACE, "--json", "--classes", "3", "--size-thresholds", "10,1000"
    )
    data = json.loads(out)
    assert data["classification"]["method"] == "exact" and data["classification"]["classes"] == 3
    assert data["comparison"]["exact"]["error"] <= data["comparison"]["published"]["error"]
    # a step of 1 was refused without naming the option
    code, _, err = run(capsys, "mcs", "classify", TRACE, "--step", "1")
    assert code == 2 and "--step must be > 1, got 1" in err
    # the table printed thresholds to 6 digits: 3.0000003 as 3, a class [3, 3)
    code, out, _ = run(capsys, "mcs", "classify", TRACE, "--method", "published", "--step",
                       "1.0000001")
    rows = [ln.split() for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    bounds = [(r[1].strip("[,"), r[2].rstrip(")")) for r in rows]
    assert all(lo != hi for lo, hi in bounds), bounds


def test_thresholds_single_and_double(capsys):
    code, out, _ = run(capsys, "mcs", "thresholds", TRACE, "--queues", "3")
    assert code == 0 and "exact check (dp)" in out and "agrees" in out
    code, out, _ = run(capsys, "mcs", "thresholds", TRACE, "--queues", "2", "--scheme", "double", "--json")
    data = json.loads(out)
    sol = data["solution"]
    assert data["initial"] == "paper" and sol["families"] == ["narrow", "wide"]
    assert sol["objective"] <= sol["default_objective"]
    assert data["exact_check"]["objective"] == pytest.approx(sol["objective"])
    code, out, _ = run(capsys, "mcs", "thresholds", TRACE, "--queues", "3", "--solver", "grid", "--grid", "5")
    assert code == 0 and "status feasible" in out


def test_sweep_tables(capsys):
    code, out, _ = run(capsys, "mcs", "sweep", TRACE, "--queues", "1,2", "--json")
    rows = json.loads(out)["rows"]
    assert code == 0 and [r["queues"] for r in rows] == [1, 2]
    code, out, _ = run(capsys, "mcs", "sweep", TRACE, "--kind", "mcs", "--theta-w", "1,16")
    assert code == 0 and "theta_w1_mb" in out


def test_bad_load_is_a_clean_error(capsys):
    code, _, err = run(capsys, "mcs", "thresholds", TRACE, "--queues", "2", "--load", "1.5")
    assert code == 2 and "--load must be in (0, 1)" in err and "Traceback" not in err


@pytest.mark.parametrize("command", [["stats"], ["thresholds", "--queues", "3"], ["sweep"]])
def test_an_instance_the_tools_cannot_use_is_named(capsys, tmp_path, command):
    # one coflow (no correlations, no offered load), and two that arrive at once
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"format": "coflowopt-instance/1", "ports": {
        "ingress": [1, 1], "egress": [1, 1]}, "coflows": [
            {"id": "a", "release": 0, "flows": [[0, 1, 5]]}]}))
    same = tmp_path / "same.txt"
    same.write_text("150 2\n1 0 1 22 1 65:1.0\n2 0 1 23 1 66:5.0\n")
    for path in (one, same):
        if command == ["stats"] and path == same:
            continue  # two coflows have correlations
        code, out, err = run(capsys, "mcs", command[0], path, *command[1:])
        assert code == 2 and out == "" and err.startswith(f"coflowopt: error: {path}: "), err
        if command != ["stats"]:
            assert "offered load is nan (it needs coflows that arrive over time)" in err


def test_a_dp_too_large_names_the_options(capsys):
    code, _, err = run(capsys, "mcs", "thresholds", TRACE, "--queues", "5", "--scheme", "per-class",
                       "--solver", "dp")
    assert code == 2 and err.startswith("coflowopt: error: --solver dp: the exact DP would visit")
    assert "--solver optimize" in err and "max_cells" not in err


def test_per_class_rejects_top_initial_queues(capsys):
    code, _, err = run(
        capsys, "mcs", "thresholds", TRACE, "--queues", "2", "--scheme", "per-class", "--initial", "top"
    )
    assert code == 2 and "--initial top does not apply" in err


@pytest.mark.slow  # four simulations, weighted Aalo among them
def test_validate_command_on_a_small_instance(capsys, tmp_path):
    from coflowopt.cli import mcs as cli_mcs
    from coflowopt.io import write
    from coflowopt.io.generate import WorkloadClass, synthetic
    from coflowopt.mcs.validate import CONFIGS

    assert cli_mcs._CONFIGS == CONFIGS
    classes = (WorkloadClass("S", 0.6, (1, 4), (1e6, 5e6)), WorkloadClass("L", 0.4, (8, 20), (5e6, 5e7)))
    path = tmp_path / "small.json"
    write(synthetic(8, 3, classes=classes, load=0.5, seed=1), path)
    code, out, _ = run(capsys, "mcs", "validate", path, "--queues", "3", "--load", "0.5", "--json")
    rows = json.loads(out)["rows"]
    assert code == 0 and [r["config"] for r in rows] == list(CONFIGS)
    code, out, _ = run(capsys, "mcs", "validate", path, "--queues", "3", "--load", "0.5", "--json",
                       "--jobs", "2")
    assert code == 0
    assert [r["simulated_cct"] for r in json.loads(out)["rows"]] == [r["simulated_cct"] for r in rows]
    code, _, err = run(capsys, "mcs", "validate", path, "--configs", "pias", "--load", "0.5")
    assert code == 2 and "unknown configuration 'pias'" in err
