"""The trace format of Sincronia's simulator and workload generator.

::

    Line 1: <ports> <coflows>
    Line i: <id> <arrival ms> <#flows> <#senders> <#receivers> (<src> <dst> <MB>)...

One coflow per line; ports are 0-based; sizes are whole megabytes (2^20
bytes) in Sincronia's files. The reader also accepts fractional megabytes;
the writer rounds sizes to whole megabytes as chosen by ``mb_rounding``.
Times become seconds; every port gets ``port_rate`` bytes per second.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from .._files import read_text
from .._text import brief, plural
from ..errors import InputError, InstanceError
from ..instance import MB, TINY, Fabric, Instance
from ._common import (
    atomic_writer,
    check_writable_instance,
    release_ms,
    shortest_decimal,
    text_lines,
    trace_notes,
)
from .benchmark import (
    DEFAULT_PORT_RATE,
    _check_bytes,
    _coflow,
    _coflow_lines,
    _float,
    _header,
    _int,
    _plain_number,
)

__all__ = ["OfflineOutput", "dumps", "loads", "read", "read_offline_output", "round_sizes", "write"]

Rounding = Literal["ceil", "nearest", "none"]

MEAN_CHECK = 1e-4
"""Relative slack between the mean an ``offlinesim`` log prints (a single-precision sum)
and the mean of its completion times (the stored logs: within 1e-6)."""


def loads(text: str, *, path: str = "<string>", port_rate: float = DEFAULT_PORT_RATE) -> Instance:
    """Parse a Sincronia trace."""
    if not (math.isfinite(port_rate) and port_rate > 0):
        raise InputError(f"port rate must be finite and > 0, got {port_rate!r}", path=path)
    lines = list(text_lines(text))
    ports, _ = _header(lines, path)
    coflows = []
    layout = "<id> <arrival ms> <#flows> <#senders> <#receivers> (<src> <dst> <MB>)..."
    for number, t, cid, arrival in _coflow_lines(lines, path, layout):
        n = _int(t[2], f"number of flows of coflow '{cid}'", path, number, minimum=1)
        senders = _int(t[3], f"number of senders of coflow '{cid}'", path, number, minimum=1)
        receivers = _int(t[4], f"number of receivers of coflow '{cid}'", path, number, minimum=1)
        body = t[5:]
        if len(body) != 3 * n:
            raise InputError(
                f"coflow '{cid}' announces {plural(n, 'flow')} ({3 * n} numbers) but has "
                f"{plural(len(body), 'number')}",
                path=path,
                line=number,
            )
        src, dst, size = _flows(body, n, ports, cid, path, number)
        for count, arr, what in ((senders, src, "senders"), (receivers, dst, "receivers")):
            distinct = np.unique(arr).size
            if distinct != count:
                raise InputError(
                    f"coflow '{cid}' announces {count} {what} but its flows use {distinct}",
                    path=path,
                    line=number,
                )
        coflows.append(_coflow(cid, src, dst, size * MB, arrival, path, number))
    try:
        return Instance(Fabric.uniform(ports, port_rate), tuple(coflows), name=os.path.basename(path))
    except InstanceError as exc:  # pragma: no cover - checked above
        line = lines[1 + exc.coflow][0] if exc.coflow is not None else None
        raise InputError(exc.message, path=path, line=line) from None


def _flows(
    body: list[str], n: int, ports: int, cid: str, path: str, number: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sources, destinations and sizes (MB) of one coflow's flow triplets."""
    try:
        arr = np.array(body, dtype=float).reshape(n, 3)
        with np.errstate(over="ignore"):
            nbytes = arr[:, 2] * MB
        ok = (
            np.isfinite(arr).all()
            and (arr[:, :2] == np.round(arr[:, :2])).all()
            and (arr[:, :2] >= 0).all()
            and (arr[:, :2] < ports).all()
            and ((nbytes >= TINY) & (nbytes < np.inf)).all()
            and all(_plain_number(x) for x in body)
            and all("." not in x and "e" not in x.lower() for x in body[0::3] + body[1::3])
        )
    except ValueError:
        ok = False
    if ok:
        return arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64), arr[:, 2]
    # Slow path: find the first bad number and say where it is.
    for i in range(n):
        a, b, mb = body[3 * i : 3 * i + 3]
        for token, what in ((a, "source"), (b, "destination")):
            port = _int(token, f"{what} of flow {i} of coflow '{cid}'", path, number)
            if port >= ports:
                raise InputError(
                    f"{what} of flow {i} of coflow '{cid}' is port {port}, but the fabric has "
                    f"{plural(ports, 'port')}",
                    path=path,
                    line=number,
                )
        value = _float(mb, f"size (MB) of flow {i} of coflow '{cid}'", path, number)
        if value <= 0:
            raise InputError(
                f"size of flow {i} of coflow '{cid}' must be > 0, got '{mb}'", path=path, line=number
            )
        _check_bytes(value * MB, mb, f"size of flow {i} of coflow '{cid}'", path, number)
    raise AssertionError("unreachable")  # pragma: no cover


