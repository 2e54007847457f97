"""Schedule files: JSON (``coflowopt-schedule/1``) and NumPy ``.npz``, chosen by suffix.

JSON, for schedules of up to a few million pieces::

    {"format": "coflowopt-schedule/1",
     "pieces": [["<coflow id>", <flow index in coflow>, <start>, <end>, <rate>], ...]}

Flows are named by their coflow's id and their 0-based position in that
coflow's flow list, so a schedule file stays valid for any file holding the
same instance. Keys starting with ``_`` are metadata (the command line's: ``_method``,
``_objective``, ``_value``; a deadline schedule's ``_rejected`` and ``_served_after``; a
schedule made with ``--topology`` the options in ``_placement``). Tied pieces
(:class:`coflowopt.schedule.TiedPieces`) are written out as the pieces they stand for.

``.npz`` (``coflowopt-schedule-npz/1``), for schedules at trace scale: uncompressed NumPy
arrays, 32 bytes a piece, with the tied pieces and their levels as they are (the
per-flow fair sharing of the Facebook trace: 70 MB instead of 232 million pieces).
Flows are named the same way, by an index into the array ``coflows`` (the ids) and the
position in that coflow:

==============================================  ============================================
``format``                                      ``"coflowopt-schedule-npz/1"`` (a 0-d string)
``coflows``                                     coflow ids (strings)
``piece_coflow``, ``piece_flow``                each piece's flow (integers)
``piece_start``, ``piece_end``, ``piece_rate``  finite numbers
``tied_coflow``, ``tied_flow``                  each tied piece's flow (optional, as the
                                                tied and level arrays)
``tied_start``, ``tied_end``                    finite, ``end >= start``
``tied_weight``                                 finite
``tied_series_a``, ``tied_series_b``            level series (``>= 0``; ``b`` may be ``-1``)
``level_series``, ``level_time``, ``level``     the levels' changes (``level``: not NaN)
``metadata``                                    a JSON object (a 0-d string, optional)
==============================================  ============================================
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import numpy as np

from .._files import parse_json, read_text
from .._text import value_text
from ..errors import InputError, ScheduleError
from ..instance import Instance
from ..schedule import Schedule, TiedPieces
from ._common import atomic_writer

__all__ = ["NPZ_TAG", "SCHEDULE_FORMATS", "SCHEDULE_TAG", "ScheduleFormat", "read_schedule",
           "read_schedule_file", "schedule_format", "write_schedule"]

SCHEDULE_TAG = "coflowopt-schedule/1"
NPZ_TAG = "coflowopt-schedule-npz/1"


@dataclass(frozen=True, slots=True)
class ScheduleFormat:
    """A schedule file format: its suffix and how to read and write it."""

    name: str
    suffix: str
    reader: Callable[[str, Instance], tuple[Schedule, dict[str, Any]]]
    writer: Callable[[Schedule, Instance, IO[Any], dict[str, Any] | None], None]
    binary: bool
    """Written to a byte stream (else text)."""


def schedule_format(path: str | os.PathLike[str]) -> ScheduleFormat:
    """The format a schedule file's suffix names, or an :class:`InputError` naming the file."""
    p = str(path)
    for fmt in SCHEDULE_FORMATS.values():
        if p.lower().endswith(fmt.suffix):
            return fmt
    known = " or ".join(f"{f.suffix} ({f.name})" for f in SCHEDULE_FORMATS.values())
    raise InputError(f"cannot tell the schedule format from the file name: name it {known}",
                     path=p)


def read_schedule(path: str | os.PathLike[str], instance: Instance) -> Schedule:
    """Read a schedule file for ``instance`` (its format from its suffix)."""
    return read_schedule_file(path, instance)[0]


def read_schedule_file(
    path: str | os.PathLike[str], instance: Instance
) -> tuple[Schedule, dict[str, Any]]:
    """Read a schedule file for ``instance`` (its format from its suffix): the schedule and
    the file's metadata (for JSON its keys starting with ``_``, without the ``_``; e.g.
    ``rejected``, the ids of coflows a deadline schedule leaves out)."""
    return schedule_format(path).reader(str(path), instance)


