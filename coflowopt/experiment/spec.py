"""An experiment as data: the declared grid, its validation, and its cells.

An :class:`Experiment` lists instances (files, or generators with their parameters),
schedulers with their parameters, lower bounds and solvers to run beside them, seeds,
fabrics and backgrounds. Its :meth:`~Experiment.cells` are the product of those lists:
one simulation per instance x fabric x scheduler x seed x background, one bound
computation per instance x fabric x bound x seed, and one solve (``coflowopt.solve``)
per instance x fabric x solver x seed (a bound or an optimum of the fabric without
background is still a lower bound under background: the background only takes capacity
away). Each :class:`Cell` is named by a stable id, the SHA-256 of the canonical JSON of
its full configuration (a file by the digest of its bytes, not by its path) and
``coflowopt.__version__``; labels are not part of it.

The seed is the cell's replicate: every random choice the experiment does not fix is
drawn from it (a generator's draws, ECMP's hash seed and the fat-tree placement when the
fabric gives none, a Poisson background's flows when its spec gives no ``seed=``, the
``seed`` of a solver that takes one, local-search and best, when it gives none).

The TOML form (:func:`load_experiment`)::

    seeds = [0, 1, 2]
    schedulers = ["varys", "aalo:sharing=strict", {name = "mcs", num_queues = [4, 10]}]
    bounds = ["sincronia"]
    solvers = ["exact", {method = "best", time_limit = 10, label = "portfolio"}]
    fabrics = ["big-switch", "spine-leaf:spines=4,oversub=10",
               {topology = "fat-tree:k=4", routing = "spray"}]
    backgrounds = ["none", "share:0.2"]

    [options]                 # passed to every simulation
    batch_interval = 0.1

    [[instances]]
    generator = "synthetic"
    num_coflows = 50
    num_ports = 16
    load = [0.5, 0.9]         # a list is a grid: one instance per value

A solver is ``METHOD[:KEY=VALUE...]`` or a table with ``method``, ``objective`` (default
wcct), ``time_limit`` (default 60 s), ``label`` and the method's options, as
``coflowopt solve`` takes them (:class:`SolverSpec`).

In a table (an instance, a scheduler, a bound, a solver, a fabric) a list is a grid over its
items; a parameter whose value is itself a list is written as a list of one list
(``weights = [[4, 2, 1]]``). Relative file names are relative to the TOML file. Errors
name the file, the key path and the value: ``exp.toml: schedulers[2]: unknown scheduler
'varyz'``.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import os
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial as _partial
from pathlib import Path
from typing import Any, cast

import numpy as np

from .._budget import check_time_limit
from .._files import finite_number
from ..errors import CoflowoptError, InputError
from ..fabric.network import MAX_SEED
from ..instance import Coflow, Fabric, Instance

__all__ = [
    "GENERATORS",
    "OPTIONS",
    "BoundSpec",
    "Cell",
    "Experiment",
    "FabricSpec",
    "InstanceSpec",
    "SchedulerSpec",
    "SolverSpec",
    "canonical_json",
    "load_experiment",
]


# --------------------------------------------------------------------------- canonical form


def _plain(value: Any) -> Any:
    """``value`` as JSON data: tuples as lists, NumPy scalars as numbers, a whole float as
    an integer (``load = 1`` and ``load = 1.0`` name the same cell)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 2.0**53:
            return int(value)
        return value
    if isinstance(value, int):
        return value
    return str(value)


def canonical_json(obj: Any) -> str:
    """The canonical JSON of ``obj``: sorted keys, no spaces, whole floats as integers."""
    return json.dumps(_plain(obj), sort_keys=True, separators=(",", ":"), allow_nan=True)


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _pairs(params: Mapping[str, Any], sep: str) -> str:
    return sep.join(f"{k}={_text(v)}" for k, v in params.items())


def _number(text: str) -> Any:
    from ..fabric.spec import json_number

    return json_number(text)


_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_digest(path: str) -> str:
    """SHA-256 of a file's bytes (remembered while the file's size and time stay)."""
    try:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
        if key not in _DIGESTS:
            _DIGESTS[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror or exc})", path=path) from None
    return _DIGESTS[key]


# --------------------------------------------------------------------------- generators

Builder = Callable[[Mapping[str, Any], int, "Instance | None"], Instance]


@dataclass(frozen=True, slots=True)
class Generator:
    """An instance source: the parameters it needs and takes, and how it builds."""

    summary: str
    required: frozenset[str]
    optional: frozenset[str]
    build: Builder
    """``build(params, seed, base)``: ``base`` is the file read (for :attr:`reads`)."""
    reads: bool
    """Reads ``file`` (the bundled Facebook trace when ``file`` is optional and absent)."""


def _first(inst: Instance, count: Any) -> Instance:
    """The first ``count`` coflows by release (ties in file order), as they were."""
    if count is None:
        return inst
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= inst.num_coflows:
        raise InputError(f"num_coflows must be an integer in 1..{inst.num_coflows} (the file's), "
                         f"got {count!r}")
    keep = np.sort(np.argsort(inst.release, kind="stable")[:count])
    return inst.replace(coflows=tuple(inst.coflows[int(k)] for k in keep))


def _file(p: Mapping[str, Any], seed: int, base: Instance | None) -> Instance:
    from ..io.generate import rescale_load

    assert base is not None
    inst = _first(base, p.get("num_coflows"))
    return inst if p.get("load") is None else rescale_load(inst, p["load"])


def _synthetic(p: Mapping[str, Any], seed: int, base: Instance | None) -> Instance:
    from ..io.generate import FACEBOOK_BINS, facebook_bins, synthetic

    bins = {k: p[k] for k in ("max_width", "max_length") if k in p}
    classes = facebook_bins(**bins) if bins else FACEBOOK_BINS
    extra = {k: p[k] for k in ("load", "port_rate", "shape") if k in p}
    return synthetic(p["num_coflows"], p["num_ports"], classes=classes, seed=seed, **extra)


