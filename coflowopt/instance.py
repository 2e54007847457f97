"""The data model: fabric, coflows and instances.

Everything is frozen and validated on construction; arrays are read-only.
An :class:`Instance` stores the flows of all coflows in flat arrays grouped by
coflow (coflow ``k`` owns flows ``ptr[k]:ptr[k + 1]``) and computes the
derived attributes once, vectorized.

Capacity model
--------------
A :class:`Fabric` is a set of *links* with capacities, and every flow crosses
a set of links (:meth:`Fabric.routes`). The non-blocking "big switch" of the
papers is the special case with ``2 P`` links: link ``p`` is the uplink
(ingress) of port ``p`` and link ``P + p`` its downlink (egress), and a flow
from ``i`` to ``j`` crosses exactly links ``i`` and ``P + j``. Loads, isolation
times, the verifier and the engine are written against links and routes, so
that a multi-hop fabric (spine-leaf, fat-tree with ECMP) can later plug in
another route table without touching them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from ._files import finite_number
from ._frozen import Frozen
from ._frozen import readonly as _readonly
from ._text import plural
from .errors import InstanceError

__all__ = ["BINS", "MB", "NARROW_WIDTH", "SHORT_LENGTH", "Coflow", "Fabric", "Instance", "Links"]

MB = 2**20
"""One megabyte as the Coflow-Benchmark trace means it: 2^20 bytes."""

BINS = ("SN", "LN", "SW", "LW")
"""The papers' coflow bins (Varys, Aalo, MCS): short/long (longest flow) x narrow/wide (flow count)."""

SHORT_LENGTH = 5 * MB
"""A coflow is short if its longest flow is below this (the Varys and MCS papers: 5 MB).
In bytes: an instance whose sizes are in other units needs a threshold in its units."""

