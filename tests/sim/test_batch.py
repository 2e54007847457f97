"""``simulate_many`` and ``compare --jobs``: parallel runs give the sequential results."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import coflowopt as co
from coflowopt.cli import main
from coflowopt.sim import SimulationError, make_policy, simulate, simulate_many
from coflowopt.sim.policies.fair import Fair

ROOT = Path(__file__).resolve().parents[2]
FIG51 = ROOT / "instances" / "examples" / "dissertation_5_1_varys_motivating_reconstructed.json"
TRACE = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"


@pytest.fixture(scope="module")
def prefix() -> co.Instance:
    """The trace's first 10 coflows: several ports, queues and bins (batch_interval=1.0
    changes every run's completions on them)."""
    fb = co.read(TRACE)
    return co.Instance(fb.fabric, fb.coflows[:10], name="fb10")


def runs() -> dict:
    return {
        "varys": "varys",
        "aalo strict": make_policy("aalo", {"sharing": "strict"}),
        "mcs batched": make_policy("mcs", {}),
        "fair": "fair",
    }


def assert_same(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for label in a:
        np.testing.assert_array_equal(a[label].completion, b[label].completion)
        np.testing.assert_array_equal(a[label].flow_completion, b[label].flow_completion)
        assert a[label].events == b[label].events and a[label].params == b[label].params


@pytest.mark.slow  # worker processes start and import everything
def test_process_pool_gives_the_sequential_results_in_the_given_order(prefix):
    seen: list[tuple[str, float]] = []
    seq = simulate_many(prefix, runs(), batch_interval=1.0, record=False)
    par = simulate_many(prefix, runs(), batch_interval=1.0, record=False, jobs=2,
                        progress=lambda label, f: seen.append((label, f)))
    assert_same(seq, par)
    assert all(r.instance is prefix for r in par.values())  # one copy, the caller's
    assert sorted(seen) == sorted((label, 1.0) for label in runs())
    # and each is simulate()'s result
    alone = simulate(prefix, "fair", batch_interval=1.0, record=False)
    np.testing.assert_array_equal(alone.completion, par["fair"].completion)


def test_any_executor_and_recorded_schedules_pass_check_feasible():
    inst = co.read(FIG51)
    with ThreadPoolExecutor(2) as pool:
        got = simulate_many(inst, runs(), executor=pool, record=True)
    for res in got.values():
        assert res.schedule is not None and co.check_feasible(inst, res.schedule)
    assert_same(simulate_many(inst, runs()), got)


def test_progress_in_process_reports_fractions_then_one():
    inst = co.read(FIG51)
    seen: list[tuple[str, float]] = []
    simulate_many(inst, {"a": "varys", "b": "fair"}, progress=lambda label, f: seen.append((label, f)))
    assert [s for s in seen if s[1] == 1.0] == [("a", 1.0), ("b", 1.0)]  # once each, in order
    assert [label for label, _ in seen] == sorted(label for label, _ in seen)
    assert all(0.0 <= f < 1.0 for _, f in seen if (_, f) not in (("a", 1.0), ("b", 1.0)))


def test_bad_options_and_failing_runs_raise_clear_errors():
    inst = co.read(FIG51)
    with pytest.raises(SimulationError, match="jobs must be an integer >= 1"):
        simulate_many(inst, {"a": "varys"}, jobs=0)
    with pytest.raises(SimulationError, match="unknown options"):
        simulate_many(inst, {"a": "varys"}, progres=None)
    bad = {"ok": "varys", "bad": make_policy("static-order", {"order": ["no-such-coflow"]})}
    with pytest.raises(co.CoflowoptError, match="no-such-coflow"):
        simulate(inst, make_policy("static-order", {"order": ["no-such-coflow"]}))
    with pytest.raises(co.CoflowoptError, match="no-such-coflow"), ThreadPoolExecutor(2) as pool:
        simulate_many(inst, bad, executor=pool)


def test_compare_with_jobs_prints_the_sequential_table(capsys):
    args = ["compare", str(FIG51), "--schedulers", "varys,fair,aalo:sharing=strict", "--bound", "best",
            "--json", "--no-progress"]
    assert main(args) == 0
    one = json.loads(capsys.readouterr().out)
    assert main([*args, "--jobs", "2"]) == 0
    two = json.loads(capsys.readouterr().out)
    for doc in (one, two):
        for row in doc["schedulers"]:
            row.pop("wall_s")
            row["summary"].pop("runtime_s", None)
    assert one == two


def test_compare_with_jobs_announces_the_compilations_of_its_workers(capsys, tmp_path,
                                                                      monkeypatch):
    # the workers compiled in silence, and a notice guessed from marker files could name a
    # compilation that did not happen or miss one; now each worker's compilation is relayed
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))  # the workers' cache: empty
    monkeypatch.setenv("COFLOWOPT_JIT", "compile")
    args = ["compare", str(FIG51), "--schedulers", "dark", "--bound", "best", "--no-progress",
            "--jobs", "2"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert err.count("coflowopt: compiling the simulator's kernels for their first use") == 1
    assert "coflowopt: compiled sim.kernels.state.set_rates in " in err
    assert main(args) == 0  # the machine code is in the cache now
    assert "compil" not in capsys.readouterr().err


def test_compare_rejects_a_negative_job_count(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(FIG51), "--jobs", "-1"])
    assert exc.value.code == 2
    assert "--jobs" in capsys.readouterr().err


