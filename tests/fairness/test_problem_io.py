"""FairnessProblem validation and the coflowopt-demands/1 file format."""

from __future__ import annotations

import json
import math
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest

from coflowopt.errors import InputError, InstanceError
from coflowopt.fairness import (
    FairnessProblem,
    load_problem,
    read_demands,
    write_demands,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def test_vectors_are_scaled_to_a_maximum_of_one_and_exactness_is_detected() -> None:
    p = FairnessProblem([[1, 2], ["1/2", 0]])
    assert p.exact
    assert [list(r) for r in p.vectors] == [[F(1, 2), F(1)], [F(1), F(0)]]
    q = FairnessProblem([[0.5, 1.0]])
    assert not q.exact and q.vectors.dtype == np.float64
    assert FairnessProblem([[1, 1]], exact=False).vectors.dtype == np.float64


def test_bounded_demands_become_a_vector_and_a_bound() -> None:
    p = FairnessProblem.from_demands([[F(1, 4), F(1, 8)], [1, 1]])
    assert list(p.vectors[0]) == [1, F(1, 2)]
    assert p.bounds[0] == F(1, 4) and p.bounds[1] == 1  # demand <1, 1> needs progress 1 at most
    assert p.bounded
    assert math.isinf(FairnessProblem([[1, 1]]).bounds[0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"vectors": [[1, -1]]}, "demands must be finite and >= 0"),
        ({"vectors": [[0, 0]]}, "coflow 'C0' has no demand on any link"),
        ({"vectors": [[1, 1]], "weights": [0]}, "weight 0; it must be > 0"),
        ({"vectors": [[1, 1]], "weights": [1, 2]}, "1 coflow but 2 weights"),
        ({"vectors": [[1, 1]], "bounds": [-1]}, "bound -1; it must be > 0"),
        ({"vectors": [[1, 1]], "capacity": [1]}, "2 links but 1 capacity"),
        ({"vectors": [[1, 1]], "capacity": [1, 0]}, "capacities must be > 0"),
        ({"vectors": [[1, 1], [1, 1]], "ids": ["a", "a"]}, "duplicate coflow id 'a'"),
        ({"vectors": [[1, 1, 1]], "num_ports": 1}, "does not match 3 links"),
        ({"vectors": [1, 2]}, "non-empty \\(coflows x links\\) matrix"),
        ({"vectors": [[1, "x"]]}, "must be numbers"),
    ],
)
def test_bad_problems_are_rejected_with_a_clear_message(kwargs: dict, match: str) -> None:
    with pytest.raises(InstanceError, match=match):
        FairnessProblem(**kwargs)


def test_index_and_with_vector() -> None:
    p = FairnessProblem([[1, 1], [1, 0]], ids=("x", "y"))
    assert p.index("y") == 1 and p.index(0) == 0
    with pytest.raises(InstanceError, match="no coflow with id 'z'"):
        p.index("z")
    q = p.with_vector("y", [0, 2])
    assert list(q.vectors[1]) == [0, 1] and list(p.vectors[1]) == [1, 0]


def test_demands_file_round_trip(tmp_path: Path) -> None:
    p = FairnessProblem(
        [[F(1, 2), 1], [1, F(1, 6)]], weights=[1, 2], bounds=[None, F(1, 3)], elastic=[True, False],
        capacity=[1, 2], ids=("A", "B"), link_names=("up", "down"), name="demo",
    )
    path = tmp_path / "d.json"
    write_demands(p, path, metadata={"_source": "test"})
    doc = json.loads(path.read_text())
    assert doc["coflows"][1]["vector"] == [1, "1/6"] and doc["_source"] == "test"
    q = read_demands(path)
    assert q.exact and q.ids == p.ids and q.link_names == p.link_names and q.name == "demo"
    for field in ("vectors", "weights", "capacity"):
        assert (getattr(q, field) == getattr(p, field)).all()
    assert list(q.elastic) == [True, False] and q.bounds[1] == F(1, 3)