def read(path: str | os.PathLike[str], *, port_rate: float = DEFAULT_PORT_RATE) -> Instance:
    """Read a Sincronia trace file."""
    return loads(read_text(path), path=str(path), port_rate=port_rate)


def _whole(mb: np.ndarray, mb_rounding: Rounding) -> np.ndarray:
    """Sizes in MB rounded to whole megabytes as :func:`dumps` writes them."""
    return np.ceil(mb) if mb_rounding == "ceil" else np.maximum(np.round(mb), 1.0)


def round_sizes(instance: Instance, *, mb_rounding: Rounding = "ceil") -> Instance:
    """The instance with its flow sizes as a Sincronia trace of it holds them: whole
    megabytes, rounded as :func:`dumps` rounds them (``"none"``: unchanged)."""
    if mb_rounding not in ("ceil", "nearest", "none"):
        raise ValueError(f"mb_rounding must be 'ceil', 'nearest' or 'none', got {mb_rounding!r}")
    if mb_rounding == "none":
        return instance
    return instance.replace(coflows=tuple(
        dataclasses.replace(c, sizes=_whole(c.sizes / MB, mb_rounding) * MB)
        for c in instance.coflows))


def dumps(instance: Instance, *, mb_rounding: Rounding = "ceil") -> tuple[str, int]:
    """The instance as a Sincronia trace, and the number of flow sizes rounded.

    ``mb_rounding``: ``"ceil"`` rounds every size up to whole megabytes (no
    flow shrinks or vanishes), ``"nearest"`` to the nearest (at least 1),
    ``"none"`` writes fractional megabytes (readable here, not by
    Sincronia's C++ simulator).
    """
    if mb_rounding not in ("ceil", "nearest", "none"):
        raise ValueError(f"mb_rounding must be 'ceil', 'nearest' or 'none', got {mb_rounding!r}")
    check_writable_instance(instance, big_switch_only=True)
    fab = instance.fabric
    if not fab.is_uniform:
        raise InstanceError("cannot write the Sincronia format: port capacities differ")
    for c in instance.coflows:
        if (
            c.weight != 1.0
            or c.deadline is not None
            or c.starts_after
            or c.finishes_before
            or c.delay is not None
        ):
            raise InstanceError(
                f"cannot write the Sincronia format: coflow '{c.id}' has weights, deadlines, "
                "dependencies or delayed flows, which the format cannot express"
            )
        if any(ch.isspace() for ch in c.id):
            raise InstanceError(f"cannot write the Sincronia format: coflow id {c.id!r} contains whitespace")
    rounded = 0
    lines = [f"{instance.num_ports} {instance.num_coflows}"]
    for c in instance.coflows:
        mb = c.sizes / MB
        if mb_rounding == "none":
            sizes = [shortest_decimal(v, lambda x: x * MB, z) for v, z in zip(mb, c.sizes, strict=True)]
        else:
            whole = _whole(mb, mb_rounding)
            rounded += int(np.count_nonzero(whole != mb))
            sizes = [str(int(v)) for v in whole]
        ms = release_ms(c.release)
        flows = " ".join(
            f"{s} {d} {z}" for s, d, z in zip(c.src.tolist(), c.dst.tolist(), sizes, strict=True)
        )
        senders = np.unique(c.src).size
        receivers = np.unique(c.dst).size
        lines.append(f"{c.id} {ms} {c.width} {senders} {receivers} {flows}")
    return "\n".join(lines) + "\n", rounded


