"""The greedy stretch over routes passes over the rows another link holds at rate 0.

On an oversubscribed fabric most rows of a link are held at rate 0 by another link
(the leaf uplinks fill, the host links never do): ``greedy_csr_stretch`` leaves such a
row's entry lazy, its residual that of the eager entry before it on its link, and a
change passes over a run of lazy entries in one step. These tests pin the search over
the slots to a scan, and the stretch, through the engine, to the reference path
(``compiled=False``: ``alloc.greedy`` at every event) bit for bit on oversubscribed
spine-leaf fabrics where many rows are held, and to a fresh structure at every call.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Instance, check_feasible
from coflowopt.fabric import FatTree, Network, SpineLeaf
from coflowopt.sim import simulate
from coflowopt.sim.kernels.greedy import _BLOCK, _eager_after, _eager_before
from tests.sim.test_greedy_network_fast import kept_against_fresh
from tests.strategies import instances

GREEDY_ORDERS = ("sincronia", "static-order")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=5 * _BLOCK), st.data())
def test_eager_searches_are_scans(flags, data):
    """The next and previous eager slots, with blocks of slots counted, are those a scan
    over the slots finds, within any range."""
    S = -(-len(flags) // _BLOCK) * _BLOCK
    eager = np.zeros(S, np.bool_)
    eager[: len(flags)] = flags
    nblk = eager.reshape(-1, _BLOCK).sum(axis=1).astype(np.int64)
    first = data.draw(st.integers(0, S))
    end = data.draw(st.integers(first, S))
    s = data.draw(st.integers(first, end))
    after = [j for j in range(s, end) if eager[j]]
    before = [j for j in range(first, s) if eager[j]]
    assert _eager_after(eager, nblk, s, end) == (after[0] if after else -1)
    assert _eager_before(eager, nblk, s, first) == (before[-1] if before else -1)


@st.composite
def held_instances(draw: st.DrawFn) -> Instance:
    """Random coflows on an oversubscribed spine-leaf fabric (leaf uplinks a tenth to a
    half of the hosts' rate) or the k = 4 fat-tree with slow core links, ECMP or spray:
    up to 8 coflows of up to 6 flows between up to 8 hosts, so that links fill, most
    rows are held by another link, and completions move where each link fills."""
    if draw(st.booleans()):
        topo = SpineLeaf(draw(st.integers(2, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 3)),
                         draw(st.sampled_from([1.0, 2.0])), draw(st.sampled_from([0.1, 0.25, 0.5])))
    else:
        topo = FatTree(4, draw(st.sampled_from([1.0, 2.0])), draw(st.sampled_from([0.25, 0.5])))
    net = Network(topo, draw(st.sampled_from(("ecmp", "spray"))), draw(st.integers(0, 3)))
    H = topo.num_hosts
    base = draw(instances(max_ports=min(8, H), max_coflows=8, max_flows=6))
    hosts = np.array(draw(st.permutations(range(H)))[: base.num_ports])
    coflows = tuple(Coflow(c.id, hosts[c.src], hosts[c.dst], c.sizes, release=c.release,
                           weight=c.weight) for c in base.coflows)
    return Instance(net, coflows, name="held rows")


@settings(max_examples=120, deadline=None)
@given(held_instances(), st.sampled_from(GREEDY_ORDERS))
def test_held_rows_give_the_reference_flows_bit_for_bit(inst, name):
    """Sincronia and a static order where links fill: the stretch with lazy entries gives
    the reference path's flow and coflow completions bit for bit, with its events, and a
    feasible schedule when recorded (a recorded run restarts its stretch when the piece
    buffer fills, on the same structure)."""
    b = simulate(inst, name, compiled=False, record=False)
    a = simulate(inst, name, record=False)
    assert a.flow_completion.tobytes() == b.flow_completion.tobytes()
    assert a.completion.tobytes() == b.completion.tobytes()
    assert a.events == b.events
    r = simulate(inst, name)
    assert r.flow_completion.tobytes() == b.flow_completion.tobytes()
    assert r.events == b.events
    assert check_feasible(inst, r.schedule).ok


@st.composite
def held_routes(draw: st.DrawFn) -> dict[str, np.ndarray | int]:
    """Random routes where most rows are held: 2-3 distinct links each out of 3-7, some
    links too wide to fill (host links), the others narrow (oversubscribed uplinks);
    coefficients mostly 1."""
    F = draw(st.integers(2, 30))
    L = draw(st.integers(3, 7))
    rows = [draw(st.lists(st.integers(0, L - 1), min_size=2, max_size=3, unique=True))
            for _ in range(F)]
    indptr = np.zeros(F + 1, np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    indices = np.array([k for r in rows for k in r], np.int64)
    data = np.array([draw(st.sampled_from([1.0, 1.0, 1.0, 0.5, 2.0])) for _ in indices])
    cap = np.array([draw(st.sampled_from([0.25, 0.5, 1.0, 8.0, 64.0])) for _ in range(L)])
    size = np.array([draw(st.sampled_from([0.25, 1.0, 1.5, 3.0, 7.0])) for _ in range(F)])
    K = draw(st.integers(1, 4))
    fco = np.sort(np.array([draw(st.integers(0, K - 1)) for _ in range(F)], np.int64))
    return {"F": F, "L": L, "K": K, "indptr": indptr, "indices": indices, "data": data,
            "cap": cap, "size": size, "fco": fco}


@settings(max_examples=200, deadline=None)
@given(r=held_routes(), data=st.data())
def test_lazy_entries_kept_across_orders_are_a_recomputation_from_scratch(r, data):
    """Calls with orders that change at random (rows leave, join and move) on one kept
    structure, whose lazy entries live from one order to the next, give bit for bit what
    a fresh structure with the same flows' history gives: rates, completions, times and
    pieces."""
    kept_against_fresh(r, data, 10, 2)
