"""Background traffic the scheduler cannot see: the model, the simulation under it, the check."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coflowopt import Coflow, Fabric, Instance, LinkLoad, check_feasible
from coflowopt.errors import CoflowoptError, InputError
from coflowopt.fabric import (
    CDFS,
    Background,
    FatTree,
    Network,
    PoissonFlows,
    SpineLeaf,
    background_from_json,
    coflows_to_background,
    load_cdf,
    place,
)
from coflowopt.sim import POLICIES, simulate
from tests.strategies import OWN_ESTIMATE, instances, network_instances, policy_runs_on

# ------------------------------------------------------------------ hand-computed cases


def _one_link(*coflows: Coflow) -> Instance:
    return Instance(Fabric.uniform(1, 1.0), coflows)


@pytest.mark.parametrize("name", ["fair", "varys", "sincronia", "fifo", "aalo"])
def test_a_background_flow_shares_the_link_max_min_whatever_the_scheduler_asks(name):
    # one coflow flow of 1 and a background flow of 0.5 on a link of 1: both get 0.5 until the
    # background flow is done at 1, then the coflow flow has the link: 0.5 left, done at 1.5
    inst = _one_link(Coflow.from_flows("a", [(0, 0, 1.0)]))
    bg = Background(release=[0.0], src=[0], dst=[0], size=[0.5])
    for knowledge in ("nominal", "ideal"):
        res = simulate(inst, name, background=bg, knowledge=knowledge)
        assert res.completion[0] == pytest.approx(1.5, rel=1e-12)
        assert check_feasible(inst, res.schedule, background=res.background).ok
        assert res.info["background"]["background_flows_completed"] == 1


def test_background_flows_run_alone_before_the_first_coflow_and_between_coflows():
    # background of 1 from 0; the coflow (1) arrives at 0.5: 0.5 of background is left, shared
    # 0.5/0.5 until 1.5, then the coflow's remaining 0.5 at full rate: done at 2
    inst = _one_link(Coflow.from_flows("a", [(0, 0, 1.0)], release=0.5))
    bg = Background(release=[0.0], src=[0], dst=[0], size=[1.0])
    res = simulate(inst, "fair", background=bg)
    assert res.completion[0] == pytest.approx(2.0, rel=1e-12)
    # and a background flow that arrives while no coflow is admitted, finishing in the gap
    inst = _one_link(Coflow.from_flows("a", [(0, 0, 1.0)]),
                     Coflow.from_flows("b", [(0, 0, 1.0)], release=3.0))
    bg = Background(release=[1.5, 3.5], src=[0, 0], dst=[0, 0], size=[1.0, 0.25])
    res = simulate(inst, "fair", background=bg)
    # a: alone, done at 1; the first background flow runs alone 1.5..2.5; b from 3, shares
    # with the second from 3.5 (0.5 each) until it is done at 4, b then alone: 0.5 + 0.25 by 4,
    # 0.25 left at full rate: done at 4.25
    assert res.completion.tolist() == pytest.approx([1.0, 4.25], rel=1e-12)
    assert res.info["background"]["background_flows_completed"] == 2


def test_an_inelastic_load_over_time_takes_its_share_and_ideal_knowledge_sees_it():
    inst = _one_link(Coflow.from_flows("a", [(0, 0, 2.0)]))
    # the link has 1; the background takes 0.5 during [0, 1) and 0.75 during [1, 3)
    bg = Background(times=[0.0, 1.0, 3.0], load=[[0.5, 0.0], [0.75, 0.0]])
    # 0.5 by 1, then 0.25 per unit: 2 is reached at 1 + 1.5 / 0.25 = 7 > 3, so: 0.5 + 0.5 by 3,
    # then the whole link: done at 4
    for name in ("fair", "varys"):
        for knowledge in ("nominal", "ideal"):
            res = simulate(inst, name, background=bg, knowledge=knowledge)
            assert res.completion[0] == pytest.approx(4.0, rel=1e-12), (name, knowledge)
            assert check_feasible(inst, res.schedule, background=res.background).ok


# ------------------------------------------------------------------ properties


def _scaled(inst: Instance, factor: float) -> Instance:
    fab = inst.fabric
    if isinstance(fab, Fabric):
        return Instance(Fabric(fab.ingress * factor, fab.egress * factor), inst.coflows, inst.name)
    topo = fab.topology
    if isinstance(topo, SpineLeaf):
        scaled = SpineLeaf(topo.leaves, topo.spines, topo.hosts_per_leaf, topo.host_rate * factor,
                           topo.spine_rate * factor)
    else:
        scaled = FatTree(topo.k, topo.host_rate * factor, topo.link_rate * factor)
    return Instance(Network(scaled, fab.routing, fab.seed), inst.coflows, inst.name)


@pytest.mark.parametrize("name", sorted(set(POLICIES) - set(OWN_ESTIMATE)))
@settings(max_examples=8, deadline=None)
@given(data=st.data(), share=st.sampled_from([0.5, 0.75]))
def test_ideal_knowledge_of_a_constant_share_is_the_fabric_with_that_share_removed(name, data, share):
    """A policy that knows what the background leaves, on a fabric whose links lose a
    constant share, runs as on the fabric with that much less capacity."""
    dl = name == "varys-deadline"  # (its admissions need deadlines to decide anything)
    inst = data.draw(st.one_of(instances(deadlines=dl), network_instances(deadlines=dl)))
    if dl:
        assume(np.isfinite(inst.deadline).any())
    res = simulate(inst, name, background=Background(share=share), knowledge="ideal")
    want = simulate(_scaled(inst, 1 - share), name, compiled=False)
    assert np.allclose(res.completion, want.completion, rtol=1e-9, atol=1e-12)
    assert check_feasible(inst, res.schedule, background=res.background).ok


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_caps_that_fit_are_what_max_min_gives(data):
    """The network hands out the caps unchanged when they fit on every link
    (``UnderBackground._with_background``'s shortcut): max-min, by progressive filling,
    gives that array, to the bit where every link has room left and within an ulp where
    a link is filled exactly (the filling's level arithmetic)."""
    import scipy.sparse as sp

    from coflowopt.alloc import max_min

    L = data.draw(st.integers(1, 8))
    links = data.draw(st.lists(st.lists(st.integers(0, L - 1), min_size=1, max_size=4, unique=True),
                               min_size=1, max_size=30))
    F = len(links)
    usage = sp.csr_array((np.ones(sum(map(len, links))), np.concatenate(links),
                          np.cumsum([0, *map(len, links)])), shape=(F, L))
    scale = data.draw(st.sampled_from([1e-3, 1.0, 1.25e8]))
    caps = np.array(data.draw(st.lists(st.floats(0.0, 1.0), min_size=F, max_size=F))) * scale
    slack = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.0, 1e-15, 0.5]), min_size=L,
                                        max_size=L)))
    load = usage.T @ caps
    avail = load * (1 + slack) + np.where(load == 0, scale, 0.0)
    assume(np.all(load <= avail))
    x = max_min(usage, avail, upper=caps)
    np.testing.assert_allclose(x, caps, rtol=1e-15, atol=0)
    if np.all(slack == 0.5):
        assert np.array_equal(x, caps)