def test_demand_key_gives_a_bounded_coflow(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"format": "coflowopt-demands/1", "ports": 1,
                                "coflows": [{"id": "a", "demand": ["1/4", "1/8"]}]}))
    p = read_demands(path)
    assert p.bounds[0] == F(1, 4) and list(p.vectors[0]) == [1, F(1, 2)]
    assert p.link_names == ("in0", "out0") and p.num_ports == 1


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ({"format": "x", "coflows": []}, "'format' must be 'coflowopt-demands/1'"),
        ({"format": "coflowopt-demands/1", "coflows": []}, "non-empty array"),
        ({"format": "coflowopt-demands/1", "speed": 1, "coflows": [{"vector": [1]}]}, "unknown key 'speed'"),
        ({"format": "coflowopt-demands/1", "coflows": [{"vector": [1], "demand": [1]}]},
         "exactly one of 'vector' and 'demand'"),
        ({"format": "coflowopt-demands/1", "coflows": [{"vector": ["1/0"]}]}, "divides by zero"),
        ({"format": "coflowopt-demands/1", "coflows": [{"vector": [1, 2]}, {"vector": [1]}]},
         "has 1 entries, expected 2"),
        ({"format": "coflowopt-demands/1", "coflows": [{"vector": [0, 0]}]}, "at least one positive"),
        ({"format": "coflowopt-demands/1", "coflows": [{"vector": [1], "weight": -1}]}, "weight must be > 0"),
        ({"format": "coflowopt-demands/1", "coflows": [{"vector": [1], "elastic": "yes"}]},
         "elastic must be true or false"),
        ({"format": "coflowopt-demands/1",
          "coflows": [{"id": "a", "vector": [1]}, {"id": "a", "vector": [1]}]},
         "duplicate coflow id 'a'"),
    ],
)
def test_bad_demands_files_name_the_place(tmp_path: Path, doc: dict, match: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=match) as info:
        read_demands(path)
    assert str(path) in str(info.value)


def test_load_problem_reads_instances_too() -> None:
    p = load_problem(DATA / "good_instance.json")
    assert p.instance is not None and p.num_ports is not None
    assert (p.vectors.max(axis=1) == 1).all()
    q = load_problem(DATA / "good_instance.json", elastic=False, exact=True)
    assert q.exact and not q.elastic.any()


def test_load_problem_reads_a_network_instance(tmp_path: Path) -> None:
    # coflowopt-instance/2 with a spine-leaf fabric: vectors over its 12 links
    fabric = {"topology": "spine-leaf", "leaves": 2, "spines": 1, "hosts_per_leaf": 2,
              "host_rate": 1, "spine_rate": 1}
    doc = {"format": "coflowopt-instance/2", "fabric": fabric,
           "coflows": [{"id": "a", "flows": [[0, 2, 1]]}, {"id": "b", "flows": [[1, 3, 1]]}]}
    path = tmp_path / "net.json"
    path.write_text(json.dumps(doc))
    p = load_problem(path)
    assert p.num_links == 12 and p.num_ports is None and p.link_names[8] == "link leaf0->spine0"


@pytest.mark.parametrize(("coflows", "extra", "where", "what"), [
    ('[{"id": "A", "vector": ["1e400", 1]}]', "", "$.coflows[0].vector[0]", "too large for a float"),
    ('[{"id": "A", "vector": [' + "1" + "0" * 400 + ', 1]}]', "", "$.coflows[0].vector[0]",
     "too large for a float"),
    ('[{"id": "A", "vector": [1, 1], "weight": "1e400"}]', "", "$.coflows[0].weight", "too large"),
    ('[{"id": "A", "vector": [1, 1], "weight": 1e-320}]', "", "$.coflows[0].weight",
     "below 2.23e-308"),
    ('[{"id": "A", "vector": [1, 1]}, {"id": "A", "vector": [1, 0]}]', "", "$.coflows[1].id",
     "duplicate coflow id 'A'"),
    ('[{"id": "A", "vector": [1, 1]}]', ', "capacity": [-1, 1]', "$.capacity[0]",
     "capacity must be > 0"),
    ('[{"id": "A", "vector": [1, 1]}]', ', "links": ["x", "x"]', "$.links[1]",
     "duplicate link name 'x'"),
])
def test_demands_files_locate_bad_values(tmp_path, coflows, extra, where, what) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"format": "coflowopt-demands/1"' + extra + ', "coflows": ' + coflows + "}")
    with pytest.raises(InputError) as err:
        read_demands(path)
    assert where in str(err.value) and what in str(err.value), str(err.value)


def test_a_bounded_demand_is_inelastic_unless_said_otherwise(tmp_path) -> None:
    # dissertation §7.6.3: a bounded coflow "cannot elastically scale up" to use more
    from coflowopt.fairness import allocate

    path = tmp_path / "d.json"
    path.write_text('{"format": "coflowopt-demands/1", "links": ["l1", "l2"], "coflows": ['
                    '{"id": "A", "demand": ["1/2", "1/10"]}, {"id": "B", "vector": [1, "1/2"]}]}')
    prob = read_demands(path)
    assert list(prob.elastic) == [False, True]
    a = allocate(prob, "hug", cooperative=True).allocation
    assert (a[0, 1], a[1, 1]) == (F(1, 10), F(9, 10))  # A gets its demand; B the spare


