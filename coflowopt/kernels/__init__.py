"""Compiled allocation primitives (Numba): the fast paths of :mod:`coflowopt.alloc`.

- :mod:`.rates`: the greedy order-preserving allocation, MADD, and NumPy's
  pairwise summation for code that must reproduce a ``.sum()`` bit for bit;
- :mod:`.maxmin`: weighted max-min fairness, by progressive filling on any usage
  matrix and by water-filling on two-sided links.

The functions named ``csr`` (and :func:`.maxmin.progressive_filling`) take rows of a
CSR usage matrix by index: on a multi-hop fabric the simulator's policies pass flows
of the route incidence to them directly.

:mod:`coflowopt.alloc` calls them, and so do the simulator's compiled
policies and stretch kernels (:mod:`coflowopt.sim.kernels`), so each
computation has one implementation. They depend on nothing else in
coflowopt.
"""
