"""Networks: the incidence under ECMP, spray and given paths; hand-computed schedules."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from coflowopt import Coflow, Fabric, Instance, InstanceError, check_feasible
from coflowopt.fabric import FatTree, Network, SpineLeaf, flow_hash
from coflowopt.sim import simulate


def _inst(net, flows, **kw):
    return Instance(net, (Coflow.from_flows("a", flows, **kw),))


def test_two_flows_sharing_a_spine_link_get_half_each():
    # 2 leaves of 2 hosts, one spine: h0->h2 and h1->h3 both cross leaf0->spine0->leaf1
    net = Network(SpineLeaf(2, 1, 2, 1.0, 1.0))
    inst = _inst(net, [(0, 2, 1.0), (1, 3, 1.0)])
    res = simulate(inst, "fair")
    assert check_feasible(inst, res.schedule).ok
    assert res.cct[0] == pytest.approx(2.0)  # each at 1/2, though every host link could give 1
    # on the big switch the same flows do not meet
    big = Instance(Fabric.uniform(4), inst.coflows)
    assert simulate(big, "fair").cct[0] == pytest.approx(1.0)


def test_host_loads_are_the_uplinks_and_downlinks_only():
    # 2 leaves of 2 hosts, one spine: 4 hosts, links 0-3 uplinks, 4-7 downlinks, 8-11 the
    # leaf-spine links, which egress_load must not include
    inst = _inst(Network(SpineLeaf(2, 1, 2, 1.0, 1.0)), [(0, 2, 1.0), (1, 3, 2.0), (0, 1, 3.0)])
    assert inst.routes.shape == (3, 12)
    assert inst.ingress_load.tolist() == [[4.0, 2.0, 0.0, 0.0]]
    assert inst.egress_load.tolist() == [[0.0, 3.0, 1.0, 2.0]]
    assert inst.load[0, 8:].sum() > 0  # the two flows between leaves do cross switch links


def test_given_paths_through_one_core_share_it_and_spray_splits():
    ft = FatTree(4)
    # h0 (pod 0) -> h4 and h1 -> h5 (pod 1), both through core0 = agg0's first core
    paths = {"a": (("h0", "edge0", "agg0", "core0", "agg2", "edge2", "h4"),
                   ("h1", "edge0", "agg0", "core0", "agg2", "edge2", "h5"))}
    given = _inst(Network(ft, "given", paths=paths), [(0, 4, 1.0), (1, 5, 1.0)])
    res = simulate(given, "fair")
    assert check_feasible(given, res.schedule).ok
    assert res.cct[0] == pytest.approx(2.0)
    # sprayed, each flow puts 1/2 on each of its edge's two uplinks and 1/4 on each core
    # link: the two flows fit at full rate
    spray = _inst(Network(ft, "spray"), [(0, 4, 1.0), (1, 5, 1.0)])
    row = spray.routes[[0]]
    assert sorted(row.data.tolist()) == [0.25] * 8 + [0.5] * 4 + [1.0] * 2
    assert np.allclose(spray.load.sum(axis=0).max(), 1.0)
    assert simulate(spray, "fair").cct[0] == pytest.approx(1.0)


def test_a_flow_crosses_its_host_links_then_switch_links():
    inst = _inst(Network(FatTree(4), seed=3), [(0, 4, 1.0), (0, 1, 2.0), (3, 3, 1.0)])
    A = inst.routes
    H = 16
    rows = [A.indices[A.indptr[f]:A.indptr[f + 1]].tolist() for f in range(3)]
    assert rows[0][:2] == [0, H + 4] and len(rows[0]) == 6
    assert rows[1] == [0, H + 1]
    assert rows[2] == [3, H + 3]
    assert inst.load[0, 0] == 3.0  # host 0's uplink carries both of its flows


def test_ecmp_is_a_seeded_hash_of_the_flow():
    ft = FatTree(8)
    rng = np.random.default_rng(0)
    n = 4000
    src = rng.integers(0, ft.num_hosts, n)
    dst = (src + ft.num_hosts // 2) % ft.num_hosts  # all in another pod: 16 paths each
    ids = [f"c{i}" for i in range(40)]
    ptr = np.arange(0, n + 1, 100)
    a = Network(ft, seed=1).routes(src, dst, ids=ids, ptr=ptr)
    b = Network(ft, seed=1).routes(src, dst, ids=ids, ptr=ptr)
    c = Network(ft, seed=2).routes(src, dst, ids=ids, ptr=ptr)
    assert (a != b).nnz == 0
    assert (a != c).nnz > 0
    # the core link each flow takes (its 3rd link) spreads over all 16 choices evenly
    core = a.indices.reshape(n, 6)[:, 4]  # sorted: host up, host down, edge-agg up, ... core down
    counts = np.bincount(np.unique(core, return_inverse=True)[1])
    assert counts.size > 16
    h = flow_hash(ids, ptr, src, dst, 1)
    assert np.bincount((h % np.uint64(16)).astype(np.int64), minlength=16).min() > n / 16 * 0.8


def test_ecmp_choice_survives_a_subset():
    net = Network(FatTree(4), seed=5)
    rng = np.random.default_rng(1)
    coflows = tuple(Coflow(f"c{k}", rng.integers(0, 16, 6), rng.integers(0, 16, 6), np.ones(6))
                    for k in range(5))
    inst = Instance(net, coflows)
    sub = inst.subset([3, 1])
    assert (sub.routes[0:6] != inst.routes[18:24]).nnz == 0
    assert (sub.routes[6:12] != inst.routes[6:12]).nnz == 0


def test_network_pickles_and_compares():
    paths = {"a": (("h0", "leaf0", "h1"),)}
    for net in (Network(FatTree(4), seed=2), Network(SpineLeaf(2, 2, 2), "spray"),
                Network(SpineLeaf(2, 2, 2), "given", paths=paths)):
        back = pickle.loads(pickle.dumps(net))
        assert back == net and hash(back) == hash(net)
    assert Network(FatTree(4), seed=2) != Network(FatTree(4), seed=3)
    assert Network(FatTree(4)) != Network(FatTree(4, link_rate=2.0))
    inst = _inst(Network(FatTree(4), seed=2), [(0, 9, 1.0)])
    back = pickle.loads(pickle.dumps(inst))
    assert back == inst and (back.routes != inst.routes).nnz == 0
    assert not back.routes.data.flags.writeable


@pytest.mark.parametrize(("net", "flows", "match"), [
    (Network(FatTree(4)), [(0, 16, 1.0)], "egress port 16, but the fabric has 16 ports"),
    (Network(SpineLeaf(2, 2, 2), "given", paths={"a": (("h0", "leaf0", "h1"),)}), [(0, 2, 1.0)],
     "goes from 'h0' to 'h1', but the flow goes from host 0"),
    (Network(SpineLeaf(2, 2, 2), "given", paths={"b": (("h0", "leaf0", "h1"),)}), [(0, 1, 1.0)],
     "no paths for coflow 'a'"),
    (Network(SpineLeaf(2, 2, 2), "given", paths={"a": ()}), [(0, 1, 1.0)],
     "has 1 flow but 0 given paths"),
])
def test_bad_routes_are_located(net, flows, match):
    with pytest.raises(InstanceError, match=match):
        _inst(net, flows)


def test_spray_counts_entries_with_the_widest_path_of_any_flow(monkeypatch):
    # the first flow (h0 -> h0) has a path of 2 links, the second (h0 -> h2) one of 3: the
    # padded enumeration holds 2 paths x 3 links; with a limit of 5 it is refused
    from coflowopt.fabric import GraphTopology
    from coflowopt.fabric import network as network_module

    topo = GraphTopology(("h0", "h1", "h2", "s", "t"), ("h0", "h1", "h2"),
                         (("h0", "s", 1.0), ("h1", "s", 1.0), ("h2", "t", 1.0), ("s", "t", 1.0)),
                         directed=False)
    net = Network(topo, "spray")
    assert net.routes([0, 0], [0, 2]).nnz == 5
    monkeypatch.setattr(network_module, "MAX_SPRAY_ENTRIES", 5)
    with pytest.raises(InstanceError, match="would enumerate 6 "):
        net.routes([0, 0], [0, 2])


def test_bad_networks():
    with pytest.raises(InstanceError, match="unknown routing 'free'"):
        Network(FatTree(4), "free")
    with pytest.raises(InstanceError, match="needs the paths"):
        Network(FatTree(4), "given")
    with pytest.raises(InstanceError, match="node 'x', which the fat-tree fabric does not have"):
        Network(FatTree(4), "given", paths={"a": (("h0", "x"),)})
    with pytest.raises(InstanceError, match="goes from 'h0' to 'spine0', which no link joins"):
        Network(SpineLeaf(2, 2, 2), "given", paths={"a": (("h0", "spine0", "h1"),)})
    # hosts do not forward; a path visits no node twice (though it crosses no link twice)
    with pytest.raises(InstanceError, match="passes through host 'h1'") as err:
        Network(FatTree(4), "given", paths={"a": (("h0", "edge0", "h1", "edge0", "agg0", "edge1",
                                                   "h2"),)})
    assert err.value.field == "paths.a[0][2]"
    with pytest.raises(InstanceError, match=r"visits node 'edge0' twice \(at 1 and 5\)") as err:
        Network(FatTree(4), "given", paths={"a": (("h0", "edge0", "agg0", "edge1", "agg1", "edge0",
                                                   "agg1", "edge1", "h2"),)})
    assert err.value.field == "paths.a[0][5]"
    # a flow from a host to itself: the host at both ends
    assert _inst(Network(FatTree(4), "given", paths={"a": (("h0", "edge0", "h0"),)}),
                 [(0, 0, 1.0)]).routes.nnz == 2
    with pytest.raises(InstanceError, match="paths go with routing 'given'"):
        Network(FatTree(4), "ecmp", paths={"a": ()})
    with pytest.raises(InstanceError, match="limit"):
        Network(FatTree(24), "spray").routes(np.zeros(100_000, int), np.full(100_000, 3455))


def test_the_fabric_api_names_a_bad_argument():
    from coflowopt.fabric import GraphTopology, flow_hash, place, spread

    inst = Instance(Fabric.uniform(4, 1.0), (Coflow("a", [0, 1], [2, 3], [1.0, 1.0]),))
    ft = FatTree(4)
    net = Network(ft, "ecmp", 0)
    bad = [
        (lambda: place(inst, "fat-tree", None), "parameters must be a mapping"),
        (lambda: place(inst, "graph", {}, graph="x.json"), "needs its graph"),
        (lambda: place(inst, "graph", {}, graph=ft), "needs its graph"),
        (lambda: Network(ft, "given", 0, {"a": [5]}), "must be a list of paths"),
        (lambda: net.routes([0, 1], [2], ids=["a"], ptr=[0, 1]), "one entry per flow"),
        (lambda: net.routes([0], [2], ids=["a"], ptr=[0, 0, 1]), "ptr must be 2"),
        (lambda: net.routes([0, 1], [2, 3], ids=["a"], ptr=[0, 1]), "from 0 to the 2 flows"),
        (lambda: net.routes([0], [2], ids=[5], ptr=[0, 1]), "ids must be a sequence"),
        (lambda: net.routes([0.5], [2], ids=["a"], ptr=[0, 1]), "whole numbers"),
        (lambda: flow_hash(["a"], [0, 2], [0], [1], 0), "from 0 to the 1 flows"),
        (lambda: flow_hash(["a"], [0, 1], [0], [1], "s"), "routing seed must be an integer"),
        # ECMP's hash takes 64 bits: a larger seed would give another seed's routes
        (lambda: flow_hash(["a"], [0, 1], [0], [1], 2**64 + 1), "from 0 to 2\\*\\*64 - 1"),
        (lambda: Network(ft, "ecmp", 2**64), "from 0 to 2\\*\\*64 - 1"),
        (lambda: flow_hash(["a"], [0, 1], [0], [1, 2], 0), "one host each per flow"),
        (lambda: spread(inst, 8, -1), "seed must be an integer >= 0"),
        (lambda: spread(inst, "8", 0), "num_hosts must be an integer >= 0"),
        (lambda: place(None, "spine-leaf", {}), "must be an Instance"),
        (lambda: GraphTopology(None, ("a",), ()), "nodes must be a list"),
        (lambda: GraphTopology(("a", "b"), 3, ()), "hosts must be a list"),
    ]
    for call, message in bad:
        with pytest.raises(InstanceError, match=message):
            call()
    # a NumPy integer seed is a seed (it raised OverflowError inside)
    assert flow_hash(["a"], [0, 1], [0], [1], np.int64(3)) == flow_hash(["a"], [0, 1], [0], [1], 3)
    from coflowopt import InputError
    from coflowopt.fabric import parse_topology
    from coflowopt.fabric.background import coflows_to_background, load_cdf, parse_background

    for call, message in [
        (lambda: parse_topology(None), "--topology: a text such as"),
        (lambda: parse_background(None, np.ones(1), ["l"]), "--background: a text such as"),
        (lambda: load_cdf(None), "a size distribution is a name"),
        (lambda: coflows_to_background(None, 0.1), "the instance must be an Instance"),
    ]:
        with pytest.raises(InputError, match=message):
            call()
    graph = GraphTopology(("h0", "h1", "s"), ("h0", "h1"), (("h0", "s", 1.0), ("s", "h1", 1.0)),
                          directed=False)
    with pytest.raises(InstanceError, match="unknown parameter 'k' for topology 'graph'"):
        place(inst.subset([0]).replace(coflows=(Coflow("a", [0], [1], [1.0]),)), "graph",
              {"k": 4}, graph=graph)
    with pytest.raises(InstanceError, match="directed must be true or false"):
        GraphTopology(("h0", "s"), ("h0",), (("h0", "s", 1.0),), directed="no")


@pytest.mark.parametrize("spec", [{"host_rate": 0}, {"host_rate": 0.0}, {"host_rate": -0.0}])
@pytest.mark.parametrize("topology", ["spine-leaf", "fat-tree"])
def test_a_zero_host_rate_is_refused_not_replaced(topology, spec):
    from coflowopt.fabric import place

    inst = Instance(Fabric.uniform(4, 1.0), (Coflow("a", [0, 1], [2, 3], [1.0, 1.0]),))
    params = {**spec, **({"k": 4} if topology == "fat-tree" else {})}
    with pytest.raises(InstanceError, match="host link capacity must be finite and > 0"):
        place(inst, topology, params)


def test_a_poisson_background_on_a_graph_missing_a_pair_says_so(tmp_path):
    # the instance's own flows are joined; the background's random pairs need h1 -> h0
    from coflowopt import CoflowoptError, InputError
    from coflowopt.fabric import GraphTopology, place
    from coflowopt.fabric.background import Background, PoissonFlows, load_cdf

    graph = GraphTopology(("h0", "h1", "s", "t"), ("h0", "h1"),
                          (("h0", "s", 1.0), ("s", "t", 1.0), ("t", "h1", 1.0),
                           ("h1", "t", 1.0), ("s", "h0", 1.0)), directed=True)
    inst = place(Instance(Fabric.uniform(2, 1.0), (Coflow("a", [0], [1], [1.0]),)), "graph", {},
                 graph=graph)
    assert simulate(inst, "fair").cct[0] > 0
    with pytest.raises(InputError, match=r"Poisson flows run between any two hosts.*no path joins "
                                         r"host 'h1' to host 'h0'"):
        simulate(inst, "fair",
                 background=Background(poisson=PoissonFlows(0.1, load_cdf("web-search"), seed=1)))
    with pytest.raises(CoflowoptError, match=r"wrap it: Background\(poisson=...\)"):
        simulate(inst, "fair", background=PoissonFlows(0.1, load_cdf("web-search"), seed=1))


def test_a_seed_given_to_another_routing_is_kept_as_0(tmp_path):
    # Network(topo, "spray", seed=5) kept its seed, which spray does not use: two
    # instances with the same routes compared unequal, and so did a file read back
    # (a file writes no seed for spray)
    import coflowopt as co

    topo = SpineLeaf(2, 2, 1, 1.0, 1.0)
    flows = (Coflow.from_flows("a", [(0, 1, 1.0)]),)
    seeded = Instance(Network(topo, "spray", seed=5), flows)
    assert seeded.fabric.seed == 0 and seeded == Instance(Network(topo, "spray"), flows)
    co.write(seeded, tmp_path / "s.json")
    assert co.read(tmp_path / "s.json") == seeded
    assert Network(topo, "ecmp", seed=5).seed == 5
    with pytest.raises(InstanceError, match="seed"):  # still checked
        Network(topo, "spray", seed=-1)