def test_compare_with_jobs_reports_a_failing_scheduler_like_the_sequential_run(capsys):
    args = ["compare", str(FIG51), "--schedulers", "varys,static-order", "--param",
            "static-order.order=nope", "--no-progress"]
    for extra in ([], ["--jobs", "2"]):
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert "unknown coflow 'nope'" in err and "Traceback" not in err


class Sleeper(Fair):
    """Per-flow fairness that first sleeps ten minutes: a run still going when another fails."""

    def start(self, view):  # type: ignore[no-untyped-def]
        time.sleep(600)
        super().start(view)


def test_a_failing_run_is_reported_without_waiting_for_the_others():
    inst = co.read(FIG51)
    runs = {"slow": Sleeper(Sleeper.Params()),
            "bad": make_policy("static-order", {"order": ["no-such-coflow"]})}
    t0 = time.perf_counter()
    with pytest.raises(co.CoflowoptError, match="no-such-coflow"):
        simulate_many(inst, runs, jobs=2)
    # the sleeper's process was stopped, not waited for (a functional check: half its sleep,
    # far above what starting two workers takes on a loaded machine)
    assert time.perf_counter() - t0 < 300
    # and no worker process is left running; asked of the OS, because multiprocessing may
    # report a worker that the pool's own thread reaped as alive (waitpid gives ECHILD)
    children = multiprocessing.active_children()
    for child in children:
        child.join(10)
    deadline = time.perf_counter() + 120
    while any(running(c.pid) for c in children) and time.perf_counter() < deadline:
        time.sleep(0.1)
    assert not [c.pid for c in children if running(c.pid)]


def running(pid: int | None) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - exists, someone else's
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:  # no /proc (not Linux): it exists
        return True


def test_worker_errors_keep_their_class_and_fields():
    import pickle

    from coflowopt.errors import InputError, MissingDependencyError

    err = pickle.loads(pickle.dumps(MissingDependencyError("pandas", "pandas", "to_pandas()")))
    assert isinstance(err, MissingDependencyError) and err.extra == "pandas"
    assert "pip install 'coflowopt[pandas]'" in str(err)
    err2 = pickle.loads(pickle.dumps(InputError("bad value", path="x.json", line=3)))
    assert str(err2) == "x.json:3: bad value" and err2.line == 3


class Crasher(Fair):
    """Per-flow fairness whose process dies at once (as when the system kills it)."""

    def start(self, view):  # type: ignore[no-untyped-def]
        import os

        os._exit(3)


