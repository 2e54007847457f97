"""The ``coflowopt-demands/1`` JSON format: correlation vectors without flows.

::

    {"format": "coflowopt-demands/1",
     "name": "optional string",
     "ports": 3,                      optional: the links are P uplinks then P downlinks
     "links": ["link-1", "link-2"],   optional link names (default L0.. or in0../out0..)
     "capacity": [1, 1],              optional absolute capacities (default 1 each)
     "exact": true,                   optional; default: exact iff every number is an
                                      integer or a "p/q" string
     "coflows": [
       {"id": "A", "vector": ["1/2", 1], "weight": 1, "elastic": true, "bound": null},
       {"id": "B", "demand": ["1/4", "1/24"]}
     ]}

``vector`` is a correlation vector: demand per unit of progress as a
fraction of each link, scaled by the reader so the largest entry is 1.
``demand`` instead gives a *bounded* demand (fractions of each link): the
vector is ``demand / max(demand)`` and the bound ``max(demand)``. ``bound``
caps the progress a coflow can use (``null``: unbounded), ``elastic``
says whether it can use more than ``P_k d_k`` on its non-bottleneck links
(default: true for a ``vector``, false for a ``demand``, which "cannot
elastically scale up", dissertation §7.6.3). Numbers may be JSON numbers or strings such as
``"1/6"``. Keys starting with ``_`` are metadata (``_source``,
``_description``, ``_expected``, ``_notes``) and are ignored.

:func:`load_problem` reads either this format or any instance file (then
the vectors come from each coflow's per-link load, §7.3.1).
"""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from typing import Any

import numpy as np

from .. import io as instance_io
from .._files import parse_json, read_text
from .._text import value_text
from ..errors import InputError, InstanceError
from ..instance import TINY
from ..io._common import atomic_writer
from ..io.native import FORMAT_TAG as NATIVE_TAG
from ..io.native import FORMAT_TAG_2 as NATIVE_TAG_2
from ..io.native import from_document as native_from_document
from ._arith import as_float, is_rational, parse_fraction
from .problem import FairnessProblem, check_problem

__all__ = ["DEMANDS_FORMAT", "load_problem", "read_demands", "write_demands"]

DEMANDS_FORMAT = "coflowopt-demands/1"
_TOP = {"format", "name", "ports", "links", "capacity", "exact", "coflows"}
_COFLOW = {"id", "vector", "demand", "weight", "elastic", "bound"}


