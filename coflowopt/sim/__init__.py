"""Event-driven fluid simulation of coflow schedulers.

``simulate(instance, "varys")`` runs one policy on one instance and returns a
:class:`SimulationResult`; ``simulate(instance, "static-order", order=[...])``
evaluates a fixed coflow priority order; ``simulate_many`` runs several, in
parallel processes with ``jobs=N``. Policies are listed in
:data:`POLICIES` (``coflowopt.sim.policies``), each in its own module with
its parameters and the section of its paper it implements. The engine's model is
described in ``models/simulator.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..fabric.background import Background
from ..instance import Instance
from .background import KNOWLEDGE, UnderBackground
from .batch import simulate_many
from .engine import (
    MAX_PIECES,
    Allocation,
    Engine,
    InformationError,
    PolicyError,
    SimulationError,
    SimView,
)
from .policies import POLICIES, Params, Policy, PolicySpec, get_policy, make_policy
from .results import COLUMNS, SimulationResult

__all__ = [
    "COLUMNS",
    "MAX_PIECES",
    "POLICIES",
    "Allocation",
    "InformationError",
    "Params",
    "Policy",
    "PolicyError",
    "PolicySpec",
    "SimView",
    "SimulationError",
    "SimulationResult",
    "get_policy",
    "make_policy",
    "simulate",
    "simulate_many",
]


def simulate(
    instance: Instance,
    scheduler: str | Policy,
    params: Params | Mapping[str, Any] | None = None,
    *,
    batch_interval: float | None = None,
    record: bool = True,
    progress: Callable[[float], None] | None = None,
    check: bool = True,
    compiled: bool = True,
    max_pieces: int = MAX_PIECES,
    jit: str | None = None,
    background: Background | None = None,
    knowledge: str = "nominal",
    **kwargs: Any,
) -> SimulationResult:
    """Simulate one scheduler on one instance.

    Parameters
    ----------
    instance
        The instance (capacities in data units per time unit).
    scheduler
        A registered name (see :data:`POLICIES`) or a policy object.
    params, **kwargs
        The scheduler's parameters (its ``Params`` dataclass, a mapping, or
        keywords); unknown names raise :class:`SimulationError`.
    batch_interval
        Admit arrivals only at multiples of this interval (the papers' batch
        arrivals: MCS uses 10 s and 1 s); ``None`` admits them at once.
    record
        Record and return the :class:`~coflowopt.Schedule` (off saves memory
        on large traces). The completion times are the same either way, except in
        their last bits for ``aalo`` and ``mcs`` (and ``baraat`` on networks): a full
        record buffer ends their compiled stretch there, and the next one solves its
        levels again (about 1e-13 relative, ``models/simulator.md``).
    max_pieces
        The most rows recorded (:data:`coflowopt.sim.engine.MAX_PIECES`,
        100 million, about 3 GiB: pieces, and for the fair-sharing kernels tied
        pieces and level changes, :class:`~coflowopt.schedule.TiedPieces`); a run
        that would record more goes on without a schedule (``schedule`` is None
        and ``info["unrecorded"]`` says why) rather than run out of memory.
    progress
        Called now and then with the fraction of bytes delivered.
    check
        Verify every allocation against capacities and admissions (cheap;
        turn off only for benchmarking).
    compiled
        Use the compiled stretch kernels (:mod:`coflowopt.sim.kernels`) where
        a policy and the fabric allow them; ``False`` runs the reference path
        (same results, for testing the kernels; much slower on large traces).
    jit
        How the kernels run: ``"auto"`` (the default, or the environment variable
        ``COFLOWOPT_JIT``) interprets them on instances of up to 20,000 flows while
        their machine code is neither compiled nor cached, as long as interpreting
        costs less than compiling would (:func:`coflowopt._jit.adaptive`), and compiles
        them otherwise; ``"compile"`` and ``"interpret"`` force one way. The results are
        the same bit for bit every way; only the time differs.
    background, knowledge
        Traffic the scheduler does not see (:class:`coflowopt.fabric.Background`: a share
        of every link, a load over time, flows), and what the scheduler knows of it:
        ``"nominal"`` (the fabric's capacities) or ``"ideal"`` (the capacity left now, and a
        new decision at every change). The network enforces the true capacities
        (:mod:`coflowopt.sim.background`); the scheduler runs its reference path, and the
        result's :attr:`~SimulationResult.background` is the load the background put on
        every link, for :func:`coflowopt.check_feasible`.
    """
    if not isinstance(instance, Instance):
        raise SimulationError(f"expected an Instance, got {type(instance).__name__}")
    if params is not None and not isinstance(params, (Mapping, Params)):
        raise SimulationError(f"params must be a mapping of parameter names to values, got "
                              f"{params!r:.80}")
    if not isinstance(record, (bool, np.bool_)):
        raise SimulationError(f"record must be True or False, got {record!r:.80}")
    if progress is not None and not callable(progress):
        raise SimulationError(f"progress must be a function of the fraction done, got "
                              f"{progress!r:.80}")
    if isinstance(scheduler, Policy):
        if params is not None or kwargs:
            raise SimulationError("pass parameters to the policy object, not to simulate()")
        policy = scheduler
    else:
        if params is not None and kwargs:
            raise SimulationError("give parameters either as params or as keywords, not both")
        policy = make_policy(scheduler, params if params is not None else kwargs)
    inner = policy
    if background is not None and not isinstance(background, Background):
        hint = (" (wrap it: Background(poisson=...))"
                if type(background).__name__ == "PoissonFlows" else "")
        raise SimulationError(f"background must be a Background, got "
                              f"{type(background).__name__}{hint}")
    if background is not None and not background.is_empty:
        policy = UnderBackground(inner, background, knowledge)
    elif getattr(inner, "feedback", None) is not None:
        # a policy that reads the switches' feedback runs in the network model even on
        # its own: flows it leaves unscheduled share the links max-min
        policy = UnderBackground(inner, background or Background(), knowledge)
    elif knowledge not in KNOWLEDGE:
        raise SimulationError(f"knowledge must be one of {', '.join(KNOWLEDGE)}, got {knowledge!r}")
    engine = Engine(
        instance, policy, batch_interval=batch_interval, record=record, progress=progress,
        check=check, compiled=compiled, max_pieces=max_pieces, jit=jit,
    )
    data = engine.run()
    info = dict(data.info)
    columns = {k: np.asarray(v) for k, v in info.pop("coflow_columns", {}).items()}
    load = info.pop("background_load", None)
    return SimulationResult(
        instance=instance,
        scheduler=inner.name,
        params=inner.params.as_dict(),
        batch_interval=batch_interval,
        completion=data.completion,
        start=data.start,
        admitted=data.admitted,
        flow_completion=data.flow_completion,
        schedule=data.schedule,
        events=data.events,
        decisions=data.decisions,
        runtime=data.runtime,
        info=info,
        coflow_columns=columns,
        background=load,
    )
