"""Instances and results survive pickling (process pools, notebooks, distributed engines).

A round trip rebuilds an object through its constructor, so what the constructor makes
read-only stays read-only and every derived array comes out equal.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import coflowopt as co
from coflowopt import mcs
from coflowopt.sim import simulate

from .strategies import instances

ROOT = Path(__file__).resolve().parents[1]
SHUFFLE = ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json"


def round_trip(obj):
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_instances_round_trip_with_every_derived_array(inst):
    back = round_trip(inst)
    assert back == inst and back is not inst
    assert back.ids == inst.ids and back.name == inst.name
    for name in ("ptr", "flow_coflow", "flow_src", "flow_dst", "flow_size", "flow_release",
                 "release", "weight", "size", "length", "width", "load", "gamma",
                 "topological_order"):
        np.testing.assert_array_equal(getattr(back, name), getattr(inst, name))
        assert not getattr(back, name).flags.writeable, name
    np.testing.assert_array_equal(back.deadline, inst.deadline)
    assert [a.tolist() for a in back.starts_after] == [a.tolist() for a in inst.starts_after]
    assert [a.tolist() for a in back.finishes_before] == [a.tolist() for a in inst.finishes_before]
    for k, c in enumerate(inst.coflows):
        assert back.index(c.id) == k
        assert not back.coflows[k].sizes.flags.writeable


def test_simulation_result_round_trips_with_its_schedule():
    inst = co.read(SHUFFLE)
    res = simulate(inst, "aalo", record=True)
    back = round_trip(res)
    np.testing.assert_array_equal(back.completion, res.completion)
    np.testing.assert_array_equal(back.flow_completion, res.flow_completion)
    assert repr(back.summary) == repr(res.summary) and back.params == res.params  # nan bins
    assert back.schedule is not None and co.check_feasible(back.instance, back.schedule)
    for name in ("flow", "start", "end", "rate"):
        assert not getattr(back.schedule, name).flags.writeable, name
    assert json.dumps(back.to_dict(), sort_keys=True) == json.dumps(res.to_dict(), sort_keys=True)


def test_solver_results_round_trip():
    inst = co.read(SHUFFLE)
    for res in (co.solve(inst, method="exact"), co.bound(inst, method="best")):
        back = round_trip(res)
        assert back.status is res.status
        assert back.objective == res.objective or (np.isnan(back.objective) and np.isnan(res.objective))
        assert back.bound == res.bound


def test_mcs_results_keep_their_read_only_info():
    inst = co.read(SHUFFLE)
    cls = mcs.classify(inst)
    back = round_trip(cls)
    assert isinstance(back.info, MappingProxyType) and dict(back.info) == dict(cls.info)
    assert back.error == cls.error
    np.testing.assert_array_equal(back.priorities, cls.priorities)
    assert not back.priorities.flags.writeable
    w = mcs.Workload.from_instance(inst)
    w2 = round_trip(w)
    assert w2.num_coflows == w.num_coflows and not w2.size.flags.writeable
    np.testing.assert_array_equal(w2.size, w.size)
    model = mcs.single_model(w, queues=2, load=0.5)
    again = round_trip(model)
    assert isinstance(again.setting, MappingProxyType)
    theta = mcs.aalo_thresholds(2)
    assert again.objective(theta) == model.objective(theta)
    sol = mcs.dp_thresholds(model)
    sol2 = round_trip(sol)
    assert isinstance(sol2.info, MappingProxyType) and sol2.objective == sol.objective
    np.testing.assert_array_equal(sol2.thresholds, sol.thresholds)


def test_a_tampered_pickle_is_validated_again():
    inst = co.read(SHUFFLE)
    fn, (cls, kwargs, proxies, frozen) = inst.__reduce__()
    bad = dict(kwargs, coflows=kwargs["coflows"] + kwargs["coflows"])  # duplicate ids
    with pytest.raises(co.InstanceError, match="duplicate coflow id"):
        fn(cls, bad, proxies, frozen)
