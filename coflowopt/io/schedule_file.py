"""Schedules as JSON: ``coflowopt-schedule/1``.

::

    {"format": "coflowopt-schedule/1",
     "pieces": [["<coflow id>", <flow index in coflow>, <start>, <end>, <rate>], ...]}

Flows are named by their coflow's id and their 0-based position in that
coflow's flow list, so a schedule file stays valid for any file holding the
same instance. Keys starting with ``_`` are metadata.
"""

from __future__ import annotations

import json
import math
import os
from typing import IO, Any

import numpy as np

from ..errors import InputError
from ..instance import Instance
from ..schedule import Schedule
from ._common import atomic_writer, parse_json, read_text

__all__ = ["SCHEDULE_TAG", "read_schedule", "read_schedule_file", "write_schedule"]

SCHEDULE_TAG = "coflowopt-schedule/1"


def read_schedule(path: str | os.PathLike[str], instance: Instance) -> Schedule:
    """Read a schedule file for ``instance``."""
    return read_schedule_file(path, instance)[0]


def read_schedule_file(
    path: str | os.PathLike[str], instance: Instance
) -> tuple[Schedule, dict[str, Any]]:
    """Read a schedule file for ``instance``: the schedule and the file's metadata (its keys
    starting with ``_``, without the ``_``; e.g. ``rejected``, the ids of coflows a
    deadline schedule leaves out)."""
    p = str(path)
    doc = parse_json(read_text(p), p)
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
    rejected = meta.get("rejected", [])
    ids = set(instance.ids)
    if not (isinstance(rejected, list) and all(isinstance(c, str) and c in ids for c in rejected)):
        raise InputError("_rejected must be an array of the instance's coflow ids", path=p,
                         json_path="$._rejected")
    return Schedule(flow, vals[:, 0], vals[:, 1], vals[:, 2]), meta


def _finite(x: float) -> bool:
    """A number float64 holds (an integer of 400 digits is not)."""
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def write_schedule(
    schedule: Schedule,
    instance: Instance,
    path: str | os.PathLike[str] | IO[str],
    *,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Write a schedule file atomically (or into an open text stream)."""
    if not isinstance(path, (str, os.PathLike)):
        _write_schedule(schedule, instance, path, metadata)
        return
    with atomic_writer(path) as fh:
        _write_schedule(schedule, instance, fh, metadata)


def _write_schedule(schedule: Schedule, instance: Instance, fh: IO[str],
                    metadata: dict[str, Any] | None) -> None:
    k = instance.flow_coflow[schedule.flow]
    local = schedule.flow - instance.ptr[k]
    ids = instance.ids
    fh.write(f'{{"format": "{SCHEDULE_TAG}"')
    for key, value in (metadata or {}).items():
        fh.write(f",\n {json.dumps('_' + key.lstrip('_'))}: {json.dumps(value)}")
    fh.write(',\n "pieces": [')
    for i in range(schedule.num_pieces):
        sep = "," if i else ""
        fh.write(
            f"{sep}\n  [{json.dumps(ids[k[i]])}, {int(local[i])}, {float(schedule.start[i])!r}, "
            f"{float(schedule.end[i])!r}, {float(schedule.rate[i])!r}]"
        )
    fh.write("\n ]}\n")