def test_from_demands_gives_inelastic_coflows_like_the_demand_key() -> None:
    # §7.6.3: a bounded coflow "cannot elastically scale up"; the file reader's
    # 'demand' key already says so, and FairnessProblem.from_demands must agree
    from coflowopt.fairness import allocate
    from coflowopt.fairness.io import parse_demands

    dem = [["1/4", "1/8"], [1, "1/6"]]
    p = FairnessProblem.from_demands(dem)
    q = parse_demands({"format": "coflowopt-demands/1",
                       "coflows": [{"id": "C0", "demand": dem[0]}, {"id": "C1", "demand": dem[1]}]})
    assert not p.elastic.any() and not q.elastic.any()
    # C0 never gets more than its demand 1/8 on link 2 (it used to get 1/4 under HUG)
    assert allocate(p, "hug").allocation[0, 1] == F(1, 8)
    assert FairnessProblem.from_demands(dem, elastic=True).elastic.all()


def test_integer_demand_entries_keep_a_demands_file_exact() -> None:
    # "exact iff every number is an integer or a 'p/q' string": an integer entry
    # of a 'demand' must not turn into a float when the row is scaled
    from coflowopt.fairness.io import parse_demands

    q = parse_demands({"format": "coflowopt-demands/1",
                       "coflows": [{"id": "A", "demand": [2, 1]}, {"id": "B", "demand": [1, "1/6"]}]})
    assert q.exact
    assert list(q.vectors[0]) == [1, F(1, 2)] and q.bounds[0] == 2
    assert list(q.vectors[1]) == [1, F(1, 6)]


def test_exact_vectors_are_scaled_to_exactly_one() -> None:
    # a Fraction maximum that rounds to 1.0 as a float must still be scaled
    top = F(10**17 + 1, 10**17)
    p = FairnessProblem([[top, F(1, 2)], [1, 1]])
    assert max(p.vectors[0]) == 1 and p.vectors[0][1] == F(1, 2) / top
    q = FairnessProblem([[1 - F(1, 10**17), F(1, 2)], [1, 1]])
    assert max(q.vectors[0]) == 1


def test_unclear_demand_files_get_clear_errors(tmp_path) -> None:
    # a demand that normalises below float64 vanished from its link;
    # a wrong format named only the instance format; an empty instance named no file
    def write(name: str, doc: dict) -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(doc))
        return path

    tiny = write("tiny.json", {"format": "coflowopt-demands/1",
                               "coflows": [{"id": "A", "vector": [1e308, 1e-300]}]})
    with pytest.raises(InputError, match=r"at \$\.coflows\[0\]: coflow 'A' demands 1e-300 on "):
        load_problem(tiny)
    typo = write("typo.json", {"format": "coflowopt-demand/1", "coflows": []})
    with pytest.raises(InputError, match=r'"coflowopt-demands/1" \(a demands file\) or '):
        load_problem(typo)
    empty = write("empty.json", {"format": "coflowopt-instance/1",
                                 "ports": {"ingress": [1], "egress": [1]}, "coflows": []})
    with pytest.raises(InputError, match=r"empty.json: at \$\.coflows: the instance has no coflows"):
        load_problem(empty)


def test_capacities_near_the_float_limit_keep_a_utilization_fraction(tmp_path) -> None:
    # the capacity-weighted fraction summed capacities of 1e308 to inf: nan
    from coflowopt.fairness import drf, evaluate

    path = tmp_path / "big.json"
    path.write_text(json.dumps({"format": "coflowopt-demands/1", "capacity": [1e308, 1e308],
                                "coflows": [{"id": "A", "vector": [1, "1/2"]},
                                            {"id": "B", "vector": ["1/2", 1]}]}))
    report = evaluate(drf(load_problem(path)))
    assert report.utilization_fraction == pytest.approx(1.0)