def write_schedule(
    schedule: Schedule,
    instance: Instance,
    path: str | os.PathLike[str] | IO[Any],
    *,
    metadata: dict[str, Any] | None = None,
    format: str | None = None,
) -> None:
    """Write a schedule file atomically, in the format its suffix names (or into an open
    stream: text for ``json``, the default, bytes for ``npz``)."""
    if not isinstance(path, (str, os.PathLike)):
        fmt = SCHEDULE_FORMATS[format or "json"]
        fmt.writer(schedule, instance, path, metadata)
        return
    fmt = SCHEDULE_FORMATS[format] if format else schedule_format(path)
    with atomic_writer(path, binary=fmt.binary) as fh:
        fmt.writer(schedule, instance, fh, metadata)


def _check_flows(schedule: Schedule, instance: Instance) -> None:
    """A file names each flow by its coflow: every flow must be one of the instance's."""
    F = instance.num_flows
    flows = [schedule.direct.flow] + ([schedule.tied.flow] if schedule.tied is not None else [])
    for f in flows:
        bad = np.flatnonzero((f < 0) | (f >= F))
        if bad.size:
            raise ScheduleError(f"the schedule serves flow {int(f[bad[0]])}, but the instance has "
                                f"{F} flows: it cannot be written for it")


# --------------------------------------------------------------------------- JSON


ZIP_MAGIC = b"PK\x03\x04"
"""How a ``.npz`` archive (a zip file) starts."""


def _starts_with(p: str, magic: bytes) -> bool:
    try:
        with open(p, "rb") as fh:
            return fh.read(len(magic)) == magic
    except OSError:
        return False


def _read_json(p: str, instance: Instance) -> tuple[Schedule, dict[str, Any]]:
    try:
        text = read_text(p)
    except InputError:
        if _starts_with(p, ZIP_MAGIC):
            raise InputError("a NumPy .npz archive, not JSON: name it .npz", path=p) from None
        raise
    doc = parse_json(text, p)
    del text  # (hundreds of MB for millions of pieces)
    if not isinstance(doc, dict) or doc.get("format") != SCHEDULE_TAG:
        got = doc.get("format") if isinstance(doc, dict) else doc
        found = "no format" if isinstance(doc, dict) and "format" not in doc else f"{got!r:.60}"
        raise InputError(f'format must be "{SCHEDULE_TAG}", got {found}', path=p,
                         json_path="$.format")
    extra = [k for k in doc if k not in ("format", "pieces") and not k.startswith("_")]
    if extra:
        raise InputError(f"unknown key {extra[0]!r:.60} (a schedule file has format, pieces and "
                         "metadata keys starting with '_')", path=p, json_path=f"$.{extra[0]}")
    pieces = doc.get("pieces")
    if not isinstance(pieces, list):
        raise InputError("pieces must be an array", path=p, json_path="$.pieces")
    n = len(pieces)
    flow = np.empty(n, np.int64)
    vals = np.empty((n, 3))
    for i, row in enumerate(pieces):
        where = f"$.pieces[{i}]"
        if not isinstance(row, list) or len(row) != 5:
            raise InputError(
                "a piece must be [coflow id, flow index, start, end, rate]", path=p, json_path=where
            )
        cid, local = row[0], row[1]
        if not isinstance(cid, str):
            raise InputError(f"coflow id must be a string, got {cid!r}", path=p, json_path=f"{where}[0]")
        try:
            k = instance.index(cid)
        except Exception:
            raise InputError(f"unknown coflow '{cid}'", path=p, json_path=f"{where}[0]") from None
        width = int(instance.width[k])
        if type(local) is not int or not 0 <= local < width:
            raise InputError(
                f"coflow '{cid}' has flows 0..{width - 1}, got {local!r:.60}", path=p,
                json_path=f"{where}[1]"
            )
        flow[i] = instance.ptr[k] + local
        for j in range(3):
            x = row[2 + j]
            if type(x) not in (int, float) or not _finite(x):
                raise InputError(f"must be a finite number, got {x!r:.60}", path=p,
                                 json_path=f"{where}[{2 + j}]")
            vals[i, j] = x
    meta = {k[1:]: v for k, v in doc.items() if k.startswith("_")}
    _check_metadata(meta, instance, p, "$._")
    return Schedule(flow, vals[:, 0], vals[:, 1], vals[:, 2]), meta


