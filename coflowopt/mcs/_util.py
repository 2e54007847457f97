"""Small helpers shared by the MCS modules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from ..errors import InstanceError

__all__ = ["lookup"]

T = TypeVar("T")


def lookup(registry: Mapping[str, T], name: str, what: str) -> T:
    """``registry[name]``, or an error that names ``what`` and lists the choices."""
    try:
        return registry[name]
    except KeyError:
        raise InstanceError(f"unknown {what} '{name}'; choose from {', '.join(registry)}") from None
