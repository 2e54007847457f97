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


def bin_rule(short_length: float, narrow_width: int, size_unit: str | None = "B") -> str:
    """The rule of the SN/LN/SW/LW bins, as reports state it.

    ``short_length`` is in the instance's size units; ``size_unit`` is ``"B"`` when
    those are bytes (trace files), else ``None`` (the native JSON format states no
    unit): the threshold is then given in size units, with what it means in bytes.
    """
    from .instance import MB

    narrow = f"narrow: at most {plural(narrow_width, 'flow')}"
    mb = f"{short_length / MB:g} MB"
    if size_unit == "B":
        return f"short: longest flow < {mb}; {narrow}"
    return f"short: longest flow < {short_length:,.15g} size units ({mb} if they are bytes); {narrow}"


def brief(text: str, limit: int = 40, unit: str = "characters") -> str:
    """``text`` for a message, its middle left out when it is longer than ``limit``."""
    if len(text) <= limit:
        return text
    return f"{text[:12]}...{text[-6:]} ({len(text):,} {unit})"


def value_text(value: object) -> str:
    """A value read from a file, for a message: ``null`` for ``None``, long integers
    shortened (``100000000000...000000 (401 digits)``), other values' repr up to 60
    characters."""
    if value is None:
        return "null"
    if isinstance(value, int) and not isinstance(value, bool):
        return brief(str(value), 30, "digits")
    return f"{value!r:.60}"


def json_type(value: object) -> str:
    """The JSON kind of a value read from a file, for a message (``an integer``, ``null``)."""
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "an object", type(None): "null"}.get(type(value),
                                                                          type(value).__name__)