def _check_metadata(meta: dict[str, Any], instance: Instance, p: str, prefix: str) -> None:
    """The coflow lists of a deadline schedule's metadata (``rejected``: left out;
    ``served_after``: served once the admitted coflows are done) name coflows of
    ``instance``; ``prefix`` locates a key (``$._`` in JSON, ``metadata.`` in npz)."""
    ids = set(instance.ids)
    for key in ("rejected", "served_after"):
        listed = meta.get(key, [])
        where = f"{prefix}{key}"
        if not isinstance(listed, list):
            raise InputError(f"{key} must be an array of the instance's coflow ids, got "
                             f"{value_text(listed)}", path=p, json_path=where)
        for i, c in enumerate(listed):
            if not (isinstance(c, str) and c in ids):
                raise InputError(f"{key} names coflow {value_text(c)}, which the instance does "
                                 "not have", path=p, json_path=f"{where}[{i}]")


def _finite(x: float) -> bool:
    """A number float64 holds (an integer of 400 digits is not)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _write_json(schedule: Schedule, instance: Instance, fh: IO[str],
                metadata: dict[str, Any] | None) -> None:
    _check_flows(schedule, instance)
    ids = [json.dumps(i) for i in instance.ids]
    fh.write(f'{{"format": "{SCHEDULE_TAG}"')
    for key, value in (metadata or {}).items():
        fh.write(f",\n {json.dumps('_' + key.lstrip('_'))}: {json.dumps(value)}")
    fh.write(',\n "pieces": [')
    sep = ""
    # tied pieces are expanded a part at a time (a part holds a few million pieces)
    for flow, start, end, rate in schedule.pieces_by_flow(instance.num_flows):
        k = instance.flow_coflow[flow]
        local = flow - instance.ptr[k]
        bad = np.flatnonzero(~(np.isfinite(start) & np.isfinite(end) & np.isfinite(rate)))
        if bad.size:
            i = int(bad[0])
            raise ScheduleError(
                f"flow {int(local[i])} of coflow '{instance.ids[k[i]]}' has a piece "
                f"[{start[i]!r}, {end[i]!r}) at rate {rate[i]!r}: JSON holds finite numbers "
                "only (.npz files hold any)")
        for i in range(flow.size):
            fh.write(f"{sep}\n  [{ids[k[i]]}, {int(local[i])}, {float(start[i])!r}, "
                     f"{float(end[i])!r}, {float(rate[i])!r}]")
            sep = ","
    fh.write("\n ]}\n")


# --------------------------------------------------------------------------- .npz

_PIECES = ("piece_coflow", "piece_flow", "piece_start", "piece_end", "piece_rate")
_TIED = ("tied_coflow", "tied_flow", "tied_start", "tied_end", "tied_weight", "tied_series_a",
         "tied_series_b")
_LEVELS = ("level_series", "level_time", "level")
_ARRAYS = ("format", "coflows", *_PIECES, *_TIED, *_LEVELS, "metadata")


def _read_npz(p: str, instance: Instance) -> tuple[Schedule, dict[str, Any]]:
    if not _starts_with(p, ZIP_MAGIC):
        read_text(p)  # a missing or unreadable file says so
        raise InputError("not a NumPy .npz archive"
                         + (" (it is text: JSON files are named .json)"
                            if _starts_with(p, b"{") else ""), path=p)
    try:
        with np.load(p, allow_pickle=False) as npz:
            names = list(npz.files)
            extra = [n for n in names if n not in _ARRAYS]
            if extra:
                raise InputError(f"unknown array {extra[0]!r:.60} (a schedule archive has "
                                 f"{', '.join(_ARRAYS)})", path=p, json_path=extra[0])
            arrays = {n: _array(npz, n, p) for n in names}
    except InputError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError) as exc:
        raise InputError(f"not a readable .npz archive ({exc})", path=p) from None
    tag = arrays.get("format")
    got = "none" if tag is None else f"{tag.tolist()!r:.60}"
    if tag is None or tag.shape != () or tag.tolist() != NPZ_TAG:
        raise InputError(f'format must be "{NPZ_TAG}", got {got}', path=p, json_path="format")
    missing = [n for n in ("coflows", *_PIECES) if n not in arrays]
    parts = [n for n in (*_TIED, *_LEVELS) if n in arrays]
    if parts and len(parts) < len(_TIED) + len(_LEVELS):
        missing += [n for n in (*_TIED, *_LEVELS) if n not in arrays]
    if missing:
        raise InputError(f"array {missing[0]} is missing", path=p, json_path=missing[0])
    cof = arrays["coflows"]
    if cof.ndim != 1 or cof.dtype.kind != "U":
        raise InputError(f"must be a 1-D array of strings, got {cof.dtype} of shape {cof.shape}",
                         path=p, json_path="coflows")
    ks = np.empty(cof.size, np.int64)
    for i, cid in enumerate(cof.tolist()):
        try:
            ks[i] = instance.index(cid)
        except Exception:
            raise InputError(f"unknown coflow '{cid:.60}'", path=p,
                             json_path=f"coflows[{i}]") from None
    flow, start, end, rate = _flows_and_values(arrays, _PIECES, ks, instance, p)
    tied = None
    if parts:
        tf, ts, te, tw = _flows_and_values(arrays, _TIED[:5], ks, instance, p)
        bad = np.flatnonzero(te < ts)
        if bad.size:
            raise InputError(f"ends before tied_start ({te[bad[0]]!r} < {ts[bad[0]]!r})", path=p,
                             json_path=f"tied_end[{int(bad[0])}]")
        sa, sb = (_numbers(arrays, n, p, integer=True, size=tf.size, lowest=low)
                  for n, low in (("tied_series_a", 0), ("tied_series_b", -1)))
        lg = _numbers(arrays, "level_series", p, integer=True, lowest=0)
        lt = _numbers(arrays, "level_time", p, size=lg.size)
        lx = _numbers(arrays, "level", p, size=lg.size, infinite=True)
        tied = TiedPieces(tf, ts, te, tw, sa, sb, lg, lt, lx)
    meta: dict[str, Any] = {}
    if "metadata" in arrays:
        m = arrays["metadata"]
        text = m.tolist() if m.shape == () and m.dtype.kind == "U" else None
        doc = parse_json(text, p) if text is not None else None
        if not isinstance(doc, dict):
            raise InputError("must be a JSON object (a 0-d string array)", path=p,
                             json_path="metadata")
        meta = doc
        _check_metadata(meta, instance, p, "metadata.")
    # the arrays are this reader's own: adopted, not copied (10^7 pieces are 320 MB)
    return Schedule._adopt(flow, start, end, rate, tied), meta


def _array(npz: Any, name: str, p: str) -> np.ndarray:
    try:
        return np.asarray(npz[name])
    except ValueError as exc:  # Python objects (pickled): not read
        raise InputError(f"cannot be read without running code in it ({exc})", path=p,
                         json_path=name) from None


def _numbers(arrays: dict[str, np.ndarray], name: str, p: str, *, integer: bool = False,
             size: int | None = None, lowest: int | None = None,
             infinite: bool = False) -> np.ndarray:
    """A 1-D array of numbers (integers), finite (``infinite``: or ``+inf``), at least
    ``lowest``, of ``size`` entries, as ``int64`` (``float64``), taken out of ``arrays``; an
    :class:`InputError` naming the entry otherwise."""
    a = arrays.pop(name)
    kinds = "iu" if integer else "iuf"
    if a.ndim != 1 or a.dtype.kind not in kinds:
        want = "integers" if integer else "numbers"
        raise InputError(f"must be a 1-D array of {want}, got {a.dtype} of shape {a.shape}",
                         path=p, json_path=name)
    if size is not None and a.size != size:
        raise InputError(f"has {a.size} entries, but the arrays beside it have {size}", path=p,
                         json_path=name)
    out = a.astype(np.int64 if integer else np.float64, copy=False)
    if integer and a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise InputError("holds an integer beyond int64", path=p, json_path=name)
    if not integer:
        ok = np.isfinite(out) | (infinite & (out == np.inf))
        bad = np.flatnonzero(~ok)
        if bad.size:
            what = "a finite number or inf" if infinite else "a finite number"
            raise InputError(f"must be {what}, got {float(out[bad[0]])!r}", path=p,
                             json_path=f"{name}[{int(bad[0])}]")
    if lowest is not None:
        bad = np.flatnonzero(out < lowest)
        if bad.size:
            raise InputError(f"must be at least {lowest}, got {int(out[bad[0]])}", path=p,
                             json_path=f"{name}[{int(bad[0])}]")
    return out


def _flows_and_values(arrays: dict[str, np.ndarray], names: tuple[str, ...], ks: np.ndarray,
                      instance: Instance, p: str) -> tuple[np.ndarray, ...]:
    """Flow indices from ``names[0]`` (coflow index into ``coflows``) and ``names[1]``
    (position in the coflow), and the three number arrays ``names[2:5]``."""
    cname, fname = names[0], names[1]
    c = _numbers(arrays, cname, p, integer=True, lowest=0)
    local = _numbers(arrays, fname, p, integer=True, size=c.size, lowest=0)
    bad = np.flatnonzero(c >= ks.size)
    if bad.size:
        raise InputError(f"names coflow {int(c[bad[0]])}, but coflows has {ks.size}", path=p,
                         json_path=f"{cname}[{int(bad[0])}]")
    k = ks[c]
    width = instance.width[k]
    bad = np.flatnonzero(local >= width)
    if bad.size:
        i = int(bad[0])
        raise InputError(f"coflow '{instance.ids[k[i]]}' has flows 0..{int(width[i]) - 1}, got "
                         f"{int(local[i])}", path=p, json_path=f"{fname}[{i}]")
    values = [_numbers(arrays, n, p, size=c.size) for n in names[2:5]]
    return (instance.ptr[k] + local, *values)


def _write_npz(schedule: Schedule, instance: Instance, fh: IO[bytes],
               metadata: dict[str, Any] | None) -> None:
    _check_flows(schedule, instance)
    fco, ptr = instance.flow_coflow, instance.ptr
    index = np.int32 if max(instance.num_coflows, int(instance.width.max(initial=0))) < 2**31 \
        else np.int64

    def named(flow: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = fco[flow]
        return k.astype(index), (flow - ptr[k]).astype(index)

    direct = schedule.direct
    arrays: dict[str, np.ndarray] = {"format": np.array(NPZ_TAG),
                                     "coflows": np.array(instance.ids, dtype=str)}
    arrays["piece_coflow"], arrays["piece_flow"] = named(direct.flow)
    arrays.update(piece_start=direct.start, piece_end=direct.end, piece_rate=direct.rate)
    t = schedule.tied
    if t is not None:
        arrays["tied_coflow"], arrays["tied_flow"] = named(t.flow)
        arrays.update(tied_start=t.start, tied_end=t.end, tied_weight=t.weight,
                      tied_series_a=t.series_a, tied_series_b=t.series_b,
                      level_series=t.level_series, level_time=t.level_time, level=t.level)
    if metadata:
        arrays["metadata"] = np.array(json.dumps({k.lstrip("_"): v for k, v in metadata.items()}))
    np.savez(fh, **arrays)  # type: ignore[arg-type]


SCHEDULE_FORMATS: dict[str, ScheduleFormat] = {
    "json": ScheduleFormat("json", ".json", _read_json, _write_json, False),
    "npz": ScheduleFormat("npz", ".npz", _read_npz, _write_npz, True),
}
"""Schedule file formats by name (:func:`schedule_format` picks one by suffix)."""
