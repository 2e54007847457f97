"""``coflowopt solve`` and ``coflowopt bound``."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from coflowopt import check_feasible, read, solve
from coflowopt.cli import main
from coflowopt.io.schedule_file import read_schedule

ROOT = Path(__file__).resolve().parents[2]
GAP = ROOT / "instances" / "permutation_gap.json"
GOOD = ROOT / "tests" / "data" / "good_instance.json"
KEYS = {"status", "objective", "bound", "gap", "runtime_s", "completion"}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_solve_json_exact(capsys, tmp_path):
    out_file = tmp_path / "sched.json"
    code, out, _ = run(capsys, "solve", GAP, "--method", "exact", "--json", "--schedule", out_file)
    doc = json.loads(out)
    assert code == 0 and KEYS <= set(doc)
    assert doc["status"] == "optimal"
    assert doc["objective"] == pytest.approx(13.0)
    assert doc["completion"] == pytest.approx({"C1": 8.0, "C2": 4.0, "C3": 1.0})
    inst = read(GAP)
    assert check_feasible(inst, read_schedule(out_file, inst))


def test_solve_readable_shows_weighted_cct(capsys):
    code, out, _ = run(capsys, "solve", GOOD, "--method", "exact")
    assert code == 0
    assert "sum of w_k C_k" in out and "sum of w_k (C_k - r_k)" in out
    assert "optimal" in out


@pytest.mark.parametrize(("method", "objective", "params"), [
    ("permutation", "wcct", []),
    ("time-indexed", "wcct", ["--param", "slots=6"]),
    ("sincronia", "wcct", []),
    ("exact", "makespan", ["--param", "crossbar=true"]),
])
def test_solve_methods_json(capsys, method, objective, params):
    code, out, _ = run(capsys, "solve", GAP, "--method", method, "--objective", objective,
                       "--json", *params)
    doc = json.loads(out)
    assert code == 0 and KEYS <= set(doc)
    assert doc["objective"] >= doc["bound"] - 1e-9


def test_solve_deadlines_json(capsys, tmp_path):
    inst_file = tmp_path / "d.json"
    inst_file.write_text(json.dumps({
        "format": "coflowopt-instance/1", "ports": {"ingress": [1], "egress": [1]},
        "coflows": [{"id": "a", "flows": [[0, 0, 2.0]], "deadline": 2.0},
                    {"id": "b", "flows": [[0, 0, 1.5]], "deadline": 2.0}]}))
    code, out, _ = run(capsys, "solve", inst_file, "--objective", "deadlines", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["objective"] == 1 and doc["sense"] == "max"
    # the rejected coflow is not served: no completion time
    assert sorted(v is None for v in doc["completion"].values()) == [False, True]


def test_bound_json_and_readable(capsys):
    code, out, _ = run(capsys, "bound", GAP, "--json")
    doc = json.loads(out)
    assert code == 0 and KEYS <= set(doc)
    assert doc["status"] == "bound" and doc["bound"] <= 13.0 + 1e-9
    code, out, _ = run(capsys, "bound", GAP, "--method", "interval", "--param", "ratio=1.1")
    assert code == 0 and "lower bound on sum of w_k C_k (interval)" in out


def test_bad_options_exit_2(capsys):
    code, _, err = run(capsys, "solve", GAP, "--param", "warp=9")
    assert code == 2 and "does not take option(s) warp" in err
    # the options listed are those --param can set: not the API's progress callback
    # or initial orders
    code, _, err = run(capsys, "solve", GAP, "--method", "best", "--param", "warp=9")
    assert code == 2 and err.strip().endswith("it takes: rel_gap, seed")
    code, _, err = run(capsys, "solve", GAP, "--method", "permutation", "--objective", "makespan")
    assert code == 2 and "not available for objective 'makespan'" in err
    code, _, err = run(capsys, "bound", GAP, "--param", "nonsense")
    assert code == 2 and "key=value" in err
    with pytest.raises(SystemExit):
        main(["solve", str(GAP), "--method", "simplex"])
    capsys.readouterr()


def test_a_deadline_schedule_names_the_coflows_it_rejects(tmp_path, capsys):
    # the default deadline schedule serves only the admitted coflows, and
    # validate called it infeasible ("amount") although it is what the solver promised
    inst = tmp_path / "dl.json"
    inst.write_text(json.dumps({
        "format": "coflowopt-instance/1", "ports": {"ingress": [1, 1], "egress": [1, 1]},
        "coflows": [{"id": "a", "deadline": 1, "flows": [[0, 0, 1]]},
                    {"id": "b", "deadline": 1, "flows": [[0, 1, 1]]},
                    {"id": "c", "deadline": 2, "flows": [[1, 1, 1]]}]}))
    sched = tmp_path / "dl.sch.json"
    code, _, err = run(capsys, "solve", inst, "--objective", "deadlines", "--method", "exact",
                       "--schedule", sched)
    assert code == 0 and "the 1 rejected ones are listed in its _rejected" in err
    doc = json.loads(sched.read_text())
    assert len(doc["_rejected"]) == 1 and doc["_rejected"][0] in ("a", "b")
    code, out, _ = run(capsys, "validate", inst, "--schedule", sched, "--deadlines")
    assert code == 0 and "checked on the 2 coflows it serves" in out and "feasible" in out
    # without the list the rejected coflow is missing its data; with a served coflow in it,
    # the file contradicts itself
    del doc["_rejected"]
    sched.write_text(json.dumps(doc))
    assert run(capsys, "validate", inst, "--schedule", sched)[0] == 1
    doc["_rejected"] = ["c"]
    sched.write_text(json.dumps(doc))
    code, _, err = run(capsys, "validate", inst, "--schedule", sched)
    assert code == 2 and "coflow 'c' is listed in _rejected but has pieces" in err


def test_the_permutation_bound_says_what_it_bounds(capsys):
    # 6 is optimal over permutation schedules of the 3x2 shuffle; MADD finishes it by 4
    shuffle = ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json"
    code, out, _ = run(capsys, "solve", shuffle, "--method", "permutation")
    assert code == 0 and "bound (lower, over permutation schedules only)" in out


def test_crossbar_schedule_is_what_schedule_writes(capsys, tmp_path):
    # --param crossbar=true printed the crossbar makespan but wrote the fluid
    # schedule: the matchings were reachable only from Python
    out = tmp_path / "cb.json"
    code, _, _ = run(capsys, "solve", GAP, "--objective", "makespan", "--param", "crossbar=true",
                     "--schedule", str(out))
    assert code == 0
    inst = read(GAP)
    sched = read_schedule(out, inst)
    assert check_feasible(inst, sched)
    assert json.loads(out.read_text())["_crossbar_matchings"] >= 1
    # a matching at every instant: each port serves at most one flow, at its full rate
    times = np.unique(np.concatenate([sched.start, sched.end]))
    for t0, t1 in itertools.pairwise(times):
        on = (sched.start <= t0) & (sched.end >= t1) & (sched.rate > 0)
        f = sched.flow[on]
        assert len(set(inst.flow_src[f])) == f.size and len(set(inst.flow_dst[f])) == f.size
        np.testing.assert_allclose(sched.rate[on], 1.0)


def test_the_best_bound_table_rounds_each_bound_down(capsys):
    # the per-bound table rounded to nearest: pairwise 782522.52 read 782523
    code, out, _ = run(capsys, "bound", GAP, "--method", "best", "--json")
    bounds = json.loads(out)["info"]["bounds"]
    code, out, _ = run(capsys, "bound", GAP, "--method", "best")
    assert code == 0
    shown = {ln.split()[0]: float(ln.split()[1]) for ln in out.splitlines()
             if ln.split() and ln.split()[0] in bounds}
    assert set(shown) == set(bounds)
    for name, value in bounds.items():
        assert shown[name] <= value and shown[name] >= value * (1 - 1e-9)
    assert any(shown[n] < v for n, v in bounds.items())  # some value here is not a short decimal


def test_time_indexed_takes_step_or_slots_not_both(capsys):
    # slots was silently ignored when step was given
    shuffle = Path(__file__).resolve().parents[2] / "instances" / "examples" / "dissertation_3_2_shuffle.json"
    assert main(["solve", str(shuffle), "--method", "time-indexed", "--param", "step=1",
                 "--param", "slots=2"]) == 2
    assert "give option step or option slots, not both" in capsys.readouterr().err


@pytest.mark.parametrize("starts", [("release",), ("release", "smallest")])
def test_solve_takes_a_list_of_names_comma_separated(capsys, starts):
    # the local search's starting orders: a Sequence[str] in the API, names split at commas here
    code, out, _ = run(capsys, "solve", GAP, "--method", "local-search", "--time-limit", 600,
                       "--param", "starts=" + ",".join(starts), "--json")
    assert code == 0
    doc = json.loads(out)
    api = solve(read(GAP), method="local-search", time_limit=600, starts=starts)
    assert set(doc["info"]["starts"]) == set(api.info["starts"])
    assert {name.removesuffix(", re-sorted") for name in doc["info"]["starts"]} == set(starts)
    assert doc["objective"] == pytest.approx(api.objective, rel=1e-12)


def test_solve_refuses_an_unknown_name_in_a_list(capsys):
    code, out, err = run(capsys, "solve", GAP, "--method", "local-search", "--param",
                         "starts=release,nope")
    assert code == 2 and out == ""
    assert "unknown start order 'nope'" in err and "Traceback" not in err
