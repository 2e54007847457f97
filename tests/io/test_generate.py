"""Generators: reproducible, shaped as asked, at the asked load."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import BINS, MB, InstanceError
from coflowopt.io import generate as gen

from .test_formats import TRACE


def test_synthetic_is_reproducible_and_respects_class_ranges():
    a = gen.synthetic(300, 20, load=None, seed=7)
    b = gen.synthetic(300, 20, load=None, seed=7)
    assert a == b
    assert a != gen.synthetic(300, 20, load=None, seed=8)
    assert np.all(a.release == 0)
    for k in range(a.num_coflows):
        w, length = int(a.width[k]), float(a.length[k])
        assert 1 <= w <= 1000
        assert 1 * MB <= length <= 1024 * MB
        narrow, short = w <= 50, length < 5 * MB
        # every coflow lands in the bin of the class that produced it
        assert (w >= 51) or narrow
        assert short or length >= 5 * MB
    counts = a.bin_counts()
    # 300 draws with shares 0.52/0.16/0.15/0.17: well within 5 sigma of each share
    for name, share in (("SN", 0.52), ("LN", 0.16), ("SW", 0.15), ("LW", 0.17)):
        sigma = np.sqrt(300 * share * (1 - share))
        assert abs(counts[name] - 300 * share) < 5 * sigma


def test_custom_classes_and_their_validation():
    only = (gen.WorkloadClass("tiny", 1.0, (2, 2), (10.0, 10.0), min_share=1.0),)
    inst = gen.synthetic(5, 3, classes=only, load=None, port_rate=1.0, seed=1)
    assert inst.width.tolist() == [2] * 5
    assert np.all(inst.flow_size == 10.0)
    with pytest.raises(InstanceError, match="width range"):
        gen.WorkloadClass("bad", 1.0, (0, 3), (1.0, 2.0))
    with pytest.raises(InstanceError, match="positive fraction"):
        gen.synthetic(3, 3, classes=(gen.WorkloadClass("z", 0.0, (1, 1), (1.0, 1.0)),))
    with pytest.raises(InstanceError, match="number of coflows must be a positive integer, got True"):
        gen.synthetic(True, 3)  # not one coflow
    with pytest.raises(InstanceError, match=r"number of ports must be an integer in 1\.\.[0-9,]+, got True"):
        gen.synthetic(3, True)


def test_poisson_arrivals_realise_the_load():
    base = gen.synthetic(4000, 30, load=None, seed=3)
    timed = gen.poisson_arrivals(base, 0.4, seed=5)
    assert timed.release[0] == 0 and np.all(np.diff(timed.release) >= 0)
    assert gen.offered_load(timed) == pytest.approx(0.4, rel=1e-12)
    assert timed == gen.poisson_arrivals(base, 0.4, seed=5)
    # the gaps are the seed's exponential draws, scaled together: the same seed at another
    # load gives the same arrival pattern
    other = gen.poisson_arrivals(base, 0.8, seed=5)
    assert np.allclose(other.release, timed.release / 2, rtol=1e-12, atol=0)
    # Poisson: the gaps look exponential (mean = standard deviation), at 4,000 coflows
    gaps = np.diff(timed.release)
    assert np.std(gaps) == pytest.approx(np.mean(gaps), rel=0.1)


def test_batch_arrivals_share_release_times():
    base = gen.synthetic(25, 10, load=None, seed=2)
    fixed = gen.batch_arrivals(base, 10, interval=3.0)
    assert fixed.release.tolist() == [0.0] * 10 + [3.0] * 10 + [6.0] * 5
    timed = gen.batch_arrivals(base, 10, load=0.5, seed=1)
    assert len(set(timed.release.tolist())) == 3
    assert gen.offered_load(timed) == pytest.approx(0.5, rel=1e-12)
    with pytest.raises(InstanceError, match="exactly one"):
        gen.batch_arrivals(base, 10)


def test_a_load_needs_two_coflows_or_batches():
    one = gen.synthetic(1, 3, seed=1)
    assert one.release.tolist() == [0.0]
    with pytest.raises(InstanceError, match=r"a load needs at least 2 coflows .*, got 1"):
        gen.synthetic(1, 3, load=0.5)
    with pytest.raises(InstanceError, match="a load needs at least 2 coflows"):
        gen.poisson_arrivals(one, 0.5)
    five = gen.synthetic(5, 3, seed=1)
    with pytest.raises(InstanceError, match=r"at least 2 batches \(5 coflows in batches of 5\)"):
        gen.batch_arrivals(five, 10, load=0.5)
    assert np.all(gen.batch_arrivals(five, 10, interval=1.0).release == 0.0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InstanceError, match="load must be finite and > 0"):
            gen.synthetic(5, 3, load=bad)


@settings(max_examples=60, deadline=None)
@given(
    coflows=st.integers(2, 120),
    ports=st.integers(1, 12),
    load=st.floats(0.01, 5.0),
    seed=st.integers(0, 2**32 - 1),
    shape=st.sampled_from(gen.SHAPES),
    max_width=st.integers(1, 80),
)
def test_synthetic_realises_the_asked_load(coflows, ports, load, seed, shape, max_width):
    # what `coflowopt info` prints is what --load asked, for any number of coflows >= 2
    # (10% is the promise; the arrivals are scaled to it, so it holds to rounding)
    classes = gen.facebook_bins(max_width=max_width)
    inst = gen.synthetic(coflows, ports, classes=classes, load=load, seed=seed, shape=shape)
    assert gen.offered_load(inst) == pytest.approx(load, rel=1e-9)
    assert inst.release.min() == 0.0 and np.all(np.diff(inst.release) >= 0)
    assert inst == gen.synthetic(coflows, ports, classes=classes, load=load, seed=seed, shape=shape)


def test_rescale_keeps_order_and_reaches_the_load():
    from coflowopt import io

    fb = io.read(TRACE)
    assert gen.offered_load(fb) == pytest.approx(0.548, abs=0.001)
    busy = gen.rescale_load(fb, 0.9)
    assert gen.offered_load(busy) == pytest.approx(0.9)
    assert np.array_equal(np.argsort(busy.release, kind="stable"), np.argsort(fb.release, kind="stable"))
    with pytest.raises(InstanceError, match="all arrive at once"):
        gen.rescale_load(fb.with_releases(0.0), 0.5)


def test_varys_deadlines_follow_isolation_times():
    base = gen.synthetic(50, 10, load=0.5, seed=4)
    with_dl = gen.deadlines_from_isolation(base, slack=1.0, minimum=0.2, seed=9)
    rel = with_dl.deadline - with_dl.release
    assert np.all(rel >= np.maximum(base.gamma, 0.2) - 1e-12)
    assert np.all(rel <= np.maximum(2 * base.gamma, 0.2) + 1e-12)


# ---- generator details: deadlines, extreme loads, shuffles, bins


def test_deadlines_of_delayed_flows_leave_room_for_the_delay():
    # a flow available 0.32 after its release needs 0.16 more alone; its deadline was set
    # from load / capacity alone (0.16 x (1 + U)) and could not be met even in isolation
    from coflowopt import Coflow, Fabric, Instance
    from coflowopt.bounds.simple import earliest_completion

    inst = Instance(Fabric.uniform(2, 2e7), (
        Coflow("a", [0], [1], [3.2e6], release=1.0, delay=[0.32]),
        Coflow("b", [1], [0], [3.2e6])))
    out = gen.deadlines_from_isolation(inst, slack=0.5, minimum=0.0, seed=1)
    alone = earliest_completion(inst) - inst.release
    assert alone[0] == pytest.approx(0.48) and alone[1] == pytest.approx(0.16)
    assert np.all(out.deadline - out.release >= alone * (1 - 1e-12))
    assert np.all(out.deadline - out.release <= alone * 1.5 * (1 + 1e-12))


def test_deadlines_of_multi_wave_coflows_use_their_minimum_makespan_alone():
    # earliest_completion is only a lower bound with several waves: 5 here, but
    # the coflow needs 5.5 alone (two flows into egress 0/1 after a delay of 2), and a
    # deadline of 5.43 could not be met
    from coflowopt import Coflow, Fabric, Instance, solve

    a = Coflow("a", [2, 1, 0, 0], [1, 0, 0, 1], [2.0, 2.0, 2.0, 3.0], delay=[2.0, 2.0, 0.0, 0.0])
    inst = Instance(Fabric.uniform(3), (a,))
    out = gen.deadlines_from_isolation(inst, slack=1.0, minimum=0.0, seed=3)
    assert out.deadline[0] >= 5.5
    assert solve(out, objective="deadlines", method="exact").objective == 1
    # a deadline that would round onto a late release is the next float after it
    late = Instance(Fabric.uniform(1), (Coflow("a", [0], [0], [1e-12], release=1e6),))
    d = gen.deadlines_from_isolation(late, minimum=0.0).deadline[0]
    assert d == np.nextafter(1e6, np.inf)


def test_extreme_loads_and_batches_are_refused_or_kept_in_range():
    inst = gen.synthetic(20, 4, load=None, seed=2)
    for make in (lambda: gen.poisson_arrivals(inst, 1e-320),
                 lambda: gen.batch_arrivals(inst, 2, load=1e-320),
                 lambda: gen.rescale_load(gen.poisson_arrivals(inst, 0.5), 1e-320)):
        with pytest.raises(InstanceError, match=r"a load of 1e-320 puts release times beyond"):
            make()
    with pytest.raises(InstanceError, match=r"an interval of 1e\+308 puts release times beyond"):
        gen.batch_arrivals(inst, 2, interval=1e308)
    # a batch size beyond 2^63 overflowed NumPy (a traceback); it is one batch
    one = gen.batch_arrivals(inst, 10**23, interval=1.0)
    assert np.all(one.release == 0.0)
    # span x capacity overflowed: a rescale to 1e-300 reported a load of 0
    far = gen.rescale_load(gen.poisson_arrivals(inst, 0.5), 1e-300)
    assert gen.offered_load(far) == pytest.approx(1e-300, rel=1e-9)
    with pytest.raises(InstanceError, match="widths must be at most 1,000,000"):
        gen.WorkloadClass("W", 1.0, (51, 10**9), (MB, 2 * MB))


def test_shuffles_are_full_shuffles_in_their_class_and_read_back_exactly():
    from coflowopt.io import benchmark

    a = gen.synthetic(300, 12, load=0.5, seed=5, shape="shuffle")
    assert a == gen.synthetic(300, 12, load=0.5, seed=5, shape="shuffle")
    assert a.coflows != gen.synthetic(300, 12, load=0.5, seed=5).coflows
    for c in a.coflows:
        reducers = list(dict.fromkeys(c.dst.tolist()))
        m = c.width // len(reducers)
        assert m * len(reducers) == c.width and len(reducers) <= 12
        for j, rack in enumerate(reducers):  # listed reducer by reducer, the same mappers
            rows = slice(j * m, (j + 1) * m)
            assert np.all(c.dst[rows] == rack)
            assert c.src[rows].tolist() == c.src[:m].tolist()
            assert np.all(c.sizes[rows] == c.sizes[j * m])
        w, length = c.width, float(c.sizes.max())
        assert 1 <= w <= 1000 and 1 * MB <= length <= 1024 * MB
        # the class's rule per reducer: the longest reducer's flows have the length,
        # the others at least a tenth of it (up to the MB snapping's ulp)
        assert float(c.sizes.min()) >= 0.1 * length * (1 - 1e-15)
    text, total, off = benchmark._dump(a)
    assert total > 300 and off == 0
    back = benchmark.loads(text)
    for c, d in zip(a.coflows, back.coflows, strict=True):
        # flows exactly; releases within an ulp (some have no exact decimal in ms)
        assert np.array_equal(c.src, d.src) and np.array_equal(c.dst, d.dst)
        assert np.array_equal(c.sizes, d.sizes)
        assert d.release == pytest.approx(c.release, rel=3e-16, abs=0)
    at_once = gen.synthetic(50, 12, load=None, seed=5, shape="shuffle")
    assert benchmark.loads(benchmark.dumps(at_once)).coflows == at_once.coflows


def test_shuffle_reducers_fit_the_ports():
    wide = (gen.WorkloadClass("w", 1.0, (60, 60), (1 * MB, 1 * MB)),)
    for seed in range(20):
        inst = gen.synthetic(3, 4, classes=wide, load=None, seed=seed, shape="shuffle")
        for c in inst.coflows:  # 60 = m * r with r <= 4 reducers on distinct ports
            r = len(set(c.dst.tolist()))
            assert r <= 4 and c.width == 60 and 60 % r == 0
    with pytest.raises(InstanceError, match="shape must be one of flows, shuffle"):
        gen.synthetic(3, 4, shape="star")


def test_facebook_bins_are_the_published_ones_by_default():
    assert gen.FACEBOOK_BINS == gen.facebook_bins() == (
        gen.WorkloadClass("SN", 0.52, (1, 50), (1 * MB, 5 * MB)),
        gen.WorkloadClass("LN", 0.16, (1, 50), (5 * MB, 1024 * MB)),
        gen.WorkloadClass("SW", 0.15, (51, 1000), (1 * MB, 5 * MB)),
        gen.WorkloadClass("LW", 0.17, (51, 1000), (5 * MB, 1024 * MB)),
    )


@pytest.mark.parametrize("shape", gen.SHAPES)
@pytest.mark.parametrize("max_width", [1, 2, 4, 50, 51, 60])
def test_a_small_max_width_caps_every_coflow(shape, max_width):
    # widths below the narrow/wide boundary were refused; 4 ports then got a
    # coflow of 914 flows
    classes = gen.facebook_bins(max_width=max_width)
    assert {c.name for c in classes} == ({"SN", "LN"} if max_width <= 50 else set(BINS))
    inst = gen.synthetic(200, 4, classes=classes, seed=max_width, shape=shape)
    assert inst.width.min() >= 1 and inst.width.max() <= max_width
    counts = inst.bin_counts()
    if max_width <= 50:  # no wide coflow: every coflow is in the bin of its class
        assert counts["SW"] == counts["LW"] == 0
    assert counts["SN"] > 0 and counts["LN"] > 0


@pytest.mark.parametrize("shape", gen.SHAPES)
@pytest.mark.parametrize("width", [1, 3, 50, 51, 120])
def test_equal_width_limits_give_exact_sizes(shape, width):
    classes = gen.facebook_bins(min_width=width, max_width=width)
    inst = gen.synthetic(7, 5, classes=classes, load=0.6, seed=width, shape=shape)
    assert inst.width.tolist() == [width] * 7 and inst.num_flows == 7 * width
    assert inst.num_coflows == 7 and inst.num_ports == 5
    narrow = width <= 50
    assert set(inst.bins().tolist()) <= ({"SN", "LN"} if narrow else {"SW", "LW"})


def test_length_limits_keep_the_bins_apart():
    below = gen.facebook_bins(max_length=2 * MB)
    assert [c.name for c in below] == ["SN", "SW"]
    inst = gen.synthetic(100, 6, classes=below, seed=1)
    assert inst.length.max() <= 2 * MB and set(inst.bins().tolist()) <= {"SN", "SW"}
    tiny = gen.synthetic(10, 3, classes=gen.facebook_bins(max_length=1000.0), seed=1)
    assert inst.length.min() >= 1 * MB and np.all(tiny.length == 1000.0)
    longer = gen.synthetic(300, 6, classes=gen.facebook_bins(max_length=4096 * MB), seed=2)
    assert longer.length.max() > 1024 * MB


@pytest.mark.parametrize("kwargs, message", [
    ({"min_width": 0}, r"min_width must be an integer in 1\.\.1,000,000, got 0"),
    ({"max_width": 10**7}, r"max_width must be an integer in 1\.\.1,000,000"),
    ({"max_width": 2.5}, "max_width must be an integer"),
    ({"min_width": 5, "max_width": 4}, r"min_width \(5\) is above max_width \(4\)"),
    ({"max_length": 0.0}, "max_length must be finite and > 0"),
    ({"max_length": float("inf")}, "max_length must be finite and > 0"),
])
def test_facebook_bins_refuse_bad_limits(kwargs, message):
    with pytest.raises(InstanceError, match=message):
        gen.facebook_bins(**kwargs)


@pytest.mark.parametrize(("max_mb", "long"), [(5.0, False), (4.0, False), (5.5, True)])
def test_no_coflow_is_long_when_the_longest_flow_is_at_most_5_mb(max_mb, long):
    # at exactly 5 MB the long bins were kept, a point range: a quarter of the coflows long
    names = {c.name for c in gen.facebook_bins(max_length=max_mb * MB)}
    assert ({"LN", "LW"} <= names) == long and not (names & {"LN", "LW"} and not long)
    inst = gen.synthetic(40, 4, classes=gen.facebook_bins(max_length=max_mb * MB), seed=1)
    bins = set(inst.bins())
    assert bool(bins & {"LN", "LW"}) == long


def test_a_creek_min_size_whose_total_overflows_is_refused(capsys):
    from coflowopt.cli import main
    from coflowopt.io import workloads as wl

    with pytest.raises(InstanceError, match="must sum to a finite number of bytes"):
        wl.creek("tpcds", min_size=1e307, num_coflows=100)
    assert main(["generate", "creek", "--pattern", "tpcds", "--min-size-mb", "1e300", "-o",
                 "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "--min-size-mb is too large" in err and "1e+300" in err
