"""The Coflow-Benchmark trace format (coflow/coflow-benchmark, FB2010).

::

    Line 1: <number of ports> <number of coflows>
    Line i: <coflow id> <arrival (ms)> <#mappers> <mapper rack>... <#reducers> <rack>:<MB>...

Racks are numbered from 0. A reducer's megabytes (``MB`` = 2^20 bytes) come
equally from each of the coflow's mappers: one flow per mapper-reducer pair
of size ``MB * 2^20 / #mappers`` bytes. Flows are listed reducer by reducer,
mappers in file order within each. Times become seconds; every port gets
``port_rate`` bytes per second in each direction (default 1 Gbit/s).

The Java simulator of the Varys and Aalo papers (coflowsim) reads the same file
with MB = 2^20 bytes too, but its racks carry 2^30 bits per simulated second of
1,024 ms (``RACK_BITS_PER_SEC`` and ``SIMULATION_SECOND_MILLIS`` in its
``Constants``), which is 2^20 bytes per 8 ms quantum, or
:data:`COFLOWSIM_PORT_RATE` = 131,072,000 bytes per second of the trace's
milliseconds: 4.9% above :data:`DEFAULT_PORT_RATE`. Pass it as ``port_rate``
(``--port-rate 131072000``) to compare with numbers from that simulator, and read
the trace as it does with :func:`loads_coflowsim` (format ``coflowsim``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

import numpy as np

from .._files import read_text
from .._text import brief, plural
from ..errors import InputError, InstanceError
from ..instance import MB, TINY, Coflow, Fabric, Instance
from ._common import (
    NO_COFLOWS,
    atomic_writer,
    check_writable_instance,
    release_ms,
    shortest_decimal,
    text_lines,
    trace_notes,
)

__all__ = ["COFLOWSIM_EPOCH_MS", "COFLOWSIM_PORT_RATE", "DEFAULT_PORT_RATE", "dumps", "loads",
           "loads_coflowsim", "read", "write"]

DEFAULT_PORT_RATE = 1.25e8
"""1 Gbit/s in bytes per second, the rack links of the Varys and Aalo simulations."""

COFLOWSIM_PORT_RATE = 2.0**27 * 1000 / 1024
"""coflowsim's rack rate in bytes per trace second: 2^30 bit per 1,024 ms (131,072,000)."""


MAX_PORTS = 10_000_000
"""The most ports a trace header may announce (the fabric's arrays grow with it)."""


def _plain_number(token: str) -> bool:
    """ASCII without digit separators: what the trace formats write (Python would also
    read ``1_0`` as 10 and other scripts' digits)."""
    return token.isascii() and "_" not in token


_MAX_INT_DIGITS = 18
"""Integers in the trace formats (ports, racks, counts) have at most this many digits; a
longer one is too large for any of them (and Python refuses to read more than 4,300)."""


def _int(token: str, what: str, path: str, line: int, minimum: int = 0) -> int:
    digits = token.lstrip("+-")
    if digits.isascii() and digits.isdigit() and len(digits.lstrip("0")) > _MAX_INT_DIGITS:
        raise InputError(f"{what} is too large, got '{brief(token, 30, 'digits')}'", path=path,
                         line=line)
    try:
        if not _plain_number(token):
            raise ValueError(token)
        value = int(token)
    except ValueError:
        raise InputError(f"{what} must be an integer, got '{brief(token)}'", path=path,
                         line=line) from None
    if value < minimum:
        raise InputError(f"{what} must be >= {minimum}, got {value}", path=path, line=line)
    return value


def _float(token: str, what: str, path: str, line: int) -> float:
    try:
        if not _plain_number(token):
            raise ValueError(token)
        value = float(token)
    except ValueError:
        raise InputError(f"{what} must be a number, got '{brief(token)}'", path=path,
                         line=line) from None
    if not math.isfinite(value):
        raise InputError(f"{what} must be finite, got '{brief(token)}'", path=path, line=line)
    return value