def _poisson(p: Mapping[str, Any], seed: int, base: Instance | None) -> Instance:
    from ..io.generate import poisson_arrivals

    assert base is not None
    return poisson_arrivals(_first(base, p.get("num_coflows")), p["load"], seed=seed)


def _tuples(p: Mapping[str, Any], skip: Sequence[str]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in p.items() if k not in skip}


def _creek(p: Mapping[str, Any], seed: int, base: Instance | None) -> Instance:
    from ..io.workloads import creek

    return creek(trace=base, seed=seed, **_tuples(p, _FILE_KEYS))


def _coflourish(p: Mapping[str, Any], seed: int, base: Instance | None) -> Instance:
    from ..io.workloads import coflourish

    return coflourish(trace=base, seed=seed, **_tuples(p, _FILE_KEYS))


_FILE_KEYS = ("file", "format", "port_rate")


def _pair_of(test: Callable[[Any], bool], open_end: bool = False) -> Callable[[Any], bool]:
    """``[lo, hi]``, both passing ``test`` (``hi`` may be None with ``open_end``)."""
    return lambda v: (isinstance(v, (list, tuple)) and len(v) == 2 and test(v[0])
                      and (test(v[1]) or (open_end and v[1] is None)))


def _count(v: Any) -> bool:
    return finite_number(v) and v >= 1 and float(v).is_integer()  # 8.0 is 8, as canonical_json has it


def _positive(v: Any) -> bool:
    return finite_number(v) and v > 0


def _choice(*names: str) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: v in names), "one of " + ", ".join(names)


def _param_rules() -> dict[str, tuple[Callable[[Any], bool], str]]:
    """What each generator parameter must be, checked when the experiment is read (the
    generators check the rest, such as ``num_coflows`` against the file's, when a cell
    builds its instance)."""
    from ..io import FORMATS
    from ..io.generate import SHAPES
    from ..io.workloads import COFLOURISH_MIXES, CREEK_PATTERNS

    count = (_count, "an integer >= 1")
    positive = (_positive, "a finite number > 0")
    share = (lambda v: finite_number(v) and 0 <= v <= 1), "a number from 0 to 1"
    span = (_pair_of(_count, open_end=True), "a list [lo, hi] of integers >= 1")
    return {
        "num_coflows": count, "num_ports": count, "num_hosts": count, "max_width": count,
        "load": positive, "port_rate": positive, "host_rate": positive, "max_length": positive,
        "rate": positive, "min_size": ((lambda v: finite_number(v) and v >= 0), "a finite number >= 0"),
        "large_share": share, "miss_ratio": share,
        "shape": _choice(*SHAPES), "pattern": _choice(*CREEK_PATTERNS),
        "mix": _choice(*COFLOURISH_MIXES), "format": _choice(*FORMATS),
        "receivers": span, "senders": span,
        "fanin": (_pair_of(_count), "a list [lo, hi] of integers >= 1"),
        "large_size": (_pair_of(_positive), "a list [lo, hi] of finite numbers > 0"),
        "tables": ((lambda v: isinstance(v, (list, tuple)) and len(v) > 0
                    and all(map(_positive, v))), "a list of finite numbers > 0"),
    }


def _gen(summary: str, build: Builder, required: Sequence[str], optional: Sequence[str], *,
         reads: bool) -> Generator:
    return Generator(summary, frozenset(required), frozenset(optional), build, reads)


GENERATORS: dict[str, Generator] = {
    "file": _gen("an instance file; with load, rescaled to that offered load (rescale_load); "
                 "with num_coflows, its first coflows", _file, ["file"],
                 ["format", "port_rate", "load", "num_coflows"], reads=True),
    "trace": _gen("the bundled Facebook trace (or file), as 'file' does", _file, [],
                  [*_FILE_KEYS, "load", "num_coflows"], reads=True),
    "synthetic": _gen("coflows drawn from the Facebook bins (coflowopt.io.generate.synthetic), "
                      "Poisson arrivals at load (all at 0 without)", _synthetic,
                      ["num_coflows", "num_ports"],
                      ["load", "port_rate", "shape", "max_width", "max_length"], reads=False),
    "poisson": _gen("a file's coflows (default: the Facebook trace's) arriving as a Poisson "
                    "process at load (poisson_arrivals)", _poisson, ["load"],
                    [*_FILE_KEYS, "num_coflows"], reads=True),
    "creek": _gen("the Creek paper's many-to-many coflows from the trace (coflowopt.io.workloads."
                  "creek)", _creek, [],
                  [*_FILE_KEYS, "pattern", "num_coflows", "num_hosts", "host_rate", "min_size",
                   "receivers", "senders", "fanin", "miss_ratio", "tables", "load"], reads=True),
    "coflourish": _gen("the Coflourish paper's Regular and Large loads (coflowopt.io.workloads."
                       "coflourish)", _coflourish, [],
                       [*_FILE_KEYS, "mix", "num_coflows", "num_hosts", "host_rate", "large_share",
                        "large_size", "rate", "load"], reads=True),
}
"""Instance generators by name (an :class:`InstanceSpec`'s ``generator``); those that draw
take the cell's seed."""

SEEDED = frozenset({"synthetic", "poisson", "creek", "coflourish"})
"""Generators whose instances depend on the seed."""

TOPOLOGY_NAMES = ("big-switch", "spine-leaf", "fat-tree")
"""Fabrics an experiment puts its instances on (``big-switch``: the instance's own)."""

OPTIONS = ("batch_interval", "knowledge")
"""Simulation options an experiment may set for all its simulations."""

_TOP = ("name", "seeds", "instances", "schedulers", "bounds", "solvers", "fabrics", "backgrounds",
        "options")


# --------------------------------------------------------------------------- the specs


