"""The data model: validation, derived attributes, bins, dependencies."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt import MB, Coflow, Fabric, Instance, InstanceError
from coflowopt.sim import simulate

from .strategies import instances


def shuffle_3x2(capacity: float = 1.0) -> Instance:
    """Dissertation §3.2: senders 0, 1 send 1 unit to each receiver, sender 2 sends 2."""
    flows = [(0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 1), (2, 0, 2), (2, 1, 2)]
    return Instance(Fabric.uniform(3, capacity), (Coflow.from_flows("shuffle", flows),))


def test_attributes_of_the_3x2_shuffle_by_hand():
    inst = shuffle_3x2()
    assert inst.size.tolist() == [8.0]
    assert inst.length.tolist() == [2.0]
    assert inst.width.tolist() == [6]
    # sizes 1,1,1,1,2,2: mean 4/3, population variance 2/9, CV = sqrt(2/9) / (4/3)
    assert inst.skew[0] == pytest.approx(np.sqrt(2 / 9) / (4 / 3))
    assert inst.senders.tolist() == [3]
    assert inst.receivers.tolist() == [2]
    assert inst.ingress_load.tolist() == [[2.0, 2.0, 4.0]]
    assert inst.egress_load.tolist() == [[4.0, 4.0, 0.0]]
    assert inst.gamma.tolist() == [4.0]


def test_gamma_divides_each_port_load_by_that_port_capacity():
    fab = Fabric([1.0, 4.0], [2.0, 0.5])
    c = Coflow.from_flows("a", [(0, 0, 2.0), (1, 1, 3.0), (1, 0, 1.0)])
    inst = Instance(fab, (c,))
    # ingress: 2/1, 4/4; egress: 3/2, 3/0.5 -> 6
    assert inst.gamma[0] == pytest.approx(6.0)
    assert inst.load.shape == (1, 4)


def test_flat_flow_arrays_are_grouped_by_coflow():
    a = Coflow.from_flows("a", [(0, 1, 1.0), (1, 0, 2.0)], release=1.0)
    b = Coflow.from_flows("b", [(1, 1, 3.0)], release=2.0, delay=[0.5])
    inst = Instance(Fabric.uniform(2), (a, b))
    assert inst.ptr.tolist() == [0, 2, 3]
    assert inst.flow_coflow.tolist() == [0, 0, 1]
    assert inst.flow_release.tolist() == [1.0, 1.0, 2.5]
    assert inst.flows_of(1) == slice(2, 3)
    assert inst.index("b") == 1


def test_arrays_are_read_only():
    inst = shuffle_3x2()
    for arr in (inst.flow_size, inst.load, inst.gamma, inst.coflows[0].sizes, inst.fabric.capacity):
        with pytest.raises(ValueError):
            arr[0] = 0


def test_input_arrays_are_copied():
    sizes = np.array([1.0, 2.0])
    c = Coflow("a", [0, 0], [0, 0], sizes)
    sizes[0] = 99.0
    assert c.sizes[0] == 1.0


def test_bins_use_longest_flow_and_flow_count_with_parameters():
    short_narrow = Coflow.from_flows("sn", [(0, 0, 1 * MB)])
    long_narrow = Coflow.from_flows("ln", [(0, 0, 5 * MB)])
    short_wide = Coflow("sw", [0] * 51, [0] * 51, [MB] * 51)
    long_wide = Coflow("lw", [0] * 51, [0] * 51, [MB] * 50 + [6 * MB])
    inst = Instance(Fabric.uniform(1), (short_narrow, long_narrow, short_wide, long_wide))
    assert inst.bins().tolist() == ["SN", "LN", "SW", "LW"]
    assert inst.bin_counts() == {"SN": 1, "LN": 1, "SW": 1, "LW": 1}
    assert inst.bins(short_length=10 * MB, narrow_width=51).tolist() == ["SN"] * 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": [1.0, -1.0]}, r"flow 1 of coflow 'a' has size -1\.0"),
        ({"sizes": [1.0, float("nan")]}, r"flow 1 of coflow 'a' has size nan"),
        ({"sizes": [1.0, float("inf")]}, r"size inf"),
        ({"release": -1.0}, r"release -1\.0"),
        ({"weight": 0.0}, r"weight 0\.0"),
        # a subnormal weight overflowed DRF's progress (1 / weight), and the run stopped
        # with "leaves 1 admitted flows without service"; sizes have the same floor
        ({"weight": 1e-320}, r"weight 1e-320; weights must be at least 2\.23e-308"),
        ({"release": 2.0, "deadline": 1.0}, r"deadline 1\.0 not after its release 2\.0"),
        ({"src": [0, -1]}, r"flow 1 of coflow 'a' uses ingress port -1"),
        ({"src": [0, 1.5]}, r"not an integer"),
        ({"sizes": [1.0]}, r"2 sources, 2 destinations and 1 sizes"),
        ({"starts_after": ["a"]}, r"depends on itself"),
        ({"delay": [0.0, -2.0]}, r"delay -2\.0"),
    ],
)
def test_coflow_rejects_bad_fields(kwargs, match):
    base = {"src": [0, 1], "dst": [1, 0], "sizes": [1.0, 2.0]}
    base.update(kwargs)
    with pytest.raises(InstanceError, match=match):
        Coflow("a", **base)


def test_coflow_needs_flows_and_an_id():
    with pytest.raises(InstanceError, match="has no flows"):
        Coflow("a", [], [], [])
    with pytest.raises(InstanceError, match="non-empty string"):
        Coflow("", [0], [0], [1.0])


def test_fabric_rejects_bad_capacities():
    with pytest.raises(InstanceError, match=r"egress capacity of port 1 is 0\.0"):
        Fabric([1.0, 1.0], [1.0, 0.0])
    with pytest.raises(InstanceError, match="2 ingress but 1 egress"):
        Fabric([1.0, 1.0], [1.0])
    with pytest.raises(InstanceError, match="at least one port"):
        Fabric([], [])


def test_instance_names_the_flow_and_port_out_of_range():
    c = Coflow.from_flows("17", [(0, 1, 1.0), (2, 150, 1.0)])
    with pytest.raises(
        InstanceError, match="flow 1 of coflow '17' uses egress port 150, but the fabric has 150 ports"
    ) as err:
        Instance(Fabric.uniform(150), (c,))
    assert (err.value.coflow, err.value.flow, err.value.field) == (0, 1, "egress")


def test_instance_rejects_duplicate_ids_unknown_dependencies_and_cycles():
    a = Coflow.from_flows("a", [(0, 0, 1.0)])
    with pytest.raises(InstanceError, match="duplicate coflow id 'a'"):
        Instance(Fabric.uniform(1), (a, a))
    b = Coflow.from_flows("b", [(0, 0, 1.0)], finishes_before=["x"])
    with pytest.raises(InstanceError, match="unknown coflow 'x'"):
        Instance(Fabric.uniform(1), (a, b))
    a2 = Coflow.from_flows("a", [(0, 0, 1.0)], starts_after=["c"])
    b2 = Coflow.from_flows("b", [(0, 0, 1.0)], starts_after=["a"])
    c2 = Coflow.from_flows("c", [(0, 0, 1.0)], finishes_before=["b"])
    with pytest.raises(InstanceError, match="dependency cycle"):
        Instance(Fabric.uniform(1), (a2, b2, c2))


def test_topological_order_puts_dependencies_first():
    a = Coflow.from_flows("a", [(0, 0, 1.0)], starts_after=["c"])
    b = Coflow.from_flows("b", [(0, 0, 1.0)], finishes_before=["a"])
    c = Coflow.from_flows("c", [(0, 0, 1.0)])
    inst = Instance(Fabric.uniform(1), (a, b, c))
    pos = {int(k): i for i, k in enumerate(inst.topological_order)}
    assert pos[2] < pos[0] < pos[1]
    assert inst.has_dependencies


def test_variants_keep_the_instance_valid():
    inst = shuffle_3x2()
    moved = inst.with_releases(3.0)
    assert moved.release.tolist() == [3.0]
    assert inst.release.tolist() == [0.0]
    a = Coflow.from_flows("a", [(0, 0, 1.0)])
    b = Coflow.from_flows("b", [(0, 0, 1.0)], starts_after=["a"])
    two = Instance(Fabric.uniform(1), (a, b))
    with pytest.raises(InstanceError, match="outside the subset"):
        two.subset([1])
    assert two.subset([1], drop_dependencies=True).coflows[0].starts_after == ()
    assert two.subset([0, 1]) == two
    # positions out of range, ids and repeats: an InstanceError that says so
    # (were IndexError, ValueError from int('C1'), and a duplicate-id error)
    with pytest.raises(InstanceError, match=r"positions 0\.\.1 \(or -2\.\.-1 from the end\), got 5"):
        two.subset([5])
    with pytest.raises(InstanceError, match="coflow 'b' is at position 1"):
        two.subset(["b"])
    with pytest.raises(InstanceError, match="position 0 twice"):
        two.subset([0, 0])
    assert two.subset(np.array([-1]), drop_dependencies=True).ids == ("b",)


@settings(max_examples=60)
@given(instances(dependencies=True, delays=True, deadlines=True))
def test_derived_attributes_match_a_direct_computation(inst):
    for k, c in enumerate(inst.coflows):
        assert inst.size[k] == pytest.approx(c.sizes.sum())
        assert inst.length[k] == c.sizes.max()
        assert inst.width[k] == c.width
        assert inst.skew[k] == pytest.approx(np.std(c.sizes) / np.mean(c.sizes), abs=1e-12)
        assert inst.senders[k] == len(set(c.src.tolist()))
        assert inst.receivers[k] == len(set(c.dst.tolist()))
        ing = np.zeros(inst.num_ports)
        egr = np.zeros(inst.num_ports)
        for s, d, z in zip(c.src, c.dst, c.sizes, strict=True):
            ing[s] += z
            egr[d] += z
        assert np.allclose(inst.ingress_load[k], ing)
        assert np.allclose(inst.egress_load[k], egr)
        gamma = max((ing / inst.fabric.ingress).max(), (egr / inst.fabric.egress).max())
        assert inst.gamma[k] == pytest.approx(gamma)


@settings(max_examples=40, deadline=None)
@given(inst=instances(max_coflows=4, max_flows=4, deadlines=True, delays=True),
       a=st.integers(-6, 6), b=st.integers(-6, 6), units=st.sampled_from(["binary", "decimal"]))
def test_rescaled_is_the_same_instance_in_other_units(inst, a, b, units):
    # powers of two scale every float exactly (but subnormal ones, such as a release of
    # 5e-324); other factors up to rounding
    t, d = (2.0**a, 2.0**b) if units == "binary" else (0.008 * 2.0**a, 1e3 * 2.0**b)
    out = inst.rescaled(time_unit=t, data_unit=d)
    close = {"rtol": 0.0 if units == "binary" else 1e-12, "atol": 1e-300}
    np.testing.assert_allclose(out.flow_size * d, inst.flow_size, **close)
    np.testing.assert_allclose(out.release * t, inst.release, **close)
    np.testing.assert_allclose(out.flow_release * t, inst.flow_release, **close)
    np.testing.assert_allclose(out.deadline * t, inst.deadline, **close)
    np.testing.assert_allclose(out.fabric.capacity * d / t, inst.fabric.capacity, **close)
    np.testing.assert_allclose(out.gamma * t, inst.gamma, **close)
    assert out.ids == inst.ids and np.array_equal(out.weight, inst.weight)
    assert np.array_equal(out.flow_src, inst.flow_src) and np.array_equal(out.flow_dst, inst.flow_dst)
    # a schedule in one is a schedule in the other, times scaled by t; with factors that are
    # not powers of two, rounding can decide ties differently (pfp's crossings, an order's
    # ties), so only max-min fairness, continuous in the data, is compared there
    rtol = 1e-9
    for policy in ("varys", "fair", "sincronia", "pfp") if units == "binary" else ("fair",):
        ours = simulate(out, policy, record=False)
        ref = simulate(inst, policy, record=False)
        np.testing.assert_allclose(ours.completion * t, ref.completion, rtol=rtol, err_msg=policy)
    lb = co.bound(out, method="isolation").bound
    assert lb * t == pytest.approx(co.bound(inst, method="isolation").bound, rel=rtol)


def test_rescaled_makes_whole_units_exact():
    # 0.1 s and 0.3 s are not binary fractions; in units of 0.1 s they are 1 and 3
    c = Coflow.from_flows("a", [(0, 0, 0.3)], release=0.1)
    inst = Instance(Fabric.uniform(1, 1.0), (c,))
    out = inst.rescaled(time_unit=0.1, data_unit=0.1)
    assert out.fabric.capacity.tolist() == [1.0, 1.0]
    assert out.flow_size[0] == pytest.approx(3.0, rel=1e-15)
    assert out.release[0] == pytest.approx(1.0, rel=1e-15)
    assert inst.rescaled() == inst


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"time_unit": 0.0}, "time_unit must be finite and > 0, got 0.0"),
    ({"data_unit": -2.0}, "data_unit must be finite and > 0, got -2.0"),
    ({"time_unit": float("inf")}, "time_unit must be finite and > 0, got inf"),
    ({"data_unit": True}, "data_unit must be a number, got True"),
    ({"time_unit": "1"}, "time_unit must be a number, got '1'"),
])
def test_rescaled_refuses_units_that_are_not_positive_numbers(kwargs, message):
    with pytest.raises(InstanceError, match=message):
        shuffle_3x2().rescaled(**kwargs)


def test_rescaled_refuses_a_network():
    from coflowopt.fabric.placement import place

    inst = place(shuffle_3x2(), "spine-leaf", {"spines": "2", "oversub": "2"})
    with pytest.raises(InstanceError, match="only instances on the big switch can be rescaled"):
        inst.rescaled(time_unit=2.0)


def test_an_instance_whose_dense_loads_would_take_gigabytes_is_refused_before_they_are_built():
    # a trace header of a million ports for 300 one-flow coflows raised MemoryError (4.5 GiB)
    coflows = tuple(Coflow.from_flows(str(k), [(k, k + 1, 1.0)]) for k in range(300))
    with pytest.raises(InstanceError, match=r"300 coflows on 2,000,000 links: .* 4.5 GiB\) are held "
                       r"dense, and coflowopt holds at most 268,435,456"):
        Instance(Fabric.uniform(1_000_000), coflows)
    assert Instance(Fabric.uniform(1000), coflows).load.shape == (300, 2000)


def test_a_subset_of_an_instance_without_coflows_says_so():
    from coflowopt import Fabric, Instance, InstanceError

    empty = Instance(Fabric.uniform(2), ())
    with pytest.raises(InstanceError, match="the instance has no coflows to take, got 0"):
        empty.subset([0])
