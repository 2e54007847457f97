"""Maluca (Jiang et al.): "starvation-free and work-conserving", and "NP-hard".

Statements (the paper's words). Abstract: "Maluca's algorithm is not only
starvation-free and work-conserving, but also 2-approximate in terms of link
utilization" (the 2-approximation is ``test_maluca_2_approx.py``); §VI:
"Maluca is both work-conserving and starvation-free". §IV-C.1, "Work
conserving: ... bandwidth is first allocated to flows belonging to the fastest
coflow on the busiest uplink. Other flows then utilize the remaining bandwidth
according to their priorities. The rate allocating procedure finishes when all
the links are saturated or no flow is suspended. We further integrate
backfilling to make sure that all the available bandwidth is fully utilized by
active coflows." §IV-C.2, "Starvation free: ... Maluca achieves starvation
freedom by prioritizing links with larger loads dynamically. Loads on low
priority links will increase gradually, while loads on high priority links are
likely to decrease. ... we adopt the aging mechanism to avoid starvation. Each
uplink softly reserves a portion of bandwidth (denoted as alpha) for flows
belonging to low priority coflows to proceed. By combine aging and
multiplexing, we ensure no flow or coflow is perpetually suspended". §III:
"Minimizing the makespan or average coflow completion time is NP-hard even
when all links are homogeneous and all coflows start at the same time with
prior knowledge. As a sketch of proof, the NP-complete open shop scheduling
problem [10] can be reduced to our problem to minimize the makespan; the
NP-hard concurrent open shop scheduling problem can be reduced to the problem
to minimize average coflow completion time." (Also §I: "we prove maximizing
link utilization is NP-hard by reducing the open shop scheduling problem to
it"; utilization is 1 / makespan up to a constant, Eq. (10).)

Readings. The algorithm is the simulator's ``maluca`` (Algorithm 1, its soft
reservation alpha, default 0.1; see ``coflowopt/sim/policies/maluca.py``),
invoked as the paper says "whenever a new coflow arrives in, or an old coflow
departs" (``reschedule="coflow"``, the default: rates fixed in between) or
also at every flow completion (``reschedule="flow"``). Work-conserving: at
every instant, every admitted unfinished flow has a saturated uplink or
downlink (nothing could be added to it). Starvation: a flow is starved on an
interval if it is admitted, unfinished and gets rate 0 throughout;
"perpetually suspended" is starved from some time on for ever (with a finite
instance nothing is for ever, so the witnesses are families: a stream of N
arrivals starves the flow on [0, N) for every N).

What this verifies.

(a) Work conservation.

1. It fails with the paper's invocation rule, on the smallest possible
   instance: one port (capacity 1), one coflow, two flows 0 -> 0. With the
   default alpha = 0.1 and unit sizes: the strict pass gives each flow
   0.9 / 2 = 9/20, backfilling gives the first the 1/10 left: 11/20 and
   9/20. The first ends at 20/11, but its coflow does not depart, so the
   second keeps 9/20 until 20/9: on [20/11, 20/9) the port is 11/20 idle
   while a flow waits (a dense schedule ends at 2, as ``reschedule="flow"``
   does). With alpha = 0 (Algorithm 1 alone) equal flows end together, and
   sizes 1 and 2 are the witness: 1/2 each (line 15: the coflow's two flows
   share the uplink and the downlink), the first ends at 2, the second
   crawls at 1/2 until 4 (dense: 3). Exact times derived by hand, matched by
   the simulator. Smallest: one flow always gets all its tighter link (the
   strict pass and backfilling), and the capacity a finished flow frees is
   only re-allocated at a coflow event, so the failure needs a coflow with
   two flows; it then needs one port. (The paper's §IV-C.1 argues per
   decision, and per decision it holds: item 2.)
2. It holds at every decision, and so at every instant when decisions are
   re-made at every flow completion: hypothesis instances (1-4 ports,
   heterogeneous capacities 0.5/1/2, up to 5 coflows with release times,
   alpha in {0, 0.1, 0.5}); with ``reschedule="flow"`` every instant is
   checked, with ``reschedule="coflow"`` the interval right after each
   release and coflow completion.

(b) Starvation freedom. Two mechanisms are named: aging (uplinks are served
in decreasing order of current load, Eq. 12) and the soft reservation alpha,
which is per uplink. The strongest property the implementation should have,
and has:

3. With alpha > 0, at every decision every admitted unfinished flow gets a
   positive rate unless its downlink is saturated (so no flow waits with
   zero rate while its own uplink serves other coflows and its downlink has
   room): hypothesis instances as in 2, alpha in {0.01, 0.1, 0.5}, both
   invocation rules (every instant with ``"flow"``, right after each
   decision with ``"coflow"``). With alpha = 0 it fails on 2 flows: c0 =
   {0->0: 1} and c1 = {0->1: 1} tie on T_k, c0 takes uplink 0 whole and c1
   waits on [0, 1) with downlink 1 idle.
4. alpha = 0 starves (intra-link, where aging cannot act: one uplink):
   X = {0->1: 2} at 0 and a stream S_j = {0->0: 1} at j = 0..N-1, 2 ports.
   Each S_j has T = 1 < T_X = 2 and takes uplink 0 whole on [j, j+1): X gets
   nothing on [0, N) while its downlink is idle, and ends at N + 2
   (N = 20, 40, 80, both invocation rules). With alpha = 0.1 or 0.5 X is
   done by a time that does not depend on N (17.159... and 6.138...).
5. **Starvation-freedom fails for every alpha**, at a downlink: X = {0->0: 1}
   at 0, Y = {1->0: 2} at 0 and a stream S_j = {1->0: 1} at j = 0..N-1.
   Uplink 1's load is 2 + (arrived) - (sent) >= 2 on [0, N) (checked on the
   schedule), above uplink 0's 1, so uplink 1 always goes first ("aging"
   never promotes uplink 0); on it the strict pass gives the smallest
   coflow 1 - alpha of the uplink and the soft reservation gives the others
   the remaining alpha, all into downlink 0, which is therefore saturated
   before uplink 0's turn. X gets nothing on [0, N) and ends after N, for
   alpha in {0, 0.1, 0.5, 0.9} and both invocation rules; with an endless
   stream X is perpetually suspended. The reservation is on uplinks only
   (as the paper says), and the aging argument assumes the favoured link's
   load decreases, which an arrival stream at the downlink's capacity
   prevents. The load on downlink 0 is critical (rate 1 plus X), not
   excessive: ``fifo`` and ``varys`` end X at 1 and per-flow ``fair`` at
   4.35 on the same instance.

(c) NP-hardness.

6. Makespan: in the fluid model the paper formulates (rates r_ij(t),
   Eqs. (3)-(8)), with all coflows at time 0, the minimum makespan is the
   largest link load over capacity, which the paper itself says in §IV-B
   ("the optimal makespan of any schedule equals to the net processing time
   of the heaviest loaded link") and which is computed in linear time; so
   this problem is not NP-hard unless P = NP. The map of the reduction
   (open shop job i = uplink i, machine j = downlink j, operation p_ij = a
   flow i -> j of size p_ij; §III: "regarding uplinks as jobs ... and
   downlinks as machines") sends an instance to one whose fluid optimum is
   max(row sums, column sums), i.e. the *preemptive* open shop optimum
   (Gonzalez-Sahni), not the NP-hard non-preemptive one: checked with
   ``min_makespan`` on random 2x2-4x4 integer matrices, and on
   p = [[2, 0, 2], [0, 2, 1], [1, 2, 1]], where the fluid optimum is 4 but
   no non-preemptive open shop schedule ends before 5 (exhaustive search
   over integer start times, which suffice for integer data: shifting every
   operation left as far as it goes makes each start 0 or another
   operation's end). So the makespan half of the claim needs indivisible,
   non-preemptible flows, a model the paper does not state.
   Average CCT: the concurrent open shop reduction is the dissertation's
   Theorem B.1.1 and is valid in the fluid model; its value map is checked
   in ``test_dissertation_b_1_1_np_hard.py`` and not repeated here.

What this does not verify. Properties 2 and 3 are finite random searches on
small instances, not proofs (the argument for 3 is the implementation's: an
uplink's own residual is touched only by its own flows, so after its strict
pass at least alpha of it is left, and each flow passed over there gets an
equal share limited by its downlink's room). That 3 is what the paper's
"softly reserves" means (the paper leaves the sharing rule open; the
implementation's reading is documented in its module). Starvation under
reservations on downlinks too, or under a varying alpha, which would be other
algorithms. The NP-hardness of non-preemptive open shop (cited, [10]) and of
concurrent open shop are not checked.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.exact.makespan import min_makespan
from coflowopt.sim import SimulationResult, simulate

TOL = 1e-9


def maluca(inst: Instance, alpha: float, reschedule: str = "coflow") -> SimulationResult:
    res = simulate(inst, "maluca", params={"alpha": alpha, "reschedule": reschedule})
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    return res


def one_port(sizes: list[float]) -> Instance:
    return Instance(Fabric.uniform(1), (Coflow.from_flows("A", [(0, 0, z) for z in sizes]),))


def intervals(inst: Instance, res: SimulationResult, *, decisions_only: bool
              ) -> Iterator[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """For every stretch between consecutive breakpoints of the schedule (with
    ``decisions_only``, only those starting at a release or a coflow completion, where
    ``reschedule="coflow"`` decides): its start, the flows' rates, whether each flow's
    uplink / downlink is saturated, and which flows are admitted and unfinished."""
    s = res.schedule
    assert s is not None
    P = inst.num_ports
    cap = inst.fabric.capacity
    cuts = np.unique(np.concatenate([s.start, s.end, inst.flow_release, [0.0]]))
    decisions = set(np.concatenate([inst.release, res.completion]).tolist())
    for t0, t1 in itertools.pairwise(cuts.tolist()):
        if t1 - t0 <= TOL * max(1.0, t1) or (decisions_only and t0 not in decisions):
            continue
        mid = (t0 + t1) / 2
        on = (s.start <= mid) & (s.end > mid)
        rate = np.bincount(s.flow[on], s.rate[on], minlength=inst.num_flows)
        use = np.concatenate([np.bincount(inst.flow_src, rate, minlength=P),
                              np.bincount(inst.flow_dst, rate, minlength=P)])
        full = use >= cap * (1 - 1e-6)
        live = (inst.flow_release <= mid) & (res.flow_completion > mid)
        yield t0, rate, full[inst.flow_src], full[P + inst.flow_dst], live


def served(res: SimulationResult, flow: int, until: float) -> float:
    """Data flow ``flow`` received before ``until``."""
    s = res.schedule
    assert s is not None
    on = s.flow == flow
    span = np.clip(np.minimum(s.end[on], until) - s.start[on], 0.0, None)
    return float(np.sum(s.rate[on] * span))


@st.composite
def online(draw: st.DrawFn) -> Instance:
    """Random instances with release times and heterogeneous capacities (as
    ``tests/strategies.instances``, which plain ``pytest`` cannot import from here)."""
    P = draw(st.integers(1, 4))
    caps = st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=P, max_size=P)
    ingress, egress = draw(caps), draw(caps)
    coflows = []
    for k in range(draw(st.integers(1, 5))):
        n = draw(st.integers(1, 4))
        ports = st.lists(st.integers(0, P - 1), min_size=n, max_size=n)
        sizes = st.lists(st.floats(0.1, 10.0, allow_nan=False), min_size=n, max_size=n)
        release = draw(st.one_of(st.just(0.0), st.floats(0.0, 6.0, allow_nan=False)))
        coflows.append(Coflow(f"c{k}", draw(ports), draw(ports), draw(sizes), release=release))
    return Instance(Fabric(np.array(ingress), np.array(egress)), tuple(coflows))


# ---------------------------------------------------------------- (a) work conservation


def test_not_work_conserving_between_coflow_events() -> None:
    # alpha = 0.1 (default): rates 11/20 and 9/20; ends 20/11 and 20/11 + (2/11) / (9/20) = 20/9
    inst = one_port([1.0, 1.0])
    res = maluca(inst, 0.1)
    first = res.schedule.start == 0.0
    np.testing.assert_allclose(res.schedule.rate[first], [11 / 20, 9 / 20], rtol=1e-12)
    a, b = Fraction(20, 11), Fraction(20, 11) + (1 - Fraction(9, 20) * Fraction(20, 11)) / Fraction(9, 20)
    assert b == Fraction(20, 9)
    np.testing.assert_allclose(res.flow_completion, [float(a), float(b)], rtol=1e-12)
    idle = [(t0, rate) for t0, rate, up, down, live in intervals(inst, res, decisions_only=False)
            if not (up | down)[live].all()]
    assert len(idle) == 1 and abs(idle[0][0] - float(a)) < 1e-12  # [20/11, 20/9): the port 11/20 idle
    np.testing.assert_allclose(idle[0][1], [0.0, 9 / 20], rtol=1e-12)
    assert abs(maluca(inst, 0.1, "flow").completion[0] - 2.0) < 1e-12  # dense: 2
    # alpha = 0 (Algorithm 1 alone): equal flows end together; sizes 1 and 2 share 1/2 each
    assert abs(maluca(inst, 0.0).completion[0] - 2.0) < 1e-12
    inst = one_port([1.0, 2.0])
    res = maluca(inst, 0.0)
    np.testing.assert_allclose(res.flow_completion, [2.0, 4.0], rtol=1e-12)
    idle = [t0 for t0, rate, up, down, live in intervals(inst, res, decisions_only=False)
            if not (up | down)[live].all()]
    assert idle == [2.0]  # [2, 4): flow 1 at 1/2, the port half idle
    assert abs(maluca(inst, 0.0, "flow").completion[0] - 3.0) < 1e-12
    # the smallest: a single flow always gets its tighter link whole
    for alpha in (0.0, 0.1, 0.5):
        assert abs(maluca(one_port([3.0]), alpha).completion[0] - 3.0) < 1e-12


@settings(max_examples=100, deadline=None)
@given(inst=online(), alpha=st.sampled_from([0.0, 0.1, 0.5]))
def test_work_conserving_at_decisions_and_with_flow_rescheduling(inst: Instance, alpha: float) -> None:
    for rule, decisions_only in (("flow", False), ("coflow", True)):
        res = maluca(inst, alpha, rule)
        for t0, _, up, down, live in intervals(inst, res, decisions_only=decisions_only):
            assert (up | down)[live].all(), (rule, t0)


# ---------------------------------------------------------------- (b) starvation


@settings(max_examples=100, deadline=None)
@given(inst=online(), alpha=st.sampled_from([0.01, 0.1, 0.5]))
def test_reservation_serves_every_flow_whose_downlink_has_room(inst: Instance, alpha: float) -> None:
    for rule, decisions_only in (("flow", False), ("coflow", True)):
        res = maluca(inst, alpha, rule)
        for t0, rate, _, down, live in intervals(inst, res, decisions_only=decisions_only):
            assert ((rate > 0) | down)[live].all(), (rule, t0)


def test_without_reservation_a_flow_waits_with_its_downlink_free() -> None:
    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("c0", [(0, 0, 1.0)]),
                                       Coflow.from_flows("c1", [(0, 1, 1.0)])))
    res = maluca(inst, 0.0)
    t0, rate, _, down, live = next(intervals(inst, res, decisions_only=True))
    assert t0 == 0.0 and rate.tolist() == [1.0, 0.0] and not down[1] and live[1]
    np.testing.assert_allclose(res.completion, [1.0, 2.0])
    _, rate, *_ = next(intervals(inst, maluca(inst, 0.1), decisions_only=True))
    np.testing.assert_allclose(rate, [0.9, 0.1], rtol=1e-12)  # the reservation: c1 gets 0.1 at once


def uplink_stream(N: int) -> Instance:
    return Instance(Fabric.uniform(2), (
        Coflow.from_flows("X", [(0, 1, 2.0)]),
        *(Coflow.from_flows(f"S{j}", [(0, 0, 1.0)], release=float(j)) for j in range(N)),
    ))


def test_alpha_zero_starves_behind_a_stream_of_smaller_coflows() -> None:
    for N in (20, 40, 80):
        inst = uplink_stream(N)
        for rule in ("coflow", "flow"):
            res = maluca(inst, 0.0, rule)
            assert served(res, 0, float(N)) == 0.0  # nothing on [0, N), downlink 1 idle all along
            assert abs(res.completion[0] - (N + 2)) < 1e-9
            # with the reservation X is done by a time independent of N
            for alpha, end in ((0.1, 17.159025103950732), (0.5, 6.138888888888889)):
                assert abs(maluca(inst, alpha, rule).completion[0] - end) < 1e-9


def downlink_stream(N: int) -> Instance:
    return Instance(Fabric.uniform(2), (
        Coflow.from_flows("X", [(0, 0, 1.0)]),
        Coflow.from_flows("Y", [(1, 0, 2.0)]),
        *(Coflow.from_flows(f"S{j}", [(1, 0, 1.0)], release=float(j)) for j in range(N)),
    ))


def test_reservation_does_not_prevent_starvation_at_a_downlink() -> None:
    for N in (20, 40):
        inst = downlink_stream(N)
        uplink1 = np.flatnonzero(inst.flow_src == 1)
        for alpha in (0.0, 0.1, 0.5, 0.9):
            for rule in ("coflow", "flow"):
                res = maluca(inst, alpha, rule)
                assert served(res, 0, float(N)) == 0.0
                assert res.completion[0] > N
                for t in np.arange(0.0, N, 0.25).tolist():
                    arrived = float(inst.flow_size[uplink1][inst.flow_release[uplink1] <= t].sum())
                    load = arrived - sum(served(res, int(f), t) for f in uplink1)
                    assert load >= 2 - 1e-9 > 1  # uplink 1 stays above uplink 0 (X's 1): no aging
                for t0, rate, _, down, _live in intervals(inst, res, decisions_only=False):
                    if t0 < N:
                        assert down[0] and rate[0] == 0.0  # downlink 0 saturated from uplink 1
        # the load is critical, not excessive: other policies serve X at once
        assert simulate(inst, "fifo").completion[0] == 1.0
        assert simulate(inst, "varys").completion[0] == 1.0
        assert abs(simulate(inst, "fair").completion[0] - 4.35) < 1e-9


# ---------------------------------------------------------------- (c) NP-hardness


def open_shop(p: list[list[int]]) -> Instance:
    """Job i = uplink i, machine j = downlink j, operation p_ij = a flow i -> j (one coflow per job)."""
    m = max(len(p), len(p[0]))
    rows = [[(i, j, float(x)) for j, x in enumerate(r) if x] for i, r in enumerate(p)]
    return Instance(Fabric.uniform(m), tuple(Coflow.from_flows(f"J{i}", r) for i, r in enumerate(rows) if r))


def nonpreemptive_fits(p: list[list[int]], horizon: int) -> bool:
    """Whether a non-preemptive open shop schedule of ``p`` ends by ``horizon`` (integer starts)."""
    ops = sorted(((i, j, d) for i, r in enumerate(p) for j, d in enumerate(r) if d), key=lambda o: -o[2])
    busy: dict[tuple[str, int], list[tuple[int, int]]] = {}

    def place(k: int) -> bool:
        if k == len(ops):
            return True
        i, j, d = ops[k]
        job, machine = busy.setdefault(("job", i), []), busy.setdefault(("machine", j), [])
        for s in range(horizon - d + 1):
            if all(s + d <= a or b <= s for a, b in job + machine):
                job.append((s, s + d))
                machine.append((s, s + d))
                if place(k + 1):
                    return True
                job.pop()
                machine.pop()
        return False

    return place(0)


def test_fluid_makespan_is_the_preemptive_open_shop_optimum() -> None:
    rng = np.random.default_rng(4)
    for _ in range(12):
        m = int(rng.integers(2, 5))
        p = rng.integers(0, 4, size=(m, m))
        p[0, 0] += 1
        load = max(p.sum(axis=0).max(), p.sum(axis=1).max())
        assert min_makespan(open_shop(p.tolist())).objective == load
    p = [[2, 0, 2], [0, 2, 1], [1, 2, 1]]  # row and column sums all 4, except column 0: 3
    inst = open_shop(p)
    res = min_makespan(inst)
    assert res.objective == 4.0 and res.schedule is not None and check_feasible(inst, res.schedule)
    assert not nonpreemptive_fits(p, 4) and nonpreemptive_fits(p, 5)
