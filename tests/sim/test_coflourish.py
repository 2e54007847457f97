"""coflourish: the switches' registers, the hosts' estimate, and Algorithm 4, by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import MB, Coflow, Fabric, Instance, check_feasible, read
from coflowopt.errors import CoflowoptError, InputError, InstanceError
from coflowopt.fabric import FatTree, Network, SpineLeaf, place
from coflowopt.fabric.background import Background
from coflowopt.fabric.feedback import dre_advance, steady_ratio
from coflowopt.sim import make_policy, simulate

DATA = Path(__file__).resolve().parents[1] / "data"


def _tick_by_tick(segments, alpha, tick):
    """The register by ESTCONG's own steps: bytes added as they cross, ``* (1 - alpha)`` at
    every tick ``k * tick``; read at the end, before a decrease due then."""
    x, t = 0.0, 0.0
    for dur, rate in segments:
        end = t + dur
        k = math.ceil(t / tick - 1e-9)
        while k * tick < end - 1e-9 * tick:
            x = (x + rate * (k * tick - t)) * (1 - alpha)
            t = k * tick
            k += 1
        x += rate * (end - t)
        t = end
    return x


@settings(max_examples=60, deadline=None)
@given(segments=st.lists(st.tuples(st.sampled_from([0.1, 0.25, 0.3, 0.5, 1.0, 1.7]),
                                   st.sampled_from([0.0, 1.0, 2.5, 7.0])), min_size=1, max_size=6),
       alpha=st.sampled_from([0.1, 0.5, 0.9]), tick=st.sampled_from([0.25, 0.4, 1.0]))
def test_registers_in_closed_form_are_estcong_tick_by_tick(segments, alpha, tick):
    x, t = np.zeros(1), 0.0
    for dur, rate in segments:
        # the same segment in two pieces gives the same register
        half = dre_advance(x, t, t + dur / 3, np.array([rate]), alpha, tick)
        whole = dre_advance(x, t, t + dur, np.array([rate]), alpha, tick)
        assert dre_advance(half, t + dur / 3, t + dur, np.array([rate]), alpha, tick) == \
            pytest.approx(whole, rel=1e-9, abs=1e-12)
        x, t = whole, t + dur
    assert x[0] == pytest.approx(_tick_by_tick(segments, alpha, tick), rel=1e-9, abs=1e-12)


def test_a_steady_register_is_the_rate_times_tick_over_alpha():
    x = dre_advance(np.zeros(2), 0.0, 10.0, np.array([3.0, 0.0]), 0.5, 0.25e-3)
    assert x.tolist() == pytest.approx([3.0 * 0.25e-3 / 0.5, 0.0], rel=1e-12)


@given(t=st.floats(200.0, 201.0), alpha=st.sampled_from([0.1, 0.5, 0.9]),
       tick=st.sampled_from([0.02, 0.25, 0.4]))
@settings(max_examples=60, deadline=None)
def test_a_steady_register_read_anywhere_is_the_rate_times_its_steady_ratio(t, alpha, tick):
    x = dre_advance(np.zeros(1), 0.0, t, np.array([3.0]), alpha, tick)
    want = _tick_by_tick([(t, 3.0)], alpha, tick)
    assert x[0] == pytest.approx(want, rel=1e-9)
    assert x[0] == pytest.approx(3.0 * steady_ratio(t, alpha, tick), rel=1e-9)
    if abs(t / tick - round(t / tick)) < 1e-12:
        assert steady_ratio(t, alpha, tick) == pytest.approx(tick / alpha, rel=1e-9)


@pytest.mark.parametrize("t, alpha, tick", [(1.0, 0.0, 0.1), (1.0, 1.5, 0.1), (1.0, 0.5, 0.0),
                                           (math.nan, 0.5, 0.1), (math.inf, 0.5, 0.1)])
def test_steady_ratio_refuses_what_has_no_steady_state(t, alpha, tick):
    with pytest.raises(InputError, match="steady_ratio needs 0 < alpha < 1"):
        steady_ratio(t, alpha, tick)


@pytest.mark.parametrize("period, dre", [(0.2, 0.00025), (0.025, 0.01), (0.025, 0.02), (0.03, 0.02)])
def test_an_uncalibrated_host_reads_a_steady_hidden_load_at_any_report_phase(period, dre):
    # 2 leaves of 1 host, 1 spine, every link 100 MB/s; a hidden 60 MB/s on leaf 0's
    # uplink and nothing on the host links (no host can calibrate its beta): leaf 0's
    # uplink has 40 MB/s left, whether or not the reports fall on the decrease ticks
    C = 100 * MB
    base = Instance(Fabric.uniform(2, C), (Coflow.from_flows("a", [(0, 1, 300 * MB)], release=1.0),))
    inst = place(base, "spine-leaf", {"hosts_per_leaf": 1, "spines": 1, "spine_rate": C})
    load = np.zeros((1, inst.fabric.capacity.size))
    load[0, 4] = 60 * MB  # leaf0 -> spine0
    pol = make_policy("coflourish", {"feedback_period": period, "dre_period": dre})
    seen = []
    estimate = pol._estimate
    pol._estimate = lambda rep: seen.append((rep.time, estimate(rep)[2] / MB)) or estimate(rep)
    simulate(inst, pol, background=Background(times=[0.0, 1000.0], load=load))
    late = [v for t, v in seen if t >= 1.0]
    assert late and late == pytest.approx([40.0] * len(late), rel=1e-9)


@pytest.mark.parametrize("release", [0.6, 0.6 + 1e-9])
def test_one_report_each_period_when_an_event_falls_on_its_instant(release):
    # 3 * 0.2 is 0.6000000000000001: an event at 0.6 makes report 3 there, with the load
    # just before 0.6 (the small unscheduled flow not in it), and the next event (at
    # 0.65) must not make report 3 again with the load after 0.6
    C = 100 * MB
    inst = Instance(Fabric.uniform(6, C), (
        Coflow.from_flows("A", [(0, 1, 200 * MB)]), Coflow.from_flows("B", [(2, 1, 300 * MB)]),
        Coflow.from_flows("small", [(0, 3, 20 * MB)], release=release),
        Coflow.from_flows("other", [(4, 5, 1 * MB)], release=0.65)))
    pol = make_policy("coflourish", {})
    reports = []
    estimate = pol._estimate
    pol._estimate = lambda rep: reports.append(rep) or estimate(rep)
    res = simulate(inst, pol)
    m = [round(r.time / 0.2) for r in reports]
    assert m == sorted(set(m))
    assert [float(r.load[0]) for r in reports if r.time < 0.7] == [0.0] * 3
    assert res.cct.tolist() == pytest.approx([2.5, 5.1, 0.4, 0.01], rel=1e-9)


def _leaf_fabric():
    # 2 leaves x 2 hosts, 2 spines; host links 100, leaf-spine links 50 (a leaf: 200 down, 100 up)
    return Network(SpineLeaf(2, 2, 2, 100.0, 50.0), "given",
                   paths={"a": (("h0", "leaf0", "spine0", "leaf1", "h2"),)})


def test_the_estimate_follows_algorithm_3_and_eq_2():
    """A steady hidden load: the hosts' table is the bandwidth it leaves, through Eq. 2."""
    net = _leaf_fabric()
    H, L, S = 4, 2, 2
    up = lambda a, s: 2 * H + a * S + s  # noqa: E731
    down = lambda b, s: 2 * H + L * S + b * S + s  # noqa: E731
    load = np.zeros(net.num_links)
    load[0] = 25.0            # host 0's uplink
    load[H + 2] = 40.0        # host 2's downlink (calibrates host 2's beta)
    load[up(0, 0)], load[up(0, 1)] = 30.0, 10.0
    load[down(1, 0)], load[down(1, 1)] = 20.0, 30.0
    bg = Background(times=[0.0, 100.0], load=load[None, :])
    inst = Instance(net, (Coflow.from_flows("a", [(0, 2, 1000.0)], release=10.0),))
    pol = make_policy("coflourish", {"min_size": 0})
    res = simulate(inst, pol, background=bg)
    t = pol.table.reshape(4, H)  # UL, US, DL, DS per host
    assert t[0, 0] == pytest.approx(75.0)               # UL_0: its NIC
    assert t[1, 0] == pytest.approx(100.0 - 40.0)       # US_0 = min(sC - tS / beta, UL_0)
    assert t[2, 2] == pytest.approx(60.0)               # DL_2
    assert t[3, 2] == pytest.approx(100.0 - 50.0)       # DS_2 = min(sC - fS / beta, DL_2)
    assert t[0, 1] == pytest.approx(100.0) and t[2, 3] == pytest.approx(100.0)  # quiet hosts
    # asked for PathRem(0, 2) = 50; the path through spine 0 has 20 left on leaf0 -> spine0
    assert res.cct[0] == pytest.approx(1000.0 / 20.0)
    assert check_feasible(inst, res.schedule, background=res.background).ok
    per_leaf = make_policy("coflourish", {"min_size": 0, "table": "leaf"})
    simulate(inst, per_leaf, background=bg)
    UL, LS, DL, SL = np.split(per_leaf.table, [H, H + L, 2 * H + L])
    assert UL[0] == pytest.approx(75.0) and DL[2] == pytest.approx(60.0)
    assert LS.tolist() == pytest.approx([100.0 - 40.0, 100.0])   # leaf 0 -> spines: 30 + 10 taken
    assert SL.tolist() == pytest.approx([100.0, 100.0 - 50.0])   # spines -> leaf 1: 20 + 30 taken
    nominal = make_policy("coflourish", {"min_size": 0, "estimate": "nominal"})
    simulate(inst, nominal, background=bg)
    assert nominal.table.reshape(4, H)[:, 0].tolist() == [100.0, 100.0, 100.0, 100.0]


