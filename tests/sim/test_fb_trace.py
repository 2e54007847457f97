"""The bundled Facebook trace: the orderings the dissertation reports.

The full trace takes too long for the test budget with the per-flow
policies (see benchmarks/results/simulator.md), so these run on its first
150 coflows by arrival (75,623 flows) and check what the dissertation's
figures show there too: coflow-aware schedulers beat per-flow fairness, FIFO loses
to Varys, and Aalo trails Varys where the dissertation says it does.

Varys against Aalo: the issue's ordering (Varys' mean CCT below Aalo's below
per-flow fairness') holds on the prefix (2.49 s, 2.60 s, 3.24 s; tested) and
on the whole trace (35.3 s, 41.6 s, 64.6 s; benchmarks/results/simulator.md).
The dissertation's EC2 runs (§6.8.2, Figures 6.5-6.6) also put Aalo's average
CCT within 12% of Varys', the same as Varys on the large coflows of bin 4 and
behind it on the short coflows of bins 1 and 3 (lack of foresight); the
prefix shows that pattern too (tested). Varys' whole-trace numbers are
checked against FIFO directly (Varys alone takes a few seconds).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import coflowopt as co
from coflowopt.metrics import Summary
from coflowopt.sim import simulate

pytestmark = pytest.mark.slow  # the whole trace, or most of it

TRACE = Path(__file__).resolve().parents[2] / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


@pytest.fixture(scope="module")
def trace() -> co.Instance:
    return co.read(TRACE)


@pytest.fixture(scope="module")
def prefix(trace) -> co.Instance:
    return trace.subset(np.argsort(trace.release, kind="stable")[:150])


def summary(inst: co.Instance, name: str, **kw) -> Summary:
    res = simulate(inst, name, record=False, **kw)
    assert np.all(np.isfinite(res.completion))
    return res.summary


def mean(inst: co.Instance, name: str, **kw) -> float:
    return summary(inst, name, **kw).mean_cct


def test_coflow_schedulers_beat_per_flow_fairness_fifo_and_aalo_trail_varys_as_in_the_seeds(prefix):
    fair = mean(prefix, "fair")
    varys = summary(prefix, "varys")
    aalo = summary(prefix, "aalo")
    fifo = mean(prefix, "fifo")
    assert varys.mean_cct < aalo.mean_cct < fair
    assert varys.mean_cct < fifo
    # §6.8.2: Aalo's average CCT within 12% of Varys'; the same on bin 4 (long and wide),
    # behind on the short bins 1 (SN) and 3 (SW)
    assert abs(aalo.mean_cct - varys.mean_cct) / varys.mean_cct < 0.12
    va, aa = varys.bin_mean_cct, aalo.bin_mean_cct
    assert abs(aa["LW"] - va["LW"]) / va["LW"] < 0.12
    assert aa["SN"] > va["SN"] and aa["SW"] > va["SW"]


def test_the_prefix_schedules_are_feasible(prefix):
    res = simulate(prefix, "varys")
    assert co.check_feasible(prefix, res.schedule)


def test_varys_on_the_whole_trace_beats_fifo_by_the_dissertations_margin(trace):
    varys = mean(trace, "varys", check=False)
    fifo = mean(trace, "fifo", check=False)
    # §5.7.4: FIFO's average CCT is 3.33x Varys' in the dissertation's simulation (3.42x here)
    assert 2.0 < fifo / varys < 6.0
