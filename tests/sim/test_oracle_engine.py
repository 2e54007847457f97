"""Batch arrivals, dependencies, multi-wave coflows and trace port rates against an exact oracle.

:mod:`.oracle_engine` simulates ``fair`` and ``fifo`` in exact rationals from the
documented admission rules (``models/simulator.md``, the docstrings of ``Coflow``,
``simulate``, the engine and ``SimulationResult``), sharing no code with the
engine. Instances are small: 2-4 ports, up to 5 coflows of up to 6 flows, with
per-flow delays, ``starts_after`` and ``finishes_before`` predecessors and a batch
interval, either on a grid of quarters (exact ties: batch boundaries that fall on
completions, equal flow sizes for the anchor) or with random float sizes and
capacities (releases, delays and intervals on a grid of 1/1000: the engine treats
instants within a relative 1e-12 as one, the exact oracle does not). The trace
tests read Sincronia and Coflow-Benchmark text with ``port_rate`` (and the native
JSON format with delays and dependencies) through ``coflowopt.io`` and the CLI;
the oracle gets the instance from its own reading of the formats' docstrings.
"""

from __future__ import annotations

import csv
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coflowopt as co
from coflowopt.cli import main
from coflowopt.instance import Coflow, Fabric, Instance
from coflowopt.sim import simulate

from .oracle_engine import Outcome, Spec
from .oracle_engine import simulate as exact_simulate
from .test_oracle import draw_fabric

MB = 2**20
Case = tuple[list[float], list[float], list[Spec], float | None]


@st.composite
def cases(draw: st.DrawFn) -> Case:
    grid, size, time, up, down, port = draw_fabric(draw)
    batch = draw(st.sampled_from([None, 0.25, 0.5, 0.75, 1.0, 1.5] if grid
                                 else [None, 0.1, 0.25, 0.3, 0.7, 1.0]))
    specs: list[Spec] = []
    for k in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):  # multi-wave: some flows start after the release
            delay = st.one_of(st.just(0.0), time)
            flows = draw(st.lists(st.tuples(port, port, size, delay), min_size=1, max_size=6))
        else:
            flows = draw(st.lists(st.tuples(port, port, size), min_size=1, max_size=6))
        earlier = st.lists(st.integers(0, k - 1), max_size=2, unique=True) if k else st.just([])
        specs.append(Spec(draw(time), flows, tuple(sorted(draw(earlier))),
                          tuple(sorted(draw(earlier)))))
    return up, down, specs, batch


def instance(up: list[float], down: list[float], specs: list[Spec]) -> Instance:
    return Instance(Fabric(up, down), tuple(
        Coflow(
            f"c{k}", [f[0] for f in s.flows], [f[1] for f in s.flows], [f[2] for f in s.flows],
            release=s.release,
            starts_after=tuple(f"c{j}" for j in s.starts_after),
            finishes_before=tuple(f"c{j}" for j in s.finishes_before),
            delay=[f[3] if len(f) > 3 else 0.0 for f in s.flows]
            if any(len(f) > 3 for f in s.flows) else None,
        )
        for k, s in enumerate(specs)
    ))


def close(got, want: list[Fraction]) -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=float), [float(x) for x in want],
                               rtol=1e-9, atol=1e-12)


def assert_agrees(res: co.sim.SimulationResult, want: Outcome) -> None:
    close(res.completion, want.completion)
    close(res.cct, want.cct)
    close(res.admitted, want.admitted)
    close(res.flow_completion, want.flow_completion)
    fct = [c - r for c, r in zip(want.flow_completion, want.flow_release, strict=True)]
    close([res.mean_fct], [sum(fct) / len(fct)])


@pytest.mark.parametrize("name", ["fair", "fifo"])
@settings(max_examples=300, deadline=None)
@given(case=cases(), compiled=st.booleans())
def test_the_policy_agrees_with_the_engine_oracle(name, case, compiled):
    up, down, specs, batch = case
    res = simulate(instance(up, down, specs), name, batch_interval=batch, compiled=compiled)
    assert_agrees(res, exact_simulate(up, down, specs, name, batch))


def run_both(up, down, specs, name, batch=None) -> Outcome:
    want = exact_simulate(up, down, specs, name, batch)
    for compiled in (True, False):
        res = simulate(instance(up, down, specs), name, batch_interval=batch, compiled=compiled)
        assert_agrees(res, want)
    return want


def q(*xs: float | str) -> list[Fraction]:
    """Exact values as written (``"3.2"`` is 16/5)."""
    return [Fraction(str(x)) for x in xs]


