"""Workloads of two evaluations on multi-hop fabrics, built from the Facebook trace.

:func:`creek` makes the many-to-many coflows of the Creek paper's simulation (§V-B):
the trace's coflows replayed, each reshaped into a TPC-DS query-42-like or an
FB-Tao-like pattern. :func:`coflourish` makes the Regular and Large loads of the
Coflourish paper (§II, §IV-A): coflows drawn from the trace's distribution, plus large
coflows of 25 MB to 1 GB, arriving as a Poisson process.

Both make coflows between *hosts*: a flow's ``src`` and ``dst`` are host indices, the
ports of a big switch of ``num_hosts`` ports, so an instance runs on the big switch as
it is and on any fabric whose hosts are numbered ``0 .. num_hosts - 1``. Both take
what the papers take from the trace from the trace itself (an
:class:`~coflowopt.Instance`, by default :func:`facebook_trace`): its coflows' arrival
times, bytes, numbers of senders and receivers (the trace's ports are racks; each
becomes one host) and the bytes of each receiver. Both are seeded and reproducible bit
for bit; ``load`` is the offered load the arrivals realise, as everywhere in
:mod:`coflowopt.io.generate`. Sizes are bytes, ``MB`` = 2^20, ``GB`` = 2^30, ``TB`` =
2^40 (the trace's unit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..errors import InputError, InstanceError
from ..instance import MB, TINY, Coflow, Fabric, Instance
from .benchmark import MAX_PORTS
from .generate import _check_load, _needs_two, _retimed, poisson_arrivals, rescale_load

__all__ = [
    "COFLOURISH_MIXES",
    "CREEK_PATTERNS",
    "CREEK_SIZE_GROUPS",
    "FB2010_TRACE",
    "TAO_HIT_RATE",
    "TPCDS_TABLES",
    "coflourish",
    "creek",
    "creek_groups",
    "facebook_trace",
    "fb2010_trace_path",
    "trace_rate",
]

GB = 1024 * MB
TB = 1024 * GB

FB2010_NAME = Path("instances") / "fb2010" / "FB2010-1Hr-150-0.txt"
FB2010_TRACE = Path(__file__).resolve().parents[2] / FB2010_NAME
"""The bundled Facebook trace in the source checkout this module comes from."""


def fb2010_trace_path() -> Path:
    """Where the bundled Facebook trace is: beside this module's source checkout (an
    editable install, or the source tree itself), else under the current directory (an
    installed copy run from the checkout, as the README's commands are)."""
    for path in (FB2010_TRACE, Path.cwd() / FB2010_NAME):
        if path.is_file():
            return path
    raise InputError(
        f"the bundled Facebook trace is not at {FB2010_TRACE} nor at ./{FB2010_NAME.as_posix()} "
        "(it comes with a source checkout: run from there, or name the trace's file: --trace "
        "FILE; in a sweep, file = ...)")


def facebook_trace() -> Instance:
    """The bundled Facebook trace: 526 coflows on 150 racks over one hour (1 Gbit/s ports)."""
    from .benchmark import read

    return read(fb2010_trace_path())


def trace_rate(trace: Instance) -> float:
    """A trace's mean arrival rate: its coflows less one over the span of their arrivals."""
    span = float(trace.release.max() - trace.release.min()) if trace.num_coflows else 0.0
    if trace.num_coflows < 2 or not span > 0:
        raise InstanceError("the trace's coflows all arrive at once: it has no arrival rate "
                            "(give a rate or a load)")
    return (trace.num_coflows - 1) / span


# --------------------------------------------------------------------------- Creek

CREEK_PATTERNS = ("tpcds", "tao")
"""The many-to-many patterns of the Creek paper's simulation (§V-B)."""

TPCDS_TABLES: tuple[tuple[str, int], ...] = (
    ("store_sales", 2_880_404), ("date_dim", 73_049), ("item", 18_000))
"""The three tables TPC-DS query 42 scans and joins, with their rows at scale factor 1
(the TPC-DS specification): a ``tpcds`` coflow's three sender groups carry its bytes in
these proportions."""

TPCDS_ROWS: tuple[float, ...] = tuple(float(t[1]) for t in TPCDS_TABLES)

TAO_HIT_RATE = 0.964
"""The share of reads TAO's followers serve from their cache (the TAO paper, Bronson et
al., USENIX ATC 2013): a ``tao`` coflow's followers fetch the rest from their leader."""

CREEK_SIZE_GROUPS: tuple[tuple[str, float, float], ...] = (
    ("I", 6 * MB, GB), ("II", GB, 10 * GB), ("III", 10 * GB, 100 * GB),
    ("IV", 100 * GB, TB), ("V", TB, math.inf))
"""The Creek paper's five groups of many-to-many coflows by total bytes (its Table 2),
each ``[lo, hi)``."""


def creek_groups(instance: Instance) -> npt.NDArray[np.str_]:
    """Each coflow's group of :data:`CREEK_SIZE_GROUPS` by its total bytes (``""`` below 6 MB)."""
    labels = np.full(instance.num_coflows, "", dtype="<U3")
    for label, lo, hi in CREEK_SIZE_GROUPS:
        labels[(instance.size >= lo) & (instance.size < hi)] = label
    return labels


def creek(
    pattern: str = "tpcds",
    *,
    trace: Instance | None = None,
    num_coflows: int | None = None,
    num_hosts: int = 3456,
    host_rate: float = 1.25e9,
    min_size: float = 6 * MB,
    receivers: tuple[int, int | None] = (2, None),
    senders: tuple[int, int | None] = (2, None),
    fanin: tuple[int, int] = (2, 5),
    miss_ratio: float = 1 - TAO_HIT_RATE,
    tables: Sequence[float] = TPCDS_ROWS,
    load: float | None = None,
    seed: int | None = 0,
    name: str = "",
) -> Instance:
    """Many-to-many coflows as the Creek paper's simulation makes them (§V-B).

    Creek replays the trace's coflows on a k = 24 fat-tree (3,456 hosts, 10 Gbit/s
    links: ``num_hosts``, ``host_rate``), reshaping each into a many-to-many coflow
    after TPC-DS query 42 or Facebook's TAO; its Table 2 groups the results by total
    bytes from 6 MB to over 1 TB (:data:`CREEK_SIZE_GROUPS`). The paper gives no more;
    what follows are our choices.

    Each of the trace's coflows, in arrival order (the first ``num_coflows``; default
    all), becomes one coflow with its id, its arrival time (the arrival process is the
    trace's; ``load`` rescales the gaps to a realised offered load, keeping their order
    and proportions) and its bytes, raised to ``min_size`` (Table 2 starts at 6 MB).
    It has as many receivers and senders as the trace coflow has reducer and mapper
    racks, brought into ``receivers`` and ``senders`` (``(lo, hi)``, ``hi=None`` for
    no cap; by default at least 2 each, since a coflow of one receiver is not
    many-to-many; ``lo=1`` allows such coflows). Its
    receivers take its bytes in the proportions of the trace coflow's reducers
    (cycled when there are more receivers than reducers). Every role of a coflow is on
    its own host, drawn uniformly without replacement.

    ``pattern="tpcds"``: the first stage of TPC-DS query 42 as the Aalo paper draws it
    (three input coflows that share one coflow id), read as one coflow: the shuffles of
    the three scanned tables into the join's tasks. The senders form one group per
    table (``tables``: the tables' shares, by default their rows,
    :data:`TPCDS_TABLES`; at least one sender each, the rest in proportion); every
    receiver is fed by every sender (a hash-partitioned join: the
    receivers share all senders), each group carrying its table's share of every
    receiver's bytes, equally over its senders.

    ``pattern="tao"``: a TAO read fan-out, the four tiers of Creek's Figure 4 (web
    server, cache follower, cache leader, database): the receivers are web servers,
    the senders a pool of followers (one per shard). Each web server reads its bytes
    equally from ``fanin`` followers (a number drawn uniformly in the range, at most
    the pool; the default 2 to 5 is Creek's testbed, §V-A, whose receivers are fed by
    2 to 5 flows) drawn uniformly from the pool, so web servers share some followers.
    A follower that serves ``T`` bytes fetches ``miss_ratio * T`` from its own leader
    (by default TAO's 3.6% miss rate, :data:`TAO_HIT_RATE`), and the leader
    ``miss_ratio**2 * T`` from its database (the same rate at the leaders is our
    choice); ``miss_ratio=0`` leaves two tiers. The coflow's bytes are its total.
    """
    if pattern not in CREEK_PATTERNS:
        raise InstanceError(f"pattern must be one of {', '.join(CREEK_PATTERNS)}, got {pattern!r}")
    trace = facebook_trace() if trace is None else trace
    n = _count(num_coflows, trace)
    _check_hosts(num_hosts, host_rate)
    if not (math.isfinite(min_size) and min_size >= 0 and math.isfinite(min_size * n)):
        # (the instance's total, every coflow raised to it, must be a float64 too)
        raise InstanceError(f"min_size must be finite and >= 0, and {n} coflows of it must "
                            f"sum to a finite number of bytes, got {min_size!r}")
    r_lo, r_hi = _range(receivers, "receivers")
    s_lo, s_hi = _range(senders, "senders")
    f_lo, f_hi = _range(fanin, "fanin")
    if f_hi is None:
        raise InstanceError(f"fanin range needs an upper end, got {fanin!r}")
    if not (0 <= miss_ratio < 1):
        raise InstanceError(f"miss_ratio must be in [0, 1), got {miss_ratio!r}")
    share = np.asarray(tables, dtype=float)
    if share.ndim != 1 or share.size == 0 or not np.all(np.isfinite(share) & (share > 0)):
        raise InstanceError(f"tables must be one or more finite shares > 0, got {tables!r}")
    if pattern == "tpcds":
        s_lo = max(s_lo, share.size)  # one sender per table at least
        if s_hi is not None and s_hi < s_lo:
            raise InstanceError(f"a tpcds coflow needs at least {share.size} senders (one per "
                                f"table), but senders are capped at {s_hi}")
    if load is not None:
        _check_load(load)
        _needs_two(n, "coflows")
    rng = np.random.default_rng(seed)
    coflows = []
    for k in np.argsort(trace.release, kind="stable")[:n]:
        fl = trace.flows_of(int(k))
        ports, into = np.unique(trace.flow_dst[fl], return_inverse=True)
        reducer_bytes = np.bincount(into, weights=trace.flow_size[fl])
        n_r = _clip(ports.size, r_lo, r_hi)
        n_s = _clip(np.unique(trace.flow_src[fl]).size, s_lo, s_hi)
        total = max(float(trace.size[k]), float(min_size))
        part = reducer_bytes[np.arange(n_r) % reducer_bytes.size]
        received = total * (part / part.sum())
        cid = trace.ids[k]
        if pattern == "tpcds":
            src, dst, sizes = _tpcds(rng, received, n_s, share / share.sum(), num_hosts, cid)
        else:
            src, dst, sizes = _tao(rng, received, n_s, (f_lo, f_hi), miss_ratio, num_hosts, cid)
        sizes = _at_least(sizes, float(min_size))
        if sizes.min() < TINY:
            raise InstanceError(f"coflow '{cid}': its {total!r} bytes over {sizes.size} flows "
                                "leave flows below the smallest normal float")
        coflows.append(Coflow(cid, src, dst, sizes, release=float(trace.release[k])))
    inst = Instance(Fabric.uniform(num_hosts, host_rate), tuple(coflows),
                    name=name or f"creek-{pattern}-{seed}")
    return inst if load is None else rescale_load(inst, load)


def _tpcds(rng: np.random.Generator, received: np.ndarray, n_s: int, share: np.ndarray,
           num_hosts: int, cid: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every sender to every receiver; sender groups carry their table's ``share``."""
    n_r = received.size
    hosts = _hosts(rng, num_hosts, n_s + n_r, cid, f"{n_s} senders and {n_r} receivers")
    per_table = _apportion(n_s, share)
    sender_share = np.repeat(share / per_table, per_table)
    # listed receiver by receiver, senders in the same order within each
    return (np.tile(hosts[:n_s], n_r), np.repeat(hosts[n_s:], n_s),
            np.outer(received, sender_share).ravel())


def _apportion(total: int, share: np.ndarray) -> np.ndarray:
    """``total`` items over groups: one each, the rest by largest remainder of ``share``."""
    extra = (total - share.size) * share
    counts = np.floor(extra).astype(np.int64)
    left = (total - share.size) - int(counts.sum())
    counts[np.argsort(-(extra - counts), kind="stable")[:left]] += 1
    return counts + 1


def _tao(rng: np.random.Generator, received: np.ndarray, pool: int, fanin: tuple[int, int],
         miss: float, num_hosts: int, cid: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Web servers read from followers; followers' misses go to leaders, theirs to databases."""
    n_r = received.size
    tiers = 3 if miss > 0 else 1
    # the most hosts any draw can need, so that whether a coflow fits does not depend on the seed
    most = n_r + tiers * min(pool, n_r * min(fanin[1], pool))
    reads = np.minimum(rng.integers(fanin[0], fanin[1] + 1, size=n_r), pool)
    picks = [rng.choice(pool, size=int(d), replace=False) for d in reads]
    chosen = np.concatenate(picks)
    used, first = np.unique(chosen, return_index=True)
    order = used[np.argsort(first, kind="stable")]  # followers in the order first read
    rank = np.empty(pool, dtype=np.int64)
    rank[order] = np.arange(order.size)
    follower = rank[chosen]
    hosts = _hosts(rng, num_hosts, most, cid,
                   f"{n_r} web servers and up to {(most - n_r) // tiers} shards of {tiers} tiers")
    u = order.size
    web, followers = hosts[:n_r], hosts[n_r:n_r + u]
    reader = np.repeat(np.arange(n_r), reads)
    read = (received / (1.0 + miss + miss * miss))[reader] / reads[reader]
    src: list[np.ndarray] = [followers[follower]]
    dst: list[np.ndarray] = [web[reader]]
    sizes: list[np.ndarray] = [read]
    if miss > 0:
        leaders, databases = hosts[n_r + u:n_r + 2 * u], hosts[n_r + 2 * u:n_r + 3 * u]
        served = np.bincount(follower, weights=read, minlength=u)
        src += [leaders, databases]
        dst += [followers, leaders]
        sizes += [miss * served, miss * miss * served]
    return np.concatenate(src), np.concatenate(dst), np.concatenate(sizes)


# --------------------------------------------------------------------------- Coflourish

COFLOURISH_MIXES = ("regular", "large")
"""The Coflourish paper's two traffic loads (§II): the trace's coflows, or half of them large."""


def coflourish(
    mix: str = "regular",
    *,
    trace: Instance | None = None,
    num_coflows: int = 1000,
    num_hosts: int = 3000,
    host_rate: float = 1.25e8,
    large_share: float | None = None,
    large_size: tuple[float, float] = (25 * MB, 1024 * MB),
    rate: float | None = None,
    load: float | None = None,
    seed: int | None = 0,
    name: str = "",
) -> Instance:
    """The Regular and Large loads of the Coflourish paper (§II, §IV-A).

    The paper's simulation has 1,000 coflows (``num_coflows``) arriving as a Poisson
    process among 3,000 hosts (``num_hosts``, 50 per leaf at 10:1 oversubscription:
    the fabric's business). *Regular* coflows follow "the Facebook traffic
    distribution used in Varys": each is one of the trace's coflows drawn uniformly
    with replacement, so sizes, widths and their correlation are the trace's
    empirical ones, with each of its mapper racks on a host and each of its reducer
    racks on another, drawn uniformly without replacement (a host may both send and
    receive, as a rack does in the trace). *Large* coflows have a size uniform in
    ``large_size`` (25 MB to 1 GB) and the structure of one of the trace's coflows of
    that size range, drawn uniformly, its bytes scaled to the size.

    ``mix="regular"``: no large coflows. ``mix="large"``: a share ``large_share`` of
    the coflows is large (default 0.5; §IV-C also runs 0.25 and 0.75), at positions
    drawn uniformly. The paper's "50% traffic" is read as half the coflows, as §IV
    words it ("percentage of large coflows", "25%, 50%, and 75% large coflows"): half
    the bytes in expectation would leave about 8 regular coflows in 1,000, whose share
    of the bytes the trace's heavy tail spreads from 0.04% to 85% (5th to 95th
    percentile; median 4%), far from half.

    The paper does not give its arrival rate: by default it is the trace's
    (:func:`trace_rate`, about 0.145 coflows per second), so that 1,000 coflows span
    about 1.9 hours; ``rate`` sets another (coflows per time unit), ``load`` instead
    the offered load the arrivals realise (as :func:`coflowopt.io.generate.poisson_arrivals`).
    The first coflow arrives at 0. The paper's host rate is not given either: the
    default 1 Gbit/s is the machines of the trace's cluster (300 Gbit/s of bisection
    for 3,000 machines at 10:1). The paper's background traffic (a weight of the
    generated coflows stripped of their coflow) is the fabric's business too.
    Ids are ``R<k>`` for regular and ``L<k>`` for large coflows.
    """
    if mix not in COFLOURISH_MIXES:
        raise InstanceError(f"mix must be one of {', '.join(COFLOURISH_MIXES)}, got {mix!r}")
    if mix == "regular" and large_share not in (None, 0):
        raise InstanceError(f"a regular load has no large coflows, got large_share={large_share!r} "
                            "(use mix='large')")
    share = 0.0 if mix == "regular" else 0.5 if large_share is None else large_share
    if not 0 <= share <= 1:
        raise InstanceError(f"large_share must be in [0, 1], got {large_share!r}")
    trace = facebook_trace() if trace is None else trace
    if isinstance(num_coflows, bool) or int(num_coflows) != num_coflows or num_coflows < 1:
        raise InstanceError(f"number of coflows must be a positive integer, got {num_coflows!r}")
    from .generate import MAX_GENERATED

    if num_coflows > MAX_GENERATED:
        raise InstanceError(f"number of coflows must be at most {MAX_GENERATED:,}, got {num_coflows:,}")
    _check_hosts(num_hosts, host_rate)
    lo, hi = large_size
    if not (0 < lo <= hi and math.isfinite(hi)):
        raise InstanceError(f"large_size must be finite with 0 < lo <= hi, got {large_size!r}")
    if rate is not None and load is not None:
        raise InstanceError("give at most one of rate and load")
    if rate is not None and not (math.isfinite(rate) and rate > 0):
        raise InstanceError(f"rate must be finite and > 0, got {rate!r}")
    if load is not None:
        _check_load(load)
    if trace.num_coflows == 0:
        raise InstanceError("the trace has no coflows")
    lam = trace_rate(trace) if rate is None and load is None else rate
    K = int(num_coflows)
    if load is not None:
        _needs_two(K, "coflows")
    n_large = round(share * K)
    fits = np.flatnonzero((trace.size >= lo) & (trace.size <= hi))
    if n_large and fits.size == 0:
        raise InstanceError(f"no coflow of the trace has {lo / MB:g} MB to {hi / MB:g} MB to lend its "
                            "structure to large coflows")
    rng = np.random.default_rng(seed)
    large = np.zeros(K, dtype=bool)
    large[rng.choice(K, size=n_large, replace=False)] = True
    coflows = []
    for k in range(K):
        if large[k]:
            j = int(fits[rng.integers(fits.size)])
            scale = rng.uniform(lo, hi) / float(trace.size[j])
        else:
            j, scale = int(rng.integers(trace.num_coflows)), 1.0
        fl = trace.flows_of(j)
        senders, out = np.unique(trace.flow_src[fl], return_inverse=True)
        receivers, into = np.unique(trace.flow_dst[fl], return_inverse=True)
        src = _hosts(rng, num_hosts, senders.size, trace.ids[j], f"{senders.size} senders")[out]
        dst = _hosts(rng, num_hosts, receivers.size, trace.ids[j], f"{receivers.size} receivers")[into]
        coflows.append(Coflow(f"{'L' if large[k] else 'R'}{k}", src, dst, trace.flow_size[fl] * scale))
    inst = Instance(Fabric.uniform(num_hosts, host_rate), tuple(coflows),
                    name=name or f"coflourish-{mix}-{seed}")
    if load is not None:
        return poisson_arrivals(inst, load, seed=None if seed is None else seed + 1)
    if K == 1:
        return inst
    gaps = rng.exponential(1.0, size=K)
    gaps[0] = 0.0
    with np.errstate(over="ignore"):
        releases = np.cumsum(gaps) / float(lam)  # type: ignore[arg-type]
    return _retimed(inst, releases, f"a rate of {lam!r}")


# --------------------------------------------------------------------------- shared


def _count(num_coflows: int | None, trace: Instance) -> int:
    if trace.num_coflows == 0:
        raise InstanceError("the trace has no coflows")
    if num_coflows is None:
        return trace.num_coflows
    if (isinstance(num_coflows, bool) or int(num_coflows) != num_coflows
            or not 1 <= num_coflows <= trace.num_coflows):
        raise InstanceError(f"number of coflows must be an integer in 1..{trace.num_coflows} "
                            f"(the trace's), got {num_coflows!r}")
    return int(num_coflows)


def _check_hosts(num_hosts: int, host_rate: float) -> None:
    if (isinstance(num_hosts, bool) or int(num_hosts) != num_hosts
            or not 1 <= num_hosts <= MAX_PORTS):
        raise InstanceError(f"number of hosts must be an integer in 1..{MAX_PORTS:,}, got {num_hosts!r}")
    if not (math.isfinite(host_rate) and host_rate >= TINY):
        raise InstanceError(f"host rate must be finite and > 0, got {host_rate!r}")


def _range(pair: tuple[int, int | None], what: str) -> tuple[int, int | None]:
    lo, hi = pair
    for value in (lo, hi):
        if value is not None and (isinstance(value, bool) or int(value) != value or value < 1):
            raise InstanceError(f"{what} range must hold integers >= 1, got {pair!r}")
    if hi is not None and hi < lo:
        raise InstanceError(f"{what} range must satisfy lo <= hi, got {pair!r}")
    return int(lo), None if hi is None else int(hi)


def _clip(value: int, lo: int, hi: int | None) -> int:
    return max(lo, value if hi is None else min(value, hi))


def _at_least(sizes: np.ndarray, total: float) -> np.ndarray:
    """``sizes`` summing (as :class:`Instance` sums them) to at least ``total``: rounding can
    leave a coflow raised to ``total`` a few ulps short."""
    for _ in range(64):
        have = float(np.add.reduceat(sizes, [0])[0])
        if have >= total:
            return sizes
        sizes = sizes * max(total / have, 1.0 + 2.0**-52)
    raise AssertionError(f"flow sizes sum to {have!r}, short of {total!r}")  # pragma: no cover


def _hosts(rng: np.random.Generator, num_hosts: int, count: int, cid: str, what: str) -> np.ndarray:
    """``count`` distinct hosts drawn uniformly, or an error naming the trace coflow."""
    if count > num_hosts:
        raise InstanceError(f"coflow '{cid}' of the trace needs {count} distinct hosts ({what}), "
                            f"but there are {num_hosts}; give more hosts or fewer senders and "
                            "receivers")
    return rng.choice(num_hosts, size=count, replace=False)