@st.composite
def _backgrounds(draw: st.DrawFn, inst: Instance) -> Background:
    cap = inst.fabric.capacity
    H = inst.num_ports if isinstance(inst.fabric, Fabric) else inst.fabric.num_ports
    share = draw(st.sampled_from([0.0, 0.1, 0.5]))
    times = np.zeros(0)
    load = np.zeros((0, cap.size))
    if draw(st.booleans()):
        n = draw(st.integers(1, 3))
        times = np.cumsum([0.0, *draw(st.lists(st.floats(0.1, 2.0), min_size=n, max_size=n))])
        frac = np.array(draw(st.lists(st.sampled_from([0.0, 0.2, 0.4]), min_size=n * cap.size,
                                      max_size=n * cap.size))).reshape(n, cap.size)
        load = frac * cap
    k = draw(st.integers(0, 4))
    return Background(
        share, times, load,
        release=draw(st.lists(st.floats(0, 3), min_size=k, max_size=k)),
        src=draw(st.lists(st.integers(0, H - 1), min_size=k, max_size=k)),
        dst=draw(st.lists(st.integers(0, H - 1), min_size=k, max_size=k)),
        size=draw(st.lists(st.floats(0.1, 2.0), min_size=k, max_size=k)))


@pytest.mark.parametrize("name", sorted(POLICIES))
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_every_policy_under_background_is_feasible_with_the_background_counted(name, data):
    inst = data.draw(st.one_of(instances(deadlines=True), network_instances(deadlines=True)))
    assume(policy_runs_on(name, inst))
    bg = data.draw(_backgrounds(inst))
    knowledge = "nominal" if name in OWN_ESTIMATE else data.draw(st.sampled_from(["nominal", "ideal"]))
    res = simulate(inst, name, background=bg, knowledge=knowledge)
    report = check_feasible(inst, res.schedule, background=res.background)
    assert report.ok, report
    assert np.all(np.isfinite(res.cct))