def test_a_worker_that_dies_gives_a_clear_error():
    inst = co.read(FIG51)
    with pytest.raises(SimulationError, match="worker process ended abruptly") as err:
        simulate_many(inst, {"ok": "varys", "dies": Crasher(Crasher.Params())}, jobs=2)
    # which unfinished run's process died is not known: the message names the candidates
    assert "'dies'" in str(err.value)


def test_the_pool_sends_the_instance_once_per_worker(prefix, monkeypatch):
    # jobs=N: each worker gets the instance when it starts, not with each of the runs
    # (the Facebook trace pickles to 17 MB); the results are the sequential ones
    sent: list[int] = []
    reduce = co.Instance.__reduce__

    def counted(self):  # pickling happens in this process (pool start and task queue)
        if self is prefix:
            sent.append(1)
        return reduce(self)

    monkeypatch.setattr(co.Instance, "__reduce__", counted)
    par = simulate_many(prefix, runs(), batch_interval=1.0, record=False, jobs=2)
    assert 1 <= len(sent) <= 2  # one per worker process, four runs
    seq = simulate_many(prefix, runs(), batch_interval=1.0, record=False)
    assert_same(seq, par)


def test_an_instance_pool_runs_other_instances_too(prefix):
    from coflowopt.sim.batch import process_pool

    other = co.Instance(prefix.fabric, prefix.coflows[:5], name="fb5")
    pool = process_pool(1, prefix)
    try:
        mine = pool.submit_on(prefix, _name_and_size).result()
        theirs = pool.submit_on(other, _name_and_size).result()
    finally:
        pool.shutdown()
    assert mine == ("fb10", 10) and theirs == ("fb5", 5)


def _name_and_size(instance: co.Instance) -> tuple[str, int]:
    return instance.name, instance.num_coflows


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return "\nState:\tZ" in status  # ended, waiting for its new parent to reap it


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_workers_end_when_their_parent_is_killed(tmp_path):
    # a sweep killed with SIGKILL left its pool's workers waiting for work forever
    import subprocess
    import sys

    script = tmp_path / "parent.py"
    script.write_text(
        "import os, signal, sys\n"
        "from coflowopt.sim.batch import process_pool\n"
        "if __name__ == '__main__':\n"
        "    pool = process_pool(1)\n"
        "    print(pool.submit(os.getpid).result(), flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n")
    out = tmp_path / "out.txt"
    with out.open("w") as fh:  # (not a pipe: a worker left behind would hold it open)
        subprocess.run([sys.executable, str(script)], stdout=fh, timeout=300)
    worker = int(out.read_text().split()[0])
    for _ in range(600):  # the worker looks once a second (PARENT_CHECK); 60 s is far above
        if _gone(worker):
            break
        time.sleep(0.1)
    assert _gone(worker)


def test_simulate_many_and_make_policy_name_a_bad_argument():
    from coflowopt.sim import make_policy

    inst = co.read(FIG51)
    with pytest.raises(co.CoflowoptError, match=r"executor must be a concurrent\.futures Executor"):
        simulate_many(inst, {"varys": "varys"}, executor=5)
    with pytest.raises(co.CoflowoptError, match="not the command line's key=value"):
        make_policy("aalo", "sharing=strict")
    with pytest.raises(co.CoflowoptError, match="params must be a mapping"):
        make_policy("aalo", [("sharing", "strict"), 1])


def test_an_interrupt_is_held_while_a_worker_gets_its_start_data():
    import signal

    from coflowopt.sim.batch import _interrupt_deferred

    reached = False
    with pytest.raises(KeyboardInterrupt):
        with _interrupt_deferred():
            signal.raise_signal(signal.SIGINT)
            reached = True
    assert reached and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_workers_start_with_interrupts_blocked():
    # a Ctrl-C to the whole process group reached the workers as they started, and one
    # printed the head of a traceback above "coflowopt: interrupted"; now only the parent
    # gets it, and it stops them
    import signal

    from coflowopt.sim.batch import process_pool, stop_pool

    pool = process_pool(1)
    try:
        mask = pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, []).result(timeout=120)
    finally:
        stop_pool(pool)
    assert signal.SIGINT in mask
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # (not here)