def _header(lines: list[tuple[int, list[str]]], path: str) -> tuple[int, int]:
    if not lines:
        raise InputError("empty file: expected '<ports> <coflows>' on the first line", path=path, line=1)
    number, tokens = lines[0]
    if len(tokens) != 2:
        raise InputError(
            f"expected '<ports> <coflows>' on the first line, got {len(tokens)} fields",
            path=path,
            line=number,
        )
    ports = _int(tokens[0], "number of ports", path, number, minimum=1)
    if ports > MAX_PORTS:
        raise InputError(f"number of ports must be at most {MAX_PORTS:,}, got {ports:,}",
                         path=path, line=number)
    count = _int(tokens[1], "number of coflows", path, number)
    if len(lines) - 1 != count:
        raise InputError(
            f"the header announces {plural(count, 'coflow')} but the file has "
            f"{plural(len(lines) - 1, 'coflow line')}",
            path=path,
            line=number,
        )
    if count == 0:
        raise InputError(NO_COFLOWS, path=path, line=number)
    return ports, count


def _coflow_lines(
    lines: list[tuple[int, list[str]]], path: str, layout: str
) -> Iterator[tuple[int, list[str], str, float]]:
    """Each coflow line of a trace with its id and arrival (ms), checked.

    Shared by the trace formats: at least five fields, unique ids, arrival
    times that are numbers >= 0.
    """
    seen: dict[str, int] = {}
    for number, t in lines[1:]:
        if len(t) < 5:
            raise InputError(f"expected '{layout}', got {len(t)} fields", path=path, line=number)
        cid = t[0]
        if cid in seen:
            raise InputError(
                f"duplicate coflow id '{cid}' (first on line {seen[cid]})", path=path, line=number
            )
        seen[cid] = number
        arrival = _float(t[1], f"arrival time of coflow '{cid}'", path, number)
        if arrival < 0:
            raise InputError(
                f"arrival time of coflow '{cid}' must be >= 0, got {t[1]}", path=path, line=number
            )
        yield number, t, cid, arrival


def _check_bytes(nbytes: float, token: str, what: str, path: str, line: int) -> None:
    """A size read as ``token`` (megabytes) must give a finite, normal number of bytes."""
    if not nbytes < math.inf:
        raise InputError(f"{what} is too large: '{brief(token)}' MB overflows", path=path, line=line)
    if nbytes < TINY:
        raise InputError(f"{what} is too small: '{brief(token)}' MB is below {TINY:.3g} bytes",
                         path=path, line=line)


def _rack(token: str, what: str, ports: int, path: str, line: int) -> int:
    rack = _int(token, what, path, line)
    if rack >= ports:
        raise InputError(f"{what} is {rack}, but the fabric has {plural(ports, 'port')}", path=path,
                         line=line)
    return rack


def _shuffles(
    text: str, path: str
) -> tuple[int, list[tuple[int, str, float, list[int], np.ndarray, np.ndarray]], list]:
    """The ports and each coflow line's ``(line, id, arrival ms, mapper racks, reducer racks,
    reducer MB)``, checked; and the text's lines."""
    lines = list(text_lines(text))
    ports, _ = _header(lines, path)
    out = []
    layout = "<id> <arrival ms> <#mappers> <racks>... <#reducers> <rack:MB>..."
    for number, t, cid, arrival in _coflow_lines(lines, path, layout):
        m = _int(t[2], f"number of mappers of coflow '{cid}'", path, number, minimum=1)
        if len(t) < 4 + m:
            raise InputError(
                f"coflow '{cid}' announces {plural(m, 'mapper')} but the line ends after {len(t) - 3}",
                path=path,
                line=number,
            )
        mappers = [_rack(x, f"mapper rack of coflow '{cid}'", ports, path, number) for x in t[3 : 3 + m]]
        r = _int(t[3 + m], f"number of reducers of coflow '{cid}'", path, number, minimum=1)
        reducer_tokens = t[4 + m :]
        if len(reducer_tokens) != r:
            raise InputError(
                f"coflow '{cid}' announces {plural(r, 'reducer')} but lists {len(reducer_tokens)}",
                path=path,
                line=number,
            )
        racks = np.empty(r, dtype=np.int64)
        mbs = np.empty(r)
        for j, token in enumerate(reducer_tokens):
            rack, sep, mb = token.partition(":")
            if not sep:
                raise InputError(
                    f"reducer {j} of coflow '{cid}' must be '<rack>:<MB>', got '{brief(token)}'",
                    path=path,
                    line=number,
                )
            racks[j] = _rack(rack, f"reducer rack of coflow '{cid}'", ports, path, number)
            what = f"shuffle MB of reducer {j} of coflow '{cid}'"
            mbs[j] = _float(mb, what, path, number)
            if mbs[j] <= 0:
                raise InputError(f"{what} must be > 0, got '{mb}'", path=path, line=number)
            _check_bytes(float(mbs[j]) * MB / m, mb, what, path, number)
        out.append((number, cid, arrival, mappers, racks, mbs))
    return ports, out, lines


