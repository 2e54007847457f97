"""The policy interface and the parameter machinery shared by all policies."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..engine import Allocation, SimulationError, SimView

__all__ = [
    "AnyParams",
    "NoParams",
    "Params",
    "Policy",
    "check_choice",
    "check_positive",
    "params_from_strings",
]


@dataclass(frozen=True, slots=True)
class Params:
    """Base of every policy's parameters: a frozen, validated dataclass."""

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True, slots=True)
class NoParams(Params):
    """A policy without parameters."""


def check_positive(value: float | None, name: str, *, allow_none: bool = False,
                   allow_zero: bool = False) -> None:
    if value is None and allow_none:
        return
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        v = float(value)  # type: ignore[arg-type]
        ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        need = ">= 0" if allow_zero else "> 0"
        raise SimulationError(f"parameter {name} must be a finite number {need}, got {value!r}")


def check_bool(value: bool, name: str) -> None:
    """A flag must be a bool: the string "false" is truthy and read as True."""
    if not isinstance(value, (bool, np.bool_)):
        raise SimulationError(f"parameter {name} must be true or false, got {value!r}")


def check_choice(value: str, name: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise SimulationError(
            f"parameter {name} must be one of {', '.join(choices)}; got {value!r}"
        )


AnyParams = Params
"""The parameter base class (``Policy.Params`` names each policy's own subclass)."""


class Policy:
    """A scheduling policy: turns what it may see into rates.

    Subclasses set ``name``, their information model (``clairvoyant``,
    ``knows_width``), their ``Params`` dataclass, and implement
    :meth:`decide`. ``on_flow_completion`` says whether single flow
    completions are decision points (policies that re-allocate only when
    coflows arrive or depart set it to False). Policies that return priority
    orders (``priority = True``) get greedy rates recomputed by the engine at
    every flow completion without being asked.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    clairvoyant: ClassVar[bool] = True
    knows_width: ClassVar[bool] = False
    priority: ClassVar[bool] = False
    """True for policies that return priority orders (the engine then allocates greedily)."""
    Params: ClassVar[type[Params]] = NoParams

    def __init__(self, params: AnyParams) -> None:
        self.params: Any = params
        self.on_flow_completion = True

    def start(self, view: SimView) -> None:
        """Called once before the first decision."""

    def decide(self, view: SimView) -> Allocation:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self, view: SimView) -> dict[str, Any]:
        """Called once at the end; returns extra facts for the result (e.g. admissions)."""
        return {}


# --------------------------------------------------------------------------- strings -> params


def _convert(text: str, hint: Any, name: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if text.strip().lower() in ("none", "null", ""):
            if type(None) in args:
                return None
        others = [a for a in args if a is not type(None)]
        errors = []
        for a in others:
            try:
                return _convert(text, a, name)
            except (ValueError, SimulationError) as exc:
                errors.append(str(exc))
        raise SimulationError(f"parameter {name}: cannot read {text!r} ({'; '.join(errors)})")
    if origin is tuple:
        item = args[0] if args else str
        if not text.strip():
            return ()
        parts = [p.strip() for p in text.split(",")]
        if not all(parts):
            raise SimulationError(f"parameter {name}: an empty item in {text!r} (a comma too many)")
        return tuple(_convert(p, item, name) for p in parts)
    if hint is bool:
        low = text.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise SimulationError(f"parameter {name} expects true or false, got {text!r}")
    if hint is int:
        try:
            return int(text)
        except ValueError:
            raise SimulationError(f"parameter {name} expects an integer, got {text!r}") from None
    if hint is float:
        try:
            return float(text)
        except ValueError:
            raise SimulationError(f"parameter {name} expects a number, got {text!r}") from None
    return text


def params_from_strings(cls: type[Params], values: Mapping[str, str]) -> dict[str, Any]:
    """Convert ``key=value`` strings (from the CLI) to typed keyword arguments."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    out: dict[str, Any] = {}
    for key, text in values.items():
        if key not in names:
            known = ", ".join(sorted(names)) or "none"
            raise SimulationError(f"unknown parameter '{key}' (known: {known})")
        out[key] = _convert(text, hints[key], key)
    return out
