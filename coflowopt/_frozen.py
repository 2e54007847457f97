"""The frozen data classes' helpers: read-only arrays, and pickling (process pools, notebooks).

A frozen dataclass is pickled as the arguments of its ``__init__``: unpickling calls the
constructor, so ``__post_init__`` validates and derives again, and what it makes
read-only (NumPy arrays) or immutable (``MappingProxyType``) is read-only again after a
round trip. Without it, read-only views would come back writable and a
``MappingProxyType`` (``Instance``'s index, the MCS results' ``info``) would not pickle
at all.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = ["Frozen", "readonly", "reduce_frozen"]


def readonly(arr: np.ndarray) -> np.ndarray:
    """``arr``, made read-only in place (a frozen data class's arrays)."""
    arr.setflags(write=False)
    return arr


class Frozen:
    """Base of the frozen data classes that pickle through their constructor (:func:`reduce_frozen`)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return reduce_frozen(self)


def reduce_frozen(obj: Any) -> tuple[Any, tuple[Any, ...]]:
    """``__reduce__`` of a frozen dataclass: rebuild it from its ``__init__`` fields.

    Fields that held a ``MappingProxyType`` or a read-only array are wrapped or made
    read-only again after the constructor ran (for classes without a ``__post_init__``
    that does it).
    """
    kwargs: dict[str, Any] = {}
    proxies: list[str] = []
    frozen: list[str] = []
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        value = getattr(obj, f.name)
        if isinstance(value, MappingProxyType):
            proxies.append(f.name)
            value = dict(value)
        elif isinstance(value, np.ndarray) and not value.flags.writeable:
            frozen.append(f.name)
        kwargs[f.name] = value
    return _rebuild, (type(obj), kwargs, tuple(proxies), tuple(frozen))


def _rebuild(cls: type, kwargs: dict[str, Any], proxies: tuple[str, ...],
             frozen: tuple[str, ...]) -> Any:
    obj = cls(**kwargs)
    for name in proxies:
        value = getattr(obj, name)
        if not isinstance(value, MappingProxyType):
            object.__setattr__(obj, name, MappingProxyType(dict(value)))
    for name in frozen:
        value = getattr(obj, name)
        if isinstance(value, np.ndarray) and value.flags.writeable:
            value.flags.writeable = False
    return obj
