"""Dissertation Appendix B.3, Theorem B.3.1: permutation schedules are not optimal for coflows.

Statement (the dissertation's words, abridged): with coupled ingress and egress
ports, there are instances on which no permutation schedule (one priority
order of coflows, each served greedily in that order) minimizes the sum of
coflow completion times.

Witness: ``instances/permutation_gap.json`` (three coflows at time 0 on a
3x3 switch with unit capacities). This check does not call any solver of
coflowopt. It builds the witness schedule by hand from the instance's
description, verifies it with ``check_feasible`` (sum of completion times
13), and evaluates every one of the 3! priority orders twice: by an event
loop written here in exact rational arithmetic (greedy, order-preserving
rates recomputed at every completion; it reads only the instance's
arrays), and by the simulator's ``static-order`` policy; they agree, and
the best is 14. What it does not verify: that 13 is optimal (the exact
solver's tests do), nor any other instance.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

from coflowopt import ScheduleBuilder, check_feasible, io
from coflowopt.sim import simulate

GAP = Path(__file__).resolve().parents[1] / "instances" / "permutation_gap.json"


def test_a_schedule_beats_every_permutation_schedule():
    inst = io.read(GAP)
    flow = {(inst.ids[k], int(inst.flow_src[f]), int(inst.flow_dst[f])): f
            for f, k in enumerate(inst.flow_coflow.tolist())}
    b = ScheduleBuilder()
    # [0, 1]: C3 sends 0->2 and C1 sends 1->0 at rate 1
    b.add([flow["C3", 0, 2], flow["C1", 1, 0]], 0.0, 1.0, [1.0, 1.0])
    # [1, 4]: C2 sends 1->2 at 1 and 2->0 at 2/3, C1 sends 0->0 at 1/3
    b.add([flow["C2", 1, 2], flow["C2", 2, 0], flow["C1", 0, 0]], 1.0, 4.0, [1.0, 2 / 3, 1 / 3])
    # [4, 8]: C1 finishes 1->0
    b.add([flow["C1", 1, 0]], 4.0, 8.0, [1.0])
    witness = b.build()
    assert check_feasible(inst, witness)
    total = float(witness.coflow_completion(inst).sum())
    assert abs(total - 13.0) < 1e-9

    by_hand = {order: permutation_value(inst, order) for order in itertools.permutations(inst.ids)}
    assert min(by_hand.values()) == 14
    for order, value in by_hand.items():
        simulated = simulate(inst, "static-order", params={"order": list(order)}).completion.sum()
        assert abs(float(simulated) - value) < 1e-9, order
    assert min(by_hand.values()) > total


def permutation_value(inst, order) -> Fraction:
    """Sum of completion times of the permutation schedule of ``order``, exactly: at every
    completion each unfinished flow, coflow by coflow in ``order`` and by index within a
    coflow, takes the smaller residual of its ingress and egress port."""
    ports = inst.num_ports
    flows = [f for c in order for f in range(inst.ptr[inst.index(c)], inst.ptr[inst.index(c) + 1])]
    left = {f: Fraction(float(inst.flow_size[f])) for f in flows}
    cap = [Fraction(float(c)) for c in inst.fabric.capacity]
    t, done = Fraction(0), {}
    while left:
        free, rate = list(cap), {}
        for f in (f for f in flows if f in left):
            a, b = int(inst.flow_src[f]), ports + int(inst.flow_dst[f])
            rate[f] = min(free[a], free[b])
            free[a] -= rate[f]
            free[b] -= rate[f]
        step = min(left[f] / rate[f] for f in left if rate[f] > 0)
        t += step
        for f in list(left):
            left[f] -= rate[f] * step
            if left[f] == 0:
                del left[f]
                done[f] = t
    return sum(max(done[f] for f in range(inst.ptr[k], inst.ptr[k + 1]))
               for k in range(inst.num_coflows))