def _switch(*coflows, ports=3):
    return Instance(Fabric.uniform(ports, 100 * MB), coflows)


def test_only_coflows_above_25_mb_are_scheduled_the_rest_share_max_min():
    inst = _switch(Coflow.from_flows("large", [(0, 1, 200 * MB)]),
                   Coflow.from_flows("small", [(0, 1, 10 * MB)]))
    # the large one asks for the whole link; the small one is not limited: they share it.
    # The report at 0.2 still shows the small flow's 50 on the uplink (the load just
    # before), so the large one asks for 50 until the report at 0.4 shows the link free
    res = simulate(inst, "coflourish")
    assert res.cct.tolist() == pytest.approx([0.4 + 180 / 100, 0.2])
    # and a new SELECT as the next CCT-minimisation stage starts, at 2.0
    assert res.info["coflourish_selections"] == {"coflows": 1, "bandwidth": 2, "stage": 1}
    assert simulate(inst, "varys").cct.tolist() == pytest.approx([2.1, 0.1])


def test_gamma_sums_a_coflows_bytes_on_each_entry():
    """Eq. 4 over host pairs would give each flow of a fan-out the whole uplink."""
    inst = _switch(Coflow.from_flows("fan", [(0, 1, 100 * MB), (0, 2, 100 * MB), (0, 0, 100 * MB)]))
    pol = make_policy("coflourish", {})
    res = simulate(inst, pol)
    assert pol.rate.tolist() == pytest.approx([100 * MB / 3] * 3)
    assert res.cct[0] == pytest.approx(3.0)