NARROW_WIDTH = 50
"""A coflow is narrow if it has at most this many flows (the Varys and MCS papers)."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TINY = float(np.finfo(np.float64).tiny)
"""The smallest normal float64 (2.2e-308): sizes and capacities below it are rejected.
Subnormal values lose their precision in every division the simulator and the
formulations make (a transfer time ``size / capacity`` can round to 0 or overflow)."""

MAX_LOAD_ENTRIES = 1 << 28
"""Most coflows x links an instance may have: :attr:`Instance.load` is dense (2 GiB at
this size; the Facebook trace on the k = 24 fat-tree has 526 x 20,736). A header that
declares a million ports for a few hundred coflows is refused, not a MemoryError."""


def _positive_rule(value: float, what: str) -> str:
    """The rule a rejected size or capacity breaks."""
    if 0 < value < TINY:
        return f"{what} must be at least {TINY:.3g}, the smallest normal float"
    return f"{what} must be finite and > 0"


def _float_vector(value: Any, what: str) -> FloatArray:
    try:
        arr = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{what} must be numbers, got {value!r:.80}") from exc
    if arr.ndim != 1:
        raise InstanceError(f"{what} must be a 1-D array, got shape {arr.shape}")
    return arr


def _int_vector(value: Any, what: str) -> IntArray:
    raw = np.asarray(value)
    if raw.ndim != 1:
        raise InstanceError(f"{what} must be a 1-D array, got shape {raw.shape}")
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    if raw.dtype.kind not in "iuf":
        raise InstanceError(f"{what} must be integers, got {value!r:.80}")
    if raw.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(raw) | (raw != np.round(raw)))
        if bad.size:
            raise InstanceError(f"{what}[{bad[0]}] = {float(raw[bad[0]])!r} is not an integer")
    return np.array(raw, dtype=np.int64, copy=True)


def _finite(x: Any, what: str) -> float:
    if isinstance(x, (bool, str, bytes)):  # float("1") would take a string
        raise InstanceError(f"{what} must be a number, got {x!r}")
    try:
        v = float(x)
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{what} must be a number, got {x!r}") from exc
    if not math.isfinite(v):
        raise InstanceError(f"{what} must be finite, got {v!r}")
    return v


# --------------------------------------------------------------------------- fabric


@runtime_checkable
class Links(Protocol):
    """What the data model, the engine, the bounds and the verifier read of a fabric.

    :class:`Fabric` (the big switch) and :class:`coflowopt.fabric.Network` (multi-hop
    fabrics) provide it. Links ``0..P-1`` are the hosts' (ports') uplinks and
    ``P..2P-1`` their downlinks on both; a network's links between switches follow.
    """

    @property
    def capacity(self) -> FloatArray: ...
    @property
    def ingress(self) -> FloatArray: ...
    @property
    def egress(self) -> FloatArray: ...
    @property
    def num_ports(self) -> int: ...
    @property
    def num_links(self) -> int: ...
    @property
    def is_uniform(self) -> bool: ...
    def link_name(self, link: int) -> str: ...
    def routes(self, src: npt.ArrayLike, dst: npt.ArrayLike, *, ids: Sequence[str] | None = None,
               ptr: npt.ArrayLike | None = None) -> sp.csr_array: ...



@dataclass(frozen=True, slots=True, eq=False)
class Fabric(Frozen):
    """A non-blocking fabric ("big switch") of ``P`` ports.

    Parameters
    ----------
    ingress
        Capacity of each port's uplink (data units per time unit), length ``P``.
    egress
        Capacity of each port's downlink, length ``P``.
    """

    ingress: FloatArray
    egress: FloatArray
    capacity: FloatArray = field(init=False, repr=False)
    """Capacity per link: the ``P`` uplinks, then the ``P`` downlinks."""

    def __post_init__(self) -> None:
        ing = _float_vector(self.ingress, "ingress capacities")
        egr = _float_vector(self.egress, "egress capacities")
        if ing.size == 0:
            raise InstanceError("a fabric needs at least one port")
        if ing.size != egr.size:
            raise InstanceError(f"the fabric has {ing.size} ingress but {egr.size} egress capacities")
        for name, arr in (("ingress", ing), ("egress", egr)):
            bad = np.flatnonzero(~(np.isfinite(arr) & (arr >= TINY)))
            if bad.size:
                p = int(bad[0])
                raise InstanceError(
                    f"{name} capacity of port {p} is {float(arr[p])!r}; "
                    + _positive_rule(float(arr[p]), "capacities"),
                    field=f"{name}[{p}]",
                )
        object.__setattr__(self, "ingress", _readonly(ing))
        object.__setattr__(self, "egress", _readonly(egr))
        object.__setattr__(self, "capacity", _readonly(np.concatenate([ing, egr])))

    @classmethod
    def uniform(cls, num_ports: int, rate: float = 1.0) -> Fabric:
        """``num_ports`` ports whose uplinks and downlinks all have capacity ``rate``."""
        if int(num_ports) != num_ports or num_ports < 1:
            raise InstanceError(f"number of ports must be a positive integer, got {num_ports!r}")
        if not finite_number(rate):
            raise InstanceError(f"rate must be a finite number > 0, got {rate!r:.80}")
        return cls(np.full(int(num_ports), rate, float), np.full(int(num_ports), rate, float))

    @property
    def num_ports(self) -> int:
        return int(self.ingress.size)

    @property
    def num_links(self) -> int:
        return int(self.capacity.size)

    @property
    def is_uniform(self) -> bool:
        """True when every link has the same capacity."""
        return bool(np.all(self.capacity == self.capacity[0]))

    def link_name(self, link: int) -> str:
        """A readable name for a link: ``"ingress port 3"`` or ``"egress port 7"``."""
        p = self.num_ports
        return f"ingress port {link}" if link < p else f"egress port {link - p}"

    def routes(self, src: npt.ArrayLike, dst: npt.ArrayLike, *, ids: Sequence[str] | None = None,
               ptr: npt.ArrayLike | None = None) -> sp.csr_array:
        """Incidence matrix (flows x links) of the links each flow crosses.

        On the big switch a flow from ``i`` to ``j`` crosses uplink ``i`` and
        downlink ``P + j``; the entries are 1. ``ids`` and ``ptr`` (which coflow owns
        which flows, for routings that hash them) are not needed here.
        """
        s = np.asarray(src, dtype=np.int64)
        d = np.asarray(dst, dtype=np.int64)
        n = s.size
        cols = np.column_stack([s, d + self.num_ports]).ravel()
        indptr = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
        return sp.csr_array((np.ones(2 * n), cols, indptr), shape=(n, self.num_links))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fabric):
            return NotImplemented
        return np.array_equal(self.ingress, other.ingress) and np.array_equal(self.egress, other.egress)

    def __hash__(self) -> int:
        return hash((self.num_ports, self.capacity.tobytes()))


# --------------------------------------------------------------------------- coflow


@dataclass(frozen=True, slots=True, eq=False)
class Coflow(Frozen):
    """A group of flows that completes when its last flow completes.

    Parameters
    ----------
    id
        Unique, non-empty name.
    src, dst
        Ingress and egress port of each flow (0-based).
    sizes
        Size of each flow (data units), finite and > 0.
    release
        Time the coflow arrives (>= 0); no flow is served before it.
    weight
        Weight in weighted objectives (> 0: at least 2.2e-308, the smallest normal float).
    deadline
        Optional absolute deadline, greater than ``release``.
    starts_after
        Ids of coflows that must finish before any flow of this one starts.
    finishes_before
        Ids of coflows that must finish before this one can finish.
    delay
        Optional per-flow offset after ``release`` at which the flow becomes
        available (multi-wave coflows); ``None`` means every flow is available
        at ``release``.
    """

    id: str
    src: IntArray
    dst: IntArray
    sizes: FloatArray
    release: float = 0.0
    weight: float = 1.0
    deadline: float | None = None
    starts_after: tuple[str, ...] = ()
    finishes_before: tuple[str, ...] = ()
    delay: FloatArray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InstanceError(f"coflow id must be a non-empty string, got {self.id!r}", field="id")
        cid = self.id
        try:
            src = _int_vector(self.src, f"ingress ports of coflow '{cid}'")
            dst = _int_vector(self.dst, f"egress ports of coflow '{cid}'")
            sizes = _float_vector(self.sizes, f"flow sizes of coflow '{cid}'")
        except InstanceError as exc:
            raise InstanceError(exc.message, field="flows") from None
        if not (src.size == dst.size == sizes.size):
            raise InstanceError(
                f"coflow '{cid}' has {src.size} sources, {dst.size} destinations and {sizes.size} sizes",
                field="flows",
            )
        if sizes.size == 0:
            raise InstanceError(f"coflow '{cid}' has no flows", field="flows")
        for name, arr in (("ingress", src), ("egress", dst)):
            bad = np.flatnonzero(arr < 0)
            if bad.size:
                f = int(bad[0])
                raise InstanceError(
                    f"flow {f} of coflow '{cid}' uses {name} port {int(arr[f])}; ports are >= 0",
                    flow=f,
                    field=name,
                )
        bad = np.flatnonzero(~(np.isfinite(sizes) & (sizes >= TINY)))
        if bad.size:
            f = int(bad[0])
            raise InstanceError(
                f"flow {f} of coflow '{cid}' has size {float(sizes[f])!r}; "
                + _positive_rule(float(sizes[f]), "sizes"),
                flow=f,
                field="size",
            )
        release = _finite(self.release, f"release of coflow '{cid}'")
        if release < 0:
            raise InstanceError(
                f"coflow '{cid}' has release {release!r}; releases must be >= 0", field="release"
            )
        weight = _finite(self.weight, f"weight of coflow '{cid}'")
        if not weight >= TINY:
            raise InstanceError(f"coflow '{cid}' has weight {weight!r}; "
                                + _positive_rule(weight, "weights"), field="weight")
        deadline = None
        if self.deadline is not None:
            deadline = _finite(self.deadline, f"deadline of coflow '{cid}'")
            if deadline <= release:
                raise InstanceError(
                    f"coflow '{cid}' has deadline {deadline!r} not after its release {release!r}",
                    field="deadline",
                )
        deps = {}
        for name in ("starts_after", "finishes_before"):
            raw = getattr(self, name)
            if isinstance(raw, str) or not isinstance(raw, Iterable):
                raise InstanceError(
                    f"{name} of coflow '{cid}' must be a list of coflow ids, got {raw!r}",
                    field=name,
                )
            ids = tuple(raw)
            for other in ids:
                if not isinstance(other, str):
                    raise InstanceError(
                        f"{name} of coflow '{cid}' must hold coflow ids (strings), got {other!r}",
                        field=name,
                    )
                if other == cid:
                    raise InstanceError(f"coflow '{cid}' depends on itself ({name})", field=name)
            deps[name] = tuple(dict.fromkeys(ids))
        delay = None
        if self.delay is not None:
            delay = _float_vector(self.delay, f"flow delays of coflow '{cid}'")
            if delay.size != sizes.size:
                raise InstanceError(
                    f"coflow '{cid}' has {sizes.size} flows but {delay.size} delays", field="delay"
                )
            bad = np.flatnonzero(~(np.isfinite(delay) & (delay >= 0)))
            if bad.size:
                f = int(bad[0])
                raise InstanceError(
                    f"flow {f} of coflow '{cid}' has delay {float(delay[f])!r}; delays must be >= 0",
                    flow=f,
                    field="delay",
                )
            if not delay.any():
                delay = None
            else:
                delay = _readonly(delay)
        set_ = object.__setattr__
        set_(self, "src", _readonly(src))
        set_(self, "dst", _readonly(dst))
        set_(self, "sizes", _readonly(sizes))
        set_(self, "release", release)
        set_(self, "weight", weight)
        set_(self, "deadline", deadline)
        set_(self, "starts_after", deps["starts_after"])
        set_(self, "finishes_before", deps["finishes_before"])
        set_(self, "delay", delay)

    @classmethod
    def from_flows(cls, id: str, flows: Iterable[Sequence[float]], **kwargs: Any) -> Coflow:
        """Build a coflow from ``(src, dst, size)`` or ``(src, dst, size, delay)`` rows."""
        rows = [tuple(f) for f in flows]
        if any(len(r) not in (3, 4) for r in rows):
            raise InstanceError(
                f"flows of coflow '{id}' must be (src, dst, size[, delay]) rows", field="flows"
            )
        if any(len(r) == 4 for r in rows) and "delay" not in kwargs:
            kwargs["delay"] = [r[3] if len(r) == 4 else 0.0 for r in rows]
        return cls(
            id,
            np.array([r[0] for r in rows]),
            np.array([r[1] for r in rows]),
            np.array([r[2] for r in rows], dtype=np.float64),
            **kwargs,
        )

    @property
    def width(self) -> int:
        """Number of flows."""
        return int(self.sizes.size)

    @property
    def total_size(self) -> float:
        return float(self.sizes.sum())

    @property
    def length(self) -> float:
        """Size of the largest flow."""
        return float(self.sizes.max())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Coflow):
            return NotImplemented
        return (
            self.id == other.id
            and self.release == other.release
            and self.weight == other.weight
            and self.deadline == other.deadline
            and self.starts_after == other.starts_after
            and self.finishes_before == other.finishes_before
            and np.array_equal(self.src, other.src)
            and np.array_equal(self.dst, other.dst)
            and np.array_equal(self.sizes, other.sizes)
            and (
                (self.delay is None and other.delay is None)
                or (
                    self.delay is not None
                    and other.delay is not None
                    and np.array_equal(self.delay, other.delay)
                )
            )
        )

    def __hash__(self) -> int:
        return hash((self.id, self.release, self.width))


# --------------------------------------------------------------------------- instance


@dataclass(frozen=True, slots=True, eq=False)
class Instance(Frozen):
    """A fabric and the coflows that share it.

    All per-coflow arrays are indexed by position ``k`` in :attr:`coflows`;
    all per-flow arrays (``flow_*``) hold the flows of all coflows, grouped by
    coflow: coflow ``k`` owns flows ``ptr[k]:ptr[k + 1]``.

    An instance may have no coflows (an empty :meth:`subset`, say: every solver, bound
    and the simulator accept it, with empty results); the file readers and writers
    refuse one, since a file with nothing to schedule is a mistake.
    """

    fabric: Links
    coflows: tuple[Coflow, ...]
    name: str = ""

    # flows, grouped by coflow
    ptr: IntArray = field(init=False, repr=False)
    flow_coflow: IntArray = field(init=False, repr=False)
    flow_src: IntArray = field(init=False, repr=False)
    flow_dst: IntArray = field(init=False, repr=False)
    flow_size: FloatArray = field(init=False, repr=False)
    flow_release: FloatArray = field(init=False, repr=False)
    """Absolute time each flow becomes available (coflow release plus delay)."""
    # coflows
    ids: tuple[str, ...] = field(init=False, repr=False)
    release: FloatArray = field(init=False, repr=False)
    weight: FloatArray = field(init=False, repr=False)
    deadline: FloatArray = field(init=False, repr=False)
    """Absolute deadline per coflow, ``nan`` where there is none."""
    size: FloatArray = field(init=False, repr=False)
    """Total size of each coflow."""
    length: FloatArray = field(init=False, repr=False)
    """Size of each coflow's largest flow."""
    width: IntArray = field(init=False, repr=False)
    """Number of flows of each coflow."""
    skew: FloatArray = field(init=False, repr=False)
    """Coefficient of variation (population std / mean) of each coflow's flow sizes."""
    senders: IntArray = field(init=False, repr=False)
    """Number of distinct ingress ports of each coflow."""
    receivers: IntArray = field(init=False, repr=False)
    """Number of distinct egress ports of each coflow."""
    routes: sp.csr_array = field(init=False, repr=False)
    """The flows x links incidence (:meth:`Links.routes`): the share of each flow's rate on each
    link. The one every reader of routes uses (on a network it depends on the routing)."""
    load: FloatArray = field(init=False, repr=False)
    """Load of each coflow on each link, shape ``(K, L)`` (uplinks, then downlinks, then a
    network's links between switches)."""
    gamma: FloatArray = field(init=False, repr=False)
    """Isolation time (dissertation Eq. 4.1): max over links of load / capacity."""
    starts_after: tuple[IntArray, ...] = field(init=False, repr=False)
    finishes_before: tuple[IntArray, ...] = field(init=False, repr=False)
    topological_order: IntArray = field(init=False, repr=False)
    """Coflow indices ordered so that every dependency comes before its dependents."""
    _index: Mapping[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.fabric, Links):
            raise InstanceError(f"fabric must be a Fabric or a Network, got {type(self.fabric).__name__}")
        coflows = tuple(self.coflows)
        for k, c in enumerate(coflows):
            if not isinstance(c, Coflow):
                raise InstanceError(f"coflows[{k}] must be a Coflow, got {type(c).__name__}", coflow=k)
        set_(self, "coflows", coflows)
        set_(self, "name", str(self.name or ""))
        P = self.fabric.num_ports
        K = len(coflows)

        index: dict[str, int] = {}
        for k, c in enumerate(coflows):
            if c.id in index:
                raise InstanceError(
                    f"duplicate coflow id '{c.id}' (coflows {index[c.id]} and {k})",
                    coflow=k,
                    field="id",
                )
            index[c.id] = k
            for name, ports in (("ingress", c.src), ("egress", c.dst)):
                bad = np.flatnonzero(ports >= P)
                if bad.size:
                    f = int(bad[0])
                    raise InstanceError(
                        f"flow {f} of coflow '{c.id}' uses {name} port {int(ports[f])}, "
                        f"but the fabric has {plural(P, 'port')}",
                        coflow=k,
                        flow=f,
                        field=name,
                    )
        set_(self, "_index", MappingProxyType(index))
        set_(self, "ids", tuple(c.id for c in coflows))

        widths = np.fromiter((c.width for c in coflows), dtype=np.int64, count=K)
        ptr = np.zeros(K + 1, dtype=np.int64)
        np.cumsum(widths, out=ptr[1:])
        cat = np.concatenate
        if K:
            src = cat([c.src for c in coflows])
            dst = cat([c.dst for c in coflows])
            fsize = cat([c.sizes for c in coflows])
            delay = cat([c.delay if c.delay is not None else np.zeros(c.width) for c in coflows])
        else:
            src = dst = np.zeros(0, np.int64)
            fsize = delay = np.zeros(0)
        fcoflow = np.repeat(np.arange(K, dtype=np.int64), widths)
        release = np.fromiter((c.release for c in coflows), dtype=float, count=K)
        set_(self, "ptr", _readonly(ptr))
        set_(self, "flow_coflow", _readonly(fcoflow))
        set_(self, "flow_src", _readonly(src))
        set_(self, "flow_dst", _readonly(dst))
        set_(self, "flow_size", _readonly(fsize))
        set_(self, "flow_release", _readonly(release[fcoflow] + delay))
        set_(self, "release", _readonly(release))
        set_(self, "weight", _readonly(np.fromiter((c.weight for c in coflows), float, K)))
        set_(
            self,
            "deadline",
            _readonly(np.fromiter((np.nan if c.deadline is None else c.deadline for c in coflows), float, K)),
        )

        starts = ptr[:-1]
        if K:
            size = np.add.reduceat(fsize, starts)
            length = np.maximum.reduceat(fsize, starts)
            mean = size / widths
            # relative deviations first: sizes near 1e160 squared to inf
            dev = (fsize - mean[fcoflow]) / mean[fcoflow]
            skew = np.sqrt(np.add.reduceat(dev * dev, starts) / widths)
        else:
            size = length = skew = np.zeros(0)
        set_(self, "size", _readonly(size))
        set_(self, "length", _readonly(length))
        set_(self, "width", _readonly(widths))
        set_(self, "skew", _readonly(skew))
        set_(self, "senders", _readonly(_distinct_per_group(fcoflow, src, P, K)))
        set_(self, "receivers", _readonly(_distinct_per_group(fcoflow, dst, P, K)))

        try:
            incidence = self.fabric.routes(src, dst, ids=self.ids, ptr=ptr).tocsr()
        except InstanceError as exc:
            if exc.flow is None or exc.coflow is not None:
                raise
            k = int(fcoflow[exc.flow])
            raise InstanceError(exc.message, coflow=k, flow=exc.flow - int(ptr[k]),
                                field=exc.field) from None
        for arr in (incidence.data, incidence.indices, incidence.indptr):
            arr.setflags(write=False)
        set_(self, "routes", incidence)
        routes = incidence.tocoo()
        L = self.fabric.num_links
        if K * L > MAX_LOAD_ENTRIES:
            raise InstanceError(
                f"{K:,} coflows on {L:,} links: their loads per coflow and link ({K * L:,} "
                f"numbers, {K * L * 8 / 2**30:.1f} GiB) are held dense, and coflowopt holds at most "
                f"{MAX_LOAD_ENTRIES:,}", field="coflows")
        rows = np.asarray(routes.row, dtype=np.int64)
        cols = np.asarray(routes.col, dtype=np.int64)
        load = np.bincount(
            fcoflow[rows] * L + cols, weights=fsize[rows] * routes.data, minlength=K * L
        ).reshape(K, L)
        set_(self, "load", _readonly(load))
        cap = self.fabric.capacity
        with np.errstate(over="ignore", under="ignore"):
            transfer = fsize[rows] * routes.data / cap[cols]
            busy = load.sum(axis=0) / cap if K else np.zeros(0)
        bad = np.flatnonzero(~((transfer >= TINY) & (transfer < np.inf)))
        if bad.size:
            f = int(rows[bad[0]])
            k = int(fcoflow[f])
            raise InstanceError(
                f"flow {f - int(ptr[k])} of coflow '{coflows[k].id}' needs {float(transfer[bad[0]])!r} "
                f"time units on link {int(cols[bad[0]])} (size {float(fsize[f])!r} over capacity "
                f"{float(cap[cols[bad[0]]])!r}); sizes and capacities this far apart are outside "
                "float64's range", coflow=k, flow=f - int(ptr[k]), field="size")
        if not np.all(busy < np.inf):
            raise InstanceError("the instance's total data over a link's capacity overflows float64")
        gamma = (load / cap).max(axis=1) if K else np.zeros(0)
        set_(self, "gamma", _readonly(gamma))

        sa: list[IntArray] = []
        fb: list[IntArray] = []
        for k, c in enumerate(coflows):
            for name, out in (("starts_after", sa), ("finishes_before", fb)):
                refs = getattr(c, name)
                missing = [r for r in refs if r not in index]
                if missing:
                    raise InstanceError(
                        f"coflow '{c.id}' {name.replace('_', '-')} unknown coflow '{missing[0]}'",
                        coflow=k,
                        field=name,
                    )
                out.append(_readonly(np.array([index[r] for r in refs], dtype=np.int64)))
        set_(self, "starts_after", tuple(sa))
        set_(self, "finishes_before", tuple(fb))
        set_(self, "topological_order", _readonly(self._topological_order()))

    # ------------------------------------------------------------------ helpers

    def _topological_order(self) -> IntArray:
        K = self.num_coflows
        preds = [np.union1d(self.starts_after[k], self.finishes_before[k]) for k in range(K)]
        indeg = np.array([p.size for p in preds], dtype=np.int64)
        if not indeg.any():
            return np.arange(K, dtype=np.int64)
        succs: list[list[int]] = [[] for _ in range(K)]
        for k, p in enumerate(preds):
            for j in p:
                succs[int(j)].append(k)
        order = [k for k in range(K) if indeg[k] == 0]
        head = 0
        while head < len(order):
            j = order[head]
            head += 1
            for k in succs[j]:
                indeg[k] -= 1
                if indeg[k] == 0:
                    order.append(k)
        if len(order) < K:
            cycle = _find_cycle(preds, set(np.flatnonzero(indeg > 0).tolist()))
            names = " waits for ".join(f"'{self.ids[k]}'" for k in cycle)
            raise InstanceError(
                f"dependency cycle among coflows: {names}", coflow=cycle[0], field="dependencies"
            )
        return np.array(order, dtype=np.int64)

    # ------------------------------------------------------------------ sizes

    @property
    def num_coflows(self) -> int:
        return len(self.coflows)

    @property
    def num_flows(self) -> int:
        return int(self.ptr[-1])

    @property
    def num_ports(self) -> int:
        return self.fabric.num_ports

    @property
    def ingress_load(self) -> FloatArray:
        """Load of each coflow on each ingress port (host uplink), shape ``(K, P)``."""
        return self.load[:, : self.num_ports]

    @property
    def egress_load(self) -> FloatArray:
        """Load of each coflow on each egress port (host downlink), shape ``(K, P)``: links
        ``P..2P-1`` (on a network the switch links follow them)."""
        P = self.num_ports
        return self.load[:, P : 2 * P]

    @property
    def has_dependencies(self) -> bool:
        return any(a.size for a in self.starts_after) or any(b.size for b in self.finishes_before)

    @property
    def has_deadlines(self) -> bool:
        return bool(np.isfinite(self.deadline).any())

    @property
    def is_multi_wave(self) -> bool:
        return any(c.delay is not None for c in self.coflows)

    def route_keys(self) -> IntArray:
        """A number per flow, equal for two flows exactly when they cross the same links with
        the same shares: ``src * P + dst`` on the big switch, the index of the flow's
        incidence row among the distinct rows on a network (ECMP sends two flows between
        the same hosts over different paths)."""
        if isinstance(self.fabric, Fabric):
            return self.flow_src * self.num_ports + self.flow_dst
        A = self.routes
        F = self.num_flows
        if F == 0:
            return np.zeros(0, dtype=np.int64)
        count = np.diff(A.indptr)
        width = int(count.max())
        cols = np.full((F, 2 * width), -1.0)
        pos = np.arange(A.indices.size) - np.repeat(A.indptr[:-1], count)
        rows = np.repeat(np.arange(F), count)
        cols[rows, pos] = A.indices
        cols[rows, width + pos] = A.data
        _, inv = np.unique(cols, axis=0, return_inverse=True)
        return inv.reshape(-1).astype(np.int64)

    def index(self, coflow_id: str) -> int:
        """Position of the coflow with this id."""
        try:
            return self._index[coflow_id]
        except KeyError:
            raise InstanceError(f"no coflow with id '{coflow_id}'") from None

    def flows_of(self, k: int) -> slice:
        """Slice of the flow arrays that belongs to coflow ``k``."""
        return slice(int(self.ptr[k]), int(self.ptr[k + 1]))

    def bins(self, *, short_length: float = SHORT_LENGTH,
             narrow_width: int = NARROW_WIDTH) -> npt.NDArray[np.str_]:
        """Bin of each coflow: ``SN``, ``LN``, ``SW`` or ``LW``.

        Short means the longest flow is below ``short_length``; narrow means
        at most ``narrow_width`` flows. The defaults are the papers' 5 MB and 50
        flows, the length in bytes: sizes are taken as bytes unless a threshold in
        the instance's own units is given (trace files are in bytes; the native
        JSON format states no unit).
        """
        short = self.length < short_length
        narrow = self.width <= narrow_width
        return np.where(short, np.where(narrow, "SN", "SW"), np.where(narrow, "LN", "LW"))

    def bin_counts(self, **kwargs: float) -> dict[str, int]:
        """Number of coflows per bin, in the order of :data:`BINS`."""
        labels = self.bins(**kwargs)  # type: ignore[arg-type]
        return {b: int(np.count_nonzero(labels == b)) for b in BINS}

    # ------------------------------------------------------------------ variants

    def replace(self, **changes: Any) -> Instance:
        """A copy with some fields changed (``fabric``, ``coflows``, ``name``)."""
        return dataclasses.replace(self, **changes)

    def with_releases(self, release: npt.ArrayLike | float) -> Instance:
        """A copy whose coflows are released at the given times (scalar or per coflow)."""
        try:
            values = np.broadcast_to(np.asarray(release, dtype=float), (self.num_coflows,))
        except (TypeError, ValueError):
            raise InstanceError(f"release must be a number or one per coflow "
                                f"({self.num_coflows}), got {release!r:.80}") from None
        return self.replace(
            coflows=tuple(
                dataclasses.replace(
                    c,
                    release=float(r),
                    deadline=None if c.deadline is None else c.deadline - c.release + float(r),
                )
                for c, r in zip(self.coflows, values, strict=True)
            )
        )

    def rescaled(self, *, time_unit: float = 1.0, data_unit: float = 1.0) -> Instance:
        """The same instance in other units: ``time_unit`` of its time and ``data_unit`` of
        its data become 1.

        Sizes are divided by ``data_unit``; releases, deadlines and flow delays by
        ``time_unit``; capacities are multiplied by ``time_unit / data_unit``. A schedule of
        one is a schedule of the other with its times and amounts scaled the same way, so
        objectives and bounds agree up to rounding (times by the factor ``time_unit``).
        Parameters given in bytes or seconds are not rescaled: queue thresholds (``aalo``,
        ``dark``, ``creek``, ``mcs``), steps and timers (``dark``, ``creek``'s wait,
        ``coflourish``'s periods), the report's bins; pass them in the new units. Rounding
        differs in the new units, and policies whose decisions turn on ties (``pfp``,
        ``coflourish`` with feedback) can then part by a few percent; factors that are powers
        of two keep every number bit for bit.

        Useful where the data are whole numbers in some units but not in those of the
        file: coflowsim's trace moves a whole MiB per rack in each of its 8 ms steps, and in
        steps and MiB (with the releases rounded to the grid they lie on,
        :func:`coflowopt.sim.policies.varys.in_coflowsim_steps`) every size, release and
        completion of its per-flow schedule is an integer, which the simulator's floating
        point then keeps exactly (in seconds, 0.008 is not a binary fraction;
        ``models/simulator.md``).

        Only the big switch (:class:`Fabric`) is rescaled; a network's capacities come
        from its topology, whose parameters carry the units.
        """
        for name, value in (("time_unit", time_unit), ("data_unit", data_unit)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                raise InstanceError(f"{name} must be a number, got {value!r:.60}")
            if not (math.isfinite(value) and value > 0):
                raise InstanceError(f"{name} must be finite and > 0, got {value!r}")
        if type(self.fabric) is not Fabric:
            raise InstanceError(
                f"only instances on the big switch can be rescaled; this one is on a "
                f"{type(self.fabric).__name__} (scale its topology's capacities instead)")
        t, d = float(time_unit), float(data_unit)
        fab = Fabric(self.fabric.ingress * (t / d), self.fabric.egress * (t / d))
        coflows = tuple(
            dataclasses.replace(
                c,
                sizes=c.sizes / d,
                release=c.release / t,
                deadline=None if c.deadline is None else c.deadline / t,
                delay=None if c.delay is None else c.delay / t,
            )
            for c in self.coflows
        )
        return self.replace(fabric=fab, coflows=coflows)

    def subset(self, indices: Iterable[int], *, drop_dependencies: bool = False) -> Instance:
        """The instance restricted to some coflows, by position (in the given order; a
        negative position counts from the end, as in a list).

        Dependencies on dropped coflows raise unless ``drop_dependencies``.
        """
        if isinstance(indices, (str, bytes)) or not isinstance(indices, Iterable):
            raise InstanceError(f"subset takes an iterable of coflow positions, got {indices!r}")
        idx = []
        K = self.num_coflows
        for i in indices:
            if (isinstance(i, bool) or not isinstance(i, (int, np.integer))
                    or not -K <= int(i) < K):
                raise InstanceError(
                    (f"subset takes coflow positions 0..{K - 1} (or -{K}..-1 from the end), "
                     if K else "the instance has no coflows to take, ") + f"got {i!r}"
                    + (f" (coflow '{i}' is at position {self.ids.index(i)})"
                       if isinstance(i, str) and i in self.ids else ""))
            idx.append(int(i) % K)
        if len(set(idx)) != len(idx):
            dup = next(i for i in idx if idx.count(i) > 1)
            raise InstanceError(f"subset names coflow position {dup} twice")
        kept = {self.ids[i] for i in idx}
        out = []
        for i in idx:
            c = self.coflows[i]
            sa = tuple(x for x in c.starts_after if x in kept)
            fb = tuple(x for x in c.finishes_before if x in kept)
            if not drop_dependencies and (len(sa), len(fb)) != (
                len(c.starts_after),
                len(c.finishes_before),
            ):
                raise InstanceError(
                    f"coflow '{c.id}' depends on a coflow outside the subset; "
                    "pass drop_dependencies=True to drop such dependencies"
                )
            out.append(dataclasses.replace(c, starts_after=sa, finishes_before=fb))
        return self.replace(coflows=tuple(out))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instance):
            return NotImplemented
        return self.name == other.name and self.fabric == other.fabric and self.coflows == other.coflows

    def __hash__(self) -> int:
        return hash((self.name, self.ids, self.num_flows))

    def __repr__(self) -> str:
        return (
            f"Instance(name={self.name!r}, ports={self.num_ports}, "
            f"coflows={self.num_coflows}, flows={self.num_flows})"
        )


def _distinct_per_group(group: IntArray, value: IntArray, span: int, n: int) -> IntArray:
    """Number of distinct ``value`` within each ``group`` (values in ``[0, span)``)."""
    if group.size == 0:
        return np.zeros(n, dtype=np.int64)
    keys = np.unique(group * span + value)
    return np.bincount(keys // span, minlength=n).astype(np.int64)


def _find_cycle(preds: list[np.ndarray], nodes: set[int]) -> list[int]:
    """A dependency cycle among ``nodes`` (each of which lies on or before one)."""
    start = min(nodes)
    seen: dict[int, int] = {}
    path: list[int] = []
    k = start
    while k not in seen:
        seen[k] = len(path)
        path.append(k)
        k = next(int(j) for j in preds[k] if int(j) in nodes)
    cycle = path[seen[k] :]
    return [*cycle, cycle[0]]