def test_the_check_counts_the_background_on_each_link():
    inst = _one_link(Coflow.from_flows("a", [(0, 0, 1.0)]))
    sched = simulate(inst, "fair", compiled=False).schedule  # the link at 1 during [0, 1)
    assert check_feasible(inst, sched).ok
    half = LinkLoad([0], [0.25], [0.5], [0.5])  # half the uplink during [0.25, 0.5)
    report = check_feasible(inst, sched, background=half)
    assert not report.ok
    (v,) = report.violations
    assert v.kind == "capacity" and report.counts["capacity"] == 1
    assert v.link == 0 and v.interval == pytest.approx((0.25, 0.5)) and v.excess == pytest.approx(0.5)
    assert check_feasible(inst, sched, background=LinkLoad([0], [1.0], [2.0], [1.0])).ok  # after
    with pytest.raises(CoflowoptError, match="names link 7; the fabric has 2 links"):
        check_feasible(inst, sched, background=LinkLoad([7], [0.0], [1.0], [0.1]))


# ------------------------------------------------------------------ Poisson flows and CDFs


def test_shipped_cdfs_load_and_their_means_are_exact(tmp_path):
    for name in CDFS:
        cdf = load_cdf(name)
        assert cdf.prob[-1] == 1.0 and cdf.size[-1] > cdf.size[0]
    path = tmp_path / "tiny.csv"
    path.write_text("# a comment\nsize,cdf\n0 0\n10 50\n20 100\n")  # percent, spaces
    cdf = load_cdf(str(path), unit=2.0)
    assert cdf.mean == pytest.approx(2.0 * (0.5 * 5 + 0.5 * 15))
    draws = cdf.sample(np.random.default_rng(0), 200_000)
    assert draws.mean() == pytest.approx(cdf.mean, rel=0.01)


