"""Sensitivity sweeps of the threshold model (Aalo Fig. 6.12, MCS Figs. 17-18)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import coflowopt as co
from coflowopt import MB
from coflowopt.mcs import (
    Table,
    Workload,
    aalo_sweep,
    aalo_thresholds,
    double_model,
    linear_sweep,
    mcs_sweep,
    mcs_thresholds,
    plot_sweep,
    single_model,
)

W = Workload(
    [1, 3, 8, 20, 60, 200, 900, 5000],
    np.array([0.5, 2, 12, 40, 300, 2500, 9e4, 3e6]) * MB,
    np.array([0.5, 1, 3, 4, 8, 30, 200, 900]) * MB,
    np.ones(8),
)


def test_aalo_sweep_rows_are_model_objectives():
    table = aalo_sweep(W, load=0.4, queues=(1, 2, 4), factors=(2.0, 10.0), first=(1 * MB, 10 * MB))
    assert table.columns == ("queues", "E", "Q1_mb", "objective", "relative")
    assert len(table.rows) == 3 * 2 * 2
    for row in table.as_dicts():
        k = row["queues"]
        model = single_model(W, queues=k, load=0.4)
        expected = model.objective(aalo_thresholds(k, factor=row["E"], first=row["Q1_mb"] * MB))
        assert row["objective"] == pytest.approx(expected)
        if k == 1:  # one queue is FIFO: S_1 = rho
            assert row["objective"] == pytest.approx(0.4) and row["relative"] == pytest.approx(1.0)


def test_linear_sweep_uses_equal_sized_queues():
    table = linear_sweep(W, load=0.5, queues=(1, 10))
    assert table.column("queues") == [1, 10]
    assert table.column("relative")[0] == pytest.approx(1.0)
    assert table.column("objective")[1] <= table.column("objective")[0]
    # the ten queues are 1 TB each up to the default 10 TB (written out here, so that the
    # queues are checked to be equal-sized)
    tb = 2.0**40
    equal = single_model(W, queues=10, load=0.5).objective(np.arange(1, 10) * tb)
    assert table.column("objective")[1] == pytest.approx(equal, rel=1e-12)
    assert table.column("relative")[1] == pytest.approx(
        equal / single_model(W, queues=1, load=0.5).objective(np.zeros(0)), rel=1e-12)


def test_mcs_sweep_reference_is_the_papers_default():
    table = mcs_sweep(W, load=0.5, queues=5, narrow_first=(1 * MB, 10 * MB), wide_first=(1 * MB, 4 * MB))
    rows = {(r["theta_n1_mb"], r["theta_w1_mb"]): r for r in table.as_dicts()}
    assert rows[(10.0, 1.0)]["relative"] == pytest.approx(1.0)
    model = double_model(W, queues=5, load=0.5)
    assert rows[(1.0, 4.0)]["objective"] == pytest.approx(
        model.objective(mcs_thresholds(5, narrow_first=1 * MB, wide_first=4 * MB))
    )
    scaled = mcs_sweep(W, load=0.5, queues=5, delta_scale=(0.1, 1.0))
    assert scaled.column("delta_scale") == [0.1, 1.0]
    assert "| delta_scale |" in scaled.to_markdown()


def test_bad_sweep_arguments():
    with pytest.raises(co.InstanceError, match="queue counts must be integers >= 1"):
        aalo_sweep(W, load=0.5, queues=(0,))
    with pytest.raises(co.InstanceError, match="factors must be a non-empty list"):
        aalo_sweep(W, load=0.5, factors=())
    with pytest.raises(co.InstanceError, match="does not match the columns"):
        Table(("a", "b"), ((1,),))


def test_plot_needs_matplotlib():
    table = aalo_sweep(W, load=0.5, queues=(1, 2))
    if importlib.util.find_spec("matplotlib") is None:
        with pytest.raises(co.MissingDependencyError, match=r"coflowopt\[plot\]"):
            plot_sweep(table, "queues")
    else:
        import matplotlib

        matplotlib.use("Agg")
        fig = plot_sweep(table, "queues", logx=False)
        assert fig.axes[0].get_xlabel() == "queues"
    with pytest.raises((co.InstanceError, co.MissingDependencyError)):
        plot_sweep(table, "nothing")


def test_the_default_linear_sweep_runs():
    # its default queue counts went to 10,000, past the models' 64: it failed, and
    # benchmarks/mcs_fb.py with it
    table = linear_sweep(W, load=0.5)
    assert table.column("queues")[-1] == 64
    assert all(0 < r <= 1 + 1e-12 for r in table.column("relative"))


@pytest.mark.parametrize(("argv", "lines"), [
    (["--first", "1,10,100", "--queues", "2,5,10"], {"queues=2", "queues=5", "queues=10"}),
    (["--kind", "mcs", "--theta-n", "1,10", "--theta-w", "1,4"], {"theta_n1_mb=1", "theta_n1_mb=10"}),
    (["--queues", "2,5"], {None}),
])
def test_the_sweep_figure_has_a_line_per_other_parameter(tmp_path, monkeypatch, argv, lines):
    # one line went through every point, the series of each queue count joined in a zig-zag
    pytest.importorskip("matplotlib")
    from coflowopt.cli import main
    from coflowopt.cli import mcs as cli_mcs

    drawn = []
    monkeypatch.setattr(cli_mcs, "save_plot", lambda fig, out: drawn.append(fig))
    inst = tmp_path / "w.json"
    assert main(["generate", "synthetic", "--coflows", "30", "--ports", "6", "-o", str(inst)]) == 0
    assert main(["mcs", "sweep", str(inst), "--load", "0.5", "--plot", str(tmp_path / "s.png"),
                 *argv]) == 0
    ax = drawn[0].axes[0]
    labels = {line.get_label() for line in ax.get_lines()}
    assert labels == lines or (lines == {None} and len(ax.get_lines()) == 1)
    xs = [list(line.get_xdata()) for line in ax.get_lines()]
    assert all(x == sorted(x) and len(set(x)) == len(x) for x in xs)
