"""The ``coflowopt`` command line: the only place that parses arguments or prints.

Each module of this package (not starting with ``_``) adds its commands
through ``register(subparsers)``, so a new command is one new module.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

import numpy as np

from ..errors import CoflowoptError

__all__ = ["build_parser", "main"]

# Preferred order in --help; other modules follow alphabetically.
_ORDER = ["info", "convert", "generate", "solve", "simulate", "fair", "mcs"]


def _command_modules() -> list[str]:
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    return sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n))


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="coflowopt",
        description="Optimal schedules, lower bounds and heuristics for coflow scheduling.",
    )
    parser.add_argument("--version", action="version", version=f"coflowopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _command_modules():
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (2 for bad input or options)."""
    # worker processes (--jobs) inherit this: Numba colours its internal error messages with
    # colorama, whose exit handler then writes a terminal reset (ESC[0m) from every worker
    os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with standard output closed (`>&-`): results would vanish
        if sys.stderr is not None:
            print("coflowopt: error: standard output is closed; redirect it to a file or "
                  "/dev/null", file=sys.stderr)
        return 2
    try:
        # inf/nan from extreme inputs are handled where they matter (the results say so);
        # NumPy's floating-point warnings would only add noise to the one-line messages
        with np.errstate(all="ignore"):
            code = args.func(args)
    except CoflowoptError as exc:
        print(f"coflowopt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("coflowopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except OSError as exc:  # a system error not tied to an input: e.g. stdout on a full disk
        print(f"coflowopt: error: {exc}", file=sys.stderr)
        return 1
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
