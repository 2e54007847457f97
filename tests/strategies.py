"""Hypothesis strategies for random instances, shared by the tests."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from coflowopt import MB, Coflow, Fabric, Instance


@st.composite
def instances(
    draw: st.DrawFn,
    *,
    max_ports: int = 4,
    max_coflows: int = 4,
    max_flows: int = 4,
    releases: bool = True,
    weights: bool = True,
    deadlines: bool = False,
    dependencies: bool = False,
    delays: bool = False,
    uniform: bool = False,
    integer: bool = False,
) -> Instance:
    """Small random instances on the big switch.

    ``integer`` draws whole-number sizes, capacities and releases (exact
    arithmetic in the tests that need it).
    """
    P = draw(st.integers(1, max_ports))
    if uniform:
        cap = [draw(st.sampled_from([1.0, 2.0]))] * P
        ingress = egress = cap
    elif integer:
        ingress = draw(st.lists(st.integers(1, 3), min_size=P, max_size=P))
        egress = draw(st.lists(st.integers(1, 3), min_size=P, max_size=P))
    else:
        caps = st.floats(0.5, 4.0, allow_nan=False)
        ingress = draw(st.lists(caps, min_size=P, max_size=P))
        egress = draw(st.lists(caps, min_size=P, max_size=P))
    K = draw(st.integers(1, max_coflows))
    size = st.integers(1, 6).map(float) if integer else st.floats(0.1, 10.0, allow_nan=False)
    coflows = []
    for k in range(K):
        n = draw(st.integers(1, max_flows))
        src = draw(st.lists(st.integers(0, P - 1), min_size=n, max_size=n))
        dst = draw(st.lists(st.integers(0, P - 1), min_size=n, max_size=n))
        sizes = draw(st.lists(size, min_size=n, max_size=n))
        release = 0.0
        if releases:
            release = float(draw(st.integers(0, 5))) if integer else draw(st.floats(0.0, 5.0))
        weight = 1.0
        if weights:
            weight = float(draw(st.integers(1, 3))) if integer else draw(st.floats(0.25, 4.0))
        deadline = None
        if deadlines and draw(st.booleans()):
            deadline = release + draw(st.floats(0.5, 20.0))
        sa: tuple[str, ...] = ()
        fb: tuple[str, ...] = ()
        if dependencies and k:
            # only on earlier coflows, so there is never a cycle
            earlier = [f"c{j}" for j in range(k)]
            sa = tuple(draw(st.lists(st.sampled_from(earlier), max_size=1, unique=True)))
            fb = tuple(draw(st.lists(st.sampled_from(earlier), max_size=1, unique=True)))
        delay = None
        if delays and draw(st.booleans()):
            delay = draw(st.lists(st.floats(0.0, 3.0), min_size=n, max_size=n))
        coflows.append(
            Coflow(
                f"c{k}",
                src,
                dst,
                sizes,
                release=release,
                weight=weight,
                deadline=deadline,
                starts_after=sa,
                finishes_before=fb,
                delay=delay,
            )
        )
    return Instance(Fabric(ingress, egress), tuple(coflows), name="random")


@st.composite
def shuffle_instances(
    draw: st.DrawFn, *, max_ports: int = 6, max_coflows: int = 5, port_rate: float = 1.25e8
) -> Instance:
    """Instances the Coflow-Benchmark format can express: full mapper x reducer shuffles.

    Sizes are made exactly as the trace reader makes them (``MB * 2^20 / m``)
    from decimal megabyte values, and releases from whole milliseconds.
    """
    P = draw(st.integers(1, max_ports))
    K = draw(st.integers(1, max_coflows))
    coflows = []
    for k in range(K):
        mappers = draw(st.lists(st.integers(0, P - 1), min_size=1, max_size=P, unique=True))
        reducers = draw(st.lists(st.integers(0, P - 1), min_size=1, max_size=P, unique=True))
        mbs = draw(
            st.lists(
                st.decimals(min_value="0.001", max_value="100000", places=3).map(float),
                min_size=len(reducers),
                max_size=len(reducers),
            )
        )
        ms = draw(st.integers(0, 10**7))
        m = len(mappers)
        src = np.tile(mappers, len(reducers))
        dst = np.repeat(reducers, m)
        size = np.repeat(np.array(mbs) * MB / m, m)
        coflows.append(Coflow(str(k + 1), src, dst, size, release=ms / 1000.0))
    return Instance(Fabric.uniform(P, port_rate), tuple(coflows))


@st.composite
def whole_mb_instances(
    draw: st.DrawFn,
    *,
    max_ports: int = 6,
    max_coflows: int = 5,
    max_flows: int = 6,
    port_rate: float = 1.25e8,
) -> Instance:
    """Instances the Sincronia format expresses exactly: whole-megabyte flows."""
    P = draw(st.integers(1, max_ports))
    K = draw(st.integers(1, max_coflows))
    coflows = []
    for k in range(K):
        n = draw(st.integers(1, max_flows))
        src = draw(st.lists(st.integers(0, P - 1), min_size=n, max_size=n))
        dst = draw(st.lists(st.integers(0, P - 1), min_size=n, max_size=n))
        mb = draw(st.lists(st.integers(1, 5000), min_size=n, max_size=n))
        ms = draw(st.integers(0, 10**7))
        coflows.append(Coflow(str(k), src, dst, np.array(mb, float) * MB, release=ms / 1000.0))
    return Instance(Fabric.uniform(P, port_rate), tuple(coflows))


OWN_ESTIMATE = ("coflourish",)
"""Policies that build their own estimate of the bandwidth the background leaves (no
``knowledge`` option), from the feedback of a two-layer fabric (no fat-tree)."""


def policy_runs_on(name: str, inst: Instance) -> bool:
    """Whether policy ``name`` takes ``inst``'s fabric (coflourish: the big switch or spine-leaf)."""
    from coflowopt.fabric import FatTree

    return name not in OWN_ESTIMATE or not isinstance(getattr(inst.fabric, "topology", None), FatTree)


