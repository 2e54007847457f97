"""Helpers shared by the file formats: locating errors, atomic writes, number formatting."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

from ..errors import InputError, InstanceError
from ..instance import Fabric

__all__ = ["atomic_writer", "atomic_writers", "check_writable", "shortest_decimal", "text_lines"]


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; move it into place only on success.

    Nothing is left behind (neither a partial file nor the temporary one)
    when the body raises. See :func:`atomic_writers`.
    """
    with atomic_writers([path], binary=binary) as (fh,):
        yield fh


@contextlib.contextmanager
def atomic_writers(
    paths: Sequence[str | os.PathLike[str]], *, binary: bool | Sequence[bool] = False,
) -> Iterator[list[IO[Any]]]:
    """Text files (``binary``: byte files; or one flag per path) for ``paths``, all moved
    into place only when the body succeeds.

    Every target is checked before anything is written (:func:`check_writable`), so a
    bad second path leaves the first untouched. A symbolic link is written through (its
    target is replaced, the link stays); an existing file keeps its permissions and a new
    one gets the usual ``0o666`` less the umask. A target that is not a regular file (a
    device such as ``/dev/stdout``) is written in place, not replaced. System errors
    become an :class:`InputError` naming the file.
    """
    targets = [check_writable(p) for p in paths]
    flags = [binary] * len(paths) if isinstance(binary, bool) else list(binary)
    with contextlib.ExitStack() as stack:
        handles: list[IO[Any]] = []
        temps: list[tuple[str, Path]] = []
        current = -1
        try:
            for target, as_bytes in zip(targets, flags, strict=True):
                mode: str = "wb" if as_bytes else "w"
                encoding, newline = (None, None) if as_bytes else ("utf-8", "\n")
                if target.exists() and not target.is_file():
                    dev = stack.enter_context(open(target, mode, encoding=encoding, newline=newline))
                    handles.append(_Located(dev, str(target)))  # type: ignore[arg-type]
                    continue
                tmp, fd = _new_temp(target)
                temps.append((tmp, target))
                handles.append(stack.enter_context(os.fdopen(fd, mode, encoding=encoding,
                                                                newline=newline)))
            yield handles
            for i, handle in enumerate(handles):
                current = i  # a full disk shows when the buffer is flushed
                handle.close()
            current = -1
            stack.close()
            for tmp, target in temps:
                os.replace(tmp, target)
        except BaseException as exc:
            stack.close()
            for tmp, _ in temps:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            if isinstance(exc, OSError):
                bad = str(paths[current]) if current >= 0 else _culprit(exc, paths, targets, temps)
                raise InputError(f"cannot write: {exc.strerror or exc}", path=bad) from None
            raise


def _culprit(exc: OSError, paths: Sequence[str | os.PathLike[str]], targets: list[Path],
             temps: list[tuple[str, Path]]) -> str:
    """The path, as the caller gave it, that a system error concerns."""
    given = {str(t): str(p) for p, t in zip(paths, targets, strict=True)}
    given.update({tmp: given[str(t)] for tmp, t in temps})
    for name in (exc.filename2, exc.filename):
        if name is not None and str(name) in given:
            return given[str(name)]
    return " / ".join(str(p) for p in paths)


class _Located:
    """A stream whose write errors name its file (a device's buffer overflows during
    the caller's writes, where :func:`atomic_writers` cannot tell which file failed)."""

    def __init__(self, fh: IO[Any], name: str) -> None:
        self._fh = fh
        self._name = name

    def write(self, text: Any) -> int:
        try:
            return self._fh.write(text)
        except OSError as exc:
            exc.filename = exc.filename or self._name
            raise

    def __getattr__(self, attr: str) -> object:
        return getattr(self._fh, attr)


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Where writing ``path`` will go (a link's target), or an :class:`InputError` saying why
    it cannot: the path is a directory, its directory does not exist, or no file can be
    created there (tried: the temporary file that writes go through, removed again; not for
    a device or FIFO, which is written in place)."""
    if not os.fspath(path):
        raise InputError("an empty file name: name a file to write")
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    if target.is_dir():
        raise InputError("is a directory, not a file to write", path=str(path))
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError("the directory to write into does not exist", path=str(path))
    if target.exists() and not target.is_file():
        return target  # a device or FIFO (/dev/stdout) is written in place, not beside
    try:
        tmp, fd = _new_temp(target)
    except OSError as exc:
        raise InputError(f"cannot write into its directory: {exc.strerror}",
                         path=str(path)) from None
    os.close(fd)
    os.unlink(tmp)
    return target


def _new_temp(target: Path) -> tuple[str, int]:
    """A new empty file beside ``target``, open for writing: its path and descriptor (created
    with the target's mode, or 0o666 less the umask when the target does not exist yet)."""
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666
    for _ in range(100):
        tmp = str(target.parent / f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue
        if target.exists():
            os.chmod(tmp, mode)  # the umask does not apply to an existing file's mode
        return tmp, fd
    raise InputError("cannot create a temporary file beside it", path=str(target))




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


NO_COFLOWS = "the instance has no coflows (nothing to schedule)"
"""Why the readers refuse an instance without coflows (its results would all be nan)."""


def check_writable_instance(instance: Any, *, big_switch_only: bool = False) -> None:
    """Refuse to write an instance the readers would refuse: one without coflows; with
    ``big_switch_only`` (the trace formats, which store no topology), one on a network."""
    if big_switch_only and not isinstance(instance.fabric, Fabric):
        raise InstanceError("this format stores no topology: write an instance on a multi-hop "
                            "fabric as native JSON (coflowopt-instance/2)")
    if instance.num_coflows == 0:
        raise InstanceError("cannot write an instance with no coflows (the readers refuse one: "
                            "there is nothing to schedule)")


def release_ms(release: float) -> str:
    """A release time as the trace formats write it: milliseconds, in the shortest decimal
    that reads back (divided by 1000) as ``release``, else ``repr`` (which may not)."""
    return shortest_decimal(release * 1000.0, lambda v: v / 1000.0, release)


def trace_notes(instance: Any) -> list[str]:
    """What a trace file written from ``instance`` leaves out, for the user."""
    notes = [
        f"port capacities ({instance.fabric.capacity[0]:g} per port) are not stored in this "
        "format; pass the port rate when reading it back"
    ]
    if instance.name:
        notes.append(f"the instance name ({instance.name!r}) is not stored in this format")
    off = sum(float(release_ms(float(r))) / 1000.0 != r for r in instance.release)
    if off:
        notes.append(f"{off} of {instance.num_coflows} release times have no decimal in "
                     "milliseconds that reads back exactly; they read back within an ulp or two")
    return notes


def _plain(text: str) -> str:
    """Plain digits for exponents -6..15 (``9.711e+04`` -> ``97110``: coflowsim reads
    arrival times with ``Integer.parseInt``); scientific notation beyond."""
    if "e" in text:
        e = int(text.split("e")[1])
        if -6 <= e <= 15:
            return format(Decimal(text), "f")
    return text


def model_error(
    exc: InstanceError, path: str, locate: Callable[[InstanceError], dict[str, object]]
) -> InputError:
    """Translate a data-model error into an input error located in the file."""
    where = locate(exc)
    return InputError(exc.message, path=path, **where)  # type: ignore[arg-type]
