"""Dissertation §6.5.4 (Pseudocode 4): D-CLAS is starvation free.

Statement (the dissertation's words). "Starvation Avoidance: Given non-zero weights to
each queue, all queues are guaranteed to make progress. Hence, D-CLAS is
starvation free." With Pseudocode 4: "Q_i.share = Q_i.weight / W" (weighted
sharing between queues, line 17), FIFO among the coflows of a queue (line 4),
max-min among a coflow's flows (line 6), and "Excess share of any queue is
divided among unsaturated queues in proportion to their weights using
max-min fairness (line 19)".

Reading (``coflowopt/sim/policies/aalo.py``, ``_queues.py``). Queue Q_i holds
the coflows whose bytes sent so far lie in [Q_i^lo, Q_i^hi), Q_1^hi =
``first_threshold``, Q_{i+1}^hi = ``multiplier`` x Q_i^hi, the last queue
unbounded; a coflow enters Q_1 at its release and is demoted the moment its
bytes sent reach the threshold. ``sharing="weighted"`` (weights K - i + 1)
splits every link's capacity among the queues with a flow on it in rounds;
``sharing="strict"`` serves queue by queue. "Make progress" is read as: at
every instant, every queue that holds an admitted unfinished coflow has some
flow of one of its coflows served at a positive rate (within a queue FIFO may
hold later coflows back; that is not starvation of the queue, and the head
coflow's progress moves it on).

What this verifies.

1. Holds for weighted sharing, at every instant: hypothesis instances
   (1-3 ports, capacities 1/2, 1, 2, up to 6 coflows of 1-3 flows with
   releases, sizes 0.1-6), ``num_queues`` 2-4, ``first_threshold`` 1/2 or
   1, ``multiplier`` 2, so coflows spread over several queues. Each
   coflow's queue is derived here from the bytes it has sent, integrated
   from the schedule's pieces (threshold crossing times added to the
   breakpoints), not read from the policy; on every stretch between
   breakpoints every non-empty queue has a flow at positive rate. Also with
   weights (3, 2, 1) given explicitly.
2. Strict priority starves a lower queue for as long as higher-queue work
   remains (witness): one link, X = {0->0: 10} at 0, S_j = {0->0: 1/2} at
   1 + j/2 (j < N), K = 2, Q_1^hi = 1. X is alone on [0, 1), reaches 1 byte
   at 1 and drops to Q_2 as S_0 arrives; the S_j (each below the threshold,
   so in Q_1 for good) keep the link busy back to back until 1 + N/2, during
   which X gets nothing, and X ends at 1 + N/2 + 9 = 10 + N/2 (N = 40: 30,
   N = 80: 50). With weighted sharing (weights 2, 1) X gets exactly 1/3 of
   the link from 1 on (Q_1 is never empty: by time t > 1 it received more
   than t - 1 and was served 2/3 (t - 1)) and ends at 1 + 9 / (1/3) = 28
   for both N (the stream's backlog lasts until 1 + 3N/4 >= 28). The check
   of item 1 rejects the strict schedule (a negative control).

What this does not verify: that progress of a queue means progress of each
of its coflows (FIFO within a queue is not claimed starvation free, only the
queues); ``mcs`` (the same queues with other demotion rules); DAGs and
multi-wave coflows; item 1 is a finite random search.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _random_instances import online
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, check_feasible
from coflowopt.sim import SimulationResult, simulate

TOL = 1e-9


def aalo(inst: Instance, **params) -> SimulationResult:
    res = simulate(inst, "aalo", **params)
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    return res


def sent_by(inst: Instance, res: SimulationResult, t: float) -> np.ndarray:
    """Bytes each coflow has sent by time ``t``, from the schedule's pieces."""
    s = res.schedule
    assert s is not None
    span = np.clip(np.minimum(s.end, t) - s.start, 0.0, None)
    return np.bincount(inst.flow_coflow[s.flow], s.rate * span, minlength=inst.num_coflows)


def rate_at(inst: Instance, res: SimulationResult, t: float) -> np.ndarray:
    """Each flow's rate at time ``t``."""
    s = res.schedule
    assert s is not None
    on = (s.start <= t) & (s.end > t)
    return np.bincount(s.flow[on], s.rate[on], minlength=inst.num_flows)


def breakpoints(inst: Instance, res: SimulationResult, thresholds: np.ndarray) -> list[float]:
    """Piece boundaries and releases, plus every time a coflow's bytes cross a threshold."""
    s = res.schedule
    assert s is not None
    cuts = sorted(set(np.concatenate([s.start, s.end, inst.release, [0.0]]).tolist()))
    extra = []
    for t0, t1 in itertools.pairwise(cuts):
        sent = sent_by(inst, res, t0)
        rate = np.bincount(inst.flow_coflow, rate_at(inst, res, (t0 + t1) / 2),
                           minlength=inst.num_coflows)
        for k in range(inst.num_coflows):
            for hi in thresholds.tolist():
                if rate[k] > 0 and sent[k] < hi < sent[k] + rate[k] * (t1 - t0):
                    extra.append(t0 + (hi - sent[k]) / rate[k])
    return sorted(set(cuts + extra))


