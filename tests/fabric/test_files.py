"""Fabrics in files and on the command line: coflowopt-instance/2, --topology, bad fabrics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coflowopt import InputError, io
from coflowopt.cli import main
from coflowopt.fabric import Network

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
GOOD_V1 = ROOT / "tests" / "data" / "good_instance.json"

COFLOWS = [{"id": "a", "flows": [[0, 3, 2.0], [1, 2, 1.0]]},
           {"id": "b", "release": 1, "flows": [[2, 0, 1.0]]}]


def _doc(fabric, coflows=None):
    return {"format": "coflowopt-instance/2", "fabric": fabric, "coflows": coflows or COFLOWS}


SPINE_LEAF = {"topology": "spine-leaf", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
              "host_rate": 1.0, "spine_rate": 0.5, "routing": "ecmp", "seed": 3}
GRAPH = {"topology": "graph", "nodes": ["h0", "h1", "h2", "h3", "s", "t"],
         "hosts": ["h0", "h1", "h2", "h3"],
         "links": [["h0", "s", 1], ["h1", "s", 1], ["h2", "t", 1], ["h3", "t", 1], ["s", "t", 2]],
         "directed": False}


@pytest.mark.parametrize("fabric", [
    SPINE_LEAF,
    {"topology": "fat-tree", "k": 4, "routing": "spray"},
    {**GRAPH, "routing": "ecmp", "seed": 0},
    {**GRAPH, "routing": "given",
     "paths": {"a": [["h0", "s", "t", "h3"], ["h1", "s", "t", "h2"]], "b": [["h2", "t", "s", "h0"]]}},
])
def test_version_2_round_trips(fabric, tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps(_doc(fabric)))
    inst = io.read(path)
    assert isinstance(inst.fabric, Network)
    out = tmp_path / "out.json"
    io.write(inst, out)
    back = io.read(out)
    assert back == inst
    assert (back.routes != inst.routes).nnz == 0
    assert json.loads(out.read_text())["format"] == "coflowopt-instance/2"


def test_a_subset_writes_the_paths_of_its_own_coflows(tmp_path):
    paths = {"a": [["h0", "s", "t", "h3"], ["h1", "s", "t", "h2"]], "b": [["h2", "t", "s", "h0"]]}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(_doc({**GRAPH, "routing": "given", "paths": paths})))
    sub = io.read(path).subset([1])
    out = tmp_path / "out.json"
    io.write(sub, out)
    assert json.loads(out.read_text())["fabric"]["paths"] == {"b": paths["b"]}
    back = io.read(out)
    assert back.ids == ("b",) and (back.routes != sub.routes).nnz == 0


def test_version_1_files_are_unchanged(tmp_path):
    inst = io.read(GOOD_V1)
    out = tmp_path / "out.json"
    io.write(inst, out)
    assert json.loads(out.read_text())["format"] == "coflowopt-instance/1"
    assert io.read(out) == inst


def test_oversub_instead_of_spine_rate(tmp_path):
    fabric = {k: v for k, v in SPINE_LEAF.items() if k != "spine_rate"} | {"oversub": 4}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(_doc(fabric)))
    topo = io.read(path).fabric.topology
    assert topo.spine_rate == pytest.approx(2 * 1.0 / (4 * 2))


# the bad fabrics: the JSON path and the value in the message
BAD = [
    (_doc(SPINE_LEAF, [{"id": "a", "flows": [[0, 4, 1]]}]), "$.coflows[0].flows[0][1]",
     "egress port 4, but the fabric has 4 ports"),
    (_doc({**GRAPH, "hosts": ["h0", "h9"]}), "$.fabric.hosts[1]", "host 'h9' is not a node"),
    (_doc({**GRAPH, "links": [*GRAPH["links"][:4]]}), "$.coflows[0].flows[0]",
     "no path joins host 'h0' to host 'h3'"),
    (_doc({**GRAPH, "links": [*GRAPH["links"][:4], ["s", "t", 0]]}), "$.fabric.links[4][2]",
     "must be finite and > 0, got 0"),
    (_doc({**SPINE_LEAF, "spine_rate": -1}), "$.fabric.spine_rate",
     "must be a number > 0, got an integer -1"),
    (_doc({**SPINE_LEAF, "spine_rate": 10**400}), "$.fabric.spine_rate",
     "must be a number > 0, got an integer 100000000000...000000 (401 digits)"),
    (_doc({**SPINE_LEAF, "spine_rate": None}), "$.fabric.spine_rate", "must be a number > 0, got null"),
    (_doc({**SPINE_LEAF, "hosts_per_leaf": None}), "$.fabric.hosts_per_leaf",
     "must be an integer >= 1, got null"),
    (_doc({**GRAPH, "links": [*GRAPH["links"][:4], ["s", "t", 10**400]]}), "$.fabric.links[4][2]",
     "a capacity must be a finite number, got an integer 100000000000...000000 (401 digits)"),
    (_doc({**GRAPH, "routing": "given", "paths": {"a": [["h0", "t", "h3"], ["h1", "s", "t", "h2"]],
                                                  "b": [["h2", "t", "s", "h0"]]}}),
     "$.fabric.paths.a[0][1]", "goes from 'h0' to 't', which no link joins"),
    (_doc({**GRAPH, "routing": "given", "paths": {"a": [["h0", "s", "t", "h2"], ["h1", "s", "t", "h2"]],
                                                  "b": [["h2", "t", "s", "h0"]]}}),
     "$.fabric.paths.a[0]", "goes from 'h0' to 'h2', but the flow goes from host 0 ('h0') to host 3"),
    (_doc({**GRAPH, "routing": "given", "paths": {"a": [["h0", "s", "h1", "s", "t", "h3"],
                                                        ["h1", "s", "t", "h2"]],
                                                  "b": [["h2", "t", "s", "h0"]]}}),
     "$.fabric.paths.a[0][2]", "passes through host 'h1'; hosts do not forward"),
    (_doc({**GRAPH, "routing": "given", "paths": {"a": [["h0", "s", "t", "h3"], ["h1", "s", "t", "h2"]],
                                                  "b": [["h2", "t", "s", "h0"]],
                                                  "typo": [["h0", "s", "h1"]]}}),
     "$.fabric.paths.typo", "paths are given for coflow 'typo', which the instance does not have"),
    (_doc({**SPINE_LEAF, "routing": "spray"}), "$.fabric.seed",
     "seed is ECMP's hash seed; routing 'spray' has none"),
    (_doc({**GRAPH, "routing": "free"}), "$.fabric.routing", "unknown routing 'free'"),
    (_doc({**GRAPH, "topology": "torus"}), "$.fabric.topology", "unknown topology 'torus'"),
    (_doc({**SPINE_LEAF, "colour": 1}), "$.fabric.colour", "unknown key 'colour'"),
    ({"format": "coflowopt-instance/1", "fabric": SPINE_LEAF, "coflows": COFLOWS}, "$.fabric",
     'a fabric needs format "coflowopt-instance/2"'),
    ({**_doc(SPINE_LEAF), "ports": {"ingress": [1], "egress": [1]}}, "$.ports", "not both"),
]


@pytest.mark.parametrize(("doc", "where", "what"), BAD, ids=[b[2][:30] for b in BAD])
def test_bad_fabrics_exit_2_naming_file_path_and_value(doc, where, what, tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        io.read(path)
    assert str(err.value).startswith(str(path))
    assert where in str(err.value) and what in str(err.value)
    out = tmp_path / "out.json"
    code = main(["convert", str(path), str(out)])
    msg = capsys.readouterr().err
    assert code == 2 and where in msg and what in msg and "Traceback" not in msg
    assert not out.exists()


def test_a_real_process_shows_no_traceback(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(BAD[2][0]))
    proc = subprocess.run([sys.executable, "-m", "coflowopt", "info", str(path)],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and str(path) in proc.stderr


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_info_shows_the_fabric(capsys):
    code, out, _ = _run(capsys, "info", TRACE, "--topology", "spine-leaf:spines=4,oversub=10")
    assert code == 0
    assert "fabric: spine-leaf (leaves=150, spines=4" in out
    assert "150 hosts, 154 switches, 1500 directed links" in out
    assert "oversubscription 10:1" in out
    code, out, _ = _run(capsys, "info", TRACE, "--topology", "fat-tree:k=24", "--json")
    facts = json.loads(out)["fabric"]
    assert (facts["hosts"], facts["switches"]) == (3456, 720)
    assert facts["flow_links"]["max"] == 6
    assert json.loads(out)["ports"] == 3456


def test_simulate_and_convert_on_a_topology(capsys, tmp_path):
    doc = {"format": "coflowopt-instance/1", "ports": {"ingress": [1] * 4, "egress": [1] * 4},
           "coflows": COFLOWS}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    code, out, _ = _run(capsys, "simulate", path, "-s", "varys", "--topology",
                        "spine-leaf:hosts_per_leaf=2,spines=2,spine_rate=0.5", "--json")
    assert code == 0
    out_path = tmp_path / "net.json"
    assert _run(capsys, "convert", path, out_path, "--topology", "fat-tree:k=4,seed=3",
                "--routing", "spray")[0] == 0
    placed = io.read(out_path)
    assert placed.fabric.routing == "spray" and placed.fabric.topology.k == 4
    # the 4 ports are racks of 4 hosts each: every flow stays in its racks
    src, dst = placed.flow_src, placed.flow_dst
    orig = io.read(path)
    assert (src // 4 == orig.flow_src).all() and (dst // 4 == orig.flow_dst).all()
    graph = tmp_path / "g.json"
    graph.write_text(json.dumps({k: v for k, v in GRAPH.items()}))
    code, out, _ = _run(capsys, "info", path, "--topology", f"graph:{graph}", "--routing-seed", "4")
    assert code == 0 and "fabric: graph" in out and "routing ecmp (seed 4)" in out


@pytest.mark.parametrize(("argv", "what"), [
    (["--topology", "torus:k=4"], "unknown topology 'torus'"),
    (["--topology", "fat-tree"], "the fat-tree needs k"),
    (["--topology", "fat-tree:k=5"], "must be even"),
    (["--topology", "fat-tree:k=2"], "the instance has 150 ports but the fat-tree fabric has only 2 hosts"),
    (["--topology", "spine-leaf:spine=4"], "unknown parameter 'spine'"),
    (["--topology", "spine-leaf:oversub=0"], "oversubscription ratio must be finite and > 0"),
    (["--routing", "spray"], "--routing and --routing-seed go with --topology"),
    (["--topology", "fat-tree:k=24", "--routing", "spray", "--routing-seed", "2"], "spray has none"),
    # named the file only
    (["--topology", "graph:/nonexistent/g.json"], "--topology graph: /nonexistent/g.json: no such file"),
])
def test_bad_topology_options_exit_2(argv, what, capsys):
    code, out, err = _run(capsys, "info", TRACE, *argv)
    assert code == 2 and what in err and "Traceback" not in err and out == ""


def test_a_routing_seed_beyond_the_hashs_64_bits_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["info", str(TRACE), "--topology", "fat-tree:k=4", "--routing-seed", str(2**64)])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert f"--routing-seed: expected an integer from 0 to {2**64 - 1}, got '{2**64}'" in err


def test_trace_formats_refuse_a_network(tmp_path, capsys):
    out = tmp_path / "out.txt"
    code, _, err = _run(capsys, "convert", GOOD_V1, out, "--topology", "fat-tree:k=4,host_rate=1",
                       "--to", "benchmark")
    assert code == 2 and "stores no topology" in err and not out.exists()



def test_compare_runs_every_default_policy_on_a_network(capsys):
    code, out, err = _run(capsys, "compare", GOOD_V1, "--topology", "fat-tree:k=4,host_rate=1")
    # nothing on stderr but the notices of kernels compiling (once the installation's
    # interpreting allowance is spent, which depends on what ran before)
    assert code == 0 and all(line.startswith("coflowopt: compil") for line in err.splitlines())
    assert "varys" in out and "maluca" in out


def test_a_schedule_made_on_a_network_is_checked_there(capsys, tmp_path):
    # validate had no --topology: a spray schedule of a graph fabric was checked on the big
    # switch and called feasible, while it overloads s1-s3 under ECMP's routes
    doc = {"format": "coflowopt-instance/1", "ports": {"ingress": [1] * 4, "egress": [1] * 4},
           "coflows": [{"id": "a", "flows": [[0, 2, 1.0], [1, 3, 1.5], [0, 3, 0.5]]},
                       {"id": "b", "release": 0.5, "flows": [[3, 0, 1.0], [2, 1, 0.75]]},
                       {"id": "c", "release": 1, "flows": [[1, 2, 2.0]]}]}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    graph = tmp_path / "g.json"
    graph.write_text(json.dumps({
        "topology": "graph", "nodes": ["h0", "h1", "h2", "h3", "s0", "s1", "s2", "s3"],
        "hosts": ["h0", "h1", "h2", "h3"], "directed": False,
        "links": [["h0", "s0", 2], ["h1", "s0", 1], ["h2", "s3", 1], ["h3", "s3", 2],
                  ["s0", "s1", 1], ["s0", "s2", 0.5], ["s1", "s3", 0.5], ["s2", "s3", 1]]}))
    spray = ["--topology", f"graph:{graph}", "--routing", "spray"]
    sched = tmp_path / "s.json"
    assert _run(capsys, "solve", path, *spray, "--objective", "makespan", "--schedule", sched)[0] == 0
    assert json.loads(sched.read_text())["_placement"] == {"topology": f"graph:{graph}",
                                                          "routing": "spray"}
    code, out, err = _run(capsys, "validate", path, "--schedule", sched)
    assert code == 2 and out == "" and err.startswith(
        f"coflowopt: error: {sched}: was made on a network (--topology graph:{graph} --routing spray)")
    code, out, err = _run(capsys, "validate", path, "--schedule", sched, *spray)
    assert code == 0 and "feasible" in out and err == ""
    code, out, err = _run(capsys, "validate", path, "--schedule", sched, "--topology", f"graph:{graph}")
    assert code == 1 and "infeasible" in out and "[capacity] link s1->s3" in out
    assert "was made on --topology" in err and "checked here on" in err and "--routing ecmp" in err
    # the simulator's schedules say so too, in both formats
    for name in ("v.json", "v.npz"):
        out_file = tmp_path / name
        assert _run(capsys, "simulate", path, "-s", "varys", *spray, "--schedule", out_file)[0] == 0
        assert _run(capsys, "validate", path, "--schedule", out_file)[0] == 2
        code, out, _ = _run(capsys, "validate", path, "--schedule", out_file, *spray, "--json")
        assert code == 0 and json.loads(out)["schedule"]["made_on"]["routing"] == "spray"


def _graph_doc(links, hosts, routing, coflows, directed=False, **extra):
    nodes = sorted({n for a, b, _ in links for n in (a, b)}, key=lambda n: (n not in hosts, n))
    fabric = {"topology": "graph", "nodes": nodes, "hosts": hosts, "links": links,
              "directed": directed, "routing": routing, **extra}
    return _doc(fabric, coflows)


@pytest.mark.parametrize(("doc", "spec", "what"), [
    # background flows on given routes
    (_graph_doc([["h0", "s0", 1], ["h1", "s1", 2], ["h2", "s1", 1], ["s0", "s1", 3]],
                ["h0", "h1", "h2"], "given",
                [{"id": "a", "flows": [[0, 1, 1.0]]}], paths={"a": [["h0", "s0", "s1", "h1"]]}),
     "poisson:load=0.2,cdf=web-search,seed=1", "background flows follow the fabric's routing"),
    # Poisson flows between hosts the graph does not join
    (_graph_doc([["h0", "s0", 1], ["h1", "s1", 2], ["h2", "s1", 1], ["h3", "s0", 1]],
                ["h0", "h1", "h2", "h3"], "ecmp", [{"id": "a", "flows": [[1, 2, 1.0]]}]),
     "poisson:load=0.2,cdf=web-search,seed=1", "no path joins host 'h0' to host 'h1'"),
    # more Poisson traffic than a link carries (its name said "link link h1->s1")
    (_graph_doc([["h0", "s0", 4], ["s0", "h0", 4], ["h1", "s1", 0.25], ["s1", "h1", 0.25],
                 ["s0", "s1", 10], ["s1", "s0", 10]], ["h0", "h1"], "ecmp",
                [{"id": "a", "flows": [[0, 1, 2.0]]}], directed=True),
     "poisson:load=0.2,cdf=web-search,seed=1,unit=1e-6", "offers link h1->s1 0.425 per time unit"),
])
def test_a_background_the_fabric_cannot_take_names_the_option_and_the_file(
        capsys, tmp_path, doc, spec, what):
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    for command in (["simulate", "-s", "varys"], ["compare", "--schedulers", "varys,fair"]):
        code, out, err = _run(capsys, command[0], path, *command[1:], "--background", spec)
        assert code == 2 and out == "" and what in err and "link link" not in err
        assert err.startswith(f"coflowopt: error: --background {spec}: on {path}: "), err


def test_the_crossbar_decomposition_names_the_file_it_cannot_decompose(capsys, tmp_path):
    coflows = [{"id": "a", "flows": [[0, 1, 1.0], [1, 2, 0.5]]}]
    for links, what in (([["h0", "s0", 1], ["h1", "s0", 2], ["h2", "s0", 1]], "equal capacities"),
                        ([["h0", "s0", 1], ["h1", "s0", 1], ["h2", "s1", 1], ["s0", "s1", 1]],
                         "crosses 3 links")):
        path = tmp_path / "in.json"
        path.write_text(json.dumps(_graph_doc(links, ["h0", "h1", "h2"], "spray", coflows)))
        code, out, err = _run(capsys, "solve", path, "--objective", "makespan", "--param",
                              "crossbar=true")
        assert code == 2 and out == "" and err.startswith(f"coflowopt: error: {path}: ") and what in err


def test_a_param_given_twice_is_refused(capsys, tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"format": "coflowopt-instance/1", "ports": {
        "ingress": [1, 1], "egress": [1, 1]}, "coflows": [
            {"id": "a", "deadline": 2, "flows": [[0, 1, 1.0]]}]}))
    for argv in (["solve", path, "--objective", "deadlines", "--param", "weighted=true",
                  "--param", "weighted=false"],
                 ["simulate", path, "-s", "varys", "--param", "order=size", "--param", "order=width"]):
        code, out, err = _run(capsys, *argv)
        assert code == 2 and out == "" and "--param sets" in err and "twice" in err


def test_a_network_written_another_way_is_the_same_network(capsys, tmp_path, monkeypatch):
    # the note compared the options as written: a default spelled out, 2 against 2.0, or a
    # graph file by a path relative to another folder said "made on another network"
    doc = {"format": "coflowopt-instance/1", "ports": {"ingress": [1] * 8, "egress": [1] * 8},
           "coflows": [{"id": "a", "flows": [[0, 5, 2.0], [1, 6, 1.0]]},
                       {"id": "b", "release": 1, "flows": [[2, 7, 1.0]]}]}
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    (tmp_path / "g").mkdir()
    graph = tmp_path / "g" / "two.json"
    graph.write_text(json.dumps({
        "topology": "graph", "nodes": [f"h{i}" for i in range(8)] + ["s", "t"],
        "hosts": [f"h{i}" for i in range(8)], "directed": False,
        "links": [[f"h{i}", "s" if i < 4 else "t", 1] for i in range(8)] + [["s", "t", 2]]}))
    monkeypatch.chdir(tmp_path)
    for made, checked in ((["spine-leaf:oversub=2"], ["spine-leaf:oversub=2.0,spines=4"]),
                          (["fat-tree:k=4"], ["fat-tree:k=4,seed=0"]),
                          (["graph:g/two.json"], [f"graph:{graph}"])):
        sched = tmp_path / "s.json"
        assert _run(capsys, "simulate", path, "-s", "varys", "--topology", *made, "--schedule",
                    sched, "--no-progress")[0] == 0
        code, _, err = _run(capsys, "validate", path, "--schedule", sched, "--topology", *checked)
        assert code == 0 and err == "", (made, err)
    # the same graph with its links listed backwards, each from its other end
    doc_g = json.loads(graph.read_text())
    doc_g["links"] = [[b, a, c] for a, b, c in reversed(doc_g["links"])]
    backwards = tmp_path / "backwards.json"
    backwards.write_text(json.dumps(doc_g))
    code, _, err = _run(capsys, "validate", path, "--schedule", sched, "--topology",
                        f"graph:{backwards}")
    assert code == 0 and err == ""
    # from another folder, the file's path still finds the graph
    monkeypatch.chdir(tmp_path / "g")
    code, _, err = _run(capsys, "validate", path, "--schedule", sched, "--topology", "graph:two.json")
    assert code == 0 and err == ""
    code, _, err = _run(capsys, "validate", path, "--schedule", sched)
    assert code == 2 and f"--topology graph:{graph} --routing ecmp --routing-seed 0" in err


@pytest.mark.parametrize(("placement", "where", "what"), [
    ({"topology": "spine-leaf", "routing": "spray", "routing_seed": 5}, ".routing_seed",
     "spray has none, got 5"),
    ({"topology": "spine-leaf", "routing": "ecmp", "routing_seed": True}, ".routing_seed",
     "an integer from 0 to 2**64 - 1, got True"),
    ({"topology": "spine-leaf", "routing": "ecmp", "routing_seed": "3"}, ".routing_seed",
     "an integer from 0 to 2**64 - 1, got '3'"),
    ({"topology": "spine-leaf", "routing": "given"}, ".routing", "got 'given'"),
    ({"topology": 4, "routing": "ecmp"}, ".topology", "got 4"),
    ({"topology": "spine-leaf", "routing": "ecmp", "seed": 1}, ".seed", "not a key"),
    ({"routing": "ecmp"}, "", "needs its topology"),
    ("spine-leaf", "", "a placement is {"),
    ({"topology": "torus", "routing": "ecmp"}, ".topology", "unknown topology 'torus'"),
    ({"topology": "spine-leaf", "routing": "ecmp", "routing_seed": 2**64}, ".routing_seed",
     f"an integer from 0 to 2**64 - 1, got {2**64}"),
    ({"topology": "spine-leaf", "routing": "ecmp", "routing_seed": -1}, ".routing_seed",
     "an integer from 0 to 2**64 - 1, got -1"),
    # a network the options cannot make (checked where --topology is given: the big switch
    # refuses every placement first)
    ({"topology": "spine-leaf:oversub=-1", "routing": "spray"}, ".topology", "cannot be rebuilt"),
    ({"topology": "fat-tree:k=3", "routing": "spray"}, ".topology", "cannot be rebuilt"),
])
def test_a_bad_placement_names_its_key_and_value(capsys, tmp_path, placement, where, what):
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"format": "coflowopt-instance/1", "ports": {
        "ingress": [1, 1], "egress": [1, 1]}, "coflows": [{"id": "a", "flows": [[0, 1, 1.0]]}]}))
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps({"format": "coflowopt-schedule/1", "_placement": placement,
                                 "pieces": [["a", 0, 0.0, 1.0, 1.0]]}))
    given = ["--topology", "spine-leaf", "--routing", "spray"] if "rebuilt" in what else []
    code, out, err = _run(capsys, "validate", path, "--schedule", sched, *given)
    assert code == 2 and out == ""
    assert err.startswith(f"coflowopt: error: {sched}: at $._placement{where}: ") and what in err, err


def test_listed_background_flows_between_hosts_the_graph_does_not_join(capsys, tmp_path):
    doc = _graph_doc([["h0", "s0", 1], ["h1", "s1", 1], ["h2", "s0", 1]], ["h0", "h1", "h2"],
                     "ecmp", [{"id": "a", "flows": [[0, 2, 1.0]]}])
    path = tmp_path / "in.json"
    path.write_text(json.dumps(doc))
    bg = tmp_path / "bg.json"
    bg.write_text(json.dumps({"flows": [[0.0, 0, 1, 1.0]]}))
    code, out, err = _run(capsys, "simulate", path, "-s", "varys", "--background", f"file:{bg}")
    assert code == 2 and out == "" and "Poisson" not in err
    assert err.startswith(f"coflowopt: error: --background file:{bg}: on {path}: a background "
                          "flow runs between hosts the fabric does not join")