@dataclass(frozen=True, slots=True)
class InstanceSpec:
    """Instances from a generator of :data:`GENERATORS` with its parameters.

    ``InstanceSpec("synthetic", {"num_coflows": 50, "num_ports": 16, "load": 0.7})``;
    ``InstanceSpec("trace", {"load": 0.9})``; ``InstanceSpec("file", {"file": "x.json"})``.
    """

    generator: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        gen = GENERATORS.get(self.generator)
        if gen is None:
            raise InputError(f"unknown generator '{self.generator}' (known: {', '.join(GENERATORS)})")
        params = {k: v for k, v in self.params.items() if v is not None}  # None: the default
        for key in params:
            if key not in gen.required | gen.optional:
                raise InputError(f"generator '{self.generator}' takes no parameter '{key}' (it "
                                 f"takes: {', '.join(sorted(gen.required | gen.optional))})")
        for key in sorted(gen.required):
            if key not in params:
                raise InputError(f"generator '{self.generator}' needs {key}")
        rules = _param_rules()
        for key, value in params.items():
            if key in rules and not rules[key][0](value):
                raise InputError(f"{key} must be {rules[key][1]}, got {value!r:.60}")
        if "file" in params:
            if not isinstance(params["file"], (str, os.PathLike)):
                raise InputError(f"file must be a file name, got {params['file']!r:.60}")
            params["file"] = os.fspath(params["file"])
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "label", self.label or self.default_label())

    def default_label(self) -> str:
        p = dict(self.params)
        name = Path(p.pop("file")).name if "file" in p else self.generator
        if "file" in self.params and self.generator != "file":
            name = f"{self.generator}:{name}"
        return f"{name}:{_pairs(p, ',')}" if p else name

    def path(self) -> str | None:
        """The file this spec reads (the bundled trace by default), if it reads one."""
        if not GENERATORS[self.generator].reads:
            return None
        if "file" in self.params:
            return str(self.params["file"])
        from ..io.workloads import fb2010_trace_path

        return str(fb2010_trace_path())

    def source(self) -> dict[str, Any] | None:
        """What the file is (its digest, format and port rate), if the spec reads one."""
        path = self.path()
        if path is None:
            return None
        return {"sha256": file_digest(path), "format": self.params.get("format"),
                "port_rate": self.params.get("port_rate")}

    def config(self, seed: int) -> dict[str, Any]:
        """The configuration a cell hashes: generator, parameters (a file by its source),
        and the seed when the generator draws."""
        read = GENERATORS[self.generator].reads  # then the file's keys are its source's
        params = {k: v for k, v in self.params.items() if not (read and k in _FILE_KEYS)}
        out: dict[str, Any] = {"generator": self.generator, "params": _plain(params)}
        source = self.source()
        if source is not None:
            out["source"] = source
        if self.generator in SEEDED:
            out["seed"] = seed
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"generator": self.generator}
        if self.label != self.default_label():
            out["label"] = self.label
        out.update({k: _wrap(v) for k, v in self.params.items()})
        return out


def _wrap(value: Any) -> Any:
    """A list value written so that it is not read back as a grid."""
    return [list(_plain(value))] if isinstance(value, (list, tuple)) else _plain(value)


@dataclass(frozen=True, slots=True)
class SchedulerSpec:
    """A registered scheduler with parameters (typed values; :meth:`parse` reads
    ``"aalo:sharing=strict:num_queues=4"``)."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    resolved: Mapping[str, Any] = field(init=False, repr=False, compare=False)
    """Every parameter of the scheduler, the defaults filled in (what the cell hashes)."""

    def __post_init__(self) -> None:
        from ..sim import POLICIES, make_policy

        if self.name not in POLICIES:
            raise InputError(f"unknown scheduler '{self.name}' (known: {', '.join(sorted(POLICIES))})")
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in self.params.items()}
        try:
            policy = make_policy(self.name, params)
        except (CoflowoptError, TypeError, ValueError) as exc:
            raise InputError(f"scheduler '{self.name}': {exc}") from None
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "resolved", _plain(policy.params.as_dict()))
        object.__setattr__(self, "label", self.label or self.default_label())

    def default_label(self) -> str:
        return f"{self.name}:{_pairs(self.params, ':')}" if self.params else self.name

    @classmethod
    def parse(cls, text: str) -> SchedulerSpec:
        """``NAME[:KEY=VALUE[:KEY=VALUE...]]`` (values as on the command line), labelled as
        written."""
        from ..sim import POLICIES
        from ..sim.policies._base import params_from_strings

        name, *pairs = (x.strip() for x in text.split(":"))
        own: dict[str, str] = {}
        for pair in pairs:
            key, eq, value = pair.partition("=")
            if not eq or not key.strip():
                raise InputError(f"expected NAME:KEY=VALUE, got '{text}'")
            own[key.strip()] = value.strip()
        if name not in POLICIES:
            raise InputError(f"unknown scheduler '{name}' (known: {', '.join(sorted(POLICIES))})")
        try:
            typed = params_from_strings(POLICIES[name].params, own)
        except CoflowoptError as exc:
            raise InputError(f"scheduler '{name}': {exc}") from None
        return cls(name, typed, text.strip())

    def to_dict(self) -> dict[str, Any] | str:
        if _reads_back(SchedulerSpec.parse, self):
            return self.label
        out: dict[str, Any] = {"name": self.name, "label": self.label}
        out.update({k: _wrap(v) for k, v in self.params.items()})
        return out


@dataclass(frozen=True, slots=True)
class BoundSpec:
    """A lower bound of :data:`coflowopt.bounds.BOUNDS` (or ``best``), with its options."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    time_limit: float = 60.0
    label: str = ""

    def __post_init__(self) -> None:
        from ..bounds import BOUNDS

        if self.name not in BOUNDS and self.name != "best":
            raise InputError(f"unknown bound '{self.name}' (known: {', '.join([*BOUNDS, 'best'])})")
        tl = check_time_limit(self.time_limit, InputError)
        options = dict(self.options)
        if self.name == "best" and options:
            raise InputError("bound 'best' takes no options")
        if self.name != "best":
            _checked(BOUNDS[self.name], options, f"bound '{self.name}'")
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "time_limit", tl)
        object.__setattr__(self, "label", self.label or self.default_label())

    def default_label(self) -> str:
        return f"{self.name}:{_pairs(self.options, ':')}" if self.options else self.name

    def to_dict(self) -> dict[str, Any] | str:
        if self.label == self.name and not self.options and self.time_limit == 60.0:
            return self.name
        out: dict[str, Any] = {"name": self.name, "label": self.label, "time_limit": self.time_limit}
        out.update({k: _wrap(v) for k, v in self.options.items()})
        return out


