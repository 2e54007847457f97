"""Exceptions raised by coflowopt.

Every error a user can cause derives from :class:`CoflowoptError`; the CLI
turns these into a one-line message and exit code 2, without a traceback.
"""

from __future__ import annotations

from types import ModuleType

__all__ = [
    "CoflowoptError",
    "InputError",
    "InstanceError",
    "MissingDependencyError",
    "ScheduleError",
    "interrupted",
]


class CoflowoptError(Exception):
    """Base class of all errors caused by input, options or environment."""


class InstanceError(CoflowoptError, ValueError):
    """An instance (or a part of it) violates the data model.

    The optional attributes locate the problem inside the instance, so that a
    file reader can translate them into a line number or a JSON path.

    Parameters
    ----------
    message
        What is wrong, naming the offending value.
    coflow
        Index of the offending coflow in the instance, if known.
    flow
        Index of the offending flow within its coflow, if known.
    field
        Name of the offending field (``"size"``, ``"release"``, ...), if known.
    """

    def __init__(
        self,
        message: str,
        *,
        coflow: int | None = None,
        flow: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.coflow = coflow
        self.flow = flow
        self.field = field


class InputError(CoflowoptError, ValueError):
    """A file or command-line value cannot be read.

    ``str(err)`` names the file, then the line (text formats) or the JSON path,
    then the problem: ``trace.txt:17: coflow '4': mapper rack 151 ...``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        json_path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.json_path = json_path

    def __str__(self) -> str:
        if self.path is None and self.line is None and self.json_path is None:
            return self.message  # a command-line value: nothing to locate
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        if self.json_path is not None:
            where += f": at {self.json_path}"
        return f"{where}: {self.message}"


class ScheduleError(CoflowoptError, ValueError):
    """A schedule is malformed (shapes, types) or infeasible when required."""


class MissingDependencyError(CoflowoptError, ImportError):
    """An optional dependency is needed; the message names the extra."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        msg = (
            f"{purpose} needs the optional package '{package}'; install it with "
            f"`pip install 'coflowopt[{extra}]'` (or `pip install {package}`)"
        )
        super().__init__(msg)
        self.package = package
        self.extra = extra
        self.purpose = purpose

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        # rebuilt from its three arguments (``args`` holds only the message), so that it
        # survives a worker process (coflowopt.sim.simulate_many)
        return (type(self), (self.package, self.extra, self.purpose))


def require(package: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional package or raise :class:`MissingDependencyError`."""
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise MissingDependencyError(package, extra, purpose) from exc


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was raised from, a KeyboardInterrupt: an interrupt that
    reaches Python inside a compiled kernel's call comes out of Numba's dispatcher as a
    SystemError whose context is the KeyboardInterrupt."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, KeyboardInterrupt):
            return True
        todo += [e.__cause__, e.__context__]
    return False
