"""Experiments as data: the TOML grid, stable cell ids, cached and resumable sweeps on a
local pool and on a real Dask cluster, the tidy tables, the report, and the CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import coflowopt
from coflowopt.cli import main
from coflowopt.experiment import (
    Experiment,
    FabricSpec,
    InstanceSpec,
    SchedulerSpec,
    SweepError,
    load,
    load_experiment,
    report,
    sweep,
)
from coflowopt.experiment.report import t_interval

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "sweep_small.toml"
DATA = ROOT / "tests" / "data"
MEASURED = ["runtime_s", "wall_s"]  # times: the only columns that differ from run to run


def tiny(**changes) -> Experiment:
    """9 cells: 2 schedulers and a bound, 3 seeds, on an 8-coflow synthetic instance."""
    spec = {"instances": [InstanceSpec("synthetic", {"num_coflows": 8, "num_ports": 4, "load": 0.8})],
            "schedulers": ["varys", "fifo"], "seeds": [0, 1, 2], "bounds": ["isolation"]}
    spec.update(changes)
    return Experiment(**spec)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


class Counter:
    """The progress reports of a sweep."""

    def __init__(self):
        self.reports = []

    def __call__(self, p):
        self.reports.append(p)

    @property
    def last(self):
        return self.reports[-1]


# --------------------------------------------------------------------------- the grid


def test_toml_round_trip_keeps_every_cell_and_label(tmp_path):
    text = """
name = "round trip"
seeds = [0, 3]
schedulers = ["varys", "aalo:sharing=strict:num_queues=4",
              {name = "aalo", num_queues = 3, weights = [[4, 2, 1]], multiplier = [4, 10.5]},
              {name = "static-order", label = "given", order = [["b", "a"]]}]
bounds = ["isolation", {name = "sincronia", time_limit = 5}]
fabrics = ["big-switch", "spine-leaf:spines=2,oversub=4",
           {topology = "fat-tree:k=4", routing = "spray"}, {topology = "fat-tree", k = 4, routing_seed = 7}]
backgrounds = ["none", "share:0.2", "poisson:load=0.1"]

[options]
batch_interval = 0.5

[[instances]]
generator = "synthetic"
num_coflows = 6
num_ports = 4
load = [0.5, 0.9]

