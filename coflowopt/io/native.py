"""The native JSON format: ``coflowopt-instance/1`` (the big switch) and ``/2`` (any fabric).

::

    {"format": "coflowopt-instance/1",
     "name": "optional string",
     "ports": {"ingress": [c_0, ..., c_{P-1}], "egress": [c_0, ..., c_{P-1}]},
     "coflows": [{"id": "c0", "release": 0.0, "weight": 1.0, "deadline": null,
                  "flows": [[src, dst, size], ...],
                  "starts_after": [], "finishes_before": []}]}

Ports are 0-based; ``weight``, ``deadline`` and the dependency lists are
optional (``"starts_after": ["a"]`` on ``b``: no flow of ``b`` is served
before ``a`` completes; ``"finishes_before": ["a"]`` on ``b``: ``C_a <= C_b``,
the listed coflows finish before this one; see ``instances/README.md``);
keys starting with ``_`` (at the top level or in a coflow) are metadata and
ignored. The format is unit-agnostic (the bins' 5 MB threshold, which
takes sizes as bytes, is stated in size units when the commands report on a
JSON instance; trace files are in bytes). One extension: a flow row
may carry a fourth number, the delay after the coflow's release at which the
flow becomes available (multi-wave coflows).

Version 2 (``"format": "coflowopt-instance/2"``) is version 1 plus an optional
``"fabric"`` object in place of ``"ports"``: a topology with its parameters or an
explicit graph, and a routing (``ecmp`` with a ``seed``, ``spray``, or ``given``
paths per flow); see :mod:`coflowopt.fabric.spec`. Ports are then the fabric's
hosts. Instances on the big switch are written as version 1, which reads as before.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import sys
from typing import Any

import numpy as np

from .._files import parse_json, read_text
from .._text import json_type, value_text
from ..errors import InputError, InstanceError
from ..fabric.network import Network
from ..fabric.spec import network_from_json, network_to_json
from ..instance import Coflow, Fabric, Instance, Links
from ._common import NO_COFLOWS, atomic_writer, check_writable_instance

__all__ = ["FORMAT_TAG", "FORMAT_TAG_2", "dumps", "from_document", "loads", "read", "read_metadata",
           "write"]

FORMAT_TAG = "coflowopt-instance/1"
FORMAT_TAG_2 = "coflowopt-instance/2"
"""Version 2: a ``"fabric"`` object may replace ``"ports"`` (multi-hop fabrics)."""
_TOP_KEYS = {"format", "name", "ports", "coflows"}
_TOP_KEYS_2 = _TOP_KEYS | {"fabric"}
_COFLOW_KEYS = {"id", "release", "weight", "deadline", "flows", "starts_after", "finishes_before"}
_FIELD_PATH = {
    "ingress": 0,
    "egress": 1,
    "size": 2,
    "delay": 3,
}


def _is_number(x: Any) -> bool:
    return type(x) in (int, float)


_MAX_FLOAT = int(sys.float_info.max)
_MAX_PORT = 2**62


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> InputError:
        return InputError(message, path=self.path, json_path=where)

    def number(self, value: Any, where: str, what: str) -> float:
        if not _is_number(value):
            raise self.fail(where, f"{what} must be a number, got {json_type(value)} {value!r:.60}")
        if type(value) is int and abs(value) > _MAX_FLOAT:
            raise self.fail(where, f"{what} is too large for a float, got {value_text(value)}")
        if not math.isfinite(value):
            raise self.fail(where, f"{what} must be finite, got {value!r}")
        return float(value)

    def id_list(self, value: Any, where: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.fail(where, f"must be an array of coflow ids, got {json_type(value)}")
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.fail(f"{where}[{i}]", f"must be a coflow id string, got {json_type(v)} {v!r:.60}")
        return tuple(value)

    def capacities(self, value: Any, where: str) -> list[float]:
        if not isinstance(value, list):
            raise self.fail(where, f"must be an array of capacities, got {json_type(value)}")
        out = []
        for p, c in enumerate(value):
            c = self.number(c, f"{where}[{p}]", "a capacity")
            if c <= 0:
                raise self.fail(f"{where}[{p}]", f"capacity must be > 0, got {c!r}")
            out.append(c)
        return out

    def flows(self, rows: Any, where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        if not isinstance(rows, list):
            raise self.fail(where, f"must be an array of [src, dst, size] rows, got {json_type(rows)}")
        if not rows:
            raise self.fail(where, "a coflow needs at least one flow")
        lengths: set[int] = set(map(len, rows)) if all(type(r) is list for r in rows) else set()
        types: set[type] = set(map(type, itertools.chain.from_iterable(rows))) if lengths else set()
        if not lengths or not lengths <= {3, 4} or not types <= {int, float}:
            self._flows_slow(rows, where)  # raises with the exact location
        bad = next((i for i, r in enumerate(rows) if type(r[0]) is not int or type(r[1]) is not int), None)
        if bad is not None:
            col = 0 if type(rows[bad][0]) is not int else 1
            what = ("ingress port", "egress port")[col]
            raise self.fail(f"{where}[{bad}][{col}]", f"{what} must be an integer, got {rows[bad][col]!r}")
        width = max(lengths)
        try:
            if len(lengths) == 1:
                arr = np.array(rows, dtype=float)
            else:
                arr = np.zeros((len(rows), 4))
                for i, r in enumerate(rows):
                    arr[i, : len(r)] = r
        except OverflowError:
            self._check_ints(rows, where)
            raise self.fail(where, "a number is out of range") from None
        if arr.size and np.abs(arr[:, :2]).max() >= _MAX_PORT:
            self._check_ints(rows, where)
        delay = arr[:, 3] if width == 4 else None
        return arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64), arr[:, 2], delay

    def _check_ints(self, rows: list[list[Any]], where: str) -> None:
        """Ports must fit in 64 bits and other integers in a float (JSON integers are unbounded)."""
        for i, r in enumerate(rows):
            for j, x in enumerate(r):
                if type(x) is int and abs(x) > (_MAX_PORT if j < 2 else _MAX_FLOAT):
                    what = ("ingress port", "egress port", "size", "delay")[j]
                    raise self.fail(f"{where}[{i}][{j}]", f"{what} is too large, got {value_text(x)}")

    def _flows_slow(self, rows: list[Any], where: str) -> None:
        for i, r in enumerate(rows):
            if type(r) is not list:
                raise self.fail(
                    f"{where}[{i}]",
                    f"a flow must be an array [src, dst, size], got {json_type(r)} {r!r:.60}",
                )
            if len(r) not in (3, 4):
                raise self.fail(
                    f"{where}[{i}]",
                    f"a flow must be [src, dst, size] (or [src, dst, size, delay]), got {len(r)} entries",
                )
            for j, x in enumerate(r):
                if not _is_number(x):
                    what = ("ingress port", "egress port", "size", "delay")[j]
                    raise self.fail(
                        f"{where}[{i}][{j}]", f"{what} must be a number, got {json_type(x)} {x!r:.60}"
                    )
        raise AssertionError("unreachable")  # pragma: no cover

    def coflow(self, k: int, obj: Any) -> Coflow:
        where = f"$.coflows[{k}]"
        if not isinstance(obj, dict):
            raise self.fail(where, f"a coflow must be an object, got {json_type(obj)}")
        unknown = [key for key in obj if key not in _COFLOW_KEYS and not key.startswith("_")]
        if unknown:
            raise self.fail(
                f"{where}.{unknown[0]}",
                f"unknown key '{unknown[0]}' (known: {', '.join(sorted(_COFLOW_KEYS))})",
            )
        for key in ("id", "flows"):
            if key not in obj:
                raise self.fail(where, f"missing required key '{key}'")
        cid = obj["id"]
        if not isinstance(cid, str) or not cid:
            raise self.fail(
                f"{where}.id", f"id must be a non-empty string, got {json_type(cid)} {cid!r:.60}"
            )
        release = self.number(obj.get("release", 0.0), f"{where}.release", "release")
        weight = self.number(obj.get("weight", 1.0), f"{where}.weight", "weight")
        deadline = obj.get("deadline")
        if deadline is not None:
            deadline = self.number(deadline, f"{where}.deadline", "deadline")
        sa = self.id_list(obj.get("starts_after", []), f"{where}.starts_after")
        fb = self.id_list(obj.get("finishes_before", []), f"{where}.finishes_before")
        src, dst, size, delay = self.flows(obj["flows"], f"{where}.flows")
        try:
            return Coflow(
                cid,
                src,
                dst,
                size,
                release=release,
                weight=weight,
                deadline=deadline,
                starts_after=sa,
                finishes_before=fb,
                delay=delay,
            )
        except InstanceError as exc:
            raise self.fail(self.locate(exc, k), exc.message) from None

    @staticmethod
    def locate(exc: InstanceError, k: int | None, ids: tuple[str, ...] = ()) -> str:
        if exc.field in ("path", "paths") and k is not None and k < len(ids):
            where = f"$.fabric.paths.{ids[k]}"
            return where if exc.flow is None else f"{where}[{exc.flow}]"
        if exc.field == "route" and k is not None and exc.flow is not None:
            return f"$.coflows[{k}].flows[{exc.flow}]"
        if k is None:
            # the fabric's errors name the port as field "ingress[p]" / "egress[p]"
            side = (exc.field or "").partition("[")[0]
            return f"$.ports.{exc.field}" if side in ("ingress", "egress") else "$"
        where = f"$.coflows[{k}]"
        if exc.flow is not None and exc.field in _FIELD_PATH:
            return f"{where}.flows[{exc.flow}][{_FIELD_PATH[exc.field]}]"
        if exc.field in _COFLOW_KEYS:
            return f"{where}.{exc.field}"
        if exc.field == "dependencies":
            return where
        return where

    def document(self, doc: Any) -> Instance:
        if not isinstance(doc, dict):
            raise self.fail("$", f"the document must be an object, got {json_type(doc)}")
        version = doc.get("format")
        if version not in (FORMAT_TAG, FORMAT_TAG_2):
            raise self.fail("$.format", f'format must be "{FORMAT_TAG}" or "{FORMAT_TAG_2}", got '
                            f'{version!r:.60}')
        keys = _TOP_KEYS if version == FORMAT_TAG else _TOP_KEYS_2
        unknown = [k for k in doc if k not in keys and not k.startswith("_")]
        if unknown:
            hint = (f"; a fabric needs format \"{FORMAT_TAG_2}\"" if unknown[0] == "fabric"
                    else " (metadata keys start with '_')")
            raise self.fail(f"$.{unknown[0]}", f"unknown key '{unknown[0]}'{hint}")
        name = doc.get("name", "")
        if name is None:
            name = ""
        if not isinstance(name, str):
            raise self.fail("$.name", f"name must be a string, got {json_type(name)}")
        fabric: Links
        if "fabric" in doc:
            if "ports" in doc:
                raise self.fail("$.ports", "give ports or a fabric, not both (a fabric's hosts are "
                                "its ports)")
            try:
                fabric = network_from_json(doc["fabric"])
            except InstanceError as exc:
                raise self.fail(f"$.fabric.{exc.field}".rstrip("."), exc.message) from None
        else:
            fabric = self.ports(doc.get("ports"))
        coflows = doc.get("coflows")
        if not isinstance(coflows, list):
            raise self.fail("$.coflows", f"coflows must be an array, got {json_type(coflows)}")
        if not coflows:
            raise self.fail("$.coflows", NO_COFLOWS)
        parsed = [self.coflow(k, c) for k, c in enumerate(coflows)]
        paths = getattr(fabric, "paths", None) or {}
        known = {c.id for c in parsed}
        stray = [cid for cid in paths if cid not in known]
        if stray:
            raise self.fail(f"$.fabric.paths.{stray[0]}", f"paths are given for coflow "
                            f"'{stray[0]}', which the instance does not have")
        try:
            return Instance(fabric, tuple(parsed), name=name)
        except InstanceError as exc:
            ids = tuple(c.id for c in parsed)
            raise self.fail(self.locate(exc, exc.coflow, ids), exc.message) from None

    def ports(self, ports: Any) -> Fabric:
        if not isinstance(ports, dict):
            raise self.fail(
                "$.ports", f"ports must be an object with 'ingress' and 'egress', got {json_type(ports)}"
            )
        for key in ports:
            if key not in ("ingress", "egress") and not key.startswith("_"):
                raise self.fail(f"$.ports.{key}", f"unknown key '{key}' (expected 'ingress' and 'egress')")
        for key in ("ingress", "egress"):
            if key not in ports:
                raise self.fail("$.ports", f"missing required key '{key}'")
        ing = self.capacities(ports["ingress"], "$.ports.ingress")
        egr = self.capacities(ports["egress"], "$.ports.egress")
        if not ing:
            raise self.fail("$.ports.ingress", "a fabric needs at least one port")
        if len(ing) != len(egr):
            raise self.fail("$.ports", f"{len(ing)} ingress but {len(egr)} egress capacities")
        try:
            return Fabric(np.array(ing), np.array(egr))
        except InstanceError as exc:
            raise self.fail(self.locate(exc, None), exc.message) from None


def loads(text: str, *, path: str = "<string>") -> Instance:
    """Parse a native JSON document."""
    return from_document(parse_json(text, path), path=path)


def from_document(doc: Any, *, path: str = "<string>") -> Instance:
    """An instance from an already-parsed native JSON document (errors name ``path``)."""
    return _Reader(path).document(doc)


def read(path: str | os.PathLike[str]) -> Instance:
    """Read a native JSON instance file."""
    return loads(read_text(path), path=str(path))


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The metadata (keys starting with ``_``) of a native JSON file."""
    doc = parse_json(read_text(path), str(path))
    if not isinstance(doc, dict):
        return {}
    return {k: v for k, v in doc.items() if k.startswith("_")}


