"""Schedule files: JSON and .npz round trips, and bad files named by file and field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coflowopt import InputError, Schedule, ScheduleError, check_feasible, io
from coflowopt.cli import main
from coflowopt.io.schedule_file import (
    read_schedule,
    read_schedule_file,
    schedule_format,
    write_schedule,
)
from coflowopt.sim import simulate

from ..strategies import instances
from ..test_tied import tied_pieces

SHUFFLE = str(Path(__file__).resolve().parents[2] / "instances" / "examples"
              / "dissertation_3_2_shuffle.json")


def pieces(sched: Schedule) -> list[tuple]:
    """The pieces as sorted rows (a file may list them in another order)."""
    return sorted(zip(*(a.tolist() for a in (sched.flow, sched.start, sched.end, sched.rate)),
                      strict=True))


@st.composite
def schedules(draw: st.DrawFn, num_flows: int) -> Schedule:
    """Random pieces (any finite numbers) and tied pieces of an instance's flows."""
    n = draw(st.integers(0, 5))
    num = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=True)
    rows = [(draw(st.integers(0, num_flows - 1)), draw(num), draw(num), draw(num))
            for _ in range(n)]
    plain = Schedule.from_pieces(rows)
    tied = draw(st.none() | tied_pieces(num_flows=num_flows).map(lambda d: d[0]))
    return Schedule(plain.flow, plain.start, plain.end, plain.rate, tied=tied)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(instances(max_coflows=3, max_flows=3), st.data())
def test_both_formats_give_back_the_schedule(tmp_path, inst, data):
    sched = data.draw(schedules(inst.num_flows))
    meta = {"method": "test", "rejected": []}
    write_schedule(sched, inst, tmp_path / "s.npz", metadata=meta)
    back, got = read_schedule_file(tmp_path / "s.npz", inst)
    assert got == meta
    # .npz keeps the compact form as it is
    for name in ("flow", "start", "end", "rate"):
        np.testing.assert_array_equal(getattr(back.direct, name), getattr(sched.direct, name))
    assert (back.tied is None) == (sched.tied is None)
    if sched.tied is not None:
        assert back.tied is not None
        for name in ("flow", "start", "end", "weight", "series_a", "series_b", "level_series",
                     "level_time", "level"):
            np.testing.assert_array_equal(getattr(back.tied, name), getattr(sched.tied, name))
    # JSON holds the pieces the tied ones stand for (if their numbers are finite)
    if not np.isfinite(sched.rate).all():
        with pytest.raises(ScheduleError, match="JSON holds finite numbers only"):
            write_schedule(sched, inst, tmp_path / "bad.json")
        assert not (tmp_path / "bad.json").exists()
        return
    write_schedule(sched, inst, tmp_path / "s.json", metadata=meta)
    again, got = read_schedule_file(tmp_path / "s.json", inst)
    assert got == meta and again.tied is None
    assert pieces(again) == pieces(sched)
    assert check_feasible(inst, back).counts == check_feasible(inst, sched).counts


def test_a_simulated_fair_schedule_round_trips_compact(tmp_path):
    inst = io.read(SHUFFLE)
    sched = simulate(inst, "fair").schedule
    assert sched is not None and sched.tied is not None
    write_schedule(sched, inst, tmp_path / "s.npz")
    back = read_schedule(tmp_path / "s.npz", inst)
    assert back.tied is not None and back.num_pieces == sched.num_pieces
    assert pieces(back) == pieces(sched) and check_feasible(inst, back).ok


def test_the_suffix_names_the_format():
    assert schedule_format("a/b.NPZ").name == "npz" and schedule_format("x.json").name == "json"
    with pytest.raises(InputError, match=r"s\.txt: cannot tell the schedule format .* \.json"):
        schedule_format("s.txt")


def _npz(path: Path, **changes: object) -> Path:
    """A good archive of the shuffle's fair schedule with some arrays changed (None: gone)."""
    inst = io.read(SHUFFLE)
    write_schedule(simulate(inst, "fair").schedule, inst, path)
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    for k, v in changes.items():
        if v is None:
            arrays.pop(k)
        else:
            arrays[k] = v(arrays[k]) if callable(v) else v
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    return path


def _set(i: int, value: object):  # type: ignore[no-untyped-def]
    def change(a: np.ndarray) -> np.ndarray:
        a = a.copy()
        a[i] = value
        return a
    return change


