"""Workload statistics: MCS Table I on the Facebook trace, joint distribution, input checks."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

import coflowopt as co
from coflowopt.instance import MB
from coflowopt.mcs import Workload, correlations, joint_distribution
from coflowopt.mcs.stats import as_workload, decade_edges

from ._strategies import workloads

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"

# MCS Table I on the trace: proofs/test_mcs_model.py (recomputed with numpy as well)


@pytest.fixture(scope="module")
def fb() -> co.Instance:
    return co.read(TRACE)


def test_gamma_is_the_bytes_bottleneck(fb):
    w = Workload.from_instance(fb)
    # uniform ports: bytes on the busiest port = isolation time x port rate
    np.testing.assert_allclose(w.gamma, fb.gamma * fb.fabric.capacity[0])
    assert np.all(w.length <= w.size) and np.all(w.gamma <= w.size)


def test_joint_distribution_of_the_trace_counts_every_coflow(fb):
    joint = joint_distribution(fb)
    assert joint.counts.sum() == 526
    assert joint.width_edges[0] == 1 and joint.size_edges[0] == co.MB
    # the narrowest decade holds the 200 coflows under 10 MB (computed from the trace)
    assert joint.counts[0, 0] == 200 and joint.counts[0, 1:].sum() == 0
    np.testing.assert_allclose(joint.fractions.sum(), 1.0)


@settings(max_examples=60, deadline=None)
@given(workloads(min_coflows=4))
def test_correlations_match_numpy(w):
    x = np.vstack([w.width, w.size, w.gamma, w.length]).astype(float)
    corr = correlations(w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.corrcoef(x)
        expected_log = np.corrcoef(np.log10(x))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(corr.pearson[finite], expected[finite], atol=1e-9)
    assert np.all(np.isnan(corr.pearson[~finite]))
    finite = np.isfinite(expected_log)
    np.testing.assert_allclose(corr.pearson_log[finite], expected_log[finite], atol=1e-9)
    lo, hi = corr.ci_log[..., 0], corr.ci_log[..., 1]
    ok = np.isfinite(lo)
    assert np.all(lo[ok] <= corr.pearson_log[ok] + 1e-12) and np.all(corr.pearson_log[ok] <= hi[ok] + 1e-12)


@settings(max_examples=60, deadline=None)
@given(workloads())
def test_joint_distribution_partitions_the_coflows(w):
    joint = joint_distribution(w, size_edges=[0, 4, 20, np.inf], width_edges=[0, 5, 15, np.inf])
    assert joint.counts.sum() == w.num_coflows
    assert joint.counts[0, 0] == np.count_nonzero((w.size < 4) & (w.width < 5))
    assert joint.counts[2, 2] == np.count_nonzero((w.size >= 20) & (w.width >= 15))


def test_decade_edges_cover_the_values():
    edges = decade_edges([3.0, 10.0, 999.0])
    np.testing.assert_allclose(edges, [1, 10, 100, 1000])
    assert edges[0] <= 3 and edges[-1] > 999


@pytest.mark.parametrize("x", [99.99999999999999, 999.9999999999999, 1000.0, 0.09999999999999999])
@pytest.mark.parametrize("unit", [1.0, MB])
def test_decade_edges_hold_a_value_just_below_a_power_of_ten(x, unit):
    # log10(99.99999999999999) rounds to 2.0: the default edges started at 100 and the
    # joint table left out the smallest coflow (0.1 + 64.6 + 35.3 MB in a trace)
    values = np.array([x, 5 * x]) * unit
    edges = decade_edges(values, unit=unit)
    assert edges[0] <= values.min() and edges[-1] > values.max()
    w = Workload([1, 2], values, values, values)
    if unit == MB:
        assert joint_distribution(w).counts.sum() == 2


def test_constant_attribute_gives_nan_without_warnings():
    w = Workload([3, 3, 3], [1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corr = correlations(w)
    assert np.isnan(corr.pearson[0, 1]) and np.isnan(corr.pearson_log[3, 1])
    assert corr.pearson[1, 2] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"width": [0, 1], "size": [1.0, 1.0], "length": [1.0, 1.0], "gamma": [1.0, 1.0]}, "width 0"),
        ({"width": [1.5], "size": [1.0], "length": [1.0], "gamma": [1.0]}, "whole numbers"),
        ({"width": [1], "size": [-1.0], "length": [1.0], "gamma": [1.0]}, "size -1.0"),
        ({"width": [1], "size": [1.0], "length": [2.0], "gamma": [1.0]}, "above its size"),
        ({"width": [1, 2], "size": [1.0], "length": [1.0], "gamma": [1.0]}, "expected 2 coflow sizes"),
    ],
)
def test_bad_workloads_are_rejected(kwargs, match):
    with pytest.raises(co.InstanceError, match=match):
        Workload(**kwargs)


def test_bad_inputs_are_named():
    with pytest.raises(co.InstanceError, match="expected an Instance or a Workload"):
        as_workload([1, 2])
    w = Workload([1, 2], [1.0, 2.0], [1.0, 2.0], [1.0, 2.0])
    with pytest.raises(co.InstanceError, match="unknown attribute 'skew'"):
        correlations(w, attributes=("width", "skew"))
    with pytest.raises(co.InstanceError, match="edges must be at least two increasing"):
        joint_distribution(w, size_edges=[5, 1])
