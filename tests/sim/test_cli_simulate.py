"""``coflowopt simulate`` and ``coflowopt compare``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import coflowopt as co
from coflowopt.cli import main

EX = Path(__file__).resolve().parents[2] / "instances" / "examples"
SHUFFLE = str(EX / "dissertation_3_2_shuffle.json")
FIG51 = str(EX / "dissertation_5_1_varys_motivating_reconstructed.json")


def test_simulate_prints_a_summary_and_per_bin_means(capsys):
    assert main(["simulate", SHUFFLE, "--scheduler", "fair", "--coflows"]) == 0
    out = capsys.readouterr().out
    assert "CCT (time units): mean 5" in out
    assert "per bin" in out and "shuffle" in out


def test_simulate_json_csv_and_schedule(capsys, tmp_path):
    assert main(["simulate", SHUFFLE, "-s", "varys", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["mean_cct"] == 4.0 and doc["coflow_results"][0]["id"] == "shuffle"
    out = tmp_path / "t.csv"
    sched = tmp_path / "s.json"
    assert main(["simulate", SHUFFLE, "-s", "pfp", "--csv", str(out), "--schedule", str(sched)]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert float(rows[0]["cct"]) == 6.0
    assert main(["validate", SHUFFLE, "--schedule", str(sched)]) == 0
    assert main(["simulate", SHUFFLE, "-s", "fair", "--csv", "-"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("shuffle,")


def test_simulate_summary_csv_is_the_json_summary_in_one_row(capsys, tmp_path):
    # the summary had JSON and a table but no CSV
    assert main(["simulate", FIG51, "-s", "varys", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    out = tmp_path / "s.csv"
    assert main(["simulate", FIG51, "-s", "varys", "--summary-csv", str(out), "--csv",
                 str(tmp_path / "t.csv")]) == 0
    assert f"summary written to {out}" in capsys.readouterr().out
    (row,) = list(csv.DictReader(io.StringIO(out.read_text())))
    assert row["scheduler"] == "varys" and int(row["num_coflows"]) == len(doc["coflow_results"])
    assert row["params"].startswith("order=remaining, backfill=proportional")
    for key, value in doc["summary"].items():
        if key == "runtime_s":
            continue
        if isinstance(value, dict):  # per-bin entries, a column each
            for b, x in value.items():
                assert row[f"{key}_{b}"] == ("" if x is None else str(x)), (key, b)
        else:
            assert row[key] == ("" if value is None else str(value)), key
    assert main(["simulate", FIG51, "-s", "varys", "--summary-csv", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("instance,scheduler,params,")
    assert main(["simulate", FIG51, "-s", "varys", "--summary-csv", "-", "--csv", "-"]) == 2
    assert "would both write to standard output" in capsys.readouterr().err
    assert main(["simulate", FIG51, "-s", "varys", "--summary-csv", "-", "--json"]) == 2
    # one header for every run: a recorded schedule or a policy's own columns
    # do not move the common ones
    headers = []
    for extra in ([], ["--schedule", str(tmp_path / "sched.json")], ["-s", "varys-deadline"]):
        argv = ["simulate", FIG51, "-s", "varys", "--summary-csv", str(out), *extra]
        assert main(argv) == 0
        headers.append(out.read_text().splitlines()[0].split(","))
    assert headers[0] == headers[1] and headers[0][-1] == "mean_link_utilization"
    assert headers[2][:len(headers[0])] == headers[0] and "deadline_admitted" in headers[2]
    assert "num_coflows" in headers[0] and "coflows" not in headers[0]


def test_simulate_parameters_and_batching(capsys):
    assert main(["simulate", FIG51, "-s", "aalo", "-p", "sharing=strict", "-p", "num_queues=2",
                 "--batch-interval", "0.5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["params"]["sharing"] == "strict" and doc["batch_interval"] == 0.5


def test_simulate_bad_input_exits_2(capsys):
    assert main(["simulate", SHUFFLE, "-s", "varys", "-p", "backfill=up"]) == 2
    assert "backfill must be one of" in capsys.readouterr().err
    assert main(["simulate", SHUFFLE, "-s", "varys", "-p", "oops"]) == 2
    with pytest.raises(SystemExit):
        main(["simulate", SHUFFLE, "-s", "nonexistent"])


def test_compare_prints_one_table_normalized_to_the_baseline(capsys):
    assert main(["compare", FIG51, "--schedulers", "fair,varys,pfp", "--baseline", "fair"]) == 0
    out = capsys.readouterr().out
    assert "ratios are scheduler / fair" in out
    lines = [ln for ln in out.splitlines() if ln.startswith(("fair ", "varys ", "pfp "))]
    assert len(lines) == 3
    assert "0.75x" in next(ln for ln in lines if ln.startswith("varys"))  # 3 / 4


def test_compare_csv_has_the_json_rows_and_each_schedulers_percentiles(capsys, tmp_path):
    args = ["compare", SHUFFLE, "--schedulers", "fair,varys,pfp", "--bound", "best",
            "--no-progress"]
    assert main([*args, "--json"]) == 0
    doc = {r["scheduler"]: r for r in json.loads(capsys.readouterr().out)["schedulers"]}
    out = tmp_path / "cmp.csv"
    assert main([*args, "--csv", str(out)]) == 0
    assert f"table written to {out}" in capsys.readouterr().out
    assert main([*args, "--csv", "-"]) == 0
    text = capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO(text)))
    filed = list(csv.DictReader(io.StringIO(out.read_text())))
    for r in (*rows, *filed):
        assert float(r.pop("wall_s")) >= 0
    assert rows == filed
    assert [r["scheduler"] for r in rows] == ["fair", "varys", "pfp"]
    for r in rows:
        js = doc[r["scheduler"]]
        for key in ("mean_cct", "p95_cct", "norm_mean", "vs_bound", "cct_vs_bound"):
            assert float(r[key]) == js[key]
        assert float(r["p50_cct"]) == js["summary"]["p50_cct"]
        assert float(r["p99_cct"]) == js["summary"]["p99_cct"]
        assert r["norm_LW"] == "" and js["norm_LW"] is None  # no long-wide coflow: undefined
    assert {r["scheduler"]: float(r["mean_cct"]) for r in rows} == {"fair": 5, "varys": 4,
                                                                   "pfp": 6}
    # an output that cannot be written fails before any simulation, with nothing written
    assert main([*args, "--csv", str(tmp_path / "no" / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "x.csv" in err and "does not exist" in err and not (tmp_path / "no").exists()


def test_compare_json_with_parameters_and_the_lower_bound(capsys):
    assert main(["compare", FIG51, "--schedulers", "varys,fifo", "-p", "varys.backfill=greedy",
                 "--bound", "best", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["baseline"] == "varys"
    rows = {r["scheduler"]: r for r in doc["schedulers"]}
    assert rows["varys"]["params"]["backfill"] == "greedy"
    assert rows["varys"]["norm_mean"] == 1.0
    # a lower bound lies below every schedule's sum of w*C
    assert doc["bound"] <= min(r["weighted_completion"] for r in rows.values()) + 1e-9
    assert all(r["vs_bound"] >= 1 - 1e-9 for r in rows.values())
    # and bound - sum w*r below every sum of w*CCT: the ratio the table prints
    assert doc["bound_cct"] <= min(r["weighted_cct"] for r in rows.values()) + 1e-9
    assert all(r["cct_vs_bound"] >= 1 - 1e-9 for r in rows.values())


def test_compare_rejects_bad_lists(capsys):
    assert main(["compare", FIG51, "--schedulers", "fair,fair"]) == 2
    assert main(["compare", FIG51, "--schedulers", "fair", "--baseline", "varys"]) == 2
    assert main(["compare", FIG51, "--schedulers", "fair", "-p", "varys.order=static"]) == 2
    assert main(["compare", FIG51, "--schedulers", "fair", "-p", "order=static"]) == 2
    err = capsys.readouterr().err
    assert "twice" in err and "baseline" in err


def test_compare_runs_variants_of_one_scheduler_side_by_side(capsys):
    assert main(["compare", FIG51, "--schedulers", "aalo, aalo:sharing=strict:num_queues=3",
                 "-p", "aalo.num_queues=2", "--baseline", "aalo", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["scheduler"]: r for r in doc["schedulers"]}
    assert list(rows) == ["aalo", "aalo:sharing=strict:num_queues=3"]
    # --param reaches every variant of its scheduler; a variant's own value wins
    assert rows["aalo"]["params"]["num_queues"] == 2
    assert rows["aalo"]["params"]["sharing"] == "weighted"
    strict = rows["aalo:sharing=strict:num_queues=3"]["params"]
    assert strict["num_queues"] == 3 and strict["sharing"] == "strict"
    # each variant is the scheduler run with those parameters
    want = co.sim.simulate(co.read(FIG51), "aalo", params={"sharing": "strict", "num_queues": 3})
    assert rows["aalo:sharing=strict:num_queues=3"]["mean_cct"] == pytest.approx(
        want.summary.mean_cct, rel=1e-12)


def test_compare_rejects_bad_variants(capsys):
    assert main(["compare", FIG51, "--schedulers", "aalo:sharing"]) == 2
    assert "expected NAME:KEY=VALUE, got 'sharing'" in capsys.readouterr().err
    assert main(["compare", FIG51, "--schedulers", "aalo:sharing=sometimes"]) == 2
    assert "sharing" in capsys.readouterr().err
    assert main(["compare", FIG51, "--schedulers", ":sharing=strict"]) == 2
    assert main(["compare", FIG51, "--schedulers", "aalo:sharing=strict,aalo:sharing=strict"]) == 2
    assert "twice" in capsys.readouterr().err
    assert main(["compare", FIG51, "--schedulers", ","]) == 2


def test_the_default_comparison_lists_valid_schedulers():
    from coflowopt.cli.simulate import DEFAULT_SCHEDULERS, parse_variants
    from coflowopt.sim import make_policy

    variants = parse_variants(",".join(DEFAULT_SCHEDULERS))
    assert len(variants) == len(DEFAULT_SCHEDULERS)
    for name, own in variants.values():
        make_policy(name, own, strings=True)


def test_a_tuple_of_names_keeps_its_commas_in_schedulers():
    # only numbers used to continue a tuple: "static-order:order=b,a" read 'a' as a scheduler
    from coflowopt.cli.simulate import parse_variants

    assert parse_variants("varys,static-order:order=b,a,fifo") == {
        "varys": ("varys", {}), "static-order:order=b,a": ("static-order", {"order": "b,a"}),
        "fifo": ("fifo", {})}
    assert parse_variants("aalo:sharing=strict,fifo")["fifo"] == ("fifo", {})
    # a piece after a parameter that is no tuple stays an entry of its own
    assert parse_variants("aalo:sharing=strict,nope")["nope"] == ("nope", {})


def test_the_trace_reader_port_rate_reaches_the_simulation(tmp_path, capsys):
    inst = co.read(SHUFFLE)
    path = tmp_path / "t.txt"
    co.write(inst.replace(fabric=co.Fabric.uniform(3, 1.25e8)), str(path).replace(".txt", ".json"))
    text = "3 1\n1 0 2 0 1 1 2:1\n"
    path.write_text(text)
    assert main(["simulate", str(path), "-s", "fair", "--port-rate", "1048576", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # one reducer fetching 1 MB from two mappers at 1 MB/s
    assert doc["summary"]["mean_cct"] == pytest.approx(1.0)


def test_simulate_writes_its_files_all_or_nothing(tmp_path, capsys):
    keep = tmp_path / "keep.json"
    keep.write_text("keep\n")
    (tmp_path / "adir").mkdir()
    sched = tmp_path / "s.json"
    cases = [
        (["--schedule", str(sched), "--csv", str(tmp_path / "adir")], "is a directory"),
        (["--csv", str(tmp_path / "nodir" / "x.csv")], "directory to write into does not exist"),
        (["--csv", SHUFFLE], "would overwrite the input file"),
        (["--csv", str(keep), "--schedule", str(keep)], "would overwrite the --schedule file"),
    ]
    for extra, why in cases:
        assert main(["simulate", SHUFFLE, "-s", "fair", "--no-progress", *extra]) == 2
        err = capsys.readouterr().err
        assert why in err and "Traceback" not in err
    assert keep.read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "keep.json"]


def test_parameter_errors_exit_2_and_name_the_variant(capsys):
    assert main(["simulate", SHUFFLE, "-s", "baraat", "-p", "heavy_percentile=150"]) == 2
    err = capsys.readouterr().err
    assert "heavy_percentile must be at most 100, got 150.0" in err and "Traceback" not in err
    assert main(["compare", SHUFFLE, "--schedulers", "fifo,baraat:heavy_percentile=101"]) == 2
    assert "scheduler 'baraat:heavy_percentile=101': parameter heavy_percentile" in (
        capsys.readouterr().err)
    assert main(["compare", SHUFFLE, "--schedulers", "fifo,scf", "-p", "scf.zzz=1"]) == 2
    err = capsys.readouterr().err
    # a command-line error has no file to name: no "<input>:" in front
    assert err.startswith("coflowopt: error: scheduler 'scf': unknown parameter 'zzz'")


def test_a_tuple_value_in_a_variant_keeps_its_commas(capsys):
    spec = "fifo,aalo:num_queues=3:weights=4,2,1,fair"
    assert main(["compare", SHUFFLE, "--schedulers", spec, "--json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["scheduler"] for s in doc["schedulers"]] == [
        "fifo", "aalo:num_queues=3:weights=4,2,1", "fair"]
    assert doc["schedulers"][1]["params"]["weights"] == [4.0, 2.0, 1.0]


def test_the_time_unit_follows_the_format_not_the_suffix(tmp_path, capsys):
    dat = tmp_path / "shuffle.dat"  # a JSON instance under another name
    dat.write_text(Path(SHUFFLE).read_text())
    assert main(["simulate", str(dat), "-s", "fair", "--no-progress"]) == 0
    assert "CCT (time units)" in capsys.readouterr().out


def test_a_schedule_too_big_to_record_is_dropped_not_run_out_of_memory(tmp_path, capsys,
                                                                        monkeypatch):
    from coflowopt.sim import engine, simulate

    inst = co.read(FIG51)
    full = simulate(inst, "fair")
    assert full.schedule is not None and "unrecorded" not in full.info
    res = simulate(inst, "fair", max_pieces=1)  # rows: pieces, tied pieces, level changes
    assert res.schedule is None and "more than" in res.info["unrecorded"]
    assert res.completion.tolist() == full.completion.tolist()  # the run itself goes on
    monkeypatch.setattr(engine, "MAX_PIECES", 1)
    out = tmp_path / "s.json"
    assert main(["simulate", FIG51, "-s", "fair", "--schedule", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    # the message speaks to the command line (not "pass max_pieces, or record=False")
    assert "more than 1 piece," in err and "run without --schedule" in err and not out.exists()
    assert "record=False" not in err


def test_compare_shows_deadlines_met_in_its_table(capsys):
    # only the JSON rows had deadlines_met; the table left it out
    path = str(EX / "dissertation_5_1_varys_deadlines_reconstructed.json")
    assert main(["compare", path, "--schedulers", "varys-deadline,fifo", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "deadlines met (of 2)" in lines[1]
    col = lines[1].index("deadlines met (of 2)")
    table = {ln.split()[0]: ln for ln in lines[3:5]}
    assert table["varys-deadline"][col:].split()[-2] == "1"
    assert main(["compare", SHUFFLE, "--schedulers", "varys,fifo", "--no-progress"]) == 0
    assert "deadlines met" not in capsys.readouterr().out  # no deadlines, no column


@pytest.mark.parametrize(("args", "message"), [
    (["compare", SHUFFLE, "--schedulers", "varys,,fifo"], "has an empty entry"),
    (["compare", SHUFFLE, "--schedulers", "varys,fifo,"], "has an empty entry"),
    (["compare", SHUFFLE, "--schedulers", "aalo:num_queues=3:num_queues=4"],
     "sets num_queues twice"),
    (["compare", SHUFFLE, "--schedulers", "varys,fifo", "--baseline", " "], "--baseline is empty"),
    (["simulate", SHUFFLE, "-s", "static-order", "-p", "order=0,,0"], "an empty item in '0,,0'"),
])
def test_empty_or_repeated_entries_are_refused_not_dropped(args, message, capsys):
    # these were silently dropped or overwritten, with exit code 0
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_a_baseline_with_spaces_around_it_is_found(capsys):
    assert main(["compare", SHUFFLE, "--schedulers", "varys,fifo", "--baseline", " fifo ",
                 "--no-progress"]) == 0
    assert "ratios are scheduler / fifo" in capsys.readouterr().out