def test_batch_boundaries_count_from_zero_and_hold_dependency_releases_too():
    # B = 1: c0 released at 0.5 is admitted at 1 and ends at 2.5; c1 (starts after c0) is
    # admitted at the next multiple after that, 3, not at 2.5, and its CCT counts from its
    # release 0.2; c2 is admitted at 0 with its flow 0->1, its anchor (the smaller flow,
    # 0.5) waits for c0 and the boundary too
    specs = [
        Spec(0.5, [(0, 0, 1.5)]),
        Spec(0.2, [(2, 2, 1.0)], starts_after=(0,)),
        Spec(0.0, [(0, 1, 1.0), (1, 0, 0.5)], finishes_before=(0,)),
    ]
    for name in ("fair", "fifo"):
        want = run_both([1.0] * 3, [1.0] * 3, specs, name, batch=1.0)
        assert want.admitted == q(1, 3, 0) and want.flow_admitted == q(1, 3, 0, 3)
        assert want.completion == q(2.5, 4, 3.5) and want.cct == q(2, 3.8, 3.5)


def test_a_wave_admits_its_flows_at_the_release_plus_their_delay_rounded_up():
    # flows at 0.2 + 0 -> 1 and 0.2 + 1.1 = 1.3 -> 2 (B = 1); the coflow is admitted with
    # its first flow and its CCT counts from 0.2
    specs = [Spec(0.2, [(0, 0, 1.0, 0.0), (1, 1, 1.0, 1.1)])]
    for name in ("fair", "fifo"):
        want = run_both([1.0, 1.0], [1.0, 1.0], specs, name, batch=1.0)
        assert want.flow_admitted == q(1, 2) and want.admitted == q(1)
        assert want.completion == q(3) and want.cct == q(2.8)


def test_the_anchor_is_the_smallest_flow_of_all_waves_lowest_index_on_ties():
    # c1's flows: 1.0 at once, 0.5 at +2 and 0.5 at once: the two 0.5 tie and the lower
    # index, the second wave's flow 1->0, is the anchor; c0 ends at 3, so it is admitted at
    # max(2, 3) = 3, while the other 0.5 runs from 0
    specs = [
        Spec(0.0, [(0, 0, 3.0)]),
        Spec(0.0, [(1, 1, 1.0, 0.0), (1, 0, 0.5, 2.0), (1, 1, 0.5, 0.0)], finishes_before=(0,)),
    ]
    want = run_both([1.0, 1.0], [1.0, 1.0], specs, "fair")
    assert want.flow_admitted == q(0, 0, 3, 0) and want.completion == q(3, 3.5)


def test_fifo_orders_coflows_by_admission_not_release():
    # B = 1: c0 (released 0.5) and c1 (released 0.1) are both admitted at 1: a tie, the
    # lower index goes first
    specs = [Spec(0.5, [(0, 0, 1.0)]), Spec(0.1, [(0, 0, 1.0)])]
    assert run_both([1.0], [1.0], specs, "fifo", batch=1.0).completion == q(2, 3)
    # c1 starts after c0 and is admitted at 1.5, after c2 (released and admitted at 1.2)
    specs = [
        Spec(0.0, [(1, 1, 1.5)]),
        Spec(0.0, [(0, 0, 1.0)], starts_after=(0,)),
        Spec(1.2, [(0, 0, 1.0)]),
    ]
    assert run_both([1.0, 1.0], [1.0, 1.0], specs, "fifo").completion == q(1.5, 3.2, 2.2)


@pytest.mark.parametrize("name", ["fifo", "varys"])
@pytest.mark.parametrize("compiled", [True, False])
def test_fifo_reallocates_when_the_fabric_goes_idle_before_a_pending_admission(name, compiled):
    # c0's first wave (0->1, 2 units) holds uplink 0 until 3.2; c1 (1 unit 0->0, admitted at
    # 3, behind c0) gets nothing. At 3.2 nothing runs, but c0 is not complete (its second
    # wave comes at 31.2), so there is no coflow event: the fabric stalls and the policy is
    # asked again (the engine used to wait for the pending admission at 31.2 when a stall
    # also required "nothing else pending": c1 ended at 32.2)
    specs = [Spec(1.2, [(2, 2, 0.5, 30.0), (0, 1, 2.0, 0.0)]), Spec(1.0, [(0, 0, 1.0, 2.0)])]
    want = exact_simulate([1.0] * 3, [1.0] * 3, specs, "fifo")
    assert want.completion == q(31.7, 4.2)
    res = simulate(instance([1.0] * 3, [1.0] * 3, specs), name, compiled=compiled)
    close(res.completion, want.completion)


# -- traces: port_rate -------------------------------------------------------------------