def _num(x: float) -> str:
    if float(x).is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(float(x))


def dumps(instance: Instance, *, metadata: dict[str, Any] | None = None) -> str:
    """The instance as a native JSON document (one coflow per line)."""
    check_writable_instance(instance)
    fab = instance.fabric
    network = isinstance(fab, Network)
    parts = [f'{{"format": "{FORMAT_TAG_2 if network else FORMAT_TAG}"']
    if instance.name:
        parts.append(f',\n "name": {json.dumps(instance.name)}')
    for key, value in (metadata or {}).items():
        if not key.startswith("_"):
            raise ValueError(f"metadata keys must start with '_', got {key!r}")
        parts.append(f",\n {json.dumps(key)}: {json.dumps(value)}")
    if isinstance(fab, Network):
        parts.append(',\n "fabric": ' + json.dumps(network_to_json(fab, set(instance.ids))))
    else:
        parts.append(
            ',\n "ports": {"ingress": ['
            + ", ".join(map(_num, fab.ingress))
            + '], "egress": ['
            + ", ".join(map(_num, fab.egress))
            + "]}"
        )
    parts.append(',\n "coflows": [')
    for k, c in enumerate(instance.coflows):
        head = f'{{"id": {json.dumps(c.id)}, "release": {_num(c.release)}, "weight": {_num(c.weight)}'
        head += f', "deadline": {"null" if c.deadline is None else _num(c.deadline)}'
        if c.delay is None:
            rows = (
                f"[{s}, {d}, {_num(z)}]"
                for s, d, z in zip(c.src.tolist(), c.dst.tolist(), c.sizes.tolist(), strict=True)
            )
        else:
            rows = (
                f"[{s}, {d}, {_num(z)}, {_num(w)}]"
                for s, d, z, w in zip(
                    c.src.tolist(), c.dst.tolist(), c.sizes.tolist(), c.delay.tolist(), strict=True
                )
            )
        body = f', "flows": [{", ".join(rows)}]'
        body += f', "starts_after": {json.dumps(list(c.starts_after))}'
        body += f', "finishes_before": {json.dumps(list(c.finishes_before))}}}'
        sep = "," if k < instance.num_coflows - 1 else ""
        parts.append(f"\n  {head}{body}{sep}")
    parts.append("\n ]}\n")
    return "".join(parts)


def write(
    instance: Instance, path: str | os.PathLike[str], *, metadata: dict[str, Any] | None = None
) -> list[str]:
    """Write a native JSON file atomically. Returns notes (none for this format)."""
    text = dumps(instance, metadata=metadata)
    with atomic_writer(path) as fh:
        fh.write(text)
    return []
