"""Scheduling policies, looked up by name.

Each policy lives in its own module and registers itself with
:func:`register`; :data:`POLICIES` maps names to specs and
:func:`make_policy` builds one with validated parameters.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..engine import SimulationError
from ._base import NoParams, Params, Policy, params_from_strings

__all__ = [
    "POLICIES",
    "NoParams",
    "Params",
    "Policy",
    "PolicySpec",
    "get_policy",
    "make_policy",
    "register",
]


@dataclass(frozen=True, slots=True)
class PolicySpec:
    """A registered policy: its class, parameters and information model."""

    name: str
    cls: type[Policy]

    @property
    def summary(self) -> str:
        return self.cls.summary

    @property
    def params(self) -> type[Params]:
        return self.cls.Params

    @property
    def clairvoyant(self) -> bool:
        return self.cls.clairvoyant

    def defaults(self) -> dict[str, Any]:
        return self.cls.Params().as_dict()


POLICIES: dict[str, PolicySpec] = {}


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: add a policy to :data:`POLICIES` under ``cls.name``."""
    if not cls.name or cls.name in POLICIES:
        raise ValueError(f"policy name {cls.name!r} is empty or taken")
    POLICIES[cls.name] = PolicySpec(cls.name, cls)
    return cls


def get_policy(name: str) -> PolicySpec:
    """The registered scheduler ``name`` (:data:`POLICIES`): its policy class, parameters
    class and summary; :class:`SimulationError` naming the known ones otherwise."""
    try:
        return POLICIES[name]
    except KeyError:
        known = ", ".join(sorted(POLICIES))
        raise SimulationError(f"unknown scheduler '{name}' (known: {known})") from None


def make_policy(
    name: str, params: Params | Mapping[str, Any] | None = None, *, strings: bool = False
) -> Policy:
    """A fresh policy object.

    ``params`` is the policy's ``Params`` instance or a mapping of keyword
    arguments (``strings=True``: values are strings from the command line).
    Unknown or invalid parameters raise :class:`SimulationError`.
    """
    spec = get_policy(name)
    if isinstance(params, Params):
        if not isinstance(params, spec.params):
            raise SimulationError(
                f"scheduler '{name}' takes {spec.params.__name__}, got {type(params).__name__}"
            )
        return spec.cls(params)
    if params is not None and not isinstance(params, Mapping):
        hint = (" (not the command line's key=value: give {'sharing': 'strict'}, say)"
                if isinstance(params, str) else "")
        raise SimulationError(f"params must be a mapping of parameter names to values or a "
                              f"Params object, got {type(params).__name__}{hint}")
    kwargs = dict(params or {})
    if strings:
        kwargs = params_from_strings(spec.params, kwargs)
    names = {f.name for f in dataclasses.fields(spec.params)}
    unknown = sorted(set(kwargs) - names)
    if unknown:
        known = ", ".join(sorted(names)) or "none"
        raise SimulationError(
            f"unknown parameter '{unknown[0]}' for scheduler '{name}' (known: {known})"
        )
    return spec.cls(spec.params(**kwargs))


for _module in (
    "fair",
    "wss",
    "pfp",
    "varys",
    "fifo",
    "scf",
    "ncf",
    "tcf",
    "varys_deadline",
    "baraat",
    "aalo",
    "dark",
    "mcs",
    "sincronia",
    "maluca",
    "static_order",
    "drf",
    "hug",
    "psp",
    "creek",
    "coflourish",
):
    importlib.import_module(f"{__name__}.{_module}")