def _checked(fn: Callable[..., Any], options: dict[str, Any], what: str) -> None:
    """:func:`coflowopt.bounds.check_options`, its error an :class:`InputError` that lists
    the options a cell can hold."""
    from ..bounds import check_options

    try:
        check_options(fn, options, what, hidden=_NOT_OPTIONS)
    except CoflowoptError as exc:
        raise InputError(str(exc)) from None


_NOT_OPTIONS = {"progress": "a callback, not something a cell can hold",
                "time_limit": "a field of the solver", "objective": "a field of the solver",
                "method": "a field of the solver"}


@dataclass(frozen=True, slots=True)
class SolverSpec:
    """A solver of :data:`coflowopt.solvers.SOLVERS`, run as ``coflowopt.solve(instance,
    method=..., objective=..., time_limit=..., **options)`` runs it (:meth:`parse` reads
    ``"local-search:time_limit=5:perturbations=20"``).

    A method that takes a ``seed`` (local-search, best) and is given none draws from the
    cell's seed, the experiment's replicate.
    """

    method: str
    options: Mapping[str, Any] = field(default_factory=dict)
    objective: str = "wcct"
    time_limit: float = 60.0
    label: str = ""

    def __post_init__(self) -> None:
        from ..solvers import OBJECTIVES, SOLVERS

        if self.objective not in SOLVERS:
            raise InputError(f"unknown objective {self.objective!r:.60} (known: {', '.join(OBJECTIVES)})")
        methods = SOLVERS[self.objective]
        if self.method not in methods:
            known = sorted({m for ms in SOLVERS.values() for m in ms})
            if self.method in known:
                raise InputError(f"method '{self.method}' does not solve objective "
                                 f"'{self.objective}' (its methods: {', '.join(methods)})")
            raise InputError(f"unknown method {self.method!r:.60} (known: {', '.join(known)})")
        tl = check_time_limit(self.time_limit, InputError)
        options = {k: tuple(v) if isinstance(v, list) else v for k, v in self.options.items()}
        for key in options:
            if key in _NOT_OPTIONS:
                raise InputError(f"method '{self.method}': {key} is {_NOT_OPTIONS[key]}, not an option")
        _checked(methods[self.method], options, f"method '{self.method}'")
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "time_limit", tl)
        object.__setattr__(self, "label", self.label or self.default_label())

    def default_label(self) -> str:
        """``METHOD[:objective=...][:time_limit=...][:KEY=VALUE...]``, what :meth:`parse` reads."""
        fields = {**({"objective": self.objective} if self.objective != "wcct" else {}),
                  **({"time_limit": self.time_limit} if self.time_limit != 60.0 else {})}
        params = {**fields, **self.options}
        return f"{self.method}:{_pairs(params, ':')}" if params else self.method

    @classmethod
    def parse(cls, text: str) -> SolverSpec:
        """``METHOD[:KEY=VALUE[:KEY=VALUE...]]``: ``objective`` and ``time_limit`` as
        ``coflowopt solve`` takes them, the rest the method's options (``--param``);
        labelled as written."""
        method, *pairs = (x.strip() for x in text.split(":"))
        given: dict[str, Any] = {}
        for pair in pairs:
            key, eq, value = pair.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise InputError(f"expected METHOD:KEY=VALUE, got '{text}'")
            given[key.strip()] = _option_value(value.strip())
        objective = given.pop("objective", "wcct")
        time_limit = given.pop("time_limit", 60.0)
        return cls(method, given, objective, time_limit, text.strip())

    def config(self, seed: int) -> dict[str, Any]:
        """The solve as a cell runs it: a ``seed`` not given is the cell's."""
        from ..solvers import SOLVERS

        options = dict(self.options)
        takes = inspect.signature(SOLVERS[self.objective][self.method]).parameters
        if "seed" in takes and "seed" not in options:
            options["seed"] = seed
        return {"method": self.method, "objective": self.objective, "time_limit": self.time_limit,
                "options": _plain(dict(sorted(options.items())))}

    def to_dict(self) -> dict[str, Any] | str:
        if _reads_back(SolverSpec.parse, self):
            return self.label
        out: dict[str, Any] = {"method": self.method, "label": self.label}
        if self.objective != "wcct":
            out["objective"] = self.objective
        out["time_limit"] = self.time_limit
        out.update({k: _wrap(v) for k, v in self.options.items()})
        return out


