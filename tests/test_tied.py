"""Tied pieces: the compact form expands to the pieces it stands for, and the verifier
checks it as it checks those pieces."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, Schedule, ScheduleError, check_feasible
from coflowopt.schedule import TiedPieces
from coflowopt.sim import simulate

from .strategies import instances

LEVELS = [0.0, 0.25, 0.5, 1.0, 2.0, 3.0, math.inf]
"""Dyadic levels (and no limit): sums of rates are exact, so both checks add the same."""


def reference_pieces(tied: TiedPieces, raw: list[tuple[int, float, float]]) -> list[tuple]:
    """The pieces of ``tied`` by the definition, from the level changes as given (``raw``:
    series, time, level; of changes at one time the last given counts)."""

    def level(g: int, t: float) -> float:
        if g < 0:
            return math.inf
        x = math.inf
        for tt, lv in sorted(((tt, lv) for gg, tt, lv in raw if gg == g),
                             key=lambda c: c[0]):  # stable: the last given wins
            if tt <= t:
                x = lv
        return x

    def low(x: float, y: float) -> float:
        return math.nan if math.isnan(x) or math.isnan(y) else min(x, y)

    out = []
    for i in range(tied.num_tied):
        f, s, e, w = int(tied.flow[i]), float(tied.start[i]), float(tied.end[i]), float(tied.weight[i])
        a, b = int(tied.series_a[i]), int(tied.series_b[i])
        if not e > s:
            continue
        cuts = sorted({tt for gg, tt, _ in raw if gg in (a, b) and s < tt < e})
        t0, lev = s, low(level(a, s), level(b, s))
        for t in cuts:
            new = low(level(a, t), level(b, t))
            if new != lev:
                if w * lev != 0:
                    out.append((f, t0, t, w * lev))
                t0, lev = t, new
        if w * lev != 0:
            out.append((f, t0, e, w * lev))
    return out


@st.composite
def tied_pieces(draw: st.DrawFn, num_flows: int = 4, times: int = 12,
                levels: list[float] = LEVELS) -> tuple[TiedPieces, list[tuple[int, float, float]]]:
    """Random tied pieces on a grid of times (halves), with their raw level changes."""
    S = draw(st.integers(1, 4))
    grid = st.integers(0, times).map(lambda x: x / 2)
    raw = draw(st.lists(st.tuples(st.integers(0, S - 1), grid, st.sampled_from(levels)),
                        max_size=12))
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        s, e = sorted(draw(st.tuples(grid, grid)))
        rows.append((draw(st.integers(0, num_flows - 1)), s, e,
                     draw(st.sampled_from([0.5, 1.0, 2.0])), draw(st.integers(0, S - 1)),
                     draw(st.integers(-1, S - 1))))
    cols = list(zip(*rows, strict=True)) if rows else [[]] * 6
    g, t, x = (list(c) for c in zip(*raw, strict=True)) if raw else ([], [], [])
    return TiedPieces(*cols, g, t, x), raw


@settings(max_examples=150, deadline=None)
@given(tied_pieces())
def test_tied_pieces_expand_to_the_pieces_they_stand_for(drawn):
    tied, raw = drawn
    got = list(zip(*(a.tolist() for a in tied.expand()), strict=True))
    assert got == reference_pieces(tied, raw)
    sums = tied.sums()
    assert int(sums[:, 7].sum()) == len(got)  # COUNT


def test_a_change_to_the_same_minimum_is_no_new_piece():
    # series 0: 2 from 0, 1 from 2; series 1: 1 from 0, 1 from 1 (the same), 3 from 3
    t = TiedPieces([0], [0.0], [4.0], [1.0], [0], [1], [0, 0, 1, 1, 1], [0.0, 2.0, 0.0, 1.0, 3.0],
                   [2.0, 1.0, 1.0, 1.0, 3.0])
    assert [a.tolist() for a in t.expand()] == [[0], [0.0], [4.0], [1.0]]


def test_of_two_level_changes_at_one_time_the_last_given_counts():
    t = TiedPieces([0], [0.0], [1.0], [1.0], [0], [-1], [0, 0], [0.0, 0.0], [2.0, 3.0])
    assert t.level.tolist() == [3.0] and t.expand()[3].tolist() == [3.0]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"start": [1.0], "end": [0.5]}, "end >= start"),
    ({"start": [np.nan]}, "finite times"),
    ({"series_a": [-1]}, "series_a"),
    ({"series_b": [-2]}, "series_b"),
    ({"flow": [0.5]}, "integers"),
    ({"weight": [1.0, 2.0]}, "differ in length"),
])
def test_malformed_tied_pieces_are_refused(kwargs, message):
    args = {"flow": [0], "start": [0.0], "end": [1.0], "weight": [1.0], "series_a": [0],
            "series_b": [-1], "level_series": [0], "level_time": [0.0], "level": [1.0]}
    with pytest.raises(ScheduleError, match=message):
        TiedPieces(**{**args, **kwargs})


def test_a_schedule_with_tied_pieces_expands_lazily_and_pickles_compact():
    t = TiedPieces([1], [0.0], [2.0], [1.0], [0], [-1], [0, 0], [0.0, 1.0], [1.0, 0.5])
    sched = Schedule([0], [0.0], [1.0], [1.0], tied=t)
    assert sched.num_pieces == 3 and sched.tied is t and sched.direct.num_pieces == 1
    assert sched.flow.tolist() == [0, 1, 1] and sched.rate.tolist() == [1.0, 1.0, 0.5]
    assert not sched.flow.flags.writeable
    back = pickle.loads(pickle.dumps(sched))
    assert back.tied is not None and back.tied.num_levels == 2
    assert back.flow.tolist() == [0, 1, 1]
    with pytest.raises(AttributeError, match="immutable"):
        sched.tied = None  # type: ignore[misc]
    np.testing.assert_array_equal(sched.served(2), [1.0, 1.5])
    assert sched.shifted(1.0).flow_span(2)[0].tolist() == [1.0, 1.0]
    both = Schedule.concatenate([sched, sched.shifted(5.0)])
    assert both.num_pieces == 6 and both.tied is not None and both.tied.num_series == 2
    np.testing.assert_array_equal(both.served(2), [2.0, 3.0])


def compare(inst: Instance, sched: Schedule, **kw) -> None:
    """The compact check and the check of the expanded pieces agree."""
    compact = check_feasible(inst, sched, **kw)
    plain = check_feasible(inst, sched.expanded(), **kw)
    for kind, n in plain.counts.items():
        if kind == "overlap":
            # a tied piece occupies its flow from its first piece to its last: a gap at
            # rate 0 inside it is no room for another piece
            assert (compact.counts[kind] > 0) >= (n > 0)
        else:
            assert compact.counts[kind] == n, (kind, compact, plain)
    assert compact.max_link_utilization == pytest.approx(plain.max_link_utilization, rel=1e-12)
    if not plain.counts["overlap"]:
        assert compact.ok == plain.ok
    F = inst.num_flows
    rate = sched.rate
    if not (np.isfinite(rate).all() and (rate >= 0).all() and (sched.flow < F).all()):
        return  # the per-flow queries of tied pieces leave out pieces at such rates
    np.testing.assert_allclose(sched.served(F), sched.expanded().served(F), rtol=1e-12)
    for got, want in zip(sched.flow_span(F), sched.expanded().flow_span(F), strict=True):
        np.testing.assert_array_equal(got, want)
    top = float(inst.fabric.capacity.max())
    np.testing.assert_allclose(sched.resolution(F, top), sched.expanded().resolution(F, top),
                               rtol=1e-12)
    np.testing.assert_array_equal(sched.flow_completion(inst),
                                  sched.expanded().flow_completion(inst))


@settings(max_examples=100, deadline=None)
@given(instances(max_coflows=3, max_flows=3, integer=True, deadlines=True, dependencies=True),
       st.data())
def test_the_compact_check_equals_the_check_of_the_pieces(inst, data):
    tied, _ = data.draw(tied_pieces(num_flows=inst.num_flows))
    n = data.draw(st.integers(0, 3))  # and a few plain pieces
    grid = st.integers(0, 12).map(lambda x: x / 2)
    rows = [(data.draw(st.integers(0, inst.num_flows - 1)), *sorted(data.draw(st.tuples(grid, grid))),
             data.draw(st.sampled_from([0.5, 1.0, 2.0]))) for _ in range(n)]
    plain = Schedule.from_pieces(rows)
    sched = Schedule(plain.flow, plain.start, plain.end, plain.rate, tied=tied)
    compare(inst, sched, deadlines=True)


def test_the_compact_check_of_a_trace_prefix_equals_the_check_of_its_pieces():
    from coflowopt import io

    from .sim.test_kernels import TRACE

    inst = io.read(TRACE).subset(range(12))
    sched = simulate(inst, "fair").schedule
    assert sched is not None and sched.tied is not None
    assert sched.num_pieces > 20 * sched.tied.num_levels
    compare(inst, sched)
    assert check_feasible(inst, sched).ok


def _fair_3x2() -> tuple[Instance, Schedule]:
    """Two coflows on three ports and its fair schedule (tied)."""
    inst = Instance(Fabric.uniform(3), (
        Coflow("a", [0, 0, 1], [1, 2, 2], [2.0, 1.0, 3.0]),
        Coflow("b", [2, 1], [0, 2], [1.5, 1.0], release=0.5)))
    sched = simulate(inst, "fair").schedule
    assert sched is not None and sched.tied is not None
    return inst, sched


def _with(sched: Schedule, **changes: object) -> Schedule:
    t = sched.tied
    assert t is not None
    fields = {k: getattr(t, k) for k in ("flow", "start", "end", "weight", "series_a",
                                         "series_b", "level_series", "level_time", "level")}
    for name, change in changes.items():
        fields[name] = change(np.array(fields[name]))  # type: ignore[operator]
    d = sched.direct
    return Schedule(d.flow, d.start, d.end, d.rate, tied=TiedPieces(**fields))


def _set(i: int, value: float):  # type: ignore[no-untyped-def]
    def change(a: np.ndarray) -> np.ndarray:
        a[i] = value
        return a
    return change


@pytest.mark.parametrize(("changes", "kinds"), [
    # a link's level above its capacity: its flows go over it, and get too much
    ({"level": lambda a: a * 1.5}, {"capacity", "amount"}),
    # one flow at twice its weight: too much for it, and for its links
    ({"weight": _set(0, 2.0)}, {"amount", "capacity"}),
    # one flow stopped early: too little
    ({"end": lambda a: a - 0.25}, {"amount"}),
    # a flow of coflow b started before its release
    ({"start": lambda a: np.where(a == 0.5, 0.25, a)}, {"before-release"}),
    # a flow of another instance
    ({"flow": _set(0, 99)}, {"unknown-flow", "amount"}),
    ({"level": _set(0, np.nan)}, {"not-finite", "amount"}),
    ({"level": _set(0, -1.0)}, {"negative-rate", "amount"}),
])
def test_the_compact_check_catches_violations_of_tied_pieces(changes, kinds):
    inst, sched = _fair_3x2()
    assert check_feasible(inst, sched).ok
    bad = _with(sched, **changes)
    report = check_feasible(inst, bad)
    assert not report.ok and kinds <= {k for k, n in report.counts.items() if n}, report
    assert "tied piece" in str(report) or not kinds & {"unknown-flow", "not-finite",
                                                       "negative-rate"}
    if "unknown-flow" not in kinds:
        compare(inst, bad)


def test_two_tied_pieces_of_one_flow_that_overlap_are_reported():
    inst, sched = _fair_3x2()
    t = sched.tied
    assert t is not None
    both = TiedPieces.concatenate([t, t])  # every flow twice, on a copy of the levels
    d = sched.direct
    report = check_feasible(inst, Schedule(d.flow, d.start, d.end, d.rate, tied=both))
    assert report.counts["overlap"] == inst.num_flows and report.counts["capacity"]
    assert report.counts["amount"] == inst.num_flows


def test_capacity_violations_name_the_link_segment_and_flows():
    inst, sched = _fair_3x2()
    report = check_feasible(inst, _with(sched, level=lambda a: a * 2.0))
    v = next(v for v in report.violations if v.kind == "capacity")
    assert v.link is not None and v.interval is not None and v.excess > 0
    assert "flows: flow" in v.message and "> capacity 1" in v.message


def test_the_worst_violations_come_in_the_same_order_compiled_or_interpreted():
    # 40 links over capacity by the same amount: more reports than an insertion sort
    # handles, where an unstable sort would order the ties differently each way
    from coflowopt import _jit

    P = 40
    inst = Instance(Fabric.uniform(P), tuple(Coflow(f"c{i}", [i], [i], [1.0]) for i in range(P)))
    F = inst.num_flows
    tied = TiedPieces(flow=np.arange(F), start=np.zeros(F), end=np.full(F, 0.5),
                      weight=np.full(F, 2.0), series_a=np.arange(F), series_b=np.full(F, -1),
                      level_series=np.arange(F), level_time=np.zeros(F), level=np.ones(F))
    s = Schedule(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0), tied=tied)
    reports = []
    for mode in (_jit.compiling, _jit.interpreting):
        with mode():
            reports.append([str(v) for v in check_feasible(inst, s, max_reports=2 * P).violations])
    assert len(reports[0]) == 2 * P
    assert reports[0] == reports[1]
