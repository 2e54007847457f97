"""The ``coflowopt`` command line: the only place that parses arguments or prints.

Each module of this package (not starting with ``_``) adds its commands
through ``register(subparsers)``, so a new command is one new module.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from ..errors import CoflowoptError, interrupted

__all__ = ["build_parser", "main", "run"]

# Preferred order in --help; other modules follow alphabetically.
_ORDER = ["info", "convert", "generate", "solve", "simulate", "fair", "mcs", "sweep"]


_MODULE_OF = {"info": "info", "validate": "info", "convert": "convert", "generate": "generate",
              "solve": "solve", "bound": "solve", "simulate": "simulate", "compare": "simulate",
              "fair": "fair", "mcs": "mcs", "sweep": "sweep", "report": "sweep",
              "compile": "compile", "search": "search"}
"""The module that registers each command: a command loads its own module only (loading
them all costs about half a second at every start). The tests check this against what
the modules register."""


def _command_modules() -> list[str]:
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n))


def _command(argv: Sequence[str] | None) -> str | None:
    """The command named on a command line (its first word, unless that is an option)."""
    words = sys.argv[1:] if argv is None else argv
    return words[0] if words and not words[0].startswith("-") else None


class _Parser(argparse.ArgumentParser):
    """An option error in one line, as bad input gets (argparse prints the whole usage
    first); ``--help`` still shows the usage. Subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command``, one of the commands, it knows that
    command only (and loads its module only)."""
    from .. import __version__

    parser = _Parser(
        prog="coflowopt",
        description="Optimal schedules, lower bounds and heuristics for coflow scheduling.",
        epilog="Exit status: 0 done; 1 a negative answer (validate: the schedule is infeasible; "
        "search: nothing found; solve: no schedule to write; sweep: some cells failed) or a "
        "system error such as a full disk; 2 bad input or options (the message names the file, "
        "the line or JSON path, and the value); 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"coflowopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in [_MODULE_OF[command]] if command in _MODULE_OF else _command_modules():
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


class _CompileNotice:
    """Says on stderr when the simulator's kernels compile (the first use of each, once per
    installation), in this process or in its worker processes (which relay theirs:
    :class:`coflowopt.sim.batch.WorkerPool`), so that a wait of seconds to a minute is not
    silent. The first start is announced with what it is; every end with its time.

    An interrupt that llvmlite swallowed while this process compiled (its ctypes callbacks
    print "Exception ignored" and go on) is raised again when the compilation ends:
    ``interrupts`` is :func:`main`'s record of the interrupts it was given."""

    def __init__(self, interrupts: list[int]) -> None:
        self.announced = False
        self.interrupts = interrupts
        self.lock = threading.Lock()  # this process's compilations and the relay's thread

    def __call__(self, name: str, seconds: float | None) -> None:
        from .. import _jit
        from ._util import notice

        if self.interrupts and threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt
        with self.lock:
            if seconds is not None:
                notice(f"coflowopt: compiled {name} in {seconds:.1f} s")
            elif not self.announced:
                self.announced = True
                where = (f"once: they are cached in {_jit.cache_dir()}" if _jit.cache_usable()
                         else f"in every process: {_jit.cache_dir()} cannot be written")
                notice(f"coflowopt: compiling the simulator's kernels for their first use "
                       f"(5-25 s a scheduler on a quiet machine, more under load; {where})")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (2 for bad input or options, 130 interrupted).

    Everything heavy (NumPy, SciPy, Numba, the commands) is imported in here, so that an
    interrupt during the first second of a command is one line too. An error that follows
    an interrupt is the interrupt's: a library can swallow the KeyboardInterrupt and fail
    another way (llvmlite's callbacks while a kernel compiles: Numba then raises
    "no compiled object yet"), or go on (llvmlite's callbacks print "Exception ignored"
    and the compilation ends normally: the interrupt is raised again then, see
    :class:`_CompileNotice`, and that print is left out). Once interrupted, a further
    interrupt only counts (a second Ctrl-C, or the one ``timeout`` forwards, raised a
    traceback from the message's print)."""
    return _interruptible(argv, None)


def _interruptible(argv: Sequence[str] | None, leave: Any) -> int:
    """:func:`main`; ``leave``: the SIGINT handler to leave installed at the end instead of
    the one it found (:func:`run`: ignored, with no moment between in which an interrupt
    would kill the process)."""
    seen: list[int] = []
    previous = None
    unraisable = sys.unraisablehook
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        def on_interrupt(signum: int, frame: Any) -> None:
            seen.append(signum)
            raise KeyboardInterrupt

        def on_unraisable(what: Any) -> None:
            if not (seen and issubclass(what.exc_type, KeyboardInterrupt)):
                unraisable(what)

        previous = signal.signal(signal.SIGINT, on_interrupt)
        sys.unraisablehook = on_unraisable

    def interrupted() -> int:
        if previous is not None:
            signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
        print("coflowopt: interrupted", file=sys.stderr)
        return 130

    try:
        code = _main(argv, seen)
        # else swallowed where it landed (a ctypes callback), and the work went on to its end
        return interrupted() if seen else code
    except KeyboardInterrupt:
        return interrupted()
    except Exception:
        if not seen:
            raise
        return interrupted()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous if leave is None else leave)
            sys.unraisablehook = unraisable


def run() -> NoReturn:
    """The ``coflowopt`` command: :func:`main`, then exit. Once the work is done an
    interrupt is ignored: it could only kill the process on its way out (exit status -2
    instead of the work's). After an interrupt, errors in the clean-up of objects it left
    half made (llvmlite's, when it lands while a kernel compiles) are not printed."""
    code = _interruptible(None, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (where main found a handler of another's)
    if code == 130:
        sys.unraisablehook = lambda what: None
    sys.exit(code)


def _main(argv: Sequence[str] | None, interrupts: list[int]) -> int:
    # worker processes (--jobs) inherit this: Numba colours its internal error messages with
    # colorama, whose exit handler then writes a terminal reset (ESC[0m) from every worker
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
    parser = build_parser(_command(argv))
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with standard output closed (`>&-`): results would vanish
        if sys.stderr is not None:
            print("coflowopt: error: standard output is closed; redirect it to a file or "
                  "/dev/null", file=sys.stderr)
        return 2
    import numpy as np

    from .. import _jit

    try:
        # inf/nan from extreme inputs are handled where they matter (the results say so);
        # NumPy's floating-point warnings would only add noise to the one-line messages
        _jit.env_mode()  # a bad COFLOWOPT_JIT before any work (a sweep's cells would each fail)
        with np.errstate(all="ignore"), _jit.on_compile(_CompileNotice(interrupts)):
            code = args.func(args)
    except CoflowoptError as exc:
        print(f"coflowopt: error: {exc}", file=sys.stderr)
        return 2
    except SystemError as exc:
        if not interrupted(exc):  # an interrupt inside a compiled kernel's call
            raise
        raise KeyboardInterrupt from exc
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except OSError as exc:  # a system error not tied to an input: e.g. stdout on a full disk
        print(f"coflowopt: error: {exc}", file=sys.stderr)
        return 1
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
