"""The command line at its edges: outputs over inputs, unchecked options, overclaimed
optimality, unbounded memory, empty and extreme instances."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coflowopt import MB, InputError, io
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


@pytest.mark.parametrize("param", ["root_cut_rounds=1.5", "cut_rounds=abc", "polish=maybe",
                                   "rel_gap=nan", "rel_gap=-1"])
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


def test_every_solver_handles_an_empty_instance():
    # a file cannot be empty (the readers refuse it), but an instance can (an empty subset)
    from coflowopt import solve

    inst = io.loads(GAP.read_text(), path=str(GAP))[0].subset([])
    for method in ("pairwise-order", "sincronia", "exact", "permutation", "exact-milp",
                   "time-indexed"):
        res = solve(inst, method=method)
        assert res.objective == 0.0 and res.completion.size == 0, method


@pytest.mark.parametrize("command", [["info", "IN"], ["validate", "IN"], ["solve", "IN"],
                                     ["bound", "IN"], ["simulate", "IN", "-s", "fifo"],
                                     ["compare", "IN"], ["fair", "IN"], ["mcs", "classify", "IN"],
                                     ["convert", "IN", "OUT"],
                                     ["generate", "batch", "IN", "--load", "0.5", "-o", "OUT"],
                                     ["generate", "rescale", "IN", "--load", "0.5", "-o", "OUT"]])
@pytest.mark.parametrize("name, text", [
    ("empty.json", EMPTY), ("empty.txt", "3 0\n"),
])
def test_an_empty_instance_file_is_refused(tmp_path, capsys, command, name, text):
    # a file with 0 coflows was accepted and simulate printed nan
    path = tmp_path / name
    path.write_text(text)
    argv = [{"IN": path, "OUT": tmp_path / "out.json"}.get(a, a) for a in command]
    code, out, err = run(capsys, *argv)
    assert code == 2 and not out
    where = f"{path}: at $.coflows" if name.endswith(".json") else f"{path}:1"
    assert f"{where}: the instance has no coflows (nothing to schedule)" in err
    assert not (tmp_path / "out.json").exists()


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
    with pytest.raises(InputError, match=r"at \$\.coflows: .*repeats the key 'coflows'"):
        io.read(path)


def test_a_repeated_key_is_located_by_its_json_path(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text(EMPTY[:-1] + ', "coflows": [{"id": "a", "flows": [[0, 0, 1]]}, '
                    '{"id": "b", "release": 0, "flows": [[0, 0, 1]], "release": 1}]}')
    with pytest.raises(InputError, match=r"at \$\.coflows\[1\]\.release: .*repeats the key"):
        io.read(path)


def test_mcs_validate_needs_a_configuration(capsys):
    code, _, err = run(capsys, "mcs", "validate", GAP, "--configs", ",", "--load", "0.5")
    assert code == 2 and "--configs names no configuration" in err


@pytest.mark.parametrize(("args", "message"), [
    (["validate", "--configs", "aalo-default,,mcs-default", "--load", "0.5"], "an empty entry"),
    (["validate", "--configs", "aalo-default,aalo-default", "--load", "0.5"], "twice"),
    (["sweep", "--queues", "3,3"], "a value listed twice"),
    (["sweep", "--queues", "2,,3"], "an empty item"),
])
def test_mcs_lists_refuse_empty_and_repeated_items(args, message, capsys):
    # these were dropped or merged silently, with exit code 0
    try:
        code = main(["mcs", args[0], str(GAP), *args[1:]])
    except SystemExit as exc:  # argparse's own exit, for option types
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


# ---- options, outputs and sizes

@pytest.mark.parametrize("command", ["solve", "bound"])
@pytest.mark.parametrize("key", ["time_limit", "progress", "initial_orders"])
def test_param_cannot_set_the_commands_own_options(capsys, command, key):
    code, _, err = run(capsys, command, "--param", f"{key}=5", GAP)
    assert code == 2 and f"--param {key}" in err


def test_solve_without_a_schedule_still_reports_its_result(tmp_path, capsys):
    out = tmp_path / "s.json"
    code, text, err = run(capsys, "solve", "--method", "time-indexed", "--time-limit", "1e-9",
                          "--schedule", out, "--json", GAP)
    assert code == 1 and not out.exists() and "no schedule written" in err
    assert json.loads(text)["status"] == "time_limit"


@pytest.mark.parametrize("command", [["solve"], ["simulate", "-s", "varys"]])
def test_schedule_to_standard_output_is_refused(tmp_path, capsys, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *command, "--schedule", "-", GAP)
    assert code == 2 and "--schedule needs a file name" in err
    assert not (tmp_path / "-").exists()


def test_an_empty_instance_is_not_written(tmp_path):
    from coflowopt import InstanceError

    empty = io.read(GAP).subset([])
    for fmt in ("json", "benchmark", "sincronia"):
        with pytest.raises(InstanceError, match="cannot write an instance with no coflows"):
            io.write(empty, tmp_path / f"e.{fmt}", format=fmt)
        assert not (tmp_path / f"e.{fmt}").exists()


@pytest.mark.parametrize("argv", [
    ["simulate", "-s", "aalo", "-p", "num_queues=99999999999999999999", GAP],
    ["simulate", "-s", "mcs", "-p", "num_queues=1000000000", GAP],
    ["generate", "synthetic", "--coflows", "99999999999", "--ports", "4", "-o", "x.json"],
    ["generate", "synthetic", "--coflows", "3", "--ports", "99999999999", "-o", "x.json"],
])
def test_sizes_beyond_any_use_are_refused(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *argv)
    assert code == 2 and ("at most" in err or "in 1.." in err)
    assert not (tmp_path / "x.json").exists()


def test_a_huge_integer_in_a_schedule_file_is_input_error(tmp_path, capsys):
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps({"format": "coflowopt-schedule/1",
                                 "pieces": [["C1", 0, 0, 1, 10**400]]}))
    code, _, err = run(capsys, "validate", GAP, "--schedule", sched)
    assert code == 2 and "$.pieces[0][4]" in err and len(err) < 300


def test_trace_writers_keep_arrival_times_plain(tmp_path):
    from coflowopt.io._common import _plain

    assert _plain("9.711e+04") == "97110" and _plain("1.5e-05") == "0.000015"
    assert _plain("2.5e+20") == "2.5e+20"
    fb = io.read(ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt")
    inst = type(fb)(fb.fabric, fb.coflows[:5])
    late = inst.with_releases(inst.release + 97.11)  # seconds: 97110 ms and more
    out = tmp_path / "t.txt"
    io.write(late, out, format="benchmark")
    assert all("e+" not in line and "e-" not in line for line in out.read_text().splitlines())


def test_writing_to_a_full_standard_output_is_an_error_not_a_traceback(capfd):
    import os
    import subprocess
    import sys

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "coflowopt", "info", str(GAP)], stdout=full,
                              stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "No space left on device" in proc.stderr


def test_plot_path_is_checked_before_the_sweep(tmp_path, capsys):
    inst = tmp_path / "trace.pdf"
    inst.write_text(GAP.read_text())
    code, _, err = run(capsys, "mcs", "sweep", "--load", "0.5", "--plot", inst, inst)
    assert code == 2 and "overwrite" in err
    assert inst.read_text() == GAP.read_text()
    code, _, err = run(capsys, "mcs", "sweep", "--load", "0.5", "--plot", tmp_path / "x.bogus", GAP)
    assert code == 2 and ".png" in err


@pytest.mark.parametrize("to", ["json", "benchmark", "sincronia"])
def test_synthetic_makes_the_small_instance_asked_for(tmp_path, capsys, to):
    # `--coflows 8 --ports 4 --load 0.6` gave a coflow of 914 flows, --max-wide
    # below 51 was refused, and the file's offered load was 1.09
    out = tmp_path / f"s.{to}"
    code, text, _ = run(capsys, "generate", "synthetic", "--coflows", "8", "--ports", "4",
                        "--load", "0.6", "--max-wide", "4", "--max-length-mb", "2", "--to", to,
                        "-o", out, "--json")
    assert code == 0
    written = io.read(out, **({} if to == "json" else {"port_rate": 1.25e8}))
    assert written.num_coflows == 8 and written.num_ports == 4
    assert written.width.max() <= 4 and written.length.max() <= 2 * MB
    assert json.loads(text)["offered_load"] == pytest.approx(0.6, rel=1e-9)
    code, text, _ = run(capsys, "info", out, "--json", *([] if to == "json" else ["--port-rate",
                                                                              "1.25e8"]))
    assert json.loads(text)["offered_load"] == pytest.approx(0.6, rel=1e-9)
    code, text, _ = run(capsys, "generate", "synthetic", "--coflows", "5", "--ports", "3",
                        "--min-width", "3", "--max-width", "3", "-o", out, "--to", to, "--json")
    assert code == 0 and json.loads(text)["flows"] == 15


@pytest.mark.parametrize("argv, message", [
    (["--min-width", "5", "--max-width", "4"], "--min-width 5 is above --max-width 4"),
    (["--max-width", "1000001"], "--max-width must be at most 1,000,000, got 1,000,001"),
    (["--coflows", "1", "--load", "0.5"], "--load needs at least 2 coflows"),
])
def test_synthetic_size_options_are_checked(tmp_path, capsys, argv, message):
    args = {"--coflows": "3", "--ports": "4"}
    argv = list(argv)
    for key, value in args.items():
        if key not in argv:
            argv += [key, value]
    code, _, err = run(capsys, "generate", "synthetic", *argv, "-o", tmp_path / "x.json")
    assert code == 2 and message in err and not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("option", ["--max-width", "--min-width", "--load", "--max-length-mb"])
@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_synthetic_refuses_values_below_one_flow_or_no_load(tmp_path, capsys, option, value):
    with pytest.raises(SystemExit) as stop:
        main(["generate", "synthetic", "--coflows", "3", "--ports", "4", option, value,
              "-o", str(tmp_path / "x.json")])
    assert stop.value.code == 2 and f"argument {option}" in capsys.readouterr().err


def test_best_bound_has_the_isolation_bound_however_short_the_limit(capsys):
    code, out, _ = run(capsys, "bound", GAP, "--time-limit", "1e-9", "--json")
    doc = json.loads(out)
    # its isolation times, 6 + 3 + 1 (the file's notes): C1's ingress 1 carries 5 units and
    # its egress 0 carries 6, C2's ingress 1 carries 3, C3's one flow 1
    assert code == 0 and doc["info"]["best"] == "isolation"
    assert doc["bound"] == doc["info"]["bounds"]["isolation"]
    assert 10.0 * (1 - 1e-13) <= doc["bound"] <= 10.0  # rounded down by its rounding margin


@pytest.mark.parametrize("vector", [["1e1000000000", 1], ["1e-100000", 1], ["9" * 5000, 1]])
def test_demand_numbers_beyond_reason_are_input_errors(tmp_path, capsys, vector):
    # the last two crashed, the first hung building an integer of a billion digits
    doc = tmp_path / "d.json"
    doc.write_text(json.dumps({"format": "coflowopt-demands/1",
                               "coflows": [{"id": "A", "vector": vector}]}))
    code, _, err = run(capsys, "fair", doc)
    assert code == 2 and "$.coflows[0].vector[0]" in err and len(err) < 400


def test_a_deeply_nested_demands_file_is_input_error(tmp_path, capsys):
    doc = tmp_path / "deep.json"
    doc.write_text("[" * 100_000)
    code, _, err = run(capsys, "fair", doc)
    assert code == 2 and "deep.json" in err


def test_options_that_would_be_ignored_are_refused(tmp_path, capsys):
    demands = tmp_path / "d.json"
    demands.write_text(json.dumps({"format": "coflowopt-demands/1",
                                   "coflows": [{"id": "A", "vector": [1, "1/2"]}]}))
    for argv, says in ((["fair", demands, "--port-rate", "5"], "a port rate applies to trace files"),
                       (["validate", GAP, "--deadlines"], "--schedule"),
                       (["mcs", "sweep", "--kind", "aalo", "--theta-n", "1", GAP], "--kind mcs"),
                       (["mcs", "sweep", "--kind", "mcs", "--factors", "2", GAP], "--kind aalo")):
        code, _, err = run(capsys, *argv)
        assert code == 2 and says in err, (argv, err)


@pytest.mark.parametrize("argv", [
    ["generate", "rescale", "IN", "--load", "0.5", "-o", "-"],
    ["convert", "IN", "-"],
])
def test_dash_is_not_a_file_for_outputs_that_write_files(tmp_path, capsys, monkeypatch, argv):
    # '-' skipped the output checks, then became a file called '-': with the input named
    # ./- it was overwritten
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "-"
    src.write_text(GAP.read_text())
    code, _, err = run(capsys, *[("./-" if a == "IN" else a) for a in argv])
    assert code == 2 and "cannot be standard output ('-')" in err
    assert src.read_text() == GAP.read_text()


def test_validate_refuses_a_tolerance_that_accepts_anything(tmp_path, capsys):
    # at --tol 1 an empty schedule was "feasible" (nothing sent is within 100% of any size)
    sched = tmp_path / "empty.json"
    sched.write_text('{"format": "coflowopt-schedule/1", "pieces": []}')
    with pytest.raises(SystemExit) as stop:
        main(["validate", str(GAP), "--schedule", str(sched), "--tol", "1"])
    assert stop.value.code == 2
    assert "a tolerance of at most 0.01" in capsys.readouterr().err
    code, out, _ = run(capsys, "validate", GAP, "--schedule", sched, "--tol", "0.01")
    assert code == 1 and "infeasible" in out


# ---- units, traces, generated files and messages


@pytest.mark.parametrize(("argv", "message"), [
    # the thresholds used to be reported in bytes although the option takes MB
    (["--size-thresholds", "5,1"], "expected strictly increasing values, got '5,1'"),
    (["--size-thresholds", "1e308"], "whose bytes (x 1048576) are finite, got '1e308'"),
    # 10^i MB for 1,000 classes: the message listed all 999 thresholds, most of them inf
    (["--classes", "1000"], "--classes 1000: 1000 classes need size thresholds up to 10^999 x "
                            "1.04858e+06 bytes, beyond float64 from T_303"),
    # the options named (the library's words, "step", or none, were printed)
    (["--classes", "3", "--size-thresholds", "10"], "--classes 3 needs 2 --size-thresholds, got 1"),
    (["--step", "1.0000001"], "--step 1.0000001 is too close to 1"),
])
def test_mcs_classify_reports_thresholds_in_the_unit_given(argv, message, capsys):
    with pytest.raises(SystemExit) if argv[0] == "--size-thresholds" else contextlib.nullcontext():
        code = main(["mcs", "classify", str(GAP), *argv])
        assert code == 2
    err = capsys.readouterr().err
    assert message in err and len(err) < 1000 and "Traceback" not in err


@pytest.mark.parametrize(("argv", "message"), [
    # both said "expected numbers > 0 whose bytes (x 1048576) are finite": they are no sizes
    (["--factors", "0"], "--factors: expected finite numbers >= 1 (each queue's threshold E times "
                         "the one before), got '0'"),
    (["--kind", "mcs", "--delta-scale", "0"], "--delta-scale: expected finite numbers > 0, got '0'"),
])
def test_mcs_sweep_factors_and_scales_are_no_sizes(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["mcs", "sweep", str(GAP), *argv])
    assert stop.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["thresholds", "validate", "sweep"])
def test_mcs_queues_beyond_the_limit_name_the_option(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["mcs", command, str(GAP), "--queues", "100000"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "argument --queues: at most 64 queues, got 100000" in err


def test_mcs_validate_refuses_arrivals_all_at_once_once(capsys):
    # it asked for --load, which then refused to rescale such an instance
    for extra in ([], ["--load", "0.5"]):  # (GAP's three coflows arrive at 0)
        code, _, err = run(capsys, "mcs", "validate", GAP, *extra)
        assert code == 2 and err == (f"coflowopt: error: {GAP}: mcs validate simulates the "
                                     "instance's own arrivals, and its coflows all arrive at once: "
                                     "give an instance whose coflows arrive over time\n")


def test_a_long_integer_in_a_trace_is_shown_short(tmp_path, capsys):
    path = tmp_path / "rack.txt"
    path.write_text("2 1\n1 0 1 " + "9" * 5000 + " 1 1:10\n")
    code, _, err = run(capsys, "info", path)
    assert code == 2
    assert "mapper rack of coflow '1' is too large, got '999999999999...999999 (5,000 digits)'" in err
    assert len(err) < 300


def test_fair_reads_a_pipe_once_with_a_port_rate(tmp_path, capsys):
    # the CLI's check for a demands file read the file, then the loader read it again: from
    # a pipe the second read found nothing ("empty file")
    trace = "2 1\n1 0 1 0 1 1:10\n"
    read, write = os.pipe()
    os.write(write, trace.encode())
    os.close(write)
    try:
        code, out, err = run(capsys, "fair", f"/dev/fd/{read}", "--port-rate", "5", "--json")
    finally:
        os.close(read)
    assert code == 0, err
    assert json.loads(out)["min_cut"] == [5.0]  # the port rate given, not the default


def test_generate_summarises_the_file_it_wrote(tmp_path, capsys):
    # --to sincronia rounds sizes up to whole MB, which moves coflows of 4-5 MB
    # into the long bins; the summary used to describe the instance before rounding
    out = tmp_path / "s.txt"
    code, text, _ = run(capsys, "generate", "synthetic", "--coflows", "300", "--ports", "20",
                        "--load", "0.5", "--seed", "11", "-o", out, "--to", "sincronia", "--json")
    assert code == 0
    written = io.read(out, port_rate=1.25e8)
    assert json.loads(text)["bins"] == written.bin_counts()


@pytest.mark.parametrize("kind", [["poisson"], ["rescale"], ["batch", "--batch-size", "2"]])
def test_a_sincronia_file_holds_the_load_asked_of_every_kind(tmp_path, capsys, kind):
    # sizes rounded up to whole MB after the arrivals were timed (only synthetic timed them
    # after the rounding): 2.5 MB became 3 here, and sizes far below a MB made --load 0.5 a
    # file of load 122,706
    src = ROOT / "tests" / "data" / "good_benchmark.txt"
    out = tmp_path / "s.txt"
    code, text, _ = run(capsys, "generate", kind[0], src, *kind[1:], "--load", "0.5",
                        "-o", out, "--to", "sincronia", "--json")
    assert code == 0
    assert json.loads(text)["offered_load"] == pytest.approx(0.5, rel=1e-9)  # (the file as read)


def test_generate_names_the_files_when_a_format_cannot_express_the_result(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("2 1\n1 0 1 0 1 1:10\n")
    out = tmp_path / "x.txt"
    code, _, err = run(capsys, "generate", "deadlines", src, "-o", out, "--to", "benchmark")
    assert code == 2 and not out.exists()
    assert f"{src}: cannot write the Coflow-Benchmark format" in err
    assert f"(nothing written to {out})" in err


def test_a_trace_writer_says_which_release_times_do_not_read_back_exactly(tmp_path, capsys):
    # 699.8112527873285 has no decimal in ms that divides back to it: it reads back 1 ulp off
    src = tmp_path / "r.json"
    src.write_text(json.dumps({
        "format": "coflowopt-instance/1", "ports": {"ingress": [1, 1], "egress": [1, 1]},
        "coflows": [{"id": "a", "release": 699.8112527873285, "flows": [[0, 1, 1048576]]},
                    {"id": "b", "release": 0.5, "flows": [[1, 0, 1048576]]}]}))
    out = tmp_path / "r.txt"
    code, _, err = run(capsys, "convert", src, out, "--to", "sincronia")
    assert code == 0
    assert "1 of 2 release times have no decimal in milliseconds that reads back exactly" in err
    back = io.read(out, port_rate=1.0).release
    assert back[1] == 0.5 and abs(back[0] - 699.8112527873285) <= 2 * np.spacing(699.8)


@pytest.mark.parametrize("argv", [
    ["generate", "synthetic", "--coflows", "3", "--ports", "2", "-o", "OUT"],
    ["info", "TRACE"],
    ["fair", "TRACE"],
])
def test_a_subnormal_port_rate_is_refused_naming_the_option(argv, tmp_path, capsys):
    # 1e-320 reached the fabric, whose message named a port's capacity instead
    trace = tmp_path / "t.txt"
    trace.write_text("2 1\n1 0 1 0 1 1:10\n")
    args = [{"OUT": str(tmp_path / "o.json"), "TRACE": str(trace)}.get(a, a) for a in argv]
    with pytest.raises(SystemExit) as stop:
        main([*args, "--port-rate", "1e-320"])
    assert stop.value.code == 2
    assert "argument --port-rate: expected a capacity of at least 2.23e-308" in capsys.readouterr().err
    assert not (tmp_path / "o.json").exists()


def test_synthetic_to_benchmark_writes_shuffles(tmp_path, capsys):
    # --to benchmark was offered but always failed: random flows are no shuffles
    out = tmp_path / "s.txt"
    code, text, _ = run(capsys, "generate", "synthetic", "--coflows", "40", "--ports", "10",
                        "--load", "0.5", "-o", out, "--to", "benchmark", "--json")
    assert code == 0
    written = io.read(out, port_rate=1.25e8)
    assert json.loads(text)["flows"] == written.num_flows > 40
    code, _, err = run(capsys, "generate", "synthetic", "--coflows", "4", "--ports", "3",
                       "-o", tmp_path / "f.txt", "--to", "benchmark", "--shape", "flows")
    assert code == 2 and "--to benchmark holds only full shuffles: use --shape shuffle" in err
    assert not (tmp_path / "f.txt").exists()


def test_bounds_are_printed_rounded_toward_safety():
    # the main job printed sum w*C >= 782523 for a bound of 782522.52
    from coflowopt.cli._util import floor_text

    assert floor_text(782522.523, 6) == "782522"
    assert floor_text(10205.989, 6) == "10205.9"
    assert floor_text(-3.14159, 3) == "-3.15"
    assert floor_text(2.0000001, 3, up=True) == "2.01"
    assert floor_text(float("nan"), 6) == "-"


def test_a_closed_standard_output_is_an_error_not_a_traceback():
    # `coflowopt info FILE >&-` raised AttributeError; simulate printed nothing
    # and exited 0
    shuffle = Path(__file__).resolve().parents[1] / "instances" / "examples" / "dissertation_3_2_shuffle.json"
    for cmd in (["info", str(shuffle)], ["simulate", str(shuffle), "-s", "varys"]):
        args = " ".join([sys.executable, "-m", "coflowopt", *cmd])
        run = subprocess.run(["sh", "-c", f"{args} >&-"], capture_output=False,
                             stderr=subprocess.PIPE, text=True, timeout=120)
        assert run.returncode == 2
        assert "standard output is closed" in run.stderr and "Traceback" not in run.stderr


def test_a_schedule_file_with_an_unknown_key_or_another_format_is_refused(tmp_path, capsys):
    # an unknown top-level key was accepted, and a wrong format not named
    shuffle = Path(__file__).resolve().parents[1] / "instances" / "examples" / "dissertation_3_2_shuffle.json"
    sched = tmp_path / "s.json"
    assert main(["simulate", str(shuffle), "-s", "varys", "--schedule", str(sched)]) == 0
    doc = json.loads(sched.read_text())
    assert main(["validate", str(shuffle), "--schedule", str(sched)]) == 0
    for change, message in ((("extra", 1), "at $.extra: unknown key 'extra'"),
                            (("format", "coflowopt-instance/1"), "got 'coflowopt-instance/1'")):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**doc, change[0]: change[1]}))
        capsys.readouterr()
        code, _, err = run(capsys, "validate", shuffle, "--schedule", bad)
        assert code == 2 and message in err
    bad.write_text(json.dumps({**doc, "_note": "metadata is fine"}))
    assert main(["validate", str(shuffle), "--schedule", str(bad)]) == 0


def test_mb_rounding_applies_to_sincronia_output_only(capsys, tmp_path):
    # --mb-rounding was silently ignored when writing JSON
    out = tmp_path / "x.json"
    code, _, err = run(capsys, "convert", GAP, out, "--mb-rounding", "nearest")
    assert code == 2 and "--mb-rounding applies to Sincronia output only" in err
    assert not out.exists()
    code, _, err = run(capsys, "convert", GAP, tmp_path / "x.txt", "--to", "sincronia",
                       "--mb-rounding", "nearest")
    assert code == 0 and (tmp_path / "x.txt").exists()


def test_a_bound_out_of_time_while_building_says_where(capsys):
    code, out, _ = run(capsys, "bound", GAP, "--method", "pairwise", "--time-limit", "1e-9")
    assert code == 0
    assert "(pairwise): - (time limit, stopped while building the rows)" in out


@pytest.mark.parametrize("to", ["benchmark", "coflowsim"])
def test_generate_to_a_trace_format_draws_shuffles(tmp_path, capsys, to):
    # --to coflowsim (the benchmark writer) drew independent flows, which it cannot hold:
    # "reducer ... gets unequal amounts from its mappers", naming no file
    out = tmp_path / "g.txt"
    assert main(["generate", "synthetic", "--coflows", "5", "--ports", "4", "-o", str(out),
                 "--to", to]) == 0
    assert io.read(out, format=to).num_coflows == 5
    assert main(["generate", "synthetic", "--coflows", "5", "--ports", "4", "-o", str(out),
                 "--to", to, "--shape", "flows"]) == 2
    assert f"--to {to} holds only full shuffles: use --shape shuffle" in capsys.readouterr().err


def test_a_formulation_too_large_names_the_file(tmp_path, capsys):
    # the refusal named neither the file nor an option
    trace = io.read(ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt")
    path = tmp_path / "fb40.json"
    io.write(trace.subset(range(40)), path)
    assert main(["solve", str(path), "--method", "time-indexed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"coflowopt: error: {path}: method='time-indexed' with a step of ")
    assert "constraint entries (limit 20,000,000)" in err and len(err.splitlines()) == 1
