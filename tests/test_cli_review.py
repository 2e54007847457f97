"""Defects a review of the command line found: outputs over inputs, unchecked options,
overclaimed optimality, unbounded memory, empty and extreme instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coflowopt import InputError, io
from coflowopt.cli import main

ROOT = Path(__file__).resolve().parents[1]
GAP = ROOT / "instances" / "permutation_gap.json"
EMPTY = '{"format": "coflowopt-instance/1", "ports": {"ingress": [1], "egress": [1]}, "coflows": []}'


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


@pytest.fixture(scope="module")
def g40(tmp_path_factory):
    path = tmp_path_factory.mktemp("g40") / "g40.json"
    assert main(["generate", "synthetic", "--coflows", "40", "--ports", "10", "--load", "0.6",
                 "--seed", "0", "-o", str(path)]) == 0
    return path


def test_no_output_overwrites_the_input(tmp_path, capsys):
    inst = tmp_path / "in.json"
    inst.write_text(GAP.read_text())
    link = tmp_path / "link.json"
    link.symlink_to(inst)
    before = inst.read_text()
    for argv in (["convert", inst, inst], ["convert", inst, link, "--to", "json"],
                 ["solve", inst, "--schedule", inst],
                 ["generate", "rescale", inst, "--load", "0.5", "-o", inst],
                 ["simulate", inst, "-s", "fifo", "--csv", link]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "would overwrite the input file" in err, (argv, err)
    assert inst.read_text() == before
    code, _, err = run(capsys, "solve", inst, "--schedule", tmp_path / "nodir" / "s.json")
    assert code == 2 and "does not exist" in err


@pytest.mark.parametrize("param", ["initial_orders=foo", "initial_orders=0", "root_cut_rounds=1.5",
                                   "progress=1", "cut_rounds=abc", "polish=maybe", "rel_gap=nan",
                                   "rel_gap=-1"])
def test_solver_options_are_checked(param, capsys):
    code, _, err = run(capsys, "solve", GAP, "--method", "exact", "--param", param)
    assert code == 2 and f"option {param.split('=')[0]} must be" in err


def test_negative_seeds_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["generate", "synthetic", "--coflows", "3", "--ports", "2", "--seed", "-1",
              "-o", str(tmp_path / "x.json")])
    assert exit_.value.code == 2
    assert "expected an integer >= 0" in capsys.readouterr().err


def test_a_pruning_gap_is_not_claimed_as_a_bound(g40, capsys):
    # with rel_gap 0.5 the search prunes nodes whose bound is within 50% of the incumbent;
    # those nodes' own bounds, not the incumbent, are what it proved
    code, out, _ = run(capsys, "solve", g40, "--method", "permutation", "--param", "rel_gap=0.5",
                       "--time-limit", "30", "--json")
    perm = json.loads(out)
    code2, out2, _ = run(capsys, "solve", g40, "--method", "pairwise-order", "--json")
    other = json.loads(out2)  # another permutation schedule: the best one is no worse
    assert code == code2 == 0
    assert perm["bound"] <= other["objective"] * (1 + 1e-9)
    assert perm["bound"] <= perm["objective"]


def test_the_interval_bound_refuses_a_huge_lp(g40, capsys):
    code, _, err = run(capsys, "bound", g40, "--method", "interval", "--param", "ratio=1.0000001")
    assert code == 2 and "use a larger ratio" in err


def test_every_solver_handles_an_empty_instance(tmp_path, capsys):
    path = tmp_path / "empty.json"
    path.write_text(EMPTY)
    for method in ("pairwise-order", "sincronia", "exact", "permutation", "exact-milp",
                   "time-indexed"):
        code, out, _ = run(capsys, "solve", path, "--method", method, "--json")
        assert code == 0 and json.loads(out)["objective"] == 0.0, method


def test_sizes_and_capacities_beyond_float_range_are_refused(tmp_path):
    path = tmp_path / "scale.json"
    path.write_text('{"format": "coflowopt-instance/1", "ports": {"ingress": [1e308, 1e308], '
                    '"egress": [1e308, 1e308]}, "coflows": [{"id": "a", "flows": [[0, 1, 1e-300], '
                    '[1, 0, 1]]}]}')
    with pytest.raises(InputError, match=r"flows\[0\]\[2\].*outside float64's range"):
        io.read(path)


def test_json_objects_may_not_repeat_a_key(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text(EMPTY[:-1] + ', "coflows": [{"id": "a", "flows": [[0, 0, 1]]}]}')
    with pytest.raises(InputError, match="repeats the key 'coflows'"):
        io.read(path)


def test_mcs_validate_needs_a_configuration(capsys):
    code, _, err = run(capsys, "mcs", "validate", GAP, "--configs", ",", "--load", "0.5")
    assert code == 2 and "--configs names no configuration" in err