def test_bad_cdfs_name_the_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("size,cdf\n0,0\n10,0.6\n5,0.7\n20,1\n")
    with pytest.raises(InputError, match=r"bad.csv:4: sizes and probabilities must not decrease"):
        load_cdf(str(path))
    path.write_text("0,0\n10,0.9\n")
    with pytest.raises(InputError, match="must end at 1"):
        load_cdf(str(path))
    with pytest.raises(InputError, match="give a file or one of web-search, data-mining"):
        load_cdf("nonesuch")
    path.write_bytes(b"\xff0,0\n10,1\n")
    with pytest.raises(InputError, match=r"bad.csv: cannot read the flow-size CDF \(not UTF-8 text"):
        load_cdf(str(path))
    # sizes below the smallest normal float (a size unit far too small): the simulator
    # would refuse every flow, and the arrival rate over their mean overflows
    with pytest.raises(InputError, match=r"flow-size CDF 'web-search': its largest size, .*, is "
                       r"below 2.23e-308, the smallest normal float \(is the size unit right\?\)"):
        load_cdf("web-search", unit=1e-320)
    for bad in (1.0, 1e30, 0.0, -0.5, math.nan, True):
        with pytest.raises(InputError, match="the background load must be a number above 0 and "
                           "below 1"):
            PoissonFlows(bad, load_cdf("web-search"))
    with pytest.raises(InputError, match="the background start must be a finite number >= 0, got -1"):
        PoissonFlows(0.5, load_cdf("web-search"), start=-1)


def test_poisson_arrivals_begin_at_their_start():
    # start=T shifts the same draws by T, from the command line as from Python
    from coflowopt.fabric.background import parse_background

    cdf = load_cdf("web-search")
    first = next(PoissonFlows(0.3, cdf, seed=2).arrivals(8, 8.0))
    later = next(PoissonFlows(0.3, cdf, seed=2, start=5.0).arrivals(8, 8.0))
    assert later[0][0] > 5.0
    np.testing.assert_allclose(later[0], first[0] + 5.0, rtol=1e-12)
    for a, b in zip(first[1:], later[1:], strict=True):
        np.testing.assert_array_equal(a, b)
    bg = parse_background("poisson:load=0.3,seed=2,start=5", np.ones(16),
                          [f"l{i}" for i in range(16)], num_hosts=8)
    assert (bg.poisson.load, bg.poisson.seed, bg.poisson.start) == (0.3, 2, 5.0)


def test_background_files_are_read_as_strictly_as_instances(tmp_path):
    from coflowopt.fabric.background import parse_background

    cap = np.ones(4)
    names = ["ingress port 0", "ingress port 1", "egress port 0", "egress port 1"]
    path = tmp_path / "bg.json"
    cases = [
        (b'{"share": 0.9, "share": 0.1}',
         r"bg.json: at \$.share: invalid JSON: an object repeats the key 'share'"),
        (b"[" * 3000 + b"]" * 3000, r"bg.json: invalid JSON: nested too deeply"),
        (b'{"share": "\xff"}', r"bg.json: not UTF-8 text"),
        (b'{"share": 0.1,}', r"bg.json:1: invalid JSON"),
    ]
    for text, pattern in cases:
        path.write_bytes(text)
        with pytest.raises(InputError, match=pattern):
            parse_background(f"file:{path}", cap, names)
    path.write_text('{"flows": [[0, 1, 9, 2.0]]}')
    with pytest.raises(InputError, match=r"bg.json: at \$.flows\[0\]\[2\]: host 9 does not exist "
                       r"\(hosts 0..1\)"):
        parse_background(f"file:{path}", cap, names, num_hosts=2)
    with pytest.raises(InputError, match=r"bg\.json: no such file"):
        parse_background(f"file:{tmp_path / 'none' / 'bg.json'}", cap, names)
    for spec, message in [("poisson:load=0.3,seed=", "seed must be an integer, got ''"),
                          ("poisson:load=0x10", "load must be a number, got '0x10'"),
                          ("poisson:load=0.3,load=0.5", "load is given twice"),
                          # these named the value but not the option
                          ("poisson:load=0.3,unit=nan",
                           r"the size unit must be a finite number > 0, got nan"),
                          ("poisson:load=2", "the background load must be a number above 0")]:
        with pytest.raises(InputError, match=f"--background poisson: {message}"):
            parse_background(spec, cap, names)
    with pytest.raises(InputError, match=r"--background share: the background share must be"):
        parse_background("share:1.5", cap, names)
    with pytest.raises(InputError, match=r"--background file: .*bg\.json: no such file"):
        parse_background(f"file:{tmp_path / 'none' / 'bg.json'}", cap, names)