@pytest.mark.parametrize(("changes", "message"), [
    ({"tied_flow": _set(0, 7)}, "at tied_flow[0]: coflow 'shuffle' has flows 0..5, got 7"),
    ({"tied_coflow": _set(1, 3)}, "at tied_coflow[1]: names coflow 3, but coflows has 1"),
    ({"tied_coflow": _set(1, -1)}, "at tied_coflow[1]: must be at least 0, got -1"),
    ({"tied_end": _set(2, -1.0)}, "at tied_end[2]: ends before tied_start"),
    ({"tied_start": _set(0, np.nan)}, "at tied_start[0]: must be a finite number, got nan"),
    ({"level": _set(0, np.nan)}, "at level[0]: must be a finite number or inf, got nan"),
    ({"level_time": _set(0, np.inf)}, "at level_time[0]: must be a finite number, got inf"),
    ({"tied_series_b": _set(0, -2)}, "at tied_series_b[0]: must be at least -1"),
    ({"tied_flow": lambda a: a.astype(float)}, "at tied_flow: must be a 1-D array of integers"),
    ({"tied_weight": lambda a: a[:-1]}, "at tied_weight: has 5 entries, but the arrays beside"),
    ({"coflows": np.array(["shuffle", "nope"])}, "at coflows[1]: unknown coflow 'nope'"),
    ({"coflows": np.array([1])}, "at coflows: must be a 1-D array of strings"),
    ({"level": None}, "at level: array level is missing"),
    ({"piece_rate": None}, "at piece_rate: array piece_rate is missing"),
    ({"extra": np.zeros(1)}, "at extra: unknown array 'extra'"),
    ({"format": np.array("coflowopt-schedule/1")}, 'at format: format must be "coflowopt-schedule-npz/1"'),
    ({"metadata": np.array("[1]")}, "at metadata: must be a JSON object"),
    ({"metadata": np.array('{"rejected": ["zz"]}')},
     "at metadata.rejected[0]: rejected names coflow 'zz', which the instance does not have"),
    ({"metadata": np.array('{"rejected": "zz"}')},
     "at metadata.rejected: rejected must be an array of the instance's coflow ids, got 'zz'"),
    ({"tied_weight": np.array([object()] * 6, dtype=object)}, "at tied_weight: cannot be read"),
])
def test_a_bad_archive_is_named_by_file_and_field(tmp_path, capsys, changes, message):
    path = _npz(tmp_path / "bad.npz", **changes)
    with pytest.raises(InputError) as err:
        read_schedule(path, io.read(SHUFFLE))
    assert str(err.value) == f"{path}: {message}" or str(err.value).startswith(f"{path}: {message}")
    assert main(["validate", SHUFFLE, "--schedule", str(path)]) == 2
    out = capsys.readouterr().err
    assert message in out and "Traceback" not in out


def test_files_that_are_not_what_their_suffix_says(tmp_path, capsys):
    inst = io.read(SHUFFLE)
    sched = simulate(inst, "fair").schedule
    write_schedule(sched, inst, tmp_path / "s.json")
    write_schedule(sched, inst, tmp_path / "s.npz")
    (tmp_path / "json.npz").write_bytes((tmp_path / "s.json").read_bytes())
    (tmp_path / "npz.json").write_bytes((tmp_path / "s.npz").read_bytes())
    (tmp_path / "cut.npz").write_bytes((tmp_path / "s.npz").read_bytes()[:200])
    (tmp_path / "s.sched").write_bytes((tmp_path / "s.json").read_bytes())
    for name, message in (("json.npz", "not a NumPy .npz archive (it is text: JSON files are "
                                       "named .json)"),
                          ("npz.json", "a NumPy .npz archive, not JSON: name it .npz"),
                          ("cut.npz", "not a readable .npz archive"),
                          ("s.sched", "cannot tell the schedule format from the file name"),
                          ("missing.npz", "no such file")):
        assert main(["validate", SHUFFLE, "--schedule", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert f"{tmp_path / name}: " in err and message in err and "Traceback" not in err


def test_a_schedule_of_another_instances_flows_is_not_written(tmp_path):
    inst = io.read(SHUFFLE)
    with pytest.raises(ScheduleError, match="serves flow 6, but the instance has 6 flows"):
        write_schedule(Schedule([6], [0.0], [1.0], [1.0]), inst, tmp_path / "s.npz")
    assert not (tmp_path / "s.npz").exists()


def test_simulate_and_validate_write_and_read_npz(tmp_path, capsys):
    out = tmp_path / "s.npz"
    assert main(["simulate", SHUFFLE, "-s", "fair", "--schedule", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "tied pieces" in text and f"written to {out}" in text
    assert main(["validate", SHUFFLE, "--schedule", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schedule"]["feasible"] is True
    # the format is checked before the run: nothing is written
    assert main(["simulate", SHUFFLE, "-s", "varys", "--schedule", str(tmp_path / "s.csv")]) == 2
    assert "name it .json (json) or .npz (npz)" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.npz"]


def test_solve_writes_npz(tmp_path, capsys):
    out = tmp_path / "opt.npz"
    assert main(["solve", SHUFFLE, "--schedule", str(out), "--time-limit", "30"]) == 0
    capsys.readouterr()
    back, meta = read_schedule_file(out, io.read(SHUFFLE))
    assert meta["method"] and back.num_pieces and check_feasible(io.read(SHUFFLE), back).ok
    assert main(["validate", SHUFFLE, "--schedule", str(out)]) == 0


def test_json_is_refused_for_more_pieces_than_it_is_written_for(tmp_path, capsys, monkeypatch):
    from coflowopt.cli import simulate as cli

    sched = simulate(io.read(SHUFFLE), "fair").schedule
    assert sched is not None
    monkeypatch.setattr(cli, "MAX_JSON_PIECES", sched.num_pieces - 1)
    out = tmp_path / "s.json"
    assert main(["simulate", SHUFFLE, "-s", "fair", "--schedule", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "the most written as JSON" in err and ".npz" in err and not out.exists()
    assert main(["simulate", SHUFFLE, "-s", "fair", "--schedule", str(tmp_path / "s.npz"),
                 "--no-progress"]) == 0


def test_a_schedule_into_a_directory_names_the_option(tmp_path, capsys):
    # it said "cannot tell the schedule format from the file name", without --schedule
    (tmp_path / "d").mkdir()
    assert main(["simulate", SHUFFLE, "-s", "varys", "--schedule", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert err == f"coflowopt: error: --schedule {tmp_path / 'd'}: is a directory, not a file to write\n"
