"""Topologies: counts, the link numbering, and the closed-form paths against networkx."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from coflowopt import InstanceError
from coflowopt.fabric import FatTree, GraphTopology, SpineLeaf


def _as_graph(topo):
    """The same topology as a GraphTopology: its paths come from networkx."""
    names = [topo.node_name(v) for v in range(topo.num_nodes)]
    links = tuple((names[int(t)], names[int(h)], float(c))
                  for t, h, c in zip(topo.tail, topo.head, topo.capacity, strict=True))
    return GraphTopology(tuple(names), tuple(names[: topo.num_hosts]), links)


def _path_sets(topo, s, d):
    n = int(topo.num_paths(np.array([s]), np.array([d]))[0])
    rows = topo.path_links(np.full(n, s), np.full(n, d), np.arange(n))
    return {tuple(int(x) for x in r if x >= 0) for r in rows}, n


def _named(topo, paths):
    return {tuple((topo.node_name(int(topo.tail[x])), topo.node_name(int(topo.head[x]))) for x in p)
            for p in paths}


@pytest.mark.parametrize("topo", [FatTree(2), FatTree(4), FatTree(6), SpineLeaf(3, 2, 2),
                                  SpineLeaf(4, 3, 1), SpineLeaf(1, 2, 3)],
                         ids=lambda t: f"{t.kind}-{t.params()}")
def test_closed_form_paths_equal_networkx_shortest_paths(topo):
    graph = _as_graph(topo)
    g = nx.DiGraph(list(zip(topo.tail.tolist(), topo.head.tolist(), strict=True)))
    H = topo.num_hosts
    for s, d in itertools.product(range(H), repeat=2):
        mine, n = _path_sets(topo, s, d)
        theirs, m = _path_sets(graph, s, d)
        assert n == m == len(mine)  # distinct paths, as many as networkx finds
        assert _named(topo, mine) == _named(graph, theirs)
        if s != d:
            assert len(next(iter(mine))) == nx.shortest_path_length(g, s, d)
            assert n == len(list(nx.all_shortest_paths(g, s, d)))


def test_fat_tree_counts_for_k_24():
    ft = FatTree(24)
    assert ft.num_hosts == 3456
    assert ft.num_switches == 720
    assert ft.num_links == 2 * 3456 + 24**3  # host links both ways, then 4 k^3/4 switch links
    d = ft.describe()
    assert d["paths"] == {"same edge": 1, "same pod": 12, "other pod": 144}
    assert d["path_hops"] == {"same edge": 2, "same pod": 4, "other pod": 6}


def test_host_links_come_first():
    for topo in (FatTree(4), SpineLeaf(3, 2, 2)):
        H = topo.num_hosts
        assert np.array_equal(topo.tail[:H], np.arange(H))
        assert np.array_equal(topo.head[H:2 * H], np.arange(H))
        assert np.all(topo.tail[2 * H:] >= H) and np.all(topo.head[2 * H:] >= H)


def test_spine_leaf_oversubscription():
    sl = SpineLeaf.oversubscribed(150, 4, hosts_per_leaf=1, host_rate=1.25e8, oversub=10)
    assert sl.spine_rate == pytest.approx(1.25e8 / 40)
    assert sl.oversubscription == pytest.approx(10)
    assert SpineLeaf(3, 2, 4, 1.0, 1.0).oversubscription == 2.0
    assert sl.num_switches == 154 and sl.num_links == 300 + 2 * 600


@pytest.mark.parametrize(("make", "match"), [
    (lambda: FatTree(3), "must be even"),
    (lambda: FatTree(0), "integer >= 2"),
    (lambda: SpineLeaf(2, 0), "spines must be an integer >= 1"),
    (lambda: SpineLeaf(2, 2, 1, 0.0), "host link capacity must be finite and > 0"),
    (lambda: SpineLeaf(2, 2, 1, 1.0, -1), "leaf-spine link capacity must be finite and > 0"),
    (lambda: GraphTopology(("a", "s"), ("b",), (("a", "s", 1.0),)), "host 'b' is not a node"),
    (lambda: GraphTopology(("a", "s"), ("a",), (("a", "s", 0.0),)), "must be finite and > 0"),
    (lambda: GraphTopology(("a", "s"), ("a",), (("a", "s", 1.0),)), "host 'a' has 0 links into it"),
    (lambda: GraphTopology(("a", "b"), ("a", "b"), (("a", "b", 1.0),), False), "joins two hosts"),
    (lambda: GraphTopology(("a", "s"), ("a",), (("a", "x", 1.0),)), "node 'x', which is not in"),
    (lambda: GraphTopology(("a", "s"), ("a",), (("a", "s", 5e-324),)),
     r"must be at least 2.23e-308, the smallest normal float, got 5e-324"),
    # refused before anything is built (a k = 100,000 fat-tree would take petabytes)
    (lambda: FatTree(100_000), "k = 100,000 would have 1,500,000,000,000,000 links; coflowopt builds "
     "fabrics of at most 10,000,000"),
    (lambda: SpineLeaf(10**8, 1), "100,000,000 leaves x 1 spine x 1 host would have 400,000,000 links"),
    # counts beyond floating point: refused by their size, and named briefly
    (lambda: SpineLeaf.oversubscribed(2, 10**400), r"the number of spines of 100000000000...000000 "
     r"\(401 digits\) is far beyond the 10,000,000 links coflowopt builds"),
    (lambda: FatTree(4, 10**400), r"host link capacity must be finite and > 0, got 100000000000"),
])
def test_bad_topologies_name_the_value(make, match):
    with pytest.raises(InstanceError, match=match):
        make()


def test_graph_disconnected_pair_is_an_error():
    g = GraphTopology(("a", "b", "s", "t"), ("a", "b"),
                      (("a", "s", 1.0), ("s", "a", 1.0), ("b", "t", 1.0), ("t", "b", 1.0)))
    with pytest.raises(InstanceError, match="no path joins host 'a' to host 'b'"):
        g.num_paths(np.array([0]), np.array([1]))
