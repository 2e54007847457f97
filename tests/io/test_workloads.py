"""The papers' workloads: Creek's many-to-many coflows and Coflourish's loads, from the trace."""

from __future__ import annotations

import functools
import json
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import MB, InputError, InstanceError, check_feasible, io
from coflowopt.cli import main
from coflowopt.io import generate as gen
from coflowopt.io import workloads as wl
from coflowopt.sim import simulate

from .test_formats import TRACE

TABLE_SHARE = np.array([rows for _, rows in wl.TPCDS_TABLES], float)
TABLE_SHARE /= TABLE_SHARE.sum()


@functools.cache
def fb():
    return io.read(TRACE)


def small_trace():
    """The trace's coflows of at most 60 flows (quick to simulate), their arrivals kept."""
    t = fb()
    return t.subset(np.flatnonzero(t.width <= 60).tolist())


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out, out.err


def roles(c):
    """A coflow's senders and receivers, and who feeds whom."""
    feeds = {}
    for s, d in zip(c.src.tolist(), c.dst.tolist(), strict=True):
        feeds.setdefault(d, set()).add(s)
    return set(c.src.tolist()), set(c.dst.tolist()), feeds


# --------------------------------------------------------------------------- Creek


def check_tpcds(inst, *, receivers=(2, None), senders=(3, None)):
    for c in inst.coflows:
        srcs, dsts, feeds = roles(c)
        assert not srcs & dsts  # every role on its own host
        assert receivers[0] <= len(dsts) <= (receivers[1] or 10**9)
        assert max(3, senders[0]) <= len(srcs) <= (senders[1] or 10**9)
        # many-to-many: every receiver is fed by every sender, once
        assert c.width == len(srcs) * len(dsts)
        assert all(fed == srcs for fed in feeds.values())
        # the three tables' shares of every receiver's bytes: senders of a table carry equal
        # parts, so the per-sender fractions of a receiver's bytes sum by table to the shares
        first = c.dst == c.dst[0]
        frac = c.sizes[first] / c.sizes[first].sum()
        by_table = Counter(np.round(frac, 12).tolist())
        shares = sorted(v * n for v, n in by_table.items())
        assert np.allclose(shares, sorted(TABLE_SHARE), rtol=1e-9, atol=0)


def check_tao(inst, *, fanin=(2, 5), miss=1 - wl.TAO_HIT_RATE):
    for c in inst.coflows:
        srcs, dsts, feeds = roles(c)
        web = dsts - srcs  # web servers only receive
        followers = set().union(*(feeds[w] for w in web))
        assert len(web) >= 2 and len(followers) >= min(2, fanin[0])
        for w in web:  # each web server reads from fanin followers (all, if fewer), equal parts
            assert min(fanin[0], len(followers)) <= len(feeds[w]) <= fanin[1]
            parts = c.sizes[c.dst == w]
            assert parts.size == len(feeds[w]) and np.all(parts == parts[0])
        read = float(c.sizes[np.isin(c.dst, list(web))].sum())
        if miss == 0:
            assert srcs == followers
            assert read == pytest.approx(c.total_size, rel=1e-12)
            continue
        # each follower fetches miss x what it serves from its own leader, the leader miss^2
        # from its own database: three distinct hosts per shard
        leaders = {f: feeds[f] for f in followers}
        assert all(len(ld) == 1 for ld in leaders.values())
        lead = {f: next(iter(ld)) for f, ld in leaders.items()}
        assert len(set(lead.values())) == len(followers)
        for f, ld in lead.items():
            served = c.sizes[(c.src == f) & np.isin(c.dst, list(web))].sum()
            assert c.sizes[(c.src == ld) & (c.dst == f)].sum() == pytest.approx(miss * served)
            (db,) = feeds[ld]
            assert db not in web | followers | set(lead.values())
            assert c.sizes[(c.src == db) & (c.dst == ld)].sum() == pytest.approx(miss**2 * served)
        assert c.width == sum(len(feeds[w]) for w in web) + 2 * len(followers)
        assert read * (1 + miss + miss**2) == pytest.approx(c.total_size, rel=1e-12)


