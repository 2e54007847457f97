"""``coflowopt fair``: mechanisms, exact output, LP check and the lie search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coflowopt.cli import main

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "instances" / "fairness"
DATA = ROOT / "tests" / "data"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_hug_on_the_running_example_prints_exact_values(capsys) -> None:
    code, out, _ = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--mechanism", "hug", "--verify")
    assert code == 0
    assert "isolation guarantee (min progress / weight): 2/3" in out
    assert "utilization: 2 of 2 links (100% of capacity)" in out
    assert "max-min LP (HiGHS): isolation guarantee 0.666666667 (agrees)" in out
    assert "feasible: every link within capacity" in out


def test_json_output_holds_floats_and_exact_strings(capsys) -> None:
    code, out, _ = run(capsys, "fair", EX / "hug_three_coflows_elastic.json", "--mechanism", "drf", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["exact"] and doc["feasible"]
    assert doc["exact_values"]["progress"] == ["2/5", "2/5", "2/5"]
    assert doc["isolation_guarantee"] == 0.4
    assert doc["exact_values"]["allocation"][1] == ["2/5", "1/15"]


def test_inelastic_flag_and_psp(capsys) -> None:
    code, out, _ = run(capsys, "fair", EX / "hug_three_coflows_elastic.json", "--mechanism", "psp",
                       "--inelastic", "--json")
    assert code == 0
    assert json.loads(out)["exact_values"]["progress"] == ["2/3", "1/3", "1/3"]


def test_lie_search_reports_the_witness(capsys) -> None:
    code, out, _ = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--mechanism", "drf+highest",
                       "--lie-search", "A", "--samples", "50")
    assert code == 0
    assert "PROFITABLE LIE: report <link-1=1, link-2=1> gives progress 11/12 (+1/4) [exact]" in out
    code, out, _ = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--mechanism", "hug",
                       "--lie-search", "B", "--samples", "50", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["found"] is False and doc["evaluations"] > 50 and doc["witness"] is None


def test_flow_level_mechanisms_on_an_instance(capsys) -> None:
    code, out, _ = run(capsys, "fair", EX / "hug_fig7_2_fabric.json", "--mechanism", "perflow", "--json")
    assert code == 0 and json.loads(out)["feasible"]
    code, out, _ = run(capsys, "fair", DATA / "good_instance.json", "--mechanism", "perendpoint")
    assert code == 0 and "isolation guarantee" in out


def test_errors_exit_2_with_a_message(capsys) -> None:
    code, _, err = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--mechanism", "perflow")
    assert code == 2 and "needs the coflows' flows" in err
    code, _, err = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--mechanism", "drf",
                       "--cooperative")
    assert code == 2 and "--cooperative does not apply to mechanism 'drf'" in err
    code, _, err = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--lie-search", "Z")
    assert code == 2 and "no coflow with id 'Z'" in err
    code, _, err = run(capsys, "fair", EX / "missing.json")
    assert code == 2 and "no such file" in err


def test_verify_compares_relatively(tmp_path, capsys) -> None:
    # with weights 1e7 every guarantee is below 1e-7, so the absolute tolerance
    # called PS-P's 5e-8 and the LP's optimum 6.7e-8 (25% apart) in agreement
    path = tmp_path / "heavy.json"
    path.write_text(json.dumps({"format": "coflowopt-demands/1", "coflows": [
        {"id": "A", "vector": [1, "1/2"], "weight": 10_000_000},
        {"id": "B", "vector": ["1/2", 1], "weight": 10_000_000}]}))
    assert main(["fair", str(path), "--mechanism", "psp", "--verify", "--json"]) == 0
    checks = json.loads(capsys.readouterr().out)["verify"]
    assert not checks["lp_agrees"] and checks["relative_difference"] == pytest.approx(0.25)
    assert main(["fair", str(path), "--mechanism", "drf", "--verify", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verify"]["lp_agrees"]


def test_verify_reads_a_lower_guarantee_as_expected_only_for_mechanisms_that_do_not_aim_at_it(
        capsys) -> None:
    # "DISAGREES" for psp and equal-share read like an error; they do not
    # maximize the isolation guarantee, DRF and HUG do
    path = str(ROOT / "instances" / "fairness" / "hug_three_coflows_elastic.json")
    assert main(["fair", path, "--mechanism", "psp", "--verify"]) == 0
    out = capsys.readouterr().out
    assert "lower, as expected: psp does not maximize it" in out and "DISAGREES" not in out
    assert main(["fair", path, "--mechanism", "drf", "--verify"]) == 0
    assert "(agrees)" in capsys.readouterr().out


@pytest.mark.parametrize("flag", [["--seed", "0"], ["--samples", "5"], ["--grid", "4"]])
def test_lie_search_options_without_the_lie_search_are_refused(flag, capsys) -> None:
    # they were ignored, with exit code 0
    code, _, err = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", *flag)
    assert code == 2 and f"{flag[0]} applies to the lie search only" in err
    code, _, _ = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--lie-search", "A",
                     *flag, "--samples", "20")
    assert code == 0


@pytest.mark.parametrize(("change", "where", "message"), [
    ({"vector": [-1, 1]}, "$.coflows[0].vector", "at least one positive one, got [-1, 1]"),
    ({"weight": -2}, "$.coflows[0].weight", "weight must be > 0, got -2"),
    ({"bound": -3}, "$.coflows[0].bound", "bound must be > 0, got -3"),
])
def test_a_bad_demand_names_its_value(tmp_path, capsys, change, where, message):
    doc = {"format": "coflowopt-demands/1",
           "coflows": [{"id": "A", "vector": [1, 1], **change}, {"id": "B", "vector": [1, 1]}]}
    path = tmp_path / "d.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, "fair", path)
    assert code == 2 and out == "" and f"at {where}: " in err and err.strip().endswith(message)


def test_lie_search_and_time_limit_are_named_where_they_do_not_apply(tmp_path, capsys):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"format": "coflowopt-demands/1", "capacity": [1, "0/1"],
                                "coflows": [{"id": "A", "vector": [1, 1]}]}))
    code, _, err = run(capsys, "fair", path)
    assert code == 2 and err.strip().endswith("capacity must be > 0, got '0/1'")
    path.write_text(json.dumps({"format": "coflowopt-demands/1",
                                "coflows": [{"id": "A", "vector": [1, 1]},
                                            {"id": "B", "vector": [1, 1]}]}))
    code, _, err = run(capsys, "fair", path, "--lie-search", "Z")
    assert code == 2 and f"{path}: --lie-search Z: no coflow with id 'Z'" in err
    code, _, err = run(capsys, "fair", path, "--mechanism", "drf", "--time-limit", "5")
    assert code == 2 and "--time-limit applies to the lie search and to psp, not to 'drf'" in err


def test_exact_on_a_demands_file_of_decimals_is_refused(capsys, tmp_path) -> None:
    # --exact was ignored there, and the header said "(float)"
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"format": "coflowopt-demands/1", "coflows": [
        {"id": "A", "vector": [0.5, 1]}, {"id": "B", "vector": [1, 0.25]}]}))
    code, out, err = run(capsys, "fair", path, "--exact")
    assert code == 2 and out == "" and err.startswith(f"coflowopt: error: {path}: exact arithmetic")
    code, out, _ = run(capsys, "fair", path)
    assert code == 0 and "(float)" in out.splitlines()[0]
    code, out, _ = run(capsys, "fair", EX / "hug_two_coflows_elastic.json", "--exact")
    assert code == 0 and "(exact)" in out.splitlines()[0]


def test_what_the_file_cannot_give_names_the_file(capsys, tmp_path) -> None:
    # capacities of 1e-300 and 1e300 made a load of 1 a demand of 1e-600, read as 0 (no min
    # cut); a range float64 cannot hold, and per-flow fairness on a demands file, named no file
    cap = tmp_path / "cap.json"
    cap.write_text(json.dumps({"format": "coflowopt-instance/1", "ports": {
        "ingress": [1e-300, 1], "egress": [1, 1e300]}, "coflows": [
            {"id": "a", "flows": [[0, 0, 1], [1, 1, 1]]}, {"id": "b", "flows": [[0, 1, 1]]}]}))
    tiny = tmp_path / "tiny.json"
    tiny.write_text(json.dumps({"format": "coflowopt-instance/1", "ports": {
        "ingress": [1, 1], "egress": [1, 1]}, "coflows": [
            {"id": "a", "flows": [[0, 0, 1e300], [1, 1, 1e-10]]}, {"id": "b", "flows": [[0, 1, 1]]}]}))
    for argv, what in (([cap], "below float64's range"), ([tiny], "below float64's range"),
                       ([EX / "hug_two_coflows_elastic.json", "--mechanism", "perflow"],
                        "per-flow fairness needs the coflows' flows")):
        code, out, err = run(capsys, "fair", *argv)
        assert code == 2 and out == "" and err.startswith(f"coflowopt: error: {argv[0]}: "), err
        assert what in err
