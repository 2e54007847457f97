"""Metrics of completion times and schedules."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import Coflow, Fabric, Instance, Schedule, link_utilization, summarize, utilization
from coflowopt.metrics import deadlines_met

from .test_schedule import madd_3x2


def test_summary_of_hand_computed_completions():
    fab = Fabric.uniform(2)
    cs = tuple(
        Coflow.from_flows(f"c{i}", [(0, 1, 1.0)], release=float(i), weight=w, deadline=dl)
        for i, (w, dl) in enumerate([(1.0, 2.0), (2.0, None), (1.0, 3.5)])
    )
    inst = Instance(fab, cs)
    completion = np.array([1.0, 3.0, 4.0])  # CCTs 1, 2, 2
    s = summarize(inst, completion)
    assert s.weighted_completion == pytest.approx(1 + 6 + 4)
    assert s.weighted_cct == pytest.approx(1 + 4 + 2)
    assert s.mean_cct == pytest.approx(5 / 3)
    assert s.p50_cct == 2.0 and s.max_cct == 2.0
    assert s.makespan == 4.0
    assert s.deadlines_met == 1  # c0 meets 2.0; c2 misses 3.5
    assert s.bin_count["SN"] == 3 and s.bin_mean_cct["SN"] == pytest.approx(5 / 3)
    assert np.isnan(s.bin_mean_cct["LW"])
    assert deadlines_met(inst, completion).tolist() == [True, False, False]
    d = s.as_dict()
    assert d["bin_count"]["SN"] == 3


def test_deadline_slack_follows_the_window_not_the_clock():
    # on a Unix clock (1.7e9 s) a slack of 1e-9 |D| let a coflow 1.25 s late count
    t0 = 1.7e9
    cs = tuple(Coflow.from_flows(c, [(0, 0, 1.0)], release=t0, deadline=t0 + 0.2) for c in "ab")
    inst = Instance(Fabric.uniform(1), cs)
    assert deadlines_met(inst, [t0 + 0.2, t0 + 1.45]).tolist() == [True, False]
    # within the simulator's time resolution at the deadline (1e-12 of it): met
    assert deadlines_met(inst, [t0 + 0.2 + 1e-3, t0 + 0.2 + 3e-3]).tolist() == [True, False]
    near = Instance(Fabric.uniform(1), (Coflow.from_flows("c", [(0, 0, 1.0)], deadline=10.0),))
    assert deadlines_met(near, [10.0 + 9e-9]).tolist() == [True]  # 1e-9 of the window of 10
    assert deadlines_met(near, [10.0 + 2e-8]).tolist() == [False]


def test_percentiles_with_unfinished_coflows_are_infinite_not_nan():
    cs = tuple(Coflow.from_flows(f"c{i}", [(0, 1, 1.0)]) for i in range(5))
    inst = Instance(Fabric.uniform(2), cs)
    s = summarize(inst, np.array([1.0, 2.0, 3.0, 4.0, np.inf]))
    assert s.p50_cct == 3.0  # NumPy's linear percentile, the unfinished coflow ranked last
    assert s.p95_cct == np.inf and s.p99_cct == np.inf and s.mean_cct == np.inf
    s = summarize(inst, np.array([1.0, 2.0, 3.0, np.inf, np.inf]))
    assert s.p50_cct == 3.0 and s.p95_cct == np.inf
    # between two finite values it is NumPy's number, bit for bit
    cs6 = tuple(Coflow.from_flows(f"c{i}", [(0, 1, 1.0)]) for i in range(6))
    s = summarize(Instance(Fabric.uniform(2), cs6), np.array([1.0, 2.0, 3.5, 7.3, 9.1, np.inf]))
    assert s.p50_cct == np.percentile([1.0, 2.0, 3.5, 7.3, 9.1, 1e308], 50) != 3.5


def test_maluca_utilization_eq_10():
    # one coflow, 3x2 shuffle, optimal makespan 4: 8 units cross 2 links each,
    # total capacity of the 6 links is 6: 16 / (4 * 6)
    inst, sched = madd_3x2()
    assert utilization(inst, [4.0]) == pytest.approx(16 / 24)
    lu = link_utilization(inst, sched)
    # each link is busy for [0, 4): ingress 0, 1 carry 2, ingress 2 carries 4
    assert lu.utilization[:3].tolist() == [0.5, 0.5, 1.0]
    assert lu.utilization[3:5].tolist() == [1.0, 1.0]
    assert np.isnan(lu.utilization[5])
    assert lu.mean == pytest.approx(0.8)


def test_link_utilization_counts_only_each_links_active_time():
    fab = Fabric.uniform(1)
    inst = Instance(fab, (Coflow.from_flows("a", [(0, 0, 1.0)], release=10.0),))
    sched = Schedule.from_pieces([(0, 10.0, 12.0, 0.5)])
    lu = link_utilization(inst, sched)
    assert lu.utilization.tolist() == [0.5, 0.5]
    assert lu.first.tolist() == [10.0, 10.0] and lu.last.tolist() == [12.0, 12.0]
    # Eq. 10 measured from the first release
    assert utilization(inst, [12.0]) == pytest.approx(2 / (2 * 2))


def test_completion_times_that_are_not_numbers_are_refused_clearly():
    import coflowopt as co
    from coflowopt.errors import InstanceError

    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0)], weight=2.0),
                                        Coflow.from_flows("b", [(1, 0, 1.0)])))
    for fn in (co.summarize, co.cct):
        for bad in (["x", "y"], [None, 2.0], [np.nan, 2.0], ["1", "2"], [b"2", 3.0],
                    [True, False]):
            with pytest.raises(InstanceError, match="completion times must be numbers"):
                fn(inst, bad)
    assert co.cct(inst, [1, np.inf]).tolist() == [1.0, np.inf]
    with pytest.raises(InstanceError, match="one completion time per coflow"):
        co.cct(inst, [1.0])
