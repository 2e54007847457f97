"""Bad arguments to the Python API: a coflowopt error that names the argument and the value,
not a NumPy error from deep inside nor a silent result."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import Coflow, Fabric, Instance, Status, check_feasible, write
from coflowopt.errors import CoflowoptError
from coflowopt.fabric import Background, PoissonFlows, coflows_to_background
from coflowopt.fairness import correlation_vectors
from coflowopt.io.generate import synthetic
from coflowopt.metrics import summarize
from coflowopt.schedule import Schedule, ScheduleBuilder
from coflowopt.sim import simulate, simulate_many


def _inst() -> Instance:
    return Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0)]),
                                        Coflow.from_flows("b", [(1, 1, 2.0)])))


@pytest.mark.parametrize(("call", "message"), [
    # ran, and said it would keep "about -0.0 GiB"
    (lambda i: simulate(i, "varys", max_pieces=-1), "max_pieces must be an integer >= 0, got -1"),
    (lambda i: simulate(i, "varys", batch_interval="1"), "batch interval must be a finite number"),
    # a schedule over [nan, nan]
    (lambda i: simulate(i, "varys").schedule.shifted(float("nan")),
     "offset must be a finite number, got nan"),
    # NumPy's "operands could not be broadcast"
    (lambda i: i.with_releases([1.0, 2.0, 3.0]),
     r"release must be a number or one per coflow \(2\), got \[1.0, 2.0, 3.0\]"),
    (lambda i: correlation_vectors([1.0, 2.0]), r"coflows x links array, got shape \(2,\)"),
    # AttributeErrors from inside
    (lambda i: simulate("inst.json", "varys"), "expected an Instance, got str"),
    (lambda i: simulate(i, "varys", 5), "params must be a mapping of parameter names to values, got 5"),
    # accepted, and "no" recorded
    (lambda i: simulate(i, "varys", record="no"), "record must be True or False, got 'no'"),
    (lambda i: simulate(i, "varys", progress=3), "progress must be a function of the fraction done"),
    (lambda i: check_feasible(i.coflows, Schedule.empty()), "expected an Instance, got tuple"),
    (lambda i: write(i.coflows, "x.json"), "expected an Instance to write, got tuple"),
    # TypeError, ValueError and NumPy errors from inside
    (lambda i: summarize(i, [1.0]), r"need one completion time per coflow \(2\), got shape \(1,\)"),
    (lambda i: Fabric.uniform(3, "x"), "rate must be a finite number > 0, got 'x'"),
    (lambda i: synthetic(3, 3, seed=-1), "seed must be an integer >= 0 or None, got -1"),
    (lambda i: simulate_many(i, "varys"), "runs must map labels to schedulers"),
    # float("1") took the string
    (lambda i: Coflow("c", [0], [1], [1.0], release="1"), "release of coflow 'c' must be a number, got '1'"),
    # TypeError: 'NoneType' object is not iterable
    (lambda i: i.subset(None), "subset takes an iterable of coflow positions, got None"),
    # NumPy's IndexError, and "operands could not be broadcast"
    (lambda i: simulate(i, "varys").schedule.renumbered([0]),
     r"the mapping must be a list of 2 or more flow indices \(the schedule serves flow 1\)"),
    (lambda i: ScheduleBuilder().add([0, 1], [0.0, 0.0, 0.0], 1.0, 1.0),
     "start has 3 entries for 2 flows"),
    (lambda i: ScheduleBuilder().add(["a"], 0.0, 1.0, 1.0), "flow indices must be numeric"),
    # background traffic: TypeError, ValueError and AttributeError from inside
    (lambda i: coflows_to_background(i, "0.3"), "share of coflows turned into background must be a number"),
    (lambda i: coflows_to_background(i, 0.3, seed=1.5), "the seed must be an integer >= 0, got 1.5"),
    (lambda i: PoissonFlows(0.3, "web-search"), "cdf must be a SizeCDF"),
    (lambda i: Background(times=["a", "b"], load=np.zeros((1, 4))), "times and loads must be numbers"),
    (lambda i: check_feasible(i, Schedule.empty(), background="x"), "background must be a LinkLoad"),
])
def test_bad_arguments_name_themselves(call, message):
    with pytest.raises(CoflowoptError, match=message):
        call(_inst())


def test_correlation_vectors_of_an_instance_are_those_of_its_loads():
    # an instance gave NumPy's AxisError
    inst = _inst()
    by_arrays = correlation_vectors(inst.load, inst.fabric.capacity)
    assert np.array_equal(correlation_vectors(inst), by_arrays)
    assert correlation_vectors(Instance(Fabric.uniform(2), ())).shape == (0, 4)


def test_a_schedule_shifted_by_a_number_moves_every_piece():
    sched = simulate(_inst(), "varys").schedule
    moved = sched.shifted(2.5)
    assert np.array_equal(moved.start, sched.start + 2.5) and np.array_equal(moved.end, sched.end + 2.5)
    assert np.array_equal(moved.rate, sched.rate) and np.array_equal(moved.flow, sched.flow)
    assert isinstance(Schedule.empty().shifted(1), Schedule)


def test_results_print_in_one_line():
    # the dataclasses printed every array: 21.7 KB for a simulation of the trace
    from coflowopt import solve

    inst = Instance(Fabric.uniform(2), tuple(Coflow(f"c{k}", [k % 2], [0], [1.0]) for k in range(600)))
    text = repr(simulate(inst, "varys"))
    assert text.startswith("SimulationResult(scheduler='varys', coflows=600, mean_cct=")
    assert "\n" not in text and len(text) < 300
    text = repr(solve(inst.subset(range(3)), method="exact"))
    assert text.startswith("Result(method='exact', status='optimal', objective=") and len(text) < 300


def test_results_compare_and_hash_by_identity():
    # hash(Result) raised "unhashable type: 'numpy.ndarray'"; == compared arrays
    from coflowopt import solve

    a, b = (solve(_inst(), method="exact") for _ in range(2))
    assert a == a and a != b and len({a, b, a}) == 2
    assert ScheduleBuilder().add([0, 1], 0.0, [1.0, 2.0], 3.0) is None


def test_numpy_integer_seeds_are_seeds():
    # the placement's and the portfolio's seeds took Python ints only
    from coflowopt.exact.portfolio import portfolio
    from coflowopt.fabric.placement import place

    inst = synthetic(4, 4, seed=1)
    for seed in (0, 3):
        assert place(inst, "fat-tree", {"k": 4, "seed": np.int64(seed)}) == place(
            inst, "fat-tree", {"k": 4, "seed": seed})
    a, b = (portfolio(_inst(), time_limit=600, seed=seed) for seed in (np.int64(2), 2))
    assert a.status == b.status == Status.OPTIMAL and a.objective == b.objective
