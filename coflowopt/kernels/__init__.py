"""Compiled allocation primitives (Numba): the fast paths of :mod:`coflowopt.alloc`.

- :mod:`.rates`: the greedy order-preserving allocation, MADD, and NumPy's
  pairwise summation for code that must reproduce a ``.sum()`` bit for bit;
- :mod:`.maxmin`: weighted max-min fairness on two-sided links (water-filling).

:mod:`coflowopt.alloc` calls them, and so do the simulator's compiled
policies and stretch kernels (:mod:`coflowopt.sim.kernels`), so each
computation has one implementation. They depend on nothing else in
coflowopt.
"""