def write(instance: Instance, path: str | os.PathLike[str], *, mb_rounding: Rounding = "ceil") -> list[str]:
    """Write a Sincronia trace atomically. Returns notes for the user."""
    text, rounded = dumps(instance, mb_rounding=mb_rounding)
    with atomic_writer(path) as fh:
        fh.write(text)
    notes = trace_notes(instance)
    if rounded:
        notes.append(
            f"{rounded} of {instance.num_flows} flow sizes were not whole megabytes and were "
            f"rounded ({mb_rounding})"
        )
    return notes


@dataclass(frozen=True, slots=True)
class OfflineOutput:
    """The output log of Sincronia's offline simulator (``offlinesim``).

    One line per coflow, ``<id> <oracle time> <rank> <start> <completion>``, in
    the simulator's order (rank 1 first), then the mean completion time. Its
    time unit is what a port takes to send one MB (2^20 bytes): every port
    sends 1 MB per unit.
    """

    ids: tuple[str, ...]
    """Coflow ids in the simulator's order, highest priority first."""
    start: npt.NDArray[np.float64]
    completion: npt.NDArray[np.float64]
    """Start and completion times (simulator units), in the order of ``ids``."""
    mean: float
    """The mean completion time as printed (summed in single precision)."""

    def __post_init__(self) -> None:
        for a in (self.start, self.completion):
            a.setflags(write=False)

    def seconds(self, port_rate: float, ids: Sequence[str] | None = None) -> npt.NDArray[np.float64]:
        """Completion times in seconds for ports of ``port_rate`` bytes per second, in the
        order of ``ids`` (an instance's coflow ids; default: the simulator's order)."""
        s = self.completion * (MB / port_rate)
        if ids is None:
            return s
        at = {cid: i for i, cid in enumerate(self.ids)}
        return s[[at[c] for c in ids]]


def read_offline_output(path: str | os.PathLike[str]) -> OfflineOutput:
    """Read the output log ``offlinesim`` writes (its second argument)."""
    where = str(path)
    lines = [(n, t.split()) for n, t in enumerate(read_text(path).splitlines(), 1) if t.strip()]
    if not lines:
        raise InputError("empty file: expected a line per coflow, then the mean completion time",
                         path=where)
    if len(lines[-1][1]) != 1:
        raise InputError("the last line must hold the mean completion time alone",
                         path=where, line=lines[-1][0])
    if len(lines) == 1:
        raise InputError("no coflow lines before the mean completion time", path=where,
                         line=lines[0][0])
    ids: list[str] = []
    seen: set[str] = set()
    start: list[float] = []
    done: list[float] = []
    for rank, (number, t) in enumerate(lines[:-1], 1):
        if len(t) != 5:
            raise InputError(f"expected '<id> <oracle time> <rank> <start> <completion>', got "
                             f"{len(t)} fields", path=where, line=number)
        if t[2] != str(rank):
            raise InputError(f"rank '{brief(t[2])}' should be {rank}", path=where, line=number)
        if t[0] in seen:
            raise InputError(f"coflow '{brief(t[0])}' appears twice", path=where, line=number)
        seen.add(t[0])
        _float(t[1], f"oracle time of coflow '{brief(t[0])}'", where, number)
        begin = _float(t[3], f"start time of coflow '{brief(t[0])}'", where, number)
        end = _float(t[4], f"completion time of coflow '{brief(t[0])}'", where, number)
        if not 0 <= begin <= end:
            raise InputError(f"coflow '{brief(t[0])}' starts at {t[3]} and completes at {t[4]}",
                             path=where, line=number)
        ids.append(t[0])
        start.append(begin)
        done.append(end)
    mean = _float(lines[-1][1][0], "mean completion time", where, lines[-1][0])
    # the simulator sums in single precision: a mean further off is another file's, or edited
    if abs(mean - math.fsum(done) / len(done)) > MEAN_CHECK * max(abs(mean), 1.0):
        raise InputError(f"the mean completion time {brief(lines[-1][1][0])} is not the mean of "
                         f"the {len(done)} completions ({math.fsum(done) / len(done):.6g})",
                         path=where, line=lines[-1][0])
    return OfflineOutput(tuple(ids), np.array(start), np.array(done), mean)