@pytest.mark.parametrize("pattern", wl.CREEK_PATTERNS)
def test_creek_replays_the_trace_as_many_to_many_coflows(pattern):
    inst = wl.creek(pattern, trace=fb())
    assert inst == wl.creek(pattern, trace=fb())
    assert inst.coflows != wl.creek(pattern, trace=fb(), seed=1).coflows
    assert inst.num_ports == 3456 and np.all(inst.fabric.capacity == 1.25e9)
    # the trace's 526 coflows in arrival order: ids, arrival times, bytes raised to 6 MB
    order = np.argsort(fb().release, kind="stable")
    assert inst.ids == tuple(fb().ids[k] for k in order)
    assert np.array_equal(inst.release, fb().release[order])
    want = np.maximum(fb().size[order], 6 * MB)
    assert np.allclose(inst.size, want, rtol=1e-12, atol=0)
    assert inst.size.min() >= 6 * MB  # exactly: every coflow lands in one of Table 2's groups
    groups = Counter(wl.creek_groups(inst).tolist())
    assert "" not in groups and set(groups) == {"I", "II", "III", "IV", "V"}
    assert groups["V"] == int(np.sum(fb().size >= 2**40))
    # as many receivers and senders as the trace coflow's reducers and mappers, at least 2
    assert np.all(inst.receivers >= 2)
    if pattern == "tpcds":
        check_tpcds(inst)
        assert np.array_equal(inst.receivers, np.maximum(fb().receivers[order], 2))
        assert np.array_equal(inst.senders, np.maximum(fb().senders[order], 3))
    else:
        check_tao(inst)
        # web servers share followers: in many coflows two web servers read one follower
        shared = sum(
            any(n > 1 for n in Counter(c.src[np.isin(c.dst, list(set(c.dst) - set(c.src)))]
                                       .tolist()).values())
            for c in inst.coflows)
        assert shared > 100


def test_creek_receivers_take_the_trace_reducers_shares():
    inst = wl.creek("tpcds", trace=fb())
    order = np.argsort(fb().release, kind="stable")
    checked = 0
    for c, k in zip(inst.coflows, order, strict=True):
        t = fb().flows_of(int(k))
        ports, into = np.unique(fb().flow_dst[t], return_inverse=True)
        if ports.size < 2 or fb().size[k] < 6 * MB:
            continue
        reducer = np.bincount(into, weights=fb().flow_size[t])
        _, into = np.unique(c.dst, return_inverse=True)
        receiver = np.bincount(into, weights=c.sizes)
        assert np.allclose(np.sort(receiver), np.sort(reducer), rtol=1e-9, atol=0)
        checked += 1
    assert checked > 150


def test_creek_limits_and_load():
    inst = wl.creek("tao", trace=fb(), num_coflows=60, num_hosts=50, receivers=(3, 4),
                    senders=(2, 6), fanin=(2, 3), miss_ratio=0.0, load=0.7, seed=4)
    assert inst.num_coflows == 60 and inst.num_ports == 50
    assert gen.offered_load(inst) == pytest.approx(0.7, rel=1e-12)
    # the trace's gaps, scaled together: their order and proportions kept
    gaps = np.diff(inst.release)
    base = np.diff(np.sort(fb().release)[:60])
    assert np.allclose(gaps / gaps.sum(), base / base.sum(), rtol=1e-9, atol=1e-15)
    check_tao(inst, fanin=(2, 3), miss=0.0)
    for c in inst.coflows:
        web = set(c.dst.tolist())
        assert 3 <= len(web) <= 4 and len(set(c.src.tolist())) <= 6
    capped = wl.creek("tpcds", trace=fb(), num_coflows=60, num_hosts=12, receivers=(2, 4),
                      senders=(3, 5), min_size=0.0)
    check_tpcds(capped, receivers=(2, 4), senders=(3, 5))
    # no floor: the trace's own bytes
    own = fb().size[np.argsort(fb().release, kind="stable")][:60]
    assert np.allclose(capped.size, own, rtol=1e-12, atol=0)