def test_the_fairness_api_names_a_bad_argument():
    import scipy.sparse as sp

    from coflowopt.fairness import FairnessProblem, IncrementalDRF, hug, lie_search, progress
    from coflowopt.fairness.dominant import drf_level
    from coflowopt.fairness.lp import hug_stage2_lp, max_min_progress_lp
    from coflowopt.fairness.problem import correlation_vectors

    vec = [[1.0, 0.5], [0.5, 1.0]]
    p = FairnessProblem(vec)
    inc = IncrementalDRF(2)
    bad = [
        (lambda: FairnessProblem(vec, elastic="false"), "elastic must be true or false"),
        (lambda: FairnessProblem(vec, elastic=[0.5, 0]), "elastic must be true or false"),
        (lambda: FairnessProblem(vec, elastic=[True, False, True]), "elastic must be true or false"),
        (lambda: FairnessProblem(vec, capacity=["x", 1]), "capacities must be numbers"),
        (lambda: p.with_vector(0, [1, 1, 1]), "needs 2 entries"),
        (lambda: p.with_vector(0, ["a", 1]), "must be numbers"),
        (lambda: correlation_vectors(np.array(vec), [1, 1, 1]), "one value per link"),
        (lambda: drf_level(np.array(vec), [1, 1, 1]), "one value per coflow"),
        (lambda: IncrementalDRF(-1), "num_links must be an integer"),
        (lambda: inc.add("a", [1, 1], weight=-1), "must be a finite number > 0"),
        (lambda: inc.add("a", [1, 1], weight=0), "must be a finite number > 0"),
        (lambda: inc.add("a", [np.nan, 1]), "finite and >= 0"),
        (lambda: inc.add("a", [1, 1, 1]), "needs 2 entries"),
        (lambda: inc.add("a", sp.csr_array(np.ones((1, 3)))), "must be 1 x 2"),
        (lambda: lie_search(p, 0, "drf", seed="x"), "seed must be an integer"),
        (lambda: lie_search(p, 0, "drf", samples=-1), "samples must be an integer"),
        (lambda: lie_search(p, 0, "drf", time_limit=-1), "time_limit must be a finite number"),
        (lambda: hug(p, cooperative="no"), "cooperative must be True or False"),
        (lambda: max_min_progress_lp(p, time_limit=-1), "time_limit must be a finite number"),
        (lambda: hug_stage2_lp(p, np.zeros((3, 2)), np.zeros(2)), "the guarantee must be"),
        (lambda: lie_search(p, 0, "hug", options="cooperative=1"), "options must be a mapping"),
        (lambda: lie_search(p, 0, "drf", grid=2.5), "grid must be an integer >= 0"),
        (lambda: lie_search(p, 0, "drf", grid=-3), "grid must be an integer >= 0"),
        (lambda: progress(np.ones(5), p), r"the problem's shape \(2, 2\)"),
        (lambda: progress(np.ones((2, 2)), None), "progress takes a FairnessProblem"),
    ]
    for call, message in bad:
        with pytest.raises(InstanceError, match=message):
            call()


def test_an_instance_where_a_fairness_problem_is_taken_is_named():
    import coflowopt as co
    from coflowopt.fairness import (
        FairnessProblem,
        allocate,
        drf,
        evaluate,
        fairness_timeline,
        hug,
        lie_search,
        per_flow,
        psp,
    )

    inst = co.Instance(co.Fabric.uniform(2, 1.0), (co.Coflow("a", [0], [1], [1.0]),
                                                   co.Coflow("b", [1], [0], [2.0])))
    prob = FairnessProblem.from_instance(inst)
    res = co.sim.simulate(inst, "fair", record=True)
    other = co.sim.simulate(inst.subset([0]), "fair", record=True)
    for call in (lambda: allocate(inst, "hug"), lambda: hug(inst), lambda: drf(inst),
                 lambda: psp(inst), lambda: per_flow(inst), lambda: lie_search(inst, "a")):
        with pytest.raises(InstanceError, match=r"takes a FairnessProblem, got Instance "
                                                r"\(FairnessProblem.from_instance"):
            call()
    with pytest.raises(InstanceError, match="evaluate takes a FairAllocation"):
        evaluate(prob)
    with pytest.raises(InstanceError, match="from_instance takes an Instance"):
        FairnessProblem.from_instance(prob)
    # a result stands for its schedule; another instance's, or none, is named
    assert fairness_timeline(inst, res).times.size > 1
    with pytest.raises(InputError, match="has no schedule"):
        fairness_timeline(inst, co.sim.simulate(inst, "fair", record=False))
    with pytest.raises(InputError, match="the instance must be an Instance"):
        fairness_timeline(prob, res)
    with pytest.raises(InputError, match="another instance's"):
        fairness_timeline(inst.subset([0]), res)
    assert fairness_timeline(inst.subset([0]), other).times.size > 1