def test_a_link_named_twice_in_a_background_load_is_refused():
    # by its index and by its name: whichever came last silently set its load
    from coflowopt.fabric import background_from_json

    cap = np.ones(4)
    names = ["ingress port 0", "ingress port 1", "egress port 0", "egress port 1"]
    both = {"load": {"times": [0, 1], "links": {"0": [0.2], "ingress port 0": [0.3]}}}
    with pytest.raises(InputError, match=r"at \$.load.links\['ingress port 0'\]: link 'ingress "
                       r"port 0' is '0' again \(link 0\)"):
        background_from_json(both, cap, names)
    # a dict built in Python may hold NumPy's numbers (they were refused as "not a number")
    one = {"load": {"times": [np.int64(0), 1.0], "links": {"0": [np.float64(0.2)]}}}
    assert background_from_json(one, cap, names).load[0, 0] == 0.2


def test_poisson_flows_depend_on_the_seed_only_and_offer_the_load():
    cdf = load_cdf("web-search")
    p = PoissonFlows(0.25, cdf, seed=4)
    a = next(p.arrivals(10, 10 * 1.25e8))
    b = next(PoissonFlows(0.25, cdf, seed=4).arrivals(10, 10 * 1.25e8))
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)
    release, src, dst, size = a
    assert np.all(np.diff(release) > 0) and np.all(src != dst)
    assert 0 <= src.min() and max(src.max(), dst.max()) <= 9
    # arrivals at load * capacity / mean size per second
    assert size.size / release[-1] * cdf.mean / (10 * 1.25e8) == pytest.approx(0.25, rel=0.1)


def test_a_simulation_under_poisson_background_is_deterministic():
    inst = Instance(Fabric.uniform(3, 1.0), (
        Coflow.from_flows("a", [(0, 1, 2.0), (1, 2, 1.0)]),
        Coflow.from_flows("b", [(2, 0, 1.0)], release=0.5)))
    cdf = load_cdf("web-search", unit=1e-7)  # a mean of 0.17 units
    bg = Background(poisson=PoissonFlows(0.3, cdf, seed=2))
    runs = [simulate(inst, "varys", background=bg) for _ in range(2)]
    assert np.array_equal(runs[0].completion, runs[1].completion)
    assert runs[0].info["background"]["background_flows_arrived"] > 0
    assert check_feasible(inst, runs[0].schedule, background=runs[0].background).ok
    other = simulate(inst, "varys", background=Background(poisson=PoissonFlows(0.3, cdf, seed=3)))
    assert not np.array_equal(other.completion, runs[0].completion)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_policy_whose_last_running_flow_ends_is_asked_again_under_background(compiled):
    """Varys decides at coflow arrivals and completions. c arrives at 0.5 and goes before a
    on the link they share; at 1.5 c's flow there is done, but c is held until b is done (c
    finishes before b), and b starts only after a. Alone, the engine sees no flow running
    with work left and asks Varys again (a stall): a resumes at 1.5. Under background
    flows, their events kept the engine busy, so the stall went unseen: a waited for the
    background's end, and under a Poisson background forever (found by a randomized
    check on a k = 4 fat-tree). Here the background runs on ports no coflow uses, so the
    coflows' times are exactly those without it."""
    inst = Instance(Fabric.uniform(4, 1.0), (
        Coflow.from_flows("a", [(0, 1, 2.0)]),
        Coflow.from_flows("b", [(2, 3, 1.0)], starts_after=("a",)),
        Coflow.from_flows("c", [(0, 1, 1.0), (2, 1, 0.5)], release=0.5, finishes_before=("b",))))
    alone = simulate(inst, "varys")
    assert alone.flow_completion.tolist() == pytest.approx([3.0, 4.0, 1.5, 4.5])
    n = 200  # a flow of 0.1 from port 3 to port 2 every 0.5, until 100
    bg = Background(release=0.5 * np.arange(n), src=[3] * n, dst=[2] * n, size=[0.1] * n)
    res = simulate(inst, "varys", background=bg, compiled=compiled)
    np.testing.assert_array_equal(res.flow_completion, alone.flow_completion)
    assert check_feasible(inst, res.schedule, background=res.background).ok


