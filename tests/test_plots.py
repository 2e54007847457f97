"""Figures: the compare table as a figure, from Python and from ``compare --plot``."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import coflowopt as co
from coflowopt.cli import main
from coflowopt.plots import BIN_NAMES, compare_figure

ROOT = Path(__file__).resolve().parents[1]
SHUFFLE = ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json"


def _rows(bound: bool) -> list[dict]:
    rows = []
    for name, scale in (("varys", 1.0), ("fair", 2.5), ("fifo", math.nan)):
        row = {"scheduler": name, "norm_mean": scale,
               **{f"norm_{b}": scale * (i + 1) for i, b in enumerate(BIN_NAMES)}}
        if bound:
            row["cct_vs_bound"] = 1.5 * scale
        rows.append(row)
    return rows


@pytest.mark.parametrize("bound", [True, False])
def test_the_compare_figure_has_a_bar_per_scheduler_and_bin(bound):
    fig = compare_figure(_rows(bound), baseline="varys", title="t", bin_counts={"SN": 3})
    axes = fig.axes
    assert len(axes) == (2 if bound else 1)
    bars = axes[0].patches
    assert len(bars) == 3 * (1 + len(BIN_NAMES))  # a NaN ratio draws a bar of no height
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["varys", "fair", "fifo"]
    assert axes[0].get_yscale() == "log"
    labels = [t.get_text() for t in axes[0].get_legend().get_texts()]
    assert labels == ["all", "SN (3)", "LN", "SW", "LW"]
    if bound:
        widths = [p.get_width() for p in axes[1].patches]
        assert widths[:2] == [1.5, 3.75] and math.isnan(widths[2])


def test_compare_writes_its_figure(tmp_path, capsys):
    out = tmp_path / "cmp.png"
    code = main(["compare", str(SHUFFLE), "--schedulers", "varys,fair", "--bound", "best",
                 "--plot", str(out), "--no-progress"])
    assert code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"figure written to {out}" in capsys.readouterr().out


def test_a_plot_of_an_unknown_type_is_refused_before_any_work(tmp_path, capsys):
    code = main(["compare", str(SHUFFLE), "--plot", str(tmp_path / "cmp.gif")])
    assert code == 2
    assert "the file name must end in one of .png, .pdf, .svg" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_figures_without_matplotlib_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    with pytest.raises(co.MissingDependencyError, match=r"coflowopt\[plot\]"):
        compare_figure(_rows(False), baseline="varys")


def test_a_notebook_shows_a_figure_as_an_image_without_pyplot():
    # IPython asks an object's class for _repr_png_; a plain Figure had none until pyplot
    # had drawn, and a notebook cell ending in a figure showed only its text
    import pickle

    from coflowopt.mcs.sweeps import aalo_sweep, plot_sweep
    from coflowopt.plots import cct_cdf_figure

    table = aalo_sweep(co.mcs.Workload([1, 2, 3], [1.0, 5.0, 9.0], [1.0, 5.0, 9.0],
                                       [1.0, 5.0, 9.0]), load=0.5, queues=(1, 2))
    for fig in (cct_cdf_figure({"a": [1.0, 2.0, 3.0]}), plot_sweep(table, "queues")):
        png = fig._repr_png_()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
        assert type(pickle.loads(pickle.dumps(fig))) is type(fig)


def test_the_cct_cdf_rises_by_one_over_n_at_each_cct():
    from coflowopt.plots import cct_cdf_figure

    fig = cct_cdf_figure({"a": [3.0, 1.0, 2.0], "b": [0.0, 4.0]}, title="t")
    ax = fig.axes[0]
    a, b = ax.get_lines()
    # from 0 at the first CCT: one CCT shows as a rise
    assert list(a.get_xdata()) == [1.0, 1.0, 2.0, 3.0]
    assert list(a.get_ydata()) == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])
    # a coflow of nothing (CCT 0) is off the log axis but counted in the fraction
    assert list(b.get_xdata()) == [4.0, 4.0] and list(b.get_ydata()) == [0.5, 1.0]
    (one,) = cct_cdf_figure({"one": [3.0]}).axes[0].get_lines()
    assert list(one.get_xdata()) == [3.0, 3.0] and list(one.get_ydata()) == [0.0, 1.0]
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    with pytest.raises(co.InputError, match="no CCTs for 'c'"):
        cct_cdf_figure({"c": []})


def _two_coflows():
    inst = co.Instance(co.Fabric.uniform(2, 2.0), (
        co.Coflow("x", [0], [0], [2.0]), co.Coflow("y", [0], [1], [1.0])))
    # x at rate 2 over [0, 1); y at rate 1 over [0.5, 1.5) (its ingress shared with x
    # over [0.5, 1): 3 > 2, so infeasible, which the drawing does not judge)
    sched = co.Schedule([0, 1], [0.0, 0.5], [1.0, 1.5], [2.0, 1.0])
    return inst, sched


def test_link_occupancy_is_each_coflows_rate_over_the_capacity():
    from coflowopt.plots import link_occupancy

    inst, sched = _two_coflows()
    times, share = link_occupancy(inst, sched, 0)  # ingress 0: both coflows
    assert list(times) == [0.0, 0.5, 1.0, 1.5]
    assert share.tolist() == [[1.0, 0.0], [1.0, 0.5], [0.0, 0.5]]
    times, share = link_occupancy(inst, sched, 3)  # egress 1: y only
    assert list(times) == [0.5, 1.5] and share.tolist() == [[0.0, 0.5]]
    times, share = link_occupancy(inst, sched, 1)  # ingress 1: nothing
    assert times.size == 0 and share.shape == (0, 2)


def test_link_occupancy_counts_a_sprayed_flows_share_of_a_link():
    from coflowopt.fabric import Network, SpineLeaf
    from coflowopt.plots import link_occupancy

    net = Network(SpineLeaf(2, 2, 1, 1.0, 1.0), "spray")
    inst = co.Instance(net, (co.Coflow("x", [0], [1], [1.0]),))
    sched = co.Schedule([0], [0.0], [1.0], [1.0])
    row = inst.routes.toarray()[0]
    halves = np.flatnonzero(np.isclose(row, 0.5))
    assert halves.size == 4  # two spines, up and down
    for link in halves:
        times, share = link_occupancy(inst, sched, int(link))
        assert list(times) == [0.0, 1.0] and share.tolist() == [[0.5]]


def test_the_timeline_stacks_each_links_coflows_within_its_row():
    from coflowopt.plots import timeline_figure

    inst, sched = _two_coflows()
    fig = timeline_figure(inst, sched, title="t")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 3  # ingress 0, egress 0, egress 1: the links a piece crosses
    boxes = sorted((round(p.get_x(), 9), round(p.get_y(), 9), round(p.get_width(), 9),
                    round(p.get_height(), 9)) for p in ax.patches)
    # row 0 (ingress 0): x full over [0, 1), y's half stacked above x over [0.5, 1),
    # then y's half alone over [1, 1.5); a row's bottom is at row + 0.4, full height 0.8
    assert (0.0, -0.4, 0.5, 0.8) in boxes
    assert (0.5, -0.4, 0.5, 0.8) in boxes
    assert (0.5, -0.8, 0.5, 0.4) in boxes
    assert (1.0, 0.0, 0.5, 0.4) in boxes
    with pytest.raises(co.InputError, match="link 9 does not exist"):
        timeline_figure(inst, sched, links=[9])


def test_the_optimal_and_a_heuristic_schedule_draw_side_by_side(tmp_path):
    from coflowopt.plots import timeline_figure
    from coflowopt.sim import simulate

    inst = co.read(ROOT / "instances" / "examples"
                   / "dissertation_5_1_varys_motivating_reconstructed.json")
    for name, sched in (("fair", simulate(inst, "fair").schedule),
                        ("optimal", co.solve(inst).schedule)):
        fig = timeline_figure(inst, sched, title=name)
        fig.savefig(tmp_path / f"{name}.png")
        assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
        assert fig.axes[0].patches


def test_compare_writes_the_cct_distribution(tmp_path, capsys):
    import matplotlib.image

    out = tmp_path / "cdf.png"
    code = main(["compare", str(SHUFFLE), "--schedulers", "varys,fair", "--cdf", str(out),
                 "--no-progress"])
    assert code == 0
    assert matplotlib.image.imread(out).shape[2] in (3, 4)
    assert f"figure written to {out}" in capsys.readouterr().out
    code = main(["compare", str(SHUFFLE), "--cdf", str(tmp_path / "cdf.gif")])
    assert code == 2
    assert "--cdf " in capsys.readouterr().err


def test_simulate_draws_its_schedule(tmp_path, capsys):
    import matplotlib.image

    out = tmp_path / "t.png"
    assert main(["simulate", str(SHUFFLE), "-s", "varys", "--timeline", str(out)]) == 0
    assert matplotlib.image.imread(out).shape[2] in (3, 4)
    assert f"figure written to {out}" in capsys.readouterr().out


def test_a_timeline_of_too_many_links_is_refused_before_the_run(tmp_path, capsys):
    from coflowopt.plots import TIMELINE_MAX_LINKS

    wide = tmp_path / "wide.json"
    assert main(["generate", "synthetic", "--coflows", "4", "--ports", "30", "--seed", "1",
                 "-o", str(wide)]) == 0
    capsys.readouterr()
    code = main(["simulate", str(wide), "-s", "varys", "--timeline", str(tmp_path / "t.png")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"more than the {TIMELINE_MAX_LINKS} a timeline draws" in err
    assert not (tmp_path / "t.png").exists()


# --------------------------------------------------------------------------- sweeps


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A tiny sweep: varys and fifo and a bound, at two loads, two seeds each."""
    from coflowopt.experiment import Experiment, InstanceSpec, sweep

    out = tmp_path_factory.mktemp("sweep")
    exp = Experiment(instances=[InstanceSpec("synthetic", {"num_coflows": 8, "num_ports": 4,
                                                           "load": load})
                                for load in (0.5, 0.9)],
                     schedulers=["varys", "fifo"], seeds=[0, 1], bounds=["isolation"])
    sweep(exp, out, jobs=1)
    return out