def _option_value(text: str) -> Any:
    """A solver option written in text: true/false, a number, else the text."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    return _number(text)


@dataclass(frozen=True, slots=True)
class FabricSpec:
    """Where the instances run: the big switch, or a topology their ports are put on
    (:func:`coflowopt.fabric.place`) with a routing.

    ``routing_seed`` (ECMP's hash seed) and a fat-tree's placement ``seed``, when not
    given, are the cell's seed.
    """

    topology: str = "big-switch"
    params: Mapping[str, Any] = field(default_factory=dict)
    routing: str = "ecmp"
    routing_seed: int | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGY_NAMES:
            raise InputError(f"unknown topology '{self.topology}' (known: {', '.join(TOPOLOGY_NAMES)})")
        params = dict(self.params)
        if self.routing not in ("ecmp", "spray"):
            raise InputError(f"routing must be ecmp or spray, got {self.routing!r:.60}")
        rs = self.routing_seed
        if rs is not None and (isinstance(rs, bool) or not isinstance(rs, int) or not
                               0 <= rs <= MAX_SEED):
            raise InputError(f"routing_seed must be an integer from 0 to 2**64 - 1, got {rs!r:.60}")
        if self.topology == "big-switch":
            if params or self.routing != "ecmp" or rs is not None:
                raise InputError("the big switch takes no parameters, routing or routing_seed")
        else:
            if self.routing == "spray" and rs is not None:
                raise InputError("routing_seed is ECMP's hash seed; spray has none")
            _trial_place(self.topology, params)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "label", self.label or self.default_label())

    def default_label(self) -> str:
        text = f"{self.topology}:{_pairs(self.params, ',')}" if self.params else self.topology
        if self.routing != "ecmp":
            text += f" {self.routing}"
        if self.routing_seed is not None:
            text += f" routing_seed={self.routing_seed}"
        return text

    @classmethod
    def parse(cls, text: str, **extra: Any) -> FabricSpec:
        """``big-switch``, ``spine-leaf:spines=4,oversub=10``, ``fat-tree:k=4,seed=1``
        (``--topology``'s form); ``extra``: routing, routing_seed, label."""
        name, params = _topology_text(text)
        label = extra.pop("label", "") or (text.strip() if not extra else "")
        return cls(name, params, label=label, **extra)

    def config(self, seed: int) -> dict[str, Any]:
        """The fabric as a cell runs it: the seeds not given are ``seed``."""
        if self.topology == "big-switch":
            return {"topology": "big-switch"}
        params = dict(self.params)
        if self.topology == "fat-tree" and "seed" not in params:
            params["seed"] = seed
        rs = 0 if self.routing == "spray" else seed if self.routing_seed is None else self.routing_seed
        return {"topology": self.topology, "params": _plain(params), "routing": self.routing,
                "routing_seed": rs}

    def to_dict(self) -> dict[str, Any] | str:
        if _reads_back(FabricSpec.parse, self):
            return self.label
        out: dict[str, Any] = {"topology": self.topology, "label": self.label}
        out.update({k: _wrap(v) for k, v in self.params.items()})
        if self.routing != "ecmp":
            out["routing"] = self.routing
        if self.routing_seed is not None:
            out["routing_seed"] = self.routing_seed
        return out


def _topology_text(text: str) -> tuple[str, dict[str, Any]]:
    """``TOPOLOGY[:KEY=VALUE[,KEY=VALUE...]]`` as its name and parameters (numbers read)."""
    name, _, rest = text.partition(":")
    params: dict[str, Any] = {}
    for pair in (p.strip() for p in rest.split(",")) if rest.strip() else ():
        key, eq, value = pair.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise InputError(f"expected TOPOLOGY:KEY=VALUE[,KEY=VALUE...], got '{text}'")
        params[key.strip()] = _number(value.strip())
    return name.strip(), params


def _reads_back(parse: Callable[[str], Any], spec: Any) -> bool:
    """Whether ``spec`` is what its label reads as (then the label is its TOML form)."""
    try:
        return bool(parse(spec.label) == spec)
    except CoflowoptError:
        return False


def _trial_place(topology: str, params: Mapping[str, Any]) -> None:
    """Check a topology's parameters by placing a one-port instance on it."""
    from ..fabric import place

    one = np.zeros(1, dtype=np.int64)
    tiny = Instance(Fabric.uniform(1, 1.0), (Coflow("0", one, one, np.ones(1)),))
    try:
        place(tiny, topology, {**({"seed": 0} if topology == "fat-tree" else {}), **params})
    except CoflowoptError as exc:
        raise InputError(f"{topology}: {getattr(exc, 'message', exc)}") from None


def _background(text: str | None) -> str | None:
    """A background spec checked for its form (``None`` and ``"none"``: no background)."""
    if text is None or text.strip() == "none":
        return None
    if not isinstance(text, str):
        raise InputError(f"a background is a string (share:X, poisson:load=X,..., file:PATH or "
                         f"none), got {text!r:.60}")
    from ..fabric.background import parse_background

    try:
        parse_background(text, np.ones(2), ["l0", "l1"])
    except CoflowoptError as exc:
        raise InputError(str(exc)) from None
    return text.strip()


def _background_config(text: str | None, seed: int) -> dict[str, Any] | None:
    if text is None:
        return None
    kind, _, rest = text.partition(":")
    if kind.strip() == "poisson" and not any(p.strip().startswith("seed=") for p in rest.split(",")):
        text = f"{text},seed={seed}"
    out: dict[str, Any] = {"spec": text}
    if kind.strip() == "file":
        out["sha256"] = file_digest(rest.strip())
    return out


# --------------------------------------------------------------------------- cells


@dataclass(frozen=True, slots=True)
class Cell:
    """One unit of work: a simulation (``kind`` ``"run"``), a bound (``"bound"``) or a
    solve (``"solve"``).

    ``config`` is everything the result depends on (what :attr:`id` hashes, with the
    package version); ``labels`` name its parts for the tables.
    """

    kind: str
    config: Mapping[str, Any]
    labels: Mapping[str, Any]
    id: str = field(init=False)

    def __post_init__(self) -> None:
        from .. import __version__

        text = canonical_json({"coflowopt": __version__, "cell": self.config})
        object.__setattr__(self, "id", hashlib.sha256(text.encode()).hexdigest()[:20])

    def columns(self) -> dict[str, Any]:
        """The configuration as table columns (see :func:`coflowopt.experiment.load`)."""
        cfg = self.config
        fab = cfg["fabric"]
        out: dict[str, Any] = {"cell": self.id, "kind": self.kind, **self.labels,
                               "seed": cfg["seed"], "generator": cfg["instance"]["generator"]}
        for k, v in cfg["instance"]["params"].items():
            out[f"instance_{k}"] = _text(v) if isinstance(v, list) else v
        out["topology"] = fab["topology"]
        out["routing"] = fab.get("routing")
        out["routing_seed"] = fab.get("routing_seed")
        return out


@dataclass(frozen=True, slots=True)
class Experiment:
    """A declared grid of simulations, bounds and solves (see the module docstring).

    Strings stand for specs: a scheduler ``"aalo:sharing=strict"``
    (:meth:`SchedulerSpec.parse`), a bound ``"sincronia"``, a solver
    ``"exact:time_limit=10"`` (:meth:`SolverSpec.parse`), a fabric
    ``"spine-leaf:spines=4"`` (:meth:`FabricSpec.parse`); a background is a
    ``--background`` spec or ``None``. A solver's label differs from every scheduler's:
    the report has a row for each.
    """

    instances: Sequence[InstanceSpec]
    schedulers: Sequence[SchedulerSpec | str]
    seeds: Sequence[int] = (0,)
    bounds: Sequence[BoundSpec | str] = ()
    fabrics: Sequence[FabricSpec | str] = ("big-switch",)
    backgrounds: Sequence[str | None] = (None,)
    options: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    solvers: Sequence[SolverSpec | str] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for key in ("instances", "schedulers", "seeds", "bounds", "solvers", "fabrics",
                    "backgrounds"):
            value = getattr(self, key)
            if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
                raise InputError(f"{key} must be a list, got {value!r:.60}")
        insts = tuple(_each("instances", self.instances, _as_instance))
        scheds = tuple(_each("schedulers", self.schedulers, _as_scheduler))
        bounds = tuple(_each("bounds", self.bounds, _as_bound))
        solvers = tuple(_each("solvers", self.solvers, _as_solver))
        fabrics = tuple(_each("fabrics", self.fabrics, _as_fabric))
        backgrounds = tuple(_each("backgrounds", self.backgrounds, _background))
        for i, s in enumerate(self.seeds):
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < 2**63:
                # the tables store seeds as 64-bit integers
                raise InputError(f"seeds[{i}]: a seed is an integer from 0 to 2^63 - 1, got {s!r:.60}")
        seeds = tuple(int(s) for s in self.seeds)
        for key, given in (("instances", insts), ("seeds", seeds), ("fabrics", fabrics),
                           ("backgrounds", backgrounds)):
            if not given:
                raise InputError(f"{key}: an empty list (an experiment needs at least one "
                                 f"{key[:-1]})")
        if not (scheds or bounds or solvers):
            raise InputError("schedulers: an experiment needs at least one scheduler, bound or "
                             "solver")
        options = dict(self.options)
        _check_options(options)
        _unique("seeds", [str(s) for s in seeds], [str(s) for s in seeds])
        _unique("instances", [i.label for i in insts],
                [canonical_json([i.generator, i.params]) for i in insts])
        _unique("schedulers", [s.label for s in scheds],
                [canonical_json([s.name, s.resolved]) for s in scheds])
        _unique("bounds", [b.label for b in bounds],
                [canonical_json([b.name, b.options, b.time_limit]) for b in bounds])
        _unique("solvers", [s.label for s in solvers],
                [canonical_json([s.method, s.objective, s.options, s.time_limit]) for s in solvers])
        named = {s.label: i for i, s in enumerate(scheds)}
        for i, sol in enumerate(solvers):
            if sol.label in named:
                raise _Duplicate("solvers", i, named[sol.label], "label", sol.label, "schedulers",
                                 ": give it a label of its own")
        _unique("fabrics", [f.label for f in fabrics],
                [canonical_json([f.topology, f.params, f.routing, f.routing_seed]) for f in fabrics])
        _unique("backgrounds", [str(b) for b in backgrounds], [str(b) for b in backgrounds])
        for key, value in (("instances", insts), ("schedulers", scheds), ("bounds", bounds),
                           ("solvers", solvers), ("fabrics", fabrics), ("backgrounds", backgrounds),
                           ("seeds", seeds), ("options", options)):
            set_(self, key, value)

    # ------------------------------------------------------------------ cells

    def cells(self) -> list[Cell]:
        """Every cell, in a fixed order: per instance, fabric and seed, the simulations
        (schedulers, then backgrounds), then the bounds, then the solves."""
        out: list[Cell] = []
        options = _plain(dict(sorted(self.options.items())))
        insts = cast(Sequence[InstanceSpec], self.instances)
        fabrics = cast(Sequence[FabricSpec], self.fabrics)
        scheds = cast(Sequence[SchedulerSpec], self.schedulers)
        bounds = cast(Sequence[BoundSpec], self.bounds)
        solvers = cast(Sequence[SolverSpec], self.solvers)
        for inst, fab, seed in itertools.product(insts, fabrics, self.seeds):
            base = {"instance": inst.config(seed), "fabric": fab.config(seed), "seed": seed}
            labels = {"instance": inst.label, "fabric": fab.label}
            for sched, bg in itertools.product(scheds, self.backgrounds):
                config = {"kind": "run", **base,
                          "scheduler": {"name": sched.name, "params": sched.resolved},
                          "background": _background_config(bg, seed), "options": options}
                out.append(Cell("run", config, {
                    **labels, "scheduler": sched.label, "policy": sched.name,
                    "params": _pairs(sched.params, ", "), "background": bg or "none"}))
            for b in bounds:
                config = {"kind": "bound", **base, "bound": {
                    "name": b.name, "options": _plain(b.options), "time_limit": b.time_limit}}
                out.append(Cell("bound", config, {
                    **labels, "scheduler": b.label, "policy": b.name,
                    "params": _pairs(b.options, ", "), "background": "none"}))
            for sol in solvers:
                config = {"kind": "solve", **base, "solver": sol.config(seed)}
                out.append(Cell("solve", config, {
                    **labels, "scheduler": sol.label, "policy": sol.method,
                    "params": _pairs(sol.options, ", "), "background": "none"}))
        return out

    def sources(self) -> dict[str, tuple[str, str | None, float | None]]:
        """The files the cells read: source key -> (path, format, port rate)."""
        out: dict[str, tuple[str, str | None, float | None]] = {}
        for inst in self.instances:
            src = inst.source()
            if src is not None:
                out[source_key(src)] = (inst.path() or "", src["format"], src["port_rate"])
        return out

    # ------------------------------------------------------------------ as data

    def to_dict(self) -> dict[str, Any]:
        """The experiment as TOML-ready data (:meth:`from_dict` reads it back)."""
        out: dict[str, Any] = {}
        if self.name:
            out["name"] = self.name
        out["seeds"] = list(self.seeds)
        out["schedulers"] = [s.to_dict() for s in cast(Sequence[SchedulerSpec], self.schedulers)]
        if self.bounds:
            out["bounds"] = [b.to_dict() for b in cast(Sequence[BoundSpec], self.bounds)]
        if self.solvers:
            out["solvers"] = [s.to_dict() for s in cast(Sequence[SolverSpec], self.solvers)]
        out["fabrics"] = [f.to_dict() for f in cast(Sequence[FabricSpec], self.fabrics)]
        out["backgrounds"] = [b or "none" for b in self.backgrounds]
        if self.options:
            out["options"] = dict(self.options)
        out["instances"] = [i.to_dict() for i in self.instances]
        return out

    def to_toml(self) -> str:
        """The experiment as a TOML file's text."""
        return _toml(self.to_dict())

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any], *, path: str | None = None,
                  base: str | os.PathLike[str] | None = None) -> Experiment:
        """An experiment from data (a parsed TOML file): lists in tables are grids.

        ``path`` names the file in errors; ``base`` is the folder relative file names are
        relative to (default: the file's, else the current one).
        """
        folder = Path(base) if base is not None else Path(path).parent if path else Path(".")
        try:
            return _from_dict(obj, folder)
        except InputError as exc:
            raise InputError(exc.message, path=path) from None