@pytest.mark.parametrize("kwargs, message", [
    ({"pattern": "star"}, "pattern must be one of tpcds, tao, got 'star'"),
    ({"num_coflows": 0}, r"number of coflows must be an integer in 1\.\.526"),
    ({"num_coflows": 527}, r"number of coflows must be an integer in 1\.\.526"),
    ({"num_hosts": 0}, "number of hosts must be an integer"),
    ({"host_rate": 0.0}, "host rate must be finite and > 0"),
    ({"min_size": -1.0}, "min_size must be finite and >= 0"),
    ({"receivers": (3, 2)}, r"receivers range must satisfy lo <= hi, got \(3, 2\)"),
    ({"senders": (0, None)}, "senders range must hold integers >= 1"),
    ({"fanin": (2, None)}, "fanin range needs an upper end"),
    ({"miss_ratio": 1.0}, r"miss_ratio must be in \[0, 1\)"),
    ({"tables": ()}, "tables must be one or more finite shares > 0"),
    ({"senders": (2, 2)}, "a tpcds coflow needs at least 3 senders"),
    ({"num_coflows": 1, "load": 0.5}, "a load needs at least 2 coflows"),
    ({"load": 0.0}, "load must be finite and > 0"),
    ({"num_hosts": 40}, r"coflow '\d+' of the trace needs \d+ distinct hosts \(\d+ senders and "
                        r"\d+ receivers\), but there are 40"),
])
def test_creek_refuses_bad_arguments(kwargs, message):
    kwargs = {"pattern": "tpcds", **kwargs}
    with pytest.raises(InstanceError, match=message):
        wl.creek(kwargs.pop("pattern"), trace=fb(), **kwargs)


def test_tao_needs_hosts_whatever_the_seed():
    # whether a coflow fits is decided by the most hosts any draw could need
    for seed in range(5):
        with pytest.raises(InstanceError, match=r"needs 11 distinct hosts \(2 web servers and up "
                                                r"to 3 shards of 3 tiers\), but there are 10"):
            wl.creek("tao", trace=fb(), num_coflows=5, num_hosts=10, receivers=(2, 2),
                     senders=(3, 3), seed=seed)


def test_the_bundled_trace_is_found_or_named(monkeypatch, tmp_path):
    assert wl.facebook_trace() == fb()
    assert wl.creek("tao", num_coflows=3) == wl.creek("tao", trace=fb(), num_coflows=3)
    # an installed copy (its module far from the checkout) run from the checkout finds it
    # there: after `pip install .` every default that reads the trace failed
    monkeypatch.setattr(wl, "FB2010_TRACE", tmp_path / "none.txt")
    monkeypatch.chdir(wl.Path(__file__).resolve().parents[2])
    assert wl.facebook_trace() == fb()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"the bundled Facebook trace is not at .*none\.txt nor "
                                         r"at \./instances/fb2010/FB2010-1Hr-150-0\.txt"):
        wl.creek("tao")
    from coflowopt.experiment.spec import InstanceSpec

    with pytest.raises(InputError, match="--trace FILE"):
        InstanceSpec("trace", {}).path()


@settings(max_examples=40, deadline=None)
@given(
    pattern=st.sampled_from(wl.CREEK_PATTERNS),
    n=st.integers(1, 40),
    r_hi=st.integers(2, 4),
    s_hi=st.integers(3, 6),
    fan=st.tuples(st.integers(1, 4), st.integers(0, 3)),
    miss=st.sampled_from([0.0, 0.036, 0.5]),
    load=st.one_of(st.none(), st.floats(0.05, 3.0)),
    seed=st.integers(0, 2**32 - 1),
)
def test_creek_structure_holds_for_any_parameters(pattern, n, r_hi, s_hi, fan, miss, load, seed):
    if load is not None and n < 2:
        load = None
    fanin = (fan[0], fan[0] + fan[1])
    hosts = r_hi + 3 * s_hi
    kwargs = dict(trace=fb(), num_coflows=n, num_hosts=hosts, receivers=(2, r_hi),
                  senders=(2, s_hi), fanin=fanin, miss_ratio=miss, load=load, seed=seed)
    inst = wl.creek(pattern, **kwargs)
    assert inst == wl.creek(pattern, **kwargs)
    assert inst.num_coflows == n and inst.size.min() >= 6 * MB
    if load is not None:
        assert gen.offered_load(inst) == pytest.approx(load, rel=1e-9)
    if pattern == "tpcds":
        check_tpcds(inst, receivers=(2, r_hi), senders=(3, s_hi))
    else:
        check_tao(inst, fanin=(fanin[0], min(fanin[1], s_hi)), miss=miss)


# --------------------------------------------------------------------------- Coflourish