[[instances]]
generator = "file"
file = "good.txt"
"""
    (tmp_path / "good.txt").write_text((DATA / "good_benchmark.txt").read_text())
    path = tmp_path / "exp.toml"
    path.write_text(text)
    exp = load_experiment(path)
    assert len(exp.instances) == 3 and len(exp.schedulers) == 5 and len(exp.fabrics) == 4
    assert [s.label for s in exp.schedulers] == [
        "varys", "aalo:sharing=strict:num_queues=4", "aalo:num_queues=3:weights=4,2,1:multiplier=4",
        "aalo:num_queues=3:weights=4,2,1:multiplier=10.5", "given"]
    assert exp.schedulers[2].params["weights"] == (4, 2, 1)
    back = tmp_path / "back.toml"
    back.write_text(exp.to_toml())
    again = load_experiment(back)
    assert again == exp
    assert [(c.id, dict(c.labels)) for c in again.cells()] == [(c.id, dict(c.labels)) for c in exp.cells()]
    # the same through to_dict, as a sweep records it (JSON)
    assert Experiment.from_dict(json.loads(json.dumps(exp.to_dict()))) == exp
    # 3 instances x 4 fabrics x 2 seeds x (5 schedulers x 3 backgrounds + 2 bounds)
    assert len(exp.cells()) == 3 * 4 * 2 * (5 * 3 + 2)
    assert tomllib.loads(exp.to_toml())["options"] == {"batch_interval": 0.5}


BAD = [
    ("seeds = [0\n", "exp.toml: not valid TOML"),
    ('schedluers = ["varys"]\n', "exp.toml: unknown key 'schedluers'"),
    ('schedulers = ["varys", "fifo", "varyz"]\n', "exp.toml: schedulers[2]: unknown scheduler 'varyz'"),
    ('schedulers = ["aalo:sharing=both"]\n', "exp.toml: schedulers[0]: scheduler 'aalo': "),
    ('schedulers = [{name = "aalo", num_queues = [4, "many"]}]\n',
     "exp.toml: schedulers[0]: scheduler 'aalo': "),
    ('schedulers = ["varys"]\nseeds = [1, -1]\n',
     "exp.toml: seeds[1]: a seed is an integer from 0 to 2^63 - 1, got -1"),
    ('schedulers = ["varys"]\nseeds = [18446744073709551616]\n',  # the tables' int64 overflowed
     "exp.toml: seeds[0]: a seed is an integer from 0 to 2^63 - 1, got 18446744073709551616"),
    ('schedulers = ["varys"]\nbounds = ["loose"]\n', "exp.toml: bounds[0]: unknown bound 'loose'"),
    ('schedulers = ["varys"]\nfabrics = ["big-switch", "fat-tree:q=4"]\n',
     "exp.toml: fabrics[1]: fat-tree: unknown parameter 'q'"),
    ('schedulers = ["varys"]\nfabrics = ["fat-tree:k=4,seed=-1"]\n',  # checked as read, not as run
     "exp.toml: fabrics[0]: fat-tree: the placement seed must be an integer >= 0, got -1"),
    ('schedulers = ["varys"]\nfabrics = [{topology = "spine-leaf", routing = "random"}]\n',
     "exp.toml: fabrics[0]: routing must be ecmp or spray, got 'random'"),
    ('schedulers = ["varys"]\nfabrics = [{topology = "spine-leaf", routing_seed = 18446744073709551616}]\n',
     "exp.toml: fabrics[0]: routing_seed must be an integer from 0 to 2**64 - 1, got 18446744073709551616"),
    ('schedulers = ["varys"]\nbackgrounds = ["share:lots"]\n', "exp.toml: backgrounds[0]: "),
    ('schedulers = ["varys"]\n[options]\nbatch = 1\n', "exp.toml: options: unknown option 'batch'"),
    ('schedulers = ["varys", "varys"]\n', "exp.toml: schedulers[1]: the same label as schedulers[0]"),
    # solvers: as coflowopt solve's --method, --objective, --time-limit and --param
    ('solvers = ["exakt"]\n', "exp.toml: solvers[0]: unknown method 'exakt'"),
    ('solvers = ["exact", "exact:time_limit=0"]\n',
     "exp.toml: solvers[1]: time_limit must be a finite number > 0, got 0"),
    ('solvers = [{method = "local-search", seed = -1}]\n',
     "exp.toml: solvers[0]: method 'local-search': option seed must be int (numbers: finite and >= 0), "
     "got -1"),
    ('solvers = ["exact:nodes=5"]\n',
     "exp.toml: solvers[0]: method 'exact' does not take option(s) nodes; it takes: "
     "cut_rounds, global_cut_depth, initial_orders, polish, rel_gap, root_cut_rounds\n"),
    ('solvers = [{method = "best", objective = "makespan"}]\n',
     "exp.toml: solvers[0]: method 'best' does not solve objective 'makespan'"),
    ('solvers = [{method = "exact", objective = "speed"}]\n',
     "exp.toml: solvers[0]: unknown objective 'speed'"),
    ('solvers = [{method = "exact", progress = "yes"}]\n',
     "exp.toml: solvers[0]: method 'exact': progress is a callback"),
    ('solvers = [{time_limit = 5}]\n', "exp.toml: solvers[0]: needs method"),
    ('solvers = "exact"\n', "exp.toml: solvers: expected a list, got 'exact'"),
    ('solvers = [{method = "exact", rel_gap = []}]\n', "exp.toml: solvers[0]: rel_gap: an empty list"),
    ('schedulers = ["sincronia"]\nsolvers = ["sincronia"]\n',
     "exp.toml: solvers[0]: the same label as schedulers[0] ('sincronia')"),
    ('solvers = ["exact", {method = "exact", time_limit = 60}]\n',
     "exp.toml: solvers[1]: the same label as solvers[0]"),
    # the file's positions, not those of the expanded grids
    ('schedulers = [{name = "aalo", sharing = ["strict", "weighted"]}, "varys"]\n'
     'solvers = [{method = "exact", time_limit = [1, 2], label = "x"}, '
     '{method = "permutation", label = "varys"}]\n',
     "exp.toml: solvers[1]: the same label as schedulers[1] ('varys'): give it a label of its own"),
]
INSTANCE = '\n[[instances]]\ngenerator = "synthetic"\nnum_coflows = 4\nnum_ports = 2\n'


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m.split(": ", 1)[1][:30] for _, m in BAD])
def test_a_bad_experiment_is_located_and_exits_2(tmp_path, monkeypatch, capsys, text, message):
    monkeypatch.chdir(tmp_path)
    Path("exp.toml").write_text(text + INSTANCE)
    code, out, err = run(capsys, "sweep", "exp.toml")
    assert code == 2 and out == ""
    assert err.startswith(f"coflowopt: error: {message}"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not Path("exp").exists()  # nothing started


@pytest.mark.parametrize(("instance", "message"), [
    ('generator = "synthetic"\nnum_coflows = 4\nports = 2\n',
     "instances[0]: generator 'synthetic' takes no parameter 'ports'"),
    ('generator = "synthetic"\nnum_coflows = 4\n', "instances[0]: generator 'synthetic' needs num_ports"),
    ('generator = "file"\nfile = "nowhere.txt"\n', "instances[0]: file: no such file 'nowhere.txt'"),
    ('generator = "zipf"\n', "instances[0]: unknown generator 'zipf'"),
    ('generator = "synthetic"\nnum_coflows = []\nnum_ports = 2\n',
     "instances[0]: num_coflows: an empty list"),
    # parameters the generator would have misread (true as 1) or failed on in every cell
    ('generator = "synthetic"\nnum_coflows = true\nnum_ports = 2\n',
     "instances[0]: num_coflows must be an integer >= 1, got True"),
    ('generator = "synthetic"\nnum_coflows = 4\nnum_ports = 2\nload = "0.5"\n',
     "instances[0]: load must be a finite number > 0, got '0.5'"),
    ('generator = "synthetic"\nnum_coflows = 4\nnum_ports = [2, 2.5]\n',
     "instances[0]: num_ports must be an integer >= 1, got 2.5"),
    ('generator = "poisson"\nload = -0.5\n', "instances[0]: load must be a finite number > 0, got -0.5"),
    ('generator = "creek"\npattern = "tcp"\n', "instances[0]: pattern must be one of tpcds, tao, got 'tcp'"),
    ('generator = "creek"\nfanin = [[2]]\n', "instances[0]: fanin must be a list [lo, hi] of integers >= 1"),
    ('generator = "coflourish"\nlarge_share = 1.5\n',
     "instances[0]: large_share must be a number from 0 to 1, got 1.5"),
])
def test_a_bad_instance_is_located(tmp_path, instance, message):
    path = tmp_path / "exp.toml"
    path.write_text('schedulers = ["varys"]\n[[instances]]\n' + instance)
    pattern = f"^{path}: " + message.replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(coflowopt.InputError, match=pattern):
        load_experiment(path)


def test_cell_ids_are_stable_across_processes():
    here = [c.id for c in load_experiment(EXAMPLE).cells()]
    code = ("import sys; from coflowopt.experiment import load_experiment; "
            "print(' '.join(c.id for c in load_experiment(sys.argv[1]).cells()))")
    proc = subprocess.run([sys.executable, "-c", code, str(EXAMPLE)], capture_output=True, text=True,
                          check=True, env={"PYTHONHASHSEED": "12345", "PATH": ""})
    assert proc.stdout.split() == here
    assert len(set(here)) == len(here) == 48


def test_any_change_of_a_cell_changes_its_id(tmp_path, monkeypatch):
    data = tmp_path / "i.txt"
    data.write_text((DATA / "good_benchmark.txt").read_text())

    def one(**changes):
        spec = {"instances": [InstanceSpec("synthetic", {"num_coflows": 8, "num_ports": 4, "load": 0.8})],
                "schedulers": ["aalo:sharing=strict"], "fabrics": ["spine-leaf:spines=2"],
                "backgrounds": ["share:0.1"], "seeds": [0]}
        spec.update(changes)
        (cell,) = Experiment(**spec).cells()
        return cell.id

    ids = {
        "base": one(),
        "load": one(instances=[InstanceSpec("synthetic", {"num_coflows": 8, "num_ports": 4, "load": 0.7})]),
        "seed": one(seeds=[1]),
        "port rate": one(instances=[InstanceSpec(
            "synthetic", {"num_coflows": 8, "num_ports": 4, "load": 0.8, "port_rate": 1.0})]),
        "param": one(schedulers=["aalo:sharing=weighted"]),
        "scheduler": one(schedulers=["varys"]),
        "fabric": one(fabrics=["spine-leaf:spines=4"]),
        "routing": one(fabrics=[FabricSpec("spine-leaf", {"spines": 2}, routing="spray")]),
        "routing seed": one(fabrics=[FabricSpec("spine-leaf", {"spines": 2}, routing_seed=5)]),
        "background": one(backgrounds=["share:0.2"]),
        "options": one(options={"batch_interval": 1.0}),
    }
    same = {  # what does not change the configuration does not change the id
        "label": one(schedulers=[SchedulerSpec("aalo", {"sharing": "strict"}, label="A")]),
        "default written out": one(schedulers=["aalo:sharing=strict:num_queues=10"]),
        "load as an integer": one(instances=[InstanceSpec(
            "synthetic", {"num_coflows": 8.0, "num_ports": 4, "load": 0.8})]),
    }
    assert len(set(ids.values())) == len(ids)
    assert set(same.values()) == {ids["base"]}
    file_cell = Experiment([InstanceSpec("file", {"file": data})], ["varys"]).cells()[0].id
    data.write_text(data.read_text().replace("\n", "\n\n", 1))  # same path, other bytes
    assert Experiment([InstanceSpec("file", {"file": data})], ["varys"]).cells()[0].id != file_cell
    monkeypatch.setattr(coflowopt, "__version__", "0.0.0-other")
    assert one() != ids["base"]


# --------------------------------------------------------------------------- sweeps


def test_resume_recomputes_only_what_is_missing_or_changed(tmp_path):
    out = tmp_path / "out"
    first = Counter()
    res = sweep(tiny(), out, progress=first)
    assert (res.total, res.computed, res.cached, res.failures) == (9, 9, 0, ())
    assert (first.reports[0].done, first.last.done, first.last.failed) == (0, 9, 0)
    before = load(out).drop(columns=MEASURED)
    with pytest.raises(coflowopt.InputError, match="holds the results of a sweep: resume"):
        sweep(tiny(), out)
    # a killed sweep: two results never written, one cut short
    files = sorted((out / "cells").glob("*.json"))
    files[0].unlink()
    files[4].unlink()
    files[7].write_text(files[7].read_text()[:50])
    # damaged whole: nested too deeply, a summary that is not an object (the tables failed)
    files[2].write_text("[" * 100_000)
    doc = json.loads(files[5].read_text())
    files[5].write_text(json.dumps({**doc, "summary": "mangled"}))
    again = Counter()
    res = sweep(tiny(), out, resume=True, progress=again)
    assert (res.computed, res.cached) == (5, 4)
    assert (again.last.done, again.last.cached, again.last.todo) == (5, 4, 5)
    # the damaged files are named (they were computed again in silence), the missing are not
    assert {Path(f).name: why.split(" (")[0] for f, why in res.damaged} == {
        files[2].name: "not a cell's JSON", files[5].name: "its summary or coflows are damaged",
        files[7].name: "not a cell's JSON"}
    assert again.reports[0].damaged == res.damaged
    pd.testing.assert_frame_equal(load(out).drop(columns=MEASURED), before)
    # a changed experiment: the new seed's cells only
    more = Counter()
    res = sweep(tiny(seeds=[0, 1, 2, 3]), out, resume=True, progress=more)
    assert (res.total, res.computed, res.cached) == (12, 3, 9)
    assert len(load(out)) == 12 and sorted(set(load(out)["seed"])) == [0, 1, 2, 3]
    (out / "runs.parquet").write_bytes(b"garbage")
    with pytest.raises(coflowopt.InputError, match=r"runs.parquet: cannot read the runs table: "):
        load(out)


def test_a_sweep_killed_midway_resumes_where_it_stopped(tmp_path):
    path = tmp_path / "exp.toml"
    path.write_text('schedulers = ["varys", "fifo"]\nbounds = ["isolation"]\nseeds = [0, 1, 2, 3, 4]\n'
                    'fabrics = ["spine-leaf:spines=2,oversub=4"]\n' + INSTANCE.replace("4\nnum_ports = 2",
                                                                                      "8\nnum_ports = 4"))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "coflowopt", "sweep", str(path), "--out", str(out),
                             "--jobs", "1", "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(6000):  # until a few cells are stored (or it is over)
            if proc.poll() is not None or len(list(out.glob("cells/*.json"))) >= 3:
                break
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    stored = len(list(out.glob("cells/*.json")))
    assert stored >= 3
    counter = Counter()
    res = sweep(load_experiment(path), out, resume=True, progress=counter)
    assert (res.total, res.cached, res.computed) == (15, stored, 15 - stored)
    assert counter.last.done == 15 - stored and set(load(out)["status"]) == {"ok"}


def test_the_tables_are_tidy_with_the_configuration_in_columns(tmp_path):
    exp = tiny(fabrics=["big-switch", "spine-leaf:spines=2,oversub=2"], seeds=[0],
               backgrounds=[None, "share:0.25"])
    sweep(exp, tmp_path)
    runs, coflows = load(tmp_path), load(tmp_path, "coflows")
    assert list(runs["kind"]) == ["run"] * 4 + ["bound"] + ["run"] * 4 + ["bound"]
    assert list(runs["background"][:5]) == ["none", "share:0.25", "none", "share:0.25", "none"]
    assert set(runs["fabric"]) == {"big-switch", "spine-leaf:spines=2,oversub=2"}
    assert set(runs["status"]) == {"ok"}
    sim = runs[runs["kind"] == "run"]
    assert (sim["instance_load"] == 0.8).all() and (sim["instance_num_coflows"] == 8).all()
    assert list(runs.loc[runs["topology"] == "spine-leaf", "routing_seed"]) == [0] * 5
    assert len(coflows) == 8 * 8 and {"coflow", "cct", "release", "size", "width", "bin"} <= set(coflows)
    # the per-run mean is the mean of the per-coflow rows; the CSV twin holds the same
    for cell, group in coflows.groupby("cell"):
        assert math.isclose(runs.set_index("cell").loc[cell, "mean_cct"], group["cct"].mean(), rel_tol=1e-12)
    csv = pd.read_csv(tmp_path / "runs.csv")
    assert np.allclose(csv["mean_cct"], runs["mean_cct"], equal_nan=True)
    # the background only takes capacity away
    alone = sim[sim["background"] == "none"].set_index(["fabric", "scheduler"])["mean_cct"]
    under = sim[sim["background"] != "none"].set_index(["fabric", "scheduler"])["mean_cct"]
    assert (under >= alone * (1 - 1e-9)).all()
    bound = runs[runs["kind"] == "bound"]
    assert (bound["bound_cct"] > 0).all()
    for fabric, b in zip(bound["fabric"], bound["bound_cct"], strict=True):  # bound <= every schedule
        assert b <= sim.loc[sim["fabric"] == fabric, "weighted_cct"].min()


def test_jobs_and_dask_give_identical_tables(tmp_path):
    exp = Experiment(
        instances=[InstanceSpec("synthetic", {"num_coflows": 6, "num_ports": 4, "load": 0.8}),
                   InstanceSpec("trace", {"num_coflows": 6, "load": 0.8})],
        schedulers=["varys", "fifo"], seeds=[0, 1], bounds=["isolation"],
        fabrics=["big-switch", "spine-leaf:spines=2,oversub=4"])
    tables = {}
    for name, how in (("here", {"jobs": 1}), ("pool", {"jobs": 2, "chunk_size": 3}),
                      ("dask", {"dask": "local:2", "chunk_size": 2})):
        res = sweep(exp, tmp_path / name, **how)
        assert res.computed == res.total == 2 * 2 * 2 * (2 + 1) and not res.failures
        tables[name] = (load(tmp_path / name).drop(columns=MEASURED).sort_values("cell"),
                        load(tmp_path / name, "coflows").sort_values(["cell", "coflow"]))
    for name in ("pool", "dask"):
        pd.testing.assert_frame_equal(tables[name][0], tables["here"][0])
        pd.testing.assert_frame_equal(tables[name][1], tables["here"][1])
    runs = tables["here"][0]
    assert set(runs["status"]) == {"ok"}
    # the seed is the replicate: it draws the synthetic instance and ECMP's hashing, not the
    # trace's coflows
    bounds = runs[runs["kind"] == "bound"].groupby(["generator", "fabric"])["bound"].nunique()
    assert bounds["trace", "big-switch"] == 1 and bounds["synthetic", "big-switch"] == 2


def test_a_failing_cell_is_recorded_and_the_sweep_goes_on(tmp_path):
    exp = tiny(schedulers=["varys", "static-order:order=zz", "fifo"])
    counter = Counter()
    res = sweep(exp, tmp_path / "on", progress=counter)
    assert res.computed == 12 and [e for _, e in res.failures] == [
        "SimulationError: order names an unknown coflow 'zz'"] * 3
    assert counter.last.failed == 3
    runs = load(tmp_path / "on")
    bad = runs[runs["status"] == "failed"]
    assert set(bad["scheduler"]) == {"static-order:order=zz"} and bad["mean_cct"].isna().all()
    ok = runs[(runs["status"] == "ok") & (runs["kind"] == "run")]
    assert (ok["mean_cct"] > 0).all() and len(ok) == 6 and len(runs) == 12
    table = report(runs)
    failing = table[table["scheduler"] == "static-order:order=zz"].iloc[0]
    assert (failing["seeds"], failing["failed"]) == (0, 3)
    # a resumed sweep tries failed cells again
    assert sweep(exp, tmp_path / "on", resume=True).computed == 3
    with pytest.raises(SweepError, match="order names an unknown coflow 'zz'"):
        sweep(exp, tmp_path / "stop", fail_fast=True)


# --------------------------------------------------------------------------- the report


def hand_table() -> pd.DataFrame:
    rows = []
    for seed, (v, f, wv, wf, b) in enumerate([(1, 2, 10, 20, 5), (2, 4, 12, 30, 6), (2, 6, 14, 45, 7)]):
        for label, mean, w in (("varys", v, wv), ("fifo", f, wf)):
            rows.append({"kind": "run", "instance": "i", "fabric": "big-switch", "background": "none",
                         "seed": seed, "scheduler": label, "status": "ok", "mean_cct": float(mean),
                         "p95_cct": 10.0 * mean, "bin_mean_cct_SN": float(mean), "weighted_cct": float(w),
                         "runtime_s": 1.0})
        rows.append({"kind": "bound", "instance": "i", "fabric": "big-switch", "background": "none",
                     "seed": seed, "scheduler": "isolation", "status": "ok", "bound_cct": float(b)})
        rows.append({"kind": "bound", "instance": "i", "fabric": "big-switch", "background": "none",
                     "seed": seed, "scheduler": "weak", "status": "ok", "bound_cct": 1.0})
    rows.append({**rows[1], "seed": 3, "status": "failed", "mean_cct": math.nan})
    return pd.DataFrame(rows)


def test_report_matches_a_hand_computation():
    table = report(hand_table()).set_index("scheduler")
    t2 = 4.302652729911275  # Student t, 97.5% quantile, 2 degrees of freedom
    fifo = table.loc["fifo"]
    assert (fifo["seeds"], fifo["failed"]) == (3, 1)
    # fifo's mean CCTs 2, 4, 6: mean 4, standard deviation 2
    assert math.isclose(fifo["mean_cct"], 4.0) and math.isclose(fifo["mean_cct_ci"], t2 * 2 / math.sqrt(3))
    assert math.isclose(fifo["p95_cct"], 40.0) and math.isclose(fifo["mean_cct_SN"], 4.0)
    # per seed over varys's 1, 2, 2: ratios 2, 2, 3
    sd = math.sqrt(((2 - 7 / 3) ** 2 * 2 + (3 - 7 / 3) ** 2) / 2)
    assert math.isclose(fifo["norm_mean"], 7 / 3)
    assert math.isclose(fifo["norm_mean_ci"], t2 * sd / math.sqrt(3))
    assert math.isclose(fifo["norm_SN"], 7 / 3)
    # sum wCCT over the best bound of the seed (5, 6, 7; not the weak one): 4, 5, 45/7
    assert math.isclose(fifo["vs_bound"], (4 + 5 + 45 / 7) / 3)
    varys = table.loc["varys"]
    assert (varys["norm_mean"], varys["norm_mean_ci"], varys["seeds"]) == (1.0, 0.0, 3)
    assert math.isclose(varys["vs_bound"], (2 + 2 + 2) / 3)
    # the other baseline, and the interval's level
    other = report(hand_table(), baseline="fifo", level=0.9).set_index("scheduler")
    assert math.isclose(other.loc["varys", "norm_mean"], (1 / 2 + 1 / 2 + 1 / 3) / 3)
    assert math.isclose(t_interval([2, 4, 6], 0.9)[1], 2.919985580355516 * 2 / math.sqrt(3))
    assert math.isnan(t_interval([3.0])[1])
    with pytest.raises(coflowopt.InputError, match="the baseline 'sincronia' is not a scheduler"):
        report(hand_table(), baseline="sincronia")


# --------------------------------------------------------------------------- the command line


def test_a_sweep_folder_that_cannot_be_written_is_refused_before_the_work(tmp_path, capsys,
                                                                          locked_dir):
    # under a file: every cell was called damaged (Not a directory), then exit 1; into a
    # folder where no file can be made: exit 1
    (tmp_path / "afile").write_text("")
    code, _, err = run(capsys, "sweep", EXAMPLE, "--out", tmp_path / "afile" / "S", "--jobs", "1")
    assert code == 2 and err == (f"coflowopt: error: --out {tmp_path / 'afile' / 'S'}: cannot "
                                 f"be made: {tmp_path / 'afile'} is not a directory\n")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")  # (it failed after the work)
    code, _, err = run(capsys, "sweep", EXAMPLE, "--out", tmp_path / "link", "--jobs", "1")
    assert code == 2 and err == (f"coflowopt: error: --out {tmp_path / 'link'}: cannot be made: "
                                 f"{tmp_path / 'link'} is a link to nothing (or a loop)\n")
    (tmp_path / "S").mkdir()  # its cells folder a link to nothing (it failed after the work)
    (tmp_path / "S" / "cells").symlink_to(tmp_path / "nowhere")
    code, _, err = run(capsys, "sweep", EXAMPLE, "--out", tmp_path / "S", "--jobs", "1")
    assert code == 2 and f"{tmp_path / 'S' / 'cells'} is a link to nothing" in err
    for out in (locked_dir, locked_dir / "S"):
        code, _, err = run(capsys, "sweep", EXAMPLE, "--out", out, "--jobs", "1")
        assert code == 2 and err == (f"coflowopt: error: --out {out}: no file can be made in "
                                     f"{locked_dir}\n")
    assert not any(locked_dir.iterdir())


def test_the_cli_sweeps_the_example_and_reports_it(tmp_path, capsys):
    out = tmp_path / "small"
    code, text, err = run(capsys, "sweep", EXAMPLE, "--out", out, "--jobs", "1", "--json")
    done = json.loads(text)
    assert code == 0 and (done["cells"], done["computed"], done["cached"], done["failed"]) == (48, 48, 0, [])
    assert err.startswith("coflowopt: 48 cells; computing 48 on this process")
    assert sorted(Path(t).name for t in done["tables"]) == [
        "coflows.csv", "coflows.parquet", "runs.csv", "runs.parquet"]
    code, text, _ = run(capsys, "sweep", EXAMPLE, "--out", out, "--resume")
    assert code == 0 and "48 cells: 0 computed, 48 found in" in text
    cut = sorted((out / "cells").glob("*.json"))[3]
    cut.write_text(cut.read_text()[:100])  # a damaged cell is named as it is computed again
    code, text, err = run(capsys, "sweep", EXAMPLE, "--out", out, "--resume", "--jobs", "1")
    assert code == 0 and "48 cells: 1 computed, 47 found in" in text
    assert f"coflowopt: {cut}: damaged, not a cell's JSON (" in err
    code, _, err = run(capsys, "sweep", EXAMPLE, "--out", out)
    assert code == 2 and f"coflowopt: error: --out {out}: holds the results of a sweep" in err

    code, text, _ = run(capsys, "report", out, "--json")
    rep = json.loads(text)
    assert code == 0 and rep["baseline"] == "varys" and "Student-t" in rep["method"]
    assert len(rep["rows"]) == 2 * 2 * 3  # loads x fabrics x schedulers
    assert {r["seeds"] for r in rep["rows"]} == {3}
    assert all(r["norm_mean"] == 1.0 for r in rep["rows"] if r["scheduler"] == "varys")
    assert all(r["vs_bound"] >= 1 for r in rep["rows"])
    expected = report(out).to_dict(orient="records")
    assert [r["mean_cct"] for r in rep["rows"]] == pytest.approx([r["mean_cct"] for r in expected])
    code, text, _ = run(capsys, "report", out, "--baseline", "fifo")
    assert code == 0 and "baseline: fifo" in text and "95% Student-t interval" in text
    assert "instance synthetic:num_coflows=10,num_ports=6,load=0.9, fabric big-switch" in text
    code, _, _ = run(capsys, "report", out, "--csv", tmp_path / "r.csv")
    assert code == 0 and len(pd.read_csv(tmp_path / "r.csv")) == 12
    code, _, err = run(capsys, "report", out, "--baseline", "varyz")
    assert code == 2 and "the baseline 'varyz' is not a scheduler of the sweep" in err
    code, _, err = run(capsys, "report", tmp_path)
    assert code == 2 and "holds no runs table" in err


def test_the_cli_exit_code_says_a_cell_failed(tmp_path, capsys):
    path = tmp_path / "exp.toml"
    path.write_text('schedulers = ["varys", "static-order:order=zz"]\n' + INSTANCE)
    code, text, err = run(capsys, "sweep", path, "--out", tmp_path / "o", "--jobs", "1")
    assert code == 1 and "2 cells: 2 computed, 0 found in" in text and ", 1 failed" in text
    assert "order names an unknown coflow 'zz'" in err
    code, _, err = run(capsys, "sweep", path, "--out", tmp_path / "p", "--jobs", "1", "--fail-fast")
    assert code == 1 and "failed: SimulationError: order names an unknown coflow 'zz'" in err


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 400 Bad Request\r\n\r\n"])
def test_a_dask_address_of_another_service_fails_and_writes_nothing(tmp_path, monkeypatch, reply):
    # a server that accepts and says nothing hung the sweep; one that answers other bytes
    # failed deep in Dask's handshake (a MemoryError)
    import socket
    import threading

    from coflowopt.experiment import run as run_module

    monkeypatch.setattr(run_module, "CONNECT_SECONDS", 1.0)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if reply is not None:
                conn.sendall(reply)
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        with pytest.raises(coflowopt.InputError, match=f"cannot reach the Dask scheduler at {address}"):
            sweep(tiny(), tmp_path / "out", dask=address)
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert not (tmp_path / "out").exists()


def test_an_interrupt_inside_a_cell_stops_the_sweep_instead_of_failing_the_cell(tmp_path,
                                                                                 monkeypatch):
    # inside a compiled kernel an interrupt comes out as a SystemError caused by it: it was
    # recorded as the cell's failure and the sweep went on
    from coflowopt.experiment import run as run_module

    def interrupted(inst, config):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("<slot wrapper '__call__'> returned a result with an exception "
                              "set") from exc

    monkeypatch.setattr(run_module, "_simulate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep(tiny(), tmp_path / "out", jobs=1)
    assert not list((tmp_path / "out" / "cells").glob("*.json"))


@pytest.mark.parametrize(("text", "message"), [
    ('schedulers = [{name = "aalo", num_queues = [4, 10]}, "aalo:num_queues=10"]\n',
     "schedulers[1]: the same label as schedulers[0] ('aalo:num_queues=10')"),
    ('schedulers = [{name = "aalo", num_queues = [4, 4]}]\n',
     "schedulers[0]: its grid gives the same label twice ('aalo:num_queues=4')"),
    ('schedulers = ["varys"]\nseeds = []\n',
     "seeds: an empty list (an experiment needs at least one seed)"),
])
def test_duplicates_and_empty_lists_name_the_files_entries(tmp_path, monkeypatch, capsys, text,
                                                           message):
    monkeypatch.chdir(tmp_path)
    Path("exp.toml").write_text(text + INSTANCE)
    code, _, err = run(capsys, "sweep", "exp.toml")
    assert code == 2 and err == f"coflowopt: error: exp.toml: {message}\n"
    assert not Path("exp").exists()
