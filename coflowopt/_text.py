"""Counts in messages and reports: "1 port", "2 ports"."""

from __future__ import annotations

__all__ = ["plural"]


def plural(n: int, noun: str, many: str | None = None, *, thousands: bool = False) -> str:
    """``n`` and ``noun``, in the plural (``many``, else ``noun + "s"``) unless ``n`` is 1.

    ``plural(1, "port")`` is ``"1 port"``, ``plural(0, "dependency", "dependencies")``
    ``"0 dependencies"``; ``n`` has thousands separators only with ``thousands``.
    """
    word = noun if n == 1 else (many or noun + "s")
    return f"{n:,} {word}" if thousands else f"{n} {word}"