def trace_shapes(trace):
    """Each trace coflow's shape: its flow sizes (sorted) and numbers of senders and receivers."""
    return [(np.sort(trace.flow_size[trace.flows_of(k)]), trace.senders[k], trace.receivers[k])
            for k in range(trace.num_coflows)]


def test_regular_coflows_are_the_traces():
    trace = small_trace()
    inst = wl.coflourish("regular", trace=trace, num_coflows=300, num_hosts=400, seed=3)
    assert inst == wl.coflourish("regular", trace=trace, num_coflows=300, num_hosts=400, seed=3)
    assert inst.num_ports == 400 and np.all(inst.fabric.capacity == 1.25e8)
    assert all(i.startswith("R") for i in inst.ids)
    shapes = trace_shapes(trace)
    for k, c in enumerate(inst.coflows):
        sizes = np.sort(c.sizes)
        assert any(np.array_equal(sizes, s) and inst.senders[k] == ns and inst.receivers[k] == nr
                   for s, ns, nr in shapes)


def test_regular_load_follows_the_trace_distribution():
    inst = wl.coflourish("regular", trace=fb(), num_coflows=1000, seed=0)
    assert inst.num_coflows == 1000 and inst.num_ports == 3000
    # 1,000 draws from the trace's 526 coflows: bin shares within 5 sigma of the trace's
    mine, theirs = inst.bin_counts(), fb().bin_counts()
    for b, n in theirs.items():
        p = n / fb().num_coflows
        assert abs(mine[b] - 1000 * p) < 5 * np.sqrt(1000 * p * (1 - p))
    # the trace's arrival rate (0.145 a second): 999 exponential gaps, mean within 5 sigma
    mean_gap = float(np.diff(inst.release).mean())
    assert abs(mean_gap * wl.trace_rate(fb()) - 1) < 5 / np.sqrt(999)
    assert wl.trace_rate(fb()) == pytest.approx(525 / (fb().release.max() - fb().release.min()))


@pytest.mark.parametrize("share", [0.25, 0.5, 0.75, 1.0])
def test_large_loads_mix_large_coflows_of_the_published_sizes(share):
    trace = small_trace()
    kwargs = dict(trace=trace, num_coflows=200, num_hosts=300, seed=5)
    inst = wl.coflourish("large", large_share=None if share == 0.5 else share, **kwargs)
    large = np.array([i.startswith("L") for i in inst.ids])
    assert large.sum() == round(share * 200)
    lo, hi = 25 * MB, 1024 * MB
    assert np.all((inst.size[large] >= lo * (1 - 1e-12)) & (inst.size[large] <= hi * (1 + 1e-12)))
    # a large coflow has the structure of a trace coflow of that size, its bytes scaled
    fits = [k for k in range(trace.num_coflows) if lo <= trace.size[k] <= hi]
    for k in np.flatnonzero(large):
        c = inst.coflows[k]
        assert any(
            c.width == trace.width[j] and inst.senders[k] == trace.senders[j]
            and inst.receivers[k] == trace.receivers[j]
            and np.allclose(np.sort(c.sizes) / c.total_size,
                            np.sort(trace.flow_size[trace.flows_of(j)]) / trace.size[j], rtol=1e-9)
            for j in fits)
    # the same draws at another rate: the same arrivals, scaled
    fast = wl.coflourish("large", large_share=share, rate=2 * wl.trace_rate(trace), **kwargs)
    slow = wl.coflourish("large", large_share=share, rate=wl.trace_rate(trace), **kwargs)
    assert slow == wl.coflourish("large", large_share=share, **kwargs)
    assert np.allclose(fast.release, slow.release / 2, rtol=1e-12, atol=0)


def test_coflourish_arrivals_are_poisson_at_the_asked_rate_or_load():
    tiny = gen.synthetic(20, 8, seed=1)  # a trace of few flows: 3,000 coflows stay small
    timed = gen.poisson_arrivals(tiny, 0.5, seed=2)
    inst = wl.coflourish("regular", trace=timed, num_coflows=3000, num_hosts=20, rate=4.0)
    gaps = np.diff(inst.release)
    assert inst.release[0] == 0.0 and np.all(gaps >= 0)
    assert gaps.mean() == pytest.approx(0.25, rel=0.1)
    assert gaps.std() == pytest.approx(gaps.mean(), rel=0.1)
    loaded = wl.coflourish("large", trace=fb(), num_coflows=30, num_hosts=3000, load=0.6)
    assert gen.offered_load(loaded) == pytest.approx(0.6, rel=1e-12)
    assert wl.coflourish("regular", trace=timed, num_coflows=1, num_hosts=20).release[0] == 0.0


