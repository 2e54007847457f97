"""The command line: info, validate, convert, generate; README and CI agree."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from coflowopt import io
from coflowopt.cli import main
from coflowopt.io.schedule_file import write_schedule

from .test_schedule import madd_3x2

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
DATA = ROOT / "tests" / "data"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_info_json_on_the_facebook_trace(capsys):
    code, out, _ = run(capsys, "info", TRACE, "--json")
    facts = json.loads(out)
    assert code == 0
    assert (facts["coflows"], facts["ports"], facts["flows"]) == (526, 150, 706397)
    assert {b: v["coflows"] for b, v in facts["bins"].items()} == {"SN": 309, "LN": 90, "SW": 59, "LW": 68}


def test_info_gives_the_first_release_as_it_is(capsys, tmp_path):
    # every first release printed as 0 (releases of 5 and 7: "releases from 0 to 7")
    from coflowopt import Coflow, Fabric, Instance

    path = tmp_path / "late.json"
    io.write(Instance(Fabric.uniform(2), (Coflow.from_flows("a", [(0, 1, 1.0)], release=5.0),
                                          Coflow.from_flows("b", [(1, 0, 1.0)], release=7.0))), path)
    code, out, _ = run(capsys, "info", path, "--json")
    assert code == 0 and json.loads(out)["release"] == {"first": 5.0, "last": 7.0, "span": 2.0}
    code, out, _ = run(capsys, "info", path)
    assert "releases from 5 to 7" in out


def test_info_readable_and_thresholds(capsys):
    code, out, _ = run(capsys, "info", TRACE, "--narrow-width", "1000000")
    assert code == 0 and "526 coflows, 706397 flows, 150 ports" in out
    assert re.search(r"SN\s+368", out)  # every coflow is narrow now: SN + SW


def test_validate_a_schedule_file(tmp_path, capsys):
    inst, sched = madd_3x2()
    inst_path = tmp_path / "i.json"
    io.write(inst, inst_path)
    good = tmp_path / "good.json"
    write_schedule(sched, inst, good)
    code, out, _ = run(capsys, "validate", inst_path, "--schedule", good)
    assert code == 0 and "feasible" in out
    bad = tmp_path / "bad.json"
    from coflowopt import Schedule

    write_schedule(Schedule(sched.flow, sched.start, sched.end / 2, sched.rate), inst, bad)
    code, out, _ = run(capsys, "validate", inst_path, "--schedule", bad, "--json")
    result = json.loads(out)
    assert code == 1
    assert result["schedule"]["feasible"] is False
    assert result["schedule"]["counts"] == {"amount": 6}


def test_convert_round_trip_through_the_cli(tmp_path, capsys):
    js = tmp_path / "t.json"
    back = tmp_path / "t.txt"
    assert run(capsys, "convert", DATA / "good_benchmark.txt", js)[0] == 0
    code, _, err = run(capsys, "convert", js, back, "--to", "benchmark")
    assert code == 0 and "port rate" in err
    assert io.read(back) == io.read(DATA / "good_benchmark.txt").replace(name="t.txt")


def test_convert_refuses_a_lossy_target_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "x.txt"
    code, _, err = run(capsys, "convert", DATA / "good_instance.json", out, "--to", "benchmark")
    assert code == 2 and "cannot write the Coflow-Benchmark format" in err
    # both files are named: the input holding the coflow, and the output not written
    assert err.startswith(f"coflowopt: error: {DATA / 'good_instance.json'}: ")
    assert f"(nothing written to {out})" in err
    assert not out.exists()


def test_generate_is_reproducible(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for p in (a, b):
        code, _, _ = run(
            capsys,
            "generate",
            "synthetic",
            "--coflows",
            "30",
            "--ports",
            "8",
            "--load",
            "0.5",
            "--seed",
            "3",
            "-o",
            p,
        )
        assert code == 0
    assert a.read_text() == b.read_text()
    code, out, _ = run(
        capsys,
        "generate",
        "batch",
        a,
        "--batch-size",
        "10",
        "--interval",
        "2",
        "-o",
        tmp_path / "c.json",
        "--json",
    )
    assert code == 0 and json.loads(out)["coflows"] == 30
    assert np.unique(io.read(tmp_path / "c.json").release).tolist() == [0.0, 2.0, 4.0]


def test_bad_option_values_exit_2(capsys):
    code = None
    try:
        main(["info", str(TRACE), "--port-rate", "-5"])
    except SystemExit as exc:  # argparse exits 2 on usage errors
        code = exc.code
    assert code == 2
    assert "expected a finite number > 0" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["generate", "synthetic", "--load", "-1", "-o", "x.json"],
                                  ["simulate", "-s", "nosuch", str(TRACE)], ["nosuch"], []])
def test_an_option_error_is_one_line_naming_the_command(capsys, argv):
    # argparse printed its whole usage block (5-10 lines) before the message
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    command = " ".join(["coflowopt", *argv[:2]]) if argv[:1] == ["generate"] else (
        "coflowopt simulate" if argv[:1] == ["simulate"] else "coflowopt")
    assert exc.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"{command}: error: ") and err.strip().endswith(f"(see {command} --help)")


def quickstart_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_readme_quickstart_has_two_commands_and_ci_runs_the_second_verbatim():
    commands = quickstart_commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()
    assert "set -euo pipefail" in ci


def test_readme_main_job_runs_its_arguments_on_a_small_instance(capsys):
    # the first Quickstart command's coflowopt arguments, with the trace swapped for a
    # small example: the full trace runs in benchmarks/compare_fb.py, not in the tests
    main_job = quickstart_commands()[0].split("&&", 1)[1].split()
    assert main_job[:3] == ["python", "-m", "coflowopt"]
    argv = [str(ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json") if a == str(
        TRACE.relative_to(ROOT)) else a for a in main_job[3:]]
    assert argv != main_job[3:]
    code, out, _ = run(capsys, *argv, "--no-progress")
    assert code == 0
    assert "varys" in out and "bound" in out.lower()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_worker_processes_write_no_terminal_codes():
    # on a terminal every spawned worker wrote ESC[0m when it exited: Numba colours its
    # internal error messages with colorama, whose exit handler resets the terminal
    import pty

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING"}
    main_fd, worker_fd = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "coflowopt", "compare", str(ROOT / "instances" / "examples" /
         "dissertation_3_2_shuffle.json"), "--schedulers", "fifo,varys", "--jobs", "2"],
        stdout=worker_fd, stderr=worker_fd, env=env, timeout=300, check=False)
    os.close(worker_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # EIO: the terminal is closed and drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main_fd)
    out = b"".join(chunks)
    assert proc.returncode == 0 and b"varys" in out
    assert b"\x1b[0m" not in out


def test_offline_releases_every_coflow_at_zero_and_solves_that_problem(tmp_path, capsys):
    import coflowopt as co
    from coflowopt.sim import simulate

    doc = {"format": "coflowopt-instance/1", "name": "r", "ports": {"ingress": [1, 1], "egress": [1, 1]},
           "coflows": [{"id": "a", "release": 0.0, "flows": [[0, 0, 4], [1, 1, 1]]},
                       {"id": "b", "release": 1.0, "flows": [[0, 1, 1]]},
                       {"id": "c", "release": 2.0, "deadline": 9.0, "flows": [[1, 0, 2], [0, 0, 1]]}]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    inst = io.read(path)
    offline = inst.with_releases(0.0)
    code, out, _ = run(capsys, "solve", path, "--offline", "--json")
    got = json.loads(out)
    assert code == 0 and got["status"] == "optimal"
    assert got["objective"] == pytest.approx(co.solve(offline).objective, rel=1e-12)
    assert got["objective"] < co.solve(inst).objective  # releasing early helps here
    code, out, _ = run(capsys, "simulate", path, "-s", "sincronia", "--offline", "--json")
    assert code == 0
    assert json.loads(out)["summary"]["weighted_completion"] == pytest.approx(
        simulate(offline, "sincronia", record=False).summary.weighted_completion, rel=1e-12)


@pytest.mark.parametrize("argv", [
    ["solve", "--method", "sincronia"], ["solve", "--method", "best", "--time-limit", "5"],
    ["solve", "--method", "exact-milp"], ["solve", "--objective", "makespan"],
])
def test_a_method_that_does_not_model_dependencies_names_the_file_and_prints_nothing(
        tmp_path, capsys, argv):
    doc = json.loads((DATA / "bad_json_cycle.json").read_text())
    del doc["coflows"][0]["finishes_before"]  # b starts after a: no cycle
    path = tmp_path / "dep.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, *argv, str(path))
    assert code == 2 and out == ""  # (the portfolio's log header came first)
    assert err.startswith(f"coflowopt: error: {path}: ") and "does not support coflow dependencies" in err
    assert err.count("\n") == 1


def test_a_release_too_late_to_resolve_names_the_file(tmp_path, capsys):
    path = tmp_path / "late.txt"
    path.write_text("2 2\n1 0 1 0 1 1:1.0\n2 1e300 1 1 1 0:1.0\n")  # released at 1e297 s
    for argv in (["simulate", "-s", "varys"], ["compare", "--schedulers", "varys,fifo"]):
        code, out, err = run(capsys, *argv, "--no-progress", str(path))
        assert code == 2 and out == "", err
        assert err.startswith(f"coflowopt: error: {path}: flow 0 of coflow '2' takes ")
        assert "too short to resolve" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [
    ["generate", "synthetic", "--coflows", "3", "--ports", "2", "--output", ""],
    ["simulate", str(DATA / "good_benchmark.txt"), "-s", "fifo", "--schedule", ""],
])
def test_an_empty_output_name_is_refused_by_its_option(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)  # (--schedule '' wrote nothing and said nothing)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and list(tmp_path.iterdir()) == []
    assert err == f"coflowopt: error: {argv[-2]}: an empty file name: name a file to write\n"


def test_an_interrupt_inside_a_compiled_kernel_exits_130_in_one_line(monkeypatch, capsys):
    # Numba's dispatcher turns a KeyboardInterrupt raised while a kernel calls back into
    # Python into a SystemError caused by it: `solve --method local-search` interrupted
    # printed a 55-line traceback and exited 1
    from coflowopt.cli import info as cli_info

    def interrupted(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("<slot wrapper '__call__'> returned a result with an exception set") from exc

    monkeypatch.setattr(cli_info, "run_info", interrupted)
    assert main(["info", str(TRACE)]) == 130
    assert capsys.readouterr().err == "coflowopt: interrupted\n"

    def broken(args):
        raise SystemError("not an interrupt")

    monkeypatch.setattr(cli_info, "run_info", broken)
    with pytest.raises(SystemError, match="not an interrupt"):
        main(["info", str(TRACE)])


def test_an_interrupt_while_the_commands_load_is_one_line(monkeypatch, capsys):
    # the commands' modules (NumPy, SciPy, Numba) load inside main's interrupt handling:
    # an interrupt in a command's first second printed a traceback
    import coflowopt.cli as cli

    def interrupted(command=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["info", str(TRACE)]) == 130
    assert capsys.readouterr().err == "coflowopt: interrupted\n"


def test_each_command_loads_its_own_module_only():
    # loading every command's module cost about half a second at every start
    import argparse
    import importlib

    import coflowopt.cli as cli

    def commands(parser):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return list(sub.choices)

    for name in cli._command_modules():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(f"coflowopt.cli.{name}").register(sub)
        for command in sub.choices:
            assert cli._MODULE_OF[command] == name
    assert sorted(commands(cli.build_parser())) == sorted(cli._MODULE_OF)
    assert commands(cli.build_parser("compare")) == ["simulate", "compare"]
    assert len(commands(cli.build_parser("no-such-command"))) == len(cli._MODULE_OF)
    assert cli._command(["bound", "x.json"]) == "bound"
    assert cli._command(["--version"]) is None
    assert cli._command([]) is None
    code = ("import sys; from coflowopt.cli import main; main(['info', '--help'])")
    out = subprocess.run([sys.executable, "-c", code + "\n"], capture_output=True, text=True)
    assert out.returncode == 0 and "usage: coflowopt info" in out.stdout
    code = ("import sys\nfrom coflowopt.cli import build_parser\nbuild_parser('info')\n"
            "print(sorted(m for m in sys.modules if m.startswith('coflowopt.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "coflowopt.cli.solve" not in out.stdout and "coflowopt.cli.info" in out.stdout


def test_importing_coflowopt_and_its_command_line_loads_nothing_heavy():
    code = ("import sys, coflowopt, coflowopt.cli; "
            "print(sorted(m for m in ('numpy', 'scipy', 'numba', 'highspy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    # and the public names are there on first use
    code = "import coflowopt as co; print(co.Instance.__name__, co.sim.simulate.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["Instance", "simulate"]


def test_an_error_that_follows_an_interrupt_is_the_interrupts(monkeypatch, capsys):
    # llvmlite's callbacks swallow an interrupt while a kernel compiles, and Numba then
    # fails with "no compiled object yet": exit 1 and a 100-line traceback
    import signal

    import coflowopt.cli as cli

    def swallowed(command=None):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            pass  # as a ctypes callback does
        raise RuntimeError("no compiled object yet for <Library 'greedy_backfill'>")

    monkeypatch.setattr(cli, "build_parser", swallowed)
    assert main(["info", str(TRACE)]) == 130
    assert capsys.readouterr().err == "coflowopt: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def failing(command=None):
        raise RuntimeError("not after an interrupt")

    monkeypatch.setattr(cli, "build_parser", failing)
    with pytest.raises(RuntimeError, match="not after an interrupt"):
        main(["info", str(TRACE)])


def test_an_interrupt_swallowed_where_it_landed_still_ends_the_command_with_130(monkeypatch,
                                                                               capsys):
    # llvmlite's ctypes callbacks print "Exception ignored ... KeyboardInterrupt" and go on:
    # the compilation, and then the whole command, finished and exited 0
    import signal
    import threading

    import coflowopt.cli as cli

    real = cli.build_parser

    def swallowed(command=None):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            pass  # as a ctypes callback does
        return real(command)

    monkeypatch.setattr(cli, "build_parser", swallowed)
    shuffle = ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json"
    assert main(["info", str(shuffle)]) == 130
    assert capsys.readouterr().err == "coflowopt: interrupted\n"
    # and the compile notice raises it again as soon as a compilation ends in this process
    notice = cli._CompileNotice([signal.SIGINT])
    with pytest.raises(KeyboardInterrupt):
        notice("sim.kernels.state.set_rates", 0.4)
    relayed: list[BaseException] = []  # (not in the thread that relays a worker's notices)

    def relay():
        try:
            notice("sim.kernels.state.set_rates", 0.4)
        except BaseException as exc:
            relayed.append(exc)

    thread = threading.Thread(target=relay)
    thread.start()
    thread.join()
    assert relayed == []
    assert "compiled sim.kernels.state.set_rates in 0.4 s" in capsys.readouterr().err


def test_after_an_interrupt_the_clean_up_of_half_made_objects_prints_nothing(monkeypatch,
                                                                            capsys):
    # an interrupt landing while llvmlite builds an object left it half made, and its
    # __del__ printed an AttributeError traceback at exit after "coflowopt: interrupted"
    import signal
    import types

    import coflowopt.cli as cli

    before = sys.unraisablehook
    monkeypatch.setattr(sys, "unraisablehook", before)  # (restored afterwards)
    handler = signal.getsignal(signal.SIGINT)
    try:
        for code in (0, 130):
            monkeypatch.setattr(cli, "_interruptible", lambda argv, leave, code=code: code)
            with pytest.raises(SystemExit) as exc:
                cli.run()
            assert exc.value.code == code
            assert (sys.unraisablehook is before) == (code == 0)
        try:
            raise AttributeError("'PipelineTuningOptions' object has no attribute '_as_parameter_'")
        except AttributeError as error:
            sys.unraisablehook(types.SimpleNamespace(
                exc_type=AttributeError, exc_value=error, exc_traceback=error.__traceback__,
                err_msg="Exception ignored in", object=None))
        assert capsys.readouterr().err == ""
    finally:
        signal.signal(signal.SIGINT, handler)


def test_a_notice_during_a_progress_bar_goes_above_it(capsys):
    # a worker's compile notice was written after the bar on its line ("... 9.0scoflowopt:
    # compiled ...") and the bar went on on the notice's line
    import io

    from coflowopt.cli._util import Progress, notice

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    bar = Progress(4, "4 tasks")
    bar.stream, bar.enabled = term, True
    bar.update(2)
    notice("coflowopt: compiled x in 1.0 s")
    bar.close()
    notice("coflowopt: compiled y in 2.0 s")  # no bar: only the line
    line = bar.line
    assert line.startswith("4 tasks [###############")
    blank = "\r" + " " * len(line) + "\r"
    closed = "\r" + " " * max(len(line), len("4 tasks") + 50) + "\r"
    assert term.getvalue() == "\r" + line + blank + line + closed
    assert capsys.readouterr().err == "coflowopt: compiled x in 1.0 s\ncoflowopt: compiled y in 2.0 s\n"


def test_a_second_interrupt_while_the_first_is_reported_only_counts(monkeypatch, capsys):
    # `timeout` forwards a second SIGINT: it landed in the print of "coflowopt: interrupted"
    # (or in the handler's restoring) and escaped as a traceback, the process killed by it
    import signal

    import coflowopt.cli as cli

    def interrupted(command=None):
        signal.raise_signal(signal.SIGINT)  # main's handler raises KeyboardInterrupt

    class Stderr:
        def __init__(self):
            self.text = ""

        def write(self, text):
            if not self.text:
                signal.raise_signal(signal.SIGINT)  # the second, as the message is written
            self.text += text

        def flush(self):
            pass

    err = Stderr()
    real = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", interrupted)
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["info", str(TRACE)]) == 130
    assert err.text == "coflowopt: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # the command itself leaves interrupts ignored from main's end on, with no moment
    # between in which the default handler would kill the process (exit status -2)
    monkeypatch.setattr(sys, "stderr", sys.__stderr__)
    shuffle = ROOT / "instances" / "examples" / "dissertation_3_2_shuffle.json"
    monkeypatch.setattr(cli, "build_parser", real)
    try:
        assert cli._interruptible(["info", str(shuffle)], signal.SIG_IGN) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
