"""Topologies: directed links with capacities between nodes, and the equal-cost paths between hosts.

A topology numbers its nodes with the hosts first (host ``h`` is node ``h`` and
the instance's port ``h``) and its links with the hosts' uplinks first (link
``h``: host ``h`` to the switch it hangs from), then the hosts' downlinks
(link ``H + h``), then the links between switches. So everything that reads only
the host links (port loads, the port and Sincronia bounds) reads the same
links on the big switch and on a network.

Each topology answers two questions, vectorised over flows:
:meth:`Topology.num_paths` (how many equal-cost shortest paths join a pair of
hosts) and :meth:`Topology.path_links` (the links of the ``c``-th of them).
Spine-leaf and fat-tree answer in closed form; a graph read from a file answers
with networkx's shortest paths (hop count), computed once per host pair.

A flow from a host to itself crosses the host's uplink and downlink (through
the switch it hangs from), as on the big switch.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._frozen import Frozen
from .._frozen import readonly as _readonly
from .._text import plural, value_text
from ..errors import InstanceError
from ..instance import TINY, _positive_rule

__all__ = ["FatTree", "GraphTopology", "SpineLeaf", "Topology"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _positive(value: Any, what: str, field_name: str) -> float:
    try:
        v = float(value)
    except OverflowError:  # an integer beyond floating point
        v = math.inf
    except (TypeError, ValueError):
        raise InstanceError(f"{what} must be a number, got {value_text(value)}",
                            field=field_name) from None
    if isinstance(value, bool) or not (np.isfinite(v) and v >= TINY):
        raise InstanceError(f"{_positive_rule(v, what)}, got {value_text(value)}", field=field_name)
    return v


MAX_LINKS = 10_000_000
"""Most links a spine-leaf fabric or a fat-tree may have (each link's arrays alone take
about 24 bytes; the k = 24 fat-tree has 20,736 links): a larger one is refused before it is
built, not after minutes and gigabytes."""


def _check_size(links: int, what: str, field_name: str) -> None:
    if links > MAX_LINKS:
        raise InstanceError(f"{what} would have {links:,} links; coflowopt builds fabrics of at most "
                            f"{MAX_LINKS:,}", field=field_name)


def _count(value: Any, what: str, field_name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise InstanceError(f"{what} must be an integer >= {minimum}, got {value_text(value)}",
                            field=field_name)
    if int(value) > MAX_LINKS**2:  # (each counted part has a link of its own at least)
        raise InstanceError(f"{what} of {value_text(int(value))} is far beyond the "
                            f"{MAX_LINKS:,} links coflowopt builds", field=field_name)
    return int(value)


class Topology(Frozen):
    """Base of the topologies: nodes, links, capacities and equal-cost paths."""

    __slots__ = ()

    num_hosts: int
    tail: IntArray
    head: IntArray
    capacity: FloatArray

    @property
    def kind(self) -> str:
        """The topology's name as ``--topology`` and the JSON format spell it."""
        raise NotImplementedError

    @property
    def num_links(self) -> int:
        return int(self.capacity.size)

    @property
    def num_nodes(self) -> int:
        return self.num_hosts + self.num_switches

    @property
    def num_switches(self) -> int:
        raise NotImplementedError

    def node_name(self, node: int) -> str:
        """A node's name: ``h3`` for host 3, the switch's name otherwise."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild the topology (the JSON ``fabric.topology`` object)."""
        raise NotImplementedError

    def num_paths(self, src: IntArray, dst: IntArray) -> IntArray:
        """Number of equal-cost shortest paths from each ``src`` host to its ``dst`` host."""
        raise NotImplementedError

    def path_links(self, src: IntArray, dst: IntArray, choice: IntArray) -> IntArray:
        """Links of path ``choice`` (``0 <= choice < num_paths``) of each pair, shape ``(n, m)``,
        padded with ``-1`` on the right (a path's links in order from ``src`` to ``dst``)."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """Facts ``info`` shows: counts, capacities, oversubscription, path lengths."""
        H = self.num_hosts
        cap = self.capacity
        inner = cap[2 * H:]
        return {
            "topology": self.kind,
            "params": self.params(),
            "hosts": H,
            "switches": self.num_switches,
            "links": self.num_links,
            "host_capacity": {"min": float(cap[:2 * H].min()), "max": float(cap[:2 * H].max())},
            "switch_capacity": ({"min": float(inner.min()), "max": float(inner.max())}
                                if inner.size else None),
        }

    def _key(self) -> tuple[Any, ...]:
        """What the hash reads (the parameters; a subclass whose parameters hold lists
        gives a hashable part of them)."""
        return tuple(self.params().items())

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.params() == other.params()

    def __hash__(self) -> int:
        return hash((self.kind, self._key()))

    def check_hosts(self, src: IntArray, dst: IntArray) -> None:
        """Every endpoint is a host."""
        for name, arr in (("ingress", src), ("egress", dst)):
            bad = np.flatnonzero((arr < 0) | (arr >= self.num_hosts))
            if bad.size:
                f = int(bad[0])
                raise InstanceError(
                    f"flow {f} uses {name} host {int(arr[f])}, but the {self.kind} fabric has "
                    f"{plural(self.num_hosts, 'host')}", flow=f, field=name)


# --------------------------------------------------------------------------- spine-leaf


@dataclass(frozen=True, slots=True, eq=False)
class SpineLeaf(Topology):
    """Two-tier leaf-spine: every leaf joins every spine by one link each way.

    Parameters
    ----------
    leaves, spines, hosts_per_leaf
        Counts; host ``h`` hangs from leaf ``h // hosts_per_leaf``.
    host_rate
        Capacity of each host's uplink and downlink.
    spine_rate
        Capacity of each leaf-spine link (each direction).

    The oversubscription ratio is a leaf's host capacity over its spine capacity,
    ``hosts_per_leaf * host_rate / (spines * spine_rate)``.
    Links: host uplinks ``0..H-1``, host downlinks ``H..2H-1``, leaf ``a`` to
    spine ``s`` at ``2H + a*S + s``, spine ``s`` to leaf ``b`` at
    ``2H + L*S + b*S + s``.
    """

    leaves: int
    spines: int
    hosts_per_leaf: int = 1
    host_rate: float = 1.0
    spine_rate: float = 1.0
    num_hosts: int = field(init=False, repr=False)
    tail: IntArray = field(init=False, repr=False)
    head: IntArray = field(init=False, repr=False)
    capacity: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        L = _count(self.leaves, "the number of leaves", "leaves")
        S = _count(self.spines, "the number of spines", "spines")
        n = _count(self.hosts_per_leaf, "hosts per leaf", "hosts_per_leaf")
        hr = _positive(self.host_rate, "the host link capacity", "host_rate")
        sr = _positive(self.spine_rate, "the leaf-spine link capacity", "spine_rate")
        for k, v in (("leaves", L), ("spines", S), ("hosts_per_leaf", n),
                     ("host_rate", hr), ("spine_rate", sr)):
            set_(self, k, v)
        H = L * n
        shape = " x ".join(plural(c, w, m, thousands=True) for c, w, m in (
            (L, "leaf", "leaves"), (S, "spine", None), (n, "host", None)))
        _check_size(2 * H + 2 * L * S, f"a spine-leaf fabric of {shape}", "leaves")
        set_(self, "num_hosts", H)
        hosts = np.arange(H, dtype=np.int64)
        leaf_node = H + hosts // n
        a = np.repeat(np.arange(L, dtype=np.int64), S)
        s = np.tile(np.arange(S, dtype=np.int64), L)
        spine_node = H + L + s
        set_(self, "tail", _readonly(np.concatenate([hosts, leaf_node, H + a, spine_node])))
        set_(self, "head", _readonly(np.concatenate([leaf_node, hosts, spine_node, H + a])))
        set_(self, "capacity", _readonly(np.concatenate(
            [np.full(2 * H, hr), np.full(2 * L * S, sr)])))

    @classmethod
    def oversubscribed(cls, leaves: int, spines: int, *, hosts_per_leaf: int = 1,
                       host_rate: float = 1.0, oversub: float = 1.0) -> SpineLeaf:
        """A spine-leaf fabric whose leaf uplinks carry ``1 / oversub`` of the leaf's host capacity,
        split equally over the spines."""
        ratio = _positive(oversub, "the oversubscription ratio", "oversub")
        rate = _positive(host_rate, "the host link capacity", "host_rate")
        spines = _count(spines, "the number of spines", "spines")
        per = _count(hosts_per_leaf, "hosts per leaf", "hosts_per_leaf")
        return cls(leaves, spines, per, rate, per * rate / (ratio * spines))

    @property
    def kind(self) -> str:
        return "spine-leaf"

    @property
    def num_switches(self) -> int:
        return self.leaves + self.spines

    @property
    def oversubscription(self) -> float:
        """A leaf's host capacity over its spine capacity."""
        return self.hosts_per_leaf * self.host_rate / (self.spines * self.spine_rate)

    def node_name(self, node: int) -> str:
        H, L = self.num_hosts, self.leaves
        if node < H:
            return f"h{node}"
        return f"leaf{node - H}" if node < H + L else f"spine{node - H - L}"

    def params(self) -> dict[str, Any]:
        return {"leaves": self.leaves, "spines": self.spines, "hosts_per_leaf": self.hosts_per_leaf,
                "host_rate": self.host_rate, "spine_rate": self.spine_rate}

    def num_paths(self, src: IntArray, dst: IntArray) -> IntArray:
        n = self.hosts_per_leaf
        return np.where(src // n == dst // n, 1, self.spines).astype(np.int64)

    def path_links(self, src: IntArray, dst: IntArray, choice: IntArray) -> IntArray:
        H, L, S, n = self.num_hosts, self.leaves, self.spines, self.hosts_per_leaf
        a, b = src // n, dst // n
        out = np.full((src.size, 4), -1, dtype=np.int64)
        out[:, 0] = src
        local = a == b
        out[local, 1] = H + dst[local]
        far = ~local
        out[far, 1] = 2 * H + a[far] * S + choice[far]
        out[far, 2] = 2 * H + L * S + b[far] * S + choice[far]
        out[far, 3] = H + dst[far]
        return out

    def describe(self) -> dict[str, Any]:
        out = Topology.describe(self)
        out["oversubscription"] = self.oversubscription
        out["path_hops"] = {"same leaf": 2, "other leaf": 4} if self.leaves > 1 else {"same leaf": 2}
        out["paths"] = {"same leaf": 1, "other leaf": self.spines} if self.leaves > 1 else {"same leaf": 1}
        return out


# --------------------------------------------------------------------------- fat-tree


@dataclass(frozen=True, slots=True, eq=False)
class FatTree(Topology):
    """The k-ary three-tier fat-tree (Al-Fares et al.): ``k`` pods of ``k/2`` edge and
    ``k/2`` aggregation switches, ``(k/2)^2`` core switches, ``k^3/4`` hosts.

    Host ``h`` hangs from edge switch ``E = h // (k/2)`` of pod ``h // (k/2)^2``;
    aggregation switch ``a`` of each pod joins the cores ``a*(k/2) .. a*(k/2)+k/2-1``.
    Links: host uplinks, host downlinks, then edge ``E`` to its pod's aggregation
    ``a`` (``E*(k/2) + a``), aggregation ``a`` to edge ``E`` (same offset), pod ``p``'s
    aggregation ``a`` to its core ``c`` (``(p*(k/2) + a)*(k/2) + c``), and back, each
    block ``k^3/4`` links after the previous one.

    Parameters
    ----------
    k
        Even switch radix, at least 2.
    host_rate
        Capacity of each host's uplink and downlink.
    link_rate
        Capacity of every link between switches (each direction); ``None``: ``host_rate``
        (no oversubscription, the fat-tree's design point).
    """

    k: int
    host_rate: float = 1.0
    link_rate: float | None = None
    num_hosts: int = field(init=False, repr=False)
    tail: IntArray = field(init=False, repr=False)
    head: IntArray = field(init=False, repr=False)
    capacity: FloatArray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        k = _count(self.k, "the fat-tree's k", "k", 2)
        if k % 2:
            raise InstanceError(f"the fat-tree's k must be even, got {k}", field="k")
        hr = _positive(self.host_rate, "the host link capacity", "host_rate")
        lr = hr if self.link_rate is None else _positive(self.link_rate, "the switch link capacity",
                                                         "link_rate")
        set_(self, "k", k)
        set_(self, "host_rate", hr)
        set_(self, "link_rate", lr)
        h = k // 2
        H = k * h * h
        _check_size(6 * H, f"the fat-tree with k = {k:,}", "k")
        set_(self, "num_hosts", H)
        hosts = np.arange(H, dtype=np.int64)
        n_edge = k * h
        edge0, agg0, core0 = H, H + n_edge, H + 2 * n_edge
        edge_of_host = edge0 + hosts // h
        # edge E <-> aggregation a of its pod, E*h + a
        E = np.repeat(np.arange(n_edge, dtype=np.int64), h)
        a = np.tile(np.arange(h, dtype=np.int64), n_edge)
        agg_node = agg0 + (E // h) * h + a
        # pod p's aggregation a <-> core a*h + c, (p*h + a)*h + c
        pa = np.repeat(np.arange(n_edge, dtype=np.int64), h)  # p*h + a
        c = np.tile(np.arange(h, dtype=np.int64), n_edge)
        core_node = core0 + (pa % h) * h + c
        set_(self, "tail", _readonly(np.concatenate(
            [hosts, edge_of_host, edge0 + E, agg_node, agg0 + pa, core_node])))
        set_(self, "head", _readonly(np.concatenate(
            [edge_of_host, hosts, agg_node, edge0 + E, core_node, agg0 + pa])))
        set_(self, "capacity", _readonly(np.concatenate([np.full(2 * H, hr), np.full(4 * H, lr)])))

    @property
    def kind(self) -> str:
        return "fat-tree"

    @property
    def num_switches(self) -> int:
        return 5 * self.k * self.k // 4

    def node_name(self, node: int) -> str:
        H, h = self.num_hosts, self.k // 2
        if node < H:
            return f"h{node}"
        i = node - H
        n_edge = self.k * h
        if i < n_edge:
            return f"edge{i}"
        if i < 2 * n_edge:
            return f"agg{i - n_edge}"
        return f"core{i - 2 * n_edge}"

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "host_rate": self.host_rate, "link_rate": self.link_rate}

    def num_paths(self, src: IntArray, dst: IntArray) -> IntArray:
        h = self.k // 2
        same_edge = src // h == dst // h
        same_pod = src // (h * h) == dst // (h * h)
        return np.where(same_edge, 1, np.where(same_pod, h, h * h)).astype(np.int64)

    def path_links(self, src: IntArray, dst: IntArray, choice: IntArray) -> IntArray:
        H, h = self.num_hosts, self.k // 2
        es, ed = src // h, dst // h
        ps, pd = src // (h * h), dst // (h * h)
        out = np.full((src.size, 6), -1, dtype=np.int64)
        out[:, 0] = src
        local = es == ed
        out[local, 1] = H + dst[local]
        pod = ~local & (ps == pd)
        far = ps != pd
        # in-pod: the aggregation switch is the choice; across pods: aggregation a = choice // h,
        # core port c = choice % h
        a = np.where(pod, choice, choice // h)
        c = choice % h
        up, down, aup, cdown = 2 * H, 3 * H, 4 * H, 5 * H
        m = pod | far
        out[m, 1] = up + es[m] * h + a[m]
        out[pod, 2] = down + ed[pod] * h + a[pod]
        out[pod, 3] = H + dst[pod]
        out[far, 2] = aup + (ps[far] * h + a[far]) * h + c[far]
        out[far, 3] = cdown + (pd[far] * h + a[far]) * h + c[far]
        out[far, 4] = down + ed[far] * h + a[far]
        out[far, 5] = H + dst[far]
        return out

    def describe(self) -> dict[str, Any]:
        out = Topology.describe(self)
        h = self.k // 2
        out["oversubscription"] = float(self.host_rate / self.link_rate)  # type: ignore[operator]
        out["path_hops"] = {"same edge": 2, "same pod": 4, "other pod": 6}
        out["paths"] = {"same edge": 1, "same pod": h, "other pod": h * h}
        return out


# --------------------------------------------------------------------------- any graph


@dataclass(frozen=True, slots=True, eq=False)
class GraphTopology(Topology):
    """Any graph: named nodes, directed links with capacities, the hosts among the nodes.

    Each host hangs from one switch by one link each way (its NIC); the host order
    gives the ports (host ``i`` of ``hosts`` is port ``i``). An undirected link is two
    directed links of the same capacity. Equal-cost paths are the shortest paths in
    hops (networkx), found once per host pair and kept in order of their node lists (as
    node indices: the hosts first, then the other nodes in the order ``nodes`` lists
    them), so that a path's index (what ECMP picks) does not depend on networkx's
    traversal.

    Parameters
    ----------
    nodes
        Node names (hosts and switches).
    hosts
        The hosts, by name, in port order.
    links
        ``(tail, head, capacity)`` per directed link, by node name.
    """

    nodes: tuple[str, ...]
    hosts: tuple[str, ...]
    links: tuple[tuple[str, str, float], ...]
    directed: bool = True
    num_hosts: int = field(init=False, repr=False)
    tail: IntArray = field(init=False, repr=False)
    head: IntArray = field(init=False, repr=False)
    capacity: FloatArray = field(init=False, repr=False)
    _names: tuple[str, ...] = field(init=False, repr=False)
    _link_of: Mapping[tuple[int, int], int] = field(init=False, repr=False)
    _paths_of: dict[tuple[int, int], list[tuple[int, ...]]] = field(init=False, repr=False)
    _nx: list[Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.directed, (bool, np.bool_)):
            raise InstanceError(f"directed must be true or false, got {self.directed!r:.60}",
                                field="directed")
        for given_name in ("nodes", "hosts", "links"):
            value = getattr(self, given_name)
            if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
                raise InstanceError(f"{given_name} must be a list, got {value!r:.60}",
                                    field=given_name)
        nodes = tuple(str(n) for n in self.nodes)
        seen: dict[str, int] = {}
        for i, name in enumerate(nodes):
            if name in seen:
                raise InstanceError(f"node '{name}' is listed twice", field=f"nodes[{i}]")
            seen[name] = i
        hosts = tuple(str(h) for h in self.hosts)
        if not hosts:
            raise InstanceError("a graph fabric needs at least one host", field="hosts")
        for i, name in enumerate(hosts):
            if name not in seen:
                raise InstanceError(f"host '{name}' is not a node of the graph", field=f"hosts[{i}]")
        if len(set(hosts)) != len(hosts):
            dup = next(h for h in hosts if hosts.count(h) > 1)
            raise InstanceError(f"host '{dup}' is listed twice", field="hosts")
        host_set = set(hosts)
        names = (*hosts, *(n for n in nodes if n not in host_set))
        index = {n: i for i, n in enumerate(names)}
        H = len(hosts)
        given = tuple(tuple(r) for r in self.links)
        links: list[tuple[int, int, float]] = []
        origin: list[int] = []  # the row of ``links`` each directed link comes from
        for i, row in enumerate(given):
            if len(row) != 3:
                raise InstanceError(f"link {i} must be (tail, head, capacity), got {row!r:.60}",
                                    field=f"links[{i}]")
            u, v, c = str(row[0]), str(row[1]), row[2]
            for end in (u, v):
                if end not in index:
                    raise InstanceError(f"link {i} names node '{end}', which is not in the graph",
                                        field=f"links[{i}]")
            cap = _positive(c, f"the capacity of link {i} ({u} -> {v})", f"links[{i}][2]")
            if u == v:
                raise InstanceError(f"link {i} joins node '{u}' to itself", field=f"links[{i}]")
            if index[u] < H and index[v] < H:
                raise InstanceError(f"link {i} joins two hosts ('{u}' and '{v}'); hosts hang from "
                                    "switches", field=f"links[{i}]")
            pairs = [(index[u], index[v])] + ([] if self.directed else [(index[v], index[u])])
            for a, b in pairs:
                links.append((a, b, cap))
                origin.append(i)
        up: dict[int, list[int]] = {h: [] for h in range(H)}
        down: dict[int, list[int]] = {h: [] for h in range(H)}
        for j, (a, b, _) in enumerate(links):
            if a < H:
                up[a].append(j)
            if b < H:
                down[b].append(j)
        order: list[int] = []
        for part, side in ((up, "out of"), (down, "into")):
            for h in range(H):
                if len(part[h]) != 1:
                    raise InstanceError(
                        f"host '{names[h]}' has {plural(len(part[h]), 'link')} {side} it; a host "
                        "hangs from one switch by one link each way", field=f"hosts[{h}]")
                order.append(part[h][0])
        for h in range(H):
            if links[up[h][0]][1] != links[down[h][0]][0]:
                raise InstanceError(f"host '{names[h]}' sends to one switch and receives from "
                                    "another; a host hangs from one switch", field=f"hosts[{h}]")
        used = set(order)
        perm = order + [j for j in range(len(links)) if j not in used]
        tail = np.array([links[j][0] for j in perm], dtype=np.int64)
        head = np.array([links[j][1] for j in perm], dtype=np.int64)
        link_of: dict[tuple[int, int], int] = {}
        for pos, j in enumerate(perm):
            key = (links[j][0], links[j][1])
            if key in link_of:
                raise InstanceError(f"two links from '{names[key[0]]}' to '{names[key[1]]}'; give "
                                    "one link with their summed capacity", field=f"links[{origin[j]}]")
            link_of[key] = pos
        set_(self, "nodes", nodes)
        set_(self, "hosts", hosts)
        set_(self, "links", given)
        set_(self, "directed", bool(self.directed))
        set_(self, "num_hosts", H)
        set_(self, "tail", _readonly(tail))
        set_(self, "head", _readonly(head))
        set_(self, "capacity", _readonly(np.array([links[j][2] for j in perm], dtype=np.float64)))
        set_(self, "_names", names)
        set_(self, "_link_of", link_of)
        set_(self, "_paths_of", {})
        set_(self, "_nx", [])

    @property
    def kind(self) -> str:
        return "graph"

    @property
    def num_switches(self) -> int:
        return len(self.nodes) - self.num_hosts

    def node_name(self, node: int) -> str:
        return self._names[node]

    def node_index(self, name: str) -> int | None:
        """The node with this name, ``None`` if there is none."""
        try:
            return self._names.index(name)
        except ValueError:
            return None

    def link_between(self, u: int, v: int) -> int | None:
        """The link from node ``u`` to node ``v``, ``None`` if there is none."""
        return self._link_of.get((u, v))

    def params(self) -> dict[str, Any]:
        return {"nodes": list(self.nodes), "hosts": list(self.hosts),
                "links": [list(x) for x in self.links], "directed": self.directed}

    def _paths(self, s: int, d: int) -> list[tuple[int, ...]]:
        """Equal-cost shortest paths from host ``s`` to host ``d`` as link tuples, sorted."""
        hit = self._paths_of.get((s, d))
        if hit is not None:
            return hit
        out: list[tuple[int, ...]]
        if s == d:
            out = [(s, self.num_hosts + s)]
        else:
            import networkx as nx

            if not self._nx:
                g = nx.DiGraph()
                g.add_nodes_from(range(len(self._names)))
                g.add_edges_from(self._link_of)
                self._nx.append(g)
            try:
                node_paths = sorted(nx.all_shortest_paths(self._nx[0], s, d))
            except nx.NetworkXNoPath:
                raise InstanceError(f"no path joins host '{self._names[s]}' to host "
                                    f"'{self._names[d]}'") from None
            # a host hangs from one switch, so no shortest path passes through one
            out = [tuple(self._link_of[(u, v)] for u, v in itertools.pairwise(p)) for p in node_paths]
        self._paths_of[(s, d)] = out
        return out

    def _pair_paths(self, src: IntArray, dst: IntArray) -> tuple[IntArray, list[list[tuple[int, ...]]]]:
        H = self.num_hosts
        keys, inv = np.unique(src * H + dst, return_inverse=True)
        paths = []
        for i, key in enumerate(keys.tolist()):
            s, d = divmod(int(key), H)
            try:
                paths.append(self._paths(s, d))
            except InstanceError as exc:
                f = int(np.flatnonzero(inv.reshape(-1) == i)[0])
                raise InstanceError(exc.message, flow=f, field="route") from None
        return inv.reshape(-1).astype(np.int64), paths

    def num_paths(self, src: IntArray, dst: IntArray) -> IntArray:
        inv, paths = self._pair_paths(src, dst)
        return np.array([len(p) for p in paths], dtype=np.int64)[inv]

    def path_links(self, src: IntArray, dst: IntArray, choice: IntArray) -> IntArray:
        inv, paths = self._pair_paths(src, dst)
        width = max((len(q) for p in paths for q in p), default=2)
        out = np.full((src.size, width), -1, dtype=np.int64)
        for f in range(src.size):
            q = paths[int(inv[f])][int(choice[f])]
            out[f, : len(q)] = q
        return out

    def _key(self) -> tuple[Any, ...]:
        return (self.nodes, self.hosts)