def queue_of(sent: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Queue index of each coflow: how many thresholds its bytes have reached."""
    return (sent[:, None] >= thresholds[None, :] * (1 - TOL)).sum(axis=1)


def check_every_queue_progresses(inst: Instance, res: SimulationResult, thresholds: np.ndarray) -> int:
    """Returns how many stretches had two or more non-empty queues (the interesting ones)."""
    cuts = breakpoints(inst, res, thresholds)
    several = 0
    for t0, t1 in itertools.pairwise(cuts):
        if t1 - t0 <= TOL * max(1.0, t1):
            continue
        mid = (t0 + t1) / 2
        live = np.flatnonzero((inst.release <= mid) & (res.completion > mid))
        if live.size == 0:
            continue
        q = queue_of(sent_by(inst, res, mid), thresholds)
        rate = rate_at(inst, res, mid)
        served = np.bincount(inst.flow_coflow, rate > 0, minlength=inst.num_coflows) > 0
        queues = sorted(set(q[live].tolist()))
        several += len(queues) > 1
        for i in queues:
            members = live[q[live] == i]
            assert served[members].any(), (t0, t1, i, members.tolist())
    return several


@settings(max_examples=25, deadline=None)
@given(inst=online(max_size=6.0), K=st.integers(2, 4), first=st.sampled_from([0.5, 1.0]))
def test_weighted_sharing_serves_every_nonempty_queue(inst: Instance, K: int, first: float) -> None:
    thresholds = first * 2.0 ** np.arange(K - 1)
    res = aalo(inst, sharing="weighted", num_queues=K, first_threshold=first, multiplier=2.0)
    check_every_queue_progresses(inst, res, thresholds)
    if K == 3:
        res = aalo(inst, sharing="weighted", num_queues=3, first_threshold=first, multiplier=2.0,
                   weights=(3.0, 2.0, 1.0))
        check_every_queue_progresses(inst, res, thresholds)


def test_the_random_search_reaches_several_queues() -> None:
    # the property is vacuous with one non-empty queue: a fixed instance with three at once
    inst = Instance(Fabric.uniform(2), (
        Coflow.from_flows("a", [(0, 0, 5.0), (1, 1, 2.0)]),
        Coflow.from_flows("b", [(0, 1, 3.0)], release=0.5),
        Coflow.from_flows("c", [(1, 0, 4.0)], release=1.5),
        Coflow.from_flows("d", [(0, 0, 0.5)], release=2.5),
    ))
    thresholds = 1.0 * 2.0 ** np.arange(2)
    res = aalo(inst, sharing="weighted", num_queues=3, first_threshold=1.0, multiplier=2.0)
    assert check_every_queue_progresses(inst, res, thresholds) > 0


def stream(N: int) -> Instance:
    return Instance(Fabric.uniform(1), (
        Coflow.from_flows("X", [(0, 0, 10.0)]),
        *(Coflow.from_flows(f"S{j}", [(0, 0, 0.5)], release=1.0 + j / 2) for j in range(N)),
    ))


def test_strict_priority_starves_the_lower_queue_while_higher_work_remains() -> None:
    params = {"num_queues": 2, "first_threshold": 1.0, "multiplier": 2.0}
    for N in (40, 80):
        inst = stream(N)
        strict = aalo(inst, sharing="strict", **params)
        assert abs(sent_by(inst, strict, 1.0)[0] - 1.0) < TOL  # X reaches Q_2 at 1
        assert abs(sent_by(inst, strict, 1.0 + N / 2)[0] - 1.0) < TOL  # nothing on [1, 1 + N/2)
        assert abs(strict.completion[0] - (10 + N / 2)) < TOL
        np.testing.assert_allclose(strict.completion[1:], 1.0 + (np.arange(N) + 1) / 2, rtol=1e-12)
        with pytest.raises(AssertionError):  # the check of item 1 catches it
            check_every_queue_progresses(inst, strict, np.array([1.0]))
        weighted = aalo(inst, sharing="weighted", **params)
        assert abs(weighted.completion[0] - 28.0) < 1e-9
        for t in np.arange(1.0, 28.0, 0.5).tolist():
            assert abs(sent_by(inst, weighted, t)[0] - (1 + (t - 1) / 3)) < 1e-9
        check_every_queue_progresses(inst, weighted, np.array([1.0]))