def test_the_sweep_cdf_has_a_line_per_scheduler_and_a_panel_per_value(swept):
    from coflowopt.experiment import load
    from coflowopt.plots import sweep_cdf_figure

    coflows = load(swept, "coflows")
    ax = sweep_cdf_figure(coflows).axes[0]
    varys = ax.get_lines()[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["varys", "fifo"]
    # pooled over loads and seeds: every coflow of varys's runs counts once
    assert varys.get_ydata()[-1] == 1.0 and len(varys.get_xdata()) <= 2 * 2 * 8 + 1
    fig = sweep_cdf_figure(coflows, panel="instance_load")
    assert [a.get_title() for a in fig.axes] == ["instance_load 0.5", "instance_load 0.9"]
    with pytest.raises(co.InputError, match="needs the column 'fabrik'; the table has: cell"):
        sweep_cdf_figure(coflows, panel="fabrik")


@pytest.mark.parametrize("rows", ["coflows", "runs"])
def test_the_sweep_bins_put_the_baseline_at_one(swept, rows):
    from coflowopt.experiment import load
    from coflowopt.plots import sweep_bins_figure

    frame = load(swept, rows)
    ax = sweep_bins_figure(frame, baseline="fifo").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["varys", "fifo"]
    heights = [p.get_height() for p in ax.patches]
    assert len(heights) == 2 * (1 + len(BIN_NAMES))
    fifo = [h for h in heights[1::2] if math.isfinite(h)]
    assert len(fifo) >= 2 and fifo == [1.0] * len(fifo)
    assert not all(h == 1.0 for h in heights[0::2] if math.isfinite(h))
    with pytest.raises(co.InputError, match="needs the column 'scheduler'"):
        sweep_bins_figure(frame.drop(columns="scheduler"))
    with pytest.raises(co.InputError, match="the baseline 'sincronia' is not a scheduler"):
        sweep_bins_figure(frame, baseline="sincronia")


def test_the_sweep_ratio_draws_the_report_against_the_load(swept):
    from coflowopt.experiment import load, report
    from coflowopt.plots import sweep_ratio_figure

    runs = load(swept)
    ax = sweep_ratio_figure(runs).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["varys", "fifo"]
    assert ax.get_xlabel() == "instance_load" and "lower bound" in ax.get_ylabel()
    table = report(runs).set_index(["scheduler", "instance"])
    fifo = ax.containers[1]  # the line, then its caps and bars, of fifo
    assert list(fifo.lines[0].get_xdata()) == [0.5, 0.9]
    assert list(fifo.lines[0].get_ydata()) == pytest.approx(list(table.loc["fifo", "vs_bound"]))
    with pytest.raises(co.InputError, match="needs the column 'nope'; the table has: cell"):
        sweep_ratio_figure(runs, x="nope")
    with pytest.raises(co.InputError, match="'seed' takes several values"):
        sweep_ratio_figure(runs, x="seed")
    with pytest.raises(co.InputError, match="y must be one of"):
        sweep_ratio_figure(runs, y="cct")


def test_the_sweep_ratio_reads_x_from_the_instance_where_a_cell_failed(swept):
    # a failed cell has no summary (num_coflows nan): the figure was refused with
    # "the column 'num_coflows' takes several values ... (6.0, nan)"
    from coflowopt.experiment import load
    from coflowopt.plots import sweep_ratio_figure

    runs = load(swept).copy()
    assert "num_coflows" in runs.columns and "instance_num_coflows" in runs.columns
    runs["instance_num_coflows"] = np.where(runs["instance_load"] == 0.5, 8, 10)
    failed = runs.index[(runs["kind"] == "run") & (runs["scheduler"] == "fifo")][0]
    runs.loc[failed, ["status", "num_coflows"]] = ["failed", np.nan]
    ax = sweep_ratio_figure(runs, x="num_coflows", y="mean_cct").axes[0]
    assert ax.get_xlabel() == "instance_num_coflows"
    assert list(ax.containers[0].lines[0].get_xdata()) == [8.0, 10.0]


def test_the_sweep_ratio_tells_many_lines_apart_and_keeps_the_legend_off_them(swept):
    # 26 lines in a sweep: the legend covered the lines and the title, colours repeated
    import pandas as pd

    from coflowopt.experiment import load
    from coflowopt.plots import sweep_ratio_figure

    runs = load(swept)
    many = pd.concat([runs.assign(scheduler=runs["scheduler"] + f"-{i}") for i in range(6)])
    fig = sweep_ratio_figure(many, baseline="varys-0")
    ax = fig.axes[0]
    lines = [c.lines[0] for c in ax.containers]
    assert len(lines) == 12
    styles = {(ln.get_color(), ln.get_marker(), ln.get_linestyle()) for ln in lines}
    assert len(styles) == 12 and lines[0].get_color() == lines[10].get_color()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # (laid out as saved)
    renderer = canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.x0 >= ax.get_window_extent(renderer).x1  # beside the axes
    assert legend.x1 <= fig.bbox.x1 + 1  # and inside the figure


def test_the_sweep_ratio_draws_a_solver_beside_simulations_under_a_background(tmp_path):
    from coflowopt.experiment import Experiment, InstanceSpec, load, report, sweep
    from coflowopt.plots import sweep_ratio_figure

    exp = Experiment(instances=[InstanceSpec("synthetic", {"num_coflows": 5, "num_ports": 3,
                                                           "load": load})
                                for load in (0.5, 0.9)],
                     schedulers=["varys"], seeds=[0], backgrounds=["share:0.2"],
                     solvers=["exact"])
    sweep(exp, tmp_path, jobs=1)
    runs = load(tmp_path)
    assert set(runs["background"]) == {"share:0.2", "none"}  # the solver sees no background
    ax = sweep_ratio_figure(runs, y="mean_cct").axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["varys, share:0.2", "exact, none"]
    table = report(runs).set_index(["scheduler", "instance"])
    exact = ax.containers[1].lines[0]
    assert list(exact.get_xdata()) == [0.5, 0.9]
    assert list(exact.get_ydata()) == pytest.approx(list(table.loc["exact", "mean_cct"]))


@pytest.mark.parametrize("figure", ["bins", "cdf", "ratio"])
def test_report_writes_each_sweep_figure(swept, tmp_path, capsys, figure):
    out = tmp_path / f"{figure}.png"
    code = main(["report", str(swept), "--plot", str(out), "--figure", figure])
    assert code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"figure written to {out}" in capsys.readouterr().out


def test_report_refuses_a_bad_figure_with_exit_2(swept, tmp_path, capsys):
    out = tmp_path / "r.png"
    code = main(["report", str(swept), "--plot", str(out), "--figure", "ratio", "--x", "nope"])
    assert code == 2 and "the ratio figure needs the column 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["report", str(swept), "--plot", str(out), "--figure", "pie"])
    assert exc.value.code == 2 and "invalid choice: 'pie'" in capsys.readouterr().err
    code = main(["report", str(swept), "--plot", str(tmp_path / "r.gif")])
    assert code == 2 and "the file name must end in one of" in capsys.readouterr().err
    # options of the figure without one were ignored (exit 0)
    for argv, message in ((["--figure", "cdf"], "--figure chooses the --plot figure; give --plot OUT"),
                          (["--x", "seed"], "--x chooses the --plot figure"),
                          (["--plot", str(out), "--x", "seed"], "--x is the ratio figure's x axis")):
        assert main(["report", str(swept), *argv]) == 2 and message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_report_plot_without_matplotlib_names_the_extra(swept, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code = main(["report", str(swept), "--plot", str(tmp_path / "r.png")])
    assert code == 2 and "coflowopt[plot]" in capsys.readouterr().err


def test_several_schedules_draw_side_by_side_on_the_same_rows_and_time_axis():
    from coflowopt.plots import link_occupancy, timeline_figure
    from coflowopt.sim import simulate

    inst = co.read(ROOT / "instances" / "examples"
                   / "dissertation_5_1_varys_motivating_reconstructed.json")
    scheds = {"optimal": co.solve(inst).schedule, "fair": simulate(inst, "fair").schedule}
    for s in scheds.values():
        assert co.check_feasible(inst, s).ok
    fig = timeline_figure(inst, scheds, title="t")
    assert [ax.get_title() for ax in fig.axes] == ["optimal", "fair"]
    ends = [float(s.end.max()) for s in scheds.values()]
    for ax, sched in zip(fig.axes, scheds.values(), strict=True):
        # the same time axis (the later schedule's end) and rows in both panels
        assert ax.get_xlim() == pytest.approx((0.0, 1.02 * max(ends)))
        assert ax.get_ylim() == fig.axes[0].get_ylim()
        # each panel's area per row is the data its link carried over its capacity
        rows = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        names = [inst.fabric.link_name(x) for x in range(inst.fabric.num_links)]
        for row, name in enumerate(rows):
            times, share = link_occupancy(inst, sched, names.index(name))
            mine = [p for p in ax.patches if row - 0.4 - 1e-9 <= p.get_y() < row + 0.4]
            drawn = sum(p.get_width() * p.get_height() / 0.8 for p in mine)
            assert drawn == pytest.approx(float((np.diff(times) @ share).sum()))
    with pytest.raises(co.InputError, match="no schedule to draw"):
        timeline_figure(inst, {})


def _fair_pair():
    # three coflows released together on 3 ports: DRF gives each the same progress
    return co.Instance(co.Fabric.uniform(3, 1.0), (
        co.Coflow("a", [0, 0], [1, 2], [2.0, 1.0]),
        co.Coflow("b", [1], [2], [3.0]),
        co.Coflow("c", [2, 1], [0, 0], [1.0, 1.0])))


def test_the_fairness_timeline_starts_at_the_libraries_drf_and_hug_allocations():
    from coflowopt.fairness import FairnessProblem, drf, evaluate, fairness_timeline
    from coflowopt.sim import simulate

    inst = _fair_pair()
    problem = FairnessProblem.from_instance(inst, exact=False)
    star = float(evaluate(drf(problem)).isolation_guarantee)
    lines = {}
    for name in ("drf", "hug"):
        res = simulate(inst, name, record=True)
        assert co.check_feasible(inst, res.schedule).ok
        tl = fairness_timeline(inst, res.schedule)
        lines[name] = tl
        assert tl.times[0] == 0.0 and tl.progress.shape == (tl.times.size - 1, 3)
        # at the start every coflow is active and gets DRF's progress P* (HUG's guarantee)
        assert tl.isolation[0] == pytest.approx(star)
        assert np.nanmin(tl.progress[0]) == pytest.approx(star)
        # a coflow is active until its last flow ends, then its progress is nan
        done = res.completion
        for j in range(tl.times.size - 1):
            assert np.isnan(tl.progress[j]).tolist() == list(tl.times[j] >= done - 1e-12)
        # utilization integrates to the data carried on every link (each flow crosses 2)
        moved = float(np.diff(tl.times) @ tl.utilization) * 6.0
        assert moved == pytest.approx(2 * float(inst.flow_size.sum()))
    drf_first = lines["drf"].progress[0]
    assert drf_first == pytest.approx(np.full(3, star))  # DRF: equal progress
    # HUG: the same guarantee, and at least DRF's utilization
    assert lines["hug"].utilization[0] >= lines["drf"].utilization[0] - 1e-12


def test_the_fairness_figure_draws_each_timelines_steps():
    from coflowopt.fairness import fairness_timeline
    from coflowopt.plots import fairness_figure
    from coflowopt.sim import simulate

    inst = _fair_pair()
    tls = {n: fairness_timeline(inst, simulate(inst, n, record=True).schedule)
           for n in ("hug", "drf")}
    fig = fairness_figure(tls, title="t")
    top, bottom = fig.axes
    for ax, field in ((top, "isolation"), (bottom, "utilization")):
        lines = ax.get_lines()
        assert [ln.get_label() for ln in lines] == ["hug", "drf"]
        for ln, tl in zip(lines, tls.values(), strict=True):
            values = getattr(tl, field)
            assert list(ln.get_xdata()) == list(tl.times)
            np.testing.assert_array_equal(ln.get_ydata(), np.append(values, values[-1]))
    with pytest.raises(co.InputError, match="no timeline"):
        fairness_figure({})


def test_the_thresholds_figure_marks_the_best_value_of_the_model_and_the_simulation():
    from coflowopt.io.generate import synthetic
    from coflowopt.mcs import double_model
    from coflowopt.mcs.validate import optimum, threshold_sweep
    from coflowopt.plots import thresholds_figure

    inst = synthetic(30, 6, load=0.6, seed=3)
    values = [1 * co.MB, 10 * co.MB, 100 * co.MB]
    table = threshold_sweep(inst, kind="aalo", values=values, queues=4, load=0.6)
    solution = optimum(double_model(inst, queues=4, load=0.6))
    fig = thresholds_figure(table, solution=solution, default=10, title="t")
    left, right = fig.axes
    model, model_best, sim, sim_best, default = left.get_lines()
    assert list(model.get_xdata()) == [1.0, 10.0, 100.0]
    assert list(model.get_ydata()) == table.column("predicted_relative")
    assert list(sim.get_ydata()) == table.column("simulated_relative")
    for line, best in ((model_best, model), (sim_best, sim)):
        i = int(np.argmin(best.get_ydata()))
        assert list(line.get_xdata()) == [best.get_xdata()[i]]
    assert list(default.get_xdata()) == [10.0, 10.0]
    # the second panel: each family's optimum and defaults, per queue, in MB
    steps = right.get_lines()
    assert len(steps) == 2 * len(solution.families)
    for f in range(len(solution.families)):
        np.testing.assert_allclose(steps[2 * f].get_ydata(), solution.thresholds[f] / co.MB)
        np.testing.assert_allclose(steps[2 * f + 1].get_ydata(),
                                   solution.default_thresholds[f] / co.MB)
    assert solution.objective <= solution.default_objective
    with pytest.raises(co.InputError, match="needs a threshold_sweep table"):
        from coflowopt.mcs import Table

        thresholds_figure(Table(("a",), ((1,),)))


def test_a_result_stands_for_its_schedule_and_anything_else_is_named():
    # a simulation's result gave "'SimulationResult' object has no attribute 'flow'"
    from coflowopt.plots import link_occupancy, timeline_figure
    from coflowopt.sim import simulate

    inst = co.read(SHUFFLE)
    res = simulate(inst, "varys")
    for a, b in zip(link_occupancy(inst, res, 0), link_occupancy(inst, res.schedule, 0), strict=True):
        assert np.array_equal(a, b)
    fig = timeline_figure(inst, {"varys": res, "exact": co.solve(inst, method="exact")})
    assert len(fig.axes) == 2
    with pytest.raises(co.InputError, match=r"has no schedule \(simulate with record=True\)"):
        link_occupancy(inst, simulate(inst, "varys", record=False), 0)
    with pytest.raises(co.InputError, match="schedule 'x' must be a Schedule or a result with one, got list"):
        timeline_figure(inst, {"x": [1, 2]})


def test_names_with_dollars_are_drawn_as_text_and_saved(tmp_path):
    # a $ in a name or id is not matplotlib's mathtext (a bad macro failed the save)
    from coflowopt.plots import cct_cdf_figure, timeline_figure

    inst = co.Instance(co.Fabric.uniform(2, 1.0), (co.Coflow("$\\frac{1}$", [0], [1], [1.0]),),
                       name="run $\\badmacro{x}$")
    res = co.solve(inst, method="exact")
    for fig in (timeline_figure(inst, res, title=inst.name),
                cct_cdf_figure({"$\\x$": [1.0]}, title=inst.name)):
        fig.savefig(tmp_path / "f.png")
    code = main(["simulate", str(_write(inst, tmp_path)), "-s", "varys", "--timeline",
                 str(tmp_path / "t.png")])
    assert code == 0 and (tmp_path / "t.png").stat().st_size > 0


def _write(inst, tmp_path):
    path = tmp_path / "in.json"
    co.write(inst, path)
    return path


def test_the_timeline_gives_every_coflow_its_own_colour_and_its_axis_a_unit():
    from coflowopt.plots import timeline_figure

    for n in (12, 24):  # past the default cycle's 10 colours, and past tab20's
        inst = co.Instance(co.Fabric.uniform(2, 1.0),
                           tuple(co.Coflow(f"c{k}", [0], [1], [1.0]) for k in range(n)))
        sched = co.Schedule(list(range(n)), [float(k) for k in range(n)],
                            [float(k + 1) for k in range(n)], [1.0] * n)
        fig = timeline_figure(inst, sched, unit="s")
        ax = fig.axes[0]
        colours = {tuple(p.get_facecolor()) for p in ax.patches}
        assert len(colours) == n
        assert ax.get_xlabel() == "time (s)"


def test_plot_functions_name_what_is_wrong_with_their_arguments():
    from coflowopt.plots import (
        cct_cdf_figure,
        compare_figure,
        fairness_figure,
        link_occupancy,
        sweep_bins_figure,
        sweep_cdf_figure,
        sweep_ratio_figure,
        thresholds_figure,
        timeline_figure,
    )

    inst, sched = _two_coflows()
    res = co.sim.simulate(inst, "varys")
    bad = [
        (lambda: cct_cdf_figure({"varys": res}), "give its .cct"),
        (lambda: cct_cdf_figure({}), "with none"),
        (lambda: cct_cdf_figure({"a": ["x"]}), "must be numbers"),
        (lambda: compare_figure({"varys": res}, baseline="varys"), "sequence of rows"),
        (lambda: compare_figure([{"scheduler": "a"}], baseline="a"), "row 0 has no 'norm_mean'"),
        (lambda: timeline_figure(None, res), "must be an Instance"),
        (lambda: timeline_figure(inst, res, links=["a"]), "link 'a' does not exist"),
        (lambda: timeline_figure(inst, res, links=3), "sequence of link indices"),
        (lambda: timeline_figure(inst, res, links=[]), "no row to draw"),
        (lambda: timeline_figure(inst, res, links=[1.5]), "link 1.5 does not exist"),
        (lambda: link_occupancy(inst, sched, -1), "link -1 does not exist"),
        (lambda: link_occupancy(inst, sched, 99), "link 99 does not exist"),
        (lambda: fairness_figure({"a": res}), "not a coflowopt.fairness.fairness_timeline"),
        (lambda: fairness_figure([]), "takes label -> fairness_timeline"),
        (lambda: sweep_cdf_figure([1, 2]), "takes a data frame"),
        (lambda: sweep_bins_figure([1, 2]), "takes a data frame"),
        (lambda: thresholds_figure([1]), "takes a threshold_sweep table"),
        (lambda: sweep_ratio_figure(None), "the ratio figure takes a data frame"),
        (lambda: compare_figure(None, baseline="varys"), "takes a sequence of rows"),
        (lambda: cct_cdf_figure({"a": [-1.0, 1.0]}), "CCTs of 'a' must be >= 0, got -1"),
    ]
    for call, message in bad:
        with pytest.raises(co.InputError, match=message.replace(".", "\\.").replace("(", "\\(")):
            call()
    # a schedule of another instance (more flows than this one has)
    small = inst.subset([0])
    with pytest.raises(co.InputError, match="another instance's"):
        timeline_figure(small, sched)
    # ... or the same flows with other sizes (a larger instance's first coflows)
    halved = co.Instance(inst.fabric, (co.Coflow("x", [0], [0], [1.0]),
                                       co.Coflow("y", [0], [1], [1.0])))
    with pytest.raises(co.InputError, match="serves flow 0 2 bytes, but its size in the "
                                            "instance is 1"):
        timeline_figure(halved, sched)


def test_an_unwritable_figure_fails_before_any_output(tmp_path, capsys, locked_dir):
    # a directory where no file can be created: refused with the option before the run, and
    # the --csv beside it not written
    locked = locked_dir
    code = main(["simulate", str(SHUFFLE), "-s", "varys", "--csv", str(tmp_path / "t.csv"),
                 "--timeline", str(locked / "x.png")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"coflowopt: error: --timeline {locked / 'x.png'}: ")
    assert "cannot write into its directory: Permission denied" in err
    assert not (tmp_path / "t.csv").exists() and not any(locked.iterdir())


@pytest.mark.parametrize("suffix", [".svg", ".pdf", ".png"])
def test_the_same_figure_is_the_same_file(tmp_path, capsys, suffix):
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    for out in (a, b):
        assert main(["compare", str(SHUFFLE), "--schedulers", "varys,fifo", "--cdf", str(out)]) == 0
    capsys.readouterr()
    assert a.read_bytes() == b.read_bytes()


def test_report_keeps_the_sweeps_own_tables_and_refuses_foreign_ones(swept, tmp_path, capsys):
    before = (swept / "runs.csv").read_bytes()
    code = main(["report", str(swept), "--csv", str(swept / "runs.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "would overwrite the sweep's own table runs.csv" in err
    assert (swept / "runs.csv").read_bytes() == before
    # nor its record of what was asked, nor a cell's results (which --resume would trust)
    cell = next((swept / "cells").iterdir())
    for target, message in ((swept / "experiment.json", "own record experiment.json"),
                            (cell, "would write into the sweep's results (cells/)")):
        kept = target.read_bytes()
        assert main(["report", str(swept), "--csv", str(target)]) == 2
        assert message in capsys.readouterr().err and target.read_bytes() == kept
    other = tmp_path / "other"
    other.mkdir()
    (other / "runs.csv").write_text("a,b\n1,2\n")
    code = main(["report", str(other)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{other}: the runs table has no column 'kind'" in err


def test_links_may_be_a_numpy_array_and_an_all_zero_cdf_keeps_its_label():
    from coflowopt.plots import cct_cdf_figure, timeline_figure

    inst, sched = _two_coflows()
    ax = timeline_figure(inst, sched, links=np.flatnonzero([1, 1, 0, 0])).axes[0]
    assert len(ax.get_yticklabels()) == 2
    ax = cct_cdf_figure({"empty": [0.0], "a": [1.0]}).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["empty", "a"]


def test_a_device_is_written_in_place_without_a_trial_file(monkeypatch):
    from coflowopt.io import _common

    def no_temp(target):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_common, "_new_temp", no_temp)
    assert str(_common.check_writable("/dev/null")) == "/dev/null"