def test_the_backfilling_gives_nothing_to_a_flow_with_nothing_left():
    """A flow that ends at a decision's instant has 0 bytes left: it asks for nothing, and
    the others share what is left as if it were not there (the filling takes positive
    weights only; on the Facebook trace placed on a spine-leaf fabric such a flow reached
    it)."""
    import scipy.sparse as sp

    from coflowopt import alloc
    from coflowopt.sim.policies.coflourish import Coflourish

    u = sp.csr_array(np.array([[1.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    residual = np.array([4.0, 3.0, 5.0])
    rem = np.array([2.0, 0.0, 1.0])
    x = Coflourish._backfill(u, rem, residual)
    keep = np.array([0, 2])
    assert x[1] == 0.0
    assert x[keep].tolist() == alloc.max_min(u[keep], residual, weights=rem[keep]).tolist()
    assert np.all(u.T @ x <= residual * (1 + 1e-12))
    assert Coflourish._backfill(u, np.zeros(3), residual).tolist() == [0.0, 0.0, 0.0]
    assert Coflourish._backfill(u, rem + 1, residual).tolist() == alloc.max_min(
        u, residual, weights=rem + 1).tolist()


def test_a_starved_coflow_runs_alone_in_each_starvation_stage():
    inst = _switch(Coflow.from_flows("A", [(0, 1, 1000 * MB)]),
                   Coflow.from_flows("B", [(0, 1, 300 * MB)]), ports=2)
    # B first; A starved. 2.0-2.2: A alone (20 MB). B done at 3.2; A has 980 MB left
    res = simulate(inst, "coflourish")
    assert res.cct.tolist() == pytest.approx([13.0, 3.2])
    # a new SELECT after the starvation stage, at 2.2, and as each later CCT-minimisation
    # stage starts (4.2, 6.2, 8.2, 10.2, 12.2: nobody starved, no starvation stage between)
    assert res.info["coflourish_selections"] == {"coflows": 2, "bandwidth": 0, "stage": 6}
    assert check_feasible(inst, res.schedule).ok


def test_a_starved_coflow_the_estimate_leaves_nothing_runs_on_the_nominal_table():
    # one background flow fills the spine link (4) before the coflow arrives at 1: the
    # estimate leaves host 0's spine entry nothing, so the coflow is starved. In the
    # starvation stage (3.0-3.2) it asks MADD's rate on the nominal table (4) and the link
    # is shared max-min with the background (2 each); the next report shows the background
    # at 2, the next SELECT asks 2, and the remaining 7.6 take 3.8 (done at 7.0). Without
    # the nominal table the coflow waited for the background flow (done at 102.2).
    net = Network(SpineLeaf(2, 1, 2, 10.0, 4.0), "ecmp", 0)
    inst = Instance(net, (Coflow.from_flows("a", [(0, 2, 8.0)], release=1.0),))
    bg = Background(release=[0.0], src=[1], dst=[3], size=[400.0])
    for compiled in (True, False):
        res = simulate(inst, "coflourish", {"min_size": 0}, background=bg, compiled=compiled)
        assert res.completion.tolist() == pytest.approx([7.0], rel=1e-9)
        assert res.info["coflourish_starved_on_nominal"] == 1
        assert check_feasible(inst, res.schedule, background=res.background).ok


def test_a_report_that_moves_the_table_reschedules():
    """90 of port 1's downlink is taken from time 0. The first decision sees the fabric;
    the report at 0.2 shows DL_1 = 10, and Y (150 MB on a free path) goes first."""
    load = np.zeros(6)
    load[3 + 1] = 90 * MB
    bg = Background(times=[0.0, 1000.0], load=load[None, :])
    inst = _switch(Coflow.from_flows("X", [(0, 1, 100 * MB)]),
                   Coflow.from_flows("Y", [(0, 2, 150 * MB)]))
    res = simulate(inst, "coflourish", background=bg)
    # X at 10 until 0.2 (2 MB); Y alone at 100 until 1.7; then X at 10 for its 98 MB
    assert res.cct.tolist() == pytest.approx([11.5, 1.7])
    assert res.info["coflourish_selections"]["bandwidth"] == 1
    assert check_feasible(inst, res.schedule, background=res.background).ok
    # with the fabric's capacities X keeps going first at the 10 it gets, and Y gets 20 MB
    # in each of the starvation stages 2.0-2.2, 4.2-4.4, 6.4-6.6, 8.6-8.8; X is done at 10.8
    nominal = simulate(inst, "coflourish", background=bg, estimate="nominal")
    assert nominal.cct.tolist() == pytest.approx([10.8, 11.5])


def test_a_table_per_leaf_sees_the_leaf_uplink_its_hosts_share():
    """Hosts 0 and 1 under leaf 0 send across it through one spine link of 100. Per host,
    each sees its own 100 and both ask for it: the link is shared, 50 each. Per leaf, the
    smaller coflow takes the leaf's 100 and the other waits."""
    net = Network(SpineLeaf(2, 1, 2, 100.0, 100.0))
    inst = Instance(net, (Coflow.from_flows("A", [(0, 2, 100.0)]), Coflow.from_flows("B", [(1, 3, 300.0)])))
    host = simulate(inst, "coflourish", min_size=0)
    assert host.cct.tolist() == pytest.approx([2.0, 4.0])
    leaf = simulate(inst, "coflourish", min_size=0, table="leaf")
    assert leaf.cct.tolist() == pytest.approx([1.0, 4.0])
    assert check_feasible(inst, leaf.schedule).ok


def test_coflourish_refuses_what_it_cannot_read():
    inst = Instance(Network(FatTree(4)), (Coflow.from_flows("a", [(0, 5, 1.0)]),))
    # an InstanceError: the command line names the instance's file with it
    with pytest.raises(InstanceError, match=r"two-layer fabric's feedback .* on a fat-tree fabric"):
        simulate(inst, "coflourish")
    big = _switch(Coflow.from_flows("a", [(0, 1, 1.0)]))
    with pytest.raises(CoflowoptError, match="builds its own estimate"):
        simulate(big, "coflourish", background=Background(share=0.5), knowledge="ideal")
    with pytest.raises(CoflowoptError, match="alpha must lie in"):
        simulate(big, "coflourish", alpha=1.0)
    with pytest.raises(CoflowoptError, match="estimate must be one of"):
        simulate(big, "coflourish", estimate="ideal")


def test_flows_left_without_a_rate_are_served_at_the_next_stage():
    """A coflow partly served by work conservation is not starved, so no starvation stage
    feeds its flows without a rate. Once the flows beside them finished, a run without a
    new SELECT as each CCT-minimisation stage starts waited forever (found by a randomized
    check: one leaf, three hosts, no background, every coflow scheduled)."""
    inst = read(DATA / "coflourish_unserved_flows.json")
    params = {"min_size": 0, "table": "leaf", "feedback_period": 0.5}
    runs = []
    for compiled in (True, False):
        pol = make_policy("coflourish", params)
        decide, calls = pol.decide, [0]

        def counted(view, decide=decide, calls=calls):
            calls[0] += 1  # about 150 decisions; a run that waits forever wakes every 0.5
            if calls[0] > 20_000:
                raise AssertionError(f"no end at t = {view.t}")
            return decide(view)

        pol.decide = counted
        res = simulate(inst, pol, compiled=compiled)
        assert np.all(np.isfinite(res.completion))
        assert check_feasible(inst, res.schedule).ok
        runs.append(res.completion)
    assert runs[0].tolist() == pytest.approx(runs[1].tolist(), rel=1e-9)


def test_a_run_that_would_wake_too_often_is_refused_before_it_starts():
    # the periods are the paper's seconds; an instance whose last coflow cannot end before
    # 1e13 (sizes in bytes over a capacity of 1e-3) would report 5e13 times: refused at
    # once, naming the period and what to do, rather than running for days
    inst = Instance(Fabric.uniform(2, rate=1e-3), (
        Coflow.from_flows("big", [(0, 1, 1e10)]), Coflow.from_flows("small", [(1, 0, 1.0)])))
    # (an InstanceError: the instance's time unit; the command line names its file)
    with pytest.raises(InstanceError, match=r"coflourish would wake every 0.2 \(parameter "
                       r"feedback_period, .*\) until at least 1e\+13, .*: more than 10,000,000 "
                       r"times\. Give the instance's times in seconds or scale the periods"):
        simulate(inst, "coflourish", record=False)
    with pytest.raises(CoflowoptError, match=r"wake every 2 \(parameter select_period"):
        simulate(inst, "coflourish", {"estimate": "nominal"}, record=False)
    # the stages wake the run under the feedback estimate too (it ran for minutes)
    tiny = Instance(Fabric.uniform(2), (Coflow.from_flows("c", [(0, 1, 1.0)]),))
    with pytest.raises(CoflowoptError, match=r"wake every 1e-08 \(parameter select_period"):
        simulate(tiny, "coflourish", {"select_period": 1e-8}, record=False)
    # the periods scaled to the instance's time unit: it runs, and its schedule is feasible
    scaled = {"feedback_period": 2e11, "select_period": 2e12, "starve_period": 2e11,
              "dre_period": 2.5e8}
    res = simulate(inst, "coflourish", scaled)
    assert np.all(np.isfinite(res.completion)) and check_feasible(inst, res.schedule)


@pytest.mark.parametrize("fabric", [Fabric.uniform(3, rate=1.25e8),
                                    Network(SpineLeaf(3, 2, 1, 1.25e8, 1.25e8), "ecmp", 1)])
def test_a_constant_share_is_in_the_switch_reports_before_the_first_coflow(fabric):
    # the reports counted the share only from the first coflow's release on: the selection
    # at 1.0 read links that "carried nothing" and ran on the nominal table (a CCT 161% off
    # in a random search). From 0 on, the registers hold the share by the first coflow, and
    # with every coflow counted large (min_size 0) the feedback run is the nominal run on
    # the fabric that the share leaves
    X = 0.3
    coflows = (Coflow.from_flows("a", [(0, 2, 60 * MB), (1, 2, 50 * MB)], release=1.0),
               Coflow.from_flows("b", [(2, 0, 40 * MB), (0, 1, 5 * MB)], release=1.2),
               Coflow.from_flows("c", [(1, 0, 30 * MB)], release=1.5))
    inst = Instance(fabric, coflows)
    left = Instance(Fabric.uniform(3, rate=1.25e8 * (1 - X)) if isinstance(fabric, Fabric) else
                    Network(SpineLeaf(3, 2, 1, 1.25e8 * (1 - X), 1.25e8 * (1 - X)), "ecmp", 1),
                    coflows)
    params = {"min_size": 0.0, "select_period": 100.0}
    fed = simulate(inst, "coflourish", params, background=Background(share=X))
    nominal = simulate(left, "coflourish", {**params, "estimate": "nominal"})
    assert fed.cct.tolist() == pytest.approx(nominal.cct.tolist(), rel=1e-9)