# ------------------------------------------------------------------ building backgrounds


def test_coflows_turned_into_background_keep_every_flow():
    inst = Instance(Fabric.uniform(3, 1.0), tuple(
        Coflow.from_flows(f"c{k}", [(k % 3, (k + 1) % 3, 1.0 + k), (0, 2, 0.5)], release=0.1 * k)
        for k in range(8)))
    rest, bg = coflows_to_background(inst, 0.4, seed=1)
    assert rest.num_flows + bg.size.size == inst.num_flows
    assert float(bg.size.sum()) <= 0.4 * float(inst.flow_size.sum())
    assert float(bg.size.sum()) + float(rest.flow_size.sum()) == pytest.approx(float(inst.flow_size.sum()))
    taken = sorted(set(inst.ids) - set(rest.ids))
    pos = [inst.ids.index(c) for c in taken]
    want = np.sort(np.concatenate([inst.flow_release[inst.ptr[k]:inst.ptr[k + 1]] for k in pos]))
    assert np.array_equal(np.sort(bg.release), want)
    res = simulate(rest, "varys", background=bg)
    assert check_feasible(rest, res.schedule, background=res.background).ok


def test_a_share_of_the_coflows_by_count():
    # one coflow of 90 bytes and ten of 1: by bytes a share of 0.05 takes the small ones
    # met before the large one in the random order; by count it takes 5 of the 11 (round(0.55))
    inst = Instance(Fabric.uniform(2, 1.0), tuple(
        Coflow.from_flows(f"c{k}", [(0, 1, 90.0 if k == 0 else 1.0)]) for k in range(11)))
    for seed in range(5):
        rest, bg = coflows_to_background(inst, 0.05, seed=seed)
        assert bg.size.sum() <= 0.05 * 100 and "c0" in rest.ids
        rest, bg = coflows_to_background(inst, 0.5, seed=seed, by="coflows")
        assert bg.size.size == 6 and rest.num_coflows == 5
    with pytest.raises(CoflowoptError, match="by must be 'bytes' or 'coflows'"):
        coflows_to_background(inst, 0.5, by="count")


