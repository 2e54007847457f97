"""Reading and writing instances: one module per file format.

Formats are looked up by name in :data:`FORMATS`:

- ``json``: the native format (:mod:`coflowopt.io.native`);
- ``benchmark``: the Coflow-Benchmark trace (:mod:`coflowopt.io.benchmark`);
- ``coflowsim``: the same trace as the Varys/Aalo papers' Java simulator reads it
  (:func:`coflowopt.io.benchmark.loads_coflowsim`; never detected, name it);
- ``sincronia``: Sincronia's trace (:mod:`coflowopt.io.sincronia`).

:func:`read` detects the format from the suffix (``.json``) or the content.

Schedules: :func:`read_schedule` and :func:`write_schedule`, JSON or ``.npz`` by the
file's suffix (:mod:`coflowopt.io.schedule_file`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._files import read_text
from ..errors import InputError
from ..instance import Instance
from . import benchmark, native, sincronia
from .benchmark import DEFAULT_PORT_RATE
from .native import read_metadata
from .schedule_file import read_schedule, read_schedule_file, write_schedule

__all__ = [
    "DEFAULT_PORT_RATE",
    "FORMATS",
    "FileFormat",
    "detect_format",
    "loads",
    "read",
    "read_metadata",
    "read_schedule",
    "read_schedule_file",
    "write",
    "write_schedule",
]


@dataclass(frozen=True, slots=True)
class FileFormat:
    """A file format: how to read and write it."""

    name: str
    description: str
    parser: Callable[..., Instance]
    """Reads the format from text: ``parser(text, path=...)`` (plus ``port_rate=``)."""
    writer: Callable[..., list[str]]
    has_port_rate: bool
    """True for trace formats that store no capacities (``port_rate`` applies)."""


FORMATS: dict[str, FileFormat] = {
    "json": FileFormat(
        "json", "native coflowopt JSON", native.loads, native.write, False),
    "benchmark": FileFormat(
        "benchmark", "Coflow-Benchmark trace (FB2010)", benchmark.loads, benchmark.write, True),
    "sincronia": FileFormat(
        "sincronia", "Sincronia simulator trace", sincronia.loads, sincronia.write, True),
    "coflowsim": FileFormat(
        "coflowsim", "Coflow-Benchmark trace as coflowsim reads it (rounded sizes, racks "
        "coalesced, 10.24 s admission epochs)", benchmark.loads_coflowsim, benchmark.write, True),
}


def _lookup(name: str) -> FileFormat:
    try:
        return FORMATS[name]
    except KeyError:
        raise InputError(f"unknown format '{name}' (known: {', '.join(FORMATS)})") from None


def detect_format(path: str | os.PathLike[str], text: str | None = None) -> str:
    """Guess a file's format from its suffix, then its content."""
    p = str(path)
    if p.lower().endswith(".json"):
        return "json"
    if text is None:
        text = read_text(p)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return "json"
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 2:
        # every Coflow-Benchmark line has at least one '<rack>:<MB>' reducer, and Sincronia
        # lines have none: any line with one (a damaged first line may not) decides
        # (past the first line at any line break the parsers split at: a file with carriage
        # returns alone was read as Sincronia's; after a line's first field, the coflow's
        # id, which may hold a ':' in either format)
        rest = stripped.splitlines()[1:]
        return ("benchmark" if any(":" in tok for ln in rest for tok in ln.split()[1:])
                else "sincronia")
    if len(lines) == 1 and len(lines[0]) == 2:
        return "benchmark"  # an empty trace: both text formats read it alike
    raise InputError(
        "cannot tell the file's format (JSON, Coflow-Benchmark or Sincronia trace); name it with --format",
        path=p,
        line=1,
    )


def read(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,
    port_rate: float | None = None,
) -> Instance:
    """Read an instance file.

    Parameters
    ----------
    path
        The file.
    format
        ``json``, ``benchmark``, ``sincronia`` or ``coflowsim``; detected when omitted
        (never as ``coflowsim``).
    port_rate
        Capacity of every port for the trace formats (bytes per second;
        default 1.25e8, 1 Gbit/s). JSON files carry their own capacities.
    """
    return loads(read_text(path), path=str(path), format=format, port_rate=port_rate)[0]


def loads(
    text: str,
    *,
    path: str = "<string>",
    format: str | None = None,
    port_rate: float | None = None,
) -> tuple[Instance, str]:
    """Parse an instance file's text (read once: a pipe or FIFO cannot be read twice).

    ``path`` names the text in error messages and decides the format when omitted
    (:func:`detect_format`); ``port_rate`` as in :func:`read`. Returns the instance and
    the format's name.
    """
    name = format or detect_format(path, text)
    fmt = _lookup(name)
    if fmt.has_port_rate:
        rate = DEFAULT_PORT_RATE if port_rate is None else port_rate
        return fmt.parser(text, path=path, port_rate=rate), name
    if port_rate is not None:
        raise InputError(
            f"a port rate applies to trace formats only; {name} files carry their own capacities",
            path=path,
        )
    return fmt.parser(text, path=path), name


def write(
    instance: Instance, path: str | os.PathLike[str], *, format: str | None = None, **options: Any
) -> list[str]:
    """Write an instance file atomically (nothing is written on error).

    The format defaults to ``json``. Returns notes worth telling the user
    (e.g. what the format could not store).
    """
    if not isinstance(instance, Instance):
        raise InputError(f"expected an Instance to write, got {type(instance).__name__}")
    fmt = _lookup(format or "json")
    return fmt.writer(instance, path, **options)
