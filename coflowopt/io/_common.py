"""Helpers shared by the file formats: locating errors, atomic writes, number formatting."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from ..errors import InputError, InstanceError

__all__ = ["atomic_writer", "shortest_decimal", "text_lines"]


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """Open a temporary file beside ``path``; move it into place only on success.

    Nothing is left behind (neither a partial file nor the temporary one)
    when the body raises.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("the directory to write into does not exist", path=str(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            yield fh
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text, or an :class:`InputError` naming the file."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None


def text_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, tokens)`` for every non-blank line (numbered from 1)."""
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if tokens:
            yield number, tokens


def shortest_decimal(value: float, decode: Callable[[float], float], target: float) -> str:
    """The shortest decimal string ``s`` with ``decode(float(s)) == target``.

    Writers use it so that a file read back gives exactly the same numbers
    (e.g. the milliseconds whose division by 1000 is the stored release).
    Falls back to ``repr(value)`` when no string reproduces ``target``.
    """
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if decode(float(text)) == target:
            return _plain(text)
    return repr(value)


def _plain(text: str) -> str:
    """Scientific notation only where it is shorter and unambiguous."""
    if "e" in text:
        mantissa, exp = text.split("e")
        e = int(exp)
        if 0 <= e <= 15 and "." not in mantissa:
            return mantissa + "0" * e
    return text


def model_error(
    exc: InstanceError, path: str, locate: Callable[[InstanceError], dict[str, object]]
) -> InputError:
    """Translate a data-model error into an input error located in the file."""
    where = locate(exc)
    return InputError(exc.message, path=path, **where)  # type: ignore[arg-type]
