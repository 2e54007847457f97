"""Reading input files: UTF-8 text with a clear error, and strict JSON (no repeated keys).

Below every layer that reads files (the formats in :mod:`coflowopt.io`, the fabric's
background and flow-size files), so that each refuses bad input in the same words.
"""

from __future__ import annotations

import codecs
import itertools
import json
import math
import numbers
import os
from typing import Any

from .errors import InputError

__all__ = ["MAX_INPUT_BYTES", "parse_json", "read_text"]


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _Marked(dict):
    repeated: str | None = None
    closed: int = 0


def _repeated_at(text: str) -> str | None:
    """The JSON path of the key that the strict parse reported repeated: a second parse
    keeps repeats, numbering objects in the order they close (the order in which the strict
    parse checks them). Run only on that error, so the usual parse stays fast."""
    closed = itertools.count()

    def mark(pairs: list[tuple[str, Any]]) -> _Marked:
        out = _Marked()
        for key, value in pairs:
            if key in out and out.repeated is None:
                out.repeated = key
            out[key] = value
        out.closed = next(closed)
        return out

    try:
        doc = json.loads(text, object_pairs_hook=mark, parse_int=_json_int)
    except (ValueError, RecursionError):
        return None
    first: tuple[int, str] | None = None
    stack: list[tuple[str, Any]] = [("$", doc)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, _Marked):
            if node.repeated is not None and (first is None or node.closed < first[0]):
                first = (node.closed, f"{where}.{node.repeated}")
            stack.extend((f"{where}.{k}", v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(node))
    return None if first is None else first[1]


def _json_int(digits: str) -> int | float:
    """A JSON integer; one of more than 4,000 digits reads as ``inf``, which the checks of
    each field then reject with its JSON path (Python refuses to convert more than 4,300
    digits to an int or back, with an error that names neither)."""
    return int(digits) if len(digits) <= 4000 else float(digits)


def parse_json(text: str, path: str) -> Any:
    """A JSON document, or an :class:`InputError` naming the file and line. An object that
    repeats a key is an error (JSON parsers differ on which one wins)."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path,
                         line=exc.lineno) from None
    except _DuplicateKey as exc:
        raise InputError(f"invalid JSON: an object repeats the key {str(exc)!r}",
                         path=path, json_path=_repeated_at(text)) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=path) from None


MAX_INPUT_BYTES = 8 << 30
"""The most bytes :func:`read_text` reads (8 GiB; a device such as ``/dev/zero`` never ends)."""

_CHUNK = 1 << 20


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's UTF-8 text (without the byte-order mark some editors put first), or an
    :class:`InputError` naming the file.

    Read in chunks: a NUL byte (binary data) stops it at once, and so does passing
    :data:`MAX_INPUT_BYTES`.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    parts: list[str] = []
    done = 0  # bytes decoded before the current chunk

    def decode(chunk: bytes, final: bool = False) -> None:
        held = len(decoder.getstate()[0])  # the end of the last chunk, an unfinished character
        try:
            parts.append(decoder.decode(chunk, final))
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason} at byte {done - held + exc.start})",
                             path=str(path)) from None

    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                nul = chunk.find(b"\0")
                if nul >= 0:
                    raise InputError(f"binary data, not text (a NUL byte at byte {done + nul})",
                                     path=str(path))
                if not done and chunk.startswith(codecs.BOM_UTF8):
                    done, chunk = len(codecs.BOM_UTF8), chunk[len(codecs.BOM_UTF8):]
                decode(chunk)
                done += len(chunk)
                if done > MAX_INPUT_BYTES:
                    raise InputError(f"more than {MAX_INPUT_BYTES:,} bytes: not an input file "
                                     "this tool reads", path=str(path))
        decode(b"", final=True)
        return "".join(parts)
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None


def finite_number(value: object) -> bool:
    """A finite int or float (NumPy's included), not a bool: what a numeric option takes
    (an integer too large for a float is not one)."""
    return json_float(value) is not None


def natural_number(value: object) -> bool:
    """An int (NumPy's included), not a bool, and >= 0: what a seed or a count takes."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 0


def json_float(value: Any) -> float | None:
    """A JSON number as a float, or ``None`` if it is not one that is finite in floating
    point (an integer of 400 digits is a JSON number, and beyond it). NumPy's numbers
    count, for objects built in Python; booleans do not."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        v = float(value)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None