def _number(value: Any, path: str, where: str, what: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(
            f"{what} must be a number or a 'p/q' string, got {value!r:.60}", path=path, json_path=where
        )
    given = value
    if isinstance(value, str):
        try:
            value = parse_fraction(value)
        except ZeroDivisionError:
            raise InputError(f"{what} {value!r:.60} divides by zero", path=path,
                             json_path=where) from None
        except ValueError as exc:
            raise InputError(
                f"{what} {value!r:.60} is not a number or fraction ({exc})", path=path,
                json_path=where
            ) from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{what} must be finite, got {value!r}", path=path, json_path=where)
    try:
        size = abs(float(value))
    except OverflowError:
        size = math.inf
    if size == math.inf:
        raise InputError(f"{what} is too large for a float, got {given!r:.60}", path=path,
                         json_path=where)
    if 0 < size < TINY:
        raise InputError(f"{what} {given!r:.60} is below {TINY:.3g}, the smallest normal float",
                         path=path, json_path=where)
    return value


def _numbers(values: Any, path: str, where: str, what: str, size: int | None = None) -> list[Any]:
    if not isinstance(values, list):
        raise InputError(f"{what} must be an array, got {type(values).__name__}", path=path, json_path=where)
    if size is not None and len(values) != size:
        raise InputError(f"{what} has {len(values)} entries, expected {size}", path=path, json_path=where)
    return [_number(v, path, f"{where}[{i}]", what) for i, v in enumerate(values)]


def read_demands(path: str | os.PathLike[str]) -> FairnessProblem:
    """Read a ``coflowopt-demands/1`` file (errors name the file and JSON path)."""
    p = str(path)
    return parse_demands(parse_json(read_text(p), p), path=p)


def parse_demands(doc: Any, *, path: str = "<input>") -> FairnessProblem:
    """A problem from an already-parsed ``coflowopt-demands/1`` document."""
    if not isinstance(doc, dict):
        raise InputError("the document must be a JSON object", path=path, json_path="$")
    if doc.get("format") != DEMANDS_FORMAT:
        raise InputError(
            f"'format' must be '{DEMANDS_FORMAT}', got {doc.get('format')!r}", path=path, json_path="$.format"
        )
    unknown = [k for k in doc if k not in _TOP and not k.startswith("_")]
    if unknown:
        raise InputError(f"unknown key '{unknown[0]}' (known: {', '.join(sorted(_TOP))})",
                         path=path, json_path=f"$.{unknown[0]}")
    coflows = doc.get("coflows")
    if not isinstance(coflows, list) or not coflows:
        raise InputError("'coflows' must be a non-empty array", path=path, json_path="$.coflows")
    ports = doc.get("ports")
    if ports is not None and (isinstance(ports, bool) or not isinstance(ports, int) or ports < 1):
        raise InputError(f"'ports' must be a positive integer, got {ports!r}", path=path, json_path="$.ports")
    names = doc.get("links")
    if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)):
        raise InputError("'links' must be an array of strings", path=path, json_path="$.links")
    if names is not None:
        dup = next((i for i, n in enumerate(names) if n in names[:i]), None)
        if dup is not None:
            raise InputError(f"duplicate link name '{names[dup]}'", path=path,
                             json_path=f"$.links[{dup}]")
        if ports and len(names) != 2 * ports:
            raise InputError(f"{len(names)} link names, but {ports} ports have {2 * ports} links",
                             path=path, json_path="$.links")

    rows: list[list[Any]] = []
    bounds: list[Any] = []
    weights: list[Any] = []
    elastic: list[bool] = []
    ids: list[str] = []
    L: int | None = len(names) if names is not None else (2 * ports if ports else None)
    for k, c in enumerate(coflows):
        where = f"$.coflows[{k}]"
        if not isinstance(c, dict):
            raise InputError("a coflow must be an object", path=path, json_path=where)
        bad = [key for key in c if key not in _COFLOW and not key.startswith("_")]
        if bad:
            raise InputError(f"unknown key '{bad[0]}' (known: {', '.join(sorted(_COFLOW))})",
                             path=path, json_path=f"{where}.{bad[0]}")
        cid = c.get("id", f"C{k}")
        if not isinstance(cid, str) or not cid:
            raise InputError("id must be a non-empty string", path=path, json_path=f"{where}.id")
        if cid in ids:
            raise InputError(f"duplicate coflow id '{cid}' (also $.coflows[{ids.index(cid)}])",
                             path=path, json_path=f"{where}.id")
        if ("vector" in c) == ("demand" in c):
            raise InputError("give exactly one of 'vector' and 'demand'", path=path, json_path=where)
        key = "vector" if "vector" in c else "demand"
        row = _numbers(c[key], path, f"{where}.{key}", key, L)
        L = len(row)
        if any(float(v) < 0 for v in row) or not any(float(v) > 0 for v in row):
            raise InputError(f"{key} needs non-negative entries and at least one positive one, "
                             f"got {value_text(c[key])}", path=path, json_path=f"{where}.{key}")
        bound = c.get("bound")
        if bound is not None:
            bound = _number(bound, path, f"{where}.bound", "bound")
            if float(bound) <= 0:
                raise InputError(f"bound must be > 0, got {value_text(c['bound'])}", path=path,
                                 json_path=f"{where}.bound")
        if key == "demand":
            top = max(row, key=float)
            # int / int is a float in Python: scale rational rows as Fractions (keeps them exact)
            row = [Fraction(v) / Fraction(top) if is_rational(v) and is_rational(top) else v / top
                   for v in row]
            bound = top if bound is None else min(bound, top, key=float)
        w = _number(c.get("weight", 1), path, f"{where}.weight", "weight")
        if float(w) <= 0:
            raise InputError(f"weight must be > 0, got {value_text(c['weight'])}", path=path,
                             json_path=f"{where}.weight")
        # a bounded demand "cannot elastically scale up" (dissertation §7.6.3): inelastic
        # unless said otherwise; a correlation vector is elastic unless said otherwise
        el = c.get("elastic", key == "vector")
        if not isinstance(el, bool):
            raise InputError("elastic must be true or false", path=path, json_path=f"{where}.elastic")
        rows.append(row)
        bounds.append(bound)
        weights.append(w)
        elastic.append(el)
        ids.append(cid)
    assert L is not None
    cap = _numbers(doc["capacity"], path, "$.capacity", "capacity", L) if "capacity" in doc else None
    for i, c in enumerate(cap or []):
        if not float(c) > 0:
            raise InputError(f"capacity must be > 0, got {value_text(doc['capacity'][i])}", path=path,
                             json_path=f"$.capacity[{i}]")
    exact = doc.get("exact")
    if exact is not None and not isinstance(exact, bool):
        raise InputError("'exact' must be true or false", path=path, json_path="$.exact")
    if exact is None:
        values = [v for r in rows for v in r] + weights + [b for b in bounds if b is not None] + (cap or [])
        exact = all(is_rational(v) for v in values)
    link_names: tuple[str, ...] = tuple(names) if names is not None else ()
    if not link_names and ports:
        link_names = tuple(f"in{p}" for p in range(ports)) + tuple(f"out{p}" for p in range(ports))
    try:
        return FairnessProblem(
            np.array(rows, dtype=object),
            weights=np.array(weights, dtype=object),
            bounds=np.array([math.inf if b is None else b for b in bounds], dtype=object),
            elastic=np.array(elastic),
            capacity=None if cap is None else np.array(cap, dtype=object),
            ids=tuple(ids),
            link_names=link_names,
            num_ports=ports,
            name=str(doc.get("name", "")),
            exact=exact,
        )
    except InstanceError as exc:
        where = "$" if exc.coflow is None else f"$.coflows[{exc.coflow}]"
        raise InputError(exc.message, path=path, json_path=where) from None