def test_bad_backgrounds_name_the_json_path_and_value():
    cap = np.ones(4)
    names = ["ingress port 0", "ingress port 1", "egress port 0", "egress port 1"]
    cases = [
        ({"share": 1.0}, r"at \$.share: the share must be below 1"),
        ({"shares": 0.1}, r"at \$.shares: unknown key"),
        ({"load": {"times": [0, 1], "links": {"egress port 9": [0.1]}}},
         r"\$.load.links\['egress port 9'\]"),
        ({"load": {"times": [0, 1], "links": {"1": [1.0]}}},
         r"\$.load.links\['1'\]\[0\]: .* not below its capacity"),
        ({"load": {"times": [1, 0], "links": {}}}, r"\$.load.times\[1\]: times must increase"),
        ({"flows": [[0, 0, 1, -2]]}, r"\$.flows\[0\]\[3\]: expected a finite number > 0, got -2"),
        ({"flows": [[0, 0, 1, 1e-320]]}, r"\$.flows\[0\]\[3\]: .* at least 2.23e-308, the smallest"),
        ({"flows": [[-5, 0, 1, 1.0]]}, r"\$.flows\[0\]\[0\]: expected a finite number >= 0, got -5"),
        ({"share": 10**400}, r"\$.share: .*, got 100000000000...000000 \(401 digits\)"),
        ({"load": {"times": [-1, 1], "links": {}}}, r"\$.load.times\[0\]: expected a finite number >= 0"),
        # a load of 1 or more: flows arrive faster than the uplinks serve, for ever
        ({"poisson": {"load": 1e30}}, r"\$.poisson.load: expected a finite number > 0 and below 1"),
        ({"poisson": {"load": -1}}, r"\$.poisson.load: expected a finite number > 0 and below 1"),
        ({"poisson": {"load": 0.5, "unit": 0}}, r"\$.poisson.unit: expected a finite number > 0"),
        ({"poisson": {"load": 0.5, "unit": 1e-320}}, r"bg.json: at \$.poisson.unit: expected a "
         r"finite number of at least 2.23e-308, the smallest normal float, got 1e-320"),
        ({"poisson": {"load": 0.5, "start": -1}}, r"\$.poisson.start: expected a finite number >= 0"),
        ({"flows": [[0, "h1", 1, 2]]}, r"\$.flows\[0\]\[1\]: a host is an integer"),
        ({"poisson": {"load": 0.2, "seed": -1}}, r"\$.poisson.seed"),
        # each below 1, together not: the run never ended
        ({"share": 0.9, "poisson": {"load": 0.4}},
         r"bg.json: at \$.poisson.load: the Poisson background's load 0.4 and the constant share "
         r"0.9 add up to 1.3, not below 1"),
    ]
    # a CDF file of its own named only itself
    cases.append(({"poisson": {"load": 0.2, "cdf": "/nonexistent/sizes.csv"}},
                  r"bg.json: at \$.poisson.cdf: /nonexistent/sizes.csv: cannot read"))
    for obj, pattern in cases:
        with pytest.raises(InputError, match=pattern):
            background_from_json(obj, cap, names, path="bg.json")
    obj = {"share": 0.1, "load": {"times": [0, 1, 2], "links": {"egress port 1": [0.2, 0.0]}},
           "flows": [[0.5, 0, 1, 2.0]]}
    bg = background_from_json(obj, cap, names)
    assert bg.load[0, 3] == 0.2 and bg.size.tolist() == [2.0]
    with pytest.raises(InputError, match=r"destination host 5 does not exist \(hosts 0..1\)"):
        Background(release=[0.0], src=[0], dst=[5], size=[1.0]).check(cap, 2)
    with pytest.raises(InputError, match="add up to 1, not below 1"):
        Background(share=0.5, poisson=PoissonFlows(0.5, load_cdf("web-search")))


