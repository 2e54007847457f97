"""MCS (Wang et al., ToN 2018) §V-VI: Eq. (1), Algorithm 1, Eqs. (4)-(5), Tables I and IV.

Statements (the paper's words, abridged).

(a) §V-B. "our goal is to choose an optimal set of thresholds Δ_i to minimize
the classification error: min E = Σ_{i=1}^n 1 − A(T_i, Δ_i) (1) subject to
Δ_0 = 0, Δ_n = ∞ (2), Δ_{i−1} ≤ Δ_i (3)", with A = β_i / α_i, α_i the share
of coflows with width in [Δ_{i−1}, Δ_i) and β_i the share also with size in
[T_{i−1}, T_i). "The above problem is a Sum-of-Linear-Ratios (SoLR) problem
and is NP-hard. Thus, we propose the [SNCF] heuristic", Algorithm 1:
Δ_0 = min w, Δ_i = Δ_{i−1} · Step, "while A(T_i, Δ_i) ≤ A(T_i, Δ_i · Step)
do Δ_i = Δ_i · Step", Step = 10; ASSIGNPRIORITY: p_i = j with T_{j−1} ≤
(smallest size in class i) < T_j. §V-C: "we use T_i = 10 T_{i−1} ..., thus
we can get Δ_i = 2^{i−1} according to Algorithm 1. Then, by using
ASSIGNPRIORITY, we can get p_i = i"; §VIII-A simulates with "Δ_i = 10^i,
p_i = i". §V-B example on the Facebook trace: "more than 90% of coflows in
class 1 is less than 250 MB" for Δ = 10 and Δ = 50; for T = 10 MB "only
about 50% ... for Δ = 50 while the percentage increases to about 80% for
Δ = 10".

(b) §VI-A. "We formulate the system by an M/M/1 queue. ... Using the
conclusion in PIAS, we can get the upper bound of S^i_j is S^i_j =
ρ(F^i(θ^i_j) − F^i(θ^i_{j−1})) / (1 − ρ Σ_{i=1}^n F^i(θ^i_{j−1})) (4)",
F^i(θ^i_j) = 0 when j < p_i, "its upper-bound CCT is Σ_{l=p_i}^j S^i_l ...
the average CCT is min Σ_i {Σ_j [F^i(θ^i_j) − F^i(θ^i_{j−1})] Σ_{l=0}^j
S^i_l} (5)". "The above problem is also a SoLR problem that is NP-hard."

(c) §V-A, Table I: Pearson correlations ρ_{X,Y} / ρ_{log X, log Y} (interval)
of width, size, minimal CCT Γ (bytes through the busiest port) and length on
the Facebook trace, e.g. width-size "0.54/0.91 (0.89,0.92)". §VII-A, Table
IV: "a coflow is short if its longest flow is less than 5 MB and narrow if
it has at most 50 flows": SN/LN/SW/LW 52%/16%/15%/17% of coflows, 0.01%/
0.67%/0.22%/99.10% of bytes.

What this verifies (``coflowopt.mcs``; ``instances/fb2010/FB2010-1Hr-150-0.txt``,
526 coflows; T_i = 10^i MB, n = 5 unless said).

1. Eq. (1): ``evaluate(...).error`` equals Eq. (1) computed here in
   Fractions from the definition, on 300 seeded random workloads (1-12
   coflows, 2-4 classes, real-valued Δ). An empty class (α_i = 0, which the
   paper leaves undefined) counts error 1, the project's convention.
2. The exact DP (``optimal_classification``) equals a brute force over all
   non-decreasing boundary choices at the observed widths (plus one beyond
   the largest) on 400 random workloads (<= 8 coflows, 2-4 classes; also
   with every class non-empty), and no random real-valued Δ beats it. On the
   trace an O(n m^2) DP written here in Fractions gives the same optimum,
   E = 0.8100 (Δ = 10, 110, 182, 9180). The "NP-hard" claim does not hold
   for Eq. (1) on an empirical distribution: it is a shortest path over
   n layers of m + 1 cut positions (polynomial; verified only in that the DP
   equals brute force, not as a complexity proof).
3. Algorithm 1 **is not optimal for Eq. (1)** (the paper calls it a
   heuristic; this quantifies it). Its Δ_i are min w times powers of Step,
   so it cannot separate widths closer than a factor 10. Smallest witness
   (exhaustive over 1-2 coflows, widths 1-3, 2 classes): one coflow of
   width 1 and size >= T_1: E = 2 against 1, but only through the
   empty-class convention; convention-free, two coflows, width 1 with size
   < T_1 and width 2 with size >= T_1: Algorithm 1 puts both in class 1
   (Δ_1 = 10): E = 3/2 (>= 1/2 whatever an empty class costs) against 0 at
   Δ_1 = 2. On the trace: 1.4720 (Δ = 10, 100, 1000, 10000) against 0.8100;
   there it is optimal within its own grid (all non-decreasing Δ_i in
   {1, 10, ..., 10^5}). An independent loop of Algorithm 1 written here
   gives the same Δ as ``sncf`` (with the project's stop once Δ_i passes
   the largest width, without which the ``<=`` loop never ends).
4. §V-C's "Δ_i = 2^{i−1} according to Algorithm 1 ... p_i = i" **fails**:
   from Δ_0 = min w = 1 Step 10 only reaches powers of ten, and Algorithm
   1 returns 10, 100, 1000, 10000; ASSIGNPRIORITY (computed here) on
   Δ = 2^{i−1} gives class 1 empty and p_2..p_5 = 1, 1, 1, 1, not i. With
   §VIII-A's Δ_i = 10^i it gives p_i = i (holds). The §V-B percentages hold:
   97.3% and 95.2% below 250 MB; 50.3% (Δ = 50) and 77.2% (Δ = 10) below
   10 MB.
5. Eqs. (4)-(5): ``ThresholdModel.objective`` and ``sojourn`` equal the
   printed formulas evaluated here in Fractions (per-class initial queue
   p_i, the convention F^i(θ_j) = 0 for j < p_i, denominator summed over
   all classes) on 300 random models (1-3 classes, K = 1-4); and
   ``dp_thresholds`` equals a brute force of Eq. (5) over all threshold
   positions on 120 small models (<= 2 classes, <= 6 coflows, K = 2-4; so Eq. (5) is exactly solvable on an
   empirical distribution with few classes, again against "NP-hard").
6. Eqs. (4)-(5) as a model of an M/M/1 multi-level feedback queue **fail**.
   Under the paper's own assumptions (Poisson arrivals, exponential sizes,
   one server, strict priority between K queues, FIFO within, demotion when
   attained service exceeds θ_j) the number in system is the M/M/1
   birth-death chain whatever the thresholds (memoryless service), so the
   mean CCT is 1/(1 − ρ) mean sizes for every K and θ. A seeded
   discrete-event simulation written here (20000 jobs, ρ = 1/2, batch
   means) gives 2.009, 2.018, 2.028, 2.014 (SE ~0.05) for K = 1; K = 2,
   θ = ln 2; K = 3, θ = (0.2, 1.5); K = 2, θ = 0.05, all within 4 SE of 2,
   while Eq. (5) gives 0.5, 0.417, 0.399, 0.488 (the formula with the
   exponential CDF, here; the project on the simulated sizes agrees within
   0.01). So it is not
   an upper bound in units of the mean size (4-5x below), and it varies
   with θ where the truth does not; at K = 1 it is ρ against 1/(1 − ρ), a
   ratio 1/(ρ(1 − ρ)) that is unbounded as ρ -> 0 or 1, so no fixed time
   unit makes it a bound. Thresholds "optimal" for Eq. (5) are therefore
   meaningless under the stated M/M/1 assumption.
7. Table I **holds**: the 18 printed numbers (raw, log10, 95% Fisher-z
   interval of the log value; the level is our reading) match, to the
   printed two decimals, ``np.corrcoef`` of width, size, Γ and length
   computed here from the flows of ``coflowopt.read``; ``correlations`` and
   ``coflowopt mcs stats --json`` give the same values (1e-9).
8. Table IV **does not reproduce** on the bundled trace (it is Varys's
   table, from the full Facebook trace): SN/LN/SW/LW are 58.7/17.1/11.2/
   12.9% of coflows and 0.009/0.112/0.810/99.068% of bytes.

What this does not verify: NP-hardness or its absence for Eqs. (1)/(5) in
general (only that the DPs are exact on small empirical instances);
Figs. 5, 7, 8 (boxplots, CDFs); the model under heavy-tailed sizes or
against coflow (multi-port) schedules (see models/mcs-thresholds.md and
``coflowopt.mcs.validate``); Table II (TPC-H/DS, no data); the confidence
level of Table I's intervals (95% reproduces them).
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from collections import deque
from fractions import Fraction
from pathlib import Path

import numpy as np

import coflowopt
from coflowopt.mcs import (
    ThresholdModel,
    Workload,
    assign_priority,
    correlations,
    dp_thresholds,
    evaluate,
    optimal_classification,
    sncf,
)

ROOT = Path(__file__).resolve().parents[1]
FB = ROOT / "instances" / "fb2010" / "FB2010-1Hr-150-0.txt"
MB = 2**20
T_FB = [10 * MB, 100 * MB, 1000 * MB, 10000 * MB]
INF = math.inf
TOL = 1e-12


# --------------------------------------------------------------------------- Eq. (1) by hand


def eq1(widths, sizes, deltas, T) -> Fraction:
    """Eq. (1) from the definition: Σ_i 1 − β_i/α_i, classes [Δ_{i-1}, Δ_i) x [T_{i-1}, T_i).

    An empty class costs 1 (the project's convention; the paper leaves 0/0 undefined)."""
    d = [0, *deltas, INF]
    t = [0, *T, INF]
    total = Fraction(0)
    for i in range(1, len(d)):
        members = [k for k, w in enumerate(widths) if d[i - 1] <= w < d[i]]
        if not members:
            total += 1
            continue
        hits = sum(1 for k in members if t[i - 1] <= sizes[k] < t[i])
        total += 1 - Fraction(hits, len(members))
    return total


def workload(widths, sizes) -> Workload:
    s = np.array(sizes, dtype=float)
    return Workload(np.array(widths), s, s.copy(), s.copy())


def random_workload(rng, max_coflows):
    n = int(rng.integers(1, max_coflows + 1))
    widths = [int(w) for w in rng.choice([1, 2, 3, 5, 8, 12, 20, 30, 45, 70, 100], n)]
    sizes = [float(round(10 ** rng.uniform(0, 4), 1)) for _ in range(n)]
    classes = int(rng.integers(2, 5))
    T = [10.0, 100.0, 1000.0][: classes - 1]
    return widths, sizes, T


def brute_min(widths, sizes, T, *, nonempty=False):
    """Least Eq. (1) over all non-decreasing Δ at observed widths (and max + 1)."""
    cands = [*sorted(set(widths)), max(widths) + 1]
    best = None
    for deltas in itertools.combinations_with_replacement(cands, len(T)):
        d = [0, *deltas, INF]
        if nonempty and any(not any(d[i - 1] <= w < d[i] for w in widths) for i in range(1, len(d))):
            continue
        e = eq1(widths, sizes, list(deltas), T)
        best = e if best is None else min(best, e)
    return best


def test_eq1_matches_project():
    rng = np.random.default_rng(1)
    for _ in range(300):
        widths, sizes, T = random_workload(rng, 12)
        raw = np.sort(rng.choice([0.0, 1.0, 2.5, 4.0, 9.0, 13.0, 31.5, 100.0, 1e4], len(T)))
        deltas = [float(x) for x in raw]
        got = evaluate(workload(widths, sizes), deltas, size_thresholds=T)
        assert abs(got.error - float(eq1(widths, sizes, deltas, T))) < TOL


def test_exact_dp_equals_brute_force():
    rng = np.random.default_rng(2)
    for case in range(400):
        widths, sizes, T = random_workload(rng, 8)
        w = workload(widths, sizes)
        best = brute_min(widths, sizes, T)
        dp = optimal_classification(w, size_thresholds=T)
        assert abs(dp.error - float(best)) < TOL
        assert eq1(widths, sizes, [float(x) for x in dp.width_thresholds], T) == best
        for _ in range(5):  # real-valued thresholds never do better
            deltas = sorted(float(x) for x in rng.uniform(0, 120, len(T)))
            assert eq1(widths, sizes, deltas, T) >= best
        if case % 2 == 0 and len(set(widths)) >= len(T) + 1:
            strict = optimal_classification(w, size_thresholds=T, allow_empty=False)
            assert abs(strict.error - float(brute_min(widths, sizes, T, nonempty=True))) < TOL


# --------------------------------------------------------------------------- Algorithm 1


def algorithm1(widths, sizes, T, step=10):
    """CLASSIFICATIONTHRESH as printed (``<=``), stopping once Δ_i passes the largest width."""
    def acc(i, lo, hi):
        members = [k for k, w in enumerate(widths) if lo <= w < hi]
        t_lo = 0 if i == 0 else T[i - 1]
        t_hi = T[i] if i < len(T) else INF
        hits = sum(1 for k in members if t_lo <= sizes[k] < t_hi)
        return Fraction(hits, len(members)) if members else Fraction(0)

    deltas, prev = [], min(widths)
    for i in range(len(T)):
        d = prev * step
        while d <= max(widths) and acc(i, prev, d) <= acc(i, prev, d * step):
            d *= step
        deltas.append(d)
        prev = d
    return deltas


def test_algorithm1_loop_matches_sncf():
    rng = np.random.default_rng(3)
    for _ in range(150):
        widths, sizes, T = random_workload(rng, 12)
        got = sncf(workload(widths, sizes), size_thresholds=T)
        mine = algorithm1(widths, sizes, T)
        assert np.allclose(got.width_thresholds, mine, rtol=1e-12)
        assert abs(got.error - float(eq1(widths, sizes, mine, T))) < TOL


def test_algorithm1_not_optimal_smallest_witness():
    T = [10.0]
    gaps = {}
    for n in (1, 2):
        for widths in itertools.product([1, 2, 3], repeat=n):
            for sizes in itertools.product([1.0, 100.0], repeat=n):
                pub = eq1(list(widths), list(sizes), algorithm1(list(widths), list(sizes), T), T)
                opt = brute_min(list(widths), list(sizes), T)
                assert pub >= opt
                if pub > opt:
                    gaps.setdefault(n, []).append((widths, sizes, pub, opt))
    # one coflow: a gap only through the cost of an empty class
    assert ((1,), (100.0,), Fraction(2), Fraction(1)) in gaps[1]
    # two coflows, convention-free: width 1 small, width 2 large
    w, s = [1, 2], [1.0, 100.0]
    got = sncf(workload(w, s), size_thresholds=T)
    assert list(got.width_thresholds) == [10.0] and list(got.count) == [2, 0]
    assert got.error == 1.5 and got.accuracy[0] == 0.5  # >= 1/2 whatever an empty class costs
    assert ((1, 2), (1.0, 100.0), Fraction(3, 2), Fraction(0)) in gaps[2]
    assert eq1(w, s, [2], T) == 0


def fb_attributes():
    inst = coflowopt.read(FB)
    width, size, length, gamma = [], [], [], []
    for c in inst.coflows:
        d = np.asarray(c.sizes, dtype=float)
        width.append(d.size)
        size.append(d.sum())
        length.append(d.max())
        gamma.append(max(np.bincount(c.src, weights=d).max(), np.bincount(c.dst, weights=d).max()))
    return inst, np.array(width), np.array(size), np.array(gamma), np.array(length)


def exact_eq1_dp(widths, sizes, T):
    """Least Eq. (1) (empty class costs 1) by a shortest path over cut positions, in Fractions."""
    u = sorted(set(int(x) for x in widths))
    m, n = len(u), len(T) + 1
    index = {x: p for p, x in enumerate(u)}
    t = [0, *T, INF]
    count = [0] * (m + 1)
    hits = [[0] * (m + 1) for _ in range(n)]
    per_w = [0] * m
    per_wc = [[0] * m for _ in range(n)]
    for w, s in zip(widths, sizes, strict=True):
        p = index[int(w)]
        per_w[p] += 1
        for i in range(n):
            if t[i] <= s < t[i + 1]:
                per_wc[i][p] += 1
    for p in range(m):
        count[p + 1] = count[p] + per_w[p]
        for i in range(n):
            hits[i][p + 1] = hits[i][p] + per_wc[i][p]

    def cost(i, a, b):
        k = count[b] - count[a]
        return Fraction(1) if k == 0 else 1 - Fraction(hits[i][b] - hits[i][a], k)

    value = {0: Fraction(0)}
    for i in range(n):
        ends = [m] if i == n - 1 else range(m + 1)
        value = {b: min(v + cost(i, a, b) for a, v in value.items() if a <= b) for b in ends}
    return value[m]


def test_trace_classification():
    inst, width, size, _, _ = fb_attributes()
    pub = sncf(inst)
    exact = optimal_classification(inst)
    # Algorithm 1 returns powers of ten from Δ_0 = min w = 1, not §V-C's 2^(i-1)
    assert width.min() == 1
    assert list(pub.width_thresholds) == [10, 100, 1000, 10000]
    assert algorithm1(list(width), list(size), T_FB) == [10, 100, 1000, 10000]
    e_pub = eq1(list(width), list(size), [10, 100, 1000, 10000], T_FB)
    e_opt = exact_eq1_dp(width, size, T_FB)
    assert abs(pub.error - float(e_pub)) < TOL and round(float(e_pub), 4) == 1.4720
    assert abs(exact.error - float(e_opt)) < TOL and round(float(e_opt), 4) == 0.8100
    assert list(exact.width_thresholds) == [10, 110, 182, 9180]
    assert eq1(list(width), list(size), [10, 110, 182, 9180], T_FB) == e_opt
    # ... but Algorithm 1 is optimal on its own grid of powers of ten
    grid = min(eq1(list(width), list(size), list(d), T_FB)
               for d in itertools.combinations_with_replacement([1, 10, 100, 1000, 10**4, 10**5], 4))
    assert grid == e_pub

    def priorities(deltas):  # ASSIGNPRIORITY: size class of each class's smallest coflow
        d = [0, *deltas, INF]
        t = [0, *T_FB, INF]
        out = []
        for i in range(1, 6):
            inside = size[(width >= d[i - 1]) & (width < d[i])]
            out.append(None if inside.size == 0 else
                       next(j for j in range(1, 6) if t[j - 1] <= inside.min() < t[j]))
        return out

    assert priorities([10, 100, 1000, 10000]) == [1, 2, 3, 4, 5]  # §VIII-A: holds
    assert list(assign_priority(inst, [10, 100, 1000, 10000])) == [1, 2, 3, 4, 5]
    assert priorities([1, 2, 4, 8]) == [None, 1, 1, 1, 1]  # §V-C's p_i = i: fails
    assert list(assign_priority(inst, [1, 2, 4, 8])[1:]) == [1, 1, 1, 1]


def test_section5b_example_percentages():
    _, width, size, _, _ = fb_attributes()
    share = {(d, t): float(np.mean(size[width < d] < t * MB)) for d in (10, 50) for t in (250, 10)}
    assert share[10, 250] > 0.9 and share[50, 250] > 0.9  # 0.973, 0.952
    assert abs(share[50, 10] - 0.5) < 0.01 and abs(share[10, 10] - 0.8) < 0.03  # 0.503, 0.772
    assert round(share[10, 10], 3) == 0.772 and round(share[50, 10], 3) == 0.503


# --------------------------------------------------------------------------- Eqs. (4)-(5)


def eq45(values, classes, p, theta, K, rho):
    """Eqs. (4)-(5) as printed, in Fractions. ``classes[c]`` is coflow c's class, ``p[i]``
    class i's initial queue, ``theta[i]`` its θ_1..θ_{K-1}; returns (objective, S[i][j])."""
    N = len(values)
    nc = len(p)

    def F(i, j):  # F^i(θ^i_j) with F = 0 for j < p_i and θ_K = ∞
        if j == 0 or j < p[i]:
            return Fraction(0)
        bound = INF if j == K else theta[i][j - 1]
        return Fraction(sum(1 for c in range(N) if classes[c] == i and values[c] <= bound), N)

    S = [[Fraction(0)] * (K + 1) for _ in range(nc)]
    for i in range(nc):
        for j in range(p[i], K + 1):
            S[i][j] = rho * (F(i, j) - F(i, j - 1)) / (1 - rho * sum(F(g, j - 1) for g in range(nc)))
    obj = sum((F(i, j) - F(i, j - 1)) * sum(S[i][: j + 1]) for i in range(nc) for j in range(1, K + 1))
    return obj, S


def random_model(rng, max_coflows=8):
    K = int(rng.integers(1, 5))
    nc = int(rng.integers(1, 4))
    N = int(rng.integers(1, max_coflows + 1))
    values = [int(v) for v in rng.integers(1, 7, N)]
    classes = [int(c) for c in rng.integers(0, nc, N)]
    p = [int(x) for x in rng.integers(1, K + 1, nc)]
    rho = Fraction(int(rng.integers(1, 20)), 20)
    return K, nc, values, classes, p, rho


def project_model(K, nc, values, classes, p, rho):
    return ThresholdModel(values=np.array(values, float), family=np.array(classes),
                          initial=np.array([p[c] for c in classes]), families=tuple(map(str, range(nc))),
                          num_queues=K, load=float(rho))


def test_model_matches_printed_formulas():
    rng = np.random.default_rng(4)
    for _ in range(300):
        K, nc, values, classes, p, rho = random_model(rng)
        theta = [sorted(float(x) for x in rng.choice([0.5, 1, 2, 2.5, 3, 4, 6, 9], K - 1)) for _ in range(nc)]
        obj, S = eq45(values, classes, p, theta, K, rho)
        model = project_model(K, nc, values, classes, p, rho)
        th = np.array(theta, dtype=float).reshape(nc, K - 1)
        assert abs(model.objective(th) - float(obj)) < TOL
        soj = model.sojourn(th)
        for i in range(nc):
            if any(c == i for c in classes):
                assert np.allclose(soj[i], [float(x) for x in S[i][1:]], rtol=0, atol=TOL)
        # Eq. (5) is also the mean of the per-coflow sums Σ_{l=p}^{q} S_l
        assert abs(float(np.mean(model.predicted(th))) - float(obj)) < TOL
    # K = 1: one queue, Eq. (5) = ρ for any workload (M/M/1: 1/(1 − ρ) mean sizes)
    assert eq45([3, 1, 2], [0, 0, 0], [1], [[]], 1, Fraction(1, 2))[0] == Fraction(1, 2)


def test_dp_thresholds_equals_brute_force():
    rng = np.random.default_rng(5)
    done = 0
    while done < 120:
        K, nc, values, classes, p, rho = random_model(rng, 6)
        nc = min(nc, 2)
        classes = [c % nc for c in classes]
        p = p[:nc]
        if K == 1:
            continue
        model = project_model(K, nc, values, classes, p, rho)
        per_class = []
        for i in range(nc):
            cands = [0.0, *sorted({float(v) for v, c in zip(values, classes, strict=True) if c == i})]
            per_class.append(list(itertools.combinations_with_replacement(cands, K - 1)))
        best = min(eq45(values, classes, p, [list(t) for t in combo], K, rho)[0]
                   for combo in itertools.product(*per_class))
        sol = dp_thresholds(model)
        assert abs(sol.objective - float(best)) < TOL
        assert abs(float(eq45(values, classes, p, sol.thresholds.tolist(), K, rho)[0]) - float(best)) < TOL
        done += 1


def simulate_mlfq(rho, thetas, jobs, seed):
    """Single-server MLFQ: Poisson(ρ) arrivals, Exp(1) sizes, strict preemptive priority
    between queues, FIFO within a queue, demotion when attained service reaches θ_j.
    Returns the sizes, the mean sojourn after a 1000-job warm-up and its batch-means SE."""
    rng = np.random.default_rng(seed)
    arrive = np.cumsum(rng.exponential(1 / rho, jobs))
    size = rng.exponential(1.0, jobs)
    bounds = [*thetas, INF]
    queues = [deque() for _ in bounds]
    attained = [0.0] * jobs
    finish = [0.0] * jobs
    t, nxt, done = 0.0, 0, 0
    while done < jobs:
        q = next((i for i, qu in enumerate(queues) if qu), None)
        t_arr = arrive[nxt] if nxt < jobs else INF
        if q is None:
            t = t_arr
            queues[0].append(nxt)
            nxt += 1
            continue
        k = queues[q][0]
        target = min(size[k], bounds[q])
        if t + target - attained[k] <= t_arr:
            t += target - attained[k]
            attained[k] = target
            queues[q].popleft()
            if target >= size[k]:
                finish[k] = t
                done += 1
            else:
                queues[q + 1].append(k)
        else:  # an arrival preempts; k keeps its place at the head of queue q
            attained[k] += t_arr - t
            t = t_arr
            queues[0].append(nxt)
            nxt += 1
    sojourn = (np.array(finish) - arrive)[1000:]
    batches = sojourn.reshape(19, -1).mean(axis=1)
    return size, float(sojourn.mean()), float(batches.std(ddof=1) / math.sqrt(batches.size))


def eq5_exponential(rho, thetas):
    """Eq. (5) for one class starting in queue 1 with the Exp(1) CDF F(x) = 1 − e^{−x}."""
    cdf = [0.0, *(1 - math.exp(-x) for x in thetas), 1.0]
    s = [rho * (cdf[j] - cdf[j - 1]) / (1 - rho * cdf[j - 1]) for j in range(1, len(cdf))]
    return sum((cdf[j] - cdf[j - 1]) * sum(s[:j]) for j in range(1, len(cdf)))


def test_mm1_feedback_queue_simulation():
    rho = 0.5
    truth = 1 / (1 - rho)  # M/M/1 mean sojourn in mean sizes, for any size-blind work-conserving order
    configs = [(), (math.log(2),), (0.2, 1.5), (0.05,)]
    sims, models = [], []
    for thetas in configs:
        sizes, mean, se = simulate_mlfq(rho, list(thetas), 20000, seed=1)
        assert se < 0.08
        assert abs(mean - truth) < 4 * se
        K = len(thetas) + 1
        model = ThresholdModel(values=sizes, family=np.zeros(sizes.size, dtype=int),
                               initial=np.ones(sizes.size, dtype=int), families=("all",),
                               num_queues=K, load=rho)
        predicted = model.objective(np.array(thetas, dtype=float).reshape(1, K - 1))
        assert abs(predicted - eq5_exponential(rho, thetas)) < 0.01  # empirical vs exact CDF
        assert predicted < mean - 20 * se  # not an upper bound (4-5x below)
        sims.append(mean)
        models.append(predicted)
    assert [round(m, 3) for m in sims] == [2.009, 2.018, 2.028, 2.014]
    assert [round(eq5_exponential(rho, th), 3) for th in configs] == [0.5, 0.417, 0.399, 0.488]
    # the model moves with θ by ~20%; the simulated means agree within sampling error
    assert max(models) - min(models) > 0.09
    assert max(sims) - min(sims) < 0.05
    # K = 1: ρ against 1/(1 − ρ), ratio 1/(ρ(1 − ρ)): 11.1 at 0.1, 4 at 0.5, 11.1 at 0.9
    assert [round(1 / (r * (1 - r)), 1) for r in (0.1, 0.5, 0.9)] == [11.1, 4.0, 11.1]


# --------------------------------------------------------------------------- Tables I and IV

TABLE_I = {  # (raw, log10, interval of the log value), as printed
    ("width", "size"): (0.54, 0.91, (0.89, 0.92)),
    ("width", "gamma"): (0.50, 0.81, (0.77, 0.83)),
    ("width", "length"): (0.22, 0.37, (0.29, 0.44)),
    ("size", "gamma"): (0.97, 0.96, (0.96, 0.97)),
    ("size", "length"): (0.46, 0.71, (0.67, 0.75)),
    ("gamma", "length"): (0.51, 0.82, (0.78, 0.84)),
}
Z95 = 1.959963984540054


def test_table1_correlations():
    inst, width, size, gamma, length = fb_attributes()
    attrs = {"width": width.astype(float), "size": size, "gamma": gamma, "length": length}
    names = ["width", "size", "gamma", "length"]
    raw = np.corrcoef(np.vstack([attrs[a] for a in names]))
    log = np.corrcoef(np.log10(np.vstack([attrs[a] for a in names])))
    n = width.size
    assert n == 526
    project = correlations(inst)
    cli = json.loads(subprocess.run(
        [sys.executable, "-m", "coflowopt", "mcs", "stats", "--json", str(FB)],
        check=True, capture_output=True, text=True, cwd=ROOT).stdout)
    assert list(project.attributes) == names and cli["attributes"] == names and cli["coflows"] == n
    for (a, b), (r, rl, (lo, hi)) in TABLE_I.items():
        i, j = names.index(a), names.index(b)
        z = math.atanh(log[i, j])
        ci = (math.tanh(z - Z95 / math.sqrt(n - 3)), math.tanh(z + Z95 / math.sqrt(n - 3)))
        for mine, printed in ((raw[i, j], r), (log[i, j], rl), (ci[0], lo), (ci[1], hi)):
            assert abs(mine - printed) <= 0.005 + 1e-9, (a, b, mine, printed)
        for other_raw, other_log, other_ci in (
            (project.pearson[i, j], project.pearson_log[i, j], project.ci_log[i, j]),
            (cli["pearson"][i][j], cli["pearson_log10"][i][j], cli["ci_log10"][i][j]),
        ):
            assert abs(other_raw - raw[i, j]) < 1e-9 and abs(other_log - log[i, j]) < 1e-9
            assert np.allclose(other_ci, ci, atol=1e-9)


def test_table4_bins_do_not_reproduce():
    _, width, size, _, length = fb_attributes()
    short, narrow = length < 5 * MB, width <= 50
    bins = [short & narrow, ~short & narrow, short & ~narrow, ~short & ~narrow]
    coflows = [round(100 * float(b.mean()), 1) for b in bins]
    data = [round(100 * float(size[b].sum() / size.sum()), 3) for b in bins]
    assert coflows == [58.7, 17.1, 11.2, 12.9]  # printed: 52, 16, 15, 17
    assert data == [0.009, 0.112, 0.810, 99.068]  # printed: 0.01, 0.67, 0.22, 99.10
    assert max(abs(x - y) for x, y in zip(coflows, [52, 16, 15, 17], strict=True)) > 6
