"""Schedules and the verifier: each kind of violation is caught and located."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from coflowopt import (
    Coflow,
    Fabric,
    Instance,
    Schedule,
    ScheduleBuilder,
    ScheduleError,
    check_feasible,
)
from coflowopt.schedule import VIOLATION_KINDS

from .strategies import instances
from .test_instance import shuffle_3x2


def serial_schedule(inst: Instance) -> Schedule:
    """One flow at a time at full speed, coflows in dependency order: always feasible."""
    pieces = []
    t = 0.0
    for k in inst.topological_order:
        for f in range(inst.ptr[k], inst.ptr[k + 1]):
            rate = min(inst.fabric.ingress[inst.flow_src[f]], inst.fabric.egress[inst.flow_dst[f]])
            start = max(t, inst.flow_release[f])
            end = start + inst.flow_size[f] / rate
            pieces.append((f, start, end, rate))
            t = end
    return Schedule.from_pieces(pieces)


def madd_3x2() -> tuple[Instance, Schedule]:
    inst = shuffle_3x2()
    rates = np.array([[0.25, 0.25, 0.25, 0.25, 0.5, 0.5]])
    return inst, Schedule.from_segments([0.0, 4.0], rates)


def test_optimal_3x2_shuffle_schedule_is_feasible_and_finishes_at_4():
    inst, sched = madd_3x2()
    report = check_feasible(inst, sched)
    assert report.ok and bool(report)
    assert report.max_link_utilization == pytest.approx(1.0)
    assert sched.coflow_completion(inst).tolist() == [4.0]
    assert sched.coflow_start(inst).tolist() == [0.0]
    assert "feasible" in str(report)


def test_per_flow_fairness_on_the_3x2_shuffle_takes_5():
    # dissertation §3.2: 1/3 each for 3 time units, then s3's flows at 1/2 for 2 more
    inst = shuffle_3x2()
    third = np.full(6, 1 / 3)
    rest = np.array([0, 0, 0, 0, 0.5, 0.5])
    sched = Schedule.from_segments([0.0, 3.0, 5.0], np.vstack([third, rest]))
    assert check_feasible(inst, sched).ok
    assert sched.coflow_completion(inst).tolist() == [5.0]


def test_segments_round_trip():
    inst, sched = madd_3x2()
    times, rates = sched.segments()
    back = Schedule.from_segments(times, rates)
    assert np.array_equal(np.sort(back.rate), np.sort(sched.rate))
    assert check_feasible(inst, back).ok


def test_builder_and_concatenate_and_shift():
    b = ScheduleBuilder()
    b.add([0, 1, 2, 3], 0.0, 4.0, 0.25)
    b.add([4, 5], 0.0, 4.0, [0.5, 0.5])
    b.add([0], 4.0, 5.0, 0.0)  # zero rates are skipped
    sched = b.build()
    assert sched.num_pieces == 6
    inst = shuffle_3x2()
    assert check_feasible(inst, sched).ok
    later = sched.shifted(2.0)
    assert check_feasible(inst.with_releases(2.0), later).ok
    assert Schedule.concatenate([sched, Schedule.empty()]).num_pieces == 6


def test_schedule_checks_shapes():
    with pytest.raises(ScheduleError, match="differ in length"):
        Schedule([0, 1], [0.0], [1.0], [1.0])
    with pytest.raises(ScheduleError, match="breakpoints need"):
        Schedule.from_segments([0.0, 1.0, 2.0], np.ones((1, 3)))


def kinds(inst: Instance, sched: Schedule, **kw) -> set[str]:
    return check_feasible(inst, sched, **kw).kinds()


def test_each_structural_violation_is_named():
    inst, good = madd_3x2()
    f, s, e, r = (np.array(a) for a in (good.flow, good.start, good.end, good.rate))

    unknown = Schedule(np.r_[f, 9], np.r_[s, 0], np.r_[e, 1], np.r_[r, 0.1])
    report = check_feasible(inst, unknown)
    assert report.kinds() == {"unknown-flow"}
    assert "names flow 9, but the instance has 6 flows" in str(report)

    nan = Schedule(f, s, np.r_[e[:-1], np.nan], r)
    assert "not-finite" in kinds(inst, nan)

    backwards = Schedule(f, np.r_[s[:-1], 5.0], e, r)
    assert "bad-interval" in kinds(inst, backwards)

    negative = Schedule(np.r_[f, 0], np.r_[s, 4.0], np.r_[e, 5.0], np.r_[r, -0.1])
    report = check_feasible(inst, negative)
    assert "negative-rate" in report.kinds()
    v = next(v for v in report.violations if v.kind == "negative-rate")
    assert v.flow == 0 and v.coflow == "shuffle" and v.interval == (4.0, 5.0)

    overlap = Schedule(np.r_[f, 0], np.r_[s, 1.0], np.r_[e, 2.0], np.r_[r, 0.0001])
    assert "overlap" in kinds(inst, overlap)


def test_capacity_violation_names_port_segment_and_excess():
    inst = shuffle_3x2()
    # everything at rate 1 for the first unit: egress 0 carries 3
    sched = Schedule.from_segments([0.0, 1.0, 2.0], np.array([[1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1]]))
    report = check_feasible(inst, sched)
    cap = [v for v in report.violations if v.kind == "capacity"]
    assert cap, str(report)
    worst = cap[0]
    assert worst.interval == (0.0, 1.0)
    assert worst.excess == pytest.approx(2.0)
    assert worst.link in (3, 4, 2)  # egress 0, egress 1 or ingress 2
    assert "egress port 0 carries 3 > capacity 1 (by 2) during [0, 1)" in str(report)
    # ingress 0, 1, 2 and egress 0, 1 during [0, 1); ingress 2 again during [1, 2)
    assert report.counts["capacity"] == 6


def test_amount_and_release_violations():
    inst, good = madd_3x2()
    short = Schedule.from_segments([0.0, 3.0], np.array([[0.25, 0.25, 0.25, 0.25, 0.5, 0.5]]))
    report = check_feasible(inst, short)
    assert report.kinds() == {"amount"}
    assert report.counts["amount"] == 6
    assert "receives 0.75 of its size 1 (short by 0.25)" in str(report)

    late = inst.with_releases(1.0)
    report = check_feasible(late, good)
    assert "before-release" in report.kinds()
    assert "receives 0.25 before it is available at 1" in str(report)


def test_dependency_and_deadline_violations():
    fab = Fabric.uniform(2)
    a = Coflow.from_flows("a", [(0, 0, 1.0)])
    b = Coflow.from_flows("b", [(1, 1, 1.0)], starts_after=["a"], deadline=1.5)
    c = Coflow.from_flows("c", [(1, 0, 1.0)], finishes_before=["a"])
    inst = Instance(fab, (a, b, c))
    # a on [0,1); b on [0.5,1.5) starts before a completes; c on [1.5,2.5) after a: fine
    sched = Schedule.from_pieces([(0, 0.0, 1.0, 1.0), (1, 0.5, 1.5, 1.0), (2, 1.5, 2.5, 1.0)])
    report = check_feasible(inst, sched, deadlines=True)
    assert report.kinds() == {"starts-after"}
    assert "coflow 'b' receives 0.5 before coflow 'a' completes at 1" in str(report)
    # c completes before a although it must not; b misses its deadline
    sched2 = Schedule.from_pieces([(0, 1.0, 2.0, 1.0), (1, 2.0, 3.0, 1.0), (2, 0.0, 1.0, 1.0)])
    report = check_feasible(inst, sched2, deadlines=True)
    assert report.kinds() == {"finishes-before", "deadline"}
    assert "coflow 'c' completes at 1 but coflow 'a' still receives 1 after that" in str(report)
    assert "coflow 'b' receives 1 after its deadline 1.5 (completes at 3)" in str(report)
    # deadlines are checked only on request
    assert check_feasible(inst, sched2).kinds() == {"finishes-before"}


def test_every_violation_kind_is_exercised_somewhere():
    # keep this list in step with VIOLATION_KINDS so a new kind gets a test
    assert set(VIOLATION_KINDS) == {
        "unknown-flow",
        "not-finite",
        "bad-interval",
        "negative-rate",
        "overlap",
        "before-release",
        "capacity",
        "amount",
        "starts-after",
        "finishes-before",
        "deadline",
    }


def test_tolerance_is_relative():
    inst, good = madd_3x2()
    nudged = Schedule(good.flow, good.start, good.end, good.rate * (1 + 1e-8))
    assert check_feasible(inst, nudged).ok
    assert not check_feasible(inst, nudged, tol=1e-10).ok
    with pytest.raises(ScheduleError, match="tolerance"):
        check_feasible(inst, good, tol=-1)
    # as validate --tol: at 1 a schedule that serves nothing passed
    with pytest.raises(ScheduleError, match=r"tolerance must be from 0 to 0\.01, got 1\.0"):
        check_feasible(inst, Schedule.empty(), tol=1.0)
    assert not check_feasible(inst, Schedule.empty(), tol=0.01)


def test_scale_does_not_change_the_verdict():
    inst, good = madd_3x2()
    big = Instance(
        Fabric.uniform(3, 1.25e8),
        (Coflow("s", inst.flow_src, inst.flow_dst, inst.flow_size * 1e9),),
    )
    sched = Schedule(good.flow, good.start * 8, good.end * 8, good.rate * 1.25e8)
    assert check_feasible(big, sched).ok


@settings(max_examples=80)
@given(instances(dependencies=True, delays=True))
def test_serial_schedules_are_feasible_and_perturbations_are_caught(inst):
    sched = serial_schedule(inst)
    assert check_feasible(inst, sched).ok
    # serve everything twice as fast for the same time: too much data
    fast = Schedule(sched.flow, sched.start, sched.end, sched.rate * 2)
    assert "amount" in check_feasible(inst, fast).kinds()
    # start every piece one unit earlier than allowed
    early = sched.shifted(-(float(sched.start.min()) + 1.0))
    assert "before-release" in check_feasible(inst, early).kinds()
    # completion times from the schedule match the serial construction
    done = sched.flow_completion(inst)
    assert np.allclose(done, sched.end[np.argsort(sched.flow)])


def test_dependencies_and_deadlines_are_measured_per_flow():
    # a whole small flow served early or late is not rounding of its big sibling
    fab = Fabric.uniform(3, 1.0)
    x = Coflow.from_flows("x", [(0, 0, 1.0)])
    y = Coflow.from_flows("y", [(1, 1, 1e7), (2, 2, 1.0)], starts_after=("x",))
    early = Schedule.from_pieces([(0, 0, 1, 1), (2, 0, 1, 1), (1, 1, 1 + 1e7, 1)])
    assert check_feasible(Instance(fab, (x, y)), early).kinds() == {"starts-after"}
    fine = Schedule.from_pieces([(0, 0, 1, 1), (2, 1, 2, 1), (1, 1, 1 + 1e7, 1)])
    assert check_feasible(Instance(fab, (x, y)), fine)
    z = Coflow.from_flows("z", [(1, 1, 1e7), (2, 2, 1.0)], deadline=1e7 + 1)
    late = Schedule.from_pieces([(0, 0, 1e7, 1), (1, 1e7 + 5, 1e7 + 6, 1)])
    assert check_feasible(Instance(fab, (z,)), late, deadlines=True).kinds() == {"deadline"}


def test_breakpoints_that_differ_by_rounding_are_one_instant():
    a = Coflow.from_flows("a", [(0, 0, 0.3)])
    b = Coflow.from_flows("b", [(0, 1, 1.0)], release=0.3)
    inst = Instance(Fabric.uniform(2, 1.0), (a, b))
    # 0.1 + 0.2 ends 5.6e-17 after b starts at 0.3
    assert check_feasible(inst, Schedule.from_pieces([(0, 0, 0.1, 1), (0, 0.1, 0.1 + 0.2, 1),
                                                      (1, 0.3, 1.3, 1)]))
    rate = 1.25e8
    c = Coflow.from_flows("c", [(0, 0, rate * 3600.0)])
    d = Coflow.from_flows("d", [(0, 1, rate)], release=3600.0)
    inst = Instance(Fabric.uniform(2, rate), (c, d))
    one_ulp = np.nextafter(3600.0, np.inf)
    assert check_feasible(inst, Schedule.from_pieces([(0, 0, one_ulp, rate),
                                                      (1, 3600.0, 3601.0, rate)]))
    # a real overlap, however short, is still an overload
    over = Schedule.from_pieces([(0, 0, 3600.0 + 1e-6, rate), (1, 3600.0, 3601.0, rate)])
    assert "capacity" in check_feasible(inst, over).kinds()


def test_flow_indices_are_not_truncated():
    with pytest.raises(ScheduleError, match=r"flow indices must be integers, got 0\.9"):
        Schedule([0.9, 1.99], [0, 0], [1, 1], [1, 1])
    assert Schedule(np.array([0.0, 1.0]), [0, 0], [1, 1], [1, 1]).flow.tolist() == [0, 1]


def test_amounts_are_checked_to_the_resolution_of_the_times():
    # a 1.2345e-6 flow served at rate 1 right after a 1e6 one: its end time can only be
    # stated to 1.2e-10 near t = 1e6, so its amount is short by 3.2e-11, 2.6e-5 of its
    # size; the verifier called this infeasible (and the solvers found no schedule)
    from coflowopt.exact.permutation import permutation_schedule
    from coflowopt.schedule import time_resolution

    F = Coflow.from_flows
    inst = Instance(Fabric.uniform(2), (F("big", [(0, 1, 1e6)]),
                                        F("tiny", [(0, 1, 1.2345e-6)], weight=1e-15)))
    sched, comp = permutation_schedule(inst, [0, 1])
    report = check_feasible(inst, sched)
    assert report, str(report)
    assert comp[1] > comp[0] == 1e6
    # what the slack is: rate times the float spacing at both ends
    assert time_resolution(np.array([1e6]), np.array([1e6 + 1e-6]), np.array([1.0]))[0] \
        == pytest.approx(2 * np.spacing(1e6))
    # a real shortfall stays a violation: the same flow served for half its time
    half = Schedule(np.array([0, 1]), np.array([0.0, 1e6]), np.array([1e6, 1e6 + 0.6e-6]),
                    np.array([1.0, 1.0]))
    assert "amount" in check_feasible(inst, half).kinds()


def test_the_resolution_slack_does_not_cover_a_rate_beyond_every_link():
    # a piece one float step long at rate 3e9 on unit links would "deliver" 0.35 of the flow
    # and is too short for the capacity check: the slack takes rates up to the fastest link
    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0)]),))
    t = 1e6
    piece = Schedule(np.array([0]), np.array([t]), np.array([t + np.spacing(t)]),
                     np.array([3.0e9]))
    assert "amount" in check_feasible(inst, piece).kinds()


def test_a_last_instant_too_short_to_state_is_within_the_resolution():
    # (wss) a 1e-6 flow at t = 1.2e8 got the whole 0.1 link for its
    # last 1.1e-10: 1.1e-9 s, below the float spacing there (1.5e-8), so that piece has no
    # length and the recorded amount is short by 1.1e-4 of the size
    inst = Instance(Fabric.uniform(1, 0.1), (Coflow.from_flows("a", [(0, 0, 1e-6)]),))
    t0, t1 = 123476822.09285441, 123496819.5593403
    short = Schedule(np.array([0]), np.array([t0]), np.array([t1]),
                     np.array([(1e-6 - 1.1e-10) / (t1 - t0)]))
    assert check_feasible(inst, short), str(check_feasible(inst, short))
    # more than one such instant could carry (0.1 * 1.5e-8 = 1.5e-9) stays a violation
    shorter = Schedule(np.array([0]), np.array([t0]), np.array([t1]),
                       np.array([(1e-6 - 1e-8) / (t1 - t0)]))
    assert "amount" in check_feasible(inst, shorter).kinds()


def test_trimmed_drops_rounding_pieces_after_a_flow_completes():
    # a time-indexed LP left 1e-10 of a flow's size in later slots (35 of 1,740
    # pieces, and a coflow's last piece 24 time units after its completion)
    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0), (1, 0, 2.0)]),))
    s = Schedule.from_pieces([(0, 0.0, 1.0, 1.0), (0, 1.0, 25.0, 1e-12),
                              (1, 0.0, 1.0, 1.0), (1, 1.0, 2.0, 1.0)])
    t = s.trimmed(inst)
    assert t.num_pieces == 3 and t.end.max() == 2.0
    np.testing.assert_array_equal(t.flow_completion(inst), s.flow_completion(inst))
    assert check_feasible(inst, t)
    assert s.trimmed(inst).trimmed(inst) is not s and t.trimmed(inst) is t  # nothing left to cut
    # a flow that never completes keeps all its pieces
    short = Schedule.from_pieces([(0, 0.0, 0.5, 1.0), (0, 0.5, 0.6, 1.0), (1, 0.0, 2.0, 1.0)])
    assert short.trimmed(inst) is short


def test_per_flow_sums_in_slices_match_one_pass(monkeypatch):
    # served() and amount_resolution() run over slices of the pieces so that their
    # temporaries stay small on 10^8 pieces; the sums do not depend on the slicing
    import coflowopt.schedule as S

    rng = np.random.default_rng(7)
    n, F = 1000, 37
    flow = rng.integers(0, F, n)
    start = np.sort(rng.random(n)) * 1e6
    end = start + rng.random(n)
    rate = rng.random(n) * 3
    sched = Schedule(flow, start, end, rate)
    one = np.bincount(flow, rate * (end - start), minlength=F)
    res = S.amount_resolution(flow, start, end, rate, F, 3.0)
    monkeypatch.setattr(S, "SLICE", 7)
    np.testing.assert_allclose(sched.served(F), one, rtol=1e-12)
    np.testing.assert_allclose(S.amount_resolution(flow, start, end, rate, F, 3.0), res, rtol=1e-12)
    last = np.zeros(F)
    np.maximum.at(last, flow, end)
    expect = np.bincount(flow, np.minimum(rate, 3.0) * (np.spacing(start) + np.spacing(end)),
                         minlength=F) + 3.0 * np.spacing(last)
    np.testing.assert_allclose(res, expect, rtol=1e-12)


def test_the_simulators_schedule_is_adopted_read_only(monkeypatch):
    # the engine hands its joined arrays to the schedule: the constructor, which copies
    # them (a third copy of up to 10^8 pieces at the peak), does not run
    from coflowopt.sim import simulate

    def copying(self, *args, **kwargs):
        raise AssertionError("the recorded pieces were copied by the constructor")

    inst = shuffle_3x2()
    monkeypatch.setattr(Schedule, "__init__", copying)
    sched = simulate(inst, "fair").schedule
    monkeypatch.undo()
    for arr in (sched.flow, sched.start, sched.end, sched.rate):
        assert not arr.flags.writeable
    assert check_feasible(inst, sched) and sched.flow.dtype == np.int64
