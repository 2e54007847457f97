"""Readers and writers: round trips and the bundled Facebook trace."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coflowopt import MB, Coflow, Fabric, Instance, InstanceError, io
from coflowopt.io import benchmark, native, sincronia

from ..strategies import instances, shuffle_instances, whole_mb_instances

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
DATA = ROOT / "tests" / "data"

SETTINGS = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def fb() -> Instance:
    return io.read(TRACE)


def test_facebook_trace_has_the_published_size(fb):
    assert (fb.num_coflows, fb.num_ports, fb.num_flows) == (526, 150, 706397)
    assert fb.fabric.is_uniform and fb.fabric.capacity[0] == 1.25e8
    # bin counts of the bundled rack-level trace with the Varys and MCS papers' thresholds
    assert fb.bin_counts() == {"SN": 309, "LN": 90, "SW": 59, "LW": 68}


def test_facebook_trace_follows_the_format_rules(fb):
    # line 5 of the file: coflow 4, arrival 15531 ms, 27 mappers, reducer 0 gets 648 MB
    c = fb.coflows[fb.index("4")]
    assert c.release == pytest.approx(15.531)
    mappers = sorted(set(c.src.tolist()))
    assert len(mappers) == 27 and mappers[:3] == [0, 2, 4]
    to_reducer_0 = c.sizes[c.dst == 0]
    assert to_reducer_0.size == 27
    assert np.allclose(to_reducer_0, 648.0 * MB / 27)
    # a port rate option sets every capacity
    slow = io.read(TRACE, port_rate=1e6)
    assert np.all(slow.fabric.capacity == 1e6)



def test_coflowsim_port_rate_moves_one_mb_per_8_ms_quantum():
    # coflowsim: 2^30 bit per simulated second of 1,024 ms, 8 ms quanta (issue 4)
    bytes_per_quantum = 2**30 / 8 * 8 / 1024
    assert bytes_per_quantum == MB
    assert benchmark.COFLOWSIM_PORT_RATE * 0.008 == pytest.approx(MB, rel=1e-15)
    inst = benchmark.loads("2 1\n1 0 1 0 1 1:8\n", port_rate=benchmark.COFLOWSIM_PORT_RATE)
    # 8 MB from rack 0 to rack 1: 8 quanta of 8 ms
    assert inst.coflows[0].sizes.tolist() == [8 * MB]
    assert 8 * MB / inst.fabric.capacity[0] == pytest.approx(0.064, rel=1e-15)

def test_coflowsim_reads_the_trace_as_coflowsim_does():
    # coflow 1: mappers on racks 0, 0, 2 (two mappers after coalescing), reducers on rack 1
    # with 1.5 and 0.7 MB: 2 + 1 = 3 MB, rounded to a multiple of 2 MB: 4, so 2 MB per flow;
    # coflow 2 arrives at 15 s: admitted at the start of the epoch [10.24, 20.48); coflow 3
    # at exactly 10.24 s: admitted at 0 (an arrival at or before an epoch's end joins it)
    text = "3 3\n1 0 3 0 0 2 2 1:1.5 1:0.7\n2 15000 1 1 1 2:0.25\n3 10240 1 2 2 0:3 1:1\n"
    inst = benchmark.loads_coflowsim(text)
    c1, c2, c3 = inst.coflows
    assert c1.src.tolist() == [0, 2] and c1.dst.tolist() == [1, 1]
    assert c1.sizes.tolist() == [2 * MB, 2 * MB]
    assert c2.sizes.tolist() == [MB] and c2.release == pytest.approx(10.24)
    assert c3.release == 0.0 and c3.dst.tolist() == [0, 1]
    assert c3.sizes.tolist() == [3 * MB, MB]
    # by name only: the same text reads as the plain trace when detected
    assert io.loads(text, format="coflowsim")[0] == inst
    assert io.loads(text)[1] == "benchmark"
    plain = benchmark.loads(text)
    assert plain.coflows[0].sizes.tolist() == [0.5 * MB] * 3 + [0.7 * MB / 3] * 3


def test_coflowsim_view_of_the_trace_keeps_its_flows(fb):
    cs = io.read(TRACE, format="coflowsim")
    assert cs.num_coflows == fb.num_coflows and cs.num_flows == fb.num_flows
    assert np.all(cs.flow_size >= fb.flow_size) and np.all(cs.flow_size % MB == 0)
    assert np.all(cs.release <= fb.release) and np.all(fb.release - cs.release <= 10.24)
    assert np.all(np.isclose(cs.release / 10.24, np.round(cs.release / 10.24)))


def test_benchmark_json_benchmark_keeps_every_flow(fb, tmp_path):
    js = tmp_path / "fb.json"
    io.write(fb, js, format="json")
    back = io.read(js)
    assert back.coflows == fb.coflows
    txt = tmp_path / "fb.txt"
    io.write(back, txt, format="benchmark")
    again = io.read(txt)
    assert again.coflows == fb.coflows and again.fabric == fb.fabric


def test_benchmark_sincronia_json_keeps_every_flow(fb, tmp_path):
    out = tmp_path / "fb.sincronia"
    notes = io.write(fb, out, format="sincronia")
    # every flow of the bundled trace is a whole number of megabytes: nothing is rounded
    assert not any("rounded" in n for n in notes)
    back = io.read(out, format="sincronia")
    js = tmp_path / "fb.json"
    io.write(back, js)
    final = io.read(js)
    assert final.num_flows == fb.num_flows == 706397
    assert np.array_equal(final.flow_src, fb.flow_src)
    assert np.array_equal(final.flow_dst, fb.flow_dst)
    assert np.array_equal(final.release, fb.release)
    assert np.array_equal(final.flow_size, fb.flow_size)


@SETTINGS
@given(instances(dependencies=True, deadlines=True, delays=True))
def test_json_round_trip_is_exact(inst):
    back = native.loads(native.dumps(inst))
    assert back == inst
    assert np.array_equal(back.flow_release, inst.flow_release)


@SETTINGS
@given(shuffle_instances())
def test_benchmark_round_trip_is_exact(inst):
    back = benchmark.loads(benchmark.dumps(inst))
    assert back.coflows == inst.coflows
    assert back.fabric == inst.fabric


@SETTINGS
@given(whole_mb_instances())
def test_sincronia_round_trip_is_exact_for_whole_megabytes(inst):
    text, rounded = sincronia.dumps(inst)
    assert rounded == 0
    back = sincronia.loads(text)
    assert back.coflows == inst.coflows


def test_sincronia_rounding_options():
    c = Coflow.from_flows("1", [(0, 1, 0.25 * MB), (1, 0, 2.5 * MB)])
    inst = Instance(Fabric.uniform(2, 1.25e8), (c,))
    assert sincronia.dumps(inst, mb_rounding="ceil")[0].splitlines()[1].endswith("0 1 1 1 0 3")
    assert sincronia.dumps(inst, mb_rounding="nearest")[0].splitlines()[1].endswith("0 1 1 1 0 2")
    text, rounded = sincronia.dumps(inst, mb_rounding="none")
    assert rounded == 0
    assert sincronia.loads(text).coflows == inst.coflows


def test_writers_refuse_what_their_format_cannot_express(tmp_path):
    c = Coflow.from_flows("1", [(0, 1, MB)], weight=2.0)
    inst = Instance(Fabric.uniform(2), (c,))
    with pytest.raises(InstanceError, match="weight 2"):
        benchmark.dumps(inst)
    with pytest.raises(InstanceError, match="weights, deadlines"):
        sincronia.dumps(inst)
    uneven = Instance(Fabric.uniform(2), (Coflow.from_flows("1", [(0, 1, MB), (1, 1, 2 * MB)]),))
    with pytest.raises(InstanceError, match="unequal amounts"):
        benchmark.dumps(uneven)
    partial = Instance(Fabric.uniform(2), (Coflow.from_flows("1", [(0, 0, MB), (1, 1, MB)]),))
    with pytest.raises(InstanceError, match="not a full shuffle"):
        benchmark.dumps(partial)
    hetero = Instance(Fabric([1.0, 2.0], [1.0, 1.0]), (Coflow.from_flows("1", [(0, 1, MB)]),))
    target = tmp_path / "out.txt"
    with pytest.raises(InstanceError, match="port capacities differ"):
        io.write(hetero, target, format="benchmark")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_good_files_of_each_format_read_alike():
    bench = io.read(DATA / "good_benchmark.txt")
    assert bench.num_flows == 1 + 2 * 2 + 3
    c = bench.coflows[1]  # 2 mappers (0, 1), reducers 2 and 3
    assert c.src.tolist() == [0, 1, 0, 1] and c.dst.tolist() == [2, 2, 3, 3]
    assert c.sizes.tolist() == [2 * MB, 2 * MB, 1.25 * MB, 1.25 * MB]
    sinc = io.read(DATA / "good_sincronia.txt")
    assert sinc.coflows[0].sizes.tolist() == [5 * MB, 3 * MB, 1 * MB]
    assert sinc.release.tolist() == [0.0, 0.04]
    js = io.read(DATA / "good_instance.json")
    assert js.coflows[1].starts_after == ("a",) and js.deadline[1] == 10.0
    assert io.read_metadata(DATA / "good_instance.json") == {"_description": "two coflows; b starts after a"}


def test_detection_by_suffix_and_content(tmp_path):
    assert io.detect_format(DATA / "good_benchmark.txt") == "benchmark"
    assert io.detect_format(DATA / "good_sincronia.txt") == "sincronia"
    assert io.detect_format(DATA / "good_instance.json") == "json"
    odd = tmp_path / "instance.data"
    odd.write_text((DATA / "good_instance.json").read_text())
    assert io.detect_format(odd) == "json"
    # line ends of carriage returns alone, which the parsers split at too (a Coflow-Benchmark
    # trace was read as Sincronia's)
    for name in ("good_benchmark.txt", "good_sincronia.txt"):
        cr = tmp_path / name
        cr.write_bytes((DATA / name).read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r"))
        assert io.detect_format(cr) == name.removeprefix("good_").removesuffix(".txt")
        assert io.read(cr).num_flows == io.read(DATA / name).num_flows
    # a coflow id with a ':' in a Sincronia trace coflowopt wrote was taken for a
    # Coflow-Benchmark reducer: the file it wrote could not be read back
    inst = Instance(Fabric.uniform(2), (Coflow.from_flows("job:1", [(0, 1, MB)]),
                                        Coflow.from_flows("job:2", [(1, 0, 2 * MB)], release=1.0)))
    out = tmp_path / "colon.txt"
    io.write(inst, out, format="sincronia")
    assert io.detect_format(out) == "sincronia"
    assert io.read(out).ids == ("job:1", "job:2")


def test_benchmark_writer_notes_sizes_without_an_exact_decimal(tmp_path):
    # 3 mappers: of the floats next to size * 3 / MB, none gives size back as mb * MB / 3
    size = next(s for s in np.linspace(1e6, 2e6, 2000)
                if not benchmark._mb_text(float(s), 3)[1])
    c = Coflow("0", np.array([0, 1, 2]), np.array([1, 1, 1]), np.full(3, size))
    inst = Instance(Fabric.uniform(3, 1.0), (c,))
    notes = benchmark.write(inst, tmp_path / "t.txt")
    assert any("1 of 1 reducers' flow sizes" in n for n in notes)
    back = benchmark.read(tmp_path / "t.txt", port_rate=1.0)
    assert back.coflows[0].sizes[0] == pytest.approx(size, rel=4e-16, abs=0)
    # a size the reader makes of a decimal: written exactly, no note
    exact = Coflow("0", np.array([0, 1, 2]), np.array([1, 1, 1]), np.full(3, 1.7 * MB / 3))
    assert not any("flow sizes" in n
                   for n in benchmark.write(Instance(Fabric.uniform(3, 1.0), (exact,)), tmp_path / "u.txt"))


@pytest.mark.parametrize(("line", "written"), [
    ("1 0 1 0 2 1:1 1:2", "1 0 1 0 2 1:1 1:2"),
    ("1 0 2 0 1 3 1:2 0:4 1:6", "1 0 2 0 1 3 1:2 0:4 1:6"),
    # the same flows, four from rack 1 to rack 0, written as one reducer of four mappers
    ("7 1500 2 1 1 2 0:3 0:3", "7 1500 4 1 1 1 1 1 0:6"),
])
def test_a_rack_that_is_a_reducer_twice_writes_back(tmp_path, line, written):
    # the reader takes a rack named twice among the reducers; the writer refused it, with
    # "reducer 1 gets unequal amounts from its mappers" where there was one mapper
    src = tmp_path / "in.txt"
    src.write_text(f"2 1\n{line}\n")
    inst = io.read(src, format="benchmark")
    out = tmp_path / "out.txt"
    io.write(inst, out, format="benchmark")
    assert out.read_text() == f"2 1\n{written}\n"
    back = io.read(out, format="benchmark")
    assert np.array_equal(back.flow_src, inst.flow_src) and np.array_equal(back.flow_dst, inst.flow_dst)
    assert np.array_equal(back.flow_size, inst.flow_size)