def _instance(ports: int, port_rate: float, coflows: list[Coflow], lines: list, path: str) -> Instance:
    try:
        return Instance(Fabric.uniform(ports, port_rate), tuple(coflows), name=os.path.basename(path))
    except InstanceError as exc:  # pragma: no cover - checked above
        line = lines[1 + exc.coflow][0] if exc.coflow is not None else None
        raise InputError(exc.message, path=path, line=line) from None


def _check_rate(port_rate: float, path: str) -> None:
    if not (math.isfinite(port_rate) and port_rate > 0):
        raise InputError(f"port rate must be finite and > 0, got {port_rate!r}", path=path)


def loads(text: str, *, path: str = "<string>", port_rate: float = DEFAULT_PORT_RATE) -> Instance:
    """Parse a Coflow-Benchmark trace."""
    _check_rate(port_rate, path)
    ports, shuffles, lines = _shuffles(text, path)
    coflows = []
    for number, cid, arrival, mappers, racks, mbs in shuffles:
        m = len(mappers)
        src = np.tile(np.array(mappers, dtype=np.int64), racks.size)
        dst = np.repeat(racks, m)
        size = np.repeat(mbs * MB / m, m)
        coflows.append(_coflow(cid, src, dst, size, arrival, path, number))
    return _instance(ports, port_rate, coflows, lines, path)


COFLOWSIM_EPOCH_MS = 10 * 1024
"""coflowsim's admission epoch in trace milliseconds (``10 * SIMULATION_SECOND_MILLIS``)."""


