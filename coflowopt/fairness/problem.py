"""The input of every fairness mechanism: coflows' correlation vectors over links.

Dissertation §7.3.1: coflow ``k`` has a *correlation vector* ``d_k`` over the
links of the fabric (on the big switch ``L = 2P``: ``P`` uplinks, then ``P``
downlinks; on a network every link of its paths), its
per-link demand normalised by the link capacities and scaled so that its
largest entry is 1 (its bottleneck links). For every unit of *progress*
``P_k`` the coflow needs ``P_k d^i_k`` of link ``i`` (a fraction of that
link's capacity). A problem also carries per-coflow weights (§7.6.3),
optional *bounds* (bounded demands: a coflow never needs more progress than
its bound, §7.6.3), and whether each coflow is *elastic* (it can use more
than ``P_k d^i_k`` on its non-bottleneck links) or not.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._files import natural_number
from .._text import plural
from ..errors import InstanceError
from ..instance import Fabric, Instance
from ._arith import as_float, is_rational, to_number_array

__all__ = ["FairnessProblem", "correlation_vectors"]


def correlation_vectors(load: npt.ArrayLike, capacity: npt.ArrayLike | None = None) -> npt.NDArray[Any]:
    """Per-link loads divided by capacities, each row scaled to a maximum of 1 (§7.3.1).

    This is the MADD view of a coflow: with rates proportional to its loads,
    the links where ``load / capacity`` is largest are its bottlenecks.
    Works on float and ``Fraction`` (object) arrays; an :class:`Instance` gives its
    coflows' loads on its links and its capacities.
    """
    if isinstance(load, Instance):
        load, capacity = load.load, load.fabric.capacity if capacity is None else capacity
    v = np.asarray(load)
    if v.ndim != 2:
        raise InstanceError(f"load must be a coflows x links array, got shape {v.shape}")
    if not np.all(_finite_numbers(v) >= 0):
        raise InstanceError("loads must be finite numbers >= 0")
    if capacity is not None:
        cap = np.asarray(capacity)
        if cap.shape != (v.shape[1],):
            raise InstanceError(f"capacity needs one value per link ({v.shape[1]}), got shape "
                                f"{cap.shape}")
        if not np.all(_finite_numbers(cap) > 0):
            raise InstanceError("capacities must be finite numbers > 0")
        v = v / cap
    top = v.max(axis=1)
    if np.any(top <= 0):
        k = int(np.flatnonzero(top <= 0)[0])
        raise InstanceError(f"coflow {k} has no demand on any link", coflow=k)
    out = v / top[:, None]
    # a load that normalises to 0 would vanish from the coflow's links (capacities of 1e-300
    # and 1e300 made a demand of 1e-600 a 0; FairnessProblem refuses what is left subnormal)
    lost = np.argwhere((as_float(v) > 0) & (as_float(out) == 0))
    if lost.size:
        k, i = (int(x) for x in lost[0])
        raise InstanceError(f"coflow {k}'s load on link {i} is below float64's range relative to "
                            "its bottleneck once divided by the capacities; rescale the "
                            "capacities toward each other", coflow=k)
    return out


def _finite_numbers(values: np.ndarray) -> npt.NDArray[np.float64]:
    """``values`` as floats (``Fraction`` entries too), with ``nan`` for an entry that is not a
    finite number (so that every comparison with it fails)."""
    try:
        out = as_float(values)
    except (TypeError, ValueError, OverflowError):
        return np.full(values.shape, np.nan)
    return np.where(np.isfinite(out), out, np.nan)


@dataclass(frozen=True, slots=True, eq=False)
class FairnessProblem:
    """Coflows' correlation vectors, weights, bounds and elasticity on a set of links.

    Parameters
    ----------
    vectors
        ``(M, L)`` non-negative demands per unit of progress, as fractions of
        each link's capacity; every row is scaled so its largest entry is 1.
    weights
        ``(M,)`` positive weights (default 1): Eq. 7.2 uses ``w_k d_k``.
    bounds
        ``(M,)`` largest progress each coflow can use (bounded demands);
        ``None`` or ``inf`` entries mean unbounded.
    elastic
        One flag for all coflows or one per coflow (default True): an elastic
        coflow consumes whatever it is allocated on the links it uses; an
        inelastic one consumes exactly ``P_k d_k``.
    capacity
        ``(L,)`` link capacities in absolute units (default 1); only absolute
        quantities (bandwidth, utilization weighted by capacity) use them.
    ids, link_names
        Names of the coflows and links (defaults ``C0..``, ``L0..``).
    num_ports
        ``P`` when the links are ``P`` uplinks then ``P`` downlinks (needed
        for the min-cut metric); ``None`` for a general set of links.
    exact
        Use ``Fraction`` arithmetic. ``None`` (default): exact when every
        number given is rational (ints, ``Fraction``, strings like ``"1/6"``).
    instance
        The instance the vectors come from, when built by :meth:`from_instance`
        (flow-level mechanisms need its flows).
    """

    # Inputs are loose (lists, scalars, None); __post_init__ turns them into
    # read-only arrays and a bool, hence ``Any`` for the fields it converts.
    vectors: Any
    weights: Any = None
    bounds: Any = None
    elastic: Any = True
    capacity: Any = None
    ids: tuple[str, ...] = ()
    link_names: tuple[str, ...] = ()
    num_ports: int | None = None
    name: str = ""
    exact: Any = None
    instance: Instance | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        raw = self.vectors
        if isinstance(raw, np.ndarray) and raw.dtype != object:
            shape = raw.shape
        else:
            try:
                shape = np.asarray(raw, dtype=object).shape
            except ValueError as exc:  # ragged rows
                raise InstanceError(f"correlation vectors must form a matrix: {exc}") from None
        if len(shape) != 2 or shape[0] == 0 or shape[1] == 0:
            raise InstanceError(
                f"correlation vectors must be a non-empty (coflows x links) matrix, got shape {shape}"
            )
        M, L = shape
        exact = self.exact
        if exact is not None and not isinstance(exact, (bool, np.bool_)):
            raise InstanceError(f"exact must be True, False or None (decide from the data), got "
                                f"{exact!r:.60}")
        if exact is None:
            exact = _all_rational(raw) and all(
                _all_rational(x) for x in (self.weights, self.bounds, self.capacity) if x is not None
            )
        exact = bool(exact)
        ids = tuple(str(i) for i in self.ids) if self.ids else tuple(f"C{k}" for k in range(M))
        if len(ids) != M:
            raise InstanceError(f"{plural(M, 'coflow')} but {plural(len(ids), 'id')}")
        if len(set(ids)) != M:
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InstanceError(f"duplicate coflow id '{dup}'")
        names = (
            tuple(str(n) for n in self.link_names) if self.link_names else tuple(f"L{i}" for i in range(L))
        )
        if len(names) != L:
            raise InstanceError(f"{plural(L, 'link')} but {plural(len(names), 'link name')}")

        try:
            vec = to_number_array(raw, exact=exact)
        except (TypeError, ValueError) as exc:
            raise InstanceError(f"correlation vectors must be numbers: {exc}") from None
        fv = as_float(vec)
        bad = np.argwhere(~np.isfinite(fv) | (fv < 0))
        if bad.size:
            k, i = (int(x) for x in bad[0])
            raise InstanceError(
                f"coflow '{ids[k]}' has demand {fv[k, i]!r} on link {names[i]}; "
                "demands must be finite and >= 0",
                coflow=k,
            )
        top = fv.max(axis=1)
        if np.any(top <= 0):
            k = int(np.flatnonzero(top <= 0)[0])
            raise InstanceError(f"coflow '{ids[k]}' has no demand on any link", coflow=k)
        # decided on the exact values: a Fraction maximum such as 1 + 1e-17 is 1.0 as a float
        rows_top = vec.max(axis=1)
        if not np.all(rows_top == 1):
            vec = vec / rows_top[:, None]
        # a positive demand that normalises to 0 (or below the normal floats) would vanish
        # from the coflow's links without a word ([1e308, 1e-300] became [1, 0])
        lost = np.argwhere((fv > 0) & (as_float(vec) < sys.float_info.min))
        if lost.size:
            k, i = (int(x) for x in lost[0])
            raise InstanceError(
                f"coflow '{ids[k]}' demands {float(fv[k, i])!r} on link {names[i]}, below float64's "
                f"range relative to its largest demand {float(fv[k].max())!r}; rescale its demands",
                coflow=k,
            )

        w = self._per_coflow(self.weights, M, ids, "weight", exact, default=1)
        fw = as_float(w)  # (a Fraction beyond float64 was refused above)
        with np.errstate(over="ignore"):
            total = float(np.sum(fw)) if M else 1.0
        if M and not (math.isfinite(total) and float(fw.min()) / total > 0
                      and math.isfinite(1.0 / float(fw.max()))):
            # the mechanisms sum w_k d_k over the coflows (an inf there made every progress 0)
            # and divide by it (1e-320 made every progress inf)
            raise InstanceError(f"the weights lie beyond what float64 holds (sum {total!r}, "
                                f"smallest {float(fw.min())!r}, largest {float(fw.max())!r}); "
                                "only their ratios matter: scale them toward 1")
        b = self._per_coflow(self.bounds, M, ids, "bound", exact, default=math.inf)
        cap = self._per_link(self.capacity, L, names, exact)
        el = _flags(self.elastic, M)

        P = self.num_ports
        if P is not None and (not natural_number(P) or P < 1 or 2 * int(P) != L):
            raise InstanceError(f"num_ports = {P!r} does not match {L} links (need L = 2 P)")
        for arr in (vec, w, b, cap, el):
            arr.setflags(write=False)
        set_(self, "vectors", vec)
        set_(self, "weights", w)
        set_(self, "bounds", b)
        set_(self, "elastic", el)
        set_(self, "capacity", cap)
        set_(self, "ids", ids)
        set_(self, "link_names", names)
        set_(self, "num_ports", None if P is None else int(P))
        set_(self, "name", str(self.name or ""))
        set_(self, "exact", exact)

    @staticmethod
    def _per_coflow(
        value: Any, M: int, ids: tuple[str, ...], what: str, exact: bool, default: float
    ) -> npt.NDArray[Any]:
        if value is None:
            return to_number_array(np.full(M, default, dtype=object), exact=exact)
        if not exact and isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            arr = np.array(value, dtype=np.float64).reshape(-1)
            if arr.size != M:
                raise InstanceError(f"{plural(M, 'coflow')} but {plural(arr.size, what)}")
            bad = np.flatnonzero(np.isnan(arr) | (arr <= 0) | (np.isinf(arr) & (what != "bound")))
            if bad.size:
                k = int(bad[0])
                raise InstanceError(f"coflow '{ids[k]}' has {what} {arr[k]!r}; it must be > 0", coflow=k)
            return arr
        items = list(np.asarray(value, dtype=object).reshape(-1))
        if len(items) != M:
            raise InstanceError(f"{plural(M, 'coflow')} but {plural(len(items), what)}")
        items = [default if v is None else v for v in items]
        try:
            arr = to_number_array(np.array(items, dtype=object), exact=exact)
        except (TypeError, ValueError) as exc:
            raise InstanceError(f"{what}s must be numbers: {exc}") from None
        try:
            f = as_float(arr)
        except OverflowError:  # a Fraction beyond float64 (10**400)
            raise InstanceError(f"the {what}s lie beyond what float64 holds; scale them toward "
                                "1") from None
        bad = np.flatnonzero(np.isnan(f) | (f <= 0) | (np.isinf(f) & (what != "bound")))
        if bad.size:
            k = int(bad[0])
            raise InstanceError(f"coflow '{ids[k]}' has {what} {items[k]!r}; it must be > 0", coflow=k)
        return arr

    @staticmethod
    def _per_link(value: Any, L: int, names: tuple[str, ...], exact: bool) -> npt.NDArray[Any]:
        if value is None:
            return to_number_array(np.ones(L, dtype=int), exact=exact)
        items = np.asarray(value, dtype=object).reshape(-1)
        if items.size != L:
            raise InstanceError(f"{plural(L, 'link')} but {plural(items.size, 'capacity', 'capacities')}")
        try:
            arr = to_number_array(items, exact=exact)
        except (TypeError, ValueError) as exc:
            raise InstanceError(f"capacities must be numbers: {exc}") from None
        f = as_float(arr)
        bad = np.flatnonzero(~(np.isfinite(f) & (f > 0)))
        if bad.size:
            i = int(bad[0])
            raise InstanceError(f"link {names[i]} has capacity {items[i]!r}; capacities must be > 0")
        return arr

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_demands(cls, demands: Any, **kwargs: Any) -> FairnessProblem:
        """A problem from *bounded* demand vectors (fractions of each link).

        Coflow ``k`` with demand ``b_k`` gets vector ``b_k / max b_k`` and
        bound ``max b_k``: it never needs more than ``b_k`` (§7.6.3). Such a
        coflow "cannot elastically scale up" (§7.6.3), so the coflows are
        inelastic unless ``elastic`` is given - as for the ``demand`` key of
        a ``coflowopt-demands/1`` file.
        """
        exact = kwargs.get("exact")
        if exact is None:
            exact = _all_rational(demands)
        try:
            arr = to_number_array(demands, exact=bool(exact))
        except (TypeError, ValueError) as exc:
            raise InstanceError(f"demands must be numbers: {exc}") from None
        if arr.ndim != 2:
            raise InstanceError(f"demands must be a (coflows x links) matrix, got shape {arr.shape}")
        top = arr.max(axis=1)
        if np.any(as_float(top) <= 0):
            raise InstanceError("every coflow needs a positive demand on some link")
        kwargs.setdefault("exact", bool(exact))
        kwargs.setdefault("elastic", False)
        return cls(arr, bounds=top, **kwargs)

    @classmethod
    def from_instance(
        cls, instance: Instance, *, elastic: bool | Sequence[bool] = True, exact: bool = False
    ) -> FairnessProblem:
        """Correlation vectors from each coflow's per-link load (§7.3.1, via MADD).

        ``d^i_k = (load^i_k / C_i) / max_j (load^j_k / C_j)``; weights come from
        the instance. ``exact`` converts the (float) loads to fractions exactly.
        On the big switch the links are ``in0..`` then ``out0..`` (``num_ports``
        set); on a network they are all its links, named by the fabric
        (``"link h0->leaf0"``), and ``num_ports`` is ``None`` (a general set of links).
        """
        if not isinstance(instance, Instance):
            raise InstanceError(f"from_instance takes an Instance (coflowopt.read(path) reads "
                                f"one), got {type(instance).__name__}")
        if instance.num_coflows == 0:
            raise InstanceError("the instance has no coflows")
        fab = instance.fabric
        ports: int | None
        if isinstance(fab, Fabric):
            ports = P = instance.num_ports
            names = tuple(f"in{p}" for p in range(P)) + tuple(f"out{p}" for p in range(P))
        else:
            ports = None
            names = tuple(fab.link_name(i) for i in range(fab.num_links))
        load: npt.NDArray[Any] = np.asarray(instance.load)
        cap: npt.NDArray[Any] = np.asarray(instance.fabric.capacity)
        weights: npt.NDArray[Any] = np.asarray(instance.weight)
        if exact:
            load = to_number_array(load, exact=True)
            cap = to_number_array(cap, exact=True)
            weights = to_number_array(weights, exact=True)
        vec = correlation_vectors(load, cap)
        return cls(
            vec,
            weights=weights,
            elastic=np.asarray(elastic, dtype=bool),
            capacity=cap,
            ids=instance.ids,
            link_names=names,
            num_ports=ports,
            name=instance.name,
            exact=exact,
            instance=instance,
        )

    # ------------------------------------------------------------------ variants

    @property
    def num_coflows(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def num_links(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def bounded(self) -> bool:
        """True when some coflow has a finite bound."""
        return bool(np.isfinite(as_float(self.bounds)).any())

    def index(self, coflow: str | int) -> int:
        """Position of a coflow given its id (or its position)."""
        if isinstance(coflow, (int, np.integer)) and not isinstance(coflow, bool):
            k = int(coflow)
            if not 0 <= k < self.num_coflows:
                raise InstanceError(f"no coflow at position {k} ({plural(self.num_coflows, 'coflow')})")
            return k
        try:
            return self.ids.index(str(coflow))
        except ValueError:
            raise InstanceError(
                f"no coflow with id '{coflow}' (known: {', '.join(self.ids[:10])}"
                + (", ..." if self.num_coflows > 10 else "") + ")"
            ) from None

    def replace(self, **changes: Any) -> FairnessProblem:
        """A copy with some fields changed (re-validated)."""
        return dataclasses.replace(self, **changes)

    def with_vector(self, coflow: str | int, vector: npt.ArrayLike) -> FairnessProblem:
        """The problem with one coflow's correlation vector replaced (a report)."""
        k = self.index(coflow)
        L = self.num_links
        try:
            row = (to_number_array(vector, exact=self.exact) if self.exact
                   else np.asarray(vector, float)).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise InstanceError(f"the vector of coflow '{self.ids[k]}' must be numbers: {exc}") from None
        if row.size != L:
            raise InstanceError(f"the vector of coflow '{self.ids[k]}' needs {plural(L, 'entry', 'entries')} "
                                f"(one per link), got {row.size}")
        new = np.array(self.vectors, dtype=self.vectors.dtype, copy=True)
        new[k] = row
        return self.replace(vectors=new)

    def to_float(self) -> FairnessProblem:
        """The same problem in float64 arithmetic."""
        if not self.exact:
            return self
        return self.replace(
            vectors=as_float(self.vectors),
            weights=as_float(self.weights),
            bounds=as_float(self.bounds),
            capacity=as_float(self.capacity),
            exact=False,
        )

    def to_exact(self) -> FairnessProblem:
        """The same problem in ``Fraction`` arithmetic (floats converted exactly)."""
        if self.exact:
            return self
        return self.replace(exact=True)

    def __repr__(self) -> str:
        return (
            f"FairnessProblem(name={self.name!r}, coflows={self.num_coflows}, "
            f"links={self.num_links}, exact={self.exact})"
        )


