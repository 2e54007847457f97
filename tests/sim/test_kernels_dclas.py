"""The compiled multi-level queue kernel (aalo, mcs) gives the reference path's results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import io
from coflowopt.instance import Coflow, Fabric, Instance
from coflowopt.sim import simulate

from ..strategies import instances
from .test_kernels import assert_same, both

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

# small thresholds, so that coflows of a few bytes cross several queues
AALO = {"num_queues": 3, "first_threshold": 0.7, "multiplier": 3.0}
MCS = {
    "num_queues": 4,
    "width_thresholds": (2.0, 3.0),
    "narrow_width": 2,
    "narrow_thresholds": (0.8, 2.5, 6.0),
    "wide_thresholds": (0.3, 1.0, 2.0),
}
CASES = [
    ("aalo", {**AALO, "sharing": "weighted"}),
    ("aalo", {**AALO, "sharing": "strict"}),
    ("aalo", {}),
    ("mcs", MCS),
    ("mcs", {**MCS, "sharing": "weighted"}),
]




@settings(max_examples=60, deadline=None)
@given(
    instances(max_ports=4, max_coflows=5, max_flows=6, dependencies=True, delays=True),
    st.booleans(),
    st.sampled_from(range(len(CASES))),
    st.sampled_from([None, 0.5]),
)
def test_queue_kernel_equals_the_reference(inst, uniform, case, batch):
    if uniform:
        inst = inst.replace(fabric=type(inst.fabric)([1.0] * inst.num_ports, [1.0] * inst.num_ports))
    name, params = CASES[case]
    fast, ref = both(inst, name, batch_interval=batch, **params)
    assert_same(inst, fast, ref)
    # the kernel decides only at admissions and coflow completions
    assert fast.decisions <= ref.decisions


@pytest.mark.parametrize(("name", "params"), [
    ("aalo", {}), ("aalo", {"sharing": "strict"}), ("mcs", {}),
])
def test_queue_kernel_on_a_facebook_prefix(name, params):
    # the first 40 coflows by arrival (about 1,200 events): about a second on the reference path
    inst = io.read(TRACE)
    inst = inst.subset(np.argsort(inst.release, kind="stable")[:40])
    fast, ref = both(inst, name, **params)
    assert_same(inst, fast, ref)
    assert fast.events == ref.events
    # the kernel reports its work; weighted rounds only where queues share by weight
    work = fast.info["kernel_work"]
    assert "kernel_work" not in ref.info
    assert min(work["stretches"], work["levels_solved"], work["rate_changes"]) > 0
    assert work["allocations"] >= work["stretches"]
    assert (work["rounds"] > 0) == (name == "aalo" and params.get("sharing") != "strict")


WEIGHTED = [("aalo", {**AALO, "sharing": "weighted"}), ("aalo", {}),
            ("mcs", {**MCS, "sharing": "weighted"})]


@settings(max_examples=60, deadline=None)
@given(
    instances(max_ports=4, max_coflows=5, max_flows=8, dependencies=True, delays=True),
    st.booleans(),
    st.sampled_from(range(len(WEIGHTED))),
    st.sampled_from([None, 0.5]),
)
def test_the_dense_water_filling_equals_the_reference(inst, uniform, case, batch):
    # every coflow takes the dense water-filling (aalo.DENSE_ROWS = 1): dead links at
    # capacity 0 instead of their rows left out
    from coflowopt.sim.policies import aalo

    if uniform:
        inst = inst.replace(fabric=type(inst.fabric)([1.0] * inst.num_ports, [1.0] * inst.num_ports))
    name, params = WEIGHTED[case]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(aalo, "DENSE_ROWS", 1)
        fast, ref = both(inst, name, batch_interval=batch, **params)
    assert_same(inst, fast, ref)


@pytest.mark.parametrize("dense_rows", [1, 64])
def test_the_dense_water_filling_on_a_facebook_prefix(dense_rows, monkeypatch):
    # the first 60 coflows by arrival, weighted aalo: the dense water-filling for every
    # coflow, or for those with 64 rows or more, against the row lists for all
    from coflowopt.sim.policies import aalo

    inst = io.read(TRACE)
    inst = inst.subset(np.argsort(inst.release, kind="stable")[:60])
    monkeypatch.setattr(aalo, "DENSE_ROWS", 0)
    lists = simulate(inst, "aalo")
    monkeypatch.setattr(aalo, "DENSE_ROWS", dense_rows)
    dense = simulate(inst, "aalo")
    assert_same(inst, dense, lists)
    # the same water-fillings re-solved (up to levels kept by rounding), the same events
    w0, w1 = lists.info["kernel_work"], dense.info["kernel_work"]
    assert w0["allocations"] == w1["allocations"]
    assert abs(w0["levels_solved"] - w1["levels_solved"]) <= 0.01 * w0["levels_solved"]


def test_a_share_left_over_by_rounding_is_not_capacity():
    # weighted mcs on one port: at t = 2.6 queue 2's share 2/5 is used up by c1's six
    # flows except for ~5.6e-17 of rounding, which once gave c2 a rate of 1.9e-17 (and a
    # start at 2.6) on the reference path only; below SAT of the link it counts as used up
    def cf(i, k):
        return Coflow(id=f"c{i}", src=np.zeros(k, int), dst=np.zeros(k, int), sizes=np.ones(k),
                      release=0.0)

    inst = Instance(fabric=Fabric(np.array([1.0]), np.array([1.0])),
                    coflows=(cf(0, 1), cf(1, 6), cf(2, 3), cf(3, 1)))
    fast, ref = both(inst, "mcs", **{**MCS, "sharing": "weighted"})
    assert_same(inst, fast, ref)
    assert fast.start[2] == ref.start[2] == 8.0


DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize(("file", "name", "params"), [
    ("dclas_threshold_at_rate0_aalo.json", "aalo",
     {"num_queues": 4, "first_threshold": 1.0, "multiplier": 2.0, "sharing": "weighted"}),
    ("dclas_threshold_at_rate0_mcs.json", "mcs",
     {"num_queues": 4, "width_thresholds": (2.0, 3.0), "narrow_width": 2,
      "narrow_thresholds": (1.0, 2.0, 4.0), "wide_thresholds": (1.0, 2.0, 3.0),
      "sharing": "weighted"}),
])
def test_a_threshold_reached_exactly_at_rate_zero_demotes_on_both_paths(file, name, params):
    # found by a stress run: a coflow's bytes reach a threshold exactly when its rate drops to
    # 0; the kernel's running total came out one ulp short, it was not demoted, and with no
    # rate it had no crossing to wait for, so it stayed stuck behind its FIFO predecessor
    # (completions 0.38 and 2.5 time units apart). The byte slack REACH_TOL fixes it. (mcs
    # reads Algorithm 2's ">": bytes that stop at its threshold stay, one ulp
    # short or not; both paths must still agree.)
    inst = io.read(DATA / file)
    fast, ref = both(inst, name, **params)
    assert_same(inst, fast, ref)


STRICT = [("aalo", {**AALO, "sharing": "strict"}), ("aalo", {"sharing": "strict"}), ("mcs", MCS),
          ("mcs", {})]


def per_row(monkeypatch):
    """Make strict priority run on the per-row kernel (kernels/dclas.py) instead of link clocks."""
    from coflowopt.sim.kernels.dclas import dclas_stretch
    from coflowopt.sim.policies import aalo

    monkeypatch.setattr(aalo, "dclas_clock_stretch", dclas_stretch)


@settings(max_examples=60, deadline=None)
@given(
    instances(max_ports=5, max_coflows=6, max_flows=8, dependencies=True, delays=True),
    st.sampled_from(range(len(STRICT))),
    st.sampled_from([None, 0.5]),
)
def test_link_clocks_give_the_per_row_kernels_schedule(inst, case, batch):
    # the strict kernel keeps a clock per (coflow, link) instead of a rate per row: the same
    # allocations (up to rounding in link uses), so the same completions to rounding
    name, params = STRICT[case]
    clocks = simulate(inst, name, batch_interval=batch, **params)
    with pytest.MonkeyPatch.context() as mp:
        per_row(mp)
        rows = simulate(inst, name, batch_interval=batch, **params)
    assert_same(inst, clocks, rows)
    assert clocks.events == rows.events


@pytest.mark.parametrize(("name", "params"), [("aalo", {"sharing": "strict"}), ("mcs", {})])
def test_link_clocks_on_a_facebook_prefix(name, params, monkeypatch):
    # 120 coflows by arrival: rows flip between their links, coflows stop and restart
    inst = io.read(TRACE)
    inst = inst.subset(np.argsort(inst.release, kind="stable")[:120])
    clocks = simulate(inst, name, record=False, **params)
    per_row(monkeypatch)
    rows = simulate(inst, name, record=False, **params)
    assert np.allclose(clocks.completion, rows.completion, rtol=1e-12, atol=0)
    assert np.array_equal(clocks.start, rows.start)
    assert clocks.events == rows.events
    # the same allocations: the same water-fillings, kept and re-solved alike
    for key in ("allocations", "levels_kept", "levels_solved"):
        assert clocks.info["kernel_work"][key] == rows.info["kernel_work"][key]


@settings(max_examples=80, deadline=None)
@given(
    instances(max_ports=4, max_coflows=7, max_flows=5, dependencies=True, delays=True),
    st.sampled_from(range(len(STRICT))),
    st.sampled_from([None, 0.5]),
    st.sampled_from([(1, 100), (2, 6), (32, 10_000)]),
    st.booleans(),
)
def test_admissions_made_by_the_kernel_give_the_schedule_of_a_stretch_per_admission(
    inst, case, batch, horizon, rows,
):
    # the kernel admits the next coflows itself instead of handing back at each: the same
    # rule, so the same schedule up to rounding (levels kept across an admission); both
    # kernels can (weighted sharing does not use it: the per-row kernel runs strict here)
    from coflowopt.sim.policies import aalo

    name, params = STRICT[case]
    with pytest.MonkeyPatch.context() as mp:
        if rows:
            per_row(mp)
        mp.setattr(aalo, "HORIZON", horizon)
        inside = simulate(inst, name, batch_interval=batch, **params)
        mp.setattr(aalo, "HORIZON", (0, 0))
        apart = simulate(inst, name, batch_interval=batch, **params)
    assert_same(inst, inside, apart)
    # (an admission a completion releases moves with its rounding)
    assert np.allclose(inside.admitted, apart.admitted, rtol=1e-12, atol=0)
    assert inside.events == apart.events
    assert inside.decisions <= apart.decisions


@pytest.mark.parametrize(("name", "params", "n", "rows"), [
    ("aalo", {"sharing": "strict"}, 120, False), ("mcs", {}, 120, False),
    ("mcs", {}, 60, True),
])
def test_admissions_made_by_the_kernel_on_a_facebook_prefix(name, params, n, rows, monkeypatch):
    from coflowopt.sim.policies import aalo

    if rows:
        per_row(monkeypatch)
    inst = io.read(TRACE)
    inst = inst.subset(np.argsort(inst.release, kind="stable")[:n])
    inside = simulate(inst, name, record=False, **params)
    monkeypatch.setattr(aalo, "HORIZON", (0, 0))
    apart = simulate(inst, name, record=False, **params)
    assert np.allclose(inside.completion, apart.completion, rtol=1e-12, atol=0)
    assert np.array_equal(inside.start, apart.start)
    assert np.array_equal(inside.admitted, apart.admitted)
    assert inside.events == apart.events
    # a stretch per admission, against a few: each set up every active flow again
    w_in, w_apart = inside.info["kernel_work"], apart.info["kernel_work"]
    assert w_apart["stretches"] == n
    assert w_in["stretches"] * 4 < n
    assert w_in["rows"] * 4 < w_apart["rows"]
    assert w_in["allocations"] == w_apart["allocations"]


def test_weighted_sharing_ends_a_stretch_at_every_admission():
    # measured slower with admissions in the kernel (aalo.HORIZON)
    inst = io.read(TRACE)
    inst = inst.subset(np.argsort(inst.release, kind="stable")[:20])
    res = simulate(inst, "aalo", record=False)
    assert res.info["kernel_work"]["stretches"] == 20


@pytest.mark.parametrize(("t0", "eps"), [(1e3, 1e-6), (1e5, 1e-7)])
def test_a_row_joining_a_slot_with_a_large_clock_keeps_its_own_precision(t0, eps, monkeypatch):
    # coflow P's row (0 -> 0) runs alone on downlink 0 until t0, so that
    # slot's clock holds ~t0 bytes; row (1 -> 0) then joins it (uplink 1 frees at t0) with a
    # few bytes, and from t0 + 1 coflow H2 leaves P only eps of downlink 0. Anchored on the
    # large clock, that row's remaining bytes carried the clock's rounding (~1e-11 bytes),
    # which divided by eps put its completion 1e-9 relative off; the slot is now re-based
    # when a row joins it with a clock far above the row's own bytes (dclas_clock.REBASE)
    fab = Fabric(np.array([2.0, 2.0, 1.0 - eps, 1.0]), np.array([1.0, 1.0, 1.0, 1.0]))
    t1 = t0 + 1.0

    def cf(name, src, dst, sizes):
        return Coflow(id=name, src=np.array(src), dst=np.array(dst), sizes=np.array(sizes),
                      release=0.0)

    inst = Instance(fabric=fab, coflows=(
        cf("H0", [1, 1], [1, 3], [t0, t0]),       # holds uplink 1 until t0
        cf("H1", [2], [2], [t1 * (1 - eps)]),     # holds uplink 2 until t0 + 1
        cf("H2", [2], [0], [1e3]),                # then takes 1 - eps of downlink 0
        cf("P", [0, 1], [0, 0], [t0 + 0.25, 0.75 + 1.3e-6]),
    ))
    kw = {"num_queues": 1, "sharing": "strict"}
    clocks, ref = both(inst, "aalo", **kw)
    assert_same(inst, clocks, ref)
    per_row(monkeypatch)
    rows = simulate(inst, "aalo", **kw)
    assert np.array_equal(clocks.completion, rows.completion)
    assert clocks.events == rows.events


# ---- fidelity to Aalo: a DAG's coflows queue under the DAG's CoflowId


@pytest.mark.parametrize("sharing", ["strict", "weighted"])
@pytest.mark.parametrize("compiled", [True, False])
def test_a_dag_queues_under_its_first_admission(sharing, compiled):
    one = Fabric.uniform(1)
    # B starts after A (admitted at 1, when A ends) but belongs to A's DAG (arrived at 0):
    # it goes before C (arrived at 0.5); each coflow's own admission time put C first
    chain = Instance(one, (
        Coflow("A", [0], [0], [1.0]),
        Coflow("B", [0], [0], [1.0], starts_after=("A",)),
        Coflow("C", [0], [0], [5.0], release=0.5)))
    res = simulate(chain, "aalo", sharing=sharing, compiled=compiled)
    assert res.completion.tolist() == pytest.approx([1.0, 2.0, 7.0], rel=1e-12)
    # all admitted at 0: A's DAG (A, then B, which finishes before A... after it in rank)
    # before C, which came after A in the file; the dependency rank alone put C between
    fb = Instance(one, (
        Coflow("A", [0], [0], [1.0]),
        Coflow("C", [0], [0], [5.0]),
        Coflow("B", [0, 0], [0, 0], [1.0, 2.0], finishes_before=("A",))))
    res = simulate(fb, "aalo", sharing=sharing, compiled=compiled)
    assert res.completion.tolist() == pytest.approx([1.0, 9.0, 4.0], rel=1e-12)