@st.composite
def traces(draw: st.DrawFn) -> tuple[str, str, list[Spec], int]:
    """A Sincronia or Coflow-Benchmark trace and the coflows it means (bytes, seconds)."""
    ports = draw(st.integers(2, 4))
    port = st.integers(0, ports - 1)
    fmt = draw(st.sampled_from(["sincronia", "benchmark"]))
    lines, specs = [], []
    for k in range(draw(st.integers(1, 4))):
        ms = draw(st.integers(0, 3000))
        if fmt == "sincronia":
            rows = draw(st.lists(st.tuples(port, port, st.integers(1, 6)), min_size=1, max_size=5))
            senders, receivers = len({r[0] for r in rows}), len({r[1] for r in rows})
            lines.append(f"{k} {ms} {len(rows)} {senders} {receivers} "
                         + " ".join(f"{s} {d} {mb}" for s, d, mb in rows))
            flows = [(s, d, mb * MB) for s, d, mb in rows]
        else:
            mappers = draw(st.lists(port, min_size=1, max_size=3))
            reducers = draw(st.lists(st.tuples(port, st.integers(1, 6)), min_size=1, max_size=3))
            lines.append(f"{k} {ms} {len(mappers)} {' '.join(map(str, mappers))} {len(reducers)} "
                         + " ".join(f"{r}:{mb}" for r, mb in reducers))
            flows = [(m, r, mb * MB / len(mappers)) for r, mb in reducers for m in mappers]
        specs.append(Spec(ms / 1000, flows))
    return fmt, "\n".join([f"{ports} {len(specs)}", *lines]) + "\n", specs, ports


@settings(max_examples=60, deadline=None)
@given(trace=traces(), rate=st.sampled_from([float(MB), 4e6, 1.25e8]),
       batch=st.sampled_from([None, 0.25, 1.0]), name=st.sampled_from(["fair", "fifo"]))
def test_trace_port_rates_and_batches_agree_with_the_oracle(tmp_path_factory, trace, rate,
                                                            batch, name):
    fmt, text, specs, ports = trace
    path = tmp_path_factory.mktemp("trace") / "t.txt"
    path.write_text(text)
    want = exact_simulate([rate] * ports, [rate] * ports, specs, name, batch)
    inst = co.io.read(str(path), format=fmt, port_rate=rate)
    for compiled in (True, False):
        assert_agrees(simulate(inst, name, batch_interval=batch, compiled=compiled), want)
    out = path.with_suffix(".csv")
    argv = ["simulate", str(path), "--format", fmt, "-s", name, "--port-rate", repr(rate),
            "--csv", str(out), "--no-progress"]
    if batch is not None:
        argv += ["--batch-interval", repr(batch)]
    assert main(argv) == 0
    rows = list(csv.DictReader(out.read_text().splitlines()))
    close([float(r["finish"]) for r in rows], want.completion)
    close([float(r["cct"]) for r in rows], want.cct)


def test_a_flow_ending_within_the_simultaneity_window_of_its_coflow_event_ends_with_it(tmp_path):
    # hypothesis: c2's three flows of 1/3 MB sum to one ulp below 1 MB, so c2 ends 1e-16 s
    # before c0's backfilled flow 1 -> 1; exact arithmetic leaves that flow 1e-10 bytes,
    # which MADD then stretches to t = 3. The model makes events within 1e-12 one: it
    # ends at 2 on both sides.
    path = tmp_path / "t.txt"
    path.write_text("2 3\n0 1000 1 1 2 0:1 1:1\n1 0 1 0 1 0:1\n2 0 3 0 0 0 1 0:1\n")
    third = 1048576.0 / 3
    specs = [Spec(1.0, [(1, 0, 1048576.0), (1, 1, 1048576.0)]), Spec(0.0, [(0, 0, 1048576.0)]),
             Spec(0.0, [(0, 0, third)] * 3)]
    want = exact_simulate([1048576.0] * 2, [1048576.0] * 2, specs, "fifo")
    assert want.flow_completion == [3, 2, 1, 2, 2, 2]
    inst = co.io.read(str(path), format="benchmark", port_rate=1048576.0)
    for compiled in (True, False):
        assert_agrees(simulate(inst, "fifo", compiled=compiled), want)


def test_the_cli_reads_delays_and_dependencies_from_json(tmp_path, capsys):
    specs = [
        Spec(0.5, [(0, 0, 1.5)]),
        Spec(0.1, [(1, 1, 1.0, 0.2), (1, 0, 0.5)], finishes_before=(0,)),
        Spec(0.0, [(0, 1, 0.75, 1.0)], starts_after=(1,)),
    ]
    doc = {"format": "coflowopt-instance/1", "ports": {"ingress": [1, 2], "egress": [1, 1]},
           "coflows": [{"id": f"c{k}", "release": s.release, "flows": [list(f) for f in s.flows],
                        "starts_after": [f"c{j}" for j in s.starts_after],
                        "finishes_before": [f"c{j}" for j in s.finishes_before]}
                       for k, s in enumerate(specs)]}
    path = tmp_path / "i.json"
    path.write_text(json.dumps(doc))
    for name in ("fair", "fifo"):
        want = exact_simulate([1, 2], [1, 1], specs, name, 0.5)
        capsys.readouterr()
        assert main(["simulate", str(path), "-s", name, "--batch-interval", "0.5", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)["coflow_results"]
        close([r["finish"] for r in rows], want.completion)
        close([r["cct"] for r in rows], want.cct)
        close([r["admitted"] for r in rows], want.admitted)
