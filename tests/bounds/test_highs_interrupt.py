"""An interrupt stops a large HiGHS run at once, not at HiGHS's own time limit."""

from __future__ import annotations

import _thread
import threading
import time

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

from coflowopt.bounds._highs import INTERRUPTIBLE_NNZ, quiet_highs, run


def _large_lp() -> highspy.Highs:
    """An LP of about 110,000 nonzeros that HiGHS needs tens of seconds for."""
    n = 3000
    rng = np.random.default_rng(0)
    a = (sp.random(n, n, density=0.012, random_state=1, format="csc")
         + sp.eye(n, format="csc")).tocsc()
    assert a.nnz >= INTERRUPTIBLE_NNZ
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, n
    lp.col_cost_ = -rng.random(n)
    lp.col_lower_, lp.col_upper_ = np.zeros(n), np.full(n, highspy.kHighsInf)
    lp.row_lower_, lp.row_upper_ = np.full(n, -highspy.kHighsInf), np.ones(n)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = a.indptr, a.indices, a.data
    h = quiet_highs()
    h.passModel(lp)
    h.setOptionValue("presolve", "off")
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