@pytest.mark.parametrize("kwargs, message", [
    ({"mix": "huge"}, "mix must be one of regular, large, got 'huge'"),
    ({"mix": "regular", "large_share": 0.5}, "a regular load has no large coflows"),
    ({"large_share": 1.5}, r"large_share must be in \[0, 1\], got 1.5"),
    ({"num_coflows": 0}, "number of coflows must be a positive integer"),
    ({"num_hosts": 100}, r"coflow '\d+' of the trace needs 1\d\d distinct hosts "
                         r"\(1\d\d (senders|receivers)\), but there are 100"),
    ({"large_size": (2.0, 1.0)}, "large_size must be finite with 0 < lo <= hi"),
    ({"rate": 1.0, "load": 0.5}, "give at most one of rate and load"),
    ({"rate": 0.0}, "rate must be finite and > 0"),
    ({"rate": 1e-320}, r"a rate of 1e-320 puts release times beyond float64's range"),
    ({"large_size": (1e15, 2e15)}, "no coflow of the trace has .* MB to lend its structure"),
])
def test_coflourish_refuses_bad_arguments(kwargs, message):
    kwargs = {"mix": "large", "num_coflows": 20, **kwargs}
    with pytest.raises(InstanceError, match=message):
        wl.coflourish(kwargs.pop("mix"), trace=fb(), **kwargs)


def test_a_trace_without_arrivals_has_no_rate():
    flat = fb().subset(range(5)).with_releases(0.0)
    with pytest.raises(InstanceError, match="all arrive at once: it has no arrival rate"):
        wl.coflourish("regular", trace=flat, num_coflows=5)
    assert gen.offered_load(wl.coflourish("regular", trace=flat, num_coflows=5, load=0.3)) == \
        pytest.approx(0.3)