def _json_number(v: Any) -> Any:
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    f = float(v)
    if math.isinf(f):
        return None
    return int(f) if f.is_integer() and abs(f) < 2**53 else f


def write_demands(
    problem: FairnessProblem, path: str | os.PathLike[str], *, metadata: dict[str, Any] | None = None
) -> None:
    """Write a problem as ``coflowopt-demands/1`` (fractions as ``"p/q"`` strings)."""
    problem = check_problem(problem, "write_demands")
    doc: dict[str, Any] = {"format": DEMANDS_FORMAT}
    if problem.name:
        doc["name"] = problem.name
    for key, value in (metadata or {}).items():
        if not key.startswith("_"):
            raise ValueError(f"metadata keys must start with '_', got {key!r}")
        doc[key] = value
    if problem.num_ports is not None:
        doc["ports"] = problem.num_ports
    doc["links"] = list(problem.link_names)
    doc["capacity"] = [_json_number(c) for c in problem.capacity]
    doc["exact"] = problem.exact
    bounds = as_float(problem.bounds)
    doc["coflows"] = [
        {
            "id": cid,
            "vector": [_json_number(v) for v in problem.vectors[k]],
            "weight": _json_number(problem.weights[k]),
            "elastic": bool(problem.elastic[k]),
            "bound": None if math.isinf(bounds[k]) else _json_number(problem.bounds[k]),
        }
        for k, cid in enumerate(problem.ids)
    ]
    with atomic_writer(path) as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")


def load_problem(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    port_rate: float | None = None,
    elastic: bool = True,
    exact: bool = False,
) -> FairnessProblem:
    """A demands file as is, or an instance file turned into correlation vectors.

    The file is read and parsed once (a pipe or FIFO cannot be read twice): JSON text is a
    demands file when its ``format`` says so, else a native instance. ``port_rate``
    applies to trace files only; ``elastic=False`` makes every coflow inelastic (in both
    cases); ``exact`` converts an instance's loads to fractions, and refuses a demands
    file that is not exact already.
    """
    p = str(path)
    text = read_text(p)
    if format in (None, "json") and (format == "json" or instance_io.detect_format(p, text) == "json"):
        doc = parse_json(text, p)
        fmt = doc.get("format") if isinstance(doc, dict) else None
        if isinstance(doc, dict) and fmt not in (DEMANDS_FORMAT, NATIVE_TAG, NATIVE_TAG_2):
            raise InputError(f"format must be \"{DEMANDS_FORMAT}\" (a demands file) or "
                             f"\"{NATIVE_TAG}\" or \"{NATIVE_TAG_2}\" (an instance), got "
                             f"{fmt!r:.60}", path=p, json_path="$.format")
        if fmt == DEMANDS_FORMAT:
            if port_rate is not None:
                raise InputError("a port rate applies to trace files; a demands file states its "
                                 "capacities", path=p)
            prob = parse_demands(doc, path=p)
            if exact and not prob.exact:  # (decimals are binary fractions once read)
                raise InputError("exact arithmetic needs every number of the file (vectors, "
                                 "demands, weights, bounds, capacities) an integer or a \"p/q\" "
                                 "string; a decimal is computed in floats", path=p)
            return prob if elastic else prob.replace(elastic=False)
        if port_rate is not None:  # the same refusal as for any JSON instance
            instance_io.loads(text, path=p, format="json", port_rate=port_rate)
        inst = native_from_document(doc, path=p)
    else:
        inst, _ = instance_io.loads(text, path=p, format=format, port_rate=port_rate)
    return FairnessProblem.from_instance(inst, elastic=elastic, exact=exact)

