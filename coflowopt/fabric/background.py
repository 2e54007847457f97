"""Background traffic the scheduler does not see: a share of every link, a load over time, flows.

A :class:`Background` is what else the network carries besides the instance's coflows:

- ``share``: a constant fraction of every link's capacity (Coflourish, Fig. 2: 10% to 90%);
- ``times`` / ``load``: a piecewise-constant load per link, ``load[i, l]`` on link ``l``
  during ``[times[i], times[i+1])`` and none outside (from a file, :func:`background_from_json`);
- background *flows*, listed (``release``, ``src``, ``dst``, ``size``) and/or drawn as a
  Poisson process (:class:`PoissonFlows`) with sizes from a CDF (:func:`load_cdf`: the
  web-search and data-mining distributions ship with coflowopt). They follow the fabric's
  routing (under ``ecmp`` each is hashed as the only flow of a coflow named
  ``~background-<n>``, ``n`` its index in arrival order) and share links max-min with the
  coflows' flows, as TCP flows would.

The share and the load are *inelastic*: they take their part of a link whatever the
coflows do, and a link's background load must stay below its capacity. Flows are
*elastic*. How a simulation applies a background (requested rates as caps, max-min on
what is left) is :mod:`coflowopt.sim.background`; ``models/fabrics.md`` states the model.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._files import finite_number, json_float, natural_number, parse_json, read_text
from .._frozen import Frozen
from .._frozen import readonly as _readonly
from .._text import value_text
from ..errors import CoflowoptError, InputError, InstanceError
from ..instance import TINY, Instance

__all__ = [
    "CDFS",
    "Background",
    "PoissonFlows",
    "SizeCDF",
    "background_from_json",
    "coflows_to_background",
    "load_cdf",
    "parse_background",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_HERE = Path(__file__).resolve().parent / "cdfs"
CDFS = {"web-search": _HERE / "web_search.csv", "data-mining": _HERE / "data_mining.csv"}
"""The flow-size distributions shipped with coflowopt (sizes in bytes): web search (the
DCTCP paper's) and data mining (the VL2 paper's), the two most used in datacenter papers."""


# --------------------------------------------------------------------------- flow sizes


@dataclass(frozen=True, slots=True, eq=False)
class SizeCDF(Frozen):
    """A flow-size distribution: ``prob[i]`` is the probability of a size at most ``size[i]``.

    Sizes are drawn by inverting the CDF with linear interpolation between its points
    (the convention of the pFabric and HPCC traffic generators), so the distribution is
    piecewise uniform and its mean is exact (:attr:`mean`).
    """

    size: FloatArray
    prob: FloatArray
    name: str = ""

    def __post_init__(self) -> None:
        s = np.asarray(self.size, dtype=np.float64).reshape(-1)
        p = np.asarray(self.prob, dtype=np.float64).reshape(-1)
        what = f"flow-size CDF {self.name!r}" if self.name else "flow-size CDF"
        if s.size < 2 or s.size != p.size:
            raise InputError(f"{what}: needs at least two points of (size, probability)")
        if not (np.all(np.isfinite(s)) and np.all(s >= 0) and np.all(np.diff(s) >= 0)):
            raise InputError(f"{what}: sizes must be finite, >= 0 and non-decreasing")
        if not (np.all(np.isfinite(p)) and np.all(np.diff(p) >= 0) and p[0] >= 0 and p[-1] == 1.0):
            raise InputError(f"{what}: probabilities must rise from >= 0 to exactly 1, got "
                             f"{p[0]:g} ... {p[-1]:g}")
        if s[-1] <= 0:
            raise InputError(f"{what}: every size is 0")
        if s[-1] < TINY:  # (sizes below the smallest normal float: the simulator refuses them)
            raise InputError(f"{what}: its largest size, {s[-1]:.3g}, is below {TINY:.3g}, the "
                             f"smallest normal float (is the size unit right?)")
        object.__setattr__(self, "size", _readonly(s))
        object.__setattr__(self, "prob", _readonly(p))

    @property
    def mean(self) -> float:
        """The mean size: each segment between two points is uniform (a point mass at the
        first size carries ``prob[0]``)."""
        p, s = self.prob, self.size
        return float(p[0] * s[0] + np.sum(np.diff(p) * (s[:-1] + s[1:]) / 2))

    def sample(self, rng: np.random.Generator, n: int) -> FloatArray:
        """``n`` sizes (one uniform draw each)."""
        u = rng.random(n)
        return np.interp(u, self.prob, self.size)


def load_cdf(spec: str, *, unit: float = 1.0) -> SizeCDF:
    """A shipped distribution by name (:data:`CDFS`) or a CSV file of ``size,cdf`` rows.

    The file's rows are a size and the probability of a size at most that, rising to 1 (a
    last value of 100 is read as percent, as in the HPCC traffic generator's files); lines
    starting with ``#`` and a header row are skipped. ``unit`` multiplies the sizes (the
    shipped ones are bytes). Errors name the file, the line and the value.
    """
    if not isinstance(spec, (str, os.PathLike)):
        raise InputError(f"a size distribution is a name ({', '.join(CDFS)}) or a CSV file, "
                         f"got {spec!r:.60}")
    path = CDFS.get(os.fspath(spec))
    name = os.fspath(spec) if path is not None else Path(spec).name
    path = path or Path(spec)
    try:
        text = read_text(path)
    except InputError as exc:
        known = ", ".join(CDFS)
        raise InputError(f"cannot read the flow-size CDF ({exc.message}); give a file or "
                         f"one of {known}", path=str(path)) from None
    sizes: list[float] = []
    probs: list[float] = []
    for no, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in (row if len(row) > 1 else row[0].split())]
        if len(cells) != 2:
            raise InputError(f"expected two values (size, cumulative probability), got {row!r}",
                             path=str(path), line=no)
        try:
            sz, pr = float(cells[0]), float(cells[1])
        except ValueError:
            if not sizes:
                continue  # a header
            raise InputError(f"not a number in {row!r}", path=str(path), line=no) from None
        if not (math.isfinite(sz) and sz >= 0):
            raise InputError(f"a size must be a finite number >= 0, got {cells[0]}", path=str(path),
                             line=no)
        if sizes and (sz < sizes[-1] or pr < probs[-1]):
            raise InputError(f"sizes and probabilities must not decrease: {cells[0]}, {cells[1]} after "
                             f"{sizes[-1]:g}, {probs[-1]:g}", path=str(path), line=no)
        sizes.append(sz)
        probs.append(pr)
    if len(sizes) < 2:
        raise InputError("a flow-size CDF needs at least two rows", path=str(path))
    p = np.array(probs)
    if p[-1] == 100.0:
        p = p / 100.0
    if p[-1] != 1.0 or p[0] < 0:
        raise InputError(f"the cumulative probabilities must end at 1 (or 100), got {probs[-1]:g}",
                         path=str(path))
    if not (math.isfinite(unit) and unit > 0):
        raise InputError(f"the size unit must be a finite number > 0, got {unit!r}")
    return SizeCDF(np.array(sizes) * unit, p, name)


# --------------------------------------------------------------------------- Poisson flows


@dataclass(frozen=True, slots=True, eq=False)
class PoissonFlows(Frozen):
    """Background flows arriving as a Poisson process between random hosts.

    ``load`` is the offered load on the hosts' uplinks: arrivals come at rate
    ``load * (sum of the hosts' uplink capacities) / cdf.mean`` per time unit, each from
    a host drawn uniformly to another drawn uniformly among the rest, with a size drawn
    from ``cdf`` (in the instance's data units). On an oversubscribed fabric the links
    between switches see more than ``load``. From ``start`` on, for ever: a simulation
    draws arrivals as it reaches them, so no horizon is needed; the draws depend only on
    ``seed`` (in blocks of :data:`BLOCK` arrivals).
    """

    load: float
    cdf: SizeCDF
    seed: int = 0
    start: float = 0.0

    BLOCK = 4096

    def __post_init__(self) -> None:
        if isinstance(self.load, bool) or not (isinstance(self.load, (int, float))
                                               and 0 < self.load < 1):
            raise InputError(f"the background load must be a number above 0 and below 1, got "
                             f"{value_text(self.load)}: at 1 or more the flows alone exceed the "
                             "hosts' uplinks, and their number grows without end")
        if not isinstance(self.cdf, SizeCDF):
            raise InputError(f"cdf must be a SizeCDF (load_cdf('web-search'), for example), got "
                             f"{type(self.cdf).__name__}")
        if not natural_number(self.seed):
            raise InputError(f"the background seed must be an integer >= 0, got {self.seed!r}")
        if isinstance(self.start, bool) or not (isinstance(self.start, (int, float))
                                                and 0 <= self.start < math.inf):
            raise InputError(f"the background start must be a finite number >= 0, got "
                             f"{value_text(self.start)}")

    def arrivals(self, hosts: int, uplink_capacity: float
                 ) -> Iterator[tuple[FloatArray, IntArray, IntArray, FloatArray]]:
        """Blocks of (release, src, dst, size), in arrival order, for ever."""
        if hosts < 2:
            raise InputError("background flows need at least two hosts")
        rate = self.load * uplink_capacity / self.cdf.mean
        rng = np.random.default_rng(self.seed)
        t = float(self.start)
        n = self.BLOCK
        while True:
            gaps = rng.exponential(1.0 / rate, n)
            release = t + np.cumsum(gaps)
            t = float(release[-1])
            src = rng.integers(0, hosts, n)
            dst = rng.integers(0, hosts - 1, n)
            dst = dst + (dst >= src)  # uniform among the other hosts
            yield release, src.astype(np.int64), dst.astype(np.int64), self.cdf.sample(rng, n)


# --------------------------------------------------------------------------- the background


def _empty_f() -> FloatArray:
    return np.zeros(0)


def _empty_i() -> IntArray:
    return np.zeros(0, np.int64)


@dataclass(frozen=True, slots=True, eq=False)
class Background(Frozen):
    """What the network carries besides the coflows (see the module docstring).

    Parameters
    ----------
    share
        Fraction of every link's capacity taken at all times, ``0 <= share < 1``.
    times, load
        A piecewise-constant load: ``load`` has one row per interval
        ``[times[i], times[i+1])`` and one column per link (data units per time unit).
    release, src, dst, size
        Listed background flows (hosts are the instance's ports).
    poisson
        Background flows drawn as a Poisson process.
    """

    share: float = 0.0
    times: FloatArray = field(default_factory=_empty_f)
    load: FloatArray = field(default_factory=lambda: np.zeros((0, 0)))
    release: FloatArray = field(default_factory=_empty_f)
    src: IntArray = field(default_factory=_empty_i)
    dst: IntArray = field(default_factory=_empty_i)
    size: FloatArray = field(default_factory=_empty_f)
    poisson: PoissonFlows | None = None

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        share = self.share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not (0 <= share < 1):
            raise InputError(f"the background share must be a number in [0, 1), got {share!r}")
        set_(self, "share", float(share))
        try:
            times = np.asarray(self.times, dtype=np.float64).reshape(-1)
            load = np.asarray(self.load, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"a background load's times and loads must be numbers: {exc}") from None
        if times.size == 0:
            load = load.reshape(0, load.shape[-1] if load.ndim == 2 else 0)
        elif load.ndim != 2 or load.shape[0] != times.size - 1:
            raise InputError(f"a background load needs one row per interval: {times.size} times "
                             f"make {times.size - 1} intervals, got load of shape {load.shape}")
        if not (np.all(np.isfinite(times)) and np.all(np.diff(times) > 0) and np.all(times >= 0)):
            raise InputError("the background load's times must be finite, >= 0 and increasing")
        if not (np.all(np.isfinite(load)) and np.all(load >= 0)):
            raise InputError("a background load must be finite and >= 0")
        set_(self, "times", _readonly(times))
        set_(self, "load", _readonly(load))
        try:
            rel = np.asarray(self.release, dtype=np.float64).reshape(-1)
            sz = np.asarray(self.size, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise InputError(f"background flows' releases and sizes must be numbers: {exc}") from None
        s = np.asarray(self.src).reshape(-1)
        d = np.asarray(self.dst).reshape(-1)
        if not (rel.size == s.size == d.size == sz.size):
            raise InputError("background flows need one release, source, destination and size each")
        if s.size and not (np.issubdtype(s.dtype, np.integer) and np.issubdtype(d.dtype, np.integer)):
            raise InputError("background flows' hosts must be integers")
        if not (np.all(np.isfinite(rel)) and np.all(rel >= 0) and np.all(np.isfinite(sz))
                and np.all(sz >= TINY)):
            raise InputError(f"background flows need finite releases >= 0 and finite sizes of at "
                             f"least {TINY:.3g} (the smallest normal float)")
        order = np.argsort(rel, kind="stable")
        set_(self, "release", _readonly(rel[order]))
        set_(self, "src", _readonly(s.astype(np.int64)[order]))
        set_(self, "dst", _readonly(d.astype(np.int64)[order]))
        set_(self, "size", _readonly(sz[order]))
        if self.poisson is not None and not isinstance(self.poisson, PoissonFlows):
            raise InputError(f"poisson must be PoissonFlows, got {type(self.poisson).__name__}")
        if self.poisson is not None and (why := _overloaded(self.share, self.poisson.load)):
            raise InputError(why)

    @property
    def has_flows(self) -> bool:
        return bool(self.release.size or self.poisson is not None)

    @property
    def is_empty(self) -> bool:
        return self.share == 0 and self.times.size == 0 and not self.has_flows

    def check(self, capacity: FloatArray, num_hosts: int, fabric: Any = None) -> None:
        """Refuse a background that does not fit the fabric (links, hosts, capacities); with
        ``fabric`` (the instance's), also Poisson flows it cannot carry
        (:func:`poisson_overload`, or a pair of hosts it does not join) and background flows
        on ``given`` routes, which name paths for the instance's flows only."""
        L = capacity.size
        if self.times.size:
            if self.load.shape[1] != L:
                raise InputError(f"the background load has {self.load.shape[1]} links, the fabric {L}")
            total = self.load + self.share * capacity
            over = np.argwhere(total >= capacity)
            if over.size:
                i, link = (int(x) for x in over[0])
                raise InputError(
                    f"the background load on link {link} during [{self.times[i]:g}, "
                    f"{self.times[i + 1]:g}) is {total[i, link]:g}, not below its capacity "
                    f"{capacity[link]:g}")
        for name, hosts in (("source", self.src), ("destination", self.dst)):
            bad = np.flatnonzero((hosts < 0) | (hosts >= num_hosts))
            if bad.size:
                raise InputError(f"background flow {int(bad[0])}: {name} host {int(hosts[bad[0]])} "
                                 f"does not exist (hosts 0..{num_hosts - 1})")
        if fabric is None:
            return
        from .network import Network

        if self.src.size and isinstance(fabric, Network):  # listed flows: joined hosts
            pairs = np.unique(np.column_stack([self.src, self.dst]), axis=0)
            try:
                Network(fabric.topology, "spray").routes(pairs[:, 0], pairs[:, 1])
            except InstanceError as exc:
                raise InputError("a background flow runs between hosts the fabric does not "
                                 f"join: {exc.message}") from None
        if self.poisson is not None and (why := poisson_overload(fabric, self.share, self.poisson.load)):
            raise InputError(why)
        if self.has_flows and getattr(fabric, "routing", "") == "given":
            raise InputError("background flows follow the fabric's routing, and 'given' names paths "
                             "only for the instance's flows: use routing ecmp or spray")

    def inelastic(self, t: float, capacity: FloatArray) -> FloatArray:
        """The inelastic background load on every link at time ``t``."""
        out = self.share * capacity
        if self.times.size and self.times[0] <= t < self.times[-1]:
            i = int(np.searchsorted(self.times, t, side="right")) - 1
            out = out + self.load[i]
        return out

    def next_change(self, t: float) -> float:
        """The first breakpoint of the piecewise load after ``t`` (``inf``: none)."""
        i = int(np.searchsorted(self.times, t, side="right"))
        return float(self.times[i]) if i < self.times.size else math.inf

    def describe(self) -> str:
        parts = []
        if self.share:
            parts.append(f"{self.share:g} of every link")
        if self.times.size:
            parts.append(f"a load over {self.times.size - 1} intervals")
        if self.release.size:
            parts.append(f"{self.release.size:,} listed flows")
        if self.poisson is not None:
            p = self.poisson
            parts.append(f"Poisson flows at load {p.load:g} ({p.cdf.name or 'CDF'}, seed {p.seed})")
        return ", ".join(parts) or "none"


# --------------------------------------------------------------------------- reading


def _num(obj: Any, where: str, path: str | None, *, lo: float | None = None,
         positive: bool = False, below: float | None = None) -> float:
    """``obj`` as a float: a JSON number, finite, at least ``lo``, above 0 (``positive``:
    at least the smallest normal float) and below ``below`` where given."""
    f = json_float(obj)
    v = math.nan if f is None else f
    ok = (f is not None and (lo is None or v >= lo) and (not positive or v >= TINY)
          and (below is None or v < below))
    if not ok:
        need = "a finite number"
        if lo is not None:
            need += f" >= {lo:g}"
        if positive:
            need += f" of at least {TINY:.3g}, the smallest normal float" if 0 < v < TINY else " > 0"
        if below is not None:
            need += f" and below {below:g}"

        raise InputError(f"expected {need}, got {value_text(obj)}", path=path, json_path=where)
    return v


def background_from_json(obj: Any, capacity: FloatArray, link_names: Sequence[str], *,
                         path: str | None = None, where: str = "$",
                         num_hosts: int | None = None) -> Background:
    """A background from its JSON object (errors name ``path`` and the JSON path; with
    ``num_hosts``, a flow's host that the fabric does not have is one of them).

    ``{"share": 0.1, "load": {"times": [0, 5, 9], "links": {"3": [1e8, 0], "link leaf0->spine1":
    [2e7, 2e7]}}, "flows": [[release, src, dst, size], ...], "poisson": {"load": 0.3, "cdf":
    "web-search", "seed": 1, "unit": 1}}``, every key optional. A link is its index or its
    name as coflowopt prints it (``link_names``).
    """
    if not isinstance(obj, Mapping):
        raise InputError(f"a background must be an object, got {type(obj).__name__}", path=path,
                         json_path=where)
    known = {"share", "load", "flows", "poisson"}
    for key in obj:
        if key not in known:
            raise InputError(f"unknown key {key!r} (known: {', '.join(sorted(known))})", path=path,
                             json_path=f"{where}.{key}")
    share = _num(obj.get("share", 0.0), f"{where}.share", path, lo=0.0)
    if share >= 1:
        raise InputError(f"the share must be below 1, got {share:g}", path=path, json_path=f"{where}.share")
    L = capacity.size
    times = np.zeros(0)
    load = np.zeros((0, L))
    if "load" in obj:
        spec = obj["load"]
        w = f"{where}.load"
        if not isinstance(spec, Mapping) or set(spec) - {"times", "links"} or "times" not in spec:
            raise InputError('a load is {"times": [...], "links": {link: [...]}}', path=path, json_path=w)
        ts = spec["times"]
        if not isinstance(ts, list) or len(ts) < 2:
            raise InputError("times must be a list of at least two numbers", path=path,
                             json_path=f"{w}.times")
        times = np.array([_num(x, f"{w}.times[{i}]", path, lo=0.0) for i, x in enumerate(ts)])
        bad = np.flatnonzero(np.diff(times) <= 0)
        if bad.size:
            i = int(bad[0]) + 1
            raise InputError(f"times must increase: {times[i]:g} after {times[i - 1]:g}", path=path,
                             json_path=f"{w}.times[{i}]")
        load = np.zeros((times.size - 1, L))
        links = spec.get("links", {})
        if not isinstance(links, Mapping):
            raise InputError("links must be an object of link: [load per interval]", path=path,
                             json_path=f"{w}.links")
        index = {name: i for i, name in enumerate(link_names)}
        named: dict[int, str] = {}
        for key, values in links.items():
            lw = f"{w}.links[{key!r}]"
            link = index.get(key, index.get(f"link {key}"))
            if link is None:
                try:
                    link = int(key)
                except ValueError:
                    link = -1
                if not 0 <= link < L:
                    raise InputError(f"no link {key!r} (links 0..{L - 1} or their names, e.g. "
                                     f"{link_names[0]!r})", path=path, json_path=lw)
            if link in named:  # by its index and by its name: the later one silently won
                raise InputError(f"link {key!r} is {named[link]!r} again (link {link})", path=path,
                                 json_path=lw)
            named[link] = key
            if not isinstance(values, list) or len(values) != times.size - 1:
                raise InputError(f"expected {times.size - 1} loads (one per interval), got {values!r:.60}",
                                 path=path, json_path=lw)
            for i, x in enumerate(values):
                v = _num(x, f"{lw}[{i}]", path, lo=0.0)
                if v + share * capacity[link] >= capacity[link]:
                    raise InputError(f"the background on this link would be {v + share * capacity[link]:g}, "
                                     f"not below its capacity {capacity[link]:g}", path=path,
                                     json_path=f"{lw}[{i}]")
                load[i, link] = v
    rel: list[float] = []
    src: list[int] = []
    dst: list[int] = []
    size: list[float] = []
    flows = obj.get("flows", [])
    if not isinstance(flows, list):
        raise InputError("flows must be a list of [release, src, dst, size]", path=path,
                         json_path=f"{where}.flows")
    for i, row in enumerate(flows):
        fw = f"{where}.flows[{i}]"
        if not isinstance(row, list) or len(row) != 4:
            raise InputError(f"a flow is [release, src, dst, size], got {row!r:.60}", path=path, json_path=fw)
        rel.append(_num(row[0], f"{fw}[0]", path, lo=0.0))
        for j, into in ((1, src), (2, dst)):
            h = row[j]
            if isinstance(h, bool) or not isinstance(h, int) or h < 0:
                raise InputError(f"a host is an integer >= 0, got {h!r:.60}", path=path,
                                 json_path=f"{fw}[{j}]")
            if num_hosts is not None and h >= num_hosts:
                raise InputError(f"host {h} does not exist (hosts 0..{num_hosts - 1})", path=path,
                                 json_path=f"{fw}[{j}]")
            into.append(h)
        size.append(_num(row[3], f"{fw}[3]", path, positive=True))
    poisson = None
    if "poisson" in obj:
        p = obj["poisson"]
        pw = f"{where}.poisson"
        if not isinstance(p, Mapping) or "load" not in p or set(p) - {"load", "cdf", "seed", "unit", "start"}:
            raise InputError('poisson is {"load": x, "cdf": name or file, "seed": n, "unit": u}', path=path,
                             json_path=pw)
        seed = p.get("seed", 0)
        if not natural_number(seed):
            raise InputError(f"a seed is an integer >= 0, got {seed!r:.60}", path=path,
                             json_path=f"{pw}.seed")
        cdf_name = p.get("cdf", "web-search")
        if not isinstance(cdf_name, str):
            raise InputError(f"cdf is a name ({', '.join(CDFS)}) or a file, got {cdf_name!r:.60}",
                             path=path, json_path=f"{pw}.cdf")
        if cdf_name not in CDFS and path is not None and not Path(cdf_name).is_absolute():
            cdf_name = str(Path(path).parent / cdf_name)  # relative to the file
        unit = _num(p.get("unit", 1.0), f"{pw}.unit", path, positive=True)
        load_ = _num(p["load"], f"{pw}.load", path, positive=True, below=1.0)
        start = _num(p.get("start", 0.0), f"{pw}.start", path, lo=0.0)
        try:
            cdf = load_cdf(cdf_name, unit=unit)
        except InputError as exc:  # a CDF file of its own: name where the background names it
            raise InputError(str(exc), path=path, json_path=f"{pw}.cdf") from None
        poisson = PoissonFlows(load_, cdf, seed, start)
        if why := _overloaded(share, load_):
            raise InputError(why, path=path, json_path=f"{pw}.load")
    return Background(share, times, load, np.array(rel), np.array(src, np.int64),
                      np.array(dst, np.int64), np.array(size), poisson)


def _overloaded(share: float, load: float) -> str:
    """Why Poisson flows of ``load`` beside a constant ``share`` cannot run ('' if they can):
    the host uplinks keep ``1 - share`` for the flows, which offer ``load`` of them; at or
    above it they arrive faster than they can leave and pile up without end."""
    if share + load < 1:
        return ""
    return (f"the Poisson background's load {load:g} and the constant share {share:g} add up "
            f"to {share + load:g}, not below 1: the host uplinks could not carry the background "
            "flows, which would pile up without end")


MAX_ENUMERATED = 400
"""The most hosts of a graph fabric on which :func:`poisson_overload` enumerates the host
pairs (about 160,000 routes); beyond it a graph is not checked."""


def poisson_routes(fabric: Any, src: npt.ArrayLike, dst: npt.ArrayLike, **kwargs: Any) -> Any:
    """``fabric.routes(src, dst, **kwargs)`` of Poisson background flows: a pair of hosts
    the fabric does not join (a graph may not) is an :class:`InputError` saying that the
    background, not the instance, needs it."""
    try:
        return fabric.routes(src, dst, **kwargs)
    except InstanceError as exc:
        raise InputError(f"the background's Poisson flows run between any two hosts, and the "
                         f"fabric does not join every pair: {exc.message}") from None


def poisson_overload(fabric: Any, share: float, load: float) -> str:
    """Why Poisson flows of ``load`` cannot run on ``fabric`` beside a constant ``share``
    ('' if they can, or if the fabric is a graph too large to check).

    The flows offer every link an expected load: arrivals at ``load`` times the hosts'
    uplink capacity ``U``, each from a host drawn uniformly to another (each ordered pair
    with probability ``1 / (H (H - 1))``), ECMP hashing a pair's flows evenly over its
    equal-cost paths in expectation, as spray splits them. Where that expectation reaches
    what the share leaves of a link, background flows arrive faster than the link can
    carry them and pile up without end: on an oversubscribed fabric that happens at loads
    the host links carry (10:1 spine-leaf with one host a leaf and four spines: any load
    of 0.1 or more). Closed forms by symmetry on the big switch (``load U / H`` on every
    port), spine-leaf (a leaf-spine link carries ``load r h (H - h) / ((H - 1) S)``) and
    fat-tree (an edge-aggregation link ``load r (H - k/2) / (H - 1)``, more than an
    aggregation-core link); the routes of every pair on a graph of at most
    :data:`MAX_ENUMERATED` hosts.
    """
    from ..instance import Fabric
    from .network import Network
    from .topology import FatTree, SpineLeaf

    left = 1.0 - share
    if isinstance(fabric, Fabric):
        H = fabric.num_ports
        offered = load * float(np.sum(fabric.ingress)) / H
        cap = float(min(np.min(fabric.ingress), np.min(fabric.egress)))
        where = "a port"
    elif isinstance(fabric, Network) and isinstance(fabric.topology, SpineLeaf):
        t = fabric.topology
        H, h = t.num_hosts, t.hosts_per_leaf
        if H == h:
            return ""  # one leaf: the host links carry it (load + share < 1)
        offered = load * t.host_rate * h * (H - h) / ((H - 1) * t.spines)
        cap, where = t.spine_rate, "a leaf-spine link"
    elif isinstance(fabric, Network) and isinstance(fabric.topology, FatTree):
        ft = fabric.topology
        H = ft.num_hosts
        offered = load * ft.host_rate * (H - ft.k // 2) / (H - 1)
        cap, where = float(ft.link_rate or ft.host_rate), "an edge-aggregation link"
    elif isinstance(fabric, Network) and fabric.topology.num_hosts <= MAX_ENUMERATED:
        H = fabric.topology.num_hosts
        src = np.repeat(np.arange(H), H - 1)
        dst = np.concatenate([np.delete(np.arange(H), i) for i in range(H)])
        routes = poisson_routes(Network(fabric.topology, "spray"), src, dst)
        per_link = (load * float(np.sum(fabric.ingress)) / (H * (H - 1))
                    * np.asarray(routes.sum(axis=0)).ravel())
        ratio = per_link / (left * np.asarray(fabric.capacity, dtype=np.float64))
        worst = int(np.argmax(ratio))
        if ratio[worst] < 1:
            return ""
        offered, cap = float(per_link[worst]), float(fabric.capacity[worst])
        where = fabric.link_name(worst)
    else:
        return ""
    if offered < left * cap:
        return ""
    return (f"the Poisson background at load {load:g} offers {where} {offered:.4g} per time unit "
            f"on average, not below the {left * cap:.4g} that the share {share:g} leaves of "
            f"its capacity {cap:.4g}: background flows would arrive faster than it carries them "
            "and pile up without end (lower the load: this fabric carries below "
            f"{load * left * cap / offered:.3g})")


def parse_background(text: str, capacity: FloatArray, link_names: Sequence[str], *,
                     num_hosts: int | None = None) -> Background:
    """A background from the command line.

    ``share:0.3`` (a constant share of every link); ``poisson:load=0.3,cdf=web-search,seed=1
    [,unit=1][,start=0]`` (flows, arriving from ``start`` on; ``cdf`` a shipped name or a CSV
    file); ``file:PATH`` (the JSON object
    of :func:`background_from_json`, its flows' hosts checked against ``num_hosts``).
    Every error names the option and the spec's kind.
    """
    if not isinstance(text, str):
        raise InputError(f"--background: a text such as 'share:0.3', got {text!r:.60}")
    try:
        return _parse_background(text, capacity, link_names, num_hosts)
    except CoflowoptError as exc:
        if str(exc).startswith("--background"):
            raise
        raise InputError(f"--background {text.partition(':')[0].strip()}: {exc}") from None


def _parse_background(text: str, capacity: FloatArray, link_names: Sequence[str],
                      num_hosts: int | None) -> Background:
    kind, _, rest = text.partition(":")
    kind = kind.strip()
    if kind == "share":
        try:
            share = float(rest)
        except ValueError:
            raise InputError(f"--background share:X needs a number, got {rest!r}") from None
        return Background(share=share)
    if kind == "file":
        return background_from_json(parse_json(read_text(rest), rest), capacity, link_names,
                                    path=rest, num_hosts=num_hosts)
    if kind == "poisson":
        opts: dict[str, str] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq or key not in ("load", "cdf", "seed", "unit", "start"):
                raise InputError(f"--background poisson: unknown option {part!r} "
                                 "(load=, cdf=, seed=, unit=, start=)")
            if key in opts:
                raise InputError(f"--background poisson: {key} is given twice")
            opts[key] = value
        if "load" not in opts:
            raise InputError("--background poisson: needs load=X (the offered load on host uplinks)")
        def number(key: str, default: str, kind: type[float] | type[int] = float) -> Any:
            text = opts.get(key, default)
            try:
                return kind(text)
            except ValueError:
                what = "an integer" if kind is int else "a number"
                raise InputError(f"--background poisson: {key} must be {what}, got {text!r}") from None

        load, seed = number("load", ""), number("seed", "0", int)
        unit, start = number("unit", "1"), number("start", "0")
        return Background(poisson=PoissonFlows(load, load_cdf(opts.get("cdf", "web-search"), unit=unit),
                                               seed, start))
    raise InputError(f"--background must be share:X, poisson:load=X,... or file:PATH; got {text!r}")


# --------------------------------------------------------------------------- coflows -> background


def coflows_to_background(instance: Any, share: float, seed: int = 0, *,
                          by: str = "bytes") -> tuple[Any, Background]:
    """Turn a share of an instance's traffic into background flows, as Coflourish builds its
    background (§II: "removing their coflow related attributes").

    Coflows are taken in a random order (``seed``): ``by="bytes"``, while the bytes taken
    stay below ``share`` of the total; ``by="coflows"``, the first ``round(share * K)`` of
    the ``K`` coflows. Their flows become background flows released when they were (coflow
    release plus delay). Returns the instance of the remaining coflows and the background.
    A share of 0 takes nothing.

    Which one the paper means is not said. Both keep the remaining coflows a random
    sample of the workload; with the Facebook trace's heavy tail (a few coflows carry
    most of the bytes) the bytes taken by either can be far from ``share`` on a few
    dozen coflows.
    """
    if not (finite_number(share) and 0 <= share < 1):
        raise InputError(f"the share of coflows turned into background must be a number in "
                         f"[0, 1), got {share!r}")
    if not natural_number(seed):
        raise InputError(f"the seed must be an integer >= 0, got {seed!r}")
    if not isinstance(instance, Instance):
        raise InputError(f"the instance must be an Instance, got {type(instance).__name__}")
    if by not in ("bytes", "coflows"):
        raise InputError(f"by must be 'bytes' or 'coflows', got {by!r}")
    K = instance.num_coflows
    sizes = np.asarray(instance.size, dtype=np.float64)
    order = np.random.default_rng(seed).permutation(K)
    if by == "coflows":
        n = round(share * K)
    else:
        taken_bytes = np.cumsum(sizes[order])
        n = int(np.searchsorted(taken_bytes, share * float(sizes.sum()), side="right"))
    taken = np.sort(order[:n])
    keep = np.setdiff1d(np.arange(K), taken)
    if keep.size == 0:
        raise InputError("turning that share into background leaves no coflow")
    ptr = instance.ptr
    flows = np.concatenate([np.arange(ptr[k], ptr[k + 1]) for k in taken]) if n else _empty_i()
    bg = Background(release=instance.flow_release[flows], src=instance.flow_src[flows],
                    dst=instance.flow_dst[flows], size=instance.flow_size[flows])
    return instance.subset(keep.tolist()), bg