def source_key(source: Mapping[str, Any]) -> str:
    """The name of a read file among a sweep's shared inputs."""
    return f"{source['sha256']}:{source['format']}:{source['port_rate']}"


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """An experiment from a TOML file (errors: :class:`InputError` naming file, key, value)."""
    name = os.fspath(path)
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror or exc})", path=name) from None
    try:
        obj = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=name) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=name) from None
    return Experiment.from_dict(obj, path=name)


# --------------------------------------------------------------------------- reading data


def _each(key: str, items: Sequence[Any], make: Callable[[Any], Any]) -> Iterator[Any]:
    for i, item in enumerate(items):
        try:
            yield make(item)
        except InputError as exc:
            raise InputError(f"{key}[{i}]: {exc.message}") from None


def _as_instance(x: Any) -> InstanceSpec:
    if not isinstance(x, InstanceSpec):
        raise InputError(f"expected an InstanceSpec, got {x!r:.60}")
    return x


def _as_scheduler(x: Any) -> SchedulerSpec:
    return SchedulerSpec.parse(x) if isinstance(x, str) else _typed(x, SchedulerSpec, "scheduler")


def _as_bound(x: Any) -> BoundSpec:
    return BoundSpec(x) if isinstance(x, str) else _typed(x, BoundSpec, "bound")


