"""A multi-hop fabric: a topology plus a routing, read through the same incidence as the big switch.

:class:`Network` offers what the data model reads of a fabric
(:class:`coflowopt.instance.Links`): per-link ``capacity``, the hosts' NIC
capacities ``ingress`` / ``egress`` (links ``0..H-1`` and ``H..2H-1``), and
:meth:`Network.routes`, the flows x links incidence. Routings:

``ecmp``
    One of the equal-cost shortest paths per flow, chosen by a hash of the
    flow's coflow id, its index within the coflow, its hosts and the routing
    seed (:func:`flow_hash`), and kept for the flow's life, as switches hash a
    flow's 5-tuple. The choice, hence every result, depends on the seed.
``spray``
    The flow's rate split equally over all its equal-cost paths (fluid packet
    spraying): link ``l`` carries ``(paths through l) / (paths)`` of the rate.
    No seed.
``given``
    The path of every flow, as nodes from its source host to its destination
    host, from the instance (``paths``: per coflow id, one path per flow).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._files import natural_number
from .._frozen import Frozen
from .._frozen import readonly as _readonly
from .._text import plural, value_text
from ..errors import InstanceError
from .topology import Topology

__all__ = ["MAX_SEED", "MAX_SPRAY_ENTRIES", "ROUTINGS", "Network", "flow_hash", "is_routing_seed"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

ROUTINGS = ("ecmp", "spray", "given")
"""The routings a :class:`Network` knows (``free``, any routing, is a bound's relaxation,
not a routing a schedule can follow)."""

MAX_SEED = 2**64 - 1
"""The largest routing seed: ECMP's hash (:func:`flow_hash`) takes 64 bits of it, so a larger
seed would give another's routes."""