def _round_up_mb(nbytes: float, mb: int) -> float:
    """coflowsim's ``ReduceTask.roundToNearestNMB``: the bytes (as a Java ``long``) rounded up
    to a multiple of ``mb`` megabytes."""
    tmp = int(nbytes)
    mult = mb * int(MB)
    return float(mult * (tmp // mult + (1 if tmp % mult else 0)))


def loads_coflowsim(text: str, *, path: str = "<string>",
                    port_rate: float = DEFAULT_PORT_RATE) -> Instance:
    """Parse a Coflow-Benchmark trace as coflowsim (the Varys/Aalo papers' Java simulator)
    reads it, so that its results can be compared coflow by coflow.

    From its ``CoflowBenchmarkTraceProducer`` and ``Job``: each reducer's bytes are
    rounded up to a whole megabyte; mappers on the same rack become one mapper and
    reducers on the same rack one reducer (bytes summed), racks in increasing order
    (``coalesceMappers``, ``coalesceReducers``); each reducer's bytes are then rounded up to
    a multiple of the number of mappers in megabytes, and it gets one flow of
    ``bytes / #mappers`` (at least 1 MB) from each mapper (``createFlows``). Its simulator
    admits a coflow at the start of the 10.24 s epoch whose end is at or after its arrival
    (``Simulator.simulate``: up to an epoch *before* it arrives) and measures its CCT from
    there; the release here is that admission time. Use ``port_rate`` =
    :data:`COFLOWSIM_PORT_RATE` for coflowsim's rack rate.
    """
    _check_rate(port_rate, path)
    ports, shuffles, lines = _shuffles(text, path)
    coflows = []
    for number, cid, arrival, mappers, racks, mbs in shuffles:
        maps = np.unique(np.asarray(mappers, np.int64))
        per_rack: dict[int, float] = {}
        for rack, mb in zip(racks.tolist(), mbs.tolist(), strict=True):
            per_rack[rack] = per_rack.get(rack, 0.0) + _round_up_mb(mb * MB, 1)
        reds = np.array(sorted(per_rack), np.int64)
        m = maps.size
        flow = np.array([max(_round_up_mb(per_rack[r], m) / m, float(MB)) for r in reds.tolist()])
        epoch = max(0, math.ceil(arrival / COFLOWSIM_EPOCH_MS) - 1) * COFLOWSIM_EPOCH_MS
        src = np.tile(maps, reds.size)
        dst = np.repeat(reds, m)
        coflows.append(_coflow(cid, src, dst, np.repeat(flow, m), float(epoch), path, number))
    return _instance(ports, port_rate, coflows, lines, path)


def _coflow(cid: str, src: np.ndarray, dst: np.ndarray, size: np.ndarray, arrival: float,
            path: str, line: int) -> Coflow:
    """One trace line's coflow (arrival in ms), with model errors located at the line."""
    try:
        return Coflow(cid, src, dst, size, release=arrival / 1000.0)
    except InstanceError as exc:
        raise InputError(exc.message, path=path, line=line) from None


def read(path: str | os.PathLike[str], *, port_rate: float = DEFAULT_PORT_RATE) -> Instance:
    """Read a Coflow-Benchmark trace file."""
    return loads(read_text(path), path=str(path), port_rate=port_rate)


def _shuffle_of(c: Coflow) -> tuple[list[int], list[int], list[float]]:
    """Mappers, reducer racks and per-flow sizes, if the coflow is a full shuffle.

    Representable coflows have, for every reducer, one flow from each mapper
    (the same multiset of mapper racks for every reducer), all of one size. A rack may
    be a reducer twice (the reader takes ``1:1 1:2``): then the flows must come as the
    reader lists them, reducer by reducer, mappers in one order (:func:`_entries`).
    """
    try:
        return _by_rack(c)
    except ValueError:
        entries = _entries(c)
        if entries is None:
            raise
        return entries


def _entries(c: Coflow) -> tuple[list[int], list[int], list[float]] | None:
    """The coflow's flows cut into reducer entries as the reader lists them: consecutive
    runs of ``M`` flows with the same sequence of mapper racks, each run into one rack
    with one size (the smallest such ``M``); ``None`` if there are none."""
    n = c.src.size
    for m in (d for d in range(1, n + 1) if n % d == 0):
        src, dst, size = (x.reshape(-1, m) for x in (c.src, c.dst, c.sizes))
        if (src == src[0]).all() and (dst == dst[:, :1]).all() and (size == size[:, :1]).all():
            return src[0].tolist(), dst[:, 0].tolist(), size[:, 0].astype(float).tolist()
    return None


def _by_rack(c: Coflow) -> tuple[list[int], list[int], list[float]]:
    """:func:`_shuffle_of` for coflows whose reducers are distinct racks, in any flow order."""
    reducers = list(dict.fromkeys(c.dst.tolist()))
    first = np.flatnonzero(c.dst == reducers[0])
    mappers = c.src[first].tolist()
    key = sorted(mappers)
    sizes = []
    for rack in reducers:
        sel = np.flatnonzero(c.dst == rack)
        if sorted(c.src[sel].tolist()) != key:
            raise ValueError(
                f"coflow '{c.id}' is not a full shuffle: reducer {rack} gets flows from "
                f"mappers {sorted(set(c.src[sel].tolist()))}, reducer {reducers[0]} from {sorted(set(key))}"
            )
        s = c.sizes[sel]
        if np.any(s != s[0]):
            raise ValueError(
                f"coflow '{c.id}': reducer {rack} gets unequal amounts from its mappers "
                f"({s.min():g} to {s.max():g}); the format splits a reducer's data equally"
            )
        sizes.append(float(s[0]))
    return mappers, reducers, sizes


def _mb_text(size: float, mappers: int) -> tuple[str, bool]:
    """Megabytes that the reader turns back into ``size`` bytes per flow; whether exactly.

    ``size * mappers / MB`` can miss the float that the reader's ``mb * MB / mappers``
    maps back to ``size`` by an ulp or two, so its neighbours are tried too; some sizes
    have no such float (they read back within an ulp or two).
    """

    def decode(mb: float) -> float:
        return mb * MB / mappers

    value = size * mappers / MB
    near = [value]
    for direction in (math.inf, -math.inf):
        v = value
        for _ in range(2):
            v = math.nextafter(v, direction)
            near.append(v)
    for v in near:
        if decode(v) == size:
            return shortest_decimal(v, decode, size), True
    return shortest_decimal(value, decode, size), False


def dumps(instance: Instance, *, port_rate: float | None = None) -> str:
    """The instance as a Coflow-Benchmark trace.

    Only instances the format can express are accepted: uniform port
    capacities, unit weights, no deadlines, dependencies or flow delays, and
    every coflow a full mapper x reducer shuffle with equal splits. Numbers
    are written so that reading the file back gives the same floats, except
    release times with no decimal in milliseconds that divides back to them
    exactly and flow sizes with no decimal in MB that gives them back (both
    read back within an ulp or two; :func:`write` notes them).
    """
    return _dump(instance, port_rate)[0]


def _dump(instance: Instance, port_rate: float | None = None) -> tuple[str, int, int]:
    """:func:`dumps`' text, the number of reducers and how many of their sizes read back inexactly."""
    check_writable_instance(instance, big_switch_only=True)
    problems = []
    fab = instance.fabric
    if not fab.is_uniform:
        problems.append("port capacities differ (the format has one port rate)")
    elif port_rate is not None and fab.capacity[0] != port_rate:
        problems.append(f"port capacity {fab.capacity[0]:g} differs from the port rate {port_rate:g}")
    for c in instance.coflows:
        if c.weight != 1.0:
            problems.append(f"coflow '{c.id}' has weight {c.weight:g} (the format has no weights)")
        if c.deadline is not None:
            problems.append(f"coflow '{c.id}' has a deadline (the format has none)")
        if c.starts_after or c.finishes_before:
            problems.append(f"coflow '{c.id}' has dependencies (the format has none)")
        if c.delay is not None:
            problems.append(f"coflow '{c.id}' has delayed flows (the format has none)")
        if any(ch.isspace() for ch in c.id):
            problems.append(f"coflow id {c.id!r} contains whitespace")
        if problems:
            break
    if problems:
        raise InstanceError("cannot write the Coflow-Benchmark format: " + problems[0])
    lines = [f"{instance.num_ports} {instance.num_coflows}"]
    total = off = 0
    for c in instance.coflows:
        try:
            mappers, reducers, sizes = _shuffle_of(c)
        except ValueError as exc:
            raise InstanceError(f"cannot write the Coflow-Benchmark format: {exc}") from None
        m = len(mappers)
        ms = release_ms(c.release)
        red = []
        for rack, size in zip(reducers, sizes, strict=True):
            text, exact = _mb_text(size, m)
            red.append(f"{rack}:{text}")
            off += not exact
        total += len(reducers)
        lines.append(f"{c.id} {ms} {m} {' '.join(map(str, mappers))} {len(reducers)} {' '.join(red)}")
    return "\n".join(lines) + "\n", total, off


def write(instance: Instance, path: str | os.PathLike[str]) -> list[str]:
    """Write a Coflow-Benchmark trace atomically. Returns notes for the user."""
    text, total, off = _dump(instance)
    with atomic_writer(path) as fh:
        fh.write(text)
    notes = trace_notes(instance)
    if off:
        notes.append(f"{off} of {total} reducers' flow sizes have no decimal in MB that reads "
                     "back exactly; they read back within an ulp or two")
    return notes