def test_the_cli_runs_under_background_and_refuses_bad_ones(tmp_path, capsys):
    from coflowopt.cli import main

    inst = tmp_path / "i.json"
    assert main(["generate", "synthetic", "--coflows", "4", "--ports", "4", "--max-width", "8",
                 "--seed", "1", "-o", str(inst)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(inst), "-s", "varys", "--background", "share:0.5",
                 "--knowledge", "ideal", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["background"]["knowledge"] == "ideal"
    assert out["background"]["background"] == "0.5 of every link"
    bad = tmp_path / "bg.json"
    bad.write_text('{"load": {"times": [0, 1], "links": {"99": [1]}}}')
    for extra, message in (
        (["--background", f"file:{bad}"], f"{bad}: at $.load.links['99']: no link '99'"),
        (["--background", "share:1.5"], "the background share must be a number in [0, 1), got 1.5"),
        (["--background", "poisson:rate=3"], "unknown option 'rate=3'"),
        (["--knowledge", "ideal"], "--knowledge goes with --background"),
    ):
        code = main(["compare", str(inst), *extra])
        err = capsys.readouterr().err
        assert code == 2, err
        assert message in err and "Traceback" not in err


@pytest.mark.parametrize("fabric", [
    Network(SpineLeaf(3, 2, 2, 1.0, 0.3), "ecmp", 0),
    Network(SpineLeaf(4, 1, 1, 2.0, 0.5), "spray"),
    Network(SpineLeaf(2, 3, 3, 1.0, 1.0), "ecmp", 3),
    Network(FatTree(4, 1.0, 0.4), "ecmp", 0),
    Network(FatTree(4, 1.0), "spray"),
    Fabric(np.array([1.0, 2.0, 0.5]), np.array([1.0, 1.0, 3.0])),
    "graph",  # the first spine-leaf fabric as a graph: every pair's routes enumerated
])
@pytest.mark.parametrize("share", [0.0, 0.3])
def test_a_poisson_load_that_a_link_cannot_carry_is_refused(fabric, share):
    # on a 10:1 spine-leaf fabric any Poisson load of 0.1 or more piles up on the spine
    # links without end, and the run never ended. The closed forms against every pair's
    # routes: the refusal starts at the load where the first link's expected load reaches
    # what the share leaves of it (the host links: where share + load reaches 1)
    from coflowopt.fabric import GraphTopology
    from coflowopt.fabric.background import poisson_overload

    if fabric == "graph":
        t = SpineLeaf(3, 2, 2, 1.0, 0.3)
        names = [t.node_name(v) for v in range(t.num_nodes)]
        links = tuple((names[int(a)], names[int(b)], float(c))
                      for a, b, c in zip(t.tail, t.head, t.capacity, strict=True))
        fabric = Network(GraphTopology(tuple(names), tuple(names[: t.num_hosts]), links), "ecmp", 0)
    H = fabric.num_ports if isinstance(fabric, Fabric) else fabric.topology.num_hosts
    src = np.repeat(np.arange(H), H - 1)
    dst = np.concatenate([np.delete(np.arange(H), i) for i in range(H)])
    if isinstance(fabric, Fabric):
        routes = Instance(fabric, (Coflow("c", src, dst, np.ones(src.size)),)).routes
    else:
        routes = Network(fabric.topology, "spray").routes(src, dst)
    per_link = float(np.sum(fabric.ingress)) / (H * (H - 1)) * np.asarray(routes.sum(axis=0)).ravel()
    limit = float(np.min((1 - share) * np.asarray(fabric.capacity)[per_link > 0] / per_link[per_link > 0]))
    for load in np.linspace(0.02, 0.98, 49):
        if abs(load - limit) < 1e-6 * limit:
            continue
        refused = bool(poisson_overload(fabric, share, float(load))) or share + load >= 1
        assert refused == (load > limit), (load, limit)
    inst = Instance(fabric, (Coflow("a", [0], [1], [1.0]),))
    if limit < 1 - share:
        with pytest.raises(InputError, match="pile up without end"):
            simulate(inst, "varys", background=Background(
                share=share, poisson=PoissonFlows(min(limit * 1.01, 0.99 - share), load_cdf("web-search"))))


@pytest.mark.parametrize("name, knowledge", [("varys", "nominal"), ("varys", "ideal"), ("fair", "nominal")])
def test_a_constant_share_is_recorded_as_one_piece_per_link(name, knowledge):
    """Without background flows the load a constant share puts on the links does not
    change from event to event, and the result records it once per link (not once per
    event and link: an hour of a trace has millions of events)."""
    from coflowopt.io.generate import synthetic

    inst = place(synthetic(num_coflows=6, num_ports=4, seed=3), "spine-leaf", {"spines": 2, "oversub": 2})
    res = simulate(inst, name, background=Background(share=0.3), knowledge=knowledge)
    bg = res.background
    cap = inst.fabric.capacity
    assert sorted(bg.link.tolist()) == list(range(cap.size))
    assert np.unique(bg.t0).size == 1 and np.unique(bg.t1).size == 1
    assert bg.t0[0] == inst.release.min() and bg.t1[0] == pytest.approx(res.completion.max(), rel=1e-12)
    np.testing.assert_allclose(bg.load, 0.3 * cap[bg.link], rtol=1e-15)
    assert check_feasible(inst, res.schedule, background=bg).ok