def _all_rational(values: Any) -> bool:
    if values is None:
        return True
    if isinstance(values, np.ndarray) and values.dtype != object:
        return values.dtype.kind in "iu"
    arr = np.asarray(values, dtype=object)
    return all(
        is_rational(v) or (isinstance(v, float) and math.isinf(v)) or v is None for v in arr.reshape(-1)
    )


def _flags(value: Any, M: int) -> npt.NDArray[np.bool_]:
    """``elastic``: one bool for every coflow, or one per coflow (a string such as
    ``"false"`` is truthy, so it is refused, as any non-bool is)."""
    items = list(np.asarray(value, dtype=object).reshape(-1))
    if not all(isinstance(x, (bool, np.bool_)) for x in items) or len(items) not in (1, M):
        raise InstanceError(f"elastic must be true or false, for every coflow or one per coflow "
                            f"({plural(M, 'coflow')}), got {value!r:.60}")
    return np.broadcast_to(np.asarray(items, dtype=bool), (M,)).copy()


def check_problem(value: Any, what: str) -> FairnessProblem:
    """``value`` if it is a :class:`FairnessProblem`, else an :class:`InstanceError` naming
    ``what`` takes one (an instance, say, which ``FairnessProblem.from_instance`` turns
    into one)."""
    if isinstance(value, FairnessProblem):
        return value
    hint = (" (FairnessProblem.from_instance(instance) makes one)"
            if isinstance(value, Instance) else "")
    raise InstanceError(f"{what} takes a FairnessProblem, got {type(value).__name__}{hint}")