@settings(max_examples=30, deadline=None)
@given(
    mix=st.sampled_from(wl.COFLOURISH_MIXES),
    share=st.floats(0.0, 1.0),
    n=st.integers(1, 30),
    hosts=st.integers(150, 600),
    timing=st.sampled_from(["trace", "rate", "load"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_coflourish_holds_for_any_parameters(mix, share, n, hosts, timing, seed):
    trace = small_trace()
    kwargs = dict(trace=trace, num_coflows=n, num_hosts=hosts, seed=seed,
                  large_share=share if mix == "large" else None)
    if timing == "rate":
        kwargs["rate"] = 3.0
    elif timing == "load" and n >= 2:
        kwargs["load"] = 0.5
    inst = wl.coflourish(mix, **kwargs)
    assert inst == wl.coflourish(mix, **kwargs)
    assert inst.num_coflows == n and inst.release[0] == 0.0 and np.all(np.diff(inst.release) >= 0)
    large = np.array([i.startswith("L") for i in inst.ids])
    assert large.sum() == (round(share * n) if mix == "large" else 0)
    assert np.all(inst.size[large] >= 25 * MB * (1 - 1e-12))
    if "load" in kwargs:
        assert gen.offered_load(inst) == pytest.approx(0.5, rel=1e-9)
    for c in inst.coflows:  # a rack on one host: senders and receivers as the trace's
        assert c.src.max() < hosts and c.dst.max() < hosts


# --------------------------------------------------------------------------- simulation


@pytest.mark.parametrize("make", [
    lambda: wl.creek("tpcds", trace=small_trace(), num_coflows=15, num_hosts=30,
                     receivers=(2, 4), senders=(3, 5), load=0.8),
    lambda: wl.creek("tao", trace=small_trace(), num_coflows=15, num_hosts=30,
                     receivers=(2, 4), senders=(2, 5), load=0.8),
    lambda: wl.coflourish("regular", trace=small_trace(), num_coflows=15, num_hosts=200, load=0.8),
    lambda: wl.coflourish("large", trace=small_trace(), num_coflows=15, num_hosts=200, load=0.8),
], ids=["creek-tpcds", "creek-tao", "coflourish-regular", "coflourish-large"])
@pytest.mark.parametrize("scheduler", ["varys", "fair", "aalo"])
def test_generated_workloads_simulate_feasibly(make, scheduler):
    inst = make()
    res = simulate(inst, scheduler)
    assert res.schedule is not None and check_feasible(inst, res.schedule)
    assert np.all(np.isfinite(res.completion)) and np.all(res.completion >= inst.release)


# --------------------------------------------------------------------------- command line


def test_cli_writes_the_workloads_reproducibly(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    argv = ["generate", "creek", "--pattern", "tao", "--coflows", "40", "--hosts", "200",
            "--max-receivers", "10", "--max-senders", "10", "--load", "0.5", "--seed", "3"]
    assert run(capsys, *argv, "-o", a)[0] == 0
    assert run(capsys, *argv, "-o", b)[0] == 0
    assert a.read_bytes() == b.read_bytes()
    assert io.read(a) == wl.creek("tao", trace=fb(), num_coflows=40, num_hosts=200, load=0.5,
                                  receivers=(2, 10), senders=(2, 10), seed=3)
    code, out, _ = run(capsys, "generate", "coflourish", "--mix", "large", "--coflows", "25",
                       "--large-share", "0.25", "--load", "0.4", "-o", a, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["coflows"] == 25 and summary["ports"] == 3000
    assert summary["offered_load"] == pytest.approx(0.4)
    inst = io.read(a)
    assert sum(i.startswith("L") for i in inst.ids) == 6
    code, out, _ = run(capsys, "generate", "creek", "--pattern", "tpcds", "--coflows", "20",
                       "--hosts", "20", "--max-receivers", "3", "--max-senders", "4",
                       "--min-size-mb", "10", "-o", b)
    assert code == 0 and out.startswith(f"wrote {b}: 20 coflows")
    inst = io.read(b)
    assert inst.size.min() >= 10 * MB and inst.num_ports == 20
    check_tpcds(inst, receivers=(2, 3), senders=(3, 4))


def test_cli_help_names_the_defaults_sources(capsys):
    for kind, sources in (("creek", ["§V-B", "§V-A", "Table 2", "TAO paper"]),
                          ("coflourish", ["§IV-A", "§II", "§IV-C", "trace's mean rate"])):
        with pytest.raises(SystemExit):
            main(["generate", kind, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        for source in sources:
            assert source in text, (kind, source)


@pytest.mark.parametrize("argv, message", [
    (["creek", "--pattern", "tpcds", "--max-senders", "2"],
     "--pattern tpcds needs 3 senders or more"),
    (["creek", "--pattern", "tao", "--min-fanin", "4", "--max-fanin", "3"],
     "--min-fanin 4 is above --max-fanin 3"),
    (["creek", "--pattern", "tao", "--coflows", "600"], "--coflows 600 is more than the trace's 526"),
    (["creek", "--pattern", "tao", "--miss-ratio", "1"], "--miss-ratio must be below 1"),
    (["creek", "--pattern", "tao", "--hosts", "10"],
     r"coflow '\d+' of the trace needs \d+ distinct hosts .* but there are 10"),
    (["creek", "--pattern", "tao", "--coflows", "1", "--load", "0.5"],
     "--load needs at least 2 coflows"),
    (["creek", "--pattern", "tpcds", "--coflows", "3", "--to", "benchmark"],
     "cannot write the Coflow-Benchmark format: .* unequal amounts"),
    (["coflourish", "--mix", "regular", "--large-share", "0.3"], "--large-share needs --mix large"),
    (["coflourish", "--mix", "large", "--large-min-mb", "30", "--large-max-mb", "20"],
     "--large-min-mb 30 is above --large-max-mb 20"),
    (["coflourish", "--mix", "large", "--trace", "NONE"], "NONE: no such file"),
    (["coflourish", "--mix", "large", "--large-share", "1.5"], "expected a number in"),
    (["coflourish", "--mix", "large", "--rate", "1", "--load", "1"], "not allowed with"),
])
def test_cli_errors_exit_2_and_write_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "out.txt"
    argv = [a.replace("NONE", str(tmp_path / "none.txt")) for a in argv]
    message = message.replace("NONE", str(tmp_path / "none.txt"))
    try:
        code, _, err = run(capsys, "generate", *argv, "-o", out)
    except SystemExit as exc:  # argparse's own errors
        code, err = exc.code, capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 or "usage:" in err
    assert re.search(message, err), err
    assert not out.exists()