MAX_SPRAY_ENTRIES = 50_000_000
"""Most (flow, path, link) triples ``spray`` enumerates: on the k = 24 fat-tree a flow across
pods has 144 paths and its incidence row 314 links, so spraying the Facebook trace there
(706,397 flows) would take gigabytes; ``ecmp`` takes six entries per flow."""

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: npt.NDArray[Any]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser, elementwise (uint64 arithmetic wraps, as it should here)."""
    x = x + _GOLD
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def _id_hash(coflow_id: str) -> int:
    """A coflow id as 64 bits, the same in every process (Python's ``hash`` of a str is salted)."""
    return int.from_bytes(hashlib.blake2b(coflow_id.encode(), digest_size=8).digest(), "little")


def is_routing_seed(value: object) -> bool:
    """An integer (NumPy's included, not a bool) from 0 to :data:`MAX_SEED`."""
    return natural_number(value) and int(value) <= MAX_SEED  # type: ignore[call-overload]


def _seed(seed: Any, key: str | None = None) -> int:
    """A routing seed as an ``int``, refused unless :func:`is_routing_seed`."""
    if not is_routing_seed(seed):
        raise InstanceError(f"the routing seed must be an integer from 0 to 2**64 - 1 (ECMP's "
                            f"hash takes 64 bits), got {seed!r:.60}", field=key)
    return int(seed)


def flow_hash(ids: Sequence[str], ptr: IntArray, src: IntArray, dst: IntArray,
              seed: int) -> npt.NDArray[np.uint64]:
    """ECMP's hash of each flow: (coflow id, index within the coflow, src, dst, seed).

    Stable across processes and machines; a flow keeps its hash when other coflows are
    added or removed (``Instance.subset``), since it names the flow, not its position.
    """
    src, dst = _hosts(src, "src"), _hosts(dst, "dst")
    if src.size != dst.size:
        raise InstanceError(f"src and dst must be one host each per flow, got {src.size} and "
                            f"{dst.size}")
    _check_names(ids, ptr, src.size)
    seed = _seed(seed)
    K = len(ids)
    width = np.diff(np.asarray(ptr, dtype=np.int64)).astype(np.int64)
    k = np.repeat(np.arange(K, dtype=np.int64), width)
    local = np.arange(int(ptr[-1]) if K else 0, dtype=np.int64) - np.asarray(ptr, np.int64)[:-1][k]
    hk = np.array([_id_hash(c) for c in ids], dtype=np.uint64)[k]
    s = np.uint64(seed)
    x = _mix(hk ^ _mix(np.full(k.size, s, dtype=np.uint64)))
    x = _mix(x ^ local.astype(np.uint64))
    x = _mix(x ^ (src.astype(np.uint64) << np.uint64(32)) ^ dst.astype(np.uint64))
    return x


@dataclass(frozen=True, slots=True, eq=False)
class Network(Frozen):
    """A topology with a routing: links, capacities and the flows x links incidence.

    Parameters
    ----------
    topology
        A :class:`~coflowopt.fabric.topology.Topology` (spine-leaf, fat-tree, graph).
    routing
        ``"ecmp"``, ``"spray"`` or ``"given"``.
    seed
        ECMP's hash seed (ignored by the other routings, which keep 0).
    paths
        For ``given``: per coflow id, one path per flow, each a sequence of node names
        from the flow's source host to its destination host.
    """

    topology: Topology
    routing: str = "ecmp"
    seed: int = 0
    paths: Mapping[str, tuple[tuple[str, ...], ...]] | None = None
    capacity: FloatArray = field(init=False, repr=False)
    ingress: FloatArray = field(init=False, repr=False)
    egress: FloatArray = field(init=False, repr=False)
    _given: Mapping[str, tuple[tuple[int, ...], ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.topology, Topology):
            raise InstanceError(f"topology must be a Topology, got {type(self.topology).__name__}")
        if self.routing not in ROUTINGS:
            raise InstanceError(f"unknown routing '{self.routing}' (known: {', '.join(ROUTINGS)})",
                                field="routing")
        seed = _seed(self.seed, key="seed")
        # (another routing has no use for it: kept as 0, so that networks with the same
        # routes compare equal, and a file, which writes no seed for them, reads back equal)
        set_(self, "seed", seed if self.routing == "ecmp" else 0)
        topo = self.topology
        H = topo.num_hosts
        cap = topo.capacity
        set_(self, "capacity", cap)
        set_(self, "ingress", _readonly(np.array(cap[:H])))
        set_(self, "egress", _readonly(np.array(cap[H:2 * H])))
        given: dict[str, tuple[tuple[int, ...], ...]] = {}
        if self.routing == "given":
            if self.paths is None:
                raise InstanceError("routing 'given' needs the paths of the flows", field="paths")
            given = _links_of_paths(topo, self.paths)
            set_(self, "paths", MappingProxyType({c: tuple(tuple(str(n) for n in p) for p in ps)
                                                  for c, ps in self.paths.items()}))
        elif self.paths is not None:
            raise InstanceError(f"paths are given but the routing is '{self.routing}'; paths go with "
                                "routing 'given'", field="paths")
        set_(self, "_given", MappingProxyType(given))

    # ------------------------------------------------------------------ the Links interface

    @property
    def num_ports(self) -> int:
        """Number of hosts (the instance's ports)."""
        return self.topology.num_hosts

    @property
    def num_links(self) -> int:
        return self.topology.num_links

    @property
    def is_uniform(self) -> bool:
        return bool(np.all(self.capacity == self.capacity[0]))

    def link_name(self, link: int) -> str:
        """``"link h3->leaf0"``: the link's tail and head nodes."""
        t = self.topology
        return f"link {t.node_name(int(t.tail[link]))}->{t.node_name(int(t.head[link]))}"

    def routes(self, src: npt.ArrayLike, dst: npt.ArrayLike, *, ids: Sequence[str] | None = None,
               ptr: npt.ArrayLike | None = None) -> sp.csr_array:
        """Incidence (flows x links): the share of each flow's rate on each link.

        ``ids`` and ``ptr`` name the flows (coflow ``k`` with id ``ids[k]`` owns flows
        ``ptr[k]:ptr[k+1]``); ``ecmp`` hashes them and ``given`` looks their paths up.
        """
        s, d = _hosts(src, "src"), _hosts(dst, "dst")
        if s.size != d.size:
            raise InstanceError(f"src and dst must have one entry per flow, got {s.size} and {d.size}")
        n = s.size
        topo = self.topology
        L = topo.num_links
        topo.check_hosts(s, d)
        if self.routing != "spray" and (ids is None or ptr is None):
            raise InstanceError(f"routing '{self.routing}' needs the flows' coflow ids and positions "
                                "(ids, ptr)")
        if ids is not None or ptr is not None:
            _check_names(ids, ptr, n)
        if n == 0:
            return sp.csr_array((np.zeros(0), np.zeros(0, np.int64), np.zeros(1, np.int64)),
                                shape=(0, L))
        if self.routing == "given":
            assert ids is not None and ptr is not None
            links = self._given_links(s, d, ids, np.asarray(ptr, dtype=np.int64))
            return _csr_from_paths(links, np.ones(n), L)
        count = topo.num_paths(s, d)
        if self.routing == "ecmp":
            assert ids is not None and ptr is not None
            h = flow_hash(ids, np.asarray(ptr, dtype=np.int64), s, d, self.seed)
            choice = (h % count.astype(np.uint64)).astype(np.int64)
            return _csr_from_paths(topo.path_links(s, d, choice), np.ones(n), L)
        total = int(count.sum())
        # the enumeration below is (total paths) x (its widest path), padded; the width is
        # asked of the distinct host pairs, so it is exact on a graph, whose paths differ in
        # length (spine-leaf and fat-tree pad every path to one width)
        pair = np.unique(s * topo.num_hosts + d)
        us, ud = np.divmod(pair, topo.num_hosts)
        width = topo.path_links(us, ud, np.zeros(pair.size, np.int64)).shape[1]
        if total * width > MAX_SPRAY_ENTRIES:
            raise InstanceError(
                f"spraying these {plural(n, 'flow')} over their {total:,} equal-cost paths would "
                f"enumerate {total * width:,} (flow, link) entries (limit {MAX_SPRAY_ENTRIES:,}); "
                "use routing 'ecmp'", field="routing")
        rows = np.repeat(np.arange(n, dtype=np.int64), count)
        starts = np.repeat(np.cumsum(count) - count, count)
        choice = np.arange(total, dtype=np.int64) - starts
        links = topo.path_links(s[rows], d[rows], choice)
        keep = links >= 0
        r = np.broadcast_to(rows[:, None], links.shape)[keep]
        c = links[keep]
        # count the paths through each (flow, link) first, then divide: a link every path
        # crosses gets exactly 1
        A = sp.coo_array((np.ones(r.size), (r, c)), shape=(n, L)).tocsr()
        A.sum_duplicates()
        A.data /= np.repeat(count, np.diff(A.indptr)).astype(np.float64)
        A.sort_indices()
        return A

    def _given_links(self, s: IntArray, d: IntArray, ids: Sequence[str], ptr: IntArray) -> IntArray:
        topo = self.topology
        rows: list[tuple[int, ...]] = []
        for k, cid in enumerate(ids):
            width = int(ptr[k + 1] - ptr[k])
            paths = self._given.get(cid)
            if paths is None:
                raise InstanceError(f"routing 'given' has no paths for coflow '{cid}'", coflow=k,
                                    field="paths")
            if len(paths) != width:
                raise InstanceError(f"coflow '{cid}' has {plural(width, 'flow')} but "
                                    f"{plural(len(paths), 'given path')}", coflow=k, field="paths")
            for i, p in enumerate(paths):
                f = int(ptr[k]) + i
                first, last = int(topo.tail[p[0]]), int(topo.head[p[-1]])
                if first != s[f] or last != d[f]:
                    raise InstanceError(
                        f"the given path of flow {i} of coflow '{cid}' goes from "
                        f"'{topo.node_name(first)}' to '{topo.node_name(last)}', but the flow goes "
                        f"from host {int(s[f])} ('{topo.node_name(int(s[f]))}') to host {int(d[f])} "
                        f"('{topo.node_name(int(d[f]))}')", flow=f, field="path")
                rows.append(p)
        width = max(len(p) for p in rows)
        out = np.full((len(rows), width), -1, dtype=np.int64)
        for f, p in enumerate(rows):
            out[f, : len(p)] = p
        return out

    def describe(self) -> dict[str, Any]:
        """The facts ``info`` shows about the fabric."""
        out = self.topology.describe()
        out["routing"] = self.routing
        if self.routing == "ecmp":
            out["routing_seed"] = self.seed
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Network):
            return NotImplemented
        mine = None if self.paths is None else dict(self.paths)
        theirs = None if other.paths is None else dict(other.paths)
        return (self.topology == other.topology and self.routing == other.routing
                and self.seed == other.seed and mine == theirs)

    def __hash__(self) -> int:
        return hash((self.topology, self.routing, self.seed))


def _csr_from_paths(links: IntArray, weight: FloatArray, L: int) -> sp.csr_array:
    """The incidence of one path per flow (``links`` padded with ``-1``), entries ``weight``."""
    keep = links >= 0
    counts = keep.sum(axis=1)
    indptr = np.zeros(links.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    A = sp.csr_array((np.repeat(weight, counts), links[keep], indptr), shape=(links.shape[0], L))
    A.sort_indices()
    return A


def _hosts(value: npt.ArrayLike, what: str) -> npt.NDArray[np.int64]:
    """Host indices as int64, or an :class:`InstanceError` for anything else (a fraction
    would be cut to a host silently)."""
    a = np.asarray(value).reshape(-1)
    if a.size and not (np.issubdtype(a.dtype, np.integer)
                       or (np.issubdtype(a.dtype, np.floating) and np.all(np.isfinite(a))
                           and np.all(a == np.round(a)))):
        raise InstanceError(f"{what} must be host indices (whole numbers), got "
                            f"{a[:3].tolist()!r:.60}")
    return a.astype(np.int64)


def _check_names(ids: Sequence[str] | None, ptr: npt.ArrayLike | None, n: int) -> None:
    """``ids`` (strings) and ``ptr`` (``len(ids) + 1`` offsets from 0 up to ``n``) name
    ``n`` flows, or an :class:`InstanceError` says how they do not."""
    if ids is None or ptr is None:
        raise InstanceError("give both ids and ptr, or neither")
    if isinstance(ids, str) or not all(isinstance(i, str) for i in ids):
        raise InstanceError(f"ids must be a sequence of coflow ids (strings), got {ids!r:.60}")
    p = np.asarray(ptr).reshape(-1)
    if (p.size != len(ids) + 1 or not np.issubdtype(p.dtype, np.integer) or p[0] != 0
            or p[-1] != n or np.any(np.diff(p) < 0)):
        raise InstanceError(f"ptr must be {len(ids) + 1} non-decreasing offsets from 0 to the "
                            f"{n} flows (one more than ids), got {p[:6].tolist()!r:.60}")


def _links_of_paths(topo: Topology, paths: Mapping[str, Sequence[Sequence[str]]],
                    ) -> dict[str, tuple[tuple[int, ...], ...]]:
    """Given paths (node names) as link indices; a path that skips a link, passes through a
    host or visits a node twice (so crosses no link twice) is an error."""
    if not isinstance(paths, Mapping):
        raise InstanceError("paths must map coflow ids to lists of paths", field="paths")
    for cid, flows in paths.items():
        if isinstance(flows, str) or not isinstance(flows, Sequence) or any(
                isinstance(p, str) or not isinstance(p, Sequence) for p in flows):
            raise InstanceError(f"the paths of coflow '{cid}' must be a list of paths, each a "
                                f"list of node names, got {flows!r:.60}", field=f"paths.{cid}")
    node = {topo.node_name(v): v for v in range(topo.num_nodes)}
    link = {(int(u), int(v)): j for j, (u, v) in enumerate(
        zip(topo.tail.tolist(), topo.head.tolist(), strict=True))}
    out: dict[str, tuple[tuple[int, ...], ...]] = {}
    for cid, flows in paths.items():
        rows = []
        for i, p in enumerate(flows):
            where = f"paths.{cid}[{i}]"
            if isinstance(p, str) or len(p) < 2:
                raise InstanceError(f"the given path of flow {i} of coflow '{cid}' must list at least "
                                    f"two nodes, got {value_text(p if isinstance(p, str) else list(p))}",
                                    field=where)
            idx = []
            for j, name in enumerate(p):
                v = node.get(str(name))
                if v is None:
                    raise InstanceError(f"the given path of flow {i} of coflow '{cid}' names node "
                                        f"'{name}', which the {topo.kind} fabric does not have",
                                        field=f"{where}[{j}]")
                idx.append(v)
            # hosts (nodes 0..H-1) do not forward, and a path is simple: no node twice (the
            # ends may be one host, a flow from a host to itself)
            seen: dict[int, int] = {}
            for j, v in enumerate(idx):
                inner = 0 < j < len(idx) - 1
                if inner and v < topo.num_hosts:
                    raise InstanceError(f"the given path of flow {i} of coflow '{cid}' passes through "
                                        f"host '{p[j]}'; hosts do not forward", field=f"{where}[{j}]")
                if v in seen and not (j == len(idx) - 1 and seen[v] == 0):
                    raise InstanceError(f"the given path of flow {i} of coflow '{cid}' visits node "
                                        f"'{p[j]}' twice (at {seen[v]} and {j})", field=f"{where}[{j}]")
                seen.setdefault(v, j)
            hops = []
            for j, (u, v) in enumerate(itertools.pairwise(idx)):
                e = link.get((u, v))
                if e is None:
                    raise InstanceError(f"the given path of flow {i} of coflow '{cid}' goes from "
                                        f"'{p[j]}' to '{p[j + 1]}', which no link joins",
                                        field=f"{where}[{j + 1}]")
                hops.append(e)
            rows.append(tuple(hops))
        out[str(cid)] = tuple(rows)
    return out