def _as_solver(x: Any) -> SolverSpec:
    return SolverSpec.parse(x) if isinstance(x, str) else _typed(x, SolverSpec, "solver")


def _as_fabric(x: Any) -> FabricSpec:
    return FabricSpec.parse(x) if isinstance(x, str) else _typed(x, FabricSpec, "fabric")


def _typed(x: Any, cls: type, what: str) -> Any:
    if not isinstance(x, cls):
        raise InputError(f"a {what} is a string or a {cls.__name__}, got {x!r:.60}")
    return x


def _check_options(options: Mapping[str, Any]) -> None:
    for key, value in options.items():
        if key not in OPTIONS:
            raise InputError(f"options: unknown option '{key}' (known: {', '.join(OPTIONS)})")
        if key == "batch_interval" and value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float))
                or not (math.isfinite(value) and value > 0)):
            raise InputError(f"options.batch_interval: a number > 0, got {value!r:.60}")
        if key == "knowledge":
            from ..sim.background import KNOWLEDGE

            if value not in KNOWLEDGE:
                raise InputError(f"options.knowledge: one of {', '.join(KNOWLEDGE)}, got {value!r:.60}")


class _Duplicate(InputError):
    """Entry ``i`` of list ``key`` with the same label or configuration as entry ``j`` of
    list ``other`` (``key`` itself unless given; positions once grids are expanded); a
    file's reader names the entries it wrote."""

    def __init__(self, key: str, i: int, j: int, what: str, label: str,
                 other: str | None = None, advice: str = "") -> None:
        self.key, self.i, self.j, self.what, self.label = key, i, j, what, label
        self.other, self.advice = other or key, advice
        super().__init__(self._text(i, j))

    def _text(self, i: int, j: int) -> str:
        if self.other == self.key and i == j:
            return f"{self.key}[{i}]: its grid gives the same {self.what} twice ('{self.label}')"
        return (f"{self.key}[{i}]: the same {self.what} as {self.other}[{j}] ('{self.label}')"
                + self.advice)

    def in_file(self, origins: Mapping[str, Sequence[int]]) -> InputError:
        """The error with the file's positions (``origins[key][i]``: the entry that
        expanded to position ``i``)."""
        at, at_other = origins.get(self.key), origins.get(self.other)
        if at is None or at_other is None:
            return InputError(self.message)
        return InputError(self._text(at[self.i], at_other[self.j]))


def _unique(key: str, labels: list[str], configs: list[str]) -> None:
    for seen, what in ((labels, "label"), (configs, "configuration")):
        first: dict[str, int] = {}
        for i, x in enumerate(seen):
            if x in first:
                raise _Duplicate(key, i, first[x], what, labels[first[x]])
            first[x] = i


def _labelled(make: Callable[[str, dict[str, Any], str], Any], name: str, table: dict[str, Any],
              label: Any, item: Mapping[str, Any]) -> Any:
    return make(name, table, _grid_label(label, table, item))


def _grid(table: Mapping[str, Any], fixed: Sequence[str]) -> list[dict[str, Any]]:
    """The tables a table with list values stands for (keys in ``fixed`` never expand); a
    list of one list is that list, not a grid."""
    keys = list(table)
    axes = []
    for k in keys:
        v = table[k]
        if k in fixed or not isinstance(v, list):
            axes.append([v])
        elif not v:
            raise InputError(f"{k}: an empty list (a grid needs at least one value)")
        else:
            axes.append(v)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes)]


