"""The Python API and the command line agree: the same defaults under the same names."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import coflowopt as co
from coflowopt import MB, io
from coflowopt.cli import build_parser, main
from coflowopt.exact.gap_search import gap_search
from coflowopt.fairness import allocate, lie_search, load_problem
from coflowopt.io import generate as gen
from coflowopt.mcs import build_model, classify, single_model, sncf, solve_thresholds
from coflowopt.mcs.validate import CONFIGS, validate
from coflowopt.sim import simulate

ROOT = Path(__file__).resolve().parents[1]
GAP = ROOT / "instances" / "permutation_gap.json"


def default(fn: Callable[..., Any], name: str) -> Any:
    return inspect.signature(fn).parameters[name].default


# (command line, option's dest, how its value reads in the API, function, parameter)
PAIRS = [
    (["solve", "F"], "method", None, co.solve, "method"),
    (["solve", "F"], "objective", None, co.solve, "objective"),
    (["solve", "F"], "time_limit", None, co.solve, "time_limit"),
    (["bound", "F"], "method", None, co.bound, "method"),
    (["bound", "F"], "time_limit", None, co.bound, "time_limit"),
    (["compare", "F"], "bound_time_limit", None, co.bound, "time_limit"),
    (["simulate", "F", "-s", "varys"], "batch_interval", None, simulate, "batch_interval"),
    (["generate", "synthetic", "--coflows", "2", "--ports", "2", "-o", "O"], "load", None,
     gen.synthetic, "load"),
    (["generate", "synthetic", "--coflows", "2", "--ports", "2", "-o", "O"], "port_rate", None,
     gen.synthetic, "port_rate"),
    (["generate", "synthetic", "--coflows", "2", "--ports", "2", "-o", "O"], "seed", None,
     gen.synthetic, "seed"),
    (["generate", "synthetic", "--coflows", "2", "--ports", "2", "-o", "O"], "min_width", None,
     gen.facebook_bins, "min_width"),
    (["generate", "synthetic", "--coflows", "2", "--ports", "2", "-o", "O"], "max_width", None,
     gen.facebook_bins, "max_width"),
    (["generate", "synthetic", "--coflows", "2", "--ports", "2", "-o", "O"], "max_length_mb",
     lambda mb: mb * MB, gen.facebook_bins, "max_length"),
    (["generate", "poisson", "F", "--load", "1", "-o", "O"], "seed", None,
     gen.poisson_arrivals, "seed"),
    (["generate", "batch", "F", "--load", "1", "-o", "O"], "seed", None,
     gen.batch_arrivals, "seed"),
    (["generate", "batch", "F", "--load", "1", "-o", "O"], "batch_size", None,
     gen.batch_arrivals, "batch_size"),
    (["generate", "deadlines", "F", "-o", "O"], "slack", None, gen.deadlines_from_isolation, "slack"),
    (["generate", "deadlines", "F", "-o", "O"], "minimum", None,
     gen.deadlines_from_isolation, "minimum"),
    (["generate", "deadlines", "F", "-o", "O"], "seed", None, gen.deadlines_from_isolation, "seed"),
    (["info", "F"], "short_length", lambda mb: mb * MB, co.Instance.bins, "short_length"),
    (["info", "F"], "narrow_width", None, co.Instance.bins, "narrow_width"),
    (["fair", "F"], "mechanism", None, allocate, "mechanism"),
    (["fair", "F"], "mechanism", None, lie_search, "mechanism"),
    (["mcs", "classify", "F"], "method", None, classify, "method"),
    (["mcs", "classify", "F"], "step", None, sncf, "step"),
    (["mcs", "classify", "F"], "compare", None, sncf, "compare"),
    (["mcs", "thresholds", "F", "--queues", "3"], "scheme", None, build_model, "scheme"),
    (["mcs", "thresholds", "F", "--queues", "3"], "solver", None, solve_thresholds, "method"),
    (["mcs", "thresholds", "F", "--queues", "3"], "numerator", None, single_model, "numerator"),
    (["mcs", "validate", "F"], "queues", None, validate, "queues"),
    (["mcs", "validate", "F"], "seed", None, validate, "seed"),
    (["mcs", "validate", "F"], "aalo_sharing", None, validate, "aalo_sharing"),
    (["mcs", "validate", "F"], "configs", lambda text: tuple(text.split(",")), validate, "configs"),
    *((["search", "gap", "--bound", "isolation"], name, None, gap_search, name)
      for name in ("ports", "coflows", "max_flows", "max_size", "max_release", "max_weight",
                   "iterations", "restart", "temperature", "seed", "time_limit")),
]


@pytest.mark.parametrize("argv, dest, convert, fn, name", PAIRS,
                         ids=[f"{' '.join(p[0][:2])}:{p[1]}->{p[3].__name__}" for p in PAIRS])
def test_command_line_defaults_are_the_api_defaults(argv, dest, convert, fn, name):
    value = getattr(build_parser().parse_args(argv), dest)
    assert (convert or (lambda v: v))(value) == default(fn, name)


def test_mcs_validate_runs_every_configuration_by_default():
    assert default(validate, "configs") == CONFIGS


def test_solve_without_a_method_is_the_command_lines_solve(capsys):
    # co.solve(inst) raised TypeError (missing method) where the CLI defaults to exact
    inst = io.read(GAP)
    res = co.solve(inst)
    assert res.method == co.solve(inst, method="exact").method
    assert res.status is co.Status.OPTIMAL and co.check_feasible(inst, res.schedule)
    assert main(["solve", str(GAP), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["method"] == res.method and doc["objective"] == pytest.approx(res.objective)
    for objective in ("makespan", "deadlines"):  # every objective has the default method
        assert "exact" in co.solvers.SOLVERS[objective]


def test_fair_without_a_mechanism_is_the_command_lines_fair(capsys):
    path = ROOT / "instances" / "fairness" / "hug_three_coflows_elastic.json"
    alloc = allocate(load_problem(path))
    assert alloc.mechanism == allocate(load_problem(path), "hug").mechanism
    assert main(["fair", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mechanism"] == alloc.mechanism


ONE = ('{"format": "coflowopt-instance/1", "ports": {"ingress": [2], "egress": [2]}, '
       '"coflows": [{"id": "a", "flows": [[0, 0, 4]]}]}')


def test_plural():
    from coflowopt._text import plural

    assert plural(1, "port") == "1 port" and plural(0, "port") == "0 ports"
    assert plural(2, "dependency", "dependencies") == "2 dependencies"
    assert plural(1, "dependency", "dependencies") == "1 dependency"
    assert plural(100_000_000, "piece", thousands=True) == "100,000,000 pieces"


def test_counts_of_one_are_singular(tmp_path, capsys):
    # info printed "1 ports"
    path = tmp_path / "one.json"
    path.write_text(ONE)
    runs = [["info", path], ["validate", path], ["solve", path], ["bound", path],
            ["simulate", path, "-s", "varys", "--no-progress", "--schedule", tmp_path / "s.json"],
            ["compare", path, "--schedulers", "varys,fifo", "--no-progress"],
            ["convert", path, tmp_path / "c.json"], ["fair", path],
            ["generate", "synthetic", "--coflows", "1", "--ports", "1", "--max-width", "1",
             "-o", tmp_path / "g.json"]]
    bad = re.compile(r"(?<![\d.,])1 (coflow|flow|port|link|event|decision|piece|deadline|"
                     r"evaluation|queue|task|process)e?s\b")
    for argv in runs:
        assert main([str(a) for a in argv]) == 0, argv
        out = capsys.readouterr()
        text = out.out + out.err
        assert not bad.search(text), (argv, bad.search(text))
        if argv[0] in ("info", "validate", "solve", "bound", "compare", "generate"):
            assert "1 coflow, 1 flow, 1 port" in text, (argv, text)
    assert main(["info", str(path)]) == 0
    assert "1 coflow, 1 flow, 1 port\n" in capsys.readouterr().out


TRACE = ROOT / "tests" / "data" / "good_benchmark.txt"


def test_bins_state_their_unit(tmp_path, capsys):
    # MB-based bin labels were printed for instances whose format states no unit:
    # a trace is in bytes; a JSON instance gets the threshold in its own size units
    path = tmp_path / "one.json"
    path.write_text(ONE)
    for argv, rule in ((["info", TRACE], "bins (short: longest flow < 5 MB; narrow: at most 50 "
                        "flows)"),
                       (["info", path, "--short-length", "2.5", "--narrow-width", "1"],
                        "bins (short: longest flow < 2,621,440 size units (2.5 MB if they are "
                        "bytes); narrow: at most 1 flow)"),
                       (["simulate", TRACE, "-s", "fifo", "--no-progress"],
                        "per bin (short: longest flow < 5 MB; narrow"),
                       (["simulate", path, "-s", "fifo", "--no-progress"],
                        "per bin (short: longest flow < 5,242,880 size units (5 MB if they are "
                        "bytes); narrow: at most 50 flows)"),
                       (["compare", path, "--schedulers", "fifo", "--no-progress"],
                        "bins: short: longest flow < 5,242,880 size units"),
                       (["compare", TRACE, "--schedulers", "fifo", "--no-progress"],
                        "bins: short: longest flow < 5 MB;")):
        assert main([str(a) for a in argv]) == 0
        out = capsys.readouterr().out
        assert rule in out, (argv, out)
        if argv[0] == "info":
            assert ("% bytes" in out) == (argv[1] == TRACE) and ("% size" in out) != (argv[1] == TRACE)
    for argv, unit in ((["info", TRACE, "--json"], "B"), (["info", path, "--json"], None)):
        assert main([str(a) for a in argv]) == 0
        assert json.loads(capsys.readouterr().out)["bin_thresholds"]["size_unit"] == unit
    # the library's report takes sizes as bytes unless told otherwise, and says which
    res = simulate(io.read(path), "fifo")
    assert "per bin (short: longest flow < 5 MB;" in res.format()
    assert "5,242,880 size units" in res.format(size_unit=None)
