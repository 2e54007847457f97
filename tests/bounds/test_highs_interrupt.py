"""An interrupt stops a large HiGHS run at once, not at HiGHS's own time limit."""

from __future__ import annotations

import _thread
import signal
import threading
import time

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

from coflowopt.bounds._highs import INTERRUPTIBLE_NNZ, quiet_highs, run


def _random_lp(n: int, density: float, seed: int, make=quiet_highs) -> highspy.Highs:
    """max c x, A x <= 1, x >= 0 over a random sparse ``A`` (its diagonal set), presolve
    off, in ``make()`` (a HiGHS object without output)."""
    rng = np.random.default_rng(seed)
    a = (sp.random(n, n, density=density, random_state=seed + 1, format="csc")
         + sp.eye(n, format="csc")).tocsc()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, n
    lp.col_cost_ = -rng.random(n)
    lp.col_lower_, lp.col_upper_ = np.zeros(n), np.full(n, highspy.kHighsInf)
    lp.row_lower_, lp.row_upper_ = np.full(n, -highspy.kHighsInf), np.ones(n)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = a.indptr, a.indices, a.data
    h = make()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.passModel(lp)
    return h


def _large_lp() -> highspy.Highs:
    """An LP of about 110,000 nonzeros that HiGHS needs tens of seconds for."""
    h = _random_lp(3000, 0.012, 0)
    assert h.getNumNz() >= INTERRUPTIBLE_NNZ
    return h


def test_an_interrupt_stops_a_large_lp_and_is_raised_again():
    h = _large_lp()

    def interrupt_once_highs_runs() -> None:
        while not any(t.name == "HiGHS" for t in threading.enumerate()):
            time.sleep(0.001)
        _thread.interrupt_main()

    threading.Thread(target=interrupt_once_highs_runs, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run(h)
    # HiGHS itself was stopped (not left running, nor run to the end): at its first
    # interrupt check the status is not even set yet
    status = h.getModelStatus()
    assert status in (highspy.HighsModelStatus.kInterrupt, highspy.HighsModelStatus.kNotset)
    assert not any(t.name == "HiGHS" for t in threading.enumerate())


def test_the_event_milp_runs_through_the_interruptible_run(monkeypatch):
    # appsi calls HiGHS's run() itself: the MILP's run is made the interruptible one
    from coflowopt import solve
    from coflowopt.bounds import _highs
    from coflowopt.io.generate import synthetic

    runs = []
    real = _highs.run

    def counted(h, **kw):
        runs.append(kw)
        return real(h, **kw)

    monkeypatch.setattr("coflowopt.exact.milp.run", counted)
    res = solve(synthetic(3, 3, load=0.6, seed=1), method="exact-milp", time_limit=120)
    assert res.status.name == "OPTIMAL"
    assert runs == [{"min_nnz": 0}]


def test_an_error_in_highs_thread_reaches_the_caller():
    # (it died in the thread, with a traceback on stderr, and run() returned None)
    lp = _large_lp()

    class Failing(type(lp)):
        def run(self):
            raise MemoryError("std::bad_alloc")

    failing = Failing()
    failing.setOptionValue("output_flag", False)
    failing.passModel(lp.getLp())
    with pytest.raises(MemoryError, match="bad_alloc"):
        run(failing)


def test_after_a_second_interrupt_the_object_runs_again(request):
    # A second interrupt leaves HiGHS stopping in its thread. The object was left with
    # its interrupt checks on, so its next run stopped at once; now the thread takes
    # them off when HiGHS returns, and a next run waits for that.
    import sys

    reference = _random_lp(60, 0.3, 2)  # (its simplex takes some iterations)
    reference.run()
    assert reference.getInfo().simplex_iteration_count > 1
    gate = threading.Event()

    class Held(highspy.Highs):
        def run(self):
            gate.wait()
            return super().run()

    h = _random_lp(60, 0.3, 2, Held)
    main = threading.main_thread().ident

    def stopping() -> bool:  # the interrupted run is waiting for HiGHS to stop
        try:
            frame = sys._current_frames().get(main)
            while frame is not None:
                if frame.f_code is run.__code__:
                    stop = frame.f_locals.get("stop")
                    return stop is not None and stop.is_set()
                frame = frame.f_back
        except (RuntimeError, ValueError):  # (the main thread's frames as they change)
            pass
        return False

    failed: list[BaseException] = []

    def interrupt_twice() -> None:
        try:
            while not any(t.name == "HiGHS" for t in threading.enumerate()):
                time.sleep(0.001)
            _thread.interrupt_main()
            while not stopping():
                time.sleep(0.001)
            # a signal, as Ctrl-C sends: it wakes a wait that interrupt_main() does not
            signal.pthread_kill(main, signal.SIGINT)
        except BaseException as exc:  # the test fails below instead of waiting for ever
            failed.append(exc)
            gate.set()

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    threading.Thread(target=interrupt_twice, daemon=True).start()
    # a last resort against a hang (the run waits for HiGHS, held at the gate, until a
    # second interrupt): the test then fails below, as the run ended by itself
    watchdog = threading.Timer(120.0, gate.set)
    watchdog.start()
    with pytest.raises(KeyboardInterrupt):
        run(h, min_nnz=0)
    watchdog.cancel()
    assert not failed and not gate.is_set()
    assert any(t.name == "HiGHS" for t in threading.enumerate())  # still held at the gate
    threading.Timer(0.2, gate.set).start()
    run(h)  # (below the threshold: HiGHS in this thread, once the earlier run ended)
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert h.getInfo().objective_function_value == reference.getInfo().objective_function_value