def _located(where: str, make: Callable[[], Any]) -> Any:
    try:
        return make()
    except InputError as exc:
        raise InputError(f"{where}: {exc.message}") from None


def _resolve(value: Any, folder: Path, where: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: a file name, got {value!r:.60}")
    p = Path(value).expanduser()
    p = p if p.is_absolute() else folder / p
    if not p.is_file():
        raise InputError(f"{where}: no such file '{value}'")
    return str(p)


def _list(obj: Mapping[str, Any], key: str, default: list[Any]) -> list[Any]:
    value = obj.get(key, default)
    if isinstance(value, Mapping) and key in ("instances", "schedulers", "bounds", "solvers",
                                              "fabrics"):
        value = [value]
    if not isinstance(value, list):
        raise InputError(f"{key}: expected a list, got {value!r:.60}")
    return value


def _specs(obj: Mapping[str, Any], key: str, default: list[Any], name_key: str,
           from_text: Callable[[str], Any] | None,
           from_table: Callable[[str, dict[str, Any], str], Any],
           origins: dict[str, list[int]]) -> list[Any]:
    """The specs of list ``key``: each item a string (``from_text``) or a table whose list
    values are a grid (``from_table(name, rest of the table, label)``), located in errors;
    ``origins[key]`` gets the item each spec comes from."""
    out = []
    at = origins.setdefault(key, [])
    for i, item in enumerate(_list(obj, key, default)):
        where = f"{key}[{i}]"
        if isinstance(item, str) and from_text is not None:
            out.append(_located(where, _partial(from_text, item)))
            at.append(i)
            continue
        if not isinstance(item, Mapping):
            raise InputError(f"{where}: a table{' or a string' if from_text else ''}, "
                             f"got {item!r:.60}")
        tables: list[dict[str, Any]] = _located(where, _partial(_grid, item, (name_key, "label")))
        for table in tables:
            name, label = table.pop(name_key, None), table.pop("label", "")
            if not isinstance(name, str):
                raise InputError(f"{where}: needs {name_key}")
            out.append(_located(where, _partial(_labelled, from_table, name, table, label, item)))
            at.append(i)
    return out


def _from_dict(obj: Mapping[str, Any], folder: Path) -> Experiment:
    if not isinstance(obj, Mapping):
        raise InputError("an experiment is a table")
    for key in obj:
        if key not in _TOP:
            raise InputError(f"unknown key '{key}' (known: {', '.join(_TOP)})")
    name = obj.get("name", "")
    if not isinstance(name, str):
        raise InputError(f"name: a string, got {name!r:.60}")

    def instance(gen: str, table: dict[str, Any], label: str) -> InstanceSpec:
        if "file" in table:
            table["file"] = _resolve(table["file"], folder, "file")
        return InstanceSpec(gen, table, label)

    def bound(nm: str, table: dict[str, Any], label: str) -> BoundSpec:
        return BoundSpec(nm, table, table.pop("time_limit", 60.0), label)

    def solver(method: str, table: dict[str, Any], label: str) -> SolverSpec:
        return SolverSpec(method, table, table.pop("objective", "wcct"),
                          table.pop("time_limit", 60.0), label)

    def fabric(topo: str, table: dict[str, Any], label: str) -> FabricSpec:
        extra = {k: table.pop(k) for k in ("routing", "routing_seed") if k in table}
        name, params = _topology_text(topo)
        return FabricSpec(name, {**params, **table}, label=label, **extra)

    def background(text: str) -> str | None:
        if text.startswith("file:"):
            text = "file:" + _resolve(text[5:], folder, "file")
        return _background(text)

    origins: dict[str, list[int]] = {}
    instances = _specs(obj, "instances", [], "generator", None, instance, origins)
    schedulers = _specs(obj, "schedulers", [], "name", SchedulerSpec.parse, SchedulerSpec, origins)
    bounds = _specs(obj, "bounds", [], "name", BoundSpec, bound, origins)
    solvers = _specs(obj, "solvers", [], "method", SolverSpec.parse, solver, origins)
    fabrics = _specs(obj, "fabrics", ["big-switch"], "topology", FabricSpec.parse, fabric, origins)
    backgrounds = []
    for i, item in enumerate(_list(obj, "backgrounds", ["none"])):
        if not isinstance(item, str):
            raise InputError(f"backgrounds[{i}]: share:X, poisson:load=X,..., file:PATH or none, "
                             f"got {item!r:.60}")
        backgrounds.append(_located(f"backgrounds[{i}]", _partial(background, item)))
    options = obj.get("options", {})
    if not isinstance(options, Mapping):
        raise InputError(f"options: a table, got {options!r:.60}")
    try:
        return Experiment(instances, schedulers, _list(obj, "seeds", [0]), bounds, fabrics,
                          backgrounds, dict(options), name, solvers)
    except _Duplicate as dup:
        raise dup.in_file(origins) from None


def _grid_label(label: Any, table: Mapping[str, Any], item: Mapping[str, Any]) -> str:
    """A label given for a grid gets the values that vary appended (``A:load=0.5``)."""
    if not isinstance(label, str):
        raise InputError(f"label: a string, got {label!r:.60}")
    if not label:
        return ""
    varying = {k: table[k] for k in table if isinstance(item.get(k), list) and len(item[k]) > 1}
    return f"{label}:{_pairs(varying, ',')}" if varying else label


# --------------------------------------------------------------------------- writing TOML


def _toml_key(key: str) -> str:
    return key if key and all(c.isalnum() or c in "_-" for c in key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if value is None:
        raise InputError("TOML has no null: leave the key out")
    raise InputError(f"cannot write {value!r:.60} as TOML")


def _toml(data: Mapping[str, Any]) -> str:
    lines = []
    tables = []
    for key, value in data.items():
        if key == "options":
            tables.append("[options]\n" + "".join(
                f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in value.items() if v is not None))
        elif key == "instances":
            for inst in value:
                tables.append("[[instances]]\n" + "".join(
                    f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in inst.items()))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n\n" + "\n".join(tables)