@st.composite
def network_instances(draw: st.DrawFn, *, routings: tuple[str, ...] = ("ecmp", "spray"),
                      max_ports: int = 4, **kwargs: object) -> Instance:
    """Small random instances on a spine-leaf fabric or the k = 4 fat-tree, ECMP or spray:
    an :func:`instances` draw whose ports are put on distinct random hosts."""
    from coflowopt.fabric import FatTree, Network, SpineLeaf

    rate = st.sampled_from([0.5, 1.0, 2.0])
    if draw(st.booleans()):
        topo = SpineLeaf(draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3)),
                         draw(rate), draw(rate))
    else:
        topo = FatTree(4, draw(rate), draw(rate))
    net = Network(topo, draw(st.sampled_from(routings)), draw(st.integers(0, 3)))
    H = topo.num_hosts
    base = draw(instances(max_ports=min(max_ports, H), **kwargs))  # type: ignore[arg-type]
    hosts = np.array(draw(st.permutations(range(H)))[: base.num_ports])
    coflows = tuple(
        Coflow(c.id, hosts[c.src], hosts[c.dst], c.sizes, release=c.release, weight=c.weight,
               deadline=c.deadline, starts_after=c.starts_after, finishes_before=c.finishes_before,
               delay=c.delay)
        for c in base.coflows)
    return Instance(net, coflows, name="random network")


def seeded_instance(seed: int, *, coflows: int, ports: int, max_flows: int, max_size: float,
                    max_weight: float) -> Instance:
    """Coflows of 1 to ``max_flows`` flows between random ports of a uniform big switch,
    sizes uniform in [0.5, ``max_size``], releases in [0, 3], weights in [0.5, ``max_weight``]."""
    rng = np.random.default_rng(seed)
    made = []
    for k in range(coflows):
        n = int(rng.integers(1, max_flows + 1))
        made.append(Coflow(f"c{k}", rng.integers(0, ports, n), rng.integers(0, ports, n),
                           rng.uniform(0.5, max_size, n), release=float(rng.uniform(0, 3)),
                           weight=float(rng.uniform(0.5, max_weight))))
    return Instance(Fabric.uniform(ports), tuple(made))
